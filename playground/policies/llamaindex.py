"""LlamaIndex's ``Memory`` (``llama_index/core/memory/memory.py``) as a policy: the chat history is
a queue of messages, and each message put into it is followed by ``_manage_queue``: once the queue
holds more than ``chat_history_token_ratio`` of ``token_limit`` tokens, its oldest messages are
flushed, ``token_flush_size`` tokens at a time, and then until the first one left is a user
message, so a turn goes whole; at least one message stays. Flushed messages go to the memory's
blocks, and with none (the default) they are gone. The system prompt is the agent's, outside the
queue. No LLM: nothing is billed.

LlamaIndex's messages are ours grouped as it holds them: an assistant reply with its tool calls is
one message, each tool output one. Where a single turn is over the limit LlamaIndex may keep one
message that is not the user's; then the newest turn is kept from its user message, so no tool
output is sent without its call; and what the model has not answered yet is never flushed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, ClassVar

from ..conversation import Conversation, Item, Message, extends, is_instruction
from ..errors import InputError
from ..meter.tokens import Meter
from .base import PolicyResult, at_least_zero, unchanged, unread_from
from .condense import message_starts


@dataclass(frozen=True)
class _Message:
    """One message of the queue: where it begins among the request's items, its tokens, and
    whether the user wrote it."""

    start: int
    tokens: int
    user: bool


def flushed_from(queue: list[_Message], start: int, end: int, limit: float, flush_size: int) -> int:
    """``_manage_queue`` on ``queue[start:end]``: the index of the first message it keeps."""
    kept = list(range(start, end))
    over = sum(queue[k].tokens for k in kept) - limit
    while over > 0 and len(kept) > 1:
        flushed = 0
        while flushed < flush_size and len(kept) > 1:
            flushed += queue[kept.pop(0)].tokens
        while not queue[kept[0]].user and len(kept) > 1:
            kept.pop(0)
        over = sum(queue[k].tokens for k in kept) - limit
    return kept[0] if kept else start


class _Queue:
    """How far the queue was flushed for the last request, which a request extending it goes on
    from (LlamaIndex archives what it flushed: it never comes back). Owned by one policy."""

    def __init__(self) -> None:
        self.items: tuple[Item, ...] = ()
        self.put = 0  # messages put so far
        self.start = 0  # the first message still in the queue

    def resume(self, conversation: Conversation) -> tuple[int, int]:
        if self.items and extends(conversation.items, self.items, conversation.grew):
            return self.put, self.start
        return 0, 0

    def remember(self, conversation: Conversation, put: int, start: int) -> None:
        self.items, self.put, self.start = conversation.items, put, start


@dataclass(frozen=True)
class LlamaIndexMemoryPolicy:
    token_limit: int = 30_000
    token_flush_size: int = 3_000
    chat_history_token_ratio: float = 0.7
    queue: _Queue = field(default_factory=_Queue, compare=False, repr=False)
    name: ClassVar[str] = "llamaindex-memory"

    def __post_init__(self) -> None:
        at_least_zero(self, "token_limit", "token_flush_size")
        if not 0 < self.chat_history_token_ratio <= 1:
            raise InputError("chat_history_token_ratio must be above 0 and at most 1", where="chat_history_token_ratio",
                             value=self.chat_history_token_ratio)

    def params(self) -> dict[str, Any]:
        return {"token_limit": self.token_limit, "token_flush_size": self.token_flush_size,
                "chat_history_token_ratio": self.chat_history_token_ratio}

    def apply(self, conversation: Conversation, meter: Meter) -> PolicyResult:
        items = conversation.items
        first = next((p for p, item in enumerate(items) if not is_instruction(item)), len(items))
        queue = _messages(items, first, meter)
        put, start = self.queue.resume(conversation)
        limit = self.token_limit * self.chat_history_token_ratio
        for count in range(max(put, 1), len(queue) + 1):  # each message put, then the queue managed
            start = flushed_from(queue, start, count, limit, self.token_flush_size)
        self.queue.remember(conversation, len(queue), start)
        unread = unread_from(items) or 0  # what the model has not answered yet stays, as the agent just put it
        start = min(start, next((k for k, message in enumerate(queue) if message.start >= unread), len(queue)))
        while start > 0 and not queue[start].user:
            start -= 1  # a lone message that is not the user's: its whole turn instead
        if start == 0:
            return unchanged(conversation)
        result = conversation.with_items((*items[:first], *items[queue[start].start:]))
        lost = sum(message.tokens for message in queue[:start])
        return PolicyResult(result, "flushing", tokens_lost=lost, report={"flushed": start})


def _messages(items: tuple[Item, ...], first: int, meter: Meter) -> list[_Message]:
    """The request's items from ``first`` on as LlamaIndex's messages."""
    rest = items[first:]
    sizes = meter.items(rest)
    starts = [*message_starts(rest), len(rest)]
    return [_Message(first + a, sum(sizes[a:b]), isinstance(rest[a], Message) and rest[a].role == "user")
            for a, b in pairwise(starts)]
