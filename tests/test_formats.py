"""Import and export: every format round-trips, detection picks the right reader, and bad
input is named precisely."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playground import formats
from playground.conversation import ABSENT, Message, ToolCall, ToolResult
from playground.errors import InputError

from .conftest import SHARED, TOKEN_COUNTS, TRACES, load_shared, shared
from .strategies import REQUESTS


def test_real_traces_round_trip_exactly(trace):
    conversation = formats.read(trace)
    assert conversation.format == "chat"
    assert formats.write(conversation) == trace


@pytest.mark.parametrize("name", ["openai_cookbook_cases.json", "recorded_api_cases.json"])
def test_recorded_requests_round_trip_exactly(name):
    for case in load_shared(TOKEN_COUNTS / name):
        body = {key: case[key] for key in ("model", "messages", "tools", "tool_choice") if key in case}
        body.update(case.get("other_request_params") or {})
        assert formats.write(formats.read(body, "chat")) == body


@pytest.mark.parametrize("name", sorted(REQUESTS))
@given(data=st.data())
def test_generated_requests_round_trip(name, data):
    wire = data.draw(REQUESTS[name])
    conversation = formats.read(wire)
    assert conversation.format == name, "detection"
    assert formats.write(conversation) == wire
    assert formats.read(formats.write(conversation)) == conversation


@pytest.mark.parametrize("source", sorted(REQUESTS))
@pytest.mark.parametrize("target", sorted(REQUESTS))
@given(data=st.data())
def test_conversion_keeps_every_call_and_result(source, target, data):
    original = formats.read(data.draw(REQUESTS[source]))
    converted = formats.read(formats.write(original, target), target)
    def tool_items(c):
        return [(type(i).__name__, i.call_id, i.name) for i in c.items if isinstance(i, ToolCall | ToolResult)]
    assert tool_items(converted) == tool_items(original)


def test_reused_call_ids_pair_with_the_latest_call():
    trace = load_shared(TRACES / "sweagent_marshmallow-1867_function_calling.openai.json")
    conversation = formats.read(trace)
    seen: dict[str, str] = {}
    for item in conversation.items:
        if isinstance(item, ToolCall):
            seen[item.call_id] = item.name
        elif isinstance(item, ToolResult):
            assert item.name == seen[item.call_id]
    ids = [item.call_id for item in conversation.items if isinstance(item, ToolCall)]
    assert len(ids) > len(set(ids)), "this trace reuses call ids"


def test_chat_message_shapes_are_modelled():
    body = {"messages": [
        {"role": "assistant", "tool_calls": [
            {"id": "1", "type": "function", "function": {"name": "a", "arguments": "{}"}},
            {"id": "2", "type": "function", "function": {"name": "b", "arguments": "{\"x\": 1}"}}]},
        {"role": "tool", "tool_call_id": "1", "name": "a", "content": [{"type": "text", "text": "ok"}]},
        {"role": "tool", "tool_call_id": "2", "content": None},
        {"role": "user", "name": "bob", "content": "hi"},
    ]}
    items = formats.read(body).items
    kinds = [type(i).__name__ for i in items]
    assert kinds == ["Message", "ToolCall", "ToolCall", "ToolResult", "ToolResult", "Message"]
    assert items[0].content is ABSENT
    assert (items[2].origin.index, items[2].origin.block) == (0, 1)
    assert items[3].name == "a" and items[4].name == "b"
    assert items[5].name == "bob"


def test_anthropic_blocks_become_items_with_block_origins():
    body = {"system": "be brief", "messages": [
        {"role": "user", "content": "read it"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "ok"},
            {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "nope", "is_error": True}]},
    ]}
    conversation = formats.read(body)
    assert conversation.format == "anthropic"
    call, result = conversation.items[2], conversation.items[3]
    assert isinstance(call, ToolCall) and json.loads(call.arguments) == {"path": "a"}
    assert (call.origin.index, call.origin.block) == (1, 1)
    assert isinstance(result, ToolResult) and result.is_error and result.name == "read_file"
    assert conversation.instructions == "be brief"


def test_responses_items_and_instructions():
    body = {"model": "gpt-5", "instructions": "be brief", "input": [
        {"role": "user", "content": "search"},
        {"type": "function_call", "call_id": "c", "name": "search_web", "arguments": "{\"query\": \"q\"}"},
        {"type": "function_call_output", "call_id": "c", "output": "results"},
    ]}
    conversation = formats.read(body)
    assert conversation.format == "responses"
    assert [type(i).__name__ for i in conversation.items] == ["Message", "ToolCall", "ToolResult"]
    assert conversation.items[2].name == "search_web"


def test_format_override_beats_detection():
    messages = [{"role": "user", "content": "hi"}]
    assert formats.read(messages).format == "chat"
    assert formats.read(messages, "responses").format == "responses"


@pytest.mark.parametrize(("data", "where", "message"), [
    ({"messages": [{"role": "tool", "tool_call_id": "ghost", "content": "x"}]}, "messages[0]", "ghost"),
    ({"messages": [{"role": "assistant", "tool_calls": [{"id": "1", "function": {"name": "a"}}]}]},
     "messages[0].tool_calls[0].function", "missing 'arguments'"),
    ({"messages": [{"content": "no role"}]}, "messages[0]", "missing 'role'"),
    ({"messages": "nope"}, "", "unrecognised format"),
    ({"format": "compaction-playground", "items": [{"type": "tool_result", "call_id": "z", "content": ""}]},
     "items[0]", "matches no earlier tool call"),
    ({"format": "compaction-playground", "items": [{"type": "message", "role": "user", "content": 5}]},
     "items[0].content", "expected a list"),
    ({"system": "s", "messages": [{"role": "user", "content": [{"type": "tool_use", "id": "1", "name": "a",
                                                                "input": {}}]}]},
     "messages[0].content[0]", "cannot appear in a user message"),
    ({"input": [{"type": "function_call", "call_id": "c", "name": "a", "arguments": {}}]},
     "input[0].arguments", "expected a string"),
])
def test_malformed_input_names_the_place(data, where, message):
    with pytest.raises(InputError) as caught:
        formats.read(data)
    assert message in str(caught.value)
    assert str(caught.value).startswith(where)


def test_invalid_json_gives_line_and_column():
    with pytest.raises(InputError, match=r"line 3, column 1: invalid JSON"):
        formats.loads('{"messages": [\n  {"role": "user"}\n')


def test_a_log_cut_off_mid_line_is_read_without_its_last_line_and_says_so():
    """An agent killed while writing leaves half a line at the end of its log: the rest is the run."""
    lines = shared(SHARED / "sessions" / "claude-code-session-196820da.jsonl").read_bytes().rstrip(b"\n").split(b"\n")
    whole = formats.loads(b"\n".join(lines[:-1]))
    cut = formats.loads(b"\n".join([*lines[:-1], lines[-1][:len(lines[-1]) // 2]]))
    assert cut.items == whole.items
    assert (cut.format, cut.source) == (whole.format, whole.source) == ("anthropic", "claude-code")
    assert cut.notes[:-1] == whole.notes
    assert cut.notes[-1].startswith(f"line {len(lines)}, the last, stops mid-value (invalid JSON")


def test_a_broken_line_before_the_last_is_an_error_that_names_it():
    lines = shared(SHARED / "sessions" / "claude-code-session-196820da.jsonl").read_bytes().split(b"\n")
    lines[4] = lines[4][:20]
    with pytest.raises(InputError, match=r"^line 5, column \d+: invalid JSON"):
        formats.loads(b"\n".join(lines))


@pytest.mark.parametrize("depth", [65, 5000, 200_000])
def test_deep_nesting_is_refused_with_a_location(depth):
    with pytest.raises(InputError, match="nested more than 64 levels") as caught:
        formats.parse_json("[" * depth + "]" * depth)
    assert caught.value.where


@pytest.mark.parametrize(("text", "message"), [
    ("", "the file is empty"), (b"", "the file is empty"), (b"\xef\xbb\xbf", "the file is empty"),
    ("\n \n", "the file is empty (nothing but white space)")])
def test_an_empty_file_says_so(text, message):
    """Not JSON's "Expecting value", which reads as a broken file; the same for JSON, JSONL and rules."""
    for read in (formats.loads, formats.parse_json):
        with pytest.raises(InputError) as caught:
            read(text)
        assert str(caught.value) == message


