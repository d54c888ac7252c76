"""The Before / after tab's rows: the request as it is beside the request as it will be sent, item
by item, a page at a time; or one call of the run, chosen in the Run tab, with that call's numbers."""

from __future__ import annotations

import streamlit as st

from ..conversation import Conversation
from ..engine import Optimized
from ..present import render, view
from ..run import HiddenUse, known, money
from ..words import plural
from . import state

PAGE_SIZE = 40


def before_after(original: Conversation, optimized: Optimized) -> None:
    done = optimized.summarization
    left, right = st.columns([1, 1])
    changed_only = left.toggle("Changed and skipped only", key=state.CHANGED_ONLY,
                               help="Hide items no rule touched, to see what compaction did and did not do.")
    positions = view.row_positions(optimized.compaction, done, changed_only)
    _, pages = view.page(positions, 1, PAGE_SIZE)
    number = right.number_input(f"Page (of {pages})", min_value=1, max_value=pages, step=1, key=state.PAGE,
                                help=f"{PAGE_SIZE} items per page.") if pages > 1 else 1
    shown, _ = view.page(positions, int(number), PAGE_SIZE)  # only this page's rows are built
    rows = view.rows(original, optimized.compaction, done, shown)
    st.html(render.rows_table(rows, view.largest_tokens(optimized.compaction, done)))


def call_before_after(call: view.CallView, back) -> None:
    """Before / after for one call of the run chosen in the Run tab: its request without the
    policy beside the request as sent, with that call's numbers; ``back`` returns to the whole."""
    info, button = st.columns([3, 1], vertical_alignment="center")
    info.info(f"Showing call {call.number} of {call.calls} (calls 0–{call.calls - 1}, chosen in the Run tab): the "
              f"request that call sent, {len(call.without.items):,} items, without and with the "
              f"{render.literal(call.policy)} policy. The meters above stay on the last request.",
              icon=":material/timeline:")
    button.button("Show the whole conversation", key=state.CALL_VIEW_BACK, on_click=back, type="primary",
                  help="Back to the last request, as compacted with the page's rules.")
    numbers = call.call
    before, after, cached, cost = st.columns(4)
    before.metric("Before", f"{numbers.tokens_without:,}", help="Prompt tokens of this call without the policy.")
    after.metric("After", f"{numbers.tokens_with:,}", delta=_change(numbers.tokens_with - numbers.tokens_without),
                 delta_color="inverse", help="Prompt tokens of this call as sent under the policy.")
    cached.metric("Cached", f"{numbers.cached_with:,}", delta=_change(numbers.cached_with - numbers.cached_without),
                  help="Prompt tokens this call read from the provider's cache, with the policy (the change is "
                       "against no policy).")
    change = known(numbers.cost_with - numbers.cost_without)
    cost.metric("Cost", money(numbers.cost_with),
                delta=None if change is None else _change(change, "{:+.4f}"), delta_color="inverse",
                help="This call's prompt and reply at the Run tab's prices (the change is against no policy).")
    _hidden_used(call)
    left, right = st.columns([1, 1])
    changed_only = left.toggle("Changed only", key=state.CALL_CHANGED_ONLY,
                               help="Hide items the policy left as they were.")
    positions = view.call_positions(call, changed_only)
    _, pages = view.page(positions, 1, PAGE_SIZE)
    number = right.number_input(f"Page (of {pages})", min_value=1, max_value=pages, step=1, key=state.CALL_PAGE,
                                help=f"{PAGE_SIZE} items per page.") if pages > 1 else 1
    shown, _ = view.page(positions, int(number), PAGE_SIZE)
    st.html(render.rows_table(view.call_rows(call, shown), view.call_largest(call)))


def _hidden_used(call: view.CallView) -> None:
    """Flag the items this call's reply used after the policy had hidden them, with the piece used."""
    uses = call.call.hidden_used
    if not uses:
        return
    lines = [_use_line(use) for use in uses[:10]]
    more = f"\n- … and {plural(len(uses) - 10, 'more piece')}" if len(uses) > 10 else ""
    st.warning(f"The agent's reply to this call used {plural(len(uses), 'piece')} of earlier items that this request "
               "had hidden and showed nowhere else:\n" + "\n".join(lines) + more, icon=":material/visibility_off:")


def _use_line(use: HiddenUse) -> str:
    tool = f" ({render.literal(use.tool)})" if use.tool else ""
    where = "behind a reference the agent can follow" if use.retrievable else "lost: no tool call brings it back"
    return f"- item {use.item}{tool}: “{render.literal(use.span[:120])}” — {where}"


def _change(value: float, shape: str = "{:,}") -> str | None:
    """A metric's change, or none when the policy changed nothing (a red "+0.0000" reads as a loss)."""
    return shape.format(value) if round(value, 4) else None
