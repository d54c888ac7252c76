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

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from itertools import accumulate, pairwise
from typing import Any, ClassVar

from .. import formats
from ..conversation import Conversation, Item, Message, ToolCall, ToolResult, extends, is_instruction, links, role_of
from ..meter.carried import CarriedCounts
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


def _parts(items: tuple[Item, ...], sizes: list[int]) -> list[_Part]:
    """``items`` as Aider's messages (an assistant reply with its calls is one), ``sizes`` their counts."""
    starts = [*message_starts(items), len(items)]
    return [_Part(items[a:b], sum(sizes[a:b])) for a, b in pairwise(starts)]


def _split(parts: _Parts | _DoneTurns, limit: int) -> int:
    """Where the kept tail begins: the newest messages under half the limit, moved back until the
    head ends with an assistant message and no call in it waits for a result in the tail."""
    tail, split = 0, len(parts.parts)
    for number in range(len(parts.parts) - 1, -1, -1):
        if tail + parts.parts[number].tokens >= limit // 2:
            break
        tail, split = tail + parts.parts[number].tokens, number
    return parts.cut_at_or_before(split)


class _Parts:
    """A few messages read whole (a summary and the tail kept after it), as ``_split`` and a summary
    read them: ``_DoneTurns`` reads the done turns so, carried."""

    def __init__(self, parts: list[_Part]) -> None:
        self.parts = parts
        self._ends = list(accumulate((len(part.items) for part in parts), initial=0))
        self._parted = _parted([item for part in parts for item in part.items])

    def cut_at_or_before(self, number: int) -> int:
        """The last cut at or before part ``number`` (but the first) after an assistant message that
        parts no call from its result; the second part when none is."""
        while number > 1 and (role_of(self.parts[number - 1].items[-1]) != "assistant"
                              or self._parted[self._ends[number]]):
            number -= 1
        return number

    def head(self, end: int) -> tuple[tuple[Item, ...], int, bool]:
        """Parts ``:end`` as one span: its items, their tokens, and whether an earlier summary is among them."""
        span = tuple(item for part in self.parts[:end] for item in part.items)
        return span, sum(part.tokens for part in self.parts[:end]), any(map(is_summary, span))


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
        return self.read_items(conversation.items, conversation.grew)

    def read_items(self, items: tuple[Item, ...], grew: tuple[tuple[Item, ...], tuple[Item, ...]] | None = None
                   ) -> _Answers:
        if not extends(items, self._items, grew):
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


class _DoneTurns:
    """The done turns read as Aider's messages (``_Parts``), carried from turn to turn: per call each
    turn's done turns are the last turn's with that turn added, and reading them whole (every item
    counted, every message found, every call paired) at each user message made a long run's turns
    cost more and more. Only the messages from the first item whose count changed are read again
    (what was added, and the thinking a user message ended: ``CarriedCounts``), and the calls added
    are paired (``_Answers``). Owned by one policy."""

    def __init__(self) -> None:
        self.counts = CarriedCounts()
        self.pairs = _Answers()
        self.done: tuple[Item, ...] = ()
        self.parts: list[_Part] = []
        self.starts: list[int] = [0]  # each part's first position, then the done turns' end
        self.summaries: list[int] = []  # the positions of earlier summaries
        self.after_replies: list[int] = []  # cuts after an assistant message, by part number, not found to part a pair

    def read(self, done: tuple[Item, ...], meter: Meter) -> _DoneTurns:
        counts = self.counts.counts(done, meter)
        self.pairs.read_items(done)
        # a message starts where the item before it is of another one: read again from the part holding
        # the item before the first one counted again (the items before that are the very same)
        since = self.counts.since
        keep = 0 if since == 0 else max(0, min(bisect_right(self.starts, since - 1), len(self.parts)) - 1)
        start = self.starts[keep]
        del self.parts[keep:], self.starts[keep:], self.summaries[bisect_left(self.summaries, start):]
        self.parts += _parts(done[start:], counts[start:])
        self.starts += accumulate((len(part.items) for part in self.parts[keep:]), initial=start)
        self.summaries += (p for p in range(start, len(done)) if is_summary(done[p]))
        del self.after_replies[bisect_right(self.after_replies, keep):]
        self.after_replies += (number for number in range(keep + 1, len(self.parts) + 1)
                               if role_of(self.parts[number - 1].items[-1]) == "assistant")
        self.done = done
        return self

    def tokens(self) -> int:
        """The done turns' tokens, from the running sums (not a pass over every part)."""
        return self.counts.between(0, len(self.done))

    def cut_at_or_before(self, number: int) -> int:
        """``_Parts.cut_at_or_before``, from the cuts after an assistant message, newest first: a run
        of calls answered at once has none that parts no call from its result, and walking back
        over every part at each turn made a long run's turns cost more and more. A cut found to
        part one stays so while the done turns grow (their pairs only grow), so it is dropped."""
        after = self.after_replies
        found = bisect_right(after, number)
        while found and after[found - 1] > 1:
            if self.pairs.waiting_before(self.starts[after[found - 1]]) is None:
                return after[found - 1]
            found -= 1
            del after[found]
        return min(number, 1)

    def head(self, end: int) -> tuple[tuple[Item, ...], int, bool]:
        """Parts ``:end`` as one span: its items, their tokens, and whether an earlier summary is among them."""
        stop = self.starts[end]
        return self.done[:stop], self.counts.between(0, stop), bisect_left(self.summaries, stop) > 0


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
    # the done turns read as messages, each turn's read on from the last turn's
    carried: _DoneTurns = field(default_factory=_DoneTurns, compare=False, repr=False)
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
            parts = self.carried.read(done, meter)
            if parts.tokens() <= self.limit():
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

    def _summarized(self, parts: _Parts | _DoneTurns, meter: Meter) -> tuple[tuple[Item, ...], list[SummaryCall]]:
        """``summarize_real``: the done turns as a summary and the kept tail, with every
        summarization call it made."""
        calls: list[SummaryCall] = []
        for depth in range(MAX_DEPTH + 2):
            split = _split(parts, self.limit())
            whole = len(parts.parts) <= MIN_SPLIT or depth > MAX_DEPTH or split <= MIN_SPLIT
            end = len(parts.parts) if whole else split
            tail = parts.parts[end:]
            summary = self._summary(*parts.head(end), meter, calls,
                                    self.summarizer if depth == 0 else OfflineSummarizer())
            if whole or summary.tokens + sum(part.tokens for part in tail) < self.limit():
                break
            parts = _Parts([summary, *tail])
        return (*summary.items, *(item for part in tail for item in part.items)), calls

    def _summary(self, span: tuple[Item, ...], tokens: int, previous: bool, meter: Meter, calls: list[SummaryCall],
                 summarizer: OfflineSummarizer) -> _Part:
        """One summary message for ``span`` (``tokens``; ``previous``: an earlier summary is in it), made by
        ``summarizer``, its call noted in ``calls``."""
        text = summarizer.summarize(Plan(0, len(span), span, "", previous, 0, meter))
        message = summary_message(text, len(span), "Aider chat-history summary: offline summary, no LLM")
        summary_tokens = meter.items((message,))[0]
        calls.append(estimate(tokens, summary_tokens, meter))
        return _Part((message,), summary_tokens)
