"""The agents' and providers' own compaction as policies: per policy a hand-made
conversation that shows its trigger, what it keeps and what it drops; invariants on generated
conversations; summaries billed in replay and compare; the data file and the sources shown."""

from __future__ import annotations

import dataclasses
import json
import unittest.mock
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from playground import formats
from playground.conversation import (
    Conversation,
    Item,
    Message,
    ToolCall,
    ToolResult,
    content_text,
    is_instruction,
    links,
    role_of,
    turn_end,
    turn_starts,
)
from playground.meter.carried import CarriedCounts
from playground.meter.tokens import Meter
from playground.policies import LOGGED, POLICIES, THEIRS, make
from playground.policies.aider import AiderSummaryPolicy, _Answers, _DoneTurns, _parted, _Parts, _parts
from playground.policies.base import PolicyResult, RunningTotal, UserTurns, unchanged, unread_from
from playground.policies.clear_tool_uses import ClearToolUsesPolicy
from playground.policies.cline import ClineTruncationPolicy
from playground.policies.condense import CondenseIndex, CondensePolicy, condense_span, message_starts
from playground.policies.gemini_compression import GeminiCompressionPolicy
from playground.policies.letta import LettaMessages, LettaSlidingWindowPolicy
from playground.policies.llamaindex import LlamaIndexMemoryPolicy
from playground.policies.masking import MaskingPolicy
from playground.policies.opencode_summary import OpencodeSummaryPolicy
from playground.policies.provenance import read_provenance, source_of
from playground.policies.prune import PrunePolicy
from playground.policies.summarize import SummarizePolicy
from playground.policies.thinking import ClearThinkingPolicy
from playground.policies.trimmer import ToolOutputTrimmerPolicy
from playground.run.compare import compare
from playground.run.prices import read_prices
from playground.run.replay import applied, call_starts, replay
from playground.summarize.cut import MARKER, is_summary
from playground.summarize.history import DEFAULT_PROMPT, summary_message
from playground.summarize.offline import OfflineSummarizer

from .conftest import TRACES, load_shared, shared
from .strategies import LONG_RUNS, REQUESTS, anthropic_requests, long_texts, responses_requests
from .test_cli import cli

PRICES = read_prices()
GPT4O = PRICES.get("gpt-4o")
METER = Meter("gpt-4o")


def words(n: int, word: str = "data") -> str:
    """About ``n`` tokens of text (each ' data' is one token)."""
    return " ".join([word] * n)


