"""Hostile input cannot hang, exhaust or crash the command line or the page: one stated input
limit read with the limit, numbers from files range-checked with their place named, lone UTF-16
surrogates kept (command line) or refused with their place (page), ambiguous call ids and calls
without a result noted. Each case here failed before this was done."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib

import pytest

from playground import formats, limits
from playground.conversation import Conversation
from playground.errors import InputError
from playground.meter.calibration import load_calibrations, read_pasted
from playground.present import render
from playground.rules.ruleset import load_rules
from playground.workbench import presets, workspace
from playground.workbench.workspace import Workspace

from .conftest import ROOT, show_tab
from .test_app import healthy, rerun, start
from .test_hostile_property import DRIVER

PROG = "python -m playground: error: "
EMPTY = Conversation(items=(), format="chat")
TABS = ["Before / after", "Where the tokens go", "Rules", "Conversation", "Export", "Lessons", "Step-through", "Run",
        "What it keeps", "Compare", "Corpus"]
# A conversation with a lone surrogate in a message, a tool argument and a result: JSON can spell
# them (an emoji cut in two), UTF-8 cannot carry them.
SURROGATES = ('{"model": "gpt-4o", "messages": [{"role": "user", "content": "hi \\ud800 there"}, '
              '{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": '
              '{"name": "read_file", "arguments": "{\\"path\\": \\"a\\\\udc00.txt\\"}"}}]}, '
              '{"role": "tool", "tool_call_id": "c1", "content": "x \\udfff y"}]}')


def cli(*args: str, stdin=None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The command line in its own process; ``timeout`` only guards against a hang (each of these
    ends in about a second), it is not a measure."""
    import os

    return subprocess.run([sys.executable, "-m", "playground", *args], cwd=ROOT, stdin=stdin, capture_output=True,
                          check=False, timeout=300, env={**os.environ, **(env or {})})


def _chat(*messages: dict) -> dict:
    return {"model": "gpt-4o", "messages": [{"role": "user", "content": "go"}, *messages]}


def _call(call_id: str, name: str = "read_file", path: str = "a.txt") -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps({"path": path})}}]}


def _result(call_id: str, text: str = "contents " * 50) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


# --- the input size limit --------------------------------------------------------------------------------------


def test_count_dev_zero_ends_at_once_with_the_limit():
    """Before: it grew to 22.7 GB and the system killed it, with no message."""
    done = cli("count", "/dev/zero")
    assert done.returncode == 2
    assert done.stderr.decode() == (f"{PROG}/dev/zero: larger than the limit of 200 MB (set PLAYGROUND_MAX_INPUT_MB "
                                    "or --max-input-mb to change it)\n")


def test_an_endless_pipe_on_stdin_is_cut_off_at_the_limit():
    with open("/dev/zero", "rb") as endless:
        done = cli("count", "-", "--max-input-mb", "5", stdin=endless)
    assert done.returncode == 2 and "stdin: larger than the limit of 5 MB" in done.stderr.decode()


def test_a_file_over_the_limit_is_refused_from_its_size(tmp_path):
    big = tmp_path / "big.json"
    big.write_bytes(b"[" + b"1," * (1024 * 1024) + b"1]")  # 2 MB
    for args, env in ((["--max-input-mb", "1"], None), ([], {"PLAYGROUND_MAX_INPUT_MB": "1"})):
        done = cli("count", str(big), *args, env=env)
        assert done.returncode == 2 and f"{big}: larger than the limit of 1 MB" in done.stderr.decode()
    said = cli("count", str(big), "--max-input-mb", "3").stderr.decode()
    assert said.endswith("unrecognised format: expected a Chat Completions message list or request (messages), a "
                         "Responses request (input), an Anthropic Messages request (system/messages with content "
                         "blocks), a compaction-playground document (items), or an agent log: Claude Code session "
                         "log (JSONL); Codex CLI rollout (JSONL); SWE-agent trajectory (.traj); mini-SWE-agent "
                         "trajectory (.traj.json); Gemini CLI session (.json / .jsonl); Goose session (export .json, "
                         "sessions.db, .jsonl); Aider chat history (.aider.chat.history.md); OpenHands conversation "
                         "(V1 events/ folder or JSONL, V0 trajectory); Cline / Roo Code task (folder or .zip: "
                         "api_conversation_history.json; an SDK session, <id>.messages.json); opencode session "
                         "(storage folder or .zip, opencode.db, opencode export .json); Gemini API contents "
                         "(a generateContent request, or "
                         "a Gemini CLI chat checkpoint); Compaction Playground agent run log (JSONL)\n")


