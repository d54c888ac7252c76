"""When an agent's run was made, as its log dates it: the date whose prices its calls are billed
at (prices change: OpenAI's o3 cost $10 per million input tokens until 2025-06-10, $2 after).

Agents write the time where their own code puts it: every Claude Code and Codex line and every
OpenHands event carries ``timestamp`` (ISO 8601); a Gemini CLI session ``startTime`` and its
messages ``timestamp``; Cline's ``ui_messages.json`` entries ``ts`` (milliseconds since the epoch);
opencode's rows ``time_created`` and its storage files ``time.created`` (milliseconds); Aider's
history each session's ``# aider chat started at 2024-08-05 20:38:31`` header. The earliest found
is the run's date; a log that dates nothing gives None (today's prices, stated where they are used).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from ._reader import Database, Folder, Text

_ISO_KEYS = ("timestamp", "startTime", "created_at", "createdAt")
_MS_KEYS = ("ts", "time_created", "timeCreated")
_AIDER = re.compile(r"^# aider chat started at (\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d)?)", re.MULTILINE)
_ISO = re.compile(r"^\d{4}-\d\d-\d\d")
_FIRST = 50  # records looked at: the earliest time is near the start, and a long log is not walked twice
_EARLIEST_MS = 946_684_800_000  # 2000-01-01: a smaller "ts" is not milliseconds since the epoch


def started(data: Any) -> str | None:
    """The earliest time ``data`` (parsed log: lines, an object, a folder, a text, a database)
    records, as an ISO 8601 string in UTC; None when it records none."""
    found = [moment for moment in _moments(data) if moment is not None]
    return min(found).isoformat() if found else None


def _moments(data: Any) -> Iterator[datetime | None]:
    if isinstance(data, Text):
        for match in _AIDER.finditer(data.text):
            yield _iso(match.group(1))
    elif isinstance(data, Folder):
        for value in data.files.values():
            yield from _moments(value)
    elif isinstance(data, Database):
        for rows in data.tables.values():
            for row in rows[:_FIRST]:
                yield from _record(row)
    elif isinstance(data, list):
        for record in data[:_FIRST]:
            yield from _record(record)
    elif isinstance(data, dict):
        yield from _record(data)
        for key in ("messages", "history", "events"):
            if isinstance(data.get(key), list):
                for record in data[key][:_FIRST]:
                    yield from _record(record)


def _record(record: Any) -> Iterator[datetime | None]:
    """The times one record carries, under the keys agents write them with."""
    if not isinstance(record, dict):
        return
    for key in _ISO_KEYS:
        value = record.get(key)
        if isinstance(value, str):
            yield _iso(value)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            yield _ms(value)
    for key in _MS_KEYS:
        value = record.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            yield _ms(value)
    inner = record.get("time")
    if isinstance(inner, dict) and isinstance(inner.get("created"), int | float):
        yield _ms(inner["created"])


def _iso(text: str) -> datetime | None:
    """An ISO 8601 time (``Z`` or an offset; none: UTC), or None when it is not one."""
    text = text.strip()
    if not _ISO.match(text):
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _ms(value: float) -> datetime | None:
    """Milliseconds since the epoch (seconds, if the number is too small to be milliseconds)."""
    try:
        seconds = value / 1000 if value >= _EARLIEST_MS else value
        moment = datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return moment if moment.year >= 2000 else None
