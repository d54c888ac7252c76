"""The tuned policy inside the book's own agent loop (``pg.seed_hook``), with measured parity.

The book's types are defined here only as far as Listing 6.5 uses them (the adapter reads them by
their attributes), and the seed's plain loop is written as an agent writes it: it builds an
``LlmRequest`` from its history, calls ``apply_compaction(context, request)``, converts the request's
contents to Chat Completions messages with its own code, sends them with the real ``openai`` client
to the local server (``tests/openai_stub.py``: ``tool-loop-N`` asks for a file per reply), runs the
``read_file`` calls and appends the ``ToolCall`` and ``ToolResult``. Its log is read back and replayed
in stored mode; at each call the messages the server received, parsed, are replay's request (every
role, text, call, argument and result), and the call's logged figures are replay's. Byte for byte
cannot be asked: the hook never writes the JSON, the agent's converter does (its own key order, a
list of strings joined into one text, ``null`` for the assistant content before tool calls).

The book's own ``apply_compaction`` is copied below as the reference behaviour: with the book's
rules and threshold 0 the hook gives the same contents, except what the model has not read yet,
which the engine's guard keeps (the listing would replace a file's content before the model saw it).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict  # noqa: UP035 (the listing's own annotation, copied as the book prints it)

import openai
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

import playground as pg
from playground.agent import CompactionHook
from playground.formats import chat
from playground.meter.tokens import Meter

from .openai_stub import StubServer
from .strategies import turns
from .test_agent_langchain import TASK, _essence
from .test_agent_openai import KEY, MODEL, POLICIES, PROPERTY_POLICIES, SYSTEM, TOOLS, _file, unanswered

# -- the book's types, as far as Listing 6.5 uses them


@dataclass
class ToolCall:
    tool_call_id: str
    name: str
    arguments: dict


@dataclass
class ToolResult:
    tool_call_id: str
    name: str
    status: str
    content: list


@dataclass
class Message:
    role: str
    content: str | list


@dataclass
class LlmRequest:
    contents: list = field(default_factory=list)


@dataclass
class ExecutionContext:
    run_id: str = "run-0"


# -- Listing 6.5, as the book prints it: the reference behaviour

TOOLCALL_COMPACTION_RULES = {
    "create_file": "[Content saved to file]",
}

TOOLRESULT_COMPACTION_RULES = {
    "read_file": "File content from {file_path}. Re-read if needed.",
    "search_web": "Search results processed. Query: {query}. Re-search if needed.",
    "tavily_search": "Search results processed. Query: {query}. Re-search if needed.",
}


def apply_compaction(context: ExecutionContext, request: LlmRequest) -> None:
    """Compress tool calls and results into reference messages"""

    tool_call_args: Dict[str, Dict] = {}  # noqa: UP006
    compacted = []

    for item in request.contents:
        if isinstance(item, ToolCall):
            # Save arguments (for use when compressing ToolResult later)
            tool_call_args[item.tool_call_id] = item.arguments

            # If the ToolCall itself is a compression target (create_file, etc.)
            if item.name in TOOLCALL_COMPACTION_RULES:
                compressed_args = {
                    k: TOOLCALL_COMPACTION_RULES[item.name] if k == "content" else v
                    for k, v in item.arguments.items()
                }
                compacted.append(ToolCall(
                    tool_call_id=item.tool_call_id,
                    name=item.name,
                    arguments=compressed_args
                ))
            else:
                compacted.append(item)

        elif isinstance(item, ToolResult):
            # If ToolResult is a compression target (read_file, search_web, etc.)
            if item.name in TOOLRESULT_COMPACTION_RULES:
                args = tool_call_args.get(item.tool_call_id, {})
                template = TOOLRESULT_COMPACTION_RULES[item.name]
                compressed_content = template.format(
                    file_path=args.get("file_path", args.get("path", "unknown")),
                    query=args.get("query", "unknown")
                )
                compacted.append(ToolResult(
                    tool_call_id=item.tool_call_id,
                    name=item.name,
                    status=item.status,
                    content=[compressed_content]
                ))
            else:
                compacted.append(item)
        else:
            compacted.append(item)

    request.contents = compacted


# -- the seed's plain agent loop

def to_chat(contents: list[Any]) -> list[dict[str, Any]]:
    """The agent's own converter from its contents to Chat Completions messages: a call joins the
    assistant message before it, a result's list of strings is sent as one text."""
    messages: list[dict[str, Any]] = []
    for item in contents:
        if isinstance(item, ToolCall):
            if not messages or messages[-1]["role"] != "assistant":
                messages.append({"role": "assistant", "content": None})
            messages[-1].setdefault("tool_calls", []).append({"id": item.tool_call_id, "type": "function", "function": {
                "name": item.name, "arguments": json.dumps(item.arguments)}})
        elif isinstance(item, ToolResult):
            messages.append({"role": "tool", "tool_call_id": item.tool_call_id, "content": "\n".join(item.content)})
        else:
            text = item.content if isinstance(item.content, str) else "\n".join(item.content)
            messages.append({"role": item.role, "content": text})
    return messages


