"""Probes that ask the model what it kept: at chosen calls, a question about the run's facts (the
ledger's, as they stood at that call) goes to the same model twice — after the request as it was and
after the policy's request at that call — and each answer is graded.

``replay``'s fates say whether a fact is still *in* the request; this asks whether the model can still
*say* it. Questions come from the ledger (``facts.ledger``), one per type at a call, from templates in
``data/probe_questions.json``: the files written so far (paths), what the user said about a topic
(requirements), the exit status of the last failing command with a code, the last error of a call,
and what the agent will do next (the log's own next step is the reference). An answer is graded
offline where the fact is exact — every expected path, number or identifier appears in it, compared
lower-cased, a path also by its file name — and otherwise only by an optional judge: one more call to
the same model, with a prompt from the same data file, counted in the estimate.

``questions`` (offline, free) chooses the calls and writes the questions; ``plan`` builds the
requests in the provider's wire format and the estimate; ``ask`` sends them through any ``probe.Send``
and grades. A failed request (an error, a timeout, a reply that is not JSON) is named with its
question and side, and the other questions go on."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from . import formats, probe
from .conversation import Conversation, Message, ToolCall, content_text
from .errors import InputError
from .facts import worked
from .facts.ledger import COMMAND, ERROR, PATH_WRITTEN, REQUIREMENT, Fact, Ledger, Reader
from .meter.tokens import Meter
from .policies import Policy
from .run.prices import Price, rounded
from .run.replay import applied
from .words import plural

DATA_FILE = Path(__file__).resolve().parent / "data" / "probe_questions.json"
FILES_WRITTEN, COMMAND_STATUS, LAST_ERROR, NEXT_STEP = "files_written", "command_status", "last_error", "next_step"
TYPES = (FILES_WRITTEN, REQUIREMENT, COMMAND_STATUS, LAST_ERROR, NEXT_STEP)
FULL, COMPACTED = "full", "compacted"
SIDES = {FULL: "as it was", COMPACTED: "as compacted"}
DEFAULT_QUESTIONS = 20
JUDGE_MAX_TOKENS = 8  # YES or NO
EXACT_AT_MOST = 2  # tokens of a requirement or an error line an answer must repeat: the longest
SHOWN = 80  # characters of a command quoted in a question
REFERENCE = 500  # characters of the log's next step the judge is shown
_TOKEN = re.compile(r"[\w./~+-]+")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{3,}")


@cache
def templates() -> dict[str, Any]:
    """The question templates, the judge's prompt and the words never a topic (the data file)."""
    data = json.loads(DATA_FILE.read_text(encoding="utf-8"))
    return {**data, "topic_skip": frozenset(data["topic_skip"])}


@dataclass(frozen=True)
class Question:
    """One question at one call: its ``type`` (one of ``TYPES``), the words asked, what a right answer
    must repeat (``expected``: exact tokens; empty when only a judge can grade it), what the judge is
    shown as right (``reference``), the items of the ledger's facts it comes from (``sources``, all
    before the call; none for the next step, whose reference is the call's own reply), and the call's
    two requests it is appended to."""

    call: int  # position among the run's calls
    index: int  # the assistant turn's position in the input's own list
    type: str
    text: str
    expected: tuple[str, ...]
    reference: str
    sources: tuple[int, ...]
    full: Conversation = field(repr=False, compare=False)
    compacted: Conversation = field(repr=False, compare=False)

    @property
    def graded(self) -> str:
        return "exact" if self.expected else "judge"


def exact_tokens(text: str) -> tuple[str, ...]:
    """The tokens of ``text`` a right answer repeats as they are: paths, numbers and identifiers (a
    digit, or a dot, underscore or slash between word characters, or a capital after a small letter)."""
    found = (token.rstrip(".-") for token in _TOKEN.findall(text))
    return tuple(dict.fromkeys(token for token in found if len(token) >= 3 and (
        re.search(r"\d|\w[._/]\w", token) or re.search(r"[a-z][A-Z]", token))))


def _longest(tokens: tuple[str, ...]) -> tuple[str, ...]:
    kept = set(sorted(tokens, key=len, reverse=True)[:EXACT_AT_MOST])
    return tuple(token for token in tokens if token in kept)


def _normal(text: str) -> str:
    return text.lower().replace("\\", "/")


def found(token: str, answer: str) -> bool:
    """Whether ``answer`` says ``token``: as a whole token (not inside a longer name; a sentence's
    full stop after it is fine), ignoring case; a path also by its file name alone."""
    said, token = _normal(answer), _normal(token)
    forms = {token, token.rstrip("/").rsplit("/", 1)[-1]}
    return any(re.search(rf"(?<![\w.-]){re.escape(form)}(?![\w-]|\.\w)", said) for form in forms if form)


def grade(question: Question, answer: str) -> bool | None:
    """Right when every expected token is in the answer; None when only a judge can say."""
    return all(found(token, answer) for token in question.expected) if question.expected else None


def _shown(command: str) -> str:
    line = command.split("\n", 1)[0]
    return line if len(line) <= SHOWN else line[:SHOWN - 1] + "…"


def _topic(fact: Fact, exact: tuple[str, ...]) -> str | None:
    """What a requirement is about, named without giving it away: its longest word that is not a
    modal or a filler word (``topic_skip``) nor part of what the answer must repeat."""
    skip = templates()["topic_skip"]
    words = [w for w in _WORD.findall(fact.text) if w.lower() not in skip and not any(w in token for token in exact)]
    return max(words, key=len) if words else None