def test_non_utf8_bytes_are_refused():
    with pytest.raises(InputError, match="not UTF-8"):
        formats.parse_json(b'{"a": "\xff"}')


def test_built_items_get_grouped_into_valid_wire_messages():
    items = (Message(role="user", content="go"), Message(role="assistant", content="calling"),
             ToolCall(call_id="1", name="a", arguments="{}"), ToolCall(call_id="2", name="b", arguments="{}"),
             ToolResult(call_id="1", content="r1", name="a"), ToolResult(call_id="2", content="r2", name="b"))
    built = formats.Conversation(items=items, format="chat")
    chat = formats.write(built)["messages"]
    assert [m["role"] for m in chat] == ["user", "assistant", "tool", "tool"]
    assert [c["id"] for c in chat[1]["tool_calls"]] == ["1", "2"]
    anthropic = formats.write(built, "anthropic")["messages"]
    assert [m["role"] for m in anthropic] == ["user", "assistant", "user"]
    assert [b["type"] for b in anthropic[1]["content"]] == ["text", "tool_use", "tool_use"]


# Call ids that repeat: Anthropic refuses them -----------------------------------------------------------------

REFUSED = "Anthropic refuses a request whose tool_use ids repeat"


def _reused_id_request() -> dict:
    """An Anthropic request whose two calls share one id, each answered before the next (as SWE-agent
    reuses its ids): pairing is no guess here, but the Messages API refuses the request."""
    def call(command: str) -> list[dict]:
        return [{"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "bash",
                                                   "input": {"command": command}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]}]

    return {"model": "claude-sonnet-4-5", "max_tokens": 1024,
            "messages": [{"role": "user", "content": "check the tree"}, *call("ls"), *call("pwd")]}


