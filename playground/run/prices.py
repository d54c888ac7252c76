"""Prices and context windows per model — from pydantic's maintained catalogue ``genai-prices``
by default, or from a person's own rows (``load_prices``, prices typed on the page) — and the
arithmetic that turns a call's tokens into dollars (the cache rules that decide which price a
token pays are the playground's own, in ``promptcache`` and ``min_cacheable``).

Why a catalogue: a hand-written table of ten rows met real logs of Opus 4.5, Gemini 3, Qwen and
Grok and priced them as other models (Opus 4.5 as Sonnet 4.5, about 40 % under). ``genai-prices``
lists 2,000+ models with cache-read and cache-write prices, context windows, the names routers
and clouds give them (``openrouter/…``, Bedrock's ``us.anthropic.…-v1:0``, Vertex's ``…@…``) and
each price's start date; its data ships inside the package (no request is made: its auto-update
is never started here), and it needs only ``pydantic`` and ``httpx2``.

A model neither the person's rows nor the catalogue knows is **never priced as another**: its
prices are ``UNKNOWN`` (NaN, so that any sum with an unknown part stays unknown) and its
``source`` says "price unknown — enter it". Outputs turn an unknown cost into ``None`` (JSON
``null``) with ``known``; tokens are counted as ever.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

from ..conversation import Conversation
from ..errors import InputError
from ..meter.names import bare
from ..summarize.call import SummaryCall

PROVIDERS = ("openai", "anthropic")  # the providers a person's own row may name (their cache rules are known)
DEFAULT_MODEL = "gpt-4o"
PRICE_FIELDS = ("input", "cached_input", "cache_write", "output")
UNKNOWN = math.nan  # an unknown price: the one NaN object, so two unknown Prices compare equal
UNKNOWN_NOTE = "price unknown — enter it"
CATALOGUE = "genai-prices"
# The models the page's model list offers before the conversation's own (any name the catalogue knows works).
FEATURED = ("gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-5", "gpt-5-mini", "gpt-5.1", "o3-mini",
            "gpt-4", "gpt-3.5-turbo", "claude-sonnet-4-5", "claude-opus-4-5", "claude-haiku-4-5",
            "gemini-2.5-pro", "gemini-3-pro-preview", "gemini-3-flash-preview")


@dataclass(frozen=True)
class Price:
    """One model's prices in US dollars per million tokens (``UNKNOWN`` when nobody knows them),
    its context window (None when unknown) and its prompt-cache facts. ``priced_as`` is the
    catalogue's id of the row (or the person's own row) the prices come from; None when unknown."""

    model: str
    provider: str  # whose model: openai, anthropic, or the catalogue's provider id (google, x-ai, openrouter, …)
    context_window: int | None
    input: float
    cached_input: float
    cache_write: float
    output: float
    min_cacheable: int
    source: str
    priced_as: str | None = None
    cache: str = ""  # the prompt-cache model that fits (openai, anthropic, none); empty: the provider's own
    # Long-context prices (the catalogue's tiers, e.g. 200k for Sonnet 4.5's 1M window): from this many
    # prompt tokens every token of the call pays ``long_rates`` (input, cached input, cache write, output).
    long_from: int | None = None
    long_rates: tuple[float, float, float, float] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not self.cache:
            object.__setattr__(self, "cache", self.provider if self.provider in PROVIDERS else "none")

    @property
    def known(self) -> bool:
        """Whether every price is known (a cost from an unknown one is unknown, never a guess)."""
        return not any(math.isnan(getattr(self, name)) for name in PRICE_FIELDS)

    def at(self, prompt: int) -> Price:
        """The rates a call of ``prompt`` tokens pays: the long-context tier from its start (the
        providers' cliff: the whole call at the tier's rates), else these."""
        if self.long_from is None or self.long_rates is None or prompt <= self.long_from:
            return self
        return replace(self, **dict(zip(PRICE_FIELDS, self.long_rates, strict=True)), long_from=None, long_rates=None)


def known(cost: float) -> float | None:
    """A cost for output: None (JSON ``null``) when it has an unknown part."""
    return None if math.isnan(cost) else cost


def rounded(cost: float, digits: int = 8) -> float | None:
    """``known(cost)`` rounded for JSON."""
    value = known(cost)
    return None if value is None else round(value, digits)


def money(cost: float | None, digits: int = 4) -> str:
    """``$1.2345``, or the unknown price's note (for NaN, or None from JSON)."""
    return UNKNOWN_NOTE if cost is None or math.isnan(cost) else f"${cost:,.{digits}f}"


