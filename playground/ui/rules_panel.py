"""The two rule tables, checked live against the conversation, with presets, import and export."""

from __future__ import annotations

import streamlit as st

from .. import exports, formats
from ..errors import InputError
from ..model import Conversation
from ..rules import Rules, load_rules
from ..rulesets import MASK_KEEP_RECENT, RULESETS
from ..ruletable import RowCheck, rules_from_tables
from . import state

_LEVEL_ICON = {"ok": ":green[:material/check_circle:]", "warning": ":orange[:material/warning:]",
               "error": ":red[:material/error:]"}


def current_rules(conversation: Conversation) -> tuple[Rules, list[RowCheck]]:
    calls, results = state.rule_rows()
    return rules_from_tables(calls, results, conversation)


def _apply_ruleset() -> None:
    key = st.session_state["ruleset"]
    state.set_rules(RULESETS[key][1](st.session_state[state.CONVERSATION]))
    if key == "masking" and st.session_state[state.KEEP_RECENT] == 0:
        st.session_state[state.KEEP_RECENT] = MASK_KEEP_RECENT
    state.set_message("rules_import", None)


def _import_rules(text: str | bytes, label: str) -> None:
    try:
        rules = load_rules(formats.parse_json(text))
    except InputError as exc:
        state.set_message("rules_import", f"{label}: {exc}")
        return
    state.set_rules(rules)
    state.set_message("rules_import", None)


def _import_upload() -> None:
    upload = st.session_state.get("rules_upload")
    if upload is not None:
        _import_rules(upload.getvalue(), upload.name)


def _import_paste() -> None:
    _import_rules(st.session_state.get("rules_paste", ""), "pasted rules")
    if state.message("rules_import") is None:
        st.session_state["rules_paste"] = ""


def _checks(checks: list[RowCheck], table: str) -> None:
    lines = [f"{_LEVEL_ICON[c.level]} row {c.row + 1}: {c.message}" for c in checks
             if c.table == table and c.level != "empty"]
    if lines:
        st.markdown("  \n".join(lines))


def panel(checks: list[RowCheck], rules: Rules) -> None:
    st.caption("Rules are keyed on the tool's name. Templates fill `{field}` from the call's arguments "
               "(`{file_path}` falls back to `{path}`, as in the book) and from built-ins: `{tool}`, `{call_id}`, "
               "`{chars}`, `{lines}`, `{tokens}`. Only plain names are allowed. A field the call lacks shows as "
               "`unknown`.")
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    left.selectbox("Start from", list(RULESETS), key="ruleset", format_func=lambda key: RULESETS[key][0],
                   help="Replace both tables with a rule preset built for this conversation's tools.")
    right.button("Use these rules", on_click=_apply_ruleset, width="stretch",
                 help="Replaces both tables. Your edits to the current rules are dropped.")

    st.markdown("**Tool-call rules**: replace one argument of a call once its result is in (e.g. the content "
                "`create_file` wrote).")
    st.data_editor(
        state.get(state.CALL_BASE), key=state.CALL_EDITOR, num_rows="dynamic", width="stretch", hide_index=True,
        column_order=("enabled", "tool", "argument", "replacement", "min_tokens"),
        column_config={
            "enabled": st.column_config.CheckboxColumn("on", help="Apply this rule.", default=True, width="small"),
            "tool": st.column_config.TextColumn("tool", help="The tool name the call uses.", required=True),
            "argument": st.column_config.TextColumn("argument", help="Which argument to replace.", default="content"),
            "replacement": st.column_config.TextColumn("replacement", help="What the argument becomes.",
                                                       width="large"),
            "min_tokens": st.column_config.NumberColumn("min tokens", min_value=0, step=1, default=0,
                                                        help="Leave calls smaller than this many tokens alone."),
        },
    )
    _checks(checks, "tool_calls")
    st.markdown("**Tool-result rules**: replace a result's body with a reference the agent can follow back.")
    st.data_editor(
        state.get(state.RESULT_BASE), key=state.RESULT_EDITOR, num_rows="dynamic", width="stretch",
        hide_index=True, column_order=("enabled", "tool", "template", "min_tokens"),
        column_config={
            "enabled": st.column_config.CheckboxColumn("on", help="Apply this rule.", default=True, width="small"),
            "tool": st.column_config.TextColumn("tool", help="The tool whose results this rule replaces.",
                                                required=True),
            "template": st.column_config.TextColumn("template", help="The reference that replaces the result.",
                                                    width="large"),
            "min_tokens": st.column_config.NumberColumn("min tokens", min_value=0, step=1, default=0,
                                                        help="Leave results smaller than this many tokens alone."),
        },
    )
    _checks(checks, "tool_results")

    with st.expander("Import or export rules"):
        st.file_uploader("Import a rules file (JSON)", type=["json"], key="rules_upload", on_change=_import_upload,
                         help='{"tool_calls": [{"tool", "argument", "replacement"}], "tool_results": '
                              '[{"tool", "template"}]}. It replaces both tables.')
        with st.form("rules_paste_form", border=False):
            st.text_area("…or paste rules JSON", key="rules_paste", height=120,
                         help="Ctrl+Enter, then Import. The book's {tool: text} dicts work too.")
            st.form_submit_button("Import pasted rules", on_click=_import_paste,
                                  help="Check the pasted rules and, if they are valid, replace both tables.")
        if state.message("rules_import"):
            st.error(state.message("rules_import"))
        python = exports.rules_python(rules)
        as_json = exports.rules_json(rules)
        one, two = st.columns(2)
        one.download_button("Download rules (JSON)", as_json.data, as_json.name, as_json.mime, width="stretch",
                            help="The enabled and disabled rules, ready to import again or pass to the CLI.")
        two.download_button("Download rules (Python)", python.data, python.name, python.mime, width="stretch",
                            help="The book's two dicts, ready to paste into an agent.")
        st.caption("Copy as Python (the button at the top right of the box copies it):")
        st.code(python.data, language="python")
