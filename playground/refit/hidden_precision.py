"""How often a hidden-then-used detection (``hidden``) is a real use, measured on hand-labelled
cases from real runs (``tests/labels/hidden_used.json``): each setup named there is
replayed on its run and the labelled cases still detected are counted. Used by the test that
holds the precision figure in docs/hidden.md and by ``scripts/benchmark_hidden.py``, which prints it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..conversation import Conversation
from ..meter.tokens import Meter
from ..policies import Policy, make
from ..run.hidden import SpanIndex
from ..run.prices import read_prices
from ..run.replay import replay
from ..tune.rulesets import RULESETS
from ..tune.suggest import suggest_rules


@dataclass(frozen=True)
class Precision:
    labelled: int  # cases in the file
    detected: int  # of those, still reported by the detector
    real: int  # of those, labelled a real use

    @property
    def share(self) -> float:
        return self.real / self.detected if self.detected else 0.0


def policy_for(setup: Mapping[str, Any], conversation: Conversation) -> Policy:
    """The policy a labelled setup names; ``rules`` names a rule preset. ``suggested`` is the rows
    ``suggest`` builds from the conversation's tools, as they were when the cases were labelled:
    not checked on the run (``tune.checked`` drops rows by what this very detector finds, and the
    labels measure the detector, so they must see the same detections)."""
    options = dict(setup)
    policy_name = options.pop("strategy")
    if "rules" in options:
        name = options["label"] = options["rules"]
        options["rules"] = (suggest_rules(conversation, Meter(conversation.model)).rules() if name == "suggested"
                            else RULESETS[name].make(conversation))
    return make(policy_name, **options)


def measure(labels: Mapping[str, Any], load: Callable[[str], Conversation],
            meter: Callable[[Conversation], Meter]) -> Precision:
    """Replay every (run, setup) the labels name and count the labelled cases still detected."""
    cases = labels["cases"]
    detected = real = 0
    for source in sorted({case["source"] for case in cases}):
        conversation = load(source)
        spans = SpanIndex.of(conversation)
        for name in sorted({case["setup"] for case in cases if case["source"] == source}):
            run = replay(conversation, policy_for(labels["setups"][name], conversation), meter(conversation),
                         read_prices().get(conversation.model), spans=spans)
            found = {(use.call, use.item, use.span) for use in run.hidden_used}
            for case in cases:
                if case["source"] == source and case["setup"] == name and (
                        case["call"], case["item"], case["span"]) in found:
                    detected += 1
                    real += case["real"]
    return Precision(len(cases), detected, real)
