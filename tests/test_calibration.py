"""Calibration from real usage: parse every provider's usage, correct the counts, say so."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from playground import formats
from playground.engine import Engine
from playground.errors import InputError
from playground.meter import calibration, tokens

from .conftest import ROOT, TOKEN_COUNTS, load_shared

REQUEST = {"model": "claude-sonnet-4-5", "max_tokens": 10,
           "messages": [{"role": "user", "content": "Summarise the plot of Hamlet in two sentences."}]}


def test_usage_of_every_provider():
    assert calibration.billed_tokens({"prompt_tokens": 120, "completion_tokens": 5}) == 120
    assert calibration.billed_tokens({"input_tokens": 73, "output_tokens": 16,
                                      "input_tokens_details": {"cached_tokens": 64}}) == 73
    anthropic = {"input_tokens": 3, "cache_creation_input_tokens": 2091, "cache_read_input_tokens": 10}
    assert calibration.billed_tokens(anthropic) == 2104
    assert calibration.billed_tokens({"id": "msg_1", "usage": anthropic}) == 2104  # a whole response


@pytest.mark.parametrize("usage", [{"output_tokens": 3}, {"prompt_tokens": -1}, {"input_tokens": "12"}, [1]])
def test_bad_usage_is_refused_with_its_place(usage):
    with pytest.raises(InputError) as error:
        calibration.billed_tokens(usage, "pasted")
    assert "pasted" in str(error.value)


def test_pairs_give_a_factor_that_the_engine_applies_and_names():
    conversation = formats.read(REQUEST)
    counted = tokens.count(conversation).total
    pairs = [{"request": REQUEST, "usage": {"input_tokens": round(counted * 1.1), "output_tokens": 9}}] * 3
    found = calibration.load_calibrations(pairs)
    assert set(found) == {"claude-sonnet-4-5"}
    assert found["claude-sonnet-4-5"].samples == 3
    assert found["claude-sonnet-4-5"].factor == pytest.approx(1.1, abs=0.02)

    engine = Engine()
    plain = engine.count(conversation)
    engine.calibrations = found
    corrected = engine.count(conversation)
    assert corrected.total == pytest.approx(plain.total * found["claude-sonnet-4-5"].factor, abs=2)
    assert corrected.total == sum(corrected.items) + corrected.tools + corrected.instructions + corrected.priming
    assert f"calibrated ×{found['claude-sonnet-4-5'].factor:.2f} from 3 usage samples" in corrected.notes
    engine.calibrations = {}
    assert engine.count(conversation).total == plain.total  # switched off: the plain count again


def test_calibration_reaches_per_item_counts_that_compaction_uses():
    conversation = formats.read(REQUEST)
    plain = tokens.Meter("claude-sonnet-4-5")
    doubled = tokens.Meter("claude-sonnet-4-5", calibration.Calibration("claude-sonnet-4-5", 2.0))
    item = conversation.items[0]
    assert doubled.item(item) == pytest.approx(2 * plain.item(item), abs=1)
    assert doubled.text("hello world") == pytest.approx(2 * plain.text("hello world"), abs=1)


def test_factor_map_and_its_errors():
    found = calibration.load_calibrations({"gpt-4o": 1.05})
    assert found["gpt-4o"].factor == 1.05 and found["gpt-4o"].samples == 0
    assert found["gpt-4o"].note() == "calibrated ×1.05 as given"
    with pytest.raises(InputError, match=r"calibration\.gpt-4o.*between"):
        calibration.load_calibrations({"gpt-4o": 40})
    with pytest.raises(InputError, match=r"calibration\[0\]"):
        calibration.load_calibrations([{"request": REQUEST}])


def test_real_recorded_usage_calibrates_a_model_close_to_one():
    """On real Anthropic requests our count is already close: the factor says how close."""
    cases = [c for c in load_shared(TOKEN_COUNTS / "anthropic_recorded_cases.json")
             if c["model"] == "claude-sonnet-4-5" and "not_body_computable" not in c["categories"]]
    pairs = [{"request": {k: v for k, v in c.items() if k in ("model", "messages", "system", "tools", "tool_choice",
                                                              "thinking", "output_format", "max_tokens")},
              "usage": c["api_usage"]} for c in cases]
    found = calibration.load_calibrations(pairs)["claude-sonnet-4-5"]
    assert found.samples == len(cases)
    assert 0.9 <= found.factor <= 1.1


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "playground", *args], check=False, cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_cli_count_and_compact_take_a_calibration_file(tmp_path):
    request = tmp_path / "request.json"
    request.write_text(json.dumps(REQUEST))
    factors = tmp_path / "factors.json"
    factors.write_text(json.dumps({"claude-sonnet-4-5": 2.0}))
    plain = int(run("count", str(request)).stdout)
    doubled = run("count", str(request), "--calibration", str(factors))
    assert doubled.returncode == 0, doubled.stderr
    assert int(doubled.stdout) == pytest.approx(2 * plain, abs=2)
    report = tmp_path / "report.json"
    compact = run("compact", str(request), "--calibration", str(factors), "--report", str(report))
    assert compact.returncode == 0, compact.stderr
    written = json.loads(report.read_text())
    assert written["tokens_before"] == int(doubled.stdout)
    assert "calibrated ×2.00 as given" in written["estimate_because"]


def test_cli_refuses_a_calibration_for_another_model(tmp_path):
    request = tmp_path / "request.json"
    request.write_text(json.dumps(REQUEST))
    factors = tmp_path / "factors.json"
    factors.write_text(json.dumps({"gpt-4o": 1.1}))
    result = run("count", str(request), "--calibration", str(factors))
    assert result.returncode == 2
    assert "no calibration for model 'claude-sonnet-4-5'" in result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.endswith("\n")


def _panel_page() -> None:
    from playground import formats as page_formats
    from playground.ui import calibration_panel

    request = {"model": "claude-sonnet-4-5", "max_tokens": 10,
               "messages": [{"role": "user", "content": "Summarise the plot of Hamlet in two sentences."}]}
    calibration_panel.draw(page_formats.read(request), "claude-sonnet-4-5")


def test_panel_shows_both_counts_and_applies_the_factor_until_switched_off():
    from streamlit.testing.v1 import AppTest

    from playground.ui import state

    counted = tokens.count(formats.read(REQUEST)).total
    at = AppTest.from_function(_panel_page, default_timeout=30).run()
    assert not at.exception
    at.text_area(key=state.CALIBRATION_PASTE).input(json.dumps({"input_tokens": counted * 2})).run()
    assert not at.exception
    shown = " ".join(m.value for m in at.markdown)
    assert f"our count **{counted:,}**" in shown and f"billed **{counted * 2:,}**" in shown
    at.toggle(key=state.CALIBRATION_APPLY).set_value(True).run()
    engine = at.session_state["engine"]
    assert engine.calibrations["claude-sonnet-4-5"].factor == pytest.approx(2.0)
    assert any("calibrated ×2.00 from 1 usage sample" in info.value for info in at.info)
    assert engine.count(formats.read(REQUEST)).total == pytest.approx(2 * counted, abs=2)
    at.button[0].click().run()
    assert not at.exception
    assert at.session_state["engine"].calibrations == {}


def test_panel_says_what_is_wrong_with_bad_usage():
    from streamlit.testing.v1 import AppTest

    from playground.ui import state

    at = AppTest.from_function(_panel_page, default_timeout=30).run()
    at.text_area(key=state.CALIBRATION_PASTE).input('{"output_tokens": 3}').run()
    assert not at.exception
    assert "pasted usage" in at.error[0].value and "input_tokens" in at.error[0].value


def test_pasted_pairs_calibrate_each_model_apart():
    chat = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Hello there, how are you today?"}]}
    counted = tokens.count(formats.read(chat)).total
    pasted = calibration.read_pasted(json.dumps([
        {"request": chat, "usage": {"prompt_tokens": counted + 3}},
        {"request": REQUEST, "usage": {"input_tokens": 20, "cache_read_input_tokens": 0}}]),
        formats.read(REQUEST))
    assert [c.model for c in pasted.comparisons] == ["gpt-4o", "claude-sonnet-4-5"]
    assert pasted.comparisons[0].difference == -3
    assert pasted.calibrations["gpt-4o"].factor == pytest.approx((counted + 3) / counted)


def test_factors_round_trip_through_their_json_form():
    found = {"gpt-4o": calibration.Calibration("gpt-4o", 1.07, 3)}
    again = calibration.load_calibrations(calibration.to_json(found))
    assert again["gpt-4o"].factor == 1.07
