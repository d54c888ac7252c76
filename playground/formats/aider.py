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
history), so they are counted in the notes, with the errors among them.

Every write goes through ``append_chat_history``: a console write of many lines (a shell command
Aider suggests, an edit error, a ``--message`` on the command line) has only its first line quoted,
and every input or console write ends with two spaces, so the lines after such a first line, up to
the one that ends so, are the console's, not a reply. A ``# aider chat started at`` header always
starts a session and an input line always starts a turn, even inside a code block a reply left open
(a reply cut by ^C is written as far as it came, fence and all); inside a code block, a ``####`` or
``>`` line without those two spaces is the reply's own text (a markdown heading in a file it edits).
A reply cut by ^C is followed in every later request by the two messages Aider adds after it. An
edit error Aider writes after the URL of its edit-errors page is the message it sends back itself
(its reflection): a user message here, so the reply after it is a call of its own.

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
Each session starts afresh (unless ``--restore-chat-history`` says 'Restored previous conversation
history.'), as does ``/clear`` or ``/reset``: each is an ``AgentCompaction`` that keeps nothing, so
``as-it-ran`` sends each session's messages alone, as Aider did.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from typing import Any

from ..conversation import AgentCompaction, Conversation
from ..words import plural
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
# after an edit its format cannot apply, Aider writes this URL, then the error, which it sends back to the
# model as the next message (``apply_updates`` in aider/coders/base_coder.py: ``reflected_message = str(err)``)
EDIT_ERRORS = "https://aider.chat/docs/troubleshooting/edit-errors.html"
RESTORED = "Restored previous conversation history."  # get_announcements, with --restore-chat-history
INTERRUPTED = ("^C KeyboardInterrupt", "I see that you interrupted my previous reply.")


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
        self.reply: int | None = None  # the index of the reply just closed, while no other message follows it
        self.cut: int | None = None  # the index the next message takes after a "^C again to exit" line
        self.interrupted = 0  # replies cut by ^C, each followed by the two messages Aider adds
        self.restart: tuple[str, str] | None = None  # a reset of the context not yet at a message
        self.restarts: dict[int, tuple[str, str]] = {}  # the message index where it resets → (trigger, where)
        self.reflected = False  # the next console write is an edit error Aider sends back as the next message
        self.reflections = 0  # such errors, read as the messages Aider sent

    def close(self) -> str | None:
        """End the current turn: its lines, trimmed, become one message (blank ones become none);
        the role of the message made, if one was."""
        text = "\n".join(self.lines).strip()
        if self.role == "user" and text.startswith(("/", "!")):
            text = self._command(text)
        made = self.role if self.role and text.strip() else None
        self.reply = None
        if made:
            if self.restart:
                if self.messages:
                    self.restarts[len(self.messages)] = self.restart
                self.restart = None
            self.messages.append({"role": made, "content": text})
            if made == "assistant":
                self.reply = len(self.messages) - 1
                if self.cut == self.reply:
                    self._interrupted()
        self.role, self.lines = None, []
        return made

    def _interrupted(self) -> None:
        """A reply cut by ^C: Aider keeps what had come and adds two messages of its own that the
        history does not hold (``send_message`` in aider/coders/base_coder.py, on KeyboardInterrupt), so
        every later request of the session sends them."""
        self.messages += [{"role": "user", "content": INTERRUPTED[0]}, {"role": "assistant", "content": INTERRUPTED[1]}]
        self.interrupted += 1
        self.cut = None

    def session(self, line: str) -> None:
        """A ``# aider chat started at`` header: a new session, which starts afresh."""
        self.sessions += 1
        self.restart = ("new session", f"'{line.strip()}': a new Aider session starts with no earlier message")
        self.reflected, self.cut = False, None

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
        if command in ("clear", "reset"):  # commands.py _clear_chat_history (older versions say nothing after it)
            self.restart = (f"/{command}", f"'/{command}': Aider cleared its chat history")
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
        self.close()
        replied = self.reply
        if self.reflected:  # the edit error after the URL line: Aider's next message (its "reflection")
            self.reflected = False
            self.role, self.lines = "user", [line[1:].strip()]
            self.reflections += 1
            return
        self.console += 1
        text = line[1:].strip()
        if text == EDIT_ERRORS:
            self.reflected = True
        elif text.startswith("^C again to exit"):
            self.cut = len(self.messages)
        elif text == RESTORED:
            self.restart = None  # --restore-chat-history: this session starts with the earlier ones
        found = _MODEL.match(line)
        if found:
            self.models[found.group(1)] += 1
        sent = _SENT.match(line)
        if sent:
            tokens = _tokens(sent.group(1), sent.group(2))
            self.rounded = self.rounded or bool(sent.group(2))
            self.cache.update(kind.removeprefix("cache ").replace("cached", "hit") for *_, kind in _CACHE.findall(line))
            if replied is not None:
                self.billed[replied] = tokens
            else:
                self.unplaced += 1
        if _ERROR.search(line) and not _FILES.match(line):
            self.errors.append(line[2:].strip()[:160])

    def more(self, line: str) -> None:
        """A line that continues the console write before it: the edit error Aider sends back, or
        console output like any other."""
        if self.role == "user":
            self.lines.append(line)
            return
        self.console += 1
        if _ERROR.search(line):
            self.errors.append(line.strip()[:160])


def _tokens(number: str, thousands: str) -> int:
    """A count as ``format_tokens`` wrote it (``87``, ``4.5k``, ``12k``), or as Aider did before it
    (``4,512``)."""
    return round(float(number.replace(",", "")) * (1000 if thousands else 1))


def _unbreak(line: str) -> str:
    """Aider ends console and input lines with two spaces (a markdown line break)."""
    return line[:-2] if line.endswith("  ") else line


def _written(raw: str, marked: bool) -> bool:
    """Whether Aider's writer ended this line: ``append_chat_history(…, linebreak=True)`` ends every
    input and console write with two spaces, so in a file that kept them (``marked``) a ``####`` or
    ``>`` line without them inside a code block is the reply's text; a file stripped of them (an
    editor, a hook) cannot tell, and takes every such line as Aider's, as Aider's own reader does
    (``split_chat_history_markdown`` in aider/utils.py)."""
    return raw.endswith("  ") or not marked


def read(data: Any) -> Conversation:
    text = data.text if isinstance(data, Text) else str(data)
    history = _History()
    lines = text.splitlines()
    if lines and _EMACS.match(lines[0]):  # an editor's mode line someone put on top (Aider's own fixture)
        lines = lines[1:]
    marked = any(raw.startswith((_USER, _TOOL)) and raw.endswith("  ") for raw in lines)
    fenced = False
    console = None  # a console write still going on: "open" until a line Aider ended, "lazy" while lines follow
    for raw in lines:
        line = _unbreak(raw)
        if line.startswith(_STARTED):  # always a new session, whatever a cut reply left open
            history.close()
            history.session(line)
            fenced, console = False, None
        elif (line == "####" or line.startswith(_USER)) and (not fenced or _written(raw, marked)):
            fenced, console = False, None  # an input always starts a new turn: a reply cut by ^C ends here
            if _CONFIRM.search(line):
                history.tool(line)
            else:
                history.line("user", line[len(_USER):])
        elif console == "open" or (console == "lazy" and line.strip() and not line.startswith(_TOOL)):
            # the rest of one multi-line console write (a shell command's lines, an edit error, a
            # --message on the command line): append_chat_history prefixes its first line only, and
            # ends the write's last line with two spaces
            history.more(line)
            if console == "open" and raw.endswith("  "):
                console = None
        elif line.startswith(_TOOL) and (not fenced or _written(raw, marked)):
            fenced = False
            history.tool(line)
            console = "open" if marked and not raw.endswith("  ") else "lazy"
        else:
            console = None
            if line.lstrip().startswith("```"):
                fenced = not fenced
            if line.strip() or history.role == "assistant":
                history.line("assistant", line)
            else:
                history.close()  # the blank line after an input ends it
    history.close()
    body: dict[str, Any] = {"messages": history.messages}
    if history.models:
        body["model"] = history.models.most_common(1)[0][0]
    digits = BILLED_DIGITS if history.rounded else None
    conversation = replace(as_log(chat.read(body), NAME, _notes(history)), billed_digits=digits)
    conversation = with_billed(conversation, history.billed, "Aider", _field(history), history.unplaced)
    return replace(conversation, compactions=_restarts(conversation, history.restarts))


def _restarts(conversation: Conversation, restarts: dict[int, tuple[str, str]]) -> tuple[AgentCompaction, ...]:
    """Each new session and each ``/clear`` or ``/reset`` as the agent's own reset of its context: the
    requests after it hold nothing from before (nothing kept, no summary), so ``as-it-ran`` sends each
    session's messages alone, as Aider did."""
    items = conversation.items
    first: dict[int, int] = {}
    for position, item in enumerate(items):
        if item.origin is not None:
            first.setdefault(item.origin.index, position)
    return tuple(AgentCompaction(first[index], summary=False, trigger=trigger, where=where, log=items)
                 for index, (trigger, where) in sorted(restarts.items()) if first.get(index, 0) > 0)


def _field(history: _History) -> str:
    """What the bills are, for the note ``with_billed`` writes: the field, its rounding, the cache."""
    cache = (f"; beside it, cache tokens on some calls ({counted(dict(history.cache))}): Aider adds the writes "
             "to 'sent', the hits are in it only as far as litellm counts them in the prompt") if history.cache else ""
    rounded = (f", rounded by Aider to {BILLED_DIGITS} significant digits — '4.5k' is 4,450 to 4,549"
               if history.rounded else ", exact")
    return f"'Tokens: … sent'{rounded}{cache}"


def _notes(history: _History) -> list[str]:
    turns = Counter(message["role"] for message in history.messages)
    inputs = turns["user"] - history.reflections - history.interrupted  # (not the person's: Aider's own)
    replies = turns["assistant"] - history.interrupted
    notes = [f"Read from an Aider chat history: {plural(history.sessions, 'session')}, {plural(inputs, 'input')} "
             f"and {plural(replies, 'reply', 'replies')}, as text turns (Aider edits through "
             "SEARCH/REPLACE blocks in its replies, not tool calls). Each session started afresh; they are read "
             "one after another. The history holds neither Aider's system prompt nor the repo map and files it "
             "sent, so the count leaves them out.",
             f"Left out: {plural(history.console, 'console line')} (Aider's '> ' output to the person: commands "
             "run, edits applied, confirmations, token reports), not sent to the model as written."]
    if history.reflections:
        notes.append(f"Read as Aider's own messages: {plural(history.reflections, 'edit error')} it wrote on the "
                     "console after 'The LLM did not conform to the edit format.' and sent back to the model as the "
                     "next message (its reflection), so the reply after each is a call of its own.")
    if history.interrupted:
        notes.append(f"{plural(history.interrupted, 'reply', 'replies')} cut by ^C: Aider keeps what had come and adds "
                     f"'{INTERRUPTED[0]}' and '{INTERRUPTED[1]}' after it, which the history does not hold; both are "
                     "added, as every later request of that session sent them.")
    if history.restarts:
        kinds = Counter(trigger for trigger, _ in history.restarts.values())
        notes.append(f"Aider started afresh {plural(len(history.restarts), 'time')} ({counted(dict(kinds))}): each is "
                     "read as the agent resetting its own context, so the run as it ran (`as-it-ran`) sends only the "
                     "messages since, and the full history is the second figure.")
    if history.commands:
        notes.append(f"Left out: {plural(sum(history.commands.values()), 'input')} that Aider ran itself "
                     f"({counted(dict(history.commands.most_common(8)))}): commands, not sent to the model. The "
                     "text after /ask, /code, /architect and /context is kept: Aider sends it as the message.")
    if history.errors:
        shown = "; ".join(history.errors[:3])
        notes.append(f"Errors Aider reported on the console: {plural(len(history.errors), 'line')}, e.g. {shown}.")
    return notes


READER = Reader(NAME, TITLE, looks_like, read)
