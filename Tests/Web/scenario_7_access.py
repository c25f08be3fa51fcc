#!/usr/bin/env python3
"""Every screen at 360 px and on a desktop: each control has a label, nothing overflows sideways,
a screen's list and its side (filters, feed, chats) stack on a phone and stand side by side on a
wide screen, no serious or critical WCAG 2.1 A/AA violation by axe-core, touch targets of 44 px on
the phone, the keyboard reaches the tab bar, the app is installable (manifest with icons),
every screen's first paint stays under 1 s with the position granted and the first load (the page,
its stylesheets and static module imports, gzipped as served) under 200 KB as the browser
transferred it (issue 18's budgets)."""
import gzip
import json

from playwright.sync_api import expect

from common import axe_violations, scenario, sign_in

SCREENS = ["#/", "#/hub", "#/pregame", "#/all", "#/clips", "#/people", "#/bookmarks", "#/events", "#/artists",
           "#/favorites", "#/explore", "#/pala", "#/matches", "#/sessions", "#/sessions?view=map", "#/newsession", "#/calendar",
           "#/friends", "#/invitations", "#/quiz", "#/recs", "#/stats", "#/inbox", "#/settings", "#/post"]
# The mailed links' screens and the way to one, which also work signed out (checked so on the phone
# too); a made-up token shows the screen as an unknown link leaves it.
SIGNED_OUT = ["#/forgot-password", "#/reset-password/made-up", "#/verify-email/made-up"]
SCREENS += SIGNED_OUT
# Screens of one thing, opened from the first link to them that the screens above show.
DETAILS = ["#/venue/", "#/clip/", "#/user/", "#/event/", "#/artist/", "#/wall/", "#/session/"]
STAFF = ["#/moderation", "#/admin"]
BUDGET_MS = 1000
# The first load's budget (issue 18): the page, its stylesheets and its static module imports as
# transferred (gzipped, as served), measured in the browser.
FIRST_LOAD_BYTES = 200_000  # as the Swift test (WebRoutesTests) counts it
# Modules that screens load on demand: never part of the first load.
ON_DEMAND = ["/app/map.js", "/app/reel.js", "/app/post.js", "/app/admin.js", "/app/vendor/"]

# The first load as the browser fetched it: the document and each /app/ script and stylesheet, with
# the bytes of its body on the wire (encodedBodySize: compressed as served) and unpacked.
FIRST_LOAD = """() => [performance.getEntriesByType("navigation")[0], ...performance.getEntriesByType("resource")
  .filter((e) => { const path = new URL(e.name).pathname; return path.startsWith("/app/") && /\.(js|css)$/.test(path); })]
  .map((e) => ({ path: new URL(e.name).pathname, wire: e.encodedBodySize, unpacked: e.decodedBodySize }))"""

UNLABELLED = """elements => elements.filter(e => {
  if (e.type === "hidden" || e.closest("[hidden]")) return false;
  const name = (e.labels && e.labels.length) || e.getAttribute("aria-label") || e.getAttribute("aria-labelledby")
    || e.title || (e.tagName === "BUTTON" && e.textContent.trim());
  return !name;
}).map(e => e.outerHTML.slice(0, 120))"""

# Controls and links smaller than 44 × 44 px, a check box or radio button counting with its label. A
# link inside running text (words next to it) is exempt, as WCAG exempts it; the skip link shows
# only when focused.
SMALL_TARGETS = """() => {
  const words = (node) => node?.nodeType === Node.TEXT_NODE && /\\w/.test(node.textContent);
  return [...document.querySelectorAll("a[href], button, summary, select, textarea, input:not([type=hidden])")]
    .filter((e) => e.getClientRects().length && getComputedStyle(e).visibility !== "hidden" && !e.matches(".skip"))
    .filter((e) => !(getComputedStyle(e).display === "inline" && (words(e.previousSibling) || words(e.nextSibling))))
    .map((e) => [e, (["checkbox", "radio"].includes(e.type) && e.closest("label")) || e])
    .map(([e, target]) => [e, target.getBoundingClientRect()])
    .filter(([e, box]) => box.width < 43.5 || box.height < 43.5)
    .map(([e, box]) => `${e.outerHTML.slice(0, 100)} ${Math.round(box.width)}×${Math.round(box.height)}`);
}"""

# Milliseconds from `since` (a navigation's start) to the router's mark that the screen is drawn.
DRAWN = """([mark, since]) => {
  const entry = performance.getEntriesByName(mark).pop();
  return entry && entry.startTime >= since ? entry.startTime - since : null;
}"""


