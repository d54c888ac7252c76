"""What the single-run commands (replay, compare, probe) take from their command line: one run's
options, read and checked once (``RunOptions``), and the run they are for, loaded (``LoadedRun``).
The corpus commands take the corpus's ``Setup`` instead: plain values a worker process can take."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace

from .. import formats
from ..meter.tokens import Meter
from ..policies import PolicySettings
from ..rules.ruleset import book_rules
from ..run.inferred import infer
from ..run.prices import Price, PriceTable
from ..run.promptcache import check_cache
from ..run.replay import call_starts
from ..tune.rulesets import RULESETS
from . import accounting
from .arguments import add_input_limit
from .inputs import load_conversation, load_rules
from .output import note
from .policy_flags import add_policy_arguments, policy_settings


@dataclass(frozen=True)
class RunOptions:
    """A single run's options: every policy's settings (``policy``; its rules the ``--rules``
    file's, None for the book's or the ``--preset``'s, which are made per conversation), and the
    model, cache, mode, baseline and prices the run is replayed with. No defaults here: the flags'
    are the only ones (``policy_flags``)."""

    policy: PolicySettings
    prices: PriceTable
    preset: str | None
    model: str | None  # None: the conversation's own
    cache: str | None  # None: the model's provider's
    mode: str
    baseline: str
    summarizer_model: str | None  # None: the run's own model's prices

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> RunOptions:
        """The options ``add_run_arguments`` parsed; a bad rules or prices file fails here, named."""
        rules = load_rules(args.rules, args.max_input_mb) if args.rules else None
        return cls(policy=replace(policy_settings(args), rules=rules),
                   prices=accounting.prices(args.prices, args.max_input_mb), preset=args.preset, model=args.model,
                   cache=args.cache, mode=args.mode, baseline=args.baseline, summarizer_model=args.summarizer_model)

    def settings(self, conversation: formats.Conversation, context_window: int | None = None) -> PolicySettings:
        """Every policy's settings for ``conversation``, its rules made (a preset's ``suggested``
        is built for its tools), and the model's context window, which some agents' triggers are
        part of (None: the catalogue does not know it)."""
        if self.preset:
            return replace(self.policy, rules=RULESETS[self.preset].make(conversation), label=self.preset,
                           context_window=context_window)
        return replace(self.policy, rules=self.policy.rules or book_rules(), context_window=context_window)

    def summarizer_price(self, price: Price) -> Price:
        """The prices summaries are billed at: ``--summarizer-model``'s row, else the run's own model's."""
        return self.prices.get(self.summarizer_model) if self.summarizer_model else price


@dataclass(frozen=True)
class LoadedRun:
    """The run a single-run command is for, under its ``options``: its conversation (with the cuts
    its bills imply), the meter that counts it, its model's price and the prompt-cache model it is
    replayed with."""

    options: RunOptions
    conversation: formats.Conversation
    meter: Meter
    price: Price
    cache: str

    def settings(self) -> PolicySettings:
        """Every policy's settings for this run, the model's context window among them."""
        return self.options.settings(self.conversation, self.price.context_window)


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    """The flags every single-run command takes after its own: the policy options and the input."""
    add_policy_arguments(p)
    p.add_argument("--format", choices=list(formats.READERS), help="input format (default: detected)")
    p.add_argument("--calibration", help="JSON file of calibration factors for the model (as for count)")
    add_input_limit(p)


def load_run(args: argparse.Namespace) -> LoadedRun:
    """The conversation in ``args.file``, counted and priced as its options and ``--calibration``
    say; the options are read first, so a bad rules or prices file fails before a large log is read."""
    options = RunOptions.from_args(args)
    conversation = load_conversation(args.file, args.max_input_mb, args.format)
    if not call_starts(conversation.items):
        note(f"{args.file} holds no model call (no reply of the assistant): there is nothing to replay")
    model = accounting.model(options.model, conversation)
    meter = accounting.engine(args.calibration, args.max_input_mb, model).meter(model)
    price = options.prices.dated(conversation.started).get(model, conversation.format)
    accounting.say_price(price)
    conversation = infer(conversation, price)  # the agent's own cuts its bills show, where its log says nothing
    cache = options.cache or price.cache
    check_cache(cache, price.cache, price.model, where="--cache")
    return LoadedRun(options, conversation, meter, price, cache)
