"""Billed usage: what an agent's log says the provider billed, set at the calls of the run, beside our
count; the fit ``billed ≈ offset + factor × counted`` and the calibration it gives (an offset only
for logs of the same agent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playground import formats
from playground.conversation import turn_starts
from playground.errors import InputError
from playground.meter.calibration import load_calibrations, to_json
from playground.meter.factor import Calibration
from playground.meter.tokens import Meter
from playground.policies import MaskingPolicy
from playground.run.billed import BilledCall, billed_calls, fit_bills, log_fit, with_bills
from playground.run.prices import read_prices
from playground.run.replay import replay

from .conftest import SHARED, shared
from .test_cli import cli

PRICES = read_prices()
SESSIONS = SHARED / "sessions"
DATA = Path(__file__).parent / "data"


def _line(role: str, content: list, **extra) -> dict:
    return {"type": role, "uuid": f"u{len(content)}", "sessionId": "s", "message": {"role": role, "content": content,
                                                                                 **extra}}


def _usage(tokens: int, written: int = 0, read: int = 0) -> dict:
    return {"input_tokens": tokens, "cache_creation_input_tokens": written, "cache_read_input_tokens": read,
            "output_tokens": 5}


def _claude_code_log(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("name", ["claude-code-session-196820da.jsonl", "claude-code-session-624a4a58.jsonl"])
def test_a_claude_code_log_bills_each_reply_at_the_call_it_answers(name):
    """Every assistant reply (its message id) that opens a turn has its usage — input, cache writes
    and cache reads — at that turn's start, in order; streamed lines of one reply bill once."""
    path = shared(SESSIONS / name)
    lines = _claude_code_log(path)
    first: dict[str, int] = {}
    for line in lines:
        message = line.get("message") or {}
        if line.get("type") == "assistant" and not line.get("isSidechain") and isinstance(message.get("usage"), dict):
            usage = message["usage"]
            first.setdefault(message["id"], sum(usage.get(key) or 0 for key in (
                "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")))
    conversation = formats.read_path(path)
    assert conversation.billed, "the real logs record usage"
    assert {p for p, _ in conversation.billed} <= set(turn_starts(conversation.items))
    replies = iter(first.values())  # the bills are the replies' own, in their order (a subsequence)
    assert all(any(tokens == reply for reply in replies) for _, tokens in conversation.billed)
    assert len(conversation.billed) >= 0.9 * len(first), "only replies merged into another turn are left out"
    assert any("billed for" in note for note in conversation.notes)