def chat(*turns: tuple[str, Any], system: str = "You are a coding agent.") -> Conversation:
    """A Chat Completions request from turns: ("user", text), ("assistant", text) or
    ("calls", [(tool, output), …]) — one assistant message with its calls, then their results."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
    number = 0
    for kind, value in turns:
        if kind != "calls":
            messages.append({"role": kind, "content": value})
            continue
        ids = [f"call_{number + k}" for k in range(len(value))]
        number += len(value)
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": i, "type": "function", "function": {"name": tool, "arguments": "{}"}}
            for i, (tool, _) in zip(ids, value, strict=True)]})
        messages += [{"role": "tool", "tool_call_id": i, "content": output}
                     for i, (_, output) in zip(ids, value, strict=True)]
    return formats.read({"model": "gpt-4o", "messages": messages})


def texts(conversation: Conversation) -> list[str]:
    """The messages' and results' texts (Chat's empty assistant message before its calls left out)."""
    return [content_text(item.content) for item in conversation.items
            if not isinstance(item, ToolCall) and content_text(item.content)]


def shape(conversation: Conversation) -> list[str]:
    """Each item's role, Chat's empty assistant message before its calls left out."""
    return [role_of(item) for item in conversation.items if not (isinstance(item, Message) and item.content is None)]


def results(conversation: Conversation) -> list[str]:
    return [content_text(item.content) for item in conversation.items if isinstance(item, ToolResult)]


# --- the data file and the sources --------------------------------------------------------------

def test_every_named_policy_has_its_parameters_source_and_date_in_the_data_file():
    data = read_provenance()
    assert set(THEIRS) | set(LOGGED) == set(data)
    for name, provenance in data.items():
        assert provenance.source and provenance.read in ("2026-12-01", "2026-12-06") and provenance.kept \
            and provenance.dropped
        assert source_of(name) == f"{provenance.source} (read {provenance.read})"
        assert make(name).params() or name in LOGGED  # the data file's parameters build the policy (the log's: none)


# --- each policy's defining behaviour, by hand --------------------------------------------------

def test_anthropic_compaction_fires_above_150000_and_keeps_only_the_summary_and_the_unread_turn():
    request = chat(("user", "Fix the bug."), ("calls", [("read", words(80_000))]), ("assistant", "Found it."),
                   ("calls", [("read", words(60_000))]), ("user", "Now run the tests."))
    policy = make("anthropic-compaction")
    assert METER.count(request).total < 150_000
    assert policy.apply(request, METER).fired is None  # below the trigger nothing changes
    bigger = chat(("user", "Fix the bug."), ("calls", [("read", words(80_000))]), ("assistant", "Found it."),
                  ("user", "Read the other one."), ("calls", [("read", words(75_000))]), ("user", "Now run the tests."))
    done = make("anthropic-compaction").apply(bigger, METER)
    sent = done.conversation.items
    assert done.fired == "summarization"
    # system, the compaction block, then the turn not yet answered: the last calls with their results, the request
    assert shape(done.conversation) == ["system", "user", "assistant", "tool", "user"]
    assert is_summary(sent[1]) and content_text(sent[-1].content) == "Now run the tests."
    assert "Fix the bug." not in texts(done.conversation) and "Read the other one." not in texts(done.conversation)
    assert done.summarization.output_tokens == METER.count(done.conversation).items[1]
    assert done.summarization.input_tokens > 80_000  # the dropped span and the prompt, read by the summarizer


class _ClearingEveryItem(ClearThinkingPolicy):
    """Clearing thinking as it was before what a call cleared was carried: every item before the edge walked."""

    def cleared(self, conversation):
        object.__setattr__(self, "done", type(self.done)())
        return super().cleared(conversation)


@settings(max_examples=100, deadline=None)
@given(st.one_of(anthropic_requests(2, 12), LONG_RUNS), st.sampled_from(["stored", "per-call"]), st.integers(1, 3))
def test_clearing_thinking_on_from_the_last_call_clears_what_walking_each_request_clears(body, mode, keep):
    """A request grown from the last one (per call) or from what it sent (stored) is read only from
    the last edge on: every call clears, sends and bills what walking the whole request did."""
    conversation, meter = formats.read(body), Meter("claude-sonnet-4-5")
    carried, walked = ClearThinkingPolicy(keep=keep), _ClearingEveryItem(keep=keep)
    given_ = history = ()
    for start in call_starts(conversation.items):
        new = conversation.items[len(given_):start]
        request = conversation.grown(given_ if mode == "per-call" else history, new)
        assert carried.cleared(request) == walked.cleared(request)
        assert carried.apply(request, meter) == walked.apply(request, meter)
        given_, history = request.items, carried.cleared(request)[0].items  # (stored: as if every clearing were sent)
    assert ([result for _, result in applied(conversation, ClearThinkingPolicy(keep=keep), meter, mode)]
            == [result for _, result in applied(conversation, _ClearingEveryItem(keep=keep), meter, mode)])


def test_clear_thinking_keeps_the_newest_turns_thinking_only():
    def turn(n: int) -> dict[str, Any]:
        return {"role": "assistant", "content": [{"type": "thinking", "thinking": f"thought {n} " * 50,
                                                  "signature": "s"}, {"type": "text", "text": f"answer {n}"}]}
    request = formats.read({"model": "claude-sonnet-4-5", "system": "s", "messages": [
        {"role": "user", "content": "q1"}, turn(1), {"role": "user", "content": "q2"}, turn(2),
        {"role": "user", "content": "q3"}, turn(3), {"role": "user", "content": "q4"}]})
    sent, cleared = ClearThinkingPolicy(keep=1).cleared(request)
    thinking = [item.content[0].extra["thinking"] for item in sent.items
                if isinstance(item.content, tuple) and item.content[0].type == "thinking"]
    assert len(cleared) == 2 and thinking == ["thought 3 " * 50]  # turns 1 and 2 lost theirs
    assert [t for t in texts(sent) if t.startswith("answer")] == ["answer 1", "answer 2", "answer 3"]
    assert ClearThinkingPolicy(keep=3).cleared(request)[1] == ()
    # Anthropic bills no earlier turn's thinking, so clearing it saves nothing: the request goes as it was
    assert make("anthropic-clear-thinking").apply(request, Meter("claude-sonnet-4-5")).fired is None


def test_openai_compaction_keeps_the_user_messages_and_drops_the_rest():
    request = chat(("user", "Task one."), ("calls", [("bash", words(3_000))]), ("assistant", "Done one."),
                   ("user", "Task two."), ("calls", [("bash", words(3_000))]), ("user", "Task three."))
    done = CondensePolicy(trigger=5_000, keep_user_tokens=None).apply(request, METER)
    kept = texts(done.conversation)
    assert kept[:3] == ["You are a coding agent.", "Task one.", "Task two."]
    # the summary, then the turn not yet answered (the last calls, their output) and the new request
    assert kept[3].startswith(MARKER) and kept[4:] == [words(3_000), "Task three."]
    assert len(results(done.conversation)) == 1 and "Done one." not in kept


def test_the_agents_sdk_trimmer_trims_only_long_outputs_before_the_second_newest_user_message():
    long, short = "x" * 600, "y" * 400
    request = chat(("user", "First."), ("calls", [("bash", long), ("read", short)]), ("user", "Second."),
                   ("calls", [("bash", long)]), ("user", "Third."))
    done = make("agents-sdk-trimmer").apply(request, METER)
    assert results(done.conversation) == [
        f"[Trimmed: bash output — 600 chars → 200 char preview]\n{'x' * 200}...", short, long]
    one_user = chat(("user", "Only one."), ("calls", [("bash", long)]))
    assert make("agents-sdk-trimmer").apply(one_user, METER).fired is None  # fewer than 2 user messages
    assert ToolOutputTrimmerPolicy(trimmable_tools=("read",)).apply(request, METER).fired is None


def test_claude_code_compact_fires_at_the_window_less_its_reserve():
    policy = make("claude-code-compact", context_window=60_000)
    assert policy.params()["trigger"] == 27_000  # 60,000 less 20,000 for the summary less a 13,000 buffer
    below = chat(("user", "Go."), ("calls", [("Read", words(20_000))]), ("calls", [("Read", words(5_000))]),
                 ("user", "And?"))
    assert policy.apply(below, METER).fired is None
    above = chat(("user", "Go."), ("calls", [("Read", words(23_000))]), ("calls", [("Read", words(5_000))]),
                 ("user", "And?"))
    done = policy.apply(above, METER)
    assert shape(done.conversation) == ["system", "user", "assistant", "tool", "user"]
    assert "Go." not in texts(done.conversation)
    assert make("claude-code-compact").params()["trigger"] == 167_000  # of a 200,000 window, as analysed


def test_claude_code_microcompact_clears_past_12_results_all_but_the_newest_5_of_its_tools():
    calls = [("Read", f"file {n} " * 40) for n in range(13)] + [("TodoWrite", "todo " * 40)]
    done = make("claude-code-microcompact").apply(chat(("user", "Go."), ("calls", calls)), METER)
    out = results(done.conversation)
    assert out[:8] == ["[Old tool result content cleared]"] * 8
    assert out[8:13] == [f"file {n} " * 40 for n in range(8, 13)]
    assert out[13] == "todo " * 40  # not one of the tools it clears
    twelve = chat(("user", "Go."), ("calls", calls[1:]))
    assert make("claude-code-microcompact").apply(twelve, METER).fired is None


def test_codex_compact_keeps_the_newest_user_messages_up_to_20000_tokens_and_the_summary():
    request = chat(("user", words(8_000, "alpha")), ("calls", [("shell", words(3_000))]),
                   ("user", words(8_000, "beta")), ("calls", [("shell", words(3_000))]),
                   ("user", words(8_000, "gamma")), ("calls", [("shell", words(3_000))]), ("user", "Continue."))
    policy = make("codex-compact", context_window=30_000)  # 90%: fires above 27,000
    done = policy.apply(request, METER)
    kept = texts(done.conversation)
    assert kept[2] == words(8_000, "beta") and kept[3] == words(8_000, "gamma")  # the newest two whole
    assert METER.text(kept[1]) <= 4_000 and kept[1].startswith("alpha")  # the one that overflows is cut
    assert kept[4].startswith(MARKER) and kept[5:] == [words(3_000), "Continue."]
    assert len(results(done.conversation)) == 1  # only the unanswered turn's output


def test_langchain_summarization_keeps_the_newest_20_messages_without_parting_a_call_from_its_result():
    turns: list[tuple[str, Any]] = [("user", "Start.")]
    turns += [("calls", [("search", words(300)), ("fetch", words(300))]) for _ in range(8)]
    request = chat(*turns)  # 8 × (one assistant message with two calls + two results) = 24 messages
    done = make("langchain-summarization").apply(request, METER)
    items = done.conversation.items
    first_kept = next(p for p, item in enumerate(items) if is_summary(item)) + 1
    assert role_of(items[first_kept]) == "assistant"  # the cut moved to the start of a call's message
    assert len(formats.write(done.conversation)["messages"]) - 2 == 21  # system, summary, then 21 messages:
    # 20 would part a call from its result, so the cut moved back to a whole turn (7 turns of 3 messages)
    assert done.summarization.input_tokens <= 4_000 + METER.text(DEFAULT_PROMPT)  # the summarizer reads 4,000


def test_a_summary_never_leaves_a_second_result_of_a_call_it_replaced():
    """CI found it: a Responses request whose call id ``call_a`` is called twice and answered
    twice. LangChain's cut read only the first answer, summarized both calls and kept the
    second result, which then answered nothing and the request no longer read back."""
    call = {"type": "function_call", "call_id": "call_a", "name": "read_file", "arguments": '{"path": "a.py"}'}
    output = {"type": "function_call_output", "call_id": "call_a", "output": ""}
    request = formats.read({"model": "gpt-5", "input": [call, call, output, output,
                                                        {"type": "message", "role": "assistant", "content": []}]})
    sent = CondensePolicy(trigger=0, keep_last=2, input_cap=5).apply(request, METER).conversation
    formats.write(sent)
    assert formats.rewritten(sent) == sent


def test_langchain_summarizes_only_the_newest_4000_tokens_of_the_span():
    turns = [("user", "Start.")] + [("calls", [("search", words(900, f"w{n}"))]) for n in range(30)]  # 1,800 each
    done = make("langchain-summarization").apply(chat(*turns), METER)
    summary = next(content_text(item.content) for item in done.conversation.items if is_summary(item))
    assert "it replaces 61 items" in summary and summary.count("→ ok") == 2  # read: the two newest outputs
    assert done.summarization.input_tokens <= 4_000 + METER.text(DEFAULT_PROMPT)


def test_openhands_masking_masks_outputs_outside_the_newest_100_events():
    request = chat(("user", "Go."), *[("calls", [("run", f"out {n} " * 9)]) for n in range(40)], ("user", "Next."))
    out = results(make("openhands-masking").apply(request, METER).conversation)
    # Chat: 1 system + 1 user + 40 × (empty assistant message, call, result) + 1 user = 123 items; the newest
    # 100 start at item 23, the 8th turn's call: outputs 0 to 6 are older
    assert out[:7] == ["<MASKED>"] * 7 and out[7:] == [f"out {n} " * 9 for n in range(7, 40)]


def test_openhands_condenser_keeps_the_first_two_and_the_newest_117_events_past_240():
    turns = [("user", "Go.")] + [("calls", [("run", f"out {n} " * 5)]) for n in range(120)]
    request = chat(*turns)  # 1 system + 1 user + 240 = 242 messages
    policy = make("openhands-condenser")
    assert policy.apply(chat(*turns[:-1]), METER).fired is None  # 240 messages: not past max_size
    done = policy.apply(request, METER)
    messages = formats.write(done.conversation)["messages"]
    assert messages[1]["content"] == "Go." and messages[2]["tool_calls"]  # the first 2 after the system prompt
    assert messages[3]["role"] == "tool"  # moved on to keep the call's result with it
    assert messages[4]["content"].startswith(MARKER) and len(messages) - 5 == 118  # the newest 117, and
    # one more so as not to part the oldest kept result from its call


def test_swe_agent_keeps_the_newest_5_outputs_and_the_task():
    output = "\n".join(f"line {k}: some output" for k in range(10))
    request = chat(("user", "The task."), *[("calls", [("bash", output)]) for _ in range(8)])
    done = make("swe-agent-last-n").apply(request, METER)
    assert results(done.conversation) == ["Old environment output: (10 lines omitted)"] * 3 + [output] * 5
    assert texts(done.conversation)[1] == "The task."


# --- invariants on generated conversations ------------------------------------------------------

# each of theirs with numbers that make it fire on small generated conversations
THEIR_FIRING = {
    "anthropic-compaction": lambda: CondensePolicy(trigger=0),
    "anthropic-clear-thinking": lambda: ClearThinkingPolicy(keep=1),
    "openai-compaction": lambda: CondensePolicy(trigger=0, keep_user_tokens=None),
    "agents-sdk-trimmer": lambda: ToolOutputTrimmerPolicy(recent_turns=1, max_output_chars=5, preview_chars=2),
    "claude-code-compact": lambda: CondensePolicy(context_window=0, window_reserve=0),
    "claude-code-microcompact": lambda: ClearToolUsesPolicy(trigger_tool_uses=0, keep=0, only_tools=("bash",),
                                                            placeholder="[Old tool result content cleared]"),
    "codex-compact": lambda: CondensePolicy(trigger=0, keep_user_tokens=20),
    "langchain-summarization": lambda: CondensePolicy(trigger=0, keep_last=2, input_cap=5),
    "openhands-masking": lambda: MaskingPolicy(window=2, over_items=True, placeholder="<MASKED>"),
    "openhands-condenser": lambda: CondensePolicy(trigger_messages=2, keep_first=1, keep_last=1),
    "swe-agent-last-n": lambda: MaskingPolicy(window=1, placeholder="Old environment output: ({lines} lines omitted)"),
    "gemini-tool-output-masking": lambda: PrunePolicy(protect_tokens=0, minimum=0, minimum_inclusive=True,
                                                      placeholder="<m>", retrievable=True),
    "gemini-chat-compression": lambda: GeminiCompressionPolicy(context_window=0, keep_share=0.05, budget=0),
    "opencode-prune": lambda: PrunePolicy(protect_tokens=0, minimum=0, protect_user_turns=1, stop_at_pruned=True,
                                          placeholder="[c]"),
    "cline-truncation": lambda: ClineTruncationPolicy(context_window=0),
    "aider-summary": lambda: AiderSummaryPolicy(max_tokens=0),
    "llamaindex-memory": lambda: LlamaIndexMemoryPolicy(token_limit=0, token_flush_size=1),
    "anthropic-compaction-on-demand": lambda: CondensePolicy(trigger=0, reads_request=True),
    "letta-sliding-window": lambda: LettaSlidingWindowPolicy(context_window=4_000, trigger_share=0.01),
    "adk-token-compaction": lambda: CondensePolicy(trigger=0, keep_last=2),
    "roo-code-condense": lambda: CondensePolicy(context_window=0, window_fraction=0.9, window_reserve=0),
    "opencode-summary": lambda: OpencodeSummaryPolicy(context_window=52_000, preserve_recent_tokens=40),
}


def unread_user_texts(conversation: Conversation) -> list[str]:
    """The user messages the model has not answered yet: after the last assistant turn."""
    starts = turn_starts(conversation.items)
    tail = conversation.items[turn_end(conversation.items, starts[-1]) if starts else 0:]
    return [content_text(item.content) for item in tail if isinstance(item, Message) and item.role == "user"]


def answered_calls(conversation: Conversation) -> set[str]:
    ids = {item.call_id for item in conversation.items if isinstance(item, ToolCall)}
    return {item.call_id for item in conversation.items if isinstance(item, ToolResult) and item.call_id in ids}


@settings(max_examples=60, deadline=None)
@given(st.one_of(*REQUESTS.values()), st.sampled_from(list(THEIR_FIRING)), st.booleans())
def test_a_request_keeps_its_tool_pairs_and_newest_user_turn_and_never_grows(body, name, firing):
    check_request(formats.read(body), name, firing)


def check_request(request: Conversation, name: str, firing: bool) -> None:
    """Named policy ``name`` (made to fire, or with its source's numbers) keeps every call with its
    result and the newest user turn, never grows the request and leaves it valid in its format."""
    policy = THEIR_FIRING[name]() if firing else make(name)
    done = policy.apply(request, METER)
    sent = done.conversation
    assert METER.count(sent).total <= METER.count(request).total
    if not firing:  # the sources' own triggers are far above these small requests: exactly none's request
        assert name in ("agents-sdk-trimmer", "anthropic-clear-thinking", "swe-agent-last-n", "openhands-masking") \
            or sent == request
    for item in sent.items:  # every result still follows its call
        if isinstance(item, ToolResult):
            position = sent.items.index(item)
            assert any(isinstance(c, ToolCall) and c.call_id == item.call_id for c in sent.items[:position])
    calls = {item.call_id for item in sent.items if isinstance(item, ToolCall)}
    assert calls & answered_calls(request) <= answered_calls(sent)  # no kept call lost its result
    assert unread_user_texts(sent)[-len(unread_user_texts(request)):] == unread_user_texts(request) or not \
        unread_user_texts(request)
    formats.write(sent)  # still a valid request in its format


@settings(max_examples=30, deadline=None)
@given(st.one_of(*REQUESTS.values()), st.sampled_from(list(THEIR_FIRING)), st.sampled_from(["stored", "per-call"]))
def test_a_replay_never_bills_more_prompt_tokens_than_none(body, name, mode):
    conversation = formats.read(body)
    run = replay(conversation, THEIR_FIRING[name](), METER, GPT4O, mode=mode, cache="none")
    for call in run.calls:
        assert call.tokens_with <= call.tokens_without
        assert (call.summarization_cost > 0) == (call.summarization_output_tokens > 0)
    if run.calls:
        assert run.calls[-1].tokens_with == METER.count(run.final).total


@dataclasses.dataclass(frozen=True)
class _GeminiReadingEveryHistory(GeminiCompressionPolicy):
    """Gemini's compression without its shortcut: every history over the threshold is cut and split."""

    def _may_split(self, conversation, first, pending):
        return True


class _GeminiForgettingEachCall(GeminiCompressionPolicy):
    """Gemini's compression of each request whole: a new summarizer, a whole count, and no compression
    carried from the last call."""

    def apply(self, conversation, meter):
        object.__setattr__(self, "summarizer", OfflineSummarizer())
        object.__setattr__(self, "counts", CarriedCounts())
        self.last.items = ()
        return super().apply(conversation, meter)


@st.composite
def _compressed_runs(draw: st.DrawFn) -> dict[str, Any]:
    """Chat runs whose history holds its split for a while, per call: a long early exchange, a user
    message, then steps of short results — sometimes one longer than 60 characters, a new user message,
    a reply and a user message, or the result of a call made before the split."""
    def call(call_id: str) -> dict[str, Any]:
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "read", "arguments": "{}"}}]}

    messages: list[dict[str, Any]] = [{"role": "user", "content": "a" * draw(st.integers(0, 3000))}, call("early"),
                                      {"role": "user", "content": "Go on."}]
    for step in range(draw(st.integers(1, 40))):
        kind = draw(st.sampled_from(["short"] * 8 + ["long", "user", "late", "reply"]))
        if kind == "user":
            messages.append({"role": "user", "content": "More."})
        if kind == "reply":  # (the history then ends on a reply, at the next call)
            messages += [{"role": "assistant", "content": "Noted."}, {"role": "user", "content": "Next."}]
        messages += [call(f"c{step}"), {"role": "tool", "tool_call_id": f"c{step}",
                                        "content": "r" * (draw(st.integers(61, 3000)) if kind == "long" else 20)}]
        if kind == "late":  # (the early call's result, after this step's: it parts every item between them)
            messages.append({"role": "tool", "tool_call_id": "early", "content": "late"})
    return {"model": "gpt-4o", "messages": [*messages, {"role": "assistant", "content": "Done."}]}


