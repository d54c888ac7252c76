"""The peers' own compaction read from their code (issue 31): per policy a hand-made run that
shows its trigger and what it keeps against the source's numbers. The invariants every named
policy keeps (calls paired, the newest user turn, never growing) are in ``test_agent_policies``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playground import formats
from playground.conversation import ToolResult, content_text
from playground.errors import InputError
from playground.formats.cline_truncation import NOTICE
from playground.policies import make
from playground.policies.aider import OK, history_limit
from playground.policies.cline import max_allowed
from playground.policies.gemini_compression import ACKNOWLEDGEMENT, truncated_output
from playground.policies.letta import LettaSlidingWindowPolicy
from playground.policies.llamaindex import LlamaIndexMemoryPolicy
from playground.policies.opencode_summary import OpencodeSummaryPolicy, preserve_budget, usable
from playground.policies.prune import preview
from playground.run.replay import replay
from playground.summarize.cut import is_summary
from playground.summarize.history import DEFAULT_PROMPT

from .strategies import REQUESTS
from .test_agent_policies import GPT4O, METER, THEIR_FIRING, chat, check_request, results, shape, texts, words

OPENCODE_CLEARED = "[Old tool result content cleared]"
NAMES = ("one", "two", "three", "four", "five", "six")  # a token each, as " data" is
PEERS = ("gemini-tool-output-masking", "gemini-chat-compression", "opencode-prune", "cline-truncation",
         "aider-summary", "llamaindex-memory", "roo-code-condense", "opencode-summary")
PEERS += ("anthropic-compaction-on-demand", "letta-sliding-window", "adk-token-compaction")


@pytest.mark.parametrize("name", PEERS)
@settings(max_examples=40, deadline=None)
@given(st.one_of(*REQUESTS.values()), st.booleans())
def test_each_peer_keeps_every_call_paired_and_the_newest_user_turn_and_never_grows(name, body, firing):
    check_request(formats.read(body), name, firing)


@st.composite
def agent_runs(draw: st.DrawFn) -> tuple:
    """A run of user turns, each with calls of outputs large enough for the peers, made to fire,
    to cut something (the generated requests above are mostly too small for a summary to pay)."""
    turns: list = []
    for number in range(draw(st.integers(1, 6))):
        turns.append(("user", words(draw(st.integers(1, 300)), NAMES[number % len(NAMES)])))
        for _ in range(draw(st.integers(0, 3))):
            outputs = draw(st.lists(st.integers(1, 1_500), min_size=1, max_size=2))
            turns.append(("calls", [("bash", words(size, "data")) for size in outputs]))
        if draw(st.booleans()):
            turns.append(("assistant", words(draw(st.integers(1, 200)), "done")))
    return chat(*turns)


@pytest.mark.parametrize("name", PEERS)
@settings(max_examples=25, deadline=None)
@given(agent_runs())
def test_each_peer_made_to_fire_on_a_longer_run_keeps_its_invariants(name, run):
    check_request(run, name, True)


@pytest.mark.parametrize("name", PEERS)
@settings(max_examples=10, deadline=None)
@given(agent_runs(), st.sampled_from(["stored", "per-call"]))
def test_a_replay_of_each_peer_made_to_fire_never_bills_more_prompt_tokens_than_none(name, run, mode):
    done = replay(run, THEIR_FIRING[name](), METER, GPT4O, mode=mode, cache="none")
    assert all(call.tokens_with <= call.tokens_without for call in done.calls)
    assert all((call.summarization_cost > 0) == (call.summarization_output_tokens > 0) for call in done.calls)


# --- Gemini CLI: tool-output masking ------------------------------------------------------------

def gemini_run(*sizes: int, last: str = "ok") -> tuple:
    """One user task, then one call per size (an output of about that many tokens), then a last
    call whose output is the request's newest (the turn Gemini protects)."""
    return chat(("user", "Go."), *[("calls", [("read_file", words(n, NAMES[k]))]) for k, n in enumerate(sizes)],
                ("calls", [("read_file", last)]))


