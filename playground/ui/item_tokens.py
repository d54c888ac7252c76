"""One item's tokens as the model's tokenizer splits them, before and after compaction: drawn by
Before / after's token view and by Step-through for the item the pass stands on."""

from __future__ import annotations

import streamlit as st

from ..conversation import Item, ToolCall
from ..meter import Meter
from ..present import tokenview
from . import state


def _tokens(text: str, meter: Meter, key: str, label: str) -> None:
    """One text's tokens: the first part, and a button that shows more."""
    limit_key = state.tokens_key("limit", key)
    limit = st.session_state.get(limit_key, tokenview.DEFAULT_LIMIT)
    view = tokenview.token_spans(text, meter, limit)
    shown = f"the first {len(view.spans):,} shown" if view.truncated else "all shown"
    st.caption(f"{label}: **{view.total:,} tokens** ({view.encoding}; {shown}).")
    st.html(tokenview.STYLE + tokenview.spans_html(view))
    if view.truncated and limit < tokenview.CAP:
        st.button(f"Show {tokenview.MORE:,} more tokens", key=state.tokens_key("more", key),
                  on_click=lambda: st.session_state.update({limit_key: limit + tokenview.MORE}))
    elif view.truncated:
        st.caption(f"Drawing stops at {tokenview.CAP:,} tokens: more would take seconds to render.")


def draw(before: Item, after: Item, meter: Meter, key: str) -> None:
    """An item's text before and after compaction, side by side (one column when unchanged)."""
    old, new = tokenview.measured_text(before), tokenview.measured_text(after)
    what = "the call's arguments" if isinstance(before, ToolCall) else "the content"
    st.caption(f"Drawn: {what}, as the model's tokenizer splits it. The few tokens each item adds for its role, "
               "tool name and framing are counted on the meters but not drawn here.")
    if old == new:
        _tokens(old, meter, f"{key}_same", "Unchanged")
        return
    left, right = st.columns(2)
    with left:
        _tokens(old, meter, f"{key}_before", "Before")
    with right:
        _tokens(new, meter, f"{key}_after", "After")
