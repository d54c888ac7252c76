"""Reading and writing conversations: text → wire data → Conversation, and back.

Readers are registered, not special-cased: each input shape (an API request, or a log an agent
wrote to disk) is one ``Reader`` with ``looks_like`` (a detection score) and ``read``; detection
asks every reader. Writers exist for the API formats (and our native one) only: each of those
modules also offers ``write`` and ``where`` (an item's location in that format's own terms).
A conversation read from a log is written back in the API format it was sent in.

Input that is more than one JSON text (a task folder, a zip of one, an SQLite database, a markdown
history) is read by ``containers`` into a ``Folder``, ``Database`` or ``Text`` that readers claim like any
other data; ``read_path`` (a file or a folder) and ``loads`` (bytes: a file's, a zip's, a
database's) are the two ways in, for the command line, the page and any corpus walker alike.
"""

from __future__ import annotations

import itertools
import json
import os
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

from .. import limits
from ..conversation import Conversation, Item, ToolCall, pairing_notes, repeated_id_notes
from ..errors import InputError
from ..limits import MAX_DIGITS
from ..words import plural
from . import (
    agent_run,
    aider,
    anthropic,
    chat,
    claude_code,
    cline,
    codex,
    containers,
    dated,
    gemini,
    gemini_cli,
    goose,
    native,
    opencode,
    openhands,
    responses,
    swe_agent,
)
from ._reader import Database, Folder, Reader, Text
from .containers import RUN_SUFFIXES as RUN_SUFFIXES  # public: the suffixes a run is read from (the uploaders)
from .convert import convert

FORMATS: dict[str, ModuleType] = {module.NAME: module for module in (chat, responses, anthropic, native)}
READERS: dict[str, Reader] = {reader.name: reader for reader in (
    *(Reader(m.NAME, m.TITLE, m.looks_like, m.read) for m in FORMATS.values()),
    claude_code.READER, codex.READER, swe_agent.SWE_AGENT, swe_agent.MINI_SWE_AGENT, gemini_cli.READER, goose.READER,
    aider.READER, openhands.READER, cline.READER, opencode.READER, gemini.READER, agent_run.READER)}
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
    except ValueError:  # Python reads no integer longer than MAX_DIGITS digits
        number_line, column = _long_number_position(text)
        at = f"line {number_line if line is None else line}, column {column}"
        raise InputError(f"a number with more than {MAX_DIGITS:,} digits", where=at) from None
    try:
        _check_depth(data)
    except InputError as exc:
        raise exc if line is None else exc.within(f"line {line}") from None
    return data


def parse_json(text: str | bytes, *, refuse_surrogates: bool = False) -> Any:
    """JSON text to data, with errors that give line and column (``refuse_surrogates``: see
    ``refuse_lone_surrogates``)."""
    text = _decode(text)
    data = _load(text)
    if refuse_surrogates and _SURROGATE_ESCAPE.search(text):
        refuse_lone_surrogates(data)
    return data


class Lines(list):
    """The values of a JSONL file, and ``cut``: the number of its last line and why it is not JSON,
    when that line was left out (an agent stopped mid-write: a log ends in half a line)."""

    cut: tuple[int, str] | None = None


def _cut_short(line: str) -> str | None:
    """Why ``line`` is JSON that stops before its end (the decoder ran out of text), or None when
    it is broken some other way."""
    try:
        json.loads(line)
    except json.JSONDecodeError as exc:
        if exc.msg.startswith("Unterminated string") or exc.pos >= len(line.rstrip()):
            return f"invalid JSON: {exc.msg}"
    except ValueError:
        pass
    return None


def _lines(text: str) -> Lines:
    """JSONL, a value a line. Only the last line may be left out, and only when it is JSON cut short:
    that is a log whose writer stopped mid-line. Any other bad line is an error that names it."""
    numbered = [(number, line) for number, line in enumerate(text.split("\n"), 1) if line.strip()]
    lines = Lines(_load(line, number) for number, line in numbered[:-1])
    number, last = numbered[-1]
    try:
        lines.append(_load(last, number))
    except InputError:
        reason = _cut_short(last)
        if reason is None:
            raise
        lines.cut = (number, reason)
    return lines


def _cut_note(number: int, message: str) -> str:
    return f"line {number}, the last, stops mid-value ({message}): left out, as a log whose writer stopped mid-line"


def parse_text(text: str | bytes, *, refuse_surrogates: bool = False) -> Any:
    """JSON, or JSONL (one JSON value a line, as agents write their logs: a list of the values).

    A document that is valid JSON up to more data is read again line by line, so a bad line is
    named by its number. Blank lines are skipped."""
    text = _decode(text)
    try:
        data = _load(text)
    except InputError as exc:
        if not exc.message.startswith("invalid JSON: Extra data"):
            raise
        data = _lines(text)
    if refuse_surrogates and _SURROGATE_ESCAPE.search(text):
        refuse_lone_surrogates(data)
    return data


