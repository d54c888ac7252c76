"""The LLM endpoint the page calls: one Base URL, model and key, shared by summarization (in the
sidebar) and the live model the page asks — the Run tab's probe and *What it keeps*' questions
(drawn there when the sidebar does not draw them) — and the one rule for which key may go to which
host (``llm.keys``). What both askers share lives here too, so they send alike: the provider (its
wire format and key rule), the endpoint with the key that rule gives, the sender, the token budget
and the send button's words."""

from __future__ import annotations

import os

import streamlit as st

from .. import probe
from ..limits import MAX_TOKENS
from ..llm import Endpoint, keys
from ..llm.anthropic import ANTHROPIC_URL, AnthropicClient
from ..llm.openai_compatible import OpenAIClient
from ..present import literal
from ..run import money
from . import state

ENDPOINT_WIDGETS = (state.BASE_URL, state.LLM_MODEL, state.API_KEY)
PROVIDER_TITLES = {"openai": "OpenAI-compatible (Chat Completions)", "anthropic": "Anthropic (Messages API)"}


def _secrets() -> dict[str, str]:
    """The two settings an operator may keep in st.secrets, as plain strings."""
    try:
        return {name: str(st.secrets[name]) for name in (keys.KEY_NAME, keys.HOSTS_NAME) if name in st.secrets}
    except Exception:  # no secrets file at all: Streamlit raises rather than returning nothing
        return {}


def key_choice(provider: str = "openai") -> keys.KeyChoice:
    """The key for the Base URL shown: a typed one, or the operator's only for allowed hosts."""
    return keys.resolve_key(st.session_state[state.BASE_URL], st.session_state.get(state.API_KEY), os.environ,
                            _secrets(), provider)


def endpoint() -> Endpoint:
    return Endpoint(model=st.session_state[state.LLM_MODEL].strip(),
                    base_url=st.session_state[state.BASE_URL].strip() or None, api_key=key_choice().key)


def endpoint_fields(provider: str = "openai") -> None:
    """Base URL, model and key: drawn in the sidebar for summarization, or by the live probe when
    the sidebar does not draw them (the same widgets, so both use one endpoint)."""
    own = keys.PROVIDER_KEYS[provider][1]
    placeholder = f"https://{own}" + ("/v1" if provider == "openai" else "")
    st.text_input("Base URL", key=state.BASE_URL, placeholder=placeholder,
                  help=f"Leave empty for {own}. Ollama: http://localhost:11434/v1; LM Studio: "
                       "http://localhost:1234/v1; vLLM: http://localhost:8000/v1.")
    st.text_input("Model", key=state.LLM_MODEL, help="The model name the endpoint serves.")
    st.text_input("API key", key=state.API_KEY, type="password",
                  help=f"Kept in this browser session only; never logged, exported or shown. A key the operator "
                       f"configured is used only for {own} and hosts the operator allows; any other "
                       "Base URL gets a key only if you type one here.")
    st.caption(f"Key: {key_choice(provider).label}.")


def endpoint_drawn() -> bool:
    """Whether the sidebar drew the endpoint fields in this run (summarization on, with an endpoint)."""
    return state.BASE_URL in st.session_state.get(state.SUMMARY_DRAWN, ())


def draw_endpoint_elsewhere(provider: str) -> None:
    """Draw the endpoint fields outside the sidebar and record them as drawn, so the next run keeps
    what was typed there (see ``summary_settings.init``)."""
    endpoint_fields(provider)
    st.session_state[state.SUMMARY_DRAWN] = (*st.session_state.get(state.SUMMARY_DRAWN, ()), *ENDPOINT_WIDGETS)


def live_endpoint(provider: str) -> Endpoint:
    """The shared endpoint settings, with the key the one rule gives this provider at this host.
    No retries: a failed request is reported where it failed, and the rest go on."""
    base_url = st.session_state[state.BASE_URL].strip() or (ANTHROPIC_URL if provider == "anthropic" else None)
    return Endpoint(model=st.session_state[state.LLM_MODEL].strip(), base_url=base_url,
                    api_key=key_choice(provider).key, max_retries=0)


def sender(provider: str, endpoint: Endpoint) -> probe.Send:
    """What sends one request body in ``provider``'s wire format and reads the reply's next step."""
    if provider == "anthropic":
        client = AnthropicClient(endpoint)
        return lambda body, size: probe.messages_action(client.send(body, size))
    chat = OpenAIClient(endpoint)
    return lambda body, size: probe.chat_action(chat.send(body, size))


def provider_choice() -> str:
    """The provider both askers send to (one widget, so the probe and the questions agree)."""
    state.start(state.PROBE_PROVIDER, "openai")
    return st.radio("Provider", list(PROVIDER_TITLES), key=state.PROBE_PROVIDER, format_func=PROVIDER_TITLES.get,
                    horizontal=True, help="The wire format the requests are sent in (converted from the "
                                          "conversation's own when it differs) and whose key rule applies.")


def budget(place) -> int | None:
    """The token budget both askers keep to, drawn in ``place``; None when there is none."""
    state.start(state.PROBE_BUDGET, 0)
    place.number_input("Token budget (0: none)", min_value=0, max_value=MAX_TOKENS, step=10_000,
                       key=state.PROBE_BUDGET, help="Send no more than this many prompt tokens in all; what does "
                                                    "not fit is left out.")
    return int(st.session_state[state.PROBE_BUDGET]) or None


def endpoint_shown(provider: str) -> Endpoint:
    """Where the requests go: a line naming it when the sidebar draws the fields, else the fields."""
    if endpoint_drawn():
        where = live_endpoint(provider)
        st.caption(literal(f"Endpoint: {where.model} at {where.where} (set under Summarization in the "
                           f"sidebar's Settings). Key: {key_choice(provider).label}."))
    else:
        draw_endpoint_elsewhere(provider)
    return live_endpoint(provider)


def send_label(requests: int, tokens: int, cost: float, endpoint: Endpoint) -> str:
    """The send button's words: the estimate it confirms."""
    return literal(f"Send {requests:,} requests ({tokens:,} prompt tokens, at most {money(cost)}) to "
                   f"{endpoint.model or 'the model'}")
