"""The last resort: summarize older history when compaction was not enough.

Kept verbatim: everything up to the first user message (system and developer messages included)
and the newest ``keep_steps`` steps, a step being one assistant turn with the tool results that
answer it — and, with ``keep_steps`` 0, whatever follows the last assistant turn: the model has
not read it yet, so the span never reaches past that turn. The span between them is replaced, in
place, by one marked user message. The cut moves back until no call is separated from its
result, so the request stays valid. The
summarizer reads the span's original content (not compaction's placeholders), each item trimmed
to a budget and the whole transcript held to a total budget; a summary already in the span is
extended, not summarized again. If the summarizer fails, or its summary is not smaller than the
span it would replace, nothing is dropped. Unlike a reference, a summary cannot be undone by
calling a tool.

Summarization is the last resort after compaction, so its limit may not be below the compaction
threshold (``check_limit``).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from .. import formats, words
from ..conversation import Conversation, Item, Message, ToolCall, ToolResult, content_text, extends
from ..errors import InputError
from ..llm.failure import LLMError
from ..meter.carried import CarriedCounts
from ..meter.tokens import Meter, TokenCount
from .cut import MARKER, CutIndex, is_summary, span

LOSS = ("A summary is lossy: the items it replaced are gone from the request, and calling a tool again cannot "
        "bring back what was said (a compaction reference can).")
DEFAULT_KEEP_STEPS = 3
DEFAULT_ITEM_BUDGET = 600  # tokens of each original item the summarizer reads
DEFAULT_TRANSCRIPT_BUDGET = 24_000  # tokens of the whole transcript: fits a small model's context with the prompt
MIN_ITEM_BUDGET = 50  # the per-item budget is never shrunk below this to meet the transcript budget

DEFAULT_PROMPT = """You are compressing the older part of an AI agent's working history so the agent can \
carry on without it. Write a compact summary, in plain sentences and short lists, that holds exactly what \
the agent needs to continue:

1. The task: what the user asked for, with their constraints, in their words where they matter.
2. Findings: facts learned so far, each with its source (file path, URL, query or command).
3. Files, pages and queries touched: what was read, written or run, and with what outcome.
4. Decisions made and why; approaches tried that failed, and the errors they gave.
5. What is left to do.

Keep identifiers, paths, numbers and error messages exact. If the history starts with an earlier summary, \
fold it in: keep what still matters from it. Do not invent anything. Do not address the user."""


class Summarizer(Protocol):
    """Anything that turns a plan into summary text: the offline extractor reads the original
    items, an LLM the trimmed transcript and the prompt."""

    label: str

    def summarize(self, plan: Plan) -> str: ...


@dataclass(frozen=True)
class SummarySettings:
    limit: int  # summarize when the compacted request is at or above this many tokens
    keep_steps: int = DEFAULT_KEEP_STEPS
    item_budget: int = DEFAULT_ITEM_BUDGET
    prompt: str = DEFAULT_PROMPT
    transcript_budget: int = DEFAULT_TRANSCRIPT_BUDGET  # tokens of the whole transcript; 0: no total budget

    def __post_init__(self) -> None:
        for name in ("limit", "keep_steps", "item_budget", "transcript_budget"):
            if getattr(self, name) < 0:
                raise InputError(f"{name} must be 0 or more", where=name, value=getattr(self, name))


def check_limit(limit: int, threshold: int, where: str = "summary limit") -> None:
    """Refuse a summarization limit below the compaction threshold. Summarization is the last
    resort after compaction, which only runs at the threshold, so such a limit was silently
    ignored below the threshold; saying so is better than pretending."""
    if limit < threshold:
        raise InputError(f"{limit:,} is below the compaction threshold of {threshold:,} tokens; summarization "
                         f"is the last resort after compaction, so its limit must be at least {threshold:,}",
                         where=where)


@dataclass(frozen=True)
class Plan:
    """What would be summarized: items ``start`` to ``end`` (exclusive) of the request."""

    start: int
    end: int
    items: tuple[Item, ...]  # the span's original, uncompacted items
    prompt: str
    previous_summary: bool
    budget: int
    meter: Meter = field(repr=False, compare=False)
    transcript_budget: int = DEFAULT_TRANSCRIPT_BUDGET
    # (an earlier span, ``items``) when ``items`` is known to begin with that span, as ``Conversation.grew``:
    # a summarizer that carries its reading of the last span need not compare the two in C
    grew: tuple[tuple[Item, ...], tuple[Item, ...]] | None = field(default=None, repr=False, compare=False)

    @functools.cached_property
    def transcript(self) -> str:
        """The items as an LLM reads them, within both budgets. Made on first use: the offline
        summarizer reads the items themselves and never needs it."""
        return transcript(self.items, self.budget, self.meter, self.transcript_budget)

    @property
    def key(self) -> str:
        """Identifies the summarizer's input, so a result can be cached and reused."""
        return hashlib.sha256(f"{self.prompt}\0{self.transcript}".encode()).hexdigest()


