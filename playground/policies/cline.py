"""Cline's context-manager truncation as a policy: once a request reaches ``maxAllowedSize`` (the
window less a margin), the first user message and the first assistant reply stay, the reply's
first text becoming Cline's notice, and half of the messages after them (three quarters, when
half the request is still over the limit) are deleted, oldest first, in user-assistant pairs.
Later requests keep the range deleted and widen it again the next time they reach the limit.

The rule is ``formats.cline_truncation``'s (``next_range``, ``NOTICE``), which reads it to
reconstruct what Cline sent from its logs; here it decides what a run would send. Cline's history
alternates user and assistant messages: a run's items are grouped so (an assistant reply with
its calls is one message, the results and user text that follow another). Cline's first message
after the range loses the tool results whose calls were deleted, and so does a kept call whose
result was: no call is parted from its result. What is deleted is lost; there is no summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from .. import formats
from ..conversation import Conversation, Item, Message, ToolCall, ToolResult, extends, is_instruction, role_of
from ..formats.cline_truncation import NOTICE, next_range
from ..meter.tokens import Meter
from .base import PolicyResult, RunningTotal, at_least_zero, unchanged

# getContextWindowInfo: the margin below the window for the windows it names
MARGINS = {64_000: 27_000, 128_000: 30_000, 200_000: 40_000}


def max_allowed(context_window: int) -> int:
    """``maxAllowedSize`` for a window: less its named margin, else the larger of the window less
    40,000 and 80 % of it."""
    if context_window in MARGINS:
        return context_window - MARGINS[context_window]
    return int(max(context_window - 40_000, context_window * 0.8))


def _grouped(items: tuple[Item, ...], first: int, runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``runs`` (Cline's messages in ``items`` up to ``first``, as ``(start, end)`` positions) with
    those from ``first`` on added: each run of assistant items is one message, each run of the
    others (results, user text) another, so the last one widens while its speaker goes on."""
    for position in range(first, len(items)):
        speaking = role_of(items[position]) == "assistant"
        if runs and (role_of(items[runs[-1][0]]) == "assistant") == speaking:
            runs[-1] = (runs[-1][0], position + 1)
        else:
            runs.append((position, position + 1))
    return runs


class _Messages:
    """The last request's messages (``_grouped``) and the ids its tool calls and results
    carry, for the history they were read from. A request that extends it is read only in its
    new items: per call, the request is the whole history, and reading it all again at every
    call made a long run's calls cost more and more. Owned by one policy."""

    def __init__(self) -> None:
        self._items: tuple[Item, ...] = ()
        self._first = 0
        self.runs: list[tuple[int, int]] = []
        self.called: set[str] = set()  # the ids of its tool calls
        self.answered: set[str] = set()  # and of its tool results
        # whether this request extended the last one by items whose ids are new: each call's id unseen,
        # each result answering a call among them (so pairing leaves what came before as it was)
        self.fresh = False
        self.before: tuple[Item, ...] = ()  # the request read before this one, which ``fresh`` speaks of

    def read(self, conversation: Conversation, first: int) -> _Messages:
        items = conversation.items
        self.before = self._items
        self.fresh = first == self._first and extends(items, self._items, conversation.grew)
        if not self.fresh:
            self._items, self._first, self.runs, self.called, self.answered = (), first, [], set(), set()
        start = max(len(self._items), first)
        _grouped(items, start, self.runs)
        called, answered, new = self.called, self.answered, set()
        for item in items[len(self._items):]:
            if isinstance(item, ToolCall):
                self.fresh = self.fresh and item.call_id not in called and item.call_id not in answered
                called.add(item.call_id)
                new.add(item.call_id)
            elif isinstance(item, ToolResult):
                self.fresh = self.fresh and item.call_id in new and item.call_id not in answered
                answered.add(item.call_id)
        self._items = items
        return self


def _noticed(reply: list[Item]) -> list[Item]:
    """The first reply with its first text replaced by Cline's notice (a reply of calls alone
    gets the notice before them)."""
    for number, item in enumerate(reply):
        if not isinstance(item, Message):
            continue
        if isinstance(item.content, tuple):
            for part_number, part in enumerate(item.content):
                if part.type == "text":
                    parts = (*item.content[:part_number], replace(part, text=NOTICE), *item.content[part_number + 1:])
                    return [*reply[:number], replace(item, content=parts), *reply[number + 1:]]
        return [*reply[:number], replace(item, content=NOTICE), *reply[number + 1:]]
    return [Message(role="assistant", content=NOTICE), *reply]


def _paired(items: tuple[Item, ...], kept: list[int], messages: _Messages) -> list[int]:
    """``kept`` less the calls whose results it lost and the results whose calls it lost, by call
    id (a run that repeats an id keeps no call of it without a result of it)."""
    answered, called = messages.answered, messages.called
    results = {items[p].call_id for p in kept if isinstance(items[p], ToolResult)}
    seen: set[str] = set()
    paired = []
    for position in kept:
        item = items[position]
        if isinstance(item, ToolCall):
            if item.call_id in answered and item.call_id not in results:
                continue
            seen.add(item.call_id)
        elif isinstance(item, ToolResult) and item.call_id in called and item.call_id not in seen:
            continue
        paired.append(position)
    return paired


