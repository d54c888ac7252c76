"""The Compare view: the same run under every policy, one row each (``playground.compare``)."""

from __future__ import annotations

import altair as alt
import streamlit as st

from .. import run
from ..compaction import Settings
from ..conversation import Conversation
from ..policies import LOGGED, OURS, THEIRS, make, offered, read_provenance, source_of
from ..present import literal
from ..rules import Rules
from ..run import UNKNOWN_NOTE, call_starts, known
from ..summarize import SummarySettings
from ..words import parameters, plural
from ..workbench.workspace import ReplaySettings
from . import run_setup, state, widgets


def _dollars(cost: float) -> float | None:
    """A cost for the table: None (an empty cell) when the price is unknown, never a number made up."""
    value = known(cost)
    return None if value is None else round(value, 4)


def panel(conversation: Conversation, rules: Rules, settings: Settings, summary: SummarySettings | None,
          model: str) -> None:
    """The Compare tab: mode and cache, then the policies table and their costs."""
    left, right = st.columns(2)
    state.start(state.COMPARE_MODE, ReplaySettings().compare_mode)
    widgets.mode_choice(left, state.COMPARE_MODE)
    with right:
        widgets.cache_choice(model, state.COMPARE_CACHE)
    calls = len(call_starts(conversation.items))
    state.start(state.COMPARE_SHOW, calls <= run_setup.LIGHT_RUN)
    if not st.toggle("Compare the policies", key=state.COMPARE_SHOW,
                     help=f"Replays the whole run ({plural(calls, 'call')}) once per policy; on a long run that "
                          "takes a while, so it starts off above 200 calls."):
        return
    titles = read_provenance()
    state.start(state.COMPARE_THEIRS, [])
    theirs = st.multiselect("Also compare the agents' and providers' own compaction", list(THEIRS),
                            key=state.COMPARE_THEIRS,
                            format_func=lambda name: titles[name].title,
                            help="Each with its source's own parameters (the table says where they were read). "
                                 "Each one is one more replay of the whole run, so they are chosen, not on by default.")
    price = run_setup.price(model, conversation.started)
    options = run_setup.policy_settings(rules, settings, summary, model)
    names = offered((*OURS, *theirs, *LOGGED), conversation)  # and the run as it ran, where the log compacted
    with widgets.replaying(f"Replaying {plural(calls, 'call')} under {plural(len(names), 'policy', 'policies')}…",
                           calls * len(names)) as progress:
        rows = run.compare(conversation, [make(name, options) for name in names], state.engine().meter(model), price,
                           mode=st.session_state[state.COMPARE_MODE], cache=st.session_state[state.COMPARE_CACHE],
                           progress=progress)
    # the long parameters last, so cost and what the policy hid from the agent are in view side by side
    table = [{"policy": row.policy, "baseline": row.baseline, "tokens final": row.tokens_final,
              "tokens billed": row.tokens_billed,
              "cached": row.cached_tokens, "cost (US$)": _dollars(row.cost),
              "hidden then used (calls)": row.hidden_used_calls, "of those lost": row.hidden_used_lost,
              "summaries (US$)": _dollars(row.summarization_cost), "lost": row.tokens_lost,
              "retrievable": row.tokens_retrievable, "calls fired": row.fired,
              "parameters": parameters(row.params),
              "source": source_of(row.policy)} for row in rows]
    st.dataframe(table, hide_index=True, width="stretch",
                 column_config={**widgets.counts("tokens final", "tokens billed", "cached", "lost", "retrievable"),
                                **widgets.dollars("cost (US$)", "summaries (US$)"),
                                "policy": st.column_config.TextColumn(width="medium"),
                                "baseline": st.column_config.CheckboxColumn(
                                    help="What the others are measured against: the run as it ran where the agent "
                                         "cut its own context, else none (the log as it is)"),
                                "parameters": st.column_config.TextColumn(width="medium")})
    st.caption("Each policy replayed over the whole run: tokens billed and cost add up every call; lost tokens are "
               "gone for good (summarized or masked), retrievable ones sit behind a reference a tool call undoes. "
               f"A summary is not free: each one is billed as one more call at {price.model}'s prices, the span it "
               "replaces as input (with the summarization prompt) and the summary as output, and included in the "
               "cost. No LLM is called: the summary is the offline one, counted by the meter. *Hidden then used* "
               "counts the calls whose reply quoted a piece of an earlier item that call's request had hidden (and no "
               "other part of it showed); *of those lost*, the calls that needed content a tool call cannot bring "
               "back. The cheapest policy is not the best one if it hides what the agent uses.")
    if conversation.compactions:
        many = len(conversation.compactions)
        done = "its compaction" if many == 1 else f"each of its {many} compactions"
        read = ("inferred from its bills" if all(record.inferred for record in conversation.compactions) else
                "read from its log" if not any(record.inferred for record in conversation.compactions) else
                "read from its log or inferred from its bills")
        st.caption(f"*as-it-ran*, the baseline: what the agent really sent — after {done} ({read}) only what it "
                   "kept, its summary and what followed, and its summarization call billed; *none* replays the whole "
                   "log as one ever-growing request, which the agent never sent.")
    if not price.known:
        st.warning(f"Cost: {UNKNOWN_NOTE} — {literal(price.source)}. Type the model's prices in the Run tab "
                   "(its *Prices* box); the tokens above are counted all the same.", icon=":material/edit:")
        return
    chart = alt.Chart(alt.Data(values=table)).mark_bar().encode(
        x=alt.X("cost (US$):Q"), y=alt.Y("policy:N", sort=None), tooltip=["policy:N", "cost (US$):Q"])
    st.altair_chart(chart, width="stretch")
    st.caption("Whole-run cost per policy at the chosen prices and cache model: shorter bars are cheaper runs.")