def test_gemini_masking_protects_the_newest_50000_tool_tokens_and_masks_once_30000_are_prunable():
    policy = make("gemini-tool-output-masking")
    # newest first: 20,000 and 20,000 are protected; the third crosses 50,000 and is prunable, 20,000 < 30,000
    assert policy.apply(gemini_run(20_000, 20_000, 20_000), METER).fired is None
    done = make("gemini-tool-output-masking").apply(gemini_run(20_000, 20_000, 20_000, 20_000), METER)
    out = results(done.conversation)
    assert done.fired == "pruning" and done.tokens_retrievable > 30_000 and done.tokens_lost == 0
    assert [text.startswith("<tool_output_masked>") for text in out] == [True, True, False, False, False]
    assert out[2:4] == [words(20_000, "three"), words(20_000, "four")] and out[4] == "ok"
    first = out[0]
    assert first.endswith("</tool_output_masked>") and "Full output available at: tool-outputs/read_file_" in first
    assert preview(words(20_000, "one"), False) in first  # its first and last 250 characters
    assert len(preview(words(20_000, "one"), False)) == 250 + len("\n... [TRUNCATED] ...\n") + 250


def test_gemini_masking_never_masks_the_latest_turn_nor_its_exempt_tools():
    latest = gemini_run(40_000, last=words(60_000, "new"))  # the newest turn alone is over both thresholds
    assert make("gemini-tool-output-masking").apply(latest, METER).fired is None
    asked = chat(("user", "Go."), ("calls", [("ask_user", words(40_000, "answer"))]),
                 *[("calls", [("read_file", words(30_000, NAMES[k]))]) for k in range(3)], ("calls", [("x", "ok")]))
    out = results(make("gemini-tool-output-masking").apply(asked, METER).conversation)
    assert out[0] == words(40_000, "answer") and out[1].startswith("<tool_output_masked>")


def test_gemini_masking_previews_a_shell_output_by_its_first_and_last_ten_lines():
    text = "\n".join(f"line {n}" for n in range(50))
    shown = preview(text, True)
    assert shown.splitlines()[:10] == [f"line {n}" for n in range(10)] and "[30 lines omitted]" in shown
    assert shown.splitlines()[-10:] == [f"line {n}" for n in range(40, 50)]


# --- Gemini CLI: chat compression ----------------------------------------------------------------

def test_gemini_compression_fires_at_half_the_window_and_keeps_the_newest_30_percent_of_the_history():
    tasks = [turn for n in range(4) for turn in (("user", f"Task {n}."),
                                                 ("calls", [("read_file", words(9_000, NAMES[n]))]),
                                                 ("assistant", f"Done {n}."))]
    request = chat(*tasks, ("user", "Task 4."))
    assert make("gemini-chat-compression", context_window=80_000).apply(request, METER).fired is None  # < 40,000
    done = make("gemini-chat-compression", context_window=60_000).apply(request, METER)  # 30,000: fires
    sent = done.conversation
    assert done.fired == "summarization"
    # the split is the first user message with 70% of the history's characters before it: Task 3
    assert is_summary(sent.items[1]) and content_text(sent.items[2].content) == ACKNOWLEDGEMENT
    assert texts(sent)[3:] == ["Task 3.", words(9_000, "four"), "Done 3.", "Task 4."]
    assert shape(sent) == ["system", "user", "assistant", "user", "assistant", "tool", "assistant", "user"]
    summary = METER.count(sent).items[1]
    # two calls: the summary, then the check that reads the span and the summary and writes it again
    assert done.summarization.output_tokens == 2 * summary
    assert done.summarization.input_tokens > 2 * (27_000 + METER.text(DEFAULT_PROMPT))


def test_gemini_compression_cuts_older_outputs_past_50000_tokens_to_their_first_8000_and_last_32000_characters():
    request = chat(("user", "Task one."), ("calls", [("read_file", words(30_000, "old"))]), ("assistant", "Read it."),
                   ("user", "Task two."), ("calls", [("read_file", words(60_000, "big"))]), ("assistant", "Read more."),
                   ("user", "Task three."))
    # newest first, the 60,000-token output passes the budget and is cut (to about 10,000); 10,000 and the older
    # 30,000 fit in 50,000; the split: "Task two." has 75% of the history's characters before it
    done = make("gemini-chat-compression", context_window=170_000).apply(request, METER)  # fires at 85,000
    kept = results(done.conversation)
    assert done.fired == "summarization" and len(kept) == 1 and done.tokens_retrievable > 40_000
    assert kept[0] == truncated_output(words(60_000, "big"), "tool-outputs/read_file_call_1.txt", 40_000)
    assert kept[0].startswith("Output too large. Showing first 8,000 and last 32,000 characters. For full output "
                              "see: tool-outputs/read_file_call_1.txt\n")
    assert texts(done.conversation)[3:] == ["Task two.", kept[0], "Read more.", "Task three."]
    assert make("gemini-chat-compression", context_window=200_000).apply(request, METER).fired is None  # 100,000


