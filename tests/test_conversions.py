"""Conversions say what they lose, and exports are requests the providers' own SDK types accept."""

from __future__ import annotations

import json
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from playground import formats
from playground.conversation import Message, ToolCall, ToolResult
from playground.export import exports
from playground.formats.convert import convert
from playground.workbench.presets import list_presets

from .conftest import ROOT, SHARED, TRACES, shared
from .strategies import REQUESTS

DATA = ROOT / "tests" / "data"


def notes_after(data: dict, target: str) -> str:
    return " ".join(convert(formats.read(data), target).notes)


def test_arguments_that_are_not_json_are_kept_under_raw_for_anthropic():
    chat = {"model": "gpt-4o", "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "run", "arguments": "ls -la  # not JSON"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt"}]}
    body = formats.write(formats.read(chat), "anthropic")
    use = body["messages"][1]["content"][0]
    assert use["input"] == {"_raw": "ls -la  # not JSON"}
    assert '{"_raw": <text>}' in notes_after(chat, "anthropic")


def test_a_mid_run_system_message_moved_to_the_top_is_noted_and_a_leading_one_is_not():
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "hello"}, {"role": "system", "content": "Now answer in French."},
                {"role": "user", "content": "bye"}]
    body = formats.write(formats.read(messages), "anthropic")
    assert body["system"] == "Be brief.\n\nNow answer in French."
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    notes = notes_after(messages, "anthropic")
    assert "(item 3) moved to the top-level system" in notes
    assert "moved" not in notes_after(messages[:3], "anthropic")


def test_reasoning_and_hosted_items_dropped_are_noted():
    body = {"model": "gpt-5", "input": [
        {"role": "user", "content": "weather?"},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "w"}},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Sunny."}]}],
        "tools": [{"type": "web_search"}]}
    converted = convert(formats.read(body), "chat")
    assert [type(item).__name__ for item in converted.items] == ["Message", "Message"]
    notes = " ".join(converted.notes)
    assert "'reasoning' items dropped" in notes and "'web_search_call' items dropped" in notes
    assert "'web_search' tool definitions dropped" in notes


def test_item_keys_the_target_does_not_know_are_named():
    body = {"model": "gpt-5", "input": [
        {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
         "content": [{"type": "output_text", "text": "Done.", "annotations": []}]}]}
    converted = convert(formats.read(body), "anthropic")
    assert formats.write(converted)["messages"] == [{"role": "assistant", "content": [{"type": "text",
                                                                                         "text": "Done."}]}]
    notes = " ".join(converted.notes)
    assert "item keys dropped: id, status (1)" in notes and "keys of text parts dropped: annotations" in notes


def test_images_carry_over_between_formats_and_only_unholdable_ones_are_dropped():
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    body = {"model": "claude-sonnet-4-5", "messages": [
        {"role": "user", "content": [{"type": "text", "text": "what is this?"}, image]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "shot", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [image]}]}]}
    chat = formats.write(formats.read(body), "chat")
    assert chat["messages"][0]["content"][1] == {"type": "image_url",
                                                 "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    assert chat["messages"][2]["content"] == ""  # a Chat tool message holds text only
    assert "'image' parts in tool results dropped" in notes_after(body, "chat")
    responses = formats.write(formats.read(body), "responses")
    assert responses["input"][0]["content"][1] == {"type": "input_image", "detail": "auto",
                                                   "image_url": "data:image/png;base64,iVBORw0KGgo="}
    assert notes_after(body, "responses") == ""
    back = formats.write(formats.read(chat, "chat"), "anthropic")
    assert back["messages"][0]["content"][1] == image
    by_url = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x.test/a.png"}}]}]
    assert formats.write(formats.read(by_url), "anthropic")["messages"][0]["content"] == [
        {"type": "image", "source": {"type": "url", "url": "https://x.test/a.png"}}]
    audio = [{"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "UklG", "format": "wav"}}]}]
    assert "'input_audio' parts in user messages dropped" in notes_after(audio, "anthropic")


def test_blocks_of_one_anthropic_message_stay_one_message():
    body = {"model": "claude-sonnet-4-5", "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "text", "text": "First, "}, {"type": "text", "text": "then."}]}]}
    assert formats.write(formats.read(body), "responses")["input"][1] == {"role": "assistant",
                                                                         "content": "First, then."}
    assert formats.write(formats.read(body), "chat")["messages"][1] == {
        "role": "assistant", "content": [{"type": "text", "text": "First, "}, {"type": "text", "text": "then."}]}


def test_thinking_kept_in_anthropic_is_dropped_with_a_note_elsewhere():
    body = {"model": "claude-sonnet-4-5", "messages": [
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "easy", "signature": "s"},
                                          {"type": "text", "text": "4"}]}]}
    assert formats.write(formats.read(body)) == body
    chat = formats.write(formats.read(body), "chat")
    assert chat["messages"][1] == {"role": "assistant", "content": [{"type": "text", "text": "4"}]}
    assert "'thinking' parts in assistant messages dropped" in notes_after(body, "chat")


def test_error_flags_names_and_request_keys_lost_are_noted_and_the_reply_limit_carries_over():
    body = {"model": "claude-sonnet-4-5", "max_tokens": 512, "temperature": 0.2, "messages": [
        {"role": "user", "content": "read it"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "read", "input": {"p": "a"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "no", "is_error": True}]}]}
    converted = convert(formats.read(body), "chat")
    assert dict(converted.extra) == {"max_completion_tokens": 512}
    notes = " ".join(converted.notes)
    assert "error flags on tool results dropped" in notes and "request keys dropped: temperature" in notes
    named = [{"role": "user", "name": "ana", "content": "hi"}]
    assert "message names dropped" in notes_after(named, "responses")


