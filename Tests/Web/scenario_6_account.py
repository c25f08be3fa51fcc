#!/usr/bin/env python3
"""Scenario 6, the account screens: the live inbox badge (and the badge on the tab of the app the
notice belongs to, until it is opened or all is marked read, across reloads), the inbox, settings, moderation and admin.

A and B sign up; A asks B to be friends (through the API, from A's page) and B's header badge
turns 1 without a reload, and so does the badge on B's Sports tab, which a reload keeps (from the
unread notifications); B reads the request in the inbox (its kind in words, never doubled) and
marks all read (both badges gone, after a reload too); B accepts through the API and A's Sports
badge, cleared by opening that tab, stays clear after a reload; then B renames themself in settings (genders and age groups in words,
never the API's values) and the home screen greets with the new name, then sets a profile
photo (uploaded, shown from our own media under the page's CSP) and removes it. As `admin`: a clip is
flagged until hidden (seeded through the API), the moderation queue lists it and "Restore" takes
it off the queue; a promotion for a seeded Berlin venue and an advertisement are created in the
admin screen and listed.
"""
import re
import subprocess
import tempfile
import time
import uuid

from playwright.sync_api import expect

from common import DEMO_PASSWORD, admin_token, call, make_clip, scenario, sign_in, sign_up, upload

UID = uuid.uuid4().hex[:8]


def page_token(page):
    """The access token the web app keeps in localStorage."""
    return page.evaluate("() => JSON.parse(localStorage.getItem('tonight.tokens')).accessToken")


def page_call(page, method, path):
    """An API request with the page's own tokens; returns its status."""
    return page.evaluate("""async ([method, path]) => {
        const tokens = JSON.parse(localStorage.getItem("tonight.tokens"));
        return (await fetch(path, { method, headers: { Authorization: `Bearer ${tokens.accessToken}` } })).status;
    }""", [method, path])


def page_user_id(page):
    """The id of the member signed in on the page."""
    return page.evaluate("() => import('/app/api.js').then((api) => api.session.user.id)")