@dataclass(frozen=True)
class SummaryReport:
    status: str  # "not_needed", "nothing_to_summarize", "summarized", "not_smaller" or "failed"
    limit: int
    tokens_before: int
    tokens_after: int
    summarizer: str | None = None
    start: int | None = None  # span, as positions in the conversation's items
    end: int | None = None
    span_origin: tuple[int, int] | None = None  # first and last index in the input's own list
    summary_position: int | None = None
    summary_tokens: int = 0
    span_tokens: int = 0  # what the span weighed in the request the summary would go into
    error: str | None = None
    detail: str = ""

    @property
    def still_over(self) -> bool:
        """Summarization was needed and the request as sent is still at or over the limit."""
        return self.status != "not_needed" and self.tokens_after >= self.limit

    @property
    def still_over_words(self) -> str:
        return (f"still over: the request is {self.tokens_after:,} tokens, at or over the summarization limit of "
                f"{self.limit:,}" if self.still_over else "")


STATUS_WORDS = {
    "not_needed": "not needed: the compacted request is below the summarization limit",
    "nothing_to_summarize": "nothing to summarize: no older history outside what is kept",
    "summarized": "summarized: the oldest history became one summary message",
    "not_smaller": "not applied: the summary is not smaller than the history it would replace",
    "failed": "the summarizer failed: nothing was dropped",
}


def _trim(text: str, budget: int, meter: Meter) -> str:
    """``text`` cut to ``budget`` tokens. The full count is cached from counting the request; the
    cut encodes only a prefix that holds the budget (about 4 characters a token; doubled until it does)."""
    total = meter.text(text)
    if total <= budget:
        return text
    span = budget * 6
    tokens = meter.encoding.encode_ordinary(text[:span])
    while len(tokens) <= budget and span < len(text):
        span *= 2
        tokens = meter.encoding.encode_ordinary(text[:span])
    return meter.encoding.decode(tokens[:budget]) + f" […{total - budget} more tokens cut]"


def _trimmable(item: Item) -> str | None:
    """The text of ``item`` that a budget cuts: a call's arguments, a message's or result's text.
    None for an earlier summary (read whole) and for an item with no text."""
    if is_summary(item):
        return None
    if isinstance(item, ToolCall):
        return item.arguments
    return content_text(item.content) or None


def _block(item: Item, budget: int, meter: Meter) -> str | None:
    """One item as the summarizer reads it: labelled, trimmed to ``budget``; None when empty."""
    if is_summary(item):
        return f"[earlier summary]\n{content_text(item.content)}"
    text = _trimmable(item)
    if text is None:
        return None
    if isinstance(item, ToolCall):
        label = f"assistant calls {item.name}"
    elif isinstance(item, ToolResult):
        label = f"{item.name} result" + (" (error)" if item.is_error else "")
    else:
        label = item.role
    return f"[{label}]\n{_trim(text, budget, meter)}"


def _blocks(items: tuple[Item, ...], budget: int, meter: Meter) -> list[str]:
    return [block for item in items if (block := _block(item, budget, meter)) is not None]


_BLOCK_OVERHEAD = 12  # tokens of a block's label and separator, and of a cut note, estimated generously