@settings(max_examples=150, deadline=None)
@given(st.one_of(LONG_RUNS, *REQUESTS.values()), st.sampled_from(["stored", "per-call"]), st.sampled_from([0.05, 0.5]),
       st.sampled_from([{"context_window": 0}, {"fraction": 0.0, "context_window": 10**7, "max_chars": 60}]))
def test_gemini_compression_carried_from_call_to_call_sends_what_compressing_each_request_whole_sends(
        body, mode, keep_share, window):
    """The span summarized is read on from the last call's, its tokens from the counts carried, and
    per call, the last compression grown by the step added while it holds (no output long enough to
    cut, the split where it was): every call, and the replay, are what compressing each request
    whole gave. (A window of 0 cuts every output; one of 10 million, those over 60 characters.)"""
    _assert_gemini_carried(formats.read(body), mode, keep_share, window)


def _late_answer() -> dict[str, Any]:
    """A long first message, a call, a user message to split at, then steps, the first call answered
    after the fourth step's result."""
    def call(call_id: str) -> dict[str, Any]:
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "read", "arguments": "{}"}}]}

    messages = [{"role": "user", "content": "a" * 2000}, call("early"), {"role": "user", "content": "Go on."}]
    for step in range(6):
        messages += [call(f"c{step}"), {"role": "tool", "tool_call_id": f"c{step}", "content": "r" * 20}]
        messages += [{"role": "tool", "tool_call_id": "early", "content": "late"}] if step == 3 else []
    return {"model": "gpt-4o", "messages": [*messages, {"role": "assistant", "content": "Done."}]}


