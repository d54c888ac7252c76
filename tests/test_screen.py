"""The engine behind the screen: breakdown, rule tables and their live checks, rule presets,
the item builder, the aligned rows and meters, costs and exports."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from playground import formats
from playground.compaction import Settings, compact
from playground.engine import optimize
from playground.errors import InputError
from playground.export import exports
from playground.meter import tokens
from playground.present import render, view
from playground.rules import breakdown
from playground.rules import editor as ruletable
from playground.rules.ruleset import book_rules, load_rules
from playground.run.prices import read_prices
from playground.summarize.history import SummarySettings
from playground.tune import rulesets
from playground.workbench import builder
from playground.workbench.builder import Fields

from .test_compaction import book_scenario, call


@pytest.fixture
def book():
    return formats.read(book_scenario())


def test_tool_shares_add_up_and_flag_tools_without_rules(book):
    count = tokens.count(book)
    shares = breakdown.tool_shares(book, count, book_rules())
    assert sum(row.tokens for row in shares) == sum(count.items)
    assert shares == sorted(shares, key=lambda row: -row.tokens)
    by_key = {(row.tool, row.kind): row for row in shares}
    assert by_key[("read_file", "result")].has_rule and not by_key[("read_file", "call")].has_rule
    assert by_key[("search_web", "result")].largest == count.items[by_key[("search_web", "result")].largest_position]


def test_a_large_tool_without_a_rule_is_worth_one():
    body = book_scenario()
    body["messages"][5]["content"] = "row;" * 3000  # search results, now huge
    conversation = formats.read(body)
    shares = breakdown.tool_shares(conversation, tokens.count(conversation), load_rules({"tool_results": []}))
    assert next((r.tool, r.kind) for r in shares if breakdown.worth_a_rule(r)) == ("search_web", "result")


def test_suggested_rules_name_the_tools_own_arguments(book):
    result_rule = breakdown.suggest_rule(book, "search_web", "result")
    assert result_rule["template"] == "Output of search_web(query={query}) omitted ({lines} lines). Call it again " \
                                      "if needed."
    call_rule = breakdown.suggest_rule(book, "create_file", "call")
    assert call_rule["argument"] == "content" and "{file_path}" in call_rule["replacement"]
    load_rules({"tool_results": [result_rule], "tool_calls": [call_rule]})  # both are valid rules


def test_rule_tables_check_every_row_live(book):
    calls = [{"enabled": True, "tool": "create_file", "argument": "content", "replacement": "[saved]",
              "min_tokens": 0},
             {"enabled": True, "tool": "create_file", "argument": "content", "replacement": "[dup]", "min_tokens": 0},
             {"enabled": None, "tool": None, "argument": None, "replacement": None, "min_tokens": float("nan")}]
    results = [{"enabled": True, "tool": "read_file", "template": "Read {file_path} at {revision}", "min_tokens": 0},
               {"enabled": True, "tool": "grep", "template": "done", "min_tokens": 0},
               {"enabled": True, "tool": "search_web", "template": "{query!r}", "min_tokens": 0},
               {"enabled": False, "tool": "tavily_search", "template": "x", "min_tokens": 2.0}]
    rules, checks = ruletable.rules_from_tables(calls, results, book)
    levels = [(c.table, c.row, c.level) for c in checks]
    assert levels == [("tool_calls", 0, "ok"), ("tool_calls", 1, "error"), ("tool_calls", 2, "empty"),
                      ("tool_results", 0, "warning"), ("tool_results", 1, "warning"), ("tool_results", 2, "error"),
                      ("tool_results", 3, "warning")]
    messages = [c.message for c in checks]
    assert messages[0] == "matches create_file (1 call)"
    assert messages[3] == "matches read_file (1 result); {revision} is missing in 1 of 1 call (shown as 'unknown')"
    assert messages[4] == "matches no tool's results in this conversation"
    assert messages[5].startswith("template: unsafe template field")
    assert [r.tool for r in rules.tool_results] == ["read_file", "grep", "tavily_search"]
    assert rules.tool_results[2].min_tokens == 2 and not rules.tool_results[2].enabled


def test_rule_tables_say_which_tools_each_pattern_row_decides(book):
    results = [{"tool": "read_file", "template": "Read {file_path}."},
               {"tool": "search_*|read_file", "template": "Searched."},
               {"tool": "*", "template": "Output of {tool} omitted."},
               {"tool": "read_*", "template": "never used"}]
    rules, checks = ruletable.rules_from_tables([], results, book)
    assert [(c.level, c.message, c.tools) for c in checks] == [
        ("ok", "matches read_file (1 result)", ("read_file",)),
        ("ok", "matches search_web (1 result)", ("search_web",)),
        ("ok", "matches create_file (1 result)", ("create_file",)),
        ("warning", "every tool it matches (read_file) goes to an earlier row", ())]
    result = compact(book, rules, Settings(threshold=0))
    assert {e.tool: e.rule.split(" → ")[0] for e in result.report.edits} == {
        "read_file": "tool_results: read_file", "search_web": "tool_results: search_*|read_file"}


def test_a_new_call_row_is_not_an_error_before_anything_is_typed(book):
    """The table fills a new call row with the book's argument and replacement: until a tool name or
    another text is typed it is an empty row, not a red "missing tool name"."""
    new = {"enabled": True, "tool": None, "argument": ruletable.NEW_CALL_ARGUMENT,
           "replacement": ruletable.NEW_CALL_REPLACEMENT, "min_tokens": 0}
    _, checks = ruletable.rules_from_tables([new], [], book)
    assert [c.level for c in checks] == ["empty"]
    typed = dict(new, replacement="[Saved]")  # something typed, still no tool: that is the error it was
    _, checks = ruletable.rules_from_tables([typed], [], book)
    assert [(c.level, c.message) for c in checks] == [("error", "tool: missing tool name: row ignored")]


@pytest.mark.parametrize(("row", "message"), [
    ({"tool": "read_file", "template": ""}, "template: missing template: a rule must produce non-empty text: row "
                                             "ignored"),
    ({"tool": "read_file", "template": "   "}, "template: missing template: a rule must produce non-empty text: "
                                                "row ignored"),
    ({"tool": None, "template": "Read."}, "tool: missing tool name: row ignored"),
    ({"tool": "read_file", "template": None, "enabled": True}, "template: missing template: a rule must produce "
                                                               "non-empty text: row ignored"),
])
def test_a_row_that_cannot_produce_text_is_an_error_on_its_row(book, row, message):
    rules, checks = ruletable.rules_from_tables([], [row], book)
    assert [(c.level, c.message) for c in checks] == [("error", message)]
    assert "None" not in checks[0].message and "matches" not in checks[0].message
    assert rules.tool_results == ()


def test_a_template_of_fields_only_is_never_a_green_row(book):
    _, [check] = ruletable.rules_from_tables([], [{"tool": "read_file", "template": "{path}"}], book)
    assert check.level == "warning" and "empty when their values are" in check.message


def test_tables_keep_the_error_patterns_and_value_cap_they_do_not_show(book):
    base = load_rules({"tool_results": [], "error_patterns": [], "value_limit": 20})
    rules, _ = ruletable.rules_from_tables([], [{"tool": "read_file", "template": "Read."}], book, base)
    assert rules.error_patterns.patterns == () and rules.value_limit == 20


def test_editor_deltas_apply_like_the_table_shows_them():
    base = [{"tool": "a"}, {"tool": "b"}, {"tool": "c"}]
    edits = {"edited_rows": {"1": {"tool": "B"}}, "deleted_rows": [0], "added_rows": [{"tool": "d"}]}
    assert ruletable.edited_rows(base, edits) == [{"tool": "B"}, {"tool": "c"}, {"tool": "d"}]
    assert base == [{"tool": "a"}, {"tool": "b"}, {"tool": "c"}]


def test_rule_tables_round_trip_rules():
    rules = book_rules()
    calls, results = ruletable.tables_from_rules(rules)
    assert ruletable.rules_from_tables(calls, results, formats.read([]))[0] == rules


def test_rule_presets_cover_the_conversations_tools(book):
    masking = rulesets.observation_masking(book)
    assert {r.tool for r in masking.tool_results} == {"create_file", "search_web", "read_file"}
    aggressive = rulesets.aggressive(book)
    assert {r.tool for r in aggressive.tool_calls} == {"create_file"}  # the only call with a large argument
    assert rulesets.RULESETS["none"].make(book).tool_results == ()
    result = compact(book, masking, Settings(threshold=0))
    assert {e.tool for e in result.report.edits} == {"search_web", "read_file"}


def test_builder_operations_keep_the_request_valid(book):
    grown = builder.insert_item(book, len(book.items), Fields("message", "user", "And one more thing."))
    assert formats.write(grown)["messages"][-1] == {"role": "user", "content": "And one more thing."}
    with pytest.raises(InputError, match="item 4 is this call's result"):
        builder.delete_item(book, 3)
    with pytest.raises(InputError, match=r"item 1\.arguments: arguments must be a JSON object"):
        builder.insert_item(book, 1, Fields("tool_call", tool="a", call_id="x", arguments="[1, 2]"))
    with pytest.raises(InputError, match="cannot mark a tool result as an error"):
        builder.replace_item(book, 4, Fields("tool_result", tool="create_file", call_id="c1", text="x",
                                             is_error=True))
    renamed = builder.replace_item(book, 3, Fields("tool_call", tool="create_file", call_id="c1-new",
                                                   arguments='{"file_path": "r.md", "content": "x"}'))
    assert renamed.items[4].call_id == "c1-new"  # its result follows the call
    moved = builder.move_item(grown, len(grown.items) - 1, -1)
    assert formats.write(moved)["messages"][-2]["content"] == "And one more thing."
    assert [c.call_id for c in builder.open_calls(book, len(book.items))] == []


def test_builder_fields_show_arguments_pretty_and_errors_in_anthropic():
    anthropic = formats.read(formats.write(formats.read(book_scenario()), "anthropic"))
    call_position = next(p for p, i in enumerate(anthropic.items) if i.__class__.__name__ == "ToolCall")
    fields = builder.fields_of(anthropic.items[call_position])
    assert json.loads(fields.arguments)["file_path"] == "report.md" and "\n" in fields.arguments
    result_position = call_position + 1
    failed = builder.replace_item(anthropic, result_position, Fields("tool_result", tool="create_file",
                                                                     call_id=fields.call_id, text="denied",
                                                                     is_error=True))
    assert failed.items[result_position].is_error


def test_rows_align_before_and_after(book):
    result = compact(book, book_rules(), Settings(threshold=0))
    rows = view.rows(book, result)
    assert len(rows) == len(book.items)
    changed = [row for row in rows if row.changed]
    assert [row.location for row in changed] == ["messages[2].tool_calls[0]", "messages[5]", "messages[7]"]
    assert changed[1].after == "Search results processed. Query: solar 2024. Re-search if needed."
    assert changed[0].cache_boundary and sum(row.cache_boundary for row in rows) == 1
    assert all(row.tokens_after < row.tokens_before for row in changed)
    positions = view.row_positions(result, None, changed_only=True)
    assert [rows[p] for p in positions] == [row for row in rows if row.changed or row.skipped]
    page, pages = view.page(positions, number=9, size=2)
    assert pages == 2 and view.rows(book, result, positions=page) == [rows[p] for p in positions[2:]]


def test_rows_show_the_span_folded_into_the_summary():
    body = book_scenario()
    body["messages"] += [{"role": "assistant", "content": "More.", "tool_calls": [call("c9", "read_file", path="x")]},
                         {"role": "tool", "tool_call_id": "c9", "content": "x"},
                         {"role": "assistant", "content": "Done."}]
    conversation = formats.read(body)
    done = optimize(conversation, book_rules(), Settings(threshold=0), SummarySettings(limit=0, keep_steps=1),
                    model="gpt-4o")
    rows = view.rows(conversation, done.compaction, done.summarization)
    folded = [row for row in rows if row.summarized]
    assert folded[0].after.startswith("[Summary of earlier conversation") and folded[0].cache_boundary
    assert all(row.after == "" and row.tokens_after == 0 for row in folded[1:])
    numbers = view.summary(conversation, done.compaction, read_prices().get("gpt-4o"), done.summarization)
    assert numbers.saved == done.compaction.report.tokens_before - done.summarization.report.tokens_after


def test_meter_scale_keeps_the_window_unless_it_dwarfs_the_rest():
    near = view.scale(before=100_000, after=40_000, threshold=80_000, window=128_000)
    assert near.window is not None and near.before < near.window
    far = view.scale(before=3_000, after=1_000, threshold=2_000, window=1_047_576)
    assert far.window is None and far.before == pytest.approx(100 / 1.05, abs=0.01)
    html = render.meters(far, 3_000, 1_000, 2_000)
    assert "off this scale" in html and "threshold 2,000" in html


def test_a_window_mark_near_the_threshold_takes_a_row_of_its_own():
    """Seen on a 1.9-million-token log: the threshold (50,000) and the window (200,000) a few percent
    apart, their labels printed over each other. The window's label drops a row when they are near."""
    near = view.scale(before=1_900_000, after=1_400, threshold=50_000, window=200_000)
    assert near.window is not None and abs(near.window - near.threshold) < render.NEAR_MARKS
    html = render.meters(near, 1_900_000, 1_400, 50_000)
    assert 'class="cp-meter cp-two"' in html and 'class="cp-mark cp-window cp-low"' in html
    apart = view.scale(before=100_000, after=40_000, threshold=20_000, window=128_000)
    assert abs(apart.window - apart.threshold) >= render.NEAR_MARKS
    html = render.meters(apart, 100_000, 40_000, 20_000)
    assert "cp-two" not in html and "cp-low" not in html and 'class="cp-mark cp-window"' in html


