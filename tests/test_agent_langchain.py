"""The tuned policy inside a LangChain v1 agent (``CompactingMiddleware``), with measured parity.

A real ``create_agent`` loop runs with a real ``ChatOpenAI`` against the local Chat Completions
server (``tests/openai_stub.py``: its ``tool-loop-N`` model asks for a file per reply), the
middleware compacting every model call. The run's log is read back (``pg.load``) and replayed in
stored mode; at each call, the messages the server received are compared with replay's request:

- byte for byte, with the JSON ``ChatOpenAI`` itself writes for replay's request (replay's
  messages, converted to LangChain's messages as the middleware converts them). Byte for byte with
  the playground's own Chat Completions JSON cannot be: LangChain writes its keys in another order,
  ``null`` for an assistant's empty content, and no ``name`` on tool messages;
- parsed: the server's messages, read as a conversation, hold replay's items (every role, text,
  call, argument and result), so nothing of replay's request is lost on LangChain's way.

Each call's logged tokens and prompt-cache reads are replay's own, streamed (``agent.stream``) too.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, BaseMessage, convert_to_messages, convert_to_openai_messages
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

import playground as pg
from playground.agent.langchain_middleware import CompactingMiddleware
from playground.conversation import Conversation, Message, ToolCall, ToolResult, content_text
from playground.formats import chat
from playground.meter.tokens import Meter

from .openai_stub import StubServer
from .strategies import chat_requests
from .test_agent_openai import (
    KEY,
    MESSAGES,
    MODEL,
    POLICIES,
    PROPERTY_POLICIES,
    SYSTEM,
    _file,
    _sendable,
    call_points,
    unanswered,
)

TASK = "Read the modules one by one."


@tool
def read_file(file_path: str) -> str:
    """Read a file of the repository."""
    return _file(file_path)


def _agent(server: StubServer, middleware: CompactingMiddleware, calls: int) -> Any:
    model = ChatOpenAI(model=f"tool-loop-{calls - 1}", base_url=server.base_url, api_key=KEY, max_retries=0)
    return create_agent(model, [read_file], system_prompt=SYSTEM, middleware=[middleware])


def _langchain_json(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What ``ChatOpenAI`` sends for Chat Completions ``messages`` handed to it as LangChain's
    messages (converted as the middleware converts them)."""
    model = ChatOpenAI(model="tool-loop-0", api_key=KEY)
    return model._get_request_payload(convert_to_messages(messages))["messages"]


def _essence(conversation: Conversation) -> list[tuple[Any, ...]]:
    """Each item as the model reads it: role and text, a call's name, id and arguments, a result's
    call, tool and text (the wire's key order, ``null`` or ``""``, and the empty assistant message a
    Chat Completions reply with tool calls holds, are not)."""
    found: list[tuple[Any, ...]] = []
    for item in conversation.items:
        if isinstance(item, Message) and (item.role != "assistant" or content_text(item.content)):
            found.append(("message", item.role, content_text(item.content)))
        elif isinstance(item, ToolCall):
            found.append(("call", item.call_id, item.name, item.parsed_arguments()))
        elif isinstance(item, ToolResult):
            found.append(("result", item.call_id, item.name, content_text(item.content)))
    return found


def assert_parity(server: StubServer, log: Path, middleware: CompactingMiddleware,
                  make: Callable[[], pg.Policy]) -> pg.Replay:
    """The requests the server received are replay's, call by call; the figures logged, replay's."""
    received = [request["body"]["messages"] for request in server.requests]
    run = pg.load(log)
    price = pg.read_prices().get(MODEL)
    whole = pg.replay(run, make(), Meter(MODEL), price, mode="stored")
    assert len(received) == len(middleware.records) == len(whole.calls)
    for number, got in enumerate(received):
        want = chat.write_messages(pg.replay(run, make(), Meter(MODEL), price, mode="stored",
                                             until=number + 1).final.items)
        assert json.dumps(got, ensure_ascii=False) == json.dumps(_langchain_json(want), ensure_ascii=False), number
        assert _essence(chat.read(got)) == _essence(chat.read(want)), number
    for number, (record, call) in enumerate(zip(middleware.records, whole.calls, strict=True)):
        assert (record.tokens_before, record.tokens_after) == (call.tokens_without, call.tokens_with), number
        assert (record.cached_before, record.cached_after) == (call.cached_without, call.cached_with), number
        assert record.fired == call.fired, number
    return whole


