"""Conversion between the API formats, saying what it loses.

A conversation is written in another format through ``convert``: it keeps every message, tool
call and result the target can hold, rewrites what the target spells differently (text part
types, system text, arguments that are not JSON), and drops what it cannot hold. Every such loss
becomes one line in the converted conversation's ``notes``, which the page and the reports show.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from typing import Any

from ..conversation import (
    ABSENT,
    EMPTY,
    Content,
    Conversation,
    Item,
    Message,
    Part,
    ToolCall,
    ToolResult,
    content_text,
    frozen,
    has_non_text,
    is_instruction,
)
from ..errors import InputError

_TITLES = {"chat": "Chat Completions", "responses": "Responses", "anthropic": "Anthropic Messages",
           "native": "the native format"}
# Non-text parts each target holds as they are (same type, same keys); any other non-text part is dropped.
_OWN_PARTS = {
    "chat": {"image_url", "input_audio", "file"},
    "responses": {"input_image", "input_file"},
    "anthropic": {"image", "document", "search_result"},
}
_MAX_TOKENS_KEYS = {"chat": ("max_completion_tokens", "max_tokens"), "responses": ("max_output_tokens",),
                    "anthropic": ("max_tokens",)}
_STANDARD_TOOL_KEYS = {"type", "function", "name", "description", "parameters", "input_schema"}
RAW_ARGUMENTS = "_raw"  # Anthropic's `input` must be an object: other argument text is kept under this key


class _Losses:
    """Counts of what a conversion drops or moves, written out as notes at the end."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.counts: Counter[str] = Counter()
        self.lines: list[str] = []

    def add(self, what: str, count: int = 1) -> None:
        self.counts[what] += count

    def notes(self) -> tuple[str, ...]:
        title = _TITLES[self.target]
        counted = [f"{what} ({count})" for what, count in self.counts.items()]
        return tuple(f"Converting to {title}: {line}" for line in [*self.lines, *counted])


def convert(conversation: Conversation, target: str) -> Conversation:
    """The conversation as ``target`` can hold it; each loss is added to ``notes``. Converting to
    the conversation's own format changes nothing."""
    if target == conversation.format:
        return conversation
    if target not in _TITLES:
        raise InputError(f"cannot convert to this format (choose one of {', '.join(_TITLES)})", value=target)
    losses = _Losses(target)
    items = _rejoined(conversation.items, target, losses)
    instructions = _content(conversation.instructions, "system", target, losses, "instructions")
    if target == "anthropic":
        instructions, items = _system_to_top(instructions, items, losses)
    elif target == "chat" and instructions not in (None, ABSENT):
        items.insert(0, Message(role="system", content=instructions))
        instructions = None
    elif target == "responses" and isinstance(instructions, tuple):  # `instructions` is one string there
        instructions = content_text(instructions)
    return replace(conversation, format=target, items=tuple(items), tools=_tools(conversation, losses),
                   extra=_request_keys(conversation, target, losses), bare=False,
                   instructions=None if instructions is ABSENT else instructions,
                   notes=conversation.notes + losses.notes())


def _rejoined(items: tuple[Item, ...], target: str, losses: _Losses) -> list[Item]:
    """Converted items; messages that were blocks of one source message (Anthropic keeps one item per
    block) become one message again, so a user's text and image stay together."""
    out: list[Item] = []
    last_index: int | None = None
    for item in items:
        converted = _item(item, target, losses)
        if converted is None:
            continue
        index = item.origin.index if item.origin is not None and item.origin.block is not None else None
        previous = out[-1] if out else None
        if (index is not None and index == last_index and isinstance(converted, Message)
                and isinstance(previous, Message) and previous.role == converted.role):
            merged = _parts(previous, target) + _parts(converted, target)
            out[-1] = replace(previous, content=_finished(merged, converted.role, target))
        else:
            out.append(converted)
        last_index = index
    return out


def _parts(message: Message, target: str) -> tuple[Part, ...]:
    if isinstance(message.content, tuple):
        return message.content
    text = message.content if isinstance(message.content, str) else ""
    return (Part(_text_type(message.role, target), text),) if text else ()


def _text_type(role: str, target: str) -> str:
    if target != "responses":
        return "text"
    return "output_text" if role == "assistant" else "input_text"


def _content(content: Content, role: str, target: str, losses: _Losses, what: str) -> Content:
    """Content with text parts spelled the target's way and parts it cannot hold dropped."""
    if not isinstance(content, tuple):
        return content
    parts: list[Part] = []
    for part in content:
        if part.text is not None:
            if target == "anthropic" and not part.text.strip():
                continue  # Anthropic refuses blank text blocks; a blank part says nothing
            if part.extra:
                losses.add(f"keys of text parts dropped: {', '.join(sorted(part.extra))}")
            parts.append(Part(_text_type(role, target), part.text))
        elif target == "native" or part.type in _OWN_PARTS.get(target, ()):
            parts.append(part)
        elif (image := _image(part, role, target)) is not None:
            parts.append(image)
        else:
            losses.add(f"'{part.type}' parts in {what} dropped: {_TITLES[target]} cannot hold them")
    return _finished(tuple(parts), role, target)


def _finished(parts: tuple[Part, ...], role: str, target: str) -> Content:
    if target == "responses" and role == "assistant" and parts and all(p.text is not None for p in parts):
        return "".join(p.text or "" for p in parts)  # an assistant turn sent back is plain text there
    return parts


