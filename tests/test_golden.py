"""The CLI's JSON output on every preset, project log, shared trace and session log, held to files
recorded before the library was reorganised: moving code must not change one byte of what a person
gets. ``PLAYGROUND_RECORD_GOLDEN=1 scripts/test tests/test_golden.py`` records them again — only
when a change of behaviour is intended, and the diff belongs in the same commit."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
from pathlib import Path

import pytest

from playground import cli

from .conftest import SHARED

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
RECORD = bool(os.environ.get("PLAYGROUND_RECORD_GOLDEN"))
PROJECT = [*sorted((ROOT / "presets").glob("*.json")),
           *sorted(p for p in (ROOT / "tests" / "data").iterdir() if p.suffix in (".jsonl", ".traj", ".json"))]
SHARED_RUNS = [SHARED / "traces" / name for name in (
    "invariant_explorer_webarena_trace2.openai.json", "miniswe_pr_astropy-12907.openai.json",
    "sweagent_marshmallow-1867_function_calling.openai.json")] + [
    SHARED / "sessions" / name for name in ("claude-code-session-196820da.jsonl", "claude-code-session-624a4a58.jsonl")]
COMMANDS = {"count": ["count", "--json"], "replay": ["replay", "--json"], "compare": ["compare", "--json"],
            "suggest": ["rules", "--suggest"], "replay-masking": ["replay", "--json", "--strategy", "masking"],
            "compare-low": ["compare", "--json", "--threshold", "2000", "--keep-recent", "1"]}


def _cli(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        status = cli.main(argv)
    assert status == 0, f"{argv} exited {status}"
    return out.getvalue()


def _input(path: Path, tmp_path: Path) -> Path:
    """The file the CLI reads: a preset's conversation is written out as the request it holds."""
    if path.parent.name != "presets":
        return path
    request = tmp_path / f"{path.stem}.request.json"
    request.write_text(json.dumps(json.loads(path.read_text())["conversation"]))
    return request


def _outputs(path: Path, command: str, tmp_path: Path) -> str:
    """What the command prints for ``path``; for compact, its report and the digest of the request
    it writes (the requests are large; one changed byte changes the digest)."""
    path = _input(path, tmp_path)
    if not command.startswith("compact"):
        name, *options = COMMANDS[command]
        return _cli([name, *options, str(path)])
    options = ["--preset", "suggested", "--threshold", "1000"] if command == "compact-suggested" else []
    written, report = tmp_path / "out.json", tmp_path / "report.json"
    _cli(["compact", str(path), "-o", str(written), "--report", str(report), *options])
    digest = hashlib.sha256(written.read_bytes()).hexdigest()
    return json.dumps({"output_sha256": digest, "report": json.loads(report.read_text())}, indent=2) + "\n"


def _cases() -> list:
    return [pytest.param(path, command, id=f"{path.name}-{command}")
            for path in [*PROJECT, *SHARED_RUNS] for command in (*COMMANDS, "compact", "compact-suggested")]


@pytest.mark.parametrize(("path", "command"), _cases())
def test_cli_output_is_unchanged(path: Path, command: str, tmp_path: Path) -> None:
    if not path.exists():
        pytest.skip(f"{path} is not here (the shared fixtures are absent)")
    expected = GOLDEN / f"{path.name}.{command}.json"
    actual = _outputs(path, command, tmp_path)
    if RECORD:
        expected.write_text(actual)
    assert expected.exists(), f"no golden file {expected.name}: record it with PLAYGROUND_RECORD_GOLDEN=1"
    assert actual == expected.read_text(), f"{command} on {path.name} differs from {expected.name}"
