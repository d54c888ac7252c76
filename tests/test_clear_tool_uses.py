"""The clear-tool-uses policy decides its trigger on the meter's figure: the running total it keeps
between calls (so a replay does not recount the whole request every call) is the meter's count
of the request it sent, calibration, Claude's ratio and item overheads included — it used to
subtract text tokens and drift from the meter by up to 196 tokens on the ~200k preset."""

from __future__ import annotations

import pytest

from playground.meter.factor import Calibration
from playground.meter.tokens import Meter
from playground.policies import ClearToolUsesPolicy
from playground.run.replay import call_starts
from playground.workbench.presets import list_presets

METERS = {"calibrated gpt-4o": lambda: Meter("gpt-4o", Calibration("gpt-4o", 1.37, samples=3)),
          "claude": lambda: Meter("claude-sonnet-4-5")}


def _preset(key: str):
    return next(p.conversation for p in list_presets() if p.key == key)


@pytest.mark.parametrize("meter", list(METERS))
@pytest.mark.parametrize("key", ["large-200k", "long-session"])
def test_the_running_total_is_the_meters_count_at_every_call(key, meter):
    conversation, counter = _preset(key), METERS[meter]()
    policy = ClearToolUsesPolicy(trigger=0, keep=1)
    history, previous, fired = (), 0, 0
    for start in call_starts(conversation.items):  # as a stored-mode replay applies it
        request = conversation.with_items(history + conversation.items[previous:start])
        previous = start
        sent = policy.apply(request, counter)
        history = sent.conversation.items
        fired += sent.fired is not None
        assert policy.totals.total(sent.conversation, counter) == counter.count(sent.conversation).total
    assert fired > 5


@pytest.mark.parametrize("meter", list(METERS))
def test_the_trigger_is_decided_on_the_meters_figure(meter):
    """A request just after a clearing, with the trigger at its exact size (and one below): the
    policy that cleared before decides as a fresh one does, which counts the request whole."""
    conversation, counter = _preset("large-200k"), METERS[meter]()
    starts = call_starts(conversation.items)
    first = conversation.with_items(conversation.items[:starts[len(starts) // 2]])
    cleared = ClearToolUsesPolicy(trigger=0, keep=1).apply(first, counter).conversation
    after = conversation.with_items(cleared.items + conversation.items[len(first.items):starts[len(starts) // 2 + 1]])
    size = counter.count(after).total
    assert size < counter.count(first).total
    for trigger in (size - 1, size):
        running = ClearToolUsesPolicy(trigger=trigger, keep=1)
        assert running.apply(first, counter).fired  # over the trigger: it clears, and keeps its total
        fresh = ClearToolUsesPolicy(trigger=trigger, keep=1)
        assert running.apply(after, counter) == fresh.apply(after, counter)
        assert (fresh.apply(after, counter).fired is not None) == (size > trigger)
