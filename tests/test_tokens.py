"""Token meters against what the API billed, and the offline vocabularies behind them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playground import formats
from playground.conversation import Conversation, Message, Origin, ToolCall, content_text
from playground.meter import encodings, tokens
from playground.refit import accuracy

from .conftest import ROOT, TOKEN_COUNTS, TRACES, load_shared, shared
from .strategies import REQUESTS


@pytest.fixture(scope="module")
def measured() -> list[accuracy.Case]:
    return accuracy.measure(shared(TOKEN_COUNTS))


def test_every_cookbook_case_without_a_note_is_exact(measured):
    cookbook = [c for c in measured if c.file == "openai_cookbook_cases.json"]
    assert len(cookbook) == 15
    assert [c for c in cookbook if c.note is None and c.error != 0] == []


def test_recorded_cases_within_two_tokens(measured):
    recorded = [c for c in measured if c.file == "recorded_api_cases.json"]
    within = sum(abs(c.error) <= 2 for c in recorded)
    assert within / len(recorded) >= 0.90, f"{within}/{len(recorded)} within ±2"


def test_no_core_case_is_off_by_more_than_five_percent(measured):
    core = [c for c in measured if c.file == "recorded_api_cases.json" and c.core]
    worst = max(core, key=lambda c: abs(c.error) / c.billed)
    assert abs(worst.error) / worst.billed <= 0.05, worst


def test_exact_flag_is_only_set_where_the_accounting_is_published(measured):
    for case in measured:
        if case.exact_flag:
            assert case.file != "issue_reported_cases.json"
            assert case.model.startswith(("gpt-3.5-turbo", "gpt-4o", "gpt-4")) and not case.model.startswith("gpt-4.")


def test_published_rule_by_hand():
    """Cookbook: 3 per message + tokens of each value, +1 for name, +3 reply priming."""
    meter = tokens.Meter("gpt-4o")
    enc = meter.encoding
    conversation = Conversation(items=(Message(role="system", content="Be terse.", name="rules"),
                                       Message(role="user", content="Hello there")), format="chat")
    expected = (3 + len(enc.encode("system")) + len(enc.encode("Be terse.")) + len(enc.encode("rules")) + 1
                + 3 + len(enc.encode("user")) + len(enc.encode("Hello there")) + 3)
    result = tokens.count(conversation, "gpt-4o")
    assert result.total == expected
    assert result.exact and result.notes == ()


def test_fitted_call_and_result_rules_match_what_the_api_billed(measured):
    """The fitted tool-call and tool-message constants, checked against billed counts rather
    than retyped: gpt-4o recordings with one call per message are exact but for one (1 off),
    parallel calls (billed as one multi_tool_use call) within one token. A constant one off
    moves every case."""
    raw = load_shared(TOKEN_COUNTS / "recorded_api_cases.json")
    widest = {c.number: max(len(m.get("tool_calls") or []) for m in raw[c.number]["messages"]) for c in measured
              if c.file == "recorded_api_cases.json" and c.model == "gpt-4o" and c.core}
    cases = {c.number: c for c in measured if c.file == "recorded_api_cases.json"}
    single = [cases[n] for n, calls in widest.items() if calls == 1]
    parallel = [cases[n] for n, calls in widest.items() if calls == 2]
    assert len(single) >= 10 and sum(c.error != 0 for c in single) <= 1 and max(abs(c.error) for c in single) <= 1
    assert len(parallel) >= 3 and [c for c in parallel if abs(c.error) > 1] == []


@given(data=st.data(), text=st.text(max_size=60), name=st.sampled_from([None, "ann"]))
def test_one_more_message_costs_the_published_rule(data, text, name):
    """Cookbook, for any chat request: a message adds 3 + tokens(role) + tokens(content), and
    tokens(name) + 1 with a name — counted by hand with tiktoken, not with the meter's sum."""
    conversation = formats.read(data.draw(REQUESTS["chat"]))
    grown = conversation.with_items((*conversation.items, Message(role="user", content=text, name=name)))
    enc = encodings.get_encoding("o200k_base")
    by_hand = 3 + len(enc.encode_ordinary("user")) + len(enc.encode_ordinary(text))
    by_hand += len(enc.encode_ordinary(name)) + 1 if name else 0
    assert tokens.count(grown, "gpt-4o").total - tokens.count(conversation, "gpt-4o").total == by_hand


def test_unknown_model_falls_back_and_says_so():
    result = tokens.count(Conversation(items=(Message(role="user", content="hi"),), format="chat"), "llama-3-70b")
    assert result.encoding == "o200k_base"
    assert not result.exact
    assert any("counted with o200k_base: llama-3-70b's own tokenizer is not shipped" in note for note in result.notes)


def test_anthropic_counts_are_labelled_estimates():
    conversation = formats.read({"system": "s", "messages": [{"role": "user", "content": "hi"}]})
    result = tokens.count(conversation, "claude-sonnet-4-5")
    assert not result.exact
    assert any("Claude's tokenizer is not published" in note for note in result.notes)


def test_cl100k_models_use_cl100k():
    assert tokens.Meter("gpt-4").choice.encoding == "cl100k_base"
    assert tokens.Meter("gpt-4o").choice.encoding == "o200k_base"


