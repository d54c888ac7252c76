"""The What it keeps view: the facts the run depends on (the user's requirements, the paths read and
written, the commands, the errors) and what the Run view's policy does to them — each one's fate at
the end of the run and where it was stated, the lost facts the agent used later first, and per type
the share still kept or recoverable call by call. Every figure comes from ``present.keeps``; this
module only lays it out."""

from __future__ import annotations

import altair as alt
import streamlit as st

from ..compaction import Settings
from ..conversation import Conversation
from ..present import TYPE_WORDS, literal, what_it_keeps
from ..rules import Rules
from ..run import call_starts
from ..summarize import SummarySettings
from ..words import plural
from . import run_setup, state, widgets

SHOWN_USED = 10  # lost-then-used facts written out; the table holds them all


def _survival_chart(rows: tuple[dict, ...]) -> None:
    chart = alt.Chart(alt.Data(values=list(rows))).mark_line(interpolate="step-after", point=True).encode(
        x=alt.X("call:Q", title="call", axis=alt.Axis(format="d", tickMinStep=1)),
        y=alt.Y("share:Q", title="kept or recoverable", axis=alt.Axis(format=".0%"), scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("type:N", title="facts", sort=list(TYPE_WORDS.values())),
        tooltip=["call:Q", "type:N", alt.Tooltip("share:Q", format=".0%"), "stated:Q", "kept:Q", "recoverable:Q",
                 "lost:Q"])
    st.altair_chart(chart, width="stretch")
    st.caption("Of each type's facts stated so far, the share the request still shows or holds behind a reference "
               "the agent can follow, at each call: it drops where the policy takes facts away and climbs again where "
               "the agent states them anew.")


def panel(conversation: Conversation, rules: Rules, settings: Settings, summary: SummarySettings | None,
          model: str) -> None:
    """The What it keeps tab, under the policy chosen here or in the Run view (with the Run view's settings)."""
    left, right = st.columns([1, 2], vertical_alignment="bottom")
    widgets.policy_choice(left, state.REPLAY_POLICY)
    right.caption("The Run tab's mode, cache and policy settings apply. A fact is **kept** while the request shows "
                  "it, **recoverable** while it is behind a reference the agent can follow, **lost** otherwise "
                  "(summarized away, masked, cleared).")
    policy, _ = run_setup.chosen_policy(rules, settings, summary, model)
    calls = len(call_starts(conversation.items))
    with widgets.replaying(f"Following the facts of {plural(calls, 'call')} under {policy.name}…", calls) as progress:
        view = what_it_keeps(run_setup.replayed(conversation, policy, model, progress=progress))
    if not view.calls:
        st.info("This conversation has no assistant turn, so no request carries its facts.", icon=":material/info:")
        return
    if not view.facts:
        st.info("The ledger finds no requirement, path, command or error stated before the last call of this run.",
                icon=":material/info:")
        return
    used = view.lost_then_used
    if used:
        lines = [f"- call {fact.used_at}: the {fact.kind} “{literal(fact.head)}” (item {fact.item}, characters "
                 f"{fact.span[0]}–{fact.span[1]})" for fact in used[:SHOWN_USED]]
        more = f"\n\n… and {len(used) - SHOWN_USED} more, first in the table below." if len(used) > SHOWN_USED else ""
        st.warning(f"**Lost, then used** ({plural(len(used), 'fact')}): the agent used these after {policy.name} had "
                   "taken them from its request, with nothing to bring them back.\n\n" + "\n".join(lines) + more,
                   icon=":material/warning:")
    totals = [{"facts": TYPE_WORDS[kind], **fates, "stated": sum(fates.values())}
              for kind, fates in view.totals.items()]
    st.dataframe(totals, hide_index=True,
                 column_config=widgets.counts(*(name for name in totals[0] if name != "facts")))
    st.caption(f"At the end of the run ({plural(view.calls, 'call')}), under {policy.name}."
               + (f" {plural(view.unreached, 'fact')} stated only in the last reply, which no request carries, "
                  "are left out." if view.unreached else ""))
    _survival_chart(view.survival)
    st.dataframe([{"type": fact.kind, "fate": fact.fate, "fact": fact.text, "item": fact.item,
                   "characters": f"{fact.span[0]}–{fact.span[1]}",
                   "used after lost (call)": "—" if fact.used_at is None else f"{fact.used_at}"}
                  for fact in view.facts], hide_index=True)
    st.caption("Every fact, the lost-then-used first, then by type, lost before recoverable before kept. *item* is "
               "where it was first stated (its position in the conversation) and *characters* where in that item.")