# --- opencode: prune -----------------------------------------------------------------------------

def opencode_run(*sizes: int, skill: int = 0) -> tuple:
    """A first user turn with one call per size, a second turn with a 30,000-token output, and a
    third (the one running) with a small one."""
    first = [("calls", [("bash", words(n, NAMES[k]))]) for k, n in enumerate(sizes)]
    return chat(("user", "Fix it."), *([("calls", [("skill", words(skill, "skill"))])] if skill else []), *first,
                ("user", "Next."), ("calls", [("bash", words(30_000, "next"))]), ("user", "Again."),
                ("calls", [("bash", "ok")]))


def test_opencode_prune_protects_40000_tokens_and_prunes_only_when_it_frees_more_than_20000():
    # the two newest user turns are whole; before them, newest first: 15,000 and 15,000 protected, the
    # third crosses 40,000: 15,000 prunable, not more than 20,000
    assert make("opencode-prune").apply(opencode_run(15_000, 15_000, 15_000), METER).fired is None
    done = make("opencode-prune").apply(opencode_run(15_000, 15_000, 15_000, 15_000), METER)
    out = results(done.conversation)
    assert done.fired == "pruning" and done.tokens_lost > 20_000 and done.tokens_retrievable == 0
    assert out[:2] == [OPENCODE_CLEARED] * 2 and out[2:4] == [words(15_000, "three"), words(15_000, "four")]
    assert out[4:] == [words(30_000, "next"), "ok"]


def test_opencode_prune_never_prunes_skill_and_stops_at_an_output_it_pruned_before():
    done = make("opencode-prune").apply(opencode_run(15_000, 15_000, 15_000, 15_000, skill=30_000), METER)
    assert results(done.conversation)[0] == words(30_000, "skill")
    settled = opencode_run(15_000, 15_000, 15_000, 15_000)
    cleared = settled.with_items(tuple(item.__class__(**{**item.__dict__, "content": OPENCODE_CLEARED})
                                       if isinstance(item, ToolResult) and content_text(item.content)
                                       == words(15_000, "two") else item for item in settled.items))
    # newest first: four and three protected, then two, pruned before: the walk stops, one stays
    assert make("opencode-prune").apply(cleared, METER).fired is None


# --- Cline: the context manager's truncation ----------------------------------------------------

def cline_run(size: int, calls: int = 8) -> tuple:
    """Cline's history: the task, then one call per reply and its result, the result last."""
    return chat(("user", "Go."), *[("calls", [("read_file", words(size, NAMES[k % len(NAMES)]))])
                                   for k in range(calls)])


def test_cline_truncation_limits_are_the_window_less_its_margin():
    assert [max_allowed(window) for window in (64_000, 128_000, 200_000)] == [37_000, 98_000, 160_000]
    assert max_allowed(1_000_000) == 960_000 and max_allowed(100_000) == 80_000  # else the larger of -40,000, 80%


def test_cline_truncation_keeps_the_first_exchange_and_deletes_half_of_the_rest_with_its_notice():
    # 17 messages (the task, 8 replies, 8 results); at 48,000 tokens of a 64,000 window (over 37,000, under
    # twice it) half the 15 after the first two go: (15 // 4) * 2 = 6, messages 2 to 7
    assert make("cline-truncation", context_window=64_000).apply(cline_run(4_000), METER).fired is None
    policy = make("cline-truncation", context_window=64_000)
    done = policy.apply(cline_run(6_000), METER)
    assert done.fired == "truncation" and done.report == {"deleted": [2, 7]}
    # message 1's call lost its result (message 2) and message 8's result its call (message 7): both go
    assert results(done.conversation) == [words(6_000, NAMES[k % len(NAMES)]) for k in range(4, 8)]
    assert texts(done.conversation)[:3] == ["You are a coding agent.", "Go.", NOTICE]
    later = cline_run(6_000, calls=9)  # the next request: the range stays, though what is sent is under the limit
    assert policy.apply(later, METER).report == {"deleted": [2, 7]}


