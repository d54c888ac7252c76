"""The Run view: a whole run, call by call, with and without a policy — prompt tokens with the
threshold line, the cached share, the cost so far, and whole-run cost against the threshold.
Every number comes from ``playground.replay``; this module only lays it out."""

from __future__ import annotations

from typing import Any

import altair as alt
import streamlit as st

from ..compaction import Settings
from ..conversation import Conversation
from ..limits import MAX_COUNT, MAX_PRICE, MAX_TOKENS
from ..meter import Meter
from ..policies import Policy, PolicySettings, make, read_provenance, source_of
from ..present import literal
from ..rules import Rules
from ..run import (
    AS_RAN,
    BILLED,
    UNKNOWN_NOTE,
    LogFit,
    Price,
    Replay,
    bill_rows,
    call_starts,
    calls_with,
    chart_rows,
    compaction_marks,
    known,
    lost_calls,
    money,
    read_prices,
    round_trips,
    sweep,
    sweep_points,
)
from ..summarize import SummarySettings
from ..words import parameters, plural
from . import bills, run_setup, state, widgets

PRICE_FIELDS = {"input": "Input", "cached_input": "Cached input", "cache_write": "Cache write", "output": "Output"}
SIDE_COLORS = alt.Scale(domain=["without", "with"], range=["#9aa0a6", "#1a73e8"])
WITH_BILLS = alt.Scale(domain=["without", "with", BILLED], range=["#9aa0a6", "#1a73e8", "#188038"])


def _controls(model: str) -> None:
    for key, value in run_setup.DEFAULTS.items():
        state.start(key, value)
    left, middle, right = st.columns(3)
    widgets.policy_choice(left, state.REPLAY_POLICY)
    widgets.mode_choice(middle, state.REPLAY_MODE)
    with right:
        widgets.cache_choice(model, state.REPLAY_CACHE)
    chosen = st.session_state[state.REPLAY_POLICY]
    columns = st.columns(4)
    if chosen in ("masking", "hybrid"):
        columns[0].number_input("Window (tool outputs kept)", 0, MAX_COUNT, key=state.REPLAY_WINDOW,
                                help="Tool outputs older than the newest N become a placeholder (SWE-agent and "
                                     "JetBrains use 10).")
    if chosen == "clear-tool-uses":
        columns[0].number_input("Trigger (input tokens)", 0, MAX_TOKENS, step=1000, key=state.REPLAY_TRIGGER,
                                help="Clear once the prompt exceeds this many tokens (API default 100,000).")
        columns[1].number_input("Keep (tool uses)", 0, MAX_COUNT, key=state.REPLAY_KEEP,
                                help="The newest N tool uses are never cleared (API default 3).")
        columns[2].number_input("Clear at least (tokens)", 0, MAX_TOKENS, step=500, key=state.REPLAY_CLEAR_AT_LEAST,
                                help="Clear nothing unless at least this many tokens go: a cache break must be "
                                     "worth it.")
    named = read_provenance().get(chosen)
    if named is not None:
        st.caption(f"{named.title}, with its source's own parameters ({named.defaults}). Kept: {named.kept}. "
                   f"Dropped: {named.dropped}. Source: {source_of(chosen)}.")
    if chosen in ("rules", "summarize", "hybrid"):
        st.caption("Threshold, keep_recent and summarization come from the sidebar and its Settings, the rules "
                   "from the tables on *Before / after*. "
                   "Summaries in a replay are the offline summarizer's: replaying never calls an LLM.")


def _price_editor(model: str, when: str | None = None) -> None:
    """The four prices the run is billed at, to read or type over; empty (and open) when nobody
    lists the model's price: its costs stay unknown until the person enters them."""
    listed = read_prices().dated(when).get(model)
    unknown = not listed.known
    with st.expander(f"Prices for {model} (US$ per million tokens, {read_prices().as_of})", expanded=unknown):
        if unknown:
            st.warning(f"{literal(model)}: {UNKNOWN_NOTE}. The catalogue does not list this model, so no "
                       "cost is shown (never another model's price): type its four prices to see them.",
                       icon=":material/edit:")
        else:
            st.caption(f"From {literal(listed.source)}. Type your own to see the run at your prices.")
        columns = st.columns(4)
        for column, (name, label) in zip(columns, PRICE_FIELDS.items(), strict=True):
            key = state.price_key(name, model)
            state.start(key, None if unknown else float(getattr(listed, name)))
            column.number_input(label, min_value=0.0, max_value=MAX_PRICE, step=0.01, format="%.4f", key=key,
                                placeholder=UNKNOWN_NOTE, help=f"{label} price per million tokens.")


