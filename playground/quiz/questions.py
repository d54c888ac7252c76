"""The questions: at chosen calls, one per type whose facts the ledger holds by that call — the files
written so far (paths), what the user said about a topic (requirements), the exit status of the last
command that stated one, the last error of a call, and what the agent will do next (the log's own next
step is the reference, for the judge) — from the templates in ``data/probe_questions.json``. Offline
and free: the calls' requests are replayed, nothing is sent."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from .. import probe
from ..conversation import Conversation, Message, ToolCall, content_text
from ..errors import InputError
from ..facts import worked
from ..facts.ledger import COMMAND, ERROR, PATH_WRITTEN, REQUIREMENT, Fact, Ledger, Reader
from ..meter.tokens import Meter
from ..policies import Policy
from ..run.replay import applied, call_starts
from ..words import plural
from .grading import exact_tokens, longest

DATA_FILE = Path(__file__).resolve().parents[1] / "data" / "probe_questions.json"
FILES_WRITTEN, COMMAND_STATUS, LAST_ERROR, NEXT_STEP = "files_written", "command_status", "last_error", "next_step"
TYPES = (FILES_WRITTEN, REQUIREMENT, COMMAND_STATUS, LAST_ERROR, NEXT_STEP)
DEFAULT_QUESTIONS = 20
SHOWN = 80  # characters of a command quoted in a question
REFERENCE = 500  # characters of the log's next step the judge is shown
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

    @property
    def asks(self) -> str:
        """The question without the preamble every template shares (*Pause the task …:*): what a
        table shows."""
        return self.text[self.text.find(":") + 2:]

    @property
    def answer_key(self) -> str:
        """What a right answer says, in words: the exact tokens, or the judge's reference."""
        return ", ".join(self.expected) if self.expected else f"(judge) {self.reference}"


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
    made: list[Question] = []

    def ask(kind: str, expected: tuple[str, ...], reference: str, sources: tuple[int, ...], **fill: str) -> None:
        made.append(Question(call.number, call.index, kind, words[kind].format(**fill), expected, reference,
                              sources, call.full, call.compacted))

    written = ledger.of_type(PATH_WRITTEN)
    if written:
        paths = tuple(fact.text for fact in written)
        ask(FILES_WRITTEN, paths, ", ".join(paths), tuple(fact.item for fact in written))
    said = ledger.of_type(REQUIREMENT)
    if said:
        fact = said[ordinal % len(said)]  # successive calls ask about successive requirements
        exact = longest(exact_tokens(fact.text))
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
        ask(LAST_ERROR, longest(exact_tokens(fact.text)), fact.text, (fact.item,), subject=subject)
    step = _next_step(items, call.start)
    if step:
        ask(NEXT_STEP, (), step, ())  # its reference is the call's own reply, no fact
    return made


def _fired(conversation: Conversation, policy: Policy, meter: Meter, mode: str) -> tuple[int, ...]:
    """The numbers of the calls where the policy fired (a replay that keeps no request)."""
    return tuple(number for number, (_, result) in enumerate(applied(conversation, policy, meter, mode))
                 if result.fired)


def _calls(conversation: Conversation, policy: Policy, meter: Meter, mode: str,
           chosen: list[int]) -> list[_Call]:
    """The chosen calls (their number, index, where the request ends, the request as it was and as
    the policy made it), the replay stopping at the last: only these requests are kept, so a long
    run's thousands of requests are never all held at once."""
    items, wanted, calls = conversation.items, set(chosen), []
    for number, (start, result) in enumerate(applied(conversation, policy, meter, mode, until=max(chosen) + 1)):
        if number in wanted:
            origin = items[start].origin
            calls.append(_Call(number, origin.index if origin else start, start,
                               conversation.with_items(items[:start]), result.conversation))
    return calls


def questions(conversation: Conversation, policy: Policy, meter: Meter, *, mode: str = "stored",
              at: tuple[int, ...] | None = None, limit: int = DEFAULT_QUESTIONS) -> tuple[Question, ...]:
    """The questions to ask, nothing sent: at the calls ``at`` (numbers among the run's calls), by
    default at the calls where the policy fired, spread evenly with the last among them; at most
    ``limit``, spread evenly too. Each asks about the ledger as it stood at its call (a command's
    status is its last run's before that call), so a request as it was holds every fact asked."""
    conversation, _ = probe.with_tools(conversation)
    if at is not None:
        count = len(call_starts(conversation.items))
        wrong = [number for number in at if not 0 <= number < count]
        if wrong:
            raise InputError(f"the run has {plural(count, 'call')}, numbered from 0", where="--at",
                             value=", ".join(map(str, wrong)))
        chosen = sorted(set(at))
    else:
        chosen = list(probe.sample(_fired(conversation, policy, meter, mode), max(1, -(-limit // len(TYPES)))))
    if not chosen:
        return ()
    asked: list[Question] = []
    items = conversation.items
    reader, tools, read = Reader(), {}, 0
    for ordinal, call in enumerate(_calls(conversation, policy, meter, mode, chosen)):
        for position in range(read, call.start):
            reader.add(position, items[position])
            if isinstance(items[position], ToolCall):
                tools[items[position].call_id] = items[position]
        read = call.start
        asked += _at_call(call, items, reader.ledger(), tools, ordinal)
    if len(asked) > limit:
        asked = [asked[k] for k in probe.sample(tuple(range(len(asked))), limit)]
    return tuple(asked)