def test_an_anthropic_request_whose_calls_share_an_id_gets_a_note_in_the_cli_and_on_the_page(tmp_path):
    from .test_app_agent_uploads import upload
    from .test_cli import cli
    from .test_replay_app import start

    conversation = formats.read(_reused_id_request())
    [note] = [note for note in formats.notes(conversation) if REFUSED in note]
    assert "'toolu_1' by 2 calls (messages[1].content[0], messages[3].content[0])" in note
    path = tmp_path / "request.json"
    path.write_text(json.dumps(_reused_id_request()))
    done = cli("count", str(path), "--json")
    assert done.returncode == 0, done.stderr
    assert any(REFUSED in note for note in json.loads(done.stdout)["notes"])
    at = upload(start("Run"), "request.json", path.read_bytes())
    assert any(REFUSED in info.value.replace("\\", "") for info in at.info)  # (markdown escapes shown literally)


def test_repeated_call_ids_are_said_only_where_the_request_goes_to_anthropic():
    """The same calls in a Chat request are no refusal there (OpenAI pairs each result with its call's
    message): no note, until the request is exported to Anthropic's format."""
    from playground.export.exports import request_body

    chat = formats.read(formats.write(formats.convert(formats.read(_reused_id_request()), "chat")))
    assert not any(REFUSED in note for note in formats.notes(chat))
    _, notes = request_body(chat, "anthropic")
    assert any(REFUSED in note and "messages[1].tool_calls[0]" in note for note in notes)


def test_a_real_swe_agent_trace_that_reuses_call_ids_says_anthropic_would_refuse_it():
    """SWE-agent gives a new call the id of an answered one: its real marshmallow trace has one id on
    4 calls, another on 2; sent to Anthropic as it is, the request is refused."""
    from playground.export.exports import request_body

    conversation = formats.read_path(shared(TRACES / "sweagent_marshmallow-1867_function_calling.openai.json"))
    _, notes = request_body(conversation, "anthropic")
    [note] = [note for note in notes if REFUSED in note]
    assert "2 call ids are given to more than one call" in note and "by 4 calls" in note
    assert not any(REFUSED in note for note in formats.notes(conversation))
    assert any(REFUSED in note for note in formats.notes(formats.convert(conversation, "anthropic")))