def visit(page, screen, fresh):
    """Opens `screen` as a fresh page load or, like a tap on a link, as a hash change; returns the ms
    from the navigation's start to the screen's first paint (the router's "screen:…" mark, set
    when the screen replaces the previous one)."""
    if fresh or page.url.endswith(screen):
        page.goto("about:blank")
        page.goto("/" + screen)
        since = 0  # the navigation's start
    else:
        # A hash change keeps the document: empty the screen so the new heading is waited for.
        since = page.evaluate("""hash => {
          document.getElementById("main").replaceChildren();
          const now = performance.now();
          location.hash = hash;
          return now;
        }""", screen)
    expect(page.locator("main h1").first).to_be_visible()
    route = screen[2:].split("?")[0].split("/")[0] or "home"
    drawn = page.evaluate(DRAWN, [f"screen:{route}", since])
    assert drawn is not None, f"{screen}: the router did not mark the screen drawn"
    return drawn


def timed(page, screen, fresh, tries=3):
    """visit(), again while over budget up to `tries` times in all (a loaded test machine can stall
    a load for a moment): the best figure counts."""
    best = visit(page, screen, fresh)
    for _ in range(tries - 1):
        if best < BUDGET_MS:
            break
        if not fresh:
            visit(page, "#/", fresh)  # to tap on the screen's link again
        best = min(best, visit(page, screen, fresh))
    return best


def check(page, width, fresh, screens):
    """Every screen of `screens` at `width` px, then the first of each of DETAILS that they link to;
    returns each one's first paint in ms."""
    paints = {}
    queue = list(screens)
    for screen in queue:
        paints[label(screen)] = timed(page, screen, fresh)
        page.wait_for_load_state("networkidle")
        missing = page.locator("main input, main select, main textarea, main button").evaluate_all(UNLABELLED)
        assert not missing, f"{screen} at {width} px has controls without a label: {missing}"
        overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, f"{screen} at {width} px is {overflow} px wider than the screen"
        if splits(screen, width):
            columns(page, screen, width)
        elif any(screen.startswith(reel) for reel in WIDE_SPLIT):
            # A reel fills the phone's screen alone.
            expect(page.locator("main .reel-full")).to_be_visible()
            expect(page.locator("main .split-side")).to_have_count(0)
        violations = axe_violations(page)
        assert not violations, f"{screen} at {width} px fails WCAG 2.1 AA (axe-core): {violations}"
        if width < 1024:
            small = page.evaluate(SMALL_TARGETS)
            assert not small, f"{screen} at {width} px has touch targets under 44 px: {small}"
        for prefix in DETAILS:
            link = page.locator(f'main a[href^="{prefix}"]')
            if not any(s.startswith(prefix) for s in queue) and link.count():
                queue.append(link.first.get_attribute("href"))
    return paints


def label(screen):
    return next((prefix + "…" for prefix in DETAILS if screen.startswith(prefix)), screen)


def figure(paints, screen):
    return f"{paints[screen]:.0f}" if screen in paints else "-"


# Screens with a list and its side ("#/…/": a screen of one thing); the reels only from 1024 px, where
# the clip on screen has its venue or its comments beside it (a phone shows the reel alone).
SPLIT = ["#/hub", "#/events", "#/sessions", "#/pala", "#/event/", "#/session/", "#/clip/"]
WIDE_SPLIT = ["#/pregame", "#/all", "#/clips", "#/venue/"]


def splits(screen, width):
    return any(screen == s or (s.endswith("/") and screen.startswith(s))
               for s in SPLIT + (WIDE_SPLIT if width >= 1024 else []))


def columns(page, screen, width):
    """Two columns from 1024 px (list and side next to each other, tops level), one below the other on a phone."""
    boxes = [page.locator(f"main .split-{part}").bounding_box() for part in ("list", "side")]
    assert all(boxes), f"{screen} has no list and side"
    (lst, side), wide = boxes, width >= 1024
    apart = lst["x"] + lst["width"] <= side["x"] or side["x"] + side["width"] <= lst["x"]
    assert apart == wide, f"{screen} at {width} px: list {lst}, side {side}"
    if wide:
        assert abs(lst["y"] - side["y"]) < 2 and min(lst["width"], side["width"]) > 250, f"{screen}: {lst}, {side}"
        if any(screen.startswith(reel) for reel in WIDE_SPLIT):
            # Beside the reel: what the screen says about the clip on screen (a heading: its venue, "About this clip").
            expect(page.locator("main .split-list .reel-full")).to_be_visible()
            expect(page.locator("main .split-side h2").first).to_be_visible()


