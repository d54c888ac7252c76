"""The documentation runs: the README and every page of the MkDocs site (``docs/``) have their
shell and Python blocks executed, and the site builds with ``mkdocs build --strict``.

Sybil reads the Markdown: a ```python block runs in the page's namespace (a block that starts
with ``>>>`` is a doctest, its shown output compared, ``...`` matching anything); a ```sh or
```bash block is commands that must succeed; a ```console block is ``$ command`` lines, each
followed by the stdout it must print (``...`` again stands for figures that move, such as costs).
Commands run from the project's root with ``.venv/bin`` first on ``PATH``, so ``python`` is the
project's interpreter, in one shell per block: a ``&`` job lives until the block ends. A block
that is only ``scripts/app`` starts the real app on a free port, waits for ``/_stcore/health``
and stops it. ``<!-- skip: next "why" -->`` skips the block after it; there is one, before
``scripts/test``, which would run this test again inside itself.

So documentation cannot drift from the code: a renamed option, a changed output, a file that is no
longer there fails here with the page and line."""

from __future__ import annotations

import contextlib
import doctest
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from unittest import SkipTest

import pytest
from sybil import Document, Example
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
EXECUTED = {"python", "sh", "bash", "console"}
NOT_CODE = {"text", "json", "toml"}  # shown, never run: outputs, file contents, synopses
BLOCK_SECONDS = 600
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
FENCE = re.compile(r"^(`{3,})(\S*)\s*$")


def _commands(source: str) -> Iterator[str]:
    """The block's commands, a line ending in ``\\`` joined with the next."""
    pending = ""
    for line in source.splitlines():
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        command = (pending + line).strip()
        pending = ""
        if command and not command.startswith("#"):
            yield command


def _console(source: str) -> list[tuple[str, str]]:
    """A console block's ``(command, shown stdout)`` pairs."""
    pairs: list[tuple[str, list[str]]] = []
    lines = iter(source.splitlines())
    for line in lines:
        if line.startswith("$ "):
            command = line[2:]
            while command.endswith("\\"):
                command = command[:-1] + " " + next(lines).strip()
            pairs.append((command, []))
        elif pairs:
            pairs[-1][1].append(line)
        elif line.strip():
            raise AssertionError(f"console block: output before any '$ ' command: {line!r}")
    return [(command, "\n".join(shown).strip("\n")) for command, shown in pairs]


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{ROOT / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)
    return env


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _run_app(command: str) -> str | None:
    """``scripts/app …`` for real: served on a free port of localhost, healthy, then stopped."""
    port = _free_port()
    command = re.sub(r"\s+#.*$", "", command)  # the options go before the block's comment
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(f"{command} --server.port {port} --server.address 127.0.0.1 "
                                   "--server.headless true", shell=True, cwd=ROOT, env=_environment(),
                                   stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + BLOCK_SECONDS
            while time.monotonic() < deadline and process.poll() is None:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1) as answer:
                        if answer.read() == b"ok":
                            return None
                except OSError:
                    time.sleep(0.5)
            log.seek(0)
            return f"{command!r} did not serve the page:\n{log.read().decode(errors='replace')[-3000:]}"
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)


