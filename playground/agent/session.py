"""One agent run's compaction state between its calls: replay's ``stored`` mode, one call at a time.

Replay's ``applied`` loop builds each call's request as the request sent last plus what came since
(the reply and the tool results), applies the policy to it and keeps what it sent: edits stay, so
every earlier compacted item is sent again as the same bytes and the provider's prompt cache keeps
hitting. A wrapped client sees the same run from the other side: at each call the caller gives its
whole history, uncompacted. ``Session`` keeps what replay keeps — the caller's history as last seen
and the request last sent — so the new items are the caller's history past the part seen, and the
request is built exactly as ``applied`` builds it (``Conversation.grown``: the policy's incremental
paths take it as replay's). The parity tests check, call by call, that the requests equal replay's.

A call is committed only once the provider accepted it (``Pending.commit``): a call that failed and
is retried is the same call again, not one more. The figures each call logs (``record``) are counted
as replay counts them, with the prompt cache of the model's provider (``run.promptcache``).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..conversation import Conversation, Item, content_text, extends, is_instruction, shared
from ..meter.factor import Calibration
from ..meter.tokens import Meter
from ..policies import Policy
from ..run.prices import read_prices
from ..run.promptcache import PromptCache, check_cache
from ..run.replay import Fixed, GrowingPrompt, counter
from .record import CallRecord, edits


@dataclass(frozen=True)
class Pending:
    """A call prepared and not yet sent: the request to send (``sent``) and what its record needs.
    ``commit`` moves the session on to it once the provider took it, and gives the call's record."""

    session: Session
    given: tuple[Item, ...]
    seen: int  # how many of ``given`` the run had seen at the last call (0: the run starts here)
    sent: Conversation
    record: CallRecord  # without the cache's figures and the usage, which only a sent call has
    prompts: Prompts = field(repr=False)  # as given, as sent
    caches: tuple[PromptCache, PromptCache] = field(repr=False)
    head: Hashable = field(repr=False)
    request: tuple[Item, ...] = field(default=(), repr=False)  # what the policy was given: the edits' positions

    def commit(self, usage: dict[str, Any] | None = None) -> CallRecord:
        return self.session.commit(self, usage)


class Session:
    """The stored-mode state of one run under ``policy``: counted with ``model``'s meter (None: each
    call's ``model``) and ``calibration``, its cache predicted with ``cache`` (None: the model's
    provider's). Owned by the wrapper a caller holds, so nothing of a run outlives it."""

    def __init__(self, policy: Policy, api: str, model: str | None = None, calibration: Calibration | None = None,
                 cache: str | None = None) -> None:
        self.policy = policy
        self.api = api
        self.model = model
        self.calibration = calibration
        self.cache = cache
        self.records: list[CallRecord] = []  # every committed call's, in order
        self.recalling = False  # a request of the run has held a reference the recall tool follows
        self._given: tuple[Item, ...] = ()  # the caller's history at the last call
        self._sent: tuple[Item, ...] = ()  # what the last call sent: the history the policy is given
        self._head: Hashable = None  # the last call's head (tool definitions, instructions)
        self._logged_head: dict[str, Any] | None = None  # the head the log last wrote
        self._meters: dict[str | None, Meter] = {}
        self._caches: dict[str | None, tuple[PromptCache, PromptCache]] = {}
        self._counts: dict[str | None, tuple[Conversation, Fixed, tuple[_Side, _Side]]] = {}
        self._open: Prompts | None = None  # the prompts of the call prepared last, still the sides' own

    def meter(self, model: str | None) -> Meter:
        """The meter for ``model``, one per model for the run: its per-text cache is the run's."""
        found = self._meters.get(model)
        if found is None:
            calibration = self.calibration if self.calibration and self.calibration.model == model else None
            found = self._meters[model] = Meter(model, calibration)
        return found

    def prepare(self, conversation: Conversation, stream: bool = False) -> Pending:
        """The request to send for the caller's ``conversation`` (its whole history, as given)."""
        items = conversation.items
        restarted = not extends(items, self._given, conversation.grew)  # (the wrapper's reading says it grew)
        given, history = ((), ()) if restarted else (self._given, self._sent)
        request = conversation.grown(history, items[len(given):])  # replay's request, as ``applied`` builds it
        model = self.model or conversation.model
        meter = self.meter(model)
        result = self.policy.apply(request, meter)
        sent = result.conversation
        fixed, sides = self._counting(model, conversation)
        if self._open is not None:  # the sides move on to this call: the last call's prompts keep theirs
            self._open.freeze()
        last_sent = sides[1].prompt.items  # (what the last call prepared sent: most often the last one sent)
        # how many leading items each side is known to share with its last request, by identity: the caller's
        # list grew from the one read last; of the policy's request, grown from what was sent last, the first
        # ``kept`` items are its own (as replay's stored mode knows them)
        base = conversation.grew[0] if conversation.grew is not None else None
        known = (len(base) if base is sides[0].prompt.items else 0,
                 min(result.kept, len(history)) if history is last_sent else 0)
        same = [side.follow(side_items, at_least) for side, side_items, at_least
                in zip(sides, (items, sent.items), known, strict=True)]
        # as replay keys the head: instructions outside the items (Responses') or a system message among them
        instructed = bool(content_text(conversation.instructions))
        has_system = [instructed or side.instruction is not None for side in sides]
        head_tokens = fixed.head(has_system[1])
        head: Hashable = ("head", has_system[0], head_tokens)
        sides[0].prompt.update(items, fixed.head(has_system[0]), head, same[0], again=1)
        sides[1].prompt.update(sent.items, head_tokens, head, same[1], again=1)
        prompts = self._open = Prompts(sides, fixed.tail, (last_sent, same[1]))
        continued = bool(self.records) and not restarted and head == self._head
        prefix = (same[1] if last_sent is self._sent else shared(self._sent, sent.items)) if continued else 0
        record = CallRecord(
            call=len(self.records), api=self.api, model=model, policy=self.policy.name, fired=result.fired,
            items_before=len(items), items_after=len(sent.items), tokens_before=prompts.tokens[0],
            tokens_after=prompts.tokens[1], cached_before=0, cached_after=0, prefix_items=prefix,
            prefix_tokens=sides[1].prompt.offsets[prefix] if continued else 0,
            edits=edits(request, sent, self.policy, result.fired), restarted=restarted and bool(self.records),
            stream=stream)
        return Pending(self, items, len(given), sent, record, prompts, self._cache_for(model), head, request.items)

    def _counting(self, model: str | None, conversation: Conversation) -> tuple[Fixed, tuple[_Side, _Side]]:
        """``model``'s counts of what lies outside the items (measured again only when the request's
        head changes) and its two sides (as given, as sent), each counting only what is new at a
        call: replay's ``Fixed`` and ``GrowingPrompt``."""
        meter = self.meter(model)
        bare = conversation.with_items(())
        found = self._counts.get(model)
        if found is None or found[0] != bare:
            sides = found[2] if found is not None else (_Side(meter), _Side(meter))
            found = self._counts[model] = (bare, Fixed.of(conversation, meter), sides)
        return found[1], found[2]

    def commit(self, pending: Pending, usage: dict[str, Any] | None = None) -> CallRecord:
        """The provider took ``pending``: it is the history the next call grows, its prompts are in
        the provider's cache, and its record gets the cache's figures and the provider's ``usage``."""
        self._given, self._sent, self._head = pending.given, pending.sent.items, pending.head
        if self._open is pending.prompts:  # (the next call's prompts follow on from these: nothing to copy)
            self._open = None
        uses = [cache.use(chain, offsets) for cache, (chain, offsets)
                in zip(pending.caches, pending.prompts.chains(), strict=True)]
        record = replace(pending.record, cached_before=uses[0].read, cached_after=uses[1].read, usage=usage)
        self.records.append(record)
        return record

    def head_to_log(self, head: dict[str, Any]) -> dict[str, Any] | None:
        """``head`` (a request's model, tools, instructions) when the log has not written it since it
        last changed, else None: written once, not at every call."""
        if head == self._logged_head:
            return None
        self._logged_head = head
        return head

    def _cache_for(self, model: str | None) -> tuple[PromptCache, PromptCache]:
        """What each side (as given, as sent) has written to ``model``'s provider's cache so far, one
        pair per model (its price is looked up once: the catalogue takes milliseconds per model); a
        cache model that is another provider's is refused as replay refuses it."""
        found = self._caches.get(model)
        if found is None:
            price = read_prices().get(model)
            kind = self.cache or price.cache
            check_cache(kind, price.cache, price.model)
            found = self._caches[model] = tuple(PromptCache(kind, price.min_cacheable) for _ in range(2))  # type: ignore[assignment]
        return found