def min_cacheable(model: str, provider: str) -> int:
    """The shortest prompt prefix the provider caches — the playground's rule, not the catalogue's
    (Anthropic's prompt-caching page: 4,096 for Opus 4.5/4.6 and Haiku 4.5, 2,048 for Sonnet 4.6 and
    the Haiku 3 models, 1,024 for the others; OpenAI's: 1,024)."""
    name = (bare(model) or "").lower()
    if provider == "anthropic" or name.startswith("claude"):
        if any(part in name for part in ("opus-4-5", "opus-4-6", "haiku-4-5")):
            return 4096
        if any(part in name for part in ("sonnet-4-6", "3-haiku", "3-5-haiku", "haiku-3")):
            return 2048
    return 1024


def unknown_price(model: str | None, api_format: str | None = None) -> Price:
    """The Price of a model nobody lists: every price ``UNKNOWN``, its window unknown; the cache
    rules of its provider where the name or the API format says whose it is."""
    provider = provider_of(model, api_format) or "unknown"
    name = model or "(no model named)"
    return Price(name, provider, None, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN, min_cacheable(name, provider),
                 f"{UNKNOWN_NOTE}: the catalogue ({CATALOGUE}) does not list '{name}'")


@dataclass(frozen=True)
class PriceTable:
    """Where prices come from: a person's own rows first, then (``catalogue``) ``genai-prices``.
    ``when`` is the date whose prices apply (a log's date); None: today's."""

    as_of: str
    prices: dict[str, Price]
    catalogue: bool = True
    when: datetime | None = None

    def listed(self, model: str | None) -> str | None:
        """The person's own row for ``model``: its own, or its longest listed prefix's
        (``gpt-4o-2024-08-06`` → ``gpt-4o``), a routed name's as the model's own; None if none."""
        model = bare(model)
        found = [name for name in self.prices if model and (model == name or model.startswith(name + "-"))]
        return max(found, key=len) if found else None

    def dated(self, when: datetime | date | str | None) -> PriceTable:
        """The same table at the prices in force on ``when`` (a log's date or timestamp)."""
        return replace(self, when=moment(when))

    def get(self, model: str | None, api_format: str | None = None) -> Price:
        """``model``'s prices: the person's row, else the catalogue's on ``when`` (today if None),
        else ``unknown_price`` — never another model's."""
        own = self.listed(model)
        if own is not None:
            return replace(self.prices[own], model=model or own)
        if model and self.catalogue:
            found = catalogue_price(model, self.when)
            if found is not None:
                return found
        return unknown_price(model, api_format)

    def models(self) -> list[str]:
        """The model names a person is offered: their own rows, then the featured catalogue ones."""
        return list(dict.fromkeys([*self.prices, *(FEATURED if self.catalogue else ())]))


PROVIDER_TITLES = {"openai": "OpenAI", "anthropic": "Anthropic", "google": "Google"}


@dataclass(frozen=True)
class ModelChoice:
    """The model a conversation is counted and priced with, and what it named."""

    model: str
    named: str | None
    provider: str | None
    priced: bool = True  # whether a price is known for it

    @property
    def note(self) -> str | None:
        """What the person should know: the model's price is unknown, or it names none."""
        if self.named and not self.priced:
            return (f"This conversation names the model '{self.named}', which the price catalogue does not "
                    f"list: its tokens are counted, its cost is unknown ({UNKNOWN_NOTE} in the Run tab's prices).")
        return None


def model_for(conversation: Conversation, table: PriceTable) -> ModelChoice:
    """The model a conversation brings — for the page, the command line and a corpus alike: its
    own name (counted by the meter, priced by the catalogue or unknown), else the default of the
    API format it was sent in (a Claude Code log that names no model is Claude's)."""
    named = conversation.model or None
    model = named or default_model(conversation.format)
    return ModelChoice(model, named, provider_of(named, conversation.format), table.get(model).known)


def counted_as(conversation: Conversation, table: PriceTable) -> str:
    """The model a run is counted and priced as off the page (command line, corpus, suggested
    rules): the conversation's own name, else the default of the API format it was sent in."""
    return conversation.model or default_model(conversation.format)


_FORMAT_DEFAULTS = {"anthropic": "claude-sonnet-4-5", "chat": DEFAULT_MODEL, "responses": DEFAULT_MODEL}
_PROVIDER_NAMES = {"anthropic": ("claude",), "openai": ("gpt", "chatgpt", "codex", "o1", "o3", "o4"),
                   "google": ("gemini",)}
