"""Gemini API contents: a generateContent request, and the Content[] Gemini CLI saves a chat's
history in (``/chat save``, a tool call's checkpoint), read as one conversation — before, a list
of ``{role, parts}`` was taken for a Chat message list and read as empty messages."""

from __future__ import annotations

import json

import pytest

from playground import formats
from playground.conversation import Message, ToolCall, ToolResult, pairs
from playground.meter.tokens import Meter

CONTENTS = [
    {"role": "user", "parts": [{"text": "This is the Gemini CLI. We are setting up the context for our chat."}]},
    {"role": "model", "parts": [{"text": "Got it. Thanks for the context!"}]},
    {"role": "user", "parts": [{"text": "Why does parse_date fail?"}, {"inlineData": {"mimeType": "image/png",
                                                                                      "data": "iVBORw0KGgo="}}]},
    {"role": "model", "parts": [{"text": "Reading the module.", "thought": True},
                                {"functionCall": {"id": "c1", "name": "read_file", "args": {"path": "src/dates.py"}}},
                                {"functionCall": {"name": "run_shell_command", "args": {"command": "pytest -q"}}}]},
    {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command",
                                                     "response": {"error": "1 failed: test_trailing_z"}}},
                               {"functionResponse": {"id": "c1", "name": "read_file",
                                                     "response": {"output": "def parse_date(text):\n    ..."}}}]},
    {"role": "model", "parts": [{"text": "It rejects a trailing Z."}]},
]
REQUEST = {"model": "models/gemini-2.5-pro", "contents": CONTENTS,
           "systemInstruction": {"parts": [{"text": "You are a coding agent."}]},
           "tools": [{"functionDeclarations": [{"name": "read_file", "description": "Read a file",
                                                "parameters": {"type": "object"}}]}]}


def test_a_generate_content_request_is_read_whole():
    conversation = formats.loads(json.dumps(REQUEST))
    assert formats.detect(REQUEST) == "gemini" and conversation.source == "gemini"
    assert conversation.model == "gemini-2.5-pro" and conversation.instructions == "You are a coding agent."
    assert [tool.name for tool in conversation.tools] == ["read_file"]
    kinds = [(type(item).__name__, getattr(item, "role", None) or item.name) for item in conversation.items]
    assert kinds == [("Message", "user"), ("Message", "assistant"), ("Message", "user"),
                     ("ToolCall", "read_file"), ("ToolCall", "run_shell_command"),
                     ("ToolResult", "run_shell_command"), ("ToolResult", "read_file"), ("Message", "assistant")]
    results = {item.name: item for item in conversation.items if isinstance(item, ToolResult)}
    assert results["run_shell_command"].is_error and not results["read_file"].is_error
    assert results["read_file"].content == "def parse_date(text):\n    ..."
    assert len(pairs(conversation.items)) == 2  # each result with its call: by id, else by name
    assert "Left out: inlineData part 1, thought part 1" in " ".join(conversation.notes)


@pytest.mark.parametrize("saved", [CONTENTS, {"history": CONTENTS, "authType": "oauth-personal"},
                                   {"clientHistory": CONTENTS, "toolCall": {"name": "replace"}}],
                         ids=["chat-save", "chat-save-later", "tool-checkpoint"])
def test_gemini_cli_checkpoints_read_as_the_request_holds_them(saved):
    from_request = formats.read(REQUEST)
    conversation = formats.loads(json.dumps(saved))
    assert conversation.items == from_request.items
    assert formats.detect(saved) == "gemini"


def test_contents_count_and_export_as_a_chat_request():
    conversation = formats.loads(json.dumps(REQUEST))
    exported = formats.write(conversation, "chat")
    again = formats.read(exported)

    def tool_items(c):
        return [(type(i).__name__, i.call_id, i.name, getattr(i, "content", None)) for i in c.items
                if isinstance(i, ToolCall | ToolResult)]

    assert tool_items(again) == tool_items(conversation) and len(tool_items(again)) == 4
    assert [i.content for i in again.items if isinstance(i, Message) and i.role == "user"][-1] == (
        [i.content for i in conversation.items if isinstance(i, Message) and i.role == "user"][-1])
    assert Meter("gemini-2.5-pro").count(conversation).total > 60  # the calls and results are counted


def test_a_list_of_chat_messages_is_still_chat():
    assert formats.detect([{"role": "user", "content": "hi"}]) == "chat"
