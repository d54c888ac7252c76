"""The corpus evaluated in this process, on a local process pool and on a real Dask LocalCluster
(two worker processes): identical numbers. And the command line around it."""

from __future__ import annotations

import csv
import functools
import io
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playground import cli
from playground.cli.corpus_runs import in_order
from playground.corpus import executors, finder
from playground.corpus.evaluate import Evaluation, Setup, evaluate_batch, partition
from playground.corpus.sweep import Grid, summarize, tune_batch
from playground.errors import InputError

from .conftest import ROOT, SHARED, TRACES, shared

DATA = ROOT / "tests" / "data"


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> Path:
    """The issue's folder: real traces and sessions, the presets, the test logs, a zip of some of
    them and one corrupt file."""
    folder = tmp_path_factory.mktemp("corpus")
    shutil.copytree(shared(TRACES), folder / "traces")
    shutil.copytree(shared(SHARED / "sessions"), folder / "sessions")
    (folder / "presets").mkdir()
    for preset in (ROOT / "presets").glob("*.json"):
        shutil.copy(preset, folder / "presets")
    shutil.copytree(DATA, folder / "logs")
    with zipfile.ZipFile(folder / "bundle.zip", "w") as archive:
        for path in [*TRACES.glob("*.json"), *DATA.glob("*.traj*")]:
            archive.write(path, f"bundle/{path.name}")
    (folder / "corrupt.jsonl").write_text(  # broken mid-file (a last line cut short is read without it)
        '{"type": "user", "message": {"role": "user"}}\n{"type": \n{"type": "assistant", "message": {"role": "x"}}\n')
    return folder


def _evaluate(folder: Path, executor: str, workers: int) -> dict:
    setup = Setup()
    outcomes = executors.run(finder.find([str(folder)]), functools.partial(evaluate_batch, setup=setup),
                             executor=executor, workers=workers)
    return Evaluation.of(outcomes).to_json()


def _tune(paths: list[str], executor: str, workers: int) -> dict:
    setup = Setup(policies=("rules", "clear-tool-uses"))
    grid = Grid.parse(["threshold=20000,60000", "trigger=50000,150000"])
    runs, failed, _ = partition(executors.run(
        finder.find(paths), functools.partial(tune_batch, setup=setup, grid=grid), executor=executor,
        workers=workers))
    return summarize(runs, setup, grid) | {"failed": [f.source for f in failed]}


def test_local_pool_and_dask_localcluster_give_identical_numbers(mixed: Path):
    pytest.importorskip("distributed")  # requirements-dev.txt installs it: CI runs this
    inline = _evaluate(mixed, "local", 0)
    pool = _evaluate(mixed, "local", 2)
    dask = _evaluate(mixed, "dask", 2)
    assert pool == inline
    assert dask == pool
    sources = [run["source"] for run in pool["runs"]]
    assert f"{mixed / 'bundle.zip'}!bundle/miniswe_pr_astropy-12907.openai.json" in sources
    logs = [path for path in DATA.iterdir() if path.name != "README.md"]  # a task folder is one run
    assert f"{mixed / 'logs' / 'cline-task-handmade'}" in sources
    assert len(sources) == 3 + 2 + 6 + len(logs) + 3 + 3  # traces, sessions, presets, test logs, zipped traces, logs
    [failed] = pool["failed"]
    assert failed["source"] == str(mixed / "corrupt.jsonl") and "line 2" in failed["message"]
    assert {s["source"] for s in pool["skipped"]} == {str(mixed / name / "README.md") for name in ("logs", "sessions")}
    small = [str(mixed / name) for name in ("traces", "logs", "bundle.zip", "corrupt.jsonl")]
    tuned_pool, tuned_dask = _tune(small, "local", 2), _tune(small, "dask", 2)
    assert tuned_pool == tuned_dask and tuned_pool["failed"] == [str(mixed / "corrupt.jsonl")]


