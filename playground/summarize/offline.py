"""The offline summarizer: deterministic and extractive, for when no endpoint is configured — the
user's requests, each tool call with its key argument and how it ended, the errors and the
assistant's conclusions, in order. No model involved, so a run replays the same every time."""

from __future__ import annotations

import json

from .. import words
from ..conversation import Conversation, ToolCall, ToolResult, content_text
from ..rules.breakdown import telling_argument
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


class OfflineSummarizer:
    """Pulls out, in order: the user's requests, each tool call with its key argument and how
    it ended, the errors, and the assistant's conclusions. No model involved."""

    label = OFFLINE_LABEL

    def __init__(self) -> None:
        # per result read: (the result, whether it failed, its first line, its line count) — a
        # policy that summarizes at every call reads the same results again (error patterns are regexes)
        self._read: dict[int, tuple[ToolResult, bool, str, int]] = {}

    def _result(self, item: ToolResult) -> tuple[bool, str, int]:
        known = self._read.get(id(item))
        if known is None or known[0] is not item:
            text = content_text(item.content)
            known = self._read[id(item)] = (item, _looks_failed(item), _first_line(text), len(text.splitlines()))
        return known[1:]

    def summarize(self, plan: Plan) -> str:
        items = plan.items
        conversation = Conversation(items=items)
        telling: dict[str, str | None] = {}  # per tool, found once: the argument that names a call best
        calls: dict[str, ToolCall] = {}
        requests, actions, errors, conclusions, earlier = [], [], [], [], []
        for item in items:
            if is_summary(item):
                earlier.append(content_text(item.content).split("\n\n", 1)[-1].strip())
            elif isinstance(item, ToolCall):
                calls[item.call_id] = item
            elif isinstance(item, ToolResult):
                call = calls.get(item.call_id)
                if item.name not in telling:
                    telling[item.name] = telling_argument(conversation, item.name)
                key = telling[item.name]
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
        sections = [f"({OFFLINE_LABEL}: extracted from {words.count(len(items), 'item')}, not written by a model.)"]
        for title, lines in (("Earlier summary", earlier), ("User requests", requests), ("Tool calls, in order",
                             actions), ("Errors", errors), ("Assistant conclusions", conclusions)):
            if lines:
                sections.append(f"{title}:\n" + "\n".join(lines))
        return "\n\n".join(sections)
