"""The offline summarizer: deterministic and extractive, for when no endpoint is configured — the
user's requests, each tool call with its key argument and how it ended, the errors and the
assistant's conclusions, in order. No model involved, so a run replays the same every time.

Bounded, as a model's summary is: each section shows its newest lines (``NEWEST``) and folds the
older ones into one line that counts them (per tool, for calls). An earlier offline summary in the
span is folded in line by line, not nested, so summarizing again at every call of a long run does
not grow the summary with the run: the summary of (the summary of A, then B) is the summary of A
then B. An earlier summary written by anything else (an LLM) is kept whole."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from operator import itemgetter

from .. import words
from ..conversation import Item, ToolCall, ToolResult, content_text, extends
from ..rules.breakdown import most_telling
from ..rules.errorpatterns import error_detail
from .cut import is_summary
from .history import Plan
from .kept import TITLES, KeptSections

OFFLINE_LABEL = "offline summary — no LLM"
EARLIER, REQUESTS, CALLS, ERRORS, CONCLUSIONS = (
    "Earlier summary", "User requests", "Tool calls, in order", "Errors", "Assistant conclusions")
SECTIONS = (EARLIER, REQUESTS, CALLS, ERRORS, CONCLUSIONS)
# the newest lines each section shows, and what it calls one: each line is cut to about 300 characters, so a
# summary is a few thousand tokens at most (2,906 on a shared Claude Code session), the size of the summaries
# agents ask their models for; an earlier summary written by anything else is never folded
NEWEST = {REQUESTS: (15, "request"), CALLS: (40, "call"), ERRORS: (15, "error"), CONCLUSIONS: (15, "conclusion")}
# a count as ``words.plural`` writes it, ASCII digits in groups of three: another text read back is not ours
_NUMBER = r"[0-9]{1,3}(?:,[0-9]{3}){0,5}"
_HEAD = re.compile(rf"\({re.escape(OFFLINE_LABEL)}: extracted from ({_NUMBER}) items?, not written by a model\.\)")
_FOLD = re.compile(rf"… ({_NUMBER}) earlier \w+?s?(?:: (.+))?")
_TOOL = re.compile(rf"(.+) ×({_NUMBER})")


def _first_line(text: str, limit: int = 160) -> str:
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _looks_failed(result: ToolResult) -> bool:
    """An error result: flagged by its format, or plainly one by the shipped error patterns."""
    return error_detail(result) is not None


class _Section:
    """One section's lines, in order, each with the key its fold counts it under (the tool, for
    calls), how many lines have each key, and what an earlier summary had already folded. Plain
    dicts, and a fold counted only when there is one: a policy renders every section at every call."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.keys: list[str] = []
        self.every: dict[str, int] = {}
        self.folded: dict[str, int] = {}

    def add(self, line: str, key: str = "") -> None:
        self.lines.append(line)
        self.keys.append(key)
        self.every[key] = self.every.get(key, 0) + 1

    def extend(self, lines: list[str], keys: list[str], folded: Counter[str]) -> None:
        """An earlier summary's lines, and the counts of what it had folded."""
        self.lines += lines
        self.keys += keys
        for key in keys:
            self.every[key] = self.every.get(key, 0) + 1
        for key, number in folded.items():
            self.folded[key] = self.folded.get(key, 0) + number

    def render(self, title: str) -> str | None:
        """The section as the summary shows it: its newest lines, the older ones folded into one."""
        newest, noun = NEWEST.get(title, (len(self.lines), ""))
        shown = self.lines[len(self.lines) - newest:] if len(self.lines) > newest else self.lines
        lines = [f"- {line}".replace("\n", "\n  ") for line in shown]
        if len(shown) < len(self.lines) or self.folded:
            lines.insert(0, self._fold(title, noun, len(shown)))
        return f"{title}:\n" + "\n".join(lines) if lines else None

    def _fold(self, title: str, noun: str, shown: int) -> str:
        """The line that stands for the lines not shown: how many, and for calls, of which tools."""
        hidden = Counter(self.folded)
        hidden.update(self.every)
        hidden.subtract(self.keys[len(self.keys) - shown:])
        folded = sum(hidden.values())
        line = f"- … {folded:,} earlier {noun}{'s' if folded != 1 else ''}"
        if title != CALLS:
            return line
        tools = sorted(sorted((tool, n) for tool, n in hidden.items() if n), key=itemgetter(1), reverse=True)
        return line + ": " + ", ".join(f"{tool} ×{n:,}" for tool, n in tools)


@dataclass(frozen=True)
class _Earlier:
    """An earlier offline summary, read back: how many items it was extracted from, and each
    section's lines with what it had folded."""

    extracted: int
    sections: dict[str, tuple[list[str], Counter[str]]]


def _fold_of(line: str, title: str) -> Counter[str] | None:
    """The counts a fold line stands for (per tool, for calls), or None when ``line`` is not one."""
    found = _FOLD.fullmatch(line)
    if found is None or title not in NEWEST:
        return None
    total = _number(found[1])
    if title != CALLS:
        return Counter({"": total})
    parts = [_TOOL.fullmatch(part) for part in (found[2] or "").split(", ")]
    counts = Counter({part[1]: _number(part[2]) for part in parts if part is not None})
    return counts if len(counts) == len(parts) and counts.total() == total else None


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def _read_back(body: str) -> _Earlier | None:
    """An offline summary's text read back into its lines; None for any other text (an LLM's, or
    one this summarizer could not have written), which is then kept whole."""
    head, _, rest = body.partition("\n\n")
    found = _HEAD.fullmatch(head)
    if found is None:
        return None
    sections: dict[str, tuple[list[str], Counter[str]]] = {}
    for block in rest.split("\n\n") if rest else ():
        title, _, text = block.partition(":\n")
        if title not in SECTIONS + TITLES or title in sections or not text:
            return None
        lines: list[str] = []
        folded: Counter[str] = Counter()
        for line in text.split("\n"):
            if line.startswith("  ") and lines and title == EARLIER:
                lines[-1] += "\n" + line[2:]
            elif not line.startswith("- "):
                return None
            elif not lines and not folded and (fold := _fold_of(line[2:], title)) is not None:
                folded = fold
            else:
                lines.append(line[2:])
        sections[title] = lines, folded
    return _Earlier(_number(found[1]), sections)


