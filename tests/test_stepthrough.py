"""The step-through: driven by the engine's own pass (its end state is compact()'s result), its
navigation, and its controls on the page.

Every frame comes from ``compaction.walk``, the pass ``compact()`` runs to the end.
"""

from __future__ import annotations

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from playground import compaction, formats
from playground.compaction import Settings, compact
from playground.conversation import Message
from playground.meter.tokens import Meter
from playground.present import stepthrough
from playground.summarize import cut
from playground.tune import rulesets
from playground.workbench.presets import list_presets

from .conftest import ROOT, TRACES, load_shared, show_tab

PRESETS = list_presets()
BY_KEY = {preset.key: preset for preset in PRESETS}
TRACE_FILES = ["sweagent_marshmallow-1867_function_calling.openai.json",
               "invariant_explorer_webarena_trace2.openai.json", "miniswe_pr_astropy-12907.openai.json"]


def walked(key: str, **changes) -> tuple[stepthrough.Walk, compaction.Compaction]:
    preset = BY_KEY[key]
    settings = Settings(**{"threshold": 0, "keep_recent": preset.keep_recent, **changes})
    meter = Meter(preset.model)
    return (stepthrough.walk(preset.conversation, preset.rules, settings, meter),
            compact(preset.conversation, preset.rules, settings, meter=meter))


# --- the engine's pass and compact() agree ---------------------------------------------------

@pytest.mark.parametrize("preset", PRESETS, ids=lambda preset: preset.key)
def test_the_step_through_ends_where_compact_does_on_every_preset(preset):
    meter = Meter(preset.model)
    for settings in (Settings(threshold=0, keep_recent=preset.keep_recent), Settings(threshold=0, keep_recent=2,
                                                                                    compact_errors=True)):
        done = compact(preset.conversation, preset.rules, settings, meter=meter)
        walk = stepthrough.walk(preset.conversation, preset.rules, settings, meter)
        assert walk.items == done.conversation.items
        assert sum(frame.edit for frame in walk.frames) == len(done.report.edits)
        assert sum(frame.kind == "verdict" for frame in walk.frames) == len(done.report.edits) + len(
            done.report.skipped)


@pytest.mark.parametrize("name", TRACE_FILES)
@pytest.mark.parametrize("ruleset", ["book", "aggressive", "masking"])
def test_the_step_through_ends_where_compact_does_on_every_trace(name, ruleset):
    conversation = formats.read(load_shared(TRACES / name))
    rules = rulesets.RULESETS[ruleset].make(conversation)
    meter = Meter(conversation.model)
    settings = Settings(threshold=0, keep_recent=1)
    done = compact(conversation, rules, settings, meter=meter)
    walk = stepthrough.walk(conversation, rules, settings, meter)
    assert walk.items == done.conversation.items
    assert sum(frame.edit for frame in walk.frames) == len(done.report.edits)


# --- frames and navigation ----------------------------------------------------------------------

def test_frames_follow_the_pass_and_navigation_finds_edits():
    walk, done = walked("coding-agent")
    assert walk.items == done.conversation.items
    kinds = [frame.kind for frame in walk.frames]
    assert kinds[0] == "lookup" and kinds[-1] == "verdict"
    assert [frame.position for frame in walk.frames] == sorted(frame.position for frame in walk.frames)
    first = walk.next_edit(-1)
    assert walk.frames[first].edit and not any(frame.edit for frame in walk.frames[:first])
    assert walk.next_edit(max(frame.index for frame in walk.frames if frame.edit)) is None
    edits = [frame for frame in walk.frames if frame.edit]
    assert [frame.position for frame in edits] == [edit.position for edit in done.report.edits]
    for position in walk.positions():
        assert walk.frames[walk.first_at(position)].position == position
    assert walk.first_at(len(done.conversation.items)) is None


def test_the_arguments_table_fills_by_call_id_as_the_pass_moves():
    walk, _ = walked("book-report")
    items = BY_KEY["book-report"].conversation.items
    sizes = [len(walk.remembered(frame)) for frame in walk.frames]
    assert sizes == sorted(sizes) and sizes[-1] > sizes[0]
    result = next(frame for frame in walk.frames if frame.kind == "lookup" and "result of read_file" in frame.title)
    call_id = items[result.position].call_id
    assert call_id in {row.call_id for row in walk.remembered(result)}
    assert "file_path" in result.detail  # the arguments its template reads, remembered from the call


