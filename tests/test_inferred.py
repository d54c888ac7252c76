"""The agent's own cuts found from its bills (``run.inferred``), and the run as it ran as the baseline.

The runs here are made by an agent we simulate: it reads files, and once its request passes a limit it
keeps its instructions and task and drops the oldest turns, as Cline, Roo Code and others do, without a
line in its log. Its provider bills what it really sent plus a system prompt the log does not hold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playground.conversation import Conversation, Message, ToolCall, ToolResult
from playground.meter.tokens import Meter
from playground.policies import NonePolicy, make
from playground.run.billed import BilledCall, fit_bills
from playground.run.inferred import drops, infer
from playground.run.prices import read_prices
from playground.run.replay import AS_RAN, FULL, replay, replay_to_json

MODEL = "gpt-4o"
PROMPT = 6_000  # the agent's system prompt and tools: billed, not in the log
PRICE = read_prices().get(MODEL)


def _turns(n: int, lines: int) -> list:
    items = []
    for k in range(n):
        items.append(ToolCall(call_id=f"c{k}", name="read_file", arguments=json.dumps({"path": f"src/m{k}.py"})))
        body = "\n".join(f"def f{k}_{j}(x): return x * {j}  # line {j} of module {k}" for j in range(lines))
        items.append(ToolResult(call_id=f"c{k}", content=body, name="read_file"))
    return items


def _agent_run(turns: int = 40, lines: int = 120, limit: int = 60_000, keep: float = 0.5) -> tuple[Conversation, dict]:
    """A run whose agent drops the oldest ``keep`` share of its turns whenever its request passes ``limit``;
    the bills are what it sent (counted by the meter) plus ``PROMPT``. Also what it really sent, by call."""
    head = [Message(role="system", content="You are a coding agent."), Message(role="user", content="Refactor src/.")]
    body = _turns(turns, lines)
    items = (*head, *body)
    meter = Meter(MODEL)
    sent_start = len(head)  # the agent's request: head + items[sent_start:call]
    billed, truth = [], {}
    for position in range(len(head), len(items) + 1, 2):  # each call's reply begins at a call item
        if position == len(items):
            break
        request = Conversation((*head, *items[sent_start:position]), format="chat", model=MODEL)
        tokens = meter.count(request).total
        if tokens + PROMPT > limit:  # cut: keep the newest share of the turns, in whole call+result pairs
            pairs = (position - sent_start) // 2
            sent_start = position - 2 * max(1, round(pairs * keep))
            request = Conversation((*head, *items[sent_start:position]), format="chat", model=MODEL)
            tokens = meter.count(request).total
        billed.append((position, tokens + PROMPT))
        truth[position] = tokens + PROMPT
    return Conversation(items, format="chat", model=MODEL, source="handmade", billed=tuple(billed)), truth


def test_a_cut_the_log_does_not_record_is_found_from_the_bills_and_as_it_ran_follows_it_within_5_percent():
    conversation, truth = _agent_run()
    found = infer(conversation, PRICE)
    assert [r.inferred for r in found.compactions] == [True] * len(found.compactions) and found.compactions
    assert any("inferred from the bills" in note or "stay down" in note for note in found.notes)
    run = replay(found, NonePolicy(), Meter(MODEL), PRICE)
    assert run.baseline == AS_RAN and run.inferred
    calls = tuple(BilledCall(n, c.position, c.tokens_without, truth[c.position]) for n, c in enumerate(run.calls))
    log_fit = fit_bills(calls)
    misses = [abs(log_fit.estimate(c.counted) - c.billed) / c.billed for c in calls]
    assert max(misses) < 0.05, misses
    # the full history stays a second figure, and grows past what the agent ever sent
    assert max(run.full_history(c) for c in run.calls) > max(truth.values())
    assert all(c.tokens_full is not None for c in run.calls)


def test_the_replay_json_names_the_baseline_the_inferred_calls_and_both_figures():
    conversation, _ = _agent_run()
    run = replay(infer(conversation, PRICE), make("rules", threshold=20_000), Meter(MODEL), PRICE)
    data = replay_to_json(run)
    totals = data["totals"]
    assert totals["baseline"] == "as-it-ran"
    assert totals["inferred_compactions"] == list(run.inferred) and totals["inferred_compactions"]
    assert totals["tokens_full_history"] > totals["tokens_without"]
    assert all(call["as_ran_tokens"] <= call["full_history_tokens"] for call in data["calls"])
    whole = replay_to_json(replay(conversation, make("rules", threshold=20_000), Meter(MODEL), PRICE))
    assert whole["totals"]["baseline"] == "full-history" and "tokens_full_history" not in whole["totals"]


def test_a_baseline_asked_for_by_name_is_kept_and_a_bad_one_is_refused():
    conversation, _ = _agent_run()
    found = infer(conversation, PRICE)
    assert replay(found, NonePolicy(), Meter(MODEL), PRICE, baseline=FULL).baseline == FULL
    try:
        replay(found, NonePolicy(), Meter(MODEL), PRICE, baseline="fiction")
    except Exception as error:
        assert "baseline" in str(error)
    else:
        raise AssertionError("an unknown baseline was taken")


def test_a_full_history_over_the_window_says_the_agent_must_have_cut_it():
    conversation, _ = _agent_run(turns=60, lines=400, limit=100_000)
    run = replay(infer(conversation, PRICE), NonePolicy(), Meter(MODEL), PRICE)
    assert max(run.full_history(c) for c in run.calls) > PRICE.context_window
    note = run.over_window()
    assert note and "no provider accepts this; the agent must have cut it" in note
    assert replay_to_json(run)["notes"] == [note]


def test_a_lone_low_bill_that_is_taken_back_is_no_cut():
    calls = [BilledCall(n, n, 0, tokens) for n, tokens in enumerate((40_000, 50_000, 20_000, 51_000, 52_000))]
    assert drops(calls) == ()
    calls[3] = BilledCall(3, 3, 0, 22_000)
    assert [d.call.call for d in drops(calls)] == [2]


@given(st.lists(st.integers(min_value=1, max_value=5_000), min_size=1, max_size=60))
def test_bills_that_only_grow_imply_no_cut(growth):
    bills, total = [], 0
    for step in growth:
        total += step
        bills.append(total)
    calls = [BilledCall(n, n, 0, tokens) for n, tokens in enumerate(bills)]
    assert drops(calls) == ()


def test_a_log_without_bills_or_without_a_fall_is_left_as_it_is():
    conversation, _ = _agent_run(limit=10**9)
    assert infer(conversation, PRICE) is conversation
    bare = Conversation(conversation.items, format="chat", model=MODEL)
    assert infer(bare, PRICE) is bare


def test_the_context_held_at_the_end_is_what_the_agent_sent_last_and_then_its_reply():
    """The page's meters measure ``held``: the run as it ran's last request, then the log's last turn."""
    from playground.policies import AsItRanPolicy
    from playground.policies.as_it_ran import held
    from playground.run.replay import applied

    conversation, _ = _agent_run()
    found = infer(conversation, PRICE)
    *_, (start, last) = applied(found, AsItRanPolicy(), Meter(MODEL))
    context = held(found).items
    assert context[:len(last.conversation.items)] == last.conversation.items
    assert context[len(last.conversation.items):] == found.items[start:]
    assert len(context) < len(found.items) and held(conversation) is conversation


