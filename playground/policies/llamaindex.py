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
from ..meter import claude, responses
from ..meter.tokens import Layout, Meter
from .base import PolicyResult, at_least_zero, unchanged, unread_from
from .condense import message_starts


class _Messages:
    """The request's items from its first that is not an instruction, as LlamaIndex's messages:
    where each begins, its tokens (what ``meter.items`` gives those items) and whether the user
    wrote it. Kept from call to call: a request extending the last one is read only in its new
    items, the one before them and what they change — reading the whole history at every call
    made a long run's calls cost more and more. Owned by one policy."""

    def __init__(self) -> None:
        self._begin(None, 0)

    def _begin(self, meter: Meter | None, first: int) -> None:
        self.items: tuple[Item, ...] = ()
        self.meter, self.first = meter, first  # ``first``: where the messages begin; positions count from it
        self.sizes: list[int] = []  # per item
        self.starts: list[int] = []  # per message: its first item
        self.totals: list[int] = [0]  # the tokens of the messages before each one (and of all, last)
        self.user: list[bool] = []  # per message: the user wrote it
        self.users: list[int] = []  # the user's messages
        self.thinking: list[int] = []  # items counted as in the current turn (``Layout.thinking``)
        self.last_user = (-1, -1)  # the last user message as Anthropic, then as Responses, bill thinking after it

    def read(self, conversation: Conversation, first: int, meter: Meter) -> _Messages:
        """This request's messages (``first``: where they begin among its items)."""
        items = conversation.items
        if meter is not self.meter or first != self.first or not extends(items, self.items, conversation.grew):
            self._begin(meter, first)
        known, count, messages = len(self.sizes), max(0, len(items) - first), len(self.starts)
        low = max(0, known - 2)  # the last item counted may be a parallel call now
        recount = low + 1 if low else 0
        self._count(items, low, recount, count, meter)
        changed = self._forget_thinking(items, known, recount, meter)
        self._split(items, known, count)
        self._total(min([max(0, messages - 1), *(bisect_right(self.starts, p) - 1 for p in changed)]))
        self.items = items
        return self

    def tokens(self, message: int) -> int:
        return self.totals[message + 1] - self.totals[message]

    def _count(self, items: tuple[Item, ...], low: int, recount: int, count: int, meter: Meter) -> None:
        """Count the items from ``recount`` on as ``meter.items`` counts the whole request, in a
        window from ``low`` holding every neighbour their counts depend on (a thinking item is in
        the current turn or not alike in any window holding the items after it)."""
        window = items[self.first + low:self.first + count]
        layout = Layout.of(window)
        del self.sizes[recount:]
        self.sizes += [meter.item_at(layout, p - low, window[p - low]) for p in range(recount, count)]
        self.thinking = [*(p for p in self.thinking if p < recount),
                         *(low + p for p in sorted(layout.thinking) if low + p >= recount)]

    def _forget_thinking(self, items: tuple[Item, ...], known: int, recount: int, meter: Meter) -> list[int]:
        """Count again the earlier thinking items a new user message put out of the current turn
        (Anthropic and Responses bill only those after the last user message, each by its own
        rule: ``claude.billed_thinking``, ``responses.current_reasoning``); the items changed."""
        anthropic, responses_ = self.last_user
        for p in range(known, len(self.sizes)):
            item = items[self.first + p]
            if isinstance(item, Message) and item.role == "user":
                anthropic = p
                responses_ = p if item.extra.get("type", "message") == "message" else responses_
        if (anthropic, responses_) == self.last_user:
            return []
        self.last_user = (anthropic, responses_)
        changed, still = [], []
        for p in self.thinking:
            item = items[self.first + p]
            if p >= recount or (p > anthropic and claude.billed_thinking((item,))) or (
                    p > responses_ and responses.current_reasoning((item,))):
                still.append(p)
                continue
            low = max(0, p - 1)
            layout = Layout.of(items[self.first + low:self.first + p + 2])
            self.sizes[p] = meter.item(item, parallel=p - low in layout.parallel, continues=p - low in layout.continued)
            changed.append(p)
        self.thinking = still
        return changed

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

    def _total(self, start: int) -> None:
        """The running totals again from message ``start``, whose tokens may have changed, on."""
        del self.totals[start + 1:]
        begins = self.starts[start:]
        ends = [*self.starts[start + 1:], len(self.sizes)] if begins else []
        for begin, end in zip(begins, ends, strict=True):
            self.totals.append(self.totals[-1] + sum(self.sizes[begin:end]))


def flushed_from(messages: _Messages, start: int, end: int, limit: float, flush_size: int) -> int:
    """``_manage_queue`` on messages ``start`` to ``end``: the first one it keeps. The queue's tokens
    are the running totals' difference: summed again after every message put, a run under the
    limit was read whole at every call."""
    totals, kept = messages.totals, start
    over = totals[end] - totals[kept] - limit
    while over > 0 and end - kept > 1:
        flushed = 0
        while flushed < flush_size and end - kept > 1:
            flushed += messages.tokens(kept)
            kept += 1
        while not messages.user[kept] and end - kept > 1:
            kept += 1
        over = totals[end] - totals[kept] - limit
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
        return PolicyResult(result, "flushing", tokens_lost=messages.totals[start], report={"flushed": start})
