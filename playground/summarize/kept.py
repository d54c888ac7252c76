"""The ledger in the offline summary: what a summary must never fold like any other line.

The requirement the user stated once, the files the agent wrote, the command that still fails and the
error still open are what agents go back on after a summary (``facts.ledger``). The offline summary's
other sections show their newest lines and fold the older ones; these four carry every fact of their
type, within a budget of characters and lines each, and past it fold their *newest* into a counted line: a
type's oldest is folded last (the first requirements are the task itself). A later summary reads
these sections back line by line, like the others, so summarizing again keeps them."""

from __future__ import annotations

import re

from ..conversation import Item
from ..facts.ledger import COMMAND, ERROR, PATH_WRITTEN, REQUIREMENT, Reader

REQUIREMENTS, WRITTEN, FAILING, OPEN_ERRORS = (
    "User requirements", "Files written", "Commands that last failed", "Open errors")
TITLES = (REQUIREMENTS, WRITTEN, FAILING, OPEN_ERRORS)
# characters of each section's lines before its newest are folded: about 1,000 tokens of requirements, and
# about 2,300 in all, beside the 2,906 of the other sections on a shared Claude Code session
BUDGET = {REQUIREMENTS: 4_000, WRITTEN: 3_000, FAILING: 1_200, OPEN_ERRORS: 1_200}
# and lines at most: what still fails is a handful to act on, not a second copy of the errors section
MOST = {REQUIREMENTS: 60, WRITTEN: 100, FAILING: 10, OPEN_ERRORS: 10}
NOUN = {REQUIREMENTS: "requirement", WRITTEN: "file", FAILING: "command", OPEN_ERRORS: "error"}
FAILED_AS = " → "  # a failing command's line: the command, then how its last run ended
FROM = " ⟵ "  # an open error's line: the error, then the call that gave it
STATED = {REQUIREMENT: REQUIREMENTS, PATH_WRITTEN: WRITTEN}  # the facts that join their section as stated
_LATER = re.compile(r"… ([0-9,]+) later \w+")


def _line(title: str, key: str, wrong: str) -> str:
    """A line of what still fails: a command and how it ended, or an error and the call that gave it."""
    return f"{key}{FAILED_AS}{wrong}" if title == FAILING else f"{wrong}{FROM}{key}"


class KeptSections:
    """The four sections of one summary, followed as the span's items are read (``Reader``), after what an
    earlier offline summary carried. A requirement or a file written joins its section while there is
    room; once one does not fit, it and every later one are counted as folded. A failure joins its section
    while there is room and is counted otherwise (and forgotten, as a summary forgets it); a success takes
    its line away; a failure of a line already shown moves it last. So the summary of (a summary of A,
    then B) is the summary of A then B, and a summary written at every call costs what its new items do."""

    def __init__(self) -> None:
        self._reader = Reader(changes=True)
        self._read = 0
        self._stated: dict[str, dict[str, None]] = {REQUIREMENTS: {}, WRITTEN: {}}  # shown lines, in order
        self._used: dict[str, int] = dict.fromkeys(self._stated, 0)  # their characters
        self._wrong: dict[str, dict[str, str]] = {FAILING: {}, OPEN_ERRORS: {}}  # shown: key -> what went wrong
        self._folded: dict[str, int] = dict.fromkeys(TITLES, 0)

    def add(self, item: Item) -> None:
        self._reader.add(self._read, item)
        self._read += 1
        for kind, key, wrong in self._reader.changed():
            if kind in STATED:
                self._state(STATED[kind], key)
            elif kind in (COMMAND, ERROR):
                self._note(FAILING if kind == COMMAND else OPEN_ERRORS, key, wrong)

    def _state(self, title: str, line: str) -> None:
        shown = self._stated[title]
        if line in shown:
            return
        if not self._folded[title] and len(shown) < MOST[title] and self._used[title] + len(line) <= BUDGET[title]:
            shown[line] = None
            self._used[title] += len(line)
        else:
            self._folded[title] += 1

    def _note(self, title: str, key: str, wrong: str | None) -> None:
        shown = self._wrong[title]
        was = shown.pop(key, None) is not None
        if wrong is None:
            return
        used = sum(len(_line(title, k, w)) for k, w in shown.items())
        if was or (len(shown) < MOST[title] and used + len(_line(title, key, wrong)) <= BUDGET[title]):
            shown[key] = wrong
        else:
            self._folded[title] += 1

    def carry(self, title: str, lines: list[str]) -> None:
        """An earlier summary's lines of section ``title``, with the count of a trailing fold line."""
        if lines and (later := _LATER.fullmatch(lines[-1])):
            self._folded[title] += int(later[1].replace(",", ""))
            lines = lines[:-1]
        for line in lines:
            if title in self._wrong:
                key, _, wrong = line.rpartition(FAILED_AS) if title == FAILING else line.rpartition(FROM)[::-1]
                self._wrong[title][key] = wrong
            elif line not in self._stated[title]:
                self._stated[title][line] = None
                self._used[title] += len(line)

    def render(self) -> list[str]:
        """Each non-empty section as the summary shows it: its lines, then how many were folded."""
        shown = []
        for title in TITLES:
            if title in self._wrong:
                lines = [_line(title, key, wrong) for key, wrong in self._wrong[title].items()]
            else:
                lines = list(self._stated[title])
            later = self._folded[title]
            rows = [f"- {line}" for line in lines] + ([f"- … {later:,} later {NOUN[title]}s"] if later else [])
            if rows:
                shown.append(f"{title}:\n" + "\n".join(rows))
        return shown
