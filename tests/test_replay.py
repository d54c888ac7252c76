"""Replay, compare, prompt-cache and price arithmetic: hand-checked small cases, invariants on
generated conversations, the real mini-SWE-agent trace, and the CLI's JSON shapes."""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from types import SimpleNamespace

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from playground import formats
from playground.conversation import Conversation, Message, ToolCall, ToolResult
from playground.errors import InputError
from playground.meter.tokens import Meter
from playground.policies import LOGGED, OURS, POLICIES, MaskingPolicy, NonePolicy, RulesPolicy, make
from playground.policies.condense import CondensePolicy
from playground.policies.prune import PrunePolicy
from playground.run.compare import compare
from playground.run.prices import load_prices, read_prices
from playground.run.promptcache import CacheUse, PromptCache, call_cost
from playground.run.replay import Call, Replay, applied, call_starts, replay
from playground.summarize.offline import OfflineSummarizer

from .conftest import TRACES, load_shared
from .strategies import LONG_RUNS, REQUESTS
from .test_cli import cli
from .test_compaction import book_scenario

PRICES = read_prices()
GPT4O = PRICES.get("gpt-4o")
SONNET = PRICES.get("claude-sonnet-4-5")
PRICED = {"openai": GPT4O, "anthropic": SONNET, "none": GPT4O}  # each cache model with a model of its provider


# --- the prompt cache, by hand ---------------------------------------------------------------

def test_openai_reads_the_longest_shared_prefix_in_steps_of_128():
    cache = PromptCache("openai", 1024)
    assert cache.use([1, 2, 3], [100, 1100, 1300]) == CacheUse(0, 0)  # nothing written yet
    assert cache.use([1, 2, 3, 4], [100, 1100, 1300, 1500]).read == 1280  # 1,300 shared → 10 × 128
    assert cache.use([1, 2, 9, 10], [100, 1100, 1250, 1400]).read == 1024  # item 2 edited: 1,100 shared → 8 × 128
    assert cache.use([1, 7], [100, 1000]).read == 0  # 100 shared: below 1,024


def test_openai_does_not_cache_prompts_below_the_minimum():
    cache = PromptCache("openai", 1024)
    cache.use([1, 2], [100, 900])  # 900 tokens: never written
    assert cache.use([1, 2, 3], [100, 900, 2000]).read == 0


def test_anthropic_writes_at_the_breakpoint_and_reads_entries_within_20_blocks():
    cache = PromptCache("anthropic", 1024)
    assert cache.use([1, 2, 3], [100, 1100, 1300]) == CacheUse(read=0, written=1300)
    assert cache.use([1, 2, 3, 4], [100, 1100, 1300, 1500]) == CacheUse(read=1300, written=200)
    # an edit before the last entry: no entry matches, the whole prompt is written again
    assert cache.use([1, 5, 6, 7], [100, 1150, 1350, 1550]) == CacheUse(read=0, written=1550)
    # 21 new blocks after an entry: the entry is 21 boundaries back, beyond the lookback of 20
    far = [1, 5, 6, 7, *range(100, 121)]
    assert cache.use(far, [100, 1150, 1350, 1550, *range(1560, 1770, 10)]).read == 0
    assert cache.use([1, 2], [100, 1000]) == CacheUse(0, 0)  # below the minimum: not cached at all


def test_call_cost_by_hand():
    # gpt-4o: 5,904 uncached × $2.50 + 4,096 cached × $1.25 + 100 out × $10, per million
    assert call_cost(10_000, CacheUse(read=4096), 100, GPT4O) == pytest.approx(0.02088)
    # sonnet 4.5: 100 × $3 + 8,000 read × $0.30 + 1,900 written × $3.75 + 100 out × $15, per million
    assert call_cost(10_000, CacheUse(read=8000, written=1900), 100, SONNET) == pytest.approx(0.011325)
    assert call_cost(10_000, CacheUse(), 0, GPT4O) == pytest.approx(0.025)


def test_unknown_cache_model_is_a_located_error():
    with pytest.raises(InputError, match="cache"):
        PromptCache("gemini")


# --- prices ------------------------------------------------------------------------------------

def test_every_price_names_its_catalogue_row():
    assert PRICES.as_of.startswith("genai-prices ")
    for name in PRICES.models():
        price = PRICES.get(name)
        assert price.known and price.source.startswith("genai-prices ") and f": {price.priced_as}" in price.source


def test_a_snapshot_is_priced_as_its_model_and_an_unlisted_name_as_nothing():
    snapshot = PRICES.get("gpt-4o-2024-08-06")
    assert snapshot.priced_as == "gpt-4o" and snapshot.input == GPT4O.input
    unlisted = PRICES.get("my-local-llama")
    assert unlisted.model == "my-local-llama" and unlisted.priced_as is None and not unlisted.known
    assert math.isnan(unlisted.input) and "price unknown — enter it" in unlisted.source


@pytest.mark.parametrize(("entry", "where"), [
    ({"provider": "openai", "input": 1}, "prices.models.m.source"),
    ({"provider": "google", "source": "x"}, "prices.models.m.provider"),
    ({"provider": "openai", "source": "x", "input": -1}, "prices.models.m.input"),
])
def test_price_loader_names_the_bad_field(entry, where):
    with pytest.raises(InputError) as caught:
        load_prices({"as_of": "2025", "models": {"m": entry}})
    assert caught.value.where == where


# --- replay on the book's example, by hand -----------------------------------------------------

def book_conversation() -> formats.Conversation:
    return formats.read(book_scenario())


def test_each_assistant_turn_is_one_call_indexed_by_the_inputs_own_list():
    conversation = book_conversation()
    run = replay(conversation, NonePolicy(), Meter("gpt-4o"), GPT4O, cache="none")
    assert [call.index for call in run.calls] == [2, 4, 6, 8]
    meter = Meter("gpt-4o")
    for call in run.calls:  # each request is everything before the turn, counted as a whole request would be
        assert call.tokens_without == meter.count(conversation.with_items(conversation.items[:call.position])).total


