"""What a compaction pass is told: the threshold, how many recent tool uses to keep, and how
error results are treated. Its own module: every stage that builds settings needs it, not the pass."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError

DEFAULT_THRESHOLD = 50_000  # the book's


@dataclass(frozen=True)
class Settings:
    """``keep_recent``: the newest N tool uses the model has read (call and result, with an
    assistant turn after the result) stay as they are; tool uses it has not read stay anyway, so
    each step of N keeps one more. ``compact_errors``: let rules replace error results too. ``detect_errors``: recognise
    errors by the rules' ``error_patterns`` as well as by the format's ``is_error`` flag."""

    threshold: int = DEFAULT_THRESHOLD
    keep_recent: int = 0
    compact_errors: bool = False
    detect_errors: bool = True

    def __post_init__(self) -> None:
        if self.threshold < 0:
            raise InputError("threshold must be 0 or more", where="threshold", value=self.threshold)
        if self.keep_recent < 0:
            raise InputError("keep_recent must be 0 or more", where="keep_recent", value=self.keep_recent)