# JSON can spell a lone UTF-16 surrogate (\ud83d without its \ude00: an emoji cut in two, as agent
# logs sometimes hold); it is not a character, so nothing encodes it as UTF-8. Only an escape can
# make one, so text without one (nearly all) is never walked.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(data: Any) -> tuple[str, int] | None:
    """The path of the first string (a key or a value) in ``data`` holding a lone surrogate, and
    the character where it is; None when there is none. One iterator per level, like the depth check."""
    levels: list[Iterator[tuple[Any, Any]]] = [iter([(None, data)])]
    keys: list[Any] = []
    while levels:
        for key, value in levels[-1]:
            for text in (key, value):
                found = _SURROGATE.search(text) if isinstance(text, str) else None
                if found:
                    return _path([*keys[1:], key]), found.start()
            if isinstance(value, dict | list):
                keys.append(key)
                levels.append(iter(value.items()) if isinstance(value, dict) else enumerate(value))
                break
        else:
            levels.pop()
            if keys:
                keys.pop()
    return None


def refuse_lone_surrogates(data: Any, where: str | None = None) -> None:
    """InputError naming the first lone surrogate in ``data`` (``where``: the place ``data`` is).
    The page refuses them, as nothing it draws can carry one; the command line keeps them,
    written as JSON escapes (``keep_surrogates``)."""
    found = lone_surrogate(data)
    if found is None:
        return
    path, at = found
    place = path if where is None else where if path == "document" else f"{where}.{path}"
    raise InputError(f"character {at + 1} is half of a UTF-16 pair (a lone surrogate, e.g. an emoji cut in two), which "
                     "is not text: the page cannot show it. Remove it, or use the command line, which keeps it",
                     where=place)


def refuse_lone_surrogates_in_arguments(conversation: Conversation) -> None:
    """The same check inside tool calls' arguments, which are JSON text of their own: an escape in
    there becomes a lone surrogate only when a template reads the value."""
    for item in conversation.items:
        arguments = item.parsed_arguments() if isinstance(item, ToolCall) else None
        if arguments is not None and _SURROGATE_ESCAPE.search(item.arguments):
            refuse_lone_surrogates(dict(arguments), f"{where(conversation, item)}, arguments")


def keep_surrogates(text: str) -> str:
    """JSON (or Python) text with each lone surrogate written as its escape (``\\ud800``), which
    reads back as the same string: what the command line writes, so nothing it read is lost."""
    return _SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def _check_depth(data: Any) -> None:
    """Reject data nested deeper than MAX_DEPTH, naming the path that goes too deep. The walk holds
    one iterator per level, never a list of every value (a 200 MB list of numbers once took 16 GB
    here, as a stack of (value, path) pairs), and visits only containers, found at C speed."""
    levels: list[Iterator[tuple[Any, Any]]] = [_containers([data])]  # the document, if it is a container
    keys: list[Any] = []  # the key of each open container, from the document down
    while levels:
        for key, value in levels[-1]:
            if len(levels) >= MAX_DEPTH and value:  # its members would be nested deeper than MAX_DEPTH
                first = next(iter(value)) if isinstance(value, dict) else 0
                raise InputError(f"JSON nested more than {MAX_DEPTH} levels deep",
                                 where=_path([*keys[1:], key, first]))
            keys.append(key)
            levels.append(_containers(value))
            break
        else:
            levels.pop()
            if keys:
                keys.pop()


def _containers(value: dict | list) -> Iterator[tuple[Any, Any]]:
    """The members of ``value`` that are objects or lists, with their keys. A list is searched with
    ``map`` and ``compress``, so a list of a hundred million numbers is passed over in C."""
    if isinstance(value, dict):
        return ((key, child) for key, child in value.items() if isinstance(child, dict | list))
    found = itertools.compress(itertools.count(), map(isinstance, value, itertools.repeat(dict | list)))
    return ((index, value[index]) for index in found)


def _path(keys: list[Any]) -> str:
    """``messages[3].content`` from the keys and indexes leading there."""
    path = "".join(f"[{key}]" if isinstance(key, int) else f".{key}" for key in keys).lstrip(".")
    return path or "document"


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


def _long_number_position(text: str) -> tuple[int, int]:
    """Line and column of the first run of more than MAX_DIGITS digits."""
    found = re.search(rf"\d{{{MAX_DIGITS + 1}}}", text)
    start = found.start() if found else 0
    return text.count("\n", 0, start) + 1, start - text.rfind("\n", 0, start)


