#!/usr/bin/env python3
"""Smoke test of the web app in Debian's Chromium through Playwright (never a downloaded browser).

    Tests/Web/smoke.py http://127.0.0.1:PORT SCREENSHOT_DIR
"""
import sys
from playwright.sync_api import sync_playwright, expect

url, shots = sys.argv[1], sys.argv[2]
with sync_playwright() as p:
    browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
    page = browser.new_page(viewport={"width": 360, "height": 740})
    try:
        page.goto(url + "/")
        expect(page.get_by_role("heading", name="Where do we go tonight?")).to_be_visible()
        form = page.get_by_role("form", name="Sign up")
        form.get_by_label("Username").fill("webalice")
        form.get_by_label("Email").fill("webalice@example.com")
        form.get_by_label("Password").fill("password123")
        form.get_by_role("button", name="Sign up").click()
        expect(form.get_by_role("alert")).to_contain_text("password")
        form.get_by_label("Password").fill("a long enough passphrase")
        form.get_by_role("button", name="Sign up").click()
        expect(page.get_by_role("heading", name="Hi, webalice")).to_be_visible()
        page.get_by_role("navigation", name="Apps").get_by_role("link", name="Events").click()
        expect(page.get_by_role("heading", name="Tonight")).to_be_visible()
        page.get_by_label("When").select_option("weekend")
        page.get_by_role("button", name="Show").click()
        expect(page.get_by_role("heading", name="This weekend")).to_be_visible()
        page.screenshot(path=f"{shots}/smoke.png")
    except Exception:
        page.screenshot(path=f"{shots}/smoke-failure.png")
        raise
    finally:
        browser.close()
print("web smoke: passed")