def _state_as_run(state: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The agent's own history (its system prompt first) as the model would read it."""
    messages = convert_to_openai_messages([{"role": "system", "content": SYSTEM}, *state["messages"]])
    return _essence(chat.read({"messages": messages}))


@pytest.mark.parametrize("name", POLICIES)
def test_a_langchain_agent_sends_what_replay_sends_call_by_call(name: str, tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    middleware = CompactingMiddleware(POLICIES[name](), log, model=MODEL)
    with StubServer() as server:
        state = _agent(server, middleware, calls=7).invoke({"messages": [{"role": "user", "content": TASK}]})
    whole = assert_parity(server, log, middleware, POLICIES[name])
    assert len(server.requests) == 7 and state["messages"][-1].content == "Read 6 files."
    assert _essence(pg.load(log)) == _state_as_run(state)  # the log is the run the agent held, whole
    assert whole.totals.tokens_with < whole.totals.tokens_without  # the policy fired
    if name == "rules":
        assert sum(record.cached_after for record in middleware.records) > 0
        assert [record.usage["input_tokens"] for record in middleware.records] == [100, 101, 102, 103, 104, 105, 10]


def test_a_streamed_langchain_agent_sends_what_replay_sends(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    make = POLICIES["rules"]
    middleware = CompactingMiddleware(make(), log, model=MODEL)
    with StubServer() as server:
        chunks = list(_agent(server, middleware, calls=6).stream(
            {"messages": [{"role": "user", "content": TASK}]}, stream_mode="messages"))
    assert chunks and all(request["body"].get("stream") is True for request in server.requests)
    assert_parity(server, log, middleware, make)
    assert any(record.fired for record in middleware.records)


def test_an_async_langchain_agent_shares_the_core(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    make = POLICIES["masking"]
    middleware = CompactingMiddleware(make(), log, model=MODEL)
    with StubServer() as server:
        asyncio.run(_agent(server, middleware, calls=6).ainvoke({"messages": [{"role": "user", "content": TASK}]}))
    assert_parity(server, log, middleware, make)


def test_a_workspace_file_runs_in_the_middleware_and_per_call_mode_is_refused(tmp_path: Path) -> None:
    from .test_agent_openai import _workspace_file

    policy = pg.load_policy(_workspace_file(tmp_path, threshold=4_000))
    middleware = CompactingMiddleware(policy, tmp_path / "run.jsonl")
    with StubServer() as server:
        _agent(server, middleware, calls=5).invoke({"messages": [{"role": "user", "content": TASK}]})
    assert {record.model for record in middleware.records} == {MODEL}  # the policy file's model counts
    assert any(record.fired for record in middleware.records)
    with pytest.raises(pg.InputError, match="stored mode only"):
        CompactingMiddleware(pg.load_policy(_workspace_file(tmp_path, mode="per-call")))


# -- the property: whatever the conversation and policy, the request is valid, paired, never larger

def _langchain_messages(request: Any) -> list[BaseMessage]:
    """A generated Chat Completions request as LangChain's messages (the extras LangChain has no
    place for are dropped on the way, as they would be in a LangChain agent; an assistant's absent
    content, which LangChain refuses, is its empty text)."""
    messages = request if isinstance(request, list) else request["messages"]
    return convert_to_messages([{"content": "", **message} for message in messages])


@given(request=chat_requests(least=3, most=9).map(_sendable), name=st.sampled_from(sorted(PROPERTY_POLICIES)))
def test_the_middlewares_request_is_valid_paired_and_never_larger(request: Any, name: str) -> None:
    messages = _langchain_messages(request)
    middleware = CompactingMiddleware(PROPERTY_POLICIES[name](), model=MODEL)
    seen: list[ModelRequest] = []

    def handler(sent: ModelRequest) -> ModelResponse:
        seen.append(sent)
        return ModelResponse(result=[AIMessage("ok")])

    meter = Meter(MODEL)
    for start in call_points(convert_to_openai_messages(messages)):
        given_messages = messages[:start]
        middleware.wrap_model_call(ModelRequest(model=None, messages=given_messages), handler)  # type: ignore[arg-type]
        before = convert_to_openai_messages(given_messages)
        after = convert_to_openai_messages(seen[-1].messages)
        MESSAGES.validate_python(after)
        assert unanswered(chat.read(after)) <= unanswered(chat.read(before))
        assert meter.count(chat.read(after)).total <= meter.count(chat.read(before)).total
        record = middleware.records[-1]
        assert record.tokens_after <= record.tokens_before
        event(f"{name}: {'fired' if record.fired else 'did not fire'}")  # (--hypothesis-show-statistics)