def _draw(chart: alt.Chart) -> None:
    """Draw a chart whose spec this module built, unvalidated: Altair's schema check walks every inline
    row (about 0.3 s a chart for a run of 282 calls, most of the Run tab's rerun). For the same reason
    the rows are given as a plain ``{"values": …}``, which Altair does not check as it is made."""
    spec = chart.to_dict(validate=False)
    named = spec.pop("datasets", {})  # Altair gathers inline rows under names; put them back where they are used
    for part in (spec, *spec.get("layer", ())):
        if part.get("data", {}).get("name") in named:
            part["data"] = {"values": named[part["data"]["name"]]}
    st.vega_lite_chart(spec, width="stretch")


def _line(rows: list[dict[str, Any]], field: str, title: str, axis_format: str | None = None,
          scale: alt.Scale = SIDE_COLORS) -> alt.Chart:
    axis = alt.Axis(format=axis_format) if axis_format else alt.Axis()
    return alt.Chart({"values": rows}).mark_line(point=alt.OverlayMarkDef(size=18)).encode(
        x=alt.X("call:Q", title="call", axis=alt.Axis(format="d", tickMinStep=1)),
        y=alt.Y(f"{field}:Q", title=title, axis=axis),
        color=alt.Color("side:N", scale=scale, title="policy"),
        tooltip=["call:Q", "index:Q", "side:N", f"{field}:Q", "fired:N"])


def _threshold(policy: Policy) -> int | None:
    params = policy.params()
    return next((int(params[key]) for key in ("threshold", "limit", "trigger") if key in params), None)


def _threshold_note(policy: Policy, line: int | None) -> str:
    """What the chart's red line is — or, for a policy that acts on a measure of its own (a number of
    calls, the done turns' tokens), why none is drawn, with its parameters as its source names them."""
    if line is not None:
        return "The red line is its threshold."
    params = policy.params()
    if not params:
        return ""
    return (f"{policy.name} acts on a measure of its own, not the prompt's size ({parameters(params)}): no line is "
            "drawn.")


def _agent_compactions(marks: list[dict[str, Any]]) -> alt.Chart:
    """A rule at each call where the agent compacted its own context (read from its log)."""
    return alt.Chart({"values": marks}).mark_rule(color="#e37400", strokeWidth=2).encode(
        x="call:Q", tooltip=["call:Q", "index:Q", alt.Tooltip("where:N", title="compacted at"),
                             alt.Tooltip("trigger:N", title="trigger"),
                             alt.Tooltip("tokens_before:Q", title="tokens before (the agent's count)")])


def _tokens_chart(run: Replay, rows: list[dict[str, Any]], policy: Policy, conversation: Conversation,
                  bills: LogFit | None) -> None:
    chart = _line([*rows, *(bill_rows(bills, run) if bills else ())], "tokens", "prompt tokens",
                  scale=WITH_BILLS if bills else SIDE_COLORS)
    agent = compaction_marks(run, conversation)
    if agent:
        chart = _agent_compactions(agent) + chart
    line = _threshold(policy)
    if line is not None:
        rule = alt.Chart({"values": [{"threshold": line}]}).mark_rule(color="#d93025", strokeDash=[6, 4]).encode(
            y="threshold:Q", tooltip=["threshold:Q"])
        chart = chart + rule
    marks = [row for row in rows if row["hidden_used"]]
    if marks:
        chart = chart + alt.Chart({"values": marks}).mark_point(
            shape="triangle-up", size=140, filled=True, color="#d93025").encode(
            x="call:Q", y="tokens:Q", tooltip=["call:Q", "index:Q", alt.Tooltip("hidden_used:Q", title="spans used")])
    _draw(chart)
    st.caption("Prompt tokens of every call: without a policy the line only climbs; with one it drops where the "
               "policy fires, which makes the sawtooth. " + _threshold_note(policy, line))
    if agent:
        st.caption(f"The orange {'line marks the call' if len(agent) == 1 else 'lines mark the calls'} where the agent "
                   f"compacted its own context ({', '.join(mark['where'] for mark in agent)} of its log): the policy "
                   "*as-it-ran* replays the requests it really sent after that.")
    hidden = run.hidden_used
    if hidden:
        st.caption(f"▲ {plural(calls_with(hidden), 'call')}: the agent's reply used something the call's request had "
                   f"hidden — a piece of an earlier item it quoted, shown nowhere else in that request; "
                   f"{plural(lost_calls(hidden), 'call')} of them used content a tool call cannot bring back. Pick one "
                   "with the slider below to see the item and the piece in *Before / after*.")