def _fitting_budget(items: tuple[Item, ...], budget: int, total: int, meter: Meter) -> int:
    """The largest per-item budget, at most ``budget`` and not below MIN_ITEM_BUDGET, whose
    blocks are estimated to fit ``total``: a binary search on each item's cached count, so no
    text is encoded again while searching."""
    sizes = [meter.text(text) for item in items if (text := _trimmable(item)) is not None]
    fixed = sum(meter.text(content_text(item.content)) + _BLOCK_OVERHEAD for item in items if is_summary(item))

    def weight(cap: int) -> int:
        return fixed + sum(min(size, cap) + _BLOCK_OVERHEAD * (2 if size > cap else 1) for size in sizes)

    low, high = min(MIN_ITEM_BUDGET, budget), budget
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if weight(middle) <= total else (low, middle - 1)
    return low


def _weight(blocks: list[str], meter: Meter) -> int:
    """Tokens of the blocks joined, estimated from their cached counts (one per separator)."""
    return sum(meter.text(block) + 1 for block in blocks)


def _drop_middle(blocks: list[str], total: int, meter: Meter) -> str:
    """The oldest and the newest blocks, alternately, while they fit; one marker for the rest.
    Checked by encoding the result: where the estimate was short, more is left out."""
    marker = "[… {} items in the middle left out: the transcript is held to " + f"{total:,} tokens …]"
    room = total
    while True:
        head: list[str] = []
        tail: list[str] = []
        used = meter.text(marker.format(len(blocks))) + 2
        left, right = 0, len(blocks) - 1
        while left <= right:
            from_head = len(head) <= len(tail)
            block = blocks[left] if from_head else blocks[right]
            if used + meter.text(block) + 1 > room:
                break
            used += meter.text(block) + 1
            if from_head:
                head.append(block)
                left += 1
            else:
                tail.insert(0, block)
                right -= 1
        text = "\n\n".join([*head, marker.format(right - left + 1), *tail])
        over = len(meter.encoding.encode_ordinary(text)) - total
        if over <= 0 or not head + tail:
            return text
        room -= over


def transcript(items: tuple[Item, ...], budget: int, meter: Meter, total: int = DEFAULT_TRANSCRIPT_BUDGET) -> str:
    """The span as the summarizer reads it: one labelled block per item, long ones trimmed to
    ``budget`` tokens each. When the blocks together exceed ``total`` tokens (0: no total), the
    per-item budget is lowered to the largest that fits, but not below MIN_ITEM_BUDGET; if they
    still do not fit, the middle items are left out, keeping the oldest and the newest
    alternately, with one marker saying how many are missing. So a large span cannot exceed the
    summarizer's own context."""
    blocks = _blocks(items, budget, meter)
    if total and _weight(blocks, meter) > total:
        blocks = _blocks(items, _fitting_budget(items, budget, total, meter), meter)
    text = "\n\n".join(blocks)
    if not total or (_weight(blocks, meter) <= total and len(meter.encoding.encode_ordinary(text)) <= total):
        return text
    return _drop_middle(blocks, total, meter)


