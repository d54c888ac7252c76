"""The tuned policy inside an agent's own ``openai`` client (``pg.compacting``), with measured parity.

A real agent loop runs through the real ``openai`` client, wrapped, against the local Chat
Completions server (``tests/openai_stub.py``, whose ``tool-loop-N`` model asks for a file per reply).
The requests the server received are then compared, call by call and byte for byte (the JSON of their
``messages``), with what ``pg.replay`` in stored mode sends at the same call of the same run under the
same policy (``Replay.final`` of a replay ``until`` that call: the request it sent last), and each
call's logged figures with replay's own (tokens with and without, the prompt cache's reads).
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import openai
import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from openai.types.chat import ChatCompletionMessageParam
from pydantic import TypeAdapter

import playground as pg
from playground import formats
from playground.agent import CallRecord, PolicyFile
from playground.agent.endpoint import plain
from playground.compaction import Settings
from playground.conversation import Conversation, ToolCall, pairs, shared
from playground.formats import chat
from playground.meter.tokens import Meter
from playground.policies import PolicySettings
from playground.rules.ruleset import book_rules, rules_to_json
from playground.workbench import workspace

from .openai_stub import StubServer
from .strategies import chat_requests

MODEL = "gpt-4o"  # whose meter and prompt cache count the run (the stub's model names pick its replies)
KEY = "sk-test-never-logged-7f3a"
SYSTEM = "You are a careful coding agent. " + "Follow the repository's conventions; read before you edit. " * 120
TOOLS = [{"type": "function", "function": {"name": "read_file", "description": "Read a file of the repository.",
                                           "parameters": {"type": "object",
                                                          "properties": {"file_path": {"type": "string"}}}}}]
MESSAGES = TypeAdapter(list[ChatCompletionMessageParam])


def _file(path: str) -> str:
    """A large tool result, different per file, so the policies fire and nothing is equal by chance."""
    return f"# {path}\n" + "".join(f"def handler_{n}(request):\n    return respond(request, {n})\n" for n in range(300))


def _start() -> list[Any]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Read the modules one by one."}]


def _run(client: Any, calls: int, **kwargs: Any) -> list[Any]:
    """An agent's loop: call, append the reply as the SDK gave it, run its tool calls, until it answers."""
    messages = _start()
    for _ in range(calls):  # (a bounded loop: a stub that never stops answering with calls fails, not hangs)
        reply = client.chat.completions.create(model=f"tool-loop-{calls - 1}", messages=messages, tools=TOOLS,
                                               **kwargs).choices[0].message
        messages.append(reply)  # the SDK's ChatCompletionMessage itself, as agents append it
        if not reply.tool_calls:
            return messages
        for call in reply.tool_calls:
            path = json.loads(call.function.arguments)["file_path"]
            messages.append({"role": "tool", "tool_call_id": call.id, "content": _file(path)})
    raise AssertionError(f"the loop did not end after {calls} calls")


def _run_streaming(client: Any, calls: int) -> list[Any]:
    """The same loop with ``stream=True``: the reply is assembled from the chunks, as agents do."""
    messages = _start()
    for _ in range(calls):
        stream = client.chat.completions.create(model=f"tool-loop-{calls - 1}", messages=messages, tools=TOOLS,
                                                stream=True)
        assert isinstance(stream, openai.Stream)  # the client's own stream, as it returned it
        content, tool_calls = None, []
        for chunk in stream:
            for choice in chunk.choices:
                content = choice.delta.content or content
                tool_calls += [{"id": call.id, "type": "function",
                                "function": {"name": call.function.name, "arguments": call.function.arguments}}
                               for call in choice.delta.tool_calls or ()]
        reply: dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls:
            reply["tool_calls"] = tool_calls
        messages.append(reply)
        if not tool_calls:
            return messages
        for call in tool_calls:
            path = json.loads(call["function"]["arguments"])["file_path"]
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": _file(path)})
    raise AssertionError(f"the loop did not end after {calls} calls")


