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

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..conversation import Conversation, Item, Message, extends, is_instruction
from ..errors import InputError
from ..meter.carried import CarriedCounts
from ..meter.tokens import Meter
from .base import PolicyResult, at_least_zero, unchanged, unread_from
from .condense import message_starts


class _Messages:
    """The request's items from its first that is not an instruction, as LlamaIndex's messages:
    where each begins, its tokens (what ``meter.items`` gives those items, carried by
    ``CarriedCounts``, which also follows thinking and reasoning a new user message takes out of
    the bill) and whether the user wrote it. Kept from call to call: a request extending the last
    one is read only in its new items — reading the whole history at every call made a long run's
    calls cost more and more. Owned by one policy."""

    def __init__(self) -> None:
        self.counted = CarriedCounts()
        self._begin(0)

    def _begin(self, first: int) -> None:
        self.items: tuple[Item, ...] = ()
        self.first = first  # where the messages begin; positions count from it
        self.starts: list[int] = []  # per message: its first item
        self.user: list[bool] = []  # per message: the user wrote it
        self.users: list[int] = []  # the user's messages

    def read(self, conversation: Conversation, first: int, meter: Meter) -> _Messages:
        """This request's messages (``first``: where they begin among its items)."""
        items = conversation.items
        if first != self.first or not extends(items, self.items, conversation.grew):
            self._begin(first)
        known = max(0, len(self.items) - first)
        self.counted.follow(conversation, meter)
        self._split(items, known, max(0, len(items) - first))
        self.items = items
        return self

    def between(self, start: int, end: int) -> int:
        """The tokens of messages ``start`` to ``end`` (not included)."""
        return self.counted.between(self._at(start), self._at(end))

    def tokens(self, message: int) -> int:
        return self.between(message, message + 1)

    def _at(self, message: int) -> int:
        """Where message ``message`` begins among the request's items (the end, past the last)."""
        return self.first + self.starts[message] if message < len(self.starts) else len(self.items)

    def _split(self, items: tuple[Item, ...], known: int, count: int) -> None:
        """Where the new items' messages begin (``message_starts``, from the last item read on)."""
        low = max(0, known - 1)
        for p in message_starts(items[self.first + low:self.first + count]):
            if low + p >= known:
                item = items[self.first + low + p]
                user = isinstance(item, Message) and item.role == "user"
                self.users += [len(self.starts)] if user else []
                self.user.append(user)
                self.starts.append(low + p)


def flushed_from(messages: _Messages, start: int, end: int, limit: float, flush_size: int) -> int:
    """``_manage_queue`` on messages ``start`` to ``end``: the first one it keeps. The queue's tokens
    are the running totals' difference: summed again after every message put, a run under the
    limit was read whole at every call."""
    kept = start
    over = messages.between(kept, end) - limit
    while over > 0 and end - kept > 1:
        flushed = 0
        while flushed < flush_size and end - kept > 1:
            flushed += messages.tokens(kept)
            kept += 1
        while not messages.user[kept] and end - kept > 1:
            kept += 1
        over = messages.between(kept, end) - limit
    return kept


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
    messages: _Messages = field(default_factory=_Messages, compare=False, repr=False)
    name: ClassVar[str] = "llamaindex-memory"

    def __post_init__(self) -> None:
        at_least_zero(self, "token_limit", "token_flush_size")
        if self.token_flush_size == 0:  # a flush that moves nothing would flush for ever once over the limit
            raise InputError("token_flush_size must be 1 or more", where="token_flush_size", value=0)
        if not 0 < self.chat_history_token_ratio <= 1:
            raise InputError("chat_history_token_ratio must be above 0 and at most 1", where="chat_history_token_ratio",
                             value=self.chat_history_token_ratio)

    def params(self) -> dict[str, Any]:
        return {"token_limit": self.token_limit, "token_flush_size": self.token_flush_size,
                "chat_history_token_ratio": self.chat_history_token_ratio}

    def apply(self, conversation: Conversation, meter: Meter) -> PolicyResult:
        items = conversation.items
        first = next((p for p, item in enumerate(items) if not is_instruction(item)), len(items))
        messages = self.messages.read(conversation, first, meter)
        put, start = self.queue.resume(conversation)
        limit = self.token_limit * self.chat_history_token_ratio
        for count in range(max(put, 1), len(messages.starts) + 1):  # each message put, then the queue managed
            start = flushed_from(messages, start, count, limit, self.token_flush_size)
        self.queue.remember(conversation, len(messages.starts), start)
        unread = unread_from(items) or 0  # what the model has not answered yet stays, as the agent just put it
        start = min(start, bisect_left(messages.starts, unread - first))
        user = bisect_right(messages.users, start) - 1  # a lone message that is not the user's: its whole turn instead
        start = messages.users[user] if user >= 0 else 0
        if start == 0:
            return unchanged(conversation)
        result = conversation.with_items((*items[:first], *items[first + messages.starts[start]:]))
        return PolicyResult(result, "flushing", tokens_lost=messages.between(0, start), report={"flushed": start})
