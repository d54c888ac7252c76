"""What the headline says about cost: the request before compaction priced as a running agent
pays for it (the previous call's prompt in the provider's cache, by the cost model replay uses),
against the compacted one. Figures are worked out by hand from small made-up counts."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playground import formats
from playground.compaction import Settings, compact
from playground.conversation import role_of
from playground.engine import optimize
from playground.meter.tokens import TokenCount
from playground.present import render, view
from playground.rules.ruleset import book_rules
from playground.run.prices import load_prices, read_prices
from playground.summarize.history import SummarySettings

from .test_compaction import book_scenario, call

PRICES = load_prices({"as_of": "test", "models": {
    "o": {"provider": "openai", "context_window": 1_000_000, "input": 2.0, "cached_input": 0.5, "cache_write": 2.0,
          "output": 8.0, "min_cacheable": 1024, "source": "made up"},
    "a": {"provider": "anthropic", "context_window": 1_000_000, "input": 2.0, "cached_input": 0.2,
          "cache_write": 2.5, "output": 8.0, "min_cacheable": 1024, "source": "made up"}}})
OPENAI, ANTHROPIC = PRICES.get("o"), PRICES.get("a")


def counts(*items: int, tools: int = 0, instructions: int = 0) -> TokenCount:
    return TokenCount(total=sum(items) + tools + instructions + 3, items=items, tools=tools,
                      instructions=instructions, priming=3, model="m", encoding="o200k_base", accounting="test",
                      exact=True, notes=())


def test_the_previous_call_sent_everything_before_the_last_assistant_turn():
    # 12 items: system, user, then three turns of (assistant wrapper, call, result), and the final assistant text
    book = formats.read(book_scenario())
    assert [role_of(item) for item in book.items[8:]] == ["assistant", "assistant", "tool", "assistant"]
    # the last assistant turn is the final text (item 11): the previous call sent items 0-10
    assert view.previous_call_end(book) == 11
    waiting = book.with_items(book.items[:11])  # ends on a result: its turn (wrapper + call) starts at item 8
    assert view.previous_call_end(waiting) == 8
    count = counts(*range(10, 130, 10), tools=5, instructions=7)
    assert view.request_prompt(book.items, count, 8).offsets[-1] == 5 + 7 + sum(range(10, 90, 10))


def test_a_first_call_has_nothing_cached():
    only_user = formats.read([{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}])
    assert view.previous_call_end(only_user) is None
    done = view.costs(only_user, counts(2000, 20, tools=5), None, OPENAI)
    assert done.previous_prefix == 0 and done.before.use.read == 0
    assert done.before.cost == pytest.approx(2028 * 2.0 / 1e6)


def _request(shared: int, total: int):
    """A request whose first item (``shared`` tokens) the previous call sent: a user message, then
    the assistant turn that call answered with (its message and tool call) and the tool's result."""
    conversation = formats.read([{"role": "user", "content": "u"},
                                 {"role": "assistant", "content": None,
                                  "tool_calls": [{"id": "c", "type": "function",
                                                  "function": {"name": "f", "arguments": "{}"}}]},
                                 {"role": "tool", "tool_call_id": "c", "content": "r"}])
    return conversation, counts(shared, 0, 0, total - shared - 3)  # counts() adds 3 tokens of priming


@pytest.mark.parametrize(("price", "shared", "total", "expected"), [
    # the issue's cases: gpt-4o-like, 1,100 sharing 1,000 — below OpenAI's 1,024 minimum, nothing is read
    (OPENAI, 1_000, 1_100, 1_100 * 2.0 / 1e6),
    # 3,000 shared → read 2,944 (23 × 128), the rest at the input price
    (OPENAI, 3_000, 5_000, (2_944 * 0.5 + 2_056 * 2.0) / 1e6),
    # Anthropic: 3,000 read at the cached price, the new items written at the cache-write price (the
    # breakpoint is on the last message: the 3 tokens of reply priming after it are plain input)
    (ANTHROPIC, 3_000, 5_000, (3_000 * 0.2 + 1_997 * 2.5 + 3 * 2.0) / 1e6),
])
def test_the_cost_line_applies_the_providers_cache_rules(price, shared, total, expected):
    conversation, count = _request(shared, total)
    done = view.costs(conversation, count, None, price)
    assert done.cache == price.provider and done.previous_prefix == shared
    assert done.before.cost == pytest.approx(expected)
    assert done.before_uncached == pytest.approx(total * 2.0 / 1e6)


