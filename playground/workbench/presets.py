"""Presets: example conversations shipped in ``presets/``, each with the settings it suggests.

A preset file is JSON::

    {"title": "…", "description": "…", "order": 1, "model": "gpt-4o",
     "threshold": 4000, "keep_recent": 0,
     "rules": {"tool_calls": […], "tool_results": […]},      # optional: the book's rules
     "conversation": <a request in any supported format>}
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import formats
from ..conversation import Conversation
from ..errors import InputError
from ..rules.ruleset import Rules, book_rules, load_rules

# The repository's presets/ folder; PLAYGROUND_PRESETS points the app at another one.
PRESETS_DIR = Path(os.environ.get("PLAYGROUND_PRESETS") or Path(__file__).resolve().parents[2] / "presets")


@dataclass(frozen=True)
class Preset:
    key: str  # the file's stem
    title: str
    description: str
    order: int
    model: str
    threshold: int
    keep_recent: int
    rules: Rules
    conversation: Conversation
    source: Any  # the conversation exactly as written in the file


def _number(data: dict, key: str, default: int, where: str) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError("expected a whole number, 0 or more", where=f"{where}.{key}", value=value)
    return value


def parse_preset(data: Any, key: str) -> Preset:
    if not isinstance(data, dict) or "conversation" not in data:
        raise InputError("a preset is an object with a 'conversation'", where=key)
    title = data.get("title", key)
    if not isinstance(title, str):
        raise InputError("expected a string", where=f"{key}.title", value=title)
    try:
        conversation = formats.read(data["conversation"])
        rules = load_rules(data["rules"]) if "rules" in data else book_rules()
    except InputError as exc:
        raise exc.within(key) from None
    return Preset(
        key=key,
        title=title,
        description=str(data.get("description", "")),
        order=_number(data, "order", 100, key),
        model=str(data.get("model") or conversation.model or "gpt-4o"),
        threshold=_number(data, "threshold", 50_000, key),
        keep_recent=_number(data, "keep_recent", 0, key),
        rules=rules,
        conversation=conversation,
        source=data["conversation"],
    )


def load_preset(path: str | Path) -> Preset:
    """One preset file: its conversation, model, threshold and rules."""
    path = Path(path)
    try:
        data = formats.parse_json(path.read_bytes())
    except InputError as exc:
        raise exc.within(path.name) from None
    return parse_preset(data, path.stem)


def list_presets(folder: Path = PRESETS_DIR) -> list[Preset]:
    """Every preset in ``folder``, in their suggested order."""
    presets = [load_preset(path) for path in sorted(folder.glob("*.json"))]
    return sorted(presets, key=lambda preset: (preset.order, preset.title))
