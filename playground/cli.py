"""The command line: ``python -m playground count|compact|rules|accuracy|replay|compare|probe|evaluate|tune``.

Bad input of any kind exits with status 2 and one line on stderr naming what is wrong and
where; nothing is ever written half-way. Set PLAYGROUND_DEBUG=1 to see tracebacks of bugs.
"""

from __future__ import annotations

import argparse
import functools
import heapq
import json
import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn, TextIO

from . import formats, limits, probe
from .compaction import DEFAULT_THRESHOLD, Settings
from .corpus import executors, finder
from .corpus.evaluate import ALL, named_strategies, partition, problems_to_json
from .engine import Engine
from .errors import InputError
from .export import exports
from .meter.tokens import Meter
from .policies import OURS, POLICIES
from .policies.provenance import source_of
from .present.report import count_to_json, optimized_to_json
from .rules.ruleset import book_rules, load_rules, rules_to_json, rules_to_python
from .summarize.history import DEFAULT_KEEP_STEPS, SummarySettings, check_limit
from .summarize.offline import OfflineSummarizer
from .tune.checked import checked_rules
from .tune.rulesets import RULESETS
from .tune.suggest import no_match_message, unmatched_message
from .words import plural

PROG = "python -m playground"
KEEP_RECENT_HELP = ("leave the newest N tool uses the model has read (call and result, with an assistant turn after "
                    "the result) as they are; tool uses it has not read yet are left anyway, so each step keeps one "
                    "more")
COMPACT_ERRORS_HELP = "let the rules replace error results too (default: an error result stays as it is)"
NO_ERROR_PATTERNS_HELP = ("recognise error results only by the format's own error flag, not also by the rules' "
                          "error_patterns")
FILE_HELP = ("conversation JSON file or agent log (JSONL, .traj, .json, .md, .db, a task folder or a .zip of one), "
             "or - for stdin")
DEFAULT_FIXTURES = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures" / "token-counts"


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line, like every other error here."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{PROG}: error: {message} (see --help)\n")


def _read_bytes(path: str, limit_mb: int) -> bytes:
    """The file's bytes (``-``: stdin), never more than the input limit: a larger file is refused
    from its size, before reading, and a stream (a pipe, ``/dev/zero``) once it passes the limit."""
    if path == "-":
        return limits.read_limited(sys.stdin.buffer, limit_mb)
    try:
        with open(path, "rb") as stream:
            size = os.fstat(stream.fileno()).st_size if Path(path).is_file() else None
            return limits.read_limited(stream, limit_mb, size)
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror or exc})") from None


def _load_json(path: str, limit_mb: int) -> Any:
    try:
        return formats.parse_json(_read_bytes(path, limit_mb))
    except InputError as exc:
        raise exc.within("stdin" if path == "-" else path) from None


def _load_conversation(path: str, limit_mb: int, format: str | None = None,
                       to: str | None = None) -> formats.Conversation:
    """A conversation from JSON or JSONL, or an agent's log in any form ``formats`` reads (a task
    folder, a zip of one, an SQLite database, a markdown history), converted to ``to`` when asked
    (the conversion's losses are in its notes)."""
    where = "stdin" if path == "-" else path
    try:
        conversation = (formats.loads(_read_bytes(path, limit_mb), format, limit_mb=limit_mb) if path == "-"
                        else formats.read_path(path, format, limit_mb=limit_mb))
    except InputError as exc:
        raise exc.within(where) from None
    return formats.convert(conversation, to) if to else conversation


def _load_rules(path: str | None, limit_mb: int):
    if path is None:
        return book_rules()
    try:
        return load_rules(_load_json(path, limit_mb))
    except InputError as exc:
        raise exc if exc.where and exc.where.startswith(path) else exc.within(path) from None


def _write(text: str, path: str | None) -> None:
    """``text`` to stdout or a file; a lone surrogate from the input is written as its JSON escape,
    which reads back as the same string (UTF-8 cannot carry it as it is)."""
    text = formats.keep_surrogates(text)
    if path is None or path == "-":
        sys.stdout.write(text)
        return
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write the file ({exc.strerror or exc})", where=path) from None


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def _whole(high: int, low: int = 0) -> Any:
    """An argparse type: a whole number from ``low`` to ``high`` (the limits files are held to)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        try:
            return limits.whole(value, "", high=high, low=low)
        except InputError:
            raise argparse.ArgumentTypeError(f"expected a whole number from {low:,} to {high:,}, got {value}") from None

    return parse


_tokens, _count = _whole(limits.MAX_TOKENS), _whole(limits.MAX_COUNT)


def _input_limit(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-input-mb", type=_whole(10**6, low=1), metavar="MB",
                   help=f"refuse input files larger than this (default {limits.DEFAULT_MAX_INPUT_MB}, or "
                        f"{limits.MAX_INPUT_ENV})")


def _seconds(text: str) -> float:
    try:
        return limits.seconds(float(text))
    except ValueError as exc:  # not a number, or an InputError: out of range
        said = exc.message if isinstance(exc, InputError) else "expected a number of seconds"
        raise argparse.ArgumentTypeError(f"{said}, got {text!r}") from None


def _engine(args: argparse.Namespace, model: str) -> Engine:
    """An engine for this run, holding the ``--calibration`` file's factors when one is given (it
    must have ``model``'s)."""
    engine = Engine()
    if args.calibration:
        from .meter.calibration import load_calibrations

        try:
            engine.calibrations = load_calibrations(_load_json(args.calibration, args.max_input_mb))
        except InputError as error:
            raise error.within(args.calibration) from None
        if model not in engine.calibrations:
            raise InputError(f"no calibration for model {model!r} (the file has: "
                             f"{', '.join(sorted(engine.calibrations))})", where=args.calibration)
    return engine


