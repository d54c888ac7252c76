"""Every limit the playground holds input to, in one place (docs/limits.md lists them with
what was measured): how large a file may be, how many digits a number may have, how long a
pattern, how long a reply and how long a wait.

One visitor's file, number or pattern must never hang, exhaust or crash the server for the
others, so each of these is checked where the input comes in, with a message that names the
limit and the place.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, BinaryIO

from .errors import InputError

MB = 1024 * 1024  # as Streamlit counts its upload limit
MAX_INPUT_ENV = "PLAYGROUND_MAX_INPUT_MB"
DEFAULT_MAX_INPUT_MB = 200  # a ~200k-token agent log is about 1 MB; see scripts/measure_limits.py for the memory
MAX_TOKENS = 1_000_000_000  # any token figure from a file or a box: thresholds, limits, budgets, min_tokens
MAX_COUNT = 1_000  # tool uses or steps kept (keep_recent, keep_steps, a window, keep): the page's boxes stop here
MAX_PRICE = 10_000.0  # US$ per million tokens; the dearest model listed costs 150
MAX_PATTERN_CHARS = 2_000  # characters of one error pattern
MAX_TIMEOUT = 3_600.0  # seconds: the summarizer's whole exchange may take at most an hour
MAX_DIGITS = 4_300  # Python refuses to read longer integers (sys.int_info.default_max_str_digits)
MAX_FILES = 20_000  # files in one task folder or zip: more than any agent task holds; a whole disk is refused


def cores() -> int:
    """The processors this process may run on (its affinity, where the system says): corpus worker
    processes and the meter's encoding threads are sized by it."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def max_input_mb(environ: Mapping[str, str] = os.environ) -> int:
    """The input size limit in MB: ``PLAYGROUND_MAX_INPUT_MB`` when set (a whole number, 1 or more),
    else the default."""
    text = environ.get(MAX_INPUT_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_INPUT_MB
    if not text.isdigit() or int(text) < 1:
        raise InputError("expected a whole number of megabytes, 1 or more", where=MAX_INPUT_ENV, value=text)
    return int(text)


def too_large(limit_mb: int) -> InputError:
    return InputError(f"larger than the limit of {limit_mb:,} MB (set {MAX_INPUT_ENV} or --max-input-mb to change it)")


def read_limited(stream: BinaryIO, limit_mb: int, size: int | None = None) -> bytes:
    """All of ``stream``, or InputError as soon as it holds more than ``limit_mb`` MB: never more
    than the limit and one chunk is read, so ``/dev/zero`` or an endless pipe ends at once. A file
    whose ``size`` is known is refused before reading when too large, and else read in one piece
    (one buffer of its size: chunks joined would need two)."""
    limit = limit_mb * MB
    if size is not None:
        check_size(size, limit_mb)
    chunks: list[bytes] = []
    total = 0
    while chunk := stream.read(min(size + 1 if size is not None and not chunks else _CHUNK, limit + 1 - total)):
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise too_large(limit_mb)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


_CHUNK = 4 * MB


def check_size(size: int, limit_mb: int) -> None:
    """Refuse input of ``size`` bytes over the limit (an upload, whose size is known first)."""
    if size > limit_mb * MB:
        raise too_large(limit_mb)


def whole(value: Any, where: str, high: int = MAX_TOKENS, low: int = 0, what: str = "a whole number") -> int:
    """``value`` if it is a whole number from ``low`` to ``high`` (a bool is not one), else an
    InputError naming ``where`` and the range."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(f"expected {what} from {low:,} to {high:,}", where=where, value=value)
    return value


def amount(value: Any, where: str, high: float = MAX_PRICE, what: str = "a number") -> float:
    """``value`` as a float if it is a finite number from 0 to ``high``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= high:  # no float(10**400)
        raise InputError(f"expected {what} from 0 to {high:,g}", where=where, value=value)
    return float(value)


def seconds(value: Any, where: str = "timeout") -> float:
    """A timeout in seconds: more than 0 and at most MAX_TIMEOUT. nan, inf and 0 are refused (0
    would mean "give up at once", not "wait forever")."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= MAX_TIMEOUT:
        raise InputError(f"expected seconds, more than 0 and at most {MAX_TIMEOUT:,g}", where=where, value=value)
    return float(value)