def _recall(run: Replay, conversation: Conversation, meter: Meter) -> None:
    """The totals with each hidden-then-used call charged a recall round trip (``replay --recall``)."""
    if not run.hidden_used or not st.toggle("Charge recall round trips", key=state.REPLAY_RECALL,
                                            help="An agent with the recall tool asks for what its reply used back "
                                                 "first: the recall calls, the originals and one more request, "
                                                 "priced with the prompt cache (docs/replay.md)."):
        return
    trips = round_trips(run, conversation, meter)
    extra = sum(trip.cost for trip in trips)
    one, two, three, four = st.columns(4)
    one.metric("Recall round trips", f"{len(trips):,}", help="One per call whose reply used what its request hid.")
    two.metric("Re-fetched prompt tokens", f"{sum(trip.prompt_tokens for trip in trips):,}",
               help=f"The extra requests: the call's prompt again, the recall calls and the originals "
                    f"({sum(trip.result_tokens for trip in trips):,} tokens).")
    three.metric("Cached in them", f"{sum(trip.cached_tokens for trip in trips):,}")
    four.metric("Cost with recall", money(run.totals.cost_with + extra), delta=money(extra), delta_color="inverse",
                help="The cost with the policy, plus the round trips.")


def _baseline_caption(run: Replay) -> None:
    """What the changes are measured against, where that is not simply the log: the run as it ran
    (the full history a second figure), and a history no window could hold."""
    window = run.over_window()
    if run.baseline == AS_RAN:
        inferred = (f" — cut at call{'s' if len(run.inferred) > 1 else ''} {', '.join(map(str, run.inferred))}, "
                    "inferred from its bills" if run.inferred else "")
        full = sum(run.full_history(call) for call in run.calls)
        st.caption(f"Measured against **the run as it ran**: what the agent really sent{inferred}. The full history "
                   f"its log holds would have been {full:,} prompt tokens, "
                   f"{money(sum(call.cost_full or 0.0 for call in run.calls))}; it was never sent.")
    if window:
        st.warning(window[0].upper() + window[1:] + ".", icon=":material/warning:")


def _swept(options: PolicySettings, key: str, value: int) -> PolicySettings:
    """The settings with option ``key`` set to ``value``. Moving the rules' threshold moves a
    summarization limit that follows it, and raises one it would pass, as the sidebar does."""
    if key != "threshold":
        return options.with_options(**{key: value})
    limit = options.options()["limit"]
    follows = limit == options.compaction.threshold
    return options.with_options(threshold=value, limit=value if follows else max(limit, value))


def _sweep_chart(conversation: Conversation, run: Replay, policy_name: str, options: PolicySettings,
                 meter, chosen_price: Price) -> None:
    key = {"rules": "threshold", "summarize": "limit", "hybrid": "limit", "clear-tool-uses": "trigger"}.get(policy_name)
    if key is None or not run.calls or not chosen_price.known:  # (no cost to draw at an unknown price)
        return
    state.start(state.REPLAY_SWEEP, len(run.calls) <= run_setup.LIGHT_RUN)
    if not st.toggle("Cost against the threshold", key=state.REPLAY_SWEEP,
                     help=f"Replays the whole run once for each of 8 values of the {key}; on a long run that takes "
                          "a while, so it starts off above 200 calls."):
        return
    values = sweep_points(max(call.tokens_without for call in run.calls))
    with st.spinner(f"Replaying {plural(len(run.calls), 'call')} at {len(values)} values of the {key}…"):
        points = sweep(conversation, lambda value: make(policy_name, _swept(options, key, value)), values,
                       meter, chosen_price, mode=run.mode, cache=run.cache)
    rows = [{"threshold": value, "cost": cost} for value, cost in points]
    chart = alt.Chart({"values": rows}).mark_line(point=True).encode(
        x=alt.X("threshold:Q", title=key), y=alt.Y("cost:Q", title="whole-run cost (US$)"),
        tooltip=["threshold:Q", alt.Tooltip("cost:Q", format="$.4f")])
    _draw(chart)
    st.caption(f"Whole-run cost for {len(rows)} values of the {key}: the lowest point is the cheapest setting for "
               "this run; the last point never fires and costs what doing nothing costs.")