def test_rules_fire_once_over_the_threshold_and_the_sawtooth_drops():
    conversation = book_conversation()
    meter = Meter("gpt-4o")
    last = meter.count(conversation.with_items(conversation.items[:call_starts(conversation.items)[-1]])).total
    run = replay(conversation, RulesPolicy(threshold=last - 1, summarize=False), meter, GPT4O, cache="none")
    fired = [call for call in run.calls if call.fired]
    assert [call.fired for call in fired] == ["compaction"] and fired[0] is run.calls[-1]
    assert fired[0].tokens_with < fired[0].tokens_without
    assert run.tokens_retrievable == fired[0].tokens_without - fired[0].tokens_with and run.tokens_lost == 0
    assert run.totals.cost_with < run.totals.cost_without


def test_stored_keeps_the_edits_and_per_call_redoes_them_on_a_whole_history():
    conversation = book_conversation()
    meter = Meter("gpt-4o")
    policy = RulesPolicy(threshold=0, summarize=False)
    stored = replay(conversation, policy, meter, GPT4O, mode="stored")
    per_call = replay(conversation, policy, meter, GPT4O, mode="per-call")
    final_prefix = conversation.with_items(conversation.items[:per_call.calls[-1].position])
    assert per_call.final == policy.apply(final_prefix, meter).conversation
    assert [c.tokens_with for c in stored.calls] == [c.tokens_with for c in per_call.calls]  # same edits, here


def test_break_even_counts_the_calls_that_repay_a_miss():
    calls = tuple(Call(index=i, position=i, tokens_without=0, tokens_with=0, cached_without=0, cached_with=0,
                       written_without=0, written_with=0, output_tokens=0, cost_without=1.0, cost_with=cost,
                       fired="compaction" if i == 1 else None)
                  for i, cost in enumerate([1.0, 1.5, 0.6, 0.6]))
    run = Replay(calls, "rules", {}, "stored", "openai", GPT4O, 0, 0, book_conversation())
    (even,) = run.break_even()
    # the firing call costs 0.50 more; then 0.40 saved per call: -0.50, -0.10, +0.30 → repaid after 2 more calls
    assert even.call == 1 and even.extra == pytest.approx(0.5) and even.repaid_after == 2


def test_a_firing_right_after_another_is_measured_against_the_last_call_that_did_not_fire():
    """A Gemini CLI log summarized at calls 6 and 7: the CLI said the second firing's cache miss
    was $0.0000, because it was measured against the first firing's own (negative) saving."""
    calls = tuple(Call(index=i, position=i, tokens_without=0, tokens_with=0, cached_without=0, cached_with=0,
                       written_without=0, written_with=0, output_tokens=0, cost_without=1.0, cost_with=cost,
                       fired="summarization" if i in (1, 2) else None)
                  for i, cost in enumerate([0.9, 1.5, 1.4, 0.6]))
    run = Replay(calls, "rules", {}, "stored", "openai", GPT4O, 0, 0, book_conversation())
    first, second = run.break_even()
    # both are measured against call 0's saving of 0.10: 0.60 and 0.50 extra
    assert first.extra == pytest.approx(0.6) and first.repaid_after is None  # it fired again first
    assert second.extra == pytest.approx(0.5) and second.repaid_after is None  # -0.5, then +0.3: not repaid


# --- invariants on generated conversations ------------------------------------------------------

FIRING = {"rules": {"threshold": 0}, "masking": {"window": 0}, "clear-tool-uses": {"trigger": 0, "keep": 0},
          "summarize": {"limit": 0, "keep_steps": 0}, "hybrid": {"window": 1, "limit": 0, "keep_steps": 0}, "none": {}}
NEVER = {"rules": {"threshold": 10**9}, "masking": {"window": 10**6}, "clear-tool-uses": {"trigger": 10**9},
         "summarize": {"limit": 10**9}, "hybrid": {"window": 10**6, "limit": 10**9}, "none": {}}


@settings(max_examples=40)
@given(st.one_of(*REQUESTS.values()), st.sampled_from(list(OURS)), st.sampled_from(["stored", "per-call"]),
       st.sampled_from(["openai", "anthropic", "none"]))
def test_a_policy_never_bills_more_and_the_cache_never_exceeds_the_prompt(body, name, mode, cache):
    conversation = formats.read(body)
    meter = Meter("gpt-4o")
    run = replay(conversation, make(name, **FIRING[name]), meter, PRICED[cache], mode=mode, cache=cache)
    for call in run.calls:
        assert call.tokens_with <= call.tokens_without
        assert 0 <= call.cached_with <= call.tokens_with and 0 <= call.cached_without <= call.tokens_without
        assert call.cached_with + call.written_with <= call.tokens_with
    if run.calls:  # the incremental count of what was sent agrees with counting it whole
        assert run.calls[-1].tokens_with == meter.count(run.final).total


@settings(max_examples=30)
@given(st.one_of(*REQUESTS.values()), st.sampled_from(list(OURS)), st.sampled_from(["stored", "per-call"]),
       st.sampled_from(["openai", "anthropic", "none"]))
def test_a_policy_that_never_fires_costs_exactly_what_none_costs(body, name, mode, cache):
    conversation = formats.read(body)
    meter = Meter("gpt-4o")
    run = replay(conversation, make(name, **NEVER[name]), meter, PRICED[cache], mode=mode, cache=cache)
    assert not any(call.fired for call in run.calls)
    assert [(c.tokens_with, c.cached_with, c.cost_with) for c in run.calls] == [
        (c.tokens_without, c.cached_without, c.cost_without) for c in run.calls]


# --- the real mini-SWE-agent trace -------------------------------------------------------------

