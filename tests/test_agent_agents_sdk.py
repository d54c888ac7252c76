"""The tuned policy inside an OpenAI Agents SDK run (``CompactingFilter``), with measured parity.

A real ``Runner`` loop runs an ``Agent`` on the SDK's ``OpenAIChatCompletionsModel`` against the
local Chat Completions server (``tests/openai_stub.py``: ``tool-loop-N`` asks for a file per reply),
the filter compacting every model call's input (``RunConfig(call_model_input_filter=…)``) and, as
the run's hooks, committing and logging each call. The run's log is read back (``pg.load``: a
Responses run, the form the SDK's items are in) and replayed in stored mode; at each call the
messages the server received are compared with replay's request:

- byte for byte, with the JSON the SDK itself writes for replay's request (its ``Converter`` from
  Responses items to Chat Completions messages, the instructions first as a system message, as
  ``OpenAIChatCompletionsModel`` sends them). Byte for byte with the playground's own Chat
  Completions JSON cannot be: the SDK writes its keys in another order and ``null`` for an
  assistant's empty content;
- parsed: the server's messages, read as a conversation, hold replay's items (every role, text,
  call, argument and result).

Each call's logged tokens and prompt-cache reads are replay's own, streamed (``run_streamed``) too.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from agents import (
    Agent,
    ModelResponse,
    OpenAIChatCompletionsModel,
    RunConfig,
    Runner,
    Usage,
    function_tool,
    set_tracing_disabled,
)
from agents.models.chatcmpl_converter import Converter
from agents.run_config import CallModelData, ModelInputData
from hypothesis import event, given
from hypothesis import strategies as st
from openai import AsyncOpenAI
from openai.types.responses import ResponseInputParam
from pydantic import TypeAdapter, ValidationError

import playground as pg
from playground.agent.agents_sdk import CompactingFilter
from playground.formats import chat, responses
from playground.meter.tokens import Meter

from .openai_stub import StubServer
from .strategies import responses_requests
from .test_agent_langchain import TASK, _essence
from .test_agent_openai import KEY, MODEL, POLICIES, PROPERTY_POLICIES, SYSTEM, _file, unanswered

INPUT = TypeAdapter(ResponseInputParam)
set_tracing_disabled(True)  # (the SDK would otherwise export traces to OpenAI: the tests stay offline)


@function_tool
def read_file(file_path: str) -> str:
    """Read a file of the repository."""
    return _file(file_path)


def _agent(server: StubServer, calls: int) -> Agent:
    client = AsyncOpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)
    return Agent(name="coder", instructions=SYSTEM, tools=[read_file],
                 model=OpenAIChatCompletionsModel(model=f"tool-loop-{calls - 1}", openai_client=client))


def _sdk_json(items: list[Any], server: StubServer) -> list[Any]:
    """What ``OpenAIChatCompletionsModel`` sends for Responses ``items`` under the agent's
    instructions: its converter's messages, the instructions first."""
    return [{"content": SYSTEM, "role": "system"},
            *Converter.items_to_messages(items, model="tool-loop-0", base_url=server.base_url)]


def assert_parity(server: StubServer, log: Path, compact: CompactingFilter,
                  make: Callable[[], pg.Policy]) -> pg.Replay:
    """The requests the server received are replay's, call by call; the figures logged, replay's."""
    received = [request["body"]["messages"] for request in server.requests]
    run = pg.load(log)
    assert (run.format, run.instructions) == ("responses", SYSTEM)
    price = pg.read_prices().get(MODEL)
    whole = pg.replay(run, make(), Meter(MODEL), price, mode="stored")
    assert len(received) == len(compact.records) == len(whole.calls)
    for number, got in enumerate(received):
        final = pg.replay(run, make(), Meter(MODEL), price, mode="stored", until=number + 1).final
        want = responses.write(replace(final, bare=True))
        assert json.dumps(got, ensure_ascii=False) == json.dumps(_sdk_json(want, server), ensure_ascii=False), number
        assert _essence(chat.read(got)) == [("message", "system", SYSTEM), *_essence(final)], number
    for number, (record, call) in enumerate(zip(compact.records, whole.calls, strict=True)):
        assert (record.tokens_before, record.tokens_after) == (call.tokens_without, call.tokens_with), number
        assert (record.cached_before, record.cached_after) == (call.cached_without, call.cached_with), number
        assert record.fired == call.fired, number
    return whole