def cmd_count(args: argparse.Namespace) -> int:
    conversation = _load_conversation(args.file, args.max_input_mb, args.format, args.to)
    model = _model(args, conversation)
    result = _engine(args, model).count(conversation, model)
    if args.json:
        price = _prices(args).dated(conversation.started).get(model, conversation.format)
        data = count_to_json(result, conversation) | {"priced_as": price.priced_as}
        if not result.exact and conversation.billed and args.calibration is None:  # the log's own fit comes first
            data["estimate_because"] = [_BILLS_FIRST.format(plural(len(conversation.billed), "call")),
                                        *data["estimate_because"]]
    _write(_dump(data) if args.json else f"{result.total}\n", None)
    return 0


_BILLS_FIRST = ("this log records what the provider billed for {}: `replay --json` fits the count to those bills "
                "(log_calibration, which --calibration reads), nearer than any vocabulary shipped here")


def _summarizer(args: argparse.Namespace):
    if args.summarizer == "offline":
        return OfflineSummarizer()
    if not args.llm_model:
        raise InputError("--summarizer openai needs --llm-model (the model the endpoint serves)")
    from .llm.endpoint import Endpoint
    from .summarize.online import OpenAISummarizer

    return OpenAISummarizer(Endpoint(model=args.llm_model, base_url=args.base_url, api_key=api_key(args.base_url),
                                     timeout=args.timeout))


def api_key(base_url: str | None, provider: str = "openai") -> str | None:
    """The key for ``base_url`` from the environment, by the one rule in ``keys``; a key the rule
    withholds from this host is an error that says how to allow it (never what the key is)."""
    from .llm import keys

    choice = keys.resolve_key(base_url, None, os.environ, {}, provider)
    if choice.source == keys.WITHHELD:
        name, own = keys.PROVIDER_KEYS[provider]
        raise InputError(f"{name} is sent only to {own} and the hosts listed in "
                         f"{keys.HOSTS_NAME}; to send it to {choice.host or 'this URL'}, set "
                         f"{keys.HOSTS_NAME}={choice.host or '<host>'} (or unset {name} for a server that "
                         "needs no key)", where="--base-url")
    return choice.key


def _model(args: argparse.Namespace, conversation: formats.Conversation) -> str:
    """The model to count and price with: ``--model``, else the conversation's (``counted_as``:
    its own, else its API format's default, said on stderr)."""
    if args.model or conversation.model:
        return args.model or conversation.model
    from .run.prices import counted_as, read_prices

    model = counted_as(conversation, read_prices())
    print(f"{PROG}: note: the conversation names no model: counted and priced as {model}, the default for "
          f"{formats.TITLES[conversation.format]}. Give --model to choose another.", file=sys.stderr)
    return model


def _say(notice: str | None, preset: str | None) -> None:
    """A note on stderr (the output stays clean): what the rules did not do, and what to try."""
    if notice is None:
        return
    hint = "" if preset == "suggested" else (" Try --preset suggested: rules built for this conversation's tools "
                                             f"({PROG} rules --suggest FILE shows them and why).")
    print(f"{PROG}: note: {notice}{hint}", file=sys.stderr)


def cmd_compact(args: argparse.Namespace) -> int:
    conversation = _load_conversation(args.file, args.max_input_mb, args.format, args.to)
    rules = RULESETS[args.preset].make(conversation) if args.preset else _load_rules(args.rules, args.max_input_mb)
    settings = _compaction_settings(args)
    if args.summarize_over is not None and not args.no_summarize:
        check_limit(args.summarize_over, args.threshold, where="--summarize-over")
    summary = None if args.no_summarize else SummarySettings(
        limit=args.threshold if args.summarize_over is None else args.summarize_over, keep_steps=args.keep_steps)
    model = _model(args, conversation)
    result = _engine(args, model).optimize(conversation, rules, settings, summary,
                                           _summarizer(args) if summary else None, model)
    report = result.compaction.report
    _say(no_match_message(conversation, report, rules) or unmatched_message(conversation, report.before, rules),
         args.preset)
    if args.request or conversation.source:  # a log has no request of its own to give back: write a sendable one
        body, export_notes = exports.request_body(result.conversation)
    else:
        body, export_notes = formats.write(result.conversation), ()
    output = _dump(body)
    notes = {"notes": [*formats.notes(conversation), *export_notes]}
    written = _dump(optimized_to_json(result, summary.limit if summary else None) | notes) if args.report else None
    _write(output, args.output)
    if written is not None:
        _write(written, args.report)
    failed = result.summarization is not None and result.summarization.report.status == "failed"
    if failed:
        raise InputError(f"summarization failed, the request is as compaction left it: "
                         f"{result.summarization.report.error}")
    return 0


def cmd_rules(args: argparse.Namespace) -> int:
    if args.suggest:  # the rules JSON on stdout, one explanation per row on stderr
        conversation = _load_conversation(args.suggest, args.max_input_mb)
        suggestion = checked_rules(conversation, Meter(_model(args, conversation)))
        print(suggestion.explain(), file=sys.stderr)
        _write(_dump(suggestion.rules_json()), None)
        return 0
    rules = _load_rules(args.file, args.max_input_mb)
    _write(rules_to_python(rules) if args.python else _dump(rules_to_json(rules)), None)
    return 0


def cmd_accuracy(args: argparse.Namespace) -> int:
    from .refit import accuracy

    folder = Path(args.fixtures)
    if not folder.is_dir():
        raise InputError("fixture folder not found (pass --fixtures DIR)", where=str(folder))
    cases = accuracy.measure(folder)
    providers = [m for m in (accuracy.measure_provider(folder, f) for f in accuracy.PROVIDER_FILES) if m]
    if args.json:
        _write(_dump([case.__dict__ | {"error": case.error} for case in cases]
                     + [case.__dict__ | {"error": case.error, "loo_error": case.loo_error}
                        for measured in providers for case in measured.cases]), None)
    else:
        _write(accuracy.render(cases, providers) + "\n", None)
    return 0


