"""The page's settings reach every policy it builds, and its state follows the conversation: a
workspace's settings (the page's own, once opened) show in every Compare row's parameters, and the
Run tab's chosen call is forgotten when the conversation changes."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from playground.rules.ruleset import load_rules
from playground.ui import state
from playground.workbench import workspace
from playground.workbench.presets import load_preset

from .conftest import ROOT, show_tab
from .test_app import _fresh_caches, healthy  # noqa: F401 - the caches fixture, autouse here too
from .test_policy_settings import SUPPORT, WILDCARD


def _params(text: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in text.split(", ") if "=" in part)


def _workspace() -> workspace.Workspace:
    """A workspace with every policy setting away from its default."""
    preset = load_preset(SUPPORT)
    return workspace.Workspace(
        conversation=preset.conversation, rules=load_rules(WILDCARD), threshold=1_234, keep_recent=2,
        compact_errors=True, detect_errors=False, model=preset.model,
        summarization=workspace.WorkspaceSummarization(limit=4_321, keep_steps=5),
        replay=workspace.ReplaySettings(window=4, trigger=7_000, keep=1, clear_at_least=500))


def test_a_workspaces_settings_reach_every_policy_of_the_compare_tab():
    ws = _workspace()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    show_tab(at, "Compare")
    healthy(at.run())
    at.sidebar.file_uploader(key="workspace_upload").set_value(
        ("mine.json", json.dumps(workspace.to_json(ws)).encode(), "application/json"))
    healthy(at.run())
    assert at.session_state[state.COMPARE_SHOW]
    table = next(frame.value for frame in at.dataframe if "parameters" in frame.value.columns)
    rows = {row["policy"]: _params(row["parameters"]) for _, row in table.iterrows()}
    assert {key: rows["rules"][key] for key in ("threshold", "keep_recent", "compact_errors", "detect_errors",
                                                "summarize", "limit", "keep_steps")} == {
        "threshold": "1234", "keep_recent": "2", "compact_errors": "True", "detect_errors": "False",
        "summarize": "True", "limit": "4321", "keep_steps": "5"}
    assert rows["masking"] == {"window": "4"}
    assert rows["hybrid"] == {"window": "4", "limit": "4321", "keep_steps": "5"}
    assert rows["summarize"] == {"limit": "4321", "keep_steps": "5"}
    assert {key: rows["clear-tool-uses"][key] for key in ("trigger", "keep", "clear_at_least")} == {
        "trigger": "7000", "keep": "1", "clear_at_least": "500"}



def _chosen_call_shown(at: AppTest) -> bool:
    return any("chosen in the Run tab" in box.value for box in at.info)


def test_the_run_tabs_chosen_call_is_forgotten_with_its_conversation():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    show_tab(at, "Run")
    healthy(at.run())
    healthy(at.slider(key=state.REPLAY_CALL).set_value(5).run())
    show_tab(at, "Before / after")
    healthy(at.run())
    assert _chosen_call_shown(at)  # call 5 of this conversation, as picked
    picker = at.sidebar.selectbox(key=state.PRESET)
    other = next(key for key in state.all_presets() if key != at.session_state[state.PRESET])
    healthy(picker.set_value(other).run())
    assert not _chosen_call_shown(at)  # another conversation: its whole request, not "call 5 of …"
    show_tab(at, "Run")
    healthy(at.run())
    assert at.session_state[state.REPLAY_CALL] == at.slider(key=state.REPLAY_CALL).max  # the new run's last call


# The Rules tab's controls that replace the tables as a whole (their help says the edits go).
REPLACING = {"Use these rules", "Suggest rules for this conversation", "Reset to the default patterns",
             "Import pasted rules", "Add these rows", "Dismiss"}
MINE = {"enabled": True, "tool": "mine", "argument": "content", "replacement": "[saved]", "min_tokens": 0}


def test_no_control_of_the_rules_tab_feeds_a_tables_edits_back_as_its_input():
    """A table's input changes only when the table is replaced: a new input is a new grid, and what
    was typed into the old one while the page reran was lost (an *Add a row* button did this)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    show_tab(at, "Rules")
    healthy(at.run())
    at.session_state[state.CALL_EDITOR] = {"edited_rows": {}, "deleted_rows": [], "added_rows": [MINE]}
    healthy(at.run())
    inputs = {key: at.session_state[key] for key in (state.CALL_BASE, state.RESULT_BASE, state.PATTERN_BASE)}
    others = [button.key for button in at.main.button if button.label not in REPLACING and button.key]
    for key in others:
        healthy(at.button(key=key).click().run())
        assert {name: at.session_state[name] for name in inputs} == inputs, key
    healthy(at.run())
    assert at.session_state[state.CALL_EDITOR]["added_rows"] == [MINE]  # the edit is where it was typed
    assert {name: at.session_state[name] for name in inputs} == inputs


def test_a_workspace_builds_the_same_policies_on_the_page_and_in_an_agent(tmp_path):
    """The page builds its policies from its widgets (``ui.run_setup``), an agent from the saved file
    (``pg.load_policy``): the same workspace must give every policy the same parameters in both."""
    import playground as pg
    from playground.policies import make

    ws = _workspace()
    saved = tmp_path / "mine.json"
    saved.write_text(json.dumps(workspace.to_json(ws)))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    show_tab(at, "Compare")
    healthy(at.run())
    at.sidebar.file_uploader(key="workspace_upload").set_value(("mine.json", saved.read_bytes(), "application/json"))
    healthy(at.run())
    table = next(frame.value for frame in at.dataframe if "parameters" in frame.value.columns)
    on_page = {row["policy"]: _params(row["parameters"]) for _, row in table.iterrows()}
    settings = pg.load_policy(saved).settings
    in_agent = {name: {key: str(value) for key, value in make(name, settings).params().items()} for name in on_page}
    for params in (*on_page.values(), *in_agent.values()):
        params.pop("rules", None)  # the rules' label: "the page's rules" there, the file's name here
    assert len(on_page) >= 6 and in_agent == on_page
