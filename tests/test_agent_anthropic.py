"""The tuned policy inside an agent's own ``anthropic`` client (``pg.compacting``), with measured parity.

A real agent loop runs through the real ``anthropic`` client, wrapped, against the local Messages
API server (``tests/anthropic_stub.py``, whose ``tool-loop-N`` model asks for a file per reply): with
``messages.create``, ``messages.create(stream=True)`` and the ``messages.stream`` helper, sync and
async. The requests the server received are compared, call by call and byte for byte (the JSON of
their ``messages``), with what ``pg.replay`` in stored mode sends at the same call of the same run
under the same policy, and each call's logged figures with replay's own.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
from collections.abc import Callable
from typing import Any

import anthropic
import pytest
from anthropic.types import MessageParam
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter

import playground as pg
from playground import formats
from playground.agent import CallRecord
from playground.agent.endpoint import plain
from playground.conversation import Conversation, shared
from playground.meter.tokens import Meter

from .anthropic_stub import AnthropicStub
from .strategies import anthropic_requests
from .test_agent_openai import KEY, POLICIES, PROPERTY_POLICIES, SYSTEM, _file, check_each_call

MODEL = "claude-sonnet-4-5"  # whose meter and prompt cache count the run (the stub's names pick its replies)
TOOLS = [{"name": "read_file", "description": "Read a file of the repository.",
          "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}}}]
MESSAGES = TypeAdapter(list[MessageParam])
START = "Read the modules one by one."


def _client(server: AnthropicStub, kind: type = anthropic.Anthropic) -> Any:
    return kind(base_url=server.base_url, api_key=KEY, max_retries=0)


def _answer(messages: list[Any], content: list[Any]) -> bool:
    """Append the reply and, when it asked for files, their results; False once it answered."""
    messages.append({"role": "assistant", "content": content})
    uses = [block for block in map(plain, content) if block["type"] == "tool_use"]
    if uses:
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": use["id"], "content": _file(use["input"]["file_path"])}
            for use in uses]})
    return bool(uses)


def _request(calls: int, messages: list[Any], **kwargs: Any) -> dict[str, Any]:
    return {"model": f"tool-loop-{calls - 1}", "max_tokens": 1024, "system": SYSTEM, "messages": messages,
            "tools": TOOLS, **kwargs}


def _assembled(events: Any) -> list[dict[str, Any]]:
    """A raw ``stream=True`` reply's content blocks, put together from its events as agents do."""
    blocks: list[dict[str, Any]] = []
    partial: dict[int, str] = {}
    for item in events:
        if item.type == "content_block_start":
            blocks.append(plain(item.content_block))
        elif item.type == "content_block_delta" and item.delta.type == "text_delta":
            blocks[item.index]["text"] += item.delta.text
        elif item.type == "content_block_delta" and item.delta.type == "input_json_delta":
            partial[item.index] = partial.get(item.index, "") + item.delta.partial_json
    for index, text in partial.items():
        blocks[index]["input"] = json.loads(text)
    return blocks


def _run(client: Any, calls: int, how: str = "create", **kwargs: Any) -> list[Any]:
    """An agent's loop: call, append the reply's content as the SDK gave it, run its tool uses."""
    messages: list[Any] = [{"role": "user", "content": START}]
    for _ in range(calls):  # (bounded: a stub that never stops asking fails, not hangs)
        request = _request(calls, messages, **kwargs)
        if how == "create":
            content = client.messages.create(**request).content
        elif how == "stream=True":
            stream = client.messages.create(**request, stream=True)
            assert isinstance(stream, anthropic.Stream)  # the client's own stream, as it returned it
            content = _assembled(stream)
        else:
            with client.messages.stream(**request) as stream:
                content = stream.get_final_message().content
        if not _answer(messages, content):
            return messages
    raise AssertionError(f"the loop did not end after {calls} calls")


async def _run_async(client: Any, calls: int, how: str) -> list[Any]:
    """The same loop on ``AsyncAnthropic``: ``await create`` or ``async with stream``."""
    messages: list[Any] = [{"role": "user", "content": START}]
    for _ in range(calls):
        if how == "create":
            content = (await client.messages.create(**_request(calls, messages))).content
        else:
            async with client.messages.stream(**_request(calls, messages)) as stream:
                content = (await stream.get_final_message()).content
        if not _answer(messages, content):
            return messages
    raise AssertionError(f"the loop did not end after {calls} calls")