def _logs_with_bills() -> list:
    from .conftest import SHARED

    data = Path(__file__).parent / "data"
    return [*sorted(p for p in data.iterdir() if p.name != "README.md"),
            *sorted((SHARED / "sessions").glob("*.jsonl"))]


@pytest.mark.parametrize("path", _logs_with_bills(), ids=lambda path: path.name)
def test_on_every_real_log_with_bills_the_baseline_is_within_10_percent_of_them_after_its_own_fit(path):
    """The issue's measure: the baseline's per-call tokens against the log's bills on the median call, after
    the log's calibration (``billed.log_fit``), and no baseline request past the window without the note."""
    from playground import formats
    from playground.run.billed import log_fit

    from .conftest import shared

    conversation = formats.read_path(shared(path))
    if not conversation.billed:
        pytest.skip("this log records no bills")
    price = read_prices().get(conversation.model, conversation.format)
    conversation = infer(conversation, price)
    run = replay(conversation, NonePolicy(), Meter(conversation.model or price.model), price)
    found = log_fit(conversation, price, run)
    bills = dict(conversation.billed)
    misses = sorted(abs(found.estimate(call.tokens_without, call.position) - bill) / bill
                    for call in run.calls if (bill := bills.get(call.position)))
    assert misses[len(misses) // 2] <= 0.10
    window = price.context_window
    assert not window or max(call.tokens_without for call in run.calls) <= window or run.over_window()
