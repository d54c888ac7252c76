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

from ..conversation import Conversation
from ..errors import InputError
from ..meter.names import bare
from ..meter.tokens import Accounting, accounting_for
from ..summarize.call import SummaryCall

PRICES_FILE = Path(__file__).resolve().parents[1] / "data" / "prices.json"
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

    def listed(self, model: str | None) -> str | None:
        """The row for ``model``: its own, or its longest listed prefix's (``gpt-4o-2024-08-06`` →
        ``gpt-4o``, ``claude-sonnet-4-5-20250929`` → ``claude-sonnet-4-5``), a routed name's as the
        model's own (``openrouter/openai/gpt-4o-mini`` → ``gpt-4o-mini``); None if it has none."""
        model = bare(model)
        found = [name for name in self.prices if model and (model == name or model.startswith(name + "-"))]
        return max(found, key=len) if found else None

    def nearest(self, model: str | None, api_format: str | None = None) -> str:
        """The listed row to count and price ``model`` by: its own row; else, for a name of a
        provider we know, that provider's nearest row — the same prompt format first (gpt-5 and the
        o-series render prompts alike, gpt-4o another way), then the longest shared start of the
        name, then of its end, then the order of the file (``gpt-5.5`` → ``gpt-5``, ``gpt-5.1-mini``
        → ``gpt-5-mini``, ``o4-mini`` → ``o3-mini``, ``claude-opus-4-1`` → a Claude row); else the
        first row of the provider the conversation's API format implies (``gpt-4o`` for OpenAI's
        formats, the Claude row for Anthropic's), else ``DEFAULT_MODEL``. Never another provider's
        row: its tokenizer, prompt cache and prices differ."""
        own = self.listed(model)
        if own is not None:
            return own
        named = _named_provider(model)
        provider = named or _FORMAT_PROVIDERS.get(api_format or "")
        rows = [name for name, price in self.prices.items() if price.provider == provider]
        if not rows:
            return DEFAULT_MODEL if DEFAULT_MODEL in self.prices else next(iter(self.prices))
        if named is None:
            return rows[0]
        name = str(bare(model)).lower()
        return min(rows, key=lambda row: (_prompt_format(row) != _prompt_format(name),
                                          -len(_shared_start(name, row)), -len(_shared_start(name[::-1], row[::-1])),
                                          rows.index(row)))

    def get(self, model: str | None, api_format: str | None = None) -> Price:
        """``model``'s prices (see ``listed``); a model we do not list is priced as the ``nearest``
        listed one, and its ``source`` says so."""
        own = self.listed(model)
        if own is not None:
            return self.prices[own]
        stand_in = self.nearest(model, api_format)
        if stand_in not in self.prices:
            raise InputError("no prices for this model, nor for a stand-in", where="model", value=model)
        price = self.prices[stand_in]
        return replace(price, model=model or stand_in,
                       source=f"not listed: priced as {stand_in}, the nearest listed model ({price.source})")


PROVIDER_TITLES = {"openai": "OpenAI", "anthropic": "Anthropic"}


@dataclass(frozen=True)
class ModelChoice:
    """The listed model a conversation is counted and priced with, and what it named."""

    model: str
    named: str | None
    provider: str | None

    @property
    def note(self) -> str | None:
        """What the person should know: the named model is not listed, so which one stands in."""
        if not self.named or self.named == self.model:
            return None
        if bare(self.named) == self.model:
            return (f"This conversation names the model '{self.named}', a route to {self.model}: counted and "
                    "priced as it.")
        whose = PROVIDER_TITLES.get(self.provider or "", "")
        return (f"This conversation names the model '{self.named}', which the playground does not list: it is "
                f"counted and priced as {self.model}, the nearest {whose + ' ' if whose else ''}model it lists.")


def model_for(conversation: Conversation, table: PriceTable) -> ModelChoice:
    """The model a conversation brings — for the page, the command line and a corpus alike: its
    own when listed (a dated snapshot keeps its name: some bill differently from their family,
    ``gpt-4o-search-preview`` say; a routed name is the model it routes to), else the nearest
    listed one of the same provider (from the name, or from the API format it was sent in: a Claude
    Code log that names no model is counted and priced as Claude), else the format's default."""
    named = conversation.model or None
    model = bare(named) if named and table.listed(named) else table.nearest(named, conversation.format)
    return ModelChoice(str(model), named, provider_of(named, conversation.format))


def counted_as(conversation: Conversation, table: PriceTable) -> str:
    """The model a run is counted with off the page (command line, corpus, suggested rules): the
    conversation's own name, listed or not (the meter knows more models than the price table
    lists, and ``get`` prices an unlisted one as its nearest row), else the default of the API
    format it was sent in — a Claude Code log that names no model is Claude's, not gpt-4o's."""
    return conversation.model or table.nearest(None, conversation.format)


_PROVIDER_NAMES = {"anthropic": ("claude",), "openai": ("gpt", "chatgpt", "codex", "o1", "o3", "o4")}
_FORMAT_PROVIDERS = {"anthropic": "anthropic", "chat": "openai", "responses": "openai"}


def _named_provider(model: str | None) -> str | None:
    """Whose model ``model`` is by its name (``claude-*`` Anthropic's; ``gpt-*``, ``o3-*``, … OpenAI's)."""
    name = (bare(model) or "").lower()
    return next((provider for provider, starts in _PROVIDER_NAMES.items() if name.startswith(starts)), None)


def provider_of(model: str | None, api_format: str | None = None) -> str | None:
    """Whose model ``model`` is, by its name, else by the API format the conversation was sent
    in; None when neither says."""
    return _named_provider(model) or _FORMAT_PROVIDERS.get(api_format or "")


def _prompt_format(model: str) -> Accounting:
    """How the model's prompts are rendered and billed, whatever the family is called (gpt-4o and
    gpt-4.1 alike; gpt-5 and the o-series in the harmony format)."""
    return replace(accounting_for(model), family="", published=False)


def _shared_start(one: str, two: str) -> str:
    length = next((i for i, (a, b) in enumerate(zip(one, two, strict=False)) if a != b), min(len(one), len(two)))
    return one[:length]


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


def summary_cost(call: SummaryCall, price: Price) -> float:
    """Dollars of a summarization call at ``price``: its input uncached (another prompt than the
    agent's), the summary at the output price."""
    return dollars(call.input_tokens, price.input) + dollars(call.output_tokens, price.output)
