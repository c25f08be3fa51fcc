#!/usr/bin/env python3
"""Scenario 5, Playmate: three new players. A and B become friends (request + accept), A creates a
two-player session at a seeded Berlin court (after the form's field errors) and invites B. C finds
the session through the search (list and map) while a spot is free; B accepts the invitation, which
fills the session, so C's Join answers the 409 "full" message and then shows "Full" with a disabled
Join. B sees the session suggested because A, a friend, plays. C picks the sport in the filters by
typing it. A's calendar lists the session and its iCalendar subscription feed contains it."""
import datetime
import random
import re
from zoneinfo import ZoneInfo

from playwright.sync_api import expect

from common import admin_token, call, expect_map, scenario, sign_up

SUFFIX = f"{random.randrange(36**6):06x}"
BERLIN_DAY = datetime.datetime.now(ZoneInfo("Europe/Berlin")).date()
TOMORROW = (BERLIN_DAY + datetime.timedelta(days=1)).isoformat()
YESTERDAY = (BERLIN_DAY - datetime.timedelta(days=1)).isoformat()
PLACE = f"Curling Hall {SUFFIX}"
SESSION = "Curling (beginner)"


def seed_place():
    """A court 150 m from the city centre, so it is the nearest place whatever the demo has."""
    token = admin_token()
    place = {"name": PLACE, "category": "sports_centre", "location": {"lat": 52.5210, "lon": 13.4065}}
    call("POST", "/v1/places", place, token)


def make_friends(a, b, name_a, name_b):
    a.goto("/#/friends")
    add = a.get_by_role("form", name="Add a friend")
    add.get_by_label("Username").fill(name_b)
    add.get_by_role("button", name="Find").click()
    a.get_by_role("button", name=f"Add friend @{name_b}").click()
    expect(a.get_by_role("region", name="Your requests")).to_contain_text(f"@{name_b}")
    b.goto("/#/friends")
    b.get_by_role("region", name="Requests to you").get_by_role("button", name=f"Accept @{name_a}").click()
    expect(b.get_by_role("region", name="Your friends (1)")).to_contain_text(f"@{name_a}")


def create_session(a):
    """Creates the session through #/newsession, first meeting its field errors; returns its URL."""
    a.get_by_role("navigation", name="Apps").get_by_role("link", name="Sports").click()
    expect(a.get_by_role("heading", name="Sports sessions")).to_be_visible()
    a.get_by_role("link", name="Create a session").click()
    form = a.get_by_role("form", name="New session")
    form.get_by_role("button", name="Create session").click()
    expect(form.get_by_role("alert").filter(has_text="Choose a sport.")).to_be_visible()
    form.get_by_role("combobox", name="Sport").select_option(label="Curling")
    form.get_by_label("Skill level").select_option("beginner")
    form.get_by_label("Date").fill(YESTERDAY)
    form.get_by_label("Time").fill("18:00")
    form.get_by_label("Capacity (players)").fill("2")
    form.get_by_label("Find a place or city").fill(PLACE)
    form.get_by_role("button", name="Search places").click()
    expect(form.get_by_role("status")).to_have_text("1 place found")
    expect(form.get_by_role("combobox", name="Place").locator("option:checked")).to_contain_text(PLACE)
    form.get_by_label("Notes").fill("Brooms provided.")
    form.get_by_role("button", name="Create session").click()
    expect(form.get_by_role("alert").filter(has_text="past")).to_be_visible()
    form.get_by_label("Date").fill(TOMORROW)
    form.get_by_role("button", name="Create session").click()
    expect(a.get_by_role("heading", name=SESSION)).to_be_visible()
    expect(a.get_by_text("1 of 2 left")).to_be_visible()
    expect(a.get_by_role("link", name="Google Maps")).to_be_visible()
    if call("GET", "/v1/config").get("mapTileURL"):
        expect(expect_map(a, f"Map of {PLACE}").get_by_role("link", name=f"Directions to {PLACE}")).to_be_visible()
    expect(a.locator("p", has_text="Brooms provided.")).to_be_visible()
    return a.url