def _recorded(messages: list[Any]) -> Conversation:
    """The run as its log holds it: every message the caller kept, the last reply included."""
    return chat.read({"model": MODEL, "messages": [plain(message) for message in messages], "tools": TOOLS})


def _replayed(run: Conversation, make: Callable[[], pg.Policy], meter: Callable[[], Meter], calls: int
              ) -> tuple[list[list[dict[str, Any]]], pg.Replay]:
    """What replay in stored mode sends at each call (the last request of a replay stopped there,
    each replay with a policy and a meter of its own) and the whole run's replay."""
    price = pg.read_prices().get(MODEL)
    sent = [chat.write_messages(pg.replay(run, make(), meter(), price, mode="stored", until=k).final.items)
            for k in range(1, calls + 1)]
    return sent, pg.replay(run, make(), meter(), price, mode="stored")


def _assert_parity(server: StubServer, messages: list[Any], records: tuple[CallRecord, ...],
                   make: Callable[[], pg.Policy], meter: Callable[[], Meter] = lambda: Meter(MODEL)) -> pg.Replay:
    received = [request["body"]["messages"] for request in server.requests]
    expected, whole = _replayed(_recorded(messages), make, meter, len(received))
    assert len(whole.calls) == len(received) == len(records)
    for number, (got, want) in enumerate(zip(received, expected, strict=True)):
        assert json.dumps(got, ensure_ascii=False) == json.dumps(want, ensure_ascii=False), f"call {number}"
    for number, (record, call) in enumerate(zip(records, whole.calls, strict=True)):
        assert (record.tokens_before, record.tokens_after) == (call.tokens_without, call.tokens_with), number
        assert (record.cached_before, record.cached_after) == (call.cached_without, call.cached_with), number
        assert record.fired == call.fired, number
    # the prefix the server saw unchanged from one request to the next is the one the log names
    items = [chat.read(got).items for got in received]
    assert [record.prefix_items for record in records] == [0] + [shared(old, new)
                                                                  for old, new in itertools.pairwise(items)]
    return whole


POLICIES: dict[str, Callable[[], pg.Policy]] = {
    "rules": lambda: pg.make("rules", threshold=4_000, summarize=False),
    "rules+summary": lambda: pg.make("rules", threshold=2_000, limit=2_000, keep_steps=1),
    "masking": lambda: pg.make("masking", window=2),
    "clear-tool-uses": lambda: pg.make("clear-tool-uses", trigger=5_000, keep=1),
    "hybrid": lambda: pg.make("hybrid", window=2, limit=7_000, keep_steps=1),
}


@pytest.mark.parametrize("name", POLICIES)
def test_a_wrapped_agent_loop_sends_what_replay_sends_call_by_call(name: str, tmp_path: Path) -> None:
    with StubServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)
        wrapped = pg.compacting(client, POLICIES[name](), tmp_path / "run.jsonl", model=MODEL)
        messages = _run(wrapped, calls=7)
    whole = _assert_parity(server, messages, wrapped.records, POLICIES[name])
    assert len(server.requests) == 7
    assert whole.totals.tokens_with < whole.totals.tokens_without  # the policy fired: there was something to match
    if name == "rules":  # compaction alone keeps the head and every earlier edit: the provider's cache hits
        assert sum(record.cached_after for record in wrapped.records) > 0
    if name == "rules+summary":
        assert any(edit.kind == "span" for record in wrapped.records for edit in record.edits)


def test_a_streamed_loop_passes_the_stream_through_and_still_sends_what_replay_sends(tmp_path: Path) -> None:
    make = POLICIES["rules"]
    with StubServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)
        wrapped = pg.compacting(client, make(), tmp_path / "run.jsonl", model=MODEL)
        messages = _run_streaming(wrapped, calls=6)
    _assert_parity(server, messages, wrapped.records, make)
    assert all(request["body"]["stream"] is True for request in server.requests)
    assert all(record.stream and record.usage is None for record in wrapped.records)  # (the stream holds it)
    assert any(record.fired for record in wrapped.records)


