"""The README's tables of the agents' and providers' own compaction beside ours: the policies with
their parameters, source and date (from playground/data/policies.json), and each one's whole-run
cost on the shared traces and Claude Code logs, as ``python -m playground compare FILE --json``
prints it (each file at its own model's prices and prompt cache, every other option at its default;
summaries billed at the same model's prices and included in the cost):

    python scripts/compare_agents.py [FILE ...]

With ``--summary`` it prints instead the README's one table: every policy summed over the files, with
the rules policy running the rules suggested for each file's own tools (``--preset suggested``): prompt
tokens billed and their share of running no policy, cost, the share read from the prompt cache, the
calls whose reply used something the policy had hidden, and the run's facts lost at the end by type:

    python scripts/compare_agents.py --summary [FILE ...]
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT.parent / "shared" / "fixtures"
FILES = [*sorted((FIXTURES / "traces").glob("*.json")), *sorted((FIXTURES / "sessions").glob("*.jsonl"))]


FACT_TYPES = ("requirement", "path_written", "path_read", "command", "error")


def rows(path: Path, *options: str) -> list[dict]:
    done = subprocess.run([sys.executable, "-m", "playground", "compare", str(path), "--json", *options], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def facts(total: dict[str, float], kind: str) -> float:
    """How many facts of ``kind`` the runs had: each is kept, recoverable or lost."""
    return sum(total[f"{kind}.{fate}"] for fate in ("lost", "kept", "recoverable"))


def summed(files: list[Path]) -> int:
    """One row per policy, summed over ``files``: what the README shows of every policy side by side."""
    totals: dict[str, dict[str, float]] = {}
    for path in files:
        found = rows(path, "--preset", "suggested")
        unchanged = next(row["tokens_billed"] for row in found if row["strategy"] == "none")
        for row in found:  # as-it-ran has a row only where the log compacted: its share is of those runs
            total = totals.setdefault(row["strategy"], {"runs": 0, "none": 0})
            total["runs"] += 1
            total["none"] += unchanged
            for field in ("tokens_billed", "cached_tokens", "cost", "summarization_cost", "hidden_used_calls",
                          "fired"):
                total[field] = total.get(field, 0) + row[field]
            for kind in FACT_TYPES:
                for fate in ("lost", "kept", "recoverable"):
                    total[f"{kind}.{fate}"] = total.get(f"{kind}.{fate}", 0) + row["facts"][kind][fate]
            total["lost_then_used"] = total.get("lost_then_used", 0) + row["facts"]["lost_then_used"]
    print(f"Summed over {len(files)} runs; `rules`: the rules suggested for each run's tools. Tokens: prompt tokens "
          "billed over the run (and as a share of no policy); cached: the share of them read from the prompt cache; "
          "cost in US$ (of it, summarization calls); hidden→used: calls whose reply used what the request had "
          "hidden; the run's facts at its end, lost / recoverable (behind a reference that names them) / all of that "
          "type: requirements, paths written, paths read, commands, errors.\n")
    print("| policy | runs | tokens (share) | cached | cost (summaries) | fired | hidden→used | "
          "facts lost/recoverable/all: req · written · read · cmd · err |\n"
          "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for name, total in totals.items():
        lost = " · ".join(f"{total[kind + '.lost']:,.0f}/{total[kind + '.recoverable']:,.0f}/"
                          f"{facts(total, kind):,.0f}" for kind in FACT_TYPES)
        share = total["tokens_billed"] / total["none"]
        print(f"| `{name}` | {total['runs']} | {total['tokens_billed']:,.0f} ({share:.0%}) | "
              f"{total['cached_tokens'] / max(total['tokens_billed'], 1):.0%} | {total['cost']:.2f} "
              f"({total['summarization_cost']:.2f}) | {total['fired']:,.0f} | {total['hidden_used_calls']:,.0f} | "
              f"{lost} |")
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--summary"]:
        return summed([Path(arg) for arg in argv[1:]] or FILES)
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
