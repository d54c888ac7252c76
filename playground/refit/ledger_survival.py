"""How much of a run's ledger (``facts.ledger``) the offline summary keeps: the run replayed under the
``summarize`` policy (the offline summarizer at every call over its limit), and the share of each type's
facts still visible in the last request. Used by the test that holds the survival targets and by
``scripts/benchmark_ledger.py``, which prints them; ``long_session`` is the generated run they are set on."""

from __future__ import annotations

import json
from typing import Any

from ..conversation import Conversation
from ..facts.ledger import TYPES
from ..meter.tokens import Meter
from ..policies import make
from ..run.fates import KEPT
from ..run.prices import read_prices
from ..run.replay import replay


def survival(conversation: Conversation, limit: int, keep_steps: int = 2) -> dict[str, tuple[int, int]]:
    """Per type, (facts kept, facts) at the end of the run summarized at ``limit`` tokens."""
    run = replay(conversation, make("summarize", limit=limit, keep_steps=keep_steps), Meter(conversation.model),
                 read_prices().get(conversation.model))
    end = run.facts.end if run.facts else {}
    return {kind: (end[kind][KEPT], sum(end[kind].values())) for kind in TYPES if sum(end[kind].values())}


_SUBJECTS = ("the config loader", "every public function", "the CSV exporter", "the retry loop", "the cache layer",
             "the CLI parser", "each migration", "the HTTP client")
_RULES = ("must never write outside the project root", "must keep its error messages in English",
          "should always log the request id", "must not add a new dependency", "should only read UTF-8 files",
          "must stay under 200 lines")


def long_session(requirements: int = 40, files: int = 80) -> dict[str, Any]:
    """A Chat run in which the user states ``requirements`` requirements, one per turn among the agent's
    work, and the agent writes ``files`` files (each with a few hundred tokens of code), runs a test
    after each, and sees every fifth test fail: long enough that a summary at 4,000 tokens replaces most of it."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."},
                                      {"role": "user", "content": "Build the reporting service."}]
    said = 0
    for n in range(files):
        if said < requirements and n * requirements // files >= said:
            subject, rule = _SUBJECTS[said % len(_SUBJECTS)], _RULES[said % len(_RULES)]
            messages.append({"role": "user", "content": f"Requirement {said + 1}: {subject} {rule} (case {said + 1})."})
            said += 1
        path, call = f"src/service/module_{n:03d}.py", f"call_{n}"
        code = "\n".join(f"def handler_{n}_{k}(request):\n    return respond(request, {k})" for k in range(12))
        test = f"python -m pytest tests/test_module_{n:03d}.py -q"
        messages += [
            {"role": "assistant", "content": f"Writing module {n}.", "tool_calls": [
                {"id": call, "type": "function", "function": {"name": "write_file", "arguments": json.dumps(
                    {"path": path, "content": code})}}]},
            {"role": "tool", "tool_call_id": call, "content": f"Wrote {path}."},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"{call}_t", "type": "function", "function": {"name": "bash", "arguments": json.dumps(
                    {"command": test})}}]},
            {"role": "tool", "tool_call_id": f"{call}_t", "content": (
                f"Exit code 1\nFAILED tests/test_module_{n:03d}.py::test_handler - AssertionError: {n}"
                if n % 5 == 0 else "Exit code 0\n3 passed")}]
    messages.append({"role": "assistant", "content": "Done."})
    return {"model": "gpt-4o", "messages": messages}
