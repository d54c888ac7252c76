"""The span grammar: the distinctive pieces of a text a model copies rather than guesses —
identifiers with an ``_`` inside (8+ characters) or camelCase (11+), dotted names, paths, numbers of 4+
digits and text lines of 20+ characters (tuned on hand-labelled cases, ``tests/labels/hidden_used.json``).

Below ``run`` so that the ledger of a run's facts (``facts.ledger``) reads an item's text as the
hidden-then-used detector (``run.hidden``) does (``searched_text``: a call's argument values, decoded)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from ..conversation import Item, ToolCall, content_text

MIN_IDENTIFIER = 8  # characters: shorter names (``result``, ``value``) are what any model writes unprompted
# camelCase names without an ``_`` need more: ``startTime``, ``projectDir``, ``randomUUID`` are what a
# model writes unprompted (wrong on the labelled runs), ``sessionsDir``, ``CorrelationStatus`` were copied
MIN_CAMEL = 11
MIN_LINE = 20  # characters of a stripped line

# runs of 8+ word characters and dots: the candidates (found by the regex engine), then judged in
# Python by ``_identifier`` / ``_dotted``
_WORD = re.compile(r"[A-Za-z_][\w.]{7,}")
# what a candidate needs to be judged at all: an ``_``, a ``.`` or, after its first character, anything
# but a lowercase ASCII letter or a digit (``_identifier`` and ``_dotted`` refuse the rest), found in C so
# most words never reach Python
_MAYBE = re.compile(r"[_.]|.[^a-z0-9]")
_ALNUM = re.compile(r"[^\W_]")  # a letter or digit, as ``str.isalnum`` has them
# a line of 20+ characters once stripped of spaces and of a leading line number (``cat -n``, Claude Code's Read)
_LINE = re.compile(rf"^[ \t]*(?:\d+(?:→|\t)[ \t]*)?(\S[^\n]{{{MIN_LINE - 2},}}\S)[ \t\r]*$", re.M)
_PATH = re.compile(r"[\w.~@+-]*(?:/[\w.@+-]+)+")  # tried only on the space-separated tokens holding a "/"
_DIGITS = re.compile(r"\d{4,}")  # a number when neither a word character nor a "." (a decimal, a version) touches it
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")
# a dotted name ending in one of these is a file name (``registry.js``), whatever its length
FILE_EXTENSIONS = frozenset(("py", "js", "ts", "tsx", "jsx", "mjs", "cjs", "json", "jsonl", "md", "rst", "txt", "toml",
                             "yaml", "yml", "cfg", "ini", "sh", "rs", "go", "java", "kt", "c", "h", "cc", "cpp", "hpp",
                             "rb", "php", "html", "css", "scss", "csv", "sql", "lock", "log", "xml"))


def _identifier(word: str) -> bool:
    """A name distinctive enough to be copied, not guessed: 8+ characters with an ``_`` inside
    (``separability_matrix``; ``__init__``-style padding aside) or 11+ with a capital inside
    (``CompoundModel``)."""
    core = word.strip("_")
    if "_" in core:
        return len(word) >= MIN_IDENTIFIER
    return len(word) >= MIN_CAMEL and core[1:] != core[1:].lower()


def _dotted(name: str) -> bool:
    """A dotted name distinctive enough to be copied: three or more parts
    (``this.snapshotter.diff``), a part that is itself a distinctive identifier
    (``conversationsAdapter.transformMessages``) or a file name (``registry.js``). Two plain parts
    (``Date.now``, ``np.zeros``, ``logger.warn``) are a library's API, or composed from a name the
    agent already had: on the labelled runs they were wrong more often than right."""
    parts = name.split(".")
    return all(parts) and (len(parts) >= 3 or any(map(_identifier, parts)) or parts[-1] in FILE_EXTENSIONS)


def _path(text: str) -> bool:
    """A path: a ``/`` and either a file extension or three or more segments, with a letter in it
    (``12/05/2024`` is a date)."""
    segments = [s for s in text.split("/") if s]
    return (len(segments) >= 2 or text.startswith("/")) and any(c.isalpha() for c in text) and (
        bool(_EXTENSION.search(segments[-1] if segments else "")) or len(segments) >= 3)


def _number(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start else " "
    return not (before.isalnum() or before in "_." or (end < len(text) and (text[end].isalnum() or text[end] == "_")))


def spans_of(text: str) -> frozenset[str]:
    """The distinctive spans of ``text`` (see the module docstring). None reaches across a line
    (no pattern matches a newline, and one stands where the text ends), so a text's spans are
    its lines' together."""
    found: set[str] = set()
    for run in filter(_MAYBE.search, _WORD.findall(text)):  # a plain lowercase word is never a span
        word = run.rstrip(".")
        if "." in word:
            if len(word) >= MIN_IDENTIFIER and _dotted(word):
                found.add(word)
            found.update(part for part in word.split(".") if _identifier(part))
        elif _identifier(word):
            found.add(word)
    if "/" in text:
        found.update(path for token in text.split() if "/" in token
                     for path in (m.group().rstrip(".") for m in _PATH.finditer(token)) if _path(path))
    found.update(m.group() for m in _DIGITS.finditer(text) if _number(text, m.start(), m.end()))
    found.update(filter(_ALNUM.search, _LINE.findall(text)))
    return frozenset(found)


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value (a call's arguments as the model wrote them)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for inner in value.values():
            yield from _strings(inner)
    elif isinstance(value, list | tuple):
        for inner in value:
            yield from _strings(inner)


def searched_text(item: Item) -> str:
    """What an item says, as spans are read from it: a call's argument values (decoded, so a
    line of ``new_string`` is a line), a message's or a result's text."""
    if isinstance(item, ToolCall):
        try:
            parsed = json.loads(item.arguments)
        except (ValueError, RecursionError):
            return item.arguments
        return "\n".join(_strings(parsed))
    return content_text(item.content)