class _Reading:
    """What the summarizer read of a span, in order: each section's lines, the calls by id, the
    argument names each tool's calls used, and the telling argument each tool's lines show. A
    span that extends the last one (per call, the summary covers a little more each time) is
    read from where this stopped, unless a tool's telling argument changed with its new calls."""

    def __init__(self) -> None:
        self.items: tuple[Item, ...] = ()
        self.extracted = 0  # the items the summary stands for: an earlier offline summary's, and the rest
        self.calls: dict[str, ToolCall] = {}
        self.names: dict[str, Counter[str]] = {}
        self.telling: dict[str, str | None] = {}  # per tool with a result: the argument its lines name
        self.sections: dict[str, _Section] = {title: _Section() for title in SECTIONS}
        self.kept = KeptSections()  # the ledger's facts no section may fold like any line (``kept``)

    def count_names(self, items: tuple[Item, ...]) -> None:
        """Count the argument names of the calls among ``items``: a tool's telling argument is
        read from all its calls in the span, before and after its results."""
        for item in items:
            if isinstance(item, ToolCall):
                self.names.setdefault(item.name, Counter()).update((item.parsed_arguments() or {}).keys())

    def still_telling(self) -> bool:
        """Every tool's lines name the argument its calls, counted so far, make the telling one."""
        return all(most_telling(self.names.get(tool, Counter())) == key for tool, key in self.telling.items())

    def fold_in(self, earlier: _Earlier) -> None:
        """An earlier offline summary's lines, as if this reading had read what it was extracted from."""
        self.extracted += earlier.extracted
        for title, (lines, folded) in earlier.sections.items():
            if title in TITLES:
                self.kept.carry(title, lines)
                continue
            keys = [line.partition("(")[0] for line in lines] if title == CALLS else [""] * len(lines)
            self.sections[title].extend(lines, keys, folded)

    def text(self) -> str:
        head = f"({OFFLINE_LABEL}: extracted from {words.plural(self.extracted, 'item')}, not written by a model.)"
        shown = [section.render(title) for title, section in self.sections.items()]
        return "\n\n".join([head, *filter(None, shown[:2]), *self.kept.render(), *filter(None, shown[2:])])


class OfflineSummarizer:
    """Pulls out, in order: the user's requests, each tool call with its key argument and how
    it ended, the errors, and the assistant's conclusions. No model involved."""

    label = OFFLINE_LABEL

    def __init__(self) -> None:
        # per result read: (the result, whether it failed, its first line, its line count) — a
        # policy that summarizes at every call reads the same results again (error patterns are regexes)
        self._read: dict[int, tuple[ToolResult, bool, str, int]] = {}
        self._last = _Reading()

    def _result(self, item: ToolResult) -> tuple[bool, str, int]:
        known = self._read.get(id(item))
        if known is None or known[0] is not item:
            text = content_text(item.content)
            known = self._read[id(item)] = (item, _looks_failed(item), _first_line(text), len(text.splitlines()))
        return known[1:]

    def summarize(self, plan: Plan) -> str:
        items = plan.items
        reading = self._last if extends(items, self._last.items, plan.grew) else _Reading()
        new = items[len(reading.items):]
        reading.count_names(new)
        if not reading.still_telling():
            reading, new = _Reading(), items
            reading.count_names(new)
        for item in new:
            self._add(reading, item)
        reading.items, self._last = items, reading
        return reading.text()

    def _add(self, reading: _Reading, item: Item) -> None:
        """One item's lines, in the sections it belongs to."""
        sections = reading.sections
        if is_summary(item):
            body = content_text(item.content).split("\n\n", 1)[-1].strip()
            if (earlier := _read_back(body)) is not None:
                reading.fold_in(earlier)
                return
            sections[EARLIER].add(body)
            reading.extracted += 1
            return
        reading.kept.add(item)
        if isinstance(item, ToolCall):
            reading.calls[item.call_id] = item
        elif isinstance(item, ToolResult):
            call = reading.calls.get(item.call_id)
            if item.name not in reading.telling:
                reading.telling[item.name] = most_telling(reading.names.get(item.name, Counter()))
            key = reading.telling[item.name]
            arguments = (call.parsed_arguments() or {}) if call else {}
            shown = f"{key}={json.dumps(arguments[key], ensure_ascii=False)[:120]}" if key in arguments else ""
            failed, first, lines = self._result(item)
            if failed:
                sections[CALLS].add(f"{item.name}({shown}) → error: {first}", item.name)
                sections[ERRORS].add(f"{item.name}({shown}): {first}")
            else:
                sections[CALLS].add(f"{item.name}({shown}) → ok, {lines} lines", item.name)
        elif item.role == "user" and content_text(item.content).strip():
            sections[REQUESTS].add(_first_line(content_text(item.content), 300))
        elif item.role == "assistant" and content_text(item.content).strip():
            sections[CONCLUSIONS].add(_first_line(content_text(item.content), 300))
        reading.extracted += 1
