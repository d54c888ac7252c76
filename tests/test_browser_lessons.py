"""Lesson 1 in a real browser, with real key presses, and the step-through's controls and the token
view drawn. Screenshots go to artifacts/ (ignored by git)."""

from __future__ import annotations

import pytest

from . import test_browser as e2e
from .test_browser import idle, metric, shot

# The browser tests' own fixtures: one app server and one Chromium per module, a fresh page per test.
app_url, browser, page = e2e.app_url, e2e.browser, e2e.page

pytestmark = pytest.mark.browser


def _lessons_tab(page) -> None:
    page.get_by_role("tab", name="Lessons").click()
    idle(page)


def _badge(page, text: str):
    """The stage badge above the meters (its icon's name is part of its text)."""
    return page.locator(".stMarkdownBadge").filter(has_text=text)


def test_lesson_one_with_the_keyboard(page):
    from playwright.sync_api import expect

    _lessons_tab(page)
    page.get_by_role("button", name="Start this lesson").click()
    idle(page)
    expect(_badge(page, "Below the threshold: nothing changes")).to_be_visible()
    next_button = page.get_by_role("button", name="Next lesson")
    expect(next_button).to_be_disabled()
    shot(page, "lesson-1-start")
    before = metric(page, "Before")
    field = page.get_by_role("spinbutton", name="Exact threshold")
    field.click()
    page.keyboard.press("ControlOrMeta+A")
    page.keyboard.type("6000")
    page.keyboard.press("Enter")
    idle(page)
    expect(page.get_by_text("Done: Move the threshold below")).to_be_visible()
    expect(_badge(page, "Compacted: now below the threshold")).to_be_visible()
    assert metric(page, "After") < before
    expect(next_button).to_be_enabled()
    shot(page, "lesson-1-done")
    next_button.click()
    idle(page)
    expect(page.get_by_role("heading", name="The two tables: ToolCall rules and ToolResult rules")).to_be_visible()
    expect(page.get_by_text("1 of 7 lessons done: 1")).to_be_visible()
    shot(page, "lesson-2-start")


def test_step_through_in_the_browser(page):
    from playwright.sync_api import expect

    page.get_by_role("tab", name="Step-through").click()
    idle(page)
    page.get_by_role("button", name="Next edit").click()
    idle(page)
    expect(page.get_by_text("replaced by").first).to_be_visible()
    shot(page, "step-through")


def test_token_view_in_the_browser(page):
    from playwright.sync_api import expect

    page.get_by_text("Tokens of one item, as the model sees them").click()
    idle(page)
    shown = page.locator(".tokens").first
    expect(shown).to_be_visible()
    item_0 = shown.inner_text()
    field = page.get_by_role("spinbutton", name="Item")
    field.click()
    page.keyboard.press("ControlOrMeta+A")
    page.keyboard.type("3")
    page.keyboard.press("Enter")
    expect(shown).not_to_have_text(item_0)  # the rerun drew item 3 (idle alone can see the run before it)
    idle(page)
    expect(page.locator(".tokens .tok").first).to_be_visible()
    page.locator(".tokens").first.scroll_into_view_if_needed()
    shot(page, "token-view")