def find_session(c):
    """C searches curling tomorrow within 2 km by distance, looks at the map, opens the session."""
    c.goto("/#/sessions")
    c.get_by_text("Filters", exact=True).click()
    filters = c.get_by_role("form", name="Filters")
    filters.get_by_label("Find a sport").fill("curl")
    filters.get_by_role("list", name="Matching sports").get_by_role("button", name="Add Curling").click()
    expect(filters.get_by_role("list", name="Sports: chosen").get_by_role("button", name="Remove Curling")).to_be_visible()
    filters.get_by_label("From", exact=True).fill(TOMORROW)
    filters.get_by_label("To", exact=True).fill(TOMORROW)
    filters.get_by_label("Radius").select_option(label="2 km")
    filters.get_by_label("Sort by").select_option("distance")
    filters.get_by_role("button", name="Search").click()
    expect(c).to_have_url(re.compile(r"[?&]sport=curling(&|$)"))  # the same query as the check boxes made
    # The filtered screen has no home rows: wait for it, then look in its results only (the session
    # may also be among the suggestions of the screen being replaced).
    expect(c.get_by_role("region", name="Suggested for you")).to_have_count(0)
    card = c.get_by_role("list", name="Sessions found").get_by_role("listitem").filter(has_text=PLACE)
    expect(card).to_contain_text("1 of 2 left")
    expect(card.get_by_role("link", name="Apple Maps")).to_be_visible()
    c.get_by_role("link", name="Map", exact=True).click()
    listed = c.get_by_role("listitem").filter(has_text=PLACE).get_by_role("link", name=SESSION)
    # Under the map, each result says how far and which way it is in words, never as coordinates.
    expect(c.locator(".pm-where > li", has_text=PLACE)).to_contain_text(re.compile(re.escape(PLACE) + r" · 1\d\d m north-east of you · 1 of 2 left"))
    shown = c.locator("main").inner_text()
    assert not re.search(r"\d+\.\d{3,}", shown), f"raw coordinates on the sessions map: {shown}"
    if call("GET", "/v1/config").get("mapTileURL"):
        # Leaflet, tiles from the configured tile server, the session's numbered pin (a link) on
        # them and the list of results under it; the pin opens the session.
        pin = expect_map(c, "Map of sessions around you").get_by_role("link", name=re.compile(r"^\d+\. " + re.escape(SESSION)))
        expect(listed).to_be_visible()
        pin.click()
    else:
        expect(c.get_by_role("img", name="Sessions around you")).to_be_visible()
        listed.click()
    expect(c.get_by_role("heading", name=SESSION)).to_be_visible()
    expect(c.get_by_role("button", name="Join")).to_be_enabled()


def body(new_page):
    seed_place()
    a, b, c = new_page(), new_page(), new_page()
    name_a, name_b, name_c = f"pma_{SUFFIX}", f"pmb_{SUFFIX}", f"pmc_{SUFFIX}"
    for page, name in ((a, name_a), (b, name_b), (c, name_c)):
        sign_up(page, name)
    make_friends(a, b, name_a, name_b)
    session_url = create_session(a)
    # Playmate's home: A's new session leads "Your next sessions"; suggestions have a row of their own.
    a.get_by_role("navigation", name="Apps").get_by_role("link", name="Sports").click()
    expect(a.get_by_role("list", name="Your next sessions").get_by_role("listitem").filter(has_text=PLACE)).to_be_visible()
    expect(a.get_by_role("region", name="Suggested for you")).to_be_visible()
    a.goto(session_url)
    expect(a.get_by_role("heading", name=SESSION)).to_be_visible()

    a.get_by_role("button", name="Invite friends").click()
    invite = a.get_by_role("form", name="Invite friends")
    invite.get_by_label(f"@{name_b}").check()
    invite.get_by_role("button", name="Send invitations").click()
    expect(a.get_by_role("status").filter(has_text="Invited")).to_have_text(f"Invited @{name_b}.")

    # B says in the quiz that they play curling (the searchable sport list), then sees A's session
    # suggested, saying what matched: the sport, the friend, how far.
    b.goto("/#/quiz")
    played = b.get_by_role("group", name="1. Sports you play")
    played.get_by_label("Find a sport").fill("curl")
    played.get_by_role("button", name="Add Curling").click()
    expect(played.get_by_role("button", name="Remove Curling")).to_be_visible()
    b.get_by_role("button", name="Save answers").click()
    expect(b.get_by_role("heading", name="Suggested for you")).to_be_visible()
    reasons = b.locator("li", has_text=PLACE).get_by_role("list", name="Why we suggest it")
    expect(reasons).to_contain_text("Curling, your sport")
    expect(reasons).to_contain_text(f"Your friend @{name_a} is going")
    expect(reasons).to_contain_text(re.compile(r"\d+ m away"))

    find_session(c)  # C looks while one spot is still free

    b.goto("/#/invitations")
    received = b.get_by_role("region", name="Received")
    received.get_by_role("button", name=f"Accept {SESSION}").click()
    expect(received).to_contain_text("Accepted")
    received.get_by_role("link", name=SESSION).click()
    expect(b.get_by_role("list", name="Players")).to_contain_text(f"@{name_b}")
    expect(b.get_by_role("list", name="Players")).to_contain_text(f"@{name_a}")
    expect(b.locator("#pm-seats")).to_have_text("Full")
    expect(b.get_by_role("button", name="Leave")).to_be_visible()

    c.get_by_role("button", name="Join").click()  # the page is stale: the server answers 409
    expect(c.get_by_role("alert")).to_contain_text("This session is full")
    expect(c.locator("#pm-seats")).to_have_text("Full")
    expect(c.get_by_role("button", name="Join")).to_be_disabled()
    c.goto(session_url)
    expect(c.get_by_role("button", name="Join")).to_be_disabled()

    a.goto("/#/calendar")
    expect(a.get_by_role("heading", name="My calendar")).to_be_visible()
    expect(a.get_by_role("link", name=SESSION)).to_be_visible()
    a.get_by_role("button", name="Subscription link").click()
    expect(a.get_by_role("link", name="Open in calendar app (webcal)")).to_have_attribute("href", re.compile(r"^webcal://"))
    feed = a.get_by_label("Feed link").input_value()
    assert "Curling" in a.request.get(feed).text(), "the iCalendar feed lacks the session"


scenario("scenario_5_playmate", body)
