"""A wrapped run's log opens as the run (``formats.agent_run``): read back, it is the conversation the
agent held, so replay (the library, the command line, the page's Run tab) gives the figures it gives
for the recorded run; and it grows with the run, each line holding only what is new at its call."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import openai
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import playground as pg
from playground import formats
from playground.agent.endpoint import plain
from playground.conversation import Conversation, turn_starts
from playground.meter.tokens import Meter
from playground.run.replay import replay_to_json
from playground.ui import state

from . import test_agent_anthropic as claude
from . import test_agent_openai as gpt
from .anthropic_stub import AnthropicStub
from .conftest import ROOT, show_tab
from .openai_stub import StubServer
from .strategies import anthropic_requests
from .test_app import _fresh_caches, healthy  # noqa: F401 - the caches fixture, autouse here too

POLICY = "masking"


def _anthropic_run(log: Path, how: str = "create") -> Conversation:
    with AnthropicStub() as server:
        wrapped = pg.compacting(claude._client(server), gpt.POLICIES[POLICY](), log, model=claude.MODEL)
        return claude.recorded(claude._run(wrapped, calls=6, how=how))


def _chat_run(log: Path, **kwargs: Any) -> Conversation:
    with StubServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key=gpt.KEY, max_retries=0)
        wrapped = pg.compacting(client, gpt.POLICIES[POLICY](), log, model=gpt.MODEL)
        run = gpt._run_streaming if kwargs.get("stream") else gpt._run
        return gpt._recorded(run(wrapped, calls=6))


def _responses_run(log: Path) -> Conversation:
    with StubServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key=gpt.KEY, max_retries=0)
        items = gpt._run_responses(pg.compacting(client, gpt.POLICIES[POLICY](), log, model=gpt.MODEL), calls=6)
        tools = server.requests[0]["body"]["tools"]
    return formats.responses.read({"model": gpt.MODEL, "instructions": gpt.SYSTEM, "input": plain(items),
                                   "tools": tools})


def _figures(conversation: Conversation) -> dict[str, Any]:
    price = pg.read_prices().get(conversation.model)
    return replay_to_json(pg.replay(conversation, gpt.POLICIES[POLICY](), Meter(conversation.model), price))


RUNS = {"messages": _anthropic_run, "chat.completions": _chat_run, "responses": _responses_run}


@pytest.mark.parametrize("api", RUNS)
def test_a_wrapped_runs_log_read_back_is_the_run_and_replays_to_its_figures(api: str, tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    original = RUNS[api](log)
    assert formats.detect(formats.parse_text(log.read_bytes())) == "playground-agent"
    read = formats.read_path(log)
    assert read.source == "playground-agent" and read.format == original.format
    assert (read.items, read.instructions, read.tools, read.model) == \
        (original.items, original.instructions, original.tools, original.model)
    assert _figures(read) == _figures(original)
    assert len(_figures(read)["calls"]) == 6 == len(log.read_text().splitlines())


def test_the_log_grows_with_the_run_each_result_written_once(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    _anthropic_run(log)
    text = log.read_text(encoding="utf-8")
    for number in range(5):  # each file the agent read is in the log once, whatever the calls after it
        assert text.count(f"# src/module_{number}.py") == 1, number
    assert text.count(gpt.SYSTEM[:40]) == 1 and text.count('"input_schema"') == 1  # the head: once, unchanged
    lines = [json.loads(line) for line in text.splitlines()]
    assert [line["at"] for line in lines] == [0, 1, 3, 5, 7, 9]  # each line starts where the last one ended


def test_the_command_line_replays_the_log_as_it_replays_the_run(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    original = _anthropic_run(log, how="stream helper")  # (the helper's assembled reply is logged too)
    request = tmp_path / "request.json"
    request.write_text(json.dumps(formats.anthropic.write(original)), encoding="utf-8")
    printed = [json.loads(subprocess.run([sys.executable, "-m", "playground", "replay", str(path), "--policy",
                                          POLICY, "--json"], cwd=ROOT, capture_output=True, text=True,
                                         check=True).stdout)
               for path in (log, request)]
    assert printed[0] == printed[1] and len(printed[0]["calls"]) == 6


def test_a_log_whose_last_reply_was_streamed_unread_says_so_and_holds_the_calls_before_it(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    original = _chat_run(log, stream=True)
    read = formats.read_path(log)
    assert any("the last call's reply is not in the log" in note for note in read.notes)
    assert read.items == original.items[:len(read.items)] and len(read.items) == len(original.items) - 1
    assert _figures(read)["calls"] == _figures(original)["calls"][:5]


def test_a_log_of_two_endpoints_reads_the_last_run_and_says_so(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    _chat_run(log)
    original = _responses_run(log)
    read = formats.read_path(log)
    assert read.items == original.items
    assert any("6 calls of another endpoint left out" in note for note in read.notes)


@pytest.mark.parametrize(("change", "where"), [
    (lambda lines: lines[2].update(at=99), "line 3.at"),
    (lambda lines: lines[1].pop("added"), "line 2"),
    (lambda lines: lines[3].update(kind="something-else"), "line 4"),
    (lambda lines: lines[-1].update(api="completions"), "line 6.api"),
])
def test_a_damaged_log_says_where(change: Any, where: str, tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    _anthropic_run(log)
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    change(lines)
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(pg.InputError) as raised:
        formats.read_path(log)
    assert where in str(raised.value), str(raised.value)


def test_the_page_opens_the_log_with_the_figures_replay_gives_for_the_run(tmp_path: Path) -> None:
    from streamlit.testing.v1 import AppTest  # (the page's tests only)

    log = tmp_path / "run.jsonl"
    original = _anthropic_run(log)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    show_tab(at, "Run")
    healthy(at.run())
    at.file_uploader(key="upload").set_value(("run.jsonl", log.read_bytes(), "application/octet-stream"))
    healthy(at.run())
    healthy(at.selectbox(key=state.REPLAY_POLICY).select(POLICY).run())
    assert not at.error, [e.value for e in at.error]
    assert at.session_state["conversation"].source == "playground-agent"
    assert at.session_state["conversation"].items == original.items and at.session_state["model"] == claude.MODEL
    price = pg.read_prices().get(claude.MODEL)
    run = pg.replay(original, pg.make(POLICY, window=10), Meter(claude.MODEL), price, cache=price.cache)
    shown = {metric.label: metric.value for metric in at.metric}
    assert shown["Prompt tokens billed"] == f"{run.totals.tokens_with:,}"
    assert shown["Cost"] == f"${run.totals.cost_with:.4f}"


def test_a_history_the_agent_started_again_reads_as_its_last_run(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    with StubServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key=gpt.KEY, max_retries=0)
        wrapped = pg.compacting(client, gpt.POLICIES[POLICY](), log, model=gpt.MODEL)
        gpt._run(wrapped, calls=3)
        messages = gpt._run(wrapped, calls=4)  # the same wrapper, a new conversation: the run starts again
    read = formats.read_path(log)
    assert read.items == gpt._recorded(messages).items
    assert read.notes[:2] == ("4 calls of a wrapped client's chat.completions run, run under the masking policy "
                              "(replay it with that policy to see the figures the log holds)",
                              "the agent started its history again 1 time: the last run is read")


class _Replier:
    """A client's ``messages`` that answers each call with the reply the generated run holds next."""

    def __init__(self, replies: list[Any]) -> None:
        self.messages = self
        self._replies = iter(replies)

    def create(self, **kwargs: Any) -> Any:
        return SimpleNamespace(content=next(self._replies), usage=None)