def test_evaluate_json_csv_and_parquet(mixed: Path, tmp_path: Path, capsys):
    traces = str(mixed / "traces")
    assert cli.main(["evaluate", traces, "--json", "--workers", "0", "--strategy", "none",
                     "--strategy", "rules", "--threshold", "5000"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"runs", "failed", "skipped", "aggregate"}
    run = data["runs"][0]
    assert {"source", "format", "model", "calls", "strategies"} <= set(run)
    assert {"strategy", "tokens_billed", "cached_tokens", "cost", "tokens_lost", "tokens_retrievable",
            "hidden_used_calls"} <= set(run["strategies"][0])
    assert all(isinstance(s["hidden_used_calls"], int) for s in run["strategies"])  # replay's, as compare reports
    assert run["strategies"][0]["hidden_used_calls"] == 0  # none hides nothing
    assert [s["strategy"] for s in data["aggregate"]["strategies"]] == ["none", "rules"]
    out = tmp_path / "runs.csv"
    assert cli.main(["evaluate", traces, "--csv", str(out), "--workers", "0", "--strategy", "rules",
                     "--threshold", "5000"]) == 0
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert len(rows) == 3 and {row["strategy"] for row in rows} == {"rules"}
    costs = {r["source"]: r["cost"] for r in rows}
    assert costs == {r["source"]: str(r["strategies"][1]["cost"]) for r in data["runs"]}
    pyarrow = pytest.importorskip("pyarrow.parquet")
    table = tmp_path / "runs.parquet"
    assert cli.main(["evaluate", traces, "--parquet", str(table), "--workers", "0", "--strategy", "rules",
                     "--threshold", "5000"]) == 0
    assert pyarrow.read_table(table).num_rows == 3


def test_tune_json_front_and_best(mixed: Path, capsys):
    assert cli.main(["tune", str(mixed / "traces"), "--json", "--workers", "0", "--strategy", "rules",
                     "--grid", "threshold=0,5000,100000", "keep_recent=0,2", "--no-summarize"]) == 0
    data = json.loads(capsys.readouterr().out)
    [rules] = data["strategies"]
    assert {"strategy", "front", "best"} <= set(rules) and len(rules["points"]) == 6
    front = rules["front"]
    assert front[0] == min(rules["points"], key=lambda p: p["cost"]) and rules["best"] == front[0]
    hidden = [point["hidden_used_calls"] for point in front]  # each point on the front hides less than a cheaper one
    assert all(isinstance(h, int) for h in hidden) and hidden == sorted(hidden, reverse=True)
    assert len(set(hidden)) == len(hidden)
    assert data["prices"] and all({"model", "source", "cache"} <= set(p) for p in data["prices"])
    # the swept cost at a point is what evaluate bills at that setting
    params = rules["best"]["params"]
    assert cli.main(["evaluate", str(mixed / "traces"), "--json", "--workers", "0", "--strategy", "rules",
                     "--threshold", str(params["threshold"]), "--keep-recent", str(params["keep_recent"]),
                     "--no-summarize"]) == 0
    assert json.loads(capsys.readouterr().out)["aggregate"]["strategies"][0]["cost"] == rules["best"]["cost"]


def test_dask_missing_is_a_clear_message(monkeypatch, mixed: Path, capsys):
    real = executors.importlib.import_module

    def no_dask(name: str, *args):
        if name == "distributed":
            raise ImportError("No module named 'distributed'")
        return real(name, *args)

    monkeypatch.setattr(executors.importlib, "import_module", no_dask)
    with pytest.raises(InputError, match=r"requirements-dask\.txt"):
        list(executors.run(finder.find([str(mixed / "traces")]), functools.partial(evaluate_batch, setup=Setup()),
                           executor="dask"))
    assert cli.main(["evaluate", str(mixed / "traces"), "--executor", "dask"]) == 2
    assert "pip install -r requirements-dask.txt" in capsys.readouterr().err


def test_the_app_and_the_cli_start_without_importing_dask():
    script = ("import sys, playground.ui, playground.cli, playground.corpus.executors; playground.cli.parser(); "
              "print('distributed' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", script],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_the_streamed_json_of_the_cli_is_the_evaluation_of_the_library(mixed: Path, capsys):
    small = [str(mixed / name) for name in ("traces", "logs", "bundle.zip", "corrupt.jsonl")]
    assert cli.main(["evaluate", *small, "--json", "--workers", "2"]) == 0
    streamed = json.loads(capsys.readouterr().out)
    outcomes = executors.run(finder.find(small), functools.partial(evaluate_batch, setup=Setup()), workers=0)
    assert streamed == Evaluation.of(outcomes).to_json()
    assert cli.main(["evaluate", *small, "--csv", "-", "--workers", "0", "--strategy", "rules"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [row["source"] for row in rows] == [run["source"] for run in streamed["runs"]]


@given(st.permutations(range(30)))
def test_outcomes_come_back_in_corpus_order(order):
    assert list(in_order((n, f"outcome {n}") for n in order)) == [f"outcome {n}" for n in range(30)]
