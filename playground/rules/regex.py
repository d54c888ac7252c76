"""Regular expressions from people, run in time linear in the text: Google's RE2.

Error patterns come from rules files, workspaces and the Rules tab, and a rule's template becomes
a pattern when compaction checks whether an item is already compacted. With Python's backtracking
``re``, one pattern like ``(a+)+$`` on a 41-character result ran for minutes and, on the page,
blocked the server for every visitor. RE2 (through the ``google-re2`` binding) never backtracks:
every search takes time proportional to the text, whatever the pattern; it refuses what it cannot
do that way (backreferences like ``\\1``, look-around like ``(?<=…)``), and those refusals become
a message on the pattern's row. Tool-name globs are not compiled here: ``fnmatch`` turns each
``*`` into an atomic group, which never backtracks either (a test checks hostile globs).

Texts are searched as UTF-8 bytes with lone surrogates passed through (``surrogatepass``), so a
conversation holding one (agent logs sometimes cut an emoji in half) is searched, not refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import re2

from ..limits import MAX_PATTERN_CHARS


class RegexError(ValueError):
    """A pattern RE2 will not run; the message says why, in RE2's words."""


@dataclass(frozen=True)
class Regex:
    """A compiled pattern; ``pattern`` is the text it was made from."""

    pattern: str
    _compiled: Any = field(compare=False, repr=False)

    def search(self, text: str) -> bool:
        """Whether the pattern occurs anywhere in ``text``."""
        return self._compiled.search(as_bytes(text)) is not None

    def fullmatch(self, text: str) -> bool:
        """Whether the pattern matches the whole of ``text``."""
        return self._compiled.fullmatch(as_bytes(text)) is not None


@dataclass(frozen=True)
class RegexSet:
    """Patterns searched together in one pass over a text (RE2's set): the error patterns are
    tried on every tool result of a run, and one pass for all of them costs what one pattern did."""

    patterns: tuple[str, ...]
    _compiled: Any = field(compare=False, repr=False)

    def first(self, text: str) -> int | None:
        """The index of the first pattern (in their order) that occurs in ``text``, or None."""
        found = self._compiled.Match(as_bytes(text))
        return min(found) if found else None


def pattern_set(patterns: tuple[str, ...], *, multiline: bool = False) -> RegexSet:
    """Patterns already accepted by ``compile_pattern`` (with the same ``multiline``), as one set."""
    compiled = re2.Set.SearchSet(_options(dotall=False, latin1=False))
    for pattern in patterns:
        compiled.Add(as_bytes("(?m)" + pattern if multiline else pattern))
    compiled.Compile()
    return RegexSet(patterns, compiled)


def as_bytes(text: str) -> bytes:
    """``text`` as RE2 reads it: UTF-8, with any lone surrogate kept (as its three bytes)."""
    return text.encode("utf-8", "surrogatepass")


def _options(*, dotall: bool, latin1: bool) -> Any:
    options = re2.Options()
    options.log_errors = False  # a refused pattern is reported on its row, not printed on the server's stderr
    options.dot_nl = dotall
    if latin1:
        options.encoding = re2.Options.Encoding.LATIN1
    return options


def compile_pattern(pattern: str, *, multiline: bool = False) -> Regex:
    """A person's pattern (``re.MULTILINE`` semantics when ``multiline``), or RegexError saying why
    RE2 refuses it. Longer than MAX_PATTERN_CHARS is refused too: no real error pattern needs it,
    and compiling is the one step whose cost grows with the pattern."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise RegexError(f"longer than the limit of {MAX_PATTERN_CHARS:,} characters")
    options = _options(dotall=False, latin1=False)
    try:
        compiled = re2.compile(as_bytes(pattern), options)  # first as written, so a refusal quotes the person's text
        if multiline:
            compiled = re2.compile(as_bytes("(?m)" + pattern), options)
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise RegexError(reason) from None
    return Regex(pattern, compiled)


def literal_slots(pieces: list[tuple[str, str | None]]) -> Regex:
    """A pattern made of literal texts and slots (``None``: none, ``"digits"``: ``\\d+``, ``"any"``:
    anything, newlines included), matched byte for byte. Literals are quoted, so whatever text a
    template or an argument holds is matched as itself."""
    slots = {None: b"", "digits": rb"\d+", "any": b".*"}
    pattern = b"".join(re2.escape(as_bytes(text)) + slots[slot] for text, slot in pieces)
    return Regex(pattern.decode("latin-1"), re2.compile(pattern, _options(dotall=True, latin1=True)))
