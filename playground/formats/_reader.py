"""What every input shape offers the registry in ``formats``: a name, a title for people, a
detection score and a reader. API formats and agent logs register alike."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..model import Conversation


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


def as_log(conversation: Conversation, source: str, notes: list[str]) -> Conversation:
    """A conversation read from an agent's log: ``source`` names the agent, ``notes`` say how."""
    return replace(conversation, source=source, notes=(*conversation.notes, *notes))


def billed_note(agent: str, field: str, billed: list[int]) -> list[str]:
    """What the log says the provider billed: the conversation keeps no usage (no reader does yet,
    Claude Code's and Codex's included), so the note is where a person sees it beside our count."""
    if not billed:
        return []
    return [f"{agent} recorded the input tokens billed for {len(billed):,} of its calls ({field}): "
            f"{billed[0]:,} on the first, {max(billed):,} at most, {billed[-1]:,} on the last."]
