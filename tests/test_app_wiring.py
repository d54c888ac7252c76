"""The page's wirings of engine features merged last: the runnable exports, the error-pattern
editor, the three stages on the meter, literal text in messages, agent logs uploaded, and
calibrations kept in a saved workspace. Each through AppTest, against the engine's own values."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from playground import formats
from playground.compaction import Settings
from playground.conversation import ToolCall
from playground.engine import Engine
from playground.export import exports
from playground.meter.factor import Calibration
from playground.present import render, view
from playground.rules.errorpatterns import DEFAULT_ERROR_PATTERNS, load_error_patterns
from playground.rules.ruleset import Rules, book_rules
from playground.run.prices import read_prices
from playground.summarize.history import SummarySettings
from playground.ui import state
from playground.ui.workspace_file import snapshot
from playground.workbench import workspace
from playground.workbench.workspace import Workspace

from .conftest import SHARED, shared
from .test_app import PRESETS, _summarizing, healthy, metrics, paste, rerun, start

CLAUDE_CODE = SHARED / "sessions" / "claude-code-session-196820da.jsonl"


def downloads(at: AppTest) -> dict[str, str]:
    """Each download button's label and help text."""
    return {button.proto.label: button.proto.help for button in at.get("download_button")}


def rule_messages(at: AppTest) -> str:
    return "\n".join(c.value for c in at.caption if " row " in c.value)  # the row checks are captions


# 1. The exports that run

def test_the_compactor_and_framework_exports_are_offered_with_the_page_settings(monkeypatch):
    made = []
    real = exports.rules_compactor

    def recording(rules, settings, model=None):
        made.append((rules, settings, model))
        return real(rules, settings, model)

    monkeypatch.setattr(exports, "rules_compactor", recording)
    at = start()
    at.sidebar.number_input(key="threshold").set_value(700)
    at.sidebar.number_input(key="keep_recent").set_value(2)
    rerun(at)
    shown = downloads(at)
    assert shown["Rules + compactor (Python)"] and shown["Context editing settings (Anthropic, LangChain)"]
    rules, settings, model = made[-1]
    assert (settings.threshold, settings.keep_recent, model) == (700, 2, at.session_state["model"])
    assert rules == snapshot(at.session_state).rules


def test_the_framework_export_is_left_out_when_no_rule_clears_a_result():
    at = start()
    at.selectbox(key="ruleset").set_value("none")
    next(b for b in at.button if b.label == "Use these rules").click()
    rerun(at)
    assert exports.framework_settings(at.session_state["conversation"], snapshot(at.session_state).rules,
                                      Settings(threshold=0)) is None
    assert "Rules + compactor (Python)" in downloads(at)
    assert "Context editing settings (Anthropic, LangChain)" not in downloads(at)


# 2. Error patterns, editable on the Rules tab

def _edit_patterns(at: AppTest, **edits) -> AppTest:
    at.session_state[state.PATTERN_EDITOR] = {"edited_rows": {}, "added_rows": [], "deleted_rows": [], **edits}
    return rerun(at)


def test_a_bad_regex_is_named_on_its_row_and_the_last_good_patterns_stay():
    at = _edit_patterns(start(), edited_rows={1: {"pattern": "returncode (unclosed"}})
    messages = rule_messages(at)
    assert render.literal("row 2: pattern: invalid regular expression") in messages
    assert "the last good patterns still apply" in messages
    assert snapshot(at.session_state).rules.error_patterns == DEFAULT_ERROR_PATTERNS


