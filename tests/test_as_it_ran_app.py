"""The run as it ran on the page (AppTest): a Claude Code log with a compaction, uploaded, gets the
agent's compaction marked on the Run chart and an *as-it-ran* row in Compare; a log without one gets
neither."""

from __future__ import annotations

import json

import pytest

from .conftest import SHARED, shared, show_tab
from .test_app_agent_uploads import upload
from .test_replay_app import _fresh_caches, healthy, start  # noqa: F401 - the caches fixture, autouse here too

SESSIONS = SHARED / "sessions"


def _log(name: str) -> bytes:
    return shared(SESSIONS / name).read_bytes()


def _rule_layers(at) -> list[dict]:
    specs = [json.loads(chart.proto.spec) for chart in at.get("vega_lite_chart")]
    return [layer for spec in specs for layer in spec.get("layer", [])
            if layer.get("mark", {}).get("type") == "rule" and "x" in layer.get("encoding", {})]


@pytest.mark.parametrize(("name", "marked"), [("claude-code-session-624a4a58.jsonl", True),
                                              ("claude-code-session-196820da.jsonl", False)])
def test_the_run_chart_marks_the_agents_compaction_and_compare_has_its_row(name, marked):
    at = upload(start("Run"), name, _log(name))
    assert at.session_state["conversation"].source == "claude-code"
    rules = _rule_layers(at)
    assert bool(rules) == marked
    captions = " ".join(caption.value for caption in at.caption)
    assert ("where the agent compacted its own context (line 158 of its log)" in captions) == marked
    infos = " ".join(info.value for info in at.info)
    assert ("The agent cut its own context (1 time): the meters and *Before / after* show what it held" in infos) \
        == marked
    # the meters are measured against what the agent really sent, the full history a second figure
    assert ("Measured against **the run as it ran**" in captions) == marked
    assert ("The full history its log holds would have been 5,141,540 prompt tokens" in captions) == marked
    show_tab(at, "Compare")
    at = healthy(at.run())
    table = next(frame.value for frame in at.dataframe if "policy" in frame.value.columns)
    policies = list(table["policy"])
    assert ("as-it-ran" in policies) == marked and "none" in policies
    assert any("*as-it-ran*, the baseline: what the agent really sent" in caption.value
               for caption in at.caption) == marked
    assert list(table["policy"][table["baseline"]]) == (["as-it-ran"] if marked else ["none"])
