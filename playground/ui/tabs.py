"""The page's tabs: five on top, so the first screen stays calm, three of them holding inner tabs
(each inner tab is still its own ``*_panel.py``). A tab is opened by name — a top tab or an inner
one — by writing the tab widgets' session state before they are drawn (a button callback):
*Next lesson* opens the Lessons tab wherever the learner was."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from . import state

# Top tab -> its inner tabs (none: the tab is one panel), in the order drawn.
LAYOUT: dict[str, tuple[str, ...]] = {
    "Before / after": (),
    "Rules": ("Presets and patterns", "Where the tokens go"),
    "Conversation": ("Bring one in", "Export"),
    "Learn": ("Lessons", "Step-through"),
    "Whole run": ("Run", "What it keeps", "Compare", "Corpus"),
}
INNER_KEYS = {"Rules": state.TAB_RULES, "Conversation": state.TAB_CONVERSATION, "Learn": state.TAB_LEARN,
              "Whole run": state.TAB_RUN}


@dataclass(frozen=True)
class Tab:
    """Where one panel draws, and whether it is the one open (a slow panel runs only then)."""

    place: object  # the tab's container
    open: bool


def path(name: str) -> dict[str, str]:
    """The session values that open the tab called ``name``: its top tab, and its inner tab if it is one."""
    if name in LAYOUT:
        return {state.TAB: name}
    top = next(top for top, inner in LAYOUT.items() if name in inner)
    return {state.TAB: top, INNER_KEYS[top]: name}


def open_tab(name: str) -> None:
    """Open the tab called ``name`` on the next run (call it from a callback, before the tabs are drawn)."""
    st.session_state.update(path(name))


def draw() -> dict[str, Tab]:
    """Every tab, top and inner, by name; an inner tab is open when it and its top tab both are."""
    drawn: dict[str, Tab] = {}
    for (top, inner), place in zip(LAYOUT.items(), st.tabs(list(LAYOUT), key=state.TAB, on_change="rerun"),
                                   strict=True):
        drawn[top] = Tab(place, place.open)
        if inner:
            with place:
                for name, child in zip(inner, st.tabs(list(inner), key=INNER_KEYS[top], on_change="rerun"),
                                       strict=True):
                    drawn[name] = Tab(child, place.open and child.open)
    return drawn