def test_an_added_pattern_recognises_a_result_and_reset_brings_back_the_defaults():
    at = start()
    paste(at, json.dumps({"messages": [
        {"role": "user", "content": "Read it"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a.md"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "WARN quota exhausted\n" + "data " * 400},
        {"role": "assistant", "content": "Done."}]}))
    added = {"name": "quota", "pattern": "^WARN quota"}
    _edit_patterns(at, added_rows=[added])
    assert "recognises 1 result here" in rule_messages(at)
    rules = snapshot(at.session_state).rules
    assert rules.error_patterns.match("WARN quota exhausted") == "quota"
    next(b for b in at.button if b.label == "Reset to the default patterns").click()
    rerun(at)
    assert snapshot(at.session_state).rules.error_patterns == DEFAULT_ERROR_PATTERNS
    assert at.session_state[state.PATTERN_BASE] == DEFAULT_ERROR_PATTERNS.to_json()


def test_imported_patterns_and_value_cap_survive_the_tables_and_a_rule_preset():
    at = start()
    mine = [{"name": "mine", "pattern": "^oops"}]
    at.text_area(key="rules_paste").set_value(json.dumps(
        {"tool_results": [{"tool": "read_file", "template": "File {path}."}], "error_patterns": mine,
         "value_limit": 40}))
    next(b for b in at.button if b.label == "Import pasted rules").click()
    rerun(at)
    assert at.session_state[state.PATTERN_BASE] == mine
    at.selectbox(key="ruleset").set_value("masking")
    next(b for b in at.button if b.label == "Use these rules").click()
    rerun(at)
    rules = snapshot(at.session_state).rules
    assert rules.error_patterns == load_error_patterns(mine) and rules.value_limit == 40
    assert rules.tool_results != book_rules().tool_results  # the tables did change


def test_error_patterns_round_trip_through_a_saved_workspace():
    at = _edit_patterns(start(), added_rows=[{"name": "quota", "pattern": "^WARN quota"}], deleted_rows=[0])
    saved = snapshot(at.session_state)
    assert [p.name for p in saved.rules.error_patterns.patterns][-1] == "quota"
    fresh = start()
    fresh.sidebar.file_uploader(key="workspace_upload").set_value(
        ("tuning.json", json.dumps(workspace.to_json(saved)).encode(), "application/json"))
    rerun(fresh)
    assert snapshot(fresh.session_state).rules.error_patterns == saved.rules.error_patterns
    assert fresh.session_state[state.PATTERN_BASE] == saved.rules.error_patterns.to_json()


def test_error_patterns_and_value_cap_round_trip_in_a_workspace_file():
    patterns = load_error_patterns([{"name": "quota", "pattern": "^WARN quota"}])
    ws = Workspace(PRESETS[0].conversation, Rules(book_rules().tool_calls, (), patterns, 40), 5000)
    back = workspace.loads(json.dumps(workspace.to_json(ws)).encode())
    assert back.rules.error_patterns == patterns and back.rules.value_limit == 40


# 3. Three stages on the meter

def test_a_summary_is_shown_apart_from_compactions_saving():
    at = _summarizing(start())
    optimized = Engine().optimize(at.session_state["conversation"], snapshot(at.session_state).rules,
                                  Settings(threshold=500), SummarySettings(limit=500), None, at.session_state["model"])
    before, compacted, _ = optimized.stages
    shown = metrics(at)
    assert shown["Saved by compaction"] == f"{round(100 * compacted.saved / before.tokens, 1)}%"
    assert float(shown["Summarized away"].rstrip("%")) > 0
    meter = next(h.proto.body for h in at.get("html") if "cp-meter" in h.proto.body)
    assert f"after compaction: {compacted.tokens:,} tokens (retrievable)" in meter
    assert "after summarization:" in meter and "(lossy)" in meter


def test_without_a_summary_there_is_no_lossy_figure():
    at = start()
    assert "Summarized away" not in metrics(at)
    meter = next(h.proto.body for h in at.get("html") if "cp-meter" in h.proto.body)
    assert "after summarization" not in meter


# 4. Literal text

def test_a_template_in_a_rule_message_shows_literally():
    at = start()
    at.session_state[state.RESULT_EDITOR] = {
        "edited_rows": {}, "deleted_rows": [],
        "added_rows": [{"enabled": True, "tool": "lookup", "template": "Results for {query.__class__}"}]}
    rerun(at)
    messages = rule_messages(at)
    assert render.literal("'{query.__class__}'") in messages
    assert r"\_\_class\_\_" in messages


# 5. Agent logs uploaded

def test_every_reader_is_offered_and_a_claude_code_session_uploads():
    at = start()
    assert at.selectbox(key=state.FORMAT_CHOICE).options[1:] == [formats.TITLES[name] for name in formats.READERS]
    data = shared(CLAUDE_CODE).read_bytes()
    at.file_uploader(key="upload").set_value((CLAUDE_CODE.name, data, "application/octet-stream"))
    healthy(at.run())
    conversation = at.session_state["conversation"]
    assert conversation.source == "claude-code"
    assert sum(isinstance(item, ToolCall) for item in conversation.items) == 65
    now = next(c.value for c in at.caption if c.value.startswith("Now showing"))
    assert render.literal(view.format_title(conversation)) in now and "Claude Code" in now
    assert any("Claude Code" in c.value for c in at.sidebar.caption)
    # The export defaults follow the new conversation: its own API format, its conversion losses listed.
    assert at.selectbox(key="export_format").value == "anthropic"
    assert at.toggle(key="export_notes").value is True


# 6. Calibrations in the workspace

def test_calibrations_round_trip_in_a_workspace_file():
    ws = Workspace(PRESETS[0].conversation, book_rules(), 5000,
                   calibrations={"gpt-4o": Calibration("gpt-4o", 1.25), "claude-sonnet-4-5": Calibration(
                       "claude-sonnet-4-5", 0.8)})
    back = workspace.loads(json.dumps(workspace.to_json(ws)).encode())
    assert back == ws


def test_a_bad_calibration_in_a_workspace_is_located():
    data = workspace.to_json(Workspace(PRESETS[0].conversation, book_rules(), 5000))
    data["calibrations"] = {"gpt-4o": 40}
    with pytest.raises(workspace.InputError, match=r"calibrations\.gpt-4o"):
        workspace.from_json(data)


def test_the_page_saves_and_restores_the_calibration_in_effect():
    at = start()
    model, plain = at.session_state["model"], metrics(at)["Before"]
    at.session_state[state.ENGINE].calibrations[model] = Calibration(model, 1.5, 2)
    rerun(at)
    calibrated = metrics(at)["Before"]
    assert calibrated == f"{round(int(plain.replace(',', '')) * 1.5):,}"
    saved = snapshot(at.session_state)
    assert saved.calibrations[model].factor == 1.5
    fresh = start()
    fresh.sidebar.file_uploader(key="workspace_upload").set_value(
        ("calibrated.json", json.dumps(workspace.to_json(saved)).encode(), "application/json"))
    rerun(fresh)
    assert fresh.session_state[state.ENGINE].calibrations[model].factor == 1.5
    assert metrics(fresh)["Before"] == calibrated


def test_the_headline_numbers_are_the_pipelines_stages():
    preset = PRESETS[0]
    optimized = Engine().optimize(preset.conversation, preset.rules, Settings(threshold=500),
                                  SummarySettings(limit=500), None, preset.model)
    before, compacted, final = optimized.stages
    numbers = view.summary(preset.conversation, optimized.compaction, read_prices().get(preset.model),
                           optimized.summarization)
    assert final.saved > 0  # the case is one where a summary went further than compaction
    assert (numbers.before, numbers.compacted, numbers.after) == (before.tokens, compacted.tokens, final.tokens)
    assert (numbers.compaction_saved, numbers.summarized_away) == (compacted.saved, final.saved)
    assert numbers.compaction_percent == round(100 * compacted.saved / before.tokens, 1)


def test_the_meters_draw_a_third_bar_only_for_a_summary():
    three = render.meters(view.scale(1_000, 300, 500, 128_000, compacted=700), 1_000, 300, 500, 700)
    two = render.meters(view.scale(1_000, 700, 500, 128_000), 1_000, 700, 500)
    assert three.count('class="cp-track"') == 3 and two.count('class="cp-track"') == 2
    assert "after compaction: 700 tokens (retrievable)" in three and "after summarization: 300 tokens (lossy)" in three
    assert "after: 700 tokens" in two and "lossy" not in two
