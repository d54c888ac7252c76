"""Conversation in: paste, upload, or build item by item."""

from __future__ import annotations

from typing import Any

import streamlit as st

from .. import formats
from ..conversation import Conversation
from ..errors import InputError
from ..present import literal
from ..workbench import builder
from ..workbench.builder import Fields
from . import state

_FORMAT_OPTIONS = [state.AUTO, *formats.READERS]
# what a corpus reads as a run, and a .zip of a task folder
UPLOAD_TYPES = [*(suffix.lstrip(".") for suffix in formats.RUN_SUFFIXES), "zip"]
PICKER_LIST_LIMIT = 200  # items; a longer conversation picks its item by number


def _format_label(key: str) -> str:
    return "Detect automatically" if key == state.AUTO else formats.TITLES[key]


def _load_paste() -> None:
    text = st.session_state.get(state.PASTE_TEXT, "")
    if not text.strip():
        state.set_message("paste", "pasted JSON: the box is empty — paste a conversation's JSON first")
        return
    if state.load_text(text, "paste", "pasted JSON", f"Your conversation (pasted {state.now()})"):
        st.session_state[state.PASTE_TEXT] = ""  # loaded: keep the big text out of every later rerun


def _load_upload() -> None:
    upload = st.session_state.get(state.UPLOAD)
    if upload is not None:
        state.load_text(upload.getvalue(), "upload", upload.name, f"{upload.name} (uploaded {state.now()})")


def paste_and_upload() -> None:
    st.selectbox("Format", _FORMAT_OPTIONS, key=state.FORMAT_CHOICE, format_func=_format_label,
                 help="Detected from the JSON's shape unless you choose one (an API request, or an agent's log)."
                      " Applies to the next paste or upload.")
    with st.form(state.PASTE_FORM, border=False):
        st.text_area("Paste a conversation (JSON)", key=state.PASTE_TEXT, height=180,
                     placeholder='[{"role": "user", "content": "…"}, …]  or a full request body',
                     help="Chat Completions (a message list or a request body), a Responses request, an Anthropic "
                          "Messages request, or the playground's own format. Ctrl+Enter, then Load.")
        st.form_submit_button("Load pasted JSON", type="primary", on_click=_load_paste,
                              help="Read the pasted JSON. If it is not a valid conversation, the message says where, "
                                   "and the current conversation stays.")
    if state.message("paste"):
        st.error(literal(state.message("paste")), icon=":material/error:")
    limit, problem = state.input_limit()
    if problem:
        st.warning(literal(problem), icon=":material/warning:")
    st.file_uploader("…or upload a file (.json, .jsonl, .traj, .md, .db, or a .zip of a task folder)",
                     type=UPLOAD_TYPES, key=state.UPLOAD, on_change=_load_upload, max_upload_size=limit,
                     help="The same formats as pasting, and the logs agents write to disk: a Claude Code session "
                          "or Codex rollout (.jsonl), a SWE-agent trajectory (.traj) or a mini-SWE-agent one "
                          "(.traj.json), a Gemini CLI session (.json, .jsonl) — docs/formats.md lists them all. A task "
                          f"folder (Cline, OpenHands) uploads as a .zip of it. Up to {limit:,} MB (the input limit).")
    if state.message("upload"):
        st.error(literal(state.message("upload")), icon=":material/error:")


def _apply(operation, *args) -> bool:
    """Run a builder operation on the current conversation; keep it if the result is invalid."""
    try:
        updated = operation(st.session_state[state.CONVERSATION], *args)
        formats.refuse_lone_surrogates_in_arguments(updated)  # "\ud800" typed in the arguments
    except InputError as exc:
        state.set_message("builder", str(exc))
        return False
    state.update_own(updated)
    state.set_message("builder", None)
    return True


def _form_fields(prefix: str) -> Fields:
    def get(field: str, default: Any) -> Any:
        return st.session_state.get(state.field_key(prefix, field), default)

    return Fields(kind=get("kind", None) or "message", role=get("role", "user"), text=get("text", ""),
                  tool=get("tool", ""), call_id=get("call_id", ""), arguments=get("arguments", "{}"),
                  is_error=get("is_error", False))


def _select(position: int | None) -> None:
    """Select an item and load it into the edit form."""
    conversation: Conversation = st.session_state[state.CONVERSATION]
    if not conversation.items:
        st.session_state[state.BUILDER_ITEM] = None
        return
    position = min(max(position or 0, 0), len(conversation.items) - 1)
    st.session_state[state.BUILDER_ITEM] = position
    for name, value in builder.fields_of(conversation.items[position]).__dict__.items():
        st.session_state[state.field_key(state.EDIT_FORM, name)] = value


