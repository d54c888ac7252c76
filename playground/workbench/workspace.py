"""A workspace: everything a tuning session on the page holds, as one JSON file to keep or share.

    {"kind": "compaction-playground-workspace", "version": 1,
     "label": "Your conversation (pasted 10:32)",
     "conversation": {"format": "chat", "request": <the request, written in its own format>},
     "rules": {"tool_calls": […], "tool_results": […]},
     "threshold": 5000, "keep_recent": 0, "compact_errors": false, "detect_errors": true,
     "model": "gpt-4o", "calibrations": {"gpt-4o": 1.04},
     "summarization": {"enabled": true, "limit": null, "keep_steps": 3, "item_budget": 600,
                       "transcript_budget": 24000,
                       "prompt": "…", "summarizer": "offline", "base_url": "", "llm_model": "gpt-4o-mini"},
     "replay": {"strategy": "masking", "mode": "stored", "cache": null, "window": 10, "trigger": 100000,
                "keep": 3, "clear_at_least": 0, "prices": {"gpt-4o": {"input": 2.0}},
                "compare": {"mode": "per-call", "cache": "anthropic"}}}

The conversation is kept as its own format writes it (with the format's name) rather than in the
native format, because that is the form that reads back exactly: wire keys we do not model and
every item's location survive. ``limit`` null means "the same as the threshold"; a ``cache`` null
means "the model's own provider's"; ``prices`` holds only the prices typed over the data file's
(US$ per million tokens, per model and field). There is no
field for an API key, so a key can never be saved or shared. Keys this version does not know are
ignored with a note (a newer file opens in an older playground); a bad value is an InputError
naming its place, so the page keeps its last good state.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from .. import formats
from ..conversation import Conversation
from ..errors import InputError
from ..limits import MAX_COUNT, MAX_TOKENS, amount, whole
from ..meter.calibration import load_calibrations
from ..meter.calibration import to_json as calibrations_to_json
from ..meter.factor import Calibration
from ..policies import POLICIES
from ..rules.ruleset import Rules, book_rules, load_rules, rules_to_json
from ..run.prices import DEFAULT_MODEL, PRICE_FIELDS
from ..run.promptcache import CACHE_MODELS
from ..run.replay import MODES
from ..summarize.history import DEFAULT_ITEM_BUDGET, DEFAULT_KEEP_STEPS, DEFAULT_PROMPT, DEFAULT_TRANSCRIPT_BUDGET

KIND = "compaction-playground-workspace"
VERSION = 1
SUMMARIZERS = ("offline", "openai")


@dataclass(frozen=True)
class WorkspaceSummarization:
    """A workspace's summarization section: the page's summarization settings, the summarizer and
    where it is served (never the API key)."""

    enabled: bool = True
    limit: int | None = None  # None: summarize at the compaction threshold
    keep_steps: int = DEFAULT_KEEP_STEPS
    item_budget: int = DEFAULT_ITEM_BUDGET
    transcript_budget: int = DEFAULT_TRANSCRIPT_BUDGET
    prompt: str = DEFAULT_PROMPT
    summarizer: str = "offline"
    base_url: str = ""
    llm_model: str = "gpt-4o-mini"


@dataclass(frozen=True)
class ReplaySettings:
    """The Run and Compare views' settings and the prices typed over the data file's. The Run
    view starts from these defaults, so a new session and an old file agree."""

    policy: str = "rules"
    mode: str = "stored"
    cache: str | None = None  # None: the model's own provider's cache
    window: int = 10
    trigger: int = 100_000
    keep: int = 3
    clear_at_least: int = 0
    prices: Mapping[str, Mapping[str, float]] = field(default_factory=dict)  # model -> field -> US$ per million
    compare_mode: str = "stored"
    compare_cache: str | None = None


@dataclass(frozen=True)
class Workspace:
    conversation: Conversation
    rules: Rules
    threshold: int
    keep_recent: int = 0
    compact_errors: bool = False
    detect_errors: bool = True
    model: str = DEFAULT_MODEL
    summarization: WorkspaceSummarization = WorkspaceSummarization()
    label: str = ""  # which conversation this is, as the page's picker names it
    calibrations: Mapping[str, Calibration] = field(default_factory=dict)  # model -> correction in effect
    replay: ReplaySettings = ReplaySettings()
    notes: tuple[str, ...] = field(default=(), compare=False)  # what reading the file ignored


def to_json(ws: Workspace) -> dict[str, Any]:
    return {
        "kind": KIND,
        "version": VERSION,
        "label": ws.label,
        "conversation": {"format": ws.conversation.format, "request": formats.write(ws.conversation)},
        "rules": rules_to_json(ws.rules),
        "threshold": ws.threshold,
        "keep_recent": ws.keep_recent,
        "compact_errors": ws.compact_errors,
        "detect_errors": ws.detect_errors,
        "model": ws.model,
        "calibrations": calibrations_to_json(ws.calibrations),
        "summarization": {f.name: getattr(ws.summarization, f.name) for f in fields(WorkspaceSummarization)},
        "replay": _replay_to_json(ws.replay),
    }


def _replay_to_json(chosen: ReplaySettings) -> dict[str, Any]:
    plain = ("mode", "cache", "window", "trigger", "keep", "clear_at_least")
    # the policy is saved under "strategy", its older name, so files written before and after read alike
    return {"strategy": chosen.policy, **{name: getattr(chosen, name) for name in plain},
            "prices": {model: dict(typed) for model, typed in chosen.prices.items()},
            "compare": {"mode": chosen.compare_mode, "cache": chosen.compare_cache}}


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


# Every whole number a workspace holds, with its range: the page's own boxes take no more (a
# threshold of 10**400 once overflowed the slider; 10**18 broke the browser's number box).
_RANGES = {"threshold": (0, MAX_TOKENS), "limit": (0, MAX_TOKENS), "item_budget": (20, MAX_TOKENS),
           "transcript_budget": (0, MAX_TOKENS), "trigger": (0, MAX_TOKENS), "clear_at_least": (0, MAX_TOKENS),
           "keep_recent": (0, MAX_COUNT), "keep_steps": (0, MAX_COUNT), "window": (0, MAX_COUNT),
           "keep": (0, MAX_COUNT)}


def _get(data: Mapping[str, Any], key: str, kinds: tuple[type, ...], where: str, default: Any) -> Any:
    """``data[key]`` (``default`` when absent) if it has a type the workspace gives it; a bool is
    not a number here, and every number is within its range (``_RANGES``)."""
    value = data.get(key, default)
    typed = bool in kinds if isinstance(value, bool) else isinstance(value, kinds)
    if not typed:
        names = " or ".join("null" if kind is type(None) else kind.__name__ for kind in kinds)
        raise InputError(f"expected {names}", where=_at(where, key), value=value)
    if isinstance(value, int) and not isinstance(value, bool):
        low, high = _RANGES[key]
        whole(value, _at(where, key), high, low)
    return value


def _unknown(data: Mapping[str, Any], known: set[str], where: str) -> list[str]:
    return [f"ignored the key '{_at(where, key)}', which this version of the playground does not know"
            for key in data if key not in known]


def _object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise InputError("expected an object", where=where, value=value if not isinstance(value, list) else "[…]")
    return value


def _conversation(data: Any, where: str) -> Conversation:
    data = _object(data, where)
    name = _get(data, "format", (str,), where, "")
    if name not in formats.FORMATS:
        raise InputError(f"unknown format (one of {', '.join(formats.FORMATS)})", where=_at(where, "format"),
                         value=name)
    if "request" not in data:
        raise InputError("missing the request", where=_at(where, "request"))
    try:
        return formats.read(data["request"], name)
    except InputError as exc:
        raise exc.within(_at(where, "request")) from None


def _summarization(data: Any, where: str) -> tuple[WorkspaceSummarization, list[str]]:
    data = _object(data, where)
    default = WorkspaceSummarization()
    values = {}
    for spec in fields(WorkspaceSummarization):
        fallback = getattr(default, spec.name)
        kinds = (int, type(None)) if spec.name == "limit" else (type(fallback),)
        values[spec.name] = _get(data, spec.name, kinds, where, fallback)
    if values["summarizer"] not in SUMMARIZERS:
        raise InputError(f"expected one of {', '.join(SUMMARIZERS)}", where=_at(where, "summarizer"),
                         value=values["summarizer"])
    return WorkspaceSummarization(**values), _unknown(data, {f.name for f in fields(WorkspaceSummarization)}, where)


def _choice(data: Mapping[str, Any], key: str, choices: tuple[str, ...], where: str, default: str | None) -> Any:
    """``data[key]``, one of ``choices`` (or null when the default is)."""
    value = data.get(key, default)
    if value not in choices and not (value is None and default is None):
        raise InputError(f"expected one of {', '.join(choices)}", where=_at(where, key), value=value)
    return value


def _prices(data: Any, where: str) -> dict[str, dict[str, float]]:
    """Typed prices: per model, per field, a number of US dollars per million tokens, 0 or more."""
    prices = {}
    for model, entry in _object(data, where).items():
        at = _at(where, model)
        typed = _object(entry, at)
        unknown = [name for name in typed if name not in PRICE_FIELDS]
        if unknown:
            raise InputError(f"unknown price (one of {', '.join(PRICE_FIELDS)})", where=_at(at, unknown[0]),
                             value=typed[unknown[0]])
        prices[model] = {name: amount(value, _at(at, name), what="a price in US$ per million tokens")
                         for name, value in typed.items()}
    return prices


def _replay(data: Any, where: str) -> tuple[ReplaySettings, list[str]]:
    data = _object(data, where)
    default = ReplaySettings()
    compare = _object(data.get("compare", {}), _at(where, "compare"))
    chosen = ReplaySettings(
        policy=_choice(data, "strategy", tuple(POLICIES), where, default.policy),
        mode=_choice(data, "mode", MODES, where, default.mode),
        cache=_choice(data, "cache", CACHE_MODELS, where, None),
        **{name: _get(data, name, (int,), where, getattr(default, name))
           for name in ("window", "trigger", "keep", "clear_at_least")},
        prices=_prices(data.get("prices", {}), _at(where, "prices")),
        compare_mode=_choice(compare, "mode", MODES, _at(where, "compare"), default.compare_mode),
        compare_cache=_choice(compare, "cache", CACHE_MODELS, _at(where, "compare"), None))
    known = {"strategy", "mode", "cache", "window", "trigger", "keep", "clear_at_least", "prices", "compare"}
    return chosen, _unknown(data, known, where) + _unknown(compare, {"mode", "cache"}, _at(where, "compare"))


def from_json(data: Any) -> Workspace:
    """A workspace file's data, checked; errors name the place (``rules, tool_results[0].template``).
    Without rules, the book's."""
    data = _object(data, "the file")
    if data.get("kind") != KIND:
        raise InputError(f"not a workspace file (expected \"kind\": \"{KIND}\")", where="kind",
                         value=data.get("kind"))
    version = data.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= VERSION:
        raise InputError(f"unsupported version (this playground reads version {VERSION})", where="version",
                         value=version)
    conversation = _conversation(data.get("conversation"), "conversation")
    try:
        rules = load_rules(data["rules"]) if "rules" in data else book_rules()
    except InputError as exc:
        raise exc.within("rules") from None
    summarization, notes = _summarization(data.get("summarization", {}), "summarization")
    calibrations = load_calibrations(data["calibrations"], "calibrations") if data.get("calibrations") else {}
    replay, replay_notes = _replay(data.get("replay", {}), "replay")
    scalars = {"threshold": (int, 50_000), "keep_recent": (int, 0), "compact_errors": (bool, False),
               "detect_errors": (bool, True), "model": (str, conversation.model or DEFAULT_MODEL),
               "label": (str, "")}
    values = {key: _get(data, key, (kind,), "", default) for key, (kind, default) in scalars.items()}
    known = {"kind", "version", "conversation", "rules", "summarization", "calibrations", "replay", *scalars}
    return Workspace(conversation=conversation, rules=rules, summarization=summarization, calibrations=calibrations,
                     replay=replay, notes=tuple(_unknown(data, known, "") + notes + replay_notes), **values)


def loads(text: str | bytes, name: str = "workspace") -> Workspace:
    """A workspace file's bytes; errors start with the file's ``name``. A workspace is the page's,
    so a lone surrogate anywhere in it is refused with its place (the page cannot show one)."""
    try:
        ws = from_json(formats.parse_json(text, refuse_surrogates=True))
        formats.refuse_lone_surrogates_in_arguments(ws.conversation)
    except InputError as exc:
        raise exc.within(name) from None
    return ws
