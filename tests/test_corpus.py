"""Evaluating a corpus: finding runs (folders, globs, archives, .gz), skipping what is not a run,
reporting what fails, and per-run numbers that are exactly compare's."""

from __future__ import annotations

import gzip
import io
import json
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playground import cli, formats
from playground.compaction import Settings
from playground.corpus import finder
from playground.corpus.evaluate import (
    PolicyOnRun,
    RunResult,
    Setup,
    aggregate,
    evaluate_run,
    evaluate_source,
    load,
)
from playground.corpus.finder import Failed, Skipped, Source
from playground.corpus.sweep import Grid, Point, best, front
from playground.meter.tokens import Meter
from playground.policies import OURS, POLICIES, PolicySettings
from playground.run.compare import Row

from .conftest import ROOT, SHARED, TRACES, shared

DATA = ROOT / "tests" / "data"
SESSION = SHARED / "sessions" / "claude-code-session-196820da.jsonl"


def _names(found) -> dict[str, type]:
    return {item.name if isinstance(item, Source) else item.source: type(item) for item in found}


def test_find_walks_folders_globs_archives_and_gz(tmp_path: Path):
    runs = tmp_path / "runs"
    (runs / "deep" / "deeper").mkdir(parents=True)
    shutil.copy(DATA / "codex-rollout.jsonl", runs / "deep" / "deeper" / "rollout.jsonl")
    (runs / "notes.md").write_text("# not a run")
    (runs / "trace.json.gz").write_bytes(gzip.compress((DATA / "mini-swe-agent.traj.json").read_bytes()))
    with zipfile.ZipFile(tmp_path / "logs.zip", "w") as archive:
        archive.write(DATA / "sweagent-function-calling.traj", "inner/sweagent.traj")
        archive.writestr("inner/readme.txt", "hello")
    with tarfile.open(tmp_path / "logs.tar.gz", "w:gz") as archive:
        archive.add(DATA / "mini-swe-agent.traj.json", "t/mini.traj.json")
    found = list(finder.find([str(runs), str(tmp_path / "*.zip"), str(tmp_path / "logs.tar.gz"),
                              str(tmp_path / "nothing-*.json"), str(tmp_path / "gone.json")]))
    names = _names(found)
    assert names == {
        str(runs / "deep" / "deeper" / "rollout.jsonl"): Source, str(runs / "notes.md"): Source,
        str(runs / "trace.json.gz"): Source, f"{tmp_path / 'logs.zip'}!inner/sweagent.traj": Source,
        f"{tmp_path / 'logs.zip'}!inner/readme.txt": Skipped, f"{tmp_path / 'logs.tar.gz'}!t/mini.traj.json": Source,
        str(tmp_path / "nothing-*.json"): Failed, str(tmp_path / "gone.json"): Failed}
    sources = {item.name: item for item in found if isinstance(item, Source)}
    # each source reads back the very bytes of its run, whichever container it was in
    assert sources[f"{tmp_path / 'logs.zip'}!inner/sweagent.traj"].read(10) == (
        DATA / "sweagent-function-calling.traj").read_bytes()
    assert sources[str(runs / "trace.json.gz")].read(10) == (DATA / "mini-swe-agent.traj.json").read_bytes()
    assert sources[f"{tmp_path / 'logs.tar.gz'}!t/mini.traj.json"].read(10) == (
        DATA / "mini-swe-agent.traj.json").read_bytes()
    # a zip member travels as a path and a member name, not as its bytes
    assert sources[f"{tmp_path / 'logs.zip'}!inner/sweagent.traj"].data is None
    # any .md may be an Aider history, as the upload reads it: its content decides (this one is not)
    assert isinstance(load(sources[str(runs / "notes.md")], Setup()), Skipped)