def _on_pick() -> None:
    _select(st.session_state[state.BUILDER_ITEM])


def _save_item() -> None:
    position = st.session_state[state.BUILDER_ITEM]
    if _apply(builder.replace_item, position, _form_fields(state.EDIT_FORM)):
        _select(position)


_NEW_FORM = {"text": "", "tool": "", "call_id": "", "arguments": "{}", "is_error": False}  # a new item's form, cleared


def _insert_item() -> None:
    """Add the form's item after the selection (a result: after its call) and clear the form."""
    conversation = st.session_state[state.CONVERSATION]
    position = st.session_state.get(state.BUILDER_ITEM) if conversation.items else None
    fields = _form_fields(state.NEW_FORM)
    if fields.kind == "tool_result":
        at = builder.result_insert_position(conversation, position, fields.call_id)
    else:
        at = len(conversation.items) if position is None else position + 1
    if _apply(builder.insert_item, at, fields):
        _select(at)
        st.session_state.update({
            state.field_key(state.NEW_FORM, name): value
            for name, value in _NEW_FORM.items()})


def _add_result(call: int) -> None:
    """One action: the selected call's result, after its turn, paired by id."""
    conversation = st.session_state[state.CONVERSATION]
    try:
        updated, position = builder.add_result(conversation, call, st.session_state.get(state.ANSWER_TEXT, ""),
                                               st.session_state.get(state.ANSWER_IS_ERROR, False))
    except InputError as exc:
        state.set_message("builder", str(exc))
        return
    state.update_own(updated)
    state.set_message("builder", None)
    _select(position)
    st.session_state.update({state.ANSWER_TEXT: "", state.ANSWER_IS_ERROR: False})


def _delete_item() -> None:
    position = st.session_state[state.BUILDER_ITEM]
    if _apply(builder.delete_item, position):
        _select(position - 1)


def _move(offset: int) -> None:
    position = st.session_state[state.BUILDER_ITEM]
    if _apply(builder.move_item, position, offset):
        _select(position + offset)


def _start_empty() -> None:
    state.keep_own(builder.empty(st.session_state[state.NEW_FORMAT], st.session_state[state.MODEL]),
                   f"Built here (started {state.now()})")


def _item_form(prefix: str, conversation: Conversation, position: int | None) -> None:
    """The fields for one item; which ones show depends on its kind."""
    kind = st.session_state.get(state.field_key(prefix, "kind")) or "message"
    if kind == "message":
        st.selectbox("Role", builder.ROLES, key=state.field_key(prefix, "role"), help="Who speaks.")
        st.text_area("Text", key=state.field_key(prefix, "text"), height=140, help="The message's text.")
        return
    one, two = st.columns(2)
    if kind == "tool_call":
        one.text_input("Tool name", key=state.field_key(prefix, "tool"), help="The function the assistant calls.")
        two.text_input("Call id", key=state.field_key(prefix, "call_id"),
                       placeholder="made for you" if prefix == state.NEW_FORM else "",
                       help="Ties the result to this call. Leave it empty on a new call: one is made in this "
                            "format's style (call_… for OpenAI, toolu_… for Anthropic).")
        st.text_area("Arguments (JSON object)", key=state.field_key(prefix, "arguments"), height=140,
                     help='For example {"path": "src/app.py"}. Rule templates read fields from here.')
        return
    calls = builder.answerable_calls(conversation, position)
    if prefix == state.NEW_FORM and calls:
        labels = {call.call_id: f"{call.call_id} · {call.name}" for call in calls}
        choice = one.selectbox("Answers call", list(labels), format_func=labels.get, key=state.NEW_ANSWERS,
                               help="The call this result answers (calls before it that have no result yet).")
        st.session_state[state.field_key(prefix, "call_id")] = choice
        st.session_state[state.field_key(prefix, "tool")] = next(c.name for c in calls if c.call_id == choice)
    else:
        one.text_input("Answers call id", key=state.field_key(prefix, "call_id"),
                       help="The id of the call this result answers.")
    two.checkbox("Error result", key=state.field_key(prefix, "is_error"), disabled=conversation.format not in
                 builder.ERROR_FLAG_FORMATS,
                 help="Marks a failed tool run. Anthropic (is_error) and the native format (status) can record "
                      "it; Chat Completions and Responses cannot.")
    st.text_area("Result text", key=state.field_key(prefix, "text"), height=140, help="What the tool returned.")


