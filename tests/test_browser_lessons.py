"""Lesson 1 in a real browser, with real key presses, and the step-through's controls and the token
view drawn. Screenshots go to artifacts/ (ignored by git)."""

from __future__ import annotations

import pytest

from playground.workbench import presets

from . import test_browser as e2e
from .test_browser import idle, metric, open_tab, settings, shot

# The browser tests' own fixtures: one app server and one Chromium per module, a fresh page per test.
app_url, browser, page = e2e.app_url, e2e.browser, e2e.page

pytestmark = pytest.mark.browser


def _badge(page, text: str):
    """The stage badge above the meters (its icon's name is part of its text)."""
    return page.locator(".stMarkdownBadge").filter(has_text=text)


def test_lesson_one_with_the_keyboard(page):
    from playwright.sync_api import expect

    open_tab(page, "Lessons")
    page.get_by_role("button", name="Start this lesson").click()
    idle(page)
    expect(_badge(page, "Below the threshold: nothing changes")).to_be_visible()
    next_button = page.get_by_role("button", name="Next lesson")
    expect(next_button).to_be_disabled()
    shot(page, "lesson-1-start")
    before = metric(page, "Before")
    with settings(page) as body:
        body.get_by_role("spinbutton", name="Exact threshold").click()
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
    expect(page.get_by_text("1 of 8 lessons done: 1")).to_be_visible()
    shot(page, "lesson-2-start")


OVERLAY = "[id^=gdg-overlay-] textarea, [id^=gdg-overlay-] input"  # a data editor's cell editor, while open


def _type_into_selected_cell(page, text: str) -> None:
    """Enter opens the selected cell's editor; wait for it and for the typed text in it (not a sleep),
    and Enter commits."""
    from playwright.sync_api import expect

    page.keyboard.press("Enter")
    expect(page.locator(OVERLAY)).to_be_focused()
    page.keyboard.type(text)
    expect(page.locator(OVERLAY)).to_have_value(text)  # an Enter before the editor holds the text commits nothing
    page.keyboard.press("Enter")
    expect(page.locator(OVERLAY)).to_have_count(0)


def test_lesson_two_from_the_tables_tab_by_typing_into_the_empty_table(page):
    """The lesson stays active through the tab switch its task asks for (to the rule tables, on
    Before / after), and completes there; the empty tool-call table shows its columns and takes a row typed
    into it."""
    from playwright.sync_api import expect

    open_tab(page, "Lessons")
    page.get_by_test_id("stSelectbox").filter(has_text="Lesson").click()
    page.get_by_role("option", name="2. The two tables").click()
    idle(page)
    page.get_by_role("button", name="Start this lesson").click()
    idle(page)
    banner = page.locator(".st-key-lesson_banner")
    expect(banner.get_by_text("Lesson 2 of 8")).to_be_visible()
    before = metric(page, "After")
    page.get_by_role("tab", name="Before / after", exact=True).click()
    lesson_heading = page.get_by_role("heading", name="The two tables: ToolCall rules and ToolResult rules")
    expect(lesson_heading).to_have_count(0)  # the Lessons tab is drawn only while open: the tab's rerun is in
    idle(page)
    calls = page.locator(".st-key-rule_tables [data-testid=stDataFrame]").first
    expect(calls.locator("[role=gridcell]")).to_have_count(0)  # empty: the header row and the add row only
    calls.scroll_into_view_if_needed()
    shot(page, "lesson-2-empty-table")
    box = calls.bounding_box()
    # a row, added by the table's own last, empty row, and typed into once the page has rerun for it
    # (typing into rows during their reruns is test_rows_typed_into_as_fast_as_the_keys_go_are_all_kept)
    page.mouse.click(box["x"] + box["width"] * 0.3, box["y"] + 35 + 17)
    expect(_tool_cells(calls)).to_have_count(1)  # a row, with the new row's defaults: content → [Content saved…]
    expect(calls.get_by_test_id("glide-cell-3-0")).to_have_text("content")
    expect(calls.get_by_test_id("glide-cell-4-0")).to_have_text("[Content saved to file]")
    idle(page)
    _select_tool_cell(page, calls, 0)
    _type_into_selected_cell(page, "create_file")
    idle(page)
    expect(calls.get_by_test_id("glide-cell-2-0")).to_have_text("create_file")
    expect(page.get_by_text("row 1: matches create_file (7 calls)")).to_be_visible()
    expect(banner.get_by_text("Done: Add a ToolCall rule")).to_be_visible()  # checked here, by the tables
    assert metric(page, "After") < before
    shot(page, "lesson-2-done-by-the-tables")
    open_tab(page, "Lessons")
    expect(lesson_heading).to_be_visible()
    expect(page.get_by_role("button", name="Start this lesson")).to_have_count(0)
    expect(page.get_by_role("button", name="Next lesson")).to_be_enabled()


