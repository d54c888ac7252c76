"""The result of compaction on screen: stage, meters, cache and cost, the aligned rows, and
where the tokens go."""

from __future__ import annotations

import streamlit as st

from ..compaction import STAGES
from ..conversation import Conversation
from ..engine import Optimized
from ..meter.tokens import TokenCount
from ..present import render, view
from ..rules import breakdown
from ..rules.ruleset import Rules
from ..run.hidden import HiddenUse
from ..run.prices import UNKNOWN_NOTE, Price, known, money
from ..run.promptcache import RequestCost
from ..words import plural
from . import state

PAGE_SIZE = 40
_STAGE_LOOK = {"below_threshold": ("gray", ":material/pause_circle:"),
               "compacted": ("green", ":material/check_circle:"),
               "still_over": ("orange", ":material/warning:")}


def headline(original: Conversation, optimized: Optimized, model: Price) -> None:
    report = optimized.compaction.report
    color, icon = _STAGE_LOOK[report.stage]
    badges = st.container(horizontal=True)
    badges.badge(STAGES[report.stage].capitalize(), icon=icon, color=color)
    done = optimized.summarization
    if done is not None and done.report.status == "summarized":
        badges.badge(f"then summarized ({render.literal(done.report.summarizer)}): lossy", icon=":material/summarize:",
                     color="violet")
    numbers = view.summary(original, optimized.compaction, model, done)
    final = numbers.after
    summarized = numbers.summarized_away != 0
    before, after, saved, *lost, cache = st.columns(5 if summarized else 4)
    before.metric("Before", f"{report.tokens_before:,}", help="Prompt tokens of the request as it is.")
    after.metric("After", f"{final:,}",
                 delta=f"-{numbers.saved:,}" if numbers.saved else None, delta_color="inverse",
                 help="Prompt tokens of the request as sent: after compaction, and after summarization if it ran.")
    gone = (f" Except {numbers.compaction_lost:,} tokens of {', '.join(map(render.literal, numbers.lost_tools))}: "
            "calling those tools again does not bring their output back (a session, a sub-agent, an action), so "
            "that part is lost." if numbers.compaction_lost else "")
    saved.metric("Saved by compaction", f"{numbers.compaction_percent}%",
                 help=f"{numbers.compaction_saved:,} tokens: the share of the request compaction replaced with "
                      f"references. Retrievable: the agent can call the tool again.{gone} A summary's cut is not "
                      "in it.")
    if summarized:
        lost[0].metric("Summarized away", f"{numbers.summarized_percent}%",
                       help=f"{numbers.summarized_away:,} tokens of older history the summary replaced, beyond "
                            "compaction. Lossy: no tool call brings them back.")
    cache.metric("Cacheable prefix", f"{numbers.cached_prefix:,}",
                 help="Tokens before the first changed item: a provider's prompt cache can still reuse them. "
                      "Every token after the first edit is billed at the full price on the next request.")
    if numbers.window_warning:
        st.warning(render.literal(numbers.window_warning), icon=":material/warning:")
    compacted = numbers.compacted if summarized else None
    scale = view.scale(report.tokens_before, final, report.threshold, model.context_window, compacted)
    st.html(render.meters(scale, report.tokens_before, final, report.threshold, compacted))
    estimate = "" if report.before.exact else " Counts are estimates: " + render.literal(
        "; ".join(report.before.notes)) + "."
    if estimate and original.billed:  # the log's own bills fit the count better than any vocabulary we ship
        estimate += (" This log records what the provider billed: the Run tab's *Calibrate the meter from this log* "
                     "fits the count to its bills.")
    first = (f"The first change is at {render.literal(numbers.first_change)}: the {numbers.cached_prefix:,} tokens "
             f"before it ({numbers.cached_percent}% of the request as sent) stay cacheable." if numbers.first_change
             else "Nothing changed: the whole prompt stays cacheable.")
    st.caption(f"{first} {_cost_line(numbers.costs, model)}{estimate}")


