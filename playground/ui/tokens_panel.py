"""The Where the tokens go tab: each tool's calls and results apart, largest first, with a button
that adds a rule for a large one that has none."""

from __future__ import annotations

import streamlit as st

from ..conversation import Conversation
from ..meter import TokenCount
from ..present import render
from ..rules import Rules, breakdown
from . import state, widgets


def _add_rule(tool: str, kind: str) -> None:
    calls, results = state.rule_rows()
    row = breakdown.suggest_rule(st.session_state[state.CONVERSATION], tool, kind)
    (calls if kind == "call" else results).append(row)
    state.set_rule_rows(calls, results)
    state.changed("rules")


def panel(conversation: Conversation, count: TokenCount, rules: Rules) -> None:
    shares = breakdown.tool_shares(conversation, count, rules)
    st.caption("Each tool's calls and results apart, largest first. A large share with no rule is where a rule "
               "pays off most.")
    st.dataframe(
        [{"tool": row.tool or "(messages)", "calls or results": row.kind, "items": row.items, "tokens": row.tokens,
          "share": row.share, "largest item": row.largest, "largest at": f"#{row.largest_position}",
          "rule": "yes" if row.has_rule else ("—" if row.kind == "message" else "no")} for row in shares],
        column_config={**widgets.counts("tokens", "largest item"),
                       "share": st.column_config.ProgressColumn("share", format="percent", min_value=0, max_value=1)},
        hide_index=True, width="stretch",
    )
    fixed = [row for row in shares if breakdown.worth_a_rule(row)]
    for row in fixed:
        noun = "calls" if row.kind == "call" else "results"
        st.button(f"Add a rule for {render.literal(row.tool)} {noun} ({row.share:.0%} of the request)",
                  key=state.add_rule_key(row.kind, row.tool), on_click=_add_rule, args=(row.tool, row.kind),
                  help="Adds a row to the rule table, with a template that names this tool's own arguments. "
                       "Edit it in the tables of the Before / after tab.")
    if not fixed:
        st.caption("No tool without a rule holds 5% or more of the request.")
