"""Strategies side by side: the same run replayed under each policy, one row each."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .model import Conversation
from .policies import Policy
from .prices import Price
from .replay import Replay, replay
from .tokens import Meter


@dataclass(frozen=True)
class Row:
    strategy: str
    params: dict[str, Any]
    tokens_final: int  # the last call's prompt
    tokens_billed: int  # prompt tokens over the whole run
    cached_tokens: int  # of those, read from the prompt cache
    cost: float  # whole run, prompt and replies
    tokens_lost: int
    tokens_retrievable: int
    fired: int  # calls where the policy changed the request


def compare(conversation: Conversation, policies: Iterable[Policy], meter: Meter, price: Price, *,
            mode: str = "stored", cache: str | None = None) -> tuple[Row, ...]:
    return tuple(row_of(replay(conversation, policy, meter, price, mode=mode, cache=cache)) for policy in policies)


def row_of(run: Replay) -> Row:
    """One replay as a row of the comparison (``evaluate`` makes its rows with it too)."""
    totals = run.totals
    return Row(run.strategy, run.params, run.calls[-1].tokens_with if run.calls else 0, totals.tokens_with,
               totals.cached_tokens_with, totals.cost_with, run.tokens_lost, run.tokens_retrievable,
               sum(1 for call in run.calls if call.fired))


def rows_to_json(rows: Iterable[Row]) -> list[dict[str, Any]]:
    return [{"strategy": row.strategy, "params": row.params, "tokens_final": row.tokens_final,
             "tokens_billed": row.tokens_billed, "cached_tokens": row.cached_tokens, "cost": round(row.cost, 8),
             "tokens_lost": row.tokens_lost, "tokens_retrievable": row.tokens_retrievable, "fired": row.fired}
            for row in rows]
