"""The two rule tables, checked live against the conversation, with presets, import and export."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas
import streamlit as st

from .. import formats
from ..conversation import Conversation
from ..engine import Optimized
from ..errors import InputError
from ..export import exports
from ..present import render
from ..rules import (
    CALL_COLUMNS,
    DEFAULT_ERROR_PATTERNS,
    NEW_CALL_ARGUMENT,
    NEW_CALL_REPLACEMENT,
    PATTERN_COLUMNS,
    RESULT_COLUMNS,
    RowCheck,
    Rules,
    load_rules,
    tables_from_rules,
)
from ..tune import MASK_KEEP_RECENT, RULESETS, Suggestion, add_rows, checked_rules, no_match_message, preview
from . import state

PREVIEW_CHARS = 160

_LEVEL_ICON = {"ok": ":green[:material/check_circle:]", "warning": ":orange[:material/warning:]",
               "error": ":red[:material/error:]"}


def current_rules(conversation: Conversation) -> tuple[Rules, list[RowCheck]]:
    rules, checks = state.rules_from(st.session_state, conversation)
    st.session_state[state.PATTERNS_GOOD] = rules.error_patterns
    return rules, checks


def _apply_ruleset() -> None:
    """Both tables from a preset; the error patterns and value cap stay as they are (no preset sets them)."""
    key = st.session_state[state.RULESET]
    state.set_rule_rows(*tables_from_rules(RULESETS[key].make(st.session_state[state.CONVERSATION])))
    state.changed("rules")
    if key == "masking" and st.session_state[state.KEEP_RECENT] == 0:
        st.session_state[state.KEEP_RECENT] = MASK_KEEP_RECENT
    state.set_message("rules_import", None)


def _import_rules(text: str | bytes, label: str) -> None:
    try:
        rules = load_rules(formats.parse_json(text, refuse_surrogates=True))
    except InputError as exc:
        state.set_message("rules_import", f"{label}: {exc}")
        return
    state.set_rules(rules)
    state.changed("rules")
    state.set_message("rules_import", None)


def _import_upload() -> None:
    upload = st.session_state.get(state.RULES_UPLOAD)
    if upload is not None:
        _import_rules(upload.getvalue(), upload.name)


def _import_paste() -> None:
    _import_rules(st.session_state.get(state.RULES_PASTE, ""), "pasted rules")
    if state.message("rules_import") is None:
        st.session_state[state.RULES_PASTE] = ""


def _suggest() -> None:
    conversation = st.session_state[state.CONVERSATION]
    meter = state.engine().meter(st.session_state[state.MODEL])
    st.session_state[state.SUGGESTION] = (conversation, checked_rules(conversation, meter))


def _pending(conversation: Conversation) -> Suggestion | None:
    """The suggestion made for this very conversation (one made for another is dropped)."""
    stored = st.session_state.get(state.SUGGESTION)
    return stored[1] if stored is not None and stored[0] is conversation else None


def _add_suggestion() -> None:
    state.set_rule_rows(*add_rows(*state.rule_rows(), st.session_state.pop(state.SUGGESTION)[1]))
    state.changed("rules")


def _dismiss_suggestion() -> None:
    st.session_state.pop(state.SUGGESTION, None)


def _cut(text: str) -> str:
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def _suggestion_preview(conversation: Conversation, place: str) -> None:
    """The suggested rows with what each would do here, before they are added."""
    suggestion = _pending(conversation)
    if suggestion is None:
        return
    if not suggestion.rows:
        st.info("No tool in this conversation has results or arguments large enough for a rule to save anything.")
    else:
        settings = state.settings(threshold=0)
        shown = preview(conversation, suggestion, settings, state.engine().meter(st.session_state[state.MODEL]))
        st.dataframe([{"table": p.row.table.replace("tool_", ""), "tool": p.row.tool, "kind": p.row.kind,
                       "rule": p.row.rule.get("template") or f"{p.row.rule['argument']} → {p.row.rule['replacement']}",
                       "min tokens": p.row.rule["min_tokens"], "edits": p.edits, "tokens saved": p.saved,
                       "largest item (tokens)": p.largest_tokens, "largest before": _cut(p.before),
                       "largest after": p.after, "why": p.row.explanation}
                      for p in shown], hide_index=True, width="stretch", key=state.suggestion_key("table", place))
        st.caption(f"Each row on its own, with the current keep_recent ({settings.keep_recent}) and error setting; "
                   f"together they would save {sum(p.saved for p in shown):,} tokens. Rows for the same tool replace "
                   "yours; all other rows stay.")
    for note in suggestion.notes:
        st.caption(f"No rule: {note}.")
    add, dismiss = st.columns(2)
    add.button("Add these rows", on_click=_add_suggestion, type="primary", width="stretch",
               disabled=not suggestion.rows, key=state.suggestion_key("add", place),
               help="Add the suggested rows to the rule tables (a row for the same tool is replaced).")
    dismiss.button("Dismiss", on_click=_dismiss_suggestion, width="stretch", key=state.suggestion_key("dismiss", place),
                   help="Close the suggestion; the tables stay as they are.")


def no_match_notice(conversation: Conversation, optimized: Optimized, rules: Rules) -> None:
    """When compaction ran and made no edit, say which tools hold the tokens and offer rules."""
    report = optimized.compaction.report
    if report.stage == "below_threshold":
        return
    sentence = no_match_message(conversation, report, rules)
    if sentence is None:
        return
    with st.container(border=True):
        st.warning(sentence, icon=":material/rule:")
        if _pending(conversation) is None:
            st.button("Suggest rules for this conversation", on_click=_suggest, key=state.SUGGEST_FROM_NOTICE,
                      help="Rules for the tools this conversation uses, from their arguments and sizes; previewed "
                           "before anything is added.")
        _suggestion_preview(conversation, "notice")


def _checks(checks: list[RowCheck], table: str, quiet: bool = False) -> None:
    """Each row's message; ``quiet``: only rows that are wrong or match something (a pattern that
    matches nothing here is normal, eight such lines would be noise)."""
    lines = [f"{_LEVEL_ICON[c.level]} row {c.row + 1}: {render.literal(c.message)}" for c in checks
             if c.table == table and c.level != "empty" and not (quiet and c.level == "ok" and not c.matches)]
    if lines:  # one paragraph, not a line each: the checks sit on the first screen under the tables
        st.caption(" · ".join(lines))


def _empty(columns: tuple[str, ...]) -> pandas.DataFrame:
    """No rows, but every column with its type: an empty list has no columns, and untyped empty
    columns are floats, which a checkbox column refuses."""
    kinds = {"enabled": "bool", "min_tokens": "int64"}
    return pandas.DataFrame({column: pandas.Series(dtype=kinds.get(column, "object")) for column in columns})


def _editor(base: str, editor: str, columns: tuple[str, ...], config: dict[str, Any], what: str | None) -> None:
    """One editable table over its unchanging ``base`` rows, with its column headers even when it
    is empty (an empty list has no columns: Streamlit drew a grey cell nothing could be typed into).

    The table's input changes only when the whole table is replaced (a preset, an import, added
    suggestions), never while a person edits it: an editor's identity is its input, so a new input
    is a new grid, and whatever was typed into the old one while the page reran to draw it was
    dropped. A button that added a row did just that (the edits and the blank row fed back in as
    the input), so rows are added in the table itself, by its last, empty row."""
    rows = state.get(base)
    st.data_editor(rows or _empty(columns), key=editor, num_rows="dynamic", width="stretch",
                   hide_index=True, column_order=columns, column_config=config, on_change=state.changed,
                   args=("rules",))
    if what is not None:  # None: the tables side by side share one hint
        st.caption(f"To add {what}, click the empty row at the bottom of the table; double-click a cell to type, "
                   "Enter to keep it. Tick a row's box to delete it.")


def _reset_patterns() -> None:
    state.set_error_patterns(DEFAULT_ERROR_PATTERNS)
    state.changed("rules")


def _error_patterns(checks: list[RowCheck]) -> None:
    """The error patterns: results they recognise are errors, which no rule replaces."""
    st.markdown("**Error patterns**: a result whose first 2,000 characters match one is an error and stays as it is "
                "(for formats with no error flag, such as Chat Completions and agent logs). Regular expressions, "
                "searched line by line (`^` is a line start).")
    if not st.session_state.get(state.DETECT_ERRORS, True):
        st.caption("Off: *Recognise errors by their text* is unticked in the sidebar's Settings, so only a "
                   "format's own error flag marks an error.")
    _editor(state.PATTERN_BASE, state.PATTERN_EDITOR, PATTERN_COLUMNS, {
        "name": st.column_config.TextColumn("name", help="Shown in the report: error result (matched: name).",
                                            required=True),
        "pattern": st.column_config.TextColumn("pattern", width="large",
                                               help="A Python regular expression (re.MULTILINE)."),
    }, "an error pattern")
    _checks(checks, "error_patterns", quiet=True)
    if not any(c.table == "error_patterns" and (c.level == "error" or c.matches) for c in checks):
        st.caption("No pattern recognises a result here (besides any the format itself flags as errors).")
    st.button("Reset to the default patterns", on_click=_reset_patterns, key=state.RESET_ERROR_PATTERNS,
              help="Put back the patterns the playground ships with (your edits to this table are dropped).")


# The toolbar buttons hidden on the first screen's tables; the one deleting the selected rows stays.
TOOLBARLESS = ("<style>.st-key-rule_tables [data-testid=\"stElementToolbar\"] :is([aria-label=\"Add row\"],"
               "[aria-label=\"Show/hide columns\"],[aria-label=\"Download as CSV\"],[aria-label=\"Search\"],"
               "[aria-label=\"Fullscreen\"]){display:none}</style>")


# What the tables' cell editor needs so that a fast Enter keeps the typed text (the file says why),
# in an element that takes no room: a gap above the tables would push the first screen down.
CELL_EDITOR_ENTER = Path(__file__).resolve().parents[1] / "data" / "cell_editor_enter.js"
_HIDDEN_SCRIPT = ("<style>[data-testid=stElementContainer]:has(#cp-cell-editor-enter){{display:none}}</style>"
                  "<script id=\"cp-cell-editor-enter\">{}</script>")


def tables(checks: list[RowCheck]) -> None:
    """The two rule tables side by side, each with its rows' checks, compact enough to share the
    first screen with the meters and the before / after rows. Their toolbars' search, download, full
    screen and add-row buttons are hidden (five icons per table crowded the first screen): rows are
    added in the table's own empty last row, as the hint under the tables says."""
    st.html(TOOLBARLESS)
    st.html(_HIDDEN_SCRIPT.format(CELL_EDITOR_ENTER.read_text(encoding="utf-8")), unsafe_allow_javascript=True)
    with st.container(key=state.RULE_TABLES):
        calls, results = st.columns(2, gap="medium")
        with calls:
            st.markdown("**Tool-call rules**: an argument, once its result is in")
            _editor(state.CALL_BASE, state.CALL_EDITOR, CALL_COLUMNS, {
                "enabled": st.column_config.CheckboxColumn("on", help="Apply this rule.", default=True,
                                                           width="small"),
                "tool": st.column_config.TextColumn("tool", help="The tool name the call uses.", required=True),
                "argument": st.column_config.TextColumn("argument", help="Which argument to replace.",
                                                        default=NEW_CALL_ARGUMENT),
                "replacement": st.column_config.TextColumn("replacement", help="What the argument becomes.",
                                                           width="large", default=NEW_CALL_REPLACEMENT),
                "min_tokens": st.column_config.NumberColumn("min tokens", min_value=0, step=1, default=0,
                                                            help="Leave calls smaller than this many tokens alone."),
            }, None)
            _checks(checks, "tool_calls")
        with results:
            st.markdown("**Tool-result rules**: a result, by a reference")
            _editor(state.RESULT_BASE, state.RESULT_EDITOR, RESULT_COLUMNS, {
                "enabled": st.column_config.CheckboxColumn("on", help="Apply this rule.", default=True,
                                                           width="small"),
                "tool": st.column_config.TextColumn("tool", help="The tool whose results this rule replaces.",
                                                    required=True),
                "template": st.column_config.TextColumn("template", help="The reference that replaces the result.",
                                                        width="large"),
                "min_tokens": st.column_config.NumberColumn("min tokens", min_value=0, step=1, default=0,
                                                            help="Leave results smaller than this many tokens "
                                                                 "alone."),
            }, None)
            _checks(checks, "tool_results")
        st.caption("Add a rule in the empty last row; to edit, double-click a cell, type, Enter; to delete, tick "
                   "its box.")


