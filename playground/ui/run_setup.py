"""What the Run, Compare and Corpus tabs (and Before / after's chosen call) replay, read from the
page's widgets: the prices (the catalogue's, or the person's typed ones), the page's one
``PolicySettings``, the chosen policy and its run. Panels share these through this module, so
no panel calls another; nothing here draws."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from .. import run
from ..compaction import Settings
from ..conversation import Conversation
from ..policies import Policy, PolicySettings, make
from ..present import CallView, call_view
from ..rules import Rules
from ..run import CATALOGUE, FULL, PRICE_FIELDS, Price, Progress, Replay, cache_models, call_starts, read_prices
from ..summarize import DEFAULT_KEEP_STEPS, SummarySettings
from ..workbench.workspace import ReplaySettings
from . import state

LIGHT_RUN = 200  # calls: runs up to this long redraw the extra replays on every change without a wait
_START = ReplaySettings()  # a new session starts where a workspace without these settings opens
DEFAULTS = {state.REPLAY_POLICY: _START.policy, state.REPLAY_MODE: _START.mode, state.REPLAY_WINDOW: _START.window,
            state.REPLAY_TRIGGER: _START.trigger, state.REPLAY_KEEP: _START.keep,
            state.REPLAY_CLEAR_AT_LEAST: _START.clear_at_least}


def price(model: str, when: str | None = None) -> Price:
    """The model's prices from the catalogue on the log's date ``when`` (None: today's), with any the
    person typed in the Run view (a box left empty keeps the catalogue's, or an unknown price)."""
    listed = read_prices().dated(when).get(model)
    edits = {name: float(st.session_state[state.price_key(name, model)]) for name in PRICE_FIELDS
             if st.session_state.get(state.price_key(name, model)) is not None}
    if not edits or all(getattr(listed, name) == value for name, value in edits.items()):
        return listed
    typed = replace(listed, **edits, long_from=None, long_rates=None)  # the person's prices, at every length
    if not typed.known:
        return typed
    was = listed.source if listed.known else f"the catalogue ({CATALOGUE}) does not list {model}"
    return replace(typed, source=f"your prices; {was}", priced_as=typed.priced_as or model)


def policy_settings(rules: Rules, settings: Settings, summary: SummarySettings | None,
                    model: str | None = None) -> PolicySettings:
    """Every policy's settings as the page holds them, as one value (each policy takes the ones it
    has): the rules, the compaction settings (threshold, keep_recent, the error switches) and
    summarization from the page, the rest from the Run view's controls, and ``model``'s context
    window (some agents' triggers are a part of it). Run, Compare and Corpus all build from it."""
    get = st.session_state.get
    limit, keep_steps = (summary.limit, summary.keep_steps) if summary else (settings.threshold, DEFAULT_KEEP_STEPS)
    return PolicySettings(rules=rules, label="the page's rules", compaction=settings, summarize=summary is not None,
                          limit=limit, keep_steps=keep_steps,
                          window=get(state.REPLAY_WINDOW, DEFAULTS[state.REPLAY_WINDOW]),
                          trigger=get(state.REPLAY_TRIGGER, DEFAULTS[state.REPLAY_TRIGGER]),
                          keep=get(state.REPLAY_KEEP, DEFAULTS[state.REPLAY_KEEP]),
                          clear_at_least=get(state.REPLAY_CLEAR_AT_LEAST, DEFAULTS[state.REPLAY_CLEAR_AT_LEAST]),
                          context_window=price(model).context_window if model else None)


def chosen_policy(rules: Rules, settings: Settings, summary: SummarySettings | None,
                  model: str) -> tuple[Policy, PolicySettings]:
    """The Run view's policy, made from the page's settings (and those settings)."""
    options = policy_settings(rules, settings, summary, model)
    return make(st.session_state.get(state.REPLAY_POLICY, DEFAULTS[state.REPLAY_POLICY]), options), options


def follow_cache(key: str, model: str) -> tuple[str, ...]:
    """The cache models that fit ``model`` (``promptcache.cache_models``: its provider's, or none).
    The one chosen follows the model's provider (a gpt-5 run is cached as OpenAI caches, a Claude
    log as Anthropic does) unless the person, or their workspace, chose one for this conversation;
    a choice that no longer fits the model goes back to its provider's. Loading another
    conversation lets it follow again (``state.set_conversation``)."""
    options = cache_models(read_prices().get(model).cache)
    chosen = st.session_state.get(key)
    if (state.origin(key) is None or chosen not in options) and chosen != options[0]:
        st.session_state[key] = options[0]
    return options


def replayed(conversation: Conversation, policy: Policy, model: str, until: int | None = None,
             baseline: str = "auto", progress: Progress | None = None) -> Replay:
    """The run as the Run view's controls set it (the defaults while the view has not been drawn),
    telling ``progress`` how far it got."""
    state.start(state.REPLAY_MODE, DEFAULTS[state.REPLAY_MODE])
    follow_cache(state.REPLAY_CACHE, model)
    return run.replay(conversation, policy, state.engine().meter(model), price(model, conversation.started),
                      mode=st.session_state[state.REPLAY_MODE], cache=st.session_state[state.REPLAY_CACHE],
                      until=until, baseline=baseline, progress=progress)


def chosen_call(conversation: Conversation, rules: Rules, settings: Settings, summary: SummarySettings | None,
                model: str) -> CallView | None:
    """The call chosen with the Run view's slider, replayed only up to it; None when none is chosen
    (then Before / after shows the whole conversation and nothing is replayed)."""
    if not st.session_state.get(state.REPLAY_CALL_SHOWN):
        return None
    calls = len(call_starts(conversation.items))
    if not calls:
        return None
    number = min(int(st.session_state.get(state.REPLAY_CALL, calls - 1)), calls - 1)
    policy, _ = chosen_policy(rules, settings, summary, model)
    up_to = replayed(conversation, policy, model, until=number + 1, baseline=FULL)  # the table holds the log's items
    return call_view(conversation, up_to, calls, state.engine().meter(model))


def show_whole() -> None:
    """Back to the whole conversation in Before / after."""
    st.session_state[state.REPLAY_CALL_SHOWN] = False


def show_call() -> None:
    """Before / after shows the call the Run view's slider chose."""
    st.session_state[state.REPLAY_CALL_SHOWN] = True
