"""The summarization panel through AppTest: settings that survive being hidden, a limit that
cannot go below the threshold, the operator's key kept from unlisted hosts, and the stages."""

from __future__ import annotations

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from .conftest import ROOT
from .openai_stub import StubServer


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    st.cache_data.clear()
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("PLAYGROUND_KEY_HOSTS", raising=False)


def run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    assert not [e.value for e in at.error if "Something went wrong" in e.value]
    return at


def start() -> AppTest:
    return run(AppTest.from_file(str(ROOT / "app.py"), default_timeout=30))


def captions(at: AppTest) -> str:
    return "\n".join(c.value for c in at.caption)


def test_toggling_summarization_off_and_on_keeps_the_prompt_and_settings():
    at = start()
    at.text_area(key="summary_prompt").set_value("Summarize in haiku.")
    at.number_input(key="keep_steps").set_value(5)
    at.number_input(key="transcript_budget").set_value(9000)
    at.radio(key="summarizer").set_value("openai")
    run(at)
    at.text_input(key="base_url").set_value("http://127.0.0.1:9/v1")
    run(at)
    at.radio(key="summarizer").set_value("offline")  # hides the endpoint fields
    run(at)
    at.sidebar.toggle(key="summarize_on").set_value(False)  # hides everything
    run(at)
    assert "summary_prompt" not in [area.key for area in at.text_area]  # really not drawn
    run(at)
    at.sidebar.toggle(key="summarize_on").set_value(True)
    run(at)
    assert at.text_area(key="summary_prompt").value == "Summarize in haiku."
    assert at.number_input(key="keep_steps").value == 5
    assert at.number_input(key="transcript_budget").value == 9000
    at.radio(key="summarizer").set_value("openai")
    run(at)
    assert at.text_input(key="base_url").value == "http://127.0.0.1:9/v1"


def test_the_limit_cannot_go_below_the_threshold_and_follows_it_up():
    at = start()
    threshold = at.session_state["threshold"]
    at.checkbox(key="limit_follows_threshold").set_value(False)
    run(at)
    limit = at.number_input(key="summarize_over")
    assert limit.min == threshold and limit.value == threshold
    at.sidebar.number_input(key="threshold").set_value(threshold + 7000)
    run(at)
    assert at.number_input(key="summarize_over").value == threshold + 7000
    assert at.number_input(key="summarize_over").min == threshold + 7000
    assert f"followed the threshold up from {threshold:,} to {threshold + 7000:,}" in captions(at)


def test_the_transcript_budget_is_shown():
    at = start()
    assert "reads at most 24,000 tokens of history" in captions(at)
    assert "left out" in at.number_input(key="transcript_budget").proto.help


def _endpoint(at: AppTest, base_url: str, typed: str = "") -> AppTest:
    at.radio(key="summarizer").set_value("openai")
    run(at)
    at.text_input(key="base_url").set_value(base_url)
    at.text_input(key="llm_model").set_value("stub-model")
    at.text_input(key="api_key").set_value(typed)
    run(at)
    next(b for b in at.sidebar.button if b.label == "Test connection").click()
    return run(at)


def test_the_operator_key_goes_only_to_listed_hosts(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-operator-env")
    with StubServer() as server:
        at = _endpoint(start(), server.base_url)
        assert server.requests[-1]["headers"]["authorization"] == "Bearer not-needed"  # the key stayed home
        text = captions(at)
        assert "gets a key only if you type one" in text
        assert "OPENAI_API_KEY" not in text and "environment" not in text and "secrets" not in text
        monkeypatch.setenv("PLAYGROUND_KEY_HOSTS", "127.0.0.1")
        at = _endpoint(at, server.base_url)
        assert server.requests[-1]["headers"]["authorization"] == "Bearer sk-operator-env"
        assert "Key: a key configured by the operator." in captions(at)
        at = _endpoint(at, server.base_url, typed="sk-typed-here")
        assert server.requests[-1]["headers"]["authorization"] == "Bearer sk-typed-here"
    assert "sk-operator-env" not in captions(at) + str([e.value for e in at.error])


def test_a_key_in_secrets_obeys_the_hosts_in_secrets():
    with StubServer() as server:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
        at.secrets["OPENAI_API_KEY"] = "sk-operator-secret"
        at = _endpoint(run(at), server.base_url)
        assert server.requests[-1]["headers"]["authorization"] == "Bearer not-needed"
        at.secrets["PLAYGROUND_KEY_HOSTS"] = "127.0.0.1"
        at = _endpoint(at, server.base_url)
        assert server.requests[-1]["headers"]["authorization"] == "Bearer sk-operator-secret"


def test_credentials_in_the_base_url_are_not_shown():
    with StubServer() as server:
        url = server.base_url.replace("http://", "http://alice:hunter2@")
        at = _endpoint(start(), url)
    shown = "\n".join(e.value for kind in ("success", "error", "caption") for e in at.sidebar.get(kind))
    assert "connected: stub-model at 127.0.0.1" in shown and "hunter2" not in shown and "alice" not in shown


def test_still_over_and_the_three_stages_are_on_the_page():
    at = start()
    at.sidebar.number_input(key="threshold").set_value(500)
    run(at)
    assert any(w.value.startswith("Still over: the request is") for w in at.warning)
    stages = next(c.value for c in at.caption if c.value.startswith("Before: "))
    assert "→ after compaction: " in stages and "reversible" in stages and "lossy" in stages
