#!/usr/bin/env python3
"""Scenario 9, never lost: a shared clip link opened signed out comes back to the clip after signing
in; a guest tapping Like three times gets one sign-up dialog, modal (focus in it and kept there,
Escape closes it), and signing up in it stays on the clip; and a screen that waits (a guest without location, from Clips to
Events) shows a skeleton and its tab within 100 ms instead of leaving the old screen frozen, and the
position is asked once, not again on every screen. The start screen shows what's on tonight and
"Continue without an account" above the fold on a 390×844 phone, before the sign-in and sign-up
buttons; a toast stands above the tab bar.

Needs (demo data): Mia (password DEMO_PASSWORD) and at least one ready clip at Neon Garden
(osm:node/9100001).
"""
import re
import uuid

from playwright.sync_api import expect

from common import DEMO_PASSWORD, axe_violations, call, fill_sign_up, open_form, scenario

# Milliseconds from a tab tap to the skeleton (or the screen) and the tab's highlight; the old
# screen must not stay up longer.
FEEDBACK_MS = 100
# Taps Events and answers how long until the tab is marked and the screen shows a skeleton or its title.
TAP_EVENTS = """() => new Promise((resolve) => {
        const main = document.getElementById("main");
        const started = performance.now();
        const check = () => {
            const tab = document.querySelector('#tabs a[href="#/events"]');
            const shown = main.querySelector(".skeleton") || main.querySelector("h1")?.textContent !== "Dance clips";
            if (shown && tab?.getAttribute("aria-current") === "page") { observer.disconnect(); resolve(performance.now() - started); }
        };
        const observer = new MutationObserver(check);
        observer.observe(document.body, { childList: true, subtree: true, attributes: true });
        document.querySelector('#tabs a[href="#/events"]').click();
        check();
    })"""


def a_clip():
    clips = call("GET", "/v1/places/osm:node%2F9100001/posts?limit=5")["items"]
    ready = [clip["id"] for clip in clips if clip.get("status") == "ready"]
    assert ready, "the demo has no ready clip at Neon Garden"
    return ready[0]


def above_the_fold(new_page):
    """The start screen on a 390×844 phone: what's on tonight and "Continue without an account" in
    view before scrolling, above the Sign up and Sign in buttons."""
    page = new_page(width=390, height=844)
    page.goto("/#/start")
    tonight = page.get_by_role("list", name="On tonight")
    expect(tonight.get_by_role("listitem").first).to_be_visible()
    guest = page.get_by_role("button", name="Continue without an account")
    for shown in (tonight, guest):
        expect(shown).to_be_in_viewport(ratio=1)
    first_form = min(page.locator("summary", has_text=name).bounding_box()["y"] for name in ("Sign up", "Sign in"))
    for shown in (tonight, guest):
        box = shown.bounding_box()
        assert box["y"] + box["height"] <= first_form, f"{box} is not above the sign-up and sign-in buttons ({first_form})"


def toast_above_tabs(page):
    """A toast (Bookmark's) stands above the tab bar, never over it."""
    page.get_by_role("button", name="Bookmark").click()
    toast = page.locator("#toast")
    expect(toast).to_have_text("Saved to your bookmarks")
    expect(toast).to_be_visible()
    shown, tabs = toast.bounding_box(), page.get_by_role("navigation", name="Apps").bounding_box()
    assert shown["y"] + shown["height"] <= tabs["y"], f"the toast {shown} covers the tab bar {tabs}"


