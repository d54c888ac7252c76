"""``replay --recall``: a hand-made run with one known hidden-then-used call is charged exactly one
recall round trip — the recall call, the original's tokens, and the whole prompt again priced with
the prompt cache — and the CLI's ``--json`` carries the figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import playground as pg
from playground.conversation import Conversation, Message, ToolCall, ToolResult
from playground.meter.tokens import Meter
from playground.policies import NonePolicy, RulesPolicy, make
from playground.recall import recall_key
from playground.rules.ruleset import load_rules
from playground.run.prices import money, read_prices
from playground.run.promptcache import OPENAI_STEP
from playground.run.replay import replay
from playground.run.roundtrip import recall_to_json, round_trips
from playground.ui import state

from .conftest import show_tab

ROOT = Path(__file__).resolve().parent.parent
GPT4O = read_prices().get("gpt-4o")
SECRET = "def compute_checksum(payload, seed=9137):"
FILLER = "\n".join(f"line {n} of the module, nothing anyone copies" for n in range(150))
ORIGINAL = f"{FILLER}\n{SECRET}\n    return 0\n{FILLER}"
SYSTEM = "You are a careful coding agent. " * 200  # a prompt long enough for the cache to hold
RULES = load_rules({"tool_results": [{"tool": "read_file",
                                      "template": "File content from {path} stored as {recall_key}."}]})


def _run() -> Conversation:
    """Read a file, talk, then edit it: the edit quotes a line of the file the rule had replaced."""
    return Conversation((
        Message(role="system", content=SYSTEM),
        Message(role="user", content="Fix the checksum in a.py"),
        ToolCall(call_id="c1", name="read_file", arguments=json.dumps({"path": "a.py"})),
        ToolResult(call_id="c1", name="read_file", content=ORIGINAL),
        Message(role="assistant", content="I have read it."),
        Message(role="user", content="Go on."),
        ToolCall(call_id="c2", name="edit_file", arguments=json.dumps(
            {"path": "a.py", "old_string": SECRET, "new_string": "def compute_checksum(payload, seed=0):"})),
        ToolResult(call_id="c2", name="edit_file", content="ok")), model="gpt-4o")


@pytest.mark.parametrize("cache", ["none", "openai"])
def test_one_round_trip_is_charged_by_hand(cache: str) -> None:
    meter = Meter("gpt-4o")
    run = replay(_run(), RulesPolicy(RULES, threshold=0, summarize=False), meter, GPT4O, cache=cache)
    (trip,) = round_trips(run, _run(), meter)
    call = run.calls[2]  # the edit: its reply quotes the line its request had replaced
    assert (trip.call, trip.items) == (2, (3,)) and call.hidden_used
    assert f"stored as {recall_key(ORIGINAL)}" in json.dumps(pg.formats.write(run.final, "chat"))
    # the recall call and its result, as a request would carry them
    asked = ToolCall(call_id="recall_0", name="recall", arguments=json.dumps({"key": recall_key(ORIGINAL)}))
    answered = ToolResult(call_id="recall_0", name="recall", content=ORIGINAL)
    assert (trip.call_tokens, trip.result_tokens) == meter.items((asked, answered))
    assert trip.result_tokens > meter.text(ORIGINAL) > 1_000  # the original, whole
    assert trip.prompt_tokens == call.tokens_with + trip.call_tokens + trip.result_tokens
    cached = call.tokens_with // OPENAI_STEP * OPENAI_STEP if cache == "openai" else 0
    assert call.tokens_with >= GPT4O.min_cacheable or cache == "none"
    assert (trip.cached_tokens, trip.written_tokens) == (cached, 0)
    expected = ((trip.prompt_tokens - cached) * GPT4O.input + cached * GPT4O.cached_input
                + trip.call_tokens * GPT4O.output) / 1_000_000
    assert trip.cost == pytest.approx(expected, rel=1e-12)
    totals = recall_to_json(run, (trip,))["recall_totals"]
    assert totals["cost_with_recall"] == pytest.approx(run.totals.cost_with + expected, abs=1e-8)
    assert totals["tokens_with_recall"] == run.totals.tokens_with + trip.prompt_tokens
    assert (totals["round_trips"], totals["recalled_items"]) == (1, 1)


def test_nothing_hidden_nothing_charged() -> None:
    meter = Meter("gpt-4o")
    assert round_trips(replay(_run(), NonePolicy(), meter, GPT4O), _run(), meter) == ()


def test_the_cli_json_gains_the_fields(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(pg.dumps(_run(), "chat"))
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps(pg.rules_to_json(RULES)))
    args = [sys.executable, "-m", "playground", "replay", str(path), "--rules", str(rules), "--threshold", "0",
            "--keep-recent", "0", "--no-summarize", "--cache", "none", "--json"]
    plain = json.loads(subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=True).stdout)
    charged = json.loads(subprocess.run([*args, "--recall"], cwd=ROOT, capture_output=True, text=True,
                                        check=True).stdout)
    assert "recall" not in plain and {key: charged[key] for key in plain} == plain  # only fields added
    assert charged["recall_totals"]["round_trips"] == 1 and charged["recall"][0]["call"] == 2
    assert charged["recall_totals"]["cost_with_recall"] > plain["totals"]["cost_with"]
    text = subprocess.run([*args[:-1], "--recall"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "recall: 1 round trip (1 original recalled)" in text


def test_the_run_view_shows_the_recall_figures() -> None:
    """The Run tab's toggle charges the round trips; its figures are ``round_trips``'s on the same replay."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    show_tab(at, "Run")
    at.run()
    at.selectbox(key=state.PRESET).select("long-session").run()
    at.selectbox(key=state.REPLAY_POLICY).select("masking").run()
    at.toggle(key=state.REPLAY_RECALL).set_value(True).run()
    assert not at.exception, at.exception
    conversation, model = at.session_state["conversation"], at.session_state["model"]
    price = read_prices().get(model)
    run = replay(conversation, make("masking", window=10), Meter(model), price, cache=price.cache)
    trips = round_trips(run, conversation, Meter(model))
    metrics = {metric.label: metric.value for metric in at.metric}
    assert metrics["Recall round trips"] == f"{len(trips):,}" and trips
    assert metrics["Re-fetched prompt tokens"] == f"{sum(trip.prompt_tokens for trip in trips):,}"
    assert metrics["Cost with recall"] == money(run.totals.cost_with + sum(trip.cost for trip in trips))
