"""End to end in a real browser: the app started with the README's command, driven in Debian's
headless Chromium through Playwright. Screenshots go to artifacts/ (ignored by git)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import ROOT
from .test_compaction import book_scenario

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
ARTIFACTS = ROOT / "artifacts"


def _browser_or_skip() -> None:
    if not Path(CHROMIUM).exists() or shutil.which("chromium") is None:
        message = f"Debian's chromium is not installed at {CHROMIUM} (scripts/test installs it)"
        if os.environ.get("PLAYGROUND_REQUIRE_BROWSER") == "1":
            pytest.fail(message)
        pytest.skip(message)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def running_app(*options: str, log_name: str = "browser-server.log") -> Iterator[tuple[str, int]]:
    """The app, started exactly as the README says (plus a free port on localhost and ``options``):
    its URL and the server's process id."""
    _browser_or_skip()
    port = _free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    log = (ARTIFACTS / log_name).open("w")
    process = subprocess.Popen([str(ROOT / "scripts" / "app"), "--server.port", str(port), "--server.address",
                                "127.0.0.1", *options], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as response:
                    if response.read() == b"ok":
                        break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail(f"the app did not start; see {log.name}")
        yield url, process.pid
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
        log.close()


@pytest.fixture(scope="module")
def app_url() -> Iterator[str]:
    with running_app() as (url, _):
        yield url


@pytest.fixture(scope="module")
def browser():
    _browser_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


def opened(browser, app_url: str, height: int = 1200) -> Iterator:
    """A fresh page on the app, settled; closed when the test is done."""
    context = browser.new_context(viewport={"width": 1500, "height": height})
    page = context.new_page()
    page.goto(app_url)
    # the first run's meters, then its end: "not running" also holds before that run has begun, and a
    # click or an edit made while it still draws was lost to it (a tab switched back, a typed cell emptied)
    page.get_by_test_id("stMetric").first.wait_for(timeout=60_000)
    idle(page)
    yield page
    context.close()


@pytest.fixture
def page(browser, app_url):
    yield from opened(browser, app_url)


def idle(page) -> None:
    """Wait until the script has run and the page is settled (never a sleep)."""
    page.wait_for_selector(IDLE, timeout=60_000)


def open_tab(page, name: str) -> None:
    """Open the page's tab called ``name`` as a person would: its top tab first when it is an inner one
    (the page's tabs nest: ``playground.ui.tabs.LAYOUT``). By its exact name: "Run" is also in "Whole run"."""
    from playground.ui import tabs  # the page's modules import Streamlit: only for the tests that drive it

    for label in tabs.path(name).values():  # the top tab, then the inner one
        page.get_by_role("tab", name=label, exact=True).click(timeout=60_000)  # the 200k preset reruns slowly
        idle(page)


def settings_button(page):
    """The sidebar's *Settings* button (a locator, so the sync and the async API both use it)."""
    return page.get_by_test_id("stSidebar").get_by_role("button", name="Settings")


@contextlib.contextmanager
def settings(page) -> Iterator:
    """The sidebar's *Settings* popover, open for the block: its body (Streamlit draws it only while it is
    open, and keeps it open through the reruns its widgets start). Closed after, so the next click on the
    page is not spent closing it."""
    from playwright.sync_api import expect

    settings_button(page).click()
    body = page.get_by_test_id("stPopoverBody").filter(has=page.get_by_role("spinbutton", name="Exact threshold"))
    expect(body).to_be_visible()
    yield body
    page.keyboard.press("Escape")
    expect(body).to_have_count(0)
    # off the button and out of its focus, which Escape gives back: its tooltip would cover the slider
    page.mouse.move(0, 0)
    page.evaluate("document.activeElement && document.activeElement.blur()")


def set_threshold(page, value: int) -> None:
    """Type ``value`` into *Settings → Exact threshold* and wait for the page to settle on it."""
    with settings(page) as body:
        field = body.get_by_role("spinbutton", name="Exact threshold")
        field.fill(str(value))
        field.press("Enter")
        page.wait_for_timeout(100)
        idle(page)


def choose_conversation(page, title: str) -> None:
    """Pick ``title`` in the sidebar's *Conversation* and wait for the rerun it starts: for a preset, until
    *Before* shows its count (idle alone can see the moment before the rerun)."""
    from playwright.sync_api import expect

    from playground.engine import Engine
    from playground.workbench import presets

    page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").filter(has_text="Conversation").click()
    page.get_by_role("option", name=title, exact=True).click()
    preset = next((p for p in presets.list_presets() if p.title == title), None)
    if preset is not None:
        before = Engine().count(preset.conversation, preset.model).total
        expect(metric_value(page, "Before")).to_have_text(f"{before:,}", timeout=60_000)
    idle(page)


def metric_value(page, label: str):
    """The value of the metric card called ``label`` (a locator: ``expect`` waits on it)."""
    card = page.get_by_test_id("stMetric").filter(has=page.get_by_text(label, exact=True))
    return card.get_by_test_id("stMetricValue")


def metric(page, label: str) -> int:
    return int(metric_value(page, label).inner_text().replace(",", ""))


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def test_opens_with_a_preset_compacted(page):
    from playwright.sync_api import expect

    expect(page.get_by_role("heading", name="Compaction Playground")).to_be_visible()
    expect(page.get_by_text("Compacted: now below the threshold")).to_be_visible()
    assert metric(page, "After") < metric(page, "Before")
    expect(page.get_by_text("prompt cache ends here").first).to_be_visible()
    shot(page, "e2e-first")


def test_changing_the_threshold_moves_the_meters(page):
    from playwright.sync_api import expect

    before = metric(page, "Before")
    set_threshold(page, before + 1)
    expect(page.get_by_text("Below the threshold: nothing changes")).to_be_visible()
    assert metric(page, "After") == before
    expect(page.get_by_text(f"after: {before:,} tokens")).to_be_visible()
    shot(page, "e2e-below-threshold")
    set_threshold(page, 0)
    expect(page.get_by_text("Below the threshold: nothing changes")).to_have_count(0)
    assert metric(page, "After") < before


def test_a_threshold_near_the_context_window_prints_both_labels_apart(page):
    """The threshold and the window a few percent apart on the meter: their labels stay readable."""
    from playwright.sync_api import expect

    window_label = page.locator(".cp-window .cp-marklabel").first
    set_threshold(page, 10_000_000)  # (the window on the scale, to read what it is)
    expect(window_label).to_be_visible()
    window = int(window_label.inner_text().removeprefix("context window ").replace(",", ""))
    set_threshold(page, window * 19 // 20)
    expect(page.locator(".cp-meter.cp-two").first).to_be_visible()
    threshold_box = page.locator(".cp-marklabel").first.bounding_box()
    window_box = window_label.bounding_box()
    assert (threshold_box["y"] + threshold_box["height"] <= window_box["y"]
            or threshold_box["x"] + threshold_box["width"] <= window_box["x"]
            or window_box["x"] + window_box["width"] <= threshold_box["x"]), (threshold_box, window_box)
    shot(page, "e2e-marks-near")


def test_pasting_bad_json_shows_where_and_keeps_the_conversation(page):
    from playwright.sync_api import expect

    before = metric(page, "Before")
    open_tab(page, "Bring one in")
    area = page.get_by_role("textbox", name="Paste a conversation (JSON)")
    area.fill('{"messages": [\n  {"role": "user", "content": "hi"}\n')
    page.get_by_role("button", name="Load pasted JSON").click()
    idle(page)
    expect(page.get_by_text("pasted JSON: line 3, column 1: invalid JSON")).to_be_visible()
    assert metric(page, "Before") == before
    expect(area).to_have_value('{"messages": [\n  {"role": "user", "content": "hi"}\n')
    shot(page, "e2e-bad-paste")


def test_uploading_a_file_replaces_the_conversation(page, tmp_path):
    from playwright.sync_api import expect

    upload = tmp_path / "book-scenario.json"
    upload.write_text(json.dumps(book_scenario()))
    open_tab(page, "Bring one in")
    uploader = page.get_by_test_id("stFileUploader").filter(has_text="upload a file")
    uploader.locator("input[type=file]").set_input_files(str(upload))
    expect(page.get_by_text("Now showing: book-scenario.json")).to_be_visible(timeout=30_000)
    idle(page)
    assert metric(page, "Before") > 0
    shot(page, "e2e-uploaded")
