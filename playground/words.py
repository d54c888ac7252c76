"""Counts in prose: "1 call", "2 calls" — one place, so no message says "fired 1 times"."""

from __future__ import annotations


def count(number: int, noun: str, plural: str | None = None) -> str:
    """``number`` and ``noun``, plural unless it is exactly one (``plural`` for irregular nouns)."""
    return f"{number:,} {noun if number == 1 else plural or noun + 's'}"
