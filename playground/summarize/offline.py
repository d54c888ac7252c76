"""The offline summarizer: deterministic and extractive, for when no endpoint is configured — the
user's requests, each tool call with its key argument and how it ended, the errors and the
assistant's conclusions, in order. No model involved, so a run replays the same every time."""

from __future__ import annotations

import json
from collections import Counter

from .. import words
from ..conversation import Item, ToolCall, ToolResult, content_text, extends
from ..rules.breakdown import most_telling
from ..rules.errorpatterns import error_detail
from .cut import is_summary
from .history import Plan

OFFLINE_LABEL = "offline summary — no LLM"


def _first_line(text: str, limit: int = 160) -> str:
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _looks_failed(result: ToolResult) -> bool:
    """An error result: flagged by its format, or plainly one by the shipped error patterns."""
    return error_detail(result) is not None


class _Reading:
    """What the summarizer read of a span, in order: each section's lines, the calls by id, the
    argument names each tool's calls used, and the telling argument each tool's lines show. A
    span that extends the last one (per call, the summary covers a little more each time) is
    read from where this stopped, unless a tool's telling argument changed with its new calls."""

    def __init__(self) -> None:
        self.items: tuple[Item, ...] = ()
        self.calls: dict[str, ToolCall] = {}
        self.names: dict[str, Counter[str]] = {}
        self.telling: dict[str, str | None] = {}  # per tool with a result: the argument its lines name
        self.sections: dict[str, list[str]] = {title: [] for title in SECTIONS}

    def count_names(self, items: tuple[Item, ...]) -> None:
        """Count the argument names of the calls among ``items``: a tool's telling argument is
        read from all its calls in the span, before and after its results."""
        for item in items:
            if isinstance(item, ToolCall):
                self.names.setdefault(item.name, Counter()).update((item.parsed_arguments() or {}).keys())

    def still_telling(self) -> bool:
        """Every tool's lines name the argument its calls, counted so far, make the telling one."""
        return all(most_telling(self.names.get(tool, Counter())) == key for tool, key in self.telling.items())


SECTIONS = ("Earlier summary", "User requests", "Tool calls, in order", "Errors", "Assistant conclusions")


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
        reading = self._last if extends(items, self._last.items) else _Reading()
        new = items[len(reading.items):]
        reading.count_names(new)
        if not reading.still_telling():
            reading, new = _Reading(), items
            reading.count_names(new)
        for item in new:
            self._add(reading, item)
        reading.items, self._last = items, reading
        sections = [f"({OFFLINE_LABEL}: extracted from {words.count(len(items), 'item')}, not written by a model.)"]
        sections.extend(f"{title}:\n" + "\n".join(lines) for title, lines in reading.sections.items() if lines)
        return "\n\n".join(sections)

    def _add(self, reading: _Reading, item: Item) -> None:
        """One item's lines, in the sections it belongs to."""
        earlier, requests, actions, errors, conclusions = reading.sections.values()
        if is_summary(item):
            earlier.append(content_text(item.content).split("\n\n", 1)[-1].strip())
        elif isinstance(item, ToolCall):
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
                actions.append(f"- {item.name}({shown}) → error: {first}")
                errors.append(f"- {item.name}({shown}): {first}")
            else:
                actions.append(f"- {item.name}({shown}) → ok, {lines} lines")
        elif item.role == "user" and content_text(item.content).strip():
            requests.append(f"- {_first_line(content_text(item.content), 300)}")
        elif item.role == "assistant" and content_text(item.content).strip():
            conclusions.append(f"- {_first_line(content_text(item.content), 300)}")
