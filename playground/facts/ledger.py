"""The ledger: the facts a run depends on, read from its log, typed, each with where it came from.

What people report losing after a summary is rarely what the agent quoted last: the requirement the
user stated once, the files touched, the command that failed, the approach already settled. So these
are read out of the conversation model (every format's readers produce it), once per run:

* ``requirement`` — a sentence of a person's message that binds the agent (``said.requirements``);
* ``path_written`` / ``path_read`` — the files the tools wrote and read (``worked.paths``);
* ``command`` — each shell command run, with how its last run ended (``worked.status``);
* ``error`` — each failed result's error line, ``open`` until the same call succeeds later.

Two more the issue names were tried and left out, each well under 0.9 precision on a first reading of
their extraction on the fixtures (``docs/ledger.md``): names the agent introduced (a library's API it had
never been shown, a tool's enum value) and decisions it stated (*instead of* describes a bug as often as a choice).

A fact is its text, deduplicated per type; it keeps the first item that states it with the span there
(characters of ``spans.searched_text`` of that item) and every item that states it. ``Reader`` reads
items one at a time, so a summarizer that extends its span reads only the new items."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..conversation import Conversation, Item, Message, ToolCall, ToolResult
from ..rules.refetch import Carried, fetched_by
from . import said, worked
from .spans import searched_text

REQUIREMENT, PATH_WRITTEN, PATH_READ, COMMAND, ERROR = "requirement", "path_written", "path_read", "command", "error"
TYPES = (REQUIREMENT, PATH_WRITTEN, PATH_READ, COMMAND, ERROR)
OPEN, RESOLVED = "open", "resolved"
PROBE = 80  # characters of a fact a text must show to name it (a summary cuts long lines)


@dataclass(frozen=True)
class Fact:
    """One fact of the run: its ``type`` (one of ``TYPES``) and ``text``, the first item that states it
    (``item``, a position in the conversation's items) and the characters there (``span``), and every
    item that states it (``items``). ``status``: for a command how its last run ended (``exit 1``,
    ``ok``…), for an error ``open`` or ``resolved``; ``failed``: the command's last run failed."""

    type: str
    text: str
    item: int
    span: tuple[int, int]
    items: tuple[int, ...] = ()
    status: str | None = None
    failed: bool = False


@dataclass
class _Entry:
    fact: Fact
    items: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Ledger:
    """The run's facts in the order they were first stated."""

    facts: tuple[Fact, ...]

    @classmethod
    def of(cls, conversation: Conversation) -> Ledger:
        reader = Reader()
        for position, item in enumerate(conversation.items):
            reader.add(position, item)
        return reader.ledger()

    def of_type(self, kind: str) -> tuple[Fact, ...]:
        return tuple(fact for fact in self.facts if fact.type == kind)

    def counts(self) -> dict[str, int]:
        return {kind: sum(1 for fact in self.facts if fact.type == kind) for kind in TYPES}


class Reader:
    """Reads a run's items in order into its facts; owned by whoever reads (a ledger, a summarizer)."""

    def __init__(self, changes: bool = False) -> None:
        self._entries: dict[tuple[str, str], _Entry] = {}
        self._calls: dict[str, tuple[int, ToolCall]] = {}
        self._carried: dict[str, Carried] = {}  # each tool's calls' argument names: does it read files?
        self._errors: dict[str, list[str]] = {}  # a call's key -> its errors since it last succeeded
        # with ``changes``: what went wrong or right, as it happened, for a summary to follow (``changed``)
        self._changes: list[tuple[str, str, str | None]] | None = [] if changes else None

    def add(self, position: int, item: Item) -> None:
        """Read one item (``position``: its place in the conversation)."""
        text = searched_text(item)
        if isinstance(item, Message) and item.role == "user" and said.from_human(text):
            for start, end in said.requirements(text):
                self._state(REQUIREMENT, text[start:end], position, (start, end))
        elif isinstance(item, ToolCall):
            self._call(position, item, text)
        elif isinstance(item, ToolResult):
            self._result(position, item, text)

    def _state(self, kind: str, text: str, position: int, span: tuple[int, int], **status: Any) -> Fact:
        entry = self._entries.get((kind, text))
        if entry is None:
            entry = self._entries[(kind, text)] = _Entry(Fact(kind, text, position, span))
            if kind not in (COMMAND, ERROR):
                self._change(kind, text, text)
        if not entry.items or entry.items[-1] != position:
            entry.items.append(position)
        if status:
            entry.fact = Fact(kind, text, entry.fact.item, entry.fact.span, status=status.get("status"),
                              failed=status.get("failed", False))
        return entry.fact

    def _call(self, position: int, item: ToolCall, text: str) -> None:
        arguments: Mapping[str, Any] = item.parsed_arguments() or {}
        self._calls[item.call_id] = (position, item)
        carried = self._carried.setdefault(item.name, Carried())
        carried.add(arguments)
        reads = (fetched_by(carried) or ("", ""))[0] == "read"
        for path, written in worked.paths(item.name, arguments, reads):
            start = max(0, text.find(path))
            self._state(PATH_WRITTEN if written else PATH_READ, path, position, (start, start + len(path)))
        command = worked.command_of(arguments)
        if command:
            line = worked.command_line(command)
            start = max(0, text.find(line))
            self._state(COMMAND, line, position, (start, start + len(line)))

    def _result(self, position: int, item: ToolResult, text: str) -> None:
        found = self._calls.get(item.call_id)
        if found is None:
            return
        call_position, call = found
        arguments = call.parsed_arguments() or {}
        said_status, failed = worked.status(item)
        command = worked.command_of(arguments)
        key = call_key(call.name, arguments)
        if command:
            line = worked.command_line(command)
            entry = self._entries[(COMMAND, line)]
            self._state(COMMAND, line, call_position, entry.fact.span, status=said_status, failed=failed)
            self._change(COMMAND, line.split("\n", 1)[0], said_status if failed else None)
        if not failed:
            self._change(ERROR, key, None)
            for error in self._errors.pop(key, ()):
                old = self._entries[(ERROR, error)]
                self._state(ERROR, error, old.fact.item, old.fact.span, status=RESOLVED)
            return
        where = worked.error_line(text)
        if where is not None:
            line = text[where[0]:where[1]][:worked.MAX_COMMAND]
            self._state(ERROR, line, position, (where[0], where[0] + len(line)), status=OPEN)
            self._errors.setdefault(key, []).append(line)
            self._change(ERROR, key, line)

    def _change(self, kind: str, key: str, wrong: str | None) -> None:
        if self._changes is not None:
            self._changes.append((kind, key, wrong))

    def changed(self) -> list[tuple[str, str, str | None]]:
        """What happened since last asked (with ``changes``), in order: ``(kind, text, text)`` when a fact
        of another kind is first stated; ``(COMMAND, its first line, how it ended)`` when a command failed,
        ``(ERROR, a call's key, its error)`` when a call failed, and ``None`` in place of the last when it
        succeeded. A summary follows these rather than reading the whole ledger again at every call."""
        found, self._changes = self._changes or [], [] if self._changes is not None else None
        return found

    def ledger(self) -> Ledger:
        """The facts read so far, in the order they were first stated."""
        facts = [Fact(e.fact.type, e.fact.text, e.fact.item, e.fact.span, tuple(e.items), e.fact.status, e.fact.failed)
                 for e in self._entries.values()]
        return Ledger(tuple(sorted(facts, key=lambda fact: (fact.item, fact.span))))


def probes(fact: Fact) -> tuple[str, ...]:
    """What a text must hold to name ``fact``: its start (first line, ``PROBE`` characters), as
    written or as JSON writes it inside a string (a summary's call line quotes arguments so)."""
    head = fact.text.split("\n", 1)[0][:PROBE].strip()
    escaped = json.dumps(head, ensure_ascii=False)[1:-1]
    return (head,) if escaped == head else (head, escaped)


def call_key(tool: str, arguments: Mapping[str, Any]) -> str:
    """What makes two calls the same call, as a summary line can name it: the tool and its command's
    first line, or its arguments."""
    command = worked.command_of(arguments)
    said = command.split("\n", 1)[0] if command else json.dumps(dict(sorted(arguments.items())), ensure_ascii=False)
    return f"{tool}({said[:worked.MAX_COMMAND]})"
