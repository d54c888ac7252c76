"""Hidden-then-used on the page (AppTest): the Compare column beside cost, the Run chart's marks
with their caption, and Before / after flagging the item and the piece used — the engine's
figures for the same run."""

from __future__ import annotations

import streamlit as st
from streamlit.testing.v1 import AppTest

from playground.meter.tokens import Meter
from playground.policies import MaskingPolicy
from playground.run.compare import compare
from playground.run.hidden import calls_with
from playground.run.prices import read_prices
from playground.run.replay import replay
from playground.ui import state

from .conftest import ROOT, show_tab
from .test_replay_app import healthy

PRESET = "long-session"  # masking's window hides outputs the agent quotes later


def _page(tab: str) -> AppTest:
    st.cache_data.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    show_tab(at, tab)
    healthy(at.run())
    return healthy(at.selectbox(key="preset").select(PRESET).run())


def test_compare_shows_hidden_then_used_beside_cost():
    at = _page("Compare")
    at.session_state["compare_show"] = True
    healthy(at.run())
    frame = next(table.value for table in at.dataframe if "policy" in table.value.columns)
    columns = list(frame.columns)
    assert columns.index("hidden then used (calls)") == columns.index("cost (US$)") + 1
    conversation, model = at.session_state["conversation"], at.session_state["model"]
    price = read_prices().get(model)
    masking = compare(conversation, [MaskingPolicy()], Meter(model), price, cache=price.cache)[0]
    row = frame[frame["policy"] == "masking"].iloc[0]
    assert (row["hidden then used (calls)"], row["of those lost"]) == (masking.hidden_used_calls,
                                                                       masking.hidden_used_lost) != (0, 0)
    assert frame[frame["policy"] == "none"].iloc[0]["hidden then used (calls)"] == 0


def test_run_marks_the_calls_and_before_after_flags_the_item_and_its_span():
    at = _page("Run")
    healthy(at.selectbox(key=state.REPLAY_POLICY).select("masking").run())
    conversation, model = at.session_state["conversation"], at.session_state["model"]
    run = replay(conversation, MaskingPolicy(), Meter(model), read_prices().get(model))
    used = calls_with(run.hidden_used)
    assert used and [c.value for c in at.caption if c.value.startswith(f"▲ {used} call")]
    first = run.hidden_used[0]
    healthy(at.slider(key=state.REPLAY_CALL).set_value(first.call).run())
    show_tab(at, "Before / after")
    healthy(at.run())
    flags = [w.value for w in at.warning if "used" in w.value and "hidden" in w.value]
    assert flags and f"item {first.item}" in flags[0] and "lost" in flags[0]
    table = next(html.proto.body for html in at.get("html") if 'class="cp-rows"' in html.proto.body)
    row = table[table.index(f"#{first.item} ·"):].split("</tr>", 1)[0]  # the item's own row is flagged too
    assert "hidden, then used by this call" in row and first.span in row