def test_the_async_client_shares_the_core_and_sends_what_replay_sends(tmp_path: Path) -> None:
    make = POLICIES["rules"]

    async def loop(client: Any) -> list[Any]:
        messages = _start()
        for _ in range(6):
            reply = (await client.chat.completions.create(model="tool-loop-5", messages=messages, tools=TOOLS)
                     ).choices[0].message
            messages.append(reply)
            if not reply.tool_calls:
                return messages
            for call in reply.tool_calls:
                messages.append({"role": "tool", "tool_call_id": call.id,
                                 "content": _file(json.loads(call.function.arguments)["file_path"])})
        raise AssertionError("the loop did not end after 6 calls")

    with StubServer() as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)
        wrapped = pg.compacting(client, make(), model=MODEL)
        messages = asyncio.run(loop(wrapped))
    _assert_parity(server, messages, wrapped.records, make)
    assert len(server.requests) == 6


def test_a_workspace_policy_runs_with_its_model_and_calibration_as_replay_counts_it(tmp_path: Path) -> None:
    path = _workspace_file(tmp_path, threshold=4_000, calibrations={MODEL: 1.25})
    policy = pg.load_policy(path)
    assert policy.calibration is not None and policy.calibration.factor == 1.25
    with StubServer() as server:
        wrapped = pg.compacting(openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0), policy)
        messages = _run(wrapped, calls=6)
    _assert_parity(server, messages, wrapped.records, policy.make, lambda: Meter(MODEL, policy.calibration))
    first = chat.read({"model": MODEL, "messages": _start(), "tools": TOOLS})
    assert wrapped.records[0].tokens_before == Meter(MODEL, policy.calibration).count(first).total > \
        Meter(MODEL).count(first).total  # counted with the calibration the page counted with


def _run_responses(client: Any, calls: int) -> list[Any]:
    """The agent's loop on the Responses API: the reply's output items appended as the SDK gave them."""
    items: list[Any] = [{"role": "user", "content": "Read the modules one by one."}]
    responses_tools = [{"type": "function", **TOOLS[0]["function"]}]
    for _ in range(calls):
        response = client.responses.create(model=f"tool-loop-{calls - 1}", instructions=SYSTEM, input=items,
                                           tools=responses_tools)
        items += response.output
        calls_made = [item for item in response.output if item.type == "function_call"]
        if not calls_made:
            return items
        for call in calls_made:
            items.append({"type": "function_call_output", "call_id": call.call_id,
                          "output": _file(json.loads(call.arguments)["file_path"])})
    raise AssertionError(f"the loop did not end after {calls} calls")


@pytest.mark.parametrize("name", ["rules", "masking", "rules+summary"])
def test_a_wrapped_responses_loop_sends_what_replay_sends_call_by_call(name: str) -> None:
    make = POLICIES[name]
    with StubServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)
        wrapped = pg.compacting(client, make(), model=MODEL)
        items = _run_responses(wrapped, calls=6)
    assert [request["path"] for request in server.requests] == ["/v1/responses"] * 6
    recorded = formats.responses.read({"model": MODEL, "instructions": SYSTEM, "input": [plain(i) for i in items],
                                       "tools": server.requests[0]["body"]["tools"]})
    price = pg.read_prices().get(MODEL)
    whole = pg.replay(recorded, make(), Meter(MODEL), price, mode="stored")
    records = wrapped.sessions["responses"].records
    assert len(whole.calls) == len(records) == 6 and wrapped.sessions["chat.completions"].records == []
    for number, request in enumerate(server.requests):
        want = formats.responses.write(replace(pg.replay(recorded, make(), Meter(MODEL), price, mode="stored",
                                                         until=number + 1).final, bare=True))
        assert json.dumps(request["body"]["input"]) == json.dumps(want), number
        assert request["body"]["instructions"] == SYSTEM
        call = whole.calls[number]
        assert (records[number].tokens_before, records[number].tokens_after) == (call.tokens_without, call.tokens_with)
        assert (records[number].cached_before, records[number].cached_after) == (call.cached_without, call.cached_with)
    assert whole.totals.tokens_with < whole.totals.tokens_without
    assert records[1].usage is not None and records[1].usage["input_tokens"] == 101


