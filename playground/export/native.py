"""Native settings: a tuned policy compiled into each agent's and provider's own setting, with what
that setting cannot express.

A person who tuned rules, a threshold, ``keep_recent`` and summarization here may rather switch on
the feature their agent already has than wrap its client. Each feature has a few numbers, so the
compiled text is the nearest each can say; every setting carries the reasons it falls short
(``cannot``) and the named policy that emulates the feature here with the compiled numbers, so
``native_gap`` can replay it beside the tuned policy and show what the move costs. The targets'
words, places and sources are in ``data/native.json``; the clear-tool-uses pair reuses ``framework``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from string import Template
from typing import Any, cast

from ..conversation import Conversation, ToolResult, content_text
from ..policies import OURS, THEIRS, Policy, PolicySettings, make
from ..policies.named import Named, NamedPolicy
from ..rules.ruleset import Rules, book_rules
from .framework import FrameworkSettings, framework_settings

DATA = Path(__file__).resolve().parents[1] / "data" / "native.json"
CHARS_PER_TOKEN = 4  # the estimate Gemini CLI's estimateTokenCountSync and the exported compactor both make
CLAUDE_RESERVE = 20_000  # Claude Code's effective window: the window less what the summary may take
CLAUDE_BUFFER = 13_000  # and its own trigger that much below the effective window (AUTOCOMPACT_BUFFER_TOKENS)


@cache
def _data() -> dict[str, Any]:
    return cast(dict[str, Any], json.loads(DATA.read_text(encoding="utf-8")))


def targets() -> tuple[str, ...]:
    """Every target a policy compiles into, in the order the page and ``compare --native`` show them."""
    return tuple(_data()["targets"])


@dataclass(frozen=True)
class NativeSetting:
    """One target's setting: ``text`` to paste (``language`` says how to read it) at ``where``;
    ``cannot``, what of the tuned policy it cannot express; ``emulation``, the policy
    (``policies.POLICIES``) that runs it here with ``params``, replayed in ``mode`` (None: there
    is nothing to run, and ``text`` is empty)."""

    target: str
    title: str
    where: str
    language: str
    text: str
    cannot: tuple[str, ...]
    emulation: str | None
    params: tuple[tuple[str, Any], ...]
    mode: str
    source: str

    def policy(self) -> Policy | None:
        """A fresh emulating policy, named for the target (``<target> (native)``) so two targets run
        by one mechanism stay two rows."""
        if self.emulation is None:
            return None
        params = dict(self.params)
        inner = (make(self.emulation, **params) if self.emulation in OURS
                 else cast(Named, THEIRS[self.emulation]).with_params(**params))
        return NamedPolicy(f"{self.target} (native)", inner)


def _reason(key: str, **values: Any) -> str:
    """A reason's words from the data file, numbers written with thousands separators."""
    shown = {name: f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else value
             for name, value in values.items()}
    return Template(_data()["reasons"][key]).substitute(shown)


def _setting(target: str, text: str, cannot: list[str], params: Mapping[str, Any] | None) -> NativeSetting:
    about = _data()["targets"][target]
    return NativeSetting(target, about["title"], about["where"], about["language"], text, tuple(cannot),
                         about["emulation"] if params is not None else None, tuple((params or {}).items()),
                         about["mode"], about["source"])