def test_cline_truncation_deletes_three_quarters_when_half_the_request_is_still_over_the_limit():
    done = make("cline-truncation", context_window=64_000).apply(cline_run(10_000), METER)  # 80,000 / 2 > 37,000
    assert done.report == {"deleted": [2, 11]}  # 15 * 3 // 4 // 2 * 2 = 10 messages
    assert results(done.conversation) == [words(10_000, NAMES[k % len(NAMES)]) for k in range(6, 8)]


def test_a_peer_built_with_a_negative_size_is_refused_with_its_name():
    from playground.errors import InputError
    from playground.policies.cline import ClineTruncationPolicy
    from playground.policies.gemini_compression import GeminiCompressionPolicy
    from playground.policies.prune import PrunePolicy

    for build, key in ((lambda: PrunePolicy(minimum=-1), "minimum"),
                       (lambda: GeminiCompressionPolicy(budget=-1), "budget"),
                       (lambda: GeminiCompressionPolicy(keep_share=1.0), "keep_share"),
                       (lambda: ClineTruncationPolicy(context_window=-5), "context_window")):
        with pytest.raises(InputError) as raised:
            build()
        assert raised.value.where == key


# --- Aider: chat-history summarization -----------------------------------------------------------

def aider_run(turns: int, size: int) -> tuple:
    """``turns`` done exchanges of about ``size`` tokens a message, then the turn running."""
    done = [message for k in range(turns) for message in (("user", words(size, NAMES[k])),
                                                          ("assistant", words(size, NAMES[k])))]
    return chat(*done, ("user", "Now."))


def test_aider_limit_is_a_sixteenth_of_the_window_between_1024_and_8192():
    assert [history_limit(window) for window in (8_000, 32_000, 128_000, 200_000)] == [1_024, 2_000, 8_000, 8_192]


def test_aider_summarizes_the_done_turns_over_the_limit_and_keeps_the_newest_under_half_of_it():
    run = aider_run(6, 300)  # 12 done messages of about 300 tokens: about 3,650
    assert make("aider-summary", context_window=64_000).apply(run, METER).fired is None  # limit 4,000
    policy = make("aider-summary", context_window=32_000)  # limit 2,000: the tail stays under 1,000
    done = policy.apply(run, METER)
    sent = done.conversation
    assert done.fired == "summarization" and is_summary(sent.items[1])
    # the newest three messages (about 912) fit under 1,000; the cut moves back to follow an assistant message
    assert texts(sent)[2:] == [words(300, "five")] * 2 + [words(300, "six")] * 2 + ["Now."]
    assert done.summarization.input_tokens > 8 * 300 and done.summarization.output_tokens == METER.count(sent).items[1]
    grown = chat(*[(role_of_turn, text) for role_of_turn, text in _turns(run)], ("assistant", "Working."))
    again = policy.apply(grown, METER)  # the same done turns, later in the turn: sent again, not summarized again
    assert again.fired == "summarization" and again.summarization is None
    assert again.conversation.items[1] == sent.items[1]


def test_aider_summarizes_four_messages_or_fewer_whole_and_has_the_assistant_answer_ok():
    done = make("aider-summary", context_window=32_000).apply(aider_run(2, 600), METER)
    assert shape(done.conversation) == ["system", "user", "assistant", "user"]
    assert texts(done.conversation)[2:] == [OK, "Now."]


def _turns(conversation) -> list[tuple[str, str]]:
    """A chat's messages after the system prompt, as (role, text) turns."""
    return [(item.role, content_text(item.content)) for item in conversation.items[1:]]


# --- LlamaIndex: Memory's FIFO queue -----------------------------------------------------------

def llamaindex_run(*sizes: int) -> tuple:
    """One user turn per size: a short task, one call, an output of about that many tokens."""
    return chat(*[turn for k, size in enumerate(sizes)
                  for turn in (("user", f"Task {k}."), ("calls", [("bash", words(size, NAMES[k % len(NAMES)]))]))])


def test_llamaindex_memory_flushes_over_70_percent_of_30000_the_oldest_turn_first():
    assert make("llamaindex-memory").apply(llamaindex_run(5_000, 5_000, 5_000, 5_000), METER).fired is None
    done = make("llamaindex-memory").apply(llamaindex_run(5_000, 5_000, 5_000, 5_000, 5_000), METER)  # > 21,000
    assert done.fired == "flushing" and done.report == {"flushed": 3}  # the task, its call and its output
    assert texts(done.conversation)[1] == "Task 1."
    assert results(done.conversation) == [words(5_000, NAMES[k]) for k in range(1, 5)]