def test_step_through_in_the_browser(page):
    from playwright.sync_api import expect

    open_tab(page, "Step-through")
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


def _tool_cells(calls):
    """The *tool* cell of each row (the grid is a canvas; its hidden table mirrors the cells laid out, which
    in a half-width table are not all of a row's columns)."""
    return calls.locator("[data-testid^='glide-cell-2-']")


def _select_tool_cell(page, calls, row: int) -> None:
    """The *tool* cell of ``row`` selected with the keyboard from the row's first cell."""
    from playwright.sync_api import expect

    box = calls.bounding_box()
    page.mouse.click(box["x"] + box["width"] * 0.6, box["y"] + 35 * (row + 1) + 17)  # the wide replacement cell
    expect(calls.get_by_test_id(f"glide-cell-4-{row}")).to_have_attribute("aria-selected", "true")
    for column in (3, 2):  # two cells left, each move seen before the next: the tool
        page.keyboard.press("ArrowLeft")
        expect(calls.get_by_test_id(f"glide-cell-{column}-{row}")).to_have_attribute("aria-selected", "true")


def test_rows_typed_into_as_fast_as_the_keys_go_are_all_kept(page):
    """Two rows added and typed into without waiting for any rerun to finish: every edit is kept. (The cell
    editor dropped an edit whose Enter came while a typed letter's timer was still pending, as keys do
    while the page redraws for a rerun: ``playground/data/cell_editor_enter.js``.)"""
    from playwright.sync_api import expect

    calls = page.locator(".st-key-rule_tables [data-testid=stDataFrame]").first  # on the first tab
    rows = len(presets.list_presets()[0].rules.tool_calls)
    expect(_tool_cells(calls)).to_have_count(rows)  # the grid is drawn after the page settles: wait for its rows
    calls.scroll_into_view_if_needed()
    for n, tool in enumerate(("first_tool", "second_tool")):
        row = rows + n
        box = calls.bounding_box()  # again: a line above the tables may come or go with the first row
        page.mouse.click(box["x"] + box["width"] * 0.3, box["y"] + 35 * (row + 1) + 17)  # the empty last row
        expect(_tool_cells(calls)).to_have_count(row + 1)
        _select_tool_cell(page, calls, row)
        _type_into_selected_cell(page, tool)
    idle(page)
    expect(calls.get_by_test_id(f"glide-cell-2-{rows}")).to_have_text("first_tool")
    expect(calls.get_by_test_id(f"glide-cell-2-{rows + 1}")).to_have_text("second_tool")
    expect(page.get_by_text(f"row {rows + 2}:").first).to_be_visible()  # the page's check saw the second row


# The last letter and Enter in one turn of the browser's event loop, as when keys queue up behind a redraw: the
# letter's zero-delay timer in the cell editor is still pending when Enter arrives (an input event, then the keys;
# microtasks let React render the value, no timer runs in between).
LETTER_THEN_ENTER = """async (text) => {
  const box = document.querySelector('[id^=gdg-overlay-] textarea, [id^=gdg-overlay-] input');
  Object.getOwnPropertyDescriptor(Object.getPrototypeOf(box), 'value').set.call(box, text);
  box.dispatchEvent(new Event('input', {bubbles: true}));
  const rendered = async () => { for (let i = 0; i < 5; i++) await Promise.resolve(); };
  await rendered();
  box.dispatchEvent(new KeyboardEvent('keydown', {key: text.slice(-1), bubbles: true, cancelable: true}));
  await rendered();
  box.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true, cancelable: true}));
}"""


def test_an_enter_while_the_last_key_is_pending_keeps_the_edit(page):
    """What made fast typing lose edits, every time rather than now and then: without
    ``playground/data/cell_editor_enter.js`` the cell stays empty and nothing reaches the page's checks."""
    from playwright.sync_api import expect

    calls = page.locator(".st-key-rule_tables [data-testid=stDataFrame]").first
    rows = len(presets.list_presets()[0].rules.tool_calls)
    expect(_tool_cells(calls)).to_have_count(rows)
    calls.scroll_into_view_if_needed()
    box = calls.bounding_box()
    page.mouse.click(box["x"] + box["width"] * 0.3, box["y"] + 35 * (rows + 1) + 17)  # the empty last row
    expect(_tool_cells(calls)).to_have_count(rows + 1)
    _select_tool_cell(page, calls, rows)
    page.keyboard.press("Enter")
    expect(page.locator(OVERLAY)).to_be_focused()
    page.evaluate(LETTER_THEN_ENTER, "typed_tool")
    expect(page.locator(OVERLAY)).to_have_count(0)
    idle(page)
    expect(calls.get_by_test_id(f"glide-cell-2-{rows}")).to_have_text("typed_tool")
    expect(page.get_by_text(f"row {rows + 1}:").first).to_be_visible()  # the page's check saw the row
