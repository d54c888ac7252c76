"""Counts in prose: "1 call", "2 calls" — one place, so no message says "fired 1 times" — and a
policy's settings on one line, the same in every table and caption."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def plural(number: int, noun: str, irregular: str | None = None) -> str:
    """``number`` and ``noun``, plural unless it is exactly one (``irregular``: a plural that is not
    ``noun + "s"``). Named ``plural``, not ``count``: ``pg.count`` counts tokens."""
    return f"{number:,} {noun if number == 1 else irregular or noun + 's'}"


def parameters(params: Mapping[str, Any]) -> str:
    """A policy's parameters as its source names them, as code would write them (``window=10,
    keep=8192``: no separator, which Python reads as a tuple), to copy into an agent."""
    return ", ".join(f"{key}={value}" for key, value in params.items())
