"""The ledger of a run's facts (``facts.ledger``), their fate under each policy (``run.fates``), and the
offline summary keeping them (``summarize.kept``): on real logs of several agents, on a handmade run
in every API format, and on a long generated session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import playground as pg
from playground import formats
from playground.conversation import Message
from playground.facts.ledger import COMMAND, ERROR, OPEN, PATH_READ, PATH_WRITTEN, REQUIREMENT, RESOLVED, Ledger
from playground.facts.said import from_human
from playground.facts.worked import _EXIT, _exit_code
from playground.formats.convert import convert
from playground.meter.tokens import Meter
from playground.policies import make
from playground.refit.ledger_precision import measure
from playground.refit.ledger_survival import long_session, survival
from playground.run.compare import compare, rows_to_json
from playground.run.fates import FATES, KEPT, LOST
from playground.run.prices import read_prices
from playground.run.replay import replay, replay_to_json
from playground.summarize.history import Plan
from playground.summarize.offline import OfflineSummarizer

from .conftest import SHARED, shared

DATA = Path(__file__).parent / "data"
REAL_RUNS = ("traces/miniswe_pr_astropy-12907.openai.json",
             "traces/sweagent_marshmallow-1867_function_calling.openai.json",
             "sessions/claude-code-session-196820da.jsonl", "sessions/claude-code-session-624a4a58.jsonl")


def _facts(ledger: Ledger, kind: str) -> list[str]:
    return [fact.text for fact in ledger.facts if fact.type == kind]


def _handmade() -> dict:
    return {"model": "gpt-4o", "messages": [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the parser. You must not change the public API.\n```\nnever = 1\n```"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "a", "type": "function",
             "function": {"name": "read_file", "arguments": '{"path": "src/parse.py"}'}}]},
        {"role": "tool", "tool_call_id": "a", "content": "def parse(text):\n    return text"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "b", "type": "function", "function": {"name": "bash", "arguments": '{"command": "pytest -q"}'}}]},
        {"role": "tool", "tool_call_id": "b", "content": "Exit code 1\nValueError: bad input"},
        {"role": "assistant", "content": "I'll strip the text instead of rejecting it.", "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "write_file", "arguments": json.dumps(
                {"path": "src/parse.py", "content": "def parse(text):\n    cleaned_input = text.strip()"})}}]},
        {"role": "tool", "tool_call_id": "c", "content": "ok"},
        {"role": "assistant", "content": "Done."}]}


@pytest.mark.parametrize("target", ["chat", "responses", "anthropic"])
def test_a_run_gives_the_same_facts_in_every_api_format(target):
    """Read from the conversation model, so the wire format makes no difference."""
    ledger = Ledger.of(convert(formats.read(_handmade()), target))
    assert _facts(ledger, REQUIREMENT) == ["You must not change the public API."]  # not the code block's "never"
    assert _facts(ledger, PATH_READ) == ["src/parse.py"] and _facts(ledger, PATH_WRITTEN) == ["src/parse.py"]
    (command,) = ledger.of_type(COMMAND)
    assert (command.text, command.status, command.failed) == ("pytest -q", "exit 1", True)
    assert [(f.text, f.status) for f in ledger.of_type(ERROR)] == [("ValueError: bad input", OPEN)]
    fact = ledger.of_type(REQUIREMENT)[0]
    item = convert(formats.read(_handmade()), target).items[fact.item]
    assert isinstance(item, Message) and fact.text in str(item.content)


@pytest.mark.parametrize(("log", "kind", "expected"), [
    ("claude-code-spotter-tool_heavy.jsonl", PATH_READ, "/home/marco/projects/spotter/assets/js/app.js"),
    ("gemini-cli-yoavf-pomodoro-timer.json", PATH_WRITTEN, "/Users/yoavfarhi/dev/pomodoro/gemini/script.js"),
    ("codex-rollout-old.jsonl", PATH_WRITTEN, "dates/parse.py"),  # by ``sed -i`` in a shell command
    ("mini-swe-agent.traj.json", PATH_WRITTEN, "patch.txt"),  # a redirection's target
    ("mini-swe-agent.traj.json", ERROR, "ModuleNotFoundError: No module named 'pytest'"),
    ("gemini-cli-yoavf-pomodoro-timer.json", REQUIREMENT, "The app should let the user:"),
])
def test_real_logs_of_several_agents_give_their_facts(log, kind, expected):
    ledger = Ledger.of(pg.load(DATA / log))
    assert expected in _facts(ledger, kind)
    fact = next(f for f in ledger.facts if f.type == kind and f.text == expected)
    assert fact.item == fact.items[0] and fact.span[1] - fact.span[0] == len(expected)


def test_an_error_is_resolved_when_the_same_call_succeeds_later():
    run = _handmade()
    run["messages"][-1:-1] = [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "d", "type": "function", "function": {"name": "bash", "arguments": '{"command": "pytest -q"}'}}]},
        {"role": "tool", "tool_call_id": "d", "content": "Exit code 0\n3 passed"}]
    ledger = Ledger.of(formats.read(run))
    assert [f.status for f in ledger.of_type(ERROR)] == [RESOLVED]
    assert [(f.status, f.failed) for f in ledger.of_type(COMMAND)] == [("exit 0", False)]


@pytest.mark.parametrize("text", ["<local-command-stdout>ok, you must</local-command-stdout>",
                                  "Caveat: The messages below were generated by the user. DO NOT respond to these."])
def test_what_a_harness_sends_as_the_user_is_no_requirement(text):
    assert not from_human(text)
    assert not Ledger.of(formats.read({"messages": [{"role": "user", "content": text}]})).facts


def _replay(conversation, name, **options):
    return replay(conversation, make(name, **options), Meter(conversation.model), read_prices().get(conversation.model))


@pytest.mark.parametrize("log", ["claude-code-spotter-tool_heavy.jsonl", "mini-swe-agent.traj.json",
                                 "codex-rollout.jsonl"])
def test_doing_nothing_keeps_every_fact(log):
    conversation = pg.load(DATA / log)
    run = _replay(conversation, "none")
    counts = Ledger.of(conversation).counts()
    assert run.facts is not None and not run.facts.lost_then_used
    # every fact stated before the last call is kept, none recoverable or lost
    assert all(fates[KEPT] == sum(fates.values()) <= counts[kind] for kind, fates in run.facts.end.items())


def test_masking_loses_the_errors_of_masked_outputs_and_a_reference_names_its_path():
    conversation = formats.read(long_session(4, 12))
    masked = _replay(conversation, "masking", window=2).facts
    assert masked is not None and masked.end[ERROR][LOST] > 0 and masked.end[PATH_WRITTEN][KEPT] == 12
    assert masked.firings and all(set(fates) == set(FATES) for _, counts in masked.firings for fates in counts.values())


def test_a_lost_fact_the_agent_used_later_is_said_first():
    """Masking hides the failing test's output; two calls later the agent quotes its error line."""
    def call(call_id: str, name: str, arguments: dict, result: str) -> list[dict]:
        return [{"role": "assistant", "content": None, "tool_calls": [{"id": call_id, "type": "function",
                 "function": {"name": name, "arguments": json.dumps(arguments)}}]},
                {"role": "tool", "tool_call_id": call_id, "content": result}]
    error = "ValueError: the parser rejected the input"
    run = {"model": "gpt-4o", "messages": [
        {"role": "user", "content": "Fix the parser."},
        *call("a", "bash", {"command": "pytest -q"}, f"Exit code 1\n{error}"),
        *call("b", "read_file", {"path": "src/parse.py"}, "def parse(text): ..."),
        *call("c", "read_file", {"path": "src/lex.py"}, "def lex(text): ..."),
        {"role": "assistant", "content": f"The test said:\n{error}\nso the lexer must strip spaces."}]}
    conversation = formats.read(run)
    facts = _replay(conversation, "masking", window=1).facts
    assert facts is not None and [(call, fact.type, fact.text) for call, fact in facts.lost_then_used] == [
        (3, ERROR, error)]
    assert replay_to_json(_replay(conversation, "masking", window=1))["facts"]["lost_then_used"][0]["text"] == error
    assert not _replay(conversation, "none").facts.lost_then_used