def test_a_continued_stored_response_goes_as_it_is() -> None:
    recorder = _Recorder()
    recorder.responses = recorder
    wrapped = pg.compacting(recorder, POLICIES["rules"](), model=MODEL)
    given = [{"type": "function_call_output", "call_id": "call_0", "output": _file("a.py")}]
    wrapped.responses.create(model=MODEL, previous_response_id="resp_0", input=given)
    wrapped.responses.create(model=MODEL, input="just a string")
    assert recorder.sent[0]["input"] is given and recorder.sent[1]["input"] == "just a string"
    assert wrapped.records == ()


def test_earlier_compacted_messages_are_sent_again_byte_identical(tmp_path: Path) -> None:
    with StubServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)
        wrapped = pg.compacting(client, POLICIES["rules"](), model=MODEL)
        _run(wrapped, calls=7)
    bodies = [request["body"]["messages"] for request in server.requests]
    for number in range(1, len(bodies)):
        earlier, now = bodies[number - 1], bodies[number]
        kept = len(earlier) if not wrapped.records[number].edits else wrapped.records[number].edits[0].message
        assert json.dumps(now[:kept]) == json.dumps(earlier[:kept]), number
    assert any(record.edits for record in wrapped.records)


class _Watched:
    """The agent's side of a wrapped client: at every call, the caller's ``messages`` (the list, its
    dicts and the SDK's message objects) are copied before and compared after."""

    def __init__(self, wrapped: Any) -> None:
        self.chat = self.completions = self
        self._wrapped = wrapped
        self.checked = 0

    def create(self, **kwargs: Any) -> Any:
        messages = kwargs["messages"]
        before = (list(messages), copy.deepcopy([plain(message) for message in messages]),
                  [message if isinstance(message, dict) else message.model_copy(deep=True) for message in messages])
        response = self._wrapped.chat.completions.create(**kwargs)
        assert list(messages) == before[0] and all(a is b for a, b in zip(messages, before[0], strict=True))
        assert [plain(message) for message in messages] == before[1]
        assert all(message == kept for message, kept in zip(messages, before[2], strict=True))
        self.checked += 1
        return response


def test_the_callers_messages_are_never_changed_and_other_arguments_reach_the_server_as_given() -> None:
    options = {"temperature": 0.25, "seed": 7, "tool_choice": "auto", "max_completion_tokens": 300, "user": "u-1",
               "metadata": {"run": "parity"}, "extra_body": {"custom_flag": True},
               "extra_headers": {"X-Trace": "trace-1"}}
    with StubServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)
        wrapped = pg.compacting(client, POLICIES["rules"](), model=MODEL)
        watched = _Watched(wrapped)
        messages = _run(watched, calls=5, **options)
        watched.chat.completions.create(model="tool-loop-0", messages=messages, tools=TOOLS, **options)
        wrapped_request = server.requests[-1]
        client.chat.completions.create(model="tool-loop-0", messages=messages, tools=TOOLS, **options)
        direct = server.requests[-1]
        assert wrapped.models is client.models  # everything but create is the real client's
        assert wrapped.chat.completions.retrieve == client.chat.completions.retrieve
    assert watched.checked == 6
    assert {key: value for key, value in wrapped_request["body"].items() if key != "messages"} == \
        {key: value for key, value in direct["body"].items() if key != "messages"}
    assert wrapped_request["body"]["custom_flag"] is True and wrapped_request["headers"]["x-trace"] == "trace-1"
    assert wrapped_request["body"]["messages"] != direct["body"]["messages"]  # (the policy did fire)
    assert direct["body"]["messages"] == [plain(message) for message in messages]  # read as the SDK sends them


