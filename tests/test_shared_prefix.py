"""Where two requests first differ, found by comparing slices in C, is where a walk item by item
finds it: for requests of any length, differing anywhere, with equal copies as well as the same
objects. Whether one request extends another (``extends``, which compares a chunk at each end
first) is what comparing the whole prefix says."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playground import conversation
from playground.conversation import LastShared, Message, extends, shared

POOL = [Message(role="user", content=f"message {n}") for n in range(4)]


def _item(n: int) -> Message:
    """Pool items 0-3 are shared objects; 4-7 are equal copies of them, made anew."""
    return POOL[n] if n < 4 else Message(role="user", content=f"message {n - 4}")


def _walk(old: tuple, new: tuple) -> int:
    same = 0
    while same < min(len(old), len(new)) and old[same] == new[same]:
        same += 1
    return same


REQUESTS = st.lists(st.integers(0, 7), max_size=600).map(lambda ns: tuple(map(_item, ns)))


@given(old=REQUESTS, grown=st.lists(st.integers(0, 7), max_size=200), at=st.integers(0, 700), edit=st.integers(0, 7))
def test_the_first_difference_is_where_a_walk_finds_it(old: tuple, grown: list[int], at: int, edit: int) -> None:
    new = old + tuple(map(_item, grown))
    if at < len(new):  # an edit in the history (or in what was appended)
        new = (*new[:at], _item(edit), *new[at + 1:])
    assert shared(old, new) == _walk(old, new) == shared(new, old)


@given(old=REQUESTS, new=REQUESTS)
def test_any_two_requests(old: tuple, new: tuple) -> None:
    assert shared(old, new) == _walk(old, new)


def test_the_last_pair_is_answered_without_comparing_again(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = []

    def asking(old: tuple, new: tuple, at_least: int = 0) -> int:
        asked.append((old, new))
        return shared(old, new, at_least)

    monkeypatch.setattr(conversation, "shared", asking)
    old = tuple(map(_item, range(4))) * 100
    new = (*old[:250], _item(5), *old[251:])
    last = LastShared()
    assert [last(old, new), last(old, new), last(new, old), last(new, old)] == [250] * 4
    assert asked == [(old, new), (new, old)]


@given(old=REQUESTS, new=REQUESTS, fraction=st.floats(0, 1))
def test_what_the_caller_knows_is_shared_is_not_compared_again(old: tuple, new: tuple, fraction: float) -> None:
    known = int(_walk(old, new) * fraction)
    assert shared(old, new, known) == _walk(old, new)


@given(known=REQUESTS, grown=st.lists(st.integers(0, 7), max_size=200), at=st.integers(0, 900),
       edit=st.integers(0, 7), shorter=st.integers(0, 3))
def test_a_request_extends_another_where_its_prefix_is_the_other(known: tuple, grown: list[int], at: int,
                                                                 edit: int, shorter: int) -> None:
    items = (known + tuple(map(_item, grown)))[:max(0, len(known) - shorter) if shorter else None]
    if at < len(items):  # an edit anywhere: near the start, the middle or the end of ``known``
        items = (*items[:at], _item(edit), *items[at + 1:])
    assert extends(items, known) == (len(items) >= len(known) and _walk(known, items) == len(known))
    assert extends(items, known, (known, items))  # what the conversation says it grew from is believed