def test_a_skipped_item_shows_the_guard_that_stopped_it():
    walk, done = walked("coding-agent")
    waiting = next(skip for skip in done.report.skipped if skip.reason == "not_processed")
    verdict = next(frame for frame in walk.frames if frame.kind == "verdict" and frame.position == waiting.position)
    assert not verdict.edit and "not processed by the model yet" in verdict.outcome
    assert verdict.guards and not verdict.guards[-1].passed


def test_rows_html_highlights_the_current_item_and_escapes():
    walk, _ = walked("book-report")
    frame = walk.frames[walk.next_edit(-1)]
    html = stepthrough.rows_html(walk, BY_KEY["book-report"].conversation, frame.position)
    assert html.count('class="st-current') == 1 and html.count("<tr") == 6  # header + two either side + itself
    items = list(BY_KEY["book-report"].conversation.items)
    items[frame.position - 1] = Message(role="user", content="<script>alert(1)</script>")
    html = stepthrough.rows_html(walk, BY_KEY["book-report"].conversation.with_items(items), frame.position)
    assert "<script" not in html and "&lt;script&gt;" in html


# --- the page ---------------------------------------------------------------------------------

@pytest.fixture
def page():
    st.cache_data.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    show_tab(at, "Step-through")
    return healthy(at.run())


def healthy(at: AppTest) -> AppTest:
    assert not at.exception, at.exception
    assert not [e.value for e in at.error if "Something went wrong" in e.value]
    return at


def title(at: AppTest) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("**item "))


def test_step_through_controls(page):
    at = page
    assert at.session_state["step_index"] == 0 and "look up the rule" in title(at)
    at = healthy(at.button(key="step_forward").click().run())
    assert at.session_state["step_index"] == 1
    at = healthy(at.button(key="step_back").click().run())
    assert at.session_state["step_index"] == 0
    at = healthy(at.button(key="step_next_edit").click().run())
    assert "replaced" in title(at) and [s.value for s in at.success if "replaced by" in s.value]
    assert at.html and any("st-current" in h.value for h in at.html)
    target = stepthrough.walk(BY_KEY["book-report"].conversation, BY_KEY["book-report"].rules,
                              Settings(BY_KEY["book-report"].threshold), Meter("gpt-4o")).positions()[-1]
    at = healthy(at.selectbox(key="step_jump").set_value(target).run())
    assert title(at).startswith(f"**item {target} ")
    at = healthy(at.button(key="step_reset").click().run())
    assert at.session_state["step_index"] == 0


def test_a_rule_set_with_no_match_says_so(page):
    at = page
    at.session_state["call_rules_base"] = []
    at.session_state["result_rules_base"] = []
    at = healthy(at.run())
    assert [i.value for i in at.info if "No rule matches" in i.value]


@pytest.mark.parametrize("preset", PRESETS, ids=lambda preset: preset.key)
@pytest.mark.parametrize("keep_steps", [1, 3])
def test_the_cut_ends_where_summarization_cuts(preset, keep_steps):
    cuts = stepthrough.cut_frames(preset.conversation, keep_steps)
    where = cut.span(preset.conversation.items, keep_steps)
    if where is None:
        return
    assert cuts and cuts[-1].position == where[1]
    assert [cut.position for cut in cuts] == sorted((cut.position for cut in cuts), reverse=True)


def test_switching_preset_mid_walk_keeps_the_step_through_working(page):
    at = page
    labels = at.selectbox(key="step_jump").options
    assert all(label.startswith("item ") and (" · call to " in label or " · result of " in label) for label in labels)
    last = int(labels[-1].split()[1])  # "item 21 · result of read_file (id …)": the list names role and tool
    at = healthy(at.selectbox(key="step_jump").set_value(last).run())
    assert at.session_state["step_index"] > 0
    at = healthy(at.selectbox(key="preset").set_value("research-agent").run())
    assert title(at).startswith("**item ")  # the step index is kept within the new walk
    at = healthy(at.button(key="step_next_edit").click().run())
    assert "replaced" in title(at)