def test_replay_and_compare_json_carry_the_facts():
    conversation = formats.read(long_session(6, 30))
    run = replay_to_json(_replay(conversation, "summarize", limit=2_000))
    assert list(run["facts"]) == ["lost_then_used", "end", "firings"]
    assert run["facts"]["end"][REQUIREMENT][KEPT] == 6
    rows = rows_to_json(compare(conversation, [make("none"), make("masking", window=3)], Meter("gpt-4o"),
                                read_prices().get("gpt-4o")))
    assert rows[0]["facts"][ERROR][LOST] == 0 and rows[1]["facts"][ERROR][LOST] > 0


def test_the_offline_summary_keeps_the_requirements_and_files_written_of_a_long_session():
    """40 requirements, 80 files written, summarized at 4,000 tokens: before the ledger's sections, the
    summary kept 16 of the requirements and 22 of the paths."""
    kept = survival(formats.read(long_session()), 4_000)
    assert kept[REQUIREMENT][1] == 40 and kept[PATH_WRITTEN][1] == 80
    assert kept[REQUIREMENT][0] >= 0.95 * 40 and kept[PATH_WRITTEN][0] >= 0.9 * 80


@pytest.mark.parametrize("run", REAL_RUNS)
def test_the_offline_summary_keeps_the_requirements_and_files_written_of_real_runs(run):
    kept = survival(pg.load(shared(SHARED / run)), 5_000)
    for kind, share in ((REQUIREMENT, 0.95), (PATH_WRITTEN, 0.9)):
        if kind in kept:
            assert kept[kind][0] >= share * kept[kind][1], (kind, kept[kind])


