"""Hidden-then-used (``playground.hidden``): a span of an item the request hid that the agent's
next output used — found, not found when still visible or never used, ``none`` always 0, a
stricter rule set never reports fewer, and the labelled real runs keep the README's precision."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from playground.conversation import Conversation, Message, Tool, ToolCall, ToolResult
from playground.engine import Engine
from playground.meter.tokens import Meter
from playground.policies import MaskingPolicy, NonePolicy, RulesPolicy
from playground.refit.hidden_precision import measure
from playground.rules.ruleset import load_rules
from playground.run.compare import compare, rows_to_json
from playground.run.hidden import SpanIndex, calls_with, spans_of
from playground.run.prices import read_prices
from playground.run.replay import replay, replay_to_json

from .conftest import SHARED, shared

GPT4O = read_prices().get("gpt-4o")
LABELS = Path(__file__).parent / "labels" / "hidden_used.json"
README_PRECISION = 0.93  # the figure the README states for the labelled cases
SECRET = "def compute_checksum(payload, seed=9137):"
FILLER = "\n".join(f"line {n} of the module, nothing anyone copies" for n in range(60))
READ_RULES = load_rules({"tool_results": [{"tool": "read_file",
                                           "template": "File content from {path}. Re-read if needed."}]})


def _run(quote_in_user: bool = False, quote_later: bool = True) -> Conversation:
    """Read a file, talk, then edit it: the edit's ``old_string`` quotes the file's line."""
    items = [Message(role="user", content="Fix the checksum in a.py" + (f": {SECRET}" if quote_in_user else "")),
             ToolCall(call_id="c1", name="read_file", arguments=json.dumps({"path": "a.py"})),
             ToolResult(call_id="c1", name="read_file", content=f"{FILLER}\n{SECRET}\n    return 0\n{FILLER}"),
             Message(role="assistant", content="I have read it."),
             Message(role="user", content="Go on."),
             ToolCall(call_id="c2", name="edit_file", arguments=json.dumps(
                 {"path": "a.py", "old_string": SECRET if quote_later else "nothing in particular",
                  "new_string": "def compute_checksum(payload, seed=0):" if quote_later else "something else"})),
             ToolResult(call_id="c2", name="edit_file", content="ok")]
    return Conversation(tuple(items), model="gpt-4o")


def _replay(conversation: Conversation, policy) -> tuple:
    return replay(conversation, policy, Meter("gpt-4o"), GPT4O, cache="none").hidden_used


def test_a_line_quoted_after_the_rule_replaced_its_result_is_found_and_retrievable():
    uses = _replay(_run(), RulesPolicy(READ_RULES, threshold=0, summarize=False))
    assert {(u.call, u.item, u.tool, u.span, u.retrievable) for u in uses} == {
        (2, 2, "read_file", span, True) for span in (SECRET, "compute_checksum", "9137")}


def test_masked_output_is_found_and_lost():
    uses = _replay(_run(), MaskingPolicy(window=0))
    assert {(u.call, u.item, u.span, u.retrievable) for u in uses} == {
        (2, 2, span, False) for span in (SECRET, "compute_checksum", "9137")}


def test_quoted_but_still_visible_elsewhere_is_not_found():
    assert _replay(_run(quote_in_user=True), RulesPolicy(READ_RULES, threshold=0, summarize=False)) == ()


def test_never_used_is_not_found():
    assert _replay(_run(quote_later=False), MaskingPolicy(window=0)) == ()


def test_spans_in_the_system_prompt_or_tool_definitions_never_count():
    conversation = _run()
    tools = (Tool(name="edit_file", description=f"Edits. Example: {SECRET}"),)
    assert _replay(Conversation(conversation.items, model="gpt-4o", tools=tools), MaskingPolicy(window=0)) == ()
    assert SECRET in SpanIndex.of(conversation).where and SECRET not in SpanIndex.of(
        Conversation(conversation.items, model="gpt-4o", instructions=SECRET)).where


def test_span_rules():
    found = spans_of("see src/pkg/mod.py and a/b/c, not and/or or 12/05/2024; call separability_matrix "
                     "or CompoundModel, not __init__, result or startTime; this.snapshotter.diff, not Date.now; "
                     "registry.js; issue 12907, not 123\n     7→    a line long enough to be copied here\nshort")
    assert {"src/pkg/mod.py", "a/b/c", "separability_matrix", "CompoundModel", "this.snapshotter.diff",
            "registry.js", "12907", "a line long enough to be copied here"} <= found
    assert not {"and/or", "12/05/2024", "__init__", "result", "Date.now", "123", "short", "startTime"} & found


def test_replay_json_and_compare_rows_carry_the_totals():
    conversation = _run()
    meter = Meter("gpt-4o")
    data = replay_to_json(replay(conversation, MaskingPolicy(window=0), meter, GPT4O, cache="none"))
    assert {"call": 2, "item": 2, "tool": "read_file", "span": SECRET, "retrievable": False} in data["hidden_used"]
    assert (data["hidden_used_calls"], data["hidden_used_lost"]) == (1, 1)
    rows = rows_to_json(compare(conversation, [NonePolicy(), MaskingPolicy(window=0),
                                               RulesPolicy(READ_RULES, threshold=0, summarize=False)],
                                meter, GPT4O, cache="none"))
    assert [(r["hidden_used_calls"], r["hidden_used_lost"]) for r in rows] == [(0, 0), (1, 1), (1, 0)]


# --- properties on generated runs ---------------------------------------------------------------

WORDS = ("alpha_one_token", "BetaTwoName", "src/pkg/mod.py", "123456", "a long line of text to be copied",
         "gamma_three_x", "lib/deep/path/x", "987654")


@st.composite
def runs(draw: st.DrawFn) -> Conversation:
    """Turns of calls to tools ``a`` and ``b`` whose results hold spans, and outputs that quote some."""
    items: list = [Message(role="user", content="start")]
    for n in range(draw(st.integers(1, 8))):
        said = " ".join(draw(st.lists(st.sampled_from(WORDS), max_size=2)))
        items.append(Message(role="assistant", content=f"step {n} {said}"))
        calls = [ToolCall(call_id=f"c{n}_{k}", name=draw(st.sampled_from("ab")),
                          arguments=json.dumps({"q": " ".join(draw(st.lists(st.sampled_from(WORDS), max_size=2)))}))
                 for k in range(draw(st.integers(1, 2)))]
        items += calls
        for call in calls:
            body = "\n".join(draw(st.lists(st.sampled_from(WORDS), max_size=4))) + "\n" + "padding words " * 40
            items.append(ToolResult(call_id=call.call_id, name=call.name, content=body))
    items.append(Message(role="assistant", content="done " + " ".join(draw(st.lists(st.sampled_from(WORDS))))))
    return Conversation(tuple(items), model="gpt-4o")


def _template(tools: str) -> RulesPolicy:
    return RulesPolicy(load_rules({"tool_results": [{"tool": tools, "template": "[omitted]"}]}), threshold=0,
                       summarize=False)


@settings(max_examples=60, deadline=None)
@given(runs(), st.sampled_from(["stored", "per-call"]))
def test_none_always_reports_zero(conversation, mode):
    run = replay(conversation, NonePolicy(), Meter("gpt-4o"), GPT4O, mode=mode, cache="none")
    assert run.hidden_used == ()


@settings(max_examples=60, deadline=None)
@given(runs(), st.sampled_from(["stored", "per-call"]))
def test_a_stricter_rule_set_never_reports_fewer_calls(conversation, mode):
    meter, spans = Meter("gpt-4o"), SpanIndex.of(conversation)
    looser = replay(conversation, _template("a"), meter, GPT4O, mode=mode, cache="none", spans=spans)
    stricter = replay(conversation, _template("a|b"), meter, GPT4O, mode=mode, cache="none", spans=spans)
    assert calls_with(stricter.hidden_used) >= calls_with(looser.hidden_used)
    assert {(u.call, u.span) for u in looser.hidden_used} <= {(u.call, u.span) for u in stricter.hidden_used}


# --- the labelled real runs -------------------------------------------------------------------

def test_labelled_cases_keep_the_readme_precision():
    """Every labelled (run, setup) replayed: most labelled detections are still made, and of
    those the share labelled a real use is at least the README's figure."""
    labels = json.loads(LABELS.read_text(encoding="utf-8"))
    engine = Engine()
    from playground.cli.inputs import load_conversation

    result = measure(labels, lambda source: load_conversation(str(shared(SHARED / source)), 200, None),
                     lambda conversation: engine.meter(conversation.model))
    assert result.labelled >= 40 and result.detected >= 40
    assert result.share >= README_PRECISION