class Carry:
    """What summarizing the last request measured, for a policy that summarizes at every call:
    its requests grow by appending (per call, with an older output masked since), so the cut,
    each item's count and whether the span holds an earlier summary are carried from the last
    request and only what changed is read again. ``run`` with a carry returns what it returns
    without one. Owned by one policy."""

    def __init__(self) -> None:
        self.cut = CutIndex()
        self._counted = CarriedCounts()
        self._originals: tuple[Item, ...] = ()
        self._previous_summary = False
        self._source: tuple[tuple[Item, ...], int] = ((), 0)  # the request the span was read from, and its start
        self._follows: tuple[tuple[Item, ...], int, tuple[Item, ...]] | None = None

    def follows(self, known: tuple[Item, ...], same: int, items: tuple[Item, ...]) -> None:
        """The policy's word that ``items``, the next request to summarize, begins with the first
        ``same`` items of ``known``, the very objects (the frontier's prefix, the outputs masked
        before): the cut and the counts compare only what follows, where a comparison of the two
        requests in C read the whole request at every call."""
        self._follows = (known, same, items)

    def _same(self, old: tuple[Item, ...], items: tuple[Item, ...]) -> int:
        """How many leading items of ``items`` the policy said are ``old``'s own (0 when it said
        nothing of these two)."""
        follows = self._follows
        return follows[1] if follows is not None and follows[0] is old and follows[2] is items else 0

    def span(self, items: tuple[Item, ...], keep_steps: int) -> tuple[int, int] | None:
        """The cut's ``span`` of ``items``, as ``CutIndex.span`` finds it."""
        return self.cut.span(items, keep_steps, self._same(self.cut.items, items))

    def counts(self, items: tuple[Item, ...], meter: Meter) -> list[int]:
        """``meter.items(items)``, counting only what changed since the last request (``CarriedCounts``)."""
        return self._counted.counts(items, meter, self._same(self._counted.items, items))

    def between(self, start: int, end: int) -> int:
        """The last counted request's items ``start:end``, summed (``CarriedCounts.between``)."""
        return self._counted.between(start, end)

    def replaced(self, before: int, start: int, end: int, summary: Item, meter: Meter) -> tuple[int, int] | None:
        """The summary's tokens and the request's total once the last counted request's items
        ``start:end`` are ``summary`` (``CarriedCounts.replaced``; None: count the request whole)."""
        found = self._counted.replaced(before, start, end, (summary,), meter)
        return None if found is None else (found.made[0], found.total)

    def previous_summary(self, original: Conversation, start: int, originals: tuple[Item, ...]
                         ) -> tuple[bool, tuple[tuple[Item, ...], tuple[Item, ...]] | None]:
        """Whether the span's original items (``originals``, from ``start`` of ``original``) hold an
        earlier summary, reading only those appended; and, when they begin with the last span, the
        pair that says so (``Plan.grew``). That is known without comparing them when ``original``
        grew from the request the last span was read from and the span starts where it did."""
        known, (source, known_start) = self._originals, self._source
        grew = original.grew
        extended = ((start == known_start and grew is not None and grew[1] is original.items and grew[0] is source
                     and len(originals) >= len(known)) or extends(originals, known))
        if extended:
            found = self._previous_summary or any(is_summary(item) for item in originals[len(known):])
        else:
            found = any(is_summary(item) for item in originals)
        self._originals, self._previous_summary, self._source = originals, found, (original.items, start)
        return found, (known, originals) if extended else None


def plan(original: Conversation, compacted: Conversation, settings: SummarySettings, meter: Meter,
         carry: Carry | None = None) -> Plan | None:
    """What to summarize in ``compacted`` (positions match ``original``), read from ``original``."""
    found = (span(compacted.items, settings.keep_steps) if carry is None
             else carry.span(compacted.items, settings.keep_steps))
    if found is None:
        return None
    start, end = found
    originals = original.items[start:end]
    previous, grew = ((any(is_summary(item) for item in originals), None) if carry is None
                      else carry.previous_summary(original, start, originals))
    return Plan(start, end, originals, settings.prompt, previous, settings.item_budget, meter,
                settings.transcript_budget, grew)


def summary_message(text: str, count: int, label: str) -> Message:
    header = (f"{MARKER} ({label}): it replaces {words.plural(count, 'item')}. What it leaves out is gone and cannot "
              "be fetched again by calling a tool.]")
    return Message(role="user", content=f"{header}\n\n{text.strip()}")


def apply(compacted: Conversation, chosen: Plan, text: str, label: str, *, carried: bool = False) -> Conversation:
    """The request with the span replaced, in place, by one summary message, checked valid; every
    other item stays the very object it was (``formats.checked``). ``carried``: what follows the
    span is the last request's own, each item as it was sent, so the head and the summary are
    proved alone and the summary is read back as where it stands — when the item after it has an
    origin: every writer keeps an item made here (no origin) out of such an item's wire message.
    A replay summarizing at every call otherwise wrote and read back its kept steps each time."""
    head = (*compacted.items[:chosen.start], summary_message(text, chosen.end - chosen.start, label))
    rest = compacted.items[chosen.end:]
    if carried:
        return formats.checked_head(compacted, head, rest)
    return formats.checked(compacted.with_items((*head, *rest)))


@dataclass(frozen=True)
class SummaryResult:
    """What ``run`` gave: the request as it goes on (summarized or not), the report of why, and the
    plan it followed (None when nothing was planned)."""

    conversation: Conversation
    report: SummaryReport
    plan: Plan | None
    # the tokens of ``conversation``, item by item (what a cost is computed from); None when ``run`` was
    # given a carry and made no summary (the caller knew the total)
    count: TokenCount | None = None


