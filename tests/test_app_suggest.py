"""The page's suggested rules through AppTest: the "no rule matched" notice, the suggestion's
preview and adding its rows, with the numbers checked against the engine."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from playground import formats
from playground.compaction import Settings, compact
from playground.meter.tokens import Meter
from playground.tune.suggest import preview, suggest_rules

from .conftest import ROOT

READ = "\n".join(f"{n}: a line of the file the agent read, long enough to be worth a reference" for n in range(150))


def _agent_run() -> dict:
    """A Chat request with tools the book's rules never name (Read, Bash)."""
    messages = [{"role": "user", "content": "Fix the bug."}]
    for n, (tool, arguments, output) in enumerate([("Read", {"file_path": "src/app.py"}, READ),
                                                   ("Bash", {"command": "pytest -q"}, READ[:3000]),
                                                   ("Read", {"file_path": "src/util.py"}, READ[:5000])]):
        messages += [{"role": "assistant", "content": None, "tool_calls": [
                         {"id": f"call_{n}", "type": "function",
                          "function": {"name": tool, "arguments": json.dumps(arguments)}}]},
                     {"role": "tool", "tool_call_id": f"call_{n}", "content": output},
                     {"role": "assistant", "content": "Next."}]
    return {"model": "gpt-4o", "messages": messages}


def _start() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    at.sidebar.toggle(key="summarize_on").set_value(False)
    at.text_area(key="paste_text").set_value(json.dumps(_agent_run()))
    at.button(key="FormSubmitter:paste_form-Load pasted JSON").click()
    at.run()
    at.sidebar.number_input(key="threshold").set_value(0)
    return _rerun(at)


def _rerun(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    assert not [e.value for e in at.error if "Something went wrong" in e.value]
    return at


def _previews(at: AppTest) -> list:
    """The suggestion tables on the page (AppTest does not expose a read-only table's key)."""
    return [d.value for d in at.dataframe if "tokens saved" in getattr(d.value, "columns", ())]


def _after(at: AppTest) -> int:
    return int(next(m.value for m in at.metric if m.label == "After").replace(",", ""))


def test_no_rule_matched_offers_a_previewed_suggestion_and_adds_it():
    at = _start()
    conversation = formats.read(_agent_run())
    (notice,) = [w.value for w in at.warning if w.value.startswith("No rule matched any tool")]
    assert "the largest are Read (" in notice and "Bash (" in notice
    assert _after(at) == compact(conversation, None, Settings(threshold=0)).report.tokens_before  # nothing done

    next(b for b in at.button if b.key == "suggest_from_notice").click()
    _rerun(at)
    meter = Meter("gpt-4o")
    suggestion = suggest_rules(conversation, meter)
    expected = preview(conversation, suggestion, Settings(threshold=0), meter)
    table = _previews(at)[0]  # under the notice (the Rules tab shows the same, further down)
    assert list(table["tool"]) == [p.row.tool for p in expected]
    assert list(table["tokens saved"]) == [p.saved for p in expected]
    assert list(table["largest after"]) == [p.after for p in expected]
    assert at.session_state["result_rules_base"][0]["tool"] == "read_file"  # nothing added yet

    next(b for b in at.button if b.key == "suggestion_add_notice").click()
    _rerun(at)
    added = {row["tool"]: row for row in at.session_state["result_rules_base"]}
    assert added["Read"]["template"] == "File content from {file_path}. Re-read if needed."
    assert "{command}" in added["Bash"]["template"]
    assert "read_file" in added  # the book's rows stay
    engine = compact(conversation, suggestion.rules(), Settings(threshold=0))
    assert _after(at) == engine.report.tokens_after < engine.report.tokens_before
    assert not [w for w in at.warning if w.value.startswith("No rule")]  # rules now match: the notice is gone


def test_the_rules_tab_button_previews_and_dismiss_keeps_the_tables():
    at = _start()
    before = list(at.session_state["result_rules_base"])
    next(b for b in at.button if b.label == "Suggest rules for this conversation" and b.key != "suggest_from_notice"
         ).click()
    _rerun(at)
    assert [len(table) for table in _previews(at)] == [2, 2]  # Read and Bash results, under the notice and here
    next(b for b in at.button if b.key == "suggestion_dismiss_rules").click()
    _rerun(at)
    assert at.session_state["result_rules_base"] == before
    assert _previews(at) == []
