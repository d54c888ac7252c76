"""Property tests: random bytes, random JSON (and JSONL), random numbers in real documents and
random values in real-format agent logs, fed to the command line and to every loader the page
uses. Each either works or ends with a one-line message (the command line: exit 2, naming the
file) — never a traceback, never "internal error" — and a process per input shows the memory
stays bounded."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from playground import cli, formats
from playground.conversation import Conversation
from playground.errors import InputError
from playground.meter.calibration import load_calibrations, read_pasted
from playground.rules.ruleset import load_rules
from playground.workbench import presets, workspace
from playground.workbench.workspace import Workspace

from .conftest import ROOT
from .strategies import chat_requests

PRESET = presets.list_presets()[0]
SAVED = workspace.to_json(Workspace(PRESET.conversation, PRESET.rules, 5000))
EMPTY = Conversation(items=(), format="chat")

# What the page reads, as the page reads it (ui/state.py, workspace_panel, rules_panel, calibration_panel).
PAGE_LOADERS: dict[str, Callable[[bytes], Any]] = {
    "conversation": lambda data: formats.loads(data, refuse_surrogates=True),
    "workspace": lambda data: workspace.loads(data, "w.json"),
    "rules": lambda data: load_rules(formats.parse_json(data, refuse_surrogates=True)),
    "calibration": lambda data: load_calibrations(formats.parse_json(data)),
    "pasted usage": lambda data: read_pasted(data.decode("utf-8", "replace"), EMPTY),
}

numbers = (st.integers() | st.integers(-10**500, 10**500) | st.floats() | st.sampled_from([1e308, -0.0, 2**53 + 1]))
json_values = st.recursive(st.none() | st.booleans() | numbers | st.text(max_size=20),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                       max_size=4), max_leaves=25)


def _numeric_paths(value: Any, path: tuple = ()) -> list[tuple]:
    """The path of every number in a JSON document (bools are not numbers)."""
    if isinstance(value, dict):
        return [found for key, child in value.items() for found in _numeric_paths(child, (*path, key))]
    if isinstance(value, list):
        return [found for index, child in enumerate(value) for found in _numeric_paths(child, (*path, index))]
    return [path] if isinstance(value, int | float) and not isinstance(value, bool) else []


def _replaced(document: Any, path: tuple, value: Any) -> Any:
    copy = json.loads(json.dumps(document))
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return copy


@st.composite
def documents_with_a_random_number(draw: st.DrawFn) -> bytes:
    """A valid workspace (its settings, prices and calibration filled in), rules file or request
    with one of its numbers swapped for a random value (a request without numbers gets a random
    ``extra`` key)."""
    document = draw(st.sampled_from([
        _replaced(_replaced(SAVED, ("replay",), {"window": 10, "trigger": 5, "keep": 3, "clear_at_least": 0,
                                                 "prices": {"gpt-4o": {"input": 2.5}}}),
                  ("calibrations",), {"gpt-4o": 1.1}),
        {"tool_results": [{"tool": "x", "template": "y", "min_tokens": 5}], "value_limit": 80},
    ]) | chat_requests().map(lambda request: {"messages": request} if isinstance(request, list) else request))
    paths = _numeric_paths(document)
    path = draw(st.sampled_from(paths)) if paths else ("extra",)
    return json.dumps(_replaced(document, path, draw(numbers | json_values))).encode()


def _paths(value: Any, path: tuple = ()) -> list[tuple]:
    """The path of every value in a JSON document, containers included."""
    found = [path] if path else []
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    return found + [deeper for key, child in children for deeper in _paths(child, (*path, key))]


LOGS = {path.name: (formats.parse_text(path.read_bytes()), path.suffix == ".jsonl")
        for path in sorted((ROOT / "tests" / "data").iterdir()) if path.is_file() and path.suffix not in (".md", ".db")}


@st.composite
def agent_logs_with_a_random_value(draw: st.DrawFn) -> bytes:
    """One of the small real-format agent logs (tests/data) with any one value swapped for random JSON."""
    data, jsonl = LOGS[draw(st.sampled_from(sorted(LOGS)))]
    changed = _replaced(data, draw(st.sampled_from(_paths(data))), draw(json_values))
    return ("\n".join(map(json.dumps, changed)) if jsonl else json.dumps(changed)).encode()


inputs = (st.binary(max_size=3000) | json_values.map(lambda value: json.dumps(value).encode())
          | st.lists(json_values, max_size=5).map(lambda lines: "\n".join(map(json.dumps, lines)).encode())
          | documents_with_a_random_number() | agent_logs_with_a_random_value())


# Inputs these tests once found (or the issue named), always tried first: random search may miss them.
FOUND = [
    b'{"gpt-4o": ' + b"9" * 400 + b"}",  # a calibration factor of 10**400: OverflowError
    b'{"\\n": null}',  # a line break in a key: a message over two lines
    json.dumps({"input": [{"type": [], "call_id": "c", "output": "x"}]}).encode(),  # TypeError: unhashable list
    b'{"usage": {"prompt_tokens": ' + b"1" * 5000 + b"}}",  # Python reads no integer of 5,000 digits
    b'{"messages": [{"role": "user", "content": "cut \\ud83d"}]}',  # a lone surrogate: UnicodeEncodeError
    b"null",  # a document that is no container (a faster depth check once tripped on it)
    b"\n".join(json.dumps(line).encode() for line in (  # a Claude Code result whose call id is a list: TypeError
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s",
         "message": {"role": "user", "content": "go"}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s", "message": {
            "id": "m1", "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]}},
        {"type": "user", "uuid": "u2", "parentUuid": "a1", "sessionId": "s", "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": [], "content": "x"}]}})),
]


def _examples(test):
    for data in FOUND:
        test = example(data=data)(test)
    return test


def _one_line(error: InputError) -> None:
    assert "\n" not in str(error) and str(error).strip(), repr(error)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=inputs)
@_examples
def test_every_page_loader_reads_or_says_what_is_wrong(data):
    for name, load in PAGE_LOADERS.items():
        try:
            load(data)
        except InputError as error:
            _one_line(error)
        except Exception as error:  # the property: nothing but InputError escapes
            pytest.fail(f"{name} raised {type(error).__name__}: {error}")


COMMANDS = (["count"], ["count", "--json"], ["compact", "--threshold", "0", "--keep-recent", "1"], ["rules"],
            ["rules", "--suggest"], ["replay", "--threshold", "0"], ["compare", "--strategy", "none", "--strategy",
                                                                       "masking"])


def _run(argv: list[str]) -> tuple[int, str]:
    """``python -m playground`` in this process (a few hundred inputs in seconds)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(argv)
        except SystemExit as exit_:  # argparse's own usage errors
            code = exit_.code
    return code, err.getvalue()


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=inputs, command=st.sampled_from(COMMANDS))
@example(data=FOUND[3].replace(b"usage", b"messages"), command=["count"])
@example(data=FOUND[4], command=["compact", "--threshold", "0", "--keep-recent", "1"])
@example(data=FOUND[2], command=["count", "--json"])
def test_the_command_line_exits_0_or_2_with_one_located_line(data, command):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "input.json")
        with open(path, "wb") as file:
            file.write(data)
        code, err = _run([*command, path])
    assert code in (0, 2), err
    assert "internal error" not in err and "Traceback" not in err
    if code == 2:
        assert err.count("\n") == 1 and err.startswith(f"python -m playground: error: {path}"), err


