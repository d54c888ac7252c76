"""The Run view: a whole run, call by call, with and without a policy — prompt tokens with the
threshold line, the cached share, the cost so far, and whole-run cost against the threshold.
Every number comes from ``playground.replay``; this module only lays it out."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import altair as alt
import streamlit as st

from ..compaction import Settings
from ..conversation import Conversation
from ..limits import MAX_COUNT, MAX_PRICE, MAX_TOKENS
from ..policies import POLICIES, Policy, PolicySettings, make
from ..policies.provenance import read_strategies, source_of
from ..present import render
from ..present.view import CallView, call_view
from ..rules.ruleset import Rules
from ..run.billed import BILLED, LogFit
from ..run.billed import chart_rows as bill_rows
from ..run.hidden import calls_with, lost_calls
from ..run.prices import CATALOGUE, UNKNOWN_NOTE, Price, known, money, read_prices
from ..run.promptcache import cache_models
from ..run.replay import (
    AS_RAN,
    FULL,
    MODES,
    Replay,
    call_starts,
    chart_rows,
    compaction_marks,
    replay,
    sweep,
    sweep_points,
)
from ..summarize.history import DEFAULT_KEEP_STEPS, SummarySettings
from ..words import plural
from ..workbench.workspace import ReplaySettings
from . import billed_panel, probe_panel, state

CALL = state.REPLAY_CALL  # the chosen call (position in the run's calls), for the before/after view
SHOWN = state.REPLAY_CALL_SHOWN  # True once the person moved the call slider: Before / after shows that call
SWEEP = "replay_sweep"
LIGHT_RUN = 200  # calls: runs up to this long redraw the extra replays on every change without a wait
STRATEGY, MODE, CACHE = "replay_strategy", "replay_mode", state.REPLAY_CACHE
WINDOW, TRIGGER, KEEP, CLEAR_AT_LEAST = "replay_window", "replay_trigger", "replay_keep", "replay_clear_at_least"
PRICE_FIELDS = {"input": "Input", "cached_input": "Cached input", "cache_write": "Cache write", "output": "Output"}
SIDE_COLORS = alt.Scale(domain=["without", "with"], range=["#9aa0a6", "#1a73e8"])
WITH_BILLS = alt.Scale(domain=["without", "with", BILLED], range=["#9aa0a6", "#1a73e8", "#188038"])
MODE_HELP = ("stored: edits are written into the history the agent keeps (the book's optimizer), so each edit "
             "breaks the cache once. per-call: edits are re-applied to a copy for every request and the history "
             "stays whole (LangChain middleware), so the cache breaks again whenever an item crosses into the "
             "edited region.")
CACHE_HELP = ("openai: automatic prefix caching, prompts of 1,024+ tokens, hits in 128-token steps. anthropic: one "
              "breakpoint on the last message, writes at 1.25× input, reads at 0.1×. none: no prompt cache. Only the "
              "model's own provider's cache (or none) is offered: another provider's rules would make a bill no one "
              "sends.")
_START = ReplaySettings()  # a new session starts where a workspace without these settings opens
DEFAULTS = {STRATEGY: _START.strategy, MODE: _START.mode, WINDOW: _START.window, TRIGGER: _START.trigger,
            KEEP: _START.keep, CLEAR_AT_LEAST: _START.clear_at_least}
PRICE_PREFIX = "replay_price_"
KEPT = (*DEFAULTS, CACHE, CALL, SWEEP, "compare_mode", state.COMPARE_CACHE, "compare_show", "compare_theirs",
        *probe_panel.KEPT)


def keep() -> None:
    """Keep the Run and Compare settings (and typed prices) while their tabs are closed: Streamlit
    forgets a widget's value in a run that does not draw it, unless the value is set again."""
    for key in [*KEPT, *(key for key in st.session_state if str(key).startswith(PRICE_PREFIX))]:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def start(key: str, value: Any) -> None:
    """Give a widget its first value through the session state (never also as ``value=``)."""
    if key not in st.session_state:
        st.session_state[key] = value


def price(model: str, when: str | None = None) -> Price:
    """The model's prices from the catalogue on the log's date ``when`` (None: today's), with any the
    person typed in the Run view (a box left empty keeps the catalogue's, or an unknown price)."""
    listed = read_prices().dated(when).get(model)
    edits = {name: float(st.session_state[f"{PRICE_PREFIX}{name}_{model}"]) for name in PRICE_FIELDS
             if st.session_state.get(f"{PRICE_PREFIX}{name}_{model}") is not None}
    if not edits or all(getattr(listed, name) == value for name, value in edits.items()):
        return listed
    typed = replace(listed, **edits, long_from=None, long_rates=None)  # the person's prices, at every length
    if not typed.known:
        return typed
    was = listed.source if listed.known else f"the catalogue ({CATALOGUE}) does not list {model}"
    return replace(typed, source=f"your prices; {was}", priced_as=typed.priced_as or model)


