"""Prompt-cache models: how much of each call's prompt a provider reads from its cache, and what
that costs.

A run is a sequence of calls. Each call's prompt is a chain of blocks: the head (tool
definitions and instructions) and then one block per item. A block's identity is its content
(``content_key``); a prefix's identity chains the identities of its blocks, so two prompts share
a prefix exactly when their chains agree up to it — an edited item breaks the chain there, even
if the token counts are the same. What a call can read is what earlier calls of the same run
wrote:

* ``openai``: automatic prefix caching. Every prompt of at least 1,024 tokens is written; a later
  prompt reads the longest prefix it shares with any earlier one, in steps of 128 tokens (from
  1,024). Writing costs nothing extra; a cached token costs the model's cached-input price.
* ``anthropic``: explicit caching with one breakpoint on the last message, as coding agents set
  it. A call writes its whole prompt (if at least the model's minimum cacheable length) at the
  cache-write price (1.25× input for the 5-minute cache) and reads an entry an earlier call wrote
  if that entry ends at one of the last 20 block boundaries before the breakpoint (0.1× input).
* ``none``: every prompt token is billed at the input price.

Items stand for blocks, the cache never expires within a run (calls are taken to be less than 5
minutes apart), and a changed item's unchanged leading text is not counted as shared: estimates
that leave the cache a little less generous than a provider may be.

This is the one cost model: replay bills every call with it, and the page's cost line bills the
next request with it (``next_request``: the previous call's prompt written, then this one read).
A cache model belongs to its provider: ``check_cache`` refuses Anthropic's cache with a model
OpenAI prices, and the other way round (the write fee and minimums would be the wrong provider's).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate

from ..conversation import Item, Message, ToolCall, content_text
from ..errors import InputError
from .prices import Price, dollars

CACHE_MODELS = ("openai", "anthropic", "none")
OPENAI_STEP = 128  # cache hits grow in steps of 128 tokens
ANTHROPIC_LOOKBACK = 20  # block boundaries checked for a hit before the breakpoint


def content_key(item: Item) -> Hashable:
    """What makes two items the same block for a cache: kind, speaker, ids and text."""
    if isinstance(item, ToolCall):
        return ("call", item.call_id, item.name, item.arguments)
    if isinstance(item, Message):
        return ("message", item.role, item.name, content_text(item.content))
    return ("result", item.call_id, item.name, item.is_error, content_text(item.content))


def link(prefix: int, item: Item) -> int:
    """The identity of a prefix one item longer than the prefix ``prefix`` identifies."""
    return hash((prefix, content_key(item)))


@dataclass(frozen=True)
class Prompt:
    """One call's prompt as a cache sees it: ``chain[i]`` identifies its prefix of ``i`` items
    after the head (``chain[0]`` the head alone), ``offsets[i]`` is that prefix's length in tokens,
    and ``tokens`` the whole prompt (with what follows the items: reply priming, options)."""

    chain: tuple[int, ...]
    offsets: tuple[int, ...]
    tokens: int


def prompt(items: Iterable[Item], counts: Iterable[int], head: int, tail: int, head_key: Hashable = "head") -> Prompt:
    """The prompt of ``items`` (each with its tokens in ``counts``) after a head of ``head`` tokens."""
    chain, tokens = [hash(head_key)], []
    for item, count in zip(items, counts, strict=True):
        chain.append(link(chain[-1], item))
        tokens.append(count)
    offsets = tuple(accumulate(tokens, initial=head))
    return Prompt(tuple(chain), offsets, offsets[-1] + tail)


def check_cache(kind: str, provider: str, model: str, where: str = "cache") -> None:
    """Refuse a cache model that is not the model's provider's (``none`` always fits): Anthropic's
    cache with OpenAI's prices would bill writes at 1.0× input, OpenAI's with Claude's would skip
    the 1.25× write fee and Claude's minimums — a bill no provider sends."""
    if kind not in CACHE_MODELS:
        raise InputError(f"unknown cache model (choose {', '.join(CACHE_MODELS)})", where=where, value=kind)
    if kind not in ("none", provider):
        if provider == "none":
            raise InputError(f"{model} has no cache price: choose the cache model none", where=where)
        raise InputError(f"{kind} is {kind.capitalize() if kind != 'openai' else 'OpenAI'}'s prompt cache and "
                         f"{model} is priced by {provider}: the bill would mix two providers' rules (choose "
                         f"{provider} or none, or a model {kind} prices)", where=where)