@dataclass(frozen=True)
class _Tuned:
    """What every target reads of the tuned policy, resolved once."""

    settings: PolicySettings
    rules: Rules
    found: FrameworkSettings | None  # the rules as clear-tool-uses: the tools they clear, the rest
    limit: int  # where it summarizes (its threshold when it follows it)
    window: int

    @property
    def threshold(self) -> int:
        return self.settings.compaction.threshold

    def summary_reasons(self) -> list[str]:
        """For a setting that only clears: the summarization it leaves out."""
        if not self.settings.summarize:
            return []
        return [_reason("no_summary", limit=self.limit, keep_steps=self.settings.keep_steps)]

    def condense_reasons(self, kept: str) -> list[str]:
        """For a setting that only summarizes: the rules it leaves out and the steps it does not keep."""
        reasons = [_reason("no_rules", tools=", ".join(self.found.cleared_tools))] if self.found else []
        if self.settings.summarize:
            reasons.append(_reason("summary_keeps", keep_steps=self.settings.keep_steps, kept=kept))
        else:
            reasons.append(_reason("always_summarizes", limit=self.limit))
        return reasons

    def clearing_reasons(self) -> list[str]:
        """The guards and argument rules a trimmer or masker does not have."""
        reasons = [] if self.settings.compaction.compact_errors else [_reason("errors_too")]
        arguments = sorted({f"{rule.tool}.{rule.argument}" for rule in self.rules.tool_calls if rule.enabled})
        if arguments:
            reasons.append(_reason("argument_rules", names=", ".join(arguments)))
        return reasons


def _clear_tool_uses(tuned: _Tuned) -> list[NativeSetting]:
    """Anthropic's edit and LangChain's: one mechanism, the framework export's numbers."""
    found = tuned.found
    if found is None:
        nothing = [_reason("nothing_to_clear")]
        return [_setting("anthropic", "", nothing, None), _setting("langchain", "", nothing, None)]
    cannot = [*found.lost, *tuned.summary_reasons()]
    params = {key: found.langchain[key] for key in ("trigger", "keep", "clear_at_least", "clear_tool_inputs")}
    params["exclude_tools"] = tuple(found.langchain["exclude_tools"])
    return [_setting("anthropic", found.anthropic_snippet(), cannot, params),
            _setting("langchain", found.langchain_snippet(), cannot, params)]


def _trimmer(tuned: _Tuned) -> NativeSetting:
    """ToolOutputTrimmer: the cleared tools, the smallest ``min_tokens`` as characters, no preview
    (the rules keep none of an output), and one user turn, the fewest it takes."""
    found = tuned.found
    if found is None:
        return _setting("agents-sdk", "", [_reason("nothing_to_clear")], None)
    smallest = min((rule.min_tokens for tool in found.cleared_tools if (rule := tuned.rules.for_result(tool))),
                   default=0)
    chars = max(1, CHARS_PER_TOKEN * smallest)
    params = {"recent_turns": 1, "max_output_chars": chars, "preview_chars": 0,
              "trimmable_tools": tuple(sorted(found.cleared_tools))}
    text = Template(_data()["targets"]["agents-sdk"]["text"]).substitute(
        {**params, "trimmable_tools": "{" + ", ".join(repr(tool) for tool in params["trimmable_tools"]) + "}"})
    cannot = [_reason("trimmer_trigger"), _reason("trimmer_turns", keep_recent=tuned.settings.compaction.keep_recent)]
    if smallest:
        cannot.append(_reason("trimmer_size", chars=chars))
    cannot += [_reason("trimmer_marker"), *tuned.clearing_reasons(), *tuned.summary_reasons()]
    return _setting("agents-sdk", text, cannot, params)


def claude_code_trigger(limit: int, window: int) -> tuple[float, int, int]:
    """``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`` for a summary at ``limit`` tokens of ``window``: the
    percentage, where Claude Code then fires (it takes the lower of the override and its own
    trigger) and its own trigger."""
    effective = max(1, window - CLAUDE_RESERVE)
    ceiling = max(0, effective - CLAUDE_BUFFER)
    percent = min(100.0, max(0.0001, math.floor(limit * 1_000_000 / effective) / 10_000))  # never above limit
    return percent, min(math.floor(effective * percent / 100), ceiling), ceiling


