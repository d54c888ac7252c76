"""The result of compaction at the top of the page: the stage, the four numbers, the meters with
the threshold, and the next request's input cost as one line, its workings a click away."""

from __future__ import annotations

import streamlit as st

from ..compaction import STAGES, Report
from ..conversation import Conversation
from ..engine import Optimized
from ..present import render, view
from ..run import UNKNOWN_NOTE, Price, RequestCost

_STAGE_LOOK = {"below_threshold": ("gray", ":material/pause_circle:"),
               "compacted": ("green", ":material/check_circle:"),
               "still_over": ("orange", ":material/warning:")}
# What each number means: in the details, not as four help icons over the numbers (the first screen
# is counted in controls, and the numbers read well on their own).
MEANINGS = ("**Before**: prompt tokens of the request as it is.",
            "**After**: prompt tokens of the request as sent — after compaction, and after summarization if it "
            "ran.",
            "**Saved by compaction**: the share of the request compaction replaced with references. Retrievable: "
            "the agent can call the tool again. A summary's cut is not in it.",
            "**Summarized away** (when summarization ran): older history the summary replaced. Lossy: no tool "
            "call brings it back.",
            "**Cacheable prefix**: tokens before the first changed item, which a provider's prompt cache can "
            "still reuse; every token after the first edit is billed at the full price on the next request.")


def badges(place, optimized: Optimized) -> None:
    """The stage (and a lossy summary) as badges in ``place``: the page puts them beside its title."""
    report = optimized.compaction.report
    color, icon = _STAGE_LOOK[report.stage]
    place.badge(STAGES[report.stage].capitalize(), icon=icon, color=color)
    done = optimized.summarization
    if done is not None and done.report.status == "summarized":
        place.badge(f"then summarized ({render.literal(done.report.summarizer)}): lossy", icon=":material/summarize:",
                    color="violet")


def headline(original: Conversation, optimized: Optimized, model: Price):
    """The four numbers, the meters with the threshold, and the cost line with its details; returns
    the details' popover, where the page adds what else is only a click away."""
    report = optimized.compaction.report
    done = optimized.summarization
    numbers = view.summary(original, optimized.compaction, model, done)
    final = numbers.after
    summarized = numbers.summarized_away != 0
    before, after, saved, *lost, cache = st.columns(5 if summarized else 4)
    before.metric("Before", f"{report.tokens_before:,}")
    after.metric("After", f"{final:,}")  # no delta: the saved share is beside it, and the row stays one line
    saved.metric("Saved by compaction", f"{numbers.compaction_percent}%")
    if summarized:
        lost[0].metric("Summarized away", f"{numbers.summarized_percent}%")
    cache.metric("Cacheable prefix", f"{numbers.cached_prefix:,}")
    if numbers.window_warning:
        st.warning(render.literal(numbers.window_warning), icon=":material/warning:")
    compacted = numbers.compacted if summarized else None
    scale = view.scale(report.tokens_before, final, report.threshold, model.context_window, compacted)
    st.html(render.meters(scale, report.tokens_before, final, report.threshold, compacted))
    line = st.container(horizontal=True, vertical_alignment="center", gap="small")
    line.caption(_one_line(numbers.costs, model))
    details = line.popover("Cost details", icon=":material/receipt_long:",
                           help="What each number means, where the cache starts, the input cost worked out, and "
                                "whether summarization was needed.")
    with details:
        _details(original, report, numbers, model)
    return details


def _one_line(costs: view.Costs, model: Price) -> str:
    """The next request's input cost in one line: as it is, then as it will be sent."""
    if not model.known:
        return f"Input cost: {UNKNOWN_NOTE} — no listed price for {render.literal(model.model)}."
    where = f"({render.literal(model.model)} list prices, prompt cache included)"
    if costs.after is None:
        return f"Input cost \\${costs.before.cost:.4f} {where}: nothing compacted."
    return f"Input cost \\${costs.before.cost:.4f} → \\${costs.after.cost:.4f} {where}."


def _details(original: Conversation, report: Report, numbers: view.Summary, model: Price) -> None:
    """The details behind the one line: the numbers' meanings, the cacheable prefix, the cost paragraph."""
    gone = (f"Except {numbers.compaction_lost:,} tokens of {', '.join(map(render.literal, numbers.lost_tools))}: "
            "calling those tools again does not bring their output back (a session, a sub-agent, an action), so "
            "that part is lost." if numbers.compaction_lost else "")
    st.markdown("\n".join(f"- {meaning}" for meaning in MEANINGS) + (f"\n\n{gone}" if gone else ""))
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
