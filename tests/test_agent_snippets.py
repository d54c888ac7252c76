"""*Use it in your agent*: the code the page hands out runs as written — a fresh Python process, the
workspace file beside it, the client's own environment variables pointing at the local API servers — and
sends what replay measured; the Export tab shows it for the client chosen, and the native settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import playground as pg
from playground.export import exports, snippets, targets
from playground.workbench import workspace

from .anthropic_stub import AnthropicStub
from .conftest import ROOT, show_tab
from .openai_stub import StubServer
from .test_app import _fresh_caches, healthy, start  # noqa: F401 - the caches fixture, autouse here too

CALLS = 4  # the stubs' tool-loop-4 asks for a file per reply four times, then answers
ENVIRONMENT = {"openai": ("OPENAI_BASE_URL", "OPENAI_API_KEY", StubServer),
               "langchain": ("OPENAI_BASE_URL", "OPENAI_API_KEY", StubServer),
               "agents-sdk": ("OPENAI_BASE_URL", "OPENAI_API_KEY", StubServer),
               "anthropic": ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", AnthropicStub)}


def _workspace(folder: Path) -> None:
    """The workspace as the page saves it, with a threshold the stand-in tool's files pass at the third call."""
    page = workspace.Workspace(conversation=pg.load_preset("presets/coding-agent.json").conversation,
                               rules=pg.book_rules(), threshold=3_000, model="gpt-4o")
    (folder / exports.WORKSPACE_FILE).write_text(json.dumps(workspace.to_json(page)))


@pytest.mark.parametrize("client", list(snippets.CLIENTS))
def test_the_snippet_runs_as_written_and_its_log_is_the_run_replay_measures(client: str, tmp_path: Path) -> None:
    _workspace(tmp_path)
    code = snippets.wrapper_snippet(client, f"tool-loop-{CALLS}")
    (tmp_path / "agent.py").write_text(code)
    base_url, key, server_type = ENVIRONMENT[client]
    with server_type() as server:
        environment = {**os.environ, base_url: server.base_url, key: "sk-not-a-key", "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, "agent.py"], check=False, cwd=tmp_path, env=environment,
                              capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in (tmp_path / "compaction-run.jsonl").read_text().splitlines()]
    assert len(lines) == CALLS + 1  # a call per file read, and the answer
    assert lines[-1]["tokens_before"] > lines[-1]["tokens_after"]  # over the workspace's threshold: compacted
    run = pg.load(tmp_path / "compaction-run.jsonl")  # the log opens as the run, with the wrapper's figures
    policy = pg.load_policy(tmp_path / exports.WORKSPACE_FILE).make()
    replayed = pg.replay(run, policy, pg.Engine().meter("gpt-4o"), pg.read_prices().get("gpt-4o"))
    assert [call.tokens_with for call in replayed.calls] == [line["tokens_after"] for line in lines]
    assert "sk-not-a-key" not in (tmp_path / "compaction-run.jsonl").read_text()


@pytest.mark.parametrize(("client", "model", "called"), [
    ("openai", "gpt-4o", "gpt-4o"), ("openai", "claude-sonnet-4-5", "gpt-4o"),
    ("openai", "openrouter/anthropic/claude-3.5-sonnet", "openrouter/anthropic/claude-3.5-sonnet"),
    ("anthropic", "claude-opus-4-5", "claude-opus-4-5"), ("anthropic", "gpt-4o", "claude-sonnet-4-5")])
def test_the_snippet_calls_the_pages_model_where_its_client_serves_it(client: str, model: str, called: str) -> None:
    assert f'MODEL = "{called}"' in exports.agent_snippet(client, model).data


def test_a_client_the_wrapper_does_not_take_is_refused_by_name() -> None:
    with pytest.raises(pg.InputError, match="no snippet for the client 'gemini'"):
        snippets.wrapper_snippet("gemini")


def test_the_export_tab_shows_the_agent_code_for_the_client_chosen_and_the_native_settings() -> None:
    at = healthy(show_tab(start(), "Export").run())
    assert [h.value for h in at.subheader if h.value == "Use it in your agent"]
    code = [block.value for block in at.code]
    assert any('pg.load_policy("playground.workspace.json")' in block and "openai.OpenAI()" in block
               for block in code)
    at = healthy(at.radio(key="agent_target").set_value("anthropic").run())
    assert any("anthropic.Anthropic()" in block.value for block in at.code)
    at = healthy(at.radio(key="agent_target").set_value("native").run())
    assert any("context_management=" in block.value for block in at.code)  # the book's rules clear read_file
    assert any("ClearToolUsesEdit(" in block.value for block in at.code)


def test_the_native_settings_show_every_target_and_on_the_button_their_gap_to_the_tuned_policy() -> None:
    at = show_tab(start(), "Export")
    at.session_state["agent_target"] = "native"
    at = healthy(at.run())
    titles = [expander.label for expander in at.expander]
    compiled = _native_titles()
    assert [title for title in titles if title in compiled] == compiled  # every target, in order
    assert any(block.value.startswith("export CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=") for block in at.code)
    assert any(block.value.startswith("model_auto_compact_token_limit = ") for block in at.code)
    assert any("ToolOutputTrimmer(" in block.value for block in at.code)
    assert any("compressionThreshold" in block.value for block in at.code)
    assert any("Cannot express" in text.value for text in at.markdown)
    assert not _gap_tables(at)  # nothing replayed until asked
    at = healthy(at.button(key="native_run").click().run())
    (table,) = _gap_tables(at)
    assert list(table.value["target"]) == ["tuned", *targets()]
    assert any("beside the tuned policy" in caption.value for caption in at.caption)


def _gap_tables(at) -> list:
    return [frame for frame in at.dataframe if "vs tuned (tokens)" in getattr(frame.value, "columns", ())]


def _native_titles() -> list[str]:
    return [json.loads((ROOT / "playground" / "data" / "native.json").read_text())["targets"][name]["title"]
            for name in targets()]


def test_the_agents_workspace_is_the_file_save_workspace_writes() -> None:
    at = healthy(show_tab(start(), "Export").run())
    buttons = {button.label: button for button in at.get("download_button")}
    assert "Workspace for the agent" in buttons and "Agent loop (Python)" in buttons
