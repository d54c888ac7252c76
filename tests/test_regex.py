"""Patterns from people run in linear time: a catastrophic error pattern or template is harmless,
what RE2 refuses is reported where it was written, and the shipped patterns behave as before."""

from __future__ import annotations

import fnmatch
import json
import pickle
import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from playground.errors import InputError
from playground.rules import errorpatterns
from playground.rules.errorpatterns import DEFAULT_ERROR_PATTERNS, ErrorPattern, load_error_patterns
from playground.rules.regex import RegexError, compile_pattern
from playground.rules.ruleset import Template, load_rules, tool_matches

# Each takes minutes with Python's backtracking re on the texts below (the first ran for over 60 s on
# 41 characters before it was killed); with RE2 each search is linear in the text.
CATASTROPHIC = ["(a+)+$", "(a|aa)+$", "^(a|a?)+$", "(.*a){12}$", "^(\\w+\\s?)*$", "(?:a+a+)+b"]


@pytest.mark.parametrize("pattern", CATASTROPHIC)
def test_a_catastrophic_pattern_searches_a_long_result_at_once(pattern):
    """One search over the whole head (its mismatch inside the 2,000 characters searched): had this
    used re, the test would never end."""
    patterns = load_error_patterns([{"name": "evil", "pattern": pattern}])
    assert patterns.match("a" * 1_900 + "!") is None
    assert patterns.match("a" * 30 + "b" if pattern.endswith("b") else "a" * 30) == "evil"


def test_a_catastrophic_template_is_checked_at_once():
    """"Already compacted?" turns a template into a pattern: {chars}{chars}… is \\d+\\d+…, which
    backtracks without end on a long number followed by a mismatch."""
    template = Template.parse("{chars}" * 8 + "x")
    assert not template.matches("1" * 5_000 + "yx", {})
    assert template.matches("12345678x", {})


@pytest.mark.parametrize(("pattern", "refused"), [
    ("(a)\\1", "invalid escape sequence: \\1"),
    ("fatal: (?<=^fatal: )", "invalid perl operator: (?<"),
    ("(?=x)", "invalid perl operator: (?="),
    ("(unclosed", "missing ): (unclosed"),
    ("a{2000}", "invalid repetition size"),
    ("x" * 2_001, "longer than the limit of 2,000 characters"),
])
def test_patterns_re2_refuses_are_reported_at_their_place(pattern, refused):
    with pytest.raises(InputError) as caught:
        load_rules({"tool_results": [], "error_patterns": [{"name": "ok", "pattern": "x"},
                                                          {"name": "mine", "pattern": pattern}]})
    assert caught.value.where == "error_patterns[1].pattern"
    assert refused in caught.value.message


def test_a_pattern_only_re2_understands_is_refused_for_the_exported_compactor():
    """The exported compactor runs the patterns with Python's re, so both must accept them."""
    compile_pattern("\\pL")  # RE2 knows Unicode classes
    with pytest.raises(InputError, match="invalid regular expression for Python's re"):
        ErrorPattern.of("letters", "\\pL")


def test_the_refusal_is_the_rows_message_on_the_rules_tab():
    from playground.conversation import Conversation
    from playground.rules.editor import error_patterns_from_rows

    rows = [{"name": "fine", "pattern": "^BOOM"}, {"name": "evil", "pattern": "(a)\\1"}]
    patterns, checks = error_patterns_from_rows(rows, Conversation(items=()), DEFAULT_ERROR_PATTERNS)
    row = next(check for check in checks if check.level == "error")
    assert row.row == 1 and "RE2" in row.message and "backreferences" in row.message
    assert patterns == DEFAULT_ERROR_PATTERNS  # while a row is wrong, the last good patterns apply


def test_the_shipped_patterns_use_nothing_re2_refuses_and_keep_their_examples():
    data = json.loads(errorpatterns.DATA_FILE.read_text(encoding="utf-8"))
    for row in data:
        assert DEFAULT_ERROR_PATTERNS.match(row["example"]) == row["name"], row["name"]
        assert compile_pattern(row["pattern"], multiline=True)


