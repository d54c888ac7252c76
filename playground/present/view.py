"""What the before/after screen shows, as plain values: one aligned row per item, the meter
scale, the prompt-cache and cost summary. The UI only lays these out."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from .. import formats
from ..compaction import Compaction
from ..conversation import Conversation, Item, ToolCall, content_text, role_of, tool_name
from ..meter.tokens import Meter, TokenCount
from ..run.prices import Price
from ..run.promptcache import Prompt, RequestCost, next_request, prompt
from ..run.replay import Call, Replay
from ..summarize.history import SummaryResult

T = TypeVar("T")

# Reasons as a person reads them next to an item.
SKIP_WORDS = {
    "rule_disabled": "rule disabled",
    "no_argument": "no such argument",
    "already_compacted": "already compacted",
    "not_processed": "not processed by the model yet",
    "result_pending": "its result is not in yet",
    "error_result": "error result",
    "keep_recent": "within keep_recent",
    "below_min_tokens": "below the rule's min_tokens",
    "not_smaller": "replacement not smaller",
}


@dataclass(frozen=True)
class Row:
    position: int
    location: str
    role: str
    tool: str | None
    before: str
    after: str
    tokens_before: int
    tokens_after: int
    changed: bool
    rules: tuple[str, ...]
    skipped: tuple[str, ...]  # reasons in words, with detail
    cache_boundary: bool  # the first changed item: the provider's cached prefix ends before it
    summarized: bool = False  # folded into the summary (the summary's text shows on the span's first row)
    used: tuple[str, ...] = ()  # spans of it the call's reply used after the policy hid it (``hidden``)


def shown_text(item: Item) -> str:
    """What the item says, as one text: a call as ``name(arguments)``; blocks without text as
    a short placeholder so they are not invisible."""
    if isinstance(item, ToolCall):
        return f"{item.name}({item.arguments})"
    content = item.content
    text = content_text(content)
    if isinstance(content, tuple):
        others = [part.type or "block" for part in content if part.text is None]
        if others:
            text += "".join(f"[{kind} block]" for kind in others)
    return text


def _summarized(summarization: SummaryResult | None) -> bool:
    return summarization is not None and summarization.report.status == "summarized"


def format_title(conversation: Conversation) -> str:
    """What the conversation was read from, as a person names it: an agent's log (``source``) with
    the API format it became, else the API format alone."""
    title = formats.TITLES[conversation.format]
    if conversation.source:
        return f"{formats.TITLES.get(conversation.source, conversation.source)}, read as {title}"
    return title


def row_positions(result: Compaction, summarization: SummaryResult | None, changed_only: bool) -> list[int]:
    """The items the table lists: all, or only those changed, skipped or folded into the summary."""
    report = result.report
    if not changed_only:
        return list(range(len(report.before.items)))
    marked = {edit.position for edit in report.edits} | {skip.position for skip in report.skipped}
    if _summarized(summarization):
        marked |= set(range(int(summarization.report.start or 0), int(summarization.report.end or 0)))
    return sorted(marked)


def largest_tokens(result: Compaction, summarization: SummaryResult | None) -> int:
    """The largest item on either side, for the rows' bars (compaction never makes an item larger)."""
    summary = summarization.report.summary_tokens if _summarized(summarization) else 0
    return max([*result.report.before.items, *result.report.after.items, summary or 0], default=0)


def rows(original: Conversation, result: Compaction, summarization: SummaryResult | None = None,
         positions: Iterable[int] | None = None) -> list[Row]:
    """One row per item of the request (or per item at ``positions``: a page builds only its own rows);
    with a summary, the span's rows show it folded in."""
    report = result.report
    edits: dict[int, list[str]] = {}
    for edit in report.edits:
        edits.setdefault(edit.position, []).append(edit.rule)
    skips: dict[int, list[str]] = {}
    for skip in report.skipped:
        words = SKIP_WORDS[skip.reason] + (f" ({skip.detail})" if skip.detail else "")
        skips.setdefault(skip.position, []).append(words)
    out = []
    chosen = range(len(original.items)) if positions is None else positions
    for position in chosen:
        before, after = original.items[position], result.conversation.items[position]
        out.append(Row(
            position=position,
            location=formats.where(original, before) if before.origin else f"item {position}",
            role=role_of(before),
            tool=tool_name(before),
            before=shown_text(before),
            after=shown_text(after),
            tokens_before=report.before.items[position],
            tokens_after=report.after.items[position],
            changed=position in edits,
            rules=tuple(edits.get(position, ())),
            skipped=tuple(skips.get(position, ())),
            cache_boundary=position == report.first_changed_position,
        ))
    if _summarized(summarization):
        out = _fold(out, result.report.first_changed_position, summarization)
    return out


