"""Agent logs read as the requests they amount to: real Claude Code transcripts, and Codex,
SWE-agent and mini-SWE-agent logs written after their public formats (tests/data/README.md)."""

from __future__ import annotations

import json
from collections import Counter
from itertools import pairwise
from pathlib import Path

import pytest

from playground import formats
from playground.compaction import Settings, compact
from playground.conversation import Message, ToolCall, ToolResult, pairs
from playground.errors import InputError
from playground.export import exports
from playground.rules.ruleset import load_rules

from .conftest import ROOT, SHARED, TRACES, load_shared, shared

DATA = ROOT / "tests" / "data"
SESSIONS = SHARED / "sessions"
# sessions/README.md: the tool uses each transcript holds
SESSION_TOOLS = {
    "claude-code-session-196820da.jsonl": {"Bash": 39, "TodoWrite": 9, "Read": 9, "Grep": 5, "Glob": 2, "Write": 1},
    "claude-code-session-624a4a58.jsonl": {"Edit": 23, "Read": 19, "Bash": 3, "Write": 2, "Grep": 1},
}


def raw_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def raw_blocks(lines: list[dict], kind: str) -> list[dict]:
    return [block for line in lines if isinstance(line.get("message"), dict)
            and isinstance(line["message"].get("content"), list)
            for block in line["message"]["content"] if block.get("type") == kind]


def calls(conversation) -> list[ToolCall]:
    return [item for item in conversation.items if isinstance(item, ToolCall)]


@pytest.fixture(params=sorted(SESSION_TOOLS))
def session(request: pytest.FixtureRequest) -> tuple[str, Path]:
    return request.param, shared(SESSIONS / request.param)


# Claude Code ----------------------------------------------------------------------------------

def test_a_claude_code_session_is_detected_and_read_as_anthropic(session):
    name, path = session
    conversation = formats.loads(path.read_bytes())
    assert (conversation.format, conversation.source) == ("anthropic", "claude-code")
    assert conversation.model == "claude-sonnet-4-5-20250929"
    assert Counter(call.name for call in calls(conversation)) == SESSION_TOOLS[name]


def test_every_tool_use_is_one_call_and_every_result_pairs(session):
    _, path = session
    lines = raw_lines(path)
    conversation = formats.loads(path.read_bytes())
    ids = [call.call_id for call in calls(conversation)]
    assert sorted(ids) == sorted({block["id"] for block in raw_blocks(lines, "tool_use")})
    assert len(ids) == len(set(ids)), "a streamed block was read twice"
    answered = pairs(conversation.items)
    results = [item for item in conversation.items if isinstance(item, ToolResult)]
    assert len(results) == len(raw_blocks(lines, "tool_result")) == len(answered)
    errors = sum(1 for block in raw_blocks(lines, "tool_result") if block.get("is_error"))
    assert sum(result.is_error for result in results) == errors


def test_thinking_blocks_are_kept(session):
    _, path = session
    conversation = formats.loads(path.read_bytes())
    thinking = [part for item in conversation.items if isinstance(item, Message) and isinstance(item.content, tuple)
                for part in item.content if part.type == "thinking"]
    assert len(thinking) == len(raw_blocks(raw_lines(path), "thinking")) > 0
    assert all(part.extra.get("signature") for part in thinking)


def test_the_anthropic_request_alternates_roles_and_starts_with_the_user(session):
    _, path = session
    body, _ = exports.request_body(formats.loads(path.read_bytes()))
    roles = [message["role"] for message in body["messages"]]
    assert roles[0] == "user"
    assert all(a != b for a, b in pairwise(roles))
    for before, message in pairwise(body["messages"]):
        uses = {b["id"] for b in before["content"] if b.get("type") == "tool_use"}
        answered = {b["tool_use_id"] for b in message["content"] if b.get("type") == "tool_result"}
        assert uses <= answered, "each tool_use is answered in the next message"
    assert body["model"].startswith("claude") and body["max_tokens"] > 0


def test_skipped_lines_are_counted_in_the_notes(session):
    _, path = session
    lines = raw_lines(path)
    notes = " ".join(formats.loads(path.read_bytes()).notes)
    for kind, count in Counter(line["type"] for line in lines if line["type"] not in ("user", "assistant")).items():
        assert f"{kind} {count}" in notes