def wait_until(check, what, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if check():
            return
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def open_me(page):
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Me", exact=True).click()


def friend_request_and_inbox(page_a, page_b, name_a, name_b):
    # B's live socket must be up for the push (the badge also resyncs on every (re)connect).
    page_b.wait_for_function("() => import('/app/live.js').then((live) => live.isOpen())")
    badge = page_b.get_by_role("navigation", name="Main").get_by_role("link", name="Inbox").locator(".badge")
    expect(badge).to_be_hidden()
    status = page_a.evaluate("""async (username) => {
        const tokens = JSON.parse(localStorage.getItem("tonight.tokens"));
        const headers = { Authorization: `Bearer ${tokens.accessToken}`, "Content-Type": "application/json" };
        const user = await (await fetch(`/v1/users/${username}`, { headers })).json();
        const answer = await fetch("/v1/me/friend-requests", { method: "POST", headers, body: JSON.stringify({ userId: user.id }) });
        return answer.status;
    }""", name_b)
    assert status == 200, status
    expect(badge).to_have_text("1")
    expect(page_b.get_by_label("1 unread")).to_be_visible()
    # The tab of the app the notice leads to (a friend request: Playmate's friends) has a badge too.
    apps = page_b.get_by_role("navigation", name="Apps")
    sports = apps.get_by_role("link", name="Sports")
    expect(sports.locator(".badge")).to_have_text("1")
    expect(sports.get_by_label("1 new notification")).to_be_attached()
    for other in ("Venues", "Clips", "Events", "People"):
        expect(apps.get_by_role("link", name=other).locator(".badge")).to_have_text("")

    # A reload keeps the tab's badge: it comes back from the unread notifications.
    page_b.reload()
    expect(page_b.get_by_role("heading", name="Hi,")).to_be_visible()
    expect(badge).to_have_text("1")
    expect(sports.locator(".badge")).to_have_text("1")
    expect(apps.get_by_role("link", name="Clips").locator(".badge")).to_have_text("")

    page_b.get_by_role("link", name="Inbox").click()
    expect(page_b.get_by_role("heading", name="Inbox")).to_be_visible()
    note = page_b.get_by_role("listitem").filter(has_text=f"{name_a} wants to be friends")
    expect(note.get_by_role("img", name="Unread")).to_be_visible()
    expect(note.get_by_role("link")).to_have_attribute("href", "#/friends")
    expect(note).to_contain_text(re.compile(r"Friend request · (just now|\d+ minutes? ago)"))
    assert not re.search(r"New New|friendRequest", note.inner_text()), note.inner_text()
    page_b.get_by_role("button", name="Mark all read").click()
    expect(badge).to_be_hidden()
    expect(note.get_by_role("img", name="Unread")).to_have_count(0)
    # "Mark all read" clears the tabs' badges of notifications too, and a reload does not bring them back.
    expect(sports.locator(".badge")).to_have_text("")
    page_b.reload()
    expect(page_b.get_by_role("heading", name="Inbox")).to_be_visible()
    expect(sports.locator(".badge")).to_have_text("")

    # B accepts: A's Sports tab has a badge; opening that tab clears it, and a reload keeps it clear
    # (the notice, still unread, came before A last opened the tab).
    a_apps = page_a.get_by_role("navigation", name="Apps")
    a_sports = a_apps.get_by_role("link", name="Sports")
    page_a.wait_for_function("() => import('/app/live.js').then((live) => live.isOpen())")
    assert page_call(page_b, "POST", f"/v1/me/friend-requests/{page_user_id(page_a)}/accept") == 200
    expect(a_sports.locator(".badge")).to_have_text("1")
    a_sports.click()
    expect(page_a.get_by_role("heading", name="Sports sessions")).to_be_visible()
    expect(a_sports.locator(".badge")).to_have_text("")
    page_a.reload()
    expect(page_a.get_by_role("heading", name="Sports sessions")).to_be_visible()
    expect(page_a.get_by_role("navigation", name="Main").get_by_role("link", name="Inbox").locator(".badge")).to_have_text("1")
    expect(a_sports.locator(".badge")).to_have_text("")
    page_a.get_by_role("link", name="Tonight").click()
    expect(page_a.get_by_role("heading", name="Hi,")).to_be_visible()
    expect(a_sports.locator(".badge")).to_have_text("")


def rename(page_b, display):
    open_me(page_b)
    expect(page_b.get_by_role("heading", name="Settings")).to_be_visible()
    # Every choice in words: "Woman", "Under 18", never "female" or "under18".
    expect(page_b.get_by_role("form", name="Profile").get_by_label("Gender").locator("option", has_text="Woman")).to_have_count(1)
    preferences = page_b.get_by_role("form", name="Preferences")
    expect(preferences.get_by_label("Under 18")).to_be_visible()
    expect(preferences.get_by_label("Women")).to_be_visible()
    shown = page_b.locator("main").evaluate("main => main.textContent")
    assert not re.search(r"female|nonbinary|under18|friendRequest|apns|server|configur", shown, re.I), shown
    profile = page_b.get_by_role("form", name="Profile")
    profile.get_by_label("Display name").fill(display)
    profile.get_by_role("button", name="Save profile").click()
    expect(page_b.get_by_role("status")).to_have_text("Profile saved")
    page_b.reload()
    expect(page_b.get_by_role("form", name="Profile").get_by_label("Display name")).to_have_value(display)
    page_b.get_by_role("link", name="Tonight").click()
    expect(page_b.get_by_role("heading", name=f"Hi, {display}")).to_be_visible()


def photo(page_b):
    """B picks a JPEG in settings: it is uploaded, squared by the server and shown; then removed."""
    path = tempfile.mktemp(suffix=".jpg")
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=800x600", "-frames:v", "1", path],
                   check=True)
    open_me(page_b)
    form = page_b.get_by_role("form", name="Photo")
    form.get_by_label("Choose a photo").set_input_files(path)
    expect(page_b.get_by_role("status")).to_have_text("Photo saved")
    shown = form.get_by_role("img", name="Your photo")
    expect(shown).to_have_attribute("src", re.compile(r"^/v1/media/avatars/"))
    # Loaded, not blocked by the CSP: a decoded 512×512 picture.
    wait_until(lambda: shown.evaluate("img => img.complete && img.naturalWidth") == 512, "the photo to load")
    form.get_by_role("button", name="Remove photo").click()
    expect(page_b.get_by_role("status")).to_have_text("Photo removed")
    expect(form.get_by_text("No photo yet")).to_be_visible()


