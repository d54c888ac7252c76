"""Settings that follow an uploaded log, in a real browser: an agent's log, uploaded as a person would
after a preset of the other provider, brings its own settings — the model (priced as itself, or of
unknown price), the provider's prompt-cache model in the Run tab, and the export in the API format it
was sent in with the losses listed. The Run and Export tabs are opened before the upload, so the
browser already shows the preset's choices there: what a dropped value left on screen before."""

from __future__ import annotations

import pytest

from . import test_browser as e2e
from .conftest import ROOT, SHARED, shared
from .test_browser import idle, open_tab, settings, shot

app_url, browser, page = e2e.app_url, e2e.browser, e2e.page

pytestmark = pytest.mark.browser

CODEX = ROOT / "tests" / "data" / "codex-rollout.jsonl"
CLAUDE_CODE = SHARED / "sessions" / "claude-code-session-196820da.jsonl"


def _pick_preset(page, title: str) -> None:
    page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").filter(has_text="Conversation").click()
    page.get_by_role("option", name=title).click()
    idle(page)


def _visit(page, tab: str) -> None:
    open_tab(page, {"Conversation": "Bring one in"}.get(tab, tab))
    idle(page)


def _upload(page, path) -> None:
    from playwright.sync_api import expect

    _visit(page, "Conversation")
    uploader = page.get_by_test_id("stFileUploader").filter(has_text="upload a file")
    uploader.locator("input[type=file]").set_input_files(str(path))
    expect(page.get_by_text(f"Now showing: {path.name} (uploaded")).to_be_visible(timeout=60_000)
    idle(page)


def _expect_the_logs_settings(page, model: str, cache: str, export: str, losses_on: bool) -> None:
    from playwright.sync_api import expect

    with settings(page) as body:
        expect(body.get_by_role("combobox", name="Model")).to_have_value(model)
    _visit(page, "Run")
    expect(page.get_by_role("combobox", name="Prompt cache")).to_have_value(cache)
    _visit(page, "Export")
    expect(page.get_by_role("combobox", name="Export format")).to_have_value(export)
    toggle = page.get_by_role("switch", name="List what this export converts, fills in or drops")
    (expect(toggle).to_be_checked if losses_on else expect(toggle).not_to_be_checked)()


def test_a_codex_rollout_after_the_claude_preset_picks_openai_settings(page, tmp_path):
    from playwright.sync_api import expect

    _pick_preset(page, "Support agent")
    _expect_the_logs_settings(page, "claude-sonnet-4-5", "anthropic", "Anthropic Messages", False)
    rollout = tmp_path / "rollout-gpt-5.5.jsonl"  # the model measured in the issue, now its own catalogue row
    rollout.write_bytes(CODEX.read_bytes().replace(b'"gpt-5-codex"', b'"gpt-5.5"'))
    _upload(page, rollout)
    with settings(page) as body:  # where each setting came from is said beside the settings
        expect(body.get_by_text("threshold, keep_recent, errors and rules: defaults for gpt-5.5")).to_be_visible()
    _expect_the_logs_settings(page, "gpt-5.5", "openai", "OpenAI Responses", True)
    shot(page, "follow-codex-export")


def test_a_claude_code_log_after_a_gpt_preset_picks_claude_settings_and_lists_the_losses(page):
    from playwright.sync_api import expect

    _expect_the_logs_settings(page, "gpt-4o", "openai", "OpenAI Chat Completions", False)
    _upload(page, shared(CLAUDE_CODE))
    _expect_the_logs_settings(page, "claude-sonnet-4-5-20250929", "anthropic", "Anthropic Messages", True)
    expect(page.get_by_text("Nothing: the export is the conversation as it is.")).to_have_count(0)
    shot(page, "follow-claude-code-export")