def _shrinking_history(lengths: list[int], users: dict[int, str]) -> dict[str, Any]:
    """Steps with outputs of these lengths (``users``: user messages, by the step they come before)
    that the budget later leaves out: cut, the history's characters fall, and a user message ahead of
    the split, or the split itself, comes to have another share of them."""
    def step(call_id: str, length: int) -> list[dict[str, Any]]:
        return [{"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "read", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": call_id, "content": "r" * length}]

    messages: list[dict[str, Any]] = [{"role": "user", "content": ""}]
    for number, length in enumerate(lengths):
        messages += [{"role": "user", "content": users[number]}] if number in users else []
        messages += step(f"c{number}", length)
    return {"model": "gpt-4o", "messages": [*messages, {"role": "assistant", "content": "Done."}]}


@settings(max_examples=150, deadline=None)
@example(_late_answer(), 0.5, {"fraction": 0.0, "context_window": 10**7, "max_chars": 60}, 0)
@example(_shrinking_history([400, 1500, 20, 20, 20, 20, 20, 20, 400, 1500, 1500, 1500, 400, 20],
                            {1: "u" * 134, 2: "u", 4: "u"}), 0.7, {"fraction": 0.0, "context_window": 10**7,
                                                                 "max_chars": 200}, 400)
@example(_shrinking_history([1500, 20, 20, 20, 20, 20, 20, 20, 3000, 400, 20], {1: "u", 3: "u"}), 0.5,
         {"fraction": 0.0, "context_window": 10**7, "max_chars": 60}, 800)
@given(_compressed_runs(), st.sampled_from([0.05, 0.5]),
       st.sampled_from([{"context_window": 0}, {"fraction": 0.0, "context_window": 10**7, "max_chars": 60}]),
       st.sampled_from([0, 12, 40, 100]))
def test_gemini_compression_grown_per_call_holds_only_while_its_split_and_outputs_do(body, keep_share, window,
                                                                                     budget):
    """Per call, on runs whose split holds for a while: the compression grown from the last call's,
    its outputs cut again only from the budget's edge on, is the one made whole — also when an
    output is now long enough to cut, a new user message moves the split, or a call made before the
    split is answered late (stored, a summary made before that answer took its call, and the request
    replay builds from it is no valid one: not asked). ``budget``: tokens of output kept whole."""
    _assert_gemini_carried(formats.read(body), "per-call", keep_share, window, budget)


@st.composite
def _moving_runs(draw: st.DrawFn) -> dict[str, Any]:
    """Chat runs whose split moves on again and again, per call: instructions or none (the history starts
    after them), a user message or an earlier summary every few steps, outputs of any length (the budget's
    edge cuts the older ones, so a user message ahead of the split can come to hold the share), and now and
    then a call answered only a step or a user message later, or answered again (a repeated id): what parts
    a user message from being a split point."""
    def call(call_id: str) -> dict[str, Any]:
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "read", "arguments": "{}"}}]}

    messages: list[dict[str, Any]] = [*([{"role": "system", "content": "Be brief."}] if draw(st.booleans()) else []),
                                      {"role": "user", "content": "a" * draw(st.integers(0, 2000))}]
    late: list[str] = []
    for step in range(draw(st.integers(1, 30))):
        said = draw(st.sampled_from(["user", "summary"] + ["nothing"] * 4))
        if said != "nothing":  # (an earlier summary is folded into the next one, not summarized again)
            messages.append({"role": "user", "content": summary_message("r" * draw(st.integers(1, 200)), 2, "earlier")
                             .content if said == "summary" else "u" * draw(st.integers(1, 200))})
        messages.append(call(f"c{step}"))
        kind = draw(st.sampled_from(["now"] * 6 + ["later", "again"]))
        if kind == "later":  # (answered after what comes next, a user message perhaps)
            late.append(f"c{step}")
        else:
            messages.append({"role": "tool", "tool_call_id": f"c{step}", "content": "r" * draw(st.integers(1, 1500))})
        if kind == "again" and step:
            messages.append({"role": "tool", "tool_call_id": f"c{draw(st.integers(0, step - 1))}", "content": "x"})
        if late and draw(st.booleans()):
            messages.append({"role": "tool", "tool_call_id": late.pop(0), "content": "late"})
    messages += [{"role": "tool", "tool_call_id": call_id, "content": "late"} for call_id in late]
    return {"model": "gpt-4o", "messages": [*messages, {"role": "assistant", "content": "Done."}]}


@settings(max_examples=200, deadline=None)
@example(_shrinking_history([20, 400, 20, 20, 20, 20, 20, 1500, 1500, 400, 20], {2: "u", 7: "u", 8: "u"}), 0.8,
         {"fraction": 0.0, "context_window": 10**7, "max_chars": 60}, 800, "chat")
@given(_moving_runs(), st.sampled_from([0.05, 0.3, 0.5, 0.8]),
       st.sampled_from([{"context_window": 0}, {"fraction": 0.0, "context_window": 10**7, "max_chars": 60},
                        {"fraction": 0.0, "context_window": 10**7, "max_chars": 300}]),
       st.sampled_from([0, 12, 40, 100, 400, 800]), st.sampled_from(["chat", "anthropic", "responses", "native"]))
def test_gemini_compression_whose_split_moves_on_reads_only_the_steps_between_and_sends_what_reading_whole_does(
        body, keep_share, window, budget, wire):
    """Per call, when a user message after the split comes to hold the share, the split moves on to it
    and only the steps between the two splits are read (the span, the calls made before the split, the
    user message ahead of it), the summary and its acknowledgement proved valid alone: every call, and
    the replay, are what compressing each request whole gave — in each wire format, also where a call
    before the new split is answered after it (no split point there), or the outputs cut since leave
    the share to a user message ahead of the split."""
    conversation = formats.read(formats.write(formats.read(body), wire), wire)
    _assert_gemini_carried(conversation, "per-call", keep_share, window, budget)


def _assert_gemini_carried(conversation: Conversation, mode: str, keep_share: float, window: dict[str, Any],
                           budget: int = 0) -> None:
    runs = [replay(conversation, policy(keep_share=keep_share, budget=budget, **window), METER, GPT4O,
                   mode=mode, cache="none") for policy in (GeminiCompressionPolicy, _GeminiForgettingEachCall)]
    assert runs[0].calls == runs[1].calls and runs[0].final == runs[1].final


class _TrimmingEveryOutput(ToolOutputTrimmerPolicy):
    """The Agents SDK's trimmer as it was before what a call trimmed was carried: every output before the
    boundary read at every call."""

    def apply(self, conversation, meter):
        object.__setattr__(self, "done", type(self.done)())
        return super().apply(conversation, meter)


@settings(max_examples=100, deadline=None)
@given(st.one_of(LONG_RUNS, *REQUESTS.values(), _compressed_runs()), st.sampled_from(["stored", "per-call"]),
       st.sampled_from([(1, 20, 5), (2, 50, 10), (1, 30, 60)]))
def test_trimming_on_from_the_last_call_trims_what_reading_each_request_trims(body, mode, limits):
    """A request grown from the last one (per call) or from what it sent (stored) is read only from
    the last boundary on: every call trims, sends and bills what reading the whole request did —
    also where a preview longer than the limit leaves a trimmed output to be trimmed again."""
    conversation = formats.read(body)
    recent, longest, preview = limits
    carried, read = (policy(recent_turns=recent, max_output_chars=longest, preview_chars=preview)
                     for policy in (ToolOutputTrimmerPolicy, _TrimmingEveryOutput))
    assert ([result for _, result in applied(conversation, carried, METER, mode)]
            == [result for _, result in applied(conversation, read, METER, mode)])


@settings(max_examples=40, deadline=None)
@given(st.one_of(LONG_RUNS, *REQUESTS.values()), st.sampled_from(["stored", "per-call"]), st.sampled_from([0.05, 0.5]))
def test_gemini_compression_skips_only_histories_it_could_not_split(body, mode, keep_share):
    """A history with no user message after its first item and no final reply is not read at all
    (``_may_split``): every call sends what reading it would have sent."""
    conversation = formats.read(body)
    runs = [replay(conversation, policy(context_window=0, keep_share=keep_share, budget=0), METER, GPT4O,
                   mode=mode, cache="none") for policy in (GeminiCompressionPolicy, _GeminiReadingEveryHistory)]
    assert runs[0].calls == runs[1].calls and runs[0].final == runs[1].final


