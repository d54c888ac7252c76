"""What every input shape offers the registry in ``formats``: a name, a title for people, a
detection score and a reader. API formats and agent logs register alike."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..conversation import Conversation


@dataclass(frozen=True)
class Reader:
    """One input shape. ``looks_like`` returns 0 for "not this" and higher for surer matches
    (API requests score up to 5, agent logs 6, so a log is never mistaken for a request)."""

    name: str
    title: str
    looks_like: Callable[[Any], int]
    read: Callable[[Any], Conversation]


def counted(counts: dict[str, int]) -> str:
    """``{"summary": 2, "system": 1}`` as ``summary 2, system 1`` (largest first), for notes."""
    return ", ".join(f"{name} {count}" for name, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def log_lines(data: Any) -> list[Any] | None:
    """An agent log's records: JSONL parses to a list (one object a line), a one-line log to that
    one object; anything else is not a log."""
    if isinstance(data, dict):
        return [data]
    return data if isinstance(data, list) else None