_FORMAT_PROVIDERS = {"anthropic": "anthropic", "chat": "openai", "responses": "openai"}


def default_model(api_format: str | None) -> str:
    """The model a conversation that names none is counted and priced as: its API format's (Claude
    for Anthropic's Messages format, gpt-4o for OpenAI's), stated where it is used."""
    return _FORMAT_DEFAULTS.get(api_format or "", DEFAULT_MODEL)


def _named_provider(model: str | None) -> str | None:
    """Whose model ``model`` is by its name (``claude-*`` Anthropic's; ``gpt-*``, ``o3-*``, … OpenAI's)."""
    name = (bare(model) or "").lower()
    return next((provider for provider, starts in _PROVIDER_NAMES.items() if name.startswith(starts)), None)


def provider_of(model: str | None, api_format: str | None = None) -> str | None:
    """Whose model ``model`` is, by its name, else by the API format the conversation was sent
    in; None when neither says."""
    return _named_provider(model) or _FORMAT_PROVIDERS.get(api_format or "")


def moment(when: datetime | date | str | None) -> datetime | None:
    """``when`` as an aware datetime: a date alone is taken at noon UTC (the catalogue has
    time-of-day prices, DeepSeek's off-peak hours, that midnight would pick); an ISO string is
    parsed; None and what cannot be read stay None (today's prices)."""
    if when is None or isinstance(when, datetime):
        return when if when is None or when.tzinfo else when.replace(tzinfo=UTC)
    if isinstance(when, date):
        return datetime.combine(when, time(12), tzinfo=UTC)
    text = str(when).strip().replace("Z", "+00:00")
    try:
        return moment(datetime.fromisoformat(text)) if "T" in text or " " in text else moment(date.fromisoformat(text))
    except ValueError:
        return None


def today() -> datetime:
    """Noon UTC today: the moment of today's prices (one price all day, see ``moment``)."""
    return datetime.combine(datetime.now(UTC).date(), time(12), tzinfo=UTC)


@cache
def _snapshot() -> Any:
    """The catalogue's data as shipped in the package (never its auto-update: no request is made)."""
    from genai_prices import data_snapshot

    return data_snapshot.get_snapshot()


def _routes(model: str) -> list[tuple[str, str | None]]:
    """The (name, provider) pairs to look ``model`` up by, most specific first: the name as
    logged; a route's first part as the provider (``openrouter/qwen/qwen3-coder``,
    ``x-ai/grok-code-fast-1``, ``azure/gpt-4o``, ``vertex_ai/…``); a cloud's name at the cloud
    (Bedrock's ``us.anthropic.…-v1:0``); OpenRouter's ``vendor/model``; the bare model name."""
    name = model.strip().lower()
    routes: list[tuple[str, str | None]] = [(name, None)]
    if "/" in name:
        head, rest = name.split("/", 1)
        routes.append((rest, head))
        if "/" in rest:
            vendor, last = rest.split("/", 1)
            routes += [(last, vendor), (rest, None)]
        routes.append((name, "openrouter"))
    routes += [(name.rsplit("/", 1)[-1], "aws"), (name.rsplit("/", 1)[-1], "google")]
    plain = (bare(model) or "").lower()
    if plain:
        routes.append((plain, None))
    return list(dict.fromkeys(routes))


def _find(model: str) -> tuple[Any, Any] | None:
    """The catalogue's (provider, model) for a name, or None: its own matching, over ``_routes``
    (not cached here: the names come from people's logs, and a server's sessions share a module)."""
    snapshot = _snapshot()
    for name, provider in _routes(model):
        try:
            return snapshot.find_provider_model(name, None, provider, None)
        except LookupError:
            continue
    return None


def _rate(value: Any) -> tuple[float | None, tuple[int, float] | None]:
    """A catalogue price as (base, first long-context tier or None); None when it has none."""
    if value is None:
        return None, None
    if isinstance(value, Decimal | int | float):
        return float(value), None
    tiers = getattr(value, "tiers", None) or []
    first = (tiers[0].start, float(tiers[0].price)) if tiers else None
    return float(value.base), first


def _cache_of(provider: str, model: str, cached: float | None) -> str:
    """The playground's cache model for a catalogue row: Anthropic's for Claude (at Anthropic, Bedrock,
    Vertex or a router), OpenAI's automatic prefix cache for the rest that price cached input
    (Gemini, DeepSeek, Grok cache prefixes automatically), none for a model without a cache price."""
    if "claude" in model.lower() or provider == "anthropic":
        return "anthropic"
    return "openai" if cached is not None else "none"


