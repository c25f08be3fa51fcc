"""Shared set-up for the browser scenarios.

Debian's Chromium through Playwright (never a downloaded browser), a 360 px phone viewport,
geolocation granted at the demo city's centre, fake camera and microphone, a screenshot of every
page's last screen (and of every page on failure), and any JavaScript error fails the scenario.

A scenario file is run as `python Tests/Web/scenario_X.py BASE_URL SCREENSHOT_DIR` against a
server started with `tonight serve --demo` on a fresh database, and calls `scenario(name, body)`.
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid

from playwright.sync_api import expect, sync_playwright

BERLIN = {"latitude": 52.5200, "longitude": 13.4050}
DEMO_PASSWORD = "tonight-demo"


def scenario(name, body):
    """Runs `body(new_page)`; `new_page()` opens a page in a fresh browser context (own storage),
    with the position at the demo city granted unless `located=False`, on the system's clock unless
    `zone` names another time zone."""
    url, shots = sys.argv[1], sys.argv[2]
    errors = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--no-sandbox", "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream"],
        )
        pages = []

        def new_page(width=360, height=740, located=True, zone=None):
            context = browser.new_context(
                base_url=url, viewport={"width": width, "height": height}, timezone_id=zone,
                geolocation=BERLIN if located else None,
                permissions=["geolocation", "camera", "microphone"] if located else ["camera", "microphone"],
            )
            context.set_default_timeout(10_000)
            page = context.new_page()
            page.on("pageerror", lambda error: errors.append(f"page {len(pages)}: {error}"))
            pages.append(page)
            return page

        try:
            body(new_page)
            if errors:
                raise AssertionError("JavaScript errors: " + "; ".join(errors))
            for i, page in enumerate(pages):
                page.screenshot(path=f"{shots}/{name}-{i + 1}.png", full_page=True)
        except Exception:
            for i, page in enumerate(pages):
                try:
                    page.screenshot(path=f"{shots}/{name}-failure-{i + 1}.png", full_page=True)
                except Exception:
                    pass
            raise
        finally:
            browser.close()
    print(f"web {name}: passed")


def open_form(page, name):
    """Opens the start screen's "Sign up" or "Sign in" form from its button."""
    form = page.get_by_role("form", name=name)
    expect(page.locator("summary", has_text=name)).to_be_visible()
    # A render still finishing (a cold server answering the start screen's list late) can replace
    # the opened box with a closed one: open it again then.
    for _ in range(3):
        if not form.is_visible():
            page.locator("summary", has_text=name).click()
        try:
            expect(form).to_be_visible(timeout=3000)
            return
        except AssertionError:
            pass
    expect(form).to_be_visible()


def fill_sign_up(form, username, password="a long enough passphrase"):
    """Fills a "Sign up" form (the start screen's or the sign-up dialog's) and sends it."""
    form.get_by_label("Username").fill(username)
    form.get_by_label("Email").fill(f"{username}@example.com")
    form.get_by_label("Password").fill(password)
    form.get_by_role("button", name="Sign up").click()


def sign_up(page, username, password="a long enough passphrase"):
    """Signs up through the start screen and waits for the home screen."""
    page.goto("/#/start?next=%23%2F")  # then home, wherever the page was
    open_form(page, "Sign up")
    fill_sign_up(page.get_by_role("form", name="Sign up"), username, password)
    expect(page.get_by_role("heading", name=f"Hi, {username}")).to_be_visible()


def sign_in(page, username, password=DEMO_PASSWORD):
    """Signs in through the start screen (demo accounts use DEMO_PASSWORD)."""
    page.goto("/#/start?next=%23%2F")  # then home, wherever the page was
    open_form(page, "Sign in")
    form = page.get_by_role("form", name="Sign in")
    form.get_by_label("Username or email").fill(username)
    form.get_by_label("Password").fill(password)
    form.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Hi,")).to_be_visible()


def tab(page, label):
    """Opens one of the five apps from the tab bar."""
    page.get_by_role("navigation", name="Apps").get_by_role("link", name=label).click()


def expect_map(page, name):
    """The Leaflet map named `name` (a group) once every tile in it has loaded from the tile server."""
    box = page.get_by_role("group", name=name)
    expect(box.locator("img.leaflet-tile-loaded").first).to_be_visible()
    box.locator("img.leaflet-tile").evaluate_all("images => Promise.all(images.map(i => i.decode()))")  # throws unless all loaded
    return box


