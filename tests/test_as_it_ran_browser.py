"""The run as it ran in a real browser: an uploaded Claude Code log with a compaction gets the
agent's compaction marked on the Run chart and the *as-it-ran* row in Compare (screenshots in
artifacts/, ignored by git)."""

from __future__ import annotations

import pytest

from .conftest import SHARED, shared
from .test_browser import ARTIFACTS, app_url, browser, idle, open_tab, opened  # noqa: F401  (fixtures used by name)

pytestmark = pytest.mark.browser


@pytest.fixture
def page(browser, app_url):  # noqa: F811
    yield from opened(browser, app_url, height=1400)


def test_an_uploaded_log_with_a_compaction_shows_the_mark_and_the_row(page):
    from playwright.sync_api import expect

    log = shared(SHARED / "sessions" / "claude-code-session-624a4a58.jsonl")
    open_tab(page, "Bring one in")
    uploader = page.get_by_test_id("stFileUploader").filter(has_text="upload a file")
    uploader.locator("input[type=file]").set_input_files(str(log))
    expect(page.get_by_text(f"Now showing: {log.name}")).to_be_visible(timeout=60_000)
    idle(page)
    open_tab(page, "Run")
    idle(page)
    expect(page.get_by_text("where the agent compacted its own context (line 158 of its log)")).to_be_visible(
        timeout=60_000)
    chart = page.get_by_test_id("stVegaLiteChart").first
    expect(chart.locator("canvas, svg").first).to_be_visible(timeout=30_000)
    ARTIFACTS.mkdir(exist_ok=True)
    chart.scroll_into_view_if_needed()
    chart.screenshot(path=str(ARTIFACTS / "e2e-as-it-ran-run.png"))
    open_tab(page, "Compare")
    idle(page)
    expect(page.get_by_text("what the agent really sent").first).to_be_visible(timeout=120_000)
    expect(page.locator("[data-testid=stDataFrame]:visible").first).to_be_visible()
    page.get_by_text("what the agent really sent").first.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "e2e-as-it-ran-compare.png"))