def seed_loop(client: Any, compaction: Callable[[ExecutionContext, LlmRequest], None], calls: int,
              after: Callable[[Any, list[Any]], Any] | None = None) -> list[Any]:
    """The seed's loop: a request from the history, compacted in place, sent, its calls run. ``after``:
    told each response and the items appended for its reply."""
    context = ExecutionContext()
    contents: list[Any] = [Message("system", SYSTEM), Message("user", TASK)]
    for _ in range(calls):  # (bounded: a server that never stops calling tools fails, not hangs)
        request = LlmRequest(contents=list(contents))
        compaction(context, request)
        response = client.chat.completions.create(model=f"tool-loop-{calls - 1}", messages=to_chat(request.contents),
                                                  tools=TOOLS)
        message = response.choices[0].message
        reply = ([Message("assistant", message.content)] if message.content else []) + \
            [ToolCall(call.id, call.function.name, json.loads(call.function.arguments))
             for call in message.tool_calls or ()]
        contents += reply
        if after is not None:
            after(response, reply)
        if not message.tool_calls:
            return contents
        for call in reply:
            if isinstance(call, ToolCall):
                contents.append(ToolResult(call.tool_call_id, call.name, "success",
                                           [_file(call.arguments["file_path"])]))
    raise AssertionError(f"the loop did not end after {calls} calls")


def assert_parity(server: StubServer, log: Path, hook: CompactionHook, make: Callable[[], pg.Policy],
                  contents: list[Any]) -> pg.Replay:
    """The requests the server received are replay's, call by call; the figures logged, replay's;
    the log, the run the agent held."""
    received = [request["body"]["messages"] for request in server.requests]
    run = pg.load(log)
    assert _essence(run) == _essence(chat.read(to_chat(contents)))
    price = pg.read_prices().get(MODEL)
    whole = pg.replay(run, make(), Meter(MODEL), price, mode="stored")
    assert len(received) == len(hook.records) == len(whole.calls)
    for number, got in enumerate(received):
        final = pg.replay(run, make(), Meter(MODEL), price, mode="stored", until=number + 1).final
        assert _essence(chat.read(got)) == _essence(final), number
    for number, (record, call) in enumerate(zip(hook.records, whole.calls, strict=True)):
        assert (record.tokens_before, record.tokens_after) == (call.tokens_without, call.tokens_with), number
        assert (record.cached_before, record.cached_after) == (call.cached_without, call.cached_with), number
        assert record.fired == call.fired, number
    return whole


@pytest.mark.parametrize("name", ["rules", "rules+summary", "masking", "clear-tool-uses"])
def test_the_seed_loop_sends_what_replay_sends_call_by_call(name: str, tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    hook = pg.seed_hook(POLICIES[name](), log, model=MODEL, tools=TOOLS)
    with StubServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)
        contents = seed_loop(client, hook, calls=7,
                             after=lambda response, reply: hook.done(usage=response.usage, reply=reply))
    whole = assert_parity(server, log, hook, POLICIES[name], contents)
    assert whole.totals.tokens_with < whole.totals.tokens_without  # the policy fired
    assert [record.usage["prompt_tokens"] for record in hook.records] == [100, 101, 102, 103, 104, 105, 10]
    assert KEY not in log.read_text()
    if name == "rules":  # earlier edits go again as the same text: the provider's cache hits on them
        assert sum(record.cached_after for record in hook.records) > 0
    if name == "rules+summary":  # a summary: a message the policy wrote, of the agent's own class
        assert any(edit.kind == "span" for record in hook.records for edit in record.edits)


