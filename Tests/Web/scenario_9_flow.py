#!/usr/bin/env python3
"""Scenario 9, never lost: a shared clip link opened signed out comes back to the clip after signing
in; a guest tapping Like three times gets one sign-up prompt, in view above the tab bar, and signing
up from it comes back to the clip; and a screen that waits (a guest without location, from Clips to
Events) shows a skeleton and its tab within 100 ms instead of leaving the old screen frozen, and the
position is asked once, not again on every screen.

Needs (demo data): Mia (password DEMO_PASSWORD) and at least one ready clip at Neon Garden
(osm:node/9100001).
"""
import re
import uuid

from playwright.sync_api import expect

from common import DEMO_PASSWORD, call, open_form, scenario

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


def body(new_page):
    clip = a_clip()
    heading = "Clip by"

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

    # A guest taps Like three times: one prompt, on screen; signing up from it returns to the clip.
    guest = new_page()
    guest.goto(f"/#/clip/{clip}")
    guest.get_by_role("button", name="Continue without an account").click()
    expect(guest.get_by_role("heading", name=heading)).to_be_visible()
    like = guest.get_by_role("button", name="Like")
    for _ in range(3):
        like.click()
    prompt = guest.get_by_role("alertdialog", name="Sign up to continue")
    expect(prompt).to_have_count(1)
    expect(prompt).to_be_in_viewport()
    prompt.get_by_role("link", name="Sign up").click()
    name = f"flow_{uuid.uuid4().hex[:6]}"
    open_form(guest, "Sign up")
    form = guest.get_by_role("form", name="Sign up")
    form.get_by_label("Username").fill(name)
    form.get_by_label("Email").fill(f"{name}@example.com")
    form.get_by_label("Password").fill("a long enough passphrase")
    form.get_by_role("button", name="Sign up").click()
    expect(guest.get_by_role("heading", name=heading)).to_be_visible()
    assert guest.url.endswith(f"#/clip/{clip}"), guest.url
    expect(guest.get_by_role("alertdialog")).to_have_count(0)

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
