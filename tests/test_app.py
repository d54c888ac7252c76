"""The Streamlit page through AppTest: every flow a person uses, asserting no exception and the
numbers shown against the engine's own."""

from __future__ import annotations

import json

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from playground import formats
from playground.compaction import Settings
from playground.engine import optimize
from playground.present import render
from playground.rules.ruleset import book_rules
from playground.run.prices import read_prices
from playground.summarize.history import SummarySettings
from playground.workbench import defaults, presets

from .conftest import ROOT
from .openai_stub import StubServer
from .test_compaction import book_scenario

PRESETS = presets.list_presets()


@pytest.fixture(autouse=True)
def _fresh_caches():
    st.cache_data.clear()
    yield


def healthy(at: AppTest) -> AppTest:
    """No exception, and no bug caught by the page's own guard."""
    assert not at.exception, at.exception
    assert not [e.value for e in at.error if "Something went wrong" in e.value]
    return at


def start() -> AppTest:
    return healthy(AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run())


def rerun(at: AppTest) -> AppTest:
    return healthy(at.run())


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def badges(at: AppTest) -> list[str]:
    """The stage badges as drawn (Streamlit writes a badge as ``:color-badge[icon text]`` Markdown)."""
    return [m.value for m in at.markdown if "-badge[" in m.value]


def threshold_widgets(at: AppTest) -> tuple[int, int, int]:
    """The value in use and what the slider and the number box show."""
    return (at.session_state["threshold"], at.sidebar.slider(key="threshold_slider").value,
            at.sidebar.number_input(key="threshold").value)


class Numbers:
    """What the page should show, from the engine: the optimizer with the page's defaults
    (summarization on, limit = threshold, three steps kept, offline)."""

    def __init__(self, conversation, rules, threshold, keep_recent=0, model=None):
        result = optimize(conversation, rules, Settings(threshold=threshold, keep_recent=keep_recent),
                          SummarySettings(limit=threshold), None, model)
        self.stage = result.compaction.report.stage
        self.tokens_before = result.compaction.report.tokens_before
        done = result.summarization
        self.tokens_after = done.report.tokens_after if done else result.compaction.report.tokens_after


def expected(conversation, rules, threshold, keep_recent=0, model=None) -> Numbers:
    return Numbers(conversation, rules, threshold, keep_recent, model)


def test_first_run_shows_the_first_preset_compacted():
    at = start()
    first = PRESETS[0]
    report = expected(first.conversation, first.rules, first.threshold, first.keep_recent, first.model)
    assert report.stage == "compacted"
    assert metrics(at)["Before"] == f"{report.tokens_before:,}"
    assert metrics(at)["After"] == f"{report.tokens_after:,}"
    assert badges(at) == [":green-badge[:material/check_circle: Compacted: now below the threshold]"]
    assert at.session_state["preset"] == first.key


@pytest.mark.parametrize("preset", PRESETS, ids=[p.key for p in PRESETS])
def test_every_preset_loads_with_its_own_settings(preset):
    at = start()
    at.sidebar.selectbox(key="preset").set_value(preset.key)
    rerun(at)
    report = expected(preset.conversation, preset.rules, preset.threshold, preset.keep_recent, preset.model)
    assert metrics(at)["Before"] == f"{report.tokens_before:,}"
    assert metrics(at)["After"] == f"{report.tokens_after:,}"
    assert at.session_state["threshold"] == preset.threshold
    assert at.session_state["model"] == preset.model


def paste(at: AppTest, text: str) -> AppTest:
    at.text_area(key="paste_text").set_value(text)
    at.button(key="FormSubmitter:paste_form-Load pasted JSON").click()
    return rerun(at)


def test_pasting_good_json_replaces_the_conversation():
    at = start()
    body = book_scenario()
    paste(at, json.dumps(body))
    report = expected(formats.read(body), book_rules(), at.session_state["threshold"],
                      at.session_state["keep_recent"], at.session_state["model"])
    assert metrics(at)["Before"] == f"{report.tokens_before:,}"
    assert at.session_state["source"].startswith("Your conversation (pasted ")
    assert at.session_state["conversation"] == formats.read(body)
    assert at.text_area(key="paste_text").value == ""
    assert not at.error


