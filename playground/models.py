"""What the playground knows about models: context window and list prices.

Prices are list prices per million input tokens (and per million cached input tokens) as the
providers published them in 2025. They change: the UI says so, and lets a person type their own.
"""

from __future__ import annotations

from dataclasses import dataclass

PRICES_AS_OF = "2025 list prices"


@dataclass(frozen=True)
class ModelInfo:
    name: str
    context_window: int
    input_per_million: float  # US dollars
    cached_per_million: float  # US dollars, for input tokens read from the prompt cache


CATALOG: dict[str, ModelInfo] = {info.name: info for info in (
    ModelInfo("gpt-4o", 128_000, 2.50, 1.25),
    ModelInfo("gpt-4o-mini", 128_000, 0.15, 0.075),
    ModelInfo("gpt-4.1", 1_047_576, 2.00, 0.50),
    ModelInfo("gpt-4.1-mini", 1_047_576, 0.40, 0.10),
    ModelInfo("gpt-5", 400_000, 1.25, 0.125),
    ModelInfo("gpt-5-mini", 400_000, 0.25, 0.025),
    ModelInfo("o3-mini", 200_000, 1.10, 0.55),
    ModelInfo("gpt-4", 8_192, 30.00, 30.00),
    ModelInfo("gpt-3.5-turbo", 16_385, 0.50, 0.50),
    ModelInfo("claude-sonnet-4-5", 200_000, 3.00, 0.30),
)}
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
