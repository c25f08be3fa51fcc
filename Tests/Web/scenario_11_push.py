#!/usr/bin/env python3
"""Scenario 11, Web Push: the service worker, the settings' "Notifications in this browser" and a push.

A signs up in the page: the service worker (/sw.js) controls the whole site; settings show the
section, and its button either turns notifications on or says in words why not (headless Chromium
usually has no push service to sign up with). Then a subscription of the local push-service
stand-in ($TONIGHT_PUSH_SERVICE_URL) is registered for A through the API; B's friend request
reaches it as an encrypted, VAPID-signed push whose payload names B and the notification's kind.
Once A removes that subscription, C's friend request pushes nothing there.
"""
import json
import os
import re
import sys
import time
import urllib.parse
import urllib.request
import uuid

from playwright.sync_api import expect

from common import call, scenario, sign_up

UID = uuid.uuid4().hex[:8]
PUSH = os.environ.get("TONIGHT_PUSH_SERVICE_URL", "").rstrip("/")


def page_tokens(page):
    """The tokens (and user) the web app keeps in localStorage."""
    return page.evaluate("() => JSON.parse(localStorage.getItem('tonight.tokens'))")


def stand_in(method, path, body=None):
    """One request to the push-service stand-in (JSON in and out)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(PUSH + path, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def messages(subscription):
    return stand_in("GET", f"/subscriptions/{subscription['endpoint'].rstrip('/').rsplit('/', 1)[-1]}/messages")


def member(name):
    """A new member through the API: (token, id)."""
    tokens = call("POST", "/v1/auth/signup", {
        "username": name, "email": f"{name}@example.com", "password": "a long enough passphrase"})
    return tokens["accessToken"], tokens["user"]["id"]


def worker_and_settings(page, url):
    scope = page.evaluate("""() => Promise.race([
        navigator.serviceWorker.ready.then((registration) => registration.scope),
        new Promise((resolve) => setTimeout(() => resolve("not ready within 10 s"), 10000))])""")
    assert scope == url.rstrip("/") + "/", scope
    page.context.grant_permissions(["notifications"])
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Me", exact=True).click()
    section = page.get_by_role("region", name="Notifications in this browser")
    expect(section.get_by_text("The kinds and quiet hours above apply here as on phones.")).to_be_visible()
    section.get_by_role("button", name="Turn on notifications in this browser").click()
    # Either it is on, or the section says why not in words (never a stack or an exception's name).
    said = section.locator("p[aria-live]")
    expect(section.get_by_text("On in this browser").or_(said.filter(has_text=re.compile(r"\w")))).to_be_visible(timeout=30_000)
    if not section.get_by_text("On in this browser").is_visible():
        text = said.inner_text()
        assert re.match(r"^[A-Z][^\n]{20,}\.$", text) and not re.search(r"\bat \S+:\d+|Error\b|DOMException|undefined", text), text
        print(f"web 11_push: the browser's own subscription failed, as said: {text}")


def push_and_stop(token, name_b):
    subscription = stand_in("POST", "/subscriptions", {})
    call("POST", "/v1/me/web-push", subscription, token)
    b_token, _ = member(name_b)
    me = call("GET", "/v1/me", token=token)
    call("POST", "/v1/me/friend-requests", {"userId": me["id"]}, b_token)

    deadline, found = time.time() + 30, None
    while found is None and time.time() < deadline:
        for message in messages(subscription):
            payload = json.loads(message["payload"]) if not message.get("error") and message.get("payload") else {}
            if name_b in payload.get("body", "") and payload.get("notification", {}).get("kind") == "friendRequest":
                found = message
        time.sleep(0.5)
    assert found, f"no push for B's friend request within 30 s: {messages(subscription)}"
    assert int(found["ttl"]) > 0 and (found.get("vapid") or {}).get("sub"), found
    payload = json.loads(found["payload"])
    assert payload["title"] == "Tonight" and payload["tag"] == payload["notification"]["id"], payload

    call("DELETE", f"/v1/me/web-push?endpoint={urllib.parse.quote(subscription['endpoint'], safe='')}", token=token)
    before = len(messages(subscription))
    c_token, _ = member(f"push{UID}c")
    call("POST", "/v1/me/friend-requests", {"userId": me["id"]}, c_token)
    # C's request is in A's inbox (so the job that would push it has run or is due), then nothing arrives.
    inbox = call("GET", "/v1/notifications?limit=5", token=token)["items"]
    assert any(f"push{UID}c" in n["text"] for n in inbox), inbox
    time.sleep(5)
    after = messages(subscription)
    assert len(after) == before, f"pushed after the subscription was removed: {after[before:]}"


def body(new_page):
    page = new_page()
    name_a, name_b = f"push{UID}a", f"push{UID}b"
    sign_up(page, name_a)
    worker_and_settings(page, sys.argv[1])
    push_and_stop(page_tokens(page)["accessToken"], name_b)


if not PUSH:
    print("web 11_push: skipped (TONIGHT_PUSH_SERVICE_URL is not set)")
else:
    scenario("11_push", body)
