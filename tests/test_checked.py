"""Checked suggestions: the suggested rules, checked on the run they are for — a row whose hidden content the
agent used again, for too little saving, is not suggested (``tune.checked``)."""

from __future__ import annotations

import json

import pytest

from playground import formats
from playground.conversation import Conversation, Message, ToolCall, ToolResult
from playground.meter.tokens import Meter
from playground.policies import MaskingPolicy, NonePolicy, RulesPolicy
from playground.run.hidden import calls_with
from playground.run.prices import read_prices
from playground.run.replay import replay
from playground.tune.checked import BAR, check, checked_rules
from playground.tune.suggest import suggest_rules

from .conftest import SHARED, TRACES, shared

PRICES = read_prices()
SESSIONS = SHARED / "sessions"


def _code(n: int, lines: int) -> str:
    return "\n".join(f"    result_{n}_{k} = compute_value_{n}_{k}(source_table_{k}, weight={n * 1000 + k})"
                     for k in range(lines))


def _editing_run() -> Conversation:
    """An agent that reads twelve large modules (never quoted again) and edits one file sixteen
    times, each edit's ``old_string`` copying a line of the ``new_string`` it wrote five edits
    before — what a real agent's next edits do with its own last code."""
    items: list = [Message(role="user", content="Refactor the pipeline.")]
    for n in range(12):
        items += [Message(role="assistant", content=f"Reading module {n}."),
                  ToolCall(call_id=f"r{n}", name="Read", arguments=json.dumps({"file_path": f"src/m{n}.py"})),
                  ToolResult(call_id=f"r{n}", name="Read", content=f"# module {n}\n" + _code(100 + n, 60))]
    for n in range(16):
        old = _code(n - 5, 4).splitlines()[1] if n >= 5 else f"placeholder_{n} = None"
        arguments = {"file_path": "src/pipeline.py", "old_string": old, "new_string": _code(n, 8)}
        items += [Message(role="assistant", content=f"Edit {n}."),
                  ToolCall(call_id=f"e{n}", name="Edit", arguments=json.dumps(arguments)),
                  ToolResult(call_id=f"e{n}", name="Edit", content="The file src/pipeline.py has been updated.")]
    items.append(Message(role="assistant", content="Done."))
    return Conversation(items=tuple(items), format="anthropic", model="claude-sonnet-4-5")


def test_a_row_whose_hidden_content_the_agent_copies_back_is_not_suggested():
    conversation = _editing_run()
    meter = Meter(conversation.model)
    plain = suggest_rules(conversation, meter)
    assert ("tool_calls", "Edit", "new_string") in {(r.table, r.tool, r.rule.get("argument")) for r in plain.rows}
    checked = checked_rules(conversation, meter)
    kept = {(r.table, r.tool, r.rule.get("argument")) for r in checked.rows}
    assert ("tool_calls", "Edit", "new_string") not in kept
    assert ("tool_results", "Read", None) in kept, "what the agent never quoted again stays"
    note = next(n for n in checked.notes if n.startswith("Edit.new_string: not suggested"))
    assert f"under {BAR:g}× the share of calls" in note


@pytest.mark.parametrize("name", ["sweagent_marshmallow-1867_function_calling.openai.json",
                                  "invariant_explorer_webarena_trace2.openai.json"])
def test_a_run_where_nothing_hidden_is_used_keeps_every_row(name):
    conversation = formats.read_path(shared(TRACES / name))
    meter = Meter(conversation.model or "gpt-4o")
    plain = suggest_rules(conversation, meter)
    assert check(conversation, plain, meter) is plain


@pytest.mark.parametrize("name", ["claude-code-session-196820da.jsonl", "claude-code-session-624a4a58.jsonl"])
def test_on_real_claude_code_logs_the_suggested_rules_hide_fewer_calls_than_masking_at_its_best_saving(name):
    """The issue's measure (``scripts/benchmark_hidden.py``: stored, threshold 5,000, keep_recent 3, no
    summary): the checked suggestion saves at least what masking saves at the window whose saving is
    closest (or its largest), with fewer calls that used what their request had hidden — and none of
    its hidden pieces lost (each behind a reference)."""
    conversation = formats.read_path(shared(SESSIONS / name))
    meter, price = Meter(conversation.model), PRICES.get(conversation.model)
    base = replay(conversation, NonePolicy(), meter, price).totals.tokens_without
    run = replay(conversation, RulesPolicy(rules=checked_rules(conversation, meter).rules(), threshold=5_000,
                                           keep_recent=3, summarize=False), meter, price)
    saved = 1 - run.totals.tokens_with / base
    masked = [replay(conversation, MaskingPolicy(window), meter, price) for window in (1, 2, 3, 5, 7, 10, 15, 20, 30)]
    closest = min(masked, key=lambda m: abs((1 - m.totals.tokens_with / base) - saved))
    assert saved >= 1 - closest.totals.tokens_with / base - 0.01
    assert calls_with(run.hidden_used) < calls_with(closest.hidden_used)
    assert not any(not use.retrievable for use in run.hidden_used)