def test_a_bad_limit_setting_is_named():
    done = cli("count", "/dev/zero", env={"PLAYGROUND_MAX_INPUT_MB": "lots"})
    said = "PLAYGROUND_MAX_INPUT_MB: expected a whole number of megabytes, 1 or more: 'lots'"
    assert done.stderr.decode() == f"{PROG}{said}\n"


def test_a_long_list_of_numbers_is_refused_without_exhausting_memory(tmp_path):
    """Before: a 200 MB ``{"messages": [1, 1, …]}`` took 75 s and 16.3 GB before its message, most
    of it a stack of (value, path) pairs in the depth check; now that walk holds one iterator a level."""
    path = tmp_path / "ones.json"
    path.write_bytes(b'{"messages": [' + b"1," * (10 * 1024 * 1024) + b"1]}")  # 20 MB
    done = subprocess.run([sys.executable, "-c", DRIVER, "count", str(path)], cwd=ROOT, capture_output=True,
                          text=True, check=False, timeout=300)
    message, peak_kb = done.stderr.splitlines()
    assert done.returncode == 2 and "unrecognised format" in message
    # json holds 10 million list slots (80 MB) and the text (20 MB); the old walk added 2 GB more.
    assert int(peak_kb) * 1024 < 600 * 1024 * 1024, f"peak {int(peak_kb) // 1024} MB for a 20 MB file"


def test_the_page_upload_limit_is_the_input_limit(monkeypatch):
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == limits.DEFAULT_MAX_INPUT_MB
    assert "STREAMLIT_SERVER_MAX_UPLOAD_SIZE=\"$PLAYGROUND_MAX_INPUT_MB\"" in (ROOT / "scripts" / "app").read_text()
    monkeypatch.setenv(limits.MAX_INPUT_ENV, "7")
    at = start()
    show_tab(at, "Conversation")
    rerun(at)
    assert at.file_uploader(key="upload").proto.max_upload_size_mb == 7
    assert at.sidebar.file_uploader(key="workspace_upload").proto.max_upload_size_mb == 7


def test_a_paste_over_the_limit_is_refused_on_the_page(monkeypatch):
    monkeypatch.setenv(limits.MAX_INPUT_ENV, "1")
    at = start()
    before = at.session_state["conversation"]
    at.text_area(key="paste_text").set_value(json.dumps(_chat({"role": "user", "content": "x" * 1_100_000})))
    at.button(key="FormSubmitter:paste_form-Load pasted JSON").click()
    rerun(at)
    assert any("larger than the limit of 1 MB" in e.value for e in at.error)
    assert at.session_state["conversation"] is before


# --- numbers from files ----------------------------------------------------------------------------------------


def _saved(**changes) -> dict:
    preset = presets.list_presets()[0]
    data = workspace.to_json(Workspace(preset.conversation, preset.rules, 5000))
    data.update(changes)
    return data


@pytest.mark.parametrize(("change", "where"), [
    ({"threshold": 10**400}, "threshold"),  # before: OverflowError on the page
    ({"threshold": 10**18}, "threshold"),  # before: the browser's number box refused it
    ({"threshold": 1e308}, "threshold"),
    ({"keep_recent": 10**20}, "keep_recent"),
    ({"summarization": {"limit": 10**30}}, "summarization.limit"),
    ({"summarization": {"item_budget": 5}}, "summarization.item_budget"),
    ({"replay": {"window": 10**30}}, "replay.window"),
    ({"replay": {"trigger": -1}}, "replay.trigger"),
    ({"replay": {"prices": {"gpt-4o": {"input": 1e308}}}}, "replay.prices.gpt-4o.input"),
    ({"replay": {"prices": {"gpt-4o": {"input": 10**400}}}}, "replay.prices.gpt-4o.input"),
    ({"rules": {"tool_results": [{"tool": "x", "template": "y", "min_tokens": 10**400}]}},
     "rules, tool_results[0].min_tokens"),  # before: OverflowError drawing the rule table
    ({"rules": {"tool_results": [], "value_limit": 10**400}}, "rules, value_limit"),
])
def test_every_number_in_a_workspace_is_range_checked_with_its_place(change, where):
    with pytest.raises(InputError) as caught:
        workspace.loads(json.dumps(_saved(**change)).encode(), "w.json")
    assert str(caught.value).startswith(f"w.json, {where}: expected ")


