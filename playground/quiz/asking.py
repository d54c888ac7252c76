"""Asking: each question sent after the request as it was and after the policy's request at its
call, as a last user message, to the same model (tools defined, none callable), the estimate before
anything is sent, each answer graded (exact tokens offline, else an optional judge: one more request
to the same model, with a prompt from the data file), and the answers as ``probe --questions --json``
gives them. A failed request is named with its question and side, and the others go on."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import formats, probe
from ..conversation import Conversation, Message
from ..errors import InputError
from ..meter.tokens import Meter
from ..run.prices import Price, rounded
from ..words import plural
from .grading import grade
from .questions import TYPES, Question, templates

FULL, COMPACTED = "full", "compacted"
SIDES = {FULL: "as it was", COMPACTED: "as compacted"}
JUDGE_MAX_TOKENS = 8  # YES or NO


@dataclass(frozen=True)
class Asked:
    """A question ready to send: both requests with the question as their last user message, their
    prompt tokens, and the judge's prompt tokens at most for both answers (0 when none is called)."""

    question: Question
    full: dict[str, Any] = field(repr=False)
    compacted: dict[str, Any] = field(repr=False)
    tokens_full: int
    tokens_compacted: int
    judge_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.tokens_full + self.tokens_compacted + self.judge_tokens


@dataclass(frozen=True)
class Quiz:
    """What asking would send, known before anything is: the questions that fit the budget, those it
    left out, and the estimate."""

    asked: tuple[Asked, ...]
    over_budget: tuple[Question, ...]
    price: Price
    max_tokens: int
    judge: bool
    wire: str
    notes: tuple[str, ...]
    meter: Meter = field(repr=False, compare=False)

    @property
    def judged(self) -> int:
        """Judge calls at most: one per answer of a question only a judge can grade."""
        return 2 * sum(1 for asked in self.asked if self.judge and not asked.question.expected)

    @property
    def requests(self) -> int:
        return 2 * len(self.asked) + self.judged

    @property
    def tokens(self) -> int:
        return sum(asked.tokens for asked in self.asked)

    @property
    def cost(self) -> float:
        """At most: every prompt token at the input price (no cache read), every reply its whole limit."""
        replies = 2 * len(self.asked) * self.max_tokens + self.judged * JUDGE_MAX_TOKENS
        return (self.tokens * self.price.input + replies * self.price.output) / 1e6


def _tool_choice_none(body: dict[str, Any], wire: str) -> dict[str, Any]:
    """The body with its tools still defined (a provider refuses tool calls in a history that defines
    none) but none callable: the question wants words."""
    if not body.get("tools"):
        return body
    return body | {"tool_choice": {"type": "none"} if wire == "anthropic" else "none"}


def _with_question(request: Conversation, question: Question) -> Conversation:
    return request.with_items((*request.items, Message(role="user", content=question.text)))


def judge_request(question: Question, answer: str) -> Conversation:
    """The judge's request: the question, the log's reference and the answer, in one user message."""
    prompt = templates()["judge"].format(question=question.text, reference=question.reference, answer=answer)
    return Conversation((Message(role="user", content=prompt),), format="chat")


def plan(conversation: Conversation, asked: tuple[Question, ...], meter: Meter, price: Price, provider: str, *,
         budget: int | None = None, max_tokens: int = probe.DEFAULT_MAX_TOKENS, judge: bool = False) -> Quiz:
    """The requests, their tokens and the estimate, nothing sent. ``budget`` caps the prompt tokens:
    questions are taken in order, each only if both its requests (and its judge calls) still fit."""
    if provider not in probe.PROVIDERS:
        raise InputError(f"unknown provider (choose {', '.join(probe.PROVIDERS)})", where="--provider",
                         value=provider)
    wire = probe.PROVIDERS[provider]
    ready: list[Asked] = []
    over: list[Question] = []
    spent = 0
    for question in asked:
        full, compacted = _with_question(question.full, question), _with_question(question.compacted, question)
        tokens = meter.count(full).total, meter.count(compacted).total
        judging = 2 * (meter.count(judge_request(question, "")).total + max_tokens) if (
            judge and not question.expected) else 0
        if budget is not None and spent + sum(tokens) + judging > budget:
            over.append(question)
            continue
        spent += sum(tokens) + judging
        ready.append(Asked(question, _tool_choice_none(probe.body_of(full, wire, max_tokens), wire),
                           _tool_choice_none(probe.body_of(compacted, wire, max_tokens), wire), *tokens, judging))
    with_tools, defined = probe.with_tools(conversation)
    notes = formats.convert(with_tools, wire).notes[len(with_tools.notes):] if ready else ()
    if defined:
        notes += (f"the log defines no tools: {', '.join(defined)} defined from its calls' names (none may be "
                  "called: the question wants words)",)
    return Quiz(tuple(ready), tuple(over), price, max_tokens, judge, wire, notes, meter)


@dataclass(frozen=True)
class Answer:
    """One question's two answers and grades (None: not graded — a failed request, or a question
    only a judge grades and none was asked), and what failed, each naming its side."""

    question: Question
    full: str | None = None
    compacted: str | None = None
    correct_full: bool | None = None
    correct_compacted: bool | None = None
    errors: tuple[str, ...] = ()