def test_anthropic_blocks_of_one_message_pay_one_overhead():
    one = formats.read({"system": "", "messages": [{"role": "user", "content": "a b"}]})
    two = formats.read({"system": "", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "a"}, {"type": "text", "text": " b"}]}]})
    assert tokens.count(two).total == tokens.count(one).total
    assert tokens.Layout.of(two.items).continued == {1}
    assert two.items[1].origin == Origin(0, 1)


def test_a_repeated_text_is_encoded_once(monkeypatch):
    meter = tokens.Meter("gpt-4o")
    calls = []
    encode = meter.encoding.encode_ordinary
    monkeypatch.setattr(meter, "encoding", SimpleNamespace(encode_ordinary=lambda t: calls.append(t) or encode(t)))
    text = "word " * 1000
    assert [meter.text(text), meter.text(text)] == [1001, 1001]  # "word", 999 × " word", " "
    assert calls == [text]


def test_vocabularies_load_offline_and_write_nothing(tmp_path):
    """A fresh process with no network at all: both encodings load from the shipped files,
    give tiktoken's published ids, and write no cache folder."""
    script = (
        "import socket\n"
        "def refuse(*a, **k): raise OSError('network used')\n"
        "socket.socket.connect = refuse; socket.create_connection = refuse\n"
        "from playground.meter.encodings import get_encoding\n"
        "print(get_encoding('o200k_base').encode('hello world'), get_encoding('cl100k_base').encode('hello world'))\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "TMPDIR": str(tmp_path)}
    env.pop("TIKTOKEN_CACHE_DIR", None)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("] [") == ["[24912, 2375", "15339, 1917]\n"]
    assert list(tmp_path.iterdir()) == []


def test_a_corrupt_vocabulary_is_refused(tmp_path, monkeypatch):
    import gzip

    (tmp_path / "o200k_base.tiktoken.gz").write_bytes(gzip.compress(b"not a vocabulary"))
    monkeypatch.setattr(encodings, "VOCAB_DIR", tmp_path)
    with pytest.raises(encodings.VocabularyError, match="does not match tiktoken's published sha256"):
        encodings.load_ranks("o200k_base")


def test_loading_leaves_the_environment_as_it_was():
    before = dict(os.environ)
    fresh = encodings.get_encoding.__wrapped__("cl100k_base")  # a real load, past the cache
    assert dict(os.environ) == before
    assert fresh.encode("hello world") == [15339, 1917]
    assert fresh.encode("<|endoftext|>", allowed_special="all") == [100257]


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_the_shipped_vocabularies_parse_as_tiktoken_parses_them(name, tmp_path):
    """Our parse of a shipped vocabulary (split once, decoded in C) gives the ranks tiktoken's own
    loader reads from the same file."""
    import gzip

    from tiktoken.load import load_tiktoken_bpe

    plain = tmp_path / f"{name}.tiktoken"
    plain.write_bytes(gzip.decompress((encodings.VOCAB_DIR / f"{name}.tiktoken.gz").read_bytes()))
    assert encodings.load_ranks(name) == load_tiktoken_bpe(str(plain))


class _Threads:
    """An encoding that notes which threads it encoded on."""

    def __init__(self, encoding: object) -> None:
        self.encoding, self.threads = encoding, set()
        self.name = encoding.name  # type: ignore[attr-defined]

    def encode_ordinary(self, text: str) -> list[int]:
        self.threads.add(threading.get_ident())
        return self.encoding.encode_ordinary(text)  # type: ignore[attr-defined]


@pytest.mark.parametrize("model", ["gpt-4o", "claude-sonnet-4-5"])
def test_a_large_request_is_read_ahead_on_threads_and_counted_as_one_thread_counts_it(model, monkeypatch) -> None:
    """Half a million characters of new text are encoded on several threads first; every item's
    count and the total are what one thread gives (long texts by their pieces, parts for Claude)."""
    trace = formats.read(load_shared(TRACES / "sweagent_marshmallow-1867_function_calling.openai.json"))
    texts = [text for text in (content_text(item.content) for item in trace.items if not isinstance(item, ToolCall))
             if len(text) > 2_000]
    body = {"model": model, "messages": [{"role": "user", "content": "Go."}]}
    for n, text in enumerate(texts * (600_000 // sum(map(len, texts)) + 1)):
        body["messages"] += [{"role": "assistant", "content": None, "tool_calls": [{"id": f"c{n}", "type": "function",
                              "function": {"name": "read_file", "arguments": json.dumps({"path": f"{n}.py"})}}]},
                             {"role": "tool", "tool_call_id": f"c{n}", "content": f"{n}\n{text}"}]
    conversation = formats.read(body)
    monkeypatch.setattr(tokens, "THREADS", 2)
    threaded = tokens.Meter(model)
    recording = threaded.encoding = _Threads(threaded.encoding)  # type: ignore[assignment]
    counted = threaded.count(conversation)
    assert len(recording.threads - {threading.get_ident()}) == 2  # the pool's two threads
    monkeypatch.setattr(tokens, "THREADS", 1)
    alone = tokens.Meter(model).count(conversation)
    assert (counted.items, counted.total) == (alone.items, alone.total)