def _answer_form(conversation: Conversation, call: int) -> None:
    """The selected call has no result yet: add it in one step."""
    item = conversation.items[call]
    with st.container(border=True):
        st.markdown(f"**Add the result of** {literal(item.name)} (call {literal(item.call_id)})")
        st.text_area("Result text", key=state.ANSWER_TEXT, height=100, help="What the tool returned for this call.")
        left, right = st.columns([1, 2], vertical_alignment="center")
        left.checkbox("Error result", key=state.ANSWER_IS_ERROR,
                      disabled=conversation.format not in builder.ERROR_FLAG_FORMATS,
                      help="Marks a failed tool run (Anthropic and native can record it).")
        right.button("Add this call's result", on_click=_add_result, args=(call,), type="primary", width="stretch",
                     help="Inserts the result after this call's turn, answering it by its id.")


def _label(conversation: Conversation, position: int) -> str:
    return f"#{position} {builder.describe(conversation.items[position])}"


def _item_picker(conversation: Conversation) -> None:
    """A list of every item for a short conversation; a number for a long one (a list of thousands of
    labels, made and sent to the browser on every rerun, slowed every change on the page)."""
    count = len(conversation.items)
    if count <= PICKER_LIST_LIMIT:
        st.selectbox("Item", range(count), format_func=lambda p: _label(conversation, p), key=state.BUILDER_ITEM,
                     on_change=_on_pick, help="Pick an item to edit, move or delete.")
        return
    st.number_input(f"Item (0–{count - 1:,})", min_value=0, max_value=count - 1, step=1, key=state.BUILDER_ITEM,
                    on_change=_on_pick, help="The position of the item to edit, move or delete; the Before / after "
                                             "tab shows every item's position.")
    st.caption(literal(_label(conversation, st.session_state[state.BUILDER_ITEM])))


def build() -> None:
    conversation: Conversation = st.session_state[state.CONVERSATION]
    st.caption("Edit the conversation one item at a time. Every change is checked: a result must follow the "
               "call it answers, and arguments must be a JSON object.")
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    left.selectbox("New conversation in", list(formats.FORMATS), key=state.NEW_FORMAT, format_func=_format_label,
                   help="The format a conversation built from scratch is exported in.")
    right.button("Start empty", on_click=_start_empty, width="stretch",
                 help="Show a new, empty conversation. The one showing now stays in the picker on the left.")
    if conversation.items:
        if st.session_state.get(state.BUILDER_ITEM) is None:
            _select(0)
        _item_picker(conversation)
        position = st.session_state[state.BUILDER_ITEM]
        with st.container(border=True):
            others = builder.non_text_parts(conversation.items[position])
            if others:
                st.caption(f"This item also holds {', '.join(others)} content: it is kept as it is; only the text "
                           "below is edited.")
            _item_form(state.EDIT_FORM, conversation, position)
            save, up, down, delete = st.columns(4)
            save.button("Save item", on_click=_save_item, type="primary", width="stretch",
                        help="Check the item and put it in the conversation.")
            up.button("Move up", on_click=_move, args=(-1,), disabled=position == 0, width="stretch",
                      help="Swap with the item before. A result cannot move above its call.")
            down.button("Move down", on_click=_move, args=(1,), disabled=position >= len(conversation.items) - 1,
                        width="stretch", help="Swap with the item after. A call cannot move below its result.")
            delete.button("Delete", on_click=_delete_item, width="stretch",
                          help="A call with a result must lose its result first.")
        call = builder.call_at(conversation, position)
        if call is not None:
            _answer_form(conversation, call)
    st.markdown("**Add an item** after the selected one (or at the end)")
    with st.container(border=True):
        st.segmented_control("Kind", builder.KINDS, key=state.field_key(state.NEW_FORM, "kind"), default="message",
                             format_func=lambda k: k.replace("_", " "), help="What the new item is.")
        selected = st.session_state.get(state.BUILDER_ITEM) if conversation.items else None
        _item_form(state.NEW_FORM, conversation, selected)
        st.button("Add item", on_click=_insert_item, type="primary", help="Check the item and insert it.")
    if state.message("builder"):
        st.error(literal(state.message("builder")), icon=":material/error:")