def test_a_number_too_long_to_read_is_located():
    """Python reads no integer of more than 4,300 digits: json raised a bare ValueError (exit 1)."""
    with pytest.raises(InputError, match=r"^line 2, column 15: a number with more than 4,300 digits"):
        formats.parse_json('{"a": 1,\n "threshold": ' + "9" * 5000 + "}")


def test_rules_file_numbers_are_range_checked():
    with pytest.raises(InputError, match=r"^tool_results\[0\]\.min_tokens: expected a whole number of tokens from 0 "
                                         r"to 1,000,000,000"):
        load_rules({"tool_results": [{"tool": "x", "template": "y", "min_tokens": 10**400}]})


@pytest.mark.parametrize(("option", "value", "said"), [
    ("--threshold", "1" + "0" * 400, "expected a whole number from 0 to 1,000,000,000"),
    ("--keep-recent", "5000", "expected a whole number from 0 to 1,000"),
    ("--keep-steps", "-1", "expected a whole number from 0 to 1,000"),
    ("--max-input-mb", "0", "expected a whole number from 1 to 1,000,000"),
])
def test_command_line_numbers_are_range_checked(option, value, said, book_file):
    done = cli("compact", str(book_file), option, value)
    assert done.returncode == 2 and f"argument {option}: {said}" in done.stderr.decode()


def test_a_page_given_the_largest_numbers_allowed_draws_every_tab():
    """What the range checks let through, the page can draw: open a workspace at every maximum and
    visit each tab."""
    top = _saved(threshold=limits.MAX_TOKENS, keep_recent=limits.MAX_COUNT,
                 summarization={"limit": limits.MAX_TOKENS, "keep_steps": limits.MAX_COUNT,
                                "item_budget": limits.MAX_TOKENS, "transcript_budget": limits.MAX_TOKENS},
                 replay={"window": limits.MAX_COUNT, "trigger": limits.MAX_TOKENS, "keep": limits.MAX_COUNT,
                         "clear_at_least": limits.MAX_TOKENS, "prices": {"gpt-4o": {"input": limits.MAX_PRICE}}})
    at = start()
    at.sidebar.file_uploader(key="workspace_upload").set_value(("top.json", json.dumps(top).encode(),
                                                                "application/json"))
    rerun(at)
    assert at.session_state["threshold"] == limits.MAX_TOKENS and not at.error
    for policy in ("rules", "masking", "clear-tool-uses"):
        for tab in TABS:
            show_tab(at, tab)
            at.session_state["replay_policy"] = policy
            rerun(at)


def test_a_workspace_number_out_of_range_is_a_message_on_the_page_not_a_crash():
    at = start()
    threshold = at.session_state["threshold"]
    at.sidebar.file_uploader(key="workspace_upload").set_value(
        ("huge.json", json.dumps(_saved(threshold=10**400)).encode(), "application/json"))
    rerun(at)
    assert [e.value for e in at.sidebar.error] == [
        "huge.json, threshold: expected a whole number from 0 to 1,000,000,000: "
        "1000000000000000000000000000000000000000000000000000000000000000000000000000000… — nothing was changed."]
    assert at.session_state["threshold"] == threshold


# --- lone UTF-16 surrogates ------------------------------------------------------------------------------------


