"""Whether calling a tool again brings its output back — what makes a compacted result
*retrievable* rather than lost.

A reference such as "File content from x.py. Re-read if needed." is only honest when the same
call fetches the same data again. That is decided by a tool's arguments, never by its name, so
tools nobody has seen are judged too: most of its calls carry

* a path or URL (``file_path``, ``url``…), a query or pattern (``query``, ``pattern``…) or a
  command (``command``, ``cmd``…): a read, a search or a command, which the same arguments
  fetch again — **re-fetchable**;

and it is **not** re-fetchable (its tokens count as lost when a rule replaces them) when

* its calls carry a handle to a running process or session (``session_id``, ``bash_id``,
  ``shell_id``…): interactive input such as Codex's ``write_stdin`` or a background shell's
  output, which depends on where that process has got to; or
* they carry none of the above: a task for another agent (``Task``'s ``prompt``), a browser
  action (``click``, ``type``), a patch — calling again does something again, it does not fetch
  what it returned.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..conversation import Conversation, ToolCall

# Argument names that say what kind of work a call did (checked in this order: a Grep has both a
# pattern and a path, and is a search; str_replace_editor has a command and a path, and is a read).
SEARCH_ARGUMENTS = ("query", "q", "pattern", "search_query", "regex", "search_term", "keywords")
READ_ARGUMENTS = ("file_path", "path", "filename", "file_name", "file", "url", "uri", "notebook_path")
SHELL_ARGUMENTS = ("command", "cmd", "script")
SESSION_ARGUMENTS = ("session_id", "process_id", "pid", "shell_id", "bash_id", "terminal_id", "exec_id")
FETCHING = (("search", SEARCH_ARGUMENTS), ("read", READ_ARGUMENTS), ("shell", SHELL_ARGUMENTS))
PRESENT = 0.8  # an argument counts as the tool's when at least this share of its calls carry it


class Carried:
    """How many of a tool's calls there are and how many carry each argument name: all that
    deciding re-fetchability reads, kept as counts so a growing run adds its new calls only."""

    def __init__(self, calls: Iterable[Mapping[str, Any]] = ()) -> None:
        self.calls = 0
        self.names: Counter[str] = Counter()
        for arguments in calls:
            self.add(arguments)

    def add(self, arguments: Mapping[str, Any]) -> None:
        self.calls += 1
        self.names.update(arguments.keys())


Calls = Sequence[Mapping[str, Any]] | Carried


def _carried(calls: Calls) -> Carried:
    return calls if isinstance(calls, Carried) else Carried(calls)


def present(calls: Calls, names: Iterable[str]) -> str | None:
    """The first of ``names`` that most of the calls (their arguments) carry."""
    carried = _carried(calls)
    return next((name for name in names if carried.names[name] >= max(1, PRESENT * carried.calls)), None)


def fetched_by(calls: Calls) -> tuple[str, str] | None:
    """``(kind, argument)`` when calling again with the same arguments fetches a tool's output
    again — ``search``, ``read`` or ``shell`` and the argument that says what — else None."""
    calls = _carried(calls)
    if present(calls, SESSION_ARGUMENTS) or not calls.calls:
        return None
    return next(((kind, argument) for kind, names in FETCHING if (argument := present(calls, names))), None)


def why_not(calls: Calls) -> str:
    """Why a tool's output cannot be fetched again, in words (for a tool ``fetched_by`` rejects)."""
    handle = present(calls, SESSION_ARGUMENTS)
    if handle:
        return (f"its calls name a running session ({handle!r}): what it returned depended on where that process had "
                "got to")
    return ("its calls carry no path, query or command: calling it again would do something again (run a task, an "
            "action, a patch), not fetch what it returned")


def tool_calls(conversation: Conversation) -> dict[str, list[Mapping[str, Any]]]:
    """Each tool's calls' arguments, in order of first use."""
    calls: dict[str, list[Mapping[str, Any]]] = {}
    for item in conversation.items:
        if isinstance(item, ToolCall):
            calls.setdefault(item.name, []).append(item.parsed_arguments() or {})
    return calls


def one_off_tools(conversation: Conversation) -> dict[str, str]:
    """The tools of ``conversation`` whose output calling again does not bring back, each with why."""
    return one_off({tool: Carried(calls) for tool, calls in tool_calls(conversation).items()})


def one_off(carried: Mapping[str, Carried]) -> dict[str, str]:
    """The same, from each tool's counts (``Carried``), in order of first use."""
    return {tool: why_not(calls) for tool, calls in carried.items() if fetched_by(calls) is None}
