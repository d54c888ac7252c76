"""What it keeps on the page (AppTest): the view beside Run shows the facts by type with their fates,
the lost-then-used first, and the survival line — the engine's figures for the same run; and the
summary's line on which fact types an endpoint's summary dropped."""

from __future__ import annotations

import json

import streamlit as st
from streamlit.testing.v1 import AppTest

from playground.meter.tokens import Meter
from playground.policies import make
from playground.present import TYPE_WORDS, what_it_keeps
from playground.run.fates import KEPT, LOST
from playground.run.prices import read_prices
from playground.run.replay import replay
from playground.ui import state

from .conftest import ROOT, show_tab
from .openai_stub import StubServer
from .test_app import _summarizing, _use_endpoint, paste
from .test_keeps import READS, handmade
from .test_replay_app import healthy

LIMIT = 2_000  # the threshold the page is set to: the summary fires several times over the run


def _keeps_tab(at: AppTest) -> AppTest:
    show_tab(at, "What it keeps")
    return healthy(at.run())


def _frames(at: AppTest):
    """The view's two tables: the totals per type, and every fact."""
    frames = [table.value for table in at.dataframe]
    totals = next(frame for frame in frames if "facts" in frame.columns)
    facts = next(frame for frame in frames if "fate" in frame.columns)
    return totals, facts


def test_what_it_keeps_shows_each_type_with_its_fates_and_the_lost_then_used_first():
    st.cache_data.clear()
    at = paste(healthy(AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()), json.dumps(handmade()))
    at.sidebar.number_input(key=state.THRESHOLD).set_value(LIMIT)
    healthy(at.run())
    at = _keeps_tab(at)
    healthy(at.selectbox(key=state.REPLAY_POLICY).select("summarize").run())
    conversation = at.session_state[state.CONVERSATION]
    expected = what_it_keeps(replay(conversation, make("summarize", limit=LIMIT, keep_steps=at.session_state[
        state.KEEP_STEPS]), Meter("gpt-4o"), read_prices().get("gpt-4o")))
    assert expected.totals["path_read"][LOST] > 0  # the page shows a run that loses facts
    totals, facts = _frames(at)
    assert list(totals["facts"]) == list(TYPE_WORDS.values())
    shown = json.loads(next(t for t in at.dataframe if "facts" in t.value.columns).proto.columns)
    assert {shown[column]["type_config"]["format"] for column in (KEPT, LOST, "stated")} == {"localized"}  # 1,459
    for kind, fates in expected.totals.items():
        row = totals[totals["facts"] == TYPE_WORDS[kind]].iloc[0]
        assert {fate: row[fate] for fate in fates} == fates
    assert len(facts) == len(expected.facts)
    first = facts.iloc[0]
    assert (first["type"], first["fact"], first["fate"], first["used after lost (call)"]) == (
        "path read", "src/mod_000.py", LOST, f"{READS + 2}")
    assert set(facts["used after lost (call)"][facts["fate"] == KEPT]) == {"—"}  # (a blank, not Python's None)
    assert set(facts["fate"]) == {KEPT, LOST}
    warning = next(w.value for w in at.warning if w.value.startswith("**Lost, then used**"))
    assert f"call {READS + 2}: the path read “src/mod\\_000.py”" in warning
    [chart] = at.get("vega_lite_chart")  # the survival line, a step per type
    assert '"interpolate": "step-after"' in chart.proto.spec and '"field": "share"' in chart.proto.spec


def test_the_summary_says_which_fact_types_the_endpoints_summary_dropped():
    """The stub's summary names none of the book scenario's paths: the line says so, per type."""
    st.cache_data.clear()
    with StubServer() as server:
        at = _use_endpoint(_summarizing(healthy(AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run())),
                           server.base_url, "stub-model")
        assert not [c for c in at.caption if c.value.startswith("Facts")]  # the offline summary: no such line
        next(b for b in at.button if b.label == "Summarize with stub-model").click()
        healthy(at.run())
    line = next(c.value for c in at.caption if c.value.startswith("Facts"))
    assert line.startswith("Facts the endpoint's summary dropped (not in it word for word): paths written (1 of 1)")