def _next_step(items: tuple[Any, ...], start: int) -> str:
    """What the log's agent did at the call starting at ``start``: its reply's text and tool calls."""
    said = []
    for item in items[start:]:
        if isinstance(item, ToolCall):
            said.append(f"{item.name} {item.arguments}")
        elif isinstance(item, Message) and item.role == "assistant":
            said.append(content_text(item.content))
        else:
            break
    return " ".join(text for text in said if text)[:REFERENCE]


@dataclass(frozen=True)
class _Call:
    number: int
    index: int
    start: int
    full: Conversation
    compacted: Conversation


def _at_call(call: _Call, items: tuple[Any, ...], ledger: Ledger, calls: dict[str, ToolCall],
             ordinal: int) -> list[Question]:
    """A question of each type whose facts the ledger holds at this call."""
    words = templates()["questions"]
    found: list[Question] = []

    def ask(kind: str, expected: tuple[str, ...], reference: str, sources: tuple[int, ...], **fill: str) -> None:
        found.append(Question(call.number, call.index, kind, words[kind].format(**fill), expected, reference,
                              sources, call.full, call.compacted))

    written = ledger.of_type(PATH_WRITTEN)
    if written:
        paths = tuple(fact.text for fact in written)
        ask(FILES_WRITTEN, paths, ", ".join(paths), tuple(fact.item for fact in written))
    said = ledger.of_type(REQUIREMENT)
    if said:
        fact = said[ordinal % len(said)]  # successive calls ask about successive requirements
        exact = _longest(exact_tokens(fact.text))
        topic = _topic(fact, exact)
        if topic:
            ask(REQUIREMENT, exact, fact.text, (fact.item,), topic=topic)
    coded = [fact for fact in ledger.of_type(COMMAND) if (fact.status or "").startswith("exit ")]
    if coded:
        fact = max([f for f in coded if f.failed] or coded, key=lambda f: f.items[-1])  # the last run, failing first
        ask(COMMAND_STATUS, (fact.status.split()[1],), fact.status, (fact.item,), command=_shown(fact.text))
    errors = ledger.of_type(ERROR)
    if errors:
        fact = errors[-1]
        result = call.full.items[fact.item]
        tool = calls.get(getattr(result, "call_id", ""))
        command = worked.command_of(tool.parsed_arguments() or {}) if tool else None
        subjects = templates()["subjects"]
        subject = (subjects["command"].format(command=_shown(command)) if command else
                   subjects["tool"].format(tool=tool.name if tool else "a tool"))
        ask(LAST_ERROR, _longest(exact_tokens(fact.text)), fact.text, (fact.item,), subject=subject)
    step = _next_step(items, call.start)
    if step:
        ask(NEXT_STEP, (), step, ())  # its reference is the call's own reply, no fact
    return found


def _calls(conversation: Conversation, policy: Policy, meter: Meter, mode: str) -> tuple[list[_Call], list[int]]:
    """Every call (its number, index, where its request ends, the request as it was and as the
    policy made it) and the numbers of those where the policy fired."""
    calls, fired = [], []
    items = conversation.items
    for number, (start, result) in enumerate(applied(conversation, policy, meter, mode)):
        origin = items[start].origin
        calls.append(_Call(number, origin.index if origin else start, start,
                           conversation.with_items(items[:start]), result.conversation))
        if result.fired:
            fired.append(number)
    return calls, fired


def questions(conversation: Conversation, policy: Policy, meter: Meter, *, mode: str = "stored",
              at: tuple[int, ...] | None = None, limit: int = DEFAULT_QUESTIONS) -> tuple[Question, ...]:
    """The questions to ask, nothing sent: at the calls ``at`` (numbers among the run's calls), by
    default at the calls where the policy fired, spread evenly with the last among them; at most
    ``limit``, spread evenly too. Each asks about the ledger as it stood at its call (a command's
    status is its last run's before that call), so a request as it was holds every fact asked."""
    conversation, _ = probe.with_tools(conversation)
    calls, fired = _calls(conversation, policy, meter, mode)
    if at is not None:
        wrong = [number for number in at if not 0 <= number < len(calls)]
        if wrong:
            raise InputError(f"the run has {plural(len(calls), 'call')}, numbered from 0", where="--at",
                             value=", ".join(map(str, wrong)))
        chosen = sorted(set(at))
    else:
        chosen = list(probe.sample(tuple(fired), max(1, -(-limit // len(TYPES)))))
    reader, tools, read = Reader(), {}, 0
    asked: list[Question] = []
    items = conversation.items
    for ordinal, number in enumerate(chosen):
        call = calls[number]
        for position in range(read, call.start):
            reader.add(position, items[position])
            if isinstance(items[position], ToolCall):
                tools[items[position].call_id] = items[position]
        read = call.start
        asked += _at_call(call, items, reader.ledger(), tools, ordinal)
    if len(asked) > limit:
        asked = [asked[k] for k in probe.sample(tuple(range(len(asked))), limit)]
    return tuple(asked)


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
            correct[side] = grade(question, said[side])
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


def estimate_lines(quiz: Quiz, timeout: float | None = None) -> list[str]:
    """What will be asked and what it may cost, in the words ``probe``'s estimate uses."""
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
              "; without --judge the questions only a judge can grade are asked but not graded")
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
