"""Page benchmark: how fast the page follows a threshold change, for small to 1M-token conversations.

Starts the app as the README says (``scripts/app``, on a free localhost port), loads each
conversation by uploading it as a person would, and measures, for each:

* the script rerun after a threshold change, server side (Streamlit's AppTest runs the page script
  in this process: the time is the script's own, without a browser), and
* key press to settled page in headless Chromium: Enter in *Exact threshold* until the script has
  finished and the meter shows the new threshold,

then prints the ratios to the 10k-token conversation and the server's peak memory (VmHWM of the
server process). The conversations: a 10k-token and a 1,000,000-token synthetic agent run (made as
``scripts/benchmark.py`` makes them) and the ~200k-token preset.

    python scripts/benchmark_page.py [--changes 5]

Target: the page's update after a threshold change on the 1M conversation within 1.5× of the
10k one. Timings are medians of ``--changes`` threshold changes; this machine is noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from benchmark import synthetic  # noqa: E402

from playground import formats  # noqa: E402
from playground.engine import Engine  # noqa: E402
from playground.workbench import presets  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
SETTLED = """([threshold]) => {
    const app = document.querySelector('[data-testid="stApp"]');
    const label = [...document.querySelectorAll('.cp-marklabel')].map(e => e.textContent);
    return app && app.dataset.testScriptState === 'notRunning' && label.includes('threshold ' + threshold);
}"""


def conversations(folder: Path) -> list[tuple[str, Path]]:
    """(name, file) for each conversation measured, written where the browser can upload them."""
    large = next(p for p in presets.list_presets() if p.key == "large-200k")
    bodies = [("10k synthetic", synthetic(10_000)), ("200k preset", large.source),
              ("1M synthetic", synthetic(1_000_000))]
    files = []
    for name, body in bodies:
        path = folder / f"{name.replace(' ', '-')}.json"
        path.write_text(json.dumps(body))
        files.append((name, path))
    return files


def thresholds(total: int) -> list[str]:
    """Alternating thresholds inside the request, so every change compacts anew."""
    return [f"{total * share // 100:,}" for share in (40, 60)]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident memory so far (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def script_reruns(path: Path, changes: int) -> list[float]:
    """Seconds per page-script rerun after a threshold change (AppTest, in this process)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600).run()
    at.file_uploader(key="upload").set_value((path.name, path.read_bytes(), "application/json")).run()
    assert not at.exception, at.exception
    total = Engine().count(at.session_state["conversation"], at.session_state["model"]).total
    times = []
    for change in range(changes):
        value = int(thresholds(total)[change % 2].replace(",", ""))
        at.sidebar.number_input(key="threshold").set_value(value)
        started = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - started)
        assert not at.exception, at.exception
    return times


def browser_updates(page, path: Path, changes: int) -> list[float]:
    """Seconds from Enter in the threshold box to a settled page, in Chromium."""
    page.get_by_role("tab", name="Conversation").click()
    uploader = page.get_by_test_id("stFileUploader").filter(has_text="upload a file")
    uploader.locator("input[type=file]").set_input_files(str(path))
    page.get_by_text(f"Now showing: {path.name}").wait_for(timeout=600_000)
    page.wait_for_selector(IDLE, timeout=600_000)
    before = page.get_by_test_id("stMetric").filter(has=page.get_by_text("Before", exact=True))
    total = int(before.get_by_test_id("stMetricValue").inner_text().replace(",", ""))
    field = page.get_by_role("spinbutton", name="Exact threshold")
    times = []
    for change in range(changes):
        value = thresholds(total)[change % 2]
        field.fill(value.replace(",", ""))
        started = time.perf_counter()
        field.press("Enter")
        page.wait_for_function(SETTLED, arg=[value], timeout=600_000, polling="raf")
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--changes", type=int, default=5, help="threshold changes per conversation (median kept)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        files = conversations(Path(tmp))
        for name, path in files:
            conversation = formats.loads(path.read_bytes())
            print(f"{name}: {Engine().count(conversation).total:,} tokens, {len(conversation.items):,} items, "
                  f"{path.stat().st_size / 1e6:.1f} MB")
        script_reruns(files[0][1], 2)  # warm-up, not measured: the first runs pay for imports and caches
        script = {name: statistics.median(script_reruns(path, args.changes)) for name, path in files}

        port = _free_port()
        log = Path(tmp) / "server.log"
        server = subprocess.Popen([str(ROOT / "scripts" / "app"), "--server.port", str(port), "--server.address",
                                   "127.0.0.1", "--server.headless", "true"], cwd=ROOT, stdout=log.open("w"),
                                  stderr=subprocess.STDOUT, start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(240):
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1):
                        break
                except OSError:
                    time.sleep(0.5)
            browser_times, memory = {}, {}
            with sync_playwright() as playwright:
                chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                # A fresh session each, as a person opening the page; the first, a warm-up, is not measured.
                for name, path in [("warm-up", files[0][1]), *files]:
                    context = chromium.new_context(viewport={"width": 1500, "height": 1200})
                    page = context.new_page()
                    page.goto(url)
                    page.wait_for_selector(IDLE, timeout=120_000)
                    browser_times[name] = statistics.median(browser_updates(page, path, args.changes))
                    memory[name] = peak_rss_mb(server.pid)
                    context.close()
                chromium.close()
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)

    base_script, base_browser = script[files[0][0]], browser_times[files[0][0]]
    print(f"\nmedian of {args.changes} threshold changes each; ratios to the {files[0][0]} conversation")
    print(f"{'conversation':<14} {'script rerun':>13} {'ratio':>6} {'key → settled':>14} {'ratio':>6} "
          f"{'server peak RSS':>16}")
    for name, _ in files:
        print(f"{name:<14} {script[name]:>11.3f} s {script[name] / base_script:>5.2f}× {browser_times[name]:>12.3f} s "
              f"{browser_times[name] / base_browser:>5.2f}× {memory[name]:>13.0f} MB")
    worst = browser_times[files[-1][0]] / base_browser
    print(f"\n1M vs 10k in Chromium: {worst:.2f}× (target ≤ 1.5×)")


if __name__ == "__main__":
    main()