@pytest.mark.parametrize("name", POLICIES)
def test_an_agents_sdk_run_sends_what_replay_sends_call_by_call(name: str, tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    compact = CompactingFilter(POLICIES[name](), log, model=MODEL)
    with StubServer() as server:
        result = Runner.run_sync(_agent(server, calls=7), TASK, run_config=RunConfig(call_model_input_filter=compact),
                                 hooks=compact)
    whole = assert_parity(server, log, compact, POLICIES[name])
    assert len(server.requests) == 7 and result.final_output == "Read 6 files."
    assert _essence(pg.load(log)) == _essence(responses.read({"input": result.to_input_list()}))  # the run, whole
    assert whole.totals.tokens_with < whole.totals.tokens_without  # the policy fired
    if name == "rules":
        assert sum(record.cached_after for record in compact.records) > 0
        assert [record.usage["input_tokens"] for record in compact.records] == [100, 101, 102, 103, 104, 105, 10]


def test_a_streamed_agents_sdk_run_sends_what_replay_sends(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    make = POLICIES["rules"]
    compact = CompactingFilter(make(), log, model=MODEL)

    async def run(server: StubServer) -> int:
        streamed = Runner.run_streamed(_agent(server, calls=6), TASK,
                                       run_config=RunConfig(call_model_input_filter=compact), hooks=compact)
        return len([event async for event in streamed.stream_events()])

    with StubServer() as server:
        assert asyncio.run(run(server)) > 0
    assert all(request["body"].get("stream") is True for request in server.requests)
    assert_parity(server, log, compact, make)
    assert any(record.fired for record in compact.records)


def test_a_call_the_provider_refused_is_no_call_of_the_run(tmp_path: Path) -> None:
    compact = CompactingFilter(POLICIES["rules"](), model=MODEL)
    with StubServer() as server:
        agent = _agent(server, calls=1).clone(model=OpenAIChatCompletionsModel(
            model="busy", openai_client=AsyncOpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)))
        with pytest.raises(Exception, match="Rate limit"):
            Runner.run_sync(agent, TASK, run_config=RunConfig(call_model_input_filter=compact), hooks=compact)
        assert compact.records == ()
        Runner.run_sync(_agent(server, calls=1), TASK, run_config=RunConfig(call_model_input_filter=compact),
                        hooks=compact)
    assert len(compact.records) == 1 and compact.records[0].call == 0


# -- the property: whatever the conversation and policy, the input is valid, paired, never larger

def _calls(items: list[dict[str, Any]]) -> list[int]:
    """Where an agent calls in a generated run: before each model output (a call or an assistant
    message after another kind of item) and once after the last item."""
    def output(item: dict[str, Any]) -> bool:
        return item.get("type") in ("function_call", "reasoning") or item.get("role") == "assistant"
    return [n for n, item in enumerate(items) if output(item) and (n == 0 or not output(items[n - 1]))] + \
        [len(items)]


def _valid(items: list[Any]) -> bool:
    try:
        INPUT.validate_python(items)
    except ValidationError:
        return False
    return True


@given(request=responses_requests(), name=st.sampled_from(sorted(PROPERTY_POLICIES)))
def test_the_filters_input_is_valid_paired_and_never_larger(request: Any, name: str) -> None:
    items, instructions = request["input"], request.get("instructions")
    compact = CompactingFilter(PROPERTY_POLICIES[name](), model=MODEL)
    agent = Agent(name="any")
    meter = Meter(MODEL)
    for start in _calls(items):
        given_items = items[:start]
        sent = compact(CallModelData(ModelInputData(input=list(given_items), instructions=instructions), agent, None))
        assert isinstance(sent, ModelInputData) and sent.instructions == instructions
        if _valid(given_items):  # (the generator's assistant messages lack the ids the API's types ask for)
            INPUT.validate_python(sent.input)
            event("the input given is one the API's types accept")
        before, after = (responses.read({"instructions": instructions, "input": found})
                         for found in (given_items, sent.input))
        assert unanswered(after) <= unanswered(before)
        assert meter.count(after).total <= meter.count(before).total
        asyncio.run(compact.on_llm_end(None, agent, ModelResponse(output=[], usage=Usage(), response_id=None)))
        record = compact.records[-1]
        assert record.tokens_after <= record.tokens_before
        event(f"{name}: {'fired' if record.fired else 'did not fire'}")  # (--hypothesis-show-statistics)
    assert items == request["input"]