class _Side:
    """One side of a run's requests (as given, as sent) followed from call to call: its prompt
    (replay's ``GrowingPrompt``: the cache's chain and the tokens of each prefix, counted only past
    where the request first differs from the last) and where its first instruction is."""

    def __init__(self, meter: Meter) -> None:
        self.prompt = GrowingPrompt(counter((), (), meter))
        self.instruction: int | None = None  # the position of the first system or developer message

    def follow(self, items: tuple[Item, ...], at_least: int = 0) -> int:
        """How many leading items the next request ``items`` shares with the last (the prompt is
        then updated from there; its first ``at_least`` are known to be the last one's); where its
        first instruction is, looked for only past them."""
        same = shared(self.prompt.items, items, at_least)
        if self.instruction is None or self.instruction >= same:
            self.instruction = next((p for p in range(same, len(items)) if is_instruction(items[p])), None)
        return same


class Prompts:
    """One call's two prompts (as given, as sent), as the provider's cache reads them when the call is
    committed: the sides' own chains and offsets while they are this call's — a wrapped call then copies
    nothing the size of the run — and a copy of them once a later call is prepared first (a call that
    failed and is tried again, two calls in flight). ``tokens``: each whole prompt. ``shares``: the
    sent side's last request and how many leading items this one shares with it (``Written`` reads it)."""

    def __init__(self, sides: tuple[_Side, _Side], tail: int, shares: tuple[tuple[Item, ...], int]) -> None:
        self._sides: tuple[_Side, _Side] | None = sides
        self._frozen: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...] = ()
        self.tokens = tuple(side.prompt.offsets[-1] + tail for side in sides)
        self.shares = shares

    def chains(self) -> tuple[tuple[Sequence[int], Sequence[int]], ...]:
        """Each side's chain (the cache's key of each prefix) and offsets (its tokens)."""
        if self._sides is None:
            return self._frozen
        return tuple((side.prompt.chain, side.prompt.offsets) for side in self._sides)

    def freeze(self) -> None:
        """Copy them: the sides are about to follow another call."""
        if self._sides is not None:
            self._frozen = tuple((tuple(chain), tuple(offsets)) for chain, offsets in self.chains())
            self._sides = None
