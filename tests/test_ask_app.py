"""*Ask the model* under What it keeps (AppTest), against the local probe stub in both wire formats
(tests/probe_stub.py answers a question with the planted facts its request holds, and counts every
request): the questions and the estimate are listed and nothing is sent before the button; after it,
per type, the answers are right with the full request and wrong with the policy's where the policy
hid the fact; a rerun shows them without sending again; a 500 is one located line and the other
questions are still shown.

The run is ``facts_run`` (7 calls; a file written at step 0, ``python run_checks.py`` failing at step 1
with exit code 3 and a PlantedConfigError). The page's clear-tool-uses with trigger 100 and keep 1
clears every tool result but the newest, never the calls' arguments: at call 3 step 1's result (the
exit status and the error) is gone from the policy's request, while the path written stays in the
write call's arguments. Ten questions are asked at calls 3 and 6, one per type at each. The written path
itself goes where a policy deletes the write call: Cline's truncation on a gpt-4 run (an 8,192-token
window) with longer results, at call 6."""

from __future__ import annotations

import json

import pytest
import streamlit
from streamlit.testing.v1 import AppTest

from playground import formats, quiz
from playground.ui import state

from .conftest import ROOT, show_tab
from .probe_stub import FILLER, ProbeServer, facts_run
from .test_app import paste
from .test_replay_app import healthy

QUESTIONS = 10  # calls 3 and 6, five types each
KEY = "sk-ask-secret-0123456789abcdef"


@pytest.fixture(autouse=True)
def no_keys(monkeypatch):
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "PLAYGROUND_KEY_HOSTS"):
        monkeypatch.delenv(name, raising=False)


def _planted(extra: dict[int, str] | None = None) -> AppTest:
    """The page with the planted run as its conversation, clear-tool-uses' trigger 100 and keep 1."""
    streamlit.cache_data.clear()
    at = healthy(AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run())
    at.session_state[state.CONVERSATION] = formats.read(facts_run(extra))
    at.session_state[state.REPLAY_TRIGGER] = 100
    at.session_state[state.REPLAY_KEEP] = 1
    return at


def _asking(server: ProbeServer, provider: str, at: AppTest, policy: str = "clear-tool-uses",
            questions: int = QUESTIONS) -> AppTest:
    """The What it keeps tab under ``policy``, the questions switched on and the endpoint set to the
    stub: everything up to the send button."""
    show_tab(at, "What it keeps")
    healthy(at.run())
    healthy(at.selectbox(key=state.REPLAY_POLICY).select(policy).run())
    assert not [toggle for toggle in at.toggle if toggle.key == state.ASK_JUDGE]  # nothing drawn until switched on
    healthy(at.toggle(key=state.ASK_ON).set_value(True).run())
    at.radio(key=state.PROBE_PROVIDER).set_value(provider)
    at.text_input(key=state.BASE_URL).set_value(server.url + ("/v1" if provider == "openai" else ""))
    at.text_input(key=state.LLM_MODEL).set_value("probe-model")
    at.number_input(key=state.ASK_QUESTIONS).set_value(questions)
    return healthy(at.run())


def _frame(at: AppTest, column: str):
    return next(frame.value for frame in at.dataframe if column in frame.value.columns)


