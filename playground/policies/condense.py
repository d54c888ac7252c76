"""Summarize and drop, the way agents and providers compact on their own: once the request is over
a trigger (tokens, or a number of messages), everything between a kept head and a kept tail
becomes one summary, and only that summary stands for it.

One mechanism, several sources with their own numbers (``data/policies.json``): Anthropic's
``compact_20260112`` keeps nothing of the history but the summary; OpenAI's Responses compaction
keeps the user messages beside its opaque item; Claude Code fires near the window less its
reserve; Codex keeps the newest user messages up to 20,000 tokens; LangChain keeps the newest 20
messages; OpenHands keeps the first events and the newest half. Every one of them keeps what the
model has not answered yet (the items after the last assistant turn) and never parts a call from
its result. The summary is the offline summarizer's, so a replay needs no LLM; the call that
would have written it is reported (``summarycall``) and billed by replay. What it replaced is lost.
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
    content_text,
    is_instruction,
    links,
    role_of,
    turn_end,
    turn_starts,
)
from ..errors import InputError
from ..meter.tokens import Meter
from ..summarize.call import estimate
from ..summarize.cut import is_summary
from ..summarize.history import Plan, summary_message
from ..summarize.offline import OfflineSummarizer
from .base import PolicyResult, RunningTotal, unchanged


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


def _user_messages(span: tuple[Item, ...], budget: int | None, meter: Meter) -> tuple[Item, ...]:
    """The user messages of ``span`` kept beside the summary, in order: all of them (``budget``
    None), or the newest up to ``budget`` tokens, the one that overflows cut to what is left (as
    Codex does); earlier summaries are summarized again, not kept."""
    users = [item for item in span if isinstance(item, Message) and item.role == "user" and not is_summary(item)
             and content_text(item.content).strip()]
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


@dataclass(frozen=True)
class CondensePolicy:
    trigger: int | None = None  # fire when the request exceeds this many tokens
    context_window: int = 200_000  # the model's, for a trigger stated as part of it
    window_reserve: int | None = None  # trigger: the window less this many tokens (Claude Code)
    window_fraction: float | None = None  # trigger: this share of the window (Codex)
    trigger_messages: int | None = None  # fire when the request holds more messages than this (OpenHands)
    keep_first: int = 0  # messages after the system messages kept verbatim
    keep_last: int = 0  # newest messages kept verbatim, besides what the model has not read
    keep_user_tokens: int | None = 0  # user messages kept beside the summary, newest first (None: all)
    input_cap: int | None = None  # the summarizer reads at most this many tokens of the span, the newest
    label: str = "compaction"
    totals: RunningTotal = field(default_factory=RunningTotal, compare=False, repr=False)
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
        """The token trigger: given, or derived from the context window as the source states it."""
        if self.trigger is not None:
            return self.trigger
        if self.window_reserve is not None:
            return max(0, self.context_window - self.window_reserve)
        if self.window_fraction is not None:
            return int(self.context_window * self.window_fraction)
        return None

    def params(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"trigger": self.threshold()}
        if self.trigger is None and (self.window_reserve is not None or self.window_fraction is not None):
            shown["context_window"] = self.context_window
        for key, quiet in (("trigger_messages", None), ("keep_first", 0), ("keep_last", 0), ("input_cap", None)):
            if getattr(self, key) != quiet:
                shown[key] = getattr(self, key)
        if self.keep_user_tokens != 0:
            shown["keep_user_tokens"] = "all" if self.keep_user_tokens is None else self.keep_user_tokens
        return {key: value for key, value in shown.items() if value is not None}

    def _over(self, conversation: Conversation, total: int) -> bool:
        limit, most = self.threshold(), self.trigger_messages
        return ((limit is not None and total > limit)
                or (most is not None and len(message_starts(conversation.items)) > most))

    def apply(self, conversation: Conversation, meter: Meter) -> PolicyResult:
        total = self.totals.total(conversation, meter)
        if not self._over(conversation, total):
            return unchanged(conversation)
        items = conversation.items
        found = condense_span(items, self.keep_first, self.keep_last)
        if found is None:
            return unchanged(conversation)
        start, end = found
        span = items[start:end]
        kept = (*(item for item in span if is_instruction(item)), *_user_messages(span, self.keep_user_tokens, meter))
        read = _readable(span, self.input_cap, meter)
        text = OfflineSummarizer().summarize(Plan(start, end, read, "", any(map(is_summary, read)), 0, meter))
        summary = summary_message(text, len(span) - len(kept), f"{self.label}: offline summary, no LLM")
        result = formats.rewritten(conversation.with_items((*items[:start], *kept, summary, *items[end:])))
        counted = meter.count(result)
        if counted.total >= total:
            return unchanged(conversation)  # a summary that saves nothing is pure loss
        summary_tokens = counted.items[start + len(kept)]
        self.totals.remember(result, counted.total, meter)
        call = estimate(total - counted.total + summary_tokens, summary_tokens, meter, self.input_cap)
        return PolicyResult(result, "summarization", tokens_lost=total - counted.total, summarization=call)