_PIECES = st.sampled_from(["separability_matrix", "src/pkg/mod.py", "a/b/c", "12345", "3.14159", "v1.2345",
                           "CompoundModelTree", "this.snapshotter.diff", "registry.js", " ", "\t", "\n", "\r\n", "_",
                           ".", "/", "→", "12\t", "x", "a line of text long enough to count as one"])


@given(st.lists(_PIECES, max_size=30).map("".join))
def test_a_texts_spans_are_its_lines_spans_together(text):
    """Spans of a text a policy made (a summary rewritten at every call) are found line by line
    and each line once per run: exact only because no span reaches across a line."""
    lines = [spans_of(line) for line in text.split("\n")]
    assert spans_of(text) == frozenset().union(*lines)


def test_a_summary_rewritten_at_every_call_uses_what_the_whole_text_would(monkeypatch):
    """Per call, hybrid's summary is new text at each call; its spans, found from its lines
    (each line once per run), must be those of the whole text: the same hidden-then-used spans."""
    from playground.policies import HybridPolicy
    from playground.run.hidden import Tracker

    items = [Message(role="user", content="Read the modules.")]
    for n in range(30):
        items += [ToolCall(call_id=f"c{n}", name="read_file", arguments=f'{{"path": "src/mod_{n}.py"}}'),
                  ToolResult(call_id=f"c{n}", name="read_file", content=f"value_{n}_total = compute_{n}()\n" * 20)]
        back = max(0, n - 5)  # a path the summary shows, a name it does not
        items.append(Message(role="assistant", content=f"Back to src/mod_{back}.py and value_{back}_total."))
    conversation = Conversation(items=tuple(items), format="chat")

    def run():
        return replay(conversation, HybridPolicy(window=2, limit=600, keep_steps=1), Meter("gpt-4o"), GPT4O,
                      mode="per-call")

    by_lines = run()
    monkeypatch.setattr(Tracker, "_text_spans",
                        lambda self, text: frozenset(s for s in spans_of(text) if s in self._index.where))
    assert sum(call.fired == "masking+summarization" for call in by_lines.calls) > 10
    assert by_lines.hidden_used == run().hidden_used and by_lines.hidden_used
