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


def _splits(last: Item, later: bool, share: int | float, seen: int, before: int) -> bool:
    """Whether ``split_point`` splits a grown history where it split the last one, at a user message
    with ``seen`` characters before it, the user message ahead of it with ``before`` (-1: none is), when
    the split needs ``share`` (which can fall, as outputs get cut): no user message ahead has that share,
    and the split has it or, none having it, is still the last user message (``later``: one follows it),
    the history not ending on a reply (``last``: its last item)."""
    if share <= before:
        return False
    return seen >= share or not (later or (role_of(last) == "assistant" and not isinstance(last, ToolCall)))


def _is_user(item: Item) -> bool:
    return isinstance(item, Message) and item.role == "user"


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
        if _is_user(item) and position not in parted:
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


@dataclass
class _Cuts:
    """A history with its older outputs held to the budget (``truncated``), what each cut saved by
    position, and ``stable``: every output before it was read with more than the budget used, so cut
    whatever is newer (-1: none). ``stop``: read on from another history's cuts, the last position
    taken from those as they were (-1: read whole)."""

    truncated: list[Item]
    saved: dict[int, int]
    stable: int
    stop: int = -1


@dataclass(frozen=True)
class _Grown:
    """What a request grown from the last one compressed reads as, from what was added and the outputs at
    the budget's edge: its cuts (read on from ``read``), the characters of its cut history and before its
    split, and the split — the last one's, or the user message it moved on to (``moved``) with the user
    message ahead of it (``ahead``, and the characters before that: ``before``) and whether one follows it."""

    cuts: _Cuts
    read: int
    split: int
    chars: int
    seen: int
    ahead: int
    before: int
    later: bool
    moved: bool = False


