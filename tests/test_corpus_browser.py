"""The Corpus tab in Chromium: upload a zip of logs, evaluate, read the per-run table, and open a
run from it in the other tabs."""

from __future__ import annotations

import re
import zipfile

import pytest

from .conftest import ROOT, TRACES, shared
from .test_browser import ARTIFACTS, app_url, browser, idle, open_tab, opened  # noqa: F401  (fixtures used by name)

pytestmark = pytest.mark.browser
DATA = ROOT / "tests" / "data"


@pytest.fixture
def page(browser, app_url):  # noqa: F811
    yield from opened(browser, app_url, height=1600)


def test_upload_a_zip_read_the_table_and_open_a_run(page, tmp_path):
    from playwright.sync_api import expect

    bundle = tmp_path / "logs.zip"
    with zipfile.ZipFile(bundle, "w") as archive:
        archive.write(shared(TRACES / "sweagent_marshmallow-1867_function_calling.openai.json"), "runs/swe.json")
        archive.write(DATA / "codex-rollout.jsonl", "runs/codex.jsonl")
        archive.writestr("runs/broken.json", '{"messages": [')
    open_tab(page, "Corpus")
    # the tab's panel is drawn by the rerun its click starts, which `idle` can miss: wait for the panel's
    # own uploader by its label, not for "the last uploader on the page" (on a slow machine, the sidebar's)
    uploader = page.get_by_test_id("stFileUploader").filter(has_text="Upload a .zip or .tar.gz of logs")
    uploader.locator("input[type=file]").set_input_files(str(bundle), timeout=60_000)
    evaluate = page.get_by_role("button", name="Evaluate the corpus")
    expect(evaluate).to_be_enabled(timeout=60_000)  # enabled by the rerun the upload starts
    idle(page)
    evaluate.click()
    idle(page)
    expect(page.get_by_text("2 runs evaluated, 1 failed, 0 skipped", exact=False)).to_be_visible(timeout=60_000)
    grid = page.get_by_test_id("stDataFrame").last
    expect(grid).to_be_visible()
    cells = grid.locator("[role=gridcell]")  # the grid is a canvas; this hidden table mirrors it for assistive tech
    expect(cells.filter(has_text="logs.zip!runs/swe.json").first).to_be_attached()
    expect(cells.filter(has_text="logs.zip!runs/codex.jsonl").first).to_be_attached()
    expect(page.get_by_text("broken.json, line 1", exact=False)).to_be_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "e2e-corpus.png"), full_page=True)
    # select the second run by its row's checkbox column (the grid is a canvas: click inside its box)
    box = grid.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 12, box["y"] + 35 + 35 + 17)  # header row, first row, then the second row's middle
    idle(page)
    # the sidebar's picker now shows that run, kept as the person's own conversation
    picker = page.get_by_test_id("stSidebar").get_by_role("combobox", name="Conversation")
    expect(picker).to_have_value(re.compile(r"^codex\.jsonl \(from the corpus"), timeout=30_000)
    open_tab(page, "Bring one in")
    idle(page)
    expect(page.get_by_text("Now showing: codex.jsonl (from the corpus", exact=False)).to_be_visible()
