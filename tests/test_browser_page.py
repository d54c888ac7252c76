# ruff: noqa: F811
"""End to end in Chromium: the page asks nothing of any other host, whatever a person does, and
what the person keeps (own conversations, workspaces) works in a real browser."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest

from playground.workbench import presets, workspace

# The app, browser and page fixtures of test_browser.py, imported under their own names (pytest finds a
# fixture by name), which the tests' parameters then reuse.
from .test_browser import app_url, browser, idle, metric, page, shot  # noqa: F401
from .test_compaction import book_scenario

pytestmark = pytest.mark.browser

PRESETS = presets.list_presets()
TABS = ["Before / after", "Where the tokens go", "Rules", "Conversation", "Export"]


def choose_conversation(page, title: str) -> None:
    from playwright.sync_api import expect

    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_test_id("stSelectbox").filter(has_text="Conversation").click()
    page.get_by_role("option", name=title, exact=True).click()
    preset = next((p for p in PRESETS if p.title == title), None)
    if preset is not None:  # wait for the rerun the choice starts (idle alone can see the moment before it)
        expect(sidebar.get_by_text(preset.description[:40])).to_be_visible(timeout=60_000)
    idle(page)


def test_every_preset_and_every_tab_asks_only_the_apps_own_origin(browser, app_url):
    context = browser.new_context(viewport={"width": 1500, "height": 1200})
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(app_url)
    idle(page)
    for preset in PRESETS:
        choose_conversation(page, preset.title)
        for tab in TABS:
            page.get_by_role("tab", name=tab).click(timeout=60_000)  # the 200k preset reruns slowly under load
            idle(page)
    page.get_by_text("Save or open a workspace").click()
    page.get_by_text("New here? What compaction is").click()
    idle(page)
    shot(page, "e2e-no-external-requests")
    context.close()
    origin = urlsplit(app_url)
    assert requests and all(urlsplit(url).netloc == origin.netloc or url.startswith(("data:", "blob:"))
                            for url in requests), sorted({u for u in requests if urlsplit(u).netloc != origin.netloc})


def test_a_pasted_conversation_is_kept_when_a_preset_is_chosen(page):
    from playwright.sync_api import expect

    page.get_by_role("tab", name="Conversation").click()
    body = book_scenario()
    body["messages"][3]["tool_call_id"] = "__init__ *x*"  # user text with Markdown in it: shown as typed
    area = page.get_by_role("textbox", name="Paste a conversation (JSON)")
    area.fill(json.dumps(body))
    page.get_by_role("button", name="Load pasted JSON").click()
    idle(page)
    expect(page.get_by_text("tool result's call id matches no earlier tool call: '__init__ *x*'")).to_be_visible()
    area.fill(json.dumps(book_scenario()))
    page.get_by_role("button", name="Load pasted JSON").click()
    sidebar = page.get_by_test_id("stSidebar")  # the pasted line first: idle alone can see the moment before the rerun
    expect(sidebar.get_by_text("Your own conversation — OpenAI Chat Completions, 12 items")).to_be_visible()
    idle(page)
    pasted = metric(page, "Before")
    expect(sidebar.get_by_text(PRESETS[0].description[:40])).to_have_count(0)
    choose_conversation(page, PRESETS[1].title)
    before = page.get_by_test_id("stMetric").filter(has=page.get_by_text("Before", exact=True))
    expect(before.get_by_test_id("stMetricValue")).not_to_have_text(f"{pasted:,}")  # waits for the rerun
    page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").filter(has_text="Conversation").click()
    page.get_by_role("option", name="Your conversation (pasted").click()
    expect(sidebar.get_by_text("Your own conversation — OpenAI Chat Completions, 12 items")).to_be_visible()
    expect(before.get_by_test_id("stMetricValue")).to_have_text(f"{pasted:,}")  # (a read mid-rerun saw a stale card)
    idle(page)
    slider = page.get_by_test_id("stSlider")
    expect(slider).to_contain_text(f"{page.get_by_role('spinbutton', name='Exact threshold').input_value()}")
    shot(page, "e2e-own-conversation")


def test_save_workspace_downloads_a_file_that_opens_again(page, tmp_path):
    from playwright.sync_api import expect

    field = page.get_by_role("spinbutton", name="Exact threshold")
    field.fill("1234")
    field.press("Enter")
    idle(page)
    page.get_by_text("Save or open a workspace").click()
    with page.expect_download() as download:
        page.get_by_role("button", name="Save workspace").click()
    saved = tmp_path / "saved.json"
    download.value.save_as(saved)
    opened = workspace.loads(saved.read_bytes())
    assert opened.threshold == 1234 and opened.conversation == PRESETS[0].conversation
    field.fill("99")
    field.press("Enter")
    idle(page)
    uploader = page.get_by_test_id("stFileUploader").filter(has_text="Open workspace")
    uploader.locator("input[type=file]").set_input_files(str(saved))
    expect(page.get_by_role("spinbutton", name="Exact threshold")).to_have_value("1234", timeout=30_000)
    idle(page)
    shot(page, "e2e-workspace-opened")


def test_export_files_are_made_when_their_button_is_pressed(page, tmp_path):
    """The exports are callables now (made on download, not on every rerun): each still downloads."""
    from playground import formats

    page.get_by_role("tab", name="Export").click()
    for label, check in [("Compacted conversation", lambda data: formats.loads(data).items),
                         ("Report (JSON)", lambda data: json.loads(data)["stage"] == "compacted")]:
        with page.expect_download() as download:
            page.get_by_role("button", name=label).click()
        saved = tmp_path / download.value.suggested_filename
        download.value.save_as(saved)
        assert check(saved.read_bytes()), label
