"""Rule tables: safe templates, the book's defaults, JSON and Python in and out."""

from __future__ import annotations

import pytest

from playground.errors import InputError
from playground.rules.ruleset import (
    Template,
    book_rules,
    field_values,
    load_rules,
    rules_to_json,
    rules_to_python,
    tool_matches,
)


@pytest.mark.parametrize("text", ["{x.__class__}", "{x[0]}", "{x!r}", "{x:>10}", "{}", "{0}", "{a.b.c}",
                                  "{x!s:^5}", "open {", "close }", "{ x }"])
def test_unsafe_or_malformed_templates_are_rejected(text):
    with pytest.raises(InputError) as caught:
        Template.parse(text, "tool_results[0].template")
    assert str(caught.value).startswith("tool_results[0].template")


def test_escaped_braces_are_literal():
    assert Template.parse("{{not a field}} {path}").render({"path": "a.py"}) == "{not a field} a.py"


def test_fields_come_from_arguments_with_the_books_path_fallback():
    template = Template.parse("File content from {file_path}. Re-read if needed.")
    values, missing = field_values(template, {"path": "src/a.py"}, {})
    assert template.render(values) == "File content from src/a.py. Re-read if needed."
    assert missing == ()


def test_missing_fields_render_unknown_and_are_reported():
    template = Template.parse("Query: {query} ({lines} lines)")
    values, missing = field_values(template, {}, {"lines": 3})
    assert template.render(values) == "Query: unknown (3 lines)"
    assert missing == ("query",)


def test_builtins_win_over_arguments_of_the_same_name():
    values, _ = field_values(Template.parse("{tool} {lines}"), {"tool": "x", "lines": "1-9"}, {"tool": "read_file",
                                                                                                "lines": 40})
    assert values == {"tool": "read_file", "lines": "40"}


def test_non_string_arguments_render_as_json():
    values, _ = field_values(Template.parse("{paths}"), {"paths": ["a", "b"]}, {})
    assert values["paths"] == '["a", "b"]'


def test_matches_recognises_its_own_rendering_with_any_numbers():
    template = Template.parse("Read {path} ({lines} lines, {tokens} tokens)")
    values = {"path": "a.py", "lines": "1", "tokens": "9"}
    assert template.matches("Read a.py (120 lines, 3000 tokens)", values)
    assert not template.matches("Read b.py (120 lines, 3000 tokens)", values)
    assert not template.matches("Read a.py (many lines, 3000 tokens)", values)


def test_book_rules_are_the_listing():
    rules = book_rules()
    assert [(r.tool, r.argument, r.replacement.text) for r in rules.tool_calls] == [
        ("create_file", "content", "[Content saved to file]")]
    assert [r.tool for r in rules.tool_results] == ["read_file", "search_web", "tavily_search"]


def test_json_round_trip_and_other_keys_allowed():
    data = {"name": "mine", "tool_calls": [{"tool": "write", "argument": "text", "replacement": "[saved]",
                                            "enabled": False, "min_tokens": 50}],
            "tool_results": [{"tool": "grep", "template": "grep {pattern}: {lines} lines", "note": "ok"}]}
    rules = load_rules(data)
    assert rules.tool_calls[0].enabled is False and rules.tool_calls[0].min_tokens == 50
    assert load_rules(rules_to_json(rules)) == rules


def test_a_rules_file_replaces_the_defaults_as_a_whole():
    rules = load_rules({"tool_results": [{"tool": "grep", "template": "done"}]})
    assert rules.tool_calls == ()
    assert rules.for_result("read_file") is None


def test_the_books_dict_shape_is_accepted():
    rules = load_rules({"tool_calls": {"create_file": "[saved]"}, "tool_results": {"read_file": "Read {path}"}})
    assert rules.tool_calls[0].argument == "content"
    assert rules.for_result("read_file").template.text == "Read {path}"


