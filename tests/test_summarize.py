"""The summarization fallback: a pairing-safe cut, the original content read, loss stated,
failures that drop nothing, and a real OpenAI client against a real local HTTP server."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from dataclasses import replace

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from playground import formats
from playground.compaction import Settings
from playground.conversation import Conversation, Message, Part, ToolCall, ToolResult, content_text, pairs, role_of
from playground.engine import optimize
from playground.errors import InputError
from playground.llm import keys
from playground.llm.endpoint import Endpoint
from playground.llm.failure import LLMError
from playground.meter import tokens
from playground.meter.carried import CarriedCounts
from playground.rules.ruleset import book_rules
from playground.summarize import online
from playground.summarize.cut import MARKER, CutIndex, cut_steps, is_summary, span
from playground.summarize.history import Plan, SummarySettings, apply, plan, run, summary_message
from playground.summarize.offline import OFFLINE_LABEL, OfflineSummarizer
from playground.summarize.online import OpenAISummarizer
from playground.workbench.presets import list_presets

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
        raise LLMError("the endpoint is down")


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
    last_turn = max(p for p, item in enumerate(items) if role_of(item) == "assistant")
    assert end <= last_turn + 1, "the span reaches past the last assistant turn: the model has not read that"


def _unplaced(items: tuple) -> tuple:
    """Items without their origins: the items a summary leaves keep where they came from in the run,
    while the request read back places them where they are in it."""
    return tuple(replace(item, origin=None) for item in items)


def _read_back(conversation) -> tuple:
    return _unplaced(formats.read(formats.write(conversation)).items)


def test_the_kept_items_are_the_very_objects_they_were() -> None:
    """What follows a request from call to call knows its items by identity: a summary changes
    only the span it replaces."""
    conversation = next(p for p in list_presets() if p.key == "coding-agent").conversation
    start, end = span(conversation.items, 1)
    done = run(conversation, conversation, SummarySettings(limit=0, keep_steps=1), OfflineSummarizer(), meter())
    out = done.conversation.items
    assert done.report.status == "summarized"
    assert all(a is b for a, b in zip(out[:start], conversation.items[:start], strict=True))
    assert all(a is b for a, b in zip(out[start + 1:], conversation.items[end:], strict=True))


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
    assert _read_back(out) == _unplaced(out.items), "still a valid request in its own format"
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
            assert _read_back(done.conversation) == _unplaced(done.conversation.items)


def test_keep_steps_0_never_summarizes_what_the_model_has_not_read():
    preset = next(p for p in list_presets() if p.key == "coding-agent")
    conversation = preset.conversation
    unread = conversation.items[-1]
    assert role_of(unread) == "tool"  # the request ends in a result the model has not read yet
    done = optimize(conversation, preset.rules, Settings(threshold=0), SummarySettings(limit=0, keep_steps=0),
                    OfflineSummarizer(), preset.model)
    assert done.summarization.report.status == "summarized"
    sent = done.conversation.items
    assert not is_summary(sent[-1]) and sent[-1].call_id == unread.call_id  # it stays, with the call it answers
    assert content_text(sent[-1].content) == content_text(done.compaction.conversation.items[-1].content)
    assert is_summary(sent[done.summarization.report.start])
    *_, last = cut_steps(conversation.items, 0)
    assert last.end <= max(p for p, item in enumerate(conversation.items) if role_of(item) == "assistant") + 1


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
    # folded in, not nested: the summary of (the first summary, then more) is the summary of all they replaced
    replaced = conversation.items[once.report.start:once.report.end + twice.report.end - twice.report.start - 1]
    whole = OfflineSummarizer().summarize(Plan(0, len(replaced), replaced, "", False, 600, meter()))
    text = content_text(twice.conversation.items[twice.report.summary_position].content)
    assert text.split("\n\n", 1)[1] == whole and "Earlier summary" not in text
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
        with pytest.raises(LLMError) as caught:
            summarizer.summarize(plan_for_tests())
    assert expected in str(caught.value)
    assert secret not in str(caught.value) and "\n" not in str(caught.value)
    if model == "busy":
        assert len(server.requests) == 2  # one bounded retry


def test_a_refused_connection_is_explained():
    with StubServer() as server:
        base_url = server.base_url
    summarizer = OpenAISummarizer(Endpoint("m", base_url, timeout=2, max_retries=0))
    with pytest.raises(LLMError, match=r"could not connect to 127\.0\.0\.1"):
        summarizer.check()


def test_connection_check_succeeds():
    with StubServer() as server:
        assert "connected" in OpenAISummarizer(Endpoint("m", server.base_url)).check()


def cli(*args, env=None):
    import os

    return subprocess.run([sys.executable, "-m", "playground", *args], cwd=ROOT, capture_output=True, text=True,
                          check=False, env={**os.environ, **(env or {})})


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


@pytest.mark.parametrize("name", sorted(REQUESTS))
@given(data=st.data(), keep=st.integers(0, 4), made=st.sampled_from([None, "user", "assistant"]))
def test_a_summary_proved_with_the_head_alone_is_the_summary_proved_in_the_whole_request(name, data, keep, made):
    """A carried summary (``apply(carried=True)``) writes and reads back only the head and the
    summary; the request must be the one proving it whole gives, also when the item after the span
    is one a policy made (no origin, ``made``'s role), which a writer may put in the summary's message."""
    conversation = formats.read(data.draw(REQUESTS[name]))
    found = span(conversation.items, keep)
    if found is None:
        return
    items = conversation.items
    if made is not None:
        items = (*items[:found[1]], Message(role=made, content="Made here."), *items[found[1]:])
    chosen = Plan(*found, items[found[0]:found[1]], "", False, 0, meter())
    compacted = conversation.with_items(items)
    whole = apply(compacted, chosen, "The summary.", "offline")
    carried = apply(compacted, chosen, "The summary.", "offline", carried=True)
    assert carried == whole
    assert [item.origin for item in carried.items] == [item.origin for item in whole.items]


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


# --- A summary that is not smaller is not applied; "still over" is said ----------------------


def tiny_span() -> dict:
    """Two short items between the head and the kept step: any summary, header included, is larger."""
    return {"model": "gpt-4o", "messages": [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the test."},
        {"role": "assistant", "content": None, "tool_calls": [call("c0", "read_file", path="a.py")]},
        {"role": "tool", "tool_call_id": "c0", "content": "x = 1"},
        {"role": "assistant", "content": "Done."}]}


def test_a_summary_that_is_not_smaller_is_refused():
    conversation = formats.read(tiny_span())
    done = run(conversation, conversation, SummarySettings(limit=0, keep_steps=1), OfflineSummarizer(), meter())
    report = done.report
    assert (report.start, report.end) == (2, len(conversation.items) - 1)  # the call and its short result
    assert report.status == "not_smaller"
    assert done.conversation == conversation and not any(is_summary(i) for i in done.conversation.items)
    assert report.tokens_after == report.tokens_before == tokens.count(conversation).total
    assert report.summary_tokens >= report.span_tokens > 0
    assert f"({report.summary_tokens:,} tokens)" in report.detail
    assert f"({report.span_tokens:,} tokens)" in report.detail
    assert report.still_over  # limit 0: the request is still at or over it


def test_cli_reports_not_smaller_and_still_over(tmp_path):
    path, report_path = tmp_path / "tiny.json", tmp_path / "r.json"
    path.write_text(json.dumps(tiny_span()))
    done = cli("compact", str(path), "--threshold", "0", "--keep-steps", "1", "--report", str(report_path))
    assert done.returncode == 0, done.stderr
    data = json.loads(report_path.read_text())
    summary = data["summarization"]
    assert summary["status"] == "not_smaller" and "not smaller" in summary["status_meaning"]
    assert summary["summary_tokens"] >= summary["span_tokens"]
    assert summary["still_over"] is True and "still over" in summary["still_over_meaning"]
    assert data["tokens_final"] == data["tokens_after_compaction"]  # nothing was applied
    assert not any(MARKER in (m.get("content") or "") for m in json.loads(done.stdout)["messages"])


def test_still_over_after_a_summary_that_was_applied():
    conversation = formats.read(long_run(8))
    done = run(conversation, conversation, SummarySettings(limit=100, keep_steps=6), OfflineSummarizer(), meter())
    assert done.report.status == "summarized" and done.report.tokens_after >= 100
    assert done.report.still_over and f"{done.report.tokens_after:,} tokens" in done.report.still_over_words
    enough = run(conversation, conversation, SummarySettings(limit=10**6 // 1000, keep_steps=0), OfflineSummarizer(),
                 meter())
    assert enough.report.status == "summarized"
    assert enough.report.still_over == (enough.report.tokens_after >= 1000)


# --- A limit below the threshold is refused ---------------------------------------------------


def test_cli_refuses_a_limit_below_the_threshold(run_file):
    done = cli("compact", str(run_file), "--threshold", "1000", "--summarize-over", "500")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert "--summarize-over" in done.stderr and "500" in done.stderr and "threshold of 1,000" in done.stderr
    assert cli("compact", str(run_file), "--threshold", "1000", "--summarize-over", "1000").returncode == 0
    assert cli("compact", str(run_file), "--threshold", "1000", "--summarize-over", "500",
               "--no-summarize").returncode == 0  # no summarization: nothing to refuse


def test_optimize_refuses_a_limit_below_the_threshold():
    with pytest.raises(InputError, match="499 is below the compaction threshold of 500"):
        optimize(formats.read(long_run()), book_rules(), Settings(threshold=500), SummarySettings(limit=499))


# --- Three stages -------------------------------------------------------------------------------------


def test_three_stages_keep_compaction_and_summary_savings_apart(tmp_path):
    body = long_run(8)
    result = optimize(formats.read(body), book_rules(), Settings(threshold=0), SummarySettings(limit=0, keep_steps=1),
                      OfflineSummarizer(), "gpt-4o")
    before, compacted, final = result.stages
    assert before.tokens == tokens.count(formats.read(body)).total
    assert compacted.tokens == tokens.count(result.compaction.conversation).total < before.tokens
    assert final.tokens == tokens.count(result.conversation).total < compacted.tokens
    assert (compacted.saved, final.saved) == (before.tokens - compacted.tokens, compacted.tokens - final.tokens)
    assert not compacted.lossy and final.lossy
    path, report_path = tmp_path / "run.json", tmp_path / "r.json"
    path.write_text(json.dumps(body))
    cli("compact", str(path), "--threshold", "0", "--summarize-over", "0", "--keep-steps", "1", "--report",
        str(report_path))
    data = json.loads(report_path.read_text())
    assert (data["tokens_before"], data["tokens_after_compaction"], data["tokens_final"]) == (
        before.tokens, compacted.tokens, final.tokens)
    assert data["tokens_saved"] == compacted.saved and data["tokens_saved_by_summary"] == final.saved
    assert [stage["tokens"] for stage in data["stages"]] == [before.tokens, compacted.tokens, final.tokens]
    off = optimize(formats.read(body), book_rules(), Settings(threshold=0), None, model="gpt-4o")
    assert off.stages[2].tokens == off.stages[1].tokens and off.stages[2].saved == 0


# --- The cut as steps ---------------------------------------------------------------------------------


def _check_steps(items, keep):
    steps = cut_steps(items, keep)
    assert steps[-1].kind in ("span", "nothing") and steps[-1].span == span(items, keep)
    answers = pairs(items)
    previous = None
    for step in steps:
        if step.kind == "move":  # the call was before the cut, its result at or after it
            assert answers[step.call] == step.result and step.call < previous <= step.result
            assert step.end <= step.call < previous
        if step.end is not None:
            assert all(p >= step.end for p in step.kept_steps)
            previous = step.end
    if steps[-1].span:
        assert len(steps[-1].kept_steps) >= keep
    return steps


def test_cut_steps_end_at_the_span_on_every_preset_and_trace():
    from playground.workbench import presets

    from .conftest import TRACES, shared

    conversations = [preset.conversation for preset in presets.list_presets()]
    conversations += [formats.read(json.loads(path.read_text())) for path in sorted(shared(TRACES).glob("*.json"))]
    assert len(conversations) > 3
    for conversation in conversations:
        for keep in (0, 1, 3, 10):
            _check_steps(conversation.items, keep)


def test_cut_steps_show_the_cut_moving_back():
    """A call answered only after the user spoke and the assistant started a new turn: the first
    cut falls between that call and its result, so it moves back to the call's own turn."""
    body = {"model": "gpt-4o", "messages": [
        {"role": "user", "content": "Go."},
        {"role": "assistant", "content": None, "tool_calls": [call("a", "read_file", path="a.py")]},
        {"role": "tool", "tool_call_id": "a", "content": "a"},
        {"role": "assistant", "content": None, "tool_calls": [call("x", "read_file", path="x.py")]},
        {"role": "user", "content": "Also check y."},
        {"role": "assistant", "content": "Will do."},
        {"role": "tool", "tool_call_id": "x", "content": "x"},
        {"role": "assistant", "content": "Done."}]}
    items = formats.read(body).items
    call_x = next(p for p, item in enumerate(items) if isinstance(item, ToolCall) and item.call_id == "x")
    steps = _check_steps(items, 2)
    assert [step.kind for step in steps] == ["head", "cut", "move", "span"]
    move = steps[2]
    assert (move.call, move.result) == (call_x, pairs(items)[call_x]) and move.end <= call_x < steps[1].end
    assert f"the call at item {call_x} would be separated from its result" in move.detail
    assert steps[-1].span == (1, move.end) and steps[-1].kept_steps[0] == move.end


@pytest.mark.parametrize("name", sorted(REQUESTS))
@given(data=st.data(), keep=st.integers(0, 4))
def test_cut_steps_are_consistent_on_any_request(name, data, keep):
    _check_steps(formats.read(data.draw(REQUESTS[name])).items, keep)


# --- A total transcript budget -----------------------------------------------------------------


def test_the_transcript_keeps_to_its_total_budget():
    conversation = formats.read(long_run(40))
    free = plan(conversation, conversation, SummarySettings(limit=0, keep_steps=1, transcript_budget=0), meter())
    assert meter().text(free.transcript) > 10_000  # the span is large
    shrunk = plan(conversation, conversation, SummarySettings(limit=0, keep_steps=1, transcript_budget=8_000), meter())
    assert meter().text(shrunk.transcript) <= 8_000
    assert "left out" not in shrunk.transcript and shrunk.transcript.count("[read_file result]") == 40
    dropped = plan(conversation, conversation, SummarySettings(limit=0, keep_steps=1, transcript_budget=1_500),
                   meter())
    text = dropped.transcript
    assert meter().text(text) <= 1_500
    assert "items in the middle left out: the transcript is held to 1,500 tokens" in text
    assert text.startswith("[user]") or text.startswith("[assistant]")  # the oldest block stays…
    assert "# module 39" in text  # …and so does the newest result in the span
    assert shrunk.key != dropped.key  # the budget is part of the summarizer's input


@given(total=st.integers(60, 5_000))
def test_any_transcript_budget_is_kept(total):
    conversation = formats.read(long_run(12))
    chosen = plan(conversation, conversation, SummarySettings(limit=0, keep_steps=1, transcript_budget=total), meter())
    assert meter().text(chosen.transcript) <= total


# --- A provider's error keeps its cause -------------------------------------------------------


@pytest.mark.parametrize(("model", "expected", "absent"), [
    ("too-long", "answered with an error (400): This model's maximum context length is 128000 tokens", "not JSON"),
    ("bad-gateway", "answered with an error (502): the reply is not JSON: <html>", None),
    ("garbage", "sent a reply that is not JSON", None),
    ("bad-key", "refused the API key (401): check the key", "sk-wr"),  # a 401's words echo part of a key
])
def test_provider_errors_keep_their_cause(model, expected, absent):
    with StubServer() as server:
        summarizer = OpenAISummarizer(Endpoint(model, server.base_url, api_key="sk-abc-123456", max_retries=0))
        with pytest.raises(LLMError) as caught:
            summarizer.summarize(plan_for_tests())
    message = str(caught.value)
    assert expected in message and "\n" not in message
    assert absent is None or absent not in message
    assert message.endswith(expected) or model != "bad-key"


# --- The timeout is the whole wait ----------------------------------------------------------


def test_the_timeout_bounds_the_whole_wait_and_the_message_says_how_long():
    with StubServer(hang_seconds=10) as server:
        summarizer = OpenAISummarizer(Endpoint("slow", server.base_url, timeout=1.5, max_retries=2))
        started = time.monotonic()
        with pytest.raises(LLMError) as caught:
            summarizer.check()
        elapsed = time.monotonic() - started
    assert elapsed < 1.5 + 1.5, "retries must not each get the full timeout"
    said = float(re.search(r"gave up after (\d+\.\d) s", str(caught.value)).group(1))
    assert 1.4 <= said <= elapsed + 0.1
    assert "the timeout of 1.5 s is the whole wait" in str(caught.value)


def test_retries_stay_within_the_timeout():
    with StubServer() as server:  # always 429, asking for a 10 ms wait: retries until the time is up
        summarizer = OpenAISummarizer(Endpoint("busy", server.base_url, timeout=1.0, max_retries=1000))
        started = time.monotonic()
        with pytest.raises(LLMError, match=r"rate limiting requests \(429\)"):
            summarizer.check()
        elapsed = time.monotonic() - started
    assert elapsed < 1.0 + 1.0 and len(server.requests) > 2


# --- The operator's key goes only to allowed hosts ----------------------------------------------


@pytest.mark.parametrize(("base_url", "host"), [
    (None, "api.openai.com"), ("", "api.openai.com"), ("https://api.openai.com/v1", "api.openai.com"),
    ("https://API.OpenAI.com/v1", "api.openai.com"), ("https://api.openai.com@evil.example/v1", "evil.example"),
    ("https://api.openai.com.evil.example/v1", "api.openai.com.evil.example"),
    ("http://user:pw@127.0.0.1:8080/v1", "127.0.0.1"), ("localhost:11434/v1", "localhost"),
])
def test_the_host_is_the_one_the_client_connects_to(base_url, host):
    assert keys.host_of(base_url) == host


_URL_PARTS = st.sampled_from(["http://", "https://", "//", "", "api.openai.com", "evil.example", "127.0.0.1", "@",
                              ":", "8080", "/v1", "?x=1", "#", "user:pw", "[::1]", "[", "]", "\\", " ", "\t", "%40",
                              "API.OpenAI.COM", ".", "/", "HTTP:", "x+y:", "ä", "_"])


@given(st.lists(_URL_PARTS, min_size=1, max_size=8).map("".join))
def test_the_host_read_agrees_with_the_openai_clients_parser(url):
    """Whatever host we name for a URL is the one openai's HTTP client (httpx2) would connect to (or the
    client refuses the URL), so an allowed-host check can never pass for one host and send the key to
    another."""
    import httpx2  # openai's own dependency: the test compares against it, the app does not import it

    ours = keys.host_of(url)
    if not ours or not url.strip():
        return  # no host named: the operator's key goes nowhere
    try:
        client = httpx2.URL(url.strip() if "//" in url else f"//{url.strip()}")
    except httpx2.InvalidURL:
        return  # the client refuses the URL: no request is made, so no key is sent
    assert client.host.lower() == ours


def test_resolve_key_sends_the_operator_key_only_to_allowed_hosts():
    env = {"OPENAI_API_KEY": "sk-operator"}
    assert keys.resolve_key(None, None, env, {}).key == "sk-operator"
    assert keys.resolve_key("https://api.openai.com@evil.example/v1", None, env, {}).source == keys.WITHHELD
    assert keys.resolve_key("http://127.0.0.1:9/v1", None, env, {}).key is None
    assert keys.resolve_key("http://127.0.0.1:9/v1", None, {**env, "PLAYGROUND_KEY_HOSTS": "x.org, 127.0.0.1"},
                            {}).key == "sk-operator"
    assert keys.resolve_key("http://127.0.0.1:9/v1", None, env, {"PLAYGROUND_KEY_HOSTS": "127.0.0.1"}).key == \
        "sk-operator"
    assert keys.resolve_key("http://127.0.0.1:9/v1", None, {}, {"OPENAI_API_KEY": "sk-secret"}).source == \
        keys.WITHHELD
    assert keys.resolve_key("http://127.0.0.1:9/v1", " sk-typed ", env, {}).key == "sk-typed"
    withheld = keys.resolve_key("http://evil.example/v1", None, env, {})
    unset = keys.resolve_key("http://evil.example/v1", None, {}, {})
    assert withheld.label == unset.label  # a visitor cannot tell whether the operator has a key
    for choice in (withheld, unset, keys.resolve_key(None, None, env, {})):
        assert "OPENAI_API_KEY" not in choice.label and "environment" not in choice.label
        assert "sk-operator" not in repr(choice)


def test_cli_refuses_the_environment_key_for_an_unlisted_host(run_file):
    with StubServer() as server:
        done = cli("compact", str(run_file), "--threshold", "100", "--summarizer", "openai", "--llm-model", "stub",
                   "--base-url", server.base_url, env={"OPENAI_API_KEY": "sk-operator-key", "PLAYGROUND_KEY_HOSTS": ""})
        assert server.requests == []  # nothing was sent at all
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "PLAYGROUND_KEY_HOSTS=127.0.0.1" in done.stderr and "sk-operator-key" not in done.stderr


def test_cli_without_any_key_reaches_a_local_server_without_one(run_file):
    env = {k: "" for k in ("OPENAI_API_KEY", "PLAYGROUND_KEY_HOSTS")}
    with StubServer() as server:
        done = cli("compact", str(run_file), "--threshold", "100", "--summarizer", "openai", "--llm-model", "stub",
                   "--base-url", server.base_url, env=env)
        assert server.requests[-1]["headers"]["authorization"] == "Bearer not-needed"
    assert done.returncode == 0, done.stderr


def test_credentials_in_the_url_never_show():
    endpoint = Endpoint("m", "http://alice:hunter2@127.0.0.1:9/v1", timeout=2, max_retries=0)
    assert endpoint.where == "127.0.0.1:9"
    assert "hunter2" not in online.label(endpoint) and "alice" not in online.label(endpoint)
    with pytest.raises(LLMError) as caught:
        OpenAISummarizer(endpoint).check()
    assert "hunter2" not in str(caught.value) and "127.0.0.1:9" in str(caught.value)


# --- Summarizing at every call, carried from the last call ---------------------------------------------

_SHAPES = st.one_of(
    st.builds(ToolCall, call_id=st.sampled_from("abc"), name=st.sampled_from(["read_file", "bash"]),
              arguments=st.sampled_from(['{"path": "a"}', '{"file_path": "b"}', '{"command": "ls"}', "{}", "x"])),
    st.builds(ToolResult, call_id=st.sampled_from("abc"), name=st.sampled_from(["read_file", "bash"]),
              content=st.sampled_from(["r", "Error: no such file", "a\nb"])),
    st.builds(Message, role=st.sampled_from(["user", "assistant", "system", "developer"]),
              content=st.sampled_from(["hi", f"{MARKER} (x)]\n\nearlier", ""])),
    # thinking, which Anthropic bills only after the last user message
    st.builds(Message, role=st.just("assistant"), content=st.just((
        Part("thinking", extra={"thinking": "Let me read the file first."}), Part("text", "Reading.")))))


@st.composite
def _growing(draw, least: int = 0):
    """Requests as a policy that summarizes at every call sees them: each the last one grown by a
    few items, sometimes with one earlier item replaced (a masked output, or anything else)."""
    items = draw(st.lists(_SHAPES, min_size=least, max_size=30))
    requests, length = [], draw(st.integers(0, len(items)))
    for _ in range(draw(st.integers(1, 10))):
        request = items[:length]
        length += draw(st.integers(0, 3))
        if request and draw(st.booleans()):
            request[draw(st.integers(0, len(request) - 1))] = draw(_SHAPES)
        requests.append(tuple(request))
    return requests


@given(_growing(), st.integers(0, 3))
def test_the_cut_carried_from_the_last_request_is_the_cut_of_each_request_whole(requests, keep):
    index = CutIndex()
    for items in requests:
        assert index.span(items, keep) == span(items, keep)


def test_a_call_in_the_head_answered_after_the_cut_leaves_nothing_to_summarize():
    """The call at item 0 comes before the first user message and is answered last: the cut
    moved back to the head and stayed there, moving again and again (the whole pass never
    returned). Nothing can be summarized without cutting that call from its result."""
    items = (ToolCall(call_id="a", name="bash", arguments="{}"), Message(role="user", content="Go."),
             ToolCall(call_id="b", name="bash", arguments="{}"), ToolResult(call_id="b", name="bash", content="b"),
             ToolCall(call_id="c", name="bash", arguments="{}"), ToolResult(call_id="a", name="bash", content="a"))
    steps = cut_steps(items, 1)
    assert steps[-1].kind == "nothing" and (steps[-1].call, steps[-1].result) == (0, 5)
    assert span(items, 1) is None and CutIndex().span(items, 1) is None


def test_a_call_answered_twice_is_not_parted_from_its_second_result():
    """Real logs repeat ids: here the second result of call ``a`` follows the last assistant turn.
    The cut used to read only a call's first result, summarized the call and left the second
    result answering nothing (the request no longer read back). Each cut, whole and carried,
    keeps that call's turn with both results, so here nothing is left to summarize."""
    call = ToolCall(call_id="a", name="read_file", arguments="{}")
    result = ToolResult(call_id="a", name="read_file", content="r")
    items = (Message(role="user", content="Go."), call, result, Message(role="assistant", content="Done."), result)
    for keep in range(3):
        assert span(items, keep) is None and CutIndex().span(items, keep) is None


_USER, _THINKING = Message(role="user", content="Go on."), Message(role="assistant", content=(
    Part("thinking", extra={"thinking": "Let me read the file first."}), Part("text", "Reading.")))
_AGAIN = replace(_THINKING, content=(_THINKING.content[0], Part("text", "Reading again.")))
_RUN = (_USER, _THINKING, *(ToolCall(call_id=f"c{n}", name="bash", arguments="{}") for n in range(12)))
# Responses' reasoning sent back is billed only after the last user message, for any model's meter
_REASONED = formats.read({"input": [
    {"role": "user", "content": "Read a."},
    {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "e" * 4000},
    *({"type": "function_call", "call_id": f"c{n}", "name": "read", "arguments": "{}"} for n in range(12)),
    {"role": "user", "content": "Now b."}]}, "responses").items


@given(_growing(least=1), st.sampled_from(["gpt-4o", "claude-sonnet-4-5"]))
@example([_RUN, (*_RUN, _USER)], "claude-sonnet-4-5")
@example([(*_RUN, _USER), (_USER, _AGAIN, *_RUN[2:], _USER)], "claude-sonnet-4-5")
@example([_REASONED[:-1], _REASONED], "gpt-4o")
def test_counts_carried_from_the_last_request_are_each_request_counted_whole(requests, model):
    """Each request's item counts, and their sums over a range, carried: also where Anthropic's
    billed thinking or Responses' billed reasoning moves (a user message arrives after it; thinking
    replaced before the last user message is not billed)."""
    counter, carry = tokens.Meter(model), CarriedCounts()
    for items in requests:
        counts = list(counter.items(items))
        assert carry.counts(items, counter) == counts
        ranges = [(start, max(start, len(items) - start // 2)) for start in range(len(items) + 1)]
        assert [carry.between(start, end) for start, end in ranges] == [sum(counts[start:end]) for start, end in ranges]


_MADE = ((), (summary_message("What happened.", 2, "offline"),),
         (Message(role="user", content="Kept."), summary_message("What happened.", 2, "offline")))


@given(_growing(least=1), st.sampled_from(["gpt-4o", "claude-sonnet-4-5"]), st.data())
@example([_REASONED], "gpt-4o", None)
def test_a_request_with_items_replaced_is_counted_from_its_carried_counts_as_counted_whole(requests, model, data):
    """A policy that summarizes at every call (Letta, the condensers, summarize) counts its result from
    the request's carried counts: the items put in, the total and what follows them are those of the
    result counted whole — or, for Claude or a request with thinking or reasoning, it is told to count
    it whole (None)."""
    counter, carry = tokens.Meter(model), CarriedCounts()
    for items in requests:
        carry.counts(items, counter)
        request = Conversation(items=items, format="chat")
        before = counter.count(request)
        start = data.draw(st.integers(0, len(items))) if data else 1
        end = data.draw(st.integers(start, len(items))) if data else len(items)
        made = data.draw(st.sampled_from(_MADE)) if data else _MADE[1]
        found = carry.replaced(before.total, start, end, made, counter)
        if counter.claude or any(map(tokens.turn_billed, items)):
            assert found is None
            continue
        counted = counter.count(request.with_items((*items[:start], *made, *items[end:])))
        assert found is not None and found.total == counted.total
        assert found.made == tuple(counted.items[start:start + len(made)])
        assert found.after == sum(counted.items[start + len(made):])


@given(_growing(least=1), st.integers(0, 3))
def test_the_offline_summary_carried_from_the_last_span_is_the_summary_of_the_whole_span(requests, start):
    """A span that grows (and one that does not: the reading starts again) summarizes as a fresh
    summarizer reading it whole, also when a tool's telling argument changes with its new calls."""
    carried = OfflineSummarizer()
    for items in requests:
        chosen = Plan(start, len(items), items[start:], "", False, 600, meter())
        assert carried.summarize(chosen) == OfflineSummarizer().summarize(chosen)


# --- The offline summary stays bounded: older lines fold, an earlier offline summary folds in -------------------

_TOOLS = {"read_file": "path", "bash": "command", "mcp__git__log": "ref"}


@st.composite
def _steps(draw, most: int):
    """Items of a span, a call always beside its result, each tool always called with the same argument."""
    items: list = []
    for n in range(draw(st.integers(0, most))):
        kind = draw(st.sampled_from(["user", "assistant", "call", "call", "call"]))
        if kind == "call":
            tool = draw(st.sampled_from(sorted(_TOOLS)))
            body = draw(st.sampled_from(["ok\nfine", "Error: no such file", "3 lines\nof\ntext"]))
            items += [ToolCall(call_id=f"c{n}", name=tool, arguments=json.dumps({_TOOLS[tool]: f"v{n % 7}"})),
                      ToolResult(call_id=f"c{n}", name=tool, content=body)]
        else:
            items.append(Message(role=kind, content=draw(st.sampled_from(["Go on.", "Done: it builds.", "Why?\nok"]))))
    return tuple(items)


def _offline(items) -> str:
    return OfflineSummarizer().summarize(Plan(0, len(items), tuple(items), "", False, 600, meter()))


def _calls(count: int, start: int = 0) -> tuple:
    """``count`` calls with their results, the tools in turn, from call ``start`` on."""
    tools = sorted(_TOOLS)
    return tuple(item for n in range(start, start + count) for tool in (tools[n % len(tools)],) for item in (
        ToolCall(call_id=f"c{n}", name=tool, arguments=json.dumps({_TOOLS[tool]: f"f{n}"})),
        ToolResult(call_id=f"c{n}", name=tool, content="Error: denied" if n % 9 == 0 else "ok")))


_SHARED = OfflineSummarizer()  # one summarizer across examples: what it carried from the last must not leak


@given(_steps(120), _steps(120), st.booleans())
@example(_calls(60), _calls(30, 60), True)
def test_the_summary_of_an_earlier_summary_and_what_followed_is_the_summary_of_both(first, then, fresh):
    """Folding in, not nesting: whether older lines were folded before (in the earlier summary) or
    now, the lines shown and the counts folded are those of the whole span — so summarizing at
    every call neither grows the summary nor loses count of what it stands for."""
    earlier = (summary_message(_offline(first), len(first), OFFLINE_LABEL),) if first else ()
    summarizer = OfflineSummarizer() if fresh else _SHARED
    again = summarizer.summarize(Plan(0, len(earlier) + len(then), (*earlier, *then), "", bool(first), 600, meter()))
    assert again == _offline((*first, *then))


def test_the_offline_summary_of_a_long_run_is_bounded():
    """2,000 calls: the newest lines of each section, the older ones counted per tool."""
    text = _offline(_calls(2_001))
    assert len(text.splitlines()) < 100 and "extracted from 4,002 items" in text
    assert "- … 1,961 earlier calls: bash ×654, mcp__git__log ×654, read_file ×653" in text and '"f2000"' in text
    assert "- … 208 earlier errors" in text  # 223 calls failed (every ninth), the newest 15 are shown
    errors = text.split("Errors:")[1]
    assert '"f1872"' in errors and '"f1863"' not in errors


def test_a_summary_written_by_a_model_is_kept_whole_when_folded_in_again():
    """An LLM's summary (blank lines, its own lists) is kept in the earlier section, once, and
    comes back as it was when the offline summary holding it is summarized again."""
    model = "The user wants a CLI.\n\nFindings:\n- main.py parses args\n  - with argparse\n\nErrors: none"
    step = (ToolCall(call_id="a", name="bash", arguments='{"command": "ls"}'),
            ToolResult(call_id="a", name="bash", content="main.py"))
    once = _offline((summary_message(model, 9, "gpt-4o"), *step))
    twice = _offline((summary_message(once, 11, OFFLINE_LABEL), *step))
    assert twice.count("The user wants a CLI.") == 1 and "extracted from 5 items" in twice
    assert _offline((summary_message(model, 9, "gpt-4o"), *step, *step)) == twice
    back = twice.split("Earlier summary:\n- ", 1)[1].split("\n\nTool calls")[0]
    assert back.replace("\n  ", "\n") == model


@pytest.mark.parametrize("count", [",", "1,2", "9" * 5_000, "\u0661"])
def test_an_earlier_summary_that_only_looks_offline_is_read_without_a_traceback(count):
    """A summary in an uploaded log that mimics ours with a count no summary of ours writes (a bare
    comma, ungrouped digits, more digits than Python reads, an Arabic-Indic digit): kept whole, or
    its odd fold kept as a line, never a ValueError."""
    head = f"({OFFLINE_LABEL}: extracted from {count} items, not written by a model.)"
    fold = f"({OFFLINE_LABEL}: extracted from 2 items, not written by a model.)\n\nTool calls, in order:\n" \
           f"- … 3 earlier calls: bash ×{count}"
    assert f"Earlier summary:\n- {head}" in _offline((summary_message(head, 2, "x"),))
    text = _offline((summary_message(fold, 2, "x"),))
    assert f"Tool calls, in order:\n- … 3 earlier calls: bash ×{count}" in text and "Earlier summary" not in text