def test_each_call_logs_one_line_with_its_figures_and_never_the_key(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    with StubServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)
        wrapped = pg.compacting(client, POLICIES["rules"](), log, model=MODEL)
        _run(wrapped, calls=6, extra_headers={"Authorization": f"Bearer {KEY}"})
    text = log.read_text(encoding="utf-8")
    lines = [json.loads(line) for line in text.splitlines()]
    assert len(lines) == 6 == len(server.requests)
    assert KEY not in text and "Bearer" not in text and "Authorization" not in text
    assert [{key: line[key] for key in record.to_json()} for line, record in zip(lines, wrapped.records,
                                                                                 strict=True)] == \
        [record.to_json() for record in wrapped.records]
    assert text.count(SYSTEM[:40]) == 1  # the conversation once: each line adds only what is new at its call
    assert {"tokens_before", "tokens_after", "edits", "prefix_items", "prefix_tokens", "cached_after",
            "usage"} <= set(lines[0])
    assert lines[1]["usage"]["prompt_tokens"] == 101  # the provider's usage, as it came
    edited = [edit for line in lines for edit in line["edits"]]
    assert edited and all(edit["rule"] == "tool_results[read_file]" and edit["kind"] == "result" for edit in edited)


def test_a_history_the_caller_rewrote_starts_the_run_again() -> None:
    with StubServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)
        wrapped = pg.compacting(client, POLICIES["rules"](), model=MODEL)
        messages = _run(wrapped, calls=4)
        shorter = [messages[0], {"role": "user", "content": "Start over."}]
        wrapped.chat.completions.create(model="tool-loop-9", messages=shorter)
    assert wrapped.records[-1].restarted and not any(record.restarted for record in wrapped.records[:-1])
    assert server.requests[-1]["body"]["messages"] == shorter


def test_a_failed_call_is_not_a_call_of_the_run() -> None:
    with StubServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)
        wrapped = pg.compacting(client, POLICIES["rules"](), model=MODEL)
        with pytest.raises(openai.RateLimitError):
            wrapped.chat.completions.create(model="busy", messages=_start())
        assert wrapped.records == ()
        wrapped.chat.completions.create(model="tool-loop-0", messages=_start())
    assert len(wrapped.records) == 1 and wrapped.records[0].call == 0


def test_a_policy_file_replayed_per_call_is_refused_not_run_otherwise(tmp_path: Path) -> None:
    policy = pg.load_policy(_workspace_file(tmp_path, mode="per-call"))
    with pytest.raises(pg.InputError, match="stored mode only"):
        pg.compacting(object(), policy)
    wrapped = pg.compacting(openai.OpenAI(api_key=KEY), replace(policy, mode="stored"))
    assert wrapped.sessions["chat.completions"].policy.name == "rules"
    assert wrapped.sessions["responses"].policy is not wrapped.sessions["chat.completions"].policy  # one per endpoint


# -- the property: whatever the conversation and policy, the request is a valid one, paired, never larger

class _Recorder:
    """A client's ``chat.completions`` that keeps the arguments it was called with."""

    def __init__(self) -> None:
        self.chat = self
        self.completions = self
        self.sent: list[dict[str, Any]] = []

    def create(self, **kwargs: Any) -> Any:
        self.sent.append(kwargs)
        return None


