"""The agent's own compactions that its log does not record, found from its bills.

An agent that manages its context (Cline's context manager, Roo Code's condense, Aider's chat-history
summary, opencode's prune, Gemini CLI's masking) sends less than its log holds, and many logs keep no
line that says so. Their bills do: a run's requests only grow, so a bill that falls a long way and
stays down is the agent cutting what it sends. Measured against the log's whole history, such a run
is a run that never happened: a 221-call Cline task billed at most 177,696 tokens a call replays as a
last request of 434,152, larger than any window.

A drop counts when it is at least ``DROP_SHARE`` of the bill before and 8,000 tokens, from a bill
of at least 32,000, and stays down: the next bill takes back less than half of the fall
(``conversation.falls``, the rule Cline's reader uses too; smaller falls are a meter's noise, a
cached prefix's rounding or a shorter system prompt, and a lone low bill is a side call, not a cut).

What the agent then sent is reconstructed with the rule most agents share when the log names none:
the instructions and the first user message (the task) stay, and the oldest of the rest go — as few as
make the request's count, through the log's own calibration (``billed.fit_bills``), come nearest the bill
that fell. A cut never parts a result from its call, and a fall no cut explains to within
``FIT_SHARE`` (the bill is below what the agent's own prompt costs) is named in the note, not
reconstructed. A reader that knows its agent's rule (Cline's halves and quarters) records the agent's
own reconstruction instead; a drop a logged or read compaction already explains is not inferred again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import accumulate

from ..conversation import AgentCompaction, Conversation, Item, Message, falls, is_instruction, links, role_of
from ..meter.tokens import Meter
from ..policies import NonePolicy
from ..words import plural
from .billed import BilledCall, LogFit, fit_bills
from .prices import Price
from .replay import replay

DROP_SHARE = 0.25
FIT_SHARE = 0.15  # a reconstruction is kept only if its calibrated count comes this near the bill
WHERE = "inferred from the bills"


@dataclass(frozen=True)
class Drop:
    """A bill that fell and stayed down: ``call`` is the billed call (``BilledCall``) that paid less."""

    before: BilledCall
    call: BilledCall


def drops(calls: Sequence[BilledCall]) -> tuple[Drop, ...]:
    """The calls whose bill fell as a cut makes it fall (``conversation.falls``, at ``DROP_SHARE``)."""
    return tuple(Drop(calls[k - 1], calls[k]) for k in falls([call.billed for call in calls], DROP_SHARE))


def infer(conversation: Conversation, price: Price) -> Conversation:
    """``conversation`` with the compactions its bills imply and its log does not record (each
    ``inferred``, ``where`` = "inferred from the bills"), and a note that names them; unchanged when
    the log has no bills or none fell. Counted with a fresh meter of the log's model, as the bills'
    fit is (a calibration in effect must not fit itself)."""
    if not conversation.billed or any(record.inferred for record in conversation.compactions):
        return conversation
    raw = tuple(BilledCall(n, position, 0, tokens) for n, (position, tokens) in enumerate(sorted(conversation.billed)))
    if not [drop for drop in drops(raw) if not _explained(drop, conversation.compactions)]:
        return conversation  # read from the bills alone: nothing is counted for a log whose bills never fall
    meter = Meter(conversation.model or price.model)
    run = replay(conversation, NonePolicy(), meter, price, baseline="full-history")
    bills = dict(conversation.billed)
    calls = tuple(BilledCall(n, call.position, call.tokens_without, bills[call.position])
                  for n, call in enumerate(run.calls) if call.position in bills)
    found = [drop for drop in drops(calls) if not _explained(drop, conversation.compactions)]
    if not found:
        return conversation
    log_fit = fit_bills(calls, conversation.billed_digits)
    counts = meter.items(conversation.items)
    fixed = {call.position: call.tokens_without - sum(counts[:call.position]) for call in run.calls}
    records = list(conversation.compactions)
    for drop in found:
        start = drop.call.position
        before = _latest(records, start)
        record = _reconstruct(conversation.items, counts, before, start, drop.call.billed, log_fit, fixed[start])
        if record is not None:
            records = sorted([*records, record], key=lambda r: r.position)
    inferred = [r for r in records if r.inferred]
    return replace(conversation, compactions=tuple(records), notes=(*conversation.notes, _note(found, inferred)))


def _explained(drop: Drop, records: Sequence[AgentCompaction]) -> bool:
    """A compaction the log (or its reader) records lies between the two calls: the fall is that one."""
    return any(drop.before.position < record.position <= drop.call.position for record in records)


def _latest(records: Sequence[AgentCompaction], end: int) -> AgentCompaction | None:
    before = [record for record in records if record.position <= end]
    return before[-1] if before else None


def _sent(items: tuple[Item, ...], record: AgentCompaction | None, end: int) -> list[int] | None:
    """The log positions the agent sent for the call at ``end``; None when an earlier compaction
    added items of its own (a summary) that a cut of positions alone cannot place."""
    if record is None:
        return list(range(end))
    if record.added:
        return None
    return [*record.kept, *range(record.position, end)]


def _head(items: tuple[Item, ...], sent: list[int]) -> int:
    """How many of the sent positions every cut keeps: the leading instructions and the first user message."""
    k = 0
    while k < len(sent) and is_instruction(items[sent[k]]):
        k += 1
    if k < len(sent) and isinstance(items[sent[k]], Message) and items[sent[k]].role == "user":
        k += 1
    return k


def _cuts(items: tuple[Item, ...], sent: list[int], head: int) -> list[int]:
    """Where the kept rest may begin (an index into ``sent`` after the head): at a message or a call,
    never between a call and a result that answers it, and leaving at least the newest item."""
    answering = links(items)
    index = {position: k for k, position in enumerate(sent)}
    barred = [0] * (len(sent) + 1)  # a cut at c is barred when a result at i answers a call at j, j < c <= i
    for k, position in enumerate(sent):
        call = answering.get(position)
        j = index.get(call) if call is not None else None
        if j is not None and j < k:
            barred[j + 1] += 1
            barred[k + 1] -= 1
    open_ = list(accumulate(barred))
    return [c for c in range(head + 1, len(sent)) if not open_[c] and _begins_turn(items, sent, c)]


def _begins_turn(items: tuple[Item, ...], sent: list[int], c: int) -> bool:
    """A user message, or the first item of an assistant turn: where a request can begin its rest."""
    item = items[sent[c]]
    if isinstance(item, Message) and item.role == "user":
        return True
    return role_of(item) == "assistant" and role_of(items[sent[c - 1]]) != "assistant"


def _reconstruct(items: tuple[Item, ...], counts: Sequence[int], before: AgentCompaction | None, start: int,
                 bill: int, log_fit: LogFit, fixed: int) -> AgentCompaction | None:
    """The compaction that makes the request at ``start`` nearest its ``bill``: the head, then the
    newest sent items from the best cut on (``fixed``: what surrounds the items, tools and priming)."""
    sent = _sent(items, before, start)
    if not sent:
        return None
    head = _head(items, sent)
    cuts = _cuts(items, sent, head)
    if not cuts:
        return None
    tail = list(accumulate((counts[p] for p in reversed(sent)), initial=0))  # tail[m]: the newest m items
    kept_head = sum(counts[p] for p in sent[:head])

    def miss(c: int) -> float:
        return abs(log_fit.estimate(fixed + kept_head + tail[len(sent) - c], start) - bill)

    best = min(cuts, key=miss)
    if miss(best) > FIT_SHARE * bill:
        return None  # no cut of the log explains the bill: the agent changed more than its history (its own prompt)
    kept = (*sent[:head], *sent[best:])
    dropped = len(sent) - len(kept)
    return AgentCompaction(start, kept=kept, summary=False, inferred=True, where=WHERE,
                           trigger=f"{plural(dropped, 'item')} left out", log=items)


def _note(found: Sequence[Drop], inferred: Sequence[AgentCompaction]) -> str:
    """What the bills showed, in words for the notes."""
    falls = ", ".join(f"call {d.call.call}: {d.before.billed:,} → {d.call.billed:,}" for d in found[:4])
    more = f" and {len(found) - 4} more" if len(found) > 4 else ""
    said = (f"the bills fall {plural(len(found), 'time')} and stay down ({falls}{more}): the agent cut its own "
            "context there though its log does not say so")
    if not inferred:
        return (f"{said}. No cut of the log's history explains the bill (it is below what the agent's own prompt "
                "cost before), so the run as it ran is not reconstructed and the full history stays the baseline")
    unexplained = len(found) - len(inferred)
    return (f"{said}. As-it-ran follows {plural(len(inferred), 'reconstruction')} inferred from the bills (the "
            "instructions and first user message kept, the oldest of the rest left out until the request's count, "
            "calibrated on the log, meets the bill) and is the baseline: the full history the log holds was never "
            "sent" + (f"; {plural(unexplained, 'fall')} no cut explains left as the log has it" if unexplained else ""))

