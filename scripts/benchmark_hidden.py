"""What each strategy saves beside what it takes from the agent, on the real runs.

    .venv/bin/python scripts/benchmark_hidden.py [--threshold 5000] [--keep-recent 3]

For each of the three traces in ../shared/fixtures/traces and both Claude Code logs in
../shared/fixtures/sessions: every strategy replayed in stored mode with one set of options —
the suggested rules, ``--threshold`` for the rules, the summarization limit and clear-tool-uses'
trigger, ``--keep-recent`` for the rules and ``keep`` 3, masking's window 10 — as
``python -m playground compare FILE --preset suggested --threshold T --trigger T --keep-recent K``
would; one row each: prompt tokens saved over the run against ``none``, the calls that used
something their request had hidden (``hidden_used_calls``) and, of those, the calls that used
something a tool call cannot bring back (``hidden_used_lost``). Then the precision of the
detector on the hand-labelled cases in tests/data/hidden_used_labels.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playground.cli import _load_conversation  # noqa: E402
from playground.compare import compare  # noqa: E402
from playground.engine import Engine  # noqa: E402
from playground.hidden_precision import measure  # noqa: E402
from playground.policies import POLICIES, make  # noqa: E402
from playground.prices import read_prices  # noqa: E402
from playground.rulesets import RULESETS  # noqa: E402

FIXTURES = ROOT.parent / "shared" / "fixtures"
RUNS = ("traces/invariant_explorer_webarena_trace2.openai.json", "traces/miniswe_pr_astropy-12907.openai.json",
        "traces/sweagent_marshmallow-1867_function_calling.openai.json",
        "sessions/claude-code-session-196820da.jsonl", "sessions/claude-code-session-624a4a58.jsonl")
LABELS = ROOT / "tests" / "data" / "hidden_used_labels.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threshold", type=int, default=5000)
    parser.add_argument("--keep-recent", type=int, default=3)
    args = parser.parse_args()
    engine = Engine()
    print(f"threshold / limit / trigger {args.threshold:,}, keep_recent {args.keep_recent}, suggested rules, "
          "stored mode\n")
    print("| run | strategy | tokens saved | calls fired | hidden_used_calls | hidden_used_lost |")
    print("|---|---|---:|---:|---:|---:|")
    for source in RUNS:
        conversation = _load_conversation(str(FIXTURES / source), 200, None)
        options = {"rules": RULESETS["suggested"][1](conversation), "label": "suggested",
                    "threshold": args.threshold, "limit": args.threshold, "trigger": args.threshold,
                    "keep_recent": args.keep_recent}
        rows = compare(conversation, [make(name, **options) for name in POLICIES], engine.meter(conversation.model),
                       read_prices().get(conversation.model))
        base = rows[0].tokens_billed
        for row in rows:
            saved = base - row.tokens_billed
            print(f"| {Path(source).stem.removesuffix('.openai')} | {row.strategy} | {saved:,} ({saved / base:.1%}) | "
                  f"{row.fired} | {row.hidden_used_calls} | {row.hidden_used_lost} |")
    found = measure(json.loads(LABELS.read_text(encoding="utf-8")),
                    lambda source: _load_conversation(str(FIXTURES / source), 200, None),
                    lambda conversation: engine.meter(conversation.model))
    print(f"\nlabelled detections: {found.labelled}; still detected: {found.detected}; of those real: {found.real} "
          f"(precision {found.share:.1%})")


if __name__ == "__main__":
    main()
