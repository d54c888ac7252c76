"""Aider's chat-history summarization (``aider/history.py``, ``ChatSummary``), run offline.

Aider keeps the turns already done apart from the one running, and only they are summarized:
once they come to more than ``max_chat_history_tokens`` (a sixteenth of the model's input window,
at least 1,024 and at most 8,192), the newest of them that stay under half that are kept and the
older ones become one summary, which Aider's model writes and a user message carries. A head of
four messages or fewer is summarized whole; a summary that with the kept tail is still over the
limit is summarized again with the tail's older half, up to three times, then everything is. The
split falls after an assistant message (and never between a call and its result). The turn
running and the system prompt are never touched. Each summary is an LLM call, billed.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from itertools import accumulate, pairwise
from typing import Any, ClassVar

from .. import formats
from ..conversation import Conversation, Item, Message, ToolCall, ToolResult, extends, is_instruction, links, role_of
from ..meter.tokens import Meter
from ..summarize.call import SummaryCall, estimate
from ..summarize.cut import is_summary
from ..summarize.history import Plan, summary_message
from ..summarize.offline import OfflineSummarizer
from .base import PolicyResult, RunningTotal, UserTurns, at_least_zero, unchanged, unread_from
from .condense import message_starts

MIN_SPLIT = 4  # a head of this many messages or fewer is summarized whole
MAX_DEPTH = 3  # summaries of summaries before everything is summarized
OK = "Ok."  # what Aider has the assistant answer a summary that ends the history with


def history_limit(context_window: int) -> int:
    """``max_chat_history_tokens``: a sixteenth of the window, between 1,024 and 8,192."""
    return int(min(max(context_window / 16, 1024), 8192))


@dataclass(frozen=True)
class _Part:
    """One message of the history: its items and their tokens."""

    items: tuple[Item, ...]
    tokens: int


def _parts(done: tuple[Item, ...], meter: Meter) -> list[_Part]:
    """The done turns as Aider's messages (an assistant reply with its calls is one)."""
    sizes = meter.items(done)
    starts = [*message_starts(done), len(done)]
    return [_Part(done[a:b], sum(sizes[a:b])) for a, b in pairwise(starts)]


def _split(parts: list[_Part], limit: int) -> int:
    """Where the kept tail begins: the newest messages under half the limit, moved back until the
    head ends with an assistant message and no call in it waits for a result in the tail."""
    tail, split = 0, len(parts)
    for number in range(len(parts) - 1, -1, -1):
        if tail + parts[number].tokens >= limit // 2:
            break
        tail, split = tail + parts[number].tokens, number
    ends = list(accumulate((len(part.items) for part in parts), initial=0))
    parted = _parted([item for part in parts for item in part.items])
    while split > 1 and (role_of(parts[split - 1].items[-1]) != "assistant" or parted[ends[split]]):
        split -= 1
    return split


def _parted(items: list[Item]) -> list[bool]:
    """For each position of ``items`` (and their end), whether a cut there would part a call from
    its result: one pass over the pairs, not one per cut tried (quadratic in a long history)."""
    opened = [0] * (len(items) + 2)
    for result, call in links(items).items():  # (a cut at c parts the pair when call < c <= result)
        opened[call + 1] += 1
        opened[result + 1] -= 1
    return [depth > 0 for depth in accumulate(opened)][:len(items) + 1]