PROPERTY_POLICIES = {
    "rules": lambda: pg.make("rules", threshold=0, limit=0, keep_steps=1),
    "masking": lambda: pg.make("masking", window=1),
    "clear-tool-uses": lambda: pg.make("clear-tool-uses", trigger=0, keep=1, clear_tool_inputs=True),
    "hybrid": lambda: pg.make("hybrid", window=1, limit=0, keep_steps=1),
    "summarize": lambda: pg.make("summarize", limit=0, keep_steps=1),
}


def unanswered(conversation: Conversation) -> int:
    """How many tool calls no result answers (a result answers the latest earlier call with its id,
    as the readers pair them; a reader refuses a result whose call is not before it)."""
    return sum(isinstance(item, ToolCall) for item in conversation.items) - len(pairs(conversation.items))


def _sendable(request: Any) -> Any:
    """A generated request as the API takes it: the generators' ``refusal`` extra may be any JSON
    value, which the SDK's types (and the API) refuse unless it is a string."""
    messages = request if isinstance(request, list) else request["messages"]
    for message in messages:
        if not isinstance(message.get("refusal", ""), str):
            del message["refusal"]
    return request


def call_points(messages: list[dict[str, Any]]) -> list[int]:
    """Where an agent calls in a generated run: before each reply (an assistant message after
    another role's) and once after the last message."""
    return [n for n, message in enumerate(messages) if message["role"] == "assistant"
            and (n == 0 or messages[n - 1]["role"] != "assistant")] + [len(messages)]


@given(request=chat_requests(least=3, most=9).map(_sendable), name=st.sampled_from(sorted(PROPERTY_POLICIES)))
def test_a_wrapped_request_is_valid_paired_and_never_larger(request: Any, name: str) -> None:
    messages = request if isinstance(request, list) else request["messages"]
    tools = None if isinstance(request, list) else request.get("tools")
    recorder = _Recorder()
    wrapped = pg.compacting(recorder, PROPERTY_POLICIES[name](), model=MODEL)
    extra = {"tools": tools} if tools else {}

    def send(given_messages: list[Any]) -> list[Any]:
        wrapped.chat.completions.create(model=MODEL, messages=given_messages, **extra)
        return recorder.sent[-1]["messages"]

    check_each_call(messages, wrapped, send, lambda sent: chat.read({"messages": sent, **extra}), MESSAGES,
                    Meter(MODEL), name)


def check_each_call(messages: list[Any], wrapped: Any, send: Callable[[list[Any]], list[Any]],
                    read: Callable[[list[Any]], Conversation], valid: TypeAdapter, meter: Meter, name: str) -> None:
    """The property, whatever the API: the run as an agent makes it (``send``: one call with the
    history so far, giving what was sent), a call before each reply and one after the last; each
    request sent is valid (``valid``: the SDK's own types), parts no call from its result (a
    summary may replace a call and its result together), has no more tokens than the agent's; the
    agent's ``messages`` stay as they were."""
    kept = copy.deepcopy(messages)
    valid.validate_python(messages)  # a valid request to begin with
    for start in call_points(messages):
        given_messages = messages[:start]
        sent = send(given_messages)
        valid.validate_python(sent)
        assert unanswered(read(sent)) <= unanswered(read(given_messages))
        assert meter.count(read(sent)).total <= meter.count(read(given_messages)).total
        record = wrapped.records[-1]
        assert record.tokens_after <= record.tokens_before
        event(f"{name}: {'fired' if record.fired else 'did not fire'}")  # (--hypothesis-show-statistics)
    assert messages == kept


# -- the policy file