@pytest.mark.parametrize(("text", "name"), [
    ("ok\nfatal: not a git repository", "fatal"),
    ("no fatal: here", None),
    ("<returncode>0</returncode>", None),
    ('{"returncode": 2}', "non-zero returncode"),
    ("done\nProcess exited with code 1", "non-zero exit code"),
    ("Exit code: 0", None),
    ("the file mentions an error: nothing failed", None),
])
def test_shipped_patterns_match_where_they_did_with_look_behind(text, name):
    """The look-behinds the shipped list used for re's speed became plain line starts; what they
    recognise is unchanged."""
    assert DEFAULT_ERROR_PATTERNS.match(text) == name


@given(st.text(alphabet="ab\n:!1 ", max_size=60), st.sampled_from(["^a", "a$", "(?:a|b)+:", "\\d+\\s", "^b+$"]))
def test_re2_finds_what_re_finds_for_simple_patterns(text, pattern):
    assert compile_pattern(pattern, multiline=True).search(text) == bool(re.search(pattern, text, re.MULTILINE))


def test_a_lone_surrogate_is_searched_not_a_crash():
    assert DEFAULT_ERROR_PATTERNS.match("fatal: bad \ud800 byte") == "fatal"
    assert Template.parse("File {path}.").matches("File a\udc80b.", {"path": "a\udc80b"})


@pytest.mark.parametrize("glob", ["*a" * 500 + "*b", "*?" * 300 + "b", "[a-z]*" * 200 + "!"])
def test_hostile_tool_globs_stay_linear(glob):
    """Globs go through fnmatch, whose translation turns every * into an atomic group (no
    backtracking): a thousand stars against a 100,000-character tool name is decided at once."""
    fnmatch._compile_pattern.cache_clear()
    assert not tool_matches(glob, "a" * 100_000)


def test_compile_pattern_says_why_in_re2s_words():
    with pytest.raises(RegexError, match="missing \\)"):
        compile_pattern("(")


_SHIPPED_EXAMPLES = [row["example"] for row in json.loads(errorpatterns.DATA_FILE.read_text(encoding="utf-8"))]


@given(st.lists(st.tuples(st.sampled_from(_SHIPPED_EXAMPLES), st.integers(0, 30)), max_size=4),
       st.permutations(range(len(DEFAULT_ERROR_PATTERNS.patterns))))
@example(_TWO := [(_SHIPPED_EXAMPLES[3], 0), (_SHIPPED_EXAMPLES[4], 0)], list(range(len(_SHIPPED_EXAMPLES))))
@example(_TWO, list(range(len(_SHIPPED_EXAMPLES)))[::-1])  # two patterns found: the list's order picks
def test_the_patterns_searched_together_name_the_first_that_one_by_one_finds(pieces, order):
    """One pass of RE2's set for all the patterns names the pattern the list's order says, on
    texts made of the shipped examples cut anywhere, whichever the order of the list."""
    text = "\n".join(example[cut:] for example, cut in pieces)
    patterns = errorpatterns.ErrorPatterns(tuple(DEFAULT_ERROR_PATTERNS.patterns[k] for k in order))
    head = text[:errorpatterns.HEAD]
    one_by_one = (p.name for p in patterns.patterns if compile_pattern(p.pattern, multiline=True).search(head))
    assert patterns.match(text) == next(one_by_one, None)


def test_error_patterns_searched_once_still_travel_to_a_worker_process():
    """A corpus run sends its rules to worker processes: the compiled set is not pickled, made again there."""
    DEFAULT_ERROR_PATTERNS.match("bash: foo: command not found")  # the set is compiled now
    again = pickle.loads(pickle.dumps(DEFAULT_ERROR_PATTERNS))
    assert again == DEFAULT_ERROR_PATTERNS and again.match("Traceback (most recent call last):") == "python traceback"
    assert errorpatterns.ErrorPatterns().match("Traceback (most recent call last):") is None
