"""The native gap: each native setting compiled from a tuned policy (``native``), run here under its
emulation beside the tuned policy, so a person sees what moving to the agent's own feature costs in
tokens, dollars and calls whose reply used what its request had hidden.

Each emulation runs in its feature's own mode (Anthropic's and LangChain's clearing and the Agents
SDK's trimmer edit a copy of each request, the agents' compactions edit their history), the tuned
policy in the mode it was tuned in; the rows are ``compare``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..conversation import Conversation
from ..meter.tokens import Meter
from ..policies import Policy
from ..policies.named import NamedPolicy
from ..run.compare import Row, compare, rows_to_json
from ..run.prices import Price, rounded
from ..run.replay import FULL
from .native import NativeSetting

TUNED = "tuned"  # the tuned policy's row name


@dataclass(frozen=True)
class Gap:
    """One native setting beside the tuned policy: its ``row`` (None: nothing to run) and the
    differences, native less tuned (None with no row)."""

    setting: NativeSetting
    row: Row | None
    tokens_billed: int | None
    cost: float | None
    hidden_used_calls: int | None


@dataclass(frozen=True)
class NativeComparison:
    tuned: Row
    gaps: tuple[Gap, ...]


def native_compare(conversation: Conversation, tuned: Policy, settings: Sequence[NativeSetting], meter: Meter,
                   price: Price, *, mode: str = "stored", cache: str | None = None,
                   summarizer: Price | None = None) -> NativeComparison:
    """The tuned policy (replayed in ``mode``, its row named ``tuned``) and every setting's
    emulation (in the setting's own mode), each a row of ``compare``."""
    runs: list[tuple[str, Policy]] = [(mode, NamedPolicy(TUNED, tuned))]
    runs += [(setting.mode, policy) for setting in settings if (policy := setting.policy()) is not None]
    rows: dict[str, Row] = {}
    for each in dict.fromkeys(run_mode for run_mode, _ in runs):
        chosen = [policy for run_mode, policy in runs if run_mode == each]
        rows |= {row.policy: row for row in compare(conversation, chosen, meter, price, mode=each, cache=cache,
                                                    summarizer=summarizer, baseline=FULL)}
    base = rows[TUNED]
    gaps = []
    for setting in settings:
        row = rows.get(f"{setting.target} (native)") if setting.emulation is not None else None
        gaps.append(Gap(setting, row, None, None, None) if row is None else
                    Gap(setting, row, row.tokens_billed - base.tokens_billed, row.cost - base.cost,
                        row.hidden_used_calls - base.hidden_used_calls))
    return NativeComparison(base, tuple(gaps))


def to_json(found: NativeComparison) -> dict[str, Any]:
    """``compare --native --json``: the tuned row, and per target its text, what it cannot express,
    its emulation's row and the gap."""
    def one(gap: Gap) -> dict[str, Any]:
        setting = gap.setting
        return {"target": setting.target, "title": setting.title, "where": setting.where,
                "language": setting.language, "text": setting.text, "cannot": list(setting.cannot),
                "emulation": setting.emulation, "params": {key: list(value) if isinstance(value, tuple) else value
                                                           for key, value in setting.params},
                "mode": setting.mode, "source": setting.source,
                "row": rows_to_json([gap.row])[0] if gap.row else None,
                "gap": None if gap.row is None else {"tokens_billed": gap.tokens_billed, "cost": rounded(gap.cost),
                                                     "hidden_used_calls": gap.hidden_used_calls}}
    return {"tuned": rows_to_json([found.tuned])[0], "native": [one(gap) for gap in found.gaps]}


def gap_table(found: NativeComparison) -> list[dict[str, Any]]:
    """The comparison as the page's table: the tuned policy's row, then one per target with its
    figures and their difference from the tuned policy's (empty where nothing was run)."""
    base = found.tuned
    table = [{"target": TUNED, "emulated as": "", "mode": "", "tokens billed": base.tokens_billed,
              "vs tuned (tokens)": 0, "cost (US$)": rounded(base.cost), "vs tuned (US$)": 0.0,
              "hidden then used (calls)": base.hidden_used_calls, "vs tuned (calls)": 0, "cannot express": 0}]
    for gap in found.gaps:
        row, setting = gap.row, gap.setting
        table.append({"target": setting.target, "emulated as": setting.emulation or "(nothing to run)",
                      "mode": setting.mode, "tokens billed": row.tokens_billed if row else None,
                      "vs tuned (tokens)": gap.tokens_billed, "cost (US$)": rounded(row.cost) if row else None,
                      "vs tuned (US$)": rounded(gap.cost) if gap.cost is not None else None,
                      "hidden then used (calls)": row.hidden_used_calls if row else None,
                      "vs tuned (calls)": gap.hidden_used_calls, "cannot express": len(setting.cannot)})
    return table