@given(request=anthropic_requests(least=2, most=8), name=st.sampled_from(sorted(gpt.PROPERTY_POLICIES)))
@settings(max_examples=40)
def test_any_wrapped_run_reads_back_from_its_log_as_the_run(request: Any, name: str) -> None:
    messages = request["messages"]
    items = formats.anthropic.read({"messages": messages}).items
    calls = [items[start].origin.index for start in turn_starts(items)]  # the messages each reply begins
    assume(calls)
    for call in calls:  # a reply's content is a list of blocks, as the API gives it
        if isinstance(messages[call]["content"], str):
            messages[call] = {**messages[call], "content": [{"type": "text", "text": messages[call]["content"]}]}
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "run.jsonl"
        wrapped = pg.compacting(_Replier([messages[call]["content"] for call in calls]),
                                gpt.PROPERTY_POLICIES[name](), log, model=claude.MODEL)
        extra = {"system": request["system"]} if "system" in request else {}
        for call in calls:  # a call before each reply, the agent's history up to it
            wrapped.messages.create(model="any", max_tokens=1024, messages=messages[:call], **extra)
        read = formats.read_path(log)
    expected = formats.anthropic.read({"model": claude.MODEL, "messages": messages[:calls[-1] + 1], **extra})
    assert (read.items, read.instructions) == (expected.items, expected.instructions)
