"""Where a log's bytes come from when it is more than one JSON text: a folder an agent writes
one task into (Cline, OpenHands, opencode), a ``.zip`` of one (what the page can upload), or an
SQLite database (Goose, opencode). Each is read into a ``Folder`` of files' bytes or a
``Database`` of tables' rows, within the input size limit; ``formats`` parses the files and asks
the readers, as for any other input. Nothing here knows any agent."""

from __future__ import annotations

import io
import os
import sqlite3
import zipfile
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from .. import limits
from ..errors import InputError
from ._reader import Database

ZIP_MAGIC = b"PK\x03\x04"
SQLITE_MAGIC = b"SQLite format 3\x00"
_SKIPPED_PARTS = ("__MACOSX", ".git", "node_modules")


def _wanted(parts: tuple[str, ...]) -> bool:
    """Files a log folder can hold: not a zip tool's resource forks, a VCS folder or hidden files."""
    folders, name = parts[:-1], parts[-1]
    hidden = any(part in _SKIPPED_PARTS or (part.startswith(".") and part not in (".", "..")) for part in folders)
    return not hidden and not name.startswith("._") and name != ".DS_Store"


def _common_top(files: dict[str, bytes]) -> dict[str, bytes]:
    """A zip made of a folder holds ``task/…`` for every file: names from inside that folder."""
    tops = {name.split("/", 1)[0] for name in files}
    if len(tops) == 1 and all("/" in name for name in files):
        return {name.split("/", 1)[1]: data for name, data in files.items()}
    return files


def _count(files: int) -> None:
    if files > limits.MAX_FILES:
        raise InputError(f"more than {limits.MAX_FILES:,} files: a folder or zip is read as one agent task")


def read_zip(data: bytes, limit_mb: int) -> dict[str, bytes]:
    """The files of a zip, by their path inside it; their unpacked size is held to the input limit
    before anything is unpacked (a small zip can unpack to gigabytes)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = [info for info in archive.infolist() if not info.is_dir()
                   and _wanted(PurePosixPath(info.filename).parts)]
        _count(len(members))
        limits.check_size(sum(info.file_size for info in members), limit_mb)
        files = {info.filename: archive.read(info) for info in members}
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, OSError) as exc:
        raise InputError(f"not a zip file that can be read ({exc})") from None
    return _common_top(files)


def read_folder(path: Path, limit_mb: int) -> dict[str, bytes]:
    """The files under ``path``, by their path relative to it (``/``-separated), within the limit."""
    found = []
    for file in sorted(path.rglob("*")):
        relative = file.relative_to(path)
        if file.is_file() and _wanted(relative.parts):
            found.append((relative.as_posix(), file))
            _count(len(found))
    try:
        limits.check_size(sum(file.stat().st_size for _, file in found), limit_mb)
        return {name: file.read_bytes() for name, file in found}
    except OSError as exc:
        raise InputError(f"cannot read the folder ({exc.strerror or exc})", where=str(path)) from None


def read_database(data: bytes) -> Database:
    """Every table of an SQLite database, as rows of column → value, read from the bytes in memory
    (the file is never opened for writing; a page upload has no file at all)."""
    connection = sqlite3.connect(":memory:")
    try:
        connection.deserialize(_without_wal(data))
        connection.row_factory = sqlite3.Row
        names = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        tables = {name: tuple(dict(row) for row in connection.execute(
            'SELECT * FROM "{}"'.format(name.replace('"', '""')))) for name in names}
    except sqlite3.Error as exc:
        raise InputError(f"not an SQLite database that can be read ({exc})") from None
    finally:
        connection.close()
    return Database(tables)


def _without_wal(data: bytes) -> bytes:
    """The database's bytes with its header marked as a rollback-journal file. Agents keep their
    databases in WAL mode (real opencode.db files: header bytes 18 and 19 are 2), and an in-memory copy
    cannot open a WAL database ("unable to open database file"); the pages are the same either
    way (https://www.sqlite.org/fileformat2.html, "File format version numbers"). What the agent
    wrote to the ``-wal`` file beside it and SQLite had not yet copied in is not in these bytes."""
    return data[:18] + b"\x01\x01" + data[20:] if data[18:20] == b"\x02\x02" else data


# What a run is saved as, by the end of its name: what the page's upload takes and what a corpus
# reads, one list (``.traj.json`` ends in ``.json``; any ``.md`` may be an Aider history, whatever
# its name: the reader decides by its content). SQLite: Goose, opencode.
RUN_SUFFIXES = (".json", ".jsonl", ".traj", ".db", ".md")


def task_folder(names: Iterable[str]) -> bool:
    """Whether a folder holding the files ``names`` (``/``-separated paths inside it) is a folder an
    agent wrote for one task, read as one conversation — by the names alone, so a corpus can tell
    without reading it, on disk or in an archive: Cline / Roo Code's (``api_conversation_history.json``;
    the Cline SDK's ``<id>.messages.json`` beside ``<id>.json``), OpenHands V1's (``events/event-*.json``,
    or that ``events/`` folder alone) and V0's (``events/<n>.json``), opencode's storage (``message/``
    and ``part/``)."""
    top, folders, events = set(), set(), False
    for name in names:
        parts = name.split("/")
        if len(parts) == 1:
            top.add(parts[0])
            events = events or parts[0].startswith("event-")
        else:
            folders.add(parts[0])
            events = events or (parts[0] == "events" and len(parts) == 2 and (
                parts[1].startswith("event-") or parts[1].removesuffix(".json").isdigit()))  # V1, V0
    cline = "api_conversation_history.json" in top or any(name.endswith(".messages.json") for name in top)
    return cline or events or {"message", "part"} <= folders


def task_roots(names: Iterable[str]) -> list[str]:
    """The folders among the files ``names`` (an archive's members) that are one task each
    (``task_folder``), outermost first; "" when the whole is one. A task folder inside another is
    part of it (OpenHands' ``events/`` inside its conversation folder)."""
    names = [name for name in names if _wanted(PurePosixPath(name).parts)]
    within: dict[str, list[str]] = {}
    for name in names:
        parts = name.split("/")
        for depth in range(len(parts)):
            folder = "/".join(parts[:depth])
            within.setdefault(folder, []).append("/".join(parts[depth:]))
    roots: list[str] = []
    for folder in sorted(within, key=lambda folder: (folder.count("/") if folder else -1, folder)):
        if any(folder == root or folder.startswith(f"{root}/") or not root for root in roots):
            continue
        if task_folder(within[folder]):
            roots.append(folder)
    return roots


def is_task_folder(path: Path) -> bool:
    """``task_folder`` for a folder on disk, from its entries and its subfolders' (never its files' bytes)."""
    try:
        names = []
        for entry in os.scandir(path):
            if entry.is_dir():
                names += [f"{entry.name}/{inner}" for inner in os.listdir(entry.path)]
            else:
                names.append(entry.name)
    except OSError:
        return False
    return task_folder(names)