def _send(at: AppTest):
    return next(button for button in at.button if button.label.startswith("Send "))


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_the_questions_are_listed_sent_only_on_the_click_and_graded_per_type(provider):
    with ProbeServer() as server:
        at = _asking(server, provider, _planted())
        listed = _frame(at, "graded")
        assert [(row.call, row.type) for row in listed.itertuples()] == [
            (call, kind.replace("_", " ")) for call in (3, 6) for kind in quiz.TYPES]
        assert listed["a right answer says"][0] == "src/planted_fix.py"
        captions = "\n".join(caption.value for caption in at.caption)
        assert "Asking 10 questions at 2 calls (3, 6)" in captions
        assert "Estimate: 20 requests (each question as it was and as compacted; without the judge" in captions
        assert _send(at).label.startswith("Send 20 requests (")
        assert server.requests == []  # the questions and the estimate, nothing sent
        healthy(at.toggle(key=state.ASK_JUDGE).set_value(True).run())  # the judge's calls join the estimate
        assert _send(at).label.startswith("Send 26 requests (") and server.requests == []
        healthy(at.toggle(key=state.ASK_JUDGE).set_value(False).run())
        healthy(_send(at).click().run())
        assert len(server.requests) == 20
        [bar] = at.get("progress")  # question by question, inside the status
        assert (bar.proto.value, bar.proto.text) == (100, "Question 10 of 10 answered")
        path = "/v1/messages" if provider == "anthropic" else "/v1/chat/completions"
        assert {request["path"] for request in server.requests} == {path}
        per_type = {row["type"]: (row[quiz.FULL_RIGHT], row[quiz.COMPACTED_RIGHT])
                    for row in _frame(at, quiz.FULL_RIGHT).to_dict("records")}
        assert per_type == {"files written": ("2 of 2", "2 of 2"),  # the path stays in the call's arguments
                            "requirement": ("1 of 1", "1 of 1"),  # the user's message is kept; call 6's: the judge's
                            "command status": ("2 of 2", "0 of 2"),  # step 1's result, cleared from call 3
                            "last error": ("2 of 2", "0 of 2"),
                            "next step": ("not graded", "not graded")}
        answers = _frame(at, "answer, full request")
        status = answers[(answers["call"] == 3) & (answers["type"] == "command status")].iloc[0]
        assert (status["a right answer says"], status["full"], status["policy's"]) == ("3", "right", "wrong")
        assert "Exit code 3" in status["answer, full request"]
        assert "Exit code 3" not in status["answer, policy's request"]
        assert not [error for error in at.error]
        healthy(at.run())  # a rerun shows the answers kept for these inputs without sending again
        assert len(server.requests) == 20 and _frame(at, quiz.FULL_RIGHT) is not None


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_written_path_the_policy_deleted_is_answered_right_in_full_and_wrong_as_compacted(provider):
    """Cline's truncation on gpt-4's 8,192-token window (its limit 6,553) deletes half the history at call 6 of
    the planted run with a longer result at steps 2 to 4: the write call and the failing command go with it."""
    streamlit.cache_data.clear()
    run = facts_run({step: "\n" + FILLER for step in (2, 3, 4)}) | {"model": "gpt-4"}
    with ProbeServer() as server:
        at = paste(healthy(AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()), json.dumps(run))
        assert at.session_state[state.MODEL] == "gpt-4"
        at = _asking(server, provider, at, policy="cline-truncation", questions=5)
        assert "Asking 5 questions at 1 call (6)" in "\n".join(caption.value for caption in at.caption)
        assert server.requests == []
        healthy(_send(at).click().run())
        assert len(server.requests) == 10
    per_type = {row["type"]: (row[quiz.FULL_RIGHT], row[quiz.COMPACTED_RIGHT])
                for row in _frame(at, quiz.FULL_RIGHT).to_dict("records")}
    assert per_type["files written"] == ("1 of 1", "0 of 1")
    assert per_type["command status"] == per_type["last error"] == ("1 of 1", "0 of 1")
    written = _frame(at, "answer, full request").iloc[0]
    assert (written["a right answer says"], written["full"], written["policy's"]) == (
        "src/planted_fix.py", "right", "wrong")
    assert "src/planted_fix.py" in written["answer, full request"]
    assert "src/planted_fix.py" not in written["answer, policy's request"]


def test_a_500_is_one_located_line_each_and_the_other_questions_are_shown(monkeypatch):
    # step 5's result ends call 6's request, just before each question: both sides of call 6 get a 500, whose
    # body echoes the key the operator allowed for this host; the page never shows it
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("PLAYGROUND_KEY_HOSTS", "127.0.0.1")
    with ProbeServer() as server:
        at = _asking(server, "openai", _planted({5: "\nFAIL-500"}))
        healthy(_send(at).click().run())
        assert len(server.requests) == 20
        assert server.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"
    lines = [error.value.replace("\\", "") for error in at.error]  # as written, without markdown's escapes
    assert not [element for element in at.main if KEY in str(getattr(element, "value", ""))]
    assert len(lines) == 10, lines
    assert lines[0].startswith("Question 6 (files_written, call 6), as it was: ") and "(500)" in lines[0]
    assert lines[1].startswith("Question 6 (files_written, call 6), as compacted: ")
    assert all(f"call 6), as {side}" in line for line, side in zip(lines, ["it was", "compacted"] * 5, strict=True))
    answers = _frame(at, "answer, full request")
    shown = answers[answers["call"] == 3]
    assert len(shown) == 5 and all(shown["answer, full request"])  # call 3's questions were answered
    failed = answers[answers["call"] == 6]
    assert set(failed["full"]) == set(failed["policy's"]) == {"—"} and not any(failed["answer, full request"])
    per_type = {row["type"]: row[quiz.FULL_RIGHT] for row in _frame(at, quiz.FULL_RIGHT).to_dict("records")}
    assert per_type["command status"] == "1 of 1"  # graded at call 3 only
