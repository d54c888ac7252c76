"""Native settings: each target's text compiled from a known tuned policy, read back the way its
agent reads it (the SDK's types, LangChain's class, TOML, JSON, the environment), what each says
it cannot express, and the rows that run each under its emulation beside the tuned policy."""

from __future__ import annotations

import json
import sys
import tomllib
import types
from dataclasses import fields
from pathlib import Path
from typing import Any

import pydantic
import pytest
from anthropic.types.beta import BetaClearToolUses20250919EditParam, BetaContextManagementConfigParam
from hypothesis import given
from hypothesis import strategies as st

import playground as pg
from playground.compaction import Settings
from playground.conversation import Conversation, Message, ToolCall, ToolResult, link
from playground.export.native import claude_code_trigger, native_settings, targets
from playground.export.native_gap import TUNED, gap_table, native_compare, to_json
from playground.policies import ClearToolUsesPolicy, PolicySettings, make
from playground.policies.trimmer import ToolOutputTrimmerPolicy
from playground.rules.ruleset import Rules, load_rules
from playground.run import compare, read_prices, replay
from playground.workbench import workspace

from .test_cli import cli
from .test_framework_export import RULES, _run

WINDOW = 200_000
TUNED_SETTINGS = PolicySettings(rules=RULES, compaction=Settings(threshold=30_000, keep_recent=2), limit=40_000,
                                keep_steps=2)


def _compiled(settings: PolicySettings = TUNED_SETTINGS, conversation: Conversation | None = None) -> dict[str, Any]:
    return {found.target: found for found in native_settings(conversation or _run(), settings, WINDOW)}


