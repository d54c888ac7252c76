"""opencode's session compaction (``session/compaction.ts``, ``session/overflow.ts``), run offline.

Once a request reaches opencode's usable window (the window less the reply's maximum, at most
32,000, less a reserve of at most 20,000: 148,000 of 200,000), the history is cut in two. The tail
kept verbatim is the newest user turns whole while they fit in a budget (a quarter of the usable
window, 2,000 to 15,000 tokens); the turn that overflows it keeps its newest messages that still fit.
A tail that would hold everything keeps nothing, as in the source. Everything before the tail (an
earlier summary too, which opencode hands its summarizer as the prior summary) becomes one summary.
Unlike opencode, what the model has not answered yet and the step it answers always stay (opencode
summarizes a newest step over the budget too). The summary is the offline summarizer's, its LLM call
billed. The tail is found walking back from the end, so a per-call replay does not read the whole
request at every call.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .. import formats
from ..conversation import Conversation, Item, Message, ToolCall, ToolResult, content_text, is_instruction, role_of
from ..meter.carried import CarriedCounts
from ..meter.tokens import Meter
from ..summarize.call import estimate
from ..summarize.cut import is_summary
from ..summarize.history import Plan, summary_message
from ..summarize.offline import OfflineSummarizer
from .base import PolicyResult, RunningTotal, at_least_zero, unchanged, unread_from

OUTPUT_TOKEN_MAX = 32_000  # provider/transform.ts: the most a reply is given
COMPACTION_BUFFER = 20_000  # overflow.ts: the reserve, at most this and at most the reply's maximum
MIN_PRESERVE_RECENT_TOKENS = 2_000
MAX_PRESERVE_RECENT_TOKENS = 15_000
CHUNK = 64  # items counted at once, walking back


def usable(context_window: int, max_output: int, reserved: int | None = None) -> int:
    """overflow.ts ``usable``: the window less the reply's maximum, less the reserve (``reserved``,
    else the smaller of 20,000 and the reply's maximum)."""
    reserve = min(COMPACTION_BUFFER, max_output) if reserved is None else reserved
    return max(0, context_window - max_output - reserve) if context_window else 0


