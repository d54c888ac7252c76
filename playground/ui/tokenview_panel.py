"""Token view: any item of the before/after view as the model's tokenizer splits it."""

from __future__ import annotations

import streamlit as st

from ..conversation import Conversation
from ..meter import Meter
from . import item_tokens, state


def panel(original: Conversation, compacted: Conversation, meter: Meter) -> None:
    """Pick an item of the before/after view and see its tokens."""
    if not original.items:
        return
    count = len(original.items)
    position = st.number_input("Item", min_value=0, max_value=count - 1, step=1, key=state.TOKENS_ITEM,
                               help="The item's number, as in the # column of Before / after.")
    item_tokens.draw(original.items[position], compacted.items[position], meter, f"item_{position}")
