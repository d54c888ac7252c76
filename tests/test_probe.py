"""The live probe, end to end against a real local HTTP server in both wire formats (tests/probe_stub.py):
which calls it sends, what it compares, what a failure looks like, that nothing is sent without
--yes, and that no key reaches the output. The run is hand-made so every expected figure is known:

A system message, a user message, then six steps (an assistant tool call and its result) and a last
assistant turn: 7 calls. The marker is in the second result (f1.py's). Masking with a window of 1
keeps only the newest tool output, so call 0 and call 1 are unchanged, call 2 masks f0.py's output
(the marker still visible: the same next step), and calls 3 to 6 mask f1.py's (the marker gone: a
different next step). Changed calls: 2, 3, 4, 5, 6; agreement 1 of 5."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
import streamlit
from hypothesis import given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from playground import cli, formats, probe
from playground.llm import keys
from playground.meter.tokens import Meter
from playground.policies import make
from playground.run.prices import read_prices
from playground.run.replay import call_starts

from .conftest import ROOT, show_tab
from .probe_stub import TEXT_SEEN, TEXT_UNSEEN, ProbeServer, run

CHANGED = [2, 3, 4, 5, 6]
SAME = [True, False, False, False, False]
KEY = "sk-probe-secret-0123456789abcdef"
def write(tmp_path, data: dict, wire: str = "chat"):
    """The run as a request file in ``wire`` format (converted from Chat when asked)."""
    conversation = formats.read(data)
    path = tmp_path / f"run.{wire}.json"
    path.write_text(json.dumps(formats.write(formats.convert(conversation, wire) if wire != "chat" else conversation)))
    return path


def probe_cli(capsys, path, server: ProbeServer, provider: str, *extra: str) -> tuple[int, str, str]:
    base = server.url + ("/v1" if provider == "openai" else "")
    code = cli.main(["probe", str(path), "--strategy", "masking", "--window", "1", "--base-url", base,
                     "--llm-model", "probe-model", "--provider", provider, *extra])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def server():
    with ProbeServer(hang_seconds=3.0) as running:
        yield running


@pytest.fixture(autouse=True)
def no_keys(monkeypatch):
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "PLAYGROUND_KEY_HOSTS"):
        monkeypatch.delenv(name, raising=False)


# --- sampling and comparing, offline ---------------------------------------------------------

@given(st.lists(st.integers(0, 10_000), unique=True, min_size=1, max_size=60).map(sorted), st.integers(1, 80))
def test_sample_is_spread_over_the_run_and_keeps_the_last(changed, calls):
    chosen = probe.sample(tuple(changed), calls)
    assert len(chosen) == min(calls, len(changed)) and len(set(chosen)) == len(chosen)
    assert chosen[-1] == changed[-1] and set(chosen) <= set(changed) and list(chosen) == sorted(chosen)
    if calls >= 2:
        assert chosen[0] == changed[0]


def test_sample_by_hand():
    assert probe.sample(tuple(range(10)), 3) == (0, 4, 9)
    assert probe.sample(tuple(range(10)), 1) == (9,)
    assert probe.sample((3, 8), None) == (3, 8)


def _chat_reply(arguments: str, content: str | None = None):
    call = SimpleNamespace(function=SimpleNamespace(name="grep", arguments=arguments))
    return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(tool_calls=[call], content=content))])


def test_arguments_are_compared_as_json_values_not_text():
    one = probe.chat_action(_chat_reply('{"pattern": "x", "path": "src"}'))
    other = probe.chat_action(_chat_reply('{"path":"src","pattern":"x"}'))
    changed = probe.chat_action(_chat_reply('{"path": "src", "pattern": "y"}'))
    assert probe.Outcome(0, 0, one, other).same is True
    assert probe.Outcome(0, 0, one, changed).same is False
    not_json = probe.chat_action(_chat_reply("{not json"))
    assert not_json.tool_calls == (("grep", "{not json"),)  # kept as sent, compared as text


def test_text_replies_compare_by_similarity_with_the_stated_threshold(tmp_path, server, capsys):
    path = write(tmp_path, run({n: "\nSAY-TEXT" for n in range(6)}))
    code, out, err = probe_cli(capsys, path, server, "openai", "--calls", "all", "--yes", "--json")
    data = json.loads(out)
    assert code == 0, err
    assert [call["same_action"] for call in data["calls"]] == SAME
    assert data["calls"][0]["before"] == {"text": TEXT_SEEN} and data["calls"][1]["after"] == {"text": TEXT_UNSEEN}
    assert data["calls"][0]["similarity"] == 1.0 and data["calls"][1]["similarity"] < probe.TEXT_THRESHOLD
    assert data["text_threshold"] == probe.TEXT_THRESHOLD


# --- end to end, both wire formats -------------------------------------------------------------

@pytest.mark.parametrize("wire", ["chat", "anthropic"])
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_probe_reports_the_changed_calls_and_agreement_exactly(tmp_path, server, capsys, wire, provider):
    path = write(tmp_path, run(), wire)
    code, out, err = probe_cli(capsys, path, server, provider, "--calls", "all", "--yes", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert [call["call"] for call in data["calls"]] == CHANGED
    assert [call["same_action"] for call in data["calls"]] == SAME
    assert data["agreement"] == 0.2 and data["sent_requests"] == 10 and data["changed_calls"] == 5
    assert data["calls"][0]["before"] == {"tool_calls": [{"tool": "next_step", "arguments": {"marker_seen": True}}]}
    assert data["calls"][1]["after"] == {"tool_calls": [{"tool": "next_step", "arguments": {"marker_seen": False}}]}
    conversation = formats.read(json.loads(path.read_text()))
    plan = probe.plan(conversation, make("masking", window=1), Meter(conversation.model),
                      read_prices().get("probe-model"), provider, calls=None)
    assert data["tokens_sent"] == plan.tokens > 0
    path_sent = "/v1/messages" if provider == "anthropic" else "/v1/chat/completions"
    assert [request["path"] for request in server.requests] == [path_sent] * 10
    first = server.requests[0]["body"]
    assert first["temperature"] == 0 and first["max_tokens"] == probe.DEFAULT_MAX_TOKENS
    assert first["model"] == "probe-model"
    tools = first["tools"]
    assert [tool.get("name") or tool["function"]["name"] for tool in tools] == ["read_file"]


def test_calls_are_sampled_evenly_with_the_last(tmp_path, server, capsys):
    code, out, err = probe_cli(capsys, write(tmp_path, run()), server, "openai", "--calls", "2", "--yes", "--json")
    assert code == 0, err
    assert [call["call"] for call in json.loads(out)["calls"]] == [2, 6]
    assert len(server.requests) == 4


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_failures_give_one_located_line_each_and_the_other_calls_still_run(tmp_path, capsys, provider):
    # the newest result is the last message of the next call's request: step 2 → call 3, and so on
    path = write(tmp_path, run({2: "\nFAIL-500", 3: "\nHANG", 4: "\nBAD-JSON"}))
    with ProbeServer(hang_seconds=3.0) as server:
        code, out, err = probe_cli(capsys, path, server, provider, "--calls", "all", "--yes", "--json",
                                   "--timeout", "1")
    assert code == 0, err
    data = json.loads(out)
    assert [call["same_action"] for call in data["calls"]] == [True, None, None, None, False]
    assert data["agreement"] == 0.5 and data["sent_requests"] == 7  # a failed first request: the second is not sent
    lines = [line for line in err.splitlines() if "probe: call" in line]
    assert len(lines) == 3, err
    assert lines[0].startswith("python -m playground: probe: call 3 (index ") and "(500)" in lines[0]
    assert "call 4 " in lines[1] and "did not answer" in lines[1]
    assert "call 5 " in lines[2] and "not JSON" in lines[2]
    assert all("as it was" in line for line in lines)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_without_yes_nothing_is_sent(tmp_path, server, capsys, provider):
    code, out, err = probe_cli(capsys, write(tmp_path, run()), server, provider, "--calls", "all")
    assert code == 0, err
    assert server.requests == []
    assert "the policy changed 5 requests of 7 calls; probing 5 calls: 2, 3, 4, 5, 6" in out
    assert "estimate: 10 requests" in out and "nothing sent: add --yes" in out
    code, out, err = probe_cli(capsys, write(tmp_path, run()), server, provider, "--calls", "all", "--json")
    data = json.loads(out)  # the same estimate as JSON, on stdout; the words on stderr
    assert code == 0 and server.requests == [] and "nothing sent" in err
    assert data["calls"] == [] and data["sent_requests"] == 0 and data["estimate"]["requests"] == 10


def test_the_budget_caps_the_tokens_sent(tmp_path, server, capsys):
    path = write(tmp_path, run())
    conversation = formats.read(json.loads(path.read_text()))
    plan = probe.plan(conversation, make("masking", window=1), Meter("gpt-4o"), read_prices().get("gpt-4o"),
                      "openai", calls=None)
    budget = plan.pairs[0].tokens + plan.pairs[1].tokens + 1
    code, out, err = probe_cli(capsys, path, server, "openai", "--calls", "all", "--yes", "--json",
                               "--budget-tokens", str(budget))
    data = json.loads(out)
    assert code == 0 and [call["call"] for call in data["calls"]] == [2, 3]
    assert data["tokens_sent"] <= budget and len(server.requests) == 4
    assert "left out by the token budget: 3 calls (4, 5, 6)" in err


@pytest.mark.parametrize(("provider", "name", "header"), [("openai", "OPENAI_API_KEY", "authorization"),
                                                           ("anthropic", "ANTHROPIC_API_KEY", "x-api-key")])
def test_keys_go_only_to_allowed_hosts_and_never_into_the_output(tmp_path, capsys, monkeypatch, provider, name,
                                                                  header):
    monkeypatch.setenv(name, KEY)
    path = write(tmp_path, run({2: "\nFAIL-500"}))  # the server echoes the key in its error message
    with ProbeServer() as server:
        code, out, err = probe_cli(capsys, path, server, provider, "--calls", "all", "--yes")
        assert code == 2 and server.requests == []  # not an allowed host: refused before anything is sent
        assert name in err and KEY not in out + err
        monkeypatch.setenv("PLAYGROUND_KEY_HOSTS", "127.0.0.1")
        code, out, err = probe_cli(capsys, path, server, provider, "--calls", "all", "--yes")
    assert code == 0, err
    assert KEY in server.requests[0]["headers"][header]  # sent to the host the operator allowed
    assert "(500)" in err and KEY not in out + err


def test_the_one_key_rule_also_decides_anthropics_key():
    env = {"ANTHROPIC_API_KEY": KEY, "OPENAI_API_KEY": "sk-openai-other-0123"}
    assert keys.resolve_key(None, None, env, {}, "anthropic") == keys.KeyChoice(KEY, keys.OPERATOR,
                                                                                "api.anthropic.com", True)
    for elsewhere in ("http://attacker.example:8080", "https://api.openai.com/v1"):  # not Anthropic's own host
        choice = keys.resolve_key(elsewhere, None, env, {}, "anthropic")
        assert choice.source == keys.WITHHELD and choice.key is None
    assert keys.resolve_key("https://api.openai.com/v1", None, env, {}).key == "sk-openai-other-0123"
    assert keys.resolve_key("http://127.0.0.1:1", None, env | {"PLAYGROUND_KEY_HOSTS": "127.0.0.1"}, {},
                            "anthropic").key == KEY


def test_a_log_without_tool_definitions_gets_them_from_its_calls(tmp_path, server, capsys):
    data = run()
    del data["tools"]
    code, out, err = probe_cli(capsys, write(tmp_path, data), server, "anthropic", "--calls", "1", "--yes")
    assert code == 0, err
    assert [tool["name"] for tool in server.requests[0]["body"]["tools"]] == ["read_file"]
    assert "the log defines no tools: read_file defined from its calls' names" in out


def test_a_policy_that_changes_nothing_sends_nothing(tmp_path, server, capsys):
    code, out, err = probe_cli(capsys, write(tmp_path, run()), server, "openai", "--strategy", "none", "--yes")
    assert code == 0, err
    assert server.requests == [] and "the policy changed no request in 7 calls" in out


# --- the page ----------------------------------------------------------------------------------

def _healthy(at):
    assert not at.exception, at.exception
    assert not [e.value for e in at.error if "Something went wrong" in e.value]
    return at


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_the_run_view_probes_only_after_the_confirm_button(server, provider):
    streamlit.cache_data.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    show_tab(at, "Run")
    _healthy(at.run())
    at.session_state["conversation"] = formats.read(run())
    _healthy(at.selectbox(key="replay_policy").select("masking").run())
    at.number_input(key="replay_window").set_value(1)
    _healthy(at.run())
    at.toggle(key="probe_on").set_value(True)
    _healthy(at.run())
    at.radio(key="probe_provider").set_value(provider)
    at.text_input(key="base_url").set_value(server.url + ("/v1" if provider == "openai" else ""))
    at.text_input(key="llm_model").set_value("probe-model")
    _healthy(at.run())
    captions = "\n".join(caption.value for caption in at.caption)
    assert "The policy changed 5 requests of 7 calls; probing 5 calls: 2, 3, 4, 5, 6." in captions
    send = next(button for button in at.button if button.label.startswith("Send 10 requests ("))
    assert server.requests == []  # the estimate and the button, nothing sent
    _healthy(send.click().run())
    assert len(server.requests) == 10
    assert next(metric.value for metric in at.metric if metric.label == "Same next step") == "20%"
    table = next(frame.value for frame in at.dataframe if "same next step" in frame.value.columns)
    assert list(table["call"]) == CHANGED and list(table["same next step"]) == ["yes", "no", "no", "no", "no"]
    _healthy(at.run())  # a rerun shows the kept result without sending again
    assert len(server.requests) == 10 and [m for m in at.metric if m.label == "Same next step"]


def test_the_estimate_by_hand():
    """gpt-4o lists $2.50 in and $10 out per million: the bound is every prompt token in, and 256 out per request."""
    conversation = formats.read(run())
    meter = Meter("gpt-4o")
    plan = probe.plan(conversation, make("masking", window=1), meter, read_prices().get("gpt-4o"), "openai",
                      calls=2)
    starts = call_starts(conversation.items)
    as_it_was = [meter.count(conversation.with_items(conversation.items[:starts[k]])).total for k in (2, 6)]
    assert [pair.tokens_before for pair in plan.pairs] == as_it_was
    assert all(pair.tokens_after < pair.tokens_before for pair in plan.pairs)  # masking made them smaller
    assert plan.requests == 4
    assert plan.cost == pytest.approx(plan.tokens * 2.50 / 1e6 + 4 * 256 * 10.00 / 1e6)
    assert f"at most ${plan.cost:,.4f} at gpt-4o prices: every prompt token" in probe.estimate_lines(plan)[1]