@pytest.mark.parametrize(("text", "message"), [
    ('{"messages": [\n  {"role": "user",', "pasted JSON: line 2, column 19: invalid JSON: Expecting property name"),
    ('{"hello": "world"}', "pasted JSON: unrecognised format"),
    (json.dumps({"messages": [{"role": "tool", "tool_call_id": "call_9", "content": "x"}]}),
     "pasted JSON: messages[0]: tool result's call id matches no earlier tool call: 'call_9'"),
])
def test_pasting_bad_json_explains_and_keeps_the_last_good_state(text, message):
    at = start()
    before = metrics(at)
    paste(at, text)
    assert len(at.error) == 1 and at.error[0].value.startswith(render.literal(message))
    assert metrics(at) == before
    assert at.text_area(key="paste_text").value == text  # the user's text is not lost


def test_format_override_reads_the_paste_as_chosen():
    at = start()
    at.selectbox(key="format_choice").set_value("responses")
    paste(at, json.dumps([{"role": "user", "content": "hello"}]))
    assert at.session_state["conversation"].format == "responses"


def test_upload_good_and_bad_files():
    at = start()
    at.file_uploader(key="upload").set_value(("trace.json", json.dumps(book_scenario()).encode(), "application/json"))
    rerun(at)
    assert "trace.json" in at.session_state["source"]
    good = metrics(at)
    at.file_uploader(key="upload").set_value(("broken.json", b"{not json", "application/json"))
    rerun(at)
    assert [e.value for e in at.error] == [render.literal("broken.json: line 1, column 2: invalid JSON: Expecting "
                                                          "property name enclosed in double quotes")]
    assert metrics(at) == good


def test_moving_the_threshold_changes_the_stage_and_both_inputs():
    at = start()
    before = int(metrics(at)["Before"].replace(",", ""))
    at.sidebar.slider(key="threshold_slider").set_value(at.sidebar.slider(key="threshold_slider").max)
    rerun(at)
    assert at.session_state["threshold"] >= before
    assert metrics(at)["After"] == metrics(at)["Before"]
    at.sidebar.number_input(key="threshold").set_value(0)
    rerun(at)
    assert at.session_state["threshold_slider"] == 0
    assert metrics(at)["After"] != metrics(at)["Before"]


def test_editing_a_rule_row_changes_the_result():
    at = start()
    first = PRESETS[0]
    results = at.session_state["result_rules_base"]
    at.session_state["result_rules_editor"] = {"edited_rows": {i: {"enabled": False} for i in range(len(results))},
                                               "added_rows": [], "deleted_rows": []}
    rerun(at)
    without_results = first.rules.__class__(first.rules.tool_calls, ())
    report = expected(first.conversation, without_results, first.threshold, first.keep_recent, first.model)
    assert metrics(at)["After"] == f"{report.tokens_after:,}"


def test_an_unsafe_template_is_flagged_and_left_out():
    at = start()
    at.session_state["result_rules_editor"] = {"edited_rows": {0: {"template": "{file_path.__class__}"}},
                                               "added_rows": [], "deleted_rows": []}
    rerun(at)
    assert any("unsafe template field" in c.value for c in at.caption)  # the row checks, under the tables


def test_add_a_rule_with_one_click():
    at = start()
    body = book_scenario()
    body["messages"][5]["content"] = "\n".join(f"result {n}: solar data row" for n in range(400))  # large, no rule
    at.selectbox(key="ruleset").set_value("none")
    next(b for b in at.button if b.label == "Use these rules").click()
    rerun(at)
    paste(at, json.dumps(body))
    at.sidebar.number_input(key="threshold").set_value(0)
    rerun(at)
    button = next(b for b in at.button if b.key == "add_rule_result_search_web")
    assert button.label.startswith(render.literal("Add a rule for search_web results"))
    shares = next(table for table in at.dataframe if "calls or results" in table.value.columns)
    shown = json.loads(shares.proto.columns)  # (token counts with separators)
    assert shown["tokens"]["type_config"]["format"] == shown["largest item"]["type_config"]["format"] == "localized"
    before = int(metrics(at)["After"].replace(",", ""))
    button.click()
    rerun(at)
    added = at.session_state["result_rules_base"][-1]
    assert added["tool"] == "search_web" and "{query}" in added["template"]
    assert int(metrics(at)["After"].replace(",", "")) < before