def body(new_page):
    clip = a_clip()
    heading = "Clip by"
    above_the_fold(new_page)

    # A shared link, signed out: the start screen, then straight back to the clip.
    linked = new_page()
    linked.goto(f"/#/clip/{clip}")
    open_form(linked, "Sign in")
    form = linked.get_by_role("form", name="Sign in")
    form.get_by_label("Username or email").fill("mia")
    form.get_by_label("Password").fill(DEMO_PASSWORD)
    form.get_by_role("button", name="Sign in").click()
    expect(linked.get_by_role("heading", name=heading)).to_be_visible()
    assert linked.url.endswith(f"#/clip/{clip}"), linked.url

    # A guest taps Like three times: one sign-up dialog, modal (the page behind it inert, so the
    # next taps land on its backdrop), focus in it and kept there, Escape closes it and focus goes
    # back to Like; signing up in it stays on the clip, now as a member.
    guest = new_page()
    guest.goto(f"/#/clip/{clip}")
    guest.get_by_role("button", name="Continue without an account").click()
    expect(guest.get_by_role("heading", name=heading)).to_be_visible()
    like = guest.get_by_role("button", name="Like")
    like.click()
    for _ in range(2):
        like.click(force=True)  # where Like is: the dialog's backdrop now
    dialog = guest.get_by_role("dialog", name="Sign up to continue")
    expect(dialog).to_have_count(1)
    expect(dialog).to_have_attribute("aria-modal", "true")
    expect(dialog).to_be_in_viewport()
    in_dialog = "() => !!document.activeElement.closest('[role=dialog]')"
    assert guest.evaluate(in_dialog), "the taps took the focus out of the dialog"
    assert not axe_violations(guest), axe_violations(guest)
    for key in ["Tab"] * 8 + ["Shift+Tab"] * 9:
        guest.keyboard.press(key)
        assert guest.evaluate(in_dialog), f"{key} took the focus out of the dialog"
    guest.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    expect(like).to_be_focused()
    like.click()
    expect(dialog).to_have_count(1)
    expect(dialog.get_by_label("Username")).to_be_focused()  # where the dialog puts the focus
    name = f"flow_{uuid.uuid4().hex[:6]}"
    fill_sign_up(dialog.get_by_role("form", name="Sign up"), name)
    expect(dialog).to_have_count(0)
    expect(guest.get_by_role("heading", name=heading)).to_be_visible()
    assert guest.url.endswith(f"#/clip/{clip}"), guest.url
    expect(guest.get_by_role("navigation", name="Main").get_by_role("link", name="Sign out")).to_be_visible()
    guest.get_by_role("button", name="Like").click()  # a member now: the like counts, no dialog
    expect(guest.get_by_role("button", name="Like")).to_have_attribute("aria-pressed", "true")
    expect(dialog).to_have_count(0)
    toast_above_tabs(guest)

    # A guest without location: Events waits for the position, and says so at once.
    lost = new_page(located=False)
    # Counts how often the app asks the browser for the position.
    lost.add_init_script("""(() => {
        const ask = navigator.geolocation.getCurrentPosition.bind(navigator.geolocation);
        window.positionAsks = 0;
        navigator.geolocation.getCurrentPosition = (...args) => { window.positionAsks += 1; return ask(...args); };
    })()""")
    lost.goto("/#/start")
    lost.get_by_role("button", name="Continue without an account").click()
    lost.get_by_role("navigation", name="Apps").get_by_role("link", name="Clips").click()
    expect(lost.get_by_role("heading", level=1)).to_be_visible()
    # The best of up to three taps (as scenario 7's paint budget): one slow frame on a loaded
    # machine is not the app's doing; three are.
    waits = []
    for attempt in range(3):
        if attempt:
            lost.get_by_role("navigation", name="Apps").get_by_role("link", name="Clips").click()
            expect(lost.get_by_role("heading", level=1)).to_have_text("Dance clips")
        waits.append(lost.evaluate(TAP_EVENTS))
        if waits[-1] < FEEDBACK_MS:
            break
    waited = min(waits)
    assert waited < FEEDBACK_MS, f"no feedback for {waited:.0f} ms after tapping Events"
    expect(lost.get_by_role("heading", level=1)).not_to_have_text("Dance clips")
    # Without an answer, the position is asked once: the next screens go on without it at once.
    expect(lost.get_by_role("heading", level=1)).not_to_have_text("Loading")
    expect(lost.locator(".skeleton")).to_have_count(0, timeout=10_000)
    for label in ("Venues", "Events", "Sports"):
        lost.get_by_role("navigation", name="Apps").get_by_role("link", name=label).click()
        expect(lost.locator(".skeleton")).to_have_count(0)
    assert lost.evaluate("window.positionAsks") == 1, lost.evaluate("window.positionAsks")
    # The city fallback: a city picked in Venues is where Events looks too.
    lost.get_by_role("navigation", name="Apps").get_by_role("link", name="Venues").click()
    change = lost.get_by_role("form", name="Change city")
    change.get_by_label("City").fill("Berlin")
    change.get_by_role("button", name="Find").click()
    change.locator("xpath=..").get_by_role("button", name=re.compile(r"^Berlin, ")).first.click()
    lost.get_by_role("navigation", name="Apps").get_by_role("link", name="Events").click()
    expect(lost.get_by_text("In Berlin. Allow location")).to_be_visible()


scenario("scenario_9_flow", body)
