"""What every input shape offers the registry in ``formats``: a name, a title for people, a
detection score and a reader. API formats and agent logs register alike."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..conversation import Conversation
from ..words import count


@dataclass(frozen=True)
class Reader:
    """One input shape. ``looks_like`` returns 0 for "not this" and higher for surer matches
    (API requests score up to 5, agent logs 6, so a log is never mistaken for a request)."""

    name: str
    title: str
    looks_like: Callable[[Any], int]
    read: Callable[[Any], Conversation]


@dataclass(frozen=True)
class Folder:
    """A task folder an agent wrote (or a zip of one): each JSON / JSONL file parsed (an SQLite file
    as its ``Database``, a text file as its ``Text``), by its ``/``-separated path inside the folder;
    ``others`` names the files no reader reads."""

    files: Mapping[str, Any]
    others: tuple[str, ...] = ()

    def under(self, prefix: str) -> dict[str, Any]:
        """The parsed files whose path starts with ``prefix``, in path order."""
        return {name: self.files[name] for name in sorted(self.files) if name.startswith(prefix)}


@dataclass(frozen=True)
class Database:
    """An SQLite database an agent keeps its sessions in: each table's rows, column → value."""

    tables: Mapping[str, tuple[dict[str, Any], ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Text:
    """A log that is not JSON at all (Aider's markdown history): its text, for readers to claim."""

    text: str


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


def read_note(what: str, read: int, noun: str, items: int, agent: str, system: bool = False) -> str:
    """The first note of a log read: how much of it became how many items, and that the agent's own
    system prompt (unless the log has it: ``system``) and tool definitions are not counted."""
    missing = "tool definitions" if system else "system prompt or tool definitions"
    return (f"Read from {what}: {count(read, noun)} became {count(items, 'item')}. The log holds no {missing}, so "
            f"the request and its count leave out the ones {agent} sends.")


def text_of(content: Any) -> str:
    """The text of a content value agents log: a string, or the ``text`` of its blocks joined (other
    blocks, images and files, are no text)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""
