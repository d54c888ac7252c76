"""What the headline says about cost: the request before compaction priced as a running agent
pays for it (the previous call's prefix read from the prompt cache), against the compacted one.
Figures are worked out by hand from small made-up counts."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playground import formats, models, render, view
from playground.compaction import Settings, compact
from playground.model import role_of
from playground.pipeline import optimize
from playground.rules import book_rules
from playground.summarize import SummarySettings
from playground.tokens import TokenCount

from .test_compaction import book_scenario, call

PRICES = models.ModelInfo("m", 1_000_000, input_per_million=2.0, cached_per_million=0.5)


def counts(*items: int, tools: int = 0, instructions: int = 0) -> TokenCount:
    return TokenCount(total=sum(items) + tools + instructions + 3, items=items, tools=tools,
                      instructions=instructions, priming=3, model="m", encoding="o200k_base", accounting="test",
                      exact=True, notes=())


def test_the_previous_call_sent_everything_before_the_last_assistant_turn():
    # 12 items: system, user, then three turns of (assistant wrapper, call, result), and the final assistant text
    book = formats.read(book_scenario())
    assert [role_of(item) for item in book.items[8:]] == ["assistant", "assistant", "tool", "assistant"]
    count = counts(*range(10, 130, 10), tools=5, instructions=7)
    # the last assistant turn is the final text (item 11): the previous call sent items 0-10 and the fixed parts
    assert view.previous_call_prefix(book, count) == 5 + 7 + sum(range(10, 120, 10))
    waiting = book.with_items(book.items[:11])  # ends on a result: its turn (wrapper + call) starts at item 8
    assert view.previous_call_prefix(waiting, count) == 5 + 7 + 10 + 20 + 30 + 40 + 50 + 60 + 70 + 80


def test_a_first_call_has_nothing_cached():
    only_user = formats.read([{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}])
    assert view.previous_call_prefix(only_user, counts(10, 20, tools=5)) == 0


def test_costs_price_before_with_the_cache_and_after_with_what_it_still_shares():
    # 10,000 tokens before, 4,000 after; the previous call sent 8,000; the first edit is at token 3,000.
    done = view.costs(10_000, 4_000, unchanged_prefix=3_000, previous_prefix=8_000, model=PRICES)
    assert done.before_uncached == pytest.approx(0.020)  # 10,000 × $2/M
    assert done.before == pytest.approx(0.008)  # 2,000 × $2/M + 8,000 × $0.5/M = 0.004 + 0.004
    assert done.reused_after == 3_000
    assert done.after == pytest.approx(0.0035)  # 1,000 × $2/M + 3,000 × $0.5/M = 0.002 + 0.0015


def test_an_edit_past_the_previous_prefix_reuses_only_that_prefix():
    done = view.costs(10_000, 9_000, unchanged_prefix=9_500, previous_prefix=8_000, model=PRICES)
    assert done.reused_after == 8_000
    assert done.after == pytest.approx(0.006)  # 1,000 × $2/M + 8,000 × $0.5/M


def test_nothing_compacted_has_no_after_cost():
    done = view.costs(10_000, 10_000, unchanged_prefix=None, previous_prefix=8_000, model=PRICES)
    assert done.after is None and done.reused_after is None
    assert done.before == pytest.approx(0.008)


def test_summary_carries_the_costs_of_the_request_as_shown():
    book = formats.read(book_scenario())
    gpt4o = models.info("gpt-4o")
    result = compact(book, book_rules(), Settings(threshold=0))
    numbers = view.summary(book, result, gpt4o)
    report = result.report
    previous = view.previous_call_prefix(book, report.before)
    assert numbers.costs.previous_prefix == previous > 0
    assert numbers.costs.reused_after == min(report.cached_prefix_tokens, previous)
    assert numbers.costs.after == pytest.approx(models.request_cost(report.tokens_after, numbers.costs.reused_after,
                                                                    gpt4o))
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
