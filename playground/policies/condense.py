"""Summarize and drop, the way agents and providers compact on their own: once the request is over
a trigger (tokens, or a number of messages), everything between a kept head and a kept tail
becomes one summary, and only that summary stands for it.

One mechanism, several sources with their own numbers (``data/policies.json``): Anthropic's
``compact_20260112`` keeps nothing of the history but the summary; OpenAI's Responses compaction
keeps the user messages beside its opaque item; Claude Code fires near the window less its
reserve; Codex keeps the newest user messages up to 20,000 tokens; LangChain keeps the newest 20
messages; OpenHands keeps the first events and the newest half; Anthropic's on-demand compaction is
sent the request up to the cut, its system prompt and tools too; Google ADK's token-threshold
compaction keeps the newest events; Roo Code fires at 90% of the window less the reply's reserve and
keeps nothing but the summary. Every one of them keeps what the
model has not answered yet (the items after the last assistant turn) and never parts a call from
its result. The summary is the offline summarizer's, so a replay needs no LLM; the call that
would have written it is reported (``summarycall``) and billed by replay. What it replaced is lost.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
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
    turn_end,
    turn_starts,
)
from ..errors import InputError
from ..meter.carried import CarriedCounts
from ..meter.tokens import Meter
from ..summarize.call import estimate
from ..summarize.cut import is_summary
from ..summarize.history import Plan, summary_message
from ..summarize.offline import OfflineSummarizer
from .base import AppendedIndex, PolicyResult, RunningTotal, unchanged


def message_starts(items: tuple[Item, ...]) -> list[int]:
    """Where each message of the input begins: items read from one message (an assistant reply
    with its calls) share an origin and count as one message, as the agents count them."""
    starts = []
    for position, item in enumerate(items):
        origin = item.origin
        before = items[position - 1].origin if position else None
        if origin is None or before is None or origin.index != before.index:
            starts.append(position)
    return starts


def condense_span(items: tuple[Item, ...], keep_first: int, keep_last: int) -> tuple[int, int] | None:
    """The items to summarize, ``(start, end)``: after the system messages and ``keep_first``
    further messages, before the newest ``keep_last`` messages and never into what follows the
    last assistant turn (the model has not read it). Both ends move until no call is parted from
    its result and no reply from its calls; None when nothing is left between them."""
    starts = turn_starts(items)
    if not starts:
        return None
    messages = [p for p in message_starts(items) if not is_instruction(items[p])]
    if len(messages) <= keep_first:
        return None
    start = messages[keep_first]
    end = turn_end(items, starts[-1])
    if keep_last:
        end = min(end, messages[-keep_last] if keep_last <= len(messages) else 0)
    answers = links(items)
    moved = True
    while moved:
        moved = False
        for result, call in answers.items():
            if call < end <= result:  # the tail keeps the whole turn of a call whose result it keeps
                end, moved = max(s for s in starts if s <= call), True
            if call < start <= result:  # the head keeps the result of a call it keeps
                start, moved = result + 1, True
        while 0 < start < len(items) and role_of(items[start]) == role_of(items[start - 1]) == "assistant":
            start, moved = start + 1, True  # a head never ends inside an assistant turn
    if end - start <= 0 or (end - start == 1 and is_summary(items[start])):
        return None
    return start, end


def _kept_user(item: Item) -> bool:
    """A user message kept beside the summary: earlier summaries are summarized again, not kept."""
    return isinstance(item, Message) and item.role == "user" and not is_summary(item) and bool(
        content_text(item.content).strip())


def _user_messages(users: Sequence[Item], budget: int | None, meter: Meter) -> tuple[Item, ...]:
    """The user messages of the span (``users``, ``_kept_user``) kept beside the summary, in
    order: all of them (``budget`` None), or the newest up to ``budget`` tokens, the one that
    overflows cut to what is left (as Codex does)."""
    if budget is None:
        return tuple(users)
    kept: list[Item] = []
    room = budget
    for message in reversed(users):
        if room <= 0:
            break
        tokens = meter.encoding.encode_ordinary(content_text(message.content))
        cut = message if len(tokens) <= room else replace(message, content=meter.encoding.decode(tokens[:room]))
        kept.insert(0, cut)
        room -= len(tokens)
    return tuple(kept)


def _readable(span: tuple[Item, ...], cap: int | None, meter: Meter) -> tuple[Item, ...]:
    """What a summarizer that reads at most ``cap`` tokens sees of ``span``: its newest items that
    fit (at least one), as LangChain trims the messages it summarizes (``trim_messages``, last)."""
    if cap is None:
        return span
    used, start = 0, len(span)
    while start > 0:
        item = span[start - 1]
        used += meter.text(item.arguments if isinstance(item, ToolCall) else content_text(item.content))
        if used > cap and start < len(span):
            break
        start -= 1
    return span[start:]


class CondenseIndex(AppendedIndex):
    """What ``condense_span`` and the trigger read of a request, kept for requests that grow by
    appending (per call, every request is the whole history so far): the turn starts, the message
    starts, which call each result answers, and where the instructions, the user messages kept
    beside a summary and earlier summaries stand, read only from what is new since the last
    request. ``span`` finds what ``condense_span`` of the whole request finds, looking only at the
    head and the tail it keeps; another request (stored, one a summary rewrote) is read whole.
    Owned by one policy."""

    def __init__(self) -> None:
        self._reset()
        self.counts = CarriedCounts()  # the request's items, for its total once a summary is in

    def _reset(self) -> None:
        self.items = ()
        self.starts: list[int] = []  # every assistant turn's start (``turn_starts``)
        self.message_count = 0  # every message's start (``message_starts``), instructions too
        self.messages: list[int] = []  # the starts of the messages that are not instructions
        self.instructions: list[int] = []
        self.users: list[int] = []  # ``_kept_user``
        self.summaries: list[int] = []
        self.calls: list[int] = []
        self.call_of: dict[int, int] = {}  # a result's position -> its call's (``links``)
        self.last_answer: dict[int, int] = {}  # a call's position -> its last result's
        self._open: dict[str, int] = {}  # call id -> its latest call's position
        self._span: tuple[tuple[Item, ...], int] | None = None  # the last span read whole, and its start

    def spanned(self, start: int, read: tuple[Item, ...], whole: bool
                ) -> tuple[tuple[Item, ...], tuple[Item, ...]] | None:
        """(the last span read, ``read``) when ``read``, the span from ``start`` of the request
        this index read last, begins with it (``Plan.grew``): both were read whole from the same
        start of requests that only grew since (any other resets this index). The summarizer then
        reads only what is new without comparing the two spans in C at every call."""
        last = self._span
        self._span = (read, start) if whole else None
        if whole and last is not None and last[1] == start and len(read) >= len(last[0]):
            return last[0], read
        return None

    def _read(self, items: tuple[Item, ...], position: int) -> None:
        """One appended item, as ``turn_starts``, ``message_starts`` and ``links`` read it whole."""
        item, before = items[position], items[position - 1] if position else None
        if role_of(item) == "assistant" and (before is None or role_of(before) != "assistant"):
            self.starts.append(position)
        origin, earlier = item.origin, before.origin if before is not None else None
        if origin is None or earlier is None or origin.index != earlier.index:
            self.message_count += 1
            if not is_instruction(item):
                self.messages.append(position)
        for kind, holds in ((self.instructions, is_instruction), (self.users, _kept_user),
                            (self.summaries, is_summary)):
            if holds(item):
                kind.append(position)
        if isinstance(item, ToolCall):
            self._open[item.call_id] = position
            self.calls.append(position)
        elif isinstance(item, ToolResult) and item.call_id in self._open:
            call = self.call_of[position] = self._open[item.call_id]
            self.last_answer[call] = position

    def span(self, keep_first: int, keep_last: int) -> tuple[int, int] | None:
        """``condense_span(items, keep_first, keep_last)``. Each end moves as the whole pass moves
        it, to the same place whatever order the parted pairs are found in (the start only forward
        over points a pair parts, the end only back to the turn start at or before a parted call);
        the end is not moved once it is at or before the start: nothing is left either way."""
        items, starts, messages = self.items, self.starts, self.messages
        if not starts or len(messages) <= keep_first:
            return None
        start = self._head_end(messages[keep_first])
        end = turn_end(items, starts[-1])
        if keep_last:
            end = min(end, messages[-keep_last] if keep_last <= len(messages) else 0)
        while end > start and (call := self._crossing(end)) is not None:
            end = starts[bisect_right(starts, call) - 1]
        if end - start <= 0 or (end - start == 1 and is_summary(items[start])):
            return None
        return start, end

    def _head_end(self, start: int) -> int:
        """The span's start moved past every result of a call the head keeps, and out of an
        assistant turn: only the head's calls are read."""
        items, moved = self.items, True
        while moved:
            moved = False
            reach = max((self.last_answer.get(call, -1) for call in self.calls[:bisect_left(self.calls, start)]),
                        default=-1)
            if reach >= start:
                start, moved = reach + 1, True
            while 0 < start < len(items) and role_of(items[start]) == role_of(items[start - 1]) == "assistant":
                start, moved = start + 1, True
        return start

    def _crossing(self, end: int) -> int | None:
        """A call before ``end`` answered at or after it (only the tail's results are read), or None."""
        return next((call for position in range(end, len(self.items))
                     if (call := self.call_of.get(position)) is not None and call < end), None)

    def within(self, positions: list[int], start: int, end: int) -> tuple[Item, ...]:
        """The items at ``positions`` (one of this index's lists) from ``start`` to ``end``."""
        return tuple(self.items[p] for p in positions[bisect_left(positions, start):bisect_left(positions, end)])