def detect(data: Any) -> str:
    """The shape ``data`` is in: the best-scoring reader, or an error listing what we accept."""
    scores = {name: reader.looks_like(data) for name, reader in READERS.items()}
    best = max(scores, key=lambda name: scores[name])
    if scores[best] == 0:
        for reader in READERS.values():
            said = reader.part(data) if reader.part is not None else None
            if said:
                raise InputError(said)
        if isinstance(data, Folder):
            _refuse_many_logs(data)
        what = "folder" if isinstance(data, Folder) else "database" if isinstance(data, Database) else "format"
        raise InputError(
            f"unrecognised {what}: expected a Chat Completions message list or request "
            "(messages), a Responses request (input), an Anthropic Messages request "
            "(system/messages with content blocks), a compaction-playground document (items), "
            f"or an agent log: {'; '.join(r.title for name, r in READERS.items() if name not in FORMATS)}"
        )
    return best


def _refuse_many_logs(folder: Folder) -> None:
    """A folder no reader claims as one task, whose files are logs of their own (a Claude Code
    project folder, a directory of rollouts): say so and name them, where the list of every format
    said nothing of use. One run is one file; many are a corpus."""
    logs = {}
    for name, data in folder.files.items():
        scores = {reader.title: reader.looks_like(data) for reader in READERS.values()}
        title = max(scores, key=lambda title: scores[title])
        if scores[title]:
            logs[name] = title
    if not logs:
        return
    kinds = "; ".join(f"{title}: {number}" for title, number in Counter(logs.values()).most_common())
    names = ", ".join(list(logs)[:3]) + (f" and {len(logs) - 3} more" if len(logs) > 3 else "")
    raise InputError(f"this folder is not one run: it holds {plural(len(logs), 'log')} read one file at a time "
                     f"({kinds}), such as {names}. Give one file, or read them all as a corpus (`evaluate`, "
                     "`tune`, or the page's Corpus tab)")


def _one_file(data: Any) -> Any:
    """A folder no reader claims that holds a single readable file is that file (a zip of one log)."""
    if isinstance(data, Folder) and len(data.files) == 1 and not any(
            reader.looks_like(data) for reader in READERS.values()):
        return next(iter(data.files.values()))
    return data


def read(data: Any, format: str | None = None) -> Conversation:
    """Wire data to a Conversation, with ``format``'s reader or the detected one."""
    data = _one_file(data)
    name = format or detect(data)
    if name not in READERS:
        raise InputError(f"unknown format (choose one of {', '.join(READERS)})", value=name)
    conversation = READERS[name].read(data)
    if conversation.source and conversation.started is None:  # an agent's log: the date its calls were priced on
        conversation = replace(conversation, started=dated.started(data))
    if isinstance(data, Lines) and data.cut:
        conversation = replace(conversation, notes=(*conversation.notes, _cut_note(*data.cut)))
    return conversation


def parse_input(data: str | bytes, *, limit_mb: int = limits.DEFAULT_MAX_INPUT_MB,
                refuse_surrogates: bool = False) -> Any:
    """A file's bytes as data for the readers: a zip as the ``Folder`` it holds, an SQLite file as its
    ``Database``, JSON or JSONL parsed, and text that is not JSON as ``Text`` when a reader claims
    it (else the JSON error stands: most text that is not JSON is JSON gone wrong)."""
    if isinstance(data, bytes) and data.startswith(containers.ZIP_MAGIC):
        return _folder(containers.read_zip(data, limit_mb), refuse_surrogates)
    if isinstance(data, bytes) and data.startswith(containers.SQLITE_MAGIC):
        return containers.read_database(data)
    try:
        return parse_text(data, refuse_surrogates=refuse_surrogates)
    except InputError as exc:
        if not exc.message.startswith("invalid JSON"):
            raise
        text = Text(_decode(data))
        if any(reader.looks_like(text) for reader in READERS.values()):
            return text
        start = text.text.lstrip()
        if start[:1] in ("{", "[", '"'):  # JSON gone wrong: where it went wrong is the message
            raise
        first = start.splitlines()[0][:40]
        raise InputError(f"unrecognised format: not JSON or JSONL (it begins with the text {first!r}), and not "
                         "the one text log read, an Aider chat history ('# aider chat started at …')") from None


def _folder(files: dict[str, bytes], refuse_surrogates: bool) -> Folder:
    """The files of a folder or zip parsed (an error in a JSON file names the file); files no reader
    reads are only named."""
    parsed: dict[str, Any] = {}
    others = []
    for name, data in files.items():
        if not name.endswith((".json", ".jsonl", ".db", ".md")) or not data.strip():
            others.append(name)
            continue
        try:
            parsed[name] = parse_input(data, refuse_surrogates=refuse_surrogates)
        except InputError as exc:
            if name.endswith((".json", ".jsonl")):
                raise exc.within(name) from None
            others.append(name)  # a note or a database no reader knows: named, not read
    return Folder(parsed, tuple(others))