def _origin_span(conversation: Conversation, start: int, end: int) -> tuple[int, int] | None:
    first, last = conversation.items[start].origin, conversation.items[end - 1].origin
    return (first.index, last.index) if first and last else None


def run(original: Conversation, compacted: Conversation, settings: SummarySettings, summarizer: Summarizer,
        meter: Meter, cache: Mapping[tuple[str, str], str] | None = None, prefer: str | None = None, *,
        carry: tuple[Carry, int] | None = None) -> SummaryResult:
    """Summarize if the compacted request is at or over the limit.

    ``cache`` holds summaries already made, by (summarizer label, plan key): when it has one from
    ``prefer`` for this very input, it is used and ``summarizer`` is not called. The UI keeps paid
    LLM results there and calls the endpoint only when asked. ``carry``: a policy's ``Carry`` and
    the compacted request's total, which the policy's running total already knows; the result is
    the same, but ``count`` is None (neither request is counted whole; for Claude, a summary made is).
    """
    counted = meter.count(compacted) if carry is None else None
    before = counted.total if counted is not None else carry[1]  # type: ignore[index]
    if before < settings.limit:
        return SummaryResult(compacted, SummaryReport("not_needed", settings.limit, before, before), None, counted)
    chosen = plan(original, compacted, settings, meter, None if carry is None else carry[0])
    if chosen is None:
        detail = f"fewer than {settings.keep_steps + 1} assistant turns after the first user message"
        return SummaryResult(compacted, SummaryReport("nothing_to_summarize", settings.limit, before, before,
                                                      detail=detail), None, counted)
    cached = cache.get((prefer, chosen.key)) if cache is not None and prefer else None
    label = prefer if cached is not None else summarizer.label
    if carry is not None:  # the request's counts carried from the last one's, summed from running sums
        carry[0].counts(compacted.items, meter)
    span_tokens = (sum(counted.items[chosen.start:chosen.end]) if counted is not None
                   else carry[0].between(chosen.start, chosen.end))  # type: ignore[index]
    common = {"limit": settings.limit, "tokens_before": before, "summarizer": label,
              "start": chosen.start, "end": chosen.end, "span_tokens": span_tokens,
              "span_origin": _origin_span(compacted, chosen.start, chosen.end)}
    try:
        text = cached if cached is not None else summarizer.summarize(chosen)
        if not text or not text.strip():
            raise LLMError("the summarizer returned an empty summary")
    except LLMError as exc:
        return SummaryResult(compacted, SummaryReport("failed", tokens_after=before, error=str(exc), **common),
                             chosen, counted)
    result = apply(compacted, chosen, text, label, carried=carry is not None)
    if carry is not None:  # the summary is mostly the last call's: its lines are counted, most of them known
        meter.raw_by_line(content_text(result.items[chosen.start].content))
    # with a carry, only the summary and its two neighbours are counted: every other item's count and the fixed
    # parts are the compacted request's (``CarriedCounts.replaced``: not for Claude, nor with thinking or reasoning)
    replaced = (None if carry is None
                else carry[0].replaced(before, chosen.start, chosen.end, result.items[chosen.start], meter))
    after = meter.count(result) if replaced is None else None
    summary_tokens, total = ((after.items[chosen.start], after.total) if after is not None
                             else replaced)  # type: ignore[misc]
    if summary_tokens >= span_tokens or total >= before:
        # Like compaction's "replacement not smaller" guard: a summary that saves nothing is pure loss.
        detail = (f"the summary ({summary_tokens:,} tokens) is not smaller than the {chosen.end - chosen.start} "
                  f"items it would replace ({span_tokens:,} tokens); the request would go from {before:,} to "
                  f"{total:,} tokens")
        return SummaryResult(compacted, SummaryReport("not_smaller", tokens_after=before, summary_tokens=summary_tokens,
                                                      detail=detail, **common), chosen, counted)
    return SummaryResult(result, SummaryReport("summarized", tokens_after=total, summary_position=chosen.start,
                                               summary_tokens=summary_tokens, **common), chosen, after)
