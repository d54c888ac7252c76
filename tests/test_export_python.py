"""The Python export runs: its compactor, executed from the exported file, gives exactly the
engine's output on every preset, every real trace, every session log the readers can load and
generated requests in every format."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playground import formats
from playground.compaction import Settings, compact
from playground.conversation import Conversation
from playground.errors import InputError
from playground.export.python import export_python
from playground.meter.tokens import Meter
from playground.rules.ruleset import Rules, load_rules
from playground.tune.rulesets import RULESETS
from playground.workbench import presets

from . import strategies
from .conftest import SHARED, TRACES, shared

API_FORMATS = ("chat", "responses", "anthropic")


def _module(source: str, folder: Path):
    """Import the exported source from a file, as a person would."""
    path = folder / "compaction_rules.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"compaction_rules_{abs(hash(source))}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclass-free, but annotations may look the module up
    spec.loader.exec_module(module)
    return module


def _api(conversation: Conversation) -> Conversation:
    """The conversation in an API format (the native document becomes Chat Completions)."""
    if conversation.format in API_FORMATS:
        return conversation
    return formats.read(formats.write(conversation, "chat"), "chat")


def _same(conversation: Conversation, rules: Rules, settings: Settings, folder: Path) -> int:
    """Run both and compare; the number of edits, so a test can see the rules did something."""
    conversation = _api(conversation)
    meter = Meter(conversation.model)
    engine = compact(conversation, rules, settings, meter=meter)
    exported = _module(export_python(rules, settings, conversation.model), folder)
    out = exported.compact(formats.write(conversation), format=conversation.format,
                           count_tokens=lambda text: len(meter.encoding.encode_ordinary(text)))
    assert out == formats.write(engine.conversation)
    return len(engine.report.edits)


def _conversations() -> list[tuple[str, Conversation]]:
    found = [(f"preset:{p.key}", p.conversation) for p in presets.list_presets()]
    if TRACES.is_dir():
        found += [(f"trace:{path.stem}", formats.loads(path.read_bytes())) for path in sorted(TRACES.glob("*.json"))]
    return found


CASES = [(name, conversation, keep) for name, conversation in _conversations() for keep in (0, 3)]


@pytest.mark.parametrize(("name", "conversation", "keep_recent"), CASES, ids=[f"{c[0]}-k{c[2]}" for c in CASES])
@pytest.mark.parametrize("ruleset", ["preset", "suggested", "aggressive", "masking"])
def test_exported_code_gives_the_engines_output(name, conversation, keep_recent, ruleset, tmp_path):
    if ruleset == "preset":
        preset = {f"preset:{p.key}": p for p in presets.list_presets()}.get(name)
        rules = preset.rules if preset else RULESETS["book"].make(conversation)
    else:
        rules = RULESETS[ruleset].make(conversation)
    edits = _same(conversation, rules, Settings(threshold=0, keep_recent=keep_recent), tmp_path)
    if ruleset == "masking" and keep_recent == 0:
        assert edits  # every conversation here has a tool result the model has read


SESSIONS = sorted((SHARED / "sessions").glob("*.jsonl")) if (SHARED / "sessions").is_dir() else []


@pytest.mark.parametrize("path", SESSIONS, ids=[p.name for p in SESSIONS])
def test_exported_code_on_agent_session_logs(path, tmp_path):
    try:
        conversation = formats.loads(shared(path).read_bytes())
    except InputError as exc:
        pytest.skip(f"formats cannot read {path.name} on this branch yet ({exc})")
    assert _same(conversation, RULESETS["suggested"].make(conversation), Settings(threshold=0, keep_recent=3), tmp_path)


RULES = [
    load_rules({"tool_calls": [{"tool": "create_file", "argument": "content", "replacement": "[{chars} saved]"}],
                "tool_results": [{"tool": t, "template": "{tool}: {file_path} {query} ({lines} lines, {tokens} t)"}
                                 for t in ("read_file", "search_web", "bash", "tavily_search")]}),
    load_rules({"tool_results": [{"tool": "bash", "template": "{command}", "min_tokens": 3},
                                 {"tool": "read_file", "template": "gone", "enabled": False}]}),
    # Tool patterns, a call rule naming the argument it replaces, a tiny value cap, own error patterns,
    # min_tokens on a call rule (compared with the content's own tokens, never the whole call's).
    load_rules({"tool_calls": [{"tool": "*", "argument": "command", "replacement": "{command} [cut: {chars}]"},
                               {"tool": "create_*|bash", "argument": "content", "replacement": "[{lines} lines]",
                                "min_tokens": 20}],
                "tool_results": [{"tool": "read_*|bash", "template": "{tool} {file_path}: {lines} lines"},
                                 {"tool": "*", "template": "[{tool} output omitted]"}],
                "value_limit": 5, "error_patterns": [{"name": "starts with a", "pattern": "^a"}]}),
]
REQUESTS = {"chat": strategies.chat_requests(), "responses": strategies.responses_requests(),
            "anthropic": strategies.anthropic_requests()}


@pytest.mark.parametrize("name", sorted(REQUESTS))
@given(data=st.data(), rules=st.sampled_from(RULES), keep_recent=st.integers(0, 3), compact_errors=st.booleans(),
       detect_errors=st.booleans())
def test_exported_code_on_generated_requests(name, data, rules, keep_recent, compact_errors, detect_errors,
                                             tmp_path_factory):
    conversation = formats.read(data.draw(REQUESTS[name]))
    settings = Settings(threshold=0, keep_recent=keep_recent, compact_errors=compact_errors,
                        detect_errors=detect_errors)
    _same(conversation, rules, settings, tmp_path_factory.mktemp("export"))


def test_exported_module_uses_only_the_standard_library_and_documents_its_counter(tmp_path):
    source = export_python(RULES[0], Settings(threshold=1234))
    imports = {line.split()[1].split(".")[0] for line in source.splitlines() if line.startswith(("import ", "from "))}
    assert imports <= {"__future__", "argparse", "copy", "fnmatch", "gzip", "hashlib", "json", "os", "re", "sys",
                       "tempfile", "collections", "pathlib", "typing"}  # tiktoken only inside tiktoken_counter
    assert "count_tokens" in source and "four characters" in source
    assert 'tiktoken.get_encoding("o200k_base")' not in source  # it downloads: offline it fails
    module = _module(source, tmp_path)
    assert module.CONFIG["threshold"] == 1234
    request = [{"role": "user", "content": "hi"}]
    assert module.compact(request) == request  # below the (estimated) threshold: unchanged
    big = {"messages": [{"role": "user", "content": "x"},
                        {"role": "assistant", "content": None, "tool_calls": [
                            {"id": "c", "type": "function",
                             "function": {"name": "bash", "arguments": '{"command": "ls"}'}}]},
                        {"role": "tool", "tool_call_id": "c", "content": "y " * 5000},
                        {"role": "assistant", "content": "done"}]}
    out = module.compact(big)  # chars/4 by default
    assert out["messages"][2]["content"] == "bash: unknown unknown (1 lines, 2500 t)"
    assert big["messages"][2]["content"] == "y " * 5000  # the caller's request is never changed
    with pytest.raises(ValueError, match="format must be"):
        module.compact(big, format="gemini")
    assert json.dumps(out)


def test_a_claude_call_rules_min_tokens_reads_the_argument_not_the_call(tmp_path):
    # A short new_string next to a large old_string: the call is large (and Claude's per-key overheads
    # add to it), the argument is not; the export must leave it exactly as the engine does.
    body = {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": [
        {"role": "user", "content": "Fix the typo."},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Edit", "input": {
            "file_path": "a.py", "old_string": "def f():\n    return 1\n" * 100, "new_string": "return 2"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok " * 40}]},
        {"role": "assistant", "content": "Fixed."}]}
    rules = load_rules({"tool_calls": [{"tool": "Edit", "argument": argument, "replacement": "[gone]", "min_tokens": 30}
                                       for argument in ("new_string", "old_string")],
                        "tool_results": [{"tool": "Edit", "template": "{tokens} tokens"}]})
    conversation = formats.read(body)
    settings = Settings(threshold=0)
    report = compact(conversation, rules, settings).report
    assert [s.detail.split(" is ")[0] for s in report.skipped] == ["argument 'new_string'"]
    assert [e.argument for e in report.edits] == ["old_string", None]
    assert _same(conversation, rules, settings, tmp_path) == 2


VOCAB = Path(__file__).resolve().parent.parent / "playground" / "vocab"
OFFLINE = {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}  # any download fails at once


def _command(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """The exported compactor run as a person runs it: ``python compactor.py …`` in its folder."""
    environ = {key: value for key, value in os.environ.items() if key != "TIKTOKEN_CACHE_DIR"} | OFFLINE
    return subprocess.run([sys.executable, "compactor.py", *args], cwd=folder, capture_output=True, text=True,
                          env=environ, check=False)


@pytest.mark.parametrize("key", ["coding-agent", "anthropic-support", "research-agent"])
def test_the_exported_compactor_runs_from_the_command_line_offline(key, tmp_path):
    preset = next(p for p in presets.list_presets() if p.key == key)
    conversation, settings = preset.conversation, Settings(threshold=0, keep_recent=1)
    engine = compact(conversation, preset.rules, settings, meter=Meter(conversation.model))
    assert engine.report.edits
    (tmp_path / "compactor.py").write_text(export_python(preset.rules, settings, conversation.model))
    (tmp_path / "in.json").write_text(json.dumps(formats.write(conversation)))
    encoding = Meter(conversation.model).choice.encoding
    done = _command(tmp_path, "in.json", "-o", "out.json", "--vocab", str(VOCAB / f"{encoding}.tiktoken.gz"))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert json.loads((tmp_path / "out.json").read_text()) == formats.write(engine.conversation)  # exactly the engine's
    estimated = _command(tmp_path, "in.json")  # no counter: stdout, and a note saying what that changes
    assert estimated.returncode == 0 and json.loads(estimated.stdout)
    assert "estimated at four characters" in estimated.stderr and "--vocab" in estimated.stderr


def test_the_exported_command_line_refuses_bad_input_in_one_line(tmp_path):
    (tmp_path / "compactor.py").write_text(export_python(RULES[0], Settings(threshold=0)))
    (tmp_path / "bad.json").write_text("{not json")
    for args in (("missing.json",), ("bad.json",), ("bad.json", "--vocab", "nowhere.tiktoken")):
        done = _command(tmp_path, *args)
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