def policy_settings(rules: Rules, settings: Settings, summary: SummarySettings | None,
                    model: str | None = None) -> PolicySettings:
    """Every strategy's settings as the page holds them, as one value (each policy takes the ones it
    has): the rules, the compaction settings (threshold, keep_recent, the error switches) and
    summarization from the page, the rest from the Run view's controls, and ``model``'s context
    window (some agents' triggers are a part of it). Run, Compare and Corpus all build from it."""
    get = st.session_state.get
    limit, keep_steps = (summary.limit, summary.keep_steps) if summary else (settings.threshold, DEFAULT_KEEP_STEPS)
    return PolicySettings(rules=rules, label="the page's rules", compaction=settings, summarize=summary is not None,
                          limit=limit, keep_steps=keep_steps, window=get(WINDOW, DEFAULTS[WINDOW]),
                          trigger=get(TRIGGER, DEFAULTS[TRIGGER]), keep=get(KEEP, DEFAULTS[KEEP]),
                          clear_at_least=get(CLEAR_AT_LEAST, DEFAULTS[CLEAR_AT_LEAST]),
                          context_window=price(model).context_window if model else None)


def _policy(rules: Rules, settings: Settings, summary: SummarySettings | None,
            model: str) -> tuple[Policy, PolicySettings]:
    options = policy_settings(rules, settings, summary, model)
    return make(st.session_state.get(STRATEGY, DEFAULTS[STRATEGY]), options), options


def _replay(conversation: Conversation, policy: Policy, model: str, until: int | None = None,
            baseline: str = "auto") -> Replay:
    """The run as the Run view's controls set it (the defaults while the view has not been drawn)."""
    start(MODE, DEFAULTS[MODE])
    follow_cache(CACHE, model)
    return replay(conversation, policy, state.engine().meter(model), price(model, conversation.started),
                  mode=st.session_state[MODE], cache=st.session_state[CACHE], until=until, baseline=baseline)


def chosen_call(conversation: Conversation, rules: Rules, settings: Settings, summary: SummarySettings | None,
                model: str) -> CallView | None:
    """The call chosen with the Run view's slider, replayed only up to it; None when none is chosen
    (then Before / after shows the whole conversation and nothing is replayed)."""
    if not st.session_state.get(SHOWN):
        return None
    calls = len(call_starts(conversation.items))
    if not calls:
        return None
    number = min(int(st.session_state.get(CALL, calls - 1)), calls - 1)
    policy, _ = _policy(rules, settings, summary, model)
    run = _replay(conversation, policy, model, until=number + 1, baseline=FULL)  # the table holds the log's items
    return call_view(conversation, run, calls, state.engine().meter(model))


def show_whole() -> None:
    """Back to the whole conversation in Before / after."""
    st.session_state[SHOWN] = False


def _show_call() -> None:
    st.session_state[SHOWN] = True


def follow_cache(key: str, model: str) -> tuple[str, ...]:
    """The cache models that fit ``model`` (``promptcache.cache_models``: its provider's, or none).
    The one chosen follows the model's provider (a gpt-5 run is cached as OpenAI caches, a Claude
    log as Anthropic does) unless the person, or their workspace, chose one for this conversation;
    a choice that no longer fits the model goes back to its provider's. Loading another
    conversation lets it follow again (``state.set_conversation``)."""
    options = cache_models(read_prices().get(model).cache)
    chosen = st.session_state.get(key)
    if (state.origin(key) is None or chosen not in options) and chosen != options[0]:
        st.session_state[key] = options[0]
    return options


def cache_choice(model: str, key: str) -> None:
    """A cache-model select on the model's own provider's cache (or none) until the person picks one."""
    options = follow_cache(key, model)
    st.selectbox("Prompt cache", options, key=key, help=CACHE_HELP, on_change=state.changed, args=(key,))
    if state.origin(key) is None:
        st.caption(f"The model's own provider's cache ({st.session_state[key]}), until you choose one.")