def loads(text: str | bytes, format: str | None = None, *, refuse_surrogates: bool = False,
          limit_mb: int = limits.DEFAULT_MAX_INPUT_MB) -> Conversation:
    """JSON or JSONL text (or a zip, or an SQLite file) to a Conversation (``refuse_surrogates``, for
    the page: a lone surrogate anywhere, tool arguments included, is an InputError naming its place)."""
    conversation = read(parse_input(text, limit_mb=limit_mb, refuse_surrogates=refuse_surrogates), format)
    if refuse_surrogates:
        refuse_lone_surrogates_in_arguments(conversation)
    return conversation


def read_files(files: dict[str, bytes], format: str | None = None, *,
               limit_mb: int = limits.DEFAULT_MAX_INPUT_MB) -> Conversation:
    """The conversation in a task folder's files (by their ``/``-separated path inside it), as a
    folder on disk, a zip of one and a folder inside a corpus's archive are all read."""
    limits.check_size(sum(len(data) for data in files.values()), limit_mb)
    return read(_folder(files, False), format)


def read_path(path: str | Path, format: str | None = None, *,
              limit_mb: int = limits.DEFAULT_MAX_INPUT_MB) -> Conversation:
    """The conversation at ``path``: a log file, a zip of a task folder, an SQLite database, or a task
    folder itself, never reading more than ``limit_mb`` (a larger file is refused from its size)."""
    path = Path(path)
    if path.is_dir():
        return read_files(containers.read_folder(path, limit_mb), format, limit_mb=limit_mb)
    try:
        with open(path, "rb") as stream:
            size = os.fstat(stream.fileno()).st_size if path.is_file() else None
            data = limits.read_limited(stream, limit_mb, size)
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror or exc})") from None
    return loads(data, format, limit_mb=limit_mb)


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
    not carry — the log it came from, its notes, its date — is kept from the conversation as it was."""
    again = read(write(conversation), conversation.format)
    return replace(again, source=conversation.source, notes=conversation.notes, started=conversation.started)


def checked(conversation: Conversation) -> Conversation:
    """``conversation`` — a policy's request: the run's items, some edited, and items it made —
    proved a valid request as ``rewritten`` proves it (written to its wire format and read back),
    with every item that has an origin left the very object it was: an edited item keeps the origin
    of the one it replaced, and what follows a run from call to call (counts, cache keys, the items
    a reference or a summary replaced, the facts a request shows) knows its items by identity and by
    that origin. A new item (a summary, an acknowledgement) has none and is the one read back."""
    again = rewritten(conversation)
    if len(again.items) != len(conversation.items):  # (a format that read it back otherwise: its reading stands)
        return again
    items = tuple(item if item.origin is not None else read for item, read in zip(conversation.items, again.items,
                                                                                   strict=True))
    return replace(again, items=items)


def checked_head(conversation: Conversation, head: tuple[Item, ...], rest: tuple[Item, ...]) -> Conversation:
    """``checked`` of ``head`` then ``rest``, where ``rest`` is a request's own items as they stand
    (each with its origin, no call parted from its result) after what a policy made in ``head``:
    ``head`` is proved alone and ``rest`` follows it as it was. Every writer keeps an item made here
    (no origin) out of the wire message of an item that has one, so each of ``head``'s items is read
    back as it is where it stands in the whole request; proving the whole wrote out and read back
    ``rest`` — most of the request, at every call of a per-call replay. A ``rest`` that begins with a
    made item, or a head read back as more or fewer items, is proved whole."""
    if not rest or rest[0].origin is not None:
        proved = checked(conversation.with_items(head))
        if len(proved.items) == len(head):
            return proved.with_items((*proved.items, *rest))
    return checked(conversation.with_items((*head, *rest)))


def dumps(conversation: Conversation, format: str | None = None) -> str:
    return json.dumps(write(conversation, format), ensure_ascii=False, indent=2)


def notes(conversation: Conversation) -> tuple[str, ...]:
    """Everything worth saying about how the conversation was read: its reader's notes, then what
    pairing its calls with results had to decide (``pairing_notes``), worked out from the items
    as they are now, so an edit in the builder never leaves a stale note."""
    module = FORMATS.get(conversation.format, native)
    refused = repeated_id_notes(conversation.items, module.where) if conversation.format == "anthropic" else ()
    return (*conversation.notes, *pairing_notes(conversation.items, module.where), *refused)


def where(conversation: Conversation, item: Item) -> str:
    """An item's location in its conversation's own format (``messages[3].content[1]``…)."""
    module = FORMATS.get(conversation.format, native)
    return module.where(item.origin) if item.origin else "new item"
