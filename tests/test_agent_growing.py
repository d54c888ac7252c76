"""The wrapper carries the caller's list and the request from call to call (``agent.growing``): what it
reads as the list grows is what a whole read gives, what it writes is what a whole write gives, and a
message the caller replaced, removed or inserted in its list is noticed (the run starts again, as for any
rewritten history) while one changed in place is not (the wrapper compares which objects the list holds)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from openai.types.chat import ChatCompletion

import playground as pg
from playground import formats
from playground.agent.endpoint import plain
from playground.agent.growing import Seen, Written
from playground.agent.session import Session

REPLY = {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "gpt-4o",
         "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}]}


class _Completions:
    """``chat.completions`` answering at once, keeping each request as it was sent (as JSON)."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def create(self, **request: Any) -> ChatCompletion:
        self.sent.append(json.dumps(request["messages"]))
        return ChatCompletion.model_validate(REPLY)


class _Client:
    def __init__(self) -> None:
        self.chat = type("Chat", (), {})()
        self.chat.completions = _Completions()


def _messages() -> list[dict[str, Any]]:
    return formats.chat.write_messages(pg.load_preset("presets/coding-agent.json").conversation.items)


def _wrapped() -> tuple[Any, _Completions]:
    client = _Client()
    return pg.compacting(client, pg.make("rules", threshold=2_000, summarize=False), model="gpt-4o"), \
        client.chat.completions


def _calls(messages: list[dict[str, Any]]) -> list[int]:
    """Where the agent called the model: before each assistant message."""
    return [n for n, message in enumerate(messages) if message["role"] == "assistant"]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=80), max_size=12))
def test_a_list_read_as_it_grows_is_read_as_a_whole_read_reads_it(cuts: list[int]) -> None:
    messages = _messages()
    seen = Seen()
    for end in [*sorted(cuts), len(messages)]:
        part = messages[:end]
        grown = seen.read(part, plain, formats.chat.read_items, formats.chat.read({"messages": []}).grown)
        assert grown.items == seen.items == formats.chat.read({"messages": part}).items
        assert seen.wire == part


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=80), st.integers(min_value=0, max_value=80)),
                min_size=1, max_size=8))
def test_a_request_written_from_the_last_one_is_the_whole_write(spans: list[tuple[int, int]]) -> None:
    items = formats.chat.read({"messages": _messages()}).items
    written = Written(formats.chat.write_messages, formats.chat.begins_message)
    for low, high in spans:  # any request after any other: shared heads of every length, tails of every kind
        request = items[:min(low, high)] + items[max(low, high):]
        assert written(request) == formats.chat.write_messages(request)


def test_a_history_that_only_grows_is_one_run() -> None:
    messages = _messages()
    wrapped, _ = _wrapped()
    history: list[dict[str, Any]] = []
    for end in _calls(messages):
        history[len(history):] = messages[len(history):end]
        wrapped.chat.completions.create(model="gpt-4o", messages=history)
    assert not any(record.restarted for record in wrapped.records)
    assert wrapped.records[-1].tokens_after < wrapped.records[-1].tokens_before  # (it compacted)


def _rewritten(change: Any) -> tuple[Any, _Completions, list[dict[str, Any]]]:
    messages = _messages()
    wrapped, server = _wrapped()
    calls = _calls(messages)
    history = messages[:calls[3]]
    wrapped.chat.completions.create(model="gpt-4o", messages=history)
    change(history)
    history.extend(messages[calls[3]:calls[4]])
    wrapped.chat.completions.create(model="gpt-4o", messages=history)
    return wrapped, server, history


def _replaced_content(history: list[dict[str, Any]]) -> None:
    history[1] = {**history[1], "content": "Read only the tests."}


def _replaced_result(history: list[dict[str, Any]]) -> None:
    at = next(n for n, message in enumerate(history) if message["role"] == "tool")
    history[at] = {**history[at], "content": "(the file was deleted)"}


def _added_field(history: list[dict[str, Any]]) -> None:
    history[1] = {**history[1], "name": "reviewer"}


def _removed(history: list[dict[str, Any]]) -> None:
    del history[1]


def _inserted(history: list[dict[str, Any]]) -> None:
    history.insert(1, {"role": "user", "content": "Mind the tests."})


def test_an_earlier_message_replaced_starts_the_run_again_and_is_read() -> None:
    for change in (_replaced_content, _replaced_result, _added_field, _removed, _inserted):
        wrapped, server, history = _rewritten(change)
        assert wrapped.records[-1].restarted, change.__name__
        fresh, fresh_server = _wrapped()
        fresh.chat.completions.create(model="gpt-4o", messages=history)
        assert server.sent[-1] == fresh_server.sent[-1], change.__name__


def test_an_equal_copy_of_the_list_is_the_same_run() -> None:
    """An agent that builds its list anew at each call (equal messages, other objects) is one run:
    what differs by identity is compared by value."""
    messages = _messages()
    wrapped, server = _wrapped()
    plain_run, plain_server = _wrapped()
    for end in _calls(messages):
        wrapped.chat.completions.create(model="gpt-4o", messages=json.loads(json.dumps(messages[:end])))
        plain_run.chat.completions.create(model="gpt-4o", messages=messages[:end])
    assert not any(record.restarted for record in wrapped.records)
    assert server.sent == plain_server.sent


def test_a_message_changed_in_place_is_sent_as_it_was_read() -> None:
    """The documented boundary (docs/agent.md, *Where it stops*): the wrapper looks at which
    objects the list holds, not into them, so an edit in place is not sent; replacing is."""
    wrapped, server, _ = _rewritten(lambda history: history[1].update(content="Read only the tests."))
    assert not wrapped.records[-1].restarted
    assert "Read only the tests." not in server.sent[-1]


def _session_requests(messages: list[dict[str, Any]]) -> list[Any]:
    return [formats.chat.read({"model": "gpt-4o", "messages": messages[:end]}) for end in _calls(messages)]


def test_a_call_committed_after_another_was_prepared_is_cached_as_its_own_request() -> None:
    """A call's prompts stay the sides' own lists until the next call is prepared; then they are
    copied, so committing it late (a call in flight beside another) uses its own request."""
    messages = _messages()
    requests = _session_requests(messages)
    other = _session_requests([messages[0], {"role": "user", "content": "Something else."}, *messages[2:]])[-1]
    policy = lambda: pg.make("rules", threshold=2_000, summarize=False)  # noqa: E731
    alone, late = Session(policy(), "chat.completions", "gpt-4o"), Session(policy(), "chat.completions", "gpt-4o")
    for request in requests[:-2]:
        alone.prepare(request).commit()
        late.prepare(request).commit()
    expected = alone.prepare(requests[-2]).commit()
    first = late.prepare(requests[-2])
    late.prepare(other)  # (another call, on another history, prepared before the first is committed)
    assert expected.cached_after and expected.cached_before
    assert first.commit() == expected
