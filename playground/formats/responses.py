"""OpenAI Responses: a request body with ``input`` items (or a bare list of them) and
``instructions``.

``message`` items (typed or the short ``{role, content}`` form) become Messages,
``function_call`` items ToolCalls, ``function_call_output`` items ToolResults. Custom tool calls
(``custom_tool_call``: free-text ``input``, e.g. Codex's ``apply_patch``) and their outputs are
ToolCalls and ToolResults too (``arguments`` holds the input text), and so is ``local_shell_call``
(tool name ``local_shell``, ``arguments`` the JSON of its ``action``), so they are counted and
compacted like functions and written back as the item type they came in. Any other item type
(reasoning, hosted tool calls…) is kept whole as a Message holding one opaque block.
"""

from __future__ import annotations

import json
from typing import Any

from ..conversation import Conversation, Item, Message, Origin, Part, Tool, ToolCall, ToolResult, frozen, link
from ._wire import check, each_object, function_fields, maybe, need, put_content, read_content, read_tool, rest

NAME = "responses"
TITLE = "OpenAI Responses"


def where(origin: Origin) -> str:
    return f"input[{origin.index}]"


def looks_like(data: Any) -> int:
    items = data if isinstance(data, list) else data.get("input") if isinstance(data, dict) else None
    if isinstance(items, str) and isinstance(data, dict):
        return 2
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        return 0
    typed = ("function_call", "function_call_output", "reasoning", "custom_tool_call", "custom_tool_call_output")
    if any(item.get("type") in typed for item in items):
        return 4
    if any(item.get("type") == "message" for item in items) or isinstance(data, dict):
        return 2
    return 0


LOCAL_SHELL = "local_shell"  # the tool name a local_shell_call item gets (the item itself has none)
_CALL_ARGUMENTS = {"function_call": "arguments", "custom_tool_call": "input"}
_OUTPUTS = ("function_call_output", "custom_tool_call_output")


def _read_call(item: dict, kind: str, place: str, origin: Origin) -> ToolCall:
    if kind == "local_shell_call":
        action = need(item, "action", dict, place)
        return ToolCall(call_id=need(item, "call_id", str, place), name=LOCAL_SHELL,
                        arguments=json.dumps(action, ensure_ascii=False), origin=origin,
                        extra=rest(item, "call_id", "action"))
    key = _CALL_ARGUMENTS[kind]
    return ToolCall(
        call_id=need(item, "call_id", str, place),
        name=need(item, "name", str, place),
        arguments=need(item, key, str, place),
        origin=origin,
        extra=rest(item, "call_id", "name", key),
    )


def _read_item(item: dict, index: int, place: str) -> Item:
    kind = check(item.get("type", "message"), str, f"{place}.type")  # a list or an object is no item type
    origin = Origin(index)
    if kind == "message":
        return Message(
            role=need(item, "role", str, place),
            content=read_content(item, "content", place),
            origin=origin,
            extra=rest(item, "role", "content"),
        )
    if kind in _CALL_ARGUMENTS or kind == "local_shell_call":
        return _read_call(item, kind, place, origin)
    if kind in _OUTPUTS:
        return ToolResult(
            call_id=need(item, "call_id", str, place),
            content=read_content(item, "output", place),
            origin=origin,
            extra=rest(item, "call_id", "output"),
        )
    opaque = Part(kind, None, rest(item, "type"))
    return Message(role=str(item.get("role", "assistant")), content=(opaque,), origin=origin,
                   extra=frozen({"type": kind}))


def read_items(raw_items: list, start: int = 0, latest: dict[str, str] | None = None) -> tuple[Item, ...]:
    """The items of ``input`` from its index ``start`` on, linked after the calls so far
    (``latest``): a list that only grows is read as it grows (``chat.read_items``)."""
    return link(each_object(raw_items, "input", _read_item, start), where, latest)


def write_items(items: tuple[Item, ...]) -> list[dict[str, Any]]:
    """The items as ``input``: one wire item each, so any item begins one."""
    return [_write_item(item) for item in items]


def read(data: Any) -> Conversation:
    if isinstance(data, list):
        body: dict[str, Any] = {}
        raw_items: Any = data
    else:
        body = check(data, dict, "request")
        raw_items = need(body, "input", str | list, "request")
    notes: tuple[str, ...] = ()
    if isinstance(raw_items, str):
        raw_items = [{"role": "user", "content": raw_items}]
        notes = ("input was a string: it is shown, and exported, as one user message",)
    items = read_items(raw_items)
    tools = each_object(maybe(body, "tools", list, "request") or [], "tools",
                        lambda t, _, at: read_tool(t, t, "parameters", at))
    return Conversation(
        items=items,
        format=NAME,
        model=maybe(body, "model", str, "request"),
        instructions=read_content(body, "instructions", "request") if "instructions" in body else None,
        tools=tuple(tools),
        extra=rest(body, "input", "model", "instructions", "tools"),
        bare=isinstance(data, list),
        notes=notes,
    )


def _write_call(call: ToolCall) -> dict[str, Any]:
    kind = call.extra.get("type", "function_call")
    if kind == "local_shell_call":
        try:
            action: Any = json.loads(call.arguments)
        except ValueError:  # an edit made the action unreadable: send its text rather than lose it
            action = call.arguments
        return {"type": kind, "call_id": call.call_id, "action": action, **call.extra}
    key = _CALL_ARGUMENTS.get(kind, "arguments")
    return {"type": kind, "call_id": call.call_id, "name": call.name, key: call.arguments, **call.extra}


def _write_item(item: Item) -> dict[str, Any]:
    if isinstance(item, ToolCall):
        return _write_call(item)
    if isinstance(item, ToolResult):
        wire: dict[str, Any] = {"type": "function_call_output", "call_id": item.call_id}
        put_content(wire, "output", item.content)
    elif item.extra.get("type", "message") != "message" and isinstance(item.content, tuple):
        return {"type": item.extra["type"], **item.content[0].extra}
    else:
        wire = {"role": item.role}
        put_content(wire, "content", item.content)
    wire.update(item.extra)
    return wire


def _write_tool(tool: Tool) -> dict[str, Any]:
    return dict(tool.extra) if tool.extra else {"type": "function", **function_fields(tool)}


def write(conversation: Conversation) -> Any:
    items = write_items(conversation.items)
    if conversation.bare:
        return items
    body: dict[str, Any] = {}
    if conversation.model is not None:
        body["model"] = conversation.model
    if conversation.instructions is not None:
        put_content(body, "instructions", conversation.instructions)
    body["input"] = items
    if conversation.tools:
        body["tools"] = [_write_tool(tool) for tool in conversation.tools]
    body.update(conversation.extra)
    return body