def test_llamaindex_memory_flushes_3000_tokens_at_a_time_and_then_to_a_user_message():
    # at the last output the queue holds about 22,500: the first flush takes the first turn (about 2,100, under
    # 3,000) and goes on into the second; then on to the next user message, "Task 2."
    done = make("llamaindex-memory").apply(llamaindex_run(2_000, 2_000, 6_000, 6_000, 6_000), METER)
    assert texts(done.conversation)[1] == "Task 2." and done.report == {"flushed": 6}
    assert len(results(done.conversation)) == 3
    one_turn = chat(("user", "One long task."), *[("calls", [("bash", words(6_000))]) for _ in range(5)])
    # a single turn over the limit: LlamaIndex would keep its newest message alone; the turn stays whole
    assert make("llamaindex-memory").apply(one_turn, METER).fired is None


# --- Anthropic: on-demand compaction (compact-2026-09-04) ---------------------------------------

def test_anthropic_on_demand_compaction_keeps_the_unread_turn_and_bills_the_request_up_to_the_cut():
    request = chat(("user", "Fix the bug."), ("calls", [("read", words(80_000))]), ("assistant", "Found it."),
                   ("user", "Read the other one."), ("calls", [("read", words(75_000))]), ("user", "Run the tests."))
    assert make("anthropic-compaction-on-demand").params() == {"trigger": 150_000, "reads_request": True}
    done = make("anthropic-compaction-on-demand").apply(request, METER)
    threshold = make("anthropic-compaction").apply(request, METER)
    sent = done.conversation
    # what is kept is threshold compaction's at the same limit: the block, then the turn not yet answered
    assert done.fired == "summarization" and sent == threshold.conversation
    assert shape(sent) == ["system", "user", "assistant", "tool", "user"] and is_summary(sent.items[1])
    # the summarization request is sent the system prompt and tools with the messages it summarizes
    tail = sum(METER.count(sent).items[2:])
    assert done.summarization.input_tokens == METER.count(request).total - tail + METER.text(DEFAULT_PROMPT)
    assert done.summarization.input_tokens > threshold.summarization.input_tokens
    assert done.summarization.output_tokens == threshold.summarization.output_tokens


# --- Letta: the sliding-window summarizer -----------------------------------------------------

def letta_run(calls: int, size: int) -> tuple:
    """A task, then one reply with a call and its return per call (two Letta messages each)."""
    return chat(("user", "Go."), *[("calls", [("bash", words(size, NAMES[k % len(NAMES)]))]) for k in range(calls)])


def test_letta_fires_over_90_percent_of_the_window_and_keeps_the_messages_from_the_cut_under_70_percent():
    run = letta_run(12, 8_000)  # about 96,100 tokens; Letta's list: system, task, 12 replies and 12 returns (26)
    assert make("letta-sliding-window", context_window=110_000).apply(run, METER).fired is None  # 99,000
    done = make("letta-sliding-window", context_window=100_000).apply(run, METER)  # over 90,000
    sent = done.conversation
    # the first try evicts 40%: round(0.4 * 26) = 10, the fifth reply; the system message and the 8 returns from
    # it on come to about 64,000, under 70,000: the task and the first four calls are summarized
    assert done.fired == "summarization" and is_summary(sent.items[1])
    assert results(sent) == [words(8_000, NAMES[k % len(NAMES)]) for k in range(4, 12)]
    assert shape(sent)[2:4] == ["assistant", "tool"] and "Go." not in texts(sent)
    assert done.summarization.input_tokens > 4 * 8_000 and done.summarization.output_tokens == \
        METER.count(sent).items[1]