options = st.sampled_from(["--threshold", "--keep-recent", "--keep-steps", "--summarize-over", "--timeout",
                           "--max-input-mb"])


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    from .test_compaction import book_scenario

    path = tmp_path_factory.mktemp("book") / "book.json"
    path.write_text(json.dumps(book_scenario()))
    return path


@settings(max_examples=150)
@given(option=options, value=numbers.map(str) | st.text(max_size=12))
@example(option="--timeout", value="nan")
@example(option="--max-input-mb", value="24106")
def test_random_numbers_on_the_command_line_are_refused_or_used(option, value, book):
    code, err = _run(["compact", str(book), "--no-summarize", option, value] if option != "--timeout" else
                     ["compact", str(book), "--summarizer", "offline", option, value])
    assert code in (0, 2), err
    assert "internal error" not in err and "Traceback" not in err
    if code == 2:
        assert err.count("\n") == 1 and f"argument {option}" in err, err


# The command line in a process of its own, printing its peak memory last on stderr: VmHWM, the
# process's own (ru_maxrss would also count the parent's memory at the fork).
DRIVER = """
import sys
from playground import cli
code = cli.main(sys.argv[1:])
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(int(peak.split()[1]), file=sys.stderr)
sys.exit(code)
"""
BASE_PEAK_MB = 400  # python, tiktoken's vocabulary and the engine: what counting a small request takes


@settings(max_examples=8, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=inputs, command=st.sampled_from([["count", "--json"], ["compact", "--threshold", "0"]]))
def test_each_input_in_a_process_of_its_own_stays_within_bounded_memory(data, command):
    """The timeout is a guard against a hang (each run takes a second or two), not a measure."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "input.json")
        with open(path, "wb") as file:
            file.write(data)
        done = subprocess.run([sys.executable, "-c", DRIVER, *command, path], cwd=ROOT, capture_output=True,
                              text=True, check=False, timeout=300)
    *said, peak_kb = done.stderr.splitlines()
    said = [line for line in said if not line.startswith("python -m playground: note: ")]  # advice, not an error
    assert done.returncode in (0, 2) and len(said) == done.returncode // 2, done.stderr
    assert int(peak_kb) // 1024 < BASE_PEAK_MB, f"{int(peak_kb) // 1024} MB for {len(data)} bytes of input"
