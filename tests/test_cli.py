"""The command line as other tools drive it: real processes, exit codes, one-line errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from .conftest import ROOT, TRACES, shared


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "playground", *args], cwd=ROOT, input=stdin, capture_output=True,
                          text=True, check=False)


def test_count_prints_a_bare_integer(book_file):
    done = cli("count", str(book_file))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().isdigit()


def test_count_json_has_the_fields_tools_rely_on(book_file):
    done = cli("count", str(book_file), "--json")
    data = json.loads(done.stdout)
    assert {"total", "encoding", "exact", "items"} <= set(data)
    assert data["encoding"] == "o200k_base" and data["exact"] is False and data["estimate_because"]
    assert sum(i["tokens"] for i in data["items"]) + data["tools"] + data["instructions"] + data["priming"] == data[
        "total"]
    assert str(data["total"]) == cli("count", str(book_file)).stdout.strip()


def test_count_reads_stdin_and_honours_model_and_format():
    messages = json.dumps([{"role": "user", "content": "hello world"}])
    cl100k = json.loads(cli("count", "-", "--model", "gpt-4", "--json", stdin=messages).stdout)
    assert cl100k["encoding"] == "cl100k_base" and cl100k["exact"] is True
    as_responses = json.loads(cli("count", "-", "--format", "responses", "--json", stdin=messages).stdout)
    assert as_responses["format"] == "responses"


def test_compact_writes_the_conversation_and_the_report(book_file, tmp_path):
    out, report_path = tmp_path / "out.json", tmp_path / "report.json"
    done = cli("compact", str(book_file), "--threshold", "1000", "--report", str(report_path), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    compacted = json.loads(out.read_text())
    assert set(compacted) == {"model", "messages"} and len(compacted["messages"]) == 9
    report = json.loads(report_path.read_text())
    assert {"stage", "tokens_before", "tokens_after", "edits", "skipped", "first_changed_index",
            "cached_prefix_tokens"} <= set(report)
    assert report["stage"] == "compacted" and report["first_changed_index"] == 2
    assert [(e["index"], e.get("block")) for e in report["edits"]] == [(2, 0), (5, None), (7, None)]


def test_compact_defaults_to_the_books_threshold_and_stdout(book_file):
    done = cli("compact", str(book_file))
    assert json.loads(done.stdout) == json.loads(book_file.read_text())  # far below 50,000 tokens: unchanged


def test_compact_keep_recent_leaves_the_newest_answered_pairs_as_they_were(book_file, tmp_path):
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"tool_calls": [{"tool": "create_file", "argument": "content", "replacement": "[s]"}],
                                 "tool_results": [{"tool": "*", "template": "[{tool} output omitted]"}]}))
    source = json.loads(book_file.read_text())["messages"]

    def changed(keep: str) -> list[int]:
        out = tmp_path / f"out{keep}.json"
        done = cli("compact", str(book_file), "--rules", str(rules), "--threshold", "0", "--no-summarize",
                   "--keep-recent", keep, "-o", str(out))
        assert done.returncode == 0, done.stderr
        return [i for i, (a, b) in enumerate(zip(source, json.loads(out.read_text())["messages"], strict=True))
                if a != b]

    # messages 2/3, 4/5, 6/7 are the three tool uses; "Saved report.md" (3) is too small to replace
    assert changed("0") == [2, 5, 7]
    assert changed("1") == [2, 5]
    assert changed("2") == [2]
    assert changed("3") == changed("5") == []  # above the number of tool uses: every pair stays


def test_compact_help_defines_keep_recent():
    shown = " ".join(cli("compact", "--help").stdout.split())
    assert "newest N tool uses the model has read" in shown and "each step keeps one more" in shown


def test_compact_a_real_trace_in_its_own_format(tmp_path):
    trace = shared(TRACES / "invariant_explorer_webarena_trace2.openai.json")
    done = cli("compact", str(trace), "--threshold", "0")
    assert isinstance(json.loads(done.stdout), list)  # a bare list stays a bare list


def test_rules_command_prints_python():
    done = cli("rules", "--python")
    assert "TOOLRESULT_COMPACTION_RULES = {" in done.stdout


@pytest.mark.parametrize(("setup", "args", "expected"), [
    (None, ["count", "missing.json"], "missing.json: cannot read the file (No such file or directory)"),
    ("{\"messages\": [", ["count", "{file}"], "{file}, line 1, column 15: invalid JSON"),
    ("{\"hello\": 1}", ["count", "{file}"], "{file}: unrecognised format"),
    (json.dumps({"messages": [{"role": "tool", "tool_call_id": "call_404", "content": "x"}]}), ["count", "{file}"],
     "{file}, messages[0]: tool result's call id matches no earlier tool call: 'call_404'"),
    ("[" * 100000 + "]" * 100000, ["count", "{file}"], "nested more than 64 levels"),
    ("{}", ["compact", "{book}", "--rules", "{file}"], "{file}: a rules file is an object"),
    ("{}", ["replay", "missing.json", "--rules", "{file}"], "{file}: a rules file is an object"),  # before the run
    (json.dumps({"tool_results": [{"tool": "read_file", "template": "{path.__class__}"}]}),
     ["compact", "{book}", "--rules", "{file}"], "{file}, tool_results[0].template: unsafe template field"),
    (None, ["compact", "{book}", "--threshold", "-5"],
     "argument --threshold: expected a whole number from 0 to 1,000,000,000, got -5"),
    (None, ["compact", "{book}", "--keep-recent", "many"], "argument --keep-recent: expected a whole number"),
    (None, ["count", "{book}", "--format", "xml"], "argument --format: invalid choice: 'xml'"),
    (json.dumps({"format": "compaction-playground", "items": [{"type": "tool_call", "call_id": "c", "name": "x",
                                                               "arguments": 5}]}),
     ["count", "{file}"], "{file}, items[0].arguments: expected an object or a string: 5"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, book_file, setup, args, expected):
    file = tmp_path / "input.json"
    if setup is not None:
        file.write_text(setup)
    args = [a.format(file=file, book=book_file) for a in args]
    done = cli(*args)
    assert done.returncode == 2, done
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert expected.format(file=file) in lines[0]
    assert "Traceback" not in done.stderr and done.stdout == ""


@pytest.mark.parametrize("args", [["count", "{file}"], ["compact", "{file}"],
                                  ["compact", "{book}", "--rules", "{file}"], ["replay", "{file}"]])
def test_an_empty_file_exits_2_saying_it_is_empty(tmp_path, book_file, args):
    file = tmp_path / "empty.jsonl"
    file.write_text("")
    done = cli(*[a.format(file=file, book=book_file) for a in args])
    assert done.returncode == 2 and done.stderr.strip().endswith(f"{file}: the file is empty"), done.stderr


def test_output_is_not_half_written_on_error(tmp_path, book_file):
    out = tmp_path / "out.json"
    done = cli("compact", str(book_file), "--rules", str(tmp_path / "none.json"), "-o", str(out))
    assert done.returncode == 2 and not out.exists()


SESSION = "claude-code-session-196820da.jsonl"


def test_count_reads_an_agent_log_and_names_its_source():
    log = shared(TRACES.parent / "sessions" / SESSION)
    data = json.loads(cli("count", str(log), "--json").stdout)
    assert data["format"] == "claude-code"
    assert sum(1 for item in data["items"] if item["kind"] == "call") == 65
    assert any("file-history-snapshot 15" in note for note in data["notes"])
    as_chat = json.loads(cli("count", str(log), "--json", "--to", "chat").stdout)
    assert as_chat["format"] == "claude-code" and as_chat["total"] < data["total"]  # thinking is not carried over
    assert any("'thinking' parts" in note for note in as_chat["notes"])


def _without_model(log: bytes) -> bytes:
    return re.sub(rb'"model":\s*"[^"]*",?', b"", log)


def test_a_log_that_names_no_model_is_counted_and_priced_as_its_formats_default(tmp_path):
    """A Claude Code log without its model is Claude's (as the page counts it), not gpt-4o's:
    found on real logs from a public repository, priced and cached as OpenAI's."""
    log = tmp_path / "session.jsonl"
    log.write_bytes(_without_model(shared(TRACES.parent / "sessions" / SESSION).read_bytes()))
    done = cli("count", str(log), "--json")
    assert "names no model: counted and priced as claude-sonnet-4-5" in done.stderr
    named = json.loads(cli("count", str(log), "--json", "--model", "claude-sonnet-4-5").stdout)
    assert json.loads(done.stdout)["total"] == named["total"] and named["accounting"].startswith("Anthropic")
    replayed = cli("replay", str(log))
    assert replayed.returncode == 0, replayed.stderr
    assert "cache anthropic, claude-sonnet-4-5 prices (genai-prices " in replayed.stdout.splitlines()[0]