def test_letta_summarizes_everything_when_no_cut_fits_and_again_when_what_it_kept_is_still_over():
    # the newest return alone is over 70% of the window: no cut fits, every message up to the newest turn goes
    whole = chat(("user", "Go."), ("calls", [("bash", words(5_000))]), ("calls", [("bash", words(95_000, "big"))]))
    done = make("letta-sliding-window", context_window=100_000).apply(whole, METER)
    assert done.fired == "summarization" and results(done.conversation) == [words(95_000, "big")]
    assert shape(done.conversation) == ["system", "user", "assistant", "tool"]
    # a trigger under the goal: the cut's kept messages (about 64,000) are at or over 50,000, so they are
    # summarized again, from themselves alone; two calls billed
    policy = LettaSlidingWindowPolicy(context_window=100_000, trigger_share=0.5)
    again = policy.apply(letta_run(12, 8_000), METER)
    assert [is_summary(item) for item in again.conversation.items].count(True) == 1
    assert results(again.conversation) == [words(8_000, NAMES[11 % len(NAMES)])]
    assert again.summarization.input_tokens > 4 * 8_000 + 7 * 8_000 + 2 * METER.text(DEFAULT_PROMPT)


# --- Google ADK: token-threshold event compaction ----------------------------------------------

def adk_run(calls: int) -> tuple:
    return chat(("user", "Go."), *[("calls", [("read_file", words(700, NAMES[k % len(NAMES)]))])
                                   for k in range(calls)])


def test_adk_compacts_at_4000_tokens_and_keeps_the_newest_5_events_with_their_calls():
    assert METER.count(adk_run(5)).total < 4_000 < METER.count(adk_run(6)).total
    assert make("adk-token-compaction").apply(adk_run(5), METER).fired is None
    done = make("adk-token-compaction").apply(adk_run(6), METER)
    sent = done.conversation
    # the newest 5 events begin at the fourth return, whose call is kept with it: six events stay raw
    assert done.fired == "summarization" and is_summary(sent.items[1])
    assert shape(sent) == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant", "tool"]
    assert results(sent) == [words(700, NAMES[k]) for k in range(3, 6)]
    # over a longer run each compaction summarizes the last summary again with the events after it: one stays
    rolled = replay(adk_run(14), make("adk-token-compaction"), METER, GPT4O, cache="none")
    assert sum(call.summarization_output_tokens > 0 for call in rolled.calls) >= 2
    assert [is_summary(item) for item in rolled.final.items].count(True) == 1


def test_letta_built_with_a_negative_size_or_a_share_out_of_range_is_refused_with_its_name():
    from playground.errors import InputError

    for options, key in (({"clip_chars": -1}, "clip_chars"), ({"trigger_share": 1.5}, "trigger_share"),
                         ({"sliding_window_percentage": 0}, "sliding_window_percentage")):
        with pytest.raises(InputError) as raised:
            LettaSlidingWindowPolicy(**options)
        assert raised.value.where == key


# --- Roo Code: context condensing ---------------------------------------------------------------

def condensing_run(first: int) -> tuple:
    """Three user turns: the first with an output of about ``first`` tokens, the second with 6,000,
    the third (the one running) with two of 5,000, the last not yet answered."""
    return chat(("user", "Task 0."), ("calls", [("bash", words(first, "one"))]), ("assistant", "Done 0."),
                ("user", "Task 1."), ("calls", [("bash", words(6_000, "two"))]), ("assistant", "Done 1."),
                ("user", "Task 2."), ("calls", [("bash", words(5_000, "three"))]),
                ("calls", [("bash", words(5_000, "four"))]))


def window_for(threshold, wanted: int) -> int:
    """A context window whose trigger (``threshold(window)``) is ``wanted``."""
    return next(window for window in range(wanted, 4 * wanted + 100_000) if threshold(window) == wanted)


def test_roo_code_condenses_over_90_percent_of_the_window_less_8192_and_keeps_only_the_summary():
    assert make("roo-code-condense").params() == {"trigger": 171_808, "context_window": 200_000}  # 180,000 - 8,192
    run = condensing_run(33_000)
    total = METER.count(run).total
    roo = lambda window: make("roo-code-condense", context_window=window)  # noqa: E731
    # prevContextTokens > allowedTokens: strictly over
    assert roo(window_for(lambda w: roo(w).params()["trigger"], total)).apply(run, METER).fired is None
    done = roo(window_for(lambda w: roo(w).params()["trigger"], total - 1)).apply(run, METER)
    sent = done.conversation
    # a fresh start: the summary alone stands for the history; the step not yet answered stays after it
    assert done.fired == "summarization" and is_summary(sent.items[1])
    assert shape(sent) == ["system", "user", "assistant", "tool"] and results(sent) == [words(5_000, "four")]
    summary = METER.count(sent).items[1]
    assert done.summarization.output_tokens == summary
    assert done.summarization.input_tokens > 33_000 + 6_000 + 5_000 + METER.text(DEFAULT_PROMPT)


