"""The lessons: every shipped lesson is unfinished when it starts and finished by its *Show me*
(run on the engine, the same way the page runs it), and a broken lesson file says where."""

from __future__ import annotations

from dataclasses import replace

import pytest

from playground.compaction import Settings, compact
from playground.conversation import ToolCall
from playground.engine import optimize
from playground.errors import InputError
from playground.meter.tokens import Meter
from playground.policies import RulesPolicy
from playground.run.prices import read_prices
from playground.run.replay import replay
from playground.summarize.history import SummarySettings
from playground.tune.checked import checked_rules
from playground.workbench import lessons
from playground.workbench.presets import list_presets

PRESETS = {preset.key: preset for preset in list_presets()}
LESSONS = lessons.load_lessons(presets=set(PRESETS))
GOOD = """+++
title = "A lesson"
preset = "book-report"
task = "Do the thing."
done = { stage = "compacted" }
show_me = { threshold = 5000 }
+++
Some *Markdown*.
"""


def observed(lesson: lessons.Lesson, changes: dict) -> tuple[lessons.LessonSetup, dict]:
    """The lesson's preset with its start (and ``changes``) applied, run as the page runs it
    (summarization at the threshold when on), and what the lesson reads from the result."""
    preset = PRESETS[lesson.preset]
    meter = Meter(preset.model)
    setup = lessons.LessonSetup(preset.rules, Settings(preset.threshold, preset.keep_recent), True)
    for step in (lesson.start, changes):
        setup = lessons.applied(step, setup, preset.conversation, preset.rules, meter)
    summary = SummarySettings(limit=setup.settings.threshold) if setup.summarize else None
    result = optimize(preset.conversation, setup.rules, setup.settings, summary, meter=meter)
    state = lessons.observe(preset.conversation, setup.rules, setup.settings, result)
    if lessons.needs_run(lesson):
        state |= lessons.observe_run(preset.conversation, setup.rules, setup.settings, summary, meter)
    return setup, state


def test_there_are_five_to_eight_lessons_each_on_a_preset():
    assert 5 <= len(LESSONS) <= 8
    assert [lesson.key[:2] for lesson in LESSONS] == [f"{n:02d}" for n in range(1, len(LESSONS) + 1)]


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.key)
def test_a_lesson_starts_unfinished_and_show_me_finishes_it(lesson: lessons.Lesson):
    _, before = observed(lesson, {})
    assert not lessons.check(lesson, before), "the task is already done when the lesson starts"
    _, after = observed(lesson, lessons.show_me(lesson))
    assert lessons.check(lesson, after), after


def test_lesson_figures_match_the_engine():
    """The numbers the lesson texts quote."""
    threshold = next(lesson for lesson in LESSONS if lesson.key == "01-threshold")
    setup, state = observed(threshold, {})
    assert state["stage"] == "below_threshold" and 7_200 <= state["tokens_before"] < setup.settings.threshold
    cache = next(lesson for lesson in LESSONS if lesson.key == "05-prompt-cache")
    assert observed(cache, {})[1]["cached_prefix_percent"] <= 6
    assert 20 <= observed(cache, lessons.show_me(cache))[1]["cached_prefix_percent"] <= 30
    summary = next(lesson for lesson in LESSONS if lesson.key == "06-summary-last-resort")
    assert observed(summary, {})[1]["summarized"]


def _report(key: str, changes: dict | None = None):
    lesson = next(lesson for lesson in LESSONS if lesson.key == key)
    setup, _ = observed(lesson, changes or {})
    preset = PRESETS[lesson.preset]
    return compact(preset.conversation, setup.rules, setup.settings, preset.model).report, preset.conversation


def test_lesson_texts_name_what_the_engine_does():
    tables, conversation = _report("02-two-tables", {"rules": "book"})
    calls = [item for item in conversation.items if isinstance(item, ToolCall) and item.name == "create_file"]
    edited = [edit for edit in tables.edits if edit.tool == "create_file"]
    assert len(calls) == 7 and len(edited) == 6
    assert [skip.reason for skip in tables.skipped if skip.tool == "create_file"] == ["keep_recent"]
    waiting, _ = _report("03-not-read-yet")
    assert [(skip.tool, skip.reason) for skip in waiting.skipped if skip.reason == "not_processed"] == [
        ("run_tests", "not_processed")]
    cache, conversation = _report("05-prompt-cache")
    assert cache.first_changed_position == 2 and conversation.items[2].name == "tavily_search"
    later, _ = _report("05-prompt-cache", {"rules": lessons.show_me(next(
        lesson for lesson in LESSONS if lesson.key == "05-prompt-cache"))["rules"]})
    assert conversation.items[later.first_changed_position].name == "fetch_page"
    errors, conversation = _report("04-errors-stay", {"compact_errors": True})
    assert [edit.tool for edit in errors.edits if conversation.items[edit.position].is_error] == ["search_docs"]
    assert [(skip.tool, skip.reason) for skip in errors.skipped if conversation.items[skip.position].is_error] == [
        ("read_file", "not_smaller")]