def test_the_compacted_request_reads_only_what_it_still_shares():
    conversation, count = _request(3_000, 10_000)
    result = conversation.items[3]
    edited = conversation.with_items((*conversation.items[:3], replace(result, content="ref")))
    done = view.costs(conversation, count, (edited.items, counts(3_000, 0, 0, 997)), OPENAI)
    assert done.after is not None and done.after.tokens == 4_000
    assert done.after.use.read == 2_944  # the shared 3,000 in 128-token steps
    assert done.after.cost == pytest.approx((2_944 * 0.5 + 1_056 * 2.0) / 1e6)
    changed_first = edited.with_items((replace(edited.items[0], content="v"), *edited.items[1:]))
    early = view.costs(conversation, count, (changed_first.items, counts(3_000, 0, 0, 997)), ANTHROPIC)
    assert early.after.use.read == 0 and early.after.use.written == 4_000 - 3  # the whole prompt rewritten


def test_summary_carries_the_costs_of_the_request_as_shown():
    book = formats.read(book_scenario())
    gpt4o = read_prices().get("gpt-4o")
    result = compact(book, book_rules(), Settings(threshold=0))
    numbers = view.summary(book, result, gpt4o)
    report = result.report
    assert numbers.costs.previous_prefix == report.before.prefix(view.previous_call_end(book)) > 0
    assert numbers.costs.after.tokens == report.tokens_after
    untouched = view.summary(book, compact(book, book_rules(), Settings(threshold=10**9)), gpt4o)
    assert untouched.costs.after is None


# User text in messages is shown literally (item 6): render.literal escapes Markdown and Streamlit's marks.

_UNESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")  # CommonMark: a backslash before ASCII punctuation shows it


def shown(markdown: str) -> str:
    """What a CommonMark renderer shows for escaped text: escapes dropped, hard breaks as newlines."""
    return _UNESCAPE.sub(r"\1", markdown.replace("  \n", "\n")).replace(":" + render.WORD_JOINER, ":")


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\r" + render.WORD_JOINER))
       .filter(lambda t: " \n" not in t))
def test_literal_text_reads_back_as_typed_with_no_mark_left_active(text):
    escaped = render.literal(text)
    assert shown(escaped) == text
    unescaped_marks = re.findall(r"(?<!\\)(?:\\\\)*[*_`\[\]<>$~|&]", _UNESCAPE.sub("", escaped))
    assert unescaped_marks == [] and not re.search(r":[\w/]", escaped)  # no emoji or icon shortcode either


def test_literal_escapes_what_the_issue_saw():
    assert render.literal("{query.__class__}") == r"{query.\_\_class\_\_}"
    joiner = render.WORD_JOINER
    assert render.literal(":red[x] :material/bug: $x$") == f":{joiner}red\\[x\\] :{joiner}material/bug: \\$x\\$"
    assert render.literal("- a\n1. b\n# c") == "\\- a  \n1\\. b  \n\\# c"
    assert render.literal("pasted JSON: line 2, column 19") == "pasted JSON: line 2, column 19"  # prose stays plain


# A page builds only its own rows (item 20): each must be the row the whole table has at that place.

def _summarized_book():
    body = book_scenario()
    body["messages"] += [{"role": "assistant", "content": "More.", "tool_calls": [call("c9", "read_file", path="x")]},
                         {"role": "tool", "tool_call_id": "c9", "content": "x"},
                         {"role": "assistant", "content": "Done."}]
    conversation = formats.read(body)
    return conversation, optimize(conversation, book_rules(), Settings(threshold=0),
                                  SummarySettings(limit=0, keep_steps=1), model="gpt-4o")


def test_rows_of_a_page_are_the_tables_rows_with_and_without_a_summary():
    book = formats.read(book_scenario())
    cases = [(book, compact(book, book_rules(), Settings(threshold=0)), None)]
    conversation, done = _summarized_book()
    assert done.summarization.report.status == "summarized"
    cases.append((conversation, done.compaction, done.summarization))
    for original, result, summarization in cases:
        table = view.rows(original, result, summarization)
        assert sum(row.cache_boundary for row in table) == 1
        for position in range(len(table)):
            assert view.rows(original, result, summarization, [position]) == [table[position]]
        assert view.largest_tokens(result, summarization) == max(max(r.tokens_before, r.tokens_after) for r in table)
        marked = view.row_positions(result, summarization, changed_only=True)
        assert marked == [row.position for row in table if row.changed or row.skipped or row.summarized]
        assert view.row_positions(result, summarization, changed_only=False) == list(range(len(table)))