def test_custom_tool_calls_become_function_calls_with_a_note():
    rollout = formats.loads((DATA / "codex-rollout.jsonl").read_bytes())
    converted = convert(rollout, "chat")
    names = [item.name for item in converted.items if isinstance(item, ToolCall)]
    assert names == ["shell", "shell", "apply_patch", "local_shell", "shell"]
    notes = " ".join(converted.notes)
    assert "custom_tool_call items written as function calls" in notes
    assert "custom_tool_call_output items written as plain tool results" in notes
    assert "'reasoning' items dropped" in notes
    anthropic = formats.write(rollout, "anthropic")
    patch = next(block for message in anthropic["messages"] for block in message["content"]
                 if isinstance(block, dict) and block.get("name") == "apply_patch")
    assert patch["input"]["_raw"].startswith("*** Begin Patch")


def test_every_loss_reaches_the_cli_report(tmp_path):
    import subprocess
    import sys

    messages = [{"role": "user", "content": "hi"}, {"role": "system", "content": "late rule"},
                {"role": "assistant", "content": "ok"}]
    source, report = tmp_path / "in.json", tmp_path / "report.json"
    source.write_text(json.dumps(messages))
    done = subprocess.run([sys.executable, "-m", "playground", "compact", str(source), "--to", "anthropic",
                           "--report", str(report)], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["system"] == "late rule"
    assert any("moved to the top-level system" in note for note in json.loads(report.read_text())["notes"])


# Requests the SDKs accept ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def adapters() -> dict[str, TypeAdapter]:
    """The SDKs' request types (TypedDicts), validated with pydantic; built once, they are slow to build."""
    openai_chat = pytest.importorskip("openai.types.chat.completion_create_params")
    openai_responses = pytest.importorskip("openai.types.responses.response_create_params")
    anthropic = pytest.importorskip("anthropic.types.message_create_params")
    return {"chat": TypeAdapter(openai_chat.CompletionCreateParamsNonStreaming),
            "responses": TypeAdapter(openai_responses.ResponseCreateParamsNonStreaming),
            "anthropic": TypeAdapter(anthropic.MessageCreateParamsNonStreaming)}


def _conversations() -> dict[str, formats.Conversation]:
    found = {preset.key: preset.conversation for preset in list_presets()}
    found |= {path.name: formats.read_path(path) for path in sorted(DATA.glob("*")) if path.name != "README.md"}
    for folder, pattern in ((TRACES, "*.json"), (SHARED / "sessions", "*.jsonl")):
        found |= {path.name: formats.loads(path.read_bytes()) for path in sorted(shared(folder).glob(pattern))}
    return found


@pytest.mark.parametrize("target", ["chat", "responses", "anthropic"])
def test_exports_are_valid_requests_for_the_official_sdk_types(target, adapters):
    adapter = adapters[target]
    conversations = _conversations()
    assert len(conversations) >= 15
    for name, conversation in conversations.items():
        body, _ = exports.request_body(conversation, target)
        try:
            adapter.validate_python(body)
        except Exception as exc:  # name the conversation, the validator's message says where
            pytest.fail(f"{name} as {target}: {exc}")
        key = "input" if target == "responses" else "messages"
        assert body[key], f"{name}: an empty request"
        if target == "anthropic":  # the API refuses blank text blocks, which the SDK types let through
            blank = [block for message in body["messages"] if isinstance(message["content"], list)
                     for block in message["content"] if block.get("type") == "text" and not block["text"].strip()]
            assert not blank, name


def test_an_anthropic_export_names_a_claude_model_and_max_tokens():
    chat = formats.read({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]})
    body, notes = exports.request_body(chat, "anthropic")
    assert (body["model"], body["max_tokens"]) == (exports.DEFAULT_CLAUDE_MODEL, exports.DEFAULT_MAX_TOKENS)
    assert any("gpt-4o is not a Claude model" in note for note in notes)
    own = formats.read({"model": "claude-opus-4-1", "max_tokens": 300, "messages": [{"role": "user", "content": "hi"}]})
    body, notes = exports.request_body(own)
    assert (body["model"], body["max_tokens"], notes) == ("claude-opus-4-1", 300, ())