def test_rule_presets_replace_the_tables():
    at = start()
    at.sidebar.toggle(key="summarize_on").set_value(False)
    at.selectbox(key="ruleset").set_value("none")
    next(b for b in at.button if b.label == "Use these rules").click()
    rerun(at)
    assert at.session_state["result_rules_base"] == [] and at.session_state["call_rules_base"] == []
    assert metrics(at)["After"] == metrics(at)["Before"]
    at.selectbox(key="ruleset").set_value("masking")
    next(b for b in at.button if b.label == "Use these rules").click()
    rerun(at)
    assert all(row["template"].startswith("[Older") for row in at.session_state["result_rules_base"])


def test_importing_rules_good_and_bad():
    at = start()
    at.text_area(key="rules_paste").set_value('{"tool_results": [{"tool": "read_file", "template": "Read."}]}')
    at.button(key="FormSubmitter:rules_paste_form-Import pasted rules").click()
    rerun(at)
    assert at.session_state["result_rules_base"][0]["template"] == "Read."
    at.text_area(key="rules_paste").set_value('{"tool_results": [{"tool": "x", "template": "{a[0]}"}]}')
    at.button(key="FormSubmitter:rules_paste_form-Import pasted rules").click()
    rerun(at)
    assert any(render.literal("tool_results[0].template: unsafe template field") in e.value for e in at.error)
    assert at.session_state["result_rules_base"][0]["template"] == "Read."


def test_builder_adds_edits_and_refuses_bad_items():
    at = start()
    count = len(at.session_state["conversation"].items)
    at.text_area(key="new_text").set_value("One more question.")
    next(b for b in at.button if b.label == "Add item").click()
    rerun(at)
    assert len(at.session_state["conversation"].items) == count + 1
    at.segmented_control(key="new_kind").set_value("tool_call")
    rerun(at)
    at.text_input(key="new_tool").set_value("read_file")
    at.text_input(key="new_call_id").set_value("call_new")
    at.text_area(key="new_arguments").set_value('{"path": ')
    next(b for b in at.button if b.label == "Add item").click()
    rerun(at)
    assert any("arguments are not JSON" in e.value for e in at.error)
    assert len(at.session_state["conversation"].items) == count + 1


def test_reset_to_preset_brings_it_back():
    at = start()
    original = metrics(at)
    at.sidebar.number_input(key="threshold").set_value(10**7)
    rerun(at)
    assert metrics(at) != original
    next(b for b in at.sidebar.button if b.label == "Reset to preset").click()
    rerun(at)
    assert metrics(at) == original and at.session_state["threshold"] == PRESETS[0].threshold
    paste(at, json.dumps(book_scenario()))
    assert metrics(at) != original
    at.sidebar.selectbox(key="preset").set_value(PRESETS[0].key)
    rerun(at)
    assert metrics(at) == original


def test_model_choice_sets_the_encoding():
    at = start()
    at.sidebar.selectbox(key="model").set_value("gpt-4")
    rerun(at)
    first = PRESETS[0]
    report = expected(first.conversation, first.rules, first.threshold, first.keep_recent, "gpt-4")
    assert metrics(at)["Before"] == f"{report.tokens_before:,}"


CONTROLS = ("button", "selectbox", "text_input", "text_area", "number_input", "toggle", "checkbox", "radio",
            "slider", "segmented_control")


def test_every_control_has_help_text():
    at = start()
    at.radio(key="summarizer").set_value("openai")
    rerun(at)
    missing = [(kind, element.label) for kind in CONTROLS for element in at.get(kind) if not element.proto.help]
    assert missing == []


def _summarizing(at: AppTest) -> AppTest:
    """The first preset with a threshold its rules cannot reach: summarization takes over."""
    at.sidebar.number_input(key="threshold").set_value(500)
    return rerun(at)


def test_summarization_shows_its_span_loss_and_summarizer():
    at = _summarizing(start())
    text = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert "summarized: the oldest history became one summary message" in text
    assert "Summarizer: offline summary — no LLM" in text
    assert any("cannot bring back what was said" in w.value for w in at.warning)


