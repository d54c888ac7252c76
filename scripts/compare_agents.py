"""The README's tables of the agents' and providers' own compaction beside ours: the policies with
their parameters, source and date (from playground/data/policies.json), and each one's whole-run
cost on the shared traces and Claude Code logs, as ``python -m playground compare FILE --json``
prints it (each file at its own model's prices and prompt cache, every other option at its default;
summaries billed at the same model's prices and included in the cost):

    python scripts/compare_agents.py [FILE ...]
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT.parent / "shared" / "fixtures"
FILES = [*sorted((FIXTURES / "traces").glob("*.json")), *sorted((FIXTURES / "sessions").glob("*.jsonl"))]


def rows(path: Path) -> list[dict]:
    done = subprocess.run([sys.executable, "-m", "playground", "compare", str(path), "--json"], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    from playground.policies.provenance import read_provenance

    print("| strategy | parameters run | kept | dropped | source (read) |\n| --- | --- | --- | --- | --- |")
    for name, provenance in read_provenance().items():
        cells = (provenance.defaults, provenance.kept, provenance.dropped, f"{provenance.source} ({provenance.read})")
        print(f"| `{name}`: {provenance.title} | " + " | ".join(cell.replace("<", "&lt;") for cell in cells) + " |")
    files = [Path(arg) for arg in argv] or FILES
    found = {path.name: {row["strategy"]: row for row in rows(path)} for path in files}
    names = list(dict.fromkeys(name for table in found.values() for name in table))  # as-it-ran: logs that compacted
    short = [name.split(".")[0].replace("claude-code-session-", "claude-code ") for name in found]
    print("\nWhole-run cost in US$ (of it, summarization calls); fired: calls where the strategy changed the "
          "request\n")
    print("| strategy | " + " | ".join(short) + " |\n| --- |" + " ---: |" * len(found))
    for name in names:
        cells = []
        for table in found.values():
            row = table.get(name)
            if row is None:
                cells.append("— (no compaction in the log)")
                continue
            summary = f" ({row['summarization_cost']:.4f})" if row["summarization_cost"] else ""
            cells.append(f"{row['cost']:.4f}{summary}, {row['fired']} fired")
        print(f"| `{name}` | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
