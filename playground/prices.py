"""Prices per model, read from the dated data file ``data/prices.json`` — the one source of
prices, for the page, the command line and replay alike — and the arithmetic that turns a call's
tokens into dollars (the cache rules that decide which price a token pays are in ``promptcache``).

Prices change; the file says when they were read and from which page, and a person can load
their own with ``load_prices`` (errors name the model and field).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .errors import InputError

PRICES_FILE = Path(__file__).resolve().parent / "data" / "prices.json"
PROVIDERS = ("openai", "anthropic")
DEFAULT_MODEL = "gpt-4o"
PRICE_FIELDS = ("input", "cached_input", "cache_write", "output")


@dataclass(frozen=True)
class Price:
    """One model's list prices in US dollars per million tokens, and its cache facts."""

    model: str
    provider: str
    context_window: int
    input: float
    cached_input: float
    cache_write: float
    output: float
    min_cacheable: int
    source: str


@dataclass(frozen=True)
class PriceTable:
    as_of: str
    prices: dict[str, Price]

    def _listed(self, name: str) -> list[str]:
        return [listed for listed in self.prices if name == listed or name.startswith(listed + "-")]

    def lists(self, model: str) -> bool:
        """Whether ``model`` has its own prices here (itself or a dated version of a listed name)."""
        return bool(self._listed(model))

    def get(self, model: str | None, fallback: str = DEFAULT_MODEL) -> Price:
        """``model``'s prices, or its longest listed prefix's (``gpt-4o-2024-08-06`` → ``gpt-4o``);
        a model we do not list is priced as ``fallback``, and its ``source`` says so."""
        name = model or fallback
        found = self._listed(name)
        if found:
            return self.prices[max(found, key=len)]
        if fallback not in self.prices:
            raise InputError("no prices for this model, nor for the fallback", where="model", value=name)
        stand_in = self.prices[fallback]
        return replace(stand_in, model=name, source=f"not listed: priced as {fallback} ({stand_in.source})")


def _number(entry: dict[str, Any], key: str, where: str, kind: type = float) -> Any:
    value = entry.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise InputError("expected a number, 0 or more", where=f"{where}.{key}", value=value)
    if kind is int and value != int(value):
        raise InputError("expected a whole number", where=f"{where}.{key}", value=value)
    return kind(value)


def _price(name: str, entry: Any, where: str) -> Price:
    if not isinstance(entry, dict):
        raise InputError("expected an object of prices", where=where, value=entry)
    provider = entry.get("provider")
    if provider not in PROVIDERS:
        raise InputError(f"expected one of {', '.join(PROVIDERS)}", where=f"{where}.provider", value=provider)
    source = entry.get("source")
    if not isinstance(source, str) or not source.strip():
        raise InputError("say which page the prices came from", where=f"{where}.source", value=source)
    numbers = {key: _number(entry, key, where) for key in PRICE_FIELDS}
    return Price(name, provider, _number(entry, "context_window", where, int), **numbers,
                 min_cacheable=_number(entry, "min_cacheable", where, int), source=source)


def load_prices(data: Any, where: str = "prices") -> PriceTable:
    """A price table from parsed JSON ``{"as_of": …, "models": {name: {…}}}``."""
    if not isinstance(data, dict):
        raise InputError("expected an object with as_of and models", where=where, value=data)
    as_of = data.get("as_of")
    if not isinstance(as_of, str) or not as_of.strip():
        raise InputError("say when the prices were read", where=f"{where}.as_of", value=as_of)
    models = data.get("models")
    if not isinstance(models, dict) or not models:
        raise InputError("expected an object of models", where=f"{where}.models", value=models)
    return PriceTable(as_of, {name: _price(name, entry, f"{where}.models.{name}") for name, entry in models.items()})


def read_prices(path: Path = PRICES_FILE) -> PriceTable:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read the prices file ({exc.strerror or exc})", where=str(path)) from None
    except ValueError as exc:
        raise InputError(f"not valid JSON ({exc})", where=str(path)) from None
    return load_prices(data, path.name)


def dollars(tokens: int, per_million: float) -> float:
    return tokens * per_million / 1_000_000
