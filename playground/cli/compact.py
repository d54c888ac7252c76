"""``compact``: one request compacted behind the threshold by the rules (a file's, the book's or a
preset's), its oldest history summarized if it is still too large; the request out, the report
beside it. A log has no request of its own to give back, so a sendable one is written."""

from __future__ import annotations

import argparse
from typing import Any

from .. import formats, limits
from ..compaction import DEFAULT_THRESHOLD
from ..errors import InputError
from ..export import exports
from ..present.report import optimized_to_json
from ..summarize.history import DEFAULT_KEEP_STEPS, SummarySettings, check_limit
from ..summarize.offline import OfflineSummarizer
from ..tune.rulesets import RULESETS
from ..tune.suggest import no_match_message, unmatched_message
from . import accounting
from .arguments import (
    CALIBRATION_HELP,
    FILE_HELP,
    FORMAT_HELP,
    MODEL_HELP,
    TO_HELP,
    add_input_limit,
    number,
    seconds,
    tokens,
)
from .inputs import load_conversation, load_rules
from .keys import api_key
from .output import dump, say_unmatched, write
from .policy_flags import KEEP_RECENT_HELP, PRESETS, add_error_arguments, compaction_settings


def add_parser(commands: Any) -> None:
    p = commands.add_parser("compact", help="compact a conversation behind a token threshold")
    p.add_argument("file", help=FILE_HELP)
    chosen = p.add_mutually_exclusive_group()
    chosen.add_argument("--rules", help="rules JSON file (replaces the book's rules as a whole)")
    chosen.add_argument("--preset", choices=PRESETS,
                        help="a rule preset instead of a rules file; suggested = built for this conversation's tools")
    p.add_argument("--threshold", type=tokens, default=DEFAULT_THRESHOLD,
                   help=f"compact only at or above this many prompt tokens (default {DEFAULT_THRESHOLD})")
    p.add_argument("--keep-recent", type=number, default=0,
                   help=KEEP_RECENT_HELP)
    add_error_arguments(p, "")
    p.add_argument("--model", help=MODEL_HELP)
    p.add_argument("--format", choices=list(formats.READERS), help=FORMAT_HELP)
    p.add_argument("--to", choices=list(formats.FORMATS), help=TO_HELP)
    p.add_argument("--request", action="store_true",
                   help="write a request the provider accepts as it is (always, for an agent log): a model, "
                        "max_tokens for Anthropic, items it cannot take back dropped; the report's notes list changes")
    p.add_argument("--report", help="write the report (JSON) to this file")
    p.add_argument("-o", "--output", help="write the compacted conversation here (default: stdout)")
    p.add_argument("--calibration", help=CALIBRATION_HELP)
    group = p.add_argument_group("summarization (when the compacted request is still too large)")
    group.add_argument("--summarize-over", type=tokens,
                       help="summarize older history if the compacted request has at least this many tokens "
                            "(default: the threshold; never below it)")
    group.add_argument("--keep-steps", type=number, default=DEFAULT_KEEP_STEPS,
                       help=f"newest assistant turns (with their tool results) kept verbatim (default "
                            f"{DEFAULT_KEEP_STEPS}); 0 keeps none, but never summarizes what follows the last "
                            "assistant turn: the model has not read it yet")
    group.add_argument("--summarizer", choices=("offline", "openai"), default="offline",
                       help="offline: extractive, no LLM (default); openai: any OpenAI-compatible endpoint, key "
                            "from OPENAI_API_KEY (sent only to api.openai.com and hosts in PLAYGROUND_KEY_HOSTS)")
    group.add_argument("--llm-model", help="model for --summarizer openai")
    group.add_argument("--base-url", help="endpoint for --summarizer openai (default: api.openai.com), e.g. "
                                          "http://localhost:11434/v1 for Ollama")
    group.add_argument("--timeout", type=seconds, default=60.0,
                       help=f"seconds the whole exchange with the endpoint may take, retries and every read "
                            f"included: more than 0, at most {limits.MAX_TIMEOUT:g} (default 60)")
    group.add_argument("--no-summarize", action="store_true", help="compaction only, never summarize")
    add_input_limit(p)
    p.set_defaults(run=run)


def summarizer(args: argparse.Namespace):
    """The summarizer ``--summarizer`` names. (The endpoint's client is imported here: ``openai``
    takes seconds to import, and every other run would pay for it.)"""
    if args.summarizer == "offline":
        return OfflineSummarizer()
    if not args.llm_model:
        raise InputError("--summarizer openai needs --llm-model (the model the endpoint serves)")
    from ..llm.endpoint import Endpoint
    from ..summarize.online import OpenAISummarizer

    return OpenAISummarizer(Endpoint(model=args.llm_model, base_url=args.base_url, api_key=api_key(args.base_url),
                                     timeout=args.timeout))


def run(args: argparse.Namespace) -> int:
    conversation = load_conversation(args.file, args.max_input_mb, args.format, args.to)
    rules = RULESETS[args.preset].make(conversation) if args.preset else load_rules(args.rules, args.max_input_mb)
    settings = compaction_settings(args)
    if args.summarize_over is not None and not args.no_summarize:
        check_limit(args.summarize_over, args.threshold, where="--summarize-over")
    summary = None if args.no_summarize else SummarySettings(
        limit=args.threshold if args.summarize_over is None else args.summarize_over, keep_steps=args.keep_steps)
    model = accounting.model(args.model, conversation)
    result = accounting.engine(args.calibration, args.max_input_mb, model).optimize(
        conversation, rules, settings, summary, summarizer(args) if summary else None, model)
    report = result.compaction.report
    say_unmatched(no_match_message(conversation, report, rules)
                  or unmatched_message(conversation, report.before, rules), args.preset)
    if args.request or conversation.source:  # a log has no request of its own to give back: write a sendable one
        body, export_notes = exports.request_body(result.conversation)
    else:
        body, export_notes = formats.write(result.conversation), ()
    output = dump(body)
    notes = {"notes": [*formats.notes(conversation), *export_notes]}
    written = dump(optimized_to_json(result, summary.limit if summary else None) | notes) if args.report else None
    write(output, args.output)
    if written is not None:
        write(written, args.report)
    failed = result.summarization is not None and result.summarization.report.status == "failed"
    if failed:
        raise InputError(f"summarization failed, the request is as compaction left it: "
                         f"{result.summarization.report.error}")
    return 0