def test_masking_the_miniswe_trace_bills_fewer_tokens_than_none():
    conversation = formats.read(load_shared(TRACES / "miniswe_pr_astropy-12907.openai.json"))
    meter = Meter("gpt-4o")
    rows = {row.policy: row for row in compare(conversation, [NonePolicy(), MaskingPolicy(10)], meter, GPT4O)}
    assert rows["masking"].tokens_billed < rows["none"].tokens_billed
    assert rows["masking"].tokens_lost > 0 and rows["masking"].tokens_retrievable == 0
    assert rows["masking"].cached_tokens < rows["none"].cached_tokens  # masking breaks the cached prefix
    assert rows["none"].tokens_billed == sum(c.tokens_without for c in replay(
        conversation, NonePolicy(), meter, GPT4O).calls)


# --- the CLI -----------------------------------------------------------------------------------

def test_replay_json_has_exactly_the_documented_shape(book_file):
    done = cli("replay", str(book_file), "--threshold", "0", "--no-summarize", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert set(data) == {"calls", "totals", "hidden_used", "hidden_used_calls", "hidden_used_lost", "priced_as",
                         "price_note", "facts"}
    assert list(data["facts"]) == ["lost_then_used", "end", "firings"]  # the worst case first (docs/ledger.md)
    assert data["priced_as"] == "gpt-4o" and data["price_note"] is None  # the book's example names gpt-4o
    assert all(set(use) == {"call", "item", "tool", "span", "retrievable"} for use in data["hidden_used"])
    assert data["hidden_used_calls"] == len({use["call"] for use in data["hidden_used"]})
    assert [set(call) for call in data["calls"]] == [{"index", "tokens_without", "tokens_with", "cached_tokens_without",
                                                      "cached_tokens_with", "cost_without", "cost_with", "fired",
                                                      "summarization_input_tokens", "summarization_output_tokens",
                                                      "summarization_cost"}] * 4
    assert [call["index"] for call in data["calls"]] == [2, 4, 6, 8]
    assert set(data["totals"]) == {"tokens_without", "tokens_with", "cached_tokens_without", "cached_tokens_with",
                                   "cost_without", "cost_with", "summarization_cost", "summarizer", "baseline"}
    assert data["totals"]["baseline"] == "full-history"  # a request, not an agent's log: nothing was cut
    assert data["totals"]["tokens_with"] == sum(call["tokens_with"] for call in data["calls"])
    assert any(call["fired"] for call in data["calls"])


def test_compare_json_rows_and_no_policy_bills_more_than_none(book_file):
    done = cli("compare", str(book_file), "--threshold", "0", "--window", "1", "--trigger", "0", "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [row["strategy"] for row in rows] == [name for name in POLICIES if name not in LOGGED]  # no agent compaction
    keys = {"strategy", "params", "tokens_final", "tokens_billed", "cached_tokens", "cost", "tokens_lost",
            "tokens_retrievable", "summarization_cost", "source"}
    assert all(keys <= set(row) for row in rows)
    none = rows[0]["tokens_billed"]
    assert all(row["tokens_billed"] <= none for row in rows)
    assert any(row["tokens_billed"] < none for row in rows)


@pytest.mark.parametrize("args", [("--strategy", "magic"), ("--cache", "gemini"), ("--rules", "r.json", "--preset",
                                                                                 "book")])
def test_replay_refuses_in_one_line(book_file, args):
    done = cli("replay", str(book_file), *args)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


@pytest.mark.parametrize(("model", "cache"), [("gpt-4o", "anthropic"), ("claude-sonnet-4-5", "openai")])
def test_a_cache_model_of_another_provider_is_refused(book_file, model, cache):
    for command in ("replay", "compare"):
        done = cli(command, str(book_file), "--model", model, "--cache", cache)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert "--cache" in done.stderr and f"{model} is priced by" in done.stderr
    with pytest.raises(InputError, match="two providers"):  # the engine refuses it too, for the page
        replay(book_conversation(), NonePolicy(), Meter(model), PRICES.get(model), cache=cache)
    assert cli("replay", str(book_file), "--model", model, "--cache", "none").returncode == 0


def test_the_suggested_preset_replays_the_rules_suggested_for_the_conversation(book_file):
    from playground.tune.rulesets import RULESETS

    done = cli("replay", str(book_file), "--preset", "suggested", "--threshold", "0", "--no-summarize", "--json")
    if "suggested" not in RULESETS:  # a branch without the suggestion work: one line, exit 2
        assert done.returncode == 2 and "--preset" in done.stderr and done.stderr.count("\n") == 1
        return
    assert done.returncode == 0, done.stderr
    rules = RULESETS["suggested"].make(book_conversation())
    expected = replay(book_conversation(), RulesPolicy(rules=rules, threshold=0, summarize=False), Meter("gpt-4o"),
                      GPT4O)
    assert [call["tokens_with"] for call in json.loads(done.stdout)["calls"]] == [
        call.tokens_with for call in expected.calls]


@settings(max_examples=80)
@given(st.one_of(*REQUESTS.values()), st.integers(1, 4), st.sampled_from(["gpt-4o", "claude-sonnet-4-5"]))
def test_a_running_total_agrees_with_counting_the_whole_request(body, step, model):
    """A user message ends the turn of the thinking or reasoning before it (no longer billed): the
    total counts again from the first of those, not the whole request."""
    from playground.policies.base import RunningTotal

    conversation = formats.read(body)
    meter, running = Meter(model), RunningTotal()
    for end in [*range(0, len(conversation.items), step), len(conversation.items)]:
        prefix = conversation.with_items(conversation.items[:end])
        assert running.total(prefix, meter) == meter.count(prefix).total


@settings(max_examples=80)
@given(st.one_of(*REQUESTS.values(), LONG_RUNS), st.integers(1, 4), st.sampled_from(["gpt-4o", "claude-sonnet-4-5"]),
       st.sampled_from([None, 1.37]), st.data())
def test_a_running_total_agrees_with_counting_the_whole_request_when_earlier_outputs_are_edited(body, step, model,
                                                                                               factor, data):
    """As per-call masking and clearing send them: each request is the last one grown, with some
    earlier tool results or calls replaced by shorter ones of their kind (calibrated or not: a
    parallel call's overhead is scaled with it)."""
    from dataclasses import replace as edit

    from playground.meter.factor import Calibration
    from playground.policies.base import RunningTotal

    conversation = formats.read(body)
    meter = Meter(model, Calibration(model, factor, samples=3) if factor else None)
    running, items = RunningTotal(), list(conversation.items)
    for end in [*range(0, len(items), step), len(items)]:
        for position in data.draw(st.lists(st.integers(0, max(0, end - 1)), max_size=3)):
            item = items[position] if position < end else None
            if isinstance(item, ToolResult):
                items[position] = edit(item, content=data.draw(st.sampled_from(["[cleared]", "", "x y"])))
            elif isinstance(item, ToolCall):
                items[position] = edit(item, arguments="{}")
        request = conversation.with_items(items[:end])
        assert running.total(request, meter) == meter.count(request).total


def test_a_running_total_never_reuses_another_models_count():
    from playground.policies.base import RunningTotal

    conversation = book_conversation()
    running, gpt5, gpt4o = RunningTotal(), Meter("gpt-5"), Meter("gpt-4o")
    running.total(conversation.with_items(conversation.items[:4]), gpt4o)
    longer = conversation.with_items(conversation.items[:6])
    assert running.total(longer, gpt5) == gpt5.count(longer).total != gpt4o.count(longer).total


def reads(count: int) -> formats.Conversation:
    """A run of ``count`` file reads, each answered by the same 40-line page."""
    messages = [{"role": "system", "content": "You are a coding agent."}, {"role": "user", "content": "Read them."}]
    for i in range(count):
        messages.append({"role": "assistant", "content": None,
                         "tool_calls": [{"id": f"c{i}", "type": "function", "function": {
                             "name": "read_file", "arguments": json.dumps({"path": f"f{i}.py"})}}]})
        page = f"# file {i}\n" + "def main():\n    pass\n" * 40
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": page})
    messages.append({"role": "assistant", "content": "Read them all."})
    return formats.read({"model": "gpt-4o", "messages": messages})


def test_per_call_edits_every_request_over_the_threshold_stored_only_when_the_history_is():
    conversation = reads(8)
    meter = Meter("gpt-4o")
    starts = call_starts(conversation.items)
    threshold = meter.count(conversation.with_items(conversation.items[:starts[3]])).total
    policy = RulesPolicy(threshold=threshold, summarize=False)
    stored = replay(conversation, policy, meter, GPT4O, mode="stored")
    per_call = replay(conversation, RulesPolicy(threshold=threshold, summarize=False), meter, GPT4O, mode="per-call")
    assert [c.fired is not None for c in per_call.calls] == [False] * 3 + [True] * 6
    assert sum(c.fired is not None for c in stored.calls) < 6  # compacted history stays under for a while
    assert all(p.tokens_with <= s.tokens_with for p, s in zip(per_call.calls, stored.calls, strict=True))
    assert per_call.totals.tokens_with < stored.totals.tokens_with


class _Reorder:
    """A policy that rewrites the newest tool result with its words in another order: the same
    token count, different content."""

    name = "reorder"

    def params(self) -> dict:
        return {}

    def apply(self, conversation, meter):
        from dataclasses import replace as swap

        from playground.conversation import ToolResult, content_text
        from playground.policies import PolicyResult

        items = list(conversation.items)
        last = max((p for p, item in enumerate(items) if isinstance(item, ToolResult)), default=None)
        if last is None:
            return PolicyResult(conversation)
        items[last] = swap(items[last], content=" ".join(reversed(content_text(items[last].content).split(" "))))
        return PolicyResult(conversation.with_items(items), "reorder")


def test_the_cache_compares_content_not_just_counts():
    long_system = {"role": "system", "content": "Follow the house rules. " * 400}
    conversation = formats.read({**formats.write(reads(3)), "messages": [
        long_system, *formats.write(reads(3))["messages"][1:]]})
    meter = Meter("gpt-4o")
    run = replay(conversation, _Reorder(), meter, GPT4O, mode="per-call", cache="openai")
    assert [c.tokens_with for c in run.calls] == [c.tokens_without for c in run.calls]  # the same counts…
    # …but at call 2 the first result is back in its own order (per-call edits a fresh copy) while call 1
    # wrote it reordered: the cache stops before it, where "without" reads on through it
    assert run.calls[2].cached_with < run.calls[2].cached_without
    assert run.calls[2].cached_with >= 1024


@settings(max_examples=100)
@given(st.one_of(*REQUESTS.values()), st.sampled_from(["gpt-4o", "gpt-5", "claude-sonnet-4-5"]),
       st.sampled_from([name for name in POLICIES if name != "as-it-ran"]), st.sampled_from(["stored", "per-call"]))
def test_incremental_counts_equal_counting_each_request_whole(body, model, name, mode):
    """Each side counts only what changed since its last request; every call's figure is the
    whole request's count, thinking and reasoning included (billed only in their own turn)."""
    conversation = formats.read(body)
    meter = Meter(model)
    run = replay(conversation, make(name, **FIRING.get(name, {})), meter, PRICES.get(model), mode=mode)
    sent = [meter.count(result.conversation).total
            for _, result in applied(conversation, make(name, **FIRING.get(name, {})), meter, mode)]
    for call in run.calls:
        assert call.tokens_without == meter.count(conversation.with_items(conversation.items[:call.position])).total
    assert [call.tokens_with for call in run.calls] == sent


def test_reasoning_sent_back_is_billed_at_each_call_of_its_own_turn():
    """Responses bills reasoning only after the last user message. Counted once over the whole run,
    the first turn's reasoning was billed 0 at that turn's own calls (a later user message ends its
    turn), so a Codex run's calls came out a thousand tokens short, for any model's meter."""
    turn = [{"type": "reasoning", "id": "rs", "summary": [], "encrypted_content": "e" * 8000},
            {"type": "function_call", "call_id": "c", "name": "read", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c", "output": "alpha"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}]
    conversation = formats.read({"model": "gpt-5", "input": [
        {"role": "user", "content": "Read a."}, *turn, {"role": "user", "content": "Now b."}, *turn]}, "responses")
    meter = Meter("gpt-5")
    for mode in ("stored", "per-call"):
        run = replay(conversation, make("none"), meter, PRICES.get("gpt-5"), mode=mode)
        sent = [meter.count(conversation.with_items(conversation.items[:call.position])).total for call in run.calls]
        assert [call.tokens_without for call in run.calls] == [call.tokens_with for call in run.calls] == sent
        assert sent[1] > sent[0] + 1000  # the first turn's reasoning, billed at its second call


def test_until_stops_at_a_call_and_final_is_its_request_as_sent():
    conversation = reads(5)
    meter = Meter("gpt-4o")
    whole = replay(conversation, MaskingPolicy(1), meter, GPT4O)
    for k in range(len(whole.calls)):
        part = replay(conversation, MaskingPolicy(1), meter, GPT4O, until=k + 1)
        assert part.calls == whole.calls[:k + 1]
        assert meter.count(part.final).total == whole.calls[k].tokens_with


@given(st.one_of(*REQUESTS.values()), st.sampled_from(["gpt-4o", "claude-sonnet-4-5"]), st.integers(0, 400),
       st.integers(0, 2), st.booleans(), st.sampled_from(["stored", "per-call"]))
def test_a_pass_from_the_frontier_sends_what_a_pass_over_the_whole_request_sends(body, model, threshold, keep,
                                                                                 summarize, mode):
    """The rules policy walks a request that extends the last one only from its frontier on
    (``policies.frontier``); every call must come out exactly as walking each request whole."""
    conversation = formats.read(body)
    whole = RulesPolicy(threshold=threshold, keep_recent=keep, summarize=summarize)
    object.__setattr__(whole, "_extended", lambda *args: None)  # the pass over the whole request, every time
    runs = [replay(conversation, policy, Meter(model), PRICES.get(model), mode=mode)
            for policy in (RulesPolicy(threshold=threshold, keep_recent=keep, summarize=summarize), whole)]
    assert runs[0].calls == runs[1].calls and runs[0].final == runs[1].final
    assert (runs[0].tokens_lost, runs[0].tokens_retrievable) == (runs[1].tokens_lost, runs[1].tokens_retrievable)


class _WholeSpan(OfflineSummarizer):
    """Reads every span whole, as a fresh summarizer: the pass a carried reading must equal."""

    def summarize(self, plan):
        return OfflineSummarizer().summarize(plan)


def _reasoned_steps(first: int, steps: int) -> list[dict]:
    """Responses steps: the model's reasoning (encrypted, billed in its turn only), a call, its output."""
    return [item for n in range(first, first + steps) for item in (
        {"type": "reasoning", "id": f"rs{n}", "summary": [], "encrypted_content": "e" * 3000},
        {"type": "function_call", "call_id": f"c{n}", "name": "read", "arguments": json.dumps({"path": f"a{n}"})},
        {"type": "function_call_output", "call_id": f"c{n}", "output": "line\n" * 200})]


# a user message among the kept steps: the reasoning right after a summary is out of the bill, which a count of
# the summary's neighbours alone does not see
REASONED_RUN = {"model": "gpt-5", "input": [{"role": "user", "content": "Go."}, *_reasoned_steps(0, 6),
                                            {"role": "user", "content": "More."}, *_reasoned_steps(6, 3)]}


@settings(max_examples=80)
@given(st.one_of(LONG_RUNS, *REQUESTS.values()), st.sampled_from(["gpt-4o", "claude-sonnet-4-5"]),
       st.sampled_from(["hybrid", "summarize", "rules"]), st.integers(0, 600), st.integers(0, 3), st.integers(0, 2),
       st.sampled_from(["stored", "per-call"]))
@example(REASONED_RUN, "gpt-4o", "rules", 0, 2, 0, "per-call")
@example(REASONED_RUN, "gpt-4o", "summarize", 500, 3, 0, "per-call")
def test_summarizing_carried_from_the_last_call_sends_what_summarizing_each_request_whole_sends(
        body, model, name, limit, keep, window, mode):
    """Hybrid, summarize and the rules (summarizing after them, their default) carry the cut, the
    counts and the offline summary from the last call (``summarize.history.Carry``); every call
    must come out exactly as summarizing each request whole (the rules: walking it whole too)."""
    conversation = formats.read(body)
    options = {"limit": limit, "keep_steps": keep, "window": window, "threshold": limit // 2}
    # (carry and summarizer are the policy's own fields, not options a person sets: built directly)
    factory = POLICIES[name]
    options = {key: value for key, value in options.items() if key in {f.name for f in dataclasses.fields(factory)}}
    runs = [replay(conversation, factory(**options, **whole), Meter(model), PRICES.get(model), mode=mode)
            for whole in ({}, {"carry": None, "summarizer": _WholeSpan()})]
    assert runs[0].calls == runs[1].calls and runs[0].final == runs[1].final
    assert (runs[0].tokens_lost, runs[0].tokens_retrievable) == (runs[1].tokens_lost, runs[1].tokens_retrievable)


def _read_file_run(calls: int) -> dict:
    """An agent reading a 20-line module per call: once over the limit, every call summarizes."""
    messages: list[dict] = [{"role": "user", "content": "Read the modules."}]
    for n in range(calls):
        messages += [{"role": "assistant", "content": None, "tool_calls": [{"id": f"call_{n}", "type": "function",
                      "function": {"name": "read_file", "arguments": json.dumps({"path": f"src/mod_{n}.py"})}}]},
                     {"role": "tool", "tool_call_id": f"call_{n}",
                      "content": "\n".join(f"value_{n}_{k} = compute({n}, {k})" for k in range(20))}]
    return {"model": "gpt-4o", "messages": [*messages, {"role": "assistant", "content": "Done."}]}


@pytest.mark.parametrize("name", ["rules", "hybrid", "summarize"])
def test_a_summary_at_every_call_carried_is_each_request_summarized_whole(name):
    """The case the property above meets only now and then: past the limit, every call of a per-call
    replay summarizes, and the carried count of the summarized request (its summary and neighbours
    counted, the rest as it was) must give the figures the whole count gives."""
    conversation = formats.read(_read_file_run(40))
    factory = POLICIES[name]
    options = {key: value for key, value in {"limit": 1_500, "threshold": 1_000, "keep_steps": 2}.items()
               if key in {f.name for f in dataclasses.fields(factory)}}
    runs = [replay(conversation, factory(**options, **whole), Meter("gpt-4o"), PRICES.get("gpt-4o"), mode="per-call")
            for whole in ({}, {"carry": None, "summarizer": _WholeSpan()})]
    assert sum(1 for call in runs[0].calls if call.fired and "summariz" in call.fired) >= 10
    assert runs[0].calls == runs[1].calls
    assert (runs[0].tokens_lost, runs[0].tokens_retrievable) == (runs[1].tokens_lost, runs[1].tokens_retrievable)


@pytest.mark.parametrize("name", ["rules", "hybrid", "summarize"])
def test_a_summary_at_every_call_compares_only_a_bounded_tail_of_the_last_request(name, monkeypatch):
    """The carry's cut and counts compare a request with the last one only after the items its
    policy says are the last one's very objects (``Carry.follows``: the rules' frontier, hybrid's
    first output masked, summarize's request grown from the last): comparing the rest too was a
    pass in C over the whole request at every call, which grew with the run."""
    from playground.meter import carried
    from playground.summarize import cut

    compared: list[int] = []
    for module in (carried, cut):
        def spy(old, new, at_least=0, shared=module.shared):
            compared.append(min(len(old), len(new)) - min(at_least, len(old), len(new)))
            return shared(old, new, at_least)
        monkeypatch.setattr(module, "shared", spy)
    factory = POLICIES[name]
    options = {key: value for key, value in {"limit": 1_500, "threshold": 1_000, "keep_steps": 2}.items()
               if key in {f.name for f in dataclasses.fields(factory)}}
    most = []
    for calls in (40, 80):
        compared.clear()
        run = replay(formats.read(_read_file_run(calls)), factory(**options), Meter("gpt-4o"), PRICES.get("gpt-4o"),
                     mode="per-call")
        assert all(call.fired and "summariz" in call.fired for call in run.calls[-10:])
        most.append(max(compared[-calls:]))
    assert most[0] == most[1] < 40  # the same tail at twice the run's length


@pytest.mark.parametrize("mode", ["per-call", "stored"])
@pytest.mark.parametrize("policy", [NonePolicy(), RulesPolicy(threshold=10**9), MaskingPolicy(window=3),
                                    POLICIES["clear-tool-uses"](trigger=0, keep=3),
                                    PrunePolicy(protect_tokens=300, minimum=0)],
                         ids=["none", "rules-below-its-threshold", "masking", "clear-tool-uses", "prune"])
def test_the_replays_own_reading_compares_only_a_bounded_tail_of_the_last_request(policy, mode, monkeypatch):
    """The replay's sent side and its hidden-use tracker compare each request with the last one only
    after what they know both hold: per call, the items both results kept of the run (``kept``), what
    the policy sent again of its last request (``follows``: masking, clearing and pruning, an older
    output masked, cleared or pruned since) and
    the run as it was up to the last call's start. Comparing from the first item was a pass in C
    over the whole request at every call, which made a replay that changes nothing grow faster than
    its run."""
    from playground import conversation as module
    from playground.run import hidden

    compared: list[int] = []  # the items each comparison passed over as the same (a first difference costs little)
    for owner in (module, hidden):
        def spy(old, new, at_least=0, shared=owner.shared):
            same = shared(old, new, at_least)
            compared.append(same - min(at_least, len(old), len(new)))
            return same
        monkeypatch.setattr(owner, "shared", spy)
    most = []
    for calls in (40, 80):
        compared.clear()
        replay(formats.read(_read_file_run(calls)), policy, Meter("gpt-4o"), PRICES.get("gpt-4o"), mode=mode)
        most.append(max(compared[-calls:]))
    assert most[0] == most[1] < 40  # the same tail at twice the run's length


def test_a_reused_call_id_pairs_in_a_pass_from_the_frontier_as_in_the_whole_pass():
    """Three calls share one id and their results come later, then a fourth call reuses it. The
    first result answers the third call (the latest before it), not the fourth: a pass from the
    frontier that paired it with the id's latest call walked it without its call and wrote
    "File content from unknown" where the whole pass keeps it (found by the property above in CI)."""
    def call(name: str, arguments: str) -> ToolCall:
        return ToolCall(call_id="call_a", name=name, arguments=arguments)

    def result(content: str) -> ToolResult:
        return ToolResult(call_id="call_a", name="read_file", content=content)

    read = '{"path": "a.py"}'
    items = (call("search_web", '{"query": ""}'), call("read_file", read), call("read_file", read),
             result("a\na\na\na\na.aa"), result(""), result(""), call("read_file", read), result(""),
             Message(role="assistant", content=""))
    conversation = Conversation(items=items, format="chat")
    whole = RulesPolicy(threshold=0, summarize=False)
    object.__setattr__(whole, "_extended", lambda *args: None)
    runs = [replay(conversation, policy, Meter("gpt-4o"), GPT4O)
            for policy in (RulesPolicy(threshold=0, summarize=False), whole)]
    assert runs[0].calls == runs[1].calls and runs[0].final == runs[1].final
    assert runs[0].final.items[3].content == "a\na\na\na\na.aa"


def test_replay_walks_only_what_is_new_on_a_long_run(monkeypatch):
    """A run of read_file calls over its threshold at every call: the compaction passes decide each
    item a bounded number of times, not once per call (which made replay quadratic)."""
    from playground.compaction import walker

    items = [Message(role="user", content="Read the modules.")]
    for n in range(300):
        items += [ToolCall(call_id=f"c{n}", name="read_file", arguments=f'{{"path": "m{n}.py"}}'),
                  ToolResult(call_id=f"c{n}", name="read_file", content=f"line {n}\n" * 40)]
    conversation = Conversation(items=(*items, Message(role="assistant", content="Done.")), format="chat")
    walked: list[int] = []
    real = walker._candidates
    monkeypatch.setattr(walker, "_candidates",
                        lambda ctx, rules, p, item, items: walked.append(p) or real(ctx, rules, p, item, items))
    run = replay(conversation, RulesPolicy(threshold=2_000, summarize=False), Meter("gpt-4o"), GPT4O)
    assert sum(call.fired is not None for call in run.calls) > 250, "over the threshold at nearly every call"
    assert len(walked) < 10 * len(conversation.items), f"{len(walked):,} visits for {len(conversation.items)} items"


# Over their thresholds from the first few calls on (hybrid: masking at every call, and from the
# tenth call or so on a summary of all the older history at nearly every call, as summarize does)
LONG_RUN = {"rules": lambda: make("rules", threshold=2_000, summarize=False),
            # the rules' default: summarizing too, once the references alone no longer keep the request under 1,000
            "rules, summarizing": lambda: make("rules", threshold=1_000, keep_steps=2),
            "masking": lambda: make("masking", window=3),
            "clear-tool-uses": lambda: make("clear-tool-uses", trigger=2_000, keep=3),
            "hybrid": lambda: make("hybrid", window=3, limit=1_000, keep_steps=2),
            "summarize": lambda: make("summarize", limit=1_500, keep_steps=2),
            # the agents' summarize-and-drop, condensing at every call from the tenth or so on
            "condense": lambda: CondensePolicy(trigger=2_000, keep_last=4),
            # Roo Code's (90% of 11,325 less 8,192: 2,000) and opencode's (54,000 less 32,000 less 20,000: 2,000,
            # its tail a quarter of that, at least 2,000 tokens)
            "roo-code-condense": lambda: make("roo-code-condense", context_window=11_325),
            "opencode-summary": lambda: make("opencode-summary", context_window=54_000)}


def _python_calls(conversation: Conversation, name: str, mode: str) -> int:
    """The Python function calls a replay makes: its work, counted exactly (a clock would be noisy)."""
    policy, meter = LONG_RUN[name](), Meter("gpt-4o")
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        calls += event == "call"

    sys.setprofile(count)
    try:
        replay(conversation, policy, meter, GPT4O, mode=mode)
    finally:
        sys.setprofile(None)
    return calls


@pytest.mark.parametrize("mode", ["stored", "per-call"])
@pytest.mark.parametrize("name", list(LONG_RUN))
def test_each_call_of_a_long_run_costs_the_same_python_work_to_replay(name, mode):
    """A run of file reads over the threshold at nearly every call: calls 100–150 cost no more
    Python work than calls 50–100 (a work of n·n would cost 5/3 as much), as walking every
    request whole did (hybrid masked and counted the whole history at each call, clear-tool-uses
    per call looked at every result of every request, rules per call summed every edit of the
    run; hybrid, summarize, the rules summarizing after their pass and the agents' condensing per
    call cut, counted and summarized the whole older history again at each call). Increments, not
    a ratio of totals: the first calls, under the threshold or before the offline summary holds its
    most lines, are cheaper, and would count against a run twice as long. Work in C (joining,
    encoding) is not counted here: the benchmark times it."""
    work = [_python_calls(reads(calls), name, mode) for calls in (50, 100, 150)]
    assert work[2] - work[1] <= 1.1 * (work[1] - work[0]), f"{work} Python calls for 50, 100 and 150 calls"


@given(st.one_of(*REQUESTS.values()), st.integers(0, 4), st.booleans(), st.sampled_from(["stored", "per-call"]))
def test_masking_a_request_that_extends_the_last_sends_what_masking_it_whole_sends(body, window, over_items, mode):
    """Masking masks only the outputs that crossed the window since the last request
    (``MaskingPolicy.last``); every call must come out as masking each request whole."""
    conversation = formats.read(body)
    whole = MaskingPolicy(window=window, over_items=over_items)
    object.__setattr__(whole, "last", SimpleNamespace(extend=lambda *args: None, whole=whole.last.whole, kept=0,
                                                    same=0))
    runs = [replay(conversation, policy, Meter("gpt-4o"), GPT4O, mode=mode)
            for policy in (MaskingPolicy(window=window, over_items=over_items), whole)]
    assert runs[0].calls == runs[1].calls and runs[0].final == runs[1].final
    assert (runs[0].tokens_lost, runs[0].tokens_retrievable) == (runs[1].tokens_lost, runs[1].tokens_retrievable)


@given(st.one_of(*REQUESTS.values(), LONG_RUNS), st.integers(0, 4), st.integers(0, 600), st.integers(0, 3),
       st.sampled_from(["gpt-4o", "claude-sonnet-4-5"]), st.sampled_from(["stored", "per-call"]))
def test_hybrid_from_the_last_request_sends_what_hybrid_over_the_whole_request_sends(body, window, limit, keep,
                                                                                    model, mode):
    """Hybrid masks only what crossed the window since the last request, totals a request from
    the last one's count, and reads each result once for its summaries; every call must come out
    as masking, counting and summarizing each request whole."""
    from playground.policies import HybridPolicy

    conversation = formats.read(body)
    whole = HybridPolicy(window=window, limit=limit, keep_steps=keep)
    masked_whole = SimpleNamespace(extend=lambda *args: None, whole=whole.masking.last.whole, kept=0, before=(),
                                   same=0)
    object.__setattr__(whole.masking, "last", masked_whole)
    object.__setattr__(whole, "totals", SimpleNamespace(total=lambda request, meter, *_: meter.count(request).total,
                                                        remember=lambda *args: None))
    object.__setattr__(whole, "carry", None)
    object.__setattr__(whole, "summarizer", _WholeSpan())
    runs = [replay(conversation, policy, Meter(model), PRICES.get(model), mode=mode)
            for policy in (HybridPolicy(window=window, limit=limit, keep_steps=keep), whole)]
    assert runs[0].calls == runs[1].calls and runs[0].final == runs[1].final
    assert (runs[0].tokens_lost, runs[0].tokens_retrievable) == (runs[1].tokens_lost, runs[1].tokens_retrievable)


@given(st.one_of(*REQUESTS.values(), LONG_RUNS), st.integers(0, 300), st.integers(0, 3), st.integers(0, 50),
       st.booleans(), st.sampled_from([None, 1, 2]), st.sampled_from(["stored", "per-call"]))
def test_clearing_a_request_that_extends_the_last_cleared_sends_what_clearing_it_whole_sends(
        body, trigger, keep, at_least, inputs, tool_uses, mode):
    """Clear-tool-uses clears only the results that left the newest ``keep`` since the last
    request (``ClearToolUsesPolicy.last``); every call must come out as clearing each request whole."""
    from playground.policies.clear_tool_uses import ClearToolUsesPolicy

    conversation = formats.read(body)
    options = {"trigger": trigger, "keep": keep, "clear_at_least": at_least, "clear_tool_inputs": inputs,
               "trigger_tool_uses": tool_uses}
    whole = ClearToolUsesPolicy(**options)
    whole.last.base = lambda items, grew=None: None  # every request is cleared whole
    runs = [replay(conversation, policy, Meter("gpt-4o"), GPT4O, mode=mode)
            for policy in (ClearToolUsesPolicy(**options), whole)]
    assert runs[0].calls == runs[1].calls and runs[0].final == runs[1].final
    assert runs[0].tokens_lost == runs[1].tokens_lost


@pytest.mark.parametrize("mode", ["stored", "per-call"])
def test_results_cleared_already_do_not_count_toward_the_tool_use_trigger(mode):
    """Past one tool use, keeping none: in stored mode the results cleared at call 2 are no longer
    waiting, so call 3, with one new result, does not clear; per-call every request holds all of
    them again. (Random runs rarely reach this case; clearing only what is new must get it right.)"""
    from playground.policies.clear_tool_uses import ClearToolUsesPolicy

    conversation = reads(4)
    whole = ClearToolUsesPolicy(keep=0, trigger_tool_uses=1)
    whole.last.base = lambda items, grew=None: None
    runs = [replay(conversation, policy, Meter("gpt-4o"), GPT4O, mode=mode)
            for policy in (ClearToolUsesPolicy(keep=0, trigger_tool_uses=1), whole)]
    assert runs[0].calls == runs[1].calls
    assert [call.fired for call in runs[0].calls] == [None, None, "clearing", None if mode == "stored" else "clearing",
                                                      "clearing"]


def _check_kept_and_grew(conversation, model, name, threshold, window, mode) -> int:
    """Replay compares two calls' requests only after the items a policy says it sent as given
    (``PolicyResult.kept``), and a policy takes a request to extend the last one when
    ``Conversation.grew`` says so: both must be true of every call, or a replay would count and
    cache what was not sent. Returns how many calls kept some items but not all."""
    seen = []
    policy = make(name, threshold=threshold, trigger=threshold, limit=max(threshold, 1), window=window)
    apply = policy.apply

    def recording(request, meter):
        result = apply(request, meter)
        seen.append((request, result))
        return result

    object.__setattr__(policy, "apply", recording)
    replay(conversation, policy, Meter(model), PRICES.get(model), mode=mode)
    for request, result in seen:
        base, items = request.grew
        assert items is request.items and items[:len(base)] == base
        assert result.conversation.items[:result.kept] == request.items[:result.kept]
        assert 0 <= result.kept <= len(request.items)
    return sum(0 < result.kept < len(request.items) for request, result in seen)


@settings(max_examples=60)
@given(st.one_of(LONG_RUNS, *REQUESTS.values()), st.sampled_from(["gpt-4o", "claude-sonnet-4-5"]),
       st.sampled_from(sorted(OURS)), st.integers(0, 600), st.integers(0, 3), st.sampled_from(["stored", "per-call"]))
def test_what_a_policy_says_it_kept_and_what_a_request_says_it_grew_from_are_so(body, model, name, threshold, window,
                                                                                mode):
    _check_kept_and_grew(formats.read(body), model, name, threshold, window, mode)


@pytest.mark.parametrize("name", ["rules", "masking", "clear-tool-uses", "hybrid"])
def test_a_long_run_stored_keeps_what_came_before_each_calls_edits(name):
    assert _check_kept_and_grew(reads(40), "gpt-4o", name, 2_000, 2, "stored") >= 5


@pytest.mark.parametrize("until", [None, 3])
def test_replay_tells_its_progress_call_by_call_and_changes_nothing(until):
    """A page shows "call k of n" from what replay tells it after each call: every call once, in
    order, out of the calls it replays (``until`` included), and the replay is the same as untold."""
    conversation, told = reads(6), []
    run = replay(conversation, MaskingPolicy(2), Meter("gpt-4o"), GPT4O, until=until,
                 progress=lambda done, total: told.append((done, total)))
    calls = len(run.calls)
    assert told == [(done, calls) for done in range(1, calls + 1)] and calls == (until or 7)
    assert run.calls == replay(conversation, MaskingPolicy(2), Meter("gpt-4o"), GPT4O, until=until).calls


def test_compare_tells_its_progress_over_every_policy():
    conversation, told = reads(4), []
    policies = [make(name, threshold=2_000, trigger=2_000) for name in ("none", "rules", "masking")]
    rows = compare(conversation, policies, Meter("gpt-4o"), GPT4O, progress=lambda *pair: told.append(pair))
    calls = len(call_starts(conversation.items))
    assert told == [(done, 3 * calls) for done in range(1, 3 * calls + 1)]
    assert rows == compare(conversation, [make(name, threshold=2_000, trigger=2_000)
                                          for name in ("none", "rules", "masking")], Meter("gpt-4o"), GPT4O)
