#!/usr/bin/env python3
"""Smoke test: the start screen's errors, sign-up, the events list's filters, and signing out."""
import uuid

from playwright.sync_api import expect

from common import open_form, scenario, tab


def body(new_page):
    name = "web" + uuid.uuid4().hex[:8]
    page = new_page()
    page.goto("/")
    expect(page.get_by_role("heading", name="Where do we go tonight?")).to_be_visible()
    open_form(page, "Sign up")
    form = page.get_by_role("form", name="Sign up")
    form.get_by_label("Username").fill(name)
    form.get_by_label("Email").fill(f"{name}@example.com")
    form.get_by_label("Password").fill("password123")
    form.get_by_role("button", name="Sign up").click()
    expect(form.get_by_role("alert")).to_contain_text("password")
    form.get_by_label("Password").fill("a long enough passphrase")
    form.get_by_role("button", name="Sign up").click()
    expect(page.get_by_role("heading", name=f"Hi, {name}")).to_be_visible()
    tab(page, "Events")
    expect(page.get_by_role("heading", name="Tonight")).to_be_visible()
    page.get_by_label("When").select_option("weekend")
    page.get_by_role("button", name="Show").click()
    expect(page.get_by_role("heading", name="This weekend")).to_be_visible()
    # Signing out from the header ends the login on the server, not only in this tab.
    refresh = page.evaluate("() => JSON.parse(localStorage.getItem('tonight.tokens')).refreshToken")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Sign out").click()
    expect(page.get_by_role("heading", name="Where do we go tonight?")).to_be_visible()
    answer = page.request.post("/v1/auth/refresh", data={"refreshToken": refresh})
    assert answer.status == 401, f"the old refresh token still works after signing out ({answer.status})"


scenario("smoke", body)