def parser() -> argparse.ArgumentParser:
    top = _Parser(prog=PROG, description="Count and compact LLM agent conversations (see README.md).")
    commands = top.add_subparsers(dest="command", required=True, parser_class=_Parser)
    format_help = f"input format (default: detected): {', '.join(formats.READERS)}"
    to_help = "convert to this API format first (what the conversion loses is listed in the notes)"

    p = commands.add_parser("count", help="print the prompt-token total")
    p.add_argument("file", help=FILE_HELP)
    p.add_argument("--model", help="model whose accounting to use (default: the request's own)")
    p.add_argument("--format", choices=list(formats.READERS), help=format_help)
    p.add_argument("--to", choices=list(formats.FORMATS), help=to_help)
    p.add_argument("--json", action="store_true", help="print the total, encoding, exactness and per-item counts")
    p.add_argument("--calibration", help="JSON file: a list of {request, usage} pairs (usage as the provider "
                                         "returned it) or {model: factor}; corrects counts for that model")
    _input_limit(p)
    p.set_defaults(run=cmd_count)

    p = commands.add_parser("compact", help="compact a conversation behind a token threshold")
    p.add_argument("file", help=FILE_HELP)
    chosen = p.add_mutually_exclusive_group()
    chosen.add_argument("--rules", help="rules JSON file (replaces the book's rules as a whole)")
    chosen.add_argument("--preset", choices=[key for key in RULESETS if key != "none"],
                        help="a rule preset instead of a rules file; suggested = built for this conversation's tools")
    p.add_argument("--threshold", type=_tokens, default=DEFAULT_THRESHOLD,
                   help=f"compact only at or above this many prompt tokens (default {DEFAULT_THRESHOLD})")
    p.add_argument("--keep-recent", type=_count, default=0,
                   help=KEEP_RECENT_HELP)
    _error_arguments(p, "")
    p.add_argument("--model", help="model whose accounting to use (default: the request's own)")
    p.add_argument("--format", choices=list(formats.READERS), help=format_help)
    p.add_argument("--to", choices=list(formats.FORMATS), help=to_help)
    p.add_argument("--request", action="store_true",
                   help="write a request the provider accepts as it is (always, for an agent log): a model, "
                        "max_tokens for Anthropic, items it cannot take back dropped; the report's notes list changes")
    p.add_argument("--report", help="write the report (JSON) to this file")
    p.add_argument("-o", "--output", help="write the compacted conversation here (default: stdout)")
    p.add_argument("--calibration", help="JSON file: a list of {request, usage} pairs (usage as the provider "
                                         "returned it) or {model: factor}; corrects counts for that model")
    group = p.add_argument_group("summarization (when the compacted request is still too large)")
    group.add_argument("--summarize-over", type=_tokens,
                       help="summarize older history if the compacted request has at least this many tokens "
                            "(default: the threshold; never below it)")
    group.add_argument("--keep-steps", type=_count, default=DEFAULT_KEEP_STEPS,
                       help=f"newest assistant turns (with their tool results) kept verbatim (default "
                            f"{DEFAULT_KEEP_STEPS}); 0 keeps none, but never summarizes what follows the last "
                            "assistant turn: the model has not read it yet")
    group.add_argument("--summarizer", choices=("offline", "openai"), default="offline",
                       help="offline: extractive, no LLM (default); openai: any OpenAI-compatible endpoint, key "
                            "from OPENAI_API_KEY (sent only to api.openai.com and hosts in PLAYGROUND_KEY_HOSTS)")
    group.add_argument("--llm-model", help="model for --summarizer openai")
    group.add_argument("--base-url", help="endpoint for --summarizer openai (default: api.openai.com), e.g. "
                                          "http://localhost:11434/v1 for Ollama")
    group.add_argument("--timeout", type=_seconds, default=60.0,
                       help=f"seconds the whole exchange with the endpoint may take, retries and every read "
                            f"included: more than 0, at most {limits.MAX_TIMEOUT:g} (default 60)")
    group.add_argument("--no-summarize", action="store_true", help="compaction only, never summarize")
    _input_limit(p)
    p.set_defaults(run=cmd_compact)

    p = commands.add_parser("rules", help="check a rules file; print it as JSON or as the book's Python dicts")
    p.add_argument("file", nargs="?", help="rules JSON file (default: the book's rules)")
    p.add_argument("--python", action="store_true", help="print the book's two Python dicts")
    p.add_argument("--suggest", metavar="CONVERSATION",
                   help="print rules suggested for this conversation's tools (JSON; why each row, on stderr)")
    p.add_argument("--model", help="with --suggest: model whose tokenizer sizes the tools (default: the request's)")
    _input_limit(p)
    p.set_defaults(run=cmd_rules)

    p = commands.add_parser("accuracy", help="compare our counts with billed counts in the fixtures")
    p.add_argument("--fixtures", default=str(DEFAULT_FIXTURES), help="folder of token-count fixture files")
    p.add_argument("--json", action="store_true", help="print every case as JSON")
    p.set_defaults(run=cmd_accuracy)
    _add_run_commands(commands)
    return top


# ---------------------------------------------------------------------------------------------
# replay and compare: a whole run, call by call, under one policy or each of them.