@dataclass(frozen=True)
class CondensePolicy:
    trigger: int | None = None  # fire when the request exceeds this many tokens
    context_window: int = 200_000  # the model's, for a trigger stated as part of it
    window_reserve: int | None = None  # trigger: the window (or its share) less this many tokens (Claude Code)
    window_fraction: float | None = None  # trigger: this share of the window (Codex), less any reserve (Roo Code)
    trigger_messages: int | None = None  # fire when the request holds more messages than this (OpenHands)
    keep_first: int = 0  # messages after the system messages kept verbatim
    keep_last: int = 0  # newest messages kept verbatim, besides what the model has not read
    keep_user_tokens: int | None = 0  # user messages kept beside the summary, newest first (None: all)
    input_cap: int | None = None  # the summarizer reads at most this many tokens of the span, the newest
    # the summarizer is sent the request up to the cut, system prompt and tools too (Anthropic on demand)
    reads_request: bool = False
    label: str = "compaction"
    totals: RunningTotal = field(default_factory=RunningTotal, compare=False, repr=False)
    summarizer: OfflineSummarizer = field(default_factory=OfflineSummarizer, compare=False, repr=False)
    # per call, condensing at every call reads only what is new since the last request (and the
    # summarizer carries its reading of the span); None: each request read whole
    index: CondenseIndex | None = field(default_factory=CondenseIndex, compare=False, repr=False)
    name: ClassVar[str] = "condense"

    def __post_init__(self) -> None:
        for key in ("trigger", "context_window", "window_reserve", "trigger_messages", "keep_first", "keep_last",
                    "keep_user_tokens", "input_cap"):
            value = getattr(self, key)
            if value is not None and value < 0:
                raise InputError(f"{key} must be 0 or more", where=key, value=value)
        if self.threshold() is None and self.trigger_messages is None:
            raise InputError("a trigger is needed: tokens, a share of the window or a number of messages",
                             where="trigger")

    def threshold(self) -> int | None:
        """The token trigger: given, or derived from the context window as the source states it: a
        share of it (Codex), less a reserve (Claude Code), or a share less a reserve (Roo Code)."""
        if self.trigger is not None:
            return self.trigger
        if self.window_reserve is None and self.window_fraction is None:
            return None
        share = self.context_window if self.window_fraction is None else int(self.context_window * self.window_fraction)
        return max(0, share - (self.window_reserve or 0))

    def params(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"trigger": self.threshold()}
        if self.trigger is None and (self.window_reserve is not None or self.window_fraction is not None):
            shown["context_window"] = self.context_window
        for key, quiet in (("trigger_messages", None), ("keep_first", 0), ("keep_last", 0), ("input_cap", None)):
            if getattr(self, key) != quiet:
                shown[key] = getattr(self, key)
        if self.keep_user_tokens != 0:
            shown["keep_user_tokens"] = "all" if self.keep_user_tokens is None else self.keep_user_tokens
        if self.reads_request:
            shown["reads_request"] = True
        return {key: value for key, value in shown.items() if value is not None}

    def _over(self, conversation: Conversation, total: int) -> bool:
        limit, most = self.threshold(), self.trigger_messages
        if limit is not None and total > limit:
            return True
        if most is None:
            return False
        count = (len(message_starts(conversation.items)) if self.index is None
                 else self.index.read(conversation).message_count)
        return count > most

    def apply(self, conversation: Conversation, meter: Meter) -> PolicyResult:
        total = self.totals.total(conversation, meter)
        if not self._over(conversation, total):
            return unchanged(conversation)
        items, index = conversation.items, self.index
        found = (condense_span(items, self.keep_first, self.keep_last) if index is None
                 else index.read(conversation).span(self.keep_first, self.keep_last))
        if found is None:
            return unchanged(conversation)
        start, end = found
        span = items[start:end]
        if index is None:
            instructions, users = tuple(filter(is_instruction, span)), tuple(filter(_kept_user, span))
        else:
            instructions, users = index.within(index.instructions, start, end), index.within(index.users, start, end)
        kept = (*instructions, *_user_messages(users, self.keep_user_tokens, meter))
        read = _readable(span, self.input_cap, meter)
        earlier = (any(map(is_summary, read)) if index is None
                   else bool(index.within(index.summaries, end - len(read), end)))
        grew = None if index is None else index.spanned(start, read, len(read) == end - start)
        text = self.summarizer.summarize(Plan(start, end, read, "", earlier, 0, meter, grew=grew))
        summary = summary_message(text, len(span) - len(kept), f"{self.label}: offline summary, no LLM")
        result = formats.checked_head(conversation, (*items[:start], *kept, summary), items[end:])
        # the result's counts: from the request's carried counts where they hold (per call, every call condenses,
        # and its summary is mostly the last one's lines)
        carried = None
        if index is not None:
            index.counts.follow(conversation, meter)
            meter.raw_by_line(content_text(summary.content))
            carried = index.counts.replaced(total, start, end, (*kept, summary), meter)
        if carried is not None:
            after, summary_tokens, tail = carried.total, carried.made[-1], carried.after
        else:
            counted = meter.count(result)
            after, summary_tokens = counted.total, counted.items[start + len(kept)]
            tail = sum(counted.items[start + len(kept) + 1:])
        if after >= total:
            return unchanged(conversation)  # a summary that saves nothing is pure loss
        self.totals.remember(result, after, meter)
        read_tokens = (total - tail if self.reads_request
                       else total - after + summary_tokens)  # the request less its kept tail, or the span
        call = estimate(read_tokens, summary_tokens, meter, self.input_cap)
        return PolicyResult(result, "summarization", tokens_lost=total - after, summarization=call)