@dataclasses.dataclass(frozen=True)
class _PruneWalkingEveryOutput(PrunePolicy):
    """Pruning as it was before its outputs were carried from call to call: every output from the
    protected turn back walked, and every chosen one edited, at every call."""

    def apply(self, conversation, meter):
        items = conversation.items
        seen = prunable = 0
        chosen = []
        for position in range(self._protected_from(conversation) - 1, -1, -1):
            item = items[position]
            if not isinstance(item, ToolResult) or item.name in self.exempt_tools:
                continue
            if self._pruned(item):
                if self.stop_at_pruned:
                    break
                continue
            tokens = self._measured(item, meter)[0]
            seen += tokens
            if seen > self.protect_tokens:
                prunable += tokens
                chosen.append(position)
        enough = prunable >= self.minimum if self.minimum_inclusive else prunable > self.minimum
        if not chosen or not enough:
            return unchanged(conversation)
        edited, saved = list(items), 0
        for position in chosen:
            _, twin, gain = self._measured(items[position], meter)
            if gain > 0:
                edited[position], saved = twin, saved + gain
        if not saved:
            return unchanged(conversation)
        lost, back = (0, saved) if self.retrievable else (saved, 0)
        return PolicyResult(conversation.with_items(edited), "pruning", tokens_lost=lost, tokens_retrievable=back,
                            report={"pruned": len(chosen)}, kept=min(chosen))


_PRUNE_NUMBERS = st.fixed_dictionaries({
    "protect_tokens": st.sampled_from([0, 3, 20, 150]), "minimum": st.sampled_from([0, 3, 40]),
    "minimum_inclusive": st.booleans(), "protect_user_turns": st.sampled_from([0, 1, 2]),
    "stop_at_pruned": st.booleans(), "exempt_tools": st.sampled_from([(), ("bash",)]),
    "placeholder": st.sampled_from(["<m>", "[Old tool result content cleared]", "cut {tool}: {preview} ({path})",
                                    "{preview}", "{tool}"])})
# runs of outputs from none to many tokens (some shorter than a placeholder), now and then a user turn
_OUTPUT_RUNS = st.lists(st.one_of(
    st.tuples(st.just("calls"), st.lists(st.tuples(st.sampled_from(["read", "bash"]),
                                                   st.sampled_from([0, 1, 2, 6, 30, 90]).map(words)),
                                         min_size=1, max_size=3)),
    st.tuples(st.just("user"), st.just("Go on.")), st.tuples(st.just("assistant"), st.just("Done."))),
    min_size=1, max_size=25).map(lambda turns: chat(("user", "Fix it."), *turns))


def check_prune_carried(conversation: Conversation, mode: str, numbers: dict[str, Any]) -> None:
    """Every call's result is the whole walk's (what it pruned and how many), and so is the replay."""
    policies = PrunePolicy(**numbers), _PruneWalkingEveryOutput(**numbers)
    carried, walked = ([result for _, result in applied(conversation, policy, METER, mode)] for policy in policies)
    assert carried == walked
    runs = [replay(conversation, policy(**numbers), METER, GPT4O, mode=mode, cache="none")
            for policy in (PrunePolicy, _PruneWalkingEveryOutput)]
    assert runs[0].calls == runs[1].calls and runs[0].final == runs[1].final


@settings(max_examples=150, deadline=None)
@given(st.one_of(LONG_RUNS, *REQUESTS.values()), st.sampled_from(["stored", "per-call"]), _PRUNE_NUMBERS)
def test_prune_carried_from_call_to_call_sends_what_walking_every_output_sends(body, mode, numbers):
    """Gemini's masking and opencode's prune read only what a request added to the last one (or to
    the last result) and extend the last edit per call: every call sends what the whole walk sent."""
    check_prune_carried(formats.read(body), mode, numbers)


@settings(max_examples=300, deadline=None)
@given(_OUTPUT_RUNS, st.sampled_from(["stored", "per-call"]), _PRUNE_NUMBERS)
@example(chat(("user", "Fix it."), *[("calls", [("read", words(n))]) for n in (90, 6, 90, 6, 6)]), "stored",
         {"protect_tokens": 0, "minimum": 40, "placeholder": "{tool}"})  # a stand-in not read as pruned, then too few
def test_prune_carried_over_runs_of_outputs_of_every_size_sends_what_walking_every_output_sends(
        conversation, mode, numbers):
    """The same over runs where outputs pass the protected tokens and the minimum call after call,
    some shorter than their stand-in (never replaced) and some whose stand-in does not read as pruned."""
    check_prune_carried(conversation, mode, numbers)


@dataclasses.dataclass(frozen=True)
class _AiderCarryingNothing(AiderSummaryPolicy):
    """Aider's summarization as it was before its reading was carried: the turn running found by
    pairing every result of the whole request with its call at every call, and the done turns read
    whole at each turn."""

    def apply(self, conversation, meter):
        object.__setattr__(self, "carried", _DoneTurns())
        return super().apply(conversation, meter)

    def _running(self, conversation):
        items = conversation.items
        end = min(self.turns.read(conversation).newest(1) or 0, unread_from(items) or 0)
        waiting = [call for result, call in links(items).items() if call < end <= result]
        if waiting:
            end = min(waiting)
            while end > 0 and role_of(items[end - 1]) == "assistant":
                end -= 1
        return end


# runs whose calls wait across a user message now and then (a result after it), of every size
_ANSWERED_LATE = st.lists(st.one_of(
    st.tuples(st.just("calls"), st.lists(st.tuples(st.sampled_from(["read", "bash"]),
                                                   st.sampled_from([0, 6, 90, 400]).map(words)),
                                         min_size=1, max_size=3)),
    st.tuples(st.just("user"), st.just("Go on.")), st.tuples(st.just("assistant"), st.just("Done."))),
    min_size=1, max_size=25)


def answered_late(turns) -> Conversation:
    """``chat`` of ``turns``, each user message moved before the results just above it."""
    data = json.loads(json.dumps(formats.write(chat(("user", "Fix it."), *turns))))
    messages = data["messages"]
    for position in range(len(messages) - 1, 0, -1):
        if messages[position]["role"] == "user" and messages[position - 1]["role"] == "tool":
            messages[position - 1], messages[position] = messages[position], messages[position - 1]
    return formats.read(data)


@st.composite
def _turns_with_thinking(draw: st.DrawFn) -> dict[str, Any]:
    """Anthropic runs of many short turns: thinking before some calls (billed in its own turn only),
    a user message after every few steps, now and then an earlier summary."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Fix it."}]
    for step in range(draw(st.integers(1, 60))):
        blocks = [{"type": "thinking", "thinking": "t " * draw(st.integers(1, 60)), "signature": "s"}] * draw(
            st.integers(0, 1))
        messages.append({"role": "assistant", "content": [
            *blocks, {"type": "tool_use", "id": f"c{step}", "name": "read", "input": {"n": step}}]})
        kind = draw(st.sampled_from(["step"] * 3 + ["user", "summary"]))
        text = ([{"type": "text", "text": "Go on."}] if kind == "user" else
                [{"type": "text", "text": summary_message("Earlier work.", 3, "x").content}] if kind == "summary"
                else [])
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"c{step}", "content": "r " * draw(st.integers(1, 200))}, *text]})
    return {"model": "claude-sonnet-4-5", "max_tokens": 1024,
            "messages": [*messages, {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}]}


@settings(max_examples=200, deadline=None)
@given(st.one_of(LONG_RUNS, *REQUESTS.values(), _ANSWERED_LATE.map(answered_late), _turns_with_thinking()),
       st.sampled_from(["stored", "per-call"]), st.sampled_from([0, 60, 400, 1_024]),
       st.sampled_from(["gpt-4o", "claude-sonnet-4-5"]))
def test_aider_carrying_its_reading_sends_what_reading_each_request_whole_sends(body, mode, max_tokens, model):
    """The calls and results of a request that extends the last one are paired in its new items
    only, and each turn's done turns are read on from the last turn's (their counts, messages, pairs
    and earlier summaries): every call's result, and the replay, are what pairing the whole request
    and reading the done turns whole at each call gave."""
    conversation, meter = (body if isinstance(body, Conversation) else formats.read(body)), Meter(model)
    policies = AiderSummaryPolicy(max_tokens=max_tokens), _AiderCarryingNothing(max_tokens=max_tokens)
    carried, whole = ([result for _, result in applied(conversation, policy, meter, mode)] for policy in policies)
    assert carried == whole
    runs = [replay(conversation, policy(max_tokens=max_tokens), meter, GPT4O, mode=mode, cache="none")
            for policy in (AiderSummaryPolicy, _AiderCarryingNothing)]
    assert runs[0].calls == runs[1].calls and runs[0].final == runs[1].final


@settings(max_examples=150, deadline=None)
@given(st.one_of(LONG_RUNS, _ANSWERED_LATE.map(answered_late), _turns_with_thinking()), st.integers(1, 6),
       st.sampled_from(["gpt-4o", "claude-sonnet-4-5"]))
def test_aiders_done_turns_read_on_from_the_last_are_those_read_whole(body, step, model):
    """Read as each turn's done turns grow (``step`` items at a time, after another history), the
    carried parts, their tokens, the summaries among them and where the kept tail may begin (a cut
    after an assistant message that parts no call from its result) are those of the done turns read
    whole (``_Parts``)."""
    items, meter = (body if isinstance(body, Conversation) else formats.read(body)).items, Meter(model)
    another = chat(("user", summary_message("Another.", 2, "x").content), ("calls", [("read", words(9))]))
    carried = _DoneTurns().read(another.items, meter)  # (a summary in it, which the run may not hold)
    for length in [*range(step, len(items), step), len(items)]:
        done = items[:length]
        carried.read(done, meter)
        whole = _Parts(_parts(done, list(meter.items(done))))
        assert carried.parts == whole.parts and carried.tokens() == sum(part.tokens for part in whole.parts)
        for end in range(len(whole.parts) + 1):
            assert carried.head(end) == whole.head(end)
        for end in range(len(whole.parts), -1, -1):  # (as ``_split`` asks: a cut found parting is dropped)
            assert carried.cut_at_or_before(end) == whole.cut_at_or_before(end)


def _crossed_answers() -> Conversation:
    """A call answered after a later call's result, a user message between the two calls."""
    def call(call_id: str) -> dict[str, Any]:
        return {"role": "assistant", "content": None,
                "tool_calls": [{"id": call_id, "type": "function", "function": {"name": "read", "arguments": "{}"}}]}

    return formats.read({"model": "gpt-4o", "messages": [
        {"role": "user", "content": "Fix it."}, call("x"), {"role": "user", "content": "And?"}, call("y"),
        {"role": "tool", "tool_call_id": "y", "content": "y"}, {"role": "tool", "tool_call_id": "x", "content": "x"}]})