def test_a_corrupt_file_fails_with_its_place_and_a_non_run_is_skipped(tmp_path: Path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"messages": [{"role": "user", "content": "hi"}')
    other = tmp_path / "settings.json"
    other.write_text('{"theme": "dark"}')
    no_calls = tmp_path / "question.json"
    no_calls.write_text(json.dumps([{"role": "user", "content": "hello"}]))
    bad_zip = tmp_path / "bad.zip"
    bad_zip.write_bytes(b"PK not really")
    setup = Setup(policies=("none",))
    failed = evaluate_source(Source(str(broken), path=str(broken)), setup)
    assert isinstance(failed, Failed) and failed.message.startswith(f"{broken}, line 1, column ")
    assert "invalid JSON" in failed.message
    assert evaluate_source(Source(str(other), path=str(other)), setup) == Skipped(
        str(other), "not a conversation: no reader recognises it")
    assert evaluate_source(Source(str(no_calls), path=str(no_calls)), setup) == Skipped(
        str(no_calls), "no LLM call in it (no assistant turn)")
    [opened] = finder.find([str(bad_zip)])
    assert isinstance(opened, Failed) and opened.message.startswith("cannot open the archive")


def test_a_file_over_the_input_limit_fails_and_says_the_limit(tmp_path: Path):
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (1024 * 1024 + 1))
    outcome = evaluate_source(Source(str(big), path=str(big)), Setup(policies=("none",), max_input_mb=1))
    assert isinstance(outcome, Failed) and "larger than the limit of 1 MB" in outcome.message


def _compare_json(path: Path, *options: str, capsys) -> list[dict]:
    assert cli.main(["compare", str(path), "--json", *options]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("path", [*(TRACES / name for name in ("sweagent_marshmallow-1867_function_calling.openai.json",
                                                                "miniswe_pr_astropy-12907.openai.json")),
                                  DATA / "codex-rollout.jsonl", DATA / "sweagent-function-calling.traj", SESSION],
                         ids=lambda path: path.name)
def test_each_run_has_exactly_compares_numbers(path: Path, capsys):
    options = ("--threshold", "5000", "--keep-recent", "1", "--preset", "suggested")
    rows = _compare_json(shared(path), *options, capsys=capsys)
    assert cli.main(["evaluate", str(path), "--json", "--workers", "0", "--strategy", "all", *options]) == 0
    evaluated = json.loads(capsys.readouterr().out)
    [run] = evaluated["runs"]
    assert [s["strategy"] for s in run["strategies"]] == [row["strategy"] for row in rows]
    for policy, row in zip(run["strategies"], rows, strict=True):
        keys = ("tokens_billed", "cached_tokens", "cost", "tokens_lost", "tokens_retrievable", "hidden_used_calls")
        assert {key: policy[key] for key in keys} == {key: row[key] for key in keys}
    # savings are measured from the baseline: the run as it ran where the agent cut its own context
    [baseline] = [row for row in rows if row["baseline"]]
    assert baseline["strategy"] == ("as-it-ran" if run["baseline"] == "as-it-ran" else "none")
    assert (run["baseline"] == "as-it-ran") == (path.name == "codex-rollout.jsonl")  # its log has a compaction
    cost = next(s for s in run["strategies"] if s["strategy"] == baseline["strategy"])["cost"]
    assert all(s["cost_none"] == cost for s in run["strategies"])


def test_every_policy_of_a_run_shares_one_meter_each_text_encoded_once(monkeypatch):
    conversation = formats.loads(shared(SESSION).read_bytes())
    encoding = type(Meter(conversation.model).encoding)
    real = encoding.encode_ordinary
    encoded: list[str] = []

    def spy(self, text: str):
        encoded.append(text)
        return real(self, text)

    monkeypatch.setattr(encoding, "encode_ordinary", spy)  # every meter's, whoever makes it
    evaluate_run(conversation, Setup(), "session")
    assert encoded and len(encoded) == len(set(encoded))  # six policies, yet no text counted twice


def test_every_policy_of_a_run_reads_what_the_agent_wrote_once(monkeypatch):
    """The spans the agent wrote are the same under every policy: one index per run, not one per
    policy (on 18 policies it was half of evaluate's time)."""
    from playground.run import hidden

    built = []
    real = hidden.SpanIndex.of.__func__
    monkeypatch.setattr(hidden.SpanIndex, "of", classmethod(lambda cls, c: built.append(c) or real(cls, c)))
    conversation = formats.loads(shared(SESSION).read_bytes())
    run = evaluate_run(conversation, Setup(policies=tuple(POLICIES)), "session")
    assert len(run.policies) > 10 and len(built) == 1


def test_a_corpus_is_evaluated_under_the_playgrounds_policies_unless_told_all(tmp_path, capsys):
    """By default the policies a person tunes (and the run as it ran where the agent compacted);
    ``--policy all`` adds the agents' and providers' own, as compare lists them."""
    compacting = shared(SHARED / "sessions" / "claude-code-session-624a4a58.jsonl")

    def policies(*options: str) -> list[str]:
        assert cli.main(["evaluate", str(compacting), "--json", "--workers", "0", *options]) == 0
        return [s["strategy"] for s in json.loads(capsys.readouterr().out)["runs"][0]["strategies"]]

    assert policies() == [*OURS, "as-it-ran"]
    assert policies("--strategy", "all") == [row["strategy"] for row in _compare_json(compacting, capsys=capsys)]
    assert policies("--strategy", "masking", "--strategy", "all")[0] == "masking"


def test_error_results_and_pairs_on_a_real_trace():
    path = shared(TRACES / "miniswe_pr_astropy-12907.openai.json")
    outcome = evaluate_source(Source(str(path), path=str(path)),
                              Setup(policies=("none", "rules", "masking"), preset="suggested",
                                    policy=PolicySettings(compaction=Settings(0, keep_recent=3), summarize=False)))
    by = {s.row.policy: s for s in outcome.policies}
    assert by["none"].error_results == by["none"].errors_kept == 17  # the README's 17 failed commands
    assert by["rules"].errors_kept == 17  # the error guard keeps every one
    assert by["masking"].errors_kept < 17  # masking has no error guard
    assert all(s.pairs_intact for s in outcome.policies)


def _run(source: str, costs: list[tuple[str, float, float]]) -> RunResult:
    return RunResult(source, "chat", "gpt-4o", 1, tuple(
        PolicyOnRun(Row(name, {}, 0, 0, 0, cost, 0, 0, 0), none, 0, 0, True, None) for name, cost, none in costs))


@given(st.lists(st.tuples(st.floats(0, 10), st.floats(0, 10)), min_size=1, max_size=30))
def test_aggregate_totals_share_and_worst(pairs):
    runs = [_run(f"run{n}", [("rules", cost, none)]) for n, (cost, none) in enumerate(pairs)]
    [rules] = aggregate(runs)["strategies"]
    assert rules["runs"] == len(pairs)
    assert rules["cost"] == pytest.approx(sum(cost for cost, _ in pairs), abs=1e-7)
    assert rules["share_costs_more_than_none"] == pytest.approx(
        sum(cost > none + 1e-12 for cost, none in pairs) / len(pairs))
    savings = [w["saving"] for w in rules["worst_by_saving"]]
    assert savings == sorted(savings) and len(savings) == min(10, len(pairs))
    assert savings[0] == pytest.approx(min(none - cost for cost, none in pairs), abs=1e-7)
    low, mid, high = (rules["saving_percentiles"][k] for k in ("p10", "p50", "p90"))
    assert low <= mid <= high
    assert rules["hidden_used_calls"] is None and rules["worst_by_hidden_used"] == []


def test_grid_parses_ranges_and_lists_and_each_policy_takes_its_axes():
    grid = Grid.parse(["threshold=20000:60000:20000", "keep_recent=0:2", "window=2,5"])
    assert dict(grid.axes) == {"threshold": (20000, 40000, 60000), "keep_recent": (0, 1, 2), "window": (2, 5)}
    assert len(grid.points("rules")) == 9 and len(grid.points("masking")) == 2
    assert grid.points("none") == ({},)
    assert {tuple(p) for p in grid.points("summarize")} == {("threshold",)}  # summarize's limit is the threshold
    for bad in (["threshold=5:1"], ["bogus=1"], ["threshold=a:b"], ["keep=1:5:0"]):
        with pytest.raises(formats.InputError):
            Grid.parse(bad)


def test_front_and_best():
    points = [Point({"t": 1}, 3.0, 0), Point({"t": 2}, 1.0, 5), Point({"t": 3}, 2.0, 1), Point({"t": 4}, 2.5, 1)]
    assert [p.params["t"] for p in front(points)] == [2, 3, 1]
    assert best(points, 1).params == {"t": 3} and best(points, None).params == {"t": 2}
    unknown = [Point({"t": 1}, 3.0, None), Point({"t": 2}, 1.0, None)]
    assert [p.params["t"] for p in front(unknown)] == [2]  # by cost alone until hidden_used lands


def test_uploaded_zip_members_travel_as_bytes():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("a/run.jsonl", (DATA / "codex-rollout.jsonl").read_bytes())
        archive.writestr("a/.hidden.json", "{}")
    found = list(finder.uploaded("logs.zip", buffer.getvalue(), 10))
    assert [type(item) for item in found] == [Source, Skipped]
    assert found[0].name == "logs.zip!a/run.jsonl" and found[0].read(10) == (DATA / "codex-rollout.jsonl").read_bytes()
