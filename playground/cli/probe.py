"""``probe``: sampled calls sent as they were and as the policy compacted them to a live model —
does the next step change? With ``--questions``, questions on the run's facts asked after both
requests instead — what did it keep? The estimate comes first and nothing is sent without ``--yes``;
each failed request is one line on stderr naming its call (or question) and side, and the others go on."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .. import probe, quiz
from ..errors import InputError
from ..policies import make
from ..words import plural
from .arguments import FILE_HELP, PROG, number, seconds, tokens
from .keys import api_key
from .output import dump, write
from .policy_flags import add_policy_choice
from .run_options import add_run_arguments, load_run

CALLS_HELP = (f"how many of the calls the policy changed to probe, spread evenly over the run with the last always "
              f"among them, or all (default {probe.DEFAULT_CALLS})")


def calls(text: str) -> int | None:
    """An argparse type: a number of calls, or ``all`` (None)."""
    if text == "all":
        return None
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number or all, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1 call, got {value}")
    return value


def call_numbers(text: str) -> tuple[int, ...]:
    """An argparse type: call numbers, comma-separated."""
    try:
        found = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected call numbers separated by commas, got {text!r}") from None
    if any(n < 0 for n in found):
        raise argparse.ArgumentTypeError(f"call numbers start at 0, got {text!r}")
    return found


def add_parser(commands: Any) -> None:
    p = commands.add_parser("probe", help="send sampled calls as they were and as compacted to a live model: does "
                                          "the next step change?")
    p.add_argument("file", help=FILE_HELP)
    p.add_argument("--base-url", help="the endpoint (default: the provider's own API), e.g. "
                                      "http://localhost:11434/v1 for Ollama")
    p.add_argument("--llm-model", required=True, help="the model the endpoint serves")
    p.add_argument("--provider", choices=list(probe.PROVIDERS), default="openai",
                   help="wire format and key: openai (Chat Completions, any compatible server; OPENAI_API_KEY) or "
                        "anthropic (Messages API; ANTHROPIC_API_KEY). A key goes only to the provider's own host and "
                        "hosts listed in PLAYGROUND_KEY_HOSTS")
    p.add_argument("--calls", type=calls, default=probe.DEFAULT_CALLS, help=CALLS_HELP)
    p.add_argument("--budget-tokens", type=tokens, help="send no more than this many prompt tokens in all: "
                                                        "sampled calls that do not fit are left out")
    p.add_argument("--max-tokens", type=tokens, default=probe.DEFAULT_MAX_TOKENS,
                   help=f"reply limit of each request (default {probe.DEFAULT_MAX_TOKENS}): enough for one next step")
    p.add_argument("--yes", action="store_true", help="send the requests (without it, only the estimate is printed)")
    p.add_argument("--timeout", type=seconds, default=60.0,
                   help="seconds each request may take, every read included; the whole run takes at most this "
                        "times the number of requests (default 60)")
    p.add_argument("--questions", action="store_true",
                   help="ask the model about the run's facts (files written, requirements, exit statuses, errors, "
                        "its next step) after the request as it was and as compacted, and grade the answers")
    p.add_argument("--max-questions", type=number, default=quiz.DEFAULT_QUESTIONS,
                   help=f"--questions: ask at most this many, spread over the calls (default "
                        f"{quiz.DEFAULT_QUESTIONS})")
    p.add_argument("--at", type=call_numbers, metavar="CALLS",
                   help="--questions: the calls to ask at, e.g. 3,7 (default: where the policy fired, spread evenly)")
    p.add_argument("--judge", action="store_true",
                   help="--questions: ask the same model to grade the answers no exact token can (one more "
                        "request per answer, in the estimate)")
    add_policy_choice(p, "probe")
    p.add_argument("--json", action="store_true", help="print the calls and totals as JSON")
    add_run_arguments(p)
    p.set_defaults(run=run)


def sender(args: argparse.Namespace, key: str | None) -> probe.Send:
    """Sends one body to the chosen endpoint and reads its next step. No retries: a failed request
    is reported for its call. (The clients are imported here: ``openai`` takes seconds to import,
    and every other command would pay for it.)"""
    from ..llm.anthropic import ANTHROPIC_URL, AnthropicClient
    from ..llm.endpoint import Endpoint
    from ..llm.openai_compatible import OpenAIClient

    if args.provider == "anthropic":
        endpoint = Endpoint(model=args.llm_model, base_url=args.base_url or ANTHROPIC_URL, api_key=key,
                            timeout=args.timeout, max_retries=0)
        client = AnthropicClient(endpoint)
        return lambda body, size: probe.messages_action(client.send(body, size))
    chat = OpenAIClient(Endpoint(model=args.llm_model, base_url=args.base_url, api_key=key,
                                 timeout=args.timeout, max_retries=0))
    return lambda body, size: probe.chat_action(chat.send(body, size))


def run(args: argparse.Namespace) -> int:
    loaded = load_run(args)
    options = loaded.options
    policy = make(args.policy, loaded.settings())  # as replay builds it: the run model's context window too
    price = options.prices.get(args.llm_model, probe.PROVIDERS[args.provider])
    key = api_key(args.base_url, args.provider)  # before the plan: a withheld key stops the run at once
    if args.questions:
        return run_questions(args, loaded, policy, price, key)
    if args.judge or args.at is not None or args.max_questions != quiz.DEFAULT_QUESTIONS:
        raise InputError("--at, --max-questions and --judge choose and grade questions: add --questions")
    plan = probe.plan(loaded.conversation, policy, loaded.meter, price, args.provider, mode=options.mode,
                      calls=args.calls, budget=args.budget_tokens, max_tokens=args.max_tokens)
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
    result = probe.run(plan, sender(args, key), failed) if plan.pairs and args.yes else unsent
    if args.json:
        write(dump(probe.probe_to_json(result)), None)
        return 0
    if result is not unsent:
        write(report(result), None)
    return 0


def outcome_line(outcome: probe.Outcome) -> str:
    same = "yes" if outcome.same else "no"
    similarity = f" (similarity {outcome.similarity:.2f})" if outcome.similarity is not None else ""
    return f"{outcome.number:>6} {outcome.index:>6}  {same:<4} {outcome.before}  →  {outcome.after}{similarity}"


def report(result: probe.Probe) -> str:
    """The table of compared calls and the agreement over them, what failed and what was sent."""
    lines = [f"{'call':>6} {'index':>6}  same next step: as it was  →  as compacted"]
    lines += [outcome_line(outcome) for outcome in result.outcomes if outcome.error is None]
    compared, agreement = result.compared, result.agreement
    same = sum(outcome.same is True for outcome in compared)
    failed = len(result.outcomes) - len(compared)
    lines.append(("agreement: no call could be compared" if agreement is None else
                  f"agreement: {same} of {plural(len(compared), 'call')} ({agreement:.0%})")
                 + (f"; {failed} failed (see above)" if failed else "")
                 + f"; {plural(result.sent_requests, 'request')} sent, {result.tokens_sent:,} prompt tokens"
                 + f"; text replies count as the same at a similarity of {probe.TEXT_THRESHOLD:g} or more")
    return "\n".join(lines) + "\n"


def run_questions(args: argparse.Namespace, loaded: Any, policy: Any, price: Any, key: str | None) -> int:
    """``--questions``: the questions and the estimate, then (with ``--yes``) each answer and grade."""
    asked = quiz.questions(loaded.conversation, policy, loaded.meter, mode=loaded.options.mode, at=args.at,
                             limit=args.max_questions)
    planned = quiz.plan(loaded.conversation, asked, loaded.meter, price, args.provider, budget=args.budget_tokens,
                       max_tokens=args.max_tokens, judge=args.judge)
    shown = sys.stderr if args.json else sys.stdout
    print("\n".join(quiz.estimate_lines(planned, args.timeout)), file=shown)
    if planned.over_budget and not planned.asked:
        raise InputError("the token budget leaves no question to ask (raise --budget-tokens)")
    if planned.asked and not args.yes:
        print(f"nothing sent: add --yes to send {plural(planned.requests, 'request')}", file=shown)
    numbers = {id(asked.question): n for n, asked in enumerate(planned.asked, 1)}

    def failed(answer: quiz.Answer) -> None:
        for line in quiz.located(numbers[id(answer.question)], answer):
            print(f"{PROG}: probe: {line}", file=sys.stderr)

    unsent = quiz.Asking(planned, (), 0, 0)
    result = quiz.ask(planned, sender(args, key), failed) if planned.asked and args.yes else unsent
    if args.json:
        write(dump(quiz.asking_to_json(result)), None)
    elif result is not unsent:
        write(answers_report(result), None)
    return 0


def _cut(text: str, at: int = 64) -> str:
    return text if len(text) <= at else text[:at - 1] + "…"


def _mark(correct: bool | None) -> str:
    return "-" if correct is None else "yes" if correct else "no"


def answers_report(result: quiz.Asking) -> str:
    """Each question with both grades, then the totals per type and what was sent."""
    lines = [f"{'call':>6}  {'type':<15} {'as it was':<10} {'compacted':<10} question → expected"]
    for answer in result.answers:
        question = answer.question
        lines.append(f"{question.call:>6}  {question.type:<15} {_mark(answer.correct_full):<10} "
                     f"{_mark(answer.correct_compacted):<10} {_cut(question.asks)} → {_cut(question.answer_key)}")
    for kind, n in result.by_type().items():
        lines.append(f"{kind}: " + (f"right as it was {n['correct_full']} of {n['graded_full']}, as compacted "
                                    f"{n['correct_compacted']} of {n['graded_compacted']}"
                                    if n["graded_full"] or n["graded_compacted"] else "not graded")
                     + f" (asked {n['asked']})")
    lines.append(f"{plural(result.sent_requests, 'request')} sent, {result.tokens_sent:,} prompt tokens; "
                 "- is not graded (a failed request, or no --judge)")
    return "\n".join(lines) + "\n"