def _run_setup(args: argparse.Namespace):
    """The conversation, the engine's meter (with ``--calibration``'s factor) and the prices every
    run command needs."""
    from .run.inferred import infer
    from .run.promptcache import check_cache
    from .run.replay import call_starts

    conversation = _load_conversation(args.file, args.max_input_mb, args.format)
    if not call_starts(conversation.items):
        print(f"{PROG}: note: {args.file} holds no model call (no reply of the assistant): there is nothing to "
              "replay", file=sys.stderr)
    model = _model(args, conversation)
    meter = _engine(args, model).meter(model)
    price = _prices(args).dated(conversation.started).get(model, conversation.format)
    _say_price(price)
    conversation = infer(conversation, price)  # the agent's own cuts its bills show, where its log says nothing
    cache = args.cache or price.cache
    check_cache(cache, price.cache, price.model, where="--cache")
    return conversation, meter, price, cache


def _prices(args: argparse.Namespace):
    """The price table: ``--prices FILE`` over the catalogue, else the catalogue."""
    from .run.prices import load_prices, read_prices

    path = getattr(args, "prices", None)
    return load_prices(_load_json(path, args.max_input_mb), path) if path else read_prices()


def _say_price(price) -> None:
    """On stderr: a model whose price nobody lists (its costs are unknown, never another model's)."""
    if not price.known:
        print(f"{PROG}: note: {price.source}: tokens are counted, costs are unknown (null in --json). Price it "
              "with a prices file of your own, or --model a model the catalogue lists.", file=sys.stderr)


def _summarizer_price(args: argparse.Namespace, price):
    """The prices summaries are billed at: ``--summarizer-model``'s row, else the run's own model's."""
    return _prices(args).get(args.summarizer_model) if args.summarizer_model else price


def _compaction_settings(args: argparse.Namespace) -> Settings:
    """The rules' pass as the command line sets it: threshold, keep_recent and the error switches."""
    return Settings(threshold=args.threshold, keep_recent=args.keep_recent, compact_errors=args.compact_errors,
                    detect_errors=not args.no_error_patterns)


def _error_arguments(p: argparse.ArgumentParser, prefix: str) -> None:
    p.add_argument("--compact-errors", action="store_true", help=f"{prefix}{COMPACT_ERRORS_HELP}")
    p.add_argument("--no-error-patterns", action="store_true", help=f"{prefix}{NO_ERROR_PATTERNS_HELP}")


def _policy_options(args: argparse.Namespace, conversation: formats.Conversation,
                    context_window: int | None = None):
    """Every strategy's settings from one command line (each policy takes the ones it has)."""
    from dataclasses import replace

    return replace(policy_setup(args).options(conversation), context_window=context_window)


def policy_setup(args: argparse.Namespace, strategies: tuple[str, ...] = ()):
    """The run commands' policy options as an ``evaluate.Setup``: plain values a worker can take
    (a rules file is read and checked here, once, and travels as its JSON)."""
    from .corpus.evaluate import Setup
    from .policies import PolicySettings

    rules = None
    if args.rules and not args.preset:
        _load_rules(args.rules, args.max_input_mb)  # bad rules fail here, with the file's name
        rules = _load_json(args.rules, args.max_input_mb)
    policy = PolicySettings(label=args.rules or "book", compaction=_compaction_settings(args),
                            summarize=not args.no_summarize, keep_steps=args.keep_steps, window=args.window,
                            trigger=args.trigger, keep=args.keep, clear_at_least=args.clear_at_least,
                            exclude_tools=tuple(name for name in (args.exclude_tools or "").split(",") if name),
                            clear_tool_inputs=args.clear_inputs)
    return Setup(strategies=strategies, preset=args.preset, rules=rules, policy=policy, model=args.model,
                 cache=args.cache, mode=args.mode, max_input_mb=args.max_input_mb,
                 prices=_load_json(args.prices, args.max_input_mb) if getattr(args, "prices", None) else None)


def _run_options(args: argparse.Namespace, conversation: formats.Conversation, price):
    """``_policy_options`` and the model's context window, which some agents' triggers are part of."""
    return _policy_options(args, conversation, price.context_window)  # (None: the catalogue does not know it)


def _money(value: float) -> str:
    from .run.prices import money

    return money(value)


def cmd_replay(args: argparse.Namespace) -> int:
    from .policies import make
    from .run.billed import log_fit, with_bills
    from .run.hidden import calls_with, lost_calls
    from .run.replay import replay, replay_to_json

    conversation, meter, price, cache = _run_setup(args)
    options = _run_options(args, conversation, price)
    policy = make(args.strategy, options)
    if args.strategy == "rules":
        _say(unmatched_message(conversation, meter.count(conversation), options.rules), args.preset)
    summarizer = _summarizer_price(args, price)
    run = replay(conversation, policy, meter, price, mode=args.mode, cache=cache, summarizer=summarizer,
                 baseline=args.baseline)
    bills = log_fit(conversation, price, run if meter.calibration is None else None)  # (its counts are ours)
    if args.json:
        data = replay_to_json(run)
        _write(_dump(with_bills(data, bills, meter.choice.model, conversation.source) if bills else data), None)
        return 0
    lines = [f"{policy.name} {json.dumps(policy.params())}, mode {run.mode}, cache {cache}, "
             f"{price.model} prices ({price.source}), summaries billed at {summarizer.model} prices",
             f"source: {source_of(policy.name)}",
             f"{'call':>6} {'index':>6} {'tokens without':>15} {'tokens with':>12} {'cached without':>15} "
             f"{'cached with':>12} {'cost without':>13} {'cost with':>10}  fired"]
    lines += [f"{n:>6} {c.index:>6} {c.tokens_without:>15,} {c.tokens_with:>12,} {c.cached_without:>15,} "
              f"{c.cached_with:>12,} {_money(c.cost_without):>13} {_money(c.cost_with):>10}  {c.fired or ''}"
              for n, c in enumerate(run.calls)]
    t = run.totals
    lines.append(f"{'total':>6} {'':>6} {t.tokens_without:>15,} {t.tokens_with:>12,} {t.cached_tokens_without:>15,} "
                 f"{t.cached_tokens_with:>12,} {_money(t.cost_without):>13} {_money(t.cost_with):>10}")
    lines += baseline_lines(run)
    if t.summarization_cost:
        lines.append(f"summarization calls: {_money(t.summarization_cost)} of the cost with ({summarizer.model} "
                     "prices; the span as input, the summary as output)")
    for even in run.break_even():
        repaid = "not repaid before the next firing or the end" if even.repaid_after is None else (
            f"repaid after {even.repaid_after} more call(s)")
        lines.append(f"fired at call {even.call} (index {even.index}): cache miss {_money(even.extra)}, {repaid}")
    hidden = run.hidden_used
    lines.append(f"hidden then used: {plural(calls_with(hidden), 'call')} used a piece of an earlier item their "
                 f"request had hidden ({lost_calls(hidden)} of them one no tool call brings back; --json lists each)")
    if bills:
        lines.append(f"{bills.describe()} --json gives each call's bill (billed_input_tokens) and "
                     "the fit as log_calibration.calibration, which --calibration reads from a file.")
    _write("\n".join(lines) + "\n", None)
    return 0


