#!/usr/bin/env python3
"""Scenario 4, Tickets Tonight: artist search as you type, favourite an artist, the explore cards
("Similar to …", Not for me, Refresh, Interested), the followed event's detail, favourites, the
events list's budget filter, and an event's time on the venue's clock seen from New York.

Needs (demo data): artists "Kiki Moreno" and "Midnight Orbit" (Kiki Moreno → Midnight Orbit
affinity) and a show by Midnight Orbit in Berlin within 7 days. The budget check seeds its own
place and two shows through the API as admin.
"""
import datetime
import re
import time
from zoneinfo import ZoneInfo

from playwright.sync_api import expect

from common import admin_token, call, expect_map, scenario, sign_up, tab

RUN = str(int(time.time() * 1000))[-7:]
CHEAP, PRICEY = f"Cheap gig {RUN}", f"Pricey gala {RUN}"


def seed_budget_shows():
    """A place at the city centre with a cheap and a pricey show tomorrow evening (Berlin time);
    returns the cheap one."""
    token = admin_token()
    # Its picture lives on another host (the test tile server): the app shows our cached copy.
    picture = call("GET", "/v1/config")["mapTileURL"].replace("{z}/{x}/{y}", "3/4/2")
    place = call("POST", "/v1/places", {"name": f"Budget hall {RUN}", "category": "concert_hall",
                                        "location": {"lat": 52.5200, "lon": 13.4050}, "imageURL": picture}, token)
    assert place["imageURL"] == f"/v1/images/places/{place['id']}", place["imageURL"]
    day = (datetime.datetime.now(ZoneInfo("Europe/Berlin")) + datetime.timedelta(days=1)).date().isoformat()
    shows = [call("POST", "/v1/events", {"name": name, "placeId": place["id"], "localDate": day, "localTime": "20:00",
                                         "minPrice": low, "maxPrice": high, "currency": "EUR"}, token)
             for name, low, high in [(CHEAP, 9, 12), (PRICEY, 300, 450)]]
    return shows[0]


def venue_clock(new_page, show):
    """Seen from New York, a show in Berlin says its day and time on Berlin's clock, in words, and
    the time where the visitor is."""
    page = new_page(zone="America/New_York")
    page.goto("/#/start")
    page.get_by_role("button", name="Continue without an account").click()
    expect(page.get_by_role("heading", name="Hi, guest")).to_be_visible()
    page.goto(f"/#/event/{show['id']}")
    hero = page.locator("main img.tt-hero")
    expect(hero).to_have_attribute("src", re.compile(r"^/v1/images/places/"))
    # The cached copy loads (polled, without eval, which the page's CSP forbids).
    expect(hero).to_have_js_property("complete", True)
    expect(hero).not_to_have_js_property("naturalWidth", 0)
    when = page.locator("dt", has_text="When").locator("xpath=following-sibling::dd[1]")
    expect(when).to_contain_text("Tomorrow, ")
    expect(when).to_contain_text("· 20:00 Berlin time")
    there = datetime.datetime.fromisoformat(show["start"].replace("Z", "+00:00")).astimezone(ZoneInfo("America/New_York"))
    expect(when).to_contain_text(re.compile(rf"Where you are: \w+.* · {there:%H:%M}$"))
    assert not re.search(r"\d{4}-\d{2}-\d{2}|Europe/", when.inner_text()), when.inner_text()


def artist_image(page, picture):
    """An artist's picture shows on their page and stands for their shows in lists, before the
    venue's. The demo's artists have none and only a feed import sets one, so Midnight Orbit's is
    put into the API's answer here: `picture`, a real cached image (the budget hall's)."""
    def with_picture(route):
        answer = route.fetch().json()
        answer["artist"]["imageURL"] = picture
        for event in answer["upcomingEvents"]:
            for performer in event["performers"]:
                if performer["id"] == answer["artist"]["id"]:
                    performer["imageURL"] = picture
        route.fulfill(json=answer)

    page.route(re.compile(r"/v1/artists/[^/?]+$"), with_picture)
    page.get_by_role("link", name="Midnight Orbit").click()
    expect(page.get_by_role("heading", name="Midnight Orbit")).to_be_visible()
    for image in (page.locator("main img.tt-photo"),
                  page.get_by_role("listitem").filter(has_text="Midnight Orbit — Live").locator("img.tt-thumb")):
        expect(image).to_have_attribute("src", picture)
        expect(image).to_have_js_property("complete", True)
        expect(image).not_to_have_js_property("naturalWidth", 0)
    page.unroute(re.compile(r"/v1/artists/[^/?]+$"))
    page.go_back()
    expect(page.get_by_role("heading", name="Kiki Moreno")).to_be_visible()


def card(page):
    return page.get_by_role("article")


