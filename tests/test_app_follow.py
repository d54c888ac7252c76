"""Settings that follow the conversation on the page (AppTest) — its model (priced as itself
by the catalogue, or of unknown price, never as another model), the playground's defaults for it,
the export format and the prompt-cache model — the page says where each setting came from, a lesson
survives a tab switch, an empty rule table can be added to, and stale or unclear load messages go.
Real logs: a Codex rollout and a Claude Code session."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from playground.rules.editor import edited_rows, tables_from_rules
from playground.rules.ruleset import book_rules
from playground.run.prices import read_prices
from playground.workbench.presets import list_presets

from .conftest import ROOT, SHARED, shared, show_tab
from .test_app import _fresh_caches, healthy  # noqa: F401 - the caches fixture, autouse here too
from .test_app import start as first_run

CODEX = ROOT / "tests" / "data" / "codex-rollout.jsonl"
CLAUDE_CODE = SHARED / "sessions" / "claude-code-session-196820da.jsonl"
FIFTY_K = 50_000  # the book's threshold: the defaults for every model with a window of 100,000 or more


def start(preset: str | None = None) -> AppTest:
    at = first_run()
    if preset is not None:
        at = healthy(at.sidebar.selectbox(key="preset").set_value(preset).run())
    return at


def upload(at: AppTest, name: str, data: bytes) -> AppTest:
    at.file_uploader(key="upload").set_value((name, data, "application/octet-stream"))
    return healthy(at.run())


def open_tab(at: AppTest, tab: str) -> AppTest:
    return healthy(show_tab(at, tab).run())


def origin_caption(at: AppTest) -> str:
    caption = next(c.value for c in at.sidebar.caption if c.value.startswith("Where these settings came from"))
    return caption.replace("\\_", "_")  # as the Markdown is read, not its escapes


def test_a_codex_rollout_after_a_claude_preset_is_counted_as_openai_with_the_defaults():
    at = start("anthropic-support")  # Claude, threshold 6,000: what the issue saw leak into the next log
    renamed = CODEX.read_bytes().replace(b'"gpt-5-codex"', b'"gpt-9.9"')  # a model the catalogue does not list
    at = upload(at, "rollout.jsonl", renamed)
    state = at.session_state
    assert (state["model"], state["threshold"], state["keep_recent"]) == ("gpt-9.9", FIFTY_K, 0)  # its own name
    warning = next(w.value for w in at.sidebar.warning if "gpt-9.9" in w.value)
    assert "the price catalogue does not list" in warning and "price unknown — enter it" in warning
    assert (state["export_format"], state["export_notes"]) == ("responses", True)
    assert "the conversation's own (gpt-9.9)" in origin_caption(at)
    assert "threshold, keep_recent, errors and rules: defaults for gpt-9.9" in origin_caption(at)
    at = open_tab(at, "Run")
    assert at.session_state["replay_cache"] == "openai"  # an OpenAI name: OpenAI's cache rules
    at = healthy(at.sidebar.selectbox(key="model").set_value("gpt-5-mini").run())
    assert not [w for w in at.sidebar.warning if "gpt-9.9" in w.value]  # the warning goes with the model
    assert "model: you changed it" in origin_caption(at)


def test_a_claude_code_log_after_a_lesson_gets_claude_anthropic_caching_and_the_defaults():
    at = start()
    at = open_tab(at, "Lessons")
    at = healthy(at.selectbox(key="lesson_pick").set_value("02-two-tables").run())
    at = healthy(at.button(key="lesson_start").click().run())  # long-session: gpt-4o, keep_recent 3
    assert at.session_state["keep_recent"] == 3 and at.session_state["lesson_active"] == "02-two-tables"
    at = open_tab(at, "Run")
    assert at.session_state["replay_cache"] == "openai"
    at = upload(at, "session.jsonl", shared(CLAUDE_CODE).read_bytes())
    state = at.session_state
    assert (state["model"], state["threshold"], state["keep_recent"]) == ("claude-sonnet-4-5-20250929", FIFTY_K, 0)
    assert state["replay_cache"] == "anthropic"
    assert (state["export_format"], state["export_notes"]) == ("anthropic", True)  # a log made into a request
    assert "lesson_active" not in state  # loading another conversation ends the lesson
    assert not [w for w in at.sidebar.warning if "does not list" in w.value]


def test_a_cache_model_the_person_chose_stays_for_this_conversation_only():
    at = open_tab(start(), "Run")
    assert at.session_state["replay_cache"] == "openai"
    at = healthy(at.selectbox(key="replay_cache").set_value("none").run())
    at = healthy(at.sidebar.selectbox(key="model").set_value("claude-sonnet-4-5").run())
    assert at.session_state["replay_cache"] == "none"  # chosen: the model change does not move it
    at = upload(at, "session.jsonl", shared(CLAUDE_CODE).read_bytes())
    assert at.session_state["replay_cache"] == "anthropic"  # another conversation: it follows again


def test_the_cache_follows_the_model_while_nobody_chose_one():
    at = open_tab(start(), "Compare")
    assert at.session_state["compare_cache"] == "openai"
    at = healthy(at.sidebar.selectbox(key="model").set_value("claude-sonnet-4-5").run())
    assert at.session_state["compare_cache"] == "anthropic"


def test_rules_the_person_made_stay_and_a_presets_give_way_to_the_books():
    body = CODEX.read_bytes()
    at = upload(start("coding-agent"), "rollout.jsonl", body)  # the preset's rules: replaced by the defaults
    assert "errors and rules: defaults for gpt-5" in origin_caption(at)
    books = tables_from_rules(book_rules())
    assert (at.session_state["call_rules_base"], at.session_state["result_rules_base"]) == books
    assert books != tables_from_rules(next(p for p in list_presets() if p.key == "coding-agent").rules)
    at = open_tab(at, "Rules")
    at.session_state["call_rules_editor"] = {"edited_rows": {}, "deleted_rows": [], "added_rows": [
        {"enabled": True, "tool": "exec_command", "argument": "cmd", "replacement": "[ran]", "min_tokens": 0}]}
    # (AppTest runs no widget callback: the table's on_change, which says the person changed the rules)
    at.session_state["setting_origins"] = {**at.session_state["setting_origins"], "rules": "you changed it"}
    at = healthy(at.run())
    rows = [*books[0], {"enabled": True, "tool": "exec_command", "argument": "cmd", "replacement": "[ran]",
                        "min_tokens": 0}]
    assert "rules: you changed it" in origin_caption(at)
    at = upload(at, "again.jsonl", body)
    assert edited_rows(at.session_state["call_rules_base"], at.session_state["call_rules_editor"]) == rows  # they stay
    assert "rules: you changed it" in origin_caption(at)


def test_a_preset_says_where_its_settings_came_from_and_a_change_is_yours():
    at = start()
    assert origin_caption(at).endswith("model, threshold, keep_recent, errors and rules: the preset "
                                       f"“{list_presets()[0].title}”.")
    at.sidebar.number_input(key="keep_recent").set_value(2)
    at = healthy(at.run())
    assert "keep_recent: you changed it" in origin_caption(at)


def test_an_empty_rule_table_shows_its_columns_and_says_how_to_add_a_row():
    at = start()
    at = open_tab(at, "Rules")
    at.session_state["call_rules_base"] = []
    at = healthy(at.run())
    calls = ["enabled", "tool", "argument", "replacement", "min_tokens"]
    tables = [frame.value for frame in at.dataframe if list(frame.value.columns) == calls]
    assert len(tables) == 1, "the tool-call table is drawn with its columns"
    empty = tables[0]
    assert list(empty.columns) == ["enabled", "tool", "argument", "replacement", "min_tokens"] and len(empty) == 0
    hint = "Add a rule in the empty last row; to edit, double-click a cell, type, Enter"
    assert [c for c in at.caption if c.value.startswith(hint)]


def test_a_lesson_stays_active_through_a_tab_switch_and_completes_from_the_rules_tab():
    at = open_tab(start(), "Lessons")
    at = healthy(at.selectbox(key="lesson_pick").set_value("02-two-tables").run())
    at = healthy(at.button(key="lesson_start").click().run())
    at = open_tab(at, "Rules")  # the lesson's task is done there; the Lessons tab is not drawn
    assert [i.value for i in at.info if "Lesson 2 of 8" in i.value and "Your task" in i.value]
    at.session_state["call_rules_editor"] = {"edited_rows": {}, "deleted_rows": [], "added_rows": [
        {"enabled": True, "tool": "create_file", "argument": "content", "replacement": "[Content saved to file]",
         "min_tokens": 0}]}
    at = healthy(at.run())
    assert [s.value for s in at.success if s.value.startswith("Done: Add a ToolCall rule")]
    assert not at.button(key="lesson_next").disabled and "02-two-tables" in at.session_state["lessons_done"]
    at = open_tab(at, "Lessons")  # back: on the lesson being taken, not lesson 1
    assert at.selectbox(key="lesson_pick").value == "02-two-tables"
    assert not [b for b in at.button if b.key == "lesson_start"]
    assert [m.value for m in at.markdown if "A tool interaction has two sides" in m.value]
    at = healthy(at.button(key="lesson_next").click().run())
    assert at.session_state["lesson_active"] == "03-not-read-yet" and at.selectbox(key="lesson_pick").value == (
        "03-not-read-yet")
    at = healthy(at.button(key="lesson_end").click().run())
    assert "lesson_active" not in at.session_state and not [i for i in at.info if "Lesson 3 of 8" in i.value]


def test_a_good_upload_clears_a_stale_paste_error_and_an_empty_file_says_so():
    at = start()
    at.text_area(key="paste_text").set_value("{not json")
    at.button(key="FormSubmitter:paste_form-Load pasted JSON").click()
    at = healthy(at.run())
    assert [e.value for e in at.error if e.value.startswith("pasted JSON: line 1")]
    at = upload(at, "rollout.jsonl", CODEX.read_bytes())
    assert not at.error  # the good upload answers the paste that failed
    at = upload(at, "empty.jsonl", b"")
    assert [e.value for e in at.error] == ["empty.jsonl: the file is empty"]
    at.text_area(key="paste_text").set_value("  ")
    at.button(key="FormSubmitter:paste_form-Load pasted JSON").click()
    at = healthy(at.run())
    assert "pasted JSON: the box is empty — paste a conversation's JSON first" in [e.value for e in at.error]


def test_the_run_tab_counts_firings_in_good_english():
    at = open_tab(start(), "Run")
    captions = [c.value for c in at.caption if c.value.startswith("The policy fired")]
    assert captions and captions[0].startswith("The policy fired 1 time;"), captions


def test_choosing_an_export_format_that_converts_lists_the_losses():
    at = open_tab(start(), "Export")
    assert (at.session_state["export_format"], at.session_state["export_notes"]) == ("chat", False)
    at = healthy(at.selectbox(key="export_format").set_value("anthropic").run())
    assert at.session_state["export_notes"] is True
    assert read_prices().get(at.session_state["model"]).provider == "openai"