def baseline_lines(run) -> list[str]:
    """What ``without`` means on this run, and the full history as the second figure where it is not that."""
    from .run.replay import AS_RAN

    window = run.over_window()
    if run.baseline != AS_RAN:
        return [f"note: {window}"] if window else []
    full = sum(run.full_history(call) for call in run.calls)
    inferred = f"; cuts inferred from the bills at calls {', '.join(map(str, run.inferred))}" if run.inferred else ""
    return [f"without = the run as it ran (what the agent really sent{inferred}); the full history the log holds "
            f"would have been {full:,} tokens, {_money(sum(call.cost_full or 0.0 for call in run.calls))} "
            "(--baseline full-history replays against it)", *([f"note: {window}"] if window else [])]


def cmd_compare(args: argparse.Namespace) -> int:
    from .policies import POLICIES, make, offered
    from .run.compare import compare, rows_to_json

    conversation, meter, price, cache = _run_setup(args)
    options = _run_options(args, conversation, price)
    names = offered(args.strategy or list(POLICIES), conversation)
    if set(args.strategy or ()) - set(names):
        print(f"{PROG}: note: as-it-ran left out: the log records no compaction by the agent, so the run as it ran "
              "is the none row", file=sys.stderr)
    policies = [make(name, options) for name in names]
    if any(policy.name == "rules" for policy in policies):
        _say(unmatched_message(conversation, meter.count(conversation), options.rules), args.preset)
    summarizer = _summarizer_price(args, price)
    rows = compare(conversation, policies, meter, price, mode=args.mode, cache=cache, summarizer=summarizer,
                   baseline=args.baseline)
    if args.json:
        _write(_dump(rows_to_json(rows)), None)
        return 0
    lines = [f"mode {args.mode}, cache {cache}, {price.model} prices ({price.source}); summaries billed at "
             f"{summarizer.model} prices (the span as input, the summary as output) and included in cost",
             f"{'strategy':<25} {'tokens final':>12} {'tokens billed':>14} {'cached':>12} {'cost':>10} "
             f"{'summaries':>10} {'hidden used':>11} {'lost':>9} {'retrievable':>11}  parameters"]
    lines += [f"{r.strategy + (' *' if r.baseline else ''):<25} {r.tokens_final:>12,} {r.tokens_billed:>14,} "
              f"{r.cached_tokens:>12,} "
              f"{_money(r.cost):>10} {_money(r.summarization_cost):>10} "
              f"{f'{r.hidden_used_calls} ({r.hidden_used_lost})':>11} {r.tokens_lost:>9,} "
              f"{r.tokens_retrievable:>11,}  {json.dumps(r.params)}" for r in rows]
    lines.append("hidden used: calls whose reply used a piece of an earlier item their request had hidden (in "
                 "brackets, of those, the calls that used one no tool call brings back)")
    lines.append("* the baseline: " + ("the run as it ran, what the agent really sent (none: the full history its "
                                       "log holds, never sent)" if any(r.baseline and r.strategy == "as-it-ran"
                                                                       for r in rows) else
                                       "none, the run as the log holds it"))
    lines += ["", "sources:"] + [f"  {r.strategy}: {source_of(r.strategy)}" for r in rows]
    _write("\n".join(lines) + "\n", None)
    return 0