def _use_endpoint(at: AppTest, base_url: str, model: str, key: str = "sk-page-secret") -> AppTest:
    at.radio(key="summarizer").set_value("openai")
    rerun(at)
    at.text_input(key="base_url").set_value(base_url)
    at.text_input(key="llm_model").set_value(model)
    at.text_input(key="api_key").set_value(key)
    return rerun(at)


def _page_text(at: AppTest) -> str:
    parts = [e.value for kind in ("markdown", "caption", "error", "warning", "info", "success")
             for e in at.get(kind) if isinstance(getattr(e, "value", None), str)]
    return "\n".join(parts)


def test_a_paid_endpoint_is_called_only_on_the_button_and_kept():
    with StubServer() as server:
        at = _use_endpoint(_summarizing(start()), server.base_url, "stub-model")
        assert server.requests == []  # reruns never call the endpoint
        assert any("The endpoint is called only when you ask" in i.value for i in at.info)
        next(b for b in at.button if b.label == "Summarize with stub-model").click()
        rerun(at)
        assert len(server.requests) == 1
        assert "Summarizer: LLM summary — stub-model at 127.0.0.1" in _page_text(at)
        at.toggle(key="changed_only").set_value(True)
        rerun(at)
        assert len(server.requests) == 1  # kept for this input: no second call
    assert "sk-page-secret" not in _page_text(at)


def test_a_failing_endpoint_drops_nothing_and_hides_the_key():
    with StubServer() as server:
        at = _use_endpoint(_summarizing(start()), server.base_url, "bad-key", key="sk-must-not-show")
        before = metrics(at)
        next(b for b in at.button if b.label == "Summarize with bad-key").click()
        rerun(at)
    assert any("refused the API key (401)" in e.value for e in at.error)
    assert metrics(at) == before  # still the offline summary: nothing was dropped
    assert "sk-must-not-show" not in _page_text(at)


def test_test_connection_reports_both_ways():
    with StubServer() as server:
        at = _use_endpoint(start(), server.base_url, "stub-model")
        next(b for b in at.sidebar.button if b.label == "Test connection").click()
        rerun(at)
        assert any("connected: stub-model at 127.0.0.1" in s.value for s in at.sidebar.success)
        at = _use_endpoint(at, server.base_url, "missing-model")
        next(b for b in at.sidebar.button if b.label == "Test connection").click()
        rerun(at)
        assert any("does not know the model 'missing-model'" in e.value for e in at.sidebar.error)


# The threshold's two widgets and the meters use one value.

@pytest.mark.parametrize("load", ["paste", "upload", "start empty"])
def test_the_slider_and_number_box_show_the_threshold_in_use_after_a_new_conversation(load):
    at = start()
    assert threshold_widgets(at) == (PRESETS[0].threshold,) * 3
    if load == "paste":
        paste(at, json.dumps(book_scenario()))
    elif load == "upload":
        at.file_uploader(key="upload").set_value(("t.json", json.dumps(book_scenario()).encode(), "application/json"))
        rerun(at)
    else:
        next(b for b in at.button if b.label == "Start empty").click()
        rerun(at)
    used = defaults.defaults_for(at.session_state["model"], read_prices()).threshold  # not the preset's
    assert used != PRESETS[0].threshold and threshold_widgets(at) == (used,) * 3
    assert f"threshold {used:,}" in next(h.proto.body for h in at.get("html") if "cp-meter" in h.proto.body)


def test_user_text_in_messages_shows_literally():
    at = start()
    paste(at, json.dumps({"messages": [{"role": "tool", "tool_call_id": "__init__ *x* :red[y]", "content": "x"}]}))
    shown = at.error[0].value
    assert render.literal("'__init__ *x* :red[y]'") in shown and r"\_\_init\_\_ \*x\*" in shown


# The cost line (item 7): before at its cached price, and no "compacted" cost when nothing was compacted.

def _cost_caption(at: AppTest) -> str:
    return next(c.value for c in at.caption if "Input cost of this request" in c.value)


def test_the_cost_line_prices_before_with_the_cache_and_says_when_nothing_was_compacted():
    at = start()
    compacted = _cost_caption(at)
    assert "with the openai prompt cache" in compacted and " as it will be sent, " in compacted
    assert "tokens read from the cache" in compacted and "Input only" in compacted
    at.sidebar.toggle(key="summarize_on").set_value(False)
    at.sidebar.number_input(key="threshold").set_value(10**7)
    rerun(at)
    untouched = _cost_caption(at)
    assert "Nothing was compacted" in untouched and "as it will be sent" not in untouched


