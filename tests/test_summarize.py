"""The summarization fallback: a pairing-safe cut, the original content read, loss stated,
failures that drop nothing, and a real OpenAI client against a real local HTTP server."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playground import formats, tokens
from playground.compaction import Settings
from playground.llm import Endpoint, OpenAISummarizer
from playground.model import ToolCall, ToolResult, content_text, pairs, role_of
from playground.pipeline import optimize
from playground.rules import book_rules
from playground.summarize import (
    MARKER,
    OFFLINE_LABEL,
    OfflineSummarizer,
    SummarizerError,
    SummarySettings,
    is_summary,
    plan,
    run,
    span,
)

from .conftest import ROOT
from .openai_stub import SUMMARY, StubServer
from .strategies import REQUESTS
from .test_compaction import PAGE, book_scenario, call


def long_run(steps: int = 8) -> dict:
    """An agent run with one user message and many steps: where counting user turns keeps everything."""
    messages = [{"role": "system", "content": "You are a coding agent."},
                {"role": "user", "content": "Fix the failing test in src/app.py."}]
    for n in range(steps):
        messages.append({"role": "assistant", "content": f"Step {n}: reading a file.",
                         "tool_calls": [call(f"c{n}", "read_file", path=f"src/m{n}.py")]})
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": f"# module {n}\n" + PAGE})
    messages.append({"role": "assistant", "content": "The fix is in src/m3.py; tests pass now."})
    return {"model": "gpt-4o", "messages": messages}


def meter():
    return tokens.Meter("gpt-4o")


class Failing:
    label = "always fails"

    def summarize(self, plan):
        raise SummarizerError("the endpoint is down")


def test_keeps_the_head_and_the_newest_steps():
    conversation = formats.read(long_run())
    start, end = span(conversation.items, keep_steps=2)
    items = conversation.items
    assert start == 2  # after the system message and the first user message
    kept_turns = [p for p in range(end, len(items)) if role_of(items[p]) == "assistant"
                  and role_of(items[p - 1]) != "assistant"]
    assert len(kept_turns) == 2


def test_no_span_when_everything_is_kept():
    conversation = formats.read(long_run(2))
    assert span(conversation.items, keep_steps=3) is None
    result = run(conversation, conversation, SummarySettings(limit=0), OfflineSummarizer(), meter())
    assert result.report.status == "nothing_to_summarize" and result.conversation == conversation


def _check_cut(items, start, end):
    answers = pairs(items)
    for call_position, result_position in answers.items():
        assert (call_position < start) == (result_position < start) or result_position < start
        assert (start <= call_position < end) == (start <= result_position < end), "a call and its result split"
    assert all(role_of(item) not in ("system", "developer") for item in items[start:end])
    assert any(role_of(item) == "user" for item in items[:start])


@pytest.mark.parametrize("name", sorted(REQUESTS))
@given(data=st.data(), keep=st.integers(0, 4))
def test_the_cut_never_orphans_a_call_or_result(name, data, keep):
    conversation = formats.read(data.draw(REQUESTS[name]))
    found = span(conversation.items, keep)
    if found is None:
        return
    _check_cut(conversation.items, *found)
    result = run(conversation, conversation, SummarySettings(limit=0, keep_steps=keep), OfflineSummarizer(),
                 meter())
    report = result.report
    if report.status == "not_smaller":  # a tiny span: the summary would have made the request larger
        assert result.conversation == conversation and report.summary_tokens >= report.span_tokens
        return
    assert report.status == "summarized" and report.tokens_after < report.tokens_before
    assert report.summary_tokens < report.span_tokens
    out = result.conversation
    assert formats.read(formats.write(out)) == out, "still a valid request in its own format"
    assert sum(is_summary(item) for item in out.items) == 1
    assert len(out.items) == len(conversation.items) - (found[1] - found[0]) + 1


def test_the_cut_on_the_real_traces(trace):
    conversation = formats.read(trace)
    for keep in (0, 1, 3, 10):
        found = span(conversation.items, keep)
        if found:
            _check_cut(conversation.items, *found)
            done = run(conversation, conversation, SummarySettings(limit=0, keep_steps=keep), OfflineSummarizer(),
                       meter())
            assert formats.read(formats.write(done.conversation)) == done.conversation


def test_the_summarizer_reads_originals_not_placeholders():
    body = long_run()
    result = optimize(formats.read(body), book_rules(), Settings(threshold=0), SummarySettings(limit=0, keep_steps=1),
                      OfflineSummarizer(), "gpt-4o")
    assert result.compaction.report.edits  # compaction replaced read_file results…
    chosen = result.summarization.plan
    assert "File content from" not in chosen.transcript  # …but the summarizer saw what they said
    assert "# module 0" in chosen.transcript


def test_each_item_is_trimmed_to_the_budget():
    conversation = formats.read(long_run())
    chosen = plan(conversation, conversation, SummarySettings(limit=0, keep_steps=1, item_budget=20), meter())
    assert "more tokens cut]" in chosen.transcript
    assert len(chosen.transcript) < sum(len(content_text(i.content)) for i in chosen.items if isinstance(
        i, ToolResult))


def test_the_summary_replaces_the_span_in_place_as_a_marked_user_message():
    conversation = formats.read(long_run())
    done = run(conversation, conversation, SummarySettings(limit=0, keep_steps=2), OfflineSummarizer(), meter())
    report = done.report
    summary = done.conversation.items[report.summary_position]
    assert summary.role == "user" and content_text(summary.content).startswith(MARKER)
    assert OFFLINE_LABEL in content_text(summary.content)
    assert done.conversation.items[:report.start] == conversation.items[:report.start]
    assert report.tokens_after < report.tokens_before
    assert report.summary_tokens == tokens.count(done.conversation).items[report.summary_position]


def test_summarizing_again_extends_the_summary():
    conversation = formats.read(long_run(10))
    once = run(conversation, conversation, SummarySettings(limit=0, keep_steps=4), OfflineSummarizer(), meter())
    twice = run(once.conversation, once.conversation, SummarySettings(limit=0, keep_steps=2), OfflineSummarizer(),
                meter())
    assert twice.plan.previous_summary
    assert "[earlier summary]" in twice.plan.transcript
    assert sum(is_summary(i) for i in twice.conversation.items) == 1
    assert "Earlier summary:" in content_text(twice.conversation.items[twice.report.summary_position].content)
    again = run(twice.conversation, twice.conversation, SummarySettings(limit=0, keep_steps=2), OfflineSummarizer(),
                meter())
    assert again.report.status == "nothing_to_summarize"  # the same span is not summarized again


def test_a_failing_summarizer_drops_nothing():
    conversation = formats.read(long_run())
    done = run(conversation, conversation, SummarySettings(limit=0), Failing(), meter())
    assert done.report.status == "failed" and done.report.error == "the endpoint is down"
    assert done.conversation == conversation


def test_below_the_limit_nothing_happens():
    conversation = formats.read(long_run())
    done = run(conversation, conversation, SummarySettings(limit=10**9), Failing(), meter())
    assert done.report.status == "not_needed" and done.conversation == conversation


def test_offline_summary_content():
    body = book_scenario()
    body["messages"][7] = {"role": "tool", "tool_call_id": "c3", "content": "Traceback (most recent call last):\n"
                                                                             "FileNotFoundError: main.py"}
    body["messages"] += [{"role": "user", "content": "Now add a section on storage."},
                         {"role": "assistant", "content": "Adding it.", "tool_calls": [call("c4", "read_file",
                                                                                           path="report.md")]},
                         {"role": "tool", "tool_call_id": "c4", "content": "report"},
                         {"role": "assistant", "content": "Done."}]
    conversation = formats.read(body)
    done = run(conversation, conversation, SummarySettings(limit=0, keep_steps=1), OfflineSummarizer(), meter())
    text = content_text(done.conversation.items[done.report.summary_position].content)
    assert "User requests:\n- Now add a section on storage." in text
    assert '- create_file(file_path="report.md") → ok' in text
    assert '- search_web(query="solar 2024") → ok' in text
    assert 'Errors:\n- read_file(path="main.py"): Traceback (most recent call last):' in text
    assert "Assistant conclusions:\n- Done: the report is saved and checked." in text
    assert text.count(OFFLINE_LABEL) == 2  # in the marker and in the body


def plan_for_tests():
    conversation = formats.read(long_run())
    return plan(conversation, conversation, SummarySettings(limit=0, keep_steps=1), meter())


def test_openai_summarizer_makes_a_real_request():
    chosen = plan_for_tests()
    with StubServer() as server:
        summarizer = OpenAISummarizer(Endpoint("stub-model", server.base_url, api_key="sk-test-abc"))
        assert summarizer.summarize(chosen) == SUMMARY
        sent = server.requests[-1]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["headers"]["authorization"] == "Bearer sk-test-abc"
    assert sent["body"]["model"] == "stub-model"
    assert sent["body"]["messages"][0] == {"role": "system", "content": chosen.prompt}
    assert chosen.transcript in sent["body"]["messages"][1]["content"]


@pytest.mark.parametrize(("model", "expected"), [
    ("bad-key", "refused the API key (401)"),
    ("missing-model", "does not know the model 'missing-model'"),
    ("busy", "rate limiting requests (429)"),
    ("slow", "the timeout of 0.5 s is the whole wait"),
    ("garbage", "malformed reply"),
    ("empty", "answered with an empty message"),
])
def test_openai_failures_are_one_clear_sentence_without_the_key(model, expected):
    secret = "sk-very-secret-key-123"
    with StubServer(hang_seconds=3) as server:
        summarizer = OpenAISummarizer(Endpoint(model, server.base_url, api_key=secret, timeout=0.5, max_retries=1))
        with pytest.raises(SummarizerError) as caught:
            summarizer.summarize(plan_for_tests())
    assert expected in str(caught.value)
    assert secret not in str(caught.value) and "\n" not in str(caught.value)
    if model == "busy":
        assert len(server.requests) == 2  # one bounded retry


def test_a_refused_connection_is_explained():
    with StubServer() as server:
        base_url = server.base_url
    summarizer = OpenAISummarizer(Endpoint("m", base_url, timeout=2, max_retries=0))
    with pytest.raises(SummarizerError, match=r"could not connect to 127\.0\.0\.1"):
        summarizer.check()


def test_connection_check_succeeds():
    with StubServer() as server:
        assert "connected" in OpenAISummarizer(Endpoint("m", server.base_url)).check()


def cli(*args, env=None):
    import os

    return subprocess.run([sys.executable, "-m", "playground", *args], cwd=ROOT, capture_output=True, text=True,
                          check=False, env={**os.environ, **(env or {})})


@pytest.fixture
def run_file(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(long_run()))
    return path


def test_cli_summarizes_offline_by_default_when_still_over(run_file, tmp_path):
    report = tmp_path / "r.json"
    done = cli("compact", str(run_file), "--threshold", "100", "--keep-steps", "1", "--report", str(report))
    assert done.returncode == 0, done.stderr
    data = json.loads(report.read_text())
    assert data["summarization"]["status"] == "summarized"
    assert data["summarization"]["summarizer"] == OFFLINE_LABEL and data["summarization"]["reversible"] is False
    assert data["tokens_final"] < data["tokens_after"]
    assert any(MARKER in (m.get("content") or "") for m in json.loads(done.stdout)["messages"])


def test_cli_summarize_over_and_no_summarize(run_file, tmp_path):
    report = tmp_path / "r.json"
    cli("compact", str(run_file), "--threshold", "100", "--summarize-over", "10000000", "--report", str(report))
    assert json.loads(report.read_text())["summarization"]["status"] == "not_needed"
    cli("compact", str(run_file), "--threshold", "100", "--no-summarize", "--report", str(report))
    assert json.loads(report.read_text())["summarization"]["status"] == "off"


def test_cli_openai_summarizer_against_the_stub(run_file, tmp_path):
    report = tmp_path / "r.json"
    with StubServer() as server:
        done = cli("compact", str(run_file), "--threshold", "100", "--summarizer", "openai", "--llm-model", "stub",
                   "--base-url", server.base_url, "--report", str(report),
                   env={"OPENAI_API_KEY": "sk-env-key", "PLAYGROUND_KEY_HOSTS": "example.org, 127.0.0.1"})
        assert server.requests[-1]["headers"]["authorization"] == "Bearer sk-env-key"
    assert done.returncode == 0, done.stderr
    assert SUMMARY in done.stdout
    assert json.loads(report.read_text())["summarization"]["summarizer"].startswith("LLM summary — stub at 127.0.0.1")


def test_cli_endpoint_failure_exits_2_with_one_line_and_drops_nothing(run_file, tmp_path):
    out = tmp_path / "out.json"
    with StubServer() as server:
        done = cli("compact", str(run_file), "--threshold", "100", "--summarizer", "openai", "--llm-model",
                   "bad-key", "--base-url", server.base_url, "-o", str(out),
                   env={"OPENAI_API_KEY": "sk-leak-me", "PLAYGROUND_KEY_HOSTS": "127.0.0.1"})
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "refused the API key (401)" in done.stderr
    assert "sk-leak-me" not in done.stderr + done.stdout + out.read_text()
    assert not any(MARKER in (m.get("content") or "") for m in json.loads(out.read_text())["messages"])


def test_cli_openai_needs_a_model(run_file):
    done = cli("compact", str(run_file), "--threshold", "0", "--summarizer", "openai")
    assert done.returncode == 2 and "--llm-model" in done.stderr


def test_results_keep_their_calls_after_summarizing_each_format():
    for name, body in {"chat": long_run(), "anthropic": formats.write(formats.read(long_run()), "anthropic"),
                       "responses": formats.write(formats.read(long_run()), "responses"),
                       "native": formats.write(formats.read(long_run()), "native")}.items():
        conversation = formats.read(body, name)
        done = run(conversation, conversation, SummarySettings(limit=0, keep_steps=2), OfflineSummarizer(), meter())
        items = done.conversation.items
        open_ids = set()
        for item in items:
            if isinstance(item, ToolCall):
                open_ids.add(item.call_id)
            elif isinstance(item, ToolResult):
                assert item.call_id in open_ids, name
