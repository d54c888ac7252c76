"""Everything the playground can import, it can export: the files behind the download buttons."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from . import formats
from .model import Conversation
from .pipeline import Optimized
from .report import optimized_to_json
from .rules import Rules, rules_to_json, rules_to_python


@dataclass(frozen=True)
class Download:
    name: str
    data: str
    mime: str


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def conversation_name(stem: str, format: str) -> str:
    """The file name of a conversation export, known before its (possibly large) data is made."""
    return f"{stem}.{format}.json"


def report_name(stem: str) -> str:
    return f"{stem}.report.json"


def conversation(conv: Conversation, stem: str, format: str | None = None) -> Download:
    """The conversation in its own format (or converted to ``format``)."""
    name = format or conv.format
    return Download(conversation_name(stem, name), formats.dumps(conv, name) + "\n", "application/json")


def report(result: Optimized, stem: str, summary_limit: int | None) -> Download:
    """Compaction and summarization, as ``compact --report`` writes them."""
    return Download(report_name(stem), _json(optimized_to_json(result, summary_limit)), "application/json")


def rules_json(rules: Rules) -> Download:
    return Download("compaction-rules.json", _json(rules_to_json(rules)), "application/json")


def rules_python(rules: Rules) -> Download:
    return Download("compaction_rules.py", rules_to_python(rules), "text/x-python")
