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

from collections.abc import Callable
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
    extends,
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


def split_point(history: tuple[Item, ...], fraction: float, pending: tuple[Item, ...] = (),
                chars: Callable[[Item], int] = _chars) -> int:
    """Gemini's ``findCompressSplitPoint``: the first user message (not a tool response) with at
    least ``fraction`` of the characters before it; else everything when the history ends on a
    model reply without calls, else the last such message seen. A message that would part a call
    from its result is no split point (a Gemini turn never puts one there), nor one that would part
    a call from its result among the ``pending`` items that follow the history (a log's late answer:
    summarized, its call would leave the result with none, and the request invalid). ``chars``: an
    item's characters (a policy's own reading, ``_Read``)."""
    total = sum(map(chars, history))
    parted = {position for result, call in links((*history, *pending)).items()
              for position in range(call + 1, result + 1)}
    last = seen = 0
    for position, item in enumerate(history):
        if isinstance(item, Message) and item.role == "user" and position not in parted:
            if seen >= total * fraction:
                return position
            last = position
        seen += chars(item)
    if history and role_of(history[-1]) == "assistant" and not isinstance(history[-1], ToolCall):
        return len(history)
    return last


class _Read:
    """What compression reads of each item, once per item (per call a policy reads every item of the
    history again): its characters, and a tool output's tokens and its cut at the length of the
    moment — kept for one length and meter at a time (near the window the length changes at every
    call). Owned by one policy."""

    def __init__(self) -> None:
        self._chars: dict[int, tuple[Item, int]] = {}
        self._cuts: dict[int, tuple[ToolResult, ToolResult | None, int, int]] = {}
        self._cut_for: tuple[int, Meter | None] = (-1, None)

    def chars(self, item: Item) -> int:
        known = self._chars.get(id(item))
        if known is None or known[0] is not item:
            known = self._chars[id(item)] = (item, _chars(item))
        return known[1]

    def cut(self, item: ToolResult, max_chars: int, meter: Meter) -> tuple[ToolResult | None, int, int]:
        """The output cut to ``max_chars`` characters (None when that leaves it as it is or saves nothing),
        its tokens whole, and its tokens as cut."""
        if self._cut_for[0] != max_chars or self._cut_for[1] is not meter:
            self._cuts, self._cut_for = {}, (max_chars, meter)
        known = self._cuts.get(id(item))
        if known is None or known[0] is not item:
            text = content_text(item.content)
            tool = (item.name or "tool").lower()
            cut = truncated_output(text, f"tool-outputs/{tool}_{item.call_id.lower()}.txt", max_chars)
            tokens, kept = meter.text(text), meter.text(cut)
            known = self._cuts[id(item)] = (item, replace(item, content=cut) if cut != text and kept < tokens else None,
                                            tokens, kept)
        return known[1:]


class _Compressed:
    """The last compression that cut no output, and what makes it hold for a request grown from
    the one it was made of: per call, each request is the last one with a step added, and Gemini's
    compression of it is the last one's result with that step appended — unless an output is now
    long enough to be cut, a call before the split was answered in what was added, or the split
    has too few characters before it now. Reading that from what was added, not compressing the
    whole history again (cut, split, checked and counted at every call: quadratic). Owned by one policy."""

    def __init__(self) -> None:
        self.items: tuple[Item, ...] = ()  # the request compressed (nothing when there is none to grow)
        self.sent: tuple[Item, ...] = ()  # what it sent, checked
        self.first = self.pending = self.split = 0  # its history's start and end, and the split in the history
        self.chars = self.seen = 0  # the history's characters, and those before the split
        self.longest = 0  # the history's longest tool output, in characters
        self.early: frozenset[str] = frozenset()  # the ids of the calls before the split
        self.summary_tokens = 0

    def remember(self, items: tuple[Item, ...], sent: tuple[Item, ...], first: int, pending: int, split: int,
                 fraction: float, summary_tokens: int) -> None:
        """A compression made whole, which cut no output: kept when its split is the first user message
        with enough before it (not where ``split_point`` falls back to), so a later split can only be later."""
        history = items[first:pending]
        sizes = list(map(_chars, history))
        chars, seen = sum(sizes), sum(sizes[:split])
        if split >= len(history) or seen < chars * fraction:
            self.items = ()
            return
        self.items, self.sent, self.first, self.pending, self.split = items, sent, first, pending, split
        self.chars, self.seen, self.summary_tokens = chars, seen, summary_tokens
        self.longest = _longest(history)
        self.early = frozenset(item.call_id for item in history[:split] if isinstance(item, ToolCall))

    def grown(self, conversation: Conversation, first: int, pending: int, max_chars: int,
              fraction: float) -> tuple[Item, ...] | None:
        """What compressing ``conversation`` whole sends (its items), when the last compression holds for it."""
        items = conversation.items
        if not self.items or first != self.first or pending < self.pending or not extends(
                items, self.items, conversation.grew):
            return None
        added = items[self.pending:pending]  # what joined the history: the last request's unanswered part, and on
        chars = self.chars + sum(map(_chars, added))
        longest = max(self.longest, _longest(added))
        if (longest > max_chars or self.seen < chars * fraction
                or any(isinstance(item, ToolResult) and item.call_id in self.early for item in items[self.pending:])):
            return None
        # (it sent the head, the summary and its acknowledgement, then every item from the split on: so now too)
        self.sent = (*self.sent, *items[len(self.items):])
        self.items, self.pending, self.chars, self.longest = items, pending, chars, longest
        return self.sent


