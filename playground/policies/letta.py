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

from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any, ClassVar

from .. import formats
from ..conversation import Conversation, Item, ToolCall, ToolResult, is_instruction, role_of
from ..errors import InputError
from ..meter.tokens import Meter
from ..summarize.call import SummaryCall, estimate
from ..summarize.cut import is_summary
from ..summarize.history import Plan, summary_message
from ..summarize.offline import OfflineSummarizer
from .base import PolicyResult, RunningTotal, at_least_zero, unchanged
from .condense import condense_span, message_starts

TRUNCATED = "... [summary truncated to fit]"  # SUMMARY_TRUNCATION_SUFFIX
STEP = 0.10  # the eviction share grows by this much a try


def sliding_cut(valid: list[bool], kept_tokens: list[int], system_tokens: int, goal: float,
                percentage: float) -> int | None:
    """``summarize_via_sliding_window``'s cutoff on Letta's message list (index 0 the system
    message): ``valid[i]`` says message ``i`` is an assistant message, ``kept_tokens[i]`` what the
    messages from ``i`` on cost. None where Letta raises and falls back to summarizing everything."""
    total = len(valid)
    eviction, cut, tokens = percentage, None, float("inf")  # Letta starts the count at the window: over any goal
    while tokens >= goal and eviction < 1.0:
        eviction += STEP
        end = round(eviction * total)
        cut = next((i for i in reversed(range(1, end + 1)) if i < total and valid[i]), None)
        if cut is not None:
            tokens = system_tokens + kept_tokens[cut]
    if cut is None or eviction >= 1.0 or cut >= total - 1:
        return None
    return cut


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
        items = conversation.items
        first = next((p for p, item in enumerate(items) if not is_instruction(item)), len(items))
        sizes = meter.items(items)
        starts = [first + start for start in message_starts(items[first:])]
        parting = _parting(items)
        valid = [False, *(role_of(items[start]) == "assistant" and not parting[start] for start in starts)]
        tail = list(accumulate(reversed(sizes), initial=0))[::-1]  # tail[p]: the items from p on
        kept_tokens = [0, *(tail[start] for start in starts)]
        cut = sliding_cut(valid, kept_tokens, sum(sizes[:first]), (1 - self.sliding_window_percentage)
                          * self.context_window, self.sliding_window_percentage)
        calls: list[SummaryCall] = []
        rest = items[first:]
        if cut is not None and starts[cut - 1] > first:
            rest = (self._summary(items[first:starts[cut - 1]], meter, calls), *items[starts[cut - 1]:])
            kept = conversation.with_items((*items[:first], *items[starts[cut - 1]:]))
            if meter.count(kept).total >= self.threshold():  # still over: the kept messages summarized again
                rest = self._all(items[starts[cut - 1]:], meter, calls)
        elif cut is None:
            rest = self._all(rest, meter, calls)
        if not calls:
            return unchanged(conversation)
        result = formats.checked(conversation.with_items((*items[:first], *rest)))
        counted = meter.count(result).total
        if counted >= total:
            return unchanged(conversation)
        self.totals.remember(result, counted, meter)
        billed = SummaryCall(sum(call.input_tokens for call in calls), sum(call.output_tokens for call in calls))
        return PolicyResult(result, "summarization", tokens_lost=total - counted, summarization=billed)

    def _all(self, messages: tuple[Item, ...], meter: Meter, calls: list[SummaryCall]) -> tuple[Item, ...]:
        """``summarize_all`` on ``messages`` (those after the system message): one summary of all
        of them up to what the model has not answered yet, kept with no call parted from its result."""
        found = condense_span(messages, 0, 0)
        if found is None:
            return messages
        start, end = found
        return (*messages[:start], self._summary(messages[start:end], meter, calls), *messages[end:])

    def _summary(self, span: tuple[Item, ...], meter: Meter, calls: list[SummaryCall]) -> Item:
        """One summary message for ``span`` (the offline summarizer's, clipped as Letta clips it),
        its call noted in ``calls``."""
        text = self.summarizer.summarize(Plan(0, len(span), span, "", any(map(is_summary, span)), 0, meter))
        if len(text) > self.clip_chars:
            text = text[:self.clip_chars] + TRUNCATED
        message = summary_message(text, len(span), "Letta sliding-window summary: offline summary, no LLM")
        calls.append(estimate(sum(meter.items(span)), meter.items((message,))[0], meter))
        return message


def _parting(items: tuple[Item, ...]) -> list[bool]:
    """``parting[p]``: a cut at ``p`` would part a call before it from its result at or after it. In
    Letta a reply and its calls are one message, so a cut at a reply never does; here each call of a
    format that lists them one by one is a message of its own, and a cut between two calls of one
    reply left the first one's result without its call (a request no API takes)."""
    called: dict[str, int] = {}
    opened = [0] * (len(items) + 1)  # +1 where a call's open range starts, -1 past its result
    for position, item in enumerate(items):
        if isinstance(item, ToolCall):
            called[item.call_id] = position
        elif isinstance(item, ToolResult) and called.get(item.call_id, position) < position:
            opened[called[item.call_id] + 1] += 1
            opened[position + 1] -= 1
    return [depth > 0 for depth in accumulate(opened[:-1])]
