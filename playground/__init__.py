"""Compaction Playground: count, compact and summarize LLM agent conversations.

The folders are the pipeline's stages, in the order data flows through them: ``formats`` (read
and write every API format and agent log) → ``conversation`` (the one model they read into) →
``meter`` (count, as the provider bills) → ``rules`` → ``compaction`` (one pass behind the
threshold) → ``summarize`` (the last resort) → ``engine`` (the whole optimizer, and the object
that owns the caches) → ``policies`` (ours and the agents' own, behind one interface) → ``run``
(replay a whole run with the prompt cache and prices) → ``present`` and ``export``. ``workbench``
and ``ui`` are the page, ``cli`` the command line. The names below are the public API::

    import playground as pg

    conversation = pg.load("run.json")  # any API format or agent log
    result = pg.Engine().compact(conversation, pg.book_rules(), pg.Settings(threshold=20_000))
    print(result.report.tokens_before, "→", result.report.tokens_after)
"""

from __future__ import annotations

from pathlib import Path

from . import formats
from .agent import compacting, load_policy
from .agent.seed_hook import seed_hook
from .compaction import Compaction, DecisionCache, Settings, compact
from .conversation import Conversation, Message, ToolCall, ToolResult
from .engine import Engine, Optimized, optimize
from .errors import InputError
from .formats import dumps, loads
from .meter import Calibration, Meter, TokenCount, count
from .policies import POLICIES, Policy, PolicySettings, make
from .recall import RecallStore, recall_key
from .rules import Rules, Template, book_rules, load_rules, rules_to_json
from .run import Replay, compare, read_prices, replay
from .summarize import OfflineSummarizer, SummarySettings
from .tune import RULESETS, RuleSet, ruleset, suggest_rules
from .workbench.presets import load_preset


def load(path: str | Path, format: str | None = None) -> Conversation:
    """Read a conversation from a file or a task folder in any format the playground knows (detected
    unless ``format`` names it), as the command line, the page's upload and a corpus read it."""
    return formats.read_path(path, format)


__all__ = [
    "POLICIES", "RULESETS", "Calibration", "Compaction", "Conversation", "DecisionCache", "Engine", "InputError",
    "Message", "Meter", "OfflineSummarizer", "Optimized", "Policy", "PolicySettings", "RecallStore", "Replay",
    "RuleSet", "Rules", "Settings", "SummarySettings", "Template", "TokenCount", "ToolCall", "ToolResult",
    "book_rules", "compact", "compacting", "compare", "count", "dumps", "formats", "load", "load_policy",
    "load_preset", "load_rules", "loads", "make", "optimize", "read_prices", "recall_key", "replay",
    "rules_to_json", "ruleset", "seed_hook", "suggest_rules",
]