def test_claude_codes_own_compaction_is_named():
    path = shared(SESSIONS / "claude-code-session-624a4a58.jsonl")
    notes = formats.loads(path.read_bytes()).notes
    assert any("compacted its context at line 158" in note and "155,979 tokens" in note for note in notes)


def _line(kind: str, content, message_id: str | None = None, **extra) -> dict:
    message = {"role": kind, "content": content}
    if message_id:
        message |= {"id": message_id, "model": "claude-opus-4-1"}
    return {"type": kind, "uuid": f"u{len(str(content))}", "sessionId": "s", "message": message, **extra}


def test_streamed_lines_join_sidechains_and_orphans_are_left_out_with_notes():
    lines = [
        {"type": "summary", "summary": "Fix the parser", "leafUuid": "x"},
        _line("user", "fix it"),
        _line("assistant", [{"type": "thinking", "thinking": "look first", "signature": "sig"}], "msg_1"),
        _line("assistant", [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a.py"}}], "msg_1"),
        _line("assistant", [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a.py"}}], "msg_1"),
        _line("assistant", [{"type": "text", "text": "sub-agent work"}], "msg_9", isSidechain=True),
        _line("user", [{"type": "tool_result", "tool_use_id": "t1", "content": "print(1)"}]),
        _line("user", [{"type": "tool_result", "tool_use_id": "gone", "content": "from an earlier session"}]),
        _line("user", "thanks"),
    ]
    text = "\n".join(json.dumps(line) for line in lines)
    conversation = formats.loads(text)
    assert conversation.source == "claude-code" and conversation.model == "claude-opus-4-1"
    assert [call.call_id for call in calls(conversation)] == ["t1"]
    body = formats.write(conversation)
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert [b["type"] for b in body["messages"][2]["content"]] == ["tool_result", "text"]
    notes = " ".join(conversation.notes)
    assert "summary 1" in notes and "sidechain" in notes and "repeated block 1" in notes and "gone" in notes


# Codex ------------------------------------------------------------------------------------------

@pytest.fixture
def rollout():
    return formats.loads((DATA / "codex-rollout.jsonl").read_bytes())


def test_a_codex_rollout_is_read_as_responses(rollout):
    assert (rollout.format, rollout.source, rollout.model) == ("responses", "codex", "gpt-5-codex")
    assert [call.name for call in calls(rollout)] == ["shell", "shell", "apply_patch", "local_shell", "shell"]
    assert len(pairs(rollout.items)) == 5, "every call has its output"
    kinds = [item.extra.get("type") for item in rollout.items if isinstance(item, Message)]
    assert "reasoning" in kinds and "web_search_call" in kinds


def test_custom_tool_calls_are_calls_and_written_back_as_they_came(rollout):
    patch = next(call for call in calls(rollout) if call.name == "apply_patch")
    assert patch.arguments.startswith("*** Begin Patch") and patch.parsed_arguments() is None
    wire = formats.write(rollout)["input"]
    assert {"type", "call_id", "name", "input", "status"} == set(wire[patch.origin.index])
    output = wire[patch.origin.index + 1]
    assert output["type"] == "custom_tool_call_output" and "Success" in output["output"]
    shell = wire[next(c for c in calls(rollout) if c.name == "local_shell").origin.index]
    assert shell["type"] == "local_shell_call" and shell["action"]["command"][-1].startswith("python -m pytest")
    assert formats.read(formats.write(rollout)).items == rollout.items


def test_custom_tool_outputs_are_compacted_like_function_outputs(rollout):
    rules = load_rules({"tool_results": [{"tool": "apply_patch", "template": "Patch applied; see the diff."}]})
    done = compact(rollout, rules, Settings(threshold=0))
    assert [edit.tool for edit in done.report.edits] == ["apply_patch"]
    wire = formats.write(done.conversation)["input"]
    edited = [item for item in wire if item.get("type") == "custom_tool_call_output"]
    assert edited == [{"type": "custom_tool_call_output", "call_id": "call_Qe4Lb9Xv2Ns",
                       "output": "Patch applied; see the diff."}]


def test_codex_compaction_is_shown_as_a_user_message_and_a_note(rollout):
    note = next(note for note in rollout.notes if "compacted its history" in note)
    assert "line 17" in note
    index = int(note.split("input[")[1].split("]")[0])
    summary = next(item for item in rollout.items if item.origin.index == index)
    assert summary.role == "user" and "Summary so far" in summary.content[0].text
    skipped = next(note for note in rollout.notes if "skipped" in note)
    assert "event_msg 3" in skipped and "turn_context 2" in skipped and "session_meta 1" in skipped
    assert any("success: false" in note for note in rollout.notes)


def _edited(prompt: dict, text: str) -> list[dict]:
    """The user went back to ``prompt`` and sent ``text`` instead (Claude Code's double Esc): a new
    branch from the prompt's parent, and the reply to it."""
    edited = {**prompt, "uuid": "edited-prompt", "message": {"role": "user", "content": text}}
    reply = {"type": "assistant", "uuid": "edited-reply", "parentUuid": "edited-prompt",
             "sessionId": prompt["sessionId"],
             "message": {"id": "msg_edited", "role": "assistant", "model": "claude-sonnet-4-5",
                         "content": [{"type": "text", "text": "Then here is the design, without code."}]}}
    return [edited, reply]


def test_a_branch_the_session_left_is_not_read_as_part_of_the_conversation():
    """A Claude Code log is a tree (``parentUuid``): after an earlier message was edited, what Claude
    Code sent is the new branch, not the old one that stays in the file before it."""
    lines = formats.parse_text(shared(SESSIONS / "claude-code-session-196820da.jsonl").read_bytes())
    prompt = 136  # "don't produce code, design solution first", and the replies after it up to line 146
    assert lines[prompt]["message"]["content"].startswith("don't produce code")
    new = _edited(lines[prompt], "design it first, no code")
    branched = formats.read(lines[:147] + new)
    assert formats.write(branched) == formats.write(formats.read(lines[:prompt] + new))
    talk = sum(line["type"] in ("user", "assistant") for line in lines[prompt:147])
    assert f"on a branch the session left (an earlier message edited or rewound) {talk}," in " ".join(branched.notes)


def test_parallel_results_hung_from_their_own_calls_are_not_a_branch():
    """Some versions hang each result of a parallel reply from its own call's line: off the path from
    the newest message, yet part of what was sent."""
    lines = formats.parse_text(shared(SESSIONS / "claude-code-session-196820da.jsonl").read_bytes())
    calls, results = range(11, 14), range(14, 17)  # a reply with three tool_use lines, then their results
    assert [block["type"] for n in calls for block in lines[n]["message"]["content"]] == ["tool_use"] * 3
    tree = [dict(line) for line in lines]
    for call, result in zip(calls, results, strict=True):
        tree[result]["parentUuid"] = lines[call]["uuid"]
    tree[16]["parentUuid"], tree[13]["parentUuid"] = lines[13]["uuid"], lines[12]["uuid"]
    assert formats.write(formats.read(tree)) == formats.write(formats.read(lines))


def test_claude_code_2_1_parallel_calls_each_on_its_own_line_keep_every_result():
    """A real Claude Code 2.1.38 log: the parallel calls of one reply are lines side by side (the
    second's parent is the first), and each result hangs off its own call's line, so only one of
    them is on the path from the newest message. The result of the call off the path was taken for
    a branch the session left: 6 calls, 5 results, and a request Anthropic refuses."""
    path = DATA / "claude-code-spotter-tool_heavy.jsonl"
    conversation = formats.loads(path.read_bytes())
    raw = raw_lines(path)
    assert len(calls(conversation)) == len(raw_blocks(raw, "tool_use")) == 6
    results = [item for item in conversation.items if isinstance(item, ToolResult)]
    assert sorted(r.call_id for r in results) == sorted(b["tool_use_id"] for b in raw_blocks(raw, "tool_result"))
    assert len(pairs(conversation.items)) == 6
    assert "branch the session left" not in " ".join(conversation.notes)


def test_a_sub_agents_own_log_is_read_as_its_conversation():
    """Claude Code writes each sub-agent's conversation to a log of its own (``subagents/agent-*.jsonl``),
    every line of it a sidechain: there the sidechain is the conversation, not something to skip."""
    lines = formats.parse_text(shared(SESSIONS / "claude-code-session-196820da.jsonl").read_bytes())
    own = [{**line, "isSidechain": True, "agentId": "a9f4657"} if line.get("type") in ("user", "assistant") else line
           for line in lines]
    main, agent = formats.read(lines), formats.read(own)
    assert formats.write(agent) == formats.write(main)
    assert any("this is a sub-agent's own log" in note for note in agent.notes)
    assert not any("sub-agent's own log" in note for note in main.notes)


def test_the_log_of_claude_codes_own_compaction_call_is_named_and_carries_no_bills():
    """Claude Code 2.1 writes the call that summarizes the session for its compaction as a sidechain
    log too (``subagents/agent-acompact-*.jsonl``, real ones in marot/spotter): it holds that call's
    last messages, while its bill is the whole session's context (173,514 billed against 3,364
    counted), so a calibration fitted to it would be nonsense."""
    lines = formats.parse_text(shared(SESSIONS / "claude-code-session-196820da.jsonl").read_bytes())
    own = [{**line, "isSidechain": True, "agentId": "acompact-e1f845"} if line.get("type") in ("user", "assistant")
           else line for line in lines]
    main, compacting = formats.read(lines), formats.read(own)
    assert formats.write(compacting) == formats.write(main)
    assert main.billed and not compacting.billed
    notes = " ".join(compacting.notes)
    assert "the call Claude Code made to write its own compaction summary" in notes
    assert "sub-agent's own log (Claude Code's Task tool)" not in notes


def test_the_real_sessions_are_one_branch_each_so_nothing_is_left_out():
    for name in ("claude-code-session-196820da.jsonl", "claude-code-session-624a4a58.jsonl"):
        conversation = formats.loads(shared(SESSIONS / name).read_bytes())
        assert "branch the session left" not in " ".join(conversation.notes)


def _turn(text: str, answer: str, call: str | None = None) -> list[dict]:
    """A user turn as Codex logs it: the message (and its event), maybe a tool call, the reply."""
    lines = [{"type": "response_item", "payload": {"type": "message", "role": "user",
                                                   "content": [{"type": "input_text", "text": text}]}},
             {"type": "event_msg", "payload": {"type": "user_message", "message": text}}]
    if call:
        lines += [{"type": "response_item", "payload": {"type": "function_call", "name": "shell", "call_id": call,
                                                        "arguments": json.dumps({"command": ["ls"]})}},
                  {"type": "response_item", "payload": {"type": "function_call_output", "call_id": call,
                                                        "output": "a.py\nb.py"}},
                  {"type": "event_msg", "payload": {"type": "token_count", "info": {
                      "last_token_usage": {"input_tokens": 99_999}}}}]
    return [*lines, {"type": "response_item", "payload": {"type": "message", "role": "assistant",
                                                          "content": [{"type": "output_text", "text": answer}]}}]


@pytest.mark.parametrize("turns", [1, 2])
def test_a_turn_codex_rolled_back_leaves_the_input_as_it_left_codexs_history(turns):
    """The user went back to an earlier message (``thread_rolled_back``): Codex's later requests no
    longer hold the turns it took back, their calls or their bills."""
    log = formats.parse_text((DATA / "codex-rollout.jsonl").read_bytes())
    taken_back = _turn("try it the other way", "done another way", call="call_x")
    if turns == 2:
        taken_back = _turn("and list the files", "a.py, b.py", call="call_y") + taken_back
    expected = formats.read(log + _turn("instead: explain", "explained"))
    rolled = formats.read(log + taken_back + [{"type": "event_msg", "payload": {"type": "thread_rolled_back",
                                                                               "num_turns": turns}}]
                          + _turn("instead: explain", "explained"))
    assert formats.write(rolled) == formats.write(expected)
    assert rolled.billed == expected.billed and 99_999 not in dict(rolled.billed).values()
    assert rolled.compactions and len(rolled.compactions) == len(expected.compactions)
    assert any(note.startswith(f"Codex rolled back {turns} turn") for note in rolled.notes)


def test_a_rollout_line_type_codex_added_later_is_skipped_and_counted():
    lines = formats.parse_text((DATA / "codex-rollout.jsonl").read_bytes())
    lines.insert(3, {"timestamp": "2025-10-29T09:10:03.000Z", "type": "token_usage_v2", "payload": {"input": 5}})
    conversation = formats.read(lines)
    assert conversation.source == "codex" and len(calls(conversation)) == 5
    assert any("token_usage_v2 1" in note for note in conversation.notes)


# SWE-agent and mini-SWE-agent -----------------------------------------------------------------------

def test_swe_agent_function_calling_trajectory():
    conversation = formats.loads((DATA / "sweagent-function-calling.traj").read_bytes())
    assert (conversation.format, conversation.source) == ("chat", "swe-agent")
    assert conversation.model == "claude-3-7-sonnet-20250219"
    assert [call.name for call in calls(conversation)] == ["bash", "str_replace_editor", "str_replace_editor", "bash",
                                                           "submit"]
    assert len(pairs(conversation.items)) == 5
    assert any("'message_type' keys 12" in note for note in conversation.notes)


@pytest.mark.parametrize("stand_in", ["replay", "human", "human_thought", "instant_empty_submit"])
def test_a_swe_agent_run_of_a_stand_in_model_names_no_model(stand_in):
    """SWE-agent's own test trajectories are replays (``agent.model.name: replay``): 'replay' is no
    model to count or price by, so the run names none and the default stands, with its note."""
    data = json.loads((DATA / "sweagent-function-calling.traj").read_text())
    config = json.loads(data["replay_config"])
    config["agent"]["model"]["name"] = stand_in
    conversation = formats.read({**data, "replay_config": json.dumps(config)})
    assert conversation.model is None and len(calls(conversation)) == 5


def test_swe_agent_without_function_calling_keeps_actions_as_messages_and_says_so():
    conversation = formats.loads((DATA / "sweagent-thought-action.traj").read_bytes())
    assert conversation.source == "swe-agent" and not calls(conversation)
    roles = [item.role for item in conversation.items]
    assert roles == ["system", "user"] + ["assistant", "user"] * 3 + ["assistant"]
    assert any("no function calling" in note for note in conversation.notes)


def test_mini_swe_agent_trajectory():
    conversation = formats.loads((DATA / "mini-swe-agent.traj.json").read_bytes())
    assert (conversation.format, conversation.source, conversation.model) == ("chat", "mini-swe-agent",
                                                                             "deepseek/deepseek-chat")
    assert len(calls(conversation)) == 5 and len(pairs(conversation.items)) == 4  # the submit has no result yet
    body = formats.write(conversation)
    assert all("extra" not in message for message in body["messages"])
    assert all("index" not in call for message in body["messages"] for call in message.get("tool_calls", []))
    assert any("'exit' records 1" in note for note in conversation.notes)
    # each reply's extra.response.usage.prompt_tokens is its call's bill, at the item where that call starts
    usage = [m["extra"]["response"]["usage"]["prompt_tokens"] for m in json.loads(
        (DATA / "mini-swe-agent.traj.json").read_text())["messages"] if m["role"] == "assistant"]
    said = [isinstance(item, ToolCall) or getattr(item, "role", "") == "assistant" for item in conversation.items]
    starts = [p for p, spoke in enumerate(said) if spoke and not (p and said[p - 1])]  # each reply's first item
    assert conversation.billed == tuple(zip(starts, usage, strict=True))
    assert any("mini-SWE-agent recorded the input tokens billed for 5 calls" in note for note in conversation.notes)


def test_the_real_mini_trace_wrapped_in_minis_format_reads_as_the_trace():
    trace = load_shared(TRACES / "miniswe_pr_astropy-12907.openai.json")
    messages = [{**message, "extra": {"timestamp": 1.0}} for message in trace]
    wrapped = {"info": {"mini_version": "2.3.0", "config": {"model": {"model_name": "deepseek/deepseek-chat"}}},
               "messages": [*messages, {"role": "exit", "content": "", "extra": {}}],
               "trajectory_format": "mini-swe-agent-1.1"}
    assert formats.read(wrapped).items == formats.read(trace).items


def test_the_real_swe_agent_trace_wrapped_in_its_format_reads_as_the_trace():
    trace = load_shared(TRACES / "sweagent_marshmallow-1867_function_calling.openai.json")
    history = []
    for message in trace:
        kind = "action" if message["role"] == "assistant" else "observation"
        entry = {**message, "agent": "main", "message_type": kind}
        if message["role"] == "tool":
            entry["tool_call_ids"] = [entry.pop("tool_call_id")]
        history.append(entry)
    assert formats.read({"history": history, "trajectory": []}).items == formats.read(trace).items


# Counting and JSONL ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("file", "source"), [("codex-rollout.jsonl", "codex"),
                                              ("sweagent-function-calling.traj", "swe-agent"),
                                              ("mini-swe-agent.traj.json", "mini-swe-agent")])
def test_count_json_names_the_source(file, source):
    from playground.meter.tokens import Meter
    from playground.present.report import count_to_json

    conversation = formats.loads((DATA / file).read_bytes())
    data = count_to_json(Meter(conversation.model).count(conversation), conversation)
    assert data["format"] == source and data["notes"] == list(formats.notes(conversation))


def test_a_bad_jsonl_line_is_named_by_its_number():
    text = '{"type": "user"}\n\n{"type": "assistant"}\n{"type": oops}\n'
    with pytest.raises(InputError, match=r"^line 4, column 10: invalid JSON"):
        formats.loads(text)


def test_a_jsonl_line_too_deep_is_named_by_its_number():
    text = '{"a": 1}\n' + "[" * 70 + "]" * 70 + "\n"
    with pytest.raises(InputError, match=r"^line 2, .*nested more than 64"):
        formats.parse_text(text)


def test_every_reader_is_registered_and_detects_only_its_own_shape():
    samples = {"claude-code": raw_lines(shared(SESSIONS / "claude-code-session-196820da.jsonl")),
               "codex": formats.parse_text((DATA / "codex-rollout.jsonl").read_bytes()),
               "swe-agent": json.loads((DATA / "sweagent-thought-action.traj").read_text()),
               "mini-swe-agent": json.loads((DATA / "mini-swe-agent.traj.json").read_text())}
    for name, data in samples.items():
        assert formats.detect(data) == name
        others = [other for other, reader in formats.READERS.items() if other != name and reader.looks_like(data)]
        assert others == [] or max(formats.READERS[o].looks_like(data) for o in others) < 6, others


def test_a_log_written_in_its_api_format_reads_back_to_the_same_items(session):
    # the summarizer and the builder rebuild a conversation this way; a log must survive it like a request
    for path in (session[1], *sorted(p for p in DATA.iterdir() if p.name != "README.md")):
        conversation = formats.read_path(path)  # a log file, or a task folder
        assert formats.read(formats.write(conversation), conversation.format).items == conversation.items, path.name


def test_a_summary_keeps_the_log_the_conversation_came_from():
    """Summarizing splices a message in and re-reads the request: the source and notes stay."""
    from playground.meter.tokens import Meter
    from playground.summarize.history import SummarySettings, run
    from playground.summarize.offline import OfflineSummarizer

    conversation = formats.loads((DATA / "codex-rollout.jsonl").read_bytes())
    done = run(conversation, conversation, SummarySettings(limit=0, keep_steps=1), OfflineSummarizer(),
               Meter(conversation.model))
    assert done.report.status in ("summarized", "not_smaller")
    assert done.conversation.source == "codex" and done.conversation.notes == conversation.notes


def test_a_logs_notes_count_in_good_english():
    """One failed output is "1 tool output", not "1 tool outputs"."""
    notes = formats.loads((DATA / "codex-rollout.jsonl").read_bytes()).notes
    assert "Sent as their text: 1 tool output Codex marked as failed (success: false)." in notes
    assert notes[0].startswith("Read from a Codex rollout: 16 input items from 22 lines;")