def test_without_done_each_call_is_committed_at_the_next_and_a_retry_is_the_same_call(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    make = POLICIES["rules"]
    hook = pg.seed_hook(make(), log, model=MODEL, tools=TOOLS)

    def retried(context: ExecutionContext, request: LlmRequest) -> None:  # a call that failed, then went again
        hook(context, LlmRequest(list(request.contents)))
        hook(context, request)

    with StubServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)
        contents = seed_loop(client, retried, calls=6)
    assert len(hook.records) == 5  # the last call waits for done
    hook.done(reply=contents[-1:])
    assert_parity(server, log, hook, make, contents)
    assert all(record.usage is None for record in hook.records)


def test_contents_that_do_not_begin_with_the_last_calls_start_the_run_again() -> None:
    hook = pg.seed_hook(pg.make("rules", threshold=0, summarize=False), model=MODEL)
    first = [Message("user", "Read a.py."), ToolCall("c1", "read_file", {"file_path": "a.py"}),
             ToolResult("c1", "read_file", "success", [_file("a.py")])]
    hook(ExecutionContext(), LlmRequest(first[:1]))
    hook(ExecutionContext(), LlmRequest(first))
    hook(ExecutionContext(), LlmRequest([Message("user", "Another task.")]))
    hook.done()
    assert [(record.call, record.restarted) for record in hook.records] == [(0, False), (1, False), (2, True)]


def test_the_callers_items_are_never_changed_and_kept_items_are_its_own() -> None:
    contents = [Message("user", "Read a.py."), ToolCall("c1", "read_file", {"file_path": "a.py"}),
                ToolResult("c1", "read_file", "success", [_file("a.py")]), Message("assistant", "Read it."),
                Message("user", ["Now the next one."])]
    before = copy.deepcopy(contents)
    request = LlmRequest(list(contents))
    pg.seed_hook(pg.make("rules", threshold=0, summarize=False), model=MODEL)(ExecutionContext(), request)
    assert contents == before
    assert [item is was for item, was in zip(request.contents, contents, strict=True)] == \
        [True, True, False, True, True]
    assert request.contents[2] == ToolResult("c1", "read_file", "success",
                                             ["File content from a.py. Re-read if needed."])


class PlainCall:
    """A tool call that is no dataclass: written back by calling its class with the listing's fields."""

    def __init__(self, tool_call_id: str, name: str, arguments: dict) -> None:
        self.tool_call_id, self.name, self.arguments = tool_call_id, name, arguments


def test_a_class_that_is_no_dataclass_is_built_from_the_listings_fields() -> None:
    call = PlainCall("c1", "create_file", {"file_path": "r.md", "content": "x " * 3_000})
    contents = [Message("user", "Write it."), call, ToolResult("c1", "create_file", "success", ["Saved."]),
                Message("assistant", "Done."), Message("user", "Thanks.")]
    request = LlmRequest(list(contents))
    pg.seed_hook(pg.make("rules", threshold=0, summarize=False), model=MODEL)(ExecutionContext(), request)
    written = request.contents[1]
    assert type(written) is PlainCall and written is not call
    assert written.arguments == {"file_path": "r.md", "content": "[Content saved to file]"}
    assert call.arguments["content"] == "x " * 3_000


def test_an_item_the_listing_does_not_know_is_refused_by_its_place() -> None:
    hook = pg.seed_hook(pg.make("rules"), model=MODEL)
    with pytest.raises(pg.InputError, match=r"request\.contents\[1\].*no item of the book's contents"):
        hook(ExecutionContext(), LlmRequest([Message("user", "hi"), {"role": "user"}]))
    with pytest.raises(pg.InputError, match=r"request\.contents\[0\]\.arguments.*not a dict"):
        hook(ExecutionContext(), LlmRequest([ToolCall("c1", "bash", '{"command": "ls"}')]))
    with pytest.raises(pg.InputError, match=r"request\.contents"):
        hook(ExecutionContext(), object())


# -- the readable twin: the book's listing and the hook under the book's rules, threshold 0

REPORT = "## Capacity report\n" + "The cluster ran at 71% of its capacity in the third quarter.\n" * 170
CSV = "region,quarter,load\n" + "".join(f"eu-{n},Q3,{n % 97}\n" for n in range(400))
RESULTS = "".join(f"Result {n}: capacity planning for clusters, part {n}.\n" for n in range(150))