def cache_models(provider: str) -> tuple[str, ...]:
    """The cache models that fit a model of ``provider``: its own first, then none."""
    return tuple(dict.fromkeys((provider, "none")))


@dataclass(frozen=True)
class CacheUse:
    """What one call did with the cache: prompt tokens read from it and written to it."""

    read: int = 0
    written: int = 0


class PromptCache:
    """What one run has written to a provider's cache so far; ``use`` is called once per call, in order.

    ``chain[i]`` identifies the prompt's prefix of ``i`` items after the head (``chain[0]`` the
    head alone) and ``offsets[i]`` is that prefix's length in tokens.
    """

    def __init__(self, kind: str, min_cacheable: int = 1024) -> None:
        if kind not in CACHE_MODELS:
            raise InputError(f"unknown cache model (choose {', '.join(CACHE_MODELS)})", where="cache", value=kind)
        self.kind = kind
        self.min_cacheable = min_cacheable
        self._written: set[int] = set()

    def use(self, chain: Sequence[int], offsets: Sequence[int]) -> CacheUse:
        if self.kind == "openai":
            return self._openai(chain, offsets)
        if self.kind == "anthropic":
            return self._anthropic(chain, offsets)
        return CacheUse()

    def _openai(self, chain: Sequence[int], offsets: Sequence[int]) -> CacheUse:
        # Every prefix of every earlier prompt is written, so "shared with an earlier prompt" holds
        # for a leading run of prefixes: binary search finds where it ends.
        low, high = 0, len(chain)  # chain[:low] are all written; chain[high:] are not
        while low < high:
            middle = (low + high) // 2
            if chain[middle] in self._written:
                low = middle + 1
            else:
                high = middle
        shared = offsets[low - 1] if low else 0
        if offsets[-1] >= self.min_cacheable:
            self._written.update(chain[low:])
        read = shared // OPENAI_STEP * OPENAI_STEP if shared >= self.min_cacheable else 0
        return CacheUse(read=read)

    def _anthropic(self, chain: Sequence[int], offsets: Sequence[int]) -> CacheUse:
        last = len(chain) - 1
        if offsets[last] < self.min_cacheable:
            return CacheUse()
        read = next((offsets[i] for i in range(last, max(-1, last - ANTHROPIC_LOOKBACK - 1), -1)
                     if chain[i] in self._written), 0)
        self._written.add(chain[last])
        return CacheUse(read=read, written=offsets[last] - read)


def input_cost(prompt: int, use: CacheUse, price: Price) -> float:
    """Dollars for one call's prompt: uncached tokens at the input price, cache reads and writes at
    theirs (a long prompt at the long-context tier's, ``Price.at``); NaN when a price is unknown."""
    price = price.at(prompt)
    plain = prompt - use.read - use.written
    return dollars(plain, price.input) + dollars(use.read, price.cached_input) + dollars(use.written, price.cache_write)


def call_cost(prompt: int, use: CacheUse, output: int, price: Price) -> float:
    """Dollars for one call: its prompt (``input_cost``) and the reply at the output price."""
    return input_cost(prompt, use, price) + dollars(output, price.at(prompt).output)


@dataclass(frozen=True)
class RequestCost:
    """What one request's prompt costs: its tokens, what it read from and wrote to the cache, and
    the dollars (input only: the reply is billed on top, at the output price)."""

    tokens: int
    use: CacheUse
    cost: float


def next_request(previous: Prompt | None, request: Prompt, kind: str, price: Price) -> RequestCost:
    """The input cost of ``request`` sent right after ``previous`` (None: a first call), by the
    same cache model replay bills every call with."""
    check_cache(kind, price.cache, price.model)
    cache = PromptCache(kind, price.min_cacheable)
    if previous is not None:
        cache.use(previous.chain, previous.offsets)
    use = cache.use(request.chain, request.offsets)
    return RequestCost(request.tokens, use, input_cost(request.tokens, use, price))