def panel(checks: list[RowCheck], rules: Rules) -> None:
    """The Rules tab: start from a rule preset, suggestions, the error patterns, import and export
    (the two tables themselves are on the Before / after tab, beside their effect)."""
    st.caption("Rules are keyed on the tool's name. Templates fill `{field}` from the call's arguments "
               "(`{file_path}` falls back to `{path}`, as in the book) and from built-ins: `{tool}`, `{call_id}`, "
               "`{chars}`, `{lines}`, `{tokens}`. Only plain names are allowed. A field the call lacks shows as "
               "`unknown`.")
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    left.selectbox("Start from", list(RULESETS), key=state.RULESET, format_func=lambda key: RULESETS[key].title,
                   help="Replace both tables with a rule preset built for this conversation's tools.")
    right.button("Use these rules", on_click=_apply_ruleset, width="stretch",
                 help="Replaces both tables. Your edits to the current rules are dropped; the error patterns "
                      "stay.")
    st.button("Suggest rules for this conversation", on_click=_suggest, icon=":material/auto_fix_high:",
              help="A rule for each tool with large results or arguments, classified by its arguments (path, query, "
                   "command, content…) with min_tokens from its sizes, then checked by replaying this run: a row "
                   "whose hidden content the agent used again, for too little saving, is left out and named under "
                   "the rows. You see what each row would do first.")
    _suggestion_preview(st.session_state[state.CONVERSATION], "rules")

    _error_patterns(checks)

    with st.expander("Import or export rules"):
        st.file_uploader("Import a rules file (JSON)", type=["json"], key=state.RULES_UPLOAD, on_change=_import_upload,
                         max_upload_size=state.input_limit()[0],
                         help='{"tool_calls": [{"tool", "argument", "replacement"}], "tool_results": '
                              '[{"tool", "template"}]}. It replaces both tables.')
        with st.form(state.RULES_PASTE_FORM, border=False):
            st.text_area("…or paste rules JSON", key=state.RULES_PASTE, height=120,
                         help="Ctrl+Enter, then Import. The book's {tool: text} dicts work too.")
            st.form_submit_button("Import pasted rules", on_click=_import_paste,
                                  help="Check the pasted rules and, if they are valid, replace both tables.")
        if state.message("rules_import"):
            st.error(render.literal(state.message("rules_import")))
        python = exports.rules_python(rules)
        as_json = exports.rules_json(rules)
        one, two = st.columns(2)
        one.download_button("Download rules (JSON)", as_json.data, as_json.name, as_json.mime, width="stretch",
                            help="The enabled and disabled rules, ready to import again or pass to the CLI.")
        two.download_button("Download rules (Python)", python.data, python.name, python.mime, width="stretch",
                            help="The book's two dicts, ready to paste into an agent.")
        st.caption("Copy as Python (the button at the top right of the box copies it):")
        st.code(python.data, language="python")
