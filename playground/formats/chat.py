"""OpenAI Chat Completions: a bare list of messages, or a request body with ``messages``.

An assistant message becomes a Message item followed by one ToolCall item per entry of its
``tool_calls`` (their origin's ``block`` is the position in that list); a ``tool`` message
becomes a ToolResult.
"""

from __future__ import annotations

from typing import Any

from ..conversation import Conversation, Item, Message, Origin, Tool, ToolCall, ToolResult, frozen, link
from ._wire import (
    check,
    each_object,
    function_fields,
    has_block,
    maybe,
    need,
    put_content,
    read_content,
    read_tool,
    rest,
)

NAME = "chat"
TITLE = "OpenAI Chat Completions"


def where(origin: Origin) -> str:
    return f"messages[{origin.index}]" + ("" if origin.block is None else f".tool_calls[{origin.block}]")


def looks_like(data: Any) -> int:
    """How strongly ``data`` looks like this format (0: not at all)."""
    messages = data if isinstance(data, list) else data.get("messages") if isinstance(data, dict) else None
    if not isinstance(messages, list) or not all(isinstance(m, dict) and "role" in m for m in messages):
        return 0
    if isinstance(data, dict) and ("system" in data or "input" in data):
        return 0
    score = 1
    for message in messages:
        if message.get("role") in ("tool", "system", "developer") or "tool_calls" in message:
            score = 3
        elif has_block(message, "tool_use", "tool_result"):
            return 0
    return score


def _read_message(message: dict, index: int, place: str) -> list[Item]:
    role = need(message, "role", str, place)
    if role == "tool":
        result = ToolResult(
            call_id=need(message, "tool_call_id", str, place),
            content=read_content(message, "content", place),
            origin=Origin(index),
            extra=rest(message, "role", "tool_call_id", "content"),
        )
        return [result]
    calls = message.get("tool_calls")
    modelled = ["role", "content", "name"] + (["tool_calls"] if calls else [])
    head = Message(
        role=role,
        content=read_content(message, "content", place),
        name=maybe(message, "name", str, place),
        origin=Origin(index),
        extra=rest(message, *modelled),
    )
    if not calls:
        return [head]
    check(calls, list, f"{place}.tool_calls")
    return [head, *each_object(calls, f"{place}.tool_calls", lambda call, k, at: _read_call(call, index, k, at))]


def _read_call(call: dict, index: int, block: int, place: str) -> ToolCall:
    function = need(call, "function", dict, place)
    extra = dict(rest(call, "id", "function"))
    function_rest = rest(function, "name", "arguments")
    if function_rest:
        extra["function"] = dict(function_rest)
    return ToolCall(
        call_id=need(call, "id", str, place),
        name=need(function, "name", str, f"{place}.function"),
        arguments=need(function, "arguments", str, f"{place}.function"),
        origin=Origin(index, block),
        extra=frozen(extra),
    )


def _read_tool(tool: dict, _: int, place: str) -> Tool:
    fields = tool.get("function") if isinstance(tool.get("function"), dict) else tool
    return read_tool(tool, fields, "parameters", place)


def read_items(messages: list, start: int = 0, latest: dict[str, str] | None = None) -> tuple[Item, ...]:
    """The items of ``messages``, the request's list from its index ``start`` on, each result named
    after the calls so far (``latest``, as ``link`` carries it): a list that only grows (a wrapped
    agent's) is read as it grows, each message once, into the items a whole read gives."""
    items: list[Item] = []
    for group in each_object(messages, "messages", _read_message, start):
        items.extend(group)
    return link(items, where, latest)


def begins_message(items: tuple[Item, ...], position: int) -> bool:
    """The item at ``position`` begins a wire message whatever comes before it (a call joins the
    assistant message before it): ``write_messages`` of the items from there is the tail of theirs."""
    return not isinstance(items[position], ToolCall)


def read(data: Any) -> Conversation:
    if isinstance(data, list):
        body: dict[str, Any] = {}
        messages = data
    else:
        body = check(data, dict, "request")
        messages = need(body, "messages", list, "request")
    items = read_items(messages)
    tools = each_object(maybe(body, "tools", list, "request") or [], "tools", _read_tool)
    return Conversation(
        items=items,
        format=NAME,
        model=maybe(body, "model", str, "request"),
        tools=tuple(tools),
        extra=rest(body, "messages", "model", "tools"),
        bare=isinstance(data, list),
    )


def _write_call(call: ToolCall) -> dict[str, Any]:
    extra = dict(call.extra)
    function = {"name": call.name, "arguments": call.arguments, **extra.pop("function", {})}
    return {"id": call.call_id, "type": "function", **extra, "function": function}


def _write_tool(tool: Tool) -> dict[str, Any]:
    return dict(tool.extra) if tool.extra else {"type": "function", "function": function_fields(tool)}


def write_messages(items: tuple[Item, ...]) -> list[dict[str, Any]]:
    """Regroup the flat items into wire messages: a call joins the assistant message before it."""
    messages: list[dict[str, Any]] = []
    open_message: tuple[dict[str, Any], int | None] | None = None
    for item in items:
        if isinstance(item, ToolCall):
            index = item.origin.index if item.origin else None
            if open_message is None or (index is not None and open_message[1] not in (None, index)):
                open_message = ({"role": "assistant", "content": None}, index)
                messages.append(open_message[0])
            open_message[0].setdefault("tool_calls", []).append(_write_call(item))
            continue
        if isinstance(item, ToolResult):
            wire: dict[str, Any] = {"role": "tool", "tool_call_id": item.call_id}
            put_content(wire, "content", item.content)
            wire.update(item.extra)
            open_message = None
        else:
            wire = {"role": item.role}
            put_content(wire, "content", item.content)
            if item.name is not None:
                wire["name"] = item.name
            wire.update(item.extra)
            is_assistant = item.role == "assistant"
            open_message = (wire, item.origin.index if item.origin else None) if is_assistant else None
        messages.append(wire)
    return messages


def write(conversation: Conversation) -> Any:
    messages = write_messages(conversation.items)
    if conversation.bare:
        return messages
    body: dict[str, Any] = {}
    if conversation.model is not None:
        body["model"] = conversation.model
    body["messages"] = messages
    if conversation.tools:
        body["tools"] = [_write_tool(tool) for tool in conversation.tools]
    body.update(conversation.extra)
    return body