def test_threshold_range_has_room_and_sane_steps():
    assert view.threshold_range(325, 200) == (1_000, 10)
    top, step = view.threshold_range(1_000_000, 50_000)
    assert top >= 1_500_000 and top % step == 0 and top / step <= 400


def test_a_request_over_the_context_window_is_called_out(book):
    result = compact(book, book_rules(), Settings(threshold=0))
    small = replace(read_prices().get("gpt-4o"), model="tiny", context_window=1_000)
    numbers = view.summary(book, result, small)
    assert numbers.before > 1_000 and "larger than tiny's context window (1,000)" in numbers.window_warning
    assert view.summary(book, result, read_prices().get("gpt-4o")).window_warning is None


def test_rows_render_escaped_and_capped():
    rows = [view.Row(0, "messages[0]", "user", None, "<script>x</script>" + "a" * 10_000, "", 10, 10,
                     False, (), ("within keep_recent",), False)]
    html = render.rows_table(rows, 10)
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "more characters not shown" in html and "kept: within keep_recent" in html


def test_exports_are_what_the_importers_read(book):
    result = optimize(book, book_rules(), Settings(threshold=0), SummarySettings(limit=10**9), model="gpt-4o")
    compacted = exports.conversation(result.conversation, "conversation.compacted")
    assert compacted.name == "conversation.compacted.chat.json"
    assert formats.loads(compacted.data) == formats.read(formats.write(result.conversation))
    converted = exports.conversation(book, "c", "anthropic")
    assert formats.loads(converted.data).format == "anthropic"
    report = json.loads(exports.report(result, "c", 10**9).data)
    assert report["stage"] == "still_over" and report["summarization"]["status"] == "not_needed"
    assert load_rules(json.loads(exports.rules_json(book_rules()).data)) == book_rules()
    namespace: dict = {}
    exec(exports.rules_python(book_rules()).data, namespace)
    assert "read_file" in namespace["TOOLRESULT_COMPACTION_RULES"]


def test_the_engine_never_imports_streamlit():
    import pkgutil
    import subprocess
    import sys

    import playground

    engine = [m.name for m in pkgutil.walk_packages(playground.__path__, prefix="playground.")
              if not m.name.startswith(("playground.ui", "playground.__main__"))]
    script = "import sys\n" + "".join(f"import {name}\n" for name in engine) + "print('streamlit' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                          cwd=playground.__path__[0] + "/..")
    assert done.stdout.strip() == "False", engine
    assert len(engine) >= 20