# The person's own conversation is kept beside the presets (item 12).

def test_a_pasted_conversation_survives_choosing_a_preset_and_comes_back():
    at = start()
    body = book_scenario()
    body["model"] = "gpt-4.1"
    paste(at, json.dumps(body))
    own_key = at.session_state["preset"]
    assert own_key.startswith("own:") and at.session_state["model"] == "gpt-4.1"  # its own model, as listed
    captions = " ".join(c.value for c in at.sidebar.caption)
    assert "Your own conversation" in captions and render.literal(PRESETS[0].description) not in captions
    assert not [b for b in at.sidebar.button if b.label == "Reset to preset"]
    at.sidebar.selectbox(key="preset").set_value(PRESETS[1].key)
    rerun(at)
    assert at.session_state["conversation"] == PRESETS[1].conversation
    at.sidebar.selectbox(key="preset").set_value(own_key)
    rerun(at)
    assert at.session_state["conversation"] == formats.read(body)
    assert at.session_state["model"] == "gpt-4.1"


def test_start_empty_keeps_the_pasted_conversation_and_an_unlisted_model_is_kept_and_named():
    at = start()
    body = book_scenario()
    body["model"] = "my-local-llama"
    paste(at, json.dumps(body))
    assert at.session_state["model"] == "my-local-llama"  # counted as itself, never priced as gpt-4o
    assert any("my-local-llama" in w.value and "does not list" in w.value and "price unknown" in w.value
               for w in at.sidebar.warning)
    pasted = at.session_state["preset"]
    next(b for b in at.button if b.label == "Start empty").click()
    rerun(at)
    assert at.session_state["conversation"].items == ()
    assert at.session_state["preset"].startswith("own:") and at.session_state["preset"] != pasted
    own = at.sidebar.selectbox(key="preset").options[:2]  # the person's own come first, newest on top
    assert own[0].startswith("Built here (started ") and own[1].startswith("Your conversation (pasted ")
    at.sidebar.selectbox(key="preset").set_value(pasted)
    rerun(at)
    assert at.session_state["conversation"] == formats.read(body)


def test_editing_a_preset_in_the_builder_makes_it_your_own_and_leaves_the_preset_as_it_was():
    at = start()
    count = len(PRESETS[0].conversation.items)
    at.text_area(key="new_text").set_value("One more question.")
    next(b for b in at.button if b.label == "Add item").click()
    rerun(at)
    assert at.session_state["preset"].startswith("own:")
    assert len(at.session_state["conversation"].items) == count + 1
    at.sidebar.selectbox(key="preset").set_value(PRESETS[0].key)
    rerun(at)
    assert len(at.session_state["conversation"].items) == count


# Save workspace / Open workspace (item 13).

def _tuned() -> AppTest:
    """A session with its own conversation, rules, thresholds, model and summarization settings."""
    at = start()
    body = book_scenario()
    body["model"] = "gpt-4.1"
    paste(at, json.dumps(body))
    at.selectbox(key="ruleset").set_value("masking")
    next(b for b in at.button if b.label == "Use these rules").click()
    rerun(at)
    at.sidebar.number_input(key="threshold").set_value(700)
    at.sidebar.number_input(key="keep_recent").set_value(2)
    at.sidebar.checkbox(key="compact_errors").set_value(True)
    at.sidebar.checkbox(key="limit_follows_threshold").set_value(False)
    rerun(at)
    at.sidebar.number_input(key="summarize_over").set_value(900)
    at.sidebar.number_input(key="keep_steps").set_value(1)
    at.radio(key="summarizer").set_value("openai")
    rerun(at)
    at.text_input(key="api_key").set_value("sk-never-saved")
    at.text_input(key="llm_model").set_value("llama3")
    at.text_input(key="base_url").set_value("http://localhost:11434/v1")
    at.text_area(key="summary_prompt").set_value("Summarize in one line.")
    at.number_input(key="item_budget").set_value(300)
    return rerun(at)


