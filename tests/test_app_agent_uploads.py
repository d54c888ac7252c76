"""Agent logs uploaded on the page (AppTest): the logs that are not one JSON file upload as they are — a zip of
a task folder, an SQLite database, a markdown history — and read as one conversation; a broken zip
leaves a message and keeps the conversation that was there."""

from __future__ import annotations

import json

import pytest

from playground.ui.conversation_panel import UPLOAD_TYPES

from .test_agent_logs_gemini_goose_aider_openhands_cline import CLINE, CLINE_SDK, DATA, GOOSE, _zip, goose_database
from .test_app import _fresh_caches, healthy, start  # noqa: F401 - the caches fixture, autouse here too


def upload(at, name: str, data: bytes):
    at.file_uploader(key="upload").set_value((name, data, "application/octet-stream"))
    return healthy(at.run())


@pytest.mark.parametrize("kind", ["zip", "db", "md", "json"])
def test_a_task_folder_zip_a_database_and_a_markdown_history_upload_as_one_conversation(kind, tmp_path):
    assert kind in UPLOAD_TYPES
    if kind == "json":  # a real Cline SDK session, its system prompt kept
        name, data, source = "session.messages.json", (CLINE_SDK / "session.messages.json").read_bytes(), "cline"
    elif kind == "zip":
        name, data, source = "task.zip", _zip(tmp_path, CLINE), "cline"
    elif kind == "db":
        exported = [json.loads((DATA / file).read_text()) for file in GOOSE]
        name, data, source = "sessions.db", goose_database(tmp_path / "sessions.db", exported).read_bytes(), "goose"
    else:
        name = ".aider.chat.history.md"
        data, source = (DATA / "aider-afi-core.aider.chat.history.md").read_bytes(), "aider"
    at = upload(start(), name, data)
    assert not at.error, [e.value for e in at.error]
    assert at.session_state["conversation"].source == source
    assert name in at.session_state["source"]


def test_a_broken_zip_says_so_and_keeps_the_conversation():
    at = start()
    before = at.session_state["conversation"]
    at = upload(at, "task.zip", b"PK\x03\x04 not really a zip")
    assert next(e.value for e in at.error).startswith("task.zip: not a zip file that can be read")
    assert at.session_state["conversation"] == before