def _book_run() -> list[list[Any]]:
    """A run that saves a report, reads a file and searches the web: the contents at each call."""
    steps: list[list[Any]] = [[Message("system", "You are a research agent."),
                               Message("user", "Write the report, then check the data and search.")]]
    for number, (tool, arguments, output) in enumerate([
            ("create_file", {"file_path": "report.md", "content": REPORT}, "Saved report.md."),
            ("read_file", {"file_path": "data/load.csv"}, CSV),
            ("search_web", {"query": "cluster capacity planning"}, RESULTS)]):
        steps.append([*steps[-1], Message("assistant", f"Step {number}."), ToolCall(f"c{number}", tool, arguments),
                      ToolResult(f"c{number}", tool, "success", [output])])
    steps.append([*steps[-1], Message("assistant", "The report is saved."), Message("user", "Thanks.")])
    return steps


def test_the_book_listing_and_the_hook_give_the_same_contents() -> None:
    hook = pg.seed_hook(pg.make("rules", rules=pg.book_rules(), threshold=0, summarize=False), model=MODEL)
    context = ExecutionContext()
    for number, contents in enumerate(_book_run()):
        book, ours = LlmRequest(list(contents)), LlmRequest(list(contents))
        apply_compaction(context, book)
        hook(context, ours)
        turn = max((n for n, item in enumerate(contents) if isinstance(item, Message) and item.role == "assistant"),
                   default=len(contents))  # where the model's last turn begins: what follows it has not read
        assert ours.contents[:turn] == book.contents[:turn], number
        # what it has not read yet the listing replaces, the engine keeps (its not-processed guard)
        assert all(item is was for item, was in zip(ours.contents[turn:], contents[turn:], strict=True)), number
        assert number in (0, 4) or book.contents[turn:] != contents[turn:]
    assert ours.contents == book.contents  # the last call: the model has read everything
    assert [item.content for item in ours.contents if isinstance(item, ToolResult)] == [
        ["Saved report.md."], ["File content from data/load.csv. Re-read if needed."],
        ["Search results processed. Query: cluster capacity planning. Re-search if needed."]]


# -- the property: whatever the contents and policy, what is sent is valid, paired, never larger

@st.composite
def book_runs(draw: st.DrawFn) -> list[Any]:
    """The book's contents of a generated run (``strategies.turns``): messages (a string or a list of
    strings), calls with dict arguments, each answered by a result after them."""
    contents: list[Any] = [Message("system", draw(st.text(max_size=20)))] if draw(st.booleans()) else []
    for kind, value in draw(turns()):
        if kind == "calls":
            contents += [ToolCall(call_id, tool, arguments) for call_id, tool, arguments, _, _ in value]
            contents += [ToolResult(call_id, tool, "error" if failed else "success", [output])
                         for call_id, tool, _, output, failed in value]
        else:
            contents.append(Message(kind, value if draw(st.booleans()) else [value]))
    return contents


def _starts(contents: list[Any]) -> list[int]:
    """Where the loop calls the model: before each assistant turn, and after the last item."""
    def output(item: Any) -> bool:
        return isinstance(item, ToolCall) or (isinstance(item, Message) and item.role == "assistant")
    return [n for n, item in enumerate(contents) if output(item) and (n == 0 or not output(contents[n - 1]))] + \
        [len(contents)]


@given(contents=book_runs(), name=st.sampled_from(sorted(PROPERTY_POLICIES)), done=st.booleans())
def test_the_hooks_contents_are_valid_paired_and_never_larger(contents: list[Any], name: str, done: bool) -> None:
    before_all = copy.deepcopy(contents)
    hook = pg.seed_hook(PROPERTY_POLICIES[name](), model=MODEL)
    meter = Meter(MODEL)
    for start in _starts(contents):
        request = LlmRequest(contents[:start])
        hook(ExecutionContext(), request)
        assert all(type(item) in (Message, ToolCall, ToolResult) for item in request.contents)
        given_run, sent = chat.read(to_chat(contents[:start])), chat.read(to_chat(request.contents))
        assert unanswered(sent) <= unanswered(given_run)
        assert _essence(sent) == _essence(hook._pending[0].pending.sent)  # (the call prepared) written back whole
        assert meter.count(sent).total <= meter.count(given_run).total
        if done:
            record = hook.done()
            assert record is not None and record.tokens_after <= record.tokens_before
            event(f"{name}: {'fired' if record.fired else 'did not fire'}")  # (--hypothesis-show-statistics)
    assert contents == before_all  # the caller's items, never changed
