"""Measure what the stated input limit costs: the peak memory of ``count`` and ``compact`` on a file
within the limit, as a multiple of the file's size, and how fast a file over it is refused.

    python scripts/measure_limits.py [--sizes 10,50,200]

Each command runs in a process of its own; its peak resident memory (its own ``VmHWM``:
``ru_maxrss`` would count this script's memory at the fork too) minus that of the same command on a
tiny file (Python, tiktoken's vocabulary, the engine) is divided by the file's size. The files are
synthetic agent runs (scripts/benchmark.py's: file writes, reads, searches and shell output), the
shape real logs have, plus the worst shape for memory per byte this project knows:
``{"messages": [1, 1, …]}``, which is refused, but only after it is parsed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from benchmark import synthetic  # noqa: E402

MB = 1024 * 1024
DRIVER = """
import sys
from playground import cli
code = cli.main(sys.argv[1:])
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(1024 * int(peak.split()[1]), file=sys.stderr)
sys.exit(code)
"""
COMMANDS = {"count": ["count"], "compact": ["compact", "--threshold", "0", "--no-summarize", "-o", "/dev/null"],
            "compact + summarize": ["compact", "--threshold", "0", "-o", "/dev/null"]}


def run(command: list[str], path: Path, *options: str) -> tuple[float, int, int]:
    """Seconds, peak resident bytes and exit status of one command in a fresh process."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", DRIVER, *command, str(path), *options], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    return time.perf_counter() - started, int(done.stderr.splitlines()[-1]), done.returncode


def conversation_of(size_mb: int, folder: Path) -> Path:
    """A synthetic run of about ``size_mb`` MB (about 200,000 tokens a MB)."""
    path = folder / f"run-{size_mb}mb.json"
    path.write_text(json.dumps(synthetic(size_mb * 200_000)))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10,50,200", help="file sizes to measure, in MB")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as folder:
        tiny = Path(folder) / "tiny.json"
        tiny.write_text(json.dumps(synthetic(1_000)))
        base = {name: run(command, tiny)[1] for name, command in COMMANDS.items()}
        print(f"{'file':<22} {'MB':>6} {'command':<20} {'seconds':>8} {'peak MB':>8} {'× file':>7}")
        for size in sizes:
            path = conversation_of(size, Path(folder))
            megabytes = path.stat().st_size / MB
            for name, command in COMMANDS.items():
                seconds, peak, code = run(command, path, "--max-input-mb", str(2 * max(sizes) + 10))
                multiple = (peak - base[name]) / path.stat().st_size
                print(f"{'synthetic agent run':<22} {megabytes:>6.1f} {name:<20} {seconds:>8.1f} {peak / MB:>8.0f} "
                      f"{multiple:>6.1f}×" + ("" if code == 0 else f"  (exit {code})"))
            path.unlink()
        ones = Path(folder) / "ones.json"
        ones.write_bytes(b'{"messages": [' + b"1," * (max(sizes) * MB // 2 - 16) + b"1]}")
        seconds, peak, code = run(["count"], ones, "--max-input-mb", str(2 * max(sizes) + 10))
        print(f"{'[1, 1, …] (refused)':<22} {ones.stat().st_size / MB:>6.1f} {'count':<20} {seconds:>8.1f} "
              f"{peak / MB:>8.0f} {(peak - base['count']) / ones.stat().st_size:>6.1f}×  (exit {code})")
        seconds, _, code = run(["count"], Path("/dev/zero"))
        print(f"{'/dev/zero':<22} {'∞':>6} {'count':<20} {seconds:>8.1f} {'':>8} {'':>7}  (exit {code}: over the "
              f"limit)")
    print(f"\nbase (a tiny file): {', '.join(f'{name} {peak / MB:.0f} MB' for name, peak in base.items())}")


if __name__ == "__main__":
    main()
