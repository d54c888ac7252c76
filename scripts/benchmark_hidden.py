"""What each policy saves beside what it takes from the agent, on the real runs.

    .venv/bin/python scripts/benchmark_hidden.py [--threshold 5000] [--keep-recent 3]

For each of the three traces in ../shared/fixtures/traces and both Claude Code logs in
../shared/fixtures/sessions: every policy replayed in stored mode with one set of options —
the suggested rules, ``--threshold`` for the rules, the summarization limit and clear-tool-uses'
trigger, ``--keep-recent`` for the rules and ``keep`` 3, masking's window 10 — as
``python -m playground compare FILE --preset suggested --threshold T --trigger T --keep-recent K``
would (plus the rules alone, no summary); one row each: prompt tokens saved over the run against
``none``, the calls that used something their request had hidden (``hidden_used_calls``) and, of
those, the calls that used something a tool call cannot bring back (``hidden_used_lost``). Then the precision of the
detector on the hand-labelled cases in tests/labels/hidden_used.json. Between them, the
suggested rules alone beside masking at the window (of 1–30) whose saving is closest.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playground.cli.inputs import load_conversation  # noqa: E402
from playground.engine import Engine  # noqa: E402
from playground.policies import POLICIES, make  # noqa: E402
from playground.refit.hidden_precision import measure  # noqa: E402
from playground.run.compare import compare  # noqa: E402
from playground.run.prices import read_prices  # noqa: E402
from playground.tune.rulesets import RULESETS  # noqa: E402

FIXTURES = ROOT.parent / "shared" / "fixtures"
RUNS = ("traces/invariant_explorer_webarena_trace2.openai.json", "traces/miniswe_pr_astropy-12907.openai.json",
        "traces/sweagent_marshmallow-1867_function_calling.openai.json",
        "sessions/claude-code-session-196820da.jsonl", "sessions/claude-code-session-624a4a58.jsonl")
LABELS = ROOT / "tests" / "labels" / "hidden_used.json"
MASKING_WINDOWS = (1, 2, 3, 5, 7, 10, 15, 20, 30)


def _label(row) -> str:
    return "rules, no summary" if row.policy == "rules" and not row.params["summarize"] else row.policy


def _saved(row, base: int) -> str:
    saved = base - row.tokens_billed
    return f"{saved:,} ({saved / base:.1%})"


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
    beside = []
    for source in RUNS:
        conversation = load_conversation(str(FIXTURES / source), 200, None)
        options = {"rules": RULESETS["suggested"].make(conversation), "label": "suggested",
                    "threshold": args.threshold, "limit": args.threshold, "trigger": args.threshold,
                    "keep_recent": args.keep_recent}
        policies = [make(name, **options) for name in POLICIES]
        policies.insert(2, make("rules", **options, summarize=False))  # the rules alone: what suggest.py decides
        policies += [make("masking", window=window) for window in MASKING_WINDOWS]
        rows = compare(conversation, policies, engine.meter(conversation.model), read_prices().get(conversation.model))
        base = rows[0].tokens_billed
        name = Path(source).stem.removesuffix(".openai")
        for row in rows[:len(POLICIES) + 1]:
            print(f"| {name} | {_label(row)} | {_saved(row, base)} | {row.fired} | {row.hidden_used_calls} | "
                  f"{row.hidden_used_lost} |")
        alone, masks = rows[2], rows[len(POLICIES) + 1:]
        closest = min(masks, key=lambda row: abs(row.tokens_billed - alone.tokens_billed))
        beside.append(f"| {name} | {_saved(alone, base)} | {alone.hidden_used_calls} | {closest.params['window']} | "
                      f"{_saved(closest, base)} | {closest.hidden_used_calls} |")
    print("\nthe suggested rules alone beside masking at the window whose saving is closest:\n")
    print("| run | suggested rules saved | hidden_used_calls | masking window | masking saved | hidden_used_calls |")
    print("|---|---:|---:|---:|---:|---:|")
    print("\n".join(beside))
    found = measure(json.loads(LABELS.read_text(encoding="utf-8")),
                    lambda source: load_conversation(str(FIXTURES / source), 200, None),
                    lambda conversation: engine.meter(conversation.model))
    print(f"\nlabelled detections: {found.labelled}; still detected: {found.detected}; of those real: {found.real} "
          f"(precision {found.share:.1%})")


if __name__ == "__main__":
    main()