def _controls(model: str) -> None:
    for key, value in DEFAULTS.items():
        start(key, value)
    left, middle, right = st.columns(3)
    left.selectbox("Strategy", list(POLICIES), key=STRATEGY,
                   help="rules: the two tables behind the threshold (the book); masking: old tool outputs become a "
                        "placeholder; clear-tool-uses: Anthropic's context editing; summarize: older history becomes "
                        "a summary; hybrid: masking, then a summary when still over; none: the baseline. The rest "
                        "are the agents' and providers' own compaction, each with its source's parameters.")
    middle.radio("Mode", MODES, key=MODE, horizontal=True, help=MODE_HELP)
    with right:
        cache_choice(model, CACHE)
    chosen = st.session_state[STRATEGY]
    columns = st.columns(4)
    if chosen in ("masking", "hybrid"):
        columns[0].number_input("Window (tool outputs kept)", 0, MAX_COUNT, key=WINDOW,
                                help="Tool outputs older than the newest N become a placeholder (SWE-agent and "
                                     "JetBrains use 10).")
    if chosen == "clear-tool-uses":
        columns[0].number_input("Trigger (input tokens)", 0, MAX_TOKENS, step=1000, key=TRIGGER,
                                help="Clear once the prompt exceeds this many tokens (API default 100,000).")
        columns[1].number_input("Keep (tool uses)", 0, MAX_COUNT, key=KEEP,
                                help="The newest N tool uses are never cleared (API default 3).")
        columns[2].number_input("Clear at least (tokens)", 0, MAX_TOKENS, step=500, key=CLEAR_AT_LEAST,
                                help="Clear nothing unless at least this many tokens go: a cache break must be "
                                     "worth it.")
    named = read_strategies().get(chosen)
    if named is not None:
        st.caption(f"{named.title}, with its source's own parameters ({named.defaults}). Kept: {named.kept}. "
                   f"Dropped: {named.dropped}. Source: {source_of(chosen)}.")
    if chosen in ("rules", "summarize", "hybrid"):
        st.caption("Threshold, keep_recent and summarization come from the sidebar, the rules from the *Rules* tab. "
                   "Summaries in a replay are the offline summarizer's: replaying never calls an LLM.")


def _price_editor(model: str, when: str | None = None) -> None:
    """The four prices the run is billed at, to read or type over; empty (and open) when nobody
    lists the model's price: its costs stay unknown until the person enters them."""
    listed = read_prices().dated(when).get(model)
    unknown = not listed.known
    with st.expander(f"Prices for {model} (US$ per million tokens, {read_prices().as_of})", expanded=unknown):
        if unknown:
            st.warning(f"{render.literal(model)}: {UNKNOWN_NOTE}. The catalogue does not list this model, so no "
                       "cost is shown (never another model's price): type its four prices to see them.",
                       icon=":material/edit:")
        else:
            st.caption(f"From {render.literal(listed.source)}. Type your own to see the run at your prices.")
        columns = st.columns(4)
        for column, (name, label) in zip(columns, PRICE_FIELDS.items(), strict=True):
            key = f"{PRICE_PREFIX}{name}_{model}"
            start(key, None if unknown else float(getattr(listed, name)))
            column.number_input(label, min_value=0.0, max_value=MAX_PRICE, step=0.01, format="%.4f", key=key,
                                placeholder=UNKNOWN_NOTE, help=f"{label} price per million tokens.")


def _line(rows: list[dict[str, Any]], field: str, title: str, axis_format: str | None = None,
          scale: alt.Scale = SIDE_COLORS) -> alt.Chart:
    axis = alt.Axis(format=axis_format) if axis_format else alt.Axis()
    return alt.Chart(alt.Data(values=rows)).mark_line(point=alt.OverlayMarkDef(size=18)).encode(
        x=alt.X("call:Q", title="call", axis=alt.Axis(format="d", tickMinStep=1)),
        y=alt.Y(f"{field}:Q", title=title, axis=axis),
        color=alt.Color("side:N", scale=scale, title="policy"),
        tooltip=["call:Q", "index:Q", "side:N", f"{field}:Q", "fired:N"])


def _threshold(policy: Policy) -> int | None:
    params = policy.params()
    return next((int(params[key]) for key in ("threshold", "limit", "trigger") if key in params), None)


