"""One policy file: the workspace the page saves (or a rules JSON file) read as the policy an agent runs.

Tuning ends on the page; the agent needs the very policy that was measured there, not a copy typed
by hand, in which a forgotten setting (an error switch, ``keep_recent``, the summarization limit)
silently changes what runs. So the file is read into one frozen value holding the policy's name,
every ``PolicySettings`` the page builds its Run tab's policy from, and the model (with its
calibration and prompt-cache model) the page counted with; ``make`` builds a fresh policy from it
with ``policies.make``, the one constructor Run, Compare and Corpus use. A fresh one, because a
policy holds its caches: they belong to the run (the wrapper that owns it), not to this value.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .. import formats, limits
from ..compaction import Settings
from ..errors import InputError
from ..meter.factor import Calibration
from ..policies import Policy, PolicySettings, make
from ..rules.ruleset import TOP_KEYS, load_rules
from ..run.prices import read_prices
from ..summarize.history import DEFAULT_KEEP_STEPS
from ..workbench import workspace


@dataclass(frozen=True)
class PolicyFile:
    """A policy as a file gives it. ``name``: the policy (``policies.POLICIES``); ``settings``: every
    setting it is built from; ``model``: whose meter counts the requests (None: each call's own
    ``model``); ``calibration``: that model's correction the page counted with; ``cache``: the prompt
    cache model its figures were predicted with (None: the model's provider's); ``mode``: how the
    page replayed it (the wrappers run ``stored`` only); ``source``: the file, for messages."""

    name: str
    settings: PolicySettings
    model: str | None = None
    calibration: Calibration | None = None
    cache: str | None = None
    mode: str = "stored"
    source: str = ""

    def make(self) -> Policy:
        """A new policy with these settings (its caches empty): one per run."""
        return make(self.name, self.settings)

    def with_options(self, **options: Any) -> PolicyFile:
        """This policy with some settings changed by their flat names (``threshold=…``); a name that
        is no option is refused (``PolicySettings.with_options``)."""
        return replace(self, settings=self.settings.with_options(**options))


def load_policy(path: str | Path, limit_mb: int = limits.DEFAULT_MAX_INPUT_MB) -> PolicyFile:
    """The policy in ``path``: a workspace file the page saved (its policy, rules, threshold,
    keep_recent, error switches, summarization, the Run view's policy settings, model, calibration
    and cache), or a rules JSON file (the ``rules`` policy with those rules and the defaults, no
    model). Bad input raises ``InputError`` naming the file and the field."""
    where = str(path)
    try:
        with open(path, "rb") as stream:
            data = limits.read_limited(stream, limit_mb)
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror or exc})", where=where) from None
    try:
        parsed = formats.parse_json(data)
    except InputError as exc:
        raise exc.within(where) from None
    if isinstance(parsed, dict) and "kind" in parsed:
        return _from_workspace(workspace.loads(data, where), where)
    if isinstance(parsed, dict) and set(TOP_KEYS) & set(parsed):
        try:
            rules = load_rules(parsed)
        except InputError as exc:
            raise exc.within(where) from None
        return PolicyFile("rules", PolicySettings(rules=rules, label=Path(path).name), source=where)
    raise InputError(f"neither a workspace (\"kind\": \"{workspace.KIND}\") nor a rules file (an object with "
                     f"{' or '.join(repr(key) for key in TOP_KEYS[:2])})", where=where)


def _from_workspace(ws: workspace.Workspace, where: str) -> PolicyFile:
    """The settings the page's Run tab builds its policy from (``ui.run_setup.policy_settings``),
    read from the workspace instead of the widgets the workspace sets."""
    summary = ws.summarization
    settings = PolicySettings(
        rules=ws.rules, label=ws.label or Path(where).name,
        compaction=Settings(threshold=ws.threshold, keep_recent=ws.keep_recent, compact_errors=ws.compact_errors,
                            detect_errors=ws.detect_errors),
        summarize=summary.enabled, limit=summary.limit if summary.enabled else None,
        keep_steps=summary.keep_steps if summary.enabled else DEFAULT_KEEP_STEPS,
        window=ws.replay.window, trigger=ws.replay.trigger, keep=ws.replay.keep,
        clear_at_least=ws.replay.clear_at_least, context_window=read_prices().get(ws.model).context_window)
    try:
        make(ws.replay.policy, settings)  # a setting the policy refuses fails here, with the file named
    except InputError as exc:
        raise exc.within(where) from None
    return PolicyFile(ws.replay.policy, settings, ws.model, ws.calibrations.get(ws.model), ws.replay.cache,
                      ws.replay.mode, where)