def _policy_arguments(p: argparse.ArgumentParser) -> None:
    """Every strategy's options, as replay, compare, probe, evaluate and tune take them."""
    from .run.promptcache import CACHE_MODELS
    from .run.replay import BASELINES, MODES

    source = p.add_mutually_exclusive_group()
    source.add_argument("--rules", help="rules JSON file for the rules strategy (default: the book's)")
    source.add_argument("--preset", choices=("book", "masking", "aggressive", "suggested"),
                        help="named rules for the rules strategy")
    p.add_argument("--threshold", type=_tokens, default=DEFAULT_THRESHOLD,
                   help=f"rules: compact at or above this many prompt tokens; summarize and hybrid: summarize at "
                        f"or above it (default {DEFAULT_THRESHOLD})")
    p.add_argument("--keep-recent", type=_count, default=0, help=f"rules: {KEEP_RECENT_HELP}")
    _error_arguments(p, "rules: ")
    p.add_argument("--no-summarize", action="store_true",
                   help="rules: compaction only, never summarize when still over the threshold")
    p.add_argument("--keep-steps", type=_count, default=DEFAULT_KEEP_STEPS,
                   help=f"summarize, hybrid, rules: newest steps kept verbatim (default {DEFAULT_KEEP_STEPS})")
    p.add_argument("--window", type=_count, default=10,
                   help="masking, hybrid: tool outputs kept in full, newest first (default 10)")
    p.add_argument("--trigger", type=_tokens, default=100_000,
                   help="clear-tool-uses: clear once the prompt exceeds this many tokens (default 100000)")
    p.add_argument("--keep", type=_count, default=3,
                   help="clear-tool-uses: newest tool uses kept (default 3)")
    p.add_argument("--clear-at-least", type=_tokens, default=0,
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


def _add_run_commands(commands: Any) -> None:
    from .policies import POLICIES

    for name, text in (("replay", "replay a run call by call: tokens, prompt cache and cost with and without a "
                                  "policy"),
                       ("compare", "replay a run under every strategy and print one row each"),
                       ("probe", "send sampled calls as they were and as compacted to a live model: does the next "
                                 "step change?")):
        p = commands.add_parser(name, help=text)
        p.add_argument("file", help=FILE_HELP)
        if name == "probe":
            add_probe_arguments(p)
        if name in ("replay", "probe"):
            p.add_argument("--strategy", choices=list(POLICIES), default="rules",
                           help=f"the policy to {name} (default: rules, the book's optimizer)")
            p.add_argument("--json", action="store_true", help="print the calls and totals as JSON")
        else:
            p.add_argument("--strategy", choices=list(POLICIES), action="append",
                           help="compare only these (repeat the option; default: every strategy)")
            p.add_argument("--json", action="store_true", help="print the rows as JSON")
        _policy_arguments(p)
        p.add_argument("--format", choices=list(formats.READERS), help="input format (default: detected)")
        p.add_argument("--calibration", help="JSON file of calibration factors for the model (as for count)")
        _input_limit(p)
        p.set_defaults(run={"replay": cmd_replay, "compare": cmd_compare, "probe": cmd_probe}[name])
    _add_corpus_commands(commands)


# The live probe: ``python -m playground probe``. The estimate comes first and nothing is sent
# without ``--yes``; each failed request is one line on stderr naming its call, the others go on.
CALLS_HELP = (f"how many of the calls the policy changed to probe, spread evenly over the run with the last always "
              f"among them, or all (default {probe.DEFAULT_CALLS})")


def _calls(text: str) -> int | None:
    if text == "all":
        return None
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number or all, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1 call, got {value}")
    return value


def add_probe_arguments(p: argparse.ArgumentParser) -> None:
    """The probe's own options (the policy options are replay's)."""

    p.add_argument("--base-url", help="the endpoint (default: the provider's own API), e.g. "
                                      "http://localhost:11434/v1 for Ollama")
    p.add_argument("--llm-model", required=True, help="the model the endpoint serves")
    p.add_argument("--provider", choices=list(probe.PROVIDERS), default="openai",
                   help="wire format and key: openai (Chat Completions, any compatible server; OPENAI_API_KEY) or "
                        "anthropic (Messages API; ANTHROPIC_API_KEY). A key goes only to the provider's own host and "
                        "hosts listed in PLAYGROUND_KEY_HOSTS")
    p.add_argument("--calls", type=_calls, default=probe.DEFAULT_CALLS, help=CALLS_HELP)
    p.add_argument("--budget-tokens", type=_tokens, help="send no more than this many prompt tokens in all: "
                                                         "sampled calls that do not fit are left out")
    p.add_argument("--max-tokens", type=_tokens, default=probe.DEFAULT_MAX_TOKENS,
                   help=f"reply limit of each request (default {probe.DEFAULT_MAX_TOKENS}): enough for one next step")
    p.add_argument("--yes", action="store_true", help="send the requests (without it, only the estimate is printed)")
    p.add_argument("--timeout", type=_seconds, default=60.0,
                   help="seconds each request may take, every read included; the whole run takes at most this "
                        "times the number of requests (default 60)")


def _sender(args: argparse.Namespace, key: str | None) -> probe.Send:
    """Sends one body to the chosen endpoint and reads its next step. No retries: a failed request
    is reported for its call. (The clients are imported here: ``openai`` takes seconds to import,
    and every other command would pay for it.)"""
    from .llm.anthropic import ANTHROPIC_URL, AnthropicClient
    from .llm.endpoint import Endpoint
    from .llm.openai_compatible import OpenAIClient

    if args.provider == "anthropic":
        endpoint = Endpoint(model=args.llm_model, base_url=args.base_url or ANTHROPIC_URL, api_key=key,
                            timeout=args.timeout, max_retries=0)
        client = AnthropicClient(endpoint)
        return lambda body, size: probe.messages_action(client.send(body, size))
    chat = OpenAIClient(Endpoint(model=args.llm_model, base_url=args.base_url, api_key=key,
                                 timeout=args.timeout, max_retries=0))
    return lambda body, size: probe.chat_action(chat.send(body, size))


def _outcome_line(outcome: probe.Outcome) -> str:
    same = "yes" if outcome.same else "no"
    similarity = f" (similarity {outcome.similarity:.2f})" if outcome.similarity is not None else ""
    return f"{outcome.number:>6} {outcome.index:>6}  {same:<4} {outcome.before}  →  {outcome.after}{similarity}"


def cmd_probe(args: argparse.Namespace) -> int:
    from .policies import make

    conversation, meter, _, _ = _run_setup(args)
    policy = make(args.strategy, _policy_options(args, conversation))
    price = _prices(args).get(args.llm_model, probe.PROVIDERS[args.provider])
    key = api_key(args.base_url, args.provider)  # before the plan: a withheld key stops the run at once
    plan = probe.plan(conversation, policy, meter, price, args.provider, mode=args.mode, calls=args.calls,
                      budget=args.budget_tokens, max_tokens=args.max_tokens)
    shown = sys.stderr if args.json else sys.stdout
    print("\n".join(probe.estimate_lines(plan, args.timeout)), file=shown)
    if plan.changed and not plan.pairs:
        raise InputError("the token budget leaves no call to probe (raise --budget-tokens)")
    if plan.pairs and not args.yes:
        print(f"nothing sent: add --yes to send {plural(plan.requests, 'request')}", file=shown)

    def failed(outcome: probe.Outcome) -> None:
        if outcome.error:
            print(f"{PROG}: probe: call {outcome.number} (index {outcome.index}), {outcome.error}", file=sys.stderr)

    unsent = probe.Probe(plan, (), 0, 0)  # nothing to send, or not asked to: the estimate alone
    result = probe.run(plan, _sender(args, key), failed) if plan.pairs and args.yes else unsent
    if args.json:
        _write(_dump(probe.probe_to_json(result)), None)
        return 0
    if result is not unsent:
        _write(_report(result), None)
    return 0


def _report(result: probe.Probe) -> str:
    lines = [f"{'call':>6} {'index':>6}  same next step: as it was  →  as compacted"]
    lines += [_outcome_line(outcome) for outcome in result.outcomes if outcome.error is None]
    compared, agreement = result.compared, result.agreement
    same = sum(outcome.same is True for outcome in compared)
    failed = len(result.outcomes) - len(compared)
    lines.append(("agreement: no call could be compared" if agreement is None else
                  f"agreement: {same} of {plural(len(compared), 'call')} ({agreement:.0%})")
                 + (f"; {failed} failed (see above)" if failed else "")
                 + f"; {plural(result.sent_requests, 'request')} sent, {result.tokens_sent:,} prompt tokens"
                 + f"; text replies count as the same at a similarity of {probe.TEXT_THRESHOLD:g} or more")
    return "\n".join(lines) + "\n"


# All of a person's runs: ``evaluate`` and ``tune`` over a corpus (``corpus``).
PARQUET_MISSING = "--parquet needs pyarrow (Streamlit installs it; else `pip install pyarrow`), or use --csv"


def _progress(outcomes: Iterator[tuple[int, Any]], what: str) -> Iterator[tuple[int, Any]]:
    from tqdm import tqdm

    # The corpus streams: its size is not known up front, so the bar counts files done and their rate.
    yield from tqdm(outcomes, desc=what, unit=" files", file=sys.stderr, disable=None, leave=False)


def _outcomes(args: argparse.Namespace, task: executors.Task, what: str) -> list[tuple[int, Any]]:
    found = finder.find(args.paths, args.max_input_mb)
    return list(_progress(executors.run(found, task, executor=args.executor, workers=args.workers,
                                        scheduler=args.scheduler), what))


def _parquet(rows: list[dict[str, Any]], path: str) -> None:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise InputError(PARQUET_MISSING) from None
    try:
        pyarrow.parquet.write_table(pyarrow.Table.from_pylist(rows), path)
    except OSError as exc:
        raise InputError(f"cannot write the file ({exc})", where=path) from None


def _problems(failed: Iterable[finder.Failed], skipped: Iterable[finder.Skipped]) -> list[str]:
    return ([f"failed  {f.message}" for f in failed]
            + [f"skipped {s.source}: {s.reason}" for s in skipped])


def evaluation_table(aggregate: dict[str, Any], failed: list[finder.Failed], skipped: list[finder.Skipped]) -> str:
    """The final table: one line per strategy over the whole corpus."""

    lines = [f"{aggregate['runs']} runs, {aggregate['failed']} failed, {aggregate['skipped']} skipped",
             f"{'strategy':<16} {'cost':>12} {'cost none':>12} {'median saving':>14} {'p90 saving':>11} "
             f"{'costs more':>10} {'errors kept':>12} {'pairs intact':>12} {'lost':>11} {'hidden used':>11}"]
    for s in aggregate["strategies"]:
        hidden = "unknown" if s["hidden_used_calls"] is None else f"{s['hidden_used_calls']:,}"
        lines.append(f"{s['strategy']:<16} {_money(s['cost']):>12} {_money(s['cost_none']):>12} "
                     f"{_money(s['median_saving']):>14} {_money(s['saving_percentiles']['p90']):>11} "
                     f"{s['share_costs_more_than_none']:>10.0%} {s['errors_kept']:>5,} of {s['error_results']:<3,} "
                     f"{s['runs_pairs_intact']:>5,} of {s['runs']:<3,} {s['tokens_lost']:>11,} {hidden:>11}")
    unpriced = max((s["runs_unpriced"] for s in aggregate["strategies"]), default=0)
    if unpriced:
        lines.append(f"{plural(unpriced, 'run')} of a model whose price is unknown: counted, left out of the medians "
                     "and percentiles, and the cost sums are unknown")
    return "\n".join(lines + _problems(failed, skipped)) + "\n"


def in_order(outcomes: Iterable[tuple[int, Any]]) -> Iterator[Any]:
    """Numbered outcomes, as they complete, put back in corpus order (every number comes once):
    only those that arrived before an earlier one wait."""
    waiting: list[tuple[int, Any]] = []
    expected = 0
    for order, outcome in outcomes:
        heapq.heappush(waiting, (order, id(outcome), outcome))
        while waiting and waiting[0][0] == expected:
            yield heapq.heappop(waiting)[2]
            expected += 1


@contextmanager
def _opened(path: str | None) -> Iterator[TextIO | None]:
    if path is None:
        yield None
    elif path == "-":
        yield sys.stdout
    else:
        try:
            with open(path, "w", encoding="utf-8", newline="") as stream:
                yield stream
        except OSError as exc:
            raise InputError(f"cannot write the file ({exc.strerror or exc})", where=path) from None


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Runs stream out as they are evaluated (JSON and CSV are written run by run, in corpus
    order); what is kept is the aggregate's few numbers per run, and the failed and skipped."""
    from .corpus.evaluate import Aggregate, csv_writer, evaluate_batch, run_rows, run_to_json

    setup = policy_setup(args, named_strategies(args.strategy))
    found = finder.find(args.paths, args.max_input_mb)
    outcomes = _progress(executors.run(found, functools.partial(evaluate_batch, setup=setup), executor=args.executor,
                                       workers=args.workers, scheduler=args.scheduler), "evaluate")
    total, failed, skipped, parquet = Aggregate(), [], [], []
    out = sys.stdout if args.json else None
    with _opened(args.csv) as csv_out:
        writer = None
        if out:
            out.write('{"runs": [')
        for outcome in in_order(outcomes):
            if isinstance(outcome, finder.Failed | finder.Skipped):
                (failed if isinstance(outcome, finder.Failed) else skipped).append(outcome)
                continue
            if out:
                out.write(("\n" if not total.runs else ",\n") + formats.keep_surrogates(
                    json.dumps(run_to_json(outcome), ensure_ascii=False)))
            total.add(outcome)
            rows = run_rows(outcome)
            if csv_out:
                writer = writer or csv_writer(csv_out, rows[0])
                writer.writerows(rows)
            if args.parquet:
                parquet.extend(rows)
    aggregate = total.to_json(len(failed), len(skipped))
    if args.parquet:
        _parquet(parquet, args.parquet)
    if out:
        rest = _dump(problems_to_json(failed, skipped) | {"aggregate": aggregate})
        out.write("\n]," + formats.keep_surrogates(rest[1:]))
    elif args.csv != "-":  # stdout holds the CSV alone
        sys.stdout.write(evaluation_table(aggregate, failed, skipped))
    return 0


def tune_table(result: dict[str, Any]) -> str:

    lines = [f"{result['runs']} runs, mode {result['mode']}; hidden-then-used calls: {result['hidden_used_calls']}"]
    lines += [f"priced as {p['model']} ({p['source']}), cache {p['cache']}: {p['runs']} runs" for p in result["prices"]]
    for s in result["strategies"]:
        chosen = s["best"]
        lines.append(f"{s['strategy']}: best {json.dumps(chosen['params']) if chosen else '(none)'}"
                     + (f" at {_money(chosen['cost'])}" if chosen else "")
                     + "; front: " + ", ".join(f"{json.dumps(p['params'])} {_money(p['cost'])}" for p in s["front"]))
    return "\n".join(lines) + "\n"


def cmd_tune(args: argparse.Namespace) -> int:
    from .corpus.sweep import DEFAULT_GRID, Grid, summarize, tune_batch

    setup = policy_setup(args, named_strategies(args.strategy))
    grid = Grid.parse(args.grid or DEFAULT_GRID)
    runs, failed, skipped = partition(_outcomes(args, functools.partial(tune_batch, setup=setup, grid=grid), "tune"))
    result = summarize(runs, setup, grid, args.max_hidden_used) | problems_to_json(failed, skipped)
    if args.json:
        _write(_dump(result), None)
    else:
        _write(tune_table(result) + "".join(line + "\n" for line in _problems(failed, skipped)), None)
    return 0


def _common(p: argparse.ArgumentParser) -> None:

    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="files, folders (recursively), globs, .zip / .tar.gz archives and .gz files")
    p.add_argument("--strategy", choices=[*POLICIES, ALL], action="append",
                   help="these strategies (repeat the option; default: the playground's own — "
                        f"{', '.join(OURS)} — and as-it-ran where a log shows the agent compacting; all: every "
                        "strategy, the agents' and providers' own too, about three times the work)")
    _policy_arguments(p)
    p.add_argument("--workers", type=_count,
                   help=f"worker processes (default: this machine's cores, {executors.default_workers()}; 0: this "
                        "process alone)")
    p.add_argument("--executor", choices=executors.EXECUTORS, default="local",
                   help="local: a process pool here (default); dask: a Dask cluster (requirements-dask.txt), a "
                        "LocalCluster unless --scheduler names one")
    p.add_argument("--scheduler", metavar="ADDRESS", help="with --executor dask: an existing cluster, tcp://host:port")
    _input_limit(p)


