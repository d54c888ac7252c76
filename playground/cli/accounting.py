"""Which model counts and prices a run: ``--model`` or the conversation's own, an engine that
holds the ``--calibration`` file's factors, and the price table with ``--prices`` first."""

from __future__ import annotations

from .. import formats
from ..engine import Engine
from ..errors import InputError
from ..run.prices import Price, PriceTable, counted_as, load_prices, read_prices
from .inputs import load_json
from .output import note


def engine(calibration: str | None, limit_mb: int, model: str) -> Engine:
    """An engine for this run, holding the ``calibration`` file's factors when one is given (it
    must have ``model``'s)."""
    made = Engine()
    if calibration:
        from ..meter.calibration import load_calibrations

        try:
            made.calibrations = load_calibrations(load_json(calibration, limit_mb))
        except InputError as error:
            raise error.within(calibration) from None
        if model not in made.calibrations:
            raise InputError(f"no calibration for model {model!r} (the file has: "
                             f"{', '.join(sorted(made.calibrations))})", where=calibration)
    return made


def model(chosen: str | None, conversation: formats.Conversation) -> str:
    """The model to count and price with: ``chosen`` (``--model``), else the conversation's
    (``counted_as``: its own, else its API format's default, said on stderr)."""
    if chosen or conversation.model:
        return chosen or conversation.model
    default = counted_as(conversation, read_prices())
    note(f"the conversation names no model: counted and priced as {default}, the default for "
         f"{formats.TITLES[conversation.format]}. Give --model to choose another.")
    return default


def prices(path: str | None, limit_mb: int) -> PriceTable:
    """The price table: the ``--prices`` file over the catalogue, else the catalogue."""
    return load_prices(load_json(path, limit_mb), path) if path else read_prices()


def say_price(price: Price) -> None:
    """On stderr: a model whose price nobody lists (its costs are unknown, never another model's)."""
    if not price.known:
        note(f"{price.source}: tokens are counted, costs are unknown (null in --json). Price it "
             "with a prices file of your own, or --model a model the catalogue lists.")