def test_a_run_with_no_model_call_says_so(tmp_path):
    """A history of only the person's inputs (a real Aider history of commands) replays to an empty
    table: the command says why instead of printing it bare."""
    path = tmp_path / "asked.json"
    path.write_text(json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": "Read the notes."}]}))
    for command in ("replay", "compare"):
        done = cli(command, str(path))
        assert done.returncode == 0 and "holds no model call (no reply of the assistant)" in done.stderr


def test_a_routed_model_name_is_counted_and_priced_as_the_model(tmp_path):
    """``openrouter/openai/gpt-4o-mini`` (Aider through OpenRouter, on a real log) is gpt-4o-mini
    at OpenRouter's row for it (the same prices), not an unknown model priced as gpt-4o."""
    messages = [{"role": "user", "content": "Read the notes."}, {"role": "assistant", "content": "Done: 3 notes."}]
    routed, own = (tmp_path / "routed.json", tmp_path / "own.json")
    routed.write_text(json.dumps({"model": "openrouter/openai/gpt-4o-mini", "messages": messages}))
    own.write_text(json.dumps({"model": "gpt-4o-mini", "messages": messages}))
    counts = [json.loads(cli("count", str(path), "--json").stdout) for path in (routed, own)]
    assert counts[0]["total"] == counts[1]["total"] and counts[0]["accounting"] == counts[1]["accounting"]
    assert not any("tokenizer is not shipped" in note for note in counts[0]["estimate_because"])
    assert [count["priced_as"] for count in counts] == ["openai/gpt-4o-mini", "gpt-4o-mini"]
    runs = [json.loads(cli("replay", str(path), "--json").stdout) for path in (routed, own)]
    costs = [{key: value for key, value in run["totals"].items() if key != "summarizer"} for run in runs]
    assert costs[0] == costs[1] and costs[0]["cost_without"] > 0
    assert "openai/gpt-4o-mini via openrouter" in cli("replay", str(routed)).stdout.splitlines()[0]


def test_compact_writes_a_sendable_request_for_a_log(tmp_path):
    log = shared(TRACES.parent / "sessions" / SESSION)
    done = cli("compact", str(log), "--threshold", "0", "--no-summarize")
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["model"].startswith("claude") and body["max_tokens"] > 0 and body["messages"][0]["role"] == "user"
    converted = json.loads(cli("compact", str(log), "--threshold", "0", "--no-summarize", "--to", "responses").stdout)
    assert converted["model"] == "gpt-4o" and converted["input"]


def test_compact_request_flag_makes_an_api_input_sendable(book_file):
    body = json.loads(cli("compact", str(book_file), "--to", "anthropic", "--request").stdout)
    assert body["model"].startswith("claude") and body["max_tokens"] > 0


def test_a_bad_jsonl_line_exits_2_naming_the_line(tmp_path):
    log = tmp_path / "session.jsonl"
    log.write_text('{"type": "user"}\n{"type": "assistant", oops}\n')
    done = cli("count", str(log))
    assert done.returncode == 2
    assert f"{log}, line 2, column 23: invalid JSON" in done.stderr and "Traceback" not in done.stderr


SESSION = ROOT.parent / "shared" / "fixtures" / "sessions" / "claude-code-session-196820da.jsonl"


def test_compact_says_on_stderr_when_no_rule_matches_any_tool():
    """A Claude Code log with the book's rules (none names Bash, Read, Edit): the request is written
    unchanged, exit 0, and stderr names the largest tools and the preset that has rules for them."""
    done = cli("compact", str(shared(SESSION)))
    assert done.returncode == 0, done.stderr
    json.loads(done.stdout)  # the output is still the request, untouched by the note
    (note,) = done.stderr.splitlines()
    assert note.startswith("python -m playground: note: No rule matched any tool; the largest are Read (")
    assert "Bash (" in note and "--preset suggested" in note
    suggested = cli("compact", str(shared(SESSION)), "--preset", "suggested", "--threshold", "0", "--no-summarize")
    assert suggested.returncode == 0 and suggested.stderr == ""


def test_compact_names_the_guard_that_stopped_every_rule(book_file):
    done = cli("compact", str(book_file), "--threshold", "0", "--keep-recent", "3", "--no-summarize")
    assert done.returncode == 0, done.stderr
    assert "No rule made an edit (every match was guarded: " in done.stderr
    assert "kept by keep_recent = 3" in done.stderr


@pytest.mark.parametrize("command", ["replay", "compare", "probe", "evaluate", "tune"])
def test_the_policy_flag_has_its_older_name_strategy_too(command):
    from playground import cli as command_line

    model = ["--llm-model", "m"] if command == "probe" else []
    chosen = [command_line.parser().parse_args([command, "run.json", flag, "masking", *model]).policy
              for flag in ("--policy", "--strategy")]
    assert chosen[0] == chosen[1] and chosen[0] in ("masking", ["masking"])


@pytest.mark.parametrize("command", ["replay", "compare"])
def test_replay_and_compare_say_when_the_rules_match_no_tool(command):
    log = ROOT / "tests" / "data" / "codex-rollout.jsonl"  # tools shell, apply_patch: no book rule names them
    done = cli(command, str(log), "--policy", "rules")
    assert done.returncode == 0, done.stderr
    assert "note: No rule matched any tool; the largest are shell (" in done.stderr
    assert cli(command, str(log), "--policy", "masking").stderr == ""


def test_compare_all_runs_every_policy_as_no_policy_option_does_and_lines_up_the_longest_name(book_file):
    from playground import load
    from playground.policies import POLICIES, offered

    every = json.loads(cli("compare", str(book_file), "--json").stdout)
    named = json.loads(cli("compare", str(book_file), "--json", "--strategy", "all").stdout)
    assert named == every
    assert [row["strategy"] for row in every] == list(offered(POLICIES, load(book_file)))
    lines = cli("compare", str(book_file), "--strategy", "all").stdout.splitlines()
    rows = [line for line in lines[2:] if line.split(" ")[0].rstrip("*") in POLICIES]
    assert len(rows) == len(every)
    header_end = lines[1].index("tokens final") + len("tokens final")
    assert all(row[header_end - 1].isdigit() for row in rows)  # every row's count ends under its header
