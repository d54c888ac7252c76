"""The Run and Compare views through AppTest: they draw without error, and their numbers are the
engine's own for the same conversation and settings."""

from __future__ import annotations

import json

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from playground.meter.tokens import Meter
from playground.policies import OURS, make
from playground.policies.provenance import source_of
from playground.run.compare import compare
from playground.run.prices import read_prices
from playground.run.replay import replay
from playground.ui import run_setup, state
from playground.ui.workspace_file import saved_values, snapshot
from playground.workbench import presets, workspace

from .conftest import ROOT, show_tab


@pytest.fixture(autouse=True)
def _fresh_caches():
    st.cache_data.clear()
    yield


def start(tab: str = "Run") -> AppTest:
    """The page with ``tab`` open (the Run and Compare tabs draw only while open)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    show_tab(at, tab)
    return healthy(at.run())


def healthy(at: AppTest) -> AppTest:
    assert not at.exception, at.exception
    assert not [e.value for e in at.error if "Something went wrong" in e.value]
    return at


def _metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def test_run_view_shows_the_engines_totals_and_charts():
    at = start()
    healthy(at.selectbox(key=state.REPLAY_POLICY).select("masking").run())
    conversation, model = at.session_state["conversation"], at.session_state["model"]
    price = read_prices().get(model)
    run = replay(conversation, make("masking", window=10), Meter(model), price, mode="stored", cache=price.cache)
    assert _metric(at, "Prompt tokens billed") == f"{run.totals.tokens_with:,}"
    assert _metric(at, "Cost") == f"${run.totals.cost_with:.4f}"
    assert len(at.get("vega_lite_chart")) >= 3
    assert at.session_state[state.REPLAY_CALL] == len(run.calls) - 1  # the slider starts on the last call


def test_the_tokens_chart_says_what_its_red_line_is_or_why_there_is_none():
    """A policy with a prompt threshold has its line; one that acts on a measure of its own (Aider's
    done turns, a window of calls) had a caption naming a red line that was not there."""
    at = start()
    captions = " ".join(caption.value for caption in at.caption)  # (the rules: a threshold)
    assert "The red line is its threshold." in captions
    healthy(at.selectbox(key=state.REPLAY_POLICY).select("aider-summary").run())
    captions = " ".join(caption.value for caption in at.caption)
    assert "red line" not in captions
    assert ("aider-summary acts on a measure of its own, not the prompt's size (max_chat_history_tokens=8000, "
            "context_window=128000): no line is drawn.") in captions  # (gpt-4o's window: a sixteenth)


def test_a_firing_repaid_on_the_call_that_fired_is_said_so():
    """The book's report fires the rules once, and the firing repays its cache miss at once: the caption
    once said "after 0 more calls at most"."""
    at = start()
    caption = next(caption.value for caption in at.caption if caption.value.startswith("The policy fired"))
    assert caption.startswith("The policy fired 1 time; 1 of those firings repaid their cache miss (each on the call "
                              "that fired).")


def test_run_view_controls_change_the_run():
    at = start()
    healthy(at.radio(key=state.REPLAY_MODE).set_value("per-call").run())
    healthy(at.selectbox(key=state.REPLAY_CACHE).select("none").run())
    healthy(at.selectbox(key=state.REPLAY_POLICY).select("clear-tool-uses").run())
    healthy(at.number_input(key=state.REPLAY_TRIGGER).set_value(0).run())
    healthy(at.slider(key=state.REPLAY_CALL).set_value(0).run())
    assert at.session_state[state.REPLAY_CALL] == 0
    assert "Call 0 (item" in " ".join(caption.value for caption in at.caption)


def test_the_cache_choice_offers_only_the_models_providers_cache_or_none():
    at = start()
    assert at.session_state["model"] == "gpt-4o"
    assert at.selectbox(key=state.REPLAY_CACHE).options == ["openai", "none"]
    healthy(at.selectbox(key="model").select("claude-sonnet-4-5").run())
    assert at.selectbox(key=state.REPLAY_CACHE).options == ["anthropic", "none"]
    assert at.session_state[state.REPLAY_CACHE] == "anthropic"  # openai no longer fits: back to the provider's


def test_edited_prices_change_the_cost():
    at = start()
    model = at.session_state["model"]
    before = _metric(at, "Cost")
    healthy(at.number_input(key=f"replay_price_output_{model}").set_value(1000.0).run())
    assert _metric(at, "Cost") != before


def test_compare_view_lists_every_policy_with_the_engines_costs():
    at = start("Compare")
    conversation, model = at.session_state["conversation"], at.session_state["model"]
    frame = next(table.value for table in at.dataframe if "policy" in table.value.columns)
    assert list(frame["policy"]) == list(OURS)  # the agents' own are chosen, not on by default
    price = read_prices().get(model)
    baseline = compare(conversation, [make("none")], Meter(model), price, cache=price.cache)[0]
    none = frame[frame["policy"] == "none"].iloc[0]
    assert none["tokens billed"] == baseline.tokens_billed
    assert (frame["tokens billed"] <= none["tokens billed"]).all()
    table = next(table for table in at.dataframe if "policy" in table.value.columns)
    shown = json.loads(table.proto.columns)  # token counts read 1,487,239,744, not 1487239744
    assert all(shown[name]["type_config"]["format"] == "localized"
               for name in ("tokens final", "tokens billed", "cached", "lost", "retrievable"))
    assert shown["cost (US$)"]["type_config"]["format"] == shown["summaries (US$)"]["type_config"]["format"] == "%.4f"
    assert frame[frame["policy"] == "masking"].iloc[0]["parameters"] == "window=10"  # (as the Run chart's caption says)


def test_compare_view_adds_the_agents_own_policies_with_their_sources_and_summaries_billed():
    at = start("Compare")
    conversation, model = at.session_state["conversation"], at.session_state["model"]
    chosen = ["langchain-summarization", "swe-agent-last-n", "gemini-chat-compression", "aider-summary",
              "roo-code-condense", "opencode-summary"]
    healthy(at.multiselect(key=state.COMPARE_THEIRS).set_value(chosen).run())
    frame = next(table.value for table in at.dataframe if "policy" in table.value.columns)
    assert list(frame["policy"]) == [*OURS, *chosen]
    assert list(frame["source"])[-len(chosen):] == [source_of(name) for name in chosen]
    price = read_prices().get(model)
    rows = compare(conversation, [make(name) for name in chosen], Meter(model), price, cache=price.cache)
    shown = frame.set_index("policy")
    for row in rows:
        assert shown.loc[row.policy, "cost (US$)"] == round(row.cost, 4)
        assert shown.loc[row.policy, "summaries (US$)"] == round(row.summarization_cost, 4)


def test_run_view_replays_one_of_the_agents_policies_and_names_its_source():
    at = start()
    healthy(at.selectbox(key=state.REPLAY_POLICY).select("codex-compact").run())
    conversation, model = at.session_state["conversation"], at.session_state["model"]
    price = read_prices().get(model)
    run = replay(conversation, make("codex-compact", context_window=price.context_window), Meter(model), price,
                 cache=price.cache)
    assert _metric(at, "Cost") == f"${run.totals.cost_with:.4f}"
    assert any(source_of("codex-compact") in caption.value for caption in at.caption)


def test_the_extra_replays_can_be_switched_off():
    at = start()
    charts = len(at.get("vega_lite_chart"))
    healthy(at.toggle(key=state.REPLAY_SWEEP).set_value(False).run())
    assert len(at.get("vega_lite_chart")) == charts - 1
    at = start("Compare")
    healthy(at.toggle(key="compare_show").set_value(False).run())
    assert not [table for table in at.dataframe if "policy" in table.value.columns]


def test_summarize_policy_follows_the_pages_summarization_settings():
    at = start()
    healthy(at.selectbox(key=state.REPLAY_POLICY).select("summarize").run())
    healthy(at.number_input(key="keep_steps").set_value(1).run())
    conversation, model = at.session_state["conversation"], at.session_state["model"]
    limit = int(at.session_state["summarize_over"])
    price = read_prices().get(model)
    run = replay(conversation, make("summarize", limit=limit, keep_steps=1), Meter(model), price,
                 cache=price.cache)
    assert _metric(at, "Prompt tokens billed") == f"{run.totals.tokens_with:,}"


def test_run_and_compare_draw_nothing_while_closed():
    at = start("Before / after")
    assert state.REPLAY_POLICY not in at.session_state and not at.get("vega_lite_chart")


def test_run_settings_and_typed_prices_survive_another_tab():
    at = start()
    model = at.session_state["model"]
    healthy(at.selectbox(key=state.REPLAY_POLICY).select("masking").run())
    healthy(at.number_input(key=state.REPLAY_WINDOW).set_value(4).run())
    healthy(at.number_input(key=f"replay_price_input_{model}").set_value(9.0).run())
    healthy(at.slider(key=state.REPLAY_CALL).set_value(1).run())
    show_tab(at, "Before / after")
    healthy(at.run())
    assert at.session_state[state.REPLAY_CALL] == 1  # the Before / after view can read the chosen call
    show_tab(at, "Run")
    healthy(at.run())
    assert at.session_state[state.REPLAY_POLICY] == "masking" and at.session_state[state.REPLAY_WINDOW] == 4
    assert at.session_state[f"replay_price_input_{model}"] == 9.0
    assert not at.warning  # no widget was given a value twice


@pytest.mark.parametrize("preset", [preset.key for preset in presets.list_presets()])
@pytest.mark.parametrize("tab", ["Run", "Compare"])
def test_every_preset_replays_without_error(preset, tab):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    show_tab(at, tab)
    healthy(at.run())
    healthy(at.selectbox(key="preset").select(preset).run())
    if tab == "Run":
        assert _metric(at, "Calls")
    else:
        at.session_state["compare_show"] = True
        healthy(at.run())
        assert [table for table in at.dataframe if "policy" in table.value.columns]


def _rows_in_before_after(at: AppTest) -> int:
    """Items in the Before / after table (one ``<tr>`` per item in its body)."""
    table = next(html.proto.body for html in at.get("html") if 'class="cp-rows"' in html.proto.body)
    return table.count("<tr class=")


def test_choosing_a_call_shows_its_request_in_before_after_and_the_button_goes_back():
    at = start()
    healthy(at.selectbox(key=state.REPLAY_POLICY).select("masking").run())
    conversation = at.session_state["conversation"]
    starts = replay(conversation, make("none"), Meter(at.session_state["model"]),
                    read_prices().get(at.session_state["model"])).calls
    show_tab(at, "Before / after")
    healthy(at.run())
    whole = _rows_in_before_after(at)
    assert not [i for i in at.info if "Showing call" in i.value]  # nothing chosen: the whole view, as before
    show_tab(at, "Run")
    healthy(at.run())
    healthy(at.slider(key=state.REPLAY_CALL).set_value(1).run())
    show_tab(at, "Before / after")
    healthy(at.run())
    heading = f"Showing call 1 of {len(starts)} (calls 0–{len(starts) - 1}, chosen in the Run tab)"
    assert [i.value for i in at.info if i.value.startswith(heading)]
    assert _rows_in_before_after(at) == starts[1].position < whole
    befores = [m.value for m in at.metric if m.label == "Before"]  # the page's headline, then the call's
    assert befores[-1] == f"{starts[1].tokens_without:,}" != befores[0]
    healthy(at.button(key="call_view_back").click().run())
    assert not [i for i in at.info if "Showing call" in i.value]
    assert _rows_in_before_after(at) == whole


def test_run_settings_and_typed_prices_come_back_from_a_saved_workspace():
    at = start()
    model = at.session_state["model"]
    healthy(at.selectbox(key=state.REPLAY_POLICY).select("clear-tool-uses").run())
    healthy(at.number_input(key=state.REPLAY_TRIGGER).set_value(2000).run())
    healthy(at.radio(key=state.REPLAY_MODE).set_value("per-call").run())
    healthy(at.number_input(key=f"replay_price_input_{model}").set_value(7.5).run())
    cost = _metric(at, "Cost")
    show_tab(at, "Compare")
    healthy(at.run())
    healthy(at.radio(key="compare_mode").set_value("per-call").run())
    show_tab(at, "Before / after")  # the Run tab closed: its values must still be saved
    healthy(at.run())
    saved = workspace.to_json(snapshot(saved_values(at.session_state)))
    assert saved["replay"]["prices"] == {model: {"input": 7.5}}  # only what was typed over the data file
    fresh = start()
    assert fresh.session_state[state.REPLAY_POLICY] == "rules" and _metric(fresh, "Cost") != cost
    show_tab(fresh, "Before / after")  # opened while the Run tab is closed
    healthy(fresh.run())
    fresh.sidebar.file_uploader(key="workspace_upload").set_value(
        ("run.json", json.dumps(saved).encode(), "application/json"))
    healthy(fresh.run())
    healthy(fresh.run())  # a rerun that does not draw the Run tab keeps what the file set
    show_tab(fresh, "Run")
    healthy(fresh.run())
    assert fresh.session_state[state.REPLAY_POLICY] == "clear-tool-uses"
    assert fresh.session_state["compare_mode"] == "per-call"
    assert fresh.session_state[state.REPLAY_TRIGGER] == 2000 and fresh.session_state[state.REPLAY_MODE] == "per-call"
    assert fresh.session_state[f"replay_price_input_{model}"] == 7.5
    assert fresh.number_input(key=f"replay_price_input_{model}").value == 7.5
    assert _metric(fresh, "Cost") == cost and not fresh.warning


def _reads(calls: int) -> bytes:
    """A Chat run of ``calls`` file reads, as a person would upload it."""
    messages: list[dict] = [{"role": "user", "content": "Read the modules."}]
    for n in range(calls):
        call = {"name": "read_file", "arguments": json.dumps({"path": f"m{n}.py"})}
        messages += [{"role": "assistant", "content": None,
                      "tool_calls": [{"id": f"c{n}", "type": "function", "function": call}]},
                     {"role": "tool", "tool_call_id": f"c{n}", "content": f"line of module {n}\n" * 5}]
    return json.dumps({"model": "gpt-4o", "messages": messages}).encode()


@pytest.mark.parametrize("tab", ["Run", "Compare"])
def test_a_long_replay_shows_how_many_calls_are_done_of_how_many(tab):
    """Past the light run's length a replay (and a compare, each policy's calls) takes seconds: the
    page shows a status box with a bar of calls done of calls, complete once the run is."""
    at = start(tab)
    calls = run_setup.LIGHT_RUN + 1
    at.file_uploader(key="upload").set_value(("long.json", _reads(calls), "application/json"))
    healthy(at.run())
    if tab == "Compare":
        at.session_state[state.COMPARE_SHOW] = True
        healthy(at.run())
    replays = calls * (len(OURS) if tab == "Compare" else 1)
    [box] = [box for box in at.status if box.label.startswith(f"Replaying {calls:,} calls under")]
    assert box.state == "complete"
    [bar] = box.get("progress")
    assert bar.value == 100 and bar.proto.text == f"{replays:,} of {replays:,} calls"
    short = start(tab)  # the preset is a short run: the spinner, no box
    assert not [box for box in short.status if box.label.startswith("Replaying")]


def test_compare_view_offers_the_on_demand_letta_and_adk_compaction_with_their_sources():
    at = start("Compare")
    chosen = ["anthropic-compaction-on-demand", "letta-sliding-window", "adk-token-compaction"]
    healthy(at.multiselect(key=state.COMPARE_THEIRS).set_value(chosen).run())
    frame = next(table.value for table in at.dataframe if "policy" in table.value.columns)
    assert list(frame["policy"]) == [*OURS, *chosen]
    assert list(frame["source"])[-len(chosen):] == [source_of(name) for name in chosen]