def preserve_budget(usable_tokens: int) -> int:
    """compaction.ts ``preserveRecentBudget``: a quarter of the usable window, 2,000 to 15,000."""
    return min(MAX_PRESERVE_RECENT_TOKENS, max(MIN_PRESERVE_RECENT_TOKENS, usable_tokens // 4))


def _sizes_back(items: tuple[Item, ...], start: int, meter: Meter) -> Iterator[tuple[int, int]]:
    """Each item's position and tokens from the last back to ``start``, counted a chunk at a time
    (a chunk twice the last), so a walk that stops early counts only what it passed."""
    end, chunk = len(items), CHUNK
    while end > start:
        low = max(start, end - chunk)
        yield from zip(range(end - 1, low - 1, -1), reversed(meter.items(items[low:end])), strict=True)
        end, chunk = low, chunk * 2


def _message_start(items: tuple[Item, ...], position: int) -> bool:
    """Where an opencode message begins: a user message, or an assistant step (its text and calls,
    whose results opencode holds in the same message)."""
    item = items[position]
    if isinstance(item, Message) and item.role == "user":
        return True
    return role_of(item) == "assistant" and (position == 0 or role_of(items[position - 1]) != "assistant")


def tail_start(items: tuple[Item, ...], base: int, budget: int, meter: Meter) -> int | None:
    """compaction.ts ``select``: where the kept tail of ``items[base:]`` begins, None when nothing
    is kept. Newest first, whole user turns while the tail stays within ``budget``; then, of the
    turn that overflows it, the earliest message whose rest still fits. A suffix only grows
    walking back, so both are the earliest message start whose suffix fits, and the walk stops at
    the first item over the budget. When every turn fits, the tail begins at the first user
    message, unless that is the history's first message: then opencode keeps nothing and
    summarizes it all."""
    suffix, kept = 0, None
    for position, tokens in _sizes_back(items, base, meter):
        suffix += tokens
        if suffix > budget:
            break
        if _message_start(items, position) and not is_summary(items[position]):
            kept = position
    first_user = next((p for p in range(base, len(items)) if isinstance(items[p], Message)
                       and items[p].role == "user" and not is_summary(items[p])), None)
    if first_user is None or kept is None:
        return None
    if kept <= first_user:  # every turn fits
        return None if first_user == base else first_user
    return kept


def _whole(items: tuple[Item, ...], start: int) -> int:
    """``start`` moved back until no result from it on answers a call before it, and out of an
    assistant step (the tail begins at a message)."""
    moved = True
    while moved:
        moved = False
        while 0 < start < len(items) and role_of(items[start]) == role_of(items[start - 1]) == "assistant":
            start -= 1
        calls = {item.call_id for item in items[start:] if isinstance(item, ToolCall)}
        waiting = {item.call_id for item in items[start:] if isinstance(item, ToolResult)} - calls
        if waiting:
            earlier = next((p for p in range(start - 1, -1, -1)
                            if isinstance(items[p], ToolCall) and items[p].call_id in waiting), None)
            if earlier is not None:
                start, moved = earlier, True
    return start


@dataclass(frozen=True)
class OpencodeSummaryPolicy:
    context_window: int = 200_000  # the model's (models.dev limit.context)
    max_output: int = OUTPUT_TOKEN_MAX  # the reply's maximum: the model's limit.output, at most 32,000
    reserved: int | None = None  # compaction.reserved; None: the smaller of 20,000 and max_output
    preserve_recent_tokens: int | None = None  # compaction.preserve_recent_tokens; None: from the usable window
    totals: RunningTotal = field(default_factory=RunningTotal, compare=False, repr=False)
    summarizer: OfflineSummarizer = field(default_factory=OfflineSummarizer, compare=False, repr=False)
    # the request's items, carried from the last one: per call, every call summarizes, and its result is counted
    # from them
    counts: CarriedCounts = field(default_factory=CarriedCounts, compare=False, repr=False)
    name: ClassVar[str] = "opencode-summary"

    def __post_init__(self) -> None:
        at_least_zero(self, "context_window", "max_output",
                      *(key for key in ("reserved", "preserve_recent_tokens") if getattr(self, key) is not None))

    def threshold(self) -> int:
        return usable(self.context_window, self.max_output, self.reserved)

    def budget(self) -> int:
        given = self.preserve_recent_tokens
        return preserve_budget(self.threshold()) if given is None else given

    def params(self) -> dict[str, Any]:
        return {"trigger": self.threshold(), "context_window": self.context_window, "max_output": self.max_output,
                "preserve_recent_tokens": self.budget()}

    def apply(self, conversation: Conversation, meter: Meter) -> PolicyResult:
        total = self.totals.total(conversation, meter)
        items = conversation.items
        if not self.context_window or total < self.threshold():  # isOverflow: count >= usable
            return unchanged(conversation)
        first = next((p for p, item in enumerate(items) if not is_instruction(item)), len(items))
        base = next((p for p in range(first, len(items)) if not is_summary(items[p])), len(items))
        found = tail_start(items, base, self.budget(), meter)
        unread = unread_from(items)  # what the model has not answered yet stays, with the step it answers
        keep = _whole(items, min(len(items) if found is None else found, first if unread is None else unread))
        span = items[first:keep]
        if not span or (len(span) == 1 and is_summary(span[0])):
            return unchanged(conversation)
        text = self.summarizer.summarize(Plan(first, keep, span, "", base > first, 0, meter))
        summary = summary_message(text, len(span), "opencode compaction: offline summary, no LLM")
        result = formats.checked_head(conversation, (*items[:first], summary), items[keep:])
        self.counts.follow(conversation, meter)
        meter.raw_by_line(content_text(summary.content))  # (per call, most of its lines are the last summary's)
        carried = self.counts.replaced(total, first, keep, (summary,), meter)
        if carried is not None:
            after, summary_tokens = carried.total, carried.made[0]
        else:
            counted = meter.count(result)
            after, summary_tokens = counted.total, counted.items[first]
        if after >= total:
            return unchanged(conversation)  # a summary that saves nothing is pure loss
        self.totals.remember(result, after, meter)
        call = estimate(total - after + summary_tokens, summary_tokens, meter)
        return PolicyResult(result, "summarization", tokens_lost=total - after, summarization=call)