def _open_workspace(at: AppTest, name: str, data: bytes) -> AppTest:
    at.sidebar.file_uploader(key="workspace_upload").set_value((name, data, "application/json"))
    return rerun(at)


def test_a_saved_workspace_opens_in_a_fresh_session_as_it_was():
    from playground.ui.workspace_file import snapshot
    from playground.workbench import workspace

    tuned = _tuned()
    saved = snapshot(tuned.session_state)
    assert saved.threshold == 700 and saved.summarization.limit == 900 and saved.model == "gpt-4.1"
    assert (saved.summarization.prompt, saved.summarization.item_budget) == ("Summarize in one line.", 300)
    data = json.dumps(workspace.to_json(saved)).encode()
    assert b"sk-never-saved" not in data
    fresh = _open_workspace(start(), "tuning.json", data)
    opened = snapshot(fresh.session_state)
    assert opened == saved.__class__(**{**saved.__dict__, "label": opened.label})
    assert opened.label.startswith(saved.label + " (opened ")
    assert metrics(fresh) == metrics(tuned)
    assert threshold_widgets(fresh) == (700, 700, 700)
    assert fresh.session_state["api_key"] == ""  # the key stayed where it was typed


def test_a_bad_workspace_says_where_and_keeps_the_session():
    at = start()
    before, conversation = metrics(at), at.session_state["conversation"]
    bad = {"kind": "compaction-playground-workspace", "version": 1, "threshold": "lots",
           "conversation": {"format": "chat", "request": {"messages": []}}}
    _open_workspace(at, "bad.json", json.dumps(bad).encode())
    assert [e.value for e in at.sidebar.error] == [render.literal("bad.json, threshold: expected int: 'lots' — "
                                                                  "nothing was changed.")]
    assert metrics(at) == before and at.session_state["conversation"] == conversation


# The builder (item 14): a new call gets an id, its result is one action and lands after it, the form clears.

def test_a_new_call_and_its_result_in_two_actions_with_the_form_cleared():
    at = start()
    at.segmented_control(key="new_kind").set_value("tool_call")
    rerun(at)
    at.text_input(key="new_tool").set_value("read_file")
    at.text_area(key="new_arguments").set_value('{"path": "notes.md"}')
    next(b for b in at.button if b.label == "Add item").click()
    rerun(at)
    conversation = at.session_state["conversation"]
    call = next(item for item in conversation.items if getattr(item, "name", "") == "read_file" and
                getattr(item, "arguments", "") == '{"path": "notes.md"}')
    assert call.call_id.startswith("call_") and len(call.call_id) == 29  # made in OpenAI's style
    assert at.text_input(key="new_tool").value == "" and at.text_area(key="new_arguments").value == "{}"
    at.text_area(key="answer_text").set_value("# Notes\nBuy milk.")
    next(b for b in at.button if b.label == "Add this call's result").click()
    rerun(at)
    items = at.session_state["conversation"].items
    call_position = items.index(next(i for i in items if getattr(i, "call_id", None) == call.call_id))
    result = items[call_position + 1]
    assert result.call_id == call.call_id and result.content == "# Notes\nBuy milk."
    assert at.session_state["answer_text"] == ""
    assert not [b for b in at.button if b.label == "Add this call's result"]  # answered: the action is gone


def test_a_long_conversation_picks_its_builder_item_by_number():
    at = start()
    large = next(p for p in PRESETS if len(p.conversation.items) > 200)
    at.sidebar.selectbox(key="preset").set_value(large.key)
    rerun(at)
    assert not [s for s in at.selectbox if s.key == "builder_item"]  # no list of hundreds of labels
    from playground.workbench import builder

    texts = [builder.fields_of(item).text for item in large.conversation.items]
    position = next(p for p, text in enumerate(texts) if p > 0 and text and text != texts[0])
    at.number_input(key="builder_item").set_value(position)
    rerun(at)
    assert at.session_state["edit_text"] == texts[position]


def test_the_workspace_download_reads_every_key_the_snapshot_needs():
    from playground.ui import workspace_file

    tuned = _tuned()
    copied = {key: tuned.session_state[key] for key in workspace_file.KEYS if key in tuned.session_state}
    assert workspace_file.snapshot(copied) == workspace_file.snapshot(tuned.session_state)
