"""The Before / after view of one call of a replayed run (``view.call_view``): its rows are the
call's request without the policy, beside the request the policy sent, item for item, and a
summary folds the span it replaced."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from playground import formats
from playground.meter.tokens import Meter
from playground.policies import OURS, NonePolicy, RulesPolicy, SummarizePolicy, make
from playground.present import view
from playground.run.prices import read_prices
from playground.run.replay import call_starts, replay

from .strategies import REQUESTS
from .test_agent_policies import THEIR_FIRING
from .test_compaction import book_scenario
from .test_replay import FIRING

GPT4O = read_prices().get("gpt-4o")


def book() -> formats.Conversation:
    return formats.read(book_scenario())


def test_a_call_shows_everything_before_its_turn_and_its_own_numbers():
    conversation, meter = book(), Meter("gpt-4o")
    whole = replay(conversation, RulesPolicy(threshold=0, summarize=False), meter, GPT4O, cache="none")
    for number, call in enumerate(whole.calls):
        run = replay(conversation, RulesPolicy(threshold=0, summarize=False), meter, GPT4O, cache="none",
                     until=number + 1)
        shown = view.call_view(conversation, run, len(whole.calls), meter)
        assert (shown.number, shown.calls, shown.call) == (number, 4, call)  # a replay stopped early agrees
        rows = view.call_rows(shown, view.call_positions(shown, False))
        assert len(rows) == call.position == len(shown.without.items)
        assert [row.before for row in rows] == [view.shown_text(item) for item in conversation.items[:call.position]]
        assert sum(row.tokens_after for row in rows) == sum(shown.tokens_sent)


def test_rows_mark_what_the_policy_changed_and_where_the_cache_ends():
    conversation, meter = book(), Meter("gpt-4o")
    run = replay(conversation, RulesPolicy(threshold=0, summarize=False), meter, GPT4O, cache="none")
    shown = view.call_view(conversation, run, len(run.calls), meter)
    rows = view.call_rows(shown, range(len(shown.without.items)))
    changed = [row.position for row in rows if row.changed]
    assert changed and changed == view.call_positions(shown, True)
    for row in rows:
        assert row.changed == (shown.sent.items[row.position] != shown.without.items[row.position])
        assert row.tokens_after <= row.tokens_before
    assert [row.position for row in rows if row.cache_boundary] == [changed[0]]
    assert all(row.rules == ("rules",) for row in rows if row.changed)


def test_a_summary_folds_the_span_it_replaced_into_its_first_row():
    conversation, meter = book(), Meter("gpt-4o")
    run = replay(conversation, SummarizePolicy(limit=1, keep_steps=1), meter, GPT4O, cache="none")
    assert run.calls[-1].fired == "summarization"
    shown = view.call_view(conversation, run, len(run.calls), meter)
    assert shown.folded == len(shown.without.items) - len(shown.sent.items) + 1 > 1
    rows = view.call_rows(shown, range(len(shown.without.items)))
    folded = [row for row in rows if row.summarized]
    assert len(folded) == shown.folded and folded[0].position == shown.head
    assert folded[0].after == view.shown_text(shown.sent.items[shown.head]) and not any(r.after for r in folded[1:])
    after = [row for row in rows if row.position >= shown.head + shown.folded]
    assert [row.after for row in after] == [view.shown_text(item) for item in shown.sent.items[shown.head + 1:]]
    assert sum(row.tokens_after for row in rows) == sum(shown.tokens_sent)


@settings(max_examples=40, deadline=None)
@given(st.one_of(*REQUESTS.values()), st.sampled_from([*OURS, *THEIR_FIRING]), st.sampled_from(["stored", "per-call"]),
       st.data())
def test_any_call_under_any_policy_lines_up_item_for_item(body, name, mode, data):
    conversation, meter = formats.read(body), Meter("gpt-4o")
    starts = call_starts(conversation.items)
    if not starts:
        return
    number = data.draw(st.integers(0, len(starts) - 1))
    policy = make(name, **FIRING[name]) if name in OURS else THEIR_FIRING[name]()  # the agents' own, made to fire
    run = replay(conversation, policy, meter, GPT4O, mode=mode, cache="none", until=number + 1)
    shown = view.call_view(conversation, run, len(starts), meter)
    rows = view.call_rows(shown, view.call_positions(shown, False))
    assert len(rows) == starts[number]
    assert sum(row.tokens_after for row in rows) == sum(shown.tokens_sent)  # every sent item shows once
    assert view.call_positions(shown, True) == [row.position for row in rows if row.changed]
    if name == "none":
        assert not any(row.changed or row.cache_boundary for row in rows)


def test_a_request_sent_shorter_at_its_end_still_lines_up():
    conversation, meter = book(), Meter("gpt-4o")
    run = replay(conversation, NonePolicy(), meter, GPT4O, cache="none")
    cut = replace(run, final=run.final.with_items(run.final.items[:-2]))  # a policy that dropped the last two
    shown = view.call_view(conversation, cut, len(run.calls), meter)
    rows = view.call_rows(shown, view.call_positions(shown, False))
    assert len(rows) == len(shown.without.items)
    assert [row.position for row in rows if row.summarized] == list(range(len(rows) - 3, len(rows)))
    assert sum(row.tokens_after for row in rows) == sum(shown.tokens_sent)
