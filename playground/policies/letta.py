"""Letta's sliding-window summarizer (``letta/services/summarizer/summarizer_sliding_window.py``
and ``compact.py``), run offline.

Letta compacts once a step's prompt is over ``trigger_share`` (0.9) of the model's context window.
Its messages are the system message and then each message in context (an assistant reply with its
tool calls is one, each tool return one). The cut starts a tenth past ``sliding_window_percentage``
(0.3, so at 40 %) of the message count and grows by tenths until the system message and the messages
from the cut on come under ``1 - sliding_window_percentage`` of the window; the cut is the newest assistant
message at or before that point, so the kept messages begin with a reply and every tool return
follows its call. Everything between the system message and the cut becomes one summary (clipped
to ``clip_chars`` characters). When no cut fits (the growth passes the whole list, or the cut would
be the last message) Letta summarizes every message but the system's instead; and when what it
kept is still at or over the trigger, it summarizes that again the same way — from the kept
messages alone, so the first summary is not in the second. Each summary is an LLM call, billed.
Here "every message" stops before what the model has not answered yet, which Letta would fold in.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .. import formats
from ..conversation import Conversation, Item, ToolCall, ToolResult, content_text, is_instruction, role_of
from ..errors import InputError
from ..meter.carried import CarriedCounts
from ..meter.tokens import Meter
from ..summarize.call import SummaryCall, estimate
from ..summarize.cut import is_summary
from ..summarize.history import Plan, summary_message
from ..summarize.offline import OfflineSummarizer
from .base import AppendedIndex, PolicyResult, RunningTotal, at_least_zero, unchanged
from .condense import condense_span

TRUNCATED = "... [summary truncated to fit]"  # SUMMARY_TRUNCATION_SUFFIX
STEP = 0.10  # the eviction share grows by this much a try


def sliding_cut(valid: Callable[[int], bool], kept_tokens: Callable[[int], int], total: int, system_tokens: int,
                goal: float, percentage: float) -> int | None:
    """``summarize_via_sliding_window``'s cutoff on Letta's ``total`` messages (index 0 the system
    message): ``valid(i)`` says message ``i`` is an assistant message, ``kept_tokens(i)`` what the
    messages from ``i`` on cost (asked of a few messages only: a long run's request is not read
    whole at every call). None where Letta raises and falls back to summarizing everything."""
    eviction, cut, tokens = percentage, None, float("inf")  # Letta starts the count at the window: over any goal
    while tokens >= goal and eviction < 1.0:
        eviction += STEP
        end = round(eviction * total)
        cut = next((i for i in reversed(range(1, end + 1)) if i < total and valid(i)), None)
        if cut is not None:
            tokens = system_tokens + kept_tokens(cut)
    if cut is None or eviction >= 1.0 or cut >= total - 1:
        return None
    return cut


class LettaMessages(AppendedIndex):
    """What Letta's cut reads of a request — where the system message ends, where each message
    begins, which positions a cut would part from a call, where earlier summaries stand and each
    item's count — read only from what is new when a request grows from the last one (per call,
    every request is the whole history so far); any other request is read whole. Owned by one
    policy."""

    def __init__(self) -> None:
        self._reset()
        self.counts = CarriedCounts()  # the request's items
        self.span_counts = CarriedCounts()  # the span summarized (per call, it grows from the last one's)
        self.other_counts = CarriedCounts()  # what ``summarize_all`` summarizes

    def _reset(self) -> None:
        self.items = ()
        self.first = 0  # the first item that is not an instruction (the system message's end)
        self.starts: list[int] = []  # where each message from ``first`` on begins
        self.parting: list[bool] = []  # a cut here would part a call before it from its result at or after it
        self.summaries: list[int] = []
        self._called: dict[str, int] = {}  # call id -> its latest call's position

    def _read(self, items: tuple[Item, ...], position: int) -> None:
        """One appended item. In Letta a reply and its calls are one message, so a cut at a reply
        never parts them; here each call of a format that lists them one by one is a message of
        its own, and a cut between two calls of one reply left the first one's result without its
        call (a request no API takes): ``parting`` marks every position between a call and its result."""
        item = items[position]
        if position == self.first and is_instruction(item):
            self.first += 1
        elif position == self.first or _begins(item, items[position - 1]):
            self.starts.append(position)
        if is_summary(item):
            self.summaries.append(position)
        self.parting.append(False)
        if isinstance(item, ToolCall):
            self._called[item.call_id] = position
        elif isinstance(item, ToolResult) and self._called.get(item.call_id, position) < position:
            for between in range(self._called[item.call_id] + 1, position + 1):
                self.parting[between] = True

    def valid(self, message: int) -> bool:
        """Letta's message ``message`` (1 the first after the system message) may begin what is kept."""
        start = self.starts[message - 1]
        return role_of(self.items[start]) == "assistant" and not self.parting[start]

    def holds_summary(self, start: int, end: int) -> bool:
        return bisect_left(self.summaries, start) < bisect_left(self.summaries, end)


