"""The recall store (``playground.recall``) and the wrapper's recall tool: an original a reference with
a key replaced comes back byte for byte, through the real ``openai`` and ``anthropic`` clients."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import anthropic
import openai
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import playground as pg
from playground.export import compactor
from playground.recall import KEY_CHARS, RecallStore, recall_key
from playground.tune.suggest import RECALL_TEMPLATE
from tests.anthropic_stub import AnthropicStub
from tests.openai_stub import RECALL_ID, StubServer
from tests.test_export_python import _same

TEMPLATE = "File content from {file_path} stored as {recall_key}; call recall(key) to read it."
TOOLS = [{"type": "function", "function": {"name": "read_file", "description": "Read a file.", "parameters": {
    "type": "object", "properties": {"file_path": {"type": "string"}}}}}]
CLAUDE_TOOLS = [{"name": "read_file", "description": "Read a file.", "input_schema": {
    "type": "object", "properties": {"file_path": {"type": "string"}}}}]


def read_file(file_path: str) -> str:
    """A large file per path, with characters JSON and UTF-8 both escape or widen."""
    return f"# {file_path} — «ünïcode» \"quoted\"\r\n\t" + "".join(
        f"def step_{n}(state):\n    return state + {n}\n" for n in range(200))


def _policy() -> pg.Policy:
    rules = pg.load_rules({"tool_results": [{"tool": "read_file", "template": TEMPLATE}]})
    return pg.make("rules", pg.PolicySettings(rules=rules).with_options(threshold=3_000))


# --- the store


def test_round_trip_and_key(tmp_path: Path) -> None:
    store = RecallStore(tmp_path / "recall.sqlite")
    key = store.put("héllo\r\n")
    assert key == recall_key("héllo\r\n") == recall_key("héllo\r\n".encode()) and len(key) == KEY_CHARS
    assert store.get(key) == "héllo\r\n".encode() and key in store
    assert store.answer(json.dumps({"key": key})) == store.answer({"key": key}) == "héllo\r\n"
    assert store.get("0" * KEY_CHARS) is None and "no original" in store.answer({"key": "0" * KEY_CHARS}).lower()
    assert "takes one argument" in store.answer("not json")


def test_bound_evicts_the_oldest(tmp_path: Path) -> None:
    store = RecallStore(tmp_path / "recall.sqlite", max_bytes=25)
    first, second = store.put(b"a" * 10), store.put(b"b" * 10)
    store.put(b"a" * 10)  # stored again: now the newest
    third = store.put(b"c" * 10)  # 30 bytes > 25: the oldest (second) goes
    assert first in store and third in store and second not in store and store.size() == 20
    huge = store.put(b"d" * 100)  # larger than the bound: kept alone, never the one just stored
    assert huge in store and store.size() == 100 and first not in store


def test_persists_across_instances(tmp_path: Path) -> None:
    key = RecallStore(tmp_path / "recall.sqlite").put("kept on disk")
    assert RecallStore(tmp_path / "recall.sqlite").get(key) == b"kept on disk"


@pytest.mark.parametrize("bad", ["folder", "missing/recall.sqlite", "not-a-database"])
def test_bad_path_is_an_input_error(tmp_path: Path, bad: str) -> None:
    (tmp_path / "folder").mkdir()
    (tmp_path / "not-a-database").write_text("this is not SQLite " * 100)
    with pytest.raises(pg.InputError, match="recall store"):
        RecallStore(tmp_path / bad)


def test_bad_bound_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(pg.InputError, match="max_bytes"):
        RecallStore(tmp_path / "recall.sqlite", max_bytes=0)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=4096), text=st.text(max_size=512))
def test_any_bytes_come_back(tmp_path: Path, data: bytes, text: str) -> None:
    store = RecallStore(tmp_path / "property.sqlite")
    assert store.get(store.put(data)) == data
    assert store.answer({"key": store.put(text)}) == text


def test_the_exported_compactor_keys_as_the_library_does() -> None:
    assert compactor.RECALL_KEY_CHARS == KEY_CHARS
    rules = pg.load_rules({"tool_results": [{"tool": "*", "template": RECALL_TEMPLATE}]})
    assert "recall_key" in rules.tool_results[0].template.fields


# --- the wrapper, through the real clients


def test_openai_recall_returns_the_exact_original(tmp_path: Path) -> None:
    store = RecallStore(tmp_path / "recall.sqlite")
    with StubServer() as server:
        client = pg.compacting(openai.OpenAI(base_url=server.base_url, api_key="sk-not-a-key"), _policy(),
                               model="gpt-4o", recall=store)
        messages: list = [{"role": "user", "content": "Read the modules."}]
        answers = {}
        while True:
            message = client.chat.completions.create(model="tool-loop-4", messages=messages,
                                                     tools=TOOLS).choices[0].message
            messages.append(message)
            if not message.tool_calls:
                break
            for call in message.tool_calls:
                if call.function.name == "recall":
                    result = client.recall.answer(call.function.arguments)
                    answers[json.loads(call.function.arguments)["key"]] = result
                else:
                    result = read_file(**json.loads(call.function.arguments))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        sent = [request["body"] for request in server.requests]
    (key, original), = answers.items()
    files = [read_file(f"src/module_{n}.py") for n in range(4)]
    assert original in files and recall_key(original) == key  # the very text, byte for byte
    offered = [[tool["function"]["name"] for tool in body["tools"]] for body in sent]
    first = next(n for n, body in enumerate(sent) if f"stored as {key}" in json.dumps(body["messages"]))
    assert all(names == ["read_file"] for names in offered[:first])  # no tool before a reference names a key
    assert all(names == ["read_file", "recall"] for names in offered[first:])
    assert any(m.get("tool_call_id") == RECALL_ID for m in sent[-1]["messages"])


def test_anthropic_recall_returns_the_exact_original(tmp_path: Path) -> None:
    store = RecallStore(tmp_path / "recall.sqlite")
    with AnthropicStub() as server:
        claude = pg.compacting(anthropic.Anthropic(base_url=server.base_url, api_key="sk-ant-not-a-key"), _policy(),
                               model="claude-sonnet-4-5", recall=store)
        history: list = [{"role": "user", "content": "Read the modules."}]
        recalled = []
        while True:
            reply = claude.messages.create(model="tool-loop-4", max_tokens=1024, messages=history,
                                           tools=CLAUDE_TOOLS)
            history.append({"role": "assistant", "content": reply.content})
            uses = [block for block in reply.content if block.type == "tool_use"]
            if not uses:
                break
            results = []
            for use in uses:
                text = claude.recall.answer(use.input) if use.name == "recall" else read_file(**use.input)
                recalled += [(use.input["key"], text)] if use.name == "recall" else []
                results.append({"type": "tool_result", "tool_use_id": use.id, "content": text})
            history.append({"role": "user", "content": results})
        sent = [request["body"] for request in server.requests]
    (key, original), = recalled
    assert original in [read_file(f"src/module_{n}.py") for n in range(4)] and recall_key(original) == key
    assert sent[-1]["tools"][-1] == {"name": "recall", "description": sent[-1]["tools"][-1]["description"],
                                     "input_schema": {"type": "object", "properties": {"key": {
                                         "type": "string", "description": "the key the reference names"}},
                                         "required": ["key"]}}


def test_responses_requests_offer_recall_as_a_responses_function(tmp_path: Path) -> None:
    """On the Responses API the tool is a Responses function (name at the top level), and the
    reference it follows names a key whose original the store holds."""
    store = RecallStore(tmp_path / "recall.sqlite")
    tools = [{"type": "function", **TOOLS[0]["function"]}]
    with StubServer() as server:
        client = pg.compacting(openai.OpenAI(base_url=server.base_url, api_key="sk-not-a-key"), _policy(),
                               model="gpt-4o", recall=store)
        items: list = [{"role": "user", "content": "Read the modules."}]
        while True:
            response = client.responses.create(model="tool-loop-4", input=items, tools=tools)
            items += response.output
            asked = [item for item in response.output if item.type == "function_call"]
            if not asked:
                break
            items += [{"type": "function_call_output", "call_id": call.call_id,
                       "output": read_file(**json.loads(call.arguments))} for call in asked]
        last = server.requests[-1]["body"]
    assert [tool["name"] for tool in last["tools"]] == ["read_file", "recall"]
    assert last["tools"][1]["parameters"]["required"] == ["key"] and "function" not in last["tools"][1]
    key = json.dumps(last["input"]).split("stored as ")[1][:KEY_CHARS]
    assert client.recall.answer({"key": key}) in [read_file(f"src/module_{n}.py") for n in range(4)]


def test_no_store_no_tool(tmp_path: Path) -> None:
    """Without ``recall=`` the request is the one replay sends: no tool is added, nothing stored."""
    with StubServer() as server:
        client = pg.compacting(openai.OpenAI(base_url=server.base_url, api_key="sk-not-a-key"), _policy(),
                               model="gpt-4o")
        messages: list = [{"role": "user", "content": "Read."}]
        for n in range(4):
            messages.append({"role": "assistant", "content": None, "tool_calls": [{"id": f"call_{n}", "type":
                             "function", "function": {"name": "read_file", "arguments": json.dumps(
                                 {"file_path": f"m{n}.py"})}}]})
            messages.append({"role": "tool", "tool_call_id": f"call_{n}", "content": read_file(f"m{n}.py")})
            client.chat.completions.create(model="tool-loop-9", messages=messages, tools=TOOLS)
        assert all(len(request["body"]["tools"]) == 1 for request in server.requests)
    assert not list(tmp_path.iterdir())


def test_store_is_sqlite(tmp_path: Path) -> None:
    """The file is a plain SQLite database another tool can read."""
    key = RecallStore(tmp_path / "recall.sqlite").put("x")
    with sqlite3.connect(tmp_path / "recall.sqlite") as db:
        assert db.execute("SELECT data FROM originals WHERE key = ?", (key,)).fetchone() == (b"x",)


# --- the key in a template: the engine and the exported compactor agree, and twice changes nothing


def test_recall_key_renders_alike_in_the_engine_and_the_export(tmp_path: Path) -> None:
    conversation = pg.load_preset("presets/coding-agent.json").conversation
    rules = pg.load_rules({"tool_results": [{"tool": "*", "template": RECALL_TEMPLATE}]})
    settings = pg.Settings(threshold=0, keep_recent=1)
    assert _same(conversation, rules, settings, tmp_path)  # edits made, and the same bytes both ways
    once = pg.compact(conversation, rules, settings)
    assert pg.compact(once.conversation, rules, settings).report.edits == ()  # a reference is not keyed again
    for edit in once.report.edits:  # each reference names the key of the very text it replaced
        was, now = conversation.items[edit.position], once.conversation.items[edit.position]
        assert f"stored as {recall_key(was.content)} " in now.content