def _fake_modules(monkeypatch, **modules: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Stand-ins for packages the tests do not install: each class records the keywords it was built with."""
    made: dict[str, dict[str, Any]] = {}
    for dotted, names in modules.items():
        module = types.ModuleType(dotted)
        for name in names:
            setattr(module, name, lambda _name=name, **kwargs: made.setdefault(_name, kwargs))
        monkeypatch.setitem(sys.modules, dotted, module)
    return made


def test_every_target_in_order_each_with_its_emulation_and_mode():
    compiled = _compiled()
    assert tuple(compiled) == targets() == ("anthropic", "langchain", "agents-sdk", "claude-code", "codex",
                                            "gemini-compression", "gemini-masking")
    assert {name: (found.emulation, found.mode) for name, found in compiled.items()} == {
        "anthropic": ("clear-tool-uses", "per-call"), "langchain": ("clear-tool-uses", "per-call"),
        "agents-sdk": ("agents-sdk-trimmer", "per-call"), "claude-code": ("claude-code-compact", "stored"),
        "codex": ("codex-compact", "stored"), "gemini-compression": ("gemini-chat-compression", "stored"),
        "gemini-masking": ("gemini-tool-output-masking", "stored")}
    for found in compiled.values():
        assert found.text and found.cannot and found.source
        assert found.policy().name == f"{found.target} (native)"


def test_anthropic_and_langchain_take_the_framework_exports_numbers():
    compiled = _compiled()
    sent: dict[str, Any] = {}
    client = types.SimpleNamespace(beta=types.SimpleNamespace(messages=types.SimpleNamespace(
        create=lambda **kwargs: sent.update(kwargs))))
    exec(compiled["anthropic"].text.split("\n", 1)[1], {"client": client, "MODEL": "m", "messages": [], "tools": []})
    assert set(sent["context_management"]) <= set(BetaContextManagementConfigParam.__annotations__)
    (edit,) = sent["context_management"]["edits"]
    edit = pydantic.TypeAdapter(BetaClearToolUses20250919EditParam).validate_python(edit)
    assert (edit["trigger"]["value"], edit["keep"]["value"], edit["exclude_tools"], edit["clear_tool_inputs"]) == \
        (30_000, 3, ["TodoWrite"], True)
    namespace: dict = {}
    exec(compiled["langchain"].text.replace("agent = create_agent(model, tools, middleware=[middleware])\n", ""),
         namespace)
    langchain = namespace["middleware"].edits[0]
    assert (langchain.trigger, langchain.keep, list(langchain.exclude_tools)) == (30_000, 3, ["TodoWrite"])
    for target in ("anthropic", "langchain"):  # the emulation runs what was pasted
        assert compiled[target].policy().params() == {"trigger": 30_000, "keep": 3, "clear_at_least": 0,
                                                      "exclude_tools": ["TodoWrite"], "clear_tool_inputs": True}


def test_the_trimmer_snippet_builds_the_sdk_filter_with_the_compiled_keywords(monkeypatch):
    made = _fake_modules(monkeypatch, agents=["RunConfig"], **{"agents.extensions": ["ToolOutputTrimmer"]})
    compiled = _compiled()
    exec(compiled["agents-sdk"].text, {})
    keywords = made["ToolOutputTrimmer"]
    assert keywords == {"recent_turns": 1, "max_output_chars": 1, "preview_chars": 0,
                        "trimmable_tools": {"Read", "Bash"}}  # Bash has no min_tokens: every size is trimmed
    assert made["RunConfig"] == {"call_model_input_filter": keywords}
    # the SDK's dataclass fields (openai-agents 0.24.0), which the playground's emulation mirrors name for name
    emulated = {f.name for f in fields(ToolOutputTrimmerPolicy) if f.compare}  # (not what it carries from call to call)
    assert set(keywords) == emulated
    assert compiled["agents-sdk"].policy().params() == {"recent_turns": 1, "max_output_chars": 1, "preview_chars": 0,
                                                        "trimmable_tools": ["Bash", "Read"]}
    sized = load_rules({"tool_results": [{"tool": "Read", "template": "[read]", "min_tokens": 100},
                                         {"tool": "Bash", "template": "[ran]", "min_tokens": 300}]})
    trimmer = _compiled(PolicySettings(rules=sized))["agents-sdk"]
    assert dict(trimmer.params)["max_output_chars"] == 400  # four characters a token of the smallest
    assert any("one max_output_chars (400 characters" in reason for reason in trimmer.cannot)


def test_the_agents_summarizing_settings_are_set_where_the_tuned_policy_summarizes():
    compiled = _compiled()
    assert compiled["claude-code"].text == "export CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=22.2222\n"
    assert dict(compiled["claude-code"].params) == {"trigger": 39_999, "context_window": WINDOW}  # 22.2222% of 180,000
    assert tomllib.loads(compiled["codex"].text) == {"model_auto_compact_token_limit": 40_000}
    assert compiled["codex"].policy().params()["trigger"] == 40_000
    assert json.loads(compiled["gemini-compression"].text) == {"model": {"compressionThreshold": 0.2}}
    assert compiled["gemini-compression"].policy().params()["trigger"] == 40_000
    masking = json.loads(compiled["gemini-masking"].text)["contextManagement"]["tools"]["outputMasking"]
    # the newest 2 results of the cleared tools (Bash's and the last Read's, 500 characters each)
    assert masking == {"protectionThresholdTokens": 250, "minPrunableThresholdTokens": 30_000,
                       "protectLatestTurn": True}
    assert {key: compiled["gemini-masking"].policy().params()[key] for key in ("protect_tokens", "minimum")} == \
        {"protect_tokens": 250, "minimum": 30_000}


def _reasons(found) -> str:
    return "\n".join(found.cannot)


def test_what_each_cannot_express_follows_the_policy():
    compiled = _compiled()
    for target in ("anthropic", "langchain", "agents-sdk", "gemini-masking"):
        assert "summarization: past 40,000 tokens" in _reasons(compiled[target])
        assert "argument rules (Write.content)" in _reasons(compiled[target])
        assert "error guard" in _reasons(compiled[target])
    for target in ("claude-code", "codex", "gemini-compression"):
        assert "the rules (Read, Bash)" in _reasons(compiled[target])
        assert "the newest 2 steps" in _reasons(compiled[target])
    assert "keep_recent 2: the trimmer keeps whole user turns" in _reasons(compiled["agents-sdk"])
    assert "(TodoWrite) are masked too" in _reasons(compiled["gemini-masking"])
    assert "window: 200,000 tokens here" in _reasons(compiled["gemini-compression"])
    assert "claude_cap" not in _reasons(compiled["claude-code"]) and "above Claude Code" not in \
        _reasons(compiled["claude-code"])

    late = _compiled(PolicySettings(rules=RULES, compaction=Settings(threshold=30_000, compact_errors=True),
                                    summarize=False, limit=180_000))
    assert "summarizes all" not in _reasons(late["anthropic"])
    assert "summarization is off in the tuned policy" in _reasons(late["codex"])
    assert "error guard" not in _reasons(late["agents-sdk"])
    assert "is above Claude Code's own 167,000" in _reasons(late["claude-code"])
    assert dict(late["claude-code"].params)["trigger"] == 167_000  # the override only lowers it


@pytest.mark.parametrize("rules", [Rules(), load_rules({"tool_results": [{"tool": "Nope", "template": "x"}]})])
def test_a_policy_that_clears_nothing_compiles_to_nothing_to_clear(rules):
    compiled = _compiled(PolicySettings(rules=rules))
    for target in ("anthropic", "langchain", "agents-sdk", "gemini-masking"):
        found = compiled[target]
        assert (found.text, found.emulation, found.policy()) == ("", None, None)
        assert found.cannot == ("the tuned rules replace no tool result of this conversation: there is nothing "
                                "for this setting to clear",)
    assert "the rules (" not in _reasons(compiled["codex"]) and compiled["codex"].policy() is not None


@given(st.integers(2_000, 1_100_000), st.integers(40_000, 1_100_000))
def test_the_claude_code_override_fires_at_the_limit_or_at_its_own_trigger(limit, window):
    percent, fires, ceiling = claude_code_trigger(limit, window)
    effective = window - 20_000
    assert 0 < percent <= 100 and ceiling == effective - 13_000
    assert fires <= min(limit, ceiling)
    assert fires >= min(limit, ceiling) - effective // 1_000_000 - 1  # four decimals of a percent


def _one_task_run(turns: int = 6) -> Conversation:
    """One user message, then turns of one Read each with a 2,000-character result: one user turn."""
    items: list = [Message(role="user", content="fix the bug")]
    for n in range(turns):
        items += [ToolCall(call_id=f"c{n}", name="Read", arguments=json.dumps({"file_path": f"f{n}.py"})),
                  ToolResult(call_id=f"c{n}", content=f"{n}" * 2_000), Message(role="assistant", content="next")]
    return Conversation(items=link(items), format="anthropic", model="claude-sonnet-4-5")


def test_the_rows_run_each_emulation_beside_the_tuned_policy():
    conversation = _one_task_run()
    settings = PolicySettings(rules=load_rules({"tool_results": [{"tool": "*", "template": "[cleared]"}]}),
                              compaction=Settings(threshold=0), summarize=False)
    model = "claude-sonnet-4-5"
    meter, price = pg.Engine().meter(model), read_prices().get(model)
    compiled = native_settings(conversation, settings, WINDOW)
    found = native_compare(conversation, make("rules", settings), compiled, meter, price)
    (rules_row,) = compare(conversation, [make("rules", settings)], meter, price)
    assert found.tuned.policy == TUNED and found.tuned.tokens_billed == rules_row.tokens_billed
    gaps = {gap.setting.target: gap for gap in found.gaps}
    # one user turn: the trimmer keeps it whole, so it sends what no policy sends
    (none_row,) = compare(conversation, [make("none")], meter, price, mode="per-call")
    assert gaps["agents-sdk"].row.tokens_billed == none_row.tokens_billed > found.tuned.tokens_billed
    # Anthropic's edit is clear-tool-uses with the compiled numbers, re-applied to each request
    direct = replay(conversation, ClearToolUsesPolicy(trigger=0, keep=1), meter, price, mode="per-call")
    assert gaps["anthropic"].row.tokens_billed == direct.totals.tokens_with
    assert gaps["anthropic"].row.params == gaps["langchain"].row.params == direct.params
    for gap in found.gaps:
        assert gap.tokens_billed == gap.row.tokens_billed - found.tuned.tokens_billed
        assert gap.hidden_used_calls == gap.row.hidden_used_calls - found.tuned.hidden_used_calls
        assert gap.cost == pytest.approx(gap.row.cost - found.tuned.cost)
    table = gap_table(found)
    assert [line["target"] for line in table] == [TUNED, *targets()]
    assert table[3]["vs tuned (tokens)"] == gaps["agents-sdk"].tokens_billed > 0
    data = to_json(found)
    assert data["tuned"]["strategy"] == TUNED and [item["target"] for item in data["native"]] == list(targets())
    assert data["native"][2]["params"]["trimmable_tools"] == ["Read"]


def test_nothing_to_clear_has_no_row():
    conversation = _one_task_run(2)
    settings = PolicySettings(rules=Rules())
    model = "claude-sonnet-4-5"
    found = native_compare(conversation, make("rules", settings), native_settings(conversation, settings, WINDOW),
                           pg.Engine().meter(model), read_prices().get(model))
    gaps = {gap.setting.target: gap for gap in found.gaps}
    assert gaps["anthropic"].row is None and gaps["anthropic"].tokens_billed is None
    assert gaps["codex"].row is not None
    assert gap_table(found)[1]["emulated as"] == "(nothing to run)"


TRACE = "tests/data/sweagent-function-calling.traj"


def test_compare_native_json_carries_the_tuned_row_and_each_target(tmp_path: Path):
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"tool_results": [{"tool": "*", "template": "[output of {tool} cleared]"}]}))
    done = cli("compare", TRACE, "--native", str(rules), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    plain = json.loads(cli("compare", TRACE, "--rules", str(rules), "--policy", "rules", "--json").stdout)[0]
    for row in (data["tuned"], plain):  # the same run; only the names differ (and the rules' label)
        del row["strategy"], row["source"], row["baseline"], row["params"]["rules"]
    assert data["tuned"] == plain
    assert [item["target"] for item in data["native"]] == list(targets())
    for item in data["native"]:
        assert item["text"] and item["cannot"]
        assert item["gap"]["tokens_billed"] == item["row"]["tokens_billed"] - data["tuned"]["tokens_billed"]
    text = cli("compare", TRACE, "--native", str(rules)).stdout
    assert "export CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=" in text and "cannot: " in text


def test_compare_native_reads_a_workspace_settings(tmp_path: Path):
    every = load_rules({"tool_results": [{"tool": "*", "template": "[cleared]"}]})
    ws = workspace.Workspace(conversation=_run(), rules=every, threshold=12_345, keep_recent=1, model="gpt-4o",
                             summarization=workspace.WorkspaceSummarization(enabled=True, limit=20_000, keep_steps=2))
    path = tmp_path / "workspace.json"
    path.write_text(json.dumps(workspace.to_json(ws)), encoding="utf-8")
    done = cli("compare", TRACE, "--native", str(path), "--json")
    assert done.returncode == 0, done.stderr
    native = {item["target"]: item for item in json.loads(done.stdout)["native"]}
    assert native["codex"]["text"] == "model_auto_compact_token_limit = 20000\n"
    assert native["gemini-compression"]["params"]["context_window"] == read_prices().get("gpt-4o").context_window
    assert native["gemini-masking"]["params"]["minimum"] == 12_345


def test_compare_native_refuses_a_file_that_is_no_policy(tmp_path: Path):
    path = tmp_path / "nothing.json"
    path.write_text("[1, 2]")
    done = cli("compare", TRACE, "--native", str(path))
    assert done.returncode != 0 and "neither a workspace" in done.stderr and "Traceback" not in done.stderr