def _run_shell(pairs: list[tuple[str, str]]) -> str | None:
    """Run the commands in one shell, stop at the first that fails, compare each shown output."""
    if any(command.startswith("scripts/app") for command, _ in pairs):
        if len(pairs) != 1:
            return "a block that starts scripts/app must hold nothing else"
        return _run_app(pairs[0][0])
    script = "set -e\n" + "".join(f"echo '--- sybil command {n} ---'\n{command}\n"
                                      for n, (command, _) in enumerate(pairs))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryDirectory() as own:
        # The pages write to /tmp/… as a reader would; each block gets a /tmp of its own, so two suites
        # (or two blocks) running at once never read each other's files.
        script = re.sub(r"(?<![\w.~-])/tmp/", own + "/", script)
        process = subprocess.Popen(["bash", "-c", script], cwd=ROOT, env=_environment(), stdout=out, stderr=err,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            code = process.wait(timeout=BLOCK_SECONDS)
        finally:  # a '&' job of the block ends with it
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            process.wait()
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    pieces = re.split(r"^--- sybil command (\d+) ---\n", stdout, flags=re.M)
    printed = {int(number): text for number, text in zip(pieces[1::2], pieces[2::2], strict=True)}
    checker = doctest.OutputChecker()
    for n, (command, shown) in enumerate(pairs):
        if n not in printed:
            break
        got = printed[n].rstrip("\n") + "\n"
        if shown and not checker.check_output(shown + "\n", got, FLAGS):
            return f"$ {command}\nshown:\n{shown}\nprinted:\n{got}"
    if code != 0:
        failed = pairs[max(printed, default=0)][0]
        return f"exit status {code} from: {failed}\nstderr:\n{stderr[-3000:]}"
    return None


def _sh(example: Example) -> str | None:
    return _run_shell([(command, "") for command in _commands(example.parsed)])


def _console_block(example: Example) -> str | None:
    return _run_shell(_console(example.parsed))


PARSERS = [PythonCodeBlockParser(doctest_optionflags=FLAGS), CodeBlockParser("sh", _sh),
           CodeBlockParser("bash", _sh), CodeBlockParser("console", _console_block), SkipParser()]


def _fences(path: Path) -> list[tuple[int, str]]:
    """Every fenced block's (line, language), found without Sybil, to check none escapes it."""
    found, inside = [], ""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = FENCE.match(line)
        if not match:
            continue
        if not inside:
            inside = match.group(1)
            found.append((number, match.group(2)))
        elif match.group(1) == inside and not match.group(2):
            inside = ""
    return found


class _Outcomes:
    """Each document's examples evaluated once, in order, in one namespace (a block may use what an
    earlier one made), and what became of each block: None (ran), a failure, or a skip."""

    def __init__(self) -> None:
        self.done: dict[Path, dict[int, BaseException | None]] = {}

    def of(self, path: Path) -> dict[int, BaseException | None]:
        if path not in self.done:
            self.done[path] = self._evaluate(path)
        return self.done[path]

    @staticmethod
    def _evaluate(path: Path) -> dict[int, BaseException | None]:
        starts = [line for line, _ in _fences(path)]
        outcomes: dict[int, BaseException | None] = {}
        cwd = Path.cwd()
        os.chdir(ROOT)  # examples name the project's files by their paths from the root
        try:
            for example in Document.parse(str(path), *PARSERS).examples():
                block = max((line for line in starts if line <= example.line), default=0)
                try:
                    example.evaluate()
                except Exception as problem:  # a SkipTest too: the skip directive before the block
                    if isinstance(example.parsed, tuple):  # the skip directive itself went wrong
                        raise
                    outcomes.setdefault(block, problem)
                    continue
                if not isinstance(example.parsed, tuple):  # a skip directive's parsed is its arguments
                    outcomes.setdefault(block, None)
        finally:
            os.chdir(cwd)
        return outcomes


OUTCOMES = _Outcomes()
BLOCKS = [pytest.param(path, line, id=f"{path.relative_to(ROOT)}:{line}")
          for path in DOCUMENTS for line, language in _fences(path) if language in EXECUTED]


@pytest.mark.parametrize(("path", "line"), BLOCKS)
def test_the_code_block_runs_as_shown(path: Path, line: int) -> None:
    outcomes = OUTCOMES.of(path)
    assert line in outcomes, f"{path.name}:{line}: no parser ran this block"
    problem = outcomes[line]
    if isinstance(problem, SkipTest):
        pytest.skip(str(problem))
    if problem is not None:
        raise problem


def test_every_block_is_run_or_is_plainly_not_code() -> None:
    """A block in a language no parser runs (```shell, ```py, none at all) would escape the test."""
    odd = [f"{path.relative_to(ROOT)}:{line}: ```{language}" for path in DOCUMENTS
           for line, language in _fences(path) if language not in EXECUTED | NOT_CODE]
    assert not odd, "name each block's language (python, sh, bash, console; text or json if not run):\n" + \
        "\n".join(odd)


def test_only_scripts_test_is_skipped() -> None:
    skips = [(path.name, line) for path in DOCUMENTS
             for line, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if "skip:" in text]
    assert skips == [("README.md", next(n for n, text in enumerate(
        (ROOT / "README.md").read_text(encoding="utf-8").splitlines(), 1) if "skip:" in text))]
    after = (ROOT / "README.md").read_text(encoding="utf-8").split("skip: next", 1)[1]
    assert re.match(r'[^\n]*-->\n```sh\nscripts/test\b', after), "the one skip is the scripts/test block"


def test_the_site_builds_strictly_offline(tmp_path: Path) -> None:
    """Strict: a link to a page or heading that is not there, or a page left out of the nav, fails.
    Nothing is fetched (the theme's fonts are off, no plugin reaches out)."""
    env = {**_environment(), "NO_MKDOCS_2_WARNING": "1"}
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    built = {page.parent.name for page in site.rglob("index.html") if page.parent != site}
    pages = {page.stem for page in (ROOT / "docs").glob("*.md")} - {"index"}
    assert pages <= built, f"pages not built: {sorted(pages - built)}"
    assert "fonts.googleapis.com" not in (site / "index.html").read_text(encoding="utf-8")


def _json_blocks(path: Path) -> Iterator[tuple[int, str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    for line, language in _fences(path):
        if language == "json":
            end = next(n for n in range(line, len(lines)) if lines[n].startswith("```"))
            yield line, "\n".join(lines[line:end])


def test_every_rules_file_shown_is_one_the_playground_reads() -> None:
    """A ```json block is shown, not run; one that is a rules file must still load as one."""
    import playground as pg

    shown = [(path, line, text) for path in DOCUMENTS for line, text in _json_blocks(path)
             if {"tool_calls", "tool_results"} & set(json.loads(text))]
    assert shown, "docs/rules.md shows a rules file"
    for path, line, text in shown:
        rules = pg.load_rules(json.loads(text))
        assert rules.tool_calls and rules.tool_results, f"{path.name}:{line}"


def test_every_link_of_the_readme_leads_somewhere() -> None:
    """The README is outside the site, so mkdocs does not check its links: a page moved or renamed in
    docs/ would leave the front door pointing nowhere."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = [target for target in re.findall(r"\]\(([^)\s]+)\)", readme) if not target.startswith("http")]
    assert len(targets) > 20, "the README links into the docs"
    missing = [target for target in targets if not (ROOT / target.split("#")[0]).exists()]
    assert not missing, missing


def test_every_file_the_pages_name_is_there() -> None:
    """A module moved or renamed leaves its old path in the prose: every `playground/…`, `scripts/…`,
    `tests/…` and `presets/…` path the README and the pages name in backticks must exist."""
    pattern = re.compile(r"`((?:playground|scripts|tests|presets)/[\w./*-]+)")
    named = {(path.relative_to(ROOT), found) for path in DOCUMENTS
             for found in pattern.findall(path.read_text(encoding="utf-8"))}
    assert len(named) > 50
    missing = sorted(f"{page}: {found}" for page, found in named
                     if not any(ROOT.glob(found.split("::")[0].rstrip("/"))))
    assert missing == ["docs/meters.md: tests/fixtures/chat-history.md"], missing  # Aider's own repository's file