class _Compressed:
    """The last compression, and what makes it hold for a request grown from the one it was made
    of: per call, each request is the last one with a step added, and Gemini's compression of it is
    the last one's result with that step appended and the outputs the budget now leaves out cut —
    unless the cut length or the meter changed, or a call before the split was answered in what was
    added. When the split moves on (``_splits``: a user message after it now has the share; about once
    a user turn), only the steps between the two splits are read: the new span is the last one with
    them, the new summary's and acknowledgement's read back alone, and what follows them the last
    request's own. Reading that from what was added and the outputs at the budget's edge, not
    compressing the whole history again (cut, split, checked and counted at every call: quadratic).
    Owned by one policy."""

    def __init__(self) -> None:
        self.items: tuple[Item, ...] = ()  # the request compressed (nothing when there is none to grow)
        self.sent: tuple[Item, ...] = ()  # what it sent, checked
        self.first = self.pending = self.split = 0  # its history's start and end, and the split in the history
        self.chars = self.seen = 0  # the cut history's characters, and those before the split
        # the characters before the user message ahead of the split (-1: none is), and whether one comes after it
        self.before, self.later = -1, False
        self.ahead = -1  # that user message's position in the history
        self.cuts = _Cuts([], {}, -1)
        self.cut: tuple[int, Meter | None] = (0, None)  # what the outputs were cut to, and counted with
        self.retrievable = 0  # what the cuts after the split saved
        self.early: set[str] = set()  # the ids of the calls before the split
        self.summary_tokens = 0
        self.previous = False  # whether the span summarized holds an earlier summary
        self.answered: dict[str, int] = {}  # each call id's last result in the request: what a split would part

    def remember(self, items: tuple[Item, ...], sent: tuple[Item, ...], where: tuple[int, int, int], cuts: _Cuts,
                 cut: tuple[int, Meter], chars: Callable[[Item], int], summary_tokens: int,
                 retrievable: int, previous: bool) -> None:
        """A compression made whole (``where``: its history's start and end, and the split), unless its
        split is the whole history (which ended on a reply)."""
        first, pending, split = where
        sizes = list(map(chars, cuts.truncated))
        total, seen = sum(sizes), sum(sizes[:split])
        if split >= len(sizes):
            self.items = ()
            return
        ahead = [p for p in range(split) if _is_user(items[first + p])]
        self.ahead = ahead[-1] if ahead else -1
        self.before = sum(sizes[:self.ahead]) if ahead else -1
        self.later = any(map(_is_user, items[first + split + 1:pending]))
        self.items, self.sent, self.first, self.pending, self.split = items, sent, first, pending, split
        self.chars, self.seen, self.cuts, self.cut = total, seen, cuts, cut
        self.summary_tokens, self.retrievable, self.previous = summary_tokens, retrievable, previous
        self.early = {item.call_id for item in items[first:first + split] if isinstance(item, ToolCall)}
        self.answered = {}
        self._answer(items, 0)

    def _answer(self, items: tuple[Item, ...], start: int) -> None:
        answered = self.answered
        for position in range(start, len(items)):
            item = items[position]
            if isinstance(item, ToolResult):
                answered[item.call_id] = position

    def grown(self, conversation: Conversation, where: tuple[int, int], cut: tuple[int, Meter], fraction: float,
              chars: Callable[[Item], int], truncate: Callable[..., _Cuts], turns: UserTurns) -> _Grown | None:
        """How compressing ``conversation`` whole (``where``: its history's start and end) reads, when the
        last compression holds for it or its split moved on to a user message after it; None when the
        whole history must be read. ``truncate``: the policy's cutting, read on from the last cuts;
        ``turns``: the request's user messages, read."""
        items, (first, pending) = conversation.items, where
        if (not self.items or first != self.first or pending < self.pending or cut != self.cut
                or not extends(items, self.items, conversation.grew)
                or any(isinstance(item, ToolResult) and item.call_id in self.early for item in items[self.pending:])):
            return None
        self._answer(items, len(self.items))  # (what was added: a moved split is parted by its results)
        old = self.cuts
        cuts = truncate(items[first:pending], cut[0], cut[1], old)
        read = cuts.stop + 1  # (from here on the cuts were read again: the characters before a position change)

        def grew(end: int | None) -> int:
            return 0 if end is not None and end <= read else (
                sum(map(chars, cuts.truncated[read:end])) - sum(map(chars, old.truncated[read:end])))

        total, seen, before = self.chars + grew(None), self.seen + grew(self.split), self.before + grew(self.ahead)
        later = self.later or any(map(_is_user, items[self.pending:pending]))
        held, share = _Grown(cuts, read, self.split, total, seen, self.ahead, before, later), total * fraction
        if _splits(items[pending - 1], later, share, seen, before):
            return held
        if share <= before:  # (a user message ahead of the split has the share now: it moves back)
            return None
        return self._moved(items, first, pending, held, share, chars, turns)

    def _moved(self, items: tuple[Item, ...], first: int, pending: int, grown: _Grown, share: float,
               chars: Callable[[Item], int], turns: UserTurns) -> _Grown | None:
        """``grown`` with its split moved on to the first user message after it with ``share`` of the
        characters before it, read from the last split on; None when none has it (the split is then the last
        user message, or the whole history) or a call made before it is answered after it (no split point):
        the whole history is read then."""
        truncated, answered, seen = grown.cuts.truncated, self.answered, grown.seen
        ahead, before = grown.split, grown.seen  # (the last split is a user message ahead of any after it)
        called: list[str] = []
        for position in range(grown.split, len(truncated)):
            item = items[first + position]
            if position > grown.split and _is_user(item):
                if seen >= share:
                    if any(answered.get(call_id, -1) >= first + position for call_id in called):
                        return None
                    return replace(grown, split=position, seen=seen, ahead=ahead, before=before, moved=True,
                                   later=turns.any_between(first + position, pending))
                ahead, before = position, seen
            elif isinstance(item, ToolCall):
                called.append(item.call_id)
            seen += chars(truncated[position])
        return None

    def grow(self, items: tuple[Item, ...], pending: int, grown: _Grown, sent: tuple[Item, ...] | None = None,
             summary_tokens: int = 0, previous: bool = False) -> tuple[tuple[Item, ...], int]:
        """What compressing the request of ``items`` whole sends, and what its cuts after the split save,
        as ``grown`` reads it: the last request sent with what was added (and the outputs now cut), or, when
        its split moved on, ``sent`` (the head, the new summary and its acknowledgement, read back), then the
        cut history from the new split on and what the model had not answered. The compression is this one
        from now on (``summary_tokens``, ``previous``: the new summary's)."""
        cuts, read, split, first = grown.cuts, grown.read, self.split, self.first
        saved, old = self.cuts.saved, self.cuts  # (this object's own: what the cuts before ``read`` saved stays)
        for position in range(read, len(old.truncated)):
            tokens = saved.pop(position, 0)
            self.retrievable -= tokens if position >= split else 0
        saved.update(cuts.saved)
        self.retrievable += sum(tokens for position, tokens in cuts.saved.items() if position >= split)
        if grown.moved:  # (what the cuts between the two splits saved is summarized now)
            self.retrievable -= sum(saved.get(position, 0) for position in range(split, grown.split))
            self.early.update(item.call_id for item in items[first + split:first + grown.split]
                              if isinstance(item, ToolCall))
            self.sent = (*(sent or ()), *cuts.truncated[grown.split:], *items[pending:])
            self.split, self.summary_tokens, self.previous = grown.split, summary_tokens, previous
            self.ahead = grown.ahead
        else:
            # it sent the head, the summary and its acknowledgement, then the cut history from the split on, then
            # what the model had not answered: the same up to where the cuts were read again, then what was
            keep = max(read, split)
            self.sent = (*self.sent[:first + 2 + keep - split], *cuts.truncated[keep:], *items[pending:])
        self.items, self.pending, self.later = items, pending, grown.later
        self.chars, self.seen, self.before = grown.chars, grown.seen, grown.before
        self.cuts = _Cuts(cuts.truncated, saved, cuts.stable)
        return self.sent, self.retrievable


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

    def _truncated(self, history: tuple[Item, ...], max_chars: int, meter: Meter, known: _Cuts | None = None
                   ) -> _Cuts:
        """The history with older outputs held to the budget (newest first, the outputs past it cut to
        ``max_chars``), what each cut saved, and where every output is past the budget. With ``known``,
        the cuts of a history this one extends: read newest first only until both are past the budget
        (there each cuts every older output alike), the rest taken from those as they were."""
        budget, read = self.budget, self.read
        used, saved, changed, stable, stop = 0, {}, {}, -1, -1
        for position in range(len(history) - 1, -1, -1):
            item = history[position]
            if not isinstance(item, ToolResult):
                continue
            if known is not None and used > budget and position < known.stable:
                stop = position
                break
            cut, tokens, kept = read.cut(item, max_chars, meter)
            if used + tokens <= budget:
                used += tokens
            else:
                used += kept
                if cut is not None:
                    changed[position], saved[position] = cut, tokens - kept
            if used > budget and stable < 0:
                stable = position
        if known is None or stop < 0:
            truncated = list(history)
            for position, cut in changed.items():
                truncated[position] = cut
            return _Cuts(truncated, saved, stable)
        rest = [changed.get(position, history[position]) for position in range(stop + 1, len(history))]
        return _Cuts(known.truncated[:stop + 1] + rest, saved, stable, stop)

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
        cut, fraction = (self._max_chars(total), meter), 1 - self.keep_share
        last = self.last
        grown = last.grown(conversation, (first, pending), cut, fraction, self.read.chars, self._truncated,
                           self.turns.read(conversation))
        if grown is not None and not grown.moved:  # the last call's compression, with this call's step added
            sent, retrievable = last.grow(items, pending, grown)
            result = conversation.with_items(sent)
            return self._result(conversation, result, total, self.totals.total(result, meter), first,
                                last.summary_tokens, last.split, retrievable, meter)
        return self._summarized(conversation, meter, total, (first, pending), cut, grown)

    def _summarized(self, conversation: Conversation, meter: Meter, total: int, where: tuple[int, int],
                    cut: tuple[int, Meter], grown: _Grown | None) -> PolicyResult:
        """The history ``where`` (its start and end) compressed with a new summary: read whole, or, when
        ``grown`` says its split moved on, the last span with the steps up to the new split."""
        items, (first, pending), last = conversation.items, where, self.last
        if grown is not None:  # its split moved on: the span is the last one with the steps up to the new split
            split, cuts = grown.split, grown.cuts
            previous = last.previous or any(map(is_summary, items[first + last.split:first + split]))
            retrievable = 0  # (what its cuts after the new split save: known once it is this compression)
        else:
            cuts = self._truncated(items[first:pending], *cut)
            split = split_point(tuple(cuts.truncated), 1 - self.keep_share, items[pending:], self.read.chars)
            span = items[first:first + split]
            if not span or (len(span) == 1 and is_summary(span[0])):
                return self._unchanged(conversation)
            previous = any(map(is_summary, span))
            # the rest is summarized
            retrievable = sum(tokens for position, tokens in cuts.saved.items() if position >= split)
        text = self.summarizer.summarize(Plan(first, first + split, items[first:first + split], "", previous, 0,
                                              meter))
        summary = summary_message(text, split, "Gemini CLI chat compression: offline summary, no LLM")
        acknowledged = (*items[:first], summary, Message(role="assistant", content=ACKNOWLEDGEMENT))
        rest = (*cuts.truncated[split:], *items[pending:])
        if grown is not None:
            # what follows the acknowledgement is the last request's own, proved valid with it: the head, the
            # summary and the acknowledgement are proved alone (each item is read back as where it stands)
            result = formats.checked_head(conversation, acknowledged, rest)
        else:
            result = formats.checked(conversation.with_items((*acknowledged, *rest)))
        counted = meter.count(result)
        if counted.total < total:
            self.totals.remember(result, counted.total, meter)
        if grown is not None and counted.total < total:
            _, retrievable = last.grow(items, pending, grown, result.items[:first + 2], counted.items[first],
                                       previous)
        done = self._result(conversation, result, total, counted.total, first, counted.items[first], split,
                            retrievable, meter)
        if done.fired and grown is None:
            last.remember(items, result.items, (first, pending, split), cuts, cut, self.read.chars,
                          counted.items[first], retrievable, previous)
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
        self.counts.follow(conversation, meter)
        span_tokens = self.counts.between(first, first + split)
        return PolicyResult(result, "summarization", tokens_lost=max(0, total - after - retrievable),
                            tokens_retrievable=retrievable,
                            summarization=_two_calls(estimate(span_tokens, summary_tokens, meter)))


def _two_calls(summarizing: SummaryCall) -> SummaryCall:
    """Gemini's summary and its check, billed as one: the check reads what the first call read
    and the summary it wrote, and writes the summary again."""
    return SummaryCall(2 * summarizing.input_tokens + summarizing.output_tokens, 2 * summarizing.output_tokens)