def _claude_code(tuned: _Tuned) -> NativeSetting:
    percent, fires, ceiling = claude_code_trigger(tuned.limit, tuned.window)
    text = Template(_data()["targets"]["claude-code"]["text"]).substitute(percent=f"{percent:g}")
    cannot = [*tuned.condense_reasons("only its summary and the turn not answered yet"), _reason("claude_microcompact")]
    if tuned.limit > ceiling:
        cannot.append(_reason("claude_cap", limit=tuned.limit, ceiling=ceiling))
    cannot += [_reason("claude_env"), _reason("own_count")]
    return _setting("claude-code", text, cannot, {"trigger": fires, "context_window": tuned.window})


def _codex(tuned: _Tuned) -> NativeSetting:
    text = Template(_data()["targets"]["codex"]["text"]).substitute(limit=tuned.limit)
    cannot = [*tuned.condense_reasons("the user messages, newest first up to 20,000 tokens, beside its summary"),
              _reason("codex_tool_limit"), _reason("own_count")]
    return _setting("codex", text, cannot, {"trigger": tuned.limit, "context_window": tuned.window})


def _gemini_compression(tuned: _Tuned) -> NativeSetting:
    fraction = round(tuned.limit / max(1, tuned.window), 4)
    text = json.dumps({"model": {"compressionThreshold": fraction}}, indent=2) + "\n"
    cannot = [*tuned.condense_reasons("the newest 30% of the history's characters"),
              _reason("window_share", window=tuned.window), _reason("own_count")]
    return _setting("gemini-compression", text, cannot, {"fraction": fraction, "context_window": tuned.window})


def newest_output_tokens(conversation: Conversation, tools: tuple[str, ...], count: int) -> int:
    """What the newest ``count`` results of ``tools`` in ``conversation`` come to, four characters a
    token: the tokens of tool output masking must protect to keep them."""
    if count <= 0:
        return 0
    results = [item for item in conversation.items if isinstance(item, ToolResult) and item.name in tools]
    return sum(len(content_text(item.content)) // CHARS_PER_TOKEN for item in results[-count:])


def _gemini_masking(tuned: _Tuned, conversation: Conversation) -> NativeSetting:
    found = tuned.found
    if found is None:
        return _setting("gemini-masking", "", [_reason("nothing_to_clear")], None)
    keep_recent = tuned.settings.compaction.keep_recent
    protect = newest_output_tokens(conversation, found.cleared_tools, keep_recent)
    masking = {"protectionThresholdTokens": protect, "minPrunableThresholdTokens": tuned.threshold,
               "protectLatestTurn": True}
    text = json.dumps({"contextManagement": {"tools": {"outputMasking": masking}}}, indent=2) + "\n"
    cannot = [_reason("masking_trigger", threshold=tuned.threshold),
              _reason("masking_keep", keep_recent=keep_recent, protect=protect)]
    left = found.langchain["exclude_tools"]
    if left:
        cannot.append(_reason("masking_tools", kept_tools=", ".join(left)))
    cannot += [_reason("masking_placeholder"), *tuned.clearing_reasons(), *tuned.summary_reasons()]
    return _setting("gemini-masking", text, cannot, {"protect_tokens": protect, "minimum": tuned.threshold})


def native_settings(conversation: Conversation, settings: PolicySettings,
                    context_window: int) -> tuple[NativeSetting, ...]:
    """The tuned policy ``settings`` (rules, threshold, keep_recent, summarization) as every target's
    setting, in ``targets()`` order. ``conversation`` gives the tools used (which are cleared, which
    left alone) and the turns' sizes; ``context_window`` is the model's, for the triggers the agents
    state as a share of it."""
    rules = settings.rules if settings.rules is not None else book_rules()
    tuned = _Tuned(settings, rules, framework_settings(conversation, rules, settings.compaction),
                   settings.options()["limit"], context_window)
    return (*_clear_tool_uses(tuned), _trimmer(tuned), _claude_code(tuned), _codex(tuned), _gemini_compression(tuned),
            _gemini_masking(tuned, conversation))