def test_the_command_line_keeps_lone_surrogates_escaped(tmp_path):
    """Before: compact and count --json exited 1 with an internal error (UnicodeEncodeError)."""
    source = tmp_path / "s.json"
    source.write_text(SURROGATES)
    out, report = tmp_path / "out.json", tmp_path / "report.json"
    compacted = cli("compact", str(source), "--threshold", "0", "-o", str(out), "--report", str(report))
    assert compacted.returncode == 0, compacted.stderr
    assert json.loads(out.read_text()) == json.loads(SURROGATES)  # the same strings, lone surrogates and all
    assert "\\ud800" in out.read_text() and json.loads(report.read_text())["stage"]
    to_stdout = cli("compact", str(source), "--threshold", "0")
    assert to_stdout.returncode == 0 and json.loads(to_stdout.stdout) == json.loads(SURROGATES)
    source.write_text(SURROGATES.replace('"read_file"', '"read_\\ud800"'))  # the tool's name, in the per-item counts
    counted = cli("count", str(source), "--json")
    assert counted.returncode == 0, counted.stderr
    assert "read_\ud800" in [row.get("tool") for row in json.loads(counted.stdout)["items"]]


@pytest.mark.parametrize(("text", "where"), [
    (SURROGATES, "messages[0].content: character 4 is half of a UTF-16 pair"),
    (SURROGATES.replace("hi \\ud800 there", "hi").replace("x \\udfff y", "x"),
     "messages[1].tool_calls[0], arguments.path: character 2"),
])
def test_the_page_loader_refuses_lone_surrogates_with_their_place(text, where):
    with pytest.raises(InputError) as caught:
        formats.loads(text, refuse_surrogates=True)
    assert str(caught.value).startswith(where)
    assert formats.loads('{"messages": [{"role": "user", "content": "\\ud83d\\ude00"}]}', refuse_surrogates=True)


def test_a_workspace_with_a_lone_surrogate_is_refused_with_its_place():
    data = json.dumps(_saved(label="cut \ud83d")).encode()
    with pytest.raises(InputError, match=r"^w\.json, label: character 5 is half of a UTF-16 pair"):
        workspace.loads(data, "w.json")


def test_the_page_refuses_a_surrogate_upload_and_the_next_uploads_work():
    """Before: "Something went wrong (UnicodeEncodeError)", then the uploader did not come back and
    the next two uploads failed."""
    at = start()
    show_tab(at, "Conversation")
    rerun(at)
    source = at.session_state["source"]
    at.file_uploader(key="upload").set_value(("cut.json", SURROGATES.encode(), "application/json"))
    healthy(at.run())
    assert [e.value for e in at.error if "UTF-16" in e.value]
    assert at.session_state["source"] == source
    for name in ("first.json", "second.json"):
        at.file_uploader(key="upload").set_value((name, json.dumps(_chat()).encode(), "application/json"))
        rerun(at)
        assert at.session_state["source"].startswith(name)


# --- call ids: duplicates and calls with no result -------------------------------------------------------------

