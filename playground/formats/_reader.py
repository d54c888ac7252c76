"""What every input shape offers the registry in ``formats``: a name, a title for people, a
detection score and a reader. API formats and agent logs register alike."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..conversation import Conversation, turn_starts
from ..words import plural


@dataclass(frozen=True)
class Reader:
    """One input shape. ``looks_like`` returns 0 for "not this" and higher for surer matches
    (API requests score up to 5, agent logs 6, so a log is never mistaken for a request)."""

    name: str
    title: str
    looks_like: Callable[[Any], int]
    read: Callable[[Any], Conversation]
    # a file that is one part of this agent's folder and no run alone: what to give instead (None: not one)
    part: Callable[[Any], str | None] | None = None


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


def with_billed(conversation: Conversation, billed: Mapping[int, int], agent: str, field: str,
                unplaced: int = 0) -> Conversation:
    """``billed``, the input tokens the log records per reply by the index of the reply's first wire
    message, set at the calls of the run: each at the first item of that message where an
    assistant turn (one call, as replay counts them) starts there. A reply that is not the start of
    a turn (a second reply merged into one message) cannot be set beside one of replay's calls, so
    it is left out and counted in the note (``unplaced``: such replies the reader found itself)."""
    if not billed and not unplaced:
        return conversation
    first: dict[int, int] = {}
    for position, item in enumerate(conversation.items):
        if item.origin is not None:
            first.setdefault(item.origin.index, position)
    starts = set(turn_starts(conversation.items))
    placed = tuple(sorted((first[index], tokens) for index, tokens in billed.items()
                          if first.get(index) in starts))
    others = len(billed) - len(placed) + unplaced
    left = f"; {plural(others, 'other reply', 'other replies')} not at the start of a call" if others else ""
    note = (f"{agent} recorded the input tokens billed for {plural(len(placed), 'call')} ({field}){left}: the Run view "
            "and `replay` show them beside our count and fit a calibration to them.")
    return replace(conversation, billed=placed, notes=(*conversation.notes, note))


def billed_note(agent: str, field: str, billed: list[int]) -> list[str]:
    """What the log says the provider billed, where the log does not say for which request (a bill
    per task or per step that is not one of the run's calls): a note beside our count."""
    if not billed:
        return []
    return [f"{agent} recorded the input tokens billed for {len(billed):,} of its calls ({field}): "
            f"{billed[0]:,} on the first, {max(billed):,} at most, {billed[-1]:,} on the last."]


def read_note(what: str, read: int, noun: str, items: int, agent: str, system: bool = False) -> str:
    """The first note of a log read: how much of it became how many items, and that the agent's own
    system prompt (unless the log has it: ``system``) and tool definitions are not counted."""
    missing = "tool definitions" if system else "system prompt or tool definitions"
    return (f"Read from {what}: {plural(read, noun)} became {plural(items, 'item')}. The log holds no {missing}, so "
            f"the request and its count leave out the ones {agent} sends.")


def text_of(content: Any) -> str:
    """The text of a content value agents log: a string, or the ``text`` of its blocks joined (other
    blocks, images and files, are no text)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""
