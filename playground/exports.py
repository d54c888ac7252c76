"""Everything the playground can import, it can export: the files behind the download buttons."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from . import formats, framework_export
from .compaction import Settings
from .export_python import export_python
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


def conversation(conv: Conversation, stem: str, format: str | None = None) -> Download:
    """The conversation in its own format (or converted to ``format``)."""
    name = format or conv.format
    return Download(f"{stem}.{name}.json", formats.dumps(conv, name) + "\n", "application/json")


def report(result: Optimized, stem: str, summary_limit: int | None) -> Download:
    """Compaction and summarization, as ``compact --report`` writes them."""
    return Download(f"{stem}.report.json", _json(optimized_to_json(result, summary_limit)), "application/json")


def rules_json(rules: Rules) -> Download:
    return Download("compaction-rules.json", _json(rules_to_json(rules)), "application/json")


def rules_python(rules: Rules) -> Download:
    return Download("compaction_rules.py", rules_to_python(rules), "text/x-python")


def rules_compactor(rules: Rules, settings: Settings, model: str | None = None) -> Download:
    """Rules + compactor (Python): one standard-library module with ``compact(request, format)``,
    its token decisions made with ``model``'s per-item accounting."""
    return Download("compactor.py", export_python(rules, settings, model), "text/x-python")


def framework_settings(conversation: Conversation, rules: Rules, settings: Settings) -> Download | None:
    """Anthropic context_management and LangChain ClearToolUsesEdit settings, with what does not
    carry over; None when the rules clear no tool result of this conversation."""
    found = framework_export.framework_settings(conversation, rules, settings)
    if found is None:
        return None
    return Download("context-editing.json", _json(framework_export.to_json(found)), "application/json")
