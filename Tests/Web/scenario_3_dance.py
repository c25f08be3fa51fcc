#!/usr/bin/env python3
"""Scenario 3, dance clips: A posts a clip with a song and tags; B finds A, follows, sees the clip
in the following feed (a reel, whose caption opens the clip), likes, comments, bookmarks, uses
tutorial mode, and opens the tag feed as a reel and as a grid. Both have profile photos: A's shows
on A's profile, B's beside B's comment."""
import os
import re
import time

from playwright.sync_api import expect

from common import call, make_clip, make_photo, scenario, sign_up, tab

TRACK = "https://open.spotify.com/track/4uLU6hMCjMI75M1A2tKUQC"
SUFFIX = str(time.time_ns())[-9:]
A_NAME, B_NAME = f"dancea{SUFFIX}", f"danceb{SUFFIX}"
TAG = f"move{SUFFIX}"
CAPTION = f"Cross-body lead {SUFFIX} #salsa"
USE_API = os.environ.get("DANCE_POST_VIA_API") == "1"  # only for debugging without post.js


def give_photo(page):
    """The member signed in on `page` gets a profile photo (through the API, with the page's token)."""
    token = page.evaluate("JSON.parse(localStorage.getItem('tonight.tokens')).accessToken")
    call("POST", "/v1/me/photo", make_photo(), token, content_type="image/jpeg")


def expect_photo(image):
    """`image` shows a profile photo from our own media, loaded."""
    expect(image).to_have_attribute("src", re.compile(r"^/v1/media/avatars/"))
    expect(image).to_have_js_property("complete", True)
    expect(image).not_to_have_js_property("naturalWidth", 0)


def post_via_ui(page):
    """A posts the clip through #/post and opens it once it is ready."""
    page.goto("/#/clips")
    page.get_by_role("link", name="Post a clip").first.click()
    page.get_by_label("Video or photo").set_input_files(make_clip(seconds=4))
    page.get_by_label("Caption").fill(CAPTION)
    page.get_by_label("Tags").fill(TAG)
    # Songs come up as you type (the demo's clips have "Vivir Mi Vida"); choosing one fills the fields.
    page.get_by_label("Find a song").fill("vivir")
    page.get_by_role("list", name="Songs found").get_by_role("button", name="Vivir Mi Vida — Marc Anthony").click()
    expect(page.get_by_label("Song title")).to_have_value("Vivir Mi Vida")
    expect(page.get_by_label("Song artist")).to_have_value("Marc Anthony")
    expect(page.get_by_label("Spotify link")).to_have_value(re.compile("3QHMxEOAGD51PDlbFPHLyJ"))
    # This clip dances to another song.
    page.get_by_label("Song title").fill("Despacito")
    page.get_by_label("Song artist").fill("Luis Fonsi")
    page.get_by_label("Spotify link").fill(TRACK)
    page.get_by_label("Where").select_option(label="No venue (pregame)")
    page.get_by_role("button", name="Post", exact=True).click()
    expect(page.get_by_text("Ready", exact=True)).to_be_visible(timeout=40_000)
    page.get_by_role("link", name="Open clip").click()


def post_via_api(page):
    """Debug fallback: the same post made with A's token, then its detail is opened."""
    token = page.evaluate("JSON.parse(localStorage.getItem('tonight.tokens')).accessToken")
    city = page.request.get("/v1/geocode/reverse?lat=52.52&lon=13.405").json()["key"]
    with open(make_clip(seconds=4), "rb") as clip:
        media = {"name": "clip.mp4", "mimeType": "video/mp4", "buffer": clip.read()}
    response = page.request.post("/v1/posts", headers={"Authorization": f"Bearer {token}"}, multipart={
        "media": media, "city": city, "caption": CAPTION, "tags": TAG, "songTitle": "Despacito",
        "songArtist": "Luis Fonsi", "songUri": "spotify:track:4uLU6hMCjMI75M1A2tKUQC"})
    assert response.ok, response.text()
    page.goto(f"/#/clip/{response.json()['id']}")