@given(st.one_of(LONG_RUNS, *REQUESTS.values(), st.just(_crossed_answers()), _ANSWERED_LATE.map(answered_late)))
def test_aiders_parted_cuts_are_those_a_call_and_its_result_stand_either_side_of(body):
    """Aider's split moves back past any cut that would part a call from its result; which cuts
    do is read in one pass over the pairs (it asked every pair at every cut tried: quadratic)."""
    items = list((body if isinstance(body, Conversation) else formats.read(body)).items)
    pairs = links(items).items()
    assert _parted(items) == [any(call < cut <= result for result, call in pairs) for cut in range(len(items) + 1)]


@settings(max_examples=150, deadline=None)
@given(st.one_of(LONG_RUNS, *REQUESTS.values(), st.just(_crossed_answers()),
                 _ANSWERED_LATE.map(answered_late)), st.integers(1, 4))
def test_aiders_carried_pairs_name_the_earliest_call_waiting_across_every_position(body, step):
    """Read as a replay grows a request (``step`` items at a time, after another request), the
    pairs carried name, for every position, the earliest call before it answered at or after it:
    what pairing the whole request names."""
    conversation = body if isinstance(body, Conversation) else formats.read(body)
    items, answers, known = conversation.items, _Answers().read(_crossed_answers()), ()  # (another request first)
    for length in [*range(step, len(items), step), len(items)]:
        request = conversation.grown(known, items[len(known):length])
        answers.read(request)
        known = request.items
        for end in range(length + 1):
            waiting = [call for result, call in links(known).items() if call < end <= result]
            assert answers.waiting_before(end) == (min(waiting) if waiting else None)


def test_gemini_compression_over_its_threshold_with_nothing_to_split_reads_nothing():
    """The case the shortcut is for: one task, then tool calls only, past the threshold."""
    request = chat(("user", "Read them all."), *[("calls", [("read", words(200, f"w{n}"))]) for n in range(6)])
    policy = GeminiCompressionPolicy(context_window=0, budget=0)
    assert not policy._may_split(request, 1, unread_from(request.items))  # (after the system prompt)
    assert policy.apply(request, METER).fired is None
    second = chat(("user", "Read them all."), ("user", "Start with the tests."),
                  *[("calls", [("read", words(200, f"w{n}"))]) for n in range(6)])
    assert GeminiCompressionPolicy(context_window=0, budget=0)._may_split(second, 1, unread_from(second.items))



class _ClineReadingEveryHistory(ClineTruncationPolicy):
    """Cline's truncation reading every request whole, as it did before its messages were carried,
    and building every request it sends whole: written out, read back and counted."""

    def _read(self, conversation, first):
        return type(self.messages)().read(conversation, first)

    def _extended(self, conversation, first, end, messages):
        return None

    def _total(self, sent, meter):
        return meter.count(sent).total


@settings(max_examples=100, deadline=None)
@given(st.one_of(LONG_RUNS, LONG_RUNS, *REQUESTS.values()), st.sampled_from(["stored", "per-call"]),
       st.sampled_from([0, 0.2, 0.35, 0.5, 0.7, 2]))
def test_cline_truncation_reads_only_what_each_request_added(body, mode, share):
    """Cline's messages and its calls' ids are carried from call to call and read only in what a
    request added (``_Messages``), and while the range stays the request sent is the last one with
    what was added (``_Sent``): every call sends what reading and building the whole request would
    have sent, whether it widens the range deleted, keeps it or deletes nothing."""
    conversation = formats.read(body)
    # the window whose limit (80 % of it, below 200,000) is this share of the run: the range widens now and then
    context_window = int(METER.count(conversation).total * share / 0.8)
    runs = [replay(conversation, policy(context_window=context_window), METER, GPT4O, mode=mode, cache="none")
            for policy in (ClineTruncationPolicy, _ClineReadingEveryHistory)]
    assert runs[0].calls == runs[1].calls and runs[0].final == runs[1].final


@pytest.mark.parametrize("share", [0.25, 0.4, 0.6])
def test_cline_truncation_builds_whole_a_request_that_answers_or_reuses_an_earlier_call(share):
    """What the carried request (``_Sent``) must not append as it came: a result answering a call
    made turns before (the call may be in the range deleted, which takes its result too) and a
    call reusing an earlier call's id (pairing by id then decides for the earlier ones too: the
    first reply's call, kept, lost with its result until a later call of its id is answered). A run
    of a hundred calls that holds both, again and again, sends per call what building each request
    whole sends."""
    messages: list[dict[str, Any]] = [  # Cline's first reply stays; its call's result goes with the range
        {"role": "user", "content": "Read the modules."},
        {"role": "assistant", "content": "Reading them.", "tool_calls": [
            {"id": "call_again", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_again", "content": words(150)}]
    for n in range(100):
        ids = [f"call_{n}", *([f"late_{n}"] if n % 10 == 2 else [])]  # answered 30 calls later
        if n in (45, 46, 60, 75, 88):  # (at 60 never answered)
            ids = ["call_again"]
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "read_file", "arguments": f'{{"path": "m{n}.py"}}'}}
            for i in ids]})
        messages += [{"role": "tool", "tool_call_id": i, "content": words(150, f"w{n}")} for i in ids
                     if not i.startswith("late") and n != 60]
        if n % 10 == 2 and n >= 30:
            messages.append({"role": "tool", "tool_call_id": f"late_{n - 30}", "content": words(150, "late")})
    conversation = formats.read({"model": "gpt-4o", "messages": messages})
    context_window = int(METER.count(conversation).total * share / 0.8)
    runs = [replay(conversation, policy(context_window=context_window), METER, GPT4O, mode="per-call", cache="none")
            for policy in (ClineTruncationPolicy, _ClineReadingEveryHistory)]
    assert sum(1 for call in runs[0].calls if call.fired) > 30
    assert runs[0].calls == runs[1].calls and runs[0].final == runs[1].final


# the policies whose request is a head they made (a summary, an acknowledgement) and the request's own items after it
_HEAD_PROVED = ("anthropic-compaction", "openai-compaction", "claude-code-compact", "codex-compact",
                "langchain-summarization", "openhands-condenser", "adk-token-compaction", "roo-code-condense",
                "anthropic-compaction-on-demand", "letta-sliding-window", "gemini-chat-compression", "opencode-summary")


@settings(max_examples=80, deadline=None)
@given(st.one_of(LONG_RUNS, *REQUESTS.values()), st.sampled_from(_HEAD_PROVED), st.sampled_from(["stored", "per-call"]))
def test_a_head_proved_alone_sends_what_proving_the_whole_request_sends(body, name, mode):
    """``formats.checked_head`` writes out and reads back only the head a policy made, the request's
    own items after it as they stand: every call of a replay sends what proving each whole request
    (written out and read back) sends, in every wire format, per call and stored."""
    conversation = formats.read(body)

    def whole(conversation, head, rest):
        return formats.checked(conversation.with_items((*head, *rest)))

    runs = [replay(conversation, THEIR_FIRING[name](), METER, GPT4O, mode=mode, cache="none")]
    with unittest.mock.patch.object(formats, "checked_head", whole):
        runs.append(replay(conversation, THEIR_FIRING[name](), METER, GPT4O, mode=mode, cache="none"))
    assert runs[0].calls == runs[1].calls and runs[0].final == runs[1].final