def _image_url(part: Part) -> str | None:
    """An image part's address in any of the three formats: a URL, or a ``data:`` URL for inline bytes."""
    value = part.extra.get("image_url") if part.type in ("image_url", "input_image") else None
    if isinstance(value, dict):
        value = value.get("url")
    source = part.extra.get("source") if part.type == "image" else None
    if isinstance(source, dict) and source.get("type") == "url":
        value = source.get("url")
    elif isinstance(source, dict) and source.get("type") == "base64":
        value = f"data:{source.get('media_type')};base64,{source.get('data')}"
    return value if isinstance(value, str) else None


def _image(part: Part, role: str, target: str) -> Part | None:
    """The same image in the target's own part, where the target holds images for this role (a user
    message; a tool result in Responses and Anthropic). None when it cannot be carried over."""
    url = _image_url(part)
    if url is None or role not in ("user", "tool") or (role == "tool" and target == "chat"):
        return None
    if target == "chat":
        return Part("image_url", None, frozen({"image_url": {"url": url}}))
    if target == "responses":
        return Part("input_image", None, frozen({"image_url": url, "detail": "auto"}))
    head, _, data = url.partition(";base64,")
    if url.startswith("data:") and data:
        return Part("image", None, frozen({"source": {"type": "base64", "media_type": head[5:], "data": data}}))
    return Part("image", None, frozen({"source": {"type": "url", "url": url}}))


def _item(item: Item, target: str, losses: _Losses) -> Item | None:
    kind = item.extra.get("type")
    # `type` is rewritten, not lost; an `is_error: false` says nothing the target needs
    dropped = sorted(key for key, value in item.extra.items() if key != "type" and (key, value) != ("is_error", False))
    if dropped:
        losses.add(f"item keys dropped: {', '.join(dropped)}")
    if isinstance(item, ToolCall):
        return _call(item, target, losses, kind)
    if isinstance(item, ToolResult):
        if kind not in (None, "function_call_output"):
            losses.add(f"{kind} items written as plain tool results")
        if item.is_error and target in ("chat", "responses"):
            losses.add(f"error flags on tool results dropped ({_TITLES[target]} has no is_error; the text stays)")
        content = _content(item.content, "tool", target, losses, "tool results")
        required = content in (None, ABSENT) and target in ("chat", "responses")  # there a result needs content
        return replace(item, origin=None, extra=EMPTY, content="" if required or content == () else content)
    if kind not in (None, "message"):
        losses.add(f"'{kind}' items dropped: only the Responses API holds them")
        return None
    if item.content in (None, ABSENT):
        return None  # an empty envelope (a Chat assistant message that only carried tool calls)
    if item.name is not None and target != "chat":
        losses.add(f"message names dropped ({_TITLES[target]} has no name field)")
    content = _content(item.content, item.role, target, losses, f"{item.role} messages")
    if content == () and item.content != ():
        return None  # every part was one the target cannot hold: noted above, part by part
    if target == "anthropic" and not content_text(content).strip() and not has_non_text(content):
        return None  # Anthropic refuses blank text blocks; a blank message says nothing
    return Message(role=item.role, content=content, name=item.name if target == "chat" else None)


def _call(call: ToolCall, target: str, losses: _Losses, kind: str | None) -> ToolCall:
    if kind not in (None, "function", "function_call"):
        losses.add(f"{kind} items written as function calls (their input is kept as the arguments text)")
    arguments = call.arguments
    if target == "anthropic" and call.parsed_arguments() is None:
        arguments = json.dumps({RAW_ARGUMENTS: call.arguments}, ensure_ascii=False)
        losses.add(f"tool call arguments that are not a JSON object kept as {{\"{RAW_ARGUMENTS}\": <text>}} "
                   "(Anthropic's input must be an object)")
    return replace(call, origin=None, extra=EMPTY, arguments=arguments)




def _system_to_top(instructions: Content, items: list[Item], losses: _Losses) -> tuple[Content, list[Item]]:
    """Anthropic has no system role among its messages: all system text goes to ``system``;
    a system message that stood after the conversation began is moved, and the note says where from."""
    texts = [content_text(instructions)] if instructions not in (None, ABSENT) else []
    kept: list[Item] = []
    for position, item in enumerate(items):
        if not is_instruction(item):
            kept.append(item)
            continue
        texts.append(content_text(item.content))
        if kept:
            losses.lines.append(f"a {item.role} message from the middle of the conversation (item {position}) "
                                "moved to the top-level system text")
    return "\n\n".join(text for text in texts if text) or None, kept


def _tools(conversation: Conversation, losses: _Losses) -> tuple:
    tools = []
    for tool in conversation.tools:
        if tool.kind != "function":
            losses.add(f"'{tool.kind}' tool definitions dropped: only functions carry over")
            continue
        fields = set(tool.extra) | set(tool.extra.get("function") or {})
        if fields - _STANDARD_TOOL_KEYS:
            losses.add(f"tool definition keys dropped: {', '.join(sorted(fields - _STANDARD_TOOL_KEYS))}")
        tools.append(replace(tool, extra=EMPTY))
    return tuple(tools)


def _request_keys(conversation: Conversation, target: str, losses: _Losses) -> Any:
    """Only the output-token limit carries over (under the target's name); other request keys are
    format-specific and dropped, by name."""
    extra: dict[str, Any] = {}
    source_keys = _MAX_TOKENS_KEYS.get(conversation.format, ())
    limit = next((conversation.extra[key] for key in source_keys if key in conversation.extra), None)
    if limit is not None and target in _MAX_TOKENS_KEYS:
        extra[_MAX_TOKENS_KEYS[target][0]] = limit
    dropped = sorted(key for key in conversation.extra if key not in source_keys)
    if dropped:
        losses.lines.append(f"request keys dropped: {', '.join(dropped)}")
    return extra or EMPTY
