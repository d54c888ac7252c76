"""One settings value for every policy (``policies.PolicySettings``): ``make`` refuses an option no
policy takes, and every setting the command line or the corpus holds reaches each policy that
takes it (the page's and a workspace's: tests/test_app_settings.py)."""

from __future__ import annotations

import json
from dataclasses import fields, replace

import pytest

from playground import cli
from playground.cli.corpus_runs import corpus_setup
from playground.cli.run_options import RunOptions
from playground.compaction import Settings, compact
from playground.conversation import ToolResult
from playground.corpus.evaluate import Setup
from playground.errors import InputError
from playground.meter.tokens import Meter
from playground.policies import OPTIONS, POLICIES, PolicySettings, RulesPolicy, make, takes
from playground.policies.named import NamedPolicy
from playground.rules.ruleset import load_rules
from playground.workbench.presets import load_preset

from .conftest import ROOT

SUPPORT = ROOT / "presets" / "anthropic-support.json"
WILDCARD = {"tool_calls": [], "tool_results": [{"tool": "*", "template": "Output of {tool} omitted. Call again."}]}

# One value off every default, for every option (the rules aside: they are a table, checked below).
CHANGED = {"label": "mine", "threshold": 1_234, "keep_recent": 2, "compact_errors": True, "detect_errors": False,
           "summarize": False, "limit": 4_321, "keep_steps": 5, "window": 4, "trigger": 7_000, "keep": 1,
           "clear_at_least": 500, "exclude_tools": ("bash",), "clear_tool_inputs": True, "context_window": 64_000}
# The command line's flag for each option (the context window is the model's, from --model).
FLAGS = ["--threshold", "1234", "--keep-recent", "2", "--compact-errors", "--no-error-patterns", "--no-summarize",
         "--keep-steps", "5", "--window", "4", "--trigger", "7000", "--keep", "1", "--clear-at-least", "500",
         "--exclude-tools", "bash", "--clear-inputs"]


def held(policy, option: str):
    """The value the built policy holds for ``option`` (a named policy's is its inner policy's)."""
    inner = policy.inner if isinstance(policy, NamedPolicy) else policy
    return getattr(inner, "label" if option == "label" and isinstance(inner, RulesPolicy) else option)


def assert_every_policy_holds(settings: PolicySettings, changed: dict) -> None:
    for name in POLICIES:
        policy = make(name, settings)
        for option in takes(name) & set(changed) - {"rules"}:
            assert held(policy, option) == changed[option], (name, option)


def test_make_refuses_an_option_no_policy_takes():
    with pytest.raises(InputError) as error:
        make("rules", compact_error=True)  # (compact_errors, misspelt)
    assert "compact_error" in str(error.value) and "rules" in str(error.value)
    with pytest.raises(InputError, match="no strategy takes"):
        PolicySettings().with_options(windw=3)


def test_every_option_is_some_policys_and_the_rules_pass_takes_all_its_settings():
    assert set().union(*(takes(name) for name in POLICIES)) == OPTIONS
    assert {f.name for f in fields(Settings)} <= takes("rules")  # the error switches once were not
    assert set(CHANGED) | {"rules"} == OPTIONS  # a new option needs a value here, so the tests below see it


def test_the_error_settings_reach_the_rules_policy():
    """The support preset with a rule for every tool and compact_errors on: the page compacts both
    error results, and the rules policy (Run, Compare, Corpus) must do the same."""
    preset = load_preset(SUPPORT)
    rules = load_rules(WILDCARD)
    settings = Settings(threshold=preset.threshold, compact_errors=True)
    page = compact(preset.conversation, rules, settings, preset.model).report
    assert any(isinstance(preset.conversation.items[e.position], ToolResult) and e.tool == "search_docs"
               for e in page.edits)  # (an error result among them)
    policy = make("rules", PolicySettings(rules=rules, compaction=settings, summarize=False))
    done = policy.apply(preset.conversation, Meter(preset.model))
    assert len(done.report.compaction.report.edits) == len(page.edits)
    assert len(make("rules", rules=rules, threshold=preset.threshold, compact_errors=True,
                    summarize=False).apply(preset.conversation, Meter(preset.model)).report.compaction.report.edits) \
        == len(page.edits)
    kept = make("rules", PolicySettings(rules=rules, compaction=replace(settings, compact_errors=False),
                                        summarize=False))
    assert len(kept.apply(preset.conversation, Meter(preset.model)).report.compaction.report.edits) < len(page.edits)


def _command_line(command: str, rules) -> list[str]:
    """``command``'s argv with every policy flag off its default (the probe needs its model too)."""
    probed = ["--llm-model", "m"] if command == "probe" else []
    return [command, str(SUPPORT), "--rules", str(rules), *FLAGS, *probed, "--max-input-mb", "5"]


