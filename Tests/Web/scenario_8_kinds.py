#!/usr/bin/env python3
"""Scenario 8, no leaks between apps: Tickets Tonight's list, Pala's "Your events", PartyUP's hub and
the post form's venues hold no sports session or sports spot, Playmate's place picker no nightlife
venue, and a session always opens in
Playmate's screen with its seats — from a link to the event page and from an inbox notice.

Needs (demo data): Leo plays Ben's padel session and goes to nothing else; the sports spots
"Tempelhof Pitches", "Mauerpark Courts" and "Prenzlauer Padel". The scenario has Leo go to a party
it seeds tonight, and Ben move the padel session by ten minutes (Leo's "changed" notice).
"""
import datetime
import re
import time
from zoneinfo import ZoneInfo

from playwright.sync_api import expect

from common import BERLIN, DEMO_PASSWORD, admin_token, call, scenario, sign_in, tab

RUN = str(int(time.time() * 1000))[-7:]
PARTY = f"Leak check party {RUN}"
SPOTS = ["Tempelhof Pitches", "Mauerpark Courts", "Prenzlauer Padel"]
NEAR = f"{BERLIN['latitude']},{BERLIN['longitude']}"


def token(username):
    return call("POST", "/v1/auth/login", {"username": username, "password": DEMO_PASSWORD})["accessToken"]


def seed():
    """A party tonight at a new bar with Leo going; Ben's padel session moved (Leo is told)."""
    admin = admin_token()
    bar = call("POST", "/v1/places", {"name": f"Leak bar {RUN}", "category": "bar",
                                      "location": {"lat": 52.5205, "lon": 13.4055}}, admin)
    # Within the Events tab's "tonight": until 06:00 the night is still on (LocalClock.window), so
    # early in the morning the party starts soon; after 06:00, at 20:00 (or an hour from now).
    now = datetime.datetime.now(ZoneInfo("Europe/Berlin"))
    six = now.replace(hour=6, minute=0, second=0, microsecond=0)
    if now < six and now + datetime.timedelta(minutes=3) >= six:
        time.sleep((six - now).total_seconds() + 5)  # the last minutes of a night: wait for the next
        now = datetime.datetime.now(ZoneInfo("Europe/Berlin"))
    start = now + datetime.timedelta(hours=1)
    if now < six:
        start = min(start, six - datetime.timedelta(minutes=1))
    else:
        start = max(start, now.replace(hour=20, minute=0, second=0, microsecond=0))
    party = call("POST", "/v1/events", {"name": PARTY, "placeId": bar["id"], "localDate": start.date().isoformat(),
                                        "localTime": start.strftime("%H:%M")}, admin)
    leo = token("leo")
    call("PUT", f"/v1/events/{party['id']}/attendance", {"status": "going"}, leo)
    sessions = call("GET", f"/v1/events?kind=session&near={NEAR}&radius=50000&limit=50")["items"]
    assert sessions, "the demo has no sessions"
    padel = next(s for s in sessions if s["session"]["sport"]["slug"] == "padel")
    call("PATCH", f"/v1/sessions/{padel['id']}", {"localTime": "19:10"}, token("ben"))
    return party["id"], [s["id"] for s in sessions], padel["id"]


def body(new_page):
    party_id, session_ids, padel_id = seed()
    page = new_page()
    sign_in(page, "leo")

    # Tickets Tonight: tonight's list has the party and no session (sessions have no price either).
    tab(page, "Events")
    expect(page.get_by_role("link", name=PARTY)).to_be_visible()
    for session_id in session_ids:
        expect(page.locator(f'a[href="#/event/{session_id}"]')).to_have_count(0)
    page.goto("/#/events?when=weekend&maxPrice=20")
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    for session_id in session_ids:
        expect(page.locator(f'a[href="#/event/{session_id}"]')).to_have_count(0)

    # Pala: "Your events" lists the party Leo goes to, not the padel session he plays.
    page.goto("/#/pala")
    expect(page.locator(f'a[href="#/wall/{party_id}"]')).to_be_visible()
    for session_id in session_ids:
        expect(page.locator(f'a[href="#/wall/{session_id}"]')).to_have_count(0)

    # PartyUP: the hub and the post form's venues are nightlife venues only.
    page.goto("/#/hub")
    expect(page.locator(".pu-venue").first).to_be_visible()
    for spot in SPOTS:
        expect(page.get_by_text(spot)).to_have_count(0)
    page.goto("/#/post")
    where = page.get_by_label("Where")
    expect(where.locator("option", has_text=f"Leak bar {RUN}")).to_have_count(1)
    for spot in SPOTS:
        expect(where.locator("option", has_text=spot)).to_have_count(0)

    # Playmate: the new session's place picker offers sports spots, never a nightlife venue — neither
    # nearby nor when searched by name.
    bars = {p["name"] for p in call("GET", f"/v1/places?near={NEAR}&radius=5000&group=nightlife&limit=100")["items"]}
    assert f"Leak bar {RUN}" in bars, "the seeded bar is not a nightlife venue"
    page.goto("/#/newsession")
    form = page.get_by_role("form", name="New session")
    place = form.get_by_role("combobox", name="Place")
    expect(place.locator("option").filter(has_text=re.compile("|".join(SPOTS))).first).to_be_attached()
    offered = place.locator("option").evaluate_all("options => options.map((o) => o.textContent.replace(/ \\([^)]*\\)$/, ''))")
    assert not bars & set(offered), f"the place picker offers nightlife venues: {sorted(bars & set(offered))}"
    form.get_by_label("Find a place or city").fill(f"Leak bar {RUN}")
    form.get_by_role("button", name="Search places").click()
    expect(form.get_by_role("status")).to_have_text("0 places found")
    expect(place.locator("option", has_text="Leak bar")).to_have_count(0)

    # A session opens in Playmate's screen: from an event link, and from the inbox's notice.
    page.goto(f"/#/event/{padel_id}")
    expect(page).to_have_url(re.compile(f"#/session/{padel_id}$"))
    expect(page.locator("#pm-seats")).to_be_visible()
    page.goto("/#/inbox")
    # Change alerts go out every few seconds (EventChangeNotifier); the inbox shows them live.
    notice = page.get_by_role("list", name="Notifications").locator(f'a[href="#/session/{padel_id}"]').first
    expect(notice).to_be_visible(timeout=30_000)
    notice.click()
    expect(page).to_have_url(re.compile(f"#/session/{padel_id}$"))
    expect(page.locator("#pm-seats")).to_be_visible()


scenario("scenario_8_kinds", body)
