"""The ledger's figures (docs/ledger.md): extraction precision and recall per type on the hand labels
(tests/labels/ledger.json), then how much of each run's ledger the offline summary keeps — on a long
generated session at a threshold of 4,000 tokens and on the real runs in ../shared/fixtures at 5,000.

    .venv/bin/python scripts/benchmark_ledger.py [--without-ledger]

``--without-ledger`` measures the summary as it was before it kept the ledger: its four ledger sections
(``summarize.kept``) left out.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import playground as pg  # noqa: E402
from playground import formats  # noqa: E402
from playground.refit.ledger_precision import measure  # noqa: E402
from playground.refit.ledger_survival import long_session, survival  # noqa: E402

FIXTURES = ROOT.parent / "shared" / "fixtures"


def main() -> None:
    if "--without-ledger" in sys.argv[1:]:
        from playground.summarize.kept import KeptSections
        KeptSections.render = lambda self: []  # the summary without its ledger sections, as it was before
    labels = json.loads((ROOT / "tests" / "labels" / "ledger.json").read_text(encoding="utf-8"))
    print(f"extraction, on {len(labels['cases'])} labelled facts and {len(labels['missed'])} found missing:")
    for kind, figures in measure(labels, lambda source: pg.load(FIXTURES / source)).items():
        print(f"  {kind:<13} precision {figures.real}/{figures.extracted} = {figures.precision:.2f}, "
              f"recall {figures.caught}/{figures.caught + figures.missed} = {figures.recall:.2f}")
    print("kept by the offline summary at the end of the run (kept of all):")
    runs = [("generated: 40 requirements, 80 files, threshold 4,000", formats.read(long_session()), 4_000)]
    runs += [(path.name, pg.load(path), 5_000) for path in sorted((FIXTURES / "traces").glob("*.json"))
             + sorted((FIXTURES / "sessions").glob("*.jsonl"))]
    for name, conversation, limit in runs:
        kept = survival(conversation, limit)
        print(f"  {name}: " + ", ".join(f"{kind} {k}/{n}" for kind, (k, n) in kept.items()))


if __name__ == "__main__":
    main()