def _agent_compactions(marks: list[dict[str, Any]]) -> alt.Chart:
    """A rule at each call where the agent compacted its own context (read from its log)."""
    return alt.Chart(alt.Data(values=marks)).mark_rule(color="#e37400", strokeWidth=2).encode(
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
        rule = alt.Chart(alt.Data(values=[{"threshold": line}])).mark_rule(color="#d93025", strokeDash=[6, 4]).encode(
            y="threshold:Q", tooltip=["threshold:Q"])
        chart = chart + rule
    marks = [row for row in rows if row["hidden_used"]]
    if marks:
        chart = chart + alt.Chart(alt.Data(values=marks)).mark_point(
            shape="triangle-up", size=140, filled=True, color="#d93025").encode(
            x="call:Q", y="tokens:Q", tooltip=["call:Q", "index:Q", alt.Tooltip("hidden_used:Q", title="spans used")])
    st.altair_chart(chart, width="stretch")
    st.caption("Prompt tokens of every call: without a policy the line only climbs; with one it drops where the "
               "policy fires (the red line is its threshold), which makes the sawtooth.")
    if agent:
        st.caption(f"The orange {'line marks the call' if len(agent) == 1 else 'lines mark the calls'} where the agent "
                   f"compacted its own context ({', '.join(mark['where'] for mark in agent)} of its log): the strategy "
                   "*as-it-ran* replays the requests it really sent after that.")
    hidden = run.hidden_used
    if hidden:
        st.caption(f"▲ {plural(calls_with(hidden), 'call')}: the agent's reply used something the call's request had "
                   f"hidden — a piece of an earlier item it quoted, shown nowhere else in that request; "
                   f"{plural(lost_calls(hidden), 'call')} of them used content a tool call cannot bring back. Pick one "
                   "with the slider below to see the item and the piece in *Before / after*.")


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
    start(SWEEP, len(run.calls) <= LIGHT_RUN)
    if not st.toggle("Cost against the threshold", key=SWEEP,
                     help=f"Replays the whole run once for each of 8 values of the {key}; on a long run that takes "
                          "a while, so it starts off above 200 calls."):
        return
    largest = max(call.tokens_without for call in run.calls)
    points = sweep(conversation, lambda value: make(policy_name, _swept(options, key, value)), sweep_points(largest),
                   meter, chosen_price, mode=run.mode, cache=run.cache)
    rows = [{"threshold": value, "cost": cost} for value, cost in points]
    chart = alt.Chart(alt.Data(values=rows)).mark_line(point=True).encode(
        x=alt.X("threshold:Q", title=key), y=alt.Y("cost:Q", title="whole-run cost (US$)"),
        tooltip=["threshold:Q", alt.Tooltip("cost:Q", format="$.4f")])
    st.altair_chart(chart, width="stretch")
    st.caption(f"Whole-run cost for {len(rows)} values of the {key}: the lowest point is the cheapest setting for "
               "this run; the last point never fires and costs what doing nothing costs.")


def _chosen_call(run: Replay) -> None:
    if len(run.calls) < 2:
        st.session_state[CALL] = 0
        return
    last = len(run.calls) - 1
    st.session_state[CALL] = min(st.session_state.get(CALL, last), last)  # the last call first; a shorter run clamps
    st.slider("Call shown in Before / after", 0, last, key=CALL, on_change=_show_call,
              help="Pick one call of the run: its numbers are shown here, and the Before / after tab shows its "
                   "request, without and with the policy.")
    call = run.calls[st.session_state[CALL]]
    fired = f"; the policy fired ({call.fired})" if call.fired else "; the policy did not fire"
    st.caption(f"Call {st.session_state[CALL]} (item {call.index} of the input): {call.tokens_without:,} → "
               f"{call.tokens_with:,} prompt tokens, {call.cached_without:,} → {call.cached_with:,} cached, "
               f"{money(call.cost_without)} → {money(call.cost_with)}{fired}.")
    if st.session_state.get(SHOWN):
        left, right = st.columns([3, 1], vertical_alignment="center")
        left.caption("The *Before / after* tab shows this call's request.")
        right.button("Show the whole conversation there", key="replay_call_whole_run", on_click=show_whole)
    else:
        st.caption("Move the slider to see a call's request in the *Before / after* tab.")


def panel(conversation: Conversation, rules: Rules, settings: Settings, summary: SummarySettings | None,
          model: str) -> None:
    """The Run tab: controls, totals, the charts and the call slider."""
    _controls(model)
    _price_editor(model, conversation.started)
    policy, options = _policy(rules, settings, summary, model)
    meter = state.engine().meter(model)
    chosen_price = price(model, conversation.started)
    run = _replay(conversation, policy, model)
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
    rows = chart_rows(run)
    bills = billed_panel.fit_of(conversation, chosen_price)
    _tokens_chart(run, rows, policy, conversation, bills)
    if bills:
        billed_panel.panel(conversation, model, bills)
    st.altair_chart(_line(rows, "cached_share", "cached share of the prompt", ".0%"), width="stretch")
    st.caption("The share of each prompt read from the cache: an edit early in the history drops it, because "
               "everything after the first changed item must be processed again.")
    if chosen_price.known:
        st.altair_chart(_line(rows, "cumulative_cost", "cost so far (US$)", "$.2f"), width="stretch")
        st.caption("Money spent so far: the policy pays off where its line runs below the other one.")
    else:
        st.caption(f"Money spent so far: {UNKNOWN_NOTE} (the prices above), and the chart appears.")
    evens = run.break_even()
    if evens:
        repaid = [e.repaid_after for e in evens if e.repaid_after is not None]
        st.caption(f"The policy fired {plural(len(evens), 'time')}; {len(repaid)} of those firings repaid their cache "
                   f"miss (after {plural(max(repaid) if repaid else 0, 'more call')} at most). Estimate: a firing is "
                   "measured against carrying on at the saving rate of the last call before it that did not fire.")
    _chosen_call(run)
    _sweep_chart(conversation, run, st.session_state[STRATEGY], options, meter, chosen_price)
    probe_panel.panel(conversation, policy, meter, st.session_state[MODE])