def recorded(messages: list[Any]) -> Conversation:
    """The run as the agent holds it at its end, every reply included, as the SDK sends it."""
    return formats.anthropic.read({"model": MODEL, "system": SYSTEM, "messages": plain(messages), "tools": TOOLS})


def assert_parity(server: AnthropicStub, messages: list[Any], records: tuple[CallRecord, ...],
                  make: Callable[[], pg.Policy]) -> pg.Replay:
    """The requests the server received are replay's, call by call and byte for byte; the logged
    figures are replay's; the prefix the server saw unchanged is the one the log names."""
    received = [request["body"]["messages"] for request in server.requests]
    run, price = recorded(messages), pg.read_prices().get(MODEL)
    whole = pg.replay(run, make(), Meter(MODEL), price, mode="stored")
    assert len(whole.calls) == len(received) == len(records)
    for number, got in enumerate(received):
        want = formats.anthropic.write(pg.replay(run, make(), Meter(MODEL), price, mode="stored",
                                                 until=number + 1).final)["messages"]
        assert json.dumps(got, ensure_ascii=False) == json.dumps(want, ensure_ascii=False), f"call {number}"
        assert server.requests[number]["body"]["system"] == SYSTEM
    for number, (record, call) in enumerate(zip(records, whole.calls, strict=True)):
        assert (record.tokens_before, record.tokens_after) == (call.tokens_without, call.tokens_with), number
        assert (record.cached_before, record.cached_after) == (call.cached_without, call.cached_with), number
        assert record.fired == call.fired, number
    items = [formats.anthropic.read({"messages": got}).items for got in received]
    assert [record.prefix_items for record in records] == [0] + [shared(old, new)
                                                                  for old, new in itertools.pairwise(items)]
    return whole


@pytest.mark.parametrize("name", POLICIES)
def test_a_wrapped_anthropic_loop_sends_what_replay_sends_call_by_call(name: str) -> None:
    with AnthropicStub() as server:
        wrapped = pg.compacting(_client(server), POLICIES[name](), model=MODEL)
        messages = _run(wrapped, calls=7)
    whole = assert_parity(server, messages, wrapped.records, POLICIES[name])
    assert [request["path"] for request in server.requests] == ["/v1/messages"] * 7
    assert whole.totals.tokens_with < whole.totals.tokens_without  # the policy fired: there was something to match
    assert wrapped.records[1].usage is not None and wrapped.records[1].usage["input_tokens"] == 101
    if name == "rules":  # compaction keeps the head and every earlier edit: the provider's cache hits
        assert sum(record.cached_after for record in wrapped.records) > 0


@pytest.mark.parametrize("how", ["stream=True", "stream helper"])
def test_a_streamed_anthropic_loop_sends_what_replay_sends(how: str) -> None:
    make = POLICIES["rules"]
    with AnthropicStub() as server:
        wrapped = pg.compacting(_client(server), make(), model=MODEL)
        messages = _run(wrapped, calls=6, how=how)
    assert_parity(server, messages, wrapped.records, make)
    assert all(request["body"]["stream"] is True for request in server.requests)
    assert all(record.stream for record in wrapped.records) and any(record.fired for record in wrapped.records)
    usage = [record.usage for record in wrapped.records]
    if how == "stream=True":  # the raw stream is the caller's: its usage is in it
        assert usage == [None] * 6
    else:  # the helper assembled the message: its usage, input from the start, output from the end
        assert [(found or {}).get("input_tokens") for found in usage] == [100 + n for n in range(6)]


@pytest.mark.parametrize("how", ["create", "stream helper"])
def test_the_async_anthropic_client_sends_what_replay_sends(how: str) -> None:
    make = POLICIES["masking"]
    with AnthropicStub() as server:
        wrapped = pg.compacting(_client(server, anthropic.AsyncAnthropic), make(), model=MODEL)
        messages = asyncio.run(_run_async(wrapped, 6, how))
    assert_parity(server, messages, wrapped.records, make)
    assert len(server.requests) == 6