# --- opencode: session compaction ---------------------------------------------------------------

def test_opencode_usable_window_and_tail_budget_are_its_sources_numbers():
    assert usable(200_000, 32_000) == 148_000  # the window less 32,000 for the reply less 20,000 reserved
    assert usable(200_000, 8_000) == 184_000  # a reply of 8,000 reserves 8,000 too
    assert [preserve_budget(tokens) for tokens in (4_000, 48_000, 148_000)] == [2_000, 12_000, 15_000]
    assert make("opencode-summary").params()["trigger"] == 148_000


def test_opencode_summary_fires_at_the_usable_window_and_keeps_the_newest_turns_that_fit_its_budget():
    run = condensing_run(33_000)
    total = METER.count(run).total
    opencode = lambda window: make("opencode-summary", context_window=window)  # noqa: E731
    assert opencode(total + 52_001).apply(run, METER).fired is None  # usable = total + 1
    assert opencode(total + 52_000).apply(run, METER).fired == "summarization"  # count >= usable
    # at a 100,000 window: usable 48,000, the tail budget a quarter of it, 12,000. The running turn (about 10,000)
    # fits whole; the turn before overflows it, so of it only its newest message that fits stays: "Done 1."
    assert METER.count(condensing_run(20_000)).total < 48_000 <= total
    assert make("opencode-summary", context_window=100_000).apply(condensing_run(20_000), METER).fired is None
    done = make("opencode-summary", context_window=100_000).apply(run, METER)
    sent = done.conversation
    assert is_summary(sent.items[1]) and texts(sent)[2:] == ["Done 1.", "Task 2.", words(5_000, "three"),
                                                            words(5_000, "four")]
    assert done.summarization.output_tokens == METER.count(sent).items[1]
    assert done.summarization.input_tokens > 33_000 + 6_000 + METER.text(DEFAULT_PROMPT)


def test_opencode_summary_keeps_nothing_when_the_tail_would_hold_it_all_but_never_what_is_unanswered():
    run = condensing_run(33_000)
    # a budget over the whole history: opencode summarizes all of it; the step not yet answered stays here
    done = OpencodeSummaryPolicy(context_window=100_000, preserve_recent_tokens=100_000).apply(run, METER)
    assert shape(done.conversation) == ["system", "user", "assistant", "tool"]
    assert results(done.conversation) == [words(5_000, "four")]
    # a budget under the newest step: opencode would summarize that step too; it and its result stay
    small = OpencodeSummaryPolicy(context_window=100_000, preserve_recent_tokens=10).apply(run, METER)
    assert results(small.conversation) == [words(5_000, "four")]


def test_letta_never_cuts_between_two_calls_of_one_reply_listed_one_by_one():
    """A format that lists each call as an item of its own (the native one) gave Letta's cut a start
    between two calls of one reply: the first call's result was kept without its call, a request no
    API takes (hypothesis found it)."""
    body = {"format": "compaction-playground", "version": 1, "model": "gpt-4o", "items": [
        {"type": "tool_call", "call_id": "call_a", "name": "read_file", "arguments": {"path": "a.py"}},
        {"type": "tool_call", "call_id": "call_b", "name": "read_file", "arguments": {"path": "a.py"}},
        {"type": "tool_result", "call_id": "call_a", "name": "read_file", "status": "success", "content": ""},
        {"type": "tool_result", "call_id": "call_b", "name": "read_file", "status": "success", "content": ""},
        {"type": "message", "role": "assistant", "content": ""}]}
    conversation = formats.read(body)
    check_request(conversation, "letta-sliding-window", True)
    for mode in ("stored", "per-call"):  # the request of every call, as replay builds it, is read back whole
        assert replay(conversation, THEIR_FIRING["letta-sliding-window"](), METER, GPT4O, mode=mode, cache="none")


def test_llamaindex_memory_refuses_a_flush_of_no_tokens():
    """A flush of 0 tokens moves nothing: once over the limit the policy would flush for ever."""
    with pytest.raises(InputError, match="token_flush_size must be 1 or more"):
        LlamaIndexMemoryPolicy(token_flush_size=0)
