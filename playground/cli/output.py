"""What a command writes: text to stdout or a file, JSON indented the one way every command
indents it, and notes on stderr, so the output stays clean for the next program."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .. import formats
from ..errors import InputError
from .arguments import PROG


def write(text: str, path: str | None) -> None:
    """``text`` to stdout or a file; a lone surrogate from the input is written as its JSON escape,
    which reads back as the same string (UTF-8 cannot carry it as it is)."""
    text = formats.keep_surrogates(text)
    if path is None or path == "-":
        sys.stdout.write(text)
        return
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write the file ({exc.strerror or exc})", where=path) from None


def dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def note(text: str) -> None:
    """A note on stderr: something the person should know that is not an error."""
    print(f"{PROG}: note: {text}", file=sys.stderr)


def say_unmatched(notice: str | None, preset: str | None) -> None:
    """What the rules did not do, and what to try (nothing when they did what they could)."""
    if notice is None:
        return
    hint = "" if preset == "suggested" else (" Try --preset suggested: rules built for this conversation's tools "
                                             f"({PROG} rules --suggest FILE shows them and why).")
    note(f"{notice}{hint}")
