"""Calibration from real usage: what the provider billed for a request, beside our count.

Our meters are estimates for Anthropic and Responses (and for Chat where OpenAI publishes no
rule). A person who has the ``usage`` object a provider returned for a request can paste it; the
ratio billed / counted over one or more such requests is a per-model correction factor
(``Calibration``) that the engine applies to every count for that model, with a note saying so.

``usage`` shapes understood (a whole response object holding ``usage`` is unwrapped):
- Chat Completions: ``prompt_tokens``;
- Responses: ``input_tokens``;
- Anthropic Messages: ``input_tokens + cache_creation_input_tokens + cache_read_input_tokens``
  (cached tokens are still input tokens the request held).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import formats
from ..conversation import Conversation
from ..errors import InputError
from .factor import Calibration
from .tokens import Meter

_ANTHROPIC_CACHE = ("cache_creation_input_tokens", "cache_read_input_tokens")
FACTOR_RANGE = (0.2, 5.0)  # outside this the usage surely belongs to another request


def billed_tokens(usage: Any, where: str = "usage") -> int:
    """The input tokens a provider billed, from its ``usage`` object (or a response holding one)."""
    if isinstance(usage, Mapping) and isinstance(usage.get("usage"), Mapping):
        usage, where = usage["usage"], f"{where}.usage"
    if not isinstance(usage, Mapping):
        raise InputError("expected a usage object (from the provider's response)", where=where, value=usage)
    if "prompt_tokens" in usage:
        return _count(usage, "prompt_tokens", where)
    if "input_tokens" in usage:
        return _count(usage, "input_tokens", where) + sum(_count(usage, key, where) for key in _ANTHROPIC_CACHE
                                                           if usage.get(key) is not None)
    raise InputError("usage has no prompt_tokens (Chat) or input_tokens (Responses, Anthropic)", where=where)


def _count(usage: Mapping[str, Any], key: str, where: str) -> int:
    value = usage[key]
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InputError("expected a whole number of tokens", where=f"{where}.{key}", value=value)
    return value


@dataclass(frozen=True)
class Comparison:
    """Our count of one request beside what the provider billed for it."""

    model: str
    counted: int
    billed: int

    @property
    def difference(self) -> int:
        return self.counted - self.billed

    @property
    def factor(self) -> float:
        return self.billed / self.counted if self.counted else 1.0


def compare(conversation: Conversation, usage: Any, model: str | None = None, where: str = "usage") -> Comparison:
    """Count ``conversation`` uncalibrated (a fresh meter) and set it beside the billed count."""
    name = model or conversation.model or ""
    return Comparison(name, Meter(name).count(conversation).total, billed_tokens(usage, where))


def calibrate(comparisons: Sequence[Comparison]) -> dict[str, Calibration]:
    """One calibration per model: billed / counted over all its requests (sums, so large
    requests, where the threshold matters, weigh most)."""
    groups: dict[str, list[Comparison]] = defaultdict(list)
    for comparison in comparisons:
        groups[comparison.model].append(comparison)
    result = {}
    for model, group in groups.items():
        counted = sum(c.counted for c in group)
        factor = sum(c.billed for c in group) / counted if counted else 1.0
        result[model] = Calibration(model, _checked(factor, model), len(group))
    return result


def _checked(factor: Any, where: str) -> float:
    low, high = FACTOR_RANGE
    if isinstance(factor, bool) or not isinstance(factor, int | float):  # nan, inf and 10**400: out of range below
        raise InputError("expected a number", where=where, value=factor)
    if not low <= factor <= high:
        raise InputError(f"correction factor must be between {low} and {high} (is this usage from the same "
                         "request?)", where=where, value=round(factor, 3))
    return float(factor)


def load_calibrations(data: Any, where: str = "calibration") -> dict[str, Calibration]:
    """Calibrations from JSON: a list of ``{"request": …, "usage": …}`` pairs (counted here), or
    ``{model: factor}``, a factor being a number or, for one fitted on an agent's log (``to_json``),
    ``{"factor", "offset", "source", "samples"}``."""
    if isinstance(data, Mapping):
        return {str(model): _entry(str(model), value, f"{where}.{model}") for model, value in data.items()}
    if not isinstance(data, list) or not data:
        raise InputError("expected a list of {request, usage} pairs or an object {model: factor}", where=where)
    return calibrate(_pairs(data, where))


def _entry(model: str, value: Any, where: str) -> Calibration:
    if not isinstance(value, Mapping):
        return Calibration(model, _checked(value, where))
    offset, samples, source = value.get("offset", 0), value.get("samples", 0), value.get("source", "")
    for key, number in (("offset", offset), ("samples", samples)):
        if isinstance(number, bool) or not isinstance(number, int) or not 0 <= number <= 10_000_000:
            raise InputError("expected a whole number from 0 to 10,000,000", where=f"{where}.{key}", value=number)
    if not isinstance(source, str) or (offset and not source):
        raise InputError("expected the agent whose logs the offset is for (e.g. claude-code)", where=f"{where}.source",
                         value=source)
    return Calibration(model, _checked(value.get("factor"), f"{where}.factor"), samples, offset, source)


def _pairs(data: list, where: str) -> list[Comparison]:
    """Each ``{request, usage}`` pair: the request counted here, beside its billed count."""
    comparisons = []
    for index, pair in enumerate(data):
        place = f"{where}[{index}]"
        if not isinstance(pair, Mapping) or "request" not in pair or "usage" not in pair:
            raise InputError("expected an object with 'request' and 'usage'", where=place)
        try:
            request = formats.read(pair["request"])
        except InputError as error:
            raise error.within(f"{place}.request") from None
        comparisons.append(compare(request, pair["usage"], pair.get("model"), f"{place}.usage"))
    return comparisons


@dataclass(frozen=True)
class Pasted:
    """What a person pasted: each request beside its bill, and the factors they give."""

    comparisons: tuple[Comparison, ...]
    calibrations: Mapping[str, Calibration]


def read_pasted(text: str, conversation: Conversation, model: str | None = None) -> Pasted:
    """A pasted ``usage`` object (or a whole response) for ``conversation`` as it is now, or a JSON
    list of ``{request, usage}`` pairs; either way our counts beside the billed ones."""
    try:  # the playground's JSON reader: a number too long or nesting too deep is a message, not a crash
        data = formats.parse_json(text)
    except InputError as error:
        raise error.within("pasted usage") from None
    if isinstance(data, list):
        comparisons = _pairs(data, "pasted usage")
    else:
        comparisons = [compare(conversation, data, model, "pasted usage")]
    return Pasted(tuple(comparisons), calibrate(comparisons))


def to_json(calibrations: Mapping[str, Calibration]) -> dict[str, Any]:
    """The ``{model: factor}`` form, for a saved workspace or a file ``--calibration`` reads; a
    calibration with an offset keeps it (and its agent) as ``{"factor", "offset", "source", "samples"}``."""
    return {model: calibration.factor if not calibration.offset else {
        "factor": calibration.factor, "offset": calibration.offset, "source": calibration.source,
        "samples": calibration.samples} for model, calibration in calibrations.items()}