# the policies that count their result from the request's carried counts (``CarriedCounts.replaced``)
_REPLACED = ("anthropic-compaction", "openai-compaction", "claude-code-compact", "codex-compact",
             "langchain-summarization", "openhands-condenser", "adk-token-compaction", "roo-code-condense",
             "anthropic-compaction-on-demand", "letta-sliding-window", "opencode-summary")


@pytest.mark.parametrize("name", _REPLACED)
@settings(max_examples=30, deadline=None)
@given(st.one_of(LONG_RUNS, *REQUESTS.values()), st.sampled_from(["stored", "per-call"]))
def test_a_result_counted_from_carried_counts_sends_and_bills_what_counting_it_whole_does(name, body, mode):
    """A summarizing policy counts its result from the request's carried counts, the summary and its
    neighbours counted again: every call of a replay is what counting each result whole gives (the
    tokens, the summary's cost, what was lost), in every wire format, per call and stored."""
    conversation = formats.read(body)
    runs = [replay(conversation, THEIR_FIRING[name](), METER, GPT4O, mode=mode, cache="none")]
    with unittest.mock.patch.object(CarriedCounts, "replaced", lambda *_: None):
        runs.append(replay(conversation, THEIR_FIRING[name](), METER, GPT4O, mode=mode, cache="none"))
    assert runs[0].calls == runs[1].calls and runs[0].final == runs[1].final


@dataclasses.dataclass(frozen=True)
class _LlamaIndexReadingEveryRequest(LlamaIndexMemoryPolicy):
    """LlamaIndex's memory as it was before its messages were carried from call to call (issue 33):
    every request counted whole by ``meter.items`` and split by ``message_starts``, and the queue
    managed on lists, message by message."""

    def apply(self, conversation, meter):
        items = conversation.items
        first = next((p for p, item in enumerate(items) if not is_instruction(item)), len(items))
        rest = items[first:]
        sizes = meter.items(rest)
        queue = [(first + a, sum(sizes[a:b]), isinstance(rest[a], Message) and rest[a].role == "user")
                 for a, b in pairwise([*message_starts(rest), len(rest)])]
        put, start = self.queue.resume(conversation)
        limit = self.token_limit * self.chat_history_token_ratio
        for count in range(max(put, 1), len(queue) + 1):
            kept = list(range(start, count))
            over = sum(queue[k][1] for k in kept) - limit
            while over > 0 and len(kept) > 1:
                flushed = 0
                while flushed < self.token_flush_size and len(kept) > 1:
                    flushed += queue[kept.pop(0)][1]
                while not queue[kept[0]][2] and len(kept) > 1:
                    kept.pop(0)
                over = sum(queue[k][1] for k in kept) - limit
            start = kept[0] if kept else start
        self.queue.remember(conversation, len(queue), start)
        unread = unread_from(items) or 0
        start = min(start, next((k for k, message in enumerate(queue) if message[0] >= unread), len(queue)))
        while start > 0 and not queue[start][2]:
            start -= 1
        if start == 0:
            return PolicyResult(conversation, kept=len(items))
        result = conversation.with_items((*items[:first], *items[queue[start][0]:]))
        return PolicyResult(result, "flushing", tokens_lost=sum(message[1] for message in queue[:start]),
                            report={"flushed": start})


@st.composite
def thinking_runs(draw: st.DrawFn):
    """Runs whose assistant thinks (Anthropic's thinking blocks) or reasons (Responses' encrypted
    reasoning items): billed only in the current turn, so a new user message changes what earlier
    items cost, which carried counts must follow."""
    if draw(st.booleans()):
        body = draw(anthropic_requests(8, 18))
        thought = {"type": "thinking", "thinking": draw(long_texts), "signature": "sig"}
        messages = [{**message, "content": [thought, *(message["content"] if isinstance(message["content"], list)
                                                       else [{"type": "text", "text": message["content"]}])]}
                    if message["role"] == "assistant" and draw(st.booleans()) else message
                    for message in body["messages"]]
        return {**body, "messages": messages}
    body = draw(responses_requests())
    reasoning = {"type": "reasoning", "id": "rs_2", "summary": [{"type": "summary_text", "text": draw(long_texts)}],
                 "encrypted_content": "e" * draw(st.integers(1, 2_000))}
    thinks = [item.get("type") == "function_call" or item.get("role") == "assistant" for item in body["input"]]
    return {**body, "input": [part for item, think in zip(body["input"], thinks, strict=True)
                              for part in ([reasoning] if think and draw(st.booleans()) else []) + [item]]}


CLAUDE = Meter("claude-sonnet-4-5")


def _llamaindex_both(limit: int, flush: int, ratio: float) -> list[LlamaIndexMemoryPolicy]:
    return [policy(token_limit=limit, token_flush_size=flush, chat_history_token_ratio=ratio)
            for policy in (LlamaIndexMemoryPolicy, _LlamaIndexReadingEveryRequest)]


def check_llamaindex_carry(conversation: Conversation, meter: Meter, limit: int, flush: int, ratio: float) -> None:
    """Every call of a replay (both modes), and every prefix of the items grown one item at a time
    (a message split across requests, a parallel call joined by the next), sends what counting
    each request whole sent."""
    for mode in ("stored", "per-call"):
        results = [[(result.conversation, result.fired, result.tokens_lost, result.report)
                    for _, result in applied(conversation, policy, meter, mode)]
                   for policy in _llamaindex_both(limit, flush, ratio)]
        assert results[0] == results[1]
        runs = [replay(conversation, policy, meter, GPT4O, mode=mode, cache="none")
                for policy in _llamaindex_both(limit, flush, ratio)]
        assert runs[0].calls == runs[1].calls and runs[0].final == runs[1].final
    policies, items, given = _llamaindex_both(limit, flush, ratio), conversation.items, ()
    for end in range(len(items) + 1):
        request = conversation.grown(given, items[len(given):end])
        carried, whole = [(done.conversation, done.fired, done.tokens_lost, done.report)
                          for done in (policy.apply(request, meter) for policy in policies)]
        assert carried == whole
        given = request.items


@settings(max_examples=60, deadline=None)
@given(st.one_of(LONG_RUNS, *REQUESTS.values()), st.sampled_from([0, 60, 300, 1_500, 30_000]),
       st.sampled_from([1, 40, 3_000]), st.sampled_from([0.7, 1.0]))
def test_llamaindex_memory_sends_at_every_call_what_reading_the_whole_request_sends(body, limit, flush, ratio):
    """The messages and their counts are carried from call to call and the queue managed on running
    totals: every call's request, loss and report are what counting each request whole gave."""
    check_llamaindex_carry(formats.read(body), METER, limit, flush, ratio)


@settings(max_examples=60, deadline=None)
@given(thinking_runs(), st.sampled_from([60, 300, 1_500]), st.sampled_from([1, 40]))
def test_llamaindex_memory_counts_thinking_again_once_a_user_message_ends_its_turn(body, limit, flush):
    """Earlier thinking a new user message puts out of the current turn is no longer billed: the
    carried counts follow, as counting each request whole does."""
    conversation = formats.read(body)
    check_llamaindex_carry(conversation, CLAUDE if "messages" in body else METER, limit, flush, 0.7)


# --- a summary is not free: replay and compare bill it -----------------------------------------

def summarized_run() -> Conversation:
    return chat(("user", "Fix it."), *[("calls", [("read", words(1_000, f"w{n}"))]) for n in range(12)],
                ("user", "Go."))


@pytest.mark.parametrize("policy", [SummarizePolicy(limit=1_000, keep_steps=1), make("langchain-summarization"),
                                    CondensePolicy(trigger=5_000)], ids=lambda p: p.name)
def test_replay_bills_each_summary_at_the_summarizers_prices_and_includes_it_in_the_cost(policy):
    conversation = summarized_run()
    free = dataclasses.replace(GPT4O, input=0.0, output=0.0)
    billed = replay(conversation, dataclasses.replace(policy), METER, GPT4O)
    unbilled = replay(conversation, dataclasses.replace(policy), METER, GPT4O, summarizer=free)
    fired = [call for call in billed.calls if call.summarization_output_tokens]
    assert fired and unbilled.totals.summarization_cost == 0
    for call in fired:
        assert call.summarization_cost == pytest.approx(call.summarization_input_tokens * 2.5e-6
                                                        + call.summarization_output_tokens * 10e-6)
    assert billed.totals.cost_with == pytest.approx(unbilled.totals.cost_with + billed.totals.summarization_cost)


