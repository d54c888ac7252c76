"""``probe --questions``, end to end against a real local HTTP server in both wire formats
(tests/probe_stub.py answers a question with the planted facts its request holds, so a fact a policy
hid is a wrong answer), its failures one located line each, and the invariant that every question asks
about a fact of the ledger stated before its call, which the request as it was still holds.

The run is ``facts_run``: a requirement naming out/summary_v2.csv and one only a judge can grade, a
file written at step 0, ``python run_checks.py`` failing at step 1 (exit code 3, PlantedConfigError),
then four files read; 7 calls. clear-tool-uses with ``--trigger 100 --keep 1 --clear-inputs`` fires at
calls 2 to 6 and clears step 0's call (the path) from call 2, step 1's result from call 3."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import playground as pg
from playground import cli, formats, quiz
from playground.facts.ledger import Ledger
from playground.facts.spans import searched_text
from playground.llm.failure import LLMError
from playground.meter.tokens import Meter
from playground.policies import make
from playground.probe import Action
from playground.run.prices import read_prices
from playground.run.replay import call_starts

from .conftest import SHARED, shared
from .probe_stub import PLANTED, ProbeServer, facts_run
from .test_ledger import REAL_RUNS

POLICY = ["--strategy", "clear-tool-uses", "--trigger", "100", "--keep", "1", "--clear-inputs"]
CLEAR = {"trigger": 100, "keep": 1, "clear_tool_inputs": True}


def write(tmp_path, data: dict, wire: str = "chat"):
    conversation = formats.read(data)
    path = tmp_path / f"run.{wire}.json"
    path.write_text(json.dumps(formats.write(formats.convert(conversation, wire) if wire != "chat" else conversation)))
    return path


def ask_cli(capsys, path, server: ProbeServer, provider: str, *extra: str) -> tuple[int, str, str]:
    base = server.url + ("/v1" if provider == "openai" else "")
    code = cli.main(["probe", str(path), *POLICY, "--base-url", base, "--llm-model", "probe-model",
                     "--provider", provider, "--questions", *extra])
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


def _row(data: dict, call: int, kind: str) -> dict:
    return next(row for row in data["questions"] if row["call"] == call and row["type"] == kind)


# --- end to end, both wire formats -------------------------------------------------------------

@pytest.mark.parametrize("wire", ["chat", "anthropic"])
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_hidden_fact_is_answered_right_as_it_was_and_wrong_as_compacted(tmp_path, server, capsys, wire,
                                                                          provider):
    code, out, err = ask_cli(capsys, write(tmp_path, facts_run(), wire), server, provider, "--at", "2,3", "--yes",
                             "--json")
    assert code == 0, err
    data = json.loads(out)
    assert [(row["call"], row["type"]) for row in data["questions"]] == [
        (call, kind) for call in (2, 3) for kind in quiz.TYPES]
    written = _row(data, 2, "files_written")
    assert written["expected"] == ["src/planted_fix.py"] and written["graded"] == "exact"
    assert (written["correct_full"], written["correct_compacted"]) == (True, False)  # the policy hid the path
    assert "src/planted_fix.py" in written["full"] and "src/planted_fix.py" not in written["compacted"]
    status = [_row(data, call, "command_status") for call in (2, 3)]
    assert [row["expected"] for row in status] == [["3"], ["3"]]
    assert [(row["correct_full"], row["correct_compacted"]) for row in status] == [(True, True), (True, False)]
    error = _row(data, 3, "last_error")
    assert error["expected"] == ["PlantedConfigError", "alpha_9"] and error["correct_compacted"] is False
    said = _row(data, 2, "requirement")  # a requirement lives in the user's message, which the policy keeps
    assert said["expected"] == ["out/summary_v2.csv"] and said["correct_full"] is said["correct_compacted"] is True
    judged = _row(data, 3, "requirement")  # no exact token: without --judge it is asked, not graded
    assert judged["graded"] == "judge" and judged["correct_full"] is None and judged["full"]
    assert data["by_type"]["files_written"] == {"asked": 2, "graded_full": 2, "graded_compacted": 2,
                                                "correct_full": 2, "correct_compacted": 0}
    assert data["sent_requests"] == 20 == len(server.requests)
    path_sent = "/v1/messages" if provider == "anthropic" else "/v1/chat/completions"
    assert {request["path"] for request in server.requests} == {path_sent}
    first = server.requests[0]["body"]
    assert first["tool_choice"] in ("none", {"type": "none"}) and first["temperature"] == 0
    assert "which files have you created or modified" in json.dumps(first["messages"][-1])
    conversation = formats.read(json.loads(write(tmp_path, facts_run(), wire).read_text()))
    planned = quiz.plan(conversation, quiz.questions(conversation, make("clear-tool-uses", **CLEAR),
                                                      Meter(conversation.model), at=(2, 3)),
                       Meter(conversation.model), read_prices().get("probe-model"), provider)
    assert data["tokens_sent"] == planned.tokens > 0


def test_the_judge_grades_what_no_exact_token_can_and_is_in_the_estimate(tmp_path, server, capsys):
    path = write(tmp_path, facts_run())
    code, out, err = ask_cli(capsys, path, server, "openai", "--at", "2,3", "--judge")
    assert code == 0 and server.requests == []  # judged: both next steps and call 3's requirement, each side
    assert "estimate: 26 requests (each question as it was and as compacted, 6 judge calls at most)" in out
    code, out, err = ask_cli(capsys, path, server, "openai", "--at", "2,3", "--judge", "--yes", "--json")
    data = json.loads(out)
    assert code == 0, err
    said, step = _row(data, 3, "requirement"), _row(data, 3, "next_step")
    assert said["expected"] == ["Never touch the legacy configuration loader."]
    assert (said["correct_full"], said["correct_compacted"]) == (True, True)  # the stub's judge: the loader named
    assert (step["correct_full"], step["correct_compacted"]) == (False, False)  # read_file f1.py: never named
    assert data["sent_requests"] == 26 == len(server.requests) and data["estimate"]["judge_calls"] == 6
    judge = server.requests[-1]["body"]
    assert "tools" not in judge and "Reference: read_file" in judge["messages"][0]["content"]


def test_the_default_calls_are_where_the_policy_fired_and_the_cap_holds(tmp_path, server, capsys):
    code, out, err = ask_cli(capsys, write(tmp_path, facts_run()), server, "openai", "--max-questions", "7")
    assert code == 0, err
    assert out.startswith("asking 7 questions at 2 calls (2, 6): ")
    assert "nothing sent: add --yes to send 14 requests" in out and server.requests == []
    code, out, err = ask_cli(capsys, write(tmp_path, facts_run()), server, "openai", "--at", "9")
    assert code == 2 and "--at" in err and "the run has 7 calls" in err


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_failures_give_one_located_line_each_and_the_other_questions_go_on(tmp_path, capsys, provider):
    # step n's result ends call n+1's request, just before the question: 500 at call 3, a hang at 4, bad JSON at 5
    path = write(tmp_path, facts_run({2: "\nFAIL-500", 3: "\nHANG", 4: "\nBAD-JSON"}))
    with ProbeServer(hang_seconds=3.0) as server:
        code, out, err = ask_cli(capsys, path, server, provider, "--at", "3,4,5,6", "--max-questions", "4",
                                 "--timeout", "1", "--yes", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert [row["call"] for row in data["questions"]] == [3, 4, 5, 6]
    lines = [line for line in err.splitlines() if "probe: question" in line]
    assert len(lines) == 6, err
    assert lines[0].startswith("python -m playground: probe: question 1 (files_written, call 3), as it was: ")
    assert "(500)" in lines[0] and "question 1 (files_written, call 3), as compacted: " in lines[1]
    assert all("question 2 (" in line and "call 4), " in line and "did not answer" in line for line in lines[2:4])
    assert all("question 3 (" in line and "call 5), " in line and "not JSON" in line for line in lines[4:6])
    failed = data["questions"][:3]
    assert all(row["full"] is None and row["correct_full"] is None and len(row["errors"]) == 2 for row in failed)
    last = data["questions"][3]
    assert last["full"] and "errors" not in last and data["sent_requests"] == 8


# --- the invariant: a question asks about a fact stated before its call -------------------------

def _asks_about_facts_before_its_call(conversation, policy) -> set[str]:
    """The types of the questions asked at every call (at most the default number), each checked."""
    ledger = Ledger.of(conversation)
    starts = call_starts(conversation.items)
    asked = quiz.questions(conversation, policy, Meter("gpt-4o"), at=tuple(range(len(starts))))
    for question in asked:
        start = starts[question.call]
        assert all(source < start for source in question.sources)
        stated = [fact for fact in ledger.facts if fact.item in question.sources]
        for token in question.expected:
            if question.type == "command_status":
                assert question.reference.startswith("exit ") and question.reference.split()[1] == token
                assert any(fact.type == "command" for fact in stated)
            else:
                assert any(token in fact.text for fact in stated), (question, token)
        full = "\n".join(searched_text(item) for item in question.full.items)
        assert question.full.items == conversation.items[:start] and quiz.grade(question.expected, full) is not False
    return {question.type for question in asked}


_STEPS = st.lists(st.one_of(
    st.tuples(st.just("write"), st.sampled_from(["src/a.py", "lib/b_2.py", "c.txt", "docs/d.md"])),
    st.tuples(st.just("run"), st.sampled_from(["make test", "pytest -x tests", "python run.py"]),
              st.integers(0, 4), st.sampled_from(["", "ValueError: bad value_7", "KeyError: 'k_1'"])),
    st.tuples(st.just("read"), st.sampled_from(["src/a.py", "setup.cfg"]))), min_size=1, max_size=8)


def _generated(steps, requirement: str) -> dict:
    messages = [{"role": "user", "content": requirement}]
    for n, step in enumerate(steps):
        if step[0] == "write":
            name, arguments, result = "write_file", {"path": step[1], "content": "x = 1\n"}, "ok"
        elif step[0] == "read":
            name, arguments, result = "read_file", {"path": step[1]}, "text of the file"
        else:
            name, arguments, result = "bash", {"command": step[1]}, f"{step[3]}\nExit code {step[2]}"
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": result})
    messages.append({"role": "assistant", "content": "Done."})
    return {"model": "gpt-4o", "messages": messages}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_STEPS, st.sampled_from(["You must keep the output in out/r_1.csv only.", "Never touch the parser module.",
                                "Fix it."]),
       st.sampled_from([("masking", {"window": 1}), ("clear-tool-uses", CLEAR), ("none", {})]))
def test_every_question_asks_about_a_fact_stated_before_its_call(steps, requirement, policy):
    _asks_about_facts_before_its_call(formats.read(_generated(steps, requirement)), make(policy[0], **policy[1]))


@pytest.mark.parametrize("name", REAL_RUNS)
def test_on_real_runs_too(name):
    conversation = pg.load(shared(SHARED / name))
    assert len(_asks_about_facts_before_its_call(conversation, make("masking", window=10))) >= 3


# --- grading ------------------------------------------------------------------------------------

def test_exact_tokens_are_found_as_whole_tokens_ignoring_case_and_a_path_by_its_file_name():
    assert quiz.found("src/planted_fix.py", "I changed `planted_fix.py`.")
    assert quiz.found("3", "It exited with status 3.") and not quiz.found("3", "exit 13, line 3.5")
    assert quiz.found("PlantedConfigError", "a plantedconfigerror") and not quiz.found("alpha_9", "alpha_90")
    assert not quiz.found("src/planted_fix.py", "old_planted_fix.py")
    assert quiz.exact_tokens("Write out/summary_v2.csv and run make 3 times (v1.2, fooBar).") == (
        "out/summary_v2.csv", "v1.2", "fooBar")


@given(st.from_regex(r"[A-Za-z0-9_./-]{1,30}", fullmatch=True).filter(lambda t: t.strip("./-")),
       st.sampled_from(["{}", "`{}`", "It was {}.", "({}), then", "'{}'"]))
def test_a_token_said_in_a_sentence_is_found(token, sentence):
    assert quiz.found(token, sentence.format(token))


def test_planted_facts_are_what_the_stub_recalls():
    run = json.dumps(facts_run())
    assert all(fact in run for fact in PLANTED)


# --- asking, offline: the function a page calls, with any sender ---------------------------------

def test_a_judge_that_fails_or_answers_neither_yes_nor_no_is_named_and_leaves_the_answer_ungraded():
    conversation = formats.read(facts_run())
    meter = Meter("gpt-4o")
    asked = [q for q in quiz.questions(conversation, make("clear-tool-uses", **CLEAR), meter, at=(2,))
             if q.type == "next_step"]
    planned = quiz.plan(conversation, tuple(asked), meter, read_prices().get("gpt-4o"), "openai", judge=True)
    verdicts = iter([LLMError("127.0.0.1:1 answered with an error (500): down"), "Perhaps."])

    def send(body, size):
        if "tools" in body:  # the question itself
            return Action(text="I will read f0.py next.")
        verdict = next(verdicts)
        if isinstance(verdict, Exception):
            raise verdict
        return Action(text=verdict)

    seen = []
    asking = quiz.ask(planned, send, seen.append)
    (answer,) = asking.answers
    assert seen == [answer] and answer.full == answer.compacted == "I will read f0.py next."
    assert answer.correct_full is None and answer.correct_compacted is None
    assert answer.errors == ("the judge of as it was: 127.0.0.1:1 answered with an error (500): down",
                             "the judge of as compacted: answered neither YES nor NO ('Perhaps.')")
    assert asking.sent_requests == 4 and asking.tokens_sent > planned.asked[0].tokens_full


@pytest.mark.parametrize(("provider", "name"), [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")])
def test_a_key_is_never_in_the_output_even_when_the_server_echoes_it(tmp_path, capsys, monkeypatch, provider, name):
    key = "sk-recall-secret-0123456789abcdef"
    monkeypatch.setenv(name, key)
    monkeypatch.setenv("PLAYGROUND_KEY_HOSTS", "127.0.0.1")
    path = write(tmp_path, facts_run({1: "\nFAIL-500"}))  # call 2's questions: the server echoes the key
    with ProbeServer() as server:
        code, out, err = ask_cli(capsys, path, server, provider, "--at", "2", "--yes", "--json")
    assert code == 0, err
    assert "(500)" in err and key not in out + err


def test_the_question_options_without_questions_are_refused(tmp_path, server, capsys):
    code = cli.main(["probe", str(write(tmp_path, facts_run())), *POLICY, "--base-url", server.url + "/v1",
                     "--llm-model", "probe-model", "--judge"])
    assert code == 2 and "add --questions" in capsys.readouterr().err and server.requests == []


# --- what a page shows: the rows and the located failures (quiz.results) ---------------------------

def test_the_pages_rows_say_per_type_and_per_question_what_was_right_and_locate_each_failure():
    conversation = formats.read(facts_run())
    meter = Meter("gpt-4o")
    asked = quiz.questions(conversation, make("clear-tool-uses", **CLEAR), meter, at=(2,))
    planned = quiz.plan(conversation, asked, meter, read_prices().get("gpt-4o"), "openai")
    assert [row["#"] for row in quiz.question_rows(planned)] == [1, 2, 3, 4, 5]
    first = quiz.question_rows(planned)[0]
    assert (first["type"], first["a right answer says"], first["graded"]) == (
        "files written", "src/planted_fix.py", "exact")
    assert first["question"].startswith("which files have you created or modified")

    def send(body, size):  # a model that recalls the path when its request holds it; the error question fails
        text = json.dumps(body["messages"][:-1])
        if "last error" in json.dumps(body["messages"][-1]):
            raise LLMError("127.0.0.1:1 answered with an error (500): down")
        return Action(text="I wrote src/planted_fix.py." if "planted_fix" in text else "I do not remember.")

    asking = quiz.ask(planned, send)
    rows = {row["type"]: row for row in quiz.type_rows(asking)}
    assert (rows["files written"][quiz.FULL_RIGHT], rows["files written"][quiz.COMPACTED_RIGHT]) == (
        "1 of 1", "0 of 1")  # clear-inputs took the path from the policy's request at call 2
    assert rows["last error"][quiz.FULL_RIGHT] == "not graded" and rows["next step"]["asked"] == 1
    answer = quiz.answer_rows(asking)[0]
    assert (answer["full"], answer["policy's"], answer["answer, policy's request"]) == (
        "right", "wrong", "I do not remember.")
    assert quiz.failures(asking) == [
        "question 4 (last_error, call 2), as it was: 127.0.0.1:1 answered with an error (500): down",
        "question 4 (last_error, call 2), as compacted: 127.0.0.1:1 answered with an error (500): down"]
    failed = quiz.answer_rows(asking)[3]
    assert (failed["full"], failed["answer, full request"]) == ("—", "")