def _add_corpus_commands(commands: Any) -> None:
    from .corpus.sweep import DEFAULT_GRID

    p = commands.add_parser("evaluate", help="evaluate the policies over a corpus of runs, one row per run and "
                                             "strategy, and the whole corpus")
    _common(p)
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print runs, failed, skipped and the aggregate as JSON")
    out.add_argument("--csv", metavar="OUT", help="write one row per run and strategy as CSV (- for stdout)")
    out.add_argument("--parquet", metavar="OUT", help="write the same rows as Parquet (needs pyarrow)")
    p.set_defaults(run=cmd_evaluate)

    p = commands.add_parser("tune", help="sweep policy parameters over a corpus: the cheapest setting and the "
                                         "front of cost against hidden-then-used calls")
    _common(p)
    p.add_argument("--grid", nargs="+", metavar="NAME=VALUES",
                   help=f"the axes to sweep, e.g. threshold=20000:150000:10000 keep_recent=0:5 window=2,5,10 "
                        f"(default: {' '.join(DEFAULT_GRID)})")
    p.add_argument("--max-hidden-used", type=_tokens, metavar="R",
                   help="the best setting may hide data the agent then used in at most R calls over the corpus")
    p.add_argument("--json", action="store_true", help="print every strategy's front and best as JSON")
    p.set_defaults(run=cmd_tune)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        if hasattr(args, "max_input_mb"):
            args.max_input_mb = args.max_input_mb or limits.max_input_mb()
        return args.run(args)
    except InputError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug: say so in one line unless asked for the traceback
        if os.environ.get("PLAYGROUND_DEBUG"):
            raise
        print(f"{PROG}: internal error (please report, PLAYGROUND_DEBUG=1 shows details): "
              f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