CACHE_RULES = {"openai": "OpenAI caches prompts of 1,024+ tokens and reads them in 128-token steps",
               "anthropic": "Anthropic writes the prompt at the cache-write price and reads it at the cached price",
               "none": "no prompt cache: the catalogue lists no cached price for this model"}


def _cache_use(cost: RequestCost) -> str:
    """What one request did with the cache, in words."""
    written = f", {cost.use.written:,} written to it" if cost.use.written else ""
    return f"{cost.use.read:,} of its {cost.tokens:,} tokens read from the cache{written}"


def _cost_line(costs: view.Costs, model: Price) -> str:
    """The next request's input cost as a running agent pays it, by the cost model replay uses:
    the previous call's prompt is in the provider's cache. A model whose price nobody lists shows
    no dollars: the line says to enter its price (never another model's)."""
    if not model.known:
        return (f"Input cost of this request: {UNKNOWN_NOTE} — the catalogue does not list "
                f"{render.literal(model.model)}; type its prices in the Run tab's *Prices* box (its tokens are "
                "counted all the same).")
    prices = (f"at {render.literal(model.model)} list prices (${model.input:g}/M input, ${model.cached_input:g}/M "
              f"cached, ${model.cache_write:g}/M cache write; {render.literal(model.source)}) "
              f"with the {costs.cache} prompt cache ({CACHE_RULES[costs.cache]}) as the previous call "
              f"({costs.previous_prefix:,} tokens) left it")
    before = (f"${costs.before.cost:.4f} as it is, {_cache_use(costs.before)} (${costs.before_uncached:.4f} with "
              "nothing cached)")
    tail = (f" Input only: the reply is billed on top at ${model.output:g}/M output; the Run tab prices whole calls.")
    if costs.after is None:
        return f"Input cost of this request {prices}: {before}. Nothing was compacted, so that is what it costs.{tail}"
    return (f"Input cost of this request {prices}: {before}; ${costs.after.cost:.4f} as it will be sent, "
            f"{_cache_use(costs.after)}.{tail}")


def before_after(original: Conversation, optimized: Optimized) -> None:
    done = optimized.summarization
    left, right = st.columns([1, 1])
    changed_only = left.toggle("Changed and skipped only", key=state.CHANGED_ONLY,
                               help="Hide items no rule touched, to see what compaction did and did not do.")
    positions = view.row_positions(optimized.compaction, done, changed_only)
    _, pages = view.page(positions, 1, PAGE_SIZE)
    number = right.number_input(f"Page (of {pages})", min_value=1, max_value=pages, step=1, key=state.PAGE,
                                help=f"{PAGE_SIZE} items per page.") if pages > 1 else 1
    shown, _ = view.page(positions, int(number), PAGE_SIZE)  # only this page's rows are built
    rows = view.rows(original, optimized.compaction, done, shown)
    st.html(render.rows_table(rows, view.largest_tokens(optimized.compaction, done)))