AMBIGUOUS = _chat({"role": "assistant", "content": None, "tool_calls": [
    {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'}},
    {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "b.txt"}'}}]},
    _result("c1"), _result("c1"), _call("c2"), {"role": "user", "content": "and?"})
NOTES = ["the call id 'c1' is shared by 2 calls (messages[1].tool_calls[0], messages[1].tool_calls[1]) and 2 "
         "results (messages[2], messages[3]): which result answers which call is a guess, so each result is paired "
         "with the latest call before it with that id; messages[3] then answers no call (a rule for that call's "
         "tool still applies, with no arguments to fill its template)",
         "2 calls (messages[1].tool_calls[0], messages[4].tool_calls[0]) with no result: left as they are (a call is "
         "compacted only once its result is in)"]


def test_the_report_says_how_shared_ids_and_unanswered_calls_were_treated(tmp_path):
    """Before: exit 0, nothing compacted and not a word about either."""
    source, report = tmp_path / "dup.json", tmp_path / "report.json"
    source.write_text(json.dumps(AMBIGUOUS))
    done = cli("compact", str(source), "--threshold", "0", "--report", str(report))
    assert done.returncode == 0
    assert json.loads(report.read_text())["notes"] == NOTES
    assert json.loads(cli("count", str(source), "--json").stdout)["notes"] == NOTES


def test_an_id_reused_after_its_call_was_answered_gets_no_note():
    """SWE-agent reuses ids one call at a time: that pairs without doubt."""
    conversation = formats.read(_chat(_call("c1"), _result("c1"), _call("c1", path="b.txt"), _result("c1"),
                                      {"role": "user", "content": "ok"}))
    assert formats.notes(conversation) == ()


def test_the_page_shows_the_pairing_notes():
    at = start()
    at.text_area(key="paste_text").set_value(json.dumps(AMBIGUOUS))
    at.button(key="FormSubmitter:paste_form-Load pasted JSON").click()
    rerun(at)
    shown = [info.value for info in at.info]
    assert all(render.literal(note) in shown for note in NOTES), shown



# --- what the property tests found (tests/test_hostile_property.py) ------------------------------------------


@pytest.mark.parametrize(("load", "where"), [
    (lambda: load_calibrations({"gpt-4o": 10**400}), "calibration.gpt-4o"),  # was OverflowError (math.isfinite)
    (lambda: load_calibrations({"\n": None}), "calibration.\\n"),  # a line break in a key: one line still
    (lambda: formats.read({"input": [{"type": [], "call_id": "c", "output": "x"}]}, "responses"),
     "input[0].type"),  # was TypeError: unhashable type: 'list'
    (lambda: read_pasted('{"usage": {"prompt_tokens": ' + "1" * 5000 + "}}", EMPTY), "pasted usage, line 1"),
])
def test_inputs_the_property_tests_found_are_messages(load, where):
    with pytest.raises(InputError) as caught:
        load()
    assert str(caught.value).startswith(where) and "\n" not in str(caught.value)


def test_a_large_input_limit_does_not_mean_a_buffer_that_large(book_file):
    """``--max-input-mb 24106`` once asked Python for a 24 GB buffer before reading a small file."""
    done = cli("count", str(book_file), "--max-input-mb", "24106")
    assert done.returncode == 0 and int(done.stdout) > 0


def test_a_tool_with_an_empty_name_gets_no_suggested_rule():
    from playground.meter.tokens import Meter
    from playground.tune.suggest import suggest_rules

    conversation = formats.read(_chat(_call("c1", name=""), _result("c1", "x " * 2000),
                                      {"role": "user", "content": "ok"}))
    suggestion = suggest_rules(conversation, Meter("gpt-4o"))
    assert suggestion.rows == () and "a tool with an empty name: no rule can name it" in suggestion.notes


def test_a_claude_code_log_with_a_damaged_line_is_named_by_that_line():
    """A session log with one line broken (a real log viewer's edge-case file: ``contenst``) is
    read as the log it mostly is, and the error names the line — not every format there is."""
    from .conftest import SHARED, shared

    lines = shared(SHARED / "sessions" / "claude-code-session-196820da.jsonl").read_text().splitlines()
    broken = next(n for n, line in enumerate(lines) if json.loads(line).get("type") == "user")
    record = json.loads(lines[broken])
    record["message"]["contenst"] = record["message"].pop("content")
    lines[broken] = json.dumps(record)
    lines.insert(broken + 1, '"massive error"')  # (a line that is no record at all: then no reader claimed it)
    with pytest.raises(InputError) as caught:
        formats.loads("\n".join(lines))
    assert str(caught.value).startswith(f"line {broken + 1}.message.content: expected a list")


def test_text_that_is_neither_json_nor_a_log_says_so():
    """A markdown file that is not an Aider history: what it is not, and the one text log read."""
    with pytest.raises(InputError) as caught:
        formats.loads("# Notes on the run\n\nThe agent read three files.\n")
    assert str(caught.value) == ("unrecognised format: not JSON or JSONL (it begins with the text '# Notes on the "
                                 "run'), and not the one text log read, an Aider chat history ('# aider chat started "
                                 "at …')")
    with pytest.raises(InputError, match=r"line 1, column 14: invalid JSON"):  # JSON gone wrong says where
        formats.loads('{"messages": ]')
