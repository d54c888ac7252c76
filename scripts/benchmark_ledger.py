"""The ledger's figures (docs/ledger.md): extraction precision and recall per type on the hand labels
(tests/labels/ledger.json), then how much of each run's ledger the offline summary keeps — on a long
generated session at a threshold of 4,000 tokens and on the real runs in ../shared/fixtures at 5,000.

    .venv/bin/python scripts/benchmark_ledger.py [--without-ledger] [--strategies]

``--without-ledger`` measures the summary as it was before it kept the ledger: its four ledger sections
(``summarize.kept``) left out. ``--strategies`` also prints, per fixture run and strategy, the facts kept /
recoverable / lost by type beside the tokens saved and ``hidden_used_calls`` (stored mode; the suggested
rules; threshold, summarization limit and clear-tool-uses' trigger 5,000; ``keep_recent`` 3; masking's window 10,
as ``scripts/benchmark_hidden.py``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import playground as pg  # noqa: E402
from playground import formats  # noqa: E402
from playground.engine import Engine  # noqa: E402
from playground.facts.ledger import TYPES  # noqa: E402
from playground.policies import make  # noqa: E402
from playground.refit.ledger_precision import measure  # noqa: E402
from playground.refit.ledger_survival import long_session, survival  # noqa: E402
from playground.run.compare import compare  # noqa: E402
from playground.run.prices import read_prices  # noqa: E402
from playground.tune.rulesets import RULESETS  # noqa: E402

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
    if "--strategies" in sys.argv[1:]:
        strategies()


def strategies() -> None:
    """Each fixture run under the strategies of docs/hidden.md's table: the facts' fates beside the saving."""
    print("\n| run | strategy | tokens saved | hidden_used_calls | lost then used | "
          + " | ".join(TYPES) + " |\n|---|---|---:|---:|---:|" + "---:|" * len(TYPES))
    for path in sorted((FIXTURES / "traces").glob("*.json")) + sorted((FIXTURES / "sessions").glob("*.jsonl")):
        conversation = pg.load(path)
        options = {"rules": RULESETS["suggested"].make(conversation), "label": "suggested", "threshold": 5_000,
                   "keep_recent": 3}
        policies = [make("none"), make("rules", **options), make("rules", **options, summarize=False),
                    make("masking", window=10), make("clear-tool-uses", trigger=5_000), make("summarize", limit=5_000)]
        meter, price = Engine().meter(conversation.model), read_prices().get(conversation.model)
        rows = compare(conversation, policies, meter, price)
        base = rows[0].tokens_billed
        for row, label in zip(rows, ("none", "rules", "rules, no summary", "masking", "clear-tool-uses", "summarize"),
                              strict=True):
            fates = " | ".join("{kept} / {recoverable} / {lost}".format(**(row.facts or {})[kind]) for kind in TYPES)
            saved = base - row.tokens_billed
            print(f"| {path.name.split('.')[0]} | {label} | {saved:,} ({saved / base:.1%}) | {row.hidden_used_calls} | "
                  f"{row.facts_lost_then_used} | {fates} |")


if __name__ == "__main__":
    main()
