"""Counts in prose: "1 call", "2 calls" — one place, so no message says "fired 1 times"."""

from __future__ import annotations


def plural(number: int, noun: str, irregular: str | None = None) -> str:
    """``number`` and ``noun``, plural unless it is exactly one (``irregular``: a plural that is not
    ``noun + "s"``). Named ``plural``, not ``count``: ``pg.count`` counts tokens."""
    return f"{number:,} {noun if number == 1 else irregular or noun + 's'}"