def _workspace_file(tmp_path: Path, **changes: Any) -> Path:
    """A workspace as the page saves it (``workspace.to_json``), with settings away from every default."""
    calibrations = changes.pop("calibrations", {})
    mode = changes.pop("mode", "stored")
    rules = load_rules_with_min_tokens()
    ws = workspace.Workspace(
        conversation=chat.read({"model": MODEL, "messages": _start()}), rules=rules,
        threshold=changes.pop("threshold", 12_345), keep_recent=1, compact_errors=True, detect_errors=False,
        model=MODEL, label="tuned on the page",
        summarization=workspace.WorkspaceSummarization(enabled=True, limit=20_000, keep_steps=2),
        replay=workspace.ReplaySettings(policy=changes.pop("policy", "rules"), mode=mode, cache="openai",
                                        window=4, trigger=50_000, keep=2, clear_at_least=100),
        calibrations={model: pg.Calibration(model, factor) for model, factor in calibrations.items()})
    path = tmp_path / "workspace.json"
    path.write_text(json.dumps(workspace.to_json(ws)), encoding="utf-8")
    return path


def load_rules_with_min_tokens() -> pg.Rules:
    data = rules_to_json(book_rules())
    data["tool_results"][0]["min_tokens"] = 50
    return pg.load_rules(data)


def test_load_policy_reads_every_setting_of_a_workspace_the_page_saved(tmp_path: Path) -> None:
    policy = pg.load_policy(_workspace_file(tmp_path))
    assert isinstance(policy, PolicyFile)
    assert (policy.name, policy.model, policy.cache, policy.mode) == ("rules", MODEL, "openai", "stored")
    assert policy.settings == PolicySettings(
        rules=load_rules_with_min_tokens(), label="tuned on the page",
        compaction=Settings(threshold=12_345, keep_recent=1, compact_errors=True, detect_errors=False),
        summarize=True, limit=20_000, keep_steps=2, window=4, trigger=50_000, keep=2, clear_at_least=100,
        context_window=pg.read_prices().get(MODEL).context_window)
    made = policy.make()
    assert made.params() == {"rules": "tuned on the page", "threshold": 12_345, "keep_recent": 1,
                             "compact_errors": True, "detect_errors": False, "summarize": True, "limit": 20_000,
                             "keep_steps": 2}
    assert made is not policy.make()  # a fresh policy (fresh caches) per run
    assert pg.load_policy(_workspace_file(tmp_path, policy="clear-tool-uses")).make().params()["keep"] == 2
    assert policy.with_options(threshold=9_000).settings.compaction.threshold == 9_000


def test_load_policy_reads_a_rules_file_as_the_rules_policy(tmp_path: Path) -> None:
    path = tmp_path / "compaction-rules.json"
    path.write_text(json.dumps(rules_to_json(load_rules_with_min_tokens())), encoding="utf-8")
    policy = pg.load_policy(path)
    assert (policy.name, policy.model, policy.settings.rules) == ("rules", None, load_rules_with_min_tokens())
    assert policy.make().params()["threshold"] == Settings().threshold


@pytest.mark.parametrize(("text", "field"), [
    ('{"tool_results": [{"tool": "read_file", "template": "{x.__class__}"}]}', "tool_results[0].template"),
    ('{"tool_calls": [{"tool": "", "replacement": "r"}]}', "tool_calls[0].tool"),
    ('{"kind": "compaction-playground-workspace", "version": 1, "threshold": -5, '
     '"conversation": {"format": "chat", "request": {"messages": []}}}', "threshold"),
    ('{"kind": "compaction-playground-workspace", "version": 1, "replay": {"strategy": "nope"}, '
     '"conversation": {"format": "chat", "request": {"messages": []}}}', "replay.strategy"),
    ('{"kind": "something-else"}', "kind"),
    ('{"tool_results": [', "line 1"),
    ('{"threshold": 5}', "tool_results"),
])
def test_a_bad_policy_file_names_the_file_and_the_field(tmp_path: Path, text: str, field: str) -> None:
    path = tmp_path / "policy.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(pg.InputError) as raised:
        pg.load_policy(path)
    assert str(path) in str(raised.value) and field in str(raised.value), str(raised.value)


def test_a_missing_policy_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(pg.InputError, match="cannot read the file") as raised:
        pg.load_policy(tmp_path / "absent.json")
    assert str(tmp_path / "absent.json") in str(raised.value)