def test_the_callers_messages_stay_unchanged_and_other_arguments_arrive_as_given() -> None:
    options = {"stop_sequences": ["END"], "tool_choice": {"type": "auto"}, "metadata": {"user_id": "u-1"},
               "extra_body": {"custom_flag": True}, "extra_headers": {"X-Trace": "trace-1"}}
    with AnthropicStub() as server:
        client = _client(server)
        wrapped = pg.compacting(client, POLICIES["rules"](), model=MODEL)
        messages = _run(wrapped, calls=5, **options)
        kept = copy.deepcopy(plain(messages))
        wrapped.messages.create(**_request(1, messages, **options))
        wrapped_request = server.requests[-1]
        client.messages.create(**_request(1, messages, **options))
        direct = server.requests[-1]
        assert wrapped.models is client.models and wrapped.messages.count_tokens == client.messages.count_tokens
    assert plain(messages) == kept
    assert {key: value for key, value in wrapped_request["body"].items() if key != "messages"} == \
        {key: value for key, value in direct["body"].items() if key != "messages"}
    assert wrapped_request["body"]["custom_flag"] is True and wrapped_request["headers"]["x-trace"] == "trace-1"
    assert wrapped_request["body"]["messages"] != direct["body"]["messages"]  # (the policy did fire)
    assert direct["body"]["messages"] == plain(messages)  # read as the SDK sends them


def test_a_failed_call_is_not_a_call_of_the_run() -> None:
    with AnthropicStub() as server:
        wrapped = pg.compacting(_client(server), POLICIES["rules"](), model=MODEL)
        with pytest.raises(anthropic.RateLimitError):
            wrapped.messages.create(model="busy", max_tokens=10, messages=[{"role": "user", "content": START}])
        with pytest.raises(anthropic.RateLimitError), wrapped.messages.stream(
                model="busy", max_tokens=10, messages=[{"role": "user", "content": START}]):
            pass
        assert wrapped.records == ()
        wrapped.messages.create(**_request(1, [{"role": "user", "content": START}]))
    assert len(wrapped.records) == 1 and wrapped.records[0].call == 0


# -- the property: whatever the conversation and policy, the request is a valid one, paired, never larger

class _Recorder:
    """A client's ``messages`` that keeps the arguments it was called with."""

    def __init__(self) -> None:
        self.messages = self
        self.sent: list[dict[str, Any]] = []

    def create(self, **kwargs: Any) -> Any:
        self.sent.append(kwargs)
        return None


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    return message["content"] if isinstance(message["content"], list) else []


def _blank_texts(messages: list[dict[str, Any]]) -> int:
    return sum(block.get("type") == "text" and not block["text"].strip()
               for message in messages for block in _blocks(message))


def _answered_next(messages: list[dict[str, Any]]) -> bool:
    """Every ``tool_use`` is answered by a ``tool_result`` in the very next message, as the API asks."""
    for message, after in itertools.pairwise([*messages, {"content": []}]):
        asked = {block["id"] for block in _blocks(message) if block.get("type") == "tool_use"}
        if asked - {block["tool_use_id"] for block in _blocks(after) if block.get("type") == "tool_result"}:
            return False
    return True


@given(request=anthropic_requests(least=3, most=9), name=st.sampled_from(sorted(PROPERTY_POLICIES)))
def test_a_wrapped_messages_request_is_valid_paired_and_never_larger(request: Any, name: str) -> None:
    recorder = _Recorder()
    wrapped = pg.compacting(recorder, PROPERTY_POLICIES[name](), model=MODEL)
    extra = {"system": request["system"]} if "system" in request else {}

    def send(given_messages: list[Any]) -> list[Any]:
        wrapped.messages.create(model=MODEL, max_tokens=1024, messages=given_messages, **extra)
        sent = recorder.sent[-1]["messages"]
        assert _blank_texts(sent) <= _blank_texts(given_messages)  # the API refuses them (the types do not)
        assert _answered_next(given_messages) <= _answered_next(sent)  # as the API asks: results right after
        return sent

    check_each_call(request["messages"], wrapped, send,
                    lambda sent: formats.anthropic.read({"messages": sent, **extra}), MESSAGES, Meter(MODEL), name)
