"""The policy options every run command takes (replay, compare, probe, evaluate, tune): where the
rules come from, the rules' pass, each policy's own settings, and the one ``PolicySettings``
they make (tests/test_policy_settings.py fails if a flag is lost on its way to a policy)."""

from __future__ import annotations

import argparse

from ..compaction import DEFAULT_THRESHOLD, Settings
from ..policies import POLICIES, PolicySettings
from ..run.promptcache import CACHE_MODELS
from ..run.replay import BASELINES, MODES
from ..summarize.history import DEFAULT_KEEP_STEPS
from ..tune.rulesets import RULESETS
from .arguments import number, tokens

PRESETS = [key for key in RULESETS if key != "none"]  # (no rules at all is the none policy)
KEEP_RECENT_HELP = ("leave the newest N tool uses the model has read (call and result, with an assistant turn after "
                    "the result) as they are; tool uses it has not read yet are left anyway, so each step keeps one "
                    "more")
COMPACT_ERRORS_HELP = "let the rules replace error results too (default: an error result stays as it is)"
NO_ERROR_PATTERNS_HELP = ("recognise error results only by the format's own error flag, not also by the rules' "
                          "error_patterns")


def add_error_arguments(p: argparse.ArgumentParser, prefix: str) -> None:
    p.add_argument("--compact-errors", action="store_true", help=f"{prefix}{COMPACT_ERRORS_HELP}")
    p.add_argument("--no-error-patterns", action="store_true", help=f"{prefix}{NO_ERROR_PATTERNS_HELP}")


def compaction_settings(args: argparse.Namespace) -> Settings:
    """The rules' pass as the command line sets it: threshold, keep_recent and the error switches."""
    return Settings(threshold=args.threshold, keep_recent=args.keep_recent, compact_errors=args.compact_errors,
                    detect_errors=not args.no_error_patterns)


def add_policy_choice(p: argparse.ArgumentParser, verb: str) -> None:
    """``--policy`` (``--strategy``, its older name, still works): the one policy to ``verb``."""
    p.add_argument("--policy", "--strategy", dest="policy", choices=list(POLICIES), default="rules", metavar="POLICY",
                   help=f"the policy to {verb}: %(choices)s (default: rules, the book's optimizer)")


def add_policy_arguments(p: argparse.ArgumentParser) -> None:
    """Every policy's options, and the model, prices, cache and mode the run is replayed with."""
    source = p.add_mutually_exclusive_group()
    source.add_argument("--rules", help="rules JSON file for the rules policy (default: the book's)")
    source.add_argument("--preset", choices=PRESETS, help="named rules for the rules policy")
    p.add_argument("--threshold", type=tokens, default=DEFAULT_THRESHOLD,
                   help=f"rules: compact at or above this many prompt tokens; summarize and hybrid: summarize at "
                        f"or above it (default {DEFAULT_THRESHOLD})")
    p.add_argument("--keep-recent", type=number, default=0, help=f"rules: {KEEP_RECENT_HELP}")
    add_error_arguments(p, "rules: ")
    p.add_argument("--no-summarize", action="store_true",
                   help="rules: compaction only, never summarize when still over the threshold")
    p.add_argument("--keep-steps", type=number, default=DEFAULT_KEEP_STEPS,
                   help=f"summarize, hybrid, rules: newest steps kept verbatim (default {DEFAULT_KEEP_STEPS})")
    p.add_argument("--window", type=number, default=10,
                   help="masking, hybrid: tool outputs kept in full, newest first (default 10)")
    p.add_argument("--trigger", type=tokens, default=100_000,
                   help="clear-tool-uses: clear once the prompt exceeds this many tokens (default 100000)")
    p.add_argument("--keep", type=number, default=3,
                   help="clear-tool-uses: newest tool uses kept (default 3)")
    p.add_argument("--clear-at-least", type=tokens, default=0,
                   help="clear-tool-uses: clear nothing unless at least this many tokens go (default 0)")
    p.add_argument("--exclude-tools", help="clear-tool-uses: comma-separated tool names never cleared")
    p.add_argument("--clear-inputs", action="store_true", help="clear-tool-uses: clear the calls' arguments too")
    p.add_argument("--model", help="model whose accounting and prices to use (default: the request's own)")
    p.add_argument("--summarizer-model",
                   help="model whose prices the summarization calls are billed at (default: --model's)")
    p.add_argument("--prices", metavar="FILE",
                   help='your own prices, JSON {"as_of": …, "models": {name: {provider, context_window, input, '
                        'cached_input, cache_write, output, min_cacheable, source}}}, US$ per million tokens: they '
                        "come first, the genai-prices catalogue prices the models they do not list")
    p.add_argument("--cache", choices=CACHE_MODELS,
                   help="prompt-cache model (default: the model's provider's; another provider's is refused, "
                        "none always fits)")
    p.add_argument("--mode", choices=MODES, default="stored",
                   help="stored: edits kept in the agent's history (the book); per-call: re-applied to a copy "
                        "for each request (LangChain middleware)")
    p.add_argument("--baseline", choices=BASELINES, default="auto",
                   help="what the run without a policy sends: as-it-ran, what the agent really sent where its log "
                        "shows (or its bills imply) it cutting its own context; full-history, everything the log "
                        "holds; auto (default): as-it-ran where the agent cut, else the full history")


def policy_settings(args: argparse.Namespace) -> PolicySettings:
    """Every policy's settings from ``add_policy_arguments``' flags, the rules aside (the caller
    reads them: a single run as ``Rules``, a corpus as JSON its workers can take)."""
    return PolicySettings(label=args.rules or "book", compaction=compaction_settings(args),
                          summarize=not args.no_summarize, keep_steps=args.keep_steps, window=args.window,
                          trigger=args.trigger, keep=args.keep, clear_at_least=args.clear_at_least,
                          exclude_tools=tuple(name for name in (args.exclude_tools or "").split(",") if name),
                          clear_tool_inputs=args.clear_inputs)