class _Deleted:
    """The range Cline deleted, as its task state keeps it: the last message deleted (None: none),
    for the history it was decided on. A request that extends that history keeps it; another
    starts afresh (a replay that stores what was sent hands on the history already cut, where
    the next range starts again after the first reply). Owned by one policy."""

    def __init__(self) -> None:
        self.items: tuple[Item, ...] = ()
        self.end: int | None = None

    def end_for(self, conversation: Conversation) -> int | None:
        return self.end if self.items and extends(conversation.items, self.items, conversation.grew) else None

    def remember(self, conversation: Conversation, end: int | None) -> None:
        self.items, self.end = conversation.items, end


class _Sent:
    """The last request sent with a range deleted, and what it was built from. While the range
    stays, the next request (per call: the history with one more turn) sends it with that turn
    appended, when the turn is the assistant's after a turn that was not (no wire message joins
    the two), every item of it is the run's own (it has its origin) and its ids are new: what
    building the request whole and writing it out and reading it back sends — which cost the
    length of everything kept at every call. Owned by one policy."""

    def __init__(self) -> None:
        self.given: tuple[Item, ...] = ()
        self.kept: tuple[int, int | None] = (0, None)  # (first, end) it was built with
        self.sent: Conversation | None = None

    def extended(self, conversation: Conversation, first: int, end: int | None, messages: _Messages
                 ) -> Conversation | None:
        """The request sent for ``conversation`` when it only appends to the last one sent (None: build it)."""
        sent, items = self.sent, conversation.items
        if (sent is None or end is None or self.kept != (first, end) or not messages.fresh
                or messages.before is not self.given):
            return None
        new = items[len(self.given):]
        if not new:
            return sent
        if (role_of(new[0]) != "assistant" or not sent.items or role_of(sent.items[-1]) == "assistant"
                or any(item.origin is None or is_instruction(item) for item in new)):
            return None
        return sent.grown(sent.items, new)

    def remember(self, conversation: Conversation, first: int, end: int | None, sent: Conversation) -> None:
        self.given, self.kept, self.sent = conversation.items, (first, end), sent


@dataclass(frozen=True)
class ClineTruncationPolicy:
    context_window: int = 200_000
    deleted: _Deleted = field(default_factory=_Deleted, compare=False, repr=False)
    messages: _Messages = field(default_factory=_Messages, compare=False, repr=False)
    totals: RunningTotal = field(default_factory=RunningTotal, compare=False, repr=False)
    last: _Sent = field(default_factory=_Sent, compare=False, repr=False)
    sent_totals: RunningTotal = field(default_factory=RunningTotal, compare=False, repr=False)
    name: ClassVar[str] = "cline-truncation"

    def __post_init__(self) -> None:
        at_least_zero(self, "context_window")

    def params(self) -> dict[str, Any]:
        return {"context_window": self.context_window, "max_allowed": max_allowed(self.context_window)}

    def apply(self, conversation: Conversation, meter: Meter) -> PolicyResult:
        items = conversation.items
        first = next((p for p, item in enumerate(items) if not is_instruction(item)), len(items))
        messages = self._read(conversation, first)
        runs = messages.runs
        if len(runs) < 3 or role_of(items[first]) == "assistant":
            return unchanged(conversation)  # Cline's history begins with the user's task
        end = self.deleted.end_for(conversation)
        before = self.totals.total(conversation, meter)
        # built once while the range stays: each build writes the request out and reads it back
        sent = self._sent(conversation, first, messages, end)
        total = before if end is None else self._total(sent, meter)
        counted = sent  # (the request ``total`` counted: widening the range builds another)
        limit = max_allowed(self.context_window)
        if total >= limit:
            widened = next_range(len(runs), end, "quarter" if total / 2 > limit else "half")
            if widened >= 2 and (end is None or widened > end):
                end, sent = widened, self._sent(conversation, first, messages, widened)
        self.deleted.remember(conversation, end)
        self.last.remember(conversation, first, end, sent)
        if end is None:
            return unchanged(conversation)
        after = total if sent is counted else self._total(sent, meter)
        if after >= before:
            return unchanged(conversation)
        return PolicyResult(sent, "truncation", tokens_lost=before - after, report={"deleted": [2, end]})

    def _read(self, conversation: Conversation, first: int) -> _Messages:
        """The request's messages, read only where it grew since the last one (one place, so a
        test can read every request whole and hold the carried reading to it)."""
        return self.messages.read(conversation, first)

    def _extended(self, conversation: Conversation, first: int, end: int, messages: _Messages) -> Conversation | None:
        """The last request sent with what this one appended (``_Sent``; one place, so a test can
        build every request whole and hold the carried one to it)."""
        return self.last.extended(conversation, first, end, messages)

    def _total(self, sent: Conversation, meter: Meter) -> int:
        """The tokens of a request sent: counted where it grew since the last (``RunningTotal``)."""
        return self.sent_totals.total(sent, meter)

    def _sent(self, conversation: Conversation, first: int, messages: _Messages,
              end: int | None) -> Conversation:
        """What Cline sends with messages 2 to ``end`` deleted: the first two (the reply noticed),
        then what follows ``end``; a call and its result only together."""
        if end is None:
            return conversation
        carried = self._extended(conversation, first, end, messages)
        if carried is not None:
            return carried
        items, runs = conversation.items, messages.runs
        kept = [*range(first), *range(runs[0][0], runs[1][1]),
                *(p for start, stop in runs[end + 1:] for p in range(start, stop))]
        kept = _paired(items, kept, messages)
        reply = [items[p] for p in kept if runs[1][0] <= p < runs[1][1]]
        head = [items[p] for p in kept if p < runs[1][0]]
        rest = [items[p] for p in kept if p >= runs[1][1]]
        return formats.checked(conversation.with_items((*head, *_noticed(reply), *rest)))