class _Answers:
    """The tool results of the last request read paired with their calls (as ``links`` pairs
    them), kept so as to say at once which call answered at or after a position is the earliest:
    the turn running was found by pairing every result of the whole request at every call, so a
    long run's calls cost more and more. A request that extends the last one is read in its new
    items only. Owned by one policy."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._items: tuple[Item, ...] = ()
        self._open: dict[str, int] = {}  # call id: the position of the latest call with it
        # results in order, each kept only while its call is earlier than every later result's:
        # the first at or after a position then has the earliest call of all from there on
        self._results: list[int] = []
        self._calls: list[int] = []

    def read(self, conversation: Conversation) -> _Answers:
        items = conversation.items
        if not extends(items, self._items, conversation.grew):
            self._reset()
        opened, results, calls = self._open, self._results, self._calls
        for position in range(len(self._items), len(items)):
            item = items[position]
            if isinstance(item, ToolCall):
                opened[item.call_id] = position
            elif isinstance(item, ToolResult) and item.call_id in opened:
                call = opened[item.call_id]
                while calls and calls[-1] >= call:
                    results.pop()
                    calls.pop()
                results.append(position)
                calls.append(call)
        self._items = items
        return self

    def waiting_before(self, end: int) -> int | None:
        """The earliest call before ``end`` whose result comes at or after it (None: none)."""
        first = bisect_left(self._results, end)
        return self._calls[first] if first < len(self._calls) and self._calls[first] < end else None


def _running(items: tuple[Item, ...], newest_user: int, answers: _Answers) -> int:
    """Where the turn running begins: at the newest user message, and no later than what the
    model has not answered yet, moved back to the reply whose calls wait for a result after it."""
    end = min(newest_user, unread_from(items) or 0)
    waiting = answers.waiting_before(end)
    if waiting is not None:
        end = waiting
        while end > 0 and role_of(items[end - 1]) == "assistant":
            end -= 1
    return end


class _Done:
    """The done turns last summarized and what they became: Aider summarizes them once, when a
    turn ends, and every call of the next turn sends that (so only the first is billed). Owned
    by one policy."""

    def __init__(self) -> None:
        self.done: tuple[Item, ...] = ()
        self.history: tuple[Item, ...] = ()

    def known(self, done: tuple[Item, ...]) -> tuple[Item, ...] | None:
        return self.history if self.done and done == self.done else None

    def remember(self, done: tuple[Item, ...], history: tuple[Item, ...]) -> None:
        self.done, self.history = done, history


@dataclass(frozen=True)
class AiderSummaryPolicy:
    context_window: int = 200_000  # the model's input window, which sets max_chat_history_tokens
    max_tokens: int | None = None  # max_chat_history_tokens given (--max-chat-history-tokens); None: from the window
    turns: UserTurns = field(default_factory=UserTurns, compare=False, repr=False)
    last: _Done = field(default_factory=_Done, compare=False, repr=False)
    answers: _Answers = field(default_factory=_Answers, compare=False, repr=False)
    # the requests' and the results' totals, carried: within a turn each grows from the last one
    totals: RunningTotal = field(default_factory=RunningTotal, compare=False, repr=False)
    # the first summary of each turn's done turns reads only what they added since the last turn's
    summarizer: OfflineSummarizer = field(default_factory=OfflineSummarizer, compare=False, repr=False)
    name: ClassVar[str] = "aider-summary"

    def __post_init__(self) -> None:
        at_least_zero(self, "context_window", *(("max_tokens",) if self.max_tokens is not None else ()))

    def limit(self) -> int:
        return history_limit(self.context_window) if self.max_tokens is None else self.max_tokens

    def params(self) -> dict[str, Any]:
        return {"max_chat_history_tokens": self.limit(), "context_window": self.context_window}

    def apply(self, conversation: Conversation, meter: Meter) -> PolicyResult:
        items = conversation.items
        first = next((p for p, item in enumerate(items) if not is_instruction(item)), len(items))
        running = self._running(conversation)
        if running <= first:
            return unchanged(conversation)
        done = items[first:running]
        history, calls = self.last.known(done), []
        if history is None:
            parts = _parts(done, meter)
            if sum(part.tokens for part in parts) <= self.limit():
                return unchanged(conversation)
            history, calls = self._summarized(parts, meter)
            if role_of(history[-1]) != "assistant":
                history = (*history, Message(role="assistant", content=OK))
            self.last.remember(done, history)
        result = formats.checked(conversation.with_items((*items[:first], *history, *items[running:])))
        before, after = self.totals.total(conversation, meter), self.totals.total(result, meter)
        if after >= before:
            return unchanged(conversation)
        billed = SummaryCall(sum(call.input_tokens for call in calls), sum(call.output_tokens for call in calls))
        return PolicyResult(result, "summarization", tokens_lost=before - after,
                            summarization=billed if calls else None)

    def _running(self, conversation: Conversation) -> int:
        """Where the turn running begins in the request (``_running``)."""
        return _running(conversation.items, self.turns.read(conversation).newest(1) or 0,
                        self.answers.read(conversation))

    def _summarized(self, parts: list[_Part], meter: Meter) -> tuple[tuple[Item, ...], list[SummaryCall]]:
        """``summarize_real``: the done turns as a summary and the kept tail, with every
        summarization call it made."""
        calls: list[SummaryCall] = []
        for depth in range(MAX_DEPTH + 2):
            split = _split(parts, self.limit())
            whole = len(parts) <= MIN_SPLIT or depth > MAX_DEPTH or split <= MIN_SPLIT
            head, tail = (parts, []) if whole else (parts[:split], parts[split:])
            summary = self._summary(head, meter, calls, self.summarizer if depth == 0 else OfflineSummarizer())
            if whole or summary.tokens + sum(part.tokens for part in tail) < self.limit():
                break
            parts = [summary, *tail]
        return (*summary.items, *(item for part in tail for item in part.items)), calls

    def _summary(self, head: list[_Part], meter: Meter, calls: list[SummaryCall], summarizer: OfflineSummarizer
                 ) -> _Part:
        """One summary message for ``head`` (``summarizer``'s), its call noted in ``calls``."""
        span = tuple(item for part in head for item in part.items)
        text = summarizer.summarize(Plan(0, len(span), span, "", any(map(is_summary, span)), 0, meter))
        message = summary_message(text, len(span), "Aider chat-history summary: offline summary, no LLM")
        tokens = meter.items((message,))[0]
        calls.append(estimate(sum(part.tokens for part in head), tokens, meter))
        return _Part((message,), tokens)