@pytest.mark.parametrize("command", ["replay", "compare", "probe"])
def test_every_setting_from_a_single_run_command_line_reaches_every_policy(command, tmp_path):
    preset = load_preset(SUPPORT)
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps(WILDCARD))
    args = cli.parser().parse_args(_command_line(command, rules))
    settings = RunOptions.from_args(args).settings(preset.conversation, CHANGED["context_window"])
    expected = {**CHANGED, "label": str(rules)}
    assert {key: value for key, value in settings.options().items() if key not in ("rules", "limit")} == {
        key: value for key, value in expected.items() if key != "limit"}
    assert settings.rules == load_rules(WILDCARD)
    assert_every_policy_holds(settings, {key: value for key, value in expected.items() if key != "limit"})
    # the summarization limit follows the threshold on the command line
    assert make("summarize", settings).limit == CHANGED["threshold"]


@pytest.mark.parametrize("command", ["evaluate", "tune"])
def test_every_setting_from_a_corpus_command_line_reaches_every_policy(command, tmp_path):
    """The corpus's Setup carries the same flags to its workers (the context window is each run's
    model's, set per run, so it is not the command line's to give)."""
    preset = load_preset(SUPPORT)
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps(WILDCARD))
    setup = corpus_setup(cli.parser().parse_args(_command_line(command, rules)))
    settings = setup.options(preset.conversation)
    expected = {key: value for key, value in CHANGED.items() if key not in ("limit", "context_window")}
    assert {key: value for key, value in settings.options().items()
            if key not in ("rules", "limit", "context_window")} == expected | {"label": str(rules)}
    assert settings.rules == load_rules(WILDCARD)
    assert_every_policy_holds(settings, expected | {"label": str(rules)})


def test_every_setting_of_a_corpus_setup_reaches_every_policy():
    preset = load_preset(SUPPORT)
    compaction = {key: CHANGED[key] for key in ("threshold", "keep_recent", "compact_errors", "detect_errors")}
    rest = {key: value for key, value in CHANGED.items() if key not in compaction}
    policy = PolicySettings(compaction=Settings(**compaction), **rest)
    setup = Setup(policies=tuple(POLICIES), rules=WILDCARD, policy=policy)
    settings = setup.options(preset.conversation)
    assert settings == replace(policy, rules=load_rules(WILDCARD))
    assert_every_policy_holds(settings, CHANGED)


class _BuiltError(Exception):
    """Raised by the stand-in ``make``: the command has built its policy, nothing more is needed."""


@pytest.mark.parametrize("command", ["replay", "probe"])
def test_a_single_run_command_builds_its_policy_with_the_run_models_context_window(command, tmp_path, monkeypatch):
    """The probe once built its policy without the model's context window (an agent's own trigger is a
    share of it), so it could send what replay never computes."""
    import importlib

    from playground.formats import dumps
    from playground.run.prices import read_prices

    module = importlib.import_module(f"playground.cli.{command}")
    built = []

    def make_and_stop(name, settings):
        built.append(settings)
        raise _BuiltError

    monkeypatch.setattr(module, "make", make_and_stop)
    monkeypatch.setenv("PLAYGROUND_DEBUG", "1")  # main lets the stand-in's exception through
    rules, run = tmp_path / "rules.json", tmp_path / "run.json"
    rules.write_text(json.dumps(WILDCARD))
    preset = load_preset(SUPPORT)
    run.write_text(dumps(preset.conversation))
    argv = _command_line(command, rules)
    argv[1] = str(run)
    with pytest.raises(_BuiltError):
        cli.main([*argv, "--model", preset.model])
    assert built[0].context_window == read_prices().get(preset.model).context_window


def test_a_corpus_run_takes_the_baseline_the_summarizer_prices_and_the_run_models_context_window(tmp_path,
                                                                                                 monkeypatch):
    """evaluate and tune accepted --baseline and --summarizer-model and dropped them, and built their
    policies without the run's context window: each now reaches every replay of the corpus."""
    from playground.corpus import evaluate
    from playground.run.prices import read_prices

    preset = load_preset(SUPPORT)
    made, replayed = [], []
    real_make, real_replay = evaluate.make, evaluate.replay
    monkeypatch.setattr(evaluate, "make", lambda name, settings: made.append(settings) or real_make(name, settings))
    monkeypatch.setattr(evaluate, "replay", lambda *a, **kw: replayed.append(kw) or real_replay(*a, **kw))
    args = cli.parser().parse_args(["evaluate", str(tmp_path), "--baseline", "full-history",
                                    "--summarizer-model", "gpt-4o-mini", "--policy", "rules", "--policy", "summarize"])
    result = evaluate.evaluate_run(preset.conversation, corpus_setup(args), "support", preset.model)
    assert [kw["baseline"] for kw in replayed] == ["full-history"] * 2
    assert [kw["summarizer"].model for kw in replayed] == ["gpt-4o-mini"] * 2
    assert {settings.context_window for settings in made} == {read_prices().get(preset.model).context_window}
    assert result.baseline == "full-history"
