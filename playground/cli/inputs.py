"""What a command reads: a file or stdin, never more than the input limit, as JSON, as a
conversation (any API format or agent log ``formats`` reads) or as rules; every error names the
file it is in."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from .. import formats, limits
from ..errors import InputError
from ..rules.ruleset import Rules, book_rules
from ..rules.ruleset import load_rules as rules_from_json


def read_bytes(path: str, limit_mb: int) -> bytes:
    """The file's bytes (``-``: stdin), never more than the input limit: a larger file is refused
    from its size, before reading, and a stream (a pipe, ``/dev/zero``) once it passes the limit."""
    if path == "-":
        return limits.read_limited(sys.stdin.buffer, limit_mb)
    try:
        with open(path, "rb") as stream:
            size = os.fstat(stream.fileno()).st_size if Path(path).is_file() else None
            return limits.read_limited(stream, limit_mb, size)
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror or exc})") from None


def load_json(path: str, limit_mb: int) -> Any:
    try:
        return formats.parse_json(read_bytes(path, limit_mb))
    except InputError as exc:
        raise exc.within("stdin" if path == "-" else path) from None


def load_conversation(path: str, limit_mb: int, format: str | None = None,
                      to: str | None = None) -> formats.Conversation:
    """A conversation from JSON or JSONL, or an agent's log in any form ``formats`` reads (a task
    folder, a zip of one, an SQLite database, a markdown history), converted to ``to`` when asked
    (the conversion's losses are in its notes)."""
    where = "stdin" if path == "-" else path
    try:
        conversation = (formats.loads(read_bytes(path, limit_mb), format, limit_mb=limit_mb) if path == "-"
                        else formats.read_path(path, format, limit_mb=limit_mb))
    except InputError as exc:
        raise exc.within(where) from None
    return formats.convert(conversation, to) if to else conversation


def checked_rules(data: Any, path: str) -> Rules:
    """``data``, read from ``path``, as rules: a bad row's error says which file it is in."""
    try:
        return rules_from_json(data)
    except InputError as exc:
        raise exc if exc.where and exc.where.startswith(path) else exc.within(path) from None


def load_rules(path: str | None, limit_mb: int) -> Rules:
    """The rules in ``path``; None: the book's."""
    return book_rules() if path is None else checked_rules(load_json(path, limit_mb), path)
