#!/usr/bin/env python3
"""The install a person gets, checked: a copy of the project as a clone has it, `scripts/app` run in
it as the README says (so it builds its own .venv from requirements.txt alone), then

1. the real server answers the page and its health endpoint over HTTP,
2. every `playground` module imports in that virtualenv,
3. the page's script runs once (Streamlit's AppTest) without an exception or the page's own
   "Something went wrong" guard.

The test environment holds many more packages (pytest, playwright, anthropic, langchain and what they
pull in), so an import only they provide passes every test there and fails on a fresh machine; this
catches it. Run by `.ci/run` before the README's test command. Standard library only.

Building that virtualenv takes 60-80 s here, and pip's download cache does not persist on these
machines, so the copy and its .venv are kept between runs in a folder named for what decides the
install: requirements.txt, scripts/venv.sh and the Python version. Nothing but `scripts/app` ever
installs into it, and any change to those three makes a new one from nothing, so a requirement
removed from the file is missing there at once; only the project's files are copied afresh each
run. `--cold` builds it from nothing anyway. Exit 1, with the step and the server's log, on any
failure.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KEPT = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "compaction-playground"
STALE = 24 * 3600  # seconds
START_WAIT = 600  # seconds for scripts/app to install the packages and start serving (a cold install)

IMPORT_ALL = """
import importlib, pkgutil, sys
import playground
failed = []
names = [info.name for info in pkgutil.walk_packages(playground.__path__, "playground.")
         if not info.name.endswith("__main__")]  # runs the command line
for name in names:
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed.append(f"{name}: {type(exc).__name__}: {exc}")
print("\\n".join(failed) or f"{len(names)} modules imported")
sys.exit(1 if failed else 0)
"""

RUN_PAGE = """
import sys
from streamlit.testing.v1 import AppTest
at = AppTest.from_file("app.py", default_timeout=300).run()
problems = [str(e.value) for e in at.exception] + [e.value for e in at.error if "Something went wrong" in e.value]
problems += [] if at.metric else ["the page drew no meters"]
print("\\n".join(problems) or f"the page ran: {len(at.metric)} metrics, {len(at.tabs)} tabs")
sys.exit(1 if problems else 0)
"""


class CheckFailedError(Exception):
    """A step failed; the message says which and why."""


def install_key(root: Path = ROOT) -> str:
    """What decides the install: the requirements, how scripts/app installs them, the Python."""
    digest = hashlib.sha256(platform.python_version().encode())
    for name in ("requirements.txt", "scripts/venv.sh"):
        digest.update((root / name).read_bytes())
    return digest.hexdigest()[:16]


def prepared(cold: bool) -> Path:
    """The folder for this install, its project files replaced by this checkout's; its .venv stays
    unless ``cold``. Folders of other installs unused for a day go (each holds some 600 MB)."""
    target = KEPT / f"runtime-{install_key()}"
    for old in KEPT.glob("runtime-*"):
        if (old == target and cold) or (old != target and time.time() - old.stat().st_mtime > STALE):
            shutil.rmtree(old, ignore_errors=True)
    target.mkdir(parents=True, exist_ok=True)
    target.touch()
    for entry in target.iterdir():
        if entry.name != ".venv":
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    fresh_copy(target)
    if install_key(target) != target.name.removeprefix("runtime-"):  # the files changed while being copied
        shutil.rmtree(target, ignore_errors=True)
        raise CheckFailedError("requirements.txt or scripts/venv.sh changed during the copy; run again")
    return target


def fresh_copy(target: Path) -> None:
    """The project's files as a clone would have them (tracked and new, minus what git ignores), so
    nothing installed or generated in this checkout leaks into the check."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():  # a deleted file still listed by the index is skipped
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, response.read()


def wait_until_serving(url: str, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + START_WAIT
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise CheckFailedError(f"scripts/app exited with status {server.returncode} before serving the page")
        try:
            if get(f"{url}/_stcore/health") == (200, b"ok"):
                return
        except OSError:
            time.sleep(0.5)
    raise CheckFailedError(f"scripts/app did not serve {url} within {START_WAIT} s")


def check_http(url: str) -> str:
    status, body = get(url)
    if status != 200 or b'<div id="root"' not in body:
        raise CheckFailedError(f"GET {url}/ gave status {status} without Streamlit's page")
    status, health = get(f"{url}/_stcore/health")
    if (status, health) != (200, b"ok"):
        raise CheckFailedError(f"GET {url}/_stcore/health gave {status} {health[:80]!r}")
    return f"GET / → {status} ({len(body):,} bytes), GET /_stcore/health → ok"


def run_in_venv(copy: Path, code: str, what: str) -> str:
    done = subprocess.run([str(copy / ".venv" / "bin" / "python"), "-c", code], check=False, cwd=copy,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise CheckFailedError(f"{what} failed in the fresh virtualenv:\n{done.stdout}{done.stderr}")
    return done.stdout.strip()


def check(copy: Path, log_path: Path) -> None:
    started = time.monotonic()
    reused = (copy / ".venv").exists()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with log_path.open("w") as log:
        server = subprocess.Popen([str(copy / "scripts" / "app"), "--server.headless", "true", "--server.port",
                                   str(port), "--server.address", "127.0.0.1"], cwd=copy, stdout=log,
                                  stderr=subprocess.STDOUT, start_new_session=True)
        try:
            wait_until_serving(url, server)
            how = "reused the .venv it built from requirements.txt" if reused else \
                "installed requirements.txt into a new .venv"
            step(started, f"scripts/app {how} and serves {url}")
            step(started, check_http(url))
            step(started, run_in_venv(copy, IMPORT_ALL, "importing every playground module"))
            step(started, run_in_venv(copy, RUN_PAGE, "running the page once (AppTest)"))
        finally:
            if server.poll() is None:
                os.killpg(server.pid, signal.SIGTERM)
                server.wait(timeout=30)


def step(started: float, what: str) -> None:
    print(f"check-runtime [{time.monotonic() - started:5.1f} s] {what}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cold", action="store_true", help="build the virtualenv from nothing")
    cold = parser.parse_args().cold
    log_path = None
    try:
        copy = prepared(cold)
        log_path = copy / "server.log"
        check(copy, log_path)
    except (CheckFailedError, subprocess.CalledProcessError, OSError) as exc:
        print(f"check-runtime: FAILED: {exc}", file=sys.stderr)
        if log_path is not None and log_path.exists():
            print(f"--- the server's log ({log_path}), last lines:", file=sys.stderr)
            print("\n".join(log_path.read_text(errors="replace").splitlines()[-30:]), file=sys.stderr)
        return 1
    print(f"check-runtime: ok ({copy})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
