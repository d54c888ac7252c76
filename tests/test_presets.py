"""The shipped presets: in step with the script that writes them, and each one a working lesson
with its own settings (it compacts, and shows at least one guard holding something back)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from playground import formats
from playground.compaction import Settings, compact
from playground.meter.tokens import count
from playground.workbench.presets import Preset, list_presets

from .conftest import ROOT

PRESETS = list_presets()
EXPECTED = {"book-report", "coding-agent", "research-agent", "anthropic-support", "long-session", "large-200k"}


def by_key(key: str) -> Preset:
    return next(preset for preset in PRESETS if preset.key == key)


def compacted(preset: Preset):
    settings = Settings(threshold=preset.threshold, keep_recent=preset.keep_recent)
    return compact(preset.conversation, preset.rules, settings, preset.model).report


def test_presets_are_what_the_script_writes():
    done = subprocess.run([sys.executable, "scripts/make_presets.py", "--check"], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_the_expected_presets_are_there_in_order():
    assert {preset.key for preset in PRESETS} == EXPECTED
    assert [preset.order for preset in PRESETS] == sorted({preset.order for preset in PRESETS})
    assert all(preset.description and preset.conversation.tools for preset in PRESETS)


def test_presets_cover_the_wire_formats():
    assert {"chat", "responses", "anthropic"} <= {preset.conversation.format for preset in PRESETS}


@pytest.mark.parametrize("preset", PRESETS, ids=lambda preset: preset.key)
def test_preset_compacts_below_its_threshold(preset: Preset):
    report = compacted(preset)
    assert report.stage == "compacted"
    assert report.tokens_before >= preset.threshold > report.tokens_after
    assert len(report.edits) >= 1
    assert len(report.skipped) >= 1


@pytest.mark.parametrize("preset", PRESETS, ids=lambda preset: preset.key)
def test_preset_round_trips(preset: Preset):
    assert formats.write(preset.conversation) == preset.source


def test_error_results_stay_in_the_anthropic_preset():
    reasons = {(skip.tool, skip.reason) for skip in compacted(by_key("anthropic-support")).skipped}
    assert {("read_file", "error_result"), ("search_docs", "error_result")} <= reasons


def test_large_preset_is_about_200k_tokens():
    large = by_key("large-200k")
    assert 180_000 <= count(large.conversation, large.model).total <= 220_000