@dataclass(frozen=True)
class Asking:
    """What asking found: each question's answers, and what was actually sent (failed requests included)."""

    quiz: Quiz
    answers: tuple[Answer, ...]
    sent_requests: int
    tokens_sent: int

    def by_type(self) -> dict[str, dict[str, int]]:
        """Per question type: how many were asked, graded on each side, and right on each side."""
        totals = {}
        for answer in self.answers:
            kind = totals.setdefault(answer.question.type, dict.fromkeys(
                ("asked", "graded_full", "graded_compacted", "correct_full", "correct_compacted"), 0))
            kind["asked"] += 1
            for side, correct in ((FULL, answer.correct_full), (COMPACTED, answer.correct_compacted)):
                kind[f"graded_{side}"] += correct is not None
                kind[f"correct_{side}"] += correct is True
        return {kind: totals[kind] for kind in TYPES if kind in totals}


def _words(action: probe.Action) -> str:
    return action.text if action.text or not action.tool_calls else str(action)


def _verdict(said: str) -> bool | None:
    word = said.strip().strip("*.").upper()
    return True if word.startswith("YES") else False if word.startswith("NO") else None


def ask(quiz: Quiz, send: probe.Send, report: Callable[[Answer], None] = lambda answer: None) -> Asking:
    """Send each question as it was and as compacted (both, whatever the other did: each side is
    graded on its own), grade each answer, and with the judge on ask it about each answer exact
    tokens cannot grade. ``report`` sees each answer as it comes."""
    answers: list[Answer] = []
    sent = tokens = 0
    for asked in quiz.asked:
        question, said, correct, errors = asked.question, {}, {}, []
        for side, body, prompt in ((FULL, asked.full, asked.tokens_full),
                                   (COMPACTED, asked.compacted, asked.tokens_compacted)):
            sent, tokens = sent + 1, tokens + prompt
            action, failure = probe.attempt(send, body)
            if action is None:
                errors.append(f"{SIDES[side]}: {failure}")
                continue
            said[side] = _words(action)
            correct[side] = grade(question.expected, said[side])
            if correct[side] is None and quiz.judge:
                request = judge_request(question, said[side])
                sent, tokens = sent + 1, tokens + quiz.meter.count(request).total
                verdict, failure = probe.attempt(send, probe.body_of(request, quiz.wire, JUDGE_MAX_TOKENS))
                correct[side] = _verdict(verdict.text) if verdict else None
                if verdict is None or correct[side] is None:
                    errors.append(f"the judge of {SIDES[side]}: " + (
                        failure or f"answered neither YES nor NO ({verdict.text[:40]!r})"))
        answer = Answer(question, said.get(FULL), said.get(COMPACTED), correct.get(FULL), correct.get(COMPACTED),
                        tuple(errors))
        answers.append(answer)
        report(answer)
    return Asking(quiz, tuple(answers), sent, tokens)


def located(number: int, answer: Answer) -> list[str]:
    """Each failure of the ``number``-th question asked (from 1) as one line naming the question, its
    type, its call and the side: the CLI prints them as they come, the page lists them after."""
    question = answer.question
    return [f"question {number} ({question.type}, call {question.call}), {error}" for error in answer.errors]


def estimate_lines(quiz: Quiz, timeout: float | None = None, judge_named: str = "--judge") -> list[str]:
    """What will be asked and what it may cost, in the words ``probe``'s estimate uses; ``judge_named``
    is what turns the judge on where the lines are read (the CLI's flag, the page's switch)."""
    if not quiz.asked and not quiz.over_budget:
        return ["no question to ask: the policy fired at no call, or the ledger holds no fact by the calls chosen"]
    calls = sorted({asked.question.call for asked in quiz.asked})
    kinds = {kind: sum(asked.question.type == kind for asked in quiz.asked) for kind in TYPES}
    lines = [f"asking {plural(len(quiz.asked), 'question')} at {plural(len(calls), 'call')} ("
             + ", ".join(map(str, calls)) + "): " + ", ".join(f"{n} {kind}" for kind, n in kinds.items() if n)]
    if quiz.over_budget:
        lines.append(f"left out by the token budget: {plural(len(quiz.over_budget), 'question')} (at calls "
                     + ", ".join(str(question.call) for question in quiz.over_budget) + ")")
    judged = (f", {quiz.judged} judge calls at most" if quiz.judge else
              f"; without {judge_named} the questions only a judge can grade are asked but not graded")
    at_most = (f"${quiz.cost:,.4f} at {quiz.price.model} prices" if quiz.price.known
               else f"a cost unknown ({quiz.price.source})")
    wait = f"; each may take up to {timeout:g} s" if timeout else ""
    lines.append(f"estimate: {plural(quiz.requests, 'request')} (each question as it was and as compacted"
                 f"{judged}), {quiz.tokens:,} prompt tokens, at most {at_most}: every prompt token at the input "
                 f"price, no cache, and every reply its whole limit{wait}")
    return lines + [f"note: {note}" for note in quiz.notes]


def asking_to_json(asking: Asking) -> dict[str, Any]:
    """``probe --questions --json``: each question, its answers and grades, the totals per type, what
    was sent, and the estimate."""
    quiz = asking.quiz
    rows = [{"call": a.question.call, "index": a.question.index, "type": a.question.type,
             "question": a.question.text, "expected": list(a.question.expected or (a.question.reference,)),
             "graded": a.question.graded, "full": a.full, "compacted": a.compacted,
             "correct_full": a.correct_full, "correct_compacted": a.correct_compacted,
             **({"errors": list(a.errors)} if a.errors else {})} for a in asking.answers]
    return {"questions": rows, "by_type": asking.by_type(), "sent_requests": asking.sent_requests,
            "tokens_sent": asking.tokens_sent,
            "estimate": {"questions": len(quiz.asked), "requests": quiz.requests, "judge_calls": quiz.judged,
                         "tokens": quiz.tokens, "cost_at_most": rounded(quiz.cost, 6), "prices": quiz.price.model,
                         "priced_as": quiz.price.priced_as,
                         "over_budget": [question.call for question in quiz.over_budget]}}