def _longest(items: tuple[Item, ...]) -> int:
    return max((len(content_text(item.content)) for item in items if isinstance(item, ToolResult)), default=0)


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
    last: _Compressed = field(default_factory=_Compressed, compare=False, repr=False)
    read: _Read = field(default_factory=_Read, compare=False, repr=False)
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
        max_chars = self._max_chars(total)
        edited, used, saved = list(history), 0, {}
        for position in range(len(history) - 1, -1, -1):
            item = history[position]
            if not isinstance(item, ToolResult):
                continue
            cut, tokens, kept = self.read.cut(item, max_chars, meter)
            if used + tokens <= self.budget:
                used += tokens
                continue
            used += kept
            if cut is not None:
                edited[position], saved[position] = cut, tokens - kept
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
            return self._unchanged(conversation)
        first = next((p for p, item in enumerate(items) if not is_instruction(item)), len(items))
        if not self._may_split(conversation, first, pending):
            return self._unchanged(conversation)
        grown = self.last.grown(conversation, first, pending, self._max_chars(total), 1 - self.keep_share)
        if grown is not None:  # the last call's compression, with this call's step appended
            result = conversation.with_items(grown)
            return self._result(conversation, result, total, self.totals.total(result, meter), first,
                                self.last.summary_tokens, self.last.split, 0, meter)
        history = items[first:pending]
        truncated, saved = self._truncated(history, total, meter)
        split = split_point(tuple(truncated), 1 - self.keep_share, items[pending:], self.read.chars)
        retrievable = sum(tokens for position, tokens in saved.items() if position >= split)  # the rest is summarized
        span = history[:split]
        if not span or (len(span) == 1 and is_summary(span[0])):
            return self._unchanged(conversation)
        text = self.summarizer.summarize(Plan(first, first + split, span, "", any(map(is_summary, span)), 0,
                                              meter))
        summary = summary_message(text, len(span), "Gemini CLI chat compression: offline summary, no LLM")
        acknowledged = (summary, Message(role="assistant", content=ACKNOWLEDGEMENT))
        result = formats.checked(conversation.with_items(
            (*items[:first], *acknowledged, *truncated[split:], *items[pending:])))
        counted = meter.count(result)
        if counted.total < total:
            self.totals.remember(result, counted.total, meter)
        done = self._result(conversation, result, total, counted.total, first, counted.items[first], split,
                            retrievable, meter)
        if done.fired and not saved:
            self.last.remember(items, result.items, first, pending, split, 1 - self.keep_share, counted.items[first])
        return done

    def _max_chars(self, total: int) -> int:
        """The length a tool output is cut to: at most four characters a token of what is left of the window."""
        return max(0, min(4 * (self.context_window - total), self.max_chars))

    def _unchanged(self, conversation: Conversation) -> PolicyResult:
        self.last.items = ()  # (the next request is compressed whole)
        return unchanged(conversation)

    def _result(self, conversation: Conversation, result: Conversation, total: int, after: int, first: int,
                summary_tokens: int, split: int, retrievable: int, meter: Meter) -> PolicyResult:
        """What the policy gives for ``result``, ``after`` tokens (the running total knows it), sent for a request
        of ``total``: the request as it was when compression would inflate it, as in the source."""
        if after >= total:
            return self._unchanged(conversation)
        self.counts.counts(conversation.items, meter)
        span_tokens = self.counts.between(first, first + split)
        return PolicyResult(result, "summarization", tokens_lost=max(0, total - after - retrievable),
                            tokens_retrievable=retrievable,
                            summarization=_two_calls(estimate(span_tokens, summary_tokens, meter)))


def _two_calls(summarizing: SummaryCall) -> SummaryCall:
    """Gemini's summary and its check, billed as one: the check reads what the first call read
    and the summary it wrote, and writes the summary again."""
    return SummaryCall(2 * summarizing.input_tokens + summarizing.output_tokens, 2 * summarizing.output_tokens)