def another_member(i):
    """A token of one more distinct member: a demo user when there is one (sign-ups are rate limited)."""
    demo = ["mia", "leo", "ana", "ben", "sam", "zoe"]
    if i < len(demo):
        try:
            return call("POST", "/v1/auth/login", {"username": demo[i], "password": DEMO_PASSWORD})["accessToken"]
        except AssertionError:
            pass
    name = f"flag{UID}{i}"
    return call("POST", "/v1/auth/signup", {
        "username": name, "email": f"{name}@example.com", "password": "a long enough passphrase"})["accessToken"]


def seed_hidden_clip(admin_token, author_token, flagger_tokens, place_id, caption):
    """Uploads a clip and flags it by distinct users until it is hidden pending review."""
    post = upload(author_token, make_clip(), {"placeId": place_id, "caption": caption})
    wait_until(lambda: call("GET", f"/v1/posts/{post['id']}", token=author_token)["status"] == "ready", "the clip")
    flaggers = list(flagger_tokens)
    for i in range(8):
        if call("GET", f"/v1/posts/{post['id']}", token=author_token).get("hidden"):
            return post
        if not flaggers:
            flaggers.append(another_member(i))
        call("PUT", f"/v1/posts/{post['id']}/flag", token=flaggers.pop(0))
    raise AssertionError("the clip never got hidden")


def moderation(page, caption):
    open_me(page)
    page.get_by_role("link", name="Moderation queue").click()
    expect(page.get_by_role("heading", name="Moderation")).to_be_visible()
    flagged = page.get_by_role("list", name="Flagged posts").get_by_role("listitem").filter(has_text=caption)
    expect(flagged).to_have_count(1)
    flagged.get_by_role("button", name="Restore").click()
    expect(flagged).to_have_count(0)
    page.reload()
    expect(page.get_by_role("heading", name="Moderation")).to_be_visible()
    expect(page.get_by_role("list", name="Flagged posts").get_by_role("listitem").filter(has_text=caption)).to_have_count(0)


def administration(page, venue):
    open_me(page)
    page.get_by_role("link", name="Promotions and ads").click()
    expect(page.get_by_role("heading", name="Promotions and ads")).to_be_visible()
    form = page.get_by_role("form", name="Promotion")
    form.get_by_label("Find venue").fill(venue)
    expect(form.get_by_label("Venue", exact=True)).to_contain_text(venue)
    form.get_by_label("Venue", exact=True).select_option(label=venue)
    form.get_by_label("Tier").fill("3")
    tagline = f"Two for one {UID}"
    form.get_by_label("Tagline").fill(tagline)
    form.get_by_role("button", name="Save promotion").click()
    promoted = page.get_by_role("list", name="Promotions").get_by_role("listitem").filter(has_text=venue)
    expect(promoted).to_contain_text(tagline)
    expect(promoted).to_contain_text("Tier 3")

    ad = page.get_by_role("form", name="Advertisement")
    expect(ad.get_by_label("Area (region)")).to_have_value("State of Berlin, DE")
    url = f"https://example.com/ads/{UID}.html"
    ad.get_by_label("Ad page or image URL (https)").fill(url)
    ad.get_by_label("Feeds, one per line").fill(f"v:{venue}")
    ad.get_by_label("Pages").fill("1, 3")
    ad.get_by_label("Style").select_option(label="Overlay on a clip")
    ad.get_by_role("button", name="Create ad").click()
    listed = page.get_by_role("list", name="Advertisements").get_by_role("listitem").filter(has_text=f"v:{venue}")
    expect(listed).to_contain_text("overlay")
    expect(listed.get_by_role("link", name="Open the ad")).to_have_attribute("href", url)


def body(new_page):
    name_a, name_b = f"acc{UID}a", f"acc{UID}b"
    page_a, page_b = new_page(), new_page()
    sign_up(page_a, name_a)
    sign_up(page_b, name_b)
    friend_request_and_inbox(page_a, page_b, name_a, name_b)
    rename(page_b, f"Bea {UID}")
    photo(page_b)

    admin = new_page(width=1024, height=900)
    sign_in(admin, "admin")
    token = admin_token()
    venue = f"Bar {UID}"
    place = call("POST", "/v1/places", {"name": venue, "category": "bar",
                                         "location": {"lat": 52.5205, "lon": 13.4095}}, token)
    caption = f"flag me {UID}"
    seed_hidden_clip(admin_token, page_token(page_a), [page_token(page_b), token], place["id"], caption)
    moderation(admin, caption)
    administration(admin, venue)


scenario("6_account", body)
