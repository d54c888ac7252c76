"""Facts of the work the agent's tools did: the files read and written, the commands run and how
each ended, and the errors.

Read from a call's arguments by their names and shapes, never by a tool's name alone, so a tool
nobody has seen is read too: a path argument (``file_path``, ``path``, ``filePath``…) is a file
written when the call also carries new content (``content``, ``new_string``, a ``diff``…) or its
tool's name says it writes (``write_file``, ``create``, ``replace``), else a file read when the
path names a file (an extension: a directory listed or searched is not a file read). A shell
command names files too: the target of ``>``, ``tee``, ``sed -i``, ``touch``, ``cp``/``mv`` is
written, the file ``cat``/``head``/``tail``/``nl``/``sed -n`` prints is read (a tool whose name says it
finds or searches reads no file it is given: ``find_file(file_name=…)`` looked for it). A patch
(Codex's ``apply_patch``) names the files it adds, updates and deletes. An exit status is read from the
result's own words (``Exit code 1``, ``<returncode>1</returncode>``), else from the error flag or patterns."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Mapping
from typing import Any

from ..conversation import ToolResult, content_text
from ..rules.errorpatterns import error_detail
from ..rules.refetch import READ_ARGUMENTS, SHELL_ARGUMENTS

PATH_ARGUMENTS = ("file_path", "filePath", "path", "filename", "file_name", "notebook_path", "absolute_path",
                  "target_file", "files", "paths")
CONTENT_ARGUMENTS = ("content", "new_string", "newString", "new_str", "file_text", "new_text", "diff", "edits",
                     "code_edit", "new_content", "patch")
_WRITING_NAME = re.compile(r"write|create|edit|replace|insert|patch|append|save", re.I)
_SEARCHING_NAME = re.compile(r"find|search|grep|glob|list", re.I)  # a file name it was given is what it looked for
_FILE = re.compile(r"^[\w.~@+/-]*[\w-]\.[A-Za-z][A-Za-z0-9]{0,7}$|^[\w.~@+-]*(?:/[\w.@+-]+){2,}$")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)
_PATCH = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M)
_EXIT = re.compile(r"(?:exit(?:ed with)? (?:code|status)|\"?exit_code\"?|returncode>?)\s*[:=]?\s*(-?\d+)", re.I)
_ERROR_LINE = re.compile(r"^\s*(?:[\w.]*(?:Error|Exception)\b[^\n]*:|error\b|fatal\b|E\s)[^\n]*", re.I | re.M)
_SHELL_WRITES = re.compile(r"(?:^|[\s;&|])(?:>>?|tee(?: -a)?|touch|"
                           r"sed -i(?:\.\w+)?(?: -e)?(?: '[^']*'| \"[^\"]*\"| \S+))\s+([^\s;&|<>]+)")
_SHELL_READS = re.compile(r"(?:^|[\s;&|(])(?:cat|head|tail|nl|less|more|wc)(?:\s+-\S+)*"
                          r"((?:\s+[^\s;&|<>-][^\s;&|<>]*)+)")
_PRINTS = re.compile(r"(?:^|[\s;&|])sed -n\s+(?:'[^']*'|\"[^\"]*\"|\S+)\s+([^\s;&|<>]+)")  # sed -n '5,9p' file
_COPIES = re.compile(r"(?:^|[\s;&|])(?:cp|mv)(?:\s+-\S+)*\s+\S+\s+([^\s;&|<>]+)")
MAX_COMMAND = 200  # characters of a command (and an error line) kept as the fact


def _file(text: str) -> bool:
    """A file's path: a name with an extension, or three or more segments; not a URL, a flag or /dev."""
    return (0 < len(text) <= 300 and "\n" not in text and not _URL.match(text) and not text.startswith(("-", "/dev/"))
            and bool(_FILE.match(text)))


def _unquoted(word: str) -> str:
    return word.strip("'\"`")


def _values(arguments: Mapping[str, Any], names: tuple[str, ...]) -> Iterator[str]:
    for name in names:
        value = arguments.get(name)
        if isinstance(value, str):
            yield value.strip()
        elif isinstance(value, list | tuple):
            yield from (inner.strip() for inner in value if isinstance(inner, str))