def call_before_after(call: view.CallView, back) -> None:
    """Before / after for one call of the run chosen in the Run tab: its request without the
    policy beside the request as sent, with that call's numbers; ``back`` returns to the whole."""
    info, button = st.columns([3, 1], vertical_alignment="center")
    info.info(f"Showing call {call.number} of {call.calls} (calls 0–{call.calls - 1}, chosen in the Run tab): the "
              f"request that call sent, {len(call.without.items):,} items, without and with the "
              f"{render.literal(call.strategy)} strategy. The meters above stay on the last request.",
              icon=":material/timeline:")
    button.button("Show the whole conversation", key=state.CALL_VIEW_BACK, on_click=back, type="primary",
                  help="Back to the last request, as compacted with the page's rules.")
    numbers = call.call
    before, after, cached, cost = st.columns(4)
    before.metric("Before", f"{numbers.tokens_without:,}", help="Prompt tokens of this call without the policy.")
    after.metric("After", f"{numbers.tokens_with:,}", delta=_change(numbers.tokens_with - numbers.tokens_without),
                 delta_color="inverse", help="Prompt tokens of this call as sent under the policy.")
    cached.metric("Cached", f"{numbers.cached_with:,}", delta=_change(numbers.cached_with - numbers.cached_without),
                  help="Prompt tokens this call read from the provider's cache, with the policy (the change is "
                       "against no policy).")
    change = known(numbers.cost_with - numbers.cost_without)
    cost.metric("Cost", money(numbers.cost_with),
                delta=None if change is None else _change(change, "{:+.4f}"), delta_color="inverse",
                help="This call's prompt and reply at the Run tab's prices (the change is against no policy).")
    _hidden_used(call)
    left, right = st.columns([1, 1])
    changed_only = left.toggle("Changed only", key=state.CALL_CHANGED_ONLY,
                               help="Hide items the policy left as they were.")
    positions = view.call_positions(call, changed_only)
    _, pages = view.page(positions, 1, PAGE_SIZE)
    number = right.number_input(f"Page (of {pages})", min_value=1, max_value=pages, step=1, key=state.CALL_PAGE,
                                help=f"{PAGE_SIZE} items per page.") if pages > 1 else 1
    shown, _ = view.page(positions, int(number), PAGE_SIZE)
    st.html(render.rows_table(view.call_rows(call, shown), view.call_largest(call)))


def _hidden_used(call: view.CallView) -> None:
    """Flag the items this call's reply used after the policy had hidden them, with the piece used."""
    uses = call.call.hidden_used
    if not uses:
        return
    lines = [_use_line(use) for use in uses[:10]]
    more = f"\n- … and {plural(len(uses) - 10, 'more piece')}" if len(uses) > 10 else ""
    st.warning(f"The agent's reply to this call used {plural(len(uses), 'piece')} of earlier items that this request "
               "had hidden and showed nowhere else:\n" + "\n".join(lines) + more, icon=":material/visibility_off:")


def _use_line(use: HiddenUse) -> str:
    tool = f" ({render.literal(use.tool)})" if use.tool else ""
    where = "behind a reference the agent can follow" if use.retrievable else "lost: no tool call brings it back"
    return f"- item {use.item}{tool}: “{render.literal(use.span[:120])}” — {where}"


def _change(value: float, shape: str = "{:,}") -> str | None:
    """A metric's change, or none when the policy changed nothing (a red "+0.0000" reads as a loss)."""
    return shape.format(value) if round(value, 4) else None


def _add_rule(tool: str, kind: str) -> None:
    calls, results = state.rule_rows()
    row = breakdown.suggest_rule(st.session_state[state.CONVERSATION], tool, kind)
    (calls if kind == "call" else results).append(row)
    state.set_rule_rows(calls, results)
    state.changed("rules")


def where_tokens_go(conversation: Conversation, count: TokenCount, rules: Rules) -> None:
    shares = breakdown.tool_shares(conversation, count, rules)
    st.caption("Each tool's calls and results apart, largest first. A large share with no rule is where a rule "
               "pays off most.")
    st.dataframe(
        [{"tool": row.tool or "(messages)", "calls or results": row.kind, "items": row.items, "tokens": row.tokens,
          "share": row.share, "largest item": row.largest, "largest at": f"#{row.largest_position}",
          "rule": "yes" if row.has_rule else ("—" if row.kind == "message" else "no")} for row in shares],
        column_config={"share": st.column_config.ProgressColumn("share", format="percent", min_value=0,
                                                                max_value=1)},
        hide_index=True, width="stretch",
    )
    fixed = [row for row in shares if breakdown.worth_a_rule(row)]
    for row in fixed:
        noun = "calls" if row.kind == "call" else "results"
        st.button(f"Add a rule for {render.literal(row.tool)} {noun} ({row.share:.0%} of the request)",
                  key=state.add_rule_key(row.kind, row.tool), on_click=_add_rule, args=(row.tool, row.kind),
                  help="Adds a row to the rule table, with a template that names this tool's own arguments. "
                       "Edit it in the Rules tab.")
    if not fixed:
        st.caption("No tool without a rule holds 5% or more of the request.")
