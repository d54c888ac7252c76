"""The item builder: a result for a just-added call lands after it, call ids are made in the
format's style, and editing never drops an image or other non-text block."""

from __future__ import annotations

import re

import pytest

from playground import formats
from playground.conversation import Part, ToolCall, ToolResult
from playground.errors import InputError
from playground.workbench import builder
from playground.workbench.builder import Fields

from .test_compaction import book_scenario

IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}


def _with_new_call(format: str):
    """A conversation in ``format`` with a call appended the way the page appends it."""
    start = formats.read(formats.write(formats.read(book_scenario()), format)) if format != "chat" else \
        formats.read(book_scenario())
    grown = builder.insert_item(start, len(start.items), Fields("tool_call", tool="read_file",
                                                                arguments='{"path": "notes.md"}'))
    return start, grown


@pytest.mark.parametrize("format", ["chat", "responses", "anthropic", "native"])
def test_a_result_for_a_just_added_call_follows_the_call(format):
    start, grown = _with_new_call(format)
    call = next(p for p in range(len(grown.items) - 1, -1, -1) if isinstance(grown.items[p], ToolCall))
    # the page selects what sits at the insert position: in Chat and Anthropic that is the assistant message
    # that carries the call, not the call itself
    selected = len(start.items)
    assert builder.call_at(grown, selected) == call
    done, position = builder.add_result(grown, call, "# Notes\nBuy milk.")
    result = done.items[position]
    assert isinstance(result, ToolResult) and position > call
    assert result.call_id == grown.items[call].call_id and result.name == "read_file"
    assert builder.open_calls(done, len(done.items)) == []
    assert formats.read(formats.write(done), format) == done  # a valid request in its format


def test_a_result_for_one_of_several_calls_goes_after_the_whole_turn():
    body = book_scenario()
    body["messages"][4]["tool_calls"].append({"id": "c2b", "type": "function",
                                              "function": {"name": "read_file", "arguments": '{"path": "b"}'}})
    body["messages"].insert(6, {"role": "tool", "tool_call_id": "c2b", "content": "b"})
    del body["messages"][5]  # c2 (the first call of the turn) has no result now
    conversation = formats.read(body)
    first = next(p for p, item in enumerate(conversation.items) if isinstance(item, ToolCall) and item.call_id == "c2")
    done, position = builder.add_result(conversation, first, "results")
    assert position == first + 3  # after both calls and the result c2b already has
    assert formats.write(done)["messages"][5:7] == [{"role": "tool", "tool_call_id": "c2b", "content": "b"},
                                                    {"role": "tool", "tool_call_id": "c2", "content": "results"}]


def test_an_answered_call_or_a_plain_message_stands_for_no_call():
    book = formats.read(book_scenario())
    assert builder.call_at(book, 3) is None  # c1, answered at item 4
    assert builder.call_at(book, 1) is None  # the user's message
    with pytest.raises(InputError, match="item 1: not a tool call"):
        builder.add_result(book, 1, "x")


@pytest.mark.parametrize(("format", "pattern"), [("chat", r"call_[A-Za-z0-9]{24}"),
                                                 ("responses", r"call_[A-Za-z0-9]{24}"),
                                                 ("anthropic", r"toolu_[A-Za-z0-9]{24}"),
                                                 ("native", r"call_[A-Za-z0-9]{24}")])
def test_a_new_call_gets_an_id_in_its_formats_style(format, pattern):
    _, grown = _with_new_call(format)
    ids = [item.call_id for item in grown.items if isinstance(item, ToolCall)]
    assert re.fullmatch(pattern, ids[-1]) and ids.count(ids[-1]) == 1


def test_editing_the_text_of_a_message_with_an_image_keeps_the_image():
    body = {"messages": [{"role": "user", "content": [{"type": "text", "text": "What is this?"}, IMAGE]}]}
    conversation = formats.read(body)
    untouched = builder.replace_item(conversation, 0, builder.fields_of(conversation.items[0]))
    assert formats.write(untouched) == body
    edited = builder.replace_item(conversation, 0, Fields("message", "user", "And this?"))
    assert formats.write(edited)["messages"][0]["content"] == [{"type": "text", "text": "And this?"}, IMAGE]
    assert builder.non_text_parts(conversation.items[0]) == ["image_url"]


def test_an_image_only_message_keeps_its_image_or_refuses_new_text_with_the_reason():
    body = {"messages": [{"role": "user", "content": [IMAGE]}]}
    conversation = formats.read(body)
    assert formats.write(builder.replace_item(conversation, 0, builder.fields_of(conversation.items[0]))) == body
    with pytest.raises(InputError, match=r"item 0\.text: this item also holds image_url content and has no text "
                                         r"block to put it in"):
        builder.replace_item(conversation, 0, Fields("message", "user", "caption"))


def test_an_untouched_empty_assistant_message_stays_null():
    book = formats.read(book_scenario())
    saved = builder.replace_item(book, 2, builder.fields_of(book.items[2]))
    assert formats.write(saved) == book_scenario()


def test_edited_content_changes_only_the_one_text_block():
    content = (Part("text", "a"), Part("image", None, {"source": "x"}))
    assert builder.edited_content(content, "b", "item 0") == (Part("text", "b"), content[1])
    assert builder.edited_content((Part("text", "a"), Part("text", "b")), "c", "item 0") == "c"
    with pytest.raises(InputError, match="2 text blocks"):
        builder.edited_content((Part("text", "a"), Part("image"), Part("text", "b")), "c", "item 0")
    assert builder.edited_content(None, "", "item 0") is None
