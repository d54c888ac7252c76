"""Context policies behind one small interface: each takes a request and a meter and returns the
request to send with what it did (``PolicyResult``). Replay and compare iterate over them; the
page lists them; a new policy is one new module and one line in ``POLICIES``."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from ..conversation import Conversation
from ..errors import InputError
from .aider import AiderSummaryPolicy
from .as_it_ran import AsItRanPolicy, held
from .base import Policy, PolicyResult, unchanged
from .clear_tool_uses import ClearToolUsesPolicy
from .cline import ClineTruncationPolicy
from .condense import CondensePolicy
from .gemini_compression import GeminiCompressionPolicy
from .hybrid import HybridPolicy
from .letta import LettaSlidingWindowPolicy
from .llamaindex import LlamaIndexMemoryPolicy
from .masking import MaskingPolicy
from .named import Named
from .none import NonePolicy
from .opencode_summary import OpencodeSummaryPolicy
from .provenance import read_provenance, source_of
from .prune import PrunePolicy
from .rules import RulesPolicy
from .settings import OPTIONS, PolicySettings
from .summarize import SummarizePolicy
from .thinking import ClearThinkingPolicy
from .trimmer import ToolOutputTrimmerPolicy

OURS: dict[str, Callable[..., Policy]] = {
    policy.name: policy for policy in (NonePolicy, RulesPolicy, MaskingPolicy, ClearToolUsesPolicy,
                                       SummarizePolicy, HybridPolicy)
}
# The agents' and providers' own compaction, each with its source's parameters (data/policies.json).
THEIRS: dict[str, Callable[..., Policy]] = {
    named.name: named for named in (
        Named("anthropic-compaction", CondensePolicy),
        Named("anthropic-clear-thinking", ClearThinkingPolicy),
        Named("openai-compaction", CondensePolicy),
        Named("agents-sdk-trimmer", ToolOutputTrimmerPolicy),
        Named("claude-code-compact", CondensePolicy, takes=("context_window",)),
        Named("claude-code-microcompact", ClearToolUsesPolicy),
        Named("codex-compact", CondensePolicy, takes=("context_window",)),
        Named("langchain-summarization", CondensePolicy),
        Named("openhands-masking", MaskingPolicy),
        Named("openhands-condenser", CondensePolicy),
        Named("swe-agent-last-n", MaskingPolicy),
        Named("gemini-tool-output-masking", PrunePolicy),
        Named("gemini-chat-compression", GeminiCompressionPolicy, takes=("context_window",)),
        Named("opencode-prune", PrunePolicy),
        Named("cline-truncation", ClineTruncationPolicy, takes=("context_window",)),
        Named("aider-summary", AiderSummaryPolicy, takes=("context_window",)),
        Named("llamaindex-memory", LlamaIndexMemoryPolicy),
        Named("anthropic-compaction-on-demand", CondensePolicy),
        Named("letta-sliding-window", LettaSlidingWindowPolicy, takes=("context_window",)),
        Named("adk-token-compaction", CondensePolicy),
        Named("roo-code-condense", CondensePolicy, takes=("context_window",)),
        Named("opencode-summary", OpencodeSummaryPolicy, takes=("context_window",)),
    )
}
# What the agent itself did, read from its log's own compactions (a row only where the log has them).
LOGGED: dict[str, Callable[..., Policy]] = {AsItRanPolicy.name: AsItRanPolicy}
POLICIES: dict[str, Callable[..., Policy]] = {**OURS, **THEIRS, **LOGGED}


def offered(names: Iterable[str], conversation: Conversation) -> tuple[str, ...]:
    """``names`` as a comparison runs them on ``conversation``: the run as it ran only where the log
    shows the agent compacting (elsewhere it is ``none`` call by call, a row that says nothing new)."""
    return tuple(name for name in names if name not in LOGGED or conversation.compactions)


def make(name: str, settings: PolicySettings | None = None, **options: Any) -> Policy:
    """The policy ``name`` built from ``settings`` (with ``options`` over them, by their flat names),
    of which it takes those it has: the rest are another policy's, so one settings value builds
    every policy. A name no policy takes is refused, never dropped: a setting that silently
    missed its policy is how the error switches once never reached Run, Compare or Corpus."""
    factory = POLICIES.get(name)
    if factory is None:
        raise InputError(f"unknown strategy (choose {', '.join(POLICIES)})", where="strategy", value=name)
    unknown = sorted(set(options) - OPTIONS)
    if unknown:
        raise InputError(f"the strategy {name} takes no option {unknown[0]!r}, nor does any other (the options: "
                         f"{', '.join(sorted(OPTIONS))})", where="option", value=unknown[0])
    given = {**(settings.options() if settings is not None else {}), **options}
    return factory(**{key: value for key, value in given.items() if key in takes(name) and value is not None})


def takes(name: str) -> frozenset[str]:
    """The options (``OPTIONS``) the policy ``name`` is built from."""
    factory = POLICIES[name]
    accepted = (set(factory.takes) if isinstance(factory, Named)
                else {f.name for f in dataclasses.fields(factory)})  # type: ignore[arg-type]
    return frozenset(accepted & OPTIONS)


__all__ = ["LOGGED", "OPTIONS", "OURS", "POLICIES", "THEIRS", "AsItRanPolicy", "ClearToolUsesPolicy", "HybridPolicy",
           "MaskingPolicy", "NonePolicy", "Policy", "PolicyResult", "PolicySettings", "RulesPolicy", "SummarizePolicy",
           "held", "make", "offered", "read_provenance", "source_of", "takes", "unchanged"]
