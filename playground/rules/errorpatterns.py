"""Recognising error results in formats that have no error flag.

Chat Completions has no ``is_error``: a tool message holding a Python traceback or a shell's
"No such file or directory" looks like any other result, and a reference ("File content from
x. Re-read if needed.") would disguise the failure. So errors are also recognised by a short list
of regular expressions, shipped as data (``data/error_patterns.json``), editable in a rules file
and in the page. Each pattern is searched in the head of the result (the first ``HEAD`` characters,
``re.MULTILINE``), where tools put their error; precise patterns keep a file that merely mentions
"error" from counting as one. Patterns run on RE2 (``regex.py``), in time linear in the head
whatever the pattern, so one person's ``(a+)+$`` cannot stall the page for everyone; RE2 refuses
backreferences and look-around, and that refusal is the pattern's message. A pattern must also
compile with Python's ``re``, which the exported standard-library compactor uses.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from ..conversation import ToolResult, content_text
from ..errors import InputError, located_objects
from .regex import RegexError, RegexSet, compile_pattern, pattern_set

DATA_FILE = Path(__file__).resolve().parents[1] / "data" / "error_patterns.json"
HEAD = 2_000  # characters of a result searched: errors come first, and a huge result stays cheap


@dataclass(frozen=True)
class ErrorPattern:
    """One named regular expression, checked when it is loaded: RE2 (which searches it, with the
    list's others, in ``ErrorPatterns``) and Python's ``re`` (the exported compactor's) both take it."""

    name: str
    pattern: str

    @classmethod
    def of(cls, name: str, pattern: str, where: str = "error_patterns") -> ErrorPattern:
        if not isinstance(name, str) or not name.strip():
            raise InputError("missing pattern name", where=f"{where}.name", value=name)
        if not isinstance(pattern, str) or not pattern.strip():
            raise InputError("missing regular expression", where=f"{where}.pattern", value=pattern)
        try:
            compile_pattern(pattern, multiline=True)
        except RegexError as exc:
            raise InputError(f"invalid regular expression for RE2, the linear-time engine ({exc}{_hint(str(exc))})",
                             where=f"{where}.pattern", value=pattern) from None
        try:
            re.compile(pattern, re.MULTILINE)
        except re.error as exc:  # the exported compactor runs the patterns with Python's re
            raise InputError(f"invalid regular expression for Python's re ({exc})", where=f"{where}.pattern",
                             value=pattern) from None
        return cls(name.strip(), pattern)


def _hint(reason: str) -> str:
    """What to do instead, when RE2 refused something it leaves out on purpose."""
    if "perl operator" in reason or "escape sequence" in reason:
        return "; RE2 has no backreferences or look-around: match the text itself (^ is a line start here)"
    return ""


@dataclass(frozen=True)
class ErrorPatterns:
    patterns: tuple[ErrorPattern, ...] = ()

    def __reduce__(self) -> tuple[type, tuple[tuple[ErrorPattern, ...]]]:
        return ErrorPatterns, (self.patterns,)  # to a worker process: its set is compiled again there

    @cached_property
    def _together(self) -> RegexSet:
        return pattern_set(tuple(p.pattern for p in self.patterns), multiline=True)

    def match(self, text: str) -> str | None:
        """The name of the first pattern found in the head of ``text``, or None: all of them in
        one pass (every tool result of a run is searched)."""
        found = self._together.first(text[:HEAD])
        return None if found is None else self.patterns[found].name

    def to_json(self) -> list[dict[str, str]]:
        return [{"name": p.name, "pattern": p.pattern} for p in self.patterns]


def load_error_patterns(data: Any, where: str = "error_patterns") -> ErrorPatterns:
    """Patterns from their JSON shape, a list of ``{"name", "pattern"}`` objects (other keys,
    such as the shipped file's ``example`` and ``about``, are allowed). ``[]``: recognise none."""
    rows = located_objects(data, where, 'a list of {"name", "pattern"} objects', 'an object with "name" and "pattern"')
    return ErrorPatterns(tuple(ErrorPattern.of(row.get("name"), row.get("pattern"), place) for row, place in rows))


def _shipped() -> ErrorPatterns:
    """The shipped list, read once at import: immutable content, not per-session state."""
    try:
        data = json.loads(DATA_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read the shipped error patterns ({exc})", where=str(DATA_FILE)) from None
    try:
        return load_error_patterns(data)
    except InputError as exc:
        raise exc.within(str(DATA_FILE)) from None


DEFAULT_ERROR_PATTERNS = _shipped()


def error_detail(result: ToolResult, patterns: ErrorPatterns = DEFAULT_ERROR_PATTERNS, detect: bool = True) -> (
        str | None):
    """Why ``result`` is an error — ``"is_error flag"`` (its format says so) or ``"matched: <name>"``
    (a pattern found it, when ``detect`` is on) — or None when it is not one."""
    if result.is_error:
        return "is_error flag"
    if not detect:
        return None
    name = patterns.match(content_text(result.content))
    return None if name is None else f"matched: {name}"
