"""Token meters against what the API billed, and the offline vocabularies behind them."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playground import accuracy, encodings, formats, tokens
from playground.model import Conversation, Message, Origin, ToolCall, ToolResult

from .conftest import ROOT, TOKEN_COUNTS, shared
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


def test_tool_call_and_result_rule_by_hand():
    meter = tokens.Meter("gpt-4o")
    call = ToolCall(call_id="c", name="read_file", arguments='{"path": "a.py"}')
    result = ToolResult(call_id="c", name="read_file", content="print(1)")
    enc = meter.encoding
    assert meter.item(call) == len(enc.encode("functions.read_file")) + len(enc.encode(call.arguments)) + 4
    assert meter.item(call, parallel=True) == meter.item(call) + 8
    assert meter.item(result) == 3 + len(enc.encode("tool")) + len(enc.encode("print(1)")) + len(
        enc.encode("read_file"))


@pytest.mark.parametrize("name", sorted(REQUESTS))
@given(data=st.data())
def test_item_counts_add_up_to_the_total(name, data):
    conversation = formats.read(data.draw(REQUESTS[name]))
    result = tokens.count(conversation)
    assert len(result.items) == len(conversation.items)
    assert result.total == sum(result.items) + result.tools + result.instructions + result.priming
    assert all(n >= 0 for n in result.items)
    assert result.prefix(0) == result.tools + result.instructions


def test_unknown_model_falls_back_and_says_so():
    result = tokens.count(Conversation(items=(Message(role="user", content="hi"),), format="chat"), "llama-3-70b")
    assert result.encoding == "o200k_base"
    assert not result.exact
    assert any("unknown model 'llama-3-70b'" in note for note in result.notes)


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


def test_repeated_counts_hit_the_cache():
    meter = tokens.Meter("gpt-4o")
    text = "word " * 1000
    assert meter.text(text) == meter.text(text)
    assert text in meter._cache


def test_vocabularies_load_offline_through_tiktoken(tmp_path):
    """A fresh cache folder and no network at all: both encodings still load and count."""
    script = (
        "import socket\n"
        "def refuse(*a, **k): raise OSError('network used')\n"
        "socket.socket.connect = refuse; socket.create_connection = refuse\n"
        "from playground.encodings import get_encoding\n"
        "print(len(get_encoding('o200k_base').encode('hello world')),"
        " len(get_encoding('cl100k_base').encode('hello world')))\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    env.pop("TIKTOKEN_CACHE_DIR", None)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2", "2"]
    assert len(list((tmp_path / "compaction-playground" / "tiktoken").iterdir())) == 2


def test_a_corrupt_vocabulary_is_refused(tmp_path, monkeypatch):
    import gzip

    (tmp_path / "o200k_base.tiktoken.gz").write_bytes(gzip.compress(b"not a vocabulary"))
    monkeypatch.setattr(encodings, "VOCAB_DIR", tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with pytest.raises(encodings.VocabularyError, match="does not match tiktoken's published sha256"):
        encodings._unpack("o200k_base", encodings.cache_dir())


def test_loading_leaves_the_environment_as_it_was(monkeypatch):
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    encodings.get_encoding("o200k_base")
    assert "TIKTOKEN_CACHE_DIR" not in os.environ
