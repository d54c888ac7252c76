"""What it keeps, as values (``present.keeps``): a replay's facts with their fate at the end, the
lost-then-used first, the totals and the survival line per type; and which fact types a summary
dropped (``summarize.dropped_facts``)."""

from __future__ import annotations

import json
from typing import Any

from playground import formats
from playground.facts.ledger import COMMAND, ERROR, PATH_READ, PATH_WRITTEN, REQUIREMENT, TYPES
from playground.meter.tokens import Meter
from playground.policies import make
from playground.present import TYPE_WORDS, dropped_line, what_it_keeps
from playground.run.fates import FATES, KEPT, LOST, RECOVERABLE
from playground.run.prices import read_prices
from playground.run.replay import replay
from playground.summarize import dropped_facts

READS = 60  # more calls than the offline summary's call section shows (its newest 40)
REQUIRED = "You must keep every handler's signature unchanged."
LOCKED = "Error: src/legacy.py is locked by another process"


def _call(call_id: str, name: str, arguments: dict[str, Any], result: str) -> list[dict[str, Any]]:
    return [{"role": "assistant", "content": None, "tool_calls": [{"id": call_id, "type": "function",
             "function": {"name": name, "arguments": json.dumps(arguments)}}]},
            {"role": "tool", "tool_call_id": call_id, "content": result}]


def _code(module: int) -> str:
    return "\n".join(f"def handler_{module}_{n}(request):\n    return respond(request, {n})" for n in range(8))


def handmade() -> dict[str, Any]:
    """A run with known facts: one requirement, ``READS`` files read, one read that fails (a long error,
    so a reference is smaller), one command; the last reply names the first file read again."""
    locked = LOCKED + "\n" + "\n".join(f"  held by pid {4000 + n}" for n in range(30))
    return {"model": "gpt-4o", "messages": [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": f"Port the handlers. {REQUIRED}"},
        *[message for k in range(READS)
          for message in _call(f"r{k}", "read_file", {"file_path": f"src/mod_{k:03d}.py"}, _code(k))],
        *_call("l", "read_file", {"file_path": "src/legacy.py"}, locked),
        *_call("t", "bash", {"command": "python -m pytest -q"}, "Exit code 0\n45 passed"),
        {"role": "assistant", "content": "Done; src/mod_000.py still needs a docstring."}]}


def _replay(name: str, **options: Any):
    conversation = formats.read(handmade())
    return replay(conversation, make(name, **options), Meter("gpt-4o"), read_prices().get("gpt-4o"))


def _share_at(view, kind: str, call: int) -> float:
    """The survival line's value for ``kind`` at ``call``: a step line holds its last row's share."""
    rows = [row for row in view.survival if row["type"] == TYPE_WORDS[kind] and row["call"] <= call]
    return rows[-1]["share"]


def test_a_summary_loses_the_oldest_files_read_and_the_one_used_later_comes_first():
    run = _replay("summarize", limit=2_000, keep_steps=1)
    view = what_it_keeps(run)
    assert view.calls == len(run.calls) == READS + 3
    stated = {REQUIREMENT: 1, PATH_WRITTEN: 0, PATH_READ: READS + 1, COMMAND: 1, ERROR: 1}
    assert {kind: sum(fates.values()) for kind, fates in view.totals.items()} == stated
    assert view.totals[REQUIREMENT][KEPT] == 1 and view.totals[ERROR][KEPT] == 1  # the summary's own sections
    lost = view.totals[PATH_READ][LOST]
    assert 0 < lost <= READS - 40  # the call section shows its newest 40 calls
    # every fact once, its fate the totals' own
    assert len(view.facts) == sum(stated.values())
    assert {kind: {fate: sum(1 for f in view.facts if f.type == kind and f.fate == fate) for fate in FATES}
            for kind in TYPES} == view.totals
    first = view.facts[0]
    assert (first.type, first.text, first.fate, first.used_at) == (PATH_READ, "src/mod_000.py", LOST, READS + 2)
    assert view.lost_then_used == (first,)
    read = formats.read(handmade()).items[first.item]  # the call that read it, and the path in it
    assert (read.call_id, first.span) == ("r0", (0, len("src/mod_000.py")))
    rest = view.facts[1:]
    order = [(TYPES.index(f.type), {LOST: 0, RECOVERABLE: 1, KEPT: 2}[f.fate]) for f in rest]
    assert order == sorted(order)  # then by type, lost first
    # the survival line: at every firing, each type's share is the tracker's own count
    assert run.facts is not None and run.facts.firings
    for call, counts in run.facts.firings:
        for kind, fates in counts.items():
            if sum(fates.values()):
                assert _share_at(view, kind, call) == (fates[KEPT] + fates[RECOVERABLE]) / sum(fates.values())
    last = {row["type"]: row for row in view.survival if row["call"] == view.calls - 1}
    assert last[TYPE_WORDS[PATH_READ]]["share"] == (READS + 1 - lost) / (READS + 1) < 1
    assert last[TYPE_WORDS[REQUIREMENT]]["share"] == 1.0


def test_a_reference_leaves_the_error_recoverable():
    view = what_it_keeps(_replay("rules", threshold=0, summarize=False, compact_errors=True))
    assert view.totals[ERROR] == {KEPT: 0, RECOVERABLE: 1, LOST: 0}
    assert not view.lost_then_used and all(fate[LOST] == 0 for fate in view.totals.values())
    error = next(fact for fact in view.facts if fact.type == ERROR)
    assert (error.text, error.fate, error.span) == (LOCKED, RECOVERABLE, (0, len(LOCKED)))
    last = {row["type"]: row["share"] for row in view.survival if row["call"] == view.calls - 1}
    assert last[TYPE_WORDS[ERROR]] == 1.0  # recoverable counts as surviving


def test_doing_nothing_keeps_every_fact_at_every_call():
    view = what_it_keeps(_replay("none"))
    assert all(row["share"] == 1.0 for row in view.survival) and not view.lost_then_used
    assert {fact.fate for fact in view.facts} == {KEPT}


def test_the_summary_of_an_endpoint_that_leaves_out_a_path_dropped_that_type():
    conversation = formats.read(handmade())
    fourth = next(n for n, item in enumerate(conversation.items) if getattr(item, "call_id", None) == "r3")
    span = conversation.items[1:fourth]  # the requirement, three files read
    stub = f"The user said: {REQUIRED} Read src/mod_000.py and src/mod_001.py."
    found = dropped_facts(span, stub)
    assert found == {REQUIREMENT: (0, 1), PATH_READ: (1, 3)}
    assert dropped_line(found) == ("Facts the endpoint's summary dropped (not in it word for word): paths read "
                                   "(1 of 3). The request no longer holds them.")
    assert dropped_facts(span, stub + " And src/mod_002.py.") == {REQUIREMENT: (0, 1), PATH_READ: (0, 3)}
    assert "names every" in dropped_line(dropped_facts(span, stub + " And src/mod_002.py."))
    assert dropped_facts(conversation.items[:1], "anything") == {}  # the system prompt states no fact
