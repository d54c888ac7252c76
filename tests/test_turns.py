"""``Turns``: following where each kind of thinking or reasoning stops being billed, request by
request, says what counting each request whole says (``Layout.thinking``)."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from playground import formats
from playground.agent.session import Session
from playground.conversation import Message, shared
from playground.meter.tokens import Layout, Meter
from playground.meter.turns import Turns
from playground.policies import make
from playground.run.replay import call_starts

from .strategies import REQUESTS, anthropic_requests, responses_requests


@given(st.one_of(anthropic_requests(2, 10), responses_requests()), st.lists(st.integers(0, 40), min_size=1,
                                                                               max_size=8), st.data())
def test_following_requests_bills_what_each_whole_request_bills(body, lengths, data):
    """A run's requests as replay sees them: prefixes that grow, and shrink when a policy cut
    one, sometimes with a user message put in (a summary) where an item stood. Every item is
    billed as the whole request bills it, and no count before ``follow``'s answer has changed."""
    items = formats.read(body).items
    turns, last = Turns(), ()
    for length in lengths:
        request = items[:length]
        if request and data.draw(st.booleans()):
            at = data.draw(st.integers(0, len(request) - 1))
            request = (*request[:at], Message(role="user", content="[summary]"), *request[at + 1:])
        first = turns.follow(request, shared(last, request))
        now, before = Layout.of(request).thinking, Layout.of(last).thinking
        assert [turns.billed(item, p) for p, item in enumerate(request)] == [p in now for p in range(len(request))]
        assert all((p in now) == (p in before) for p in range(first))
        last = request


@settings(max_examples=60)
@given(st.one_of(anthropic_requests(2, 10), responses_requests()), st.sampled_from(["none", "rules", "summarize"]))
def test_a_wrapped_agents_figures_are_each_whole_requests_count(body, name):
    """A wrapped agent's session counts, call by call, only what its sides added, as replay does: the
    tokens it logs as given and as sent are the whole requests' counts, its thinking or reasoning
    billed only in its own turn (counted whole at every call once there was any, a long session
    with extended thinking slowed call by call)."""
    conversation = formats.read(body)
    items, meter = conversation.items, Meter(conversation.model)
    session = Session(make(name, threshold=0, limit=0, keep_steps=0) if name != "none" else make(name),
                      conversation.format)
    for start in call_starts(items):
        pending = session.prepare(conversation.with_items(items[:start]))
        record = pending.commit()
        assert record.tokens_before == meter.count(conversation.with_items(items[:start])).total
        assert record.tokens_after == meter.count(pending.sent).total


_BLOCKS = {"system": "", "messages": [
    {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    {"role": "assistant", "content": [{"type": "text", "text": "c"}, {"type": "text", "text": "d"}]}]}


@example(_BLOCKS, [True, True, False, True])  # (d, block 1 of its message, after b, block 1 of another)
@given(st.one_of(*REQUESTS.values()), st.lists(st.booleans(), max_size=40))
def test_an_item_placed_by_its_neighbours_is_placed_as_the_whole_request_places_it(body, keep):
    """``Layout.at`` (an edited or thinking item counted where it stands, from its two neighbours)
    says what ``Layout.of`` says of the whole request — also once items are dropped around it, as a
    policy's request drops them."""
    items = formats.read(body).items
    kept = tuple(item for item, kept in zip(items, keep + [True] * len(items), strict=False) if kept)
    for request in (items, kept):
        layout = Layout.of(request)
        assert [Layout.at(request, position) for position in range(len(request))] == [
            (position in layout.parallel, position in layout.continued) for position in range(len(request))]