def test_streamed_lines_bill_once_and_a_reply_merged_into_the_one_before_is_left_out():
    log = [_line("user", [{"type": "text", "text": "Read a.py"}]),
           _line("assistant", [{"type": "text", "text": "Reading."}], id="m1", usage=_usage(10, 100, 900)),
           _line("assistant", [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a.py"}}],
                 id="m1", usage=_usage(10, 100, 900)),
           _line("assistant", [{"type": "text", "text": "A second reply."}], id="m2", usage=_usage(7)),
           _line("user", [{"type": "tool_result", "tool_use_id": "t1", "content": "x = 1"}]),
           _line("assistant", [{"type": "text", "text": "Done."}], id="m3", usage=_usage(3, 0, 1200))]
    conversation = formats.read(log)
    assert conversation.billed == ((1, 1010), (5, 1203))
    assert any("1 other reply not at the start of a call" in note for note in conversation.notes)


def test_a_codex_rollout_bills_each_token_count_at_the_reply_it_follows():
    meta = {"type": "session_meta", "payload": {"id": "s"}}
    user = {"type": "response_item", "payload": {"type": "message", "role": "user",
                                                 "content": [{"type": "input_text", "text": "list files"}]}}
    call = {"type": "response_item", "payload": {"type": "function_call", "name": "shell", "call_id": "c1",
                                                 "arguments": "{\"command\": [\"ls\"]}"}}
    output = {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1", "output": "a.py"}}
    answer = {"type": "response_item", "payload": {"type": "message", "role": "assistant",
                                                   "content": [{"type": "output_text", "text": "One file."}]}}

    def tokens(total: int, last: int | None = None) -> dict:
        info = {"total_token_usage": {"input_tokens": total}}
        if last is not None:
            info["last_token_usage"] = {"input_tokens": last}
        return {"type": "event_msg", "payload": {"type": "token_count", "info": info}}

    rate_limits = {"type": "event_msg", "payload": {"type": "token_count", "info": None}}
    with_last = formats.read([meta, user, call, tokens(4000, 4000), rate_limits, output, answer, tokens(8100, 4100)])
    assert with_last.billed == ((1, 4000), (3, 4100))
    totals_only = formats.read([meta, user, call, tokens(4000), output, answer, tokens(8100)])
    assert totals_only.billed == ((1, 4000), (3, 4100)), "older rollouts: each call is the growth of the total"


def test_the_real_codex_rollout_bills_its_one_call():
    conversation = formats.read_path(DATA / "codex-rollout.jsonl")
    assert [tokens for _, tokens in conversation.billed] == [5210]


def _desktop_rollout(instructions: str | None, when: str = "2026-03-09T05:04:32.438Z", cwd: str = "/work") -> list:
    """The real rollout's lines as a run that names no model (no turn_context, as a Codex Desktop run
    the issue met), with base instructions in its session_meta as later Codex versions write them."""
    lines = [line for line in formats.parse_text((DATA / "codex-rollout.jsonl").read_bytes())
             if line["type"] != "turn_context"]
    meta = {"id": "s", "timestamp": when, "cwd": cwd, "originator": "Codex Desktop", "cli_version": "0.108.0"}
    if instructions:
        meta["base_instructions"] = {"text": instructions}
    return [{"timestamp": when, "type": "session_meta", "payload": meta}, *lines[1:]]


CODEX_PROMPT = ("You are Codex, based on GPT-5. You are running as a coding agent in the Codex CLI on a user's "
                "computer.\n\n## General\n\n- Prefer `rg` to search files.")


@pytest.mark.parametrize(("when", "cwd", "instructions", "model"), [
    ("2026-03-09T05:04:32Z", "/work", CODEX_PROMPT, "gpt-5.1-codex"),
    ("2025-10-01T09:00:00Z", "/work", None, "gpt-5-codex"),
    ("2025-10-01T09:00:00Z", "C:\\work", None, "gpt-5"),  # Windows kept gpt-5 (config.rs, cfg target_os)
    ("2025-06-10T09:00:00Z", "/work", None, "codex-mini-latest"),
    ("2025-06-10T09:00:00Z", "/work", CODEX_PROMPT.replace("GPT-5.", "GPT-5.5."), "gpt-5.5"),
])
def test_a_codex_rollout_that_names_no_model_is_counted_as_codexs_default_of_its_day(when, cwd, instructions, model):
    """On main a rollout with no turn_context was counted and priced as gpt-4o, and the page warned a
    Codex Desktop run was larger than gpt-4o's window; Codex's own default of the day (or the model
    its base instructions name) is the model, and a note says so."""
    conversation = formats.read(_desktop_rollout(instructions, when, cwd))
    assert conversation.model == model
    assert any("names no model" in note and model in note for note in conversation.notes)


def test_a_codex_rollout_with_no_model_and_no_date_says_it_is_counted_as_the_formats_default():
    lines = _desktop_rollout(None)
    lines[0] = {"type": "session_meta", "payload": {"id": "s"}}
    conversation = formats.read(lines)
    assert conversation.model is None
    assert any("no date or instructions to find Codex's default" in note for note in conversation.notes)


def test_the_fit_caption_says_a_rollout_holds_its_system_prompt_when_it_does():
    """On main the Run caption said 'the log holds no system prompt' on a rollout whose base
    instructions are the request's instructions (counted, 4,380 tokens on the issue's run)."""
    conversation = formats.read(_desktop_rollout(CODEX_PROMPT))
    assert conversation.instructions
    text = log_fit(conversation, PRICES.get(conversation.model)).describe()
    assert "the log holds the system prompt but no tool definitions" in text and "holds no system" not in text
    bare = log_fit(formats.read(_desktop_rollout(None)), PRICES.get("gpt-5")).describe()
    assert "the log holds no system prompt or tool definitions" in bare


@given(st.integers(0, 60_000), st.floats(0.8, 1.25), st.lists(st.integers(60, 4_000), min_size=2, max_size=40),
       st.integers(0, 39))
def test_the_fit_recovers_an_offset_and_a_factor_and_stops_where_the_agent_cut(offset, factor, growth, cut):
    """Bills made as ``offset + factor × counted`` give back both (to rounding); a bill that falls
    (the agent compacting) ends the fitted calls there."""
    counted = [sum(growth[:k + 1]) for k in range(len(growth))]
    calls = [BilledCall(k, k, c, offset + round(factor * c)) for k, c in enumerate(counted)]
    if 0 < cut < len(calls):
        before = calls[cut - 1].billed  # a clear fall: at most half the last bill (60 then 216 // 4 = 54 is noise)
        calls[cut:] = [BilledCall(k, k, c.counted, max(1, min(c.billed // 4, before // 2)))
                       for k, c in enumerate(calls[cut:], cut)]
    found = fit_bills(tuple(calls))
    assert found.fitted == (cut if 0 < cut < len(calls) else len(calls))
    if found.fitted >= 2:
        assert found.factor == pytest.approx(factor, abs=0.02)
        assert abs(found.offset - offset) <= 0.02 * counted[found.fitted - 1] + 2
        assert found.error(True) <= found.error(False) + 1e-9


def test_a_log_with_no_bills_has_no_fit():
    conversation = formats.read_path(DATA / "sweagent-function-calling.traj")
    assert conversation.billed == () and log_fit(conversation, PRICES.get("gpt-4o")) is None
    with pytest.raises(InputError, match="no billed usage"):
        fit_bills(())


def test_an_offset_is_added_only_to_logs_of_its_agent_and_before_everything_else():
    log = formats.read_path(DATA / "codex-rollout.jsonl")
    request = formats.read({"model": "gpt-5", "messages": [{"role": "user", "content": "hi"}]})
    calibration = Calibration("gpt-5", 1.0, 3, offset=5000, source="codex")
    plain, calibrated = Meter("gpt-5"), Meter("gpt-5", calibration)
    assert calibrated.count(log).total == plain.count(log).total + 5000
    assert calibrated.count(log).prefix(0) == plain.count(log).prefix(0) + 5000, "it is the head of the prompt"
    assert calibrated.count(request).total == plain.count(request).total, "another agent's (or no agent's) request"
    assert "+5,000 tokens per codex request" in calibrated.count(log).notes[-1]


def test_a_log_calibration_survives_its_json_and_bad_entries_are_located():
    calibration = Calibration("claude-sonnet-4-5", 1.02, 37, offset=54_442, source="claude-code")
    assert load_calibrations(to_json({"claude-sonnet-4-5": calibration})) == {"claude-sonnet-4-5": calibration}
    assert to_json({"m": Calibration("m", 1.1)}) == {"m": 1.1}, "a plain factor stays a number"
    with pytest.raises(InputError, match=r"calibration\.m\.offset"):
        load_calibrations({"m": {"factor": 1.0, "offset": -3, "source": "codex"}})
    with pytest.raises(InputError, match=r"calibration\.m\.source"):
        load_calibrations({"m": {"factor": 1.0, "offset": 300}})


@pytest.mark.parametrize("name", ["claude-code-session-196820da.jsonl", "claude-code-session-624a4a58.jsonl"])
def test_the_fitted_calibration_brings_our_count_to_the_bill(name, tmp_path):
    """Measured on both real Claude Code logs: uncalibrated, our count of the log's request misses
    the bill by a third or more on the median call (the log holds no system prompt or tool
    definitions); the fit from the log itself brings the median miss under 1%."""
    path = shared(SESSIONS / name)
    conversation = formats.read_path(path)
    price = PRICES.get(conversation.model)
    found = log_fit(conversation, price)
    assert found.error(False) > 0.3 and found.error(True) < 0.01
    assert found.offset > 20_000, "Claude Code's system prompt and tool definitions"
    data = json.loads(cli("replay", str(path), "--json").stdout)
    assert data["log_calibration"]["median_error_calibrated"] < 0.01
    assert sum("billed_input_tokens" in call for call in data["calls"]) == len(conversation.billed)
    file = tmp_path / "calibration.json"
    file.write_text(json.dumps(data["log_calibration"]["calibration"]))
    again = json.loads(cli("replay", str(path), "--json", "--calibration", str(file)).stdout)
    misses = sorted(abs(call["tokens_without"] - call["billed_input_tokens"]) / call["billed_input_tokens"]
                    for call in again["calls"][:found.fitted] if "billed_input_tokens" in call)
    assert misses[len(misses) // 2] < 0.01, "the calibrated replay's requests are what was billed"
    assert billed_calls(conversation, price) == found.calls
    # a replay the caller has (any policy, either mode) gives the same counts, if its meter is uncalibrated
    other = replay(conversation, MaskingPolicy(3), Meter(conversation.model), price, mode="per-call")
    assert billed_calls(conversation, price, other) == found.calls


def test_replay_json_of_a_request_with_no_bills_is_unchanged():
    data = {"calls": [{"index": 1}], "totals": {}}
    found = fit_bills((BilledCall(0, 1, 100, 600), BilledCall(1, 3, 300, 800)))
    assert with_bills(data, found, "m", "codex")["calls"][0]["billed_input_tokens"] == 600
    assert "billed_input_tokens" not in data["calls"][0], "the run's own rows are not changed in place"


def test_the_run_view_draws_the_bills_and_calibrates_from_them_with_one_click():
    """Upload a real Claude Code log, open the Run view: a third line (the bills) in the prompt-tokens
    chart, the fit in words, and a button; clicking it puts the fitted calibration in effect, and
    the Run view's first call then counts what was billed for it (within the fit's miss)."""
    from playground.ui import bills, state

    from .test_app_agent_uploads import upload
    from .test_replay_app import _metric, healthy, start

    path = shared(SESSIONS / "claude-code-session-196820da.jsonl")
    at = upload(start("Run"), path.name, path.read_bytes())
    assert any("This log records what the provider billed for 47 calls" in c.value for c in at.sidebar.caption)
    conversation, model = at.session_state["conversation"], at.session_state["model"]
    chart = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    sides = {row["side"] for layer in chart["layer"] for row in layer.get("data", {}).get("values", [])
             if "side" in row}
    assert "billed (log)" in sides
    assert any("The log records the input tokens billed for 47 calls" in c.value for c in at.caption)
    before = _metric(at, "Prompt tokens billed")
    healthy(at.button(key="billed_calibrate").click().run())
    found = bills.fit_of(conversation, read_prices().get(model))
    assert at.session_state[state.ENGINE].calibrations[model] == found.calibration(model, "claude-code")
    assert _metric(at, "Prompt tokens billed") != before
    assert any("In effect: calibrated" in c.value for c in at.caption)
    first = conversation.billed[0][1]
    assert abs(found.estimate(found.calls[0].counted) - first) / first < 0.1


def test_a_rounded_bill_is_known_to_half_a_unit_of_its_last_kept_digit():
    from playground.run.billed import rounding

    assert [rounding(tokens, 2) for tokens in (870, 4_500, 10_000, 12_000, 123_000)] == [5, 50, 500, 500, 5_000]
    assert rounding(87, 2) == 0 and rounding(4_512, None) == 0, "kept whole, or a log of exact bills"


def test_bills_rounded_to_two_digits_give_no_slope_their_rounding_could_make():
    """Bills of ``3,000 + 1.1 × counted`` rounded as Aider does, our count growing 120 a call: the
    rounding (±50 on each bill) swamps the growth between neighbours (0 or 100 by turns), so no factor
    is fitted from it — the fit is the offset alone — and ``describe`` says how far the bills are
    from exact. With every digit kept the same calls give the factor back."""
    counted = [200 + 120 * k for k in range(20)]
    exact = [3_000 + round(1.1 * c) for c in counted]
    rounded = tuple(BilledCall(k, k, c, round(b, -2), 50) for k, (c, b) in enumerate(zip(counted, exact, strict=True)))
    found = fit_bills(rounded, 2)
    assert found.factor == 1.0 and abs(found.estimate(counted[10]) - exact[10]) < 0.05 * exact[10]
    assert "rounds its bills to 2 significant digits (at least): each is within ±1.1%" in found.describe()
    kept = fit_bills(tuple(BilledCall(k, k, c, b) for k, (c, b) in enumerate(zip(counted, exact, strict=True))))
    assert kept.factor == pytest.approx(1.1, abs=0.01) and "rounds its bills" not in kept.describe()


def test_an_aider_history_bills_its_calls_in_replay_json_and_the_run_view():
    """The real Aider history: ``replay --json`` has each placed bill on its call, the fit saying the
    bills keep two digits; the Run view draws the bills and says the same."""
    from .test_app_agent_uploads import upload
    from .test_replay_app import start

    path = DATA / "aider-afi-core.aider.chat.history.md"
    conversation = formats.read_path(path)
    data = json.loads(cli("replay", str(path), "--json").stdout)
    bills = [call["billed_input_tokens"] for call in data["calls"] if "billed_input_tokens" in call]
    assert bills == [tokens for _, tokens in conversation.billed] and len(bills) == 29
    assert data["log_calibration"]["billed_digits"] == 2 and data["log_calibration"]["calls"] == 29
    at = upload(start("Run"), ".aider.chat.history.md", path.read_bytes())
    chart = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    billed = [row["tokens"] for layer in chart["layer"] for row in layer.get("data", {}).get("values", [])
              if row.get("side") == "billed (log)"]
    assert billed == bills
    assert any("The log records the input tokens billed for 29 calls" in c.value
               and "rounds its bills to 2 significant digits" in c.value for c in at.caption)


def test_each_fresh_session_gets_its_own_offset_and_its_first_bill_is_no_cut():
    """Aider sends the files a session added beside its turns: the offset is each session's own, and a
    bill that falls where a session starts afresh is that new start, not the agent cutting its context."""
    from playground.run.billed import BilledCall, fit_bills

    first = [BilledCall(n, 10 * n, 1_000 + 500 * n, 9_000 + 500 * n) for n in range(5)]  # offset 8,000
    second = [BilledCall(5 + n, 100 + 10 * n, 200 + 400 * n, 3_200 + 400 * n) for n in range(5)]  # offset 3,000
    calls = (*first, *second)
    whole, sessions = fit_bills(calls), fit_bills(calls, fresh=(100,))
    assert whole.fitted == 5 and sessions.fitted == 10  # the fall at the new session no longer stops the fit
    assert sessions.sessions == ((-1, 8_000), (100, 3_000))
    assert sessions.error(True) == 0.0 and max(sessions.misses(True)) == 0.0
    assert "each of the 2 sessions the agent began afresh" in sessions.describe()
