"""How long the page's Compare takes on a preset: the engine call compare_panel makes, with the page's
default options, best of 3 with a fresh engine each time. Policies: every one (default), or a
comma-separated list (the page's default is ours: none,rules,masking,clear-tool-uses,summarize,hybrid):

    python scripts/time_compare.py PRESET [NAMES]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    from playground.engine import Engine
    from playground.policies import POLICIES, make
    from playground.run.compare import compare
    from playground.run.prices import read_prices
    from playground.workbench.presets import load_preset

    preset = load_preset(ROOT / "presets" / f"{argv[0]}.json")
    names = argv[1].split(",") if len(argv) > 1 else list(POLICIES)
    price = read_prices().get(preset.model)
    options = {"rules": preset.rules, "label": "page", "threshold": preset.threshold, "limit": preset.threshold,
               "keep_recent": preset.keep_recent, "summarize": True, "keep_steps": 3, "window": 10,
               "trigger": 100_000, "keep": 3, "clear_at_least": 0, "context_window": price.context_window}
    times = []
    for _ in range(3):
        meter = Engine().meter(preset.model)
        start = time.perf_counter()
        compare(preset.conversation, [make(name, **options) for name in names], meter, price)
        times.append(time.perf_counter() - start)
    print(f"{argv[0]}: {len(names)} strategies, best of 3: {min(times):.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