def command_of(arguments: Mapping[str, Any]) -> str | None:
    """The shell command a call ran: a ``command`` string, or the script of ``["bash", "-lc", script]``."""
    for name in SHELL_ARGUMENTS:
        value = arguments.get(name)
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, list | tuple) and value and all(isinstance(v, str) for v in value):
            return value[-1].strip() if len(value) >= 3 and value[1] in ("-c", "-lc") else shlex.join(value)
    return None


def command_line(command: str) -> str:
    """The fact a command is kept as: the command, cut to ``MAX_COMMAND`` characters."""
    return command.strip()[:MAX_COMMAND]


def paths(name: str, arguments: Mapping[str, Any], reads_files: bool) -> Iterator[tuple[str, bool]]:
    """The files a call touched, each with whether it wrote it. ``reads_files``: the tool's calls
    carry a path the same call fetches again (``refetch.fetched_by`` says ``read``)."""
    writes = any(name in arguments for name in CONTENT_ARGUMENTS) or bool(_WRITING_NAME.search(name))
    reads_files = reads_files and not _SEARCHING_NAME.search(name)
    for value in _values(arguments, PATH_ARGUMENTS + tuple(n for n in READ_ARGUMENTS if n not in PATH_ARGUMENTS)):
        if _file(value) and (writes or reads_files):
            yield value, writes
    for text in _values(arguments, ("input", "patch", *SHELL_ARGUMENTS)):
        for found in _PATCH.finditer(text):
            yield (found[1] or found[2]).strip(), True
    command = command_of(arguments)
    if command and "*** Begin Patch" not in command:
        yield from shell_paths(command)


def shell_paths(command: str) -> Iterator[tuple[str, bool]]:
    """The files a shell command writes (redirections, ``tee``, ``sed -i``, ``touch``, a copy's
    target) and reads (``cat``, ``head``, ``tail``, ``nl``, ``less``, ``wc``, ``sed -n``), outside heredoc bodies."""
    head, _, _ = command.partition("<<")
    body = head + command[len(head):].split("\n", 1)[0] if "<<" in command else command
    for found in _SHELL_WRITES.finditer(body):
        if _file(target := _unquoted(found[1])):
            yield target, True
    for found in _COPIES.finditer(body):
        if _file(target := _unquoted(found[1])):
            yield target, True
    for found in _SHELL_READS.finditer(body):
        for word in found[1].split():
            if _file(word := _unquoted(word)):
                yield word, False
    for found in _PRINTS.finditer(body):
        if _file(target := _unquoted(found[1])):
            yield target, False


def _exit_code(text: str) -> re.Match[str] | None:
    """``_EXIT`` in ``text``, searched only when its words are there: the regex, case-insensitive
    with alternatives at every position, takes ~90 µs on a 2,000-character result and the ledger and
    the offline summary read every result; ``lower`` and ``in`` take ~4. (Text that is not ASCII
    goes to the regex: its case folding matches more than ``lower`` finds, e.g. ``ı`` for ``i``.)"""
    if text.isascii():
        low = text.lower()
        if "exit" not in low and "returncode" not in low:
            return None
    return _EXIT.search(text)


def status(result: ToolResult) -> tuple[str, bool]:
    """How a call ended, in words, and whether it failed: ``exit N`` where the result says its exit
    code, else ``error`` or ``ok`` by the error flag and patterns."""
    text = content_text(result.content)
    found = _exit_code(text[:2_000]) or _exit_code(text[-500:])
    if found:
        code = int(found[1])
        return f"exit {code}", code != 0
    failed = error_detail(result) is not None
    return ("error" if failed else "ok"), failed


def error_line(text: str) -> tuple[int, int] | None:
    """Where a failed result states its error: the last ``…Error: …`` line of a traceback, else the
    first line that says error or fatal, else its first line that is not an exit code."""
    lines = list(_ERROR_LINE.finditer(text))
    typed = [m for m in lines if re.match(r"\s*[\w.]*(?:Error|Exception)\b", m.group())]
    found = typed[-1] if typed else (lines[0] if lines else None)
    if found is not None:
        start = found.start() + len(found.group()) - len(found.group().lstrip())
        return start, found.end()
    offset = 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped and not _EXIT.fullmatch(stripped) and not stripped.startswith("<"):
            start = offset + line.index(stripped[0])
            return start, start + len(stripped)
        offset += len(line)
    return None