AXE_RUN = """async () => {
  // The WCAG 2.0 and 2.1 A and AA rules (axe-core refuses a tag it has no rule of: 3.1.1 has no wcag21a).
  const tags = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"].filter((tag) => axe.getRules([tag]).length);
  const result = await axe.run(document, { runOnly: { type: "tag", values: tags } });
  // axe-core 3.1.1 takes autocomplete="off" for a mistake on any field but a text one, which 3.1.2
  // fixed (dequelabs/axe-core#1109): the search fields turn the browser's own suggestions off.
  const offIsFine = (v, n) => v.id === "autocomplete-valid" && /autocomplete="off"/.test(n.html);
  return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => ({ ...v, nodes: v.nodes.filter((n) => !offIsFine(v, n)) })).filter((v) => v.nodes.length)
    .map((v) => `${v.id} (${v.impact}, ${v.help}): ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")}`);
}"""


def axe_violations(page):
    """The page's serious and critical WCAG 2.1 A/AA violations by axe-core, as "rule (impact, help):
    its first three elements". The axe-core is the one PyPI's axe-selenium-python ships (scripts/test
    installs it): only its axe.min.js is used, put into the page through DevTools (so the page's
    Content-Security-Policy allows it), without Selenium."""
    if not page.evaluate("() => typeof axe === 'object'"):
        package = importlib.util.find_spec("axe_selenium_python").submodule_search_locations[0]
        with open(os.path.join(package, "node_modules", "axe-core", "axe.min.js")) as file:
            page.evaluate(file.read())
    return page.evaluate(AXE_RUN)


def make_clip(seconds=2, width=360, height=640):
    """A real H.264/AAC MP4 made by ffmpeg (colour bars and a tone); returns its path."""
    path = tempfile.mktemp(suffix=".mp4")
    subprocess.run(
        ["ffmpeg", "-v", "error", "-f", "lavfi", "-i", f"testsrc=duration={seconds}:size={width}x{height}:rate=25",
         "-f", "lavfi", "-i", f"sine=frequency=440:duration={seconds}", "-c:v", "libx264", "-pix_fmt", "yuv420p",
         "-c:a", "aac", "-shortest", path],
        check=True,
    )
    return path


def make_photo(size=256):
    """A small square JPEG made by ffmpeg (a test pattern), as bytes: for POST /v1/me/photo."""
    path = tempfile.mktemp(suffix=".jpg")
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", f"testsrc=size={size}x{size}", "-frames:v", "1", path],
                   check=True)
    with open(path, "rb") as file:
        return file.read()


def call(method, path, body=None, token=None, content_type="application/json"):
    """One API request for seeding (JSON in and out; `bytes` bodies are sent as they are).
    A refusal raises AssertionError with the status and the problem's text."""
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    request = urllib.request.Request(sys.argv[1].rstrip("/") + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", content_type)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            text = response.read()
    except urllib.error.HTTPError as error:
        raise AssertionError(f"{method} {path}: {error.code} {error.read()[:300]!r}") from None
    return json.loads(text) if text else None


def admin_token():
    """An access token of the demo's `admin`."""
    return call("POST", "/v1/auth/login", {"username": "admin", "password": DEMO_PASSWORD})["accessToken"]


def upload(token, path, fields):
    """POST /v1/posts as multipart/form-data: `fields` and the file at `path` as `media`."""
    boundary = uuid.uuid4().hex
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
             for name, value in fields.items()]
    with open(path, "rb") as file:
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="media"; filename="clip.mp4"\r\n'
                     f"Content-Type: video/mp4\r\n\r\n".encode() + file.read() + b"\r\n")
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    return call("POST", "/v1/posts", body, token, f"multipart/form-data; boundary={boundary}")


def wait_ready(token, post_id, seconds=120):
    """Waits until the server has processed a post (ffmpeg on a loaded 2-core box can be slow)."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        post = call("GET", f"/v1/posts/{post_id}", token=token)
        if post["status"] == "ready":
            return post
        assert post["status"] != "failed", post.get("failureReason")
        time.sleep(1)
    raise AssertionError(f"post {post_id} was not processed within {seconds} s")
