"""The LLM endpoint the page calls: one Base URL, model and key, shared by summarization (in the
sidebar) and the live probe (drawn under the Run tab when the sidebar does not draw them), and
the one rule for which key may go to which host (``llm.keys``)."""

from __future__ import annotations

import os

import streamlit as st

from ..llm import Endpoint, keys
from . import state

ENDPOINT_WIDGETS = (state.BASE_URL, state.LLM_MODEL, state.API_KEY)


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