def _fold(out: list[Row], first_changed: int | None, summarization: SummaryResult) -> list[Row]:
    """The span's rows point into the summary: its first row shows the summary message."""
    done = summarization.report
    start, end = int(done.start or 0), int(done.end or 0)
    summary = shown_text(summarization.conversation.items[start])
    boundary = start if first_changed is None else min(first_changed, start)
    folded = []
    for row in out:
        position = row.position
        if start <= position < end:
            first = position == start
            folded.append(replace(row, after=summary if first else "",
                                  tokens_after=done.summary_tokens if first else 0, changed=True, summarized=True,
                                  rules=(), skipped=(), cache_boundary=position == boundary))
        else:
            folded.append(replace(row, cache_boundary=position == boundary))
    return folded


def page(chosen: Sequence[T], number: int, size: int) -> tuple[Sequence[T], int]:
    """One page of ``chosen`` (1-based ``number``, clamped) and the page count."""
    pages = max(1, -(-len(chosen) // size))
    number = min(max(1, number), pages)
    return chosen[(number - 1) * size: number * size], pages


@dataclass(frozen=True)
class Scale:
    """One horizontal scale for the token meters, in percent of its width."""

    maximum: int
    before: float
    after: float
    threshold: float
    window: float | None  # None: the context window is far off this scale
    window_tokens: int | None  # None: the catalogue does not know the model's window
    compacted: float | None = None  # after compaction, when a summary went further (then ``after`` is the final)


def scale(before: int, after: int, threshold: int, window: int | None, compacted: int | None = None) -> Scale:
    """A scale that shows before, after and the threshold, and the context window too unless it
    is so much larger that everything else would shrink to a sliver. ``compacted``: the stage
    between, when summarization took the request further than compaction did."""
    visible = max(before, after, threshold, compacted or 0, 1)
    maximum = max(visible, window) if window is not None and window <= 4 * visible else visible
    maximum = int(maximum * 1.05)

    def percent(value: int) -> float:
        return round(100 * value / maximum, 2)

    return Scale(maximum, percent(before), percent(after), percent(threshold),
                 percent(window) if window is not None and window <= maximum else None, window,
                 None if compacted is None else percent(compacted))


def threshold_range(before: int, threshold: int) -> tuple[int, int]:
    """The threshold slider's maximum and step: room above this request and the current value,
    in steps that make a few hundred positions."""
    top = max(before * 3 // 2, threshold, 1_000)
    step = next(s for s in (10, 50, 100, 500, 1_000, 5_000, 10_000, 50_000) if top / s <= 400 or s == 50_000)
    return -(-top // step) * step, step


def previous_call_end(conversation: Conversation) -> int | None:
    """Where the previous call's request ends: the start of the conversation's last assistant turn
    (the assistant's text and tool calls that call answered with); None for a conversation without
    an assistant turn, a first call with nothing cached."""
    items = conversation.items
    end = next((p for p in range(len(items) - 1, -1, -1) if role_of(items[p]) == "assistant"), None)
    if end is None:
        return None
    while end > 0 and role_of(items[end - 1]) == "assistant":
        end -= 1
    return end


def request_prompt(items: Sequence[Item], count: TokenCount, end: int | None = None) -> Prompt:
    """The prompt of ``items[:end]`` as a cache sees it, from ``count`` (the count of ``items``):
    the fixed head (what a calibration adds for a log, tools, instructions) first, the items' own
    tokens, reply priming last."""
    end = len(items) if end is None else end
    return prompt(items[:end], count.items[:end], count.unlogged + count.tools + count.instructions, count.priming)


@dataclass(frozen=True)
class Costs:
    """Input cost of the next request, as a running agent pays it, by the one cost model replay
    bills calls with (``promptcache.next_request``): the previous call's prompt is in the cache.

    Before compaction the unchanged request reads what it shares with that prompt; the compacted
    (or summarized) request reads only what it still shares with it, up to the first edit. Input
    only: the reply is billed on top at the output price (the Run tab prices whole calls).
    """

    cache: str  # the prompt-cache model: the price's provider's
    previous_prefix: int  # tokens the previous call sent: in the cache now (if long enough to be written)
    before: RequestCost  # the request as it is
    before_uncached: float  # the same with nothing cached
    after: RequestCost | None  # the request as it will be sent; None: nothing changed


def costs(original: Conversation, before: TokenCount, sent: tuple[Sequence[Item], TokenCount] | None,
          price: Price) -> Costs:
    """``sent``: the items of the request as it will be sent and their count (None when nothing changed)."""
    end = previous_call_end(original)
    previous = None if end is None else request_prompt(original.items, before, end)
    request = request_prompt(original.items, before)
    cache = price.cache
    after = None if sent is None else next_request(previous, request_prompt(*sent), cache, price)
    return Costs(cache, 0 if previous is None else previous.offsets[-1], next_request(previous, request, cache, price),
                 next_request(None, request, "none", price).cost, after)


@dataclass(frozen=True)
class Summary:
    """The headline numbers: tokens saved, where the cache prefix ends, what a request costs."""

    before: int
    after: int  # the request as it will be sent (after summarization, if it ran)
    saved: int  # by both steps
    cached_prefix: int
    cached_percent: float  # of the compacted request
    first_change: str | None
    costs: Costs
    model: Price
    compacted: int = 0  # after compaction, before any summary
    compaction_lost: int = 0  # of what compaction removed, what calling the tool again does not bring back
    lost_tools: tuple[str, ...] = ()  # the tools that holds

    @property
    def compaction_saved(self) -> int:
        """What compaction removed: retrievable, since the agent can call the tool again — except
        ``compaction_lost``, replaced for tools whose output a call does not bring back."""
        return self.before - self.compacted

    @property
    def compaction_percent(self) -> float:
        return _percent(self.compaction_saved, self.before)

    @property
    def summarized_away(self) -> int:
        """What the summary removed beyond compaction: lost for good (0 when no summary was applied)."""
        return self.compacted - self.after

    @property
    def summarized_percent(self) -> float:
        return _percent(self.summarized_away, self.before)

    @property
    def window_warning(self) -> str | None:
        """Said when a request does not fit the model's context window (the API would refuse it)."""
        window = self.model.context_window
        if window is None or self.before <= window:
            return None
        fits = "compaction brings it within" if self.after <= window else "it is still over the window after compaction"
        return (f"This request ({self.before:,} tokens) is larger than {self.model.model}'s context window "
                f"({window:,}): the API would refuse it as it is; {fits}.")


def summary(original: Conversation, result: Compaction, model: Price,
            summarization: SummaryResult | None = None) -> Summary:
    """Headline numbers for the request as it will be sent (after summarization, if it ran), with
    ``model``'s prices and its provider's prompt cache."""
    report = result.report
    before, after = report.tokens_before, report.tokens_after
    position = report.first_changed_position
    cached = report.cached_prefix_tokens
    sent = None if position is None else (result.conversation.items, report.after)
    if _summarized(summarization):
        after = summarization.report.tokens_after
        sent = (summarization.conversation.items, summarization.count)
        start = int(summarization.report.start or 0)
        if position is None or start < position:
            position, cached = start, report.before.prefix(start)
    first = None if position is None else (
        formats.where(original, original.items[position]) if original.items[position].origin else f"item {position}")
    return Summary(
        before=before,
        after=after,
        saved=before - after,
        cached_prefix=cached,
        cached_percent=round(100 * min(cached, after) / after, 1) if after else 0.0,
        first_change=first,
        costs=costs(original, report.before, sent, model),
        model=model,
        compacted=report.tokens_after,
        compaction_lost=report.tokens_lost,
        lost_tools=tuple(sorted({edit.tool for edit in report.edits if edit.tool in report.one_off})),
    )


def _percent(part: int, whole: int) -> float:
    return round(100 * part / whole, 1) if whole else 0.0


@dataclass(frozen=True)
class CallView:
    """One call of a replayed run as the Before / after view shows it: the request without the
    policy (everything before the call's turn) beside the request as sent under it. A policy keeps
    items in place except a summary, which stands for a span of ``folded`` items at ``head``."""

    number: int  # the call's position in the run's calls
    calls: int  # calls in the whole run
    call: Call
    policy: str
    without: Conversation
    sent: Conversation
    tokens_without: tuple[int, ...]
    tokens_sent: tuple[int, ...]
    head: int  # items both requests share from the start
    folded: int  # items of ``without`` one summary item replaced (0: no summary)


def call_view(conversation: Conversation, run: Replay, calls: int, meter: Meter) -> CallView:
    """The last call of ``run`` (a replay stopped there with ``until=``) as a before/after view.
    ``calls`` is how many the whole run has, for "call k of N"."""
    call = run.calls[-1]
    without, sent = conversation.with_items(conversation.items[:call.position]), run.final
    head = 0
    limit = min(len(without.items), len(sent.items))
    while head < limit and without.items[head] == sent.items[head]:
        head += 1
    shorter = len(without.items) - len(sent.items)
    if shorter > 0:  # the summary stands at the first difference, which is within what was sent
        head = min(head, max(len(sent.items) - 1, 0))
    return CallView(len(run.calls) - 1, calls, call, run.policy, without, sent, meter.items(without.items),
                    meter.items(sent.items), head, shorter + 1 if shorter > 0 else 0)


def _partner(view: CallView, position: int) -> int | None:
    """Where the item at ``position`` of the request without the policy stands in the one sent:
    None when a summary took it (the summary itself stands at the span's first position)."""
    if not view.folded or position < view.head:
        return position
    if position < view.head + view.folded:
        return view.head if position == view.head and view.head < len(view.sent.items) else None
    return position - view.folded + 1


def _folded(view: CallView, position: int) -> bool:
    return view.head <= position < view.head + view.folded


def _changed(view: CallView, position: int) -> bool:
    partner = _partner(view, position)
    return _folded(view, position) or view.sent.items[partner] != view.without.items[position]


def call_positions(view: CallView, changed_only: bool) -> list[int]:
    """The items the call's table lists: all, or only those the policy changed or folded."""
    every = range(len(view.without.items))
    return [p for p in every if _changed(view, p)] if changed_only else list(every)


def call_rows(view: CallView, positions: Iterable[int]) -> list[Row]:
    """One row per item of the call's request without the policy, beside what was sent for it,
    with the spans of it the call's reply used after the policy hid it."""
    used: dict[int, tuple[str, ...]] = {}
    for use in view.call.hidden_used:
        used[use.item] = (*used.get(use.item, ()), use.span)
    out = []
    for position in positions:
        before = view.without.items[position]
        partner = _partner(view, position)
        summarized, changed = _folded(view, position), _changed(view, position)
        shown = partner is not None
        after = view.sent.items[partner] if shown else None
        out.append(Row(
            position=position,
            location=formats.where(view.without, before) if before.origin else f"item {position}",
            role=role_of(before), tool=tool_name(before), before=shown_text(before),
            after=shown_text(after) if shown else "",
            tokens_before=view.tokens_without[position],
            tokens_after=view.tokens_sent[partner] if shown else 0,
            changed=changed, rules=(view.policy,) if changed and not summarized else (), skipped=(),
            cache_boundary=position == view.head and view.head < len(view.without.items),
            summarized=summarized, used=used.get(position, ())))
    return out


def call_largest(view: CallView) -> int:
    """The largest item on either side of the call, for the rows' bars."""
    return max([*view.tokens_without, *view.tokens_sent], default=0)
