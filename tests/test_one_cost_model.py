"""One cost model: the page's cost line and replay bill the same request, sent after the same
previous request, the same input cost — on every preset, real trace and real session log.

The page shows a conversation as the next request, with the previous call's prompt (everything
before its last assistant turn) in the provider's cache. Replay's call k sends everything before
the k-th assistant turn, after call k-1. So the page on ``items[:start_k]`` and replay's call k
are the same request after the same previous one; with the threshold at that request's size,
the policy fires there first, so the compacted side's previous request is the unchanged one too.
Replay's call cost also carries the reply (output tokens): only its input part is compared.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from playground import formats
from playground.compaction import Settings
from playground.conversation import Conversation
from playground.engine import Engine
from playground.policies import RulesPolicy
from playground.present import view
from playground.rules.ruleset import Rules
from playground.run.prices import read_prices
from playground.run.replay import call_starts, replay
from playground.summarize.history import SummarySettings
from playground.summarize.offline import OfflineSummarizer
from playground.tune.rulesets import RULESETS
from playground.workbench.presets import list_presets

from .conftest import SHARED, shared

LOGS = ["traces/sweagent_marshmallow-1867_function_calling.openai.json",
        "traces/invariant_explorer_webarena_trace2.openai.json", "traces/miniswe_pr_astropy-12907.openai.json",
        "sessions/claude-code-session-196820da.jsonl", "sessions/claude-code-session-624a4a58.jsonl"]


def _cases() -> list:
    presets = [pytest.param(preset.key, id=preset.key) for preset in list_presets()]
    return presets + [pytest.param(name, id=Path(name).stem) for name in LOGS]


def _load(key: str) -> tuple[Conversation, Rules, str]:
    """The conversation, the rules the page would show it with, and its model."""
    preset = next((p for p in list_presets() if p.key == key), None)
    if preset is not None:
        return preset.conversation, preset.rules, preset.model
    conversation = formats.read(formats.parse_text(shared(SHARED / key).read_bytes()))
    return conversation, RULESETS["suggested"].make(conversation), conversation.model or "gpt-4o"


def _page_and_replay(conversation: Conversation, rules: Rules, model: str, k: int):
    starts = call_starts(conversation.items)
    request = conversation.with_items(conversation.items[:starts[k]])
    engine = Engine()
    threshold = engine.count(request, model).total
    price = read_prices().get(model)
    done = engine.optimize(request, rules, Settings(threshold=threshold), SummarySettings(limit=threshold),
                           OfflineSummarizer(), model)
    page = view.summary(request, done.compaction, price, done.summarization).costs
    policy = RulesPolicy(rules=rules, threshold=threshold)
    # the same request on both sides: the log's items up to call k (a log the agent cut has another baseline)
    run = replay(conversation, policy, engine.meter(model), price, until=k + 1, baseline="full-history")
    return page, run, done


@pytest.mark.parametrize("no_rules", [False, True], ids=["compacted", "summarized"])
@pytest.mark.parametrize("key", _cases())
def test_the_page_and_replay_bill_the_same_request_the_same_input_cost(key, no_rules):
    conversation, rules, model = _load(key)
    if no_rules:  # nothing to compact: the request goes on to summarization
        rules = RULESETS["none"].make(conversation)
    calls = len(call_starts(conversation.items))
    assert calls >= 2
    page, run, done = _page_and_replay(conversation, rules, model, calls - 1)
    call = run.calls[-1]
    assert not any(earlier.fired for earlier in run.calls[:-1])  # the previous request is the unchanged one
    assert page.before.tokens == call.tokens_without
    assert (page.before.use.read, page.before.use.written) == (call.cached_without, call.written_without)
    assert page.before.cost == pytest.approx(call.input_cost_without, rel=1e-12)
    sent = page.after or page.before  # nothing changed: the page's after is the request as it is
    assert sent.tokens == call.tokens_with == done.tokens_final
    assert (sent.use.read, sent.use.written) == (call.cached_with, call.written_with)
    assert sent.cost == pytest.approx(call.input_cost_with, rel=1e-12)
    assert call.cost_with > call.input_cost_with  # replay's call cost also bills the reply: kept apart


def test_the_agreement_is_checked_where_the_cache_rules_matter():
    """The cases above include compacted and summarized requests, both providers' caches, reads
    and writes."""
    seen = set()
    for key in [p.key for p in list_presets()]:
        conversation, rules, model = _load(key)
        for chosen in (rules, RULESETS["none"].make(conversation)):
            page, _, done = _page_and_replay(conversation, chosen, model, len(call_starts(conversation.items)) - 1)
            seen |= {page.cache, done.compaction.report.stage}
            if done.summarization is not None:
                seen.add(done.summarization.report.status)
            if page.before.use.written and page.before.use.read:
                seen.add("read and written")
    assert {"openai", "anthropic", "compacted", "summarized", "read and written"} <= seen
