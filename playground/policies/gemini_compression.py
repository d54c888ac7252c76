"""Gemini CLI's chat compression (``chatCompressionService.ts``), run offline.

Once the last prompt reaches ``fraction`` of the model's limit, three things happen to the history
(the request less what the model has not answered yet). First the tool outputs, newest first,
are held to a budget: once the outputs seen come to more than ``budget`` tokens, each older one
longer than ``max_chars`` characters is saved to a file and cut to its first fifth and last four
fifths of ``max_chars`` characters, with the file's path. Then the history is split at a user
message (never a tool response) once the characters before it reach ``1 - keep_share`` of the
whole: the newest ``keep_share`` stays, as truncated. Everything before the split becomes one
summary, followed by the model's fixed acknowledgement. Gemini asks for the summary twice (a
second call checks the first and writes it again), so both calls are billed. If the result is
larger than what it replaced, nothing changes, as in the source.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from .. import formats
from ..conversation import (
    Conversation,
    Item,
    Message,
    ToolCall,
    ToolResult,
    content_text,
    is_instruction,
    links,
    role_of,
)
from ..errors import InputError
from ..meter.carried import CarriedCounts
from ..meter.tokens import Meter
from ..summarize.call import SummaryCall, estimate
from ..summarize.cut import is_summary
from ..summarize.history import Plan, summary_message
from ..summarize.offline import OfflineSummarizer
from .base import PolicyResult, RunningTotal, UserTurns, at_least_zero, unchanged, unread_from

ACKNOWLEDGEMENT = "Got it. Thanks for the additional context!"
HEAD_SHARE = 0.2  # of a cut output's characters, the share taken from its start (fileUtils.ts)


def truncated_output(text: str, path: str, max_chars: int) -> str:
    """Gemini's ``formatTruncatedToolOutput``: the output as it is when it fits in ``max_chars``
    characters, else its head and tail with the count of characters left out and where they are."""
    if len(text) <= max_chars:
        return text
    head = int(max_chars * HEAD_SHARE)
    tail = max_chars - head
    return (f"Output too large. Showing first {head:,} and last {tail:,} characters. For full output see: {path}\n"
            f"{text[:head]}\n\n... [{len(text) - head - tail:,} characters omitted] ...\n\n{text[len(text) - tail:]}")


def _chars(item: Item) -> int:
    return len(item.arguments) if isinstance(item, ToolCall) else len(content_text(item.content))


def split_point(history: tuple[Item, ...], fraction: float) -> int:
    """Gemini's ``findCompressSplitPoint``: the first user message (not a tool response) with at
    least ``fraction`` of the characters before it; else everything when the history ends on a
    model reply without calls, else the last such message seen. A message that would part a call
    from its result is no split point (a Gemini turn never puts one there)."""
    total = sum(map(_chars, history))
    parted = {position for result, call in links(history).items() for position in range(call + 1, result + 1)}
    last = seen = 0
    for position, item in enumerate(history):
        if isinstance(item, Message) and item.role == "user" and position not in parted:
            if seen >= total * fraction:
                return position
            last = position
        seen += _chars(item)
    if history and role_of(history[-1]) == "assistant" and not isinstance(history[-1], ToolCall):
        return len(history)
    return last


@dataclass(frozen=True)
class GeminiCompressionPolicy:
    fraction: float = 0.5  # of the model's limit: compress at or above it
    keep_share: float = 0.3  # of the history's characters, the newest kept
    budget: int = 50_000  # tokens of tool output kept whole, newest first
    max_chars: int = 40_000  # a cut output's length (truncateToolOutputThreshold)
    context_window: int = 1_048_576  # the model's limit (Gemini's tokenLimit for every Gemini model)
    totals: RunningTotal = field(default_factory=RunningTotal, compare=False, repr=False)
    turns: UserTurns = field(default_factory=UserTurns, compare=False, repr=False)
    # the policy's own, so a span that only grew since the last summary is read only in what it added
    summarizer: OfflineSummarizer = field(default_factory=OfflineSummarizer, compare=False, repr=False)
    # the request's items' counts, carried (per call it grows by appending): the span's tokens at each firing
    counts: CarriedCounts = field(default_factory=CarriedCounts, compare=False, repr=False)
    name: ClassVar[str] = "gemini-compression"

    def __post_init__(self) -> None:
        if not 0 < self.keep_share < 1:
            raise InputError("keep_share must be between 0 and 1", where="keep_share", value=self.keep_share)
        at_least_zero(self, "budget", "max_chars", "context_window")

    def threshold(self) -> int:
        return int(self.fraction * self.context_window)

    def params(self) -> dict[str, Any]:
        return {"trigger": self.threshold(), "context_window": self.context_window, "keep_share": self.keep_share,
                "budget": self.budget, "max_chars": self.max_chars}

    def _truncated(self, history: tuple[Item, ...], total: int, meter: Meter) -> tuple[list[Item], dict[int, int]]:
        """The history with older outputs held to the budget, and what each cut saved. The cut
        is at most four characters a token of what is left of the window (the source's bound)."""
        max_chars = max(0, min(4 * (self.context_window - total), self.max_chars))
        edited, used, saved = list(history), 0, {}
        for position in range(len(history) - 1, -1, -1):
            item = history[position]
            if not isinstance(item, ToolResult):
                continue
            text = content_text(item.content)
            tokens = meter.text(text)
            if used + tokens <= self.budget:
                used += tokens
                continue
            tool = (item.name or "tool").lower()
            cut = truncated_output(text, f"tool-outputs/{tool}_{item.call_id.lower()}.txt", max_chars)
            kept = meter.text(cut)
            used += kept
            if cut != text and kept < tokens:
                edited[position], saved[position] = replace(item, content=cut), tokens - kept
        return edited, saved

    def _may_split(self, conversation: Conversation, first: int, pending: int) -> bool:
        """Whether ``split_point`` can split the history ``first:pending`` anywhere but at its start
        (where there is nothing to summarize): only at a user message after its first item, or at
        its end when it ends on a reply without calls. Known without reading the history — a long
        run past the threshold with no user message since its first would otherwise cut every
        output and walk the whole history at every call to find nothing to summarize."""
        items = conversation.items
        last = items[pending - 1] if pending > first else None
        ends_on_reply = last is not None and role_of(last) == "assistant" and not isinstance(last, ToolCall)
        return ends_on_reply or self.turns.read(conversation).any_between(first, pending)

    def apply(self, conversation: Conversation, meter: Meter) -> PolicyResult:
        total = self.totals.total(conversation, meter)
        items = conversation.items
        pending = unread_from(items)  # what follows the last reply: not in Gemini's history yet
        if total < self.threshold() or pending is None:
            return unchanged(conversation)
        first = next((p for p, item in enumerate(items) if not is_instruction(item)), len(items))
        if not self._may_split(conversation, first, pending):
            return unchanged(conversation)
        history = items[first:pending]
        truncated, saved = self._truncated(history, total, meter)
        split = split_point(tuple(truncated), 1 - self.keep_share)
        retrievable = sum(tokens for position, tokens in saved.items() if position >= split)  # the rest is summarized
        span = history[:split]
        if not span or (len(span) == 1 and is_summary(span[0])):
            return unchanged(conversation)
        text = self.summarizer.summarize(Plan(first, first + split, span, "", any(map(is_summary, span)), 0,
                                                  meter))
        summary = summary_message(text, len(span), "Gemini CLI chat compression: offline summary, no LLM")
        acknowledged = (summary, Message(role="assistant", content=ACKNOWLEDGEMENT))
        result = formats.checked(conversation.with_items(
            (*items[:first], *acknowledged, *truncated[split:], *items[pending:])))
        counted = meter.count(result)
        if counted.total >= total:
            return unchanged(conversation)  # Gemini keeps the history when compression inflates it
        self.totals.remember(result, counted.total, meter)
        summary_tokens = counted.items[first]
        self.counts.counts(items, meter)
        span_tokens = self.counts.between(first, first + split)
        return PolicyResult(result, "summarization", tokens_lost=max(0, total - counted.total - retrievable),
                            tokens_retrievable=retrievable,
                            summarization=_two_calls(estimate(span_tokens, summary_tokens, meter)))


def _two_calls(summarizing: SummaryCall) -> SummaryCall:
    """Gemini's summary and its check, billed as one: the check reads what the first call read
    and the summary it wrote, and writes the summary again."""
    return SummaryCall(2 * summarizing.input_tokens + summarizing.output_tokens, 2 * summarizing.output_tokens)