def test_a_failed_command_stays_in_the_summary_until_it_passes():
    summary = _summary_of(_handmade())
    assert "Commands that last failed:\n- pytest -q → exit 1" in summary
    assert "ValueError: bad input ⟵ bash(pytest -q)" in summary and "- src/parse.py" in summary


def _summary_of(run: dict) -> str:
    items = formats.read(run).items
    return OfflineSummarizer().summarize(Plan(0, len(items), items, "", False, 600, Meter("gpt-4o")))


def test_extraction_precision_on_the_hand_labels_is_at_least_0_9_for_every_type():
    """The figures docs/ledger.md states (scripts/benchmark_ledger.py prints them)."""
    labels = json.loads((Path(__file__).parent / "labels" / "ledger.json").read_text(encoding="utf-8"))
    figures = measure(labels, lambda source: pg.load(shared(SHARED / source)))
    assert set(figures) == {REQUIREMENT, PATH_WRITTEN, PATH_READ, COMMAND, ERROR}
    assert all(f.precision >= 0.9 for f in figures.values()), figures
    assert (figures[REQUIREMENT].real, figures[REQUIREMENT].extracted) == (40, 43)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["exit code 2", "EXITED WITH STATUS 0", '"exit_code": 1', "returncode> 7",
                                 "exıt code 3", "exit ſtatus 4", "ok", "Exit", " ", "\n", "é", "code: 5",
                                 "RETURNCODE=0"]), max_size=8)
       .map("".join) | st.text(max_size=60))
def test_the_exit_code_is_found_where_the_regex_finds_it(text: str) -> None:
    """The words checked before the regex runs never hide a match it would make (case folding
    beyond ASCII included)."""
    found, expected = _exit_code(text), _EXIT.search(text)
    assert (found and found.group()) == (expected and expected.group())