def test_check_reads_every_kind_of_condition():
    lesson = lessons.parse_lesson(GOOD, "x")
    state = {"stage": "compacted", "skipped_for": frozenset({"keep_recent"}), "keep_recent": 2}
    assert lessons.check(lesson, state)
    assert not lessons.check(lesson, {**state, "stage": "still_over"})
    at_least = replace(lesson, done={"keep_recent_at_least": 3, "skipped_for": "keep_recent"})
    assert not lessons.check(at_least, state)
    assert lessons.check(at_least, {**state, "keep_recent": 3})
    assert not lessons.check(at_least, {**state, "keep_recent": 3, "skipped_for": frozenset()})


def test_show_me_is_the_lessons_changes_and_does_not_share_them():
    lesson = lessons.parse_lesson(GOOD, "x")
    changes = lessons.show_me(lesson)
    changes["threshold"] = 1
    assert lessons.show_me(lesson) == {"threshold": 5000}


@pytest.mark.parametrize(("text", "where", "words"), [
    ("no front matter\n", "x, line 1", "TOML front matter"),
    (GOOD.replace('title = "A lesson"', "title = "), "x", "not valid TOML"),
    (GOOD.replace('stage = "compacted"', 'stage = "done"'), "x.done.stage", "unknown stage"),
    (GOOD.replace("stage =", "stages ="), "x.done.stages", "unknown condition"),
    (GOOD.replace("{ threshold = 5000 }", "{ threshold = -1 }"), "x.show_me.threshold", "0 or more"),
    (GOOD.replace("{ threshold = 5000 }", '{ threshold = "high" }'), "x.show_me.threshold", "expected int"),
    (GOOD.replace("{ threshold = 5000 }", '{ rules = "mine" }'), "x.show_me.rules", "unknown rule set"),
    (GOOD.replace("{ threshold = 5000 }", '{ rules = { tool_results = [{ template = "t" }] } }'),
     "x.show_me.rules, tool_results[0].tool", "missing tool name"),
    (GOOD.replace('task = "Do the thing."\n', ""), "x.task", "non-empty string"),
    (GOOD.replace("+++\nSome *Markdown*.\n", "+++\n"), "x", "no text"),
    (GOOD.replace('preset = "book-report"', 'preset = "book-report"\ncolour = 1'), "x.colour", "unknown key"),
    (GOOD.replace('preset = "book-report"', 'preset = "book-report"\nrequires = ["suggest"]'), "x.requires",
     "unknown key"),  # every feature is in the app: a lesson no longer declares any
])
def test_a_broken_lesson_says_where(text: str, where: str, words: str):
    with pytest.raises(InputError) as caught:
        lessons.parse_lesson(text, "x")
    assert caught.value.where == where and words in str(caught.value)


def test_a_lesson_on_an_unknown_preset_is_refused(tmp_path):
    (tmp_path / "01-a.md").write_text(GOOD.replace("book-report", "nope"), encoding="utf-8")
    (tmp_path / "README.md").write_text("not a lesson", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        lessons.load_lessons(tmp_path, presets={"book-report"})
    assert caught.value.where == "01-a.md: preset"
    assert [lesson.key for lesson in lessons.load_lessons(tmp_path)] == ["01-a"]


def test_the_suggested_rule_set_is_the_suggesters_for_the_lessons_conversation():
    preset = PRESETS["large-200k"]
    meter = Meter(preset.model)
    made = lessons.resolve_rules("suggested", preset.conversation, preset.rules, meter)
    assert made == checked_rules(preset.conversation, meter).rules() and made.tool_results


def test_the_cheapest_is_not_best_lesson_names_what_the_engine_finds():
    """Lesson 8's story: the aggressive rules are cheaper, and at call 36 the agent names
    ``feed.xml``, which only the replaced ``ls`` output showed; the suggested rules keep it."""
    lesson = next(lesson for lesson in LESSONS if lesson.key == "08-cheapest-is-not-best")
    preset = PRESETS[lesson.preset]
    meter, price = Meter(preset.model), read_prices().get(preset.model)
    runs = {}
    for name in ("aggressive", "suggested"):
        setup, _ = observed(lesson, {"rules": name})
        runs[name] = replay(preset.conversation, RulesPolicy(setup.rules, setup.settings.threshold,
                                                             setup.settings.keep_recent), meter, price)
    assert runs["aggressive"].totals.cost_with < runs["suggested"].totals.cost_with
    used = {(use.call, use.span) for use in runs["aggressive"].hidden_used}
    assert (36, "feed.xml") in used and (36, "feed.xml") not in {
        (use.call, use.span) for use in runs["suggested"].hidden_used}
