"""The run log a wrapped client writes (``pg.compacting(client, policy, log=…)``), read back as the run.

One JSON object a line, one line per call the provider took, each marked ``"kind":
"compaction-playground-call"``: the call's figures (``agent.record.CallRecord``: tokens before and
after, edits, cache prefix, the provider's ``usage``) and what rebuilds the conversation. A line
holds only what is new at its call, so the log grows with the run and not with its square: ``at``,
the index in the caller's list (``messages``, or Responses' ``input``) where what the last call had
not seen begins, and ``added``, the caller's list from there on, uncompacted, as the SDK sent it;
``head`` (the model, tools, ``system`` or ``instructions``) only when it changed; ``reply``, the
provider's reply as items of that list (None for a stream the wrapper did not see assembled).

Reading concatenates the ``added`` parts of the run (a line marked ``restarted`` begins the list
again, as the wrapper did), adds the last call's reply, and reads the body with the API's own reader,
counted with the model the wrapper counted with: the very conversation the agent held, whose replay
gives the figures the wrapped run logged. A log whose client used more than one endpoint holds one
run per endpoint: the last call's is read, the others counted in the notes.
"""

from __future__ import annotations

from typing import Any

from ..conversation import Conversation
from ..errors import InputError
from ..words import plural
from . import anthropic, chat, responses
from ._reader import Reader, as_log, log_lines
from ._wire import check, maybe, need

NAME = "playground-agent"
TITLE = "Compaction Playground agent run log (JSONL)"
KIND = "compaction-playground-call"
APIS = {"chat.completions": (chat, "messages"), "responses": (responses, "input"), "messages": (anthropic, "messages")}


def line(record: dict[str, Any], at: int, added: list[Any], head: dict[str, Any] | None,
         reply: list[Any] | None) -> dict[str, Any]:
    """One call's log line: its ``record`` (the figures) and its part of the conversation."""
    found = {"kind": KIND, **record, "at": at, "added": added}
    if head is not None:
        found["head"] = head
    found["reply"] = reply
    return found


def looks_like(data: Any) -> int:
    lines = log_lines(data)
    return 6 if lines and isinstance(lines[0], dict) and lines[0].get("kind") == KIND else 0


def read(data: Any) -> Conversation:
    lines = log_lines(data) or []
    numbered = [(f"line {number}", check(found, dict, f"line {number}")) for number, found in enumerate(lines, 1)]
    if not numbered:
        raise InputError("not a wrapped run's log: it holds no JSON line (pg.compacting writes one per call)")
    for where, found in numbered:
        if found.get("kind") != KIND:
            raise InputError(f"not a call of a wrapped run (its \"kind\" is not {KIND!r})", where=where)
    api = need(numbered[-1][1], "api", str, numbered[-1][0])
    if api not in APIS:
        raise InputError(f"unknown endpoint (one of {', '.join(APIS)})", where=f"{numbered[-1][0]}.api", value=api)
    module, key = APIS[api]
    run = [(where, found) for where, found in numbered if found.get("api") == api]
    wire, head, calls, notes = _rebuilt(run)
    last_where, last = run[-1]
    reply = maybe(last, "reply", list, last_where)
    if reply is None:
        notes.append(f"the last call's reply is not in the log ({last_where}: a stream the wrapper passed on "
                     "unread), so the run ends with that call's request and replay counts one call fewer")
    others = len(numbered) - len(run)
    if others:
        notes.append(f"{plural(others, 'call')} of another endpoint left out: this is the {api} run")
    body = {**head, key: wire + (reply or [])}
    model = maybe(last, "model", str, last_where)
    if model is not None:  # what the wrapper counted with (the head's model may be a deployment's name)
        body["model"] = model
    try:
        conversation = module.read(body)
    except InputError as exc:
        raise exc.within(f"the {api} run rebuilt from the log") from None
    policy = maybe(last, "policy", str, last_where)
    ran = f", run under the {policy} policy (replay it with that policy to see the figures the log holds)" \
        if policy else ""
    return as_log(conversation, NAME, [f"{plural(calls, 'call')} of a wrapped client's {api} run{ran}", *notes])


def _rebuilt(run: list[tuple[str, dict[str, Any]]]) -> tuple[list[Any], dict[str, Any], int, list[str]]:
    """The caller's list at the run's last call, its head, the calls since the run last began, and
    notes on how it was put together."""
    wire: list[Any] = []
    head: dict[str, Any] = {}
    restarts = calls = 0
    for where, found in run:
        head = maybe(found, "head", dict, where) or head
        if found.get("restarted"):
            wire, restarts, calls = [], restarts + 1, 0
        calls += 1
        at = need(found, "at", int, where)
        if not 0 <= at <= len(wire):
            raise InputError(f"the call's new part starts at item {at} of a list the log holds {len(wire)} of",
                             where=f"{where}.at", value=at)
        wire[at:] = need(found, "added", list, where)
    notes = [f"the agent started its history again {plural(restarts, 'time')}: the last run is read"] if restarts \
        else []
    return wire, head, calls, notes


READER = Reader(NAME, TITLE, looks_like, read)
