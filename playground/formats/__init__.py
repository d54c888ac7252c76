"""Reading and writing conversations: text → wire data → Conversation, and back.

Readers are registered, not special-cased: each input shape (an API request, or a log an agent
wrote to disk) is one ``Reader`` with ``looks_like`` (a detection score) and ``read``; detection
asks every reader. Writers exist for the API formats (and our native one) only: each of those
modules also offers ``write`` and ``where`` (an item's location in that format's own terms).
A conversation read from a log is written back in the API format it was sent in.
"""

from __future__ import annotations

import json
from dataclasses import replace
from types import ModuleType
from typing import Any

from ..errors import InputError
from ..model import Conversation, Item
from . import anthropic, chat, claude_code, codex, native, responses, swe_agent
from ._reader import Reader
from .convert import convert

FORMATS: dict[str, ModuleType] = {module.NAME: module for module in (chat, responses, anthropic, native)}
READERS: dict[str, Reader] = {reader.name: reader for reader in (
    *(Reader(m.NAME, m.TITLE, m.looks_like, m.read) for m in FORMATS.values()),
    claude_code.READER, codex.READER, swe_agent.SWE_AGENT, swe_agent.MINI_SWE_AGENT)}
TITLES = {name: reader.title for name, reader in READERS.items()}
MAX_DEPTH = 64  # deeper than any real request; keeps every later walk far from the recursion limit


def _decode(text: str | bytes) -> str:
    """The text, or an error that says what is wrong with it before any JSON is read: not UTF-8,
    or nothing in it at all (JSON's own "Expecting value" would not say so)."""
    if not isinstance(text, str):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError("not UTF-8 text", where=f"byte {exc.start}") from None
    if not text.strip():
        raise InputError("the file is empty" + ("" if not text else " (nothing but white space)"))
    return text


def _load(text: str, line: int | None = None) -> Any:
    """One JSON document; errors give line and column (``line`` is the line's number in a JSONL file)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        at = f"line {exc.lineno}, column {exc.colno}" if line is None else f"line {line}, column {exc.colno}"
        raise InputError(f"invalid JSON: {exc.msg}", where=at) from None
    except RecursionError:
        depth_line, column = _depth_position(text, MAX_DEPTH)
        at = f"line {depth_line if line is None else line}, column {column}"
        raise InputError(f"JSON nested more than {MAX_DEPTH} levels deep", where=at) from None
    try:
        _check_depth(data)
    except InputError as exc:
        raise exc if line is None else exc.within(f"line {line}") from None
    return data


def parse_json(text: str | bytes) -> Any:
    """JSON text to data, with errors that give line and column."""
    return _load(_decode(text))


def parse_text(text: str | bytes) -> Any:
    """JSON, or JSONL (one JSON value a line, as agents write their logs: a list of the values).

    A document that is valid JSON up to more data is read again line by line, so a bad line is
    named by its number. Blank lines are skipped."""
    text = _decode(text)
    try:
        return _load(text)
    except InputError as exc:
        if not exc.message.startswith("invalid JSON: Extra data"):
            raise
    return [_load(line, number) for number, line in enumerate(text.split("\n"), 1) if line.strip()]


def _check_depth(data: Any) -> None:
    """Reject data nested deeper than MAX_DEPTH, naming the path that goes too deep."""
    stack: list[tuple[Any, int, str]] = [(data, 1, "")]
    while stack:
        value, depth, path = stack.pop()
        if depth > MAX_DEPTH:
            raise InputError(f"JSON nested more than {MAX_DEPTH} levels deep", where=path or "document")
        if isinstance(value, dict):
            stack.extend((child, depth + 1, f"{path}.{key}" if path else str(key)) for key, child in value.items())
        elif isinstance(value, list):
            stack.extend((child, depth + 1, f"{path}[{i}]") for i, child in enumerate(value))


def _depth_position(text: str, limit: int) -> tuple[int, int]:
    """Line and column where brackets (outside strings) first nest deeper than ``limit``."""
    depth, in_string, escaped, line, column = 0, False, False, 1, 0
    for char in text:
        column += 1
        if char == "\n":
            line, column = line + 1, 0
        elif in_string:
            escaped = not escaped and char == "\\"
            in_string = escaped or char != '"'
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return line, column
        elif char in "]}":
            depth -= 1
    return line, column


def detect(data: Any) -> str:
    """The shape ``data`` is in: the best-scoring reader, or an error listing what we accept."""
    scores = {name: reader.looks_like(data) for name, reader in READERS.items()}
    best = max(scores, key=lambda name: scores[name])
    if scores[best] == 0:
        raise InputError(
            "unrecognised format: expected a Chat Completions message list or request "
            "(messages), a Responses request (input), an Anthropic Messages request "
            "(system/messages with content blocks), a compaction-playground document (items), "
            "or an agent log: Claude Code session (JSONL), Codex rollout (JSONL), SWE-agent .traj "
            "or mini-SWE-agent .traj.json"
        )
    return best


def read(data: Any, format: str | None = None) -> Conversation:
    """Wire data to a Conversation, with ``format``'s reader or the detected one."""
    name = format or detect(data)
    if name not in READERS:
        raise InputError(f"unknown format (choose one of {', '.join(READERS)})", value=name)
    return READERS[name].read(data)


def loads(text: str | bytes, format: str | None = None) -> Conversation:
    """JSON or JSONL text to a Conversation."""
    return read(parse_text(text), format)


def write(conversation: Conversation, format: str | None = None) -> Any:
    """A Conversation to wire data in its own format, or converted to ``format`` (what the
    conversion loses is in ``convert(conversation, format).notes``)."""
    name = format or conversation.format
    if name not in FORMATS:
        raise InputError(f"unknown format (choose one of {', '.join(FORMATS)})", value=name)
    return FORMATS[name].write(convert(conversation, name))


def rewritten(conversation: Conversation) -> Conversation:
    """``conversation`` written to its wire format and read back: proof that an edit (a summary
    spliced in, a built item) left a valid request, with fresh origins. What the wire form does
    not carry — the log it came from, its notes — is kept from the conversation as it was."""
    again = read(write(conversation), conversation.format)
    return replace(again, source=conversation.source, notes=conversation.notes)


def dumps(conversation: Conversation, format: str | None = None) -> str:
    return json.dumps(write(conversation, format), ensure_ascii=False, indent=2)


def where(conversation: Conversation, item: Item) -> str:
    """An item's location in its conversation's own format (``messages[3].content[1]``…)."""
    module = FORMATS.get(conversation.format, native)
    return module.where(item.origin) if item.origin else "new item"
