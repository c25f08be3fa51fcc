#!/usr/bin/env python3
"""Every screen at 360 px and on a desktop: each control has a label, nothing overflows sideways,
a screen's list and its side (filters, feed, chats) stack on a phone and stand side by side on a
wide screen, the keyboard reaches the tab bar, and the app is installable (manifest with icons)."""
import json

from playwright.sync_api import expect

from common import scenario, sign_in

SCREENS = ["#/", "#/hub", "#/pregame", "#/clips", "#/people", "#/bookmarks", "#/events", "#/artists",
           "#/favorites", "#/explore", "#/pala", "#/matches", "#/sessions", "#/sessions?view=map", "#/newsession", "#/calendar",
           "#/friends", "#/invitations", "#/quiz", "#/recs", "#/stats", "#/inbox", "#/settings", "#/post"]

UNLABELLED = """elements => elements.filter(e => {
  if (e.type === "hidden" || e.closest("[hidden]")) return false;
  const name = (e.labels && e.labels.length) || e.getAttribute("aria-label") || e.getAttribute("aria-labelledby")
    || e.title || (e.tagName === "BUTTON" && e.textContent.trim());
  return !name;
}).map(e => e.outerHTML.slice(0, 120))"""


def check(page, width):
    for screen in SCREENS:
        # Empty the screen first: a hash change keeps the document, so wait for the new screen's heading.
        page.evaluate("() => document.getElementById('main').replaceChildren()")
        if page.url.endswith(screen):
            page.reload()
        else:
            page.goto("/" + screen)
        expect(page.locator("main h1").first).to_be_visible()
        page.wait_for_load_state("networkidle")
        missing = page.locator("main input, main select, main textarea, main button").evaluate_all(UNLABELLED)
        assert not missing, f"{screen} at {width} px has controls without a label: {missing}"
        overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, f"{screen} at {width} px is {overflow} px wider than the screen"
        if screen in SPLIT:
            columns(page, screen, width)


SPLIT = ["#/hub", "#/events", "#/sessions", "#/pala"]


def columns(page, screen, width):
    """Two columns from 1024 px (list and side next to each other, tops level), one below the other on a phone."""
    boxes = [page.locator(f"main .split-{part}").bounding_box() for part in ("list", "side")]
    assert all(boxes), f"{screen} has no list and side"
    (lst, side), wide = boxes, width >= 1024
    apart = lst["x"] + lst["width"] <= side["x"] or side["x"] + side["width"] <= lst["x"]
    assert apart == wide, f"{screen} at {width} px: list {lst}, side {side}"
    if wide:
        assert abs(lst["y"] - side["y"]) < 2 and min(lst["width"], side["width"]) > 250, f"{screen}: {lst}, {side}"


def body(new_page):
    phone = new_page()
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
    check(phone, 360)
    desktop = new_page(width=1280, height=800)
    sign_in(desktop, "leo")
    check(desktop, 1280)
    manifest = json.loads(desktop.request.get("/app/manifest.webmanifest").text())
    assert manifest["display"] == "standalone" and manifest["start_url"] == "/"
    sizes = {icon["sizes"] for icon in manifest["icons"]}
    assert {"192x192", "512x512"} <= sizes, sizes
    for icon in manifest["icons"]:
        assert desktop.request.get(icon["src"]).ok, icon["src"]


scenario("access", body)