def pass_on(page):
    """Clicks "Not for me" and waits for the next card (or the empty state)."""
    counter = page.get_by_role("status").filter(has_text=re.compile(r"cards? left"))
    before = counter.inner_text()
    card(page).get_by_role("button", name="Not for me").click()
    expect(page.get_by_role("status").filter(has_text=re.compile(r"cards? left|No more cards"))).not_to_have_text(before)


def dismiss_until_empty(page):
    for _ in range(30):
        if page.get_by_role("button", name="Refresh").is_visible():
            return
        pass_on(page)
    raise AssertionError("the explore cards never ran out")


def skip_to_orbit(page):
    """Passes on other cards (if the demo has more) until Midnight Orbit's show is on top."""
    for _ in range(30):
        expect(card(page)).to_be_visible()
        if "Midnight Orbit" in card(page).inner_text():
            return
        pass_on(page)
    raise AssertionError("no card for Midnight Orbit")


def body(new_page):
    cheap = seed_budget_shows()
    venue_clock(new_page, cheap)
    page = new_page()
    sign_up(page, f"tix{RUN}")
    tab(page, "Events")
    page.get_by_role("navigation", name="Events").get_by_role("link", name="Artists").click()

    # Search as you type; the results are links.
    page.get_by_label("Search artists").press_sequentially("kik", delay=60)
    results = page.get_by_role("list", name="Artists found")
    results.get_by_role("link", name="Kiki Moreno").click()
    expect(page.get_by_role("heading", name="Kiki Moreno")).to_be_visible()
    expect(page.get_by_role("link", name="Midnight Orbit")).to_be_visible()  # similar artists
    artist_image(page, cheap["place"]["imageURL"])
    page.get_by_role("button", name="Favourite").click()
    expect(page.get_by_role("button", name="Unfavourite")).to_have_attribute("aria-pressed", "true")

    # Explore: a card for Midnight Orbit's show, similar to Kiki Moreno.
    page.get_by_role("navigation", name="Events").get_by_role("link", name="Explore").click()
    expect(page.get_by_role("heading", name="Explore")).to_be_visible()
    skip_to_orbit(page)
    expect(card(page)).to_contain_text("Similar to Kiki Moreno")
    dismiss_until_empty(page)
    expect(page.get_by_role("status").filter(has_text="No more cards")).to_be_visible()
    page.get_by_role("button", name="Refresh").click()
    skip_to_orbit(page)
    card(page).get_by_role("button", name="Interested").click()
    expect(page.get_by_role("status").filter(has_text="Following")).to_be_visible()

    # Favourites: the artist, and the followed show; its detail says it is followed.
    page.get_by_role("navigation", name="Events").get_by_role("link", name="Favourites").click()
    artists = page.get_by_role("region", name="Favourite artists")
    expect(artists.get_by_role("link", name="Kiki Moreno")).to_be_visible()
    followed = page.get_by_role("region", name="Events I follow").get_by_role("listitem").filter(has_text="Midnight Orbit")
    followed.get_by_role("link").first.click()
    follow = page.get_by_role("button", name="Follow")
    expect(follow).to_have_attribute("aria-pressed", "true")
    expect(page.get_by_text("You follow this event.")).to_be_visible()
    expect(page.get_by_role("link", name="Open in Google Maps")).to_have_attribute("href", re.compile(r"^https://www\.google\.com/maps/"))
    expect(page.get_by_role("link", name="Open in Apple Maps")).to_be_visible()
    if call("GET", "/v1/config").get("mapTileURL"):  # the venue on a map, its pin a link to directions
        expect(expect_map(page, re.compile(r"^Map of ")).get_by_role("link", name=re.compile(r"^Directions to "))).to_be_visible()
    # Undo and redo the follow; the server keeps the state.
    follow.click()
    expect(follow).to_have_attribute("aria-pressed", "false")
    page.reload()
    expect(page.get_by_role("button", name="Follow")).to_have_attribute("aria-pressed", "false")
    page.get_by_role("button", name="Follow").click()
    expect(page.get_by_role("button", name="Follow")).to_have_attribute("aria-pressed", "true")

    # The events list's budget filter narrows the results.
    tab(page, "Events")
    filters = page.get_by_role("form", name="Filters")
    filters.get_by_label("When").select_option("week")
    filters.get_by_label("Search").fill(RUN)
    filters.get_by_role("button", name="Show").click()
    expect(page.get_by_role("heading", name="Next 7 days")).to_be_visible()
    expect(page.get_by_role("link", name=CHEAP)).to_be_visible()
    expect(page.get_by_role("link", name=PRICEY)).to_be_visible()
    filters = page.get_by_role("form", name="Filters")
    filters.get_by_label("Budget (max price)").fill("50")
    filters.get_by_role("button", name="Show").click()
    expect(page.get_by_label("Budget (max price)")).to_have_value("50")
    expect(page.get_by_label("Search")).to_have_value(RUN)
    expect(page.get_by_role("link", name=CHEAP)).to_be_visible()
    expect(page.get_by_role("link", name=PRICEY)).to_have_count(0)


scenario("scenario_4_tickets", body)
