"""What the playground knows about models: context window and list prices.

Both come from the dated data file ``data/prices.json`` (read by ``prices.read_prices``), the one
source of prices; this module keeps the small catalogue API the page uses. Prices change: the UI
says so, and lets a person type their own.
"""

from __future__ import annotations

from dataclasses import dataclass

from .prices import read_prices

_TABLE = read_prices()
PRICES_AS_OF = f"list prices as of {_TABLE.as_of}"


@dataclass(frozen=True)
class ModelInfo:
    name: str
    context_window: int
    input_per_million: float  # US dollars
    cached_per_million: float  # US dollars, for input tokens read from the prompt cache


CATALOG: dict[str, ModelInfo] = {
    name: ModelInfo(name, price.context_window, price.input, price.cached_input)
    for name, price in _TABLE.prices.items()
}
DEFAULT_MODEL = "gpt-4o"


def info(model: str) -> ModelInfo:
    """The catalog entry for ``model`` or, for a model we do not list, its longest listed prefix
    (``gpt-4o-2024-08-06`` → ``gpt-4o``), else the default model's numbers under its own name."""
    matches = [name for name in CATALOG if model == name or model.startswith(name + "-")]
    if matches:
        return CATALOG[max(matches, key=len)]
    fallback = CATALOG[DEFAULT_MODEL]
    return ModelInfo(model, fallback.context_window, fallback.input_per_million, fallback.cached_per_million)


def is_listed(model: str) -> bool:
    return any(model == name or model.startswith(name + "-") for name in CATALOG)


def cost(tokens: int, price_per_million: float) -> float:
    return tokens * price_per_million / 1_000_000


def request_cost(total: int, cached: int, model: ModelInfo) -> float:
    """Input cost of one request whose first ``cached`` tokens are read from the prompt cache."""
    cached = min(cached, total)
    return cost(total - cached, model.input_per_million) + cost(cached, model.cached_per_million)
