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
from .test_browser import (  # noqa: F401
    app_url,
    browser,
    choose_conversation,
    idle,
    metric,
    metric_value,
    open_tab,
    page,
    settings,
    shot,
)
from .test_compaction import book_scenario

pytestmark = pytest.mark.browser

PRESETS = presets.list_presets()
# Every tab but the ones that replay a whole run (Run, Compare, Corpus: slow on the 200k preset)
TABS = ["Before / after", "Presets and patterns", "Where the tokens go", "Bring one in", "Export", "Step-through",
        "Lessons"]  # last: its explainer is opened below


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
            open_tab(page, tab)
    page.get_by_text("What compaction is, and why it waits for a threshold").click()
    with settings(page) as body:
        body.get_by_text("Save or open a workspace").click()
    page.get_by_role("button", name="Cost details").click()
    idle(page)
    shot(page, "e2e-no-external-requests")
    context.close()
    origin = urlsplit(app_url)
    assert requests and all(urlsplit(url).netloc == origin.netloc or url.startswith(("data:", "blob:"))
                            for url in requests), sorted({u for u in requests if urlsplit(u).netloc != origin.netloc})


def test_a_pasted_conversation_is_kept_when_a_preset_is_chosen(page):
    from playwright.sync_api import expect

    open_tab(page, "Bring one in")
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
    with settings(page) as body:  # the person's own conversation has no preset to describe or reset to
        expect(body.get_by_text(PRESETS[0].description[:40])).to_have_count(0)
        expect(body.get_by_role("button", name="Reset to preset")).to_have_count(0)
    choose_conversation(page, PRESETS[1].title)
    before = metric_value(page, "Before")
    expect(before).not_to_have_text(f"{pasted:,}")
    page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").filter(has_text="Conversation").click()
    page.get_by_role("option", name="Your conversation (pasted").click()
    expect(sidebar.get_by_text("Your own conversation — OpenAI Chat Completions, 12 items")).to_be_visible()
    expect(before).to_have_text(f"{pasted:,}")  # (a read mid-rerun saw a stale card)
    idle(page)
    with settings(page) as body:
        exact = body.get_by_role("spinbutton", name="Exact threshold").input_value()
    expect(page.get_by_test_id("stSlider")).to_contain_text(exact)
    shot(page, "e2e-own-conversation")


def test_save_workspace_downloads_a_file_that_opens_again(page, tmp_path):
    from playwright.sync_api import expect

    with settings(page) as body:  # open through every rerun below: the workspace is in it
        field = body.get_by_role("spinbutton", name="Exact threshold")
        field.fill("1234")
        field.press("Enter")
        idle(page)
        body.get_by_text("Save or open a workspace").click()
        with page.expect_download() as download:
            body.get_by_role("button", name="Save workspace").click()
        saved = tmp_path / "saved.json"
        download.value.save_as(saved)
        opened = workspace.loads(saved.read_bytes())
        assert opened.threshold == 1234 and opened.conversation == PRESETS[0].conversation
        field.fill("99")
        field.press("Enter")
        idle(page)
        uploader = body.get_by_test_id("stFileUploader").filter(has_text="Open workspace")
        uploader.locator("input[type=file]").set_input_files(str(saved))
        expect(field).to_have_value("1234", timeout=30_000)
        idle(page)
        shot(page, "e2e-workspace-opened")


def test_export_files_are_made_when_their_button_is_pressed(page, tmp_path):
    """The exports are callables now (made on download, not on every rerun): each still downloads."""
    from playground import formats

    open_tab(page, "Export")
    for label, check in [("Compacted conversation", lambda data: formats.loads(data).items),
                         ("Report (JSON)", lambda data: json.loads(data)["stage"] == "compacted")]:
        with page.expect_download() as download:
            page.get_by_role("button", name=label).click()
        saved = tmp_path / download.value.suggested_filename
        download.value.save_as(saved)
        assert check(saved.read_bytes()), label
        idle(page)  # the click's rerun ends after the file is made: the next button is clicked on a settled page