def test_a_responses_export_of_a_codex_log_drops_what_cannot_be_sent_and_says_so():
    body, notes = exports.request_body(formats.loads((DATA / "codex-rollout.jsonl").read_bytes()))
    types = [item.get("type", "message") for item in body["input"]]
    assert "reasoning" not in types and "web_search_call" not in types and "local_shell_call" not in types
    assert types.count("custom_tool_call") == 1 and types.count("function_call") == 4
    assert body["input"][-1] == {"type": "message", "role": "assistant", "content": "parse_date now ignores a "
                                 "trailing time; the new test and the rest of the suite pass (42 tests)."}
    text = " ".join(notes)
    assert "'reasoning' items dropped" in text and "local_shell_call items sent as function calls" in text


def test_a_bare_chat_list_exports_as_a_request_body():
    body, _ = exports.request_body(formats.read([{"role": "user", "content": "hi"}]))
    assert body == {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}


def test_the_download_carries_the_notes():
    chat = formats.read({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]})
    download = exports.conversation(chat, "c", "anthropic")
    assert json.loads(download.data)["max_tokens"] == exports.DEFAULT_MAX_TOKENS
    assert download.notes and download.name == "c.anthropic.json"


def test_items_and_results_survive_every_conversion_of_the_real_logs():
    for path in sorted(shared(SHARED / "sessions").glob("*.jsonl")):
        original = formats.loads(path.read_bytes())
        for target in ("chat", "responses"):
            back = formats.read(formats.write(original, target), target)
            def tools(c):
                return [(type(i).__name__, i.call_id, i.name) for i in c.items if isinstance(i, ToolCall | ToolResult)]
            assert tools(back) == tools(original), (path.name, target)
            texts = [i for i in back.items if isinstance(i, Message)]
            assert texts, "messages survive"


def test_the_same_format_round_trip_is_untouched(trace):
    assert formats.write(formats.read(trace)) == trace
    assert convert(formats.read(trace), "chat").notes == ()


def test_a_result_without_content_gets_empty_text_where_content_is_required():
    body = {"model": "claude-sonnet-4-5", "messages": [
        {"role": "user", "content": "touch it"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "touch", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]}]}
    assert formats.write(formats.read(body), "responses")["input"][2]["output"] == ""
    assert formats.write(formats.read(body), "chat")["messages"][2]["content"] == ""


API_FORMATS = ("chat", "responses", "anthropic")


# In its own format a request keeps the person's own keys as they are, so only conversions are drawn here.
@pytest.mark.parametrize(("source", "target"), [(s, t) for s in sorted(REQUESTS) for t in API_FORMATS if s != t])
@settings(max_examples=60)
@given(data=st.data())
def test_any_converted_request_is_one_the_sdk_accepts(source, target, adapters, data):
    conversation = formats.read(data.draw(REQUESTS[source]))
    body, notes = exports.request_body(conversation, target)
    adapters[target].validate_python(body)
    calls = [item for item in conversation.items if isinstance(item, ToolCall)]
    sent = [item for item in formats.read(body, target).items if isinstance(item, ToolCall)]
    assert [c.call_id for c in sent] == [c.call_id for c in calls]
    if target == "anthropic":
        roles = [message["role"] for message in body["messages"]]
        assert all(a != b for a, b in pairwise(roles)), "consecutive messages of one role are merged"
        blocks = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]
        assert not [b for b in blocks if b["type"] == "text" and not b["text"].strip()], "no blank text blocks"
        if any(c.parsed_arguments() is None for c in calls):
            assert any("_raw" in note for note in notes)
