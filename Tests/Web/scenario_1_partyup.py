#!/usr/bin/env python3
"""Scenario 1, PartyUP: a guest browses the city's reel (Back from a venue comes back to the same
clip) and a venue's clips, is asked to sign up to vote, signs up in that dialog (staying at the
venue), posts a clip to the venue over a network that drops (the tab is closed mid-upload; the same
file chosen again resumes at the server's offset), sees it processed and ready, votes in the venue
feed; a second user up-votes the new clip.

Set-up through the API as `admin`: a promoted Berlin venue (unique name) with one ready clip, whose
poster its tile on the hub shows; the promotion is ended afterwards so repeated runs do not crowd the hub.
"""
import re
import subprocess
import tempfile
import uuid

from playwright.sync_api import expect

from common import admin_token, call, expect_map, fill_sign_up, make_clip, scenario, sign_up, upload, wait_ready

RUN = uuid.uuid4().hex[:8]
VENUE = f"Scenario Club {RUN}"
TAGLINE = f"Two-for-one tonight {RUN}"
ADMIN_CAPTION = f"Packed dancefloor {RUN}"
MY_CAPTION = f"Just arrived {RUN}"
PROCESSING = 120_000  # ffmpeg on a loaded 2-core machine can take a while



CHUNK = 2 * 1024 * 1024  # Web/tus.js sends 2 MB at a time


