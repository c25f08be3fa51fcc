#!/usr/bin/env python3
"""Scenario 10, the mailed links: confirming an address, a forgotten password, changing the address.

A new member signs up (the sign-up mails a link to confirm the address): settings says "Not
confirmed yet" until the mailed link is opened in the page, then "Confirmed". Signed out, "Forgot
password?" on the sign-in form mails a reset link (the screen says the same whatever the server
knows); the link sets a new password, after which the old one is refused and the new one signs in,
and the same link again is "already used". In settings the address is changed to a second one: it
waits for its link (pending) until the link mailed to the new address is opened, then settings
shows the new address, confirmed.

The server mails over SMTP to a sink that keeps each message as `$TONIGHT_MAIL_SINK_DIR/<seq>.json`
(`mail_from`, `rcpt_tos`, `data`: the raw message); without that variable the scenario is skipped.
"""
import email
import email.policy
import json
import os
import re
import sys
import time
import uuid

from playwright.sync_api import expect

from common import scenario, sign_up, open_form

SINK = os.environ.get("TONIGHT_MAIL_SINK_DIR")
UID = uuid.uuid4().hex[:8]
LINK = re.compile(r"#/(reset-password|verify-email)/([A-Za-z0-9_-]+)")
taken = set()  # the sink's files already read by a step


def wait_for_mail(to, kind, seconds=30):
    """The first message not taken yet that was sent to `to` with a `kind` link ("reset-password" or
    "verify-email") in its text part: (its text, the link's "#/kind/token"). Polls the sink."""
    deadline = time.time() + seconds
    while True:
        # <seq>.json only: not the sink's files being written (.tmp-…) nor its refusals.json.
        for name in sorted((n for n in os.listdir(SINK) if re.fullmatch(r"\d+\.json", n)), key=lambda n: int(n[:-5])):
            if name in taken:
                continue
            try:
                with open(os.path.join(SINK, name)) as file:
                    stored = json.load(file)
            except (OSError, ValueError):
                continue  # unreadable for now: tried again on the next poll
            if to.lower() not in [address.strip("<> ").lower() for address in stored["rcpt_tos"]]:
                continue
            message = email.message_from_string(stored["data"], policy=email.policy.default)
            text = message.get_body(preferencelist=("plain",)).get_content()
            found = LINK.search(text)
            if found and found.group(1) == kind:
                taken.add(name)
                return text, found.group(0)
        if time.time() > deadline:
            raise AssertionError(f"no {kind} mail to {to} within {seconds} s")
        time.sleep(0.5)


def email_settings(page):
    """Opens settings from the header and returns its Email section."""
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Me", exact=True).click()
    expect(page.get_by_role("heading", name="Settings")).to_be_visible()
    return page.get_by_role("region", name="Email", exact=True)


def confirm_address(page, address):
    section = email_settings(page)
    expect(section).to_contain_text(address)
    expect(section.get_by_text("Not confirmed yet")).to_be_visible()
    expect(section.get_by_role("button", name="Send the link again")).to_be_visible()
    _, link = wait_for_mail(address, "verify-email")
    page.goto("/" + link)
    expect(page.get_by_text(f"{address} is confirmed.")).to_be_visible()
    section = email_settings(page)
    expect(section.get_by_text("Confirmed", exact=True)).to_be_visible()
    expect(section.get_by_role("button", name="Send the link again")).to_have_count(0)


def new_password(page, name, address, old, new):
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Sign out").click()
    open_form(page, "Sign in")
    page.get_by_role("form", name="Sign in").get_by_role("link", name="Forgot password?").click()
    expect(page.get_by_role("heading", name="Forgot your password?")).to_be_visible()
    form = page.get_by_role("form", name="Forgot password")
    form.get_by_label("Email").fill(address)
    form.get_by_role("button", name="Send me a link").click()
    expect(page.get_by_text(f"If an account uses {address}, we've sent it a link to choose a new password. "
                            "It works for 30 minutes.")).to_be_visible()
    _, link = wait_for_mail(address, "reset-password")
    page.goto("/" + link)
    form = page.get_by_role("form", name="Reset password")
    form.get_by_label("New password").fill(new)
    form.get_by_role("button", name="Save new password").click()
    expect(page.get_by_text("Your password is changed. Sign in with it.")).to_be_visible()
    # The old password is refused, the new one signs in (the sign-in form is on the same screen).
    login = page.get_by_role("form", name="Sign in")
    login.get_by_label("Username or email").fill(name)
    login.get_by_label("Password").fill(old)
    login.get_by_role("button", name="Sign in").click()
    expect(login.get_by_role("alert")).to_be_visible()
    login.get_by_label("Password").fill(new)
    login.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name=f"Hi, {name}")).to_be_visible()
    # The link worked once.
    page.goto("/" + link)
    form = page.get_by_role("form", name="Reset password")
    form.get_by_label("New password").fill(f"{new} again")
    form.get_by_role("button", name="Save new password").click()
    expect(page.get_by_role("alert")).to_have_text("This link has already been used or replaced by a newer one.")
    expect(page.get_by_role("link", name="Ask for a new link")).to_have_attribute("href", "#/forgot-password")


def change_address(page, address, password):
    section = email_settings(page)
    form = section.get_by_role("form", name="Change email")
    form.get_by_label("New email address").fill(address)
    form.get_by_label("Current password").fill(password)
    form.get_by_role("button", name="Change email").click()
    expect(section.get_by_text(f"Open the link we sent to {address} to finish the change.")).to_be_visible()
    page.reload()
    section = page.get_by_role("region", name="Email", exact=True)
    expect(section.get_by_text(f"Waiting for you to open the link we sent to {address}.")).to_be_visible()
    _, link = wait_for_mail(address, "verify-email")
    page.goto("/" + link)
    expect(page.get_by_text(f"{address} is confirmed.")).to_be_visible()
    section = email_settings(page)
    expect(section.locator(".email-address")).to_have_text(address)
    expect(section.get_by_text("Confirmed", exact=True)).to_be_visible()
    expect(section.get_by_text("Waiting for you")).to_have_count(0)


def body(new_page):
    page = new_page()
    name = f"mail{UID}"
    old, new = "a long enough passphrase", "another long enough passphrase"
    sign_up(page, name, old)  # as name@example.com
    confirm_address(page, f"{name}@example.com")
    new_password(page, name, f"{name}@example.com", old, new)
    change_address(page, f"{name}.new@example.com", new)


if not SINK:
    print("web 10_mail: skipped (TONIGHT_MAIL_SINK_DIR is not set)")
    sys.exit(0)
scenario("10_mail", body)
