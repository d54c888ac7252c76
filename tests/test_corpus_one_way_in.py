"""One way in: every reader's fixture (files and task folders) read by the command line, by the
page's upload and by a corpus — on disk, in a ``.zip`` uploaded to the Corpus tab and in a
``.tar.gz`` — is the same conversation (its items, model, bills and the agent's compactions).

A zip of real files once gave 14 runs and 28 skipped: Aider histories skipped on their names (the
upload reads any ``.md``), and a task folder inside the archive split into files skipped one by one."""

from __future__ import annotations

import io
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from playground.cli.inputs import load_conversation
from playground.corpus import finder
from playground.corpus.evaluate import Setup, load
from playground.ui import state

from .conftest import ROOT, show_tab

DATA = ROOT / "tests" / "data"
LIMIT = 50


def _fixtures() -> dict[str, Path]:
    """Every fixture, by the name a corpus gives it; besides tests/data's own, an Aider history under
    other names and OpenHands' ``events/`` folder alone."""
    runs = {path.name: path for path in sorted(DATA.iterdir()) if path.name != "README.md"}
    aider = next(path for name, path in runs.items() if name.endswith(".aider.chat.history.md"))
    events = runs["openhands-v1-conversation"] / "events"
    extra = {"renamed/session.chat.history.md": aider, "renamed/history.md": aider, "events-renamed": events}
    return runs | extra


FIXTURES = _fixtures()


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """tests/data's fixtures and the extra names, copied into one folder as a person's corpus."""
    top = tmp_path_factory.mktemp("corpus")
    for name, path in FIXTURES.items():
        target = top / name
        target.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if path.is_dir() else shutil.copyfile)(path, target)
    return top


def _same(conversation) -> tuple:
    return conversation, conversation.billed, conversation.compactions


def _files(path: Path, top: Path) -> list[tuple[str, Path]]:
    files = [path] if path.is_file() else sorted(file for file in path.rglob("*") if file.is_file())
    return [(file.relative_to(top).as_posix(), file) for file in files]


def _zip(entries: list[tuple[str, Path]]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, file in entries:
            archive.write(file, name)
    return out.getvalue()


def _by_name(found, prefix: str = "") -> dict[str, tuple]:
    """Each run a corpus found, read as ``evaluate`` reads it, by its name without ``prefix`` (and
    a folder's trailing ``/``); what it skipped or failed, as the value itself."""
    loaded = {}
    for each in found:
        outcome = load(each, Setup(max_input_mb=LIMIT)) if isinstance(each, finder.Source) else each
        name = (each.name if isinstance(each, finder.Source) else each.source).removeprefix(prefix).rstrip("/")
        loaded[name] = _same(outcome[0]) if isinstance(outcome, tuple) else outcome
    return loaded


@pytest.fixture(scope="module")
def by_command_line(tree) -> dict[str, tuple]:
    return {name: _same(load_conversation(str(tree / name), LIMIT)) for name in FIXTURES}


def test_a_corpus_on_disk_reads_every_run_as_the_command_line_does(tree, by_command_line):
    found = _by_name(finder.find([str(tree)], LIMIT), f"{tree}/")
    assert found == by_command_line


def test_a_zip_uploaded_to_the_corpus_tab_reads_every_run_as_the_command_line_does(tree, by_command_line):
    every = [entry for name in FIXTURES for entry in _files(tree / name, tree)]
    found = _by_name(finder.uploaded("logs.zip", _zip(every), LIMIT), "logs.zip!")
    assert found == by_command_line


def test_a_zip_and_a_tar_on_disk_read_every_run_as_the_command_line_does(tree, by_command_line, tmp_path):
    every = [entry for name in FIXTURES for entry in _files(tree / name, tree)]
    (tmp_path / "logs.zip").write_bytes(_zip([(f"logs/{name}", file) for name, file in every]))
    with tarfile.open(tmp_path / "logs.tar.gz", "w:gz") as archive:
        for name, file in every:
            archive.add(file, f"logs/{name}")
    for archive in ("logs.zip", "logs.tar.gz"):
        found = _by_name(finder.find([str(tmp_path / archive)], LIMIT), f"{tmp_path / archive}!logs/")
        assert found == by_command_line, archive


@pytest.fixture
def _fresh_caches():
    st.cache_data.clear()
    yield


def test_the_pages_upload_reads_every_run_as_the_command_line_does(tree, by_command_line, _fresh_caches):
    """Each run uploaded on the page (a task folder as a .zip of it, as the page asks): the
    conversation it shows is the command line's."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    show_tab(at, "Conversation")
    at.run()
    for name in FIXTURES:
        path = tree / name
        data = _zip(_files(path, path.parent)) if path.is_dir() else path.read_bytes()
        upload = f"{path.name}.zip" if path.is_dir() else path.name
        at.file_uploader(key="upload").set_value((upload, data, "application/octet-stream"))
        at.run()
        assert not at.exception, (name, at.exception)
        assert _same(at.session_state[state.CONVERSATION]) == by_command_line[name], name
