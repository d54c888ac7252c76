"""The compaction decision cache: a rerun reuses every decision it can, however many candidates
the request holds, and never one made for another meter or another item."""

from __future__ import annotations

import gc

import pytest

from playground.compaction import DecisionCache, Settings, compact, walker
from playground.conversation import Conversation, Message, ToolCall, ToolResult
from playground.meter import Meter
from playground.rules import book_rules

SETTINGS = Settings(threshold=0)


def _run(results: int) -> Conversation:
    """``results`` read_file calls, each answered by a small result: one candidate each."""
    items: list = [Message(role="user", content="Read every module.")]
    for n in range(results):
        items += [ToolCall(call_id=f"c{n}", name="read_file", arguments=f'{{"path": "src/m{n}.py"}}'),
                  ToolResult(call_id=f"c{n}", name="read_file", content=f"def f{n}():\n    return {n}\n" * 3)]
    items.append(Message(role="assistant", content="Done."))
    return Conversation(items=tuple(items), format="chat", model="gpt-4o")


@pytest.fixture
def decided(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many decisions were made afresh (not taken from the cache)."""
    made: list[int] = []
    real = walker._decide
    monkeypatch.setattr(walker, "_decide", lambda ctx, c: made.append(c.position) or real(ctx, c))
    return made


def test_a_rerun_of_more_than_ten_thousand_candidates_decides_nothing_again(decided: list[int]) -> None:
    conversation, meter, cache = _run(12_000), Meter("gpt-4o"), DecisionCache()
    compact(conversation, book_rules(), SETTINGS, meter=meter, cache=cache)
    first = len(decided)
    assert first >= 12_000
    compact(conversation, book_rules(), SETTINGS, meter=meter, cache=cache)
    assert len(decided) == first, "the second pass re-decided items the cache had (it was thrown away)"


def test_a_growing_run_reuses_earlier_decisions_and_holds_about_two_requests(decided: list[int]) -> None:
    full, meter, cache = _run(300), Meter("gpt-4o"), DecisionCache()
    for end in range(3, len(full.items) + 1, 2):  # each call's request: one more call and result
        compact(Conversation(items=full.items[:end], format="chat"), book_rules(), SETTINGS, meter=meter, cache=cache)
    # Twice per result at most: once while it is the newest, unread (kept whatever the rules say), once after.
    assert len(decided) <= 2 * 300, "earlier items' decisions were made again at later calls"
    assert cache.size() <= 2 * 300


def test_a_decision_made_with_one_meter_is_not_reused_with_another(decided: list[int]) -> None:
    conversation, cache = _run(50), DecisionCache()
    compact(conversation, book_rules(), SETTINGS, meter=Meter("gpt-4o"), cache=cache)
    gc.collect()  # the first meter is gone: a new one may take its address
    before = len(decided)
    compact(conversation, book_rules(), SETTINGS, meter=Meter("claude-sonnet-4-5"), cache=cache)
    assert len(decided) - before >= 50, "decisions counted with the old meter were reused for another model"
