"""The one exception bad input raises, carrying where the problem is.

The CLI prints it as a single line and exits 2; the UI shows it next to the input it came from.
Neither ever shows a traceback for it.
"""

from __future__ import annotations

from typing import Any

_ONE_LINE = {ord("\n"): "\\n", ord("\r"): "\\r"}


class InputError(ValueError):
    """Input we cannot use: ``where`` names the place (a path like ``messages[3].tool_call_id``,
    or ``line 4, column 7``), ``value`` the offending value when there is one."""

    def __init__(self, message: str, *, where: str | None = None, value: Any = None) -> None:
        self.message = message
        self.where = where
        self.value = value
        super().__init__(str(self))

    def __str__(self) -> str:
        text = f"{self.where}: {self.message}" if self.where else self.message
        if self.value is not None:
            text += f": {_short(self.value)}"
        return text.translate(_ONE_LINE)  # a key from the input may hold a line break: the message stays one line

    def within(self, outer: str) -> InputError:
        """The same error, located inside ``outer`` (a file name, say)."""
        where = f"{outer}, {self.where}" if self.where else outer
        return InputError(self.message, where=where, value=self.value)


def located_objects(data: Any, where: str, expected: str, row: str) -> list[tuple[dict, str]]:
    """``data`` as a list of (object, place) pairs — ``rules[2]``, ``error_patterns[0]`` — so each
    loader names the very entry that is wrong. ``expected``/``row`` say what the list and an entry
    should be, in the loader's words."""
    if not isinstance(data, list):
        raise InputError(f"expected {expected}", where=where, value=data)
    found = []
    for position, entry in enumerate(data):
        place = f"{where}[{position}]"
        if not isinstance(entry, dict):
            raise InputError(f"expected {row}", where=place, value=entry)
        found.append((entry, place))
    return found


def _short(value: Any, limit: int = 80) -> str:
    """A repr short enough for one line of an error message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