def first_load(page):
    """The first load of a fresh browser (nothing cached), measured by the browser: under
    FIRST_LOAD_BYTES as transferred, gzipped, and without any module loaded on demand."""
    page.wait_for_load_state("networkidle")
    files = page.evaluate(FIRST_LOAD)
    paths = [file["path"] for file in files]
    assert "/app/app.js" in paths and "/app/styles.css" in paths, paths
    early = [path for path in paths if any(path.startswith(lazy) for lazy in ON_DEMAND)]
    assert not early, f"loaded on demand, yet part of the first load: {early}"
    # The built-in files go gzipped, every one; a folder served with WEB_DIR (development) goes as it
    # is, and then each file counts as gzip would send it.
    texts = [file for file in files if file["unpacked"] > 1024]
    gzipped = [file for file in texts if file["wire"] < file["unpacked"]]
    if gzipped:
        assert gzipped == texts, f"not sent gzipped: {[file for file in texts if file not in gzipped]}"
    else:
        for file in files:
            file["wire"] = len(gzip.compress(page.request.get(file["path"]).body(), compresslevel=6, mtime=0))
    wire, unpacked = sum(file["wire"] for file in files), sum(file["unpacked"] for file in files)
    print(f"first load: {len(files)} files, {wire / 1024:.1f} KB {'transferred' if gzipped else 'gzipped (served plain: WEB_DIR)'}"
          f" ({unpacked / 1024:.1f} KB unpacked)")
    assert wire < FIRST_LOAD_BYTES, f"first load {wire} bytes, over {FIRST_LOAD_BYTES}: {files}"


def body(new_page):
    phone = new_page()
    # The start screen, signed out: the first load, then its accessibility.
    phone.goto("/#/start")
    expect(phone.locator("main h1").first).to_be_visible()
    first_load(phone)
    assert not axe_violations(phone), axe_violations(phone)
    assert not phone.evaluate(SMALL_TARGETS), phone.evaluate(SMALL_TARGETS)
    phone.locator("summary", has_text="Sign in").click()  # the sign-in form with its "Forgot password?"
    assert not axe_violations(phone), axe_violations(phone)
    assert not phone.evaluate(SMALL_TARGETS), phone.evaluate(SMALL_TARGETS)
    signed_out = {f"{screen} (out)": ms for screen, ms in check(phone, 360, True, SIGNED_OUT).items()}
    sign_in(phone, "mia")
    # The keyboard reaches the tab bar and follows a link with Enter.
    events = phone.get_by_role("navigation", name="Apps").get_by_role("link", name="Events")
    for _ in range(80):
        phone.keyboard.press("Tab")
        if events.evaluate("e => e === document.activeElement"):
            break
    expect(events).to_be_focused()
    phone.keyboard.press("Enter")
    expect(phone.get_by_role("heading", name="Tonight")).to_be_visible()
    # The phone opens each screen as a fresh page load, the desktop as a tap on a link does.
    loads = signed_out | check(phone, 360, True, SCREENS)
    desktop = new_page(width=1280, height=800)
    sign_in(desktop, "leo")
    taps = check(desktop, 1280, False, SCREENS)
    staff = new_page(width=1280, height=800)
    sign_in(staff, "admin")
    taps |= check(staff, 1280, False, STAFF)
    # Budget: every screen's first paint under 1 s on the demo with the position granted.
    print(f"{'first paint, ms':<24}{'load 360 px':>12}{'tap 1280 px':>12}")
    for screen in {**loads, **taps}:
        print(f"{screen:<24}{figure(loads, screen):>12}{figure(taps, screen):>12}")
    slow = {screen: round(ms) for screen, ms in [*loads.items(), *taps.items()] if ms >= BUDGET_MS}
    assert not slow, f"first paint over {BUDGET_MS} ms: {slow}"
    manifest = json.loads(desktop.request.get("/app/manifest.webmanifest").text())
    assert manifest["display"] == "standalone" and manifest["start_url"] == "/"
    sizes = {icon["sizes"] for icon in manifest["icons"]}
    assert {"192x192", "512x512"} <= sizes, sizes
    for icon in manifest["icons"]:
        assert desktop.request.get(icon["src"]).ok, icon["src"]


scenario("access", body)