def test_compare_json_rows_carry_the_summarization_cost_within_the_cost(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(formats.write(summarized_run())))
    done = cli("compare", str(path), "--threshold", "1000", "--strategy", "summarize", "--strategy",
               "langchain-summarization", "--strategy", "masking", "--json")
    assert done.returncode == 0, done.stderr
    rows = {row["strategy"]: row for row in json.loads(done.stdout)}
    assert rows["summarize"]["summarization_cost"] > 0 and rows["langchain-summarization"]["summarization_cost"] > 0
    assert rows["masking"]["summarization_cost"] == 0
    assert rows["langchain-summarization"]["source"] == source_of("langchain-summarization")
    conversation = summarized_run()
    free = dataclasses.replace(GPT4O, input=0.0, output=0.0)
    policies = [make("summarize", limit=1_000, threshold=1_000), make("langchain-summarization")]
    for row in compare(conversation, policies, Meter("gpt-4o"), GPT4O, summarizer=free):  # billed, nothing else
        shown = rows[row.policy]
        assert shown["cost"] == pytest.approx(row.cost + shown["summarization_cost"], abs=1e-7)
    cheaper = cli("compare", str(path), "--threshold", "1000", "--strategy", "summarize", "--summarizer-model",
                  "gpt-4o-mini", "--json")
    assert json.loads(cheaper.stdout)[0]["summarization_cost"] < rows["summarize"]["summarization_cost"]


def test_compare_lists_the_new_policies_with_their_sources_on_a_real_trace(tmp_path):
    trace = TRACES / "sweagent_marshmallow-1867_function_calling.openai.json"
    conversation = formats.read(load_shared(trace))
    rows = compare(conversation, [make(name, context_window=GPT4O.context_window) for name in POLICIES],
                   Meter("gpt-4o"), GPT4O)
    assert [row.policy for row in rows] == list(POLICIES)
    by_name = {row.policy: row for row in rows}
    assert by_name["swe-agent-last-n"].tokens_billed < by_name["none"].tokens_billed  # it masks this run
    assert by_name["langchain-summarization"].summarization_cost > 0
    done = cli("compare", str(shared(trace)), "--strategy", "none", "--strategy", "codex-compact")
    assert done.returncode == 0 and source_of("codex-compact") in done.stdout


def _newest_user(items: tuple, count: int) -> int | None:
    """The count-th user message from the end, walked back (what ``UserTurns.newest`` must give)."""
    users = [position for position, item in enumerate(items) if isinstance(item, Message) and item.role == "user"]
    return users[-count] if len(users) >= count else None


def _kept_start(items: tuple, keep: int) -> int:
    """Where the newest ``keep`` turns the assistant spoke in begin, walked back (``kept_start``)."""
    found, spoke = 0, False
    for position in range(len(items) - 1, -1, -1):
        item = items[position]
        if isinstance(item, Message) and item.role == "user":
            found, spoke = found + spoke, False
            if found == keep:
                return position + 1
        elif isinstance(item, Message) and item.role == "assistant":
            spoke = True
    return 0


_ROLE_ITEMS = st.sampled_from([Message(role="user", content="go"), Message(role="assistant", content="ok"),
                               Message(role="system", content="s"), ToolCall(call_id="c", name="bash", arguments="{}"),
                               ToolResult(call_id="c", name="bash", content="done")])


@given(steps=st.lists(st.tuples(st.sampled_from(["grown", "rebuilt", "new"]), st.lists(_ROLE_ITEMS, max_size=6)),
                      min_size=1, max_size=8), count=st.integers(1, 3))
def test_user_turns_read_from_a_grown_request_only_its_new_items_and_answer_as_a_walk_back(steps, count) -> None:
    """Requests that grow (``grown``, or rebuilt without saying so) or start over: the incremental
    positions are always those of a walk back over the whole request."""
    turns, base = UserTurns(), formats.read({"messages": [{"role": "user", "content": "start"}]})
    conversation = base
    for how, new in steps:
        if how == "grown":
            conversation = conversation.grown(conversation.items, tuple(new))
        else:  # rebuilt: the same items and more, without ``grew`` saying so
            conversation = base.with_items((*conversation.items, *new) if how == "rebuilt" else tuple(new))
        turns.read(conversation)
        assert turns.newest(count) == _newest_user(conversation.items, count)
        assert turns.kept_start(count) == _kept_start(conversation.items, count)


# --- condensing at every call, read from the last request -----------------------------------------

@st.composite
def _grown_requests(draw):
    """Requests as a condensing policy sees them per call: one run's items, each request the last
    one grown by a few items, and now and then another request altogether (stored, after a summary)."""
    items = formats.read(draw(st.one_of(*REQUESTS.values()))).items
    requests, length = [], draw(st.integers(0, len(items)))
    for _ in range(draw(st.integers(1, 8))):
        length = min(len(items), length + draw(st.integers(0, 4)))
        request = items[:length]
        if request and draw(st.integers(0, 4)) == 0:
            request = request[draw(st.integers(0, len(request) - 1)):]
        requests.append(formats.read({"messages": []}).with_items(request))
    return requests


@settings(max_examples=80, deadline=None)
@given(_grown_requests(), st.integers(0, 3), st.integers(0, 3))
def test_the_condensed_span_read_from_the_last_request_is_the_span_of_each_request_whole(requests, first, last):
    index = CondenseIndex()
    for request in requests:
        items = request.items
        index.read(request)
        assert index.span(first, last) == condense_span(items, first, last)
        assert index.message_count == len(message_starts(items))
        assert index.within(index.instructions, 0, len(items)) == tuple(filter(is_instruction, items))
        assert index.within(index.summaries, 0, len(items)) == tuple(filter(is_summary, items))


class _WholeSpan(OfflineSummarizer):
    """Reads every span whole, as a fresh summarizer."""

    def summarize(self, plan):
        return OfflineSummarizer().summarize(plan)


def _parting_whole(items: tuple[Item, ...]) -> list[bool]:
    """Each position a cut would part from a call: after a call, up to and with its result (the
    call's latest before the result)."""
    parting, called = [False] * len(items), {}
    for position, item in enumerate(items):
        if isinstance(item, ToolCall):
            called[item.call_id] = position
        elif isinstance(item, ToolResult) and called.get(item.call_id, position) < position:
            parting[called[item.call_id] + 1:position + 1] = [True] * (position - called[item.call_id])
    return parting


@settings(max_examples=80, deadline=None)
@given(_grown_requests())
def test_what_letta_reads_of_the_last_request_is_what_it_reads_of_each_request_whole(requests):
    index = LettaMessages()
    for request in requests:
        items = index.read(request).items
        first = next((p for p, item in enumerate(items) if not is_instruction(item)), len(items))
        assert index.first == first
        assert index.starts == [first + start for start in message_starts(items[first:])]
        assert index.parting == _parting_whole(items)
        assert index.counts.counts(items, METER) == list(METER.items(items))
        assert all(index.holds_summary(start, len(items)) == any(map(is_summary, items[start:]))
                   for start in range(len(items) + 1))


@settings(max_examples=40, deadline=None)
@given(st.one_of(LONG_RUNS, *REQUESTS.values()), st.sampled_from([(4_000, 0.01), (2_000, 0.5), (200_000, 0.9)]),
       st.sampled_from(["stored", "per-call"]))
def test_letta_reading_on_from_the_last_call_sends_what_reading_each_request_whole_sends(body, window, mode):
    """Letta's summarizer and what its cut reads are the policy's own, so a request (and a span)
    that begins with the last one is read only past it: every call comes out as reading each
    request and summarizing each span afresh."""
    conversation = formats.read(body)
    policy = LettaSlidingWindowPolicy(context_window=window[0], trigger_share=window[1])
    whole = dataclasses.replace(policy, summarizer=_WholeSpan(), index=None, totals=RunningTotal())
    runs = [replay(conversation, each, METER, GPT4O, mode=mode) for each in (policy, whole)]
    assert runs[0].calls == runs[1].calls and runs[0].final == runs[1].final


CONDENSING = [name for name, firing in THEIR_FIRING.items() if isinstance(firing(), CondensePolicy)]


@settings(max_examples=60, deadline=None)
@given(st.one_of(LONG_RUNS, *REQUESTS.values()), st.sampled_from(CONDENSING), st.booleans(),
       st.sampled_from(["stored", "per-call"]))
def test_condensing_read_from_the_last_request_sends_what_condensing_each_request_whole_sends(body, name, firing,
                                                                                              mode):
    """The agents' summarize-and-drop policies, with the numbers that make them fire here and with
    their sources' own: carried from the last call (``CondenseIndex``, the summarizer's reading),
    every call comes out exactly as reading each request whole."""
    conversation = formats.read(body)
    policy = THEIR_FIRING[name]() if firing else make(name).inner
    whole = dataclasses.replace(policy, index=None, summarizer=_WholeSpan(), totals=RunningTotal())
    runs = [replay(conversation, each, METER, GPT4O, mode=mode) for each in (policy, whole)]
    assert runs[0].calls == runs[1].calls and runs[0].final == runs[1].final
    assert runs[0].tokens_lost == runs[1].tokens_lost
