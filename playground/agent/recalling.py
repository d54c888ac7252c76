"""The wrapper's side of recall: keep each original a reference with a key replaced, and offer the
model the ``recall`` tool that reads it back (``playground.recall`` holds the store and answers).

An original is stored when the policy replaced it with text that names its key (a rule whose
template has ``{recall_key}``): the text a rule replaced (a result's text, a call's argument value)
is exactly what the key was made from (``compaction.walker``), so storing it makes the reference
true. From that call on, the request carries the ``recall`` tool in the provider's own schema
(Chat Completions and Responses functions, an Anthropic tool), after the caller's tools; the
record's token counts are the request as the caller's tools make it, without that definition.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from ..conversation import Item, ToolCall, ToolResult, content_text
from ..recall import TOOL_NAME, RecallStore, recall_key
from .record import ItemEdit

_TOOL_FILE = Path(__file__).resolve().parent.parent / "data" / "recall_tool.json"


@cache
def _tool() -> Mapping[str, Any]:
    return json.loads(_TOOL_FILE.read_text(encoding="utf-8"))


def tool_schema(api: str) -> dict[str, Any]:
    """The ``recall`` tool as ``api`` (``chat.completions``, ``responses``, ``messages``) declares a tool."""
    tool = _tool()
    if api == "messages":
        return {"name": tool["name"], "description": tool["description"], "input_schema": dict(tool["parameters"])}
    function = {"name": tool["name"], "description": tool["description"], "parameters": dict(tool["parameters"])}
    return {"type": "function", "function": function} if api == "chat.completions" else {"type": "function",
                                                                                         **function}


def with_tool(kwargs: dict[str, Any], api: str) -> dict[str, Any]:
    """The request with the ``recall`` tool after the caller's tools (unless one is named so already)."""
    tools = list(kwargs.get("tools") or ())
    names = {tool.get("name") or (tool.get("function") or {}).get("name")
             for tool in tools if isinstance(tool, Mapping)}
    return kwargs if TOOL_NAME in names else {**kwargs, "tools": [*tools, tool_schema(api)]}


def _replaced(was: Item, now: Item) -> Iterator[tuple[str, str]]:
    """The texts an edit replaced, each with the text that replaced it (a result's body; a call's arguments)."""
    if isinstance(was, ToolResult) and isinstance(now, ToolResult):
        yield content_text(was.content), content_text(now.content)
    elif isinstance(was, ToolCall) and isinstance(now, ToolCall):
        old, new = was.parsed_arguments() or {}, now.parsed_arguments() or {}
        for name, value in old.items():
            if new.get(name) != value:
                yield (value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)), now.arguments


def keep(store: RecallStore, edits: tuple[ItemEdit, ...], request: tuple[Item, ...], sent: tuple[Item, ...]) -> int:
    """Store each original this call's ``edits`` replaced with a reference naming its key; how many."""
    stored = 0
    for edit in edits:
        if edit.kind not in ("result", "call") or edit.position >= min(len(request), len(sent)):
            continue
        for original, reference in _replaced(request[edit.position], sent[edit.position]):
            if recall_key(original) in reference:
                store.put(original)
                stored += 1
    return stored
