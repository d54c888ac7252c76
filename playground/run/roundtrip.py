"""What following references back would cost: each hidden-then-used call charged a recall round trip.

Replay's *saved* figures assume the agent did without what the policy hid. Where the agent's reply
used a piece of an earlier item its request had hidden (``hidden``), an agent with the recall tool
(``playground.recall``) would first have asked for those originals back: the model's reply is a
``recall`` call per item (output tokens), the agent sends the same prompt again with those calls and
their results (the originals, whole) — one more request, mostly read from the prompt cache the call
just wrote — and only then comes the reply the log holds. ``round_trips`` prices exactly that, with
the run's own cache model and prices, so *saved* and *re-fetched* stand in the same figures. It is
an upper bound on the calls (an agent may guess right without recalling) and a lower bound on the
tokens: the recalled text then rides along in the later requests too, until the policy replaces it
again, which is not charged here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..conversation import Conversation, Item, ToolCall, ToolResult, content_text
from ..meter.tokens import Meter
from ..recall import TOOL_NAME, recall_key
from .prices import dollars, rounded
from .promptcache import PromptCache, input_cost
from .replay import Replay

_HEAD, _TAIL = hash("recall: the call's prompt"), hash("recall: the round trip")  # the extra request's two blocks


@dataclass(frozen=True)
class RoundTrip:
    """The recall round trip charged to replayed call ``call`` (its number in ``Replay.calls``): one
    ``recall`` call per hidden item it used (``items``, their positions in the conversation).
    ``call_tokens``: those calls, as the model's output; ``result_tokens``: the originals they bring;
    ``prompt_tokens``: the extra request (the call's prompt, the calls and the results), of which
    ``cached_tokens`` are read from the cache and ``written_tokens`` written to it; ``cost``: the
    calls' output and the extra request's input, in dollars."""

    call: int
    index: int
    items: tuple[int, ...]
    call_tokens: int
    result_tokens: int
    prompt_tokens: int
    cached_tokens: int
    written_tokens: int
    cost: float


def original_text(item: Item) -> str:
    """The text a recall of ``item`` brings back: a result's body, a call's arguments, a message's text."""
    if isinstance(item, ToolCall):
        return item.arguments
    return content_text(item.content)


def round_trips(run: Replay, conversation: Conversation, meter: Meter) -> tuple[RoundTrip, ...]:
    """The recall round trip of every call of ``run`` (a replay of ``conversation``, counted with
    ``meter``) whose reply used something its request had hidden."""
    trips = []
    for number, call in enumerate(run.calls):
        items = tuple(sorted({use.item for use in call.hidden_used}))
        if not items:
            continue
        texts = [original_text(conversation.items[item]) for item in items]
        asked = tuple(ToolCall(call_id=f"recall_{n}", name=TOOL_NAME, arguments=json.dumps({"key": recall_key(text)}))
                      for n, text in enumerate(texts))
        answered = tuple(ToolResult(call_id=f"recall_{n}", content=text, name=TOOL_NAME)
                         for n, text in enumerate(texts))
        counts = meter.items(asked + answered)
        call_tokens, result_tokens = sum(counts[:len(asked)]), sum(counts[len(asked):])
        before = call.tokens_with
        prompt = before + call_tokens + result_tokens
        cache = PromptCache(run.cache, run.price.min_cacheable)
        cache.use((_HEAD,), (before,))  # the call's own prompt, which it has just written
        use = cache.use((_HEAD, _TAIL), (before, prompt))
        cost = input_cost(prompt, use, run.price) + dollars(call_tokens, run.price.at(before).output)
        trips.append(RoundTrip(number, call.index, items, call_tokens, result_tokens, prompt, use.read, use.written,
                               cost))
    return tuple(trips)


def recall_to_json(run: Replay, trips: tuple[RoundTrip, ...]) -> dict[str, Any]:
    """``replay --recall --json``'s fields: each round trip, and the totals with them charged."""
    totals = run.totals
    cost = sum(trip.cost for trip in trips)
    prompt = sum(trip.prompt_tokens for trip in trips)
    return {
        "recall": [{"call": trip.call, "index": trip.index, "items": list(trip.items), "call_tokens": trip.call_tokens,
                    "result_tokens": trip.result_tokens, "prompt_tokens": trip.prompt_tokens,
                    "cached_tokens": trip.cached_tokens, "written_tokens": trip.written_tokens,
                    "cost": rounded(trip.cost)} for trip in trips],
        "recall_totals": {
            "round_trips": len(trips), "recalled_items": sum(len(trip.items) for trip in trips),
            "call_tokens": sum(trip.call_tokens for trip in trips),
            "result_tokens": sum(trip.result_tokens for trip in trips), "prompt_tokens": prompt,
            "cached_tokens": sum(trip.cached_tokens for trip in trips), "cost": rounded(cost),
            "tokens_with_recall": totals.tokens_with + prompt, "cost_with_recall": rounded(totals.cost_with + cost)}}
