"""The originals a reference replaced, kept on disk by their content, so the model can ask for one back.

A rule's reference that names a key (``{recall_key}`` in its template: "Output stored as 3f2a9c01b7de;
call recall(key) to read it.") is only honest if something answers ``recall("3f2a9c01b7de")`` with
the very text replaced. The key is a short hash of that text's bytes (``recall_key``), so the rules
can render it without the store, the store needs no index of who wrote what, and the same output
stored twice is one row. The store is an SQLite file the caller names: every ``put`` writes through
(a connection is opened per operation, nothing of the originals is held in memory), and it is bounded
(``max_bytes``): past the bound, the originals stored longest ago go first. Kept this low in the
stages because the rules (the key), the agent wrapper (the store) and replay (what a recall costs)
all need it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Mapping
from contextlib import closing
from pathlib import Path
from typing import Any

from .errors import InputError

KEY_CHARS = 12  # hex characters of the SHA-256: 48 bits, no collision among any run's originals in practice
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
TOOL_NAME = "recall"
MISSING = "No original is stored under the key {key!r} (it may have been evicted); work without it."
_SCHEMA = ("CREATE TABLE IF NOT EXISTS originals (key TEXT PRIMARY KEY, data BLOB NOT NULL, "
           "size INTEGER NOT NULL, stored INTEGER NOT NULL)")


def recall_key(data: bytes | str) -> str:
    """The key of ``data`` (text is keyed by its UTF-8 bytes): what a reference names and ``recall`` takes."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()[:KEY_CHARS]


class RecallStore:
    """A bounded, content-addressed store of originals in the SQLite file ``path`` (made if missing;
    an existing store is reopened, its originals kept). ``max_bytes``: the most the originals may
    hold together; past it the oldest are evicted, never the one just stored (an original larger
    than the bound is kept alone until the next one). A path SQLite cannot open or that is no
    store is refused with an ``InputError`` naming it."""

    def __init__(self, path: str | Path, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
            raise InputError("expected a whole number of bytes, at least 1", where="recall store max_bytes",
                             value=max_bytes)
        self.path = Path(path)
        self.max_bytes = max_bytes
        self._run(lambda db: db.execute(_SCHEMA))

    def _run(self, work: Any) -> Any:
        """``work(connection)`` in one transaction on a connection opened for it alone."""
        try:
            with closing(sqlite3.connect(self.path)) as db, db:
                return work(db)
        except sqlite3.Error as exc:
            raise InputError(f"cannot use it as a recall store ({exc})", where="recall store",
                             value=str(self.path)) from None

    def put(self, data: bytes | str) -> str:
        """Store ``data`` (text as its UTF-8 bytes) and give its key; storing it again makes it the
        newest. Evicts the oldest originals while the store holds more than ``max_bytes``."""
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
        key = recall_key(raw)

        def work(db: sqlite3.Connection) -> None:
            stored = db.execute("SELECT COALESCE(MAX(stored), 0) + 1 FROM originals").fetchone()[0]
            db.execute("INSERT INTO originals VALUES (?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET stored = ?",
                       (key, raw, len(raw), stored, stored))
            total = db.execute("SELECT COALESCE(SUM(size), 0) FROM originals").fetchone()[0]
            for old, size in db.execute("SELECT key, size FROM originals WHERE key != ? ORDER BY stored",
                                        (key,)).fetchall():
                if total <= self.max_bytes:
                    break
                db.execute("DELETE FROM originals WHERE key = ?", (old,))
                total -= size

        self._run(work)
        return key

    def get(self, key: str) -> bytes | None:
        """The original stored under ``key``, byte for byte (None: never stored, or evicted)."""
        row = self._run(lambda db: db.execute("SELECT data FROM originals WHERE key = ?", (str(key),)).fetchone())
        return None if row is None else bytes(row[0])

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._run(
            lambda db: db.execute("SELECT 1 FROM originals WHERE key = ?", (key,)).fetchone()) is not None

    def size(self) -> int:
        """The bytes the originals hold together."""
        return int(self._run(lambda db: db.execute("SELECT COALESCE(SUM(size), 0) FROM originals").fetchone()[0]))

    def answer(self, arguments: str | Mapping[str, Any]) -> str:
        """The text to send back as the result of a ``recall`` tool call, given its arguments as the
        SDK hands them over (a JSON string from ``openai``, a dict from ``anthropic``): the original
        exactly as the tool returned it, or a sentence saying it is not there."""
        try:
            found = json.loads(arguments) if isinstance(arguments, str) else arguments
        except ValueError:
            found = None
        key = found.get("key") if isinstance(found, Mapping) else None
        if not isinstance(key, str):
            return "recall takes one argument, key: the key a reference names."
        data = self.get(key.strip())
        return MISSING.format(key=key) if data is None else data.decode("utf-8", "surrogatepass")
