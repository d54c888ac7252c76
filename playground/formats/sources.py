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


def is_task_folder(path: Path) -> bool:
    """Whether ``path`` is a folder an agent wrote for one task, read as one conversation — by its
    file names alone, so a corpus walk can tell without reading it: Cline / Roo Code's
    (``api_conversation_history.json``; the Cline SDK's ``<id>.messages.json`` beside ``<id>.json``),
    OpenHands V1's (``events/event-*.json``) and V0's (``events/<n>.json``), opencode's storage (``message/``
    and ``part/``)."""
    try:
        names = {entry.name: entry.is_dir() for entry in os.scandir(path)}
        events = names.get("events") and any(name.startswith("event-") or name.removesuffix(".json").isdigit()
                                             for name in os.listdir(path / "events"))
    except OSError:
        return False
    cline = "api_conversation_history.json" in names or any(name.endswith(".messages.json") for name in names)
    return cline or bool(events) or bool(names.get("message") and names.get("part"))