def body(new_page):
    a = new_page()
    sign_up(a, A_NAME)
    (post_via_api if USE_API else post_via_ui)(a)
    expect(a.get_by_role("heading", name=f"Clip by {A_NAME}")).to_be_visible(timeout=40_000)
    expect(a.get_by_role("link", name="Open in Spotify")).to_have_attribute("href", TRACK)

    give_photo(a)

    b = new_page()
    sign_up(b, B_NAME)
    give_photo(b)
    tab(b, "Clips")
    b.get_by_role("link", name="Find people").click()
    b.get_by_label("Search people").fill(A_NAME[:-2])
    b.get_by_role("list", name="People found").get_by_role("link", name=A_NAME).click()
    expect(b.get_by_role("heading", name=A_NAME)).to_be_visible()
    expect_photo(b.get_by_role("img", name=f"Photo of {A_NAME}"))  # the profile, with A's photo
    expect(b.get_by_text("1 clip · 0 likes")).to_be_visible()
    expect(b.get_by_text("0 followers", exact=True)).to_be_visible()
    b.get_by_role("button", name="Follow", exact=True).click()
    expect(b.get_by_role("button", name="Unfollow", exact=True)).to_be_visible()
    expect(b.get_by_text("1 follower", exact=True)).to_be_visible()
    b.reload()  # the server says so, not this device
    expect(b.get_by_role("button", name="Unfollow", exact=True)).to_have_attribute("aria-pressed", "true")
    expect(b.get_by_text("1 follower", exact=True)).to_be_visible()

    tab(b, "Clips")
    expect(b.get_by_role("link", name="Following")).to_have_attribute("aria-current", "page")
    b.get_by_role("link", name=CAPTION).click()
    expect(b.get_by_role("heading", name=f"Clip by {A_NAME}")).to_be_visible()
    expect(b.get_by_role("link", name="Open in Spotify")).to_have_attribute("href", TRACK)
    expect(b.get_by_text("♪ Despacito — Luis Fonsi")).to_be_visible()

    like = b.get_by_role("button", name="Like", exact=True)
    like.click()
    expect(like).to_have_attribute("aria-pressed", "true")
    expect(b.get_by_text("1 like", exact=True)).to_be_visible()
    like.click()
    expect(b.get_by_text("0 likes", exact=True)).to_be_visible()
    like.click()
    expect(b.get_by_text("1 like", exact=True)).to_be_visible()

    comments = b.get_by_role("list", name="Comments")
    b.get_by_label("Comment", exact=True).fill("Nice moves!")
    b.get_by_role("button", name="Send").click()
    expect(comments).to_contain_text("Nice moves!")
    expect_photo(comments.get_by_role("listitem").filter(has_text="Nice moves!").locator("img.avatar"))  # B's photo
    b.get_by_label("Comment", exact=True).fill("typo, sorry")
    b.get_by_role("button", name="Send").click()
    expect(comments).to_contain_text("typo, sorry")
    b.get_by_role("button", name="Delete comment: typo, sorry").click()
    expect(comments).not_to_contain_text("typo, sorry")

    bookmark = b.get_by_role("button", name="Bookmark", exact=True)
    bookmark.click()
    expect(bookmark).to_have_attribute("aria-pressed", "true")

    # Tutorial mode: mirrored, half speed, a looped section and the beat counter.
    expect(b.get_by_label("Speed")).to_be_hidden()
    b.get_by_role("button", name="Tutorial mode").click()
    expect(b.get_by_label("Mirror")).to_be_checked()
    video = b.locator("video")
    expect(video).to_have_css("transform", "matrix(-1, 0, 0, 1, 0, 0)")
    b.get_by_label("Speed").select_option("0.5")
    assert video.evaluate("v => v.playbackRate") == 0.5
    expect(b.get_by_text("BPM")).to_be_visible()
    b.get_by_label("Loop start", exact=True).fill("0.5")
    b.get_by_label("Loop end", exact=True).fill("1.5")
    b.get_by_label("Loop section").check()
    video.evaluate("v => { v.muted = true; v.addEventListener('seeked', () => { v.dataset.seeks = +(v.dataset.seeks || 0) + 1; }); }")
    b.get_by_role("button", name="Play / pause").click()
    expect(video).to_have_attribute("data-seeks", re.compile(r"^([2-9]|\d\d+)$"), timeout=20_000)
    assert video.evaluate("v => v.currentTime") < 1.7
    expect(b.locator(".beats .now")).to_have_count(1)
    b.get_by_role("button", name="Play / pause").click()

    # The tag feed (from the detail's tag link) and the bookmarks.
    b.get_by_role("link", name=f"#{TAG}").first.click()
    expect(b.get_by_role("heading", name=f"#{TAG}")).to_be_visible()
    expect(b.get_by_role("link", name=CAPTION)).to_be_visible()
    # The feeds are reels; Grid shows the poster grid instead, and this device remembers the choice.
    expect(b.get_by_role("feed", name="Clips").get_by_role("article", name=CAPTION)).to_be_visible()
    b.get_by_role("button", name="Grid").click()
    expect(b.locator(".clips").get_by_role("link", name=CAPTION)).to_be_visible()
    expect(b.get_by_role("feed")).to_have_count(0)
    b.reload()
    expect(b.get_by_role("button", name="Grid")).to_have_attribute("aria-pressed", "true")
    b.get_by_role("button", name="Reel").click()
    expect(b.get_by_role("feed", name="Clips").get_by_role("article", name=CAPTION)).to_be_visible()
    b.goto("/#/bookmarks")
    expect(b.get_by_role("heading", name="Bookmarks")).to_be_visible()
    expect(b.get_by_role("link", name=CAPTION)).to_be_visible()

    a.reload()
    expect(a.get_by_role("list", name="Comments")).to_contain_text("Nice moves!")
    expect_photo(a.get_by_role("list", name="Comments").get_by_role("listitem").filter(has_text="Nice moves!").locator("img.avatar"))
    expect(a.get_by_text("1 like", exact=True)).to_be_visible()


scenario("3_dance", body)