def catalogue_price(model: str, when: datetime | date | str | None = None) -> Price | None:
    """``model``'s row in the catalogue at the prices in force on ``when`` (today if None), as a
    Price; None when the catalogue does not list it. A price the row lacks is the one a provider
    charges for it: cached input at the input price (no cache discount), a cache write at 1.25×
    input for Anthropic's 5-minute cache and at the input price for automatic caches."""
    found = _find(model)
    if found is None:
        return None
    provider, info = found
    at = moment(when) or today()
    # A name that says fast mode (Cline logs ``claude-opus-4.8-fast``) pays the catalogue's fast variant.
    fast = bare(model) and str(bare(model)).lower().endswith("-fast")
    prices = info.get_prices(at, {"speed": "fast"} if fast else None)
    (inp, inp_tier), (out, out_tier) = _rate(prices.input_mtok), _rate(prices.output_mtok)
    (read, read_tier), (write, write_tier) = _rate(prices.cache_read_mtok), _rate(prices.cache_write_mtok)
    if inp is None or out is None:
        return None  # a row without token prices (an image or audio model): not a price for these calls
    cache_kind = _cache_of(provider.id, info.id, read)
    owner = ("anthropic" if cache_kind == "anthropic" else "openai" if provider.id in ("openai", "azure")
             else provider.id)
    write_default = inp * 1.25 if cache_kind == "anthropic" else inp
    rates = (inp, inp if read is None else read, write_default if write is None else write, out)
    long_from, long_rates = None, None
    if inp_tier is not None:
        start = inp_tier[0]
        tiered = (inp_tier, read_tier, write_tier, out_tier)
        long_rates = tuple(tier[1] if tier is not None else rate * inp_tier[1] / inp if inp else rate
                           for tier, rate in zip(tiered, rates, strict=True))
        long_from = start
    day = at.date().isoformat() if when is not None else f"today, {at.date().isoformat()}"
    via = f" via {provider.id}" if provider.id not in ("openai", "anthropic") else ""
    source = f"{CATALOGUE} {_version()}: {info.id}{via}, prices in force on {day}"
    return Price(model, owner, info.context_window, *rates, min_cacheable=min_cacheable(info.id, cache_kind),
                 source=source, priced_as=info.id, cache=cache_kind, long_from=long_from,
                 long_rates=long_rates)  # type: ignore[arg-type]


@cache
def _version() -> str:
    from importlib.metadata import version

    return version("genai-prices")


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
                 min_cacheable=_number(entry, "min_cacheable", where, int), source=source, priced_as=name)


def load_prices(data: Any, where: str = "prices", catalogue: bool = True) -> PriceTable:
    """A person's own price table from parsed JSON ``{"as_of": …, "models": {name: {…}}}``: their
    rows first, and (``catalogue``) the catalogue for the models they do not list."""
    if not isinstance(data, dict):
        raise InputError("expected an object with as_of and models", where=where, value=data)
    as_of = data.get("as_of")
    if not isinstance(as_of, str) or not as_of.strip():
        raise InputError("say when the prices were read", where=f"{where}.as_of", value=as_of)
    models = data.get("models")
    if not isinstance(models, dict) or not models:
        raise InputError("expected an object of models", where=f"{where}.models", value=models)
    return PriceTable(as_of, {name: _price(name, entry, f"{where}.models.{name}") for name, entry in models.items()},
                      catalogue)


def read_prices(path: Path | None = None) -> PriceTable:
    """The catalogue (``genai-prices``, as shipped), or a person's own price file over it."""
    if path is None:
        return _catalogue_table()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read the prices file ({exc.strerror or exc})", where=str(path)) from None
    except ValueError as exc:
        raise InputError(f"not valid JSON ({exc})", where=str(path)) from None
    return load_prices(data, path.name)


@cache
def _catalogue_table() -> PriceTable:
    return PriceTable(f"{CATALOGUE} {_version()}", {})


def dollars(tokens: int, per_million: float) -> float:
    # (no tokens cost nothing even at an unknown price: a call that reads nothing from the cache)
    return 0.0 if tokens == 0 else tokens * per_million / 1_000_000


def summary_cost(call: SummaryCall, price: Price) -> float:
    """Dollars of a summarization call at ``price``: its input uncached (another prompt than the
    agent's), the summary at the output price."""
    price = price.at(call.input_tokens)
    return dollars(call.input_tokens, price.input) + dollars(call.output_tokens, price.output)
