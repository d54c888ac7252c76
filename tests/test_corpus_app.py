"""The Corpus tab through AppTest: upload a zip and loose logs, evaluate, read the per-run table
(the engine's numbers), and the upload limit (opening a run: tests/test_corpus_browser.py)."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from playground.compaction import Settings
from playground.corpus import finder
from playground.corpus.evaluate import Setup, evaluate_source
from playground.policies import PolicySettings
from playground.ui import corpus_panel, state

from .conftest import ROOT, TRACES, shared, show_tab

DATA = ROOT / "tests" / "data"


@pytest.fixture(autouse=True)
def _fresh_caches():
    st.cache_data.clear()
    yield


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.write(shared(TRACES / "sweagent_marshmallow-1867_function_calling.openai.json"), "runs/swe.json")
        archive.write(DATA / "codex-rollout.jsonl", "runs/codex.jsonl")
        archive.writestr("runs/notes.txt", "not a run")
        archive.writestr("runs/broken.json", '{"messages": [')
    return buffer.getvalue()


def _start() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    show_tab(at, "Corpus")
    at.run()
    assert not at.exception, at.exception
    return at


def test_upload_a_zip_evaluate_and_read_the_table():
    at = _start()
    at.file_uploader(key=state.CORPUS_UPLOAD).set_value([
        ("logs.zip", _zip(), "application/zip"),
        ("mini.traj.json", (DATA / "mini-swe-agent.traj.json").read_bytes(), "application/json")]).run()
    at.button[[b.label for b in at.button].index("Evaluate the corpus")].click().run()
    assert not at.exception, at.exception
    [table] = [frame.value for frame in at.dataframe if "run" in frame.value.columns]
    assert list(table["run"]) == ["logs.zip!runs/swe.json", "logs.zip!runs/codex.jsonl", "mini.traj.json"]
    # the table's numbers are the engine's for that run, under the page's settings
    evaluation = at.session_state[state.CORPUS_RESULT]
    expected = evaluate_source(next(s for s in finder.uploaded("logs.zip", _zip(), 10)
                                    if isinstance(s, finder.Source)), evaluation_setup(at))
    assert table["cost rules (US$)"][0] == round(next(r.row.cost for r in expected.policies
                                                       if r.row.policy == "rules"), 4)
    shown = json.loads(next(frame for frame in at.dataframe if "run" in frame.value.columns).proto.columns)
    assert shown["cost rules (US$)"]["type_config"]["format"] == shown["saving rules (US$)"]["type_config"]["format"]
    assert shown["cost rules (US$)"]["type_config"]["format"] == "%.4f"  # (148.9760 beside 902.9204, not 148.976)
    assert [f.source for f in evaluation.failed] == ["logs.zip!runs/broken.json"]
    assert any("line 1, column" in w.value for w in at.warning)
    assert [s.source for s in evaluation.skipped] == ["logs.zip!runs/notes.txt"]
    assert len(at.get("vega_lite_chart")) >= 3  # saving, cost and the threshold sweep
    assert at.session_state[state.CORPUS_TUNED]["strategies"][0]["best"] is not None


def evaluation_setup(at: AppTest) -> Setup:
    """The setup the page used: the preset's rules and threshold, and the default policies."""
    preset = state.all_presets()[at.session_state[state.PRESET]]
    return Setup(policies=tuple(corpus_panel.DEFAULT_POLICIES), rules=preset.rules,
                 policy=PolicySettings(compaction=Settings(preset.threshold, preset.keep_recent)))


def test_the_corpus_upload_limit_is_stated_and_enforced(monkeypatch):
    monkeypatch.setenv("PLAYGROUND_MAX_INPUT_MB", "1")
    at = _start()
    uploader = at.file_uploader(key=state.CORPUS_UPLOAD)
    assert "Up to 1 MB per file and for all of them together" in uploader.help
    big = [(f"run{n}.json", b" " * 700_000, "application/json") for n in range(2)]
    uploader.set_value(big).run()
    at.button[[b.label for b in at.button].index("Evaluate the corpus")].click().run()
    assert not at.exception, at.exception
    assert any("over the limit of 1 MB for one corpus" in e.value for e in at.error)
    assert state.CORPUS_RESULT not in at.session_state or at.session_state[state.CORPUS_RESULT] is None
