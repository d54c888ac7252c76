"""Aider chat histories (``.aider.chat.history.md`` in the project folder), read as a Chat
Completions conversation of text turns.

Format (Aider-AI/aider @ 5dc9490b, ``aider/io.py``): markdown, appended to by every session. A
session starts with ``# aider chat started at <date>``; each line of the person's input is written
with ``#### `` before it (a multi-line input is one turn); the model's reply is plain text; Aider's
own console output (``tool_output``, ``tool_error``, ``tool_warning``, confirmation questions, the
``Tokens: … sent`` line after each call) is written as ``> `` lines. Aider edits files through
SEARCH/REPLACE blocks in its replies, not tool calls, so there are none to compact: the replies are
assistant messages, the inputs user messages. The ``> `` lines were shown to the person, not sent to
the model (what Aider does send besides — the repo map, the files added to the chat — is not in the
history), so they are counted in the notes, with the errors among them and the tokens Aider
reported sending. Lines inside a fenced code block are always the reply's text.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from ..conversation import Conversation
from ..words import count
from . import chat
from ._reader import Reader, Text, as_log

NAME = "aider"
TITLE = "Aider chat history (.aider.chat.history.md)"
_STARTED = "# aider chat started at "
_USER = "#### "
_TOOL = ">"
_MODEL = re.compile(r"^> (?:Main )?[Mm]odel: (\S+)")
_SENT = re.compile(r"^> Tokens: ([\d.]+)(k?) sent")
_ERROR = re.compile(r"\b(?:\w*Error\b|Traceback \(most recent call last\)|\w*Exception\b|error\b)")


def looks_like(data: Any) -> int:
    if not isinstance(data, Text):
        return 0
    head = data.text.lstrip()[:2000]
    return 6 if head.startswith(_STARTED) or (head.startswith(_USER) and "\n> " in data.text) else 0


class _History:
    """Chat messages from the history's lines, and what its ``> `` lines said."""

    def __init__(self) -> None:
        self.messages: list[dict[str, str]] = []
        self.role: str | None = None
        self.lines: list[str] = []
        self.sessions = 0
        self.console = 0
        self.errors: list[str] = []
        self.models: Counter[str] = Counter()
        self.sent: list[int] = []

    def close(self) -> None:
        """End the current turn: its lines, trimmed, become one message (blank ones become none)."""
        text = "\n".join(self.lines).strip()
        if self.role and text.strip():
            self.messages.append({"role": self.role, "content": text})
        self.role, self.lines = None, []

    def line(self, role: str, text: str) -> None:
        if self.role != role:
            self.close()
            self.role = role
        self.lines.append(text)

    def tool(self, line: str) -> None:
        """A console line: counted, and read for the model's name, the tokens sent and errors."""
        self.close()
        self.console += 1
        found = _MODEL.match(line)
        if found:
            self.models[found.group(1)] += 1
        sent = _SENT.match(line)
        if sent:
            self.sent.append(round(float(sent.group(1)) * (1000 if sent.group(2) else 1)))
        if _ERROR.search(line):
            self.errors.append(line[2:].strip()[:160])


def _unbreak(line: str) -> str:
    """Aider ends console and input lines with two spaces (a markdown line break)."""
    return line[:-2] if line.endswith("  ") else line


def read(data: Any) -> Conversation:
    text = data.text if isinstance(data, Text) else str(data)
    history = _History()
    fenced = False
    for raw in text.splitlines():
        line = _unbreak(raw)
        if fenced or not line.startswith((_STARTED, "####", _TOOL)):
            if line.lstrip().startswith("```"):
                fenced = not fenced
            if line.strip() or history.role == "assistant":
                history.line("assistant", line)
            else:
                history.close()  # the blank line after an input ends it
        elif line.startswith(_STARTED):
            history.close()
            history.sessions += 1
        elif line.startswith("####"):
            history.line("user", line[len(_USER):])
        else:
            history.tool(line)
    history.close()
    body: dict[str, Any] = {"messages": history.messages}
    if history.models:
        body["model"] = history.models.most_common(1)[0][0]
    conversation = chat.read(body)
    return as_log(conversation, NAME, _notes(history))


def _notes(history: _History) -> list[str]:
    turns = Counter(message["role"] for message in history.messages)
    notes = [f"Read from an Aider chat history: {count(history.sessions, 'session')}, {count(turns['user'], 'input')} "
             f"and {count(turns['assistant'], 'reply', 'replies')}, as text turns (Aider edits through "
             "SEARCH/REPLACE blocks in its replies, not tool calls). Each session started afresh; they are read "
             "one after another. The history holds neither Aider's system prompt nor the repo map and files it "
             "sent, so the count leaves them out.",
             f"Left out: {count(history.console, 'console line')} (Aider's '> ' output to the person: commands "
             "run, edits applied, confirmations, token reports), not sent to the model as written."]
    if history.errors:
        shown = "; ".join(history.errors[:3])
        notes.append(f"Errors Aider reported on the console: {len(history.errors):,} lines, e.g. {shown}.")
    if history.sent:
        notes.append(f"Aider reported the tokens it sent on {len(history.sent):,} calls ('Tokens: … sent', rounded "
                     f"to hundreds): {history.sent[0]:,} on the first, {max(history.sent):,} at most.")
    return notes


READER = Reader(NAME, TITLE, looks_like, read)
