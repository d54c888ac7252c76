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
history), so they are counted in the notes, with the errors among them. Lines inside a fenced code
block are always the reply's text.

The ``Tokens:`` line Aider writes after each reply (``calculate_and_show_tokens_and_cost`` in
``aider/coders/base_coder.py``: ``Tokens: 4.5k sent, 1.2k cache write, 3.4k cache hit, 87 received.``,
the cache parts only where there were any; ``4,512 sent, 1,278 cached`` before Aug 2024) is that
call's bill, set at the reply it follows (``Conversation.billed``). ``sent`` is the whole request
Aider sent — system prompt, repo map and files included — as the provider counted it (prompt tokens,
plus cache writes where litellm reports them apart) or, where the reply carried no usage, as Aider
counted it with the model's tokenizer. ``format_tokens`` (``aider/utils.py``, since Aug 2024)
rounds it: exact below 1,000, to 100 below 10,000 (``4.5k``), to 1,000 above (``12k``) — two
significant digits at least (``BILLED_DIGITS``, which the log fit says). A reply continued after
the output limit has one line for its calls, summed. A reply after another with no input between
(the editor model's after the architect's, or one answering a message Aider sent itself, which the
history does not hold) opens no call of the read conversation: its line is counted, not placed.
Each session started afresh, so a later session's bills leave out the earlier ones the read
conversation holds.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from typing import Any

from ..conversation import Conversation
from ..words import count
from . import chat
from ._reader import Reader, Text, as_log, counted, with_billed

NAME = "aider"
TITLE = "Aider chat history (.aider.chat.history.md)"
_STARTED = "# aider chat started at "
_USER = "#### "
_TOOL = ">"
_MODEL = re.compile(r"^> (?:Main )?[Mm]odel: (\S+)")
_TOKENS = r"([\d,.]+)(k?)"
_SENT = re.compile(rf"^> Tokens: {_TOKENS} sent")
_CACHE = re.compile(rf"\b{_TOKENS} (cache write|cache hit|cached)\b")
_EMACS = re.compile(r"^\s*-\*-.*-\*-\s*$")
_STARTS = re.compile(r"^# aider chat started at \d{4}-\d\d-\d\d", re.MULTILINE)
BILLED_DIGITS = 2  # format_tokens keeps at least two significant digits ("4.5k", "12k")
# Aider's commands (aider/commands.py, v0.86): an input that starts with "/" or "!" is run by Aider,
# never sent as typed; these four send the rest of the line as a message in the chat's history.
# A command may be abbreviated to any start only it has ("/arch").
COMMANDS = ("add", "architect", "ask", "chat-mode", "clear", "code", "commit", "context", "copy", "copy-context",
            "diff", "drop", "edit", "editor", "editor-model", "exit", "git", "help", "lint", "load", "ls", "map",
            "map-refresh", "model", "models", "multiline-mode", "paste", "quit", "read-only", "reasoning-effort",
            "report", "reset", "run", "save", "settings", "test", "think-tokens", "tokens", "undo", "voice",
            "weak-model", "web")
CHAT_COMMANDS = ("architect", "ask", "code", "context")
# an error word, not a file named after one ("> Added …/classNameTDZError.js to the chat")
_ERROR = re.compile(r"\b(?:\w*Error\b|Traceback \(most recent call last\)|\w*Exception\b|error\b)(?![.\w/\\]*\.\w)")
# Aider's answer to its own question, written as an input once a preference is set (io.confirm_ask):
# "#### Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: all" never reaches the model
_FILES = re.compile(r"> (?:Added|Removed|Dropping) .*(?:the chat|read-only files)")  # names files, errors or not
_CONFIRM = re.compile(r"\(Y\)es/\(N\)o\b.*\]: ")