@pytest.mark.parametrize(("data", "where"), [
    ({}, None),
    ({"tool_calls": "x"}, "tool_calls"),
    ({"tool_results": [{"template": "t"}]}, "tool_results[0].tool"),
    ({"tool_results": [{"tool": "a", "template": "{x.y}"}]}, "tool_results[0].template"),
    ({"tool_results": [{"tool": "a", "template": "t", "min_tokens": -1}]}, "tool_results[0].min_tokens"),
    ({"tool_results": [{"tool": "a", "template": "t", "enabled": "yes"}]}, "tool_results[0].enabled"),
    ({"tool_results": [{"tool": "a", "template": "t"}, {"tool": "a", "template": "u"}]}, "tool_results[1]"),
    ({"tool_calls": [{"tool": "a", "replacement": 3}]}, "tool_calls[0].replacement"),
    ({"tool_results": [{"tool": "a", "template": ""}]}, "tool_results[0].template"),
    ({"tool_results": [{"tool": "a", "template": "  \n"}]}, "tool_results[0].template"),
    ({"tool_results": [{"tool": "a"}]}, "tool_results[0].template"),
    ({"tool_calls": [{"tool": "a", "replacement": ""}]}, "tool_calls[0].replacement"),
    ({"tool_calls": {"a": " "}}, "tool_calls[0].replacement"),
    ({"tool_results": [{"tool": "Read|Grep", "template": "t"}, {"tool": "Read|Grep", "template": "u"}]},
     "tool_results[1]"),
    ({"tool_calls": [{"tool": "*", "argument": "x", "replacement": "t"}, {"tool": "*", "argument": "x",
                                                                          "replacement": "u"}]}, "tool_calls[1]"),
    ({"tool_results": [], "value_limit": -1}, "value_limit"),
    ({"tool_results": [], "value_limit": "80"}, "value_limit"),
])
def test_invalid_rules_name_the_row_and_field(data, where):
    with pytest.raises(InputError) as caught:
        load_rules(data)
    assert caught.value.where == where


def test_python_export_is_the_books_two_dicts():
    rules = load_rules({"tool_calls": [{"tool": "create_file", "argument": "content", "replacement": "[saved]"},
                                       {"tool": "write_note", "argument": "body", "replacement": "[noted]"},
                                       {"tool": "off", "argument": "x", "replacement": "y", "enabled": False}],
                        "tool_results": [{"tool": "read_file", "template": "File content from {file_path}."}]})
    namespace: dict = {}
    exec(rules_to_python(rules), namespace)
    assert namespace["TOOLCALL_COMPACTION_RULES"] == {"create_file": "[saved]", "write_note": {"body": "[noted]"}}
    assert namespace["TOOLRESULT_COMPACTION_RULES"] == {"read_file": "File content from {file_path}."}


@pytest.mark.parametrize(("pattern", "name", "expected"), [
    ("Read", "Read", True), ("Read", "read", False), ("Read", "ReadFile", False),
    ("mcp__github__*", "mcp__github__create_issue", True), ("mcp__github__*", "mcp__gitlab__x", False),
    ("Read|read_file", "read_file", True), ("Read | read_file", "Read", True), ("Read|read_file", "Grep", False),
    ("*", "anything", True), ("read_?ile", "read_file", True), ("[Bb]ash", "bash", True), ("[Bb]ash", "zsh", False),
    ("Grep|mcp__*", "mcp__x__y", True),
])
def test_tool_patterns(pattern, name, expected):
    assert tool_matches(pattern, name) is expected


def test_the_first_matching_row_wins():
    rules = load_rules({"tool_calls": [{"tool": "Write", "argument": "content", "replacement": "[a]"},
                                       {"tool": "*", "argument": "content", "replacement": "[b]"},
                                       {"tool": "*", "argument": "old_string", "replacement": "[c]"}],
                        "tool_results": [{"tool": "Read|read_file", "template": "Read {file_path}."},
                                         {"tool": "*", "template": "Other."},
                                         {"tool": "Grep", "template": "never"}]})
    assert rules.for_result("read_file").template.text == "Read {file_path}."
    assert rules.for_result("Grep").template.text == "Other."
    assert [r.replacement.text for r in rules.for_call("Write")] == ["[a]", "[c]"]  # one per argument
    assert [r.replacement.text for r in rules.for_call("Edit")] == ["[b]", "[c]"]
    assert load_rules({"tool_results": [{"tool": "Read", "template": "x"}]}).for_result("Bash") is None


def test_value_cap_cuts_argument_values_with_an_ellipsis():
    template = Template.parse("{command} {chars}")
    values, _ = field_values(template, {"command": "x" * 100}, {"chars": 10**12}, limit=10)
    assert values == {"command": "x" * 9 + "…", "chars": str(10**12)}
    assert field_values(template, {"command": "x" * 100}, {"chars": 1}, limit=0)[0]["command"] == "x" * 100
    assert field_values(template, {"command": "x" * 10}, {"chars": 1}, limit=10)[0]["command"] == "x" * 10


def test_error_patterns_and_value_limit_round_trip():
    rules = load_rules({"tool_results": [{"tool": "*", "template": "t"}], "value_limit": 40,
                        "error_patterns": [{"name": "mine", "pattern": "^BOOM"}]})
    data = rules_to_json(rules)
    assert data["value_limit"] == 40 and data["error_patterns"] == [{"name": "mine", "pattern": "^BOOM"}]
    assert load_rules(data) == rules
    assert load_rules({"tool_results": []}).value_limit == 80