def noisy_clip():
    """A 3-second clip of about 5 MB (noise does not compress): three chunks for the web app."""
    path = tempfile.mktemp(suffix=".mp4")
    subprocess.run(
        ["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc=duration=3:size=360x640:rate=25", "-f", "lavfi",
         "-i", "sine=frequency=440:duration=3", "-vf", "noise=alls=60:allf=t", "-c:v", "libx264", "-preset",
         "ultrafast", "-b:v", "10M", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", path],
        check=True)
    return path

def body(new_page):
    admin = admin_token()
    place = call("POST", "/v1/places", {"name": VENUE, "category": "nightclub",
                                        "location": {"lat": 52.5201, "lon": 13.4052}}, admin)
    place_id = place["id"]
    call("PUT", f"/v1/places/{place_id}/promotion", {"tier": 100, "tagline": TAGLINE}, admin)
    try:
        post = upload(admin, make_clip(), {"placeId": place_id, "caption": ADMIN_CAPTION, "tags": "scenario"})
        poster = wait_ready(admin, post["id"])["media"]["posterUrl"]
        browse_sign_up_and_post(new_page, place_id, poster)
    finally:
        call("DELETE", f"/v1/places/{place_id}/promotion", token=admin)


def reel_back(page):
    """The city's clips are a full-screen reel: the clip on screen plays, the next one preloads, and
    after a venue link Back shows the same clip again, not the first. Pages of two clips here, so
    that the reel loads pages as it goes and Back must load them again up to that clip."""
    page.route(re.compile(r"/v1/cities/[^/]+/posts\?"),
               lambda route: route.continue_(url=route.request.url.replace("limit=10", "limit=2")))
    page.get_by_role("link", name="All clips").click()
    feed = page.get_by_role("feed", name="Clips")
    clips = feed.locator("article[data-id]")  # clips, not ads
    expect(clips.first).to_be_visible()
    assert page.evaluate("document.scrollingElement.scrollHeight <= innerHeight"), "the page scrolls around the reel"
    expect(clips.first.locator(".reel-info")).to_have_css("background-image", re.compile("gradient"))  # words on a shade
    # Down the reel to a clip at a venue, three or more screens down.
    for index in range(1, 20):
        clip = clips.nth(index)
        clip.scroll_into_view_if_needed()
        clip_id = clip.get_attribute("data-id")
        expect(page).to_have_url(re.compile(f"at={clip_id}"))
        if index >= 2 and clip.locator('a[href^="#/venue/"]').count() and clips.count() > index + 1:
            break
    expect(clips.nth(index + 1).locator("video")).to_have_attribute("preload", "auto")
    venue = clip.locator('a[href^="#/venue/"]')
    name = venue.text_content()
    venue.click()
    expect(page.get_by_role("heading", name=name)).to_be_visible()
    page.go_back()
    # The venue's own clips (the same clip among them) stay on screen until the reel is back.
    expect(page.get_by_role("heading", name=name)).to_have_count(0)
    expect(feed.locator(f'article[data-id="{clip_id}"]')).to_be_in_viewport(ratio=0.9)
    expect(clips.first).not_to_be_in_viewport()
    page.unroute(re.compile(r"/v1/cities/[^/]+/posts\?"))


def browse_sign_up_and_post(new_page, place_id, poster):
    page = new_page()
    page.goto("/#/start")
    page.get_by_role("button", name="Continue without an account").click()
    expect(page.get_by_role("heading", name="Hi, guest")).to_be_visible()

    # The hub lists the promoted venue with its tagline; its feed plays the admin's clip.
    page.get_by_role("navigation", name="Apps").get_by_role("link", name="Venues").click()
    expect(page.get_by_role("heading", name="Tonight in Berlin")).to_be_visible()
    reel_back(page)
    page.get_by_role("navigation", name="Apps").get_by_role("link", name="Venues").click()
    venue = page.get_by_role("list", name="Venues").get_by_role("link", name=VENUE)
    expect(venue).to_contain_text(TAGLINE)
    # Its tile shows the poster of its newest clip (the admin's, processed), loaded.
    tile = venue.locator("img")
    expect(tile).to_have_attribute("src", poster)
    expect(tile).to_have_js_property("complete", True)
    expect(tile).not_to_have_js_property("naturalWidth", 0)
    venue.click()
    expect(page.get_by_role("heading", name=VENUE)).to_be_visible()
    clip = page.get_by_role("article", name=ADMIN_CAPTION)
    expect(clip.locator("video")).to_be_visible()
    if call("GET", "/v1/config").get("mapTileURL"):  # the venue on a map, its pin a link to directions
        page.get_by_role("button", name="Map").click()
        pin = expect_map(page, f"Map of {VENUE}").get_by_role("link", name=f"Directions to {VENUE}")
        expect(pin).to_have_attribute("href", re.compile(r"^https://www\.google\.com/maps/"))

    # Guests may look, not vote.
    clip.get_by_role("button", name="Up").click()
    prompt = page.get_by_role("dialog", name="Sign up to continue")
    expect(prompt).to_be_visible()
    fill_sign_up(prompt.get_by_role("form", name="Sign up"), f"party{RUN}")
    expect(prompt).to_have_count(0)
    expect(page.get_by_role("heading", name=VENUE)).to_be_visible()  # still at the venue, now a member
    expect(page.get_by_role("navigation", name="Main").get_by_role("link", name="Sign out")).to_be_visible()

    # Post a clip to the venue from its feed, over a network that drops: the second chunk never
    # arrives, the tab is closed, and choosing the same file again resumes at the server's offset.
    creations, patches, cut = [], [], {"on": True}

    def network(route):
        request = route.request
        if request.method == "POST":
            creations.append(request.url)
        if request.method == "PATCH":
            patches.append(int(request.headers.get("upload-offset", "-1")))
            if patches[-1] > 0 and cut["on"]:
                return route.abort("connectionreset")
        return route.continue_()

    page.route(re.compile(r"/v1/uploads"), network)
    clip_path = noisy_clip()
    for attempt in range(2):
        page.goto(f"/#/venue/{place_id}")
        page.get_by_role("link", name="Post a clip here").click()
        form = page.get_by_role("form", name="Post a clip")
        expect(form.get_by_label("Where")).to_have_value(place_id)
        form.get_by_label("Video or photo").set_input_files(clip_path)
        form.get_by_label("Caption").fill(MY_CAPTION)
        form.get_by_label("Tags").fill("#scenario, arrival")
        form.get_by_label("Spotify link").fill("https://open.spotify.com/track/4uLU6hMCjMI75M1A2tKUQC?si=x")
        form.get_by_label("Song title").fill("Never Gonna Give You Up")
        form.get_by_role("button", name="Post").click()
        if attempt == 0:
            expect(page.get_by_role("status").filter(has_text="Connection lost")).to_be_visible(timeout=20_000)
            page.reload()  # the tab is closed mid-upload
            cut["on"] = False
    expect(page.get_by_label("Upload progress")).to_have_js_property("value", 100)
    expect(page.get_by_role("status").filter(has_text=re.compile(r"^Ready$"))).to_be_visible(timeout=PROCESSING)
    assert len(creations) == 1, f"the upload was started again: {creations}"
    assert patches.count(0) == 1, f"the upload was sent again from the start: {patches}"
    resumed = patches[patches.index(0) + 1:]
    assert resumed and resumed[0] == CHUNK and CHUNK in resumed[1:], f"not resumed at the server's offset: {patches}"
    page.get_by_role("link", name="Venue feed").click()

    # In the feed: one's own clip cannot be voted on; the admin's can.
    mine = page.get_by_role("article", name=MY_CAPTION)
    expect(mine.locator("video")).to_be_visible()
    expect(mine).to_contain_text("Never Gonna Give You Up")
    expect(mine.get_by_role("button", name="Up")).to_be_disabled()
    theirs = page.get_by_role("article", name=ADMIN_CAPTION)
    theirs.scroll_into_view_if_needed()
    up = theirs.get_by_role("button", name="Up")
    up.click()
    expect(up).to_have_text("▲ Up 1")
    expect(up).to_have_attribute("aria-pressed", "true")

    # Another member up-votes the new clip.
    other = new_page()
    sign_up(other, f"fan{RUN}")
    other.goto(f"/#/venue/{place_id}")
    new_up = other.get_by_role("article", name=MY_CAPTION).get_by_role("button", name="Up")
    new_up.click()
    expect(new_up).to_have_text("▲ Up 1")


scenario("scenario_1_partyup", body)