def looks_like(data: Any) -> int:
    if not isinstance(data, Text):
        return 0
    head = data.text.lstrip()[:2000]
    started = head.startswith(_STARTED) or _STARTS.search(data.text) is not None  # (a header before it: Aider's own)
    return 6 if started or (head.startswith(_USER) and "\n> " in data.text) else 0


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
        self.billed: dict[int, int] = {}  # the reply's message index → the tokens Aider reported sending
        self.cache: Counter[str] = Counter()  # calls whose line reports cache writes / hits
        self.unplaced = 0  # token lines after no reply of their own (an empty or failed answer)
        self.rounded = False  # a bill written as "4.5k" (Aider before Aug 2024 wrote "4,512": exact)
        self.commands: Counter[str] = Counter()  # inputs Aider ran as commands, by the command typed

    def close(self) -> str | None:
        """End the current turn: its lines, trimmed, become one message (blank ones become none);
        the role of the message made, if one was."""
        text = "\n".join(self.lines).strip()
        if self.role == "user" and text.startswith(("/", "!")):
            text = self._command(text)
        made = self.role if self.role and text.strip() else None
        if made:
            self.messages.append({"role": made, "content": text})
        self.role, self.lines = None, []
        return made

    def _command(self, text: str) -> str:
        """What an input that is a command sent to the model: the text after ``/ask``, ``/code``,
        ``/architect`` or ``/context``; nothing for any other (``/add``, ``!ls``, an invalid one)."""
        word, *rest = text.split(maxsplit=1)
        if word.startswith("!"):  # the shell: /run
            self.commands["!"] += 1
            return ""
        name = word[1:].lower()
        found = [command for command in COMMANDS if command.startswith(name)] if name else []
        command = name if name in COMMANDS else found[0] if len(found) == 1 else None
        if command in CHAT_COMMANDS and rest:
            return rest[0].strip()
        self.commands["/" + command if command else word] += 1
        return ""

    def line(self, role: str, text: str) -> None:
        if self.role != role:
            self.close()
            self.role = role
        self.lines.append(text)

    def tool(self, line: str) -> None:
        """A console line: counted, and read for the model's name, the tokens sent and errors. A
        token report right after a reply (the line that ended it) is that reply's bill."""
        replied = self.close() == "assistant"
        self.console += 1
        found = _MODEL.match(line)
        if found:
            self.models[found.group(1)] += 1
        sent = _SENT.match(line)
        if sent:
            tokens = _tokens(sent.group(1), sent.group(2))
            self.rounded = self.rounded or bool(sent.group(2))
            self.cache.update(kind.removeprefix("cache ").replace("cached", "hit") for *_, kind in _CACHE.findall(line))
            if replied:
                self.billed[len(self.messages) - 1] = tokens
            else:
                self.unplaced += 1
        if _ERROR.search(line) and not _FILES.match(line):
            self.errors.append(line[2:].strip()[:160])


def _tokens(number: str, thousands: str) -> int:
    """A count as ``format_tokens`` wrote it (``87``, ``4.5k``, ``12k``), or as Aider did before it
    (``4,512``)."""
    return round(float(number.replace(",", "")) * (1000 if thousands else 1))


def _unbreak(line: str) -> str:
    """Aider ends console and input lines with two spaces (a markdown line break)."""
    return line[:-2] if line.endswith("  ") else line


def read(data: Any) -> Conversation:
    text = data.text if isinstance(data, Text) else str(data)
    history = _History()
    fenced = False
    lines = text.splitlines()
    if lines and _EMACS.match(lines[0]):  # an editor's mode line someone put on top (Aider's own fixture)
        lines = lines[1:]
    for raw in lines:
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
        elif line.startswith("####") and not _CONFIRM.search(line):
            history.line("user", line[len(_USER):])
        else:
            history.tool(line)
    history.close()
    body: dict[str, Any] = {"messages": history.messages}
    if history.models:
        body["model"] = history.models.most_common(1)[0][0]
    digits = BILLED_DIGITS if history.rounded else None
    conversation = replace(as_log(chat.read(body), NAME, _notes(history)), billed_digits=digits)
    return with_billed(conversation, history.billed, "Aider", _field(history), history.unplaced)


def _field(history: _History) -> str:
    """What the bills are, for the note ``with_billed`` writes: the field, its rounding, the cache."""
    cache = (f"; beside it, cache tokens on some calls ({counted(dict(history.cache))}): Aider adds the writes "
             "to 'sent', the hits are in it only as far as litellm counts them in the prompt") if history.cache else ""
    rounded = (f", rounded by Aider to {BILLED_DIGITS} significant digits — '4.5k' is 4,450 to 4,549"
               if history.rounded else ", exact")
    return f"'Tokens: … sent'{rounded}{cache}"


def _notes(history: _History) -> list[str]:
    turns = Counter(message["role"] for message in history.messages)
    notes = [f"Read from an Aider chat history: {count(history.sessions, 'session')}, {count(turns['user'], 'input')} "
             f"and {count(turns['assistant'], 'reply', 'replies')}, as text turns (Aider edits through "
             "SEARCH/REPLACE blocks in its replies, not tool calls). Each session started afresh; they are read "
             "one after another. The history holds neither Aider's system prompt nor the repo map and files it "
             "sent, so the count leaves them out.",
             f"Left out: {count(history.console, 'console line')} (Aider's '> ' output to the person: commands "
             "run, edits applied, confirmations, token reports), not sent to the model as written."]
    if history.commands:
        notes.append(f"Left out: {count(sum(history.commands.values()), 'input')} that Aider ran itself "
                     f"({counted(dict(history.commands.most_common(8)))}): commands, not sent to the model. The "
                     "text after /ask, /code, /architect and /context is kept: Aider sends it as the message.")
    if history.errors:
        shown = "; ".join(history.errors[:3])
        notes.append(f"Errors Aider reported on the console: {count(len(history.errors), 'line')}, e.g. {shown}.")
    return notes


READER = Reader(NAME, TITLE, looks_like, read)