def _chosen_call(run: Replay) -> None:
    if len(run.calls) < 2:
        st.session_state[state.REPLAY_CALL] = 0
        return
    last = len(run.calls) - 1
    # the last call first; a shorter run clamps
    st.session_state[state.REPLAY_CALL] = min(st.session_state.get(state.REPLAY_CALL, last), last)
    st.slider("Call shown in Before / after", 0, last, key=state.REPLAY_CALL, on_change=run_setup.show_call,
              help="Pick one call of the run: its numbers are shown here, and the Before / after tab shows its "
                   "request, without and with the policy.")
    call = run.calls[st.session_state[state.REPLAY_CALL]]
    fired = f"; the policy fired ({call.fired})" if call.fired else "; the policy did not fire"
    st.caption(f"Call {st.session_state[state.REPLAY_CALL]} (item {call.index} of the input): "
               f"{call.tokens_without:,} → "
               f"{call.tokens_with:,} prompt tokens, {call.cached_without:,} → {call.cached_with:,} cached, "
               f"{money(call.cost_without)} → {money(call.cost_with)}{fired}.")
    if st.session_state.get(state.REPLAY_CALL_SHOWN):
        left, right = st.columns([3, 1], vertical_alignment="center")
        left.caption("The *Before / after* tab shows this call's request.")
        right.button("Show the whole conversation there", key=state.REPLAY_CALL_WHOLE, on_click=run_setup.show_whole)
    else:
        st.caption("Move the slider to see a call's request in the *Before / after* tab.")


def panel(conversation: Conversation, rules: Rules, settings: Settings, summary: SummarySettings | None,
          model: str) -> None:
    """The Run tab: controls, totals, the charts and the call slider."""
    _controls(model)
    _price_editor(model, conversation.started)
    policy, options = run_setup.chosen_policy(rules, settings, summary, model)
    meter = state.engine().meter(model)
    chosen_price = run_setup.price(model, conversation.started)
    calls = len(call_starts(conversation.items))
    with widgets.replaying(f"Replaying {plural(calls, 'call')} under {policy.name}…", calls) as progress:
        run = run_setup.replayed(conversation, policy, model, progress=progress)
    if not run.calls:
        st.info("This conversation has no assistant turn, so there is no LLM call to replay.", icon=":material/info:")
        return
    totals = run.totals
    against = "the run as it ran" if run.baseline == AS_RAN else "no policy"
    one, two, three, four = st.columns(4)
    one.metric("Calls", f"{len(run.calls):,}", help="One LLM call per assistant turn.")
    two.metric("Prompt tokens billed", f"{totals.tokens_with:,}",
               delta=f"{totals.tokens_with - totals.tokens_without:,}", delta_color="inverse",
               help=f"Over the whole run, with the policy (the change is against {against}).")
    three.metric("Cached", f"{totals.cached_tokens_with:,}",
                 delta=f"{totals.cached_tokens_with - totals.cached_tokens_without:,}",
                 help="Prompt tokens read from the provider's cache over the run, with the policy.")
    change = known(totals.cost_with - totals.cost_without)
    four.metric("Cost", money(totals.cost_with), delta=None if change is None else f"{change:+.4f}",
                delta_color="inverse", help=f"Prompts and replies over the run at {chosen_price.model} prices "
                                            f"({chosen_price.source}; the change is against {against}).")
    _baseline_caption(run)
    _recall(run, conversation, meter)
    rows = chart_rows(run)
    found = bills.fit_of(conversation, chosen_price)
    _tokens_chart(run, rows, policy, conversation, found)
    if found:
        bills.draw(conversation, model, found)
    _draw(_line(rows, "cached_share", "cached share of the prompt", ".0%"))
    st.caption("The share of each prompt read from the cache: an edit early in the history drops it, because "
               "everything after the first changed item must be processed again.")
    if chosen_price.known:
        _draw(_line(rows, "cumulative_cost", "cost so far (US$)", "$.2f"))
        st.caption("Money spent so far: the policy pays off where its line runs below the other one.")
    else:
        st.caption(f"Money spent so far: {UNKNOWN_NOTE} (the prices above), and the chart appears.")
    evens = run.break_even()
    if evens:
        repaid = [e.repaid_after for e in evens if e.repaid_after is not None]
        most = max(repaid, default=None)
        when = ("" if most is None else " (each on the call that fired)" if most == 0
                else f" (after {plural(most, 'more call')} at most)")
        st.caption(f"The policy fired {plural(len(evens), 'time')}; {len(repaid):,} of those firings repaid their "
                   f"cache miss{when}. Estimate: a firing is measured against carrying on at the saving rate of the "
                   "last call before it that did not fire.")
    _chosen_call(run)
    _sweep_chart(conversation, run, st.session_state[state.REPLAY_POLICY], options, meter, chosen_price)
