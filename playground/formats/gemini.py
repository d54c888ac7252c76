"""Gemini API contents (``Content[]``: ``{"role": "user" | "model", "parts": [...]}``), read as a
playground-native conversation (counted like Chat, as the Gemini CLI session reader does).

Where they come from: a ``generateContent`` request body (``contents``, ``systemInstruction``,
``tools[].functionDeclarations``), and the files Gemini CLI saves the chat's history in
(google-gemini/gemini-cli, ``packages/core/src/core/logger.ts``): ``/chat save <tag>`` writes
``~/.gemini/tmp/<project>/checkpoint-<tag>.json`` as the ``Content[]`` itself (later versions as
``{"history": Content[], ...}``), and a tool call's checkpoint (``checkpoints/*.json``) holds it as
``clientHistory``. Parts: ``text`` (a ``thought: true`` part is Gemini's thinking, which the API
does not take back: counted in the notes), ``functionCall`` (a call; its ``id`` when the API gave
one, else one made from its place), ``functionResponse`` (the result of the earliest call of that id,
or of that name, not answered yet; an ``error`` in its response marks an error), ``executableCode`` /
``codeExecutionResult`` (their text). ``inlineData`` and ``fileData`` (images, files) are left out and
counted in the notes: the meter has no rule for them. Role ``function`` (older requests) holds results.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from ..conversation import Conversation
from ..words import plural
from . import native
from ._reader import Reader, as_log, counted
from ._wire import check, need

NAME = "gemini"
TITLE = "Gemini API contents (a generateContent request, or a Gemini CLI chat checkpoint)"
_ROLES = ("user", "model", "function")
_HISTORY_KEYS = ("contents", "history", "clientHistory")


def _is_content(value: Any) -> bool:
    return isinstance(value, dict) and value.get("role") in _ROLES and isinstance(value.get("parts"), list)


def _contents(data: Any) -> tuple[list[Any], str] | None:
    """The ``Content[]`` in ``data`` and where it was, or None when there is none."""
    if isinstance(data, list):
        return data, "document"
    if isinstance(data, dict):
        for key in _HISTORY_KEYS:
            if isinstance(data.get(key), list) and data[key]:
                return data[key], key
    return None


def looks_like(data: Any) -> int:
    found = _contents(data)
    return 6 if found and found[0] and all(map(_is_content, found[0])) else 0


def _text(part: dict) -> str | None:
    """A part's text as the model reads it, or None for a part that is no text."""
    if isinstance(part.get("text"), str):
        return part["text"]
    code = part.get("executableCode")
    if isinstance(code, dict) and isinstance(code.get("code"), str):
        return code["code"]
    outcome = part.get("codeExecutionResult")
    if isinstance(outcome, dict) and isinstance(outcome.get("output"), str):
        return outcome["output"]
    return None


def response_text(function: dict) -> tuple[str, bool]:
    """A ``functionResponse``'s content (its ``output`` or ``error`` if it has one, else its JSON) and
    whether it is an error."""
    response = function.get("response")
    if isinstance(response, dict) and ("output" in response or "error" in response):
        value = response.get("output", response.get("error"))
        return (value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)), "error" in response
    return json.dumps(response, ensure_ascii=False), False


class _History:
    """Native items built from the contents, and what the notes count."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.open: list[tuple[str, str]] = []  # (call id, name) of calls no result answered yet, in order
        self.left: Counter[str] = Counter()

    def add(self, content: dict, place: str) -> None:
        role = need(content, "role", str, place)
        texts: list[str] = []
        for position, part in enumerate(check(need(content, "parts", list, place), list, f"{place}.parts")):
            at = f"{place}.parts[{position}]"
            check(part, dict, at)
            if part.get("thought") is True:
                self.left["thought part"] += 1
            elif isinstance(part.get("functionCall"), dict):
                self._flush(role, texts)
                self._call(part["functionCall"], at)
            elif isinstance(part.get("functionResponse"), dict):
                self._flush(role, texts)
                self._result(part["functionResponse"], at)
            elif (text := _text(part)) is not None:
                texts.append(text)
            else:
                self.left[next(iter(part), "empty") + " part"] += 1
        self._flush(role, texts)

    def _flush(self, role: str, texts: list[str]) -> None:
        if texts and role != "function":
            self.items.append({"type": "message", "role": "assistant" if role == "model" else "user",
                               "content": "".join(texts)})
        texts.clear()

    def _call(self, call: dict, place: str) -> None:
        name = need(call, "name", str, f"{place}.functionCall")
        call_id = call.get("id") if isinstance(call.get("id"), str) else f"{name}-{len(self.items)}"
        self.open.append((call_id, name))
        self.items.append({"type": "tool_call", "call_id": call_id, "name": name, "arguments": call.get("args") or {}})

    def _result(self, function: dict, place: str) -> None:
        name = function.get("name")
        wanted = function.get("id")
        match = next((pair for pair in self.open if pair[0] == wanted), None) if isinstance(wanted, str) else None
        match = match or next((pair for pair in self.open if pair[1] == name), None)
        if match is None:
            self.left["result of no call"] += 1
            return
        self.open.remove(match)
        text, error = response_text(function)
        self.items.append({"type": "tool_result", "call_id": match[0], "content": text,
                           "status": "error" if error else "success"})


def _instructions(data: Any) -> str | None:
    value = data.get("systemInstruction") or data.get("system_instruction") if isinstance(data, dict) else None
    if isinstance(value, str):
        return value
    parts = value.get("parts") if isinstance(value, dict) else None
    texts = [part["text"] for part in parts or [] if isinstance(part, dict) and isinstance(part.get("text"), str)]
    return "\n".join(texts) or None


def _tools(data: Any) -> list[dict[str, Any]]:
    """A request's ``tools[].functionDeclarations`` as native tools."""
    tools = data.get("tools") if isinstance(data, dict) else None
    found = []
    for tool in tools if isinstance(tools, list) else []:
        declarations = tool.get("functionDeclarations") if isinstance(tool, dict) else None
        for declaration in declarations if isinstance(declarations, list) else []:
            if isinstance(declaration, dict) and isinstance(declaration.get("name"), str):
                found.append({"name": declaration["name"], "description": declaration.get("description", ""),
                              "parameters": declaration.get("parameters") or declaration.get("parametersJsonSchema")
                              or {}})
    return found


def read(data: Any) -> Conversation:
    found = _contents(data)
    if found is None:
        check(data, list, "document")
        found = ([], "document")
    contents, key = found
    history = _History()
    for position, content in enumerate(contents):
        place = f"{key}[{position}]" if key != "document" else f"[{position}]"
        history.add(check(content, dict, place), place)
    body: dict[str, Any] = {"format": native.MARKER, "items": history.items, "tools": _tools(data)}
    if isinstance(data, dict) and isinstance(data.get("model"), str):
        body["model"] = data["model"].removeprefix("models/")
    if (instructions := _instructions(data)) is not None:
        body["instructions"] = instructions
    notes = [f"Read as Gemini API contents: {plural(len(contents), 'content')} became "
             f"{plural(len(history.items), 'item')}, sent as Chat (tokens counted as for Chat; Gemini's own "
             "tokenizer is not offline)."]
    if history.left:
        notes.append(f"Left out: {counted(history.left)} (thinking is not sent back; the meter has no rule for "
                     "images and files).")
    return as_log(native.read(body), NAME, notes)


READER = Reader(NAME, TITLE, looks_like, read)