@dataclass(frozen=True)
class LettaSlidingWindowPolicy:
    context_window: int = 200_000  # the agent model's window: the trigger and the goal are shares of it
    trigger_share: float = 0.9  # SUMMARIZATION_TRIGGER_MULTIPLIER
    sliding_window_percentage: float = 0.3  # partial_evict_summarizer_percentage
    clip_chars: int = 50_000  # the summary's most characters
    totals: RunningTotal = field(default_factory=RunningTotal, compare=False, repr=False)
    # the policy's own, so a span that begins with the last one (per call, the same oldest messages) is read
    # only past it: a fresh summarizer read every call's whole span
    summarizer: OfflineSummarizer = field(default_factory=OfflineSummarizer, compare=False, repr=False)
    # what the cut reads of a request, carried from the last one (None: each request read whole)
    index: LettaMessages | None = field(default_factory=LettaMessages, compare=False, repr=False)
    name: ClassVar[str] = "letta-sliding-window"

    def __post_init__(self) -> None:
        at_least_zero(self, "context_window", "clip_chars")
        for key in ("trigger_share", "sliding_window_percentage"):
            value = getattr(self, key)
            if not 0 < value <= 1:
                raise InputError(f"{key} must be above 0 and at most 1", where=key, value=value)

    def threshold(self) -> int:
        return int(self.context_window * self.trigger_share)

    def params(self) -> dict[str, Any]:
        return {"trigger": self.threshold(), "context_window": self.context_window,
                "sliding_window_percentage": self.sliding_window_percentage, "clip_chars": self.clip_chars}

    def apply(self, conversation: Conversation, meter: Meter) -> PolicyResult:
        total = self.totals.total(conversation, meter)
        if total <= self.threshold():
            return unchanged(conversation)
        index = (self.index or LettaMessages()).read(conversation)
        items, first, starts = conversation.items, index.first, index.starts
        counted = index.counts
        counted.follow(conversation, meter)
        cut = sliding_cut(index.valid, lambda message: counted.between(starts[message - 1], len(items)),
                          len(starts) + 1, counted.between(0, first),
                          (1 - self.sliding_window_percentage) * self.context_window, self.sliding_window_percentage)
        calls: list[SummaryCall] = []
        made, rest = (), items[first:]  # what follows the system message: the summary, then the run's own
        carried = None  # the result's counts, when it is the request with one summary in place of items first:end
        if cut is not None and starts[cut - 1] > first:
            end = starts[cut - 1]
            summary = self._summary(items[first:end], index.holds_summary(first, end), index.span_counts, meter, calls)
            made, rest = (summary,), items[end:]
            # the kept messages' total and then the result's, from the request's carried counts where they hold
            kept = counted.replaced(total, first, end, (), meter)
            if (meter.count(conversation.with_items((*items[:first], *rest))).total if kept is None
                    else kept.total) >= self.threshold():  # still over: the kept messages summarized again
                made, rest = self._all(rest, index.other_counts, meter, calls)
            else:
                carried = counted.replaced(total, first, end, made, meter)
        elif cut is None:
            made, rest = self._all(rest, index.other_counts, meter, calls)
        if not calls:
            return unchanged(conversation)
        result = formats.checked_head(conversation, (*items[:first], *made), rest)
        after = meter.count(result).total if carried is None else carried.total
        if after >= total:
            return unchanged(conversation)
        self.totals.remember(result, after, meter)
        billed = SummaryCall(sum(call.input_tokens for call in calls), sum(call.output_tokens for call in calls))
        return PolicyResult(result, "summarization", tokens_lost=total - after, summarization=billed)

    def _all(self, messages: tuple[Item, ...], counts: CarriedCounts, meter: Meter, calls: list[SummaryCall]
             ) -> tuple[tuple[Item, ...], tuple[Item, ...]]:
        """``summarize_all`` on ``messages`` (those after the system message): one summary of all
        of them up to what the model has not answered yet, kept with no call parted from its result —
        what comes before and with the summary, and the messages after it."""
        found = condense_span(messages, 0, 0)
        if found is None:
            return (), messages
        start, end = found
        span = messages[start:end]
        return (*messages[:start], self._summary(span, any(map(is_summary, span)), counts, meter, calls)), \
            messages[end:]

    def _summary(self, span: tuple[Item, ...], earlier: bool, counts: CarriedCounts, meter: Meter,
                 calls: list[SummaryCall]) -> Item:
        """One summary message for ``span`` (the offline summarizer's, clipped as Letta clips it;
        ``earlier``: it holds an earlier summary), its call noted in ``calls``."""
        text = self.summarizer.summarize(Plan(0, len(span), span, "", earlier, 0, meter))
        if len(text) > self.clip_chars:
            text = text[:self.clip_chars] + TRUNCATED
        message = summary_message(text, len(span), "Letta sliding-window summary: offline summary, no LLM")
        meter.raw_by_line(content_text(message.content))  # (per call, most of its lines are the last summary's)
        counts.counts(span, meter)
        calls.append(estimate(counts.between(0, len(span)), meter.items((message,))[0], meter))
        return message


def _begins(item: Item, before: Item) -> bool:
    """``item`` begins a message (``message_starts``): items read from one message share an origin."""
    origin, earlier = item.origin, before.origin
    return origin is None or earlier is None or origin.index != earlier.index
