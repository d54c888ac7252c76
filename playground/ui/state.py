"""Session state: the user's conversation, rules and settings, kept across reruns.

Everything that replaces the conversation or the rule tables happens in widget callbacks, which
run before the page is drawn, so widgets can be given new values safely. A failed load leaves
the last good conversation in place and records a message for the input it came from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import streamlit as st

from .. import formats, limits
from ..compaction import Settings
from ..conversation import Conversation
from ..engine import Engine
from ..errors import InputError
from ..present import threshold_range
from ..rules import (
    ErrorPatterns,
    RowCheck,
    Rules,
    edited_rows,
    error_patterns_from_rows,
    rules_from_tables,
    tables_from_rules,
)
from ..run import DEFAULT_MODEL, infer, model_for, read_prices
from ..workbench import defaults, presets

CONVERSATION = "conversation"
SOURCE = "source"
PRESET = "preset"
MODEL = "model"
THRESHOLD = "threshold"
THRESHOLD_SLIDER = "threshold_slider"
KEEP_RECENT = "keep_recent"
COMPACT_ERRORS = "compact_errors"
DETECT_ERRORS = "detect_errors"  # recognise error results by pattern (core's switch); saved in workspaces
CALL_BASE, RESULT_BASE = "call_rules_base", "result_rules_base"
CALL_EDITOR, RESULT_EDITOR = "call_rules_editor", "result_rules_editor"
# The error-pattern table (base rows + its editor's edits, like the rule tables), the patterns last
# in effect (kept while a row is wrong), and the rules' cap on {field} values: all part of the rules.
PATTERN_BASE, PATTERN_EDITOR, PATTERNS_GOOD = "error_patterns_base", "error_patterns_editor", "error_patterns_good"
VALUE_LIMIT = "value_limit"
MESSAGES = "messages"  # input name -> error text, shown next to that input
LOADERS = ("paste", "upload")  # the inputs a conversation is loaded from (their messages' names)
FORMAT_CHOICE = "format_choice"
BUILDER_ITEM = "builder_item"
AUTO = "auto"
ENGINE = "engine"
OWN = "own_conversations"  # picker key -> OwnConversation, newest last
OWN_PREFIX = "own:"
EXPORT_FORMAT, EXPORT_NOTES = "export_format", "export_notes"
AGENT_TARGET = "agent_target"  # the Export tab's *Use it in your agent*: a client to wrap, or the native settings
# The native settings' gap: the button that replays each emulation beside the tuned policy, and its
# result, kept for the exact inputs it was made for.
NATIVE_RUN, NATIVE_GAP = "native_run", "native_gap"
ORIGINS = "setting_origins"  # setting (defaults.SETTINGS, or a cache select's key) -> where its value came from
REPLAY_CACHE, COMPARE_CACHE = "replay_cache", "compare_cache"  # the Run and Compare views' prompt-cache models
# The Run tab's chosen call (its slider), and whether Before / after shows it: a call of one
# conversation, so both are forgotten when another conversation shows (``set_conversation``).
REPLAY_CALL, REPLAY_CALL_SHOWN = "replay_call", "replay_call_shown"
CACHE_CHOICES = (REPLAY_CACHE, COMPARE_CACHE)  # follow the model's provider until the person picks one
LESSON = "lesson_active"  # the lesson being taken (its key), or absent; loading another conversation ends it
# The open tab (a label of ``tabs.LAYOUT``), and the open inner tab of each tab that holds some: the
# page writes them to open a tab (*Next lesson*), so they are state, not only widgets.
TAB = "tab"
TAB_RULES, TAB_CONVERSATION, TAB_LEARN, TAB_RUN = "tab_rules", "tab_conversation", "tab_learn", "tab_run"
MAX_OWN = 8  # the oldest of the person's own conversations goes when a ninth arrives

# The Run tab: the policy and its own controls (their starting values: ``run_setup.DEFAULTS``),
# whether the cost-against-threshold sweep is drawn, and the typed prices (``price_key``).
REPLAY_POLICY, REPLAY_MODE, REPLAY_SWEEP = "replay_policy", "replay_mode", "replay_sweep"
REPLAY_WINDOW, REPLAY_TRIGGER, REPLAY_KEEP = "replay_window", "replay_trigger", "replay_keep"
REPLAY_CLEAR_AT_LEAST = "replay_clear_at_least"
REPLAY_RECALL = "replay_recall"  # charge each hidden-then-used call a recall round trip (replay --recall)
REPLAY_CALL_WHOLE = "replay_call_whole_run"  # the button that sends Before / after back to the whole conversation
PRICE_PREFIX = "replay_price_"
# The Compare tab: its mode, whether it replays, and the agents' own compactions chosen beside ours.
COMPARE_MODE, COMPARE_SHOW, COMPARE_THEIRS = "compare_mode", "compare_show", "compare_theirs"
# The live probe under the Run tab, and its last result (kept for the plan it was made for).
PROBE_ON, PROBE_PROVIDER, PROBE_CALLS = "probe_on", "probe_provider", "probe_calls"
PROBE_BUDGET, PROBE_RESULT = "probe_budget", "probe_result"
# What it keeps' *Ask the model*: its switch, how many questions, the judge, and the last answers (kept for
# the inputs they were asked with). The provider, budget and endpoint are the probe's.
ASK_ON, ASK_QUESTIONS, ASK_JUDGE, ASK_RESULT = "ask_on", "ask_questions", "ask_judge", "ask_result"
# The log's own bills: the fit kept per log, and the button that calibrates from it.
BILLED_FIT, BILLED_CALIBRATE = "billed_fit", "billed_calibrate"
# Calibration from pasted usage: the pasted text, the apply switch, the last reading (kept per text).
CALIBRATION_PASTE, CALIBRATION_APPLY, CALIBRATION_LAST = "calibration_paste", "calibration_apply", "calibration_last"
# Summarization's widgets (kept across reruns by ``summary_settings``), its LLM endpoint's, and
# the LLM summaries made so far (by input).
SUMMARIZE_ON, LIMIT_FOLLOWS, SUMMARY_LIMIT = "summarize_on", "limit_follows_threshold", "summarize_over"
KEEP_STEPS, SUMMARIZER = "keep_steps", "summarizer"
BASE_URL, LLM_MODEL, API_KEY = "base_url", "llm_model", "api_key"
SUMMARY_PROMPT, ITEM_BUDGET, TRANSCRIPT_BUDGET = "summary_prompt", "item_budget", "transcript_budget"
LLM_SUMMARIES = "llm_summaries"
SUMMARY_KEPT, SUMMARY_DRAWN, SUMMARY_RAISED = "summary_settings_kept", "summary_widgets_drawn", "summary_limit_raised"
# The Corpus tab: the upload, the policies, the table (its selection), what the last evaluation gave.
CORPUS_UPLOAD, CORPUS_POLICIES, CORPUS_TABLE = "corpus_upload", "corpus_policies", "corpus_table"
CORPUS_RESULT, CORPUS_SOURCES, CORPUS_TUNED = "corpus_result", "corpus_sources", "corpus_tuned"
CORPUS_MESSAGE = "corpus_message"
WORKSPACE_UPLOAD = "workspace_upload"
# Step-through: the step shown, the jump-to-item select, and its buttons.
STEP, STEP_JUMP = "step_index", "step_jump"
STEP_BACK, STEP_FORWARD, STEP_NEXT_EDIT, STEP_RESET = "step_back", "step_forward", "step_next_edit", "step_reset"
TOKENS_ITEM = "tokens_item"  # the item whose tokens are drawn (the token view's own keys: ``tokens_key``)
# The Conversation tab: paste (a form), upload, the builder's format and its three forms.
PASTE_FORM, PASTE_TEXT, UPLOAD = "paste_form", "paste_text", "upload"
NEW_FORMAT, NEW_ANSWERS = "new_format", "new_answers"
EDIT_FORM, NEW_FORM = "edit", "new"  # the builder's two item forms (their fields' keys: ``field_key``)
ANSWER_TEXT, ANSWER_IS_ERROR = "answer_text", "answer_is_error"
# The Rules tab: the rule set to start from, import, the suggestion being previewed.
RULESET, RULES_UPLOAD, RULES_PASTE = "ruleset", "rules_upload", "rules_paste"
RULES_PASTE_FORM = "rules_paste_form"
SUGGESTION = "suggestion"  # (conversation, suggestion) being previewed, or absent
SUGGEST_FROM_NOTICE, RESET_ERROR_PATTERNS = "suggest_from_notice", "reset_error_patterns"
# Before / after and where the tokens go.
CHANGED_ONLY, PAGE = "changed_only", "page"
CALL_CHANGED_ONLY, CALL_PAGE, CALL_VIEW_BACK = "call_changed_only", "call_page", "call_view_back"
RULE_TABLES = "rule_tables"  # the first tab's two rule tables, side by side (a container the page styles)
# Lessons: the picker, the lesson the tab shows, the lessons done, and the lesson being taken once
# its check passed: it stays done while the learner goes on. Lessons 1 and 4 end with "move it back"
# / "untick it", and a check that followed the page then disabled *Next lesson* while the counter said done.
LESSON_PICK, LESSON_SHOWN, LESSONS_DONE, LESSON_PASSED = "lesson_pick", "lesson_shown", "lessons_done", "lesson_passed"
LESSON_BANNER, LESSON_SHOW_ME, LESSON_NEXT = "lesson_banner", "lesson_show_me", "lesson_next"
LESSON_END, LESSON_START = "lesson_end", "lesson_start"
# Values Streamlit forgets while their tab is not drawn, kept by ``keep_hidden``.
KEPT_HIDDEN = (REPLAY_POLICY, REPLAY_MODE, REPLAY_WINDOW, REPLAY_TRIGGER, REPLAY_KEEP, REPLAY_CLEAR_AT_LEAST,
               REPLAY_CACHE, REPLAY_CALL, REPLAY_SWEEP, REPLAY_RECALL, COMPARE_MODE, COMPARE_CACHE, COMPARE_SHOW,
               COMPARE_THEIRS, PROBE_ON, PROBE_PROVIDER, PROBE_CALLS, PROBE_BUDGET, PROBE_RESULT, ASK_ON, ASK_QUESTIONS,
               ASK_JUDGE, ASK_RESULT)


def price_key(field: str, model: str) -> str:
    """The key of the Run tab's typed ``field`` price for ``model``."""
    return f"{PRICE_PREFIX}{field}_{model}"


def is_price_key(key: object) -> bool:
    return str(key).startswith(PRICE_PREFIX)


def field_key(form: str, field: str) -> str:
    """The key of one field of the builder's ``form`` (``EDIT_FORM`` or ``NEW_FORM``)."""
    return f"{form}_{field}"


def tokens_key(what: str, item: str) -> str:
    """A token view's own key: ``what`` ("limit", "more") for the view of ``item``."""
    return f"tokens_{what}_{item}"


def suggestion_key(what: str, place: str) -> str:
    """A widget of the suggestion preview (``what``: "table", "add", "dismiss") drawn at ``place``."""
    return f"suggestion_{what}_{place}"


def add_rule_key(kind: str, tool: str) -> str:
    """The *Where the tokens go* button that adds a ``kind`` rule for ``tool``."""
    return f"add_rule_{kind}_{tool}"


def start(key: str, value: Any) -> None:
    """Give a widget its first value through the session state (never also as ``value=``)."""
    if key not in st.session_state:
        st.session_state[key] = value


def keep_hidden() -> None:
    """Keep the Run and Compare settings, the probe's and the typed prices while their tabs are
    closed: Streamlit forgets a widget's value in a run that does not draw it, unless it is set again."""
    for key in [*KEPT_HIDDEN, *(key for key in st.session_state if is_price_key(key))]:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


@dataclass(frozen=True)
class OwnConversation:
    """A conversation the person brought or built, kept so a preset never replaces it for good."""

    label: str  # "Your conversation (pasted 10:32)"
    conversation: Conversation
    defaults: bool = True  # shown with the defaults for its model (False: a workspace's or a preset's settings)


def now() -> str:
    return datetime.now().strftime("%H:%M")


@st.cache_resource(show_spinner="Loading presets…")
def all_presets() -> dict[str, presets.Preset]:
    return {preset.key: preset for preset in presets.list_presets()}


def engine() -> Engine:
    """This browser session's engine: its meters and decision cache belong to this session only."""
    if ENGINE not in st.session_state:
        st.session_state[ENGINE] = Engine()
    return st.session_state[ENGINE]


def get(key: str) -> Any:
    return st.session_state[key]


def message(name: str) -> str | None:
    return st.session_state[MESSAGES].get(name)


def set_message(name: str, text: str | None) -> None:
    messages = dict(st.session_state[MESSAGES])
    if text is None:
        messages.pop(name, None)
    else:
        messages[name] = text
    st.session_state[MESSAGES] = messages


def set_rule_rows(calls: list[dict[str, Any]], results: list[dict[str, Any]]) -> None:
    """New bases for both rule tables; the editors' pending edits go with the old bases."""
    st.session_state[CALL_BASE] = calls
    st.session_state[RESULT_BASE] = results
    for editor in (CALL_EDITOR, RESULT_EDITOR):
        st.session_state.pop(editor, None)


def set_error_patterns(patterns: ErrorPatterns) -> None:
    """A new base for the error-pattern table (its pending edits go), in effect at once."""
    st.session_state[PATTERN_BASE] = patterns.to_json()
    st.session_state[PATTERNS_GOOD] = patterns
    st.session_state.pop(PATTERN_EDITOR, None)


def set_rules(rules: Rules) -> None:
    """Everything the rules hold: both tables, the error patterns and the value cap."""
    set_rule_rows(*tables_from_rules(rules))
    set_error_patterns(rules.error_patterns)
    st.session_state[VALUE_LIMIT] = rules.value_limit


def rules_from(values: Mapping[str, Any], conversation: Conversation) -> tuple[Rules, list[RowCheck]]:
    """The rules a session's state holds (``st.session_state``, or a copy of its keys): both tables,
    the error patterns (the last good ones while a row is wrong) and the value cap, with every
    row's check."""
    patterns, pattern_checks = error_patterns_from_rows(
        edited_rows(values[PATTERN_BASE], values.get(PATTERN_EDITOR)), conversation, values[PATTERNS_GOOD])
    base = Rules(error_patterns=patterns, value_limit=values[VALUE_LIMIT])
    rules, checks = rules_from_tables(edited_rows(values[CALL_BASE], values.get(CALL_EDITOR)),
                                      edited_rows(values[RESULT_BASE], values.get(RESULT_EDITOR)), conversation, base)
    return rules, checks + pattern_checks


def rule_rows() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """What the two tables show now: base plus the edits the editors recorded."""
    return (edited_rows(get(CALL_BASE), st.session_state.get(CALL_EDITOR)),
            edited_rows(get(RESULT_BASE), st.session_state.get(RESULT_EDITOR)))


def set_threshold(value: int) -> None:
    st.session_state[THRESHOLD] = value
    st.session_state[THRESHOLD_SLIDER] = value


def set_origins(names: tuple[str, ...] | list[str], origin: str | None) -> None:
    """Record where these settings' values came from (None: forget it, the value follows again)."""
    origins = dict(st.session_state.get(ORIGINS, {}))
    for name in names:
        if origin is None:
            origins.pop(name, None)
        else:
            origins[name] = origin
    st.session_state[ORIGINS] = origins


def origin(name: str) -> str | None:
    return st.session_state.get(ORIGINS, {}).get(name)


def changed(name: str) -> None:
    """A widget's callback: the person set this setting themselves."""
    set_origins([name], defaults.YOU)
    if name == "model":  # the note about an unlisted model was about the model that was chosen for them
        set_message("model", None)


def export_converts(conversation: Conversation, choice: str) -> bool:
    """Whether exporting in ``choice`` converts: another format, or an agent's log made into a request."""
    return choice != conversation.format or bool(conversation.source)


def set_conversation(conversation: Conversation, source: str, keep_builder: bool = False) -> None:
    """Show ``conversation``; the Run tab's chosen call is forgotten; unless the builder made it,
    the builder starts over at item 0, the lesson in progress ends and the prompt-cache models
    follow the model again. The export starts
    on the conversation's own API format, its losses listed whenever it converts."""
    st.session_state[CONVERSATION] = conversation
    st.session_state[SOURCE] = source
    # Set, not dropped: a widget whose value is only dropped keeps showing the old one in the browser.
    st.session_state[EXPORT_FORMAT] = conversation.format
    st.session_state[EXPORT_NOTES] = export_converts(conversation, conversation.format)
    # call 5 of another conversation is not this one's: Before / after goes back to the whole, and
    # the Run tab's slider starts again on the last call
    st.session_state[REPLAY_CALL_SHOWN] = False
    st.session_state.pop(REPLAY_CALL, None)
    if not keep_builder:
        st.session_state[BUILDER_ITEM] = None
        st.session_state.pop(LESSON, None)
        set_origins(CACHE_CHOICES, None)


def follow_model(conversation: Conversation) -> None:
    """The conversation's own model (counted by the meter, priced by the catalogue on the log's
    date, or shown as of unknown price — never priced as another model), with a note when its
    price is unknown."""
    choice = model_for(conversation, read_prices().dated(conversation.started))
    st.session_state[MODEL] = choice.model
    set_message("model", choice.note)
    named = choice.model
    where = (f"the conversation's own ({named})" if choice.named
             else f"the default for {formats.TITLES[conversation.format]} (the conversation names none)")
    set_origins(["model"], where)


def start_from_defaults(conversation: Conversation) -> None:
    """A person's own conversation: its model, and the playground's defaults for that model —
    not the settings of the preset or lesson shown before. Rules the person made stay."""
    follow_model(conversation)
    start = defaults.defaults_for(st.session_state[MODEL], read_prices())
    set_threshold(start.threshold)
    st.session_state[KEEP_RECENT] = start.keep_recent
    st.session_state[COMPACT_ERRORS] = start.compact_errors
    st.session_state[DETECT_ERRORS] = start.detect_errors
    names = ["threshold", "keep_recent", "errors"]
    if origin("rules") != defaults.YOU:
        set_rules(start.rules)
        names.append("rules")
    set_origins(names, f"defaults for {start.model} ({start.describe()})")


def own_conversations() -> dict[str, OwnConversation]:
    return st.session_state.setdefault(OWN, {})


def is_own(key: str | None) -> bool:
    return bool(key) and key.startswith(OWN_PREFIX)


def keep_own(conversation: Conversation, label: str, keep_builder: bool = False, fresh: bool = True) -> None:
    """Show a conversation the person brought, as a new entry in the picker they can come back to;
    ``fresh``: it starts from the defaults for its model (a workspace brings its own settings, a
    preset's edited copy keeps the preset's)."""
    kept = dict(own_conversations())
    number = 1 + max((int(key.removeprefix(OWN_PREFIX)) for key in kept), default=0)
    key = f"{OWN_PREFIX}{number}"
    kept[key] = OwnConversation(label, conversation, fresh)
    while len(kept) > MAX_OWN:
        kept.pop(next(iter(kept)))
    st.session_state[OWN] = kept
    st.session_state[PRESET] = key
    set_conversation(conversation, label, keep_builder)
    if fresh:
        start_from_defaults(conversation)


def update_own(conversation: Conversation) -> None:
    """The builder changed the conversation: the entry showing now holds the new version. A preset
    is never changed in place: its edited copy becomes the person's own."""
    key = get(PRESET)
    if not is_own(key):
        title = all_presets()[key].title if key in all_presets() else "conversation"
        keep_own(conversation, f"{title}, edited ({now()})", keep_builder=True, fresh=False)
        return
    kept = dict(own_conversations())
    kept[key] = OwnConversation(kept[key].label, conversation, kept[key].defaults)
    st.session_state[OWN] = kept
    set_conversation(conversation, kept[key].label, keep_builder=True)


def pick() -> None:
    """The picker's choice: one of the person's own conversations (its model, and the defaults for
    it unless a workspace or a preset gave it settings) or a preset (everything it suggests)."""
    key = get(PRESET)
    if is_own(key):
        own = own_conversations()[key]
        set_conversation(own.conversation, own.label)
        if own.defaults:
            start_from_defaults(own.conversation)
        else:
            follow_model(own.conversation)
        return
    apply_preset(key)


def settings(**overrides: Any) -> Settings:
    """Compaction's settings as the sidebar holds them (``overrides`` for a preview at another
    threshold): the one place the page turns its widgets into ``Settings``."""
    values = {"threshold": get(THRESHOLD), "keep_recent": get(KEEP_RECENT), "compact_errors": get(COMPACT_ERRORS),
              "detect_errors": st.session_state.get(DETECT_ERRORS, True)}
    return Settings(**(values | overrides))


def apply_preset(key: str | None = None) -> None:
    """Load a preset with everything it suggests: conversation, model, threshold, rules."""
    preset = all_presets()[key or get(PRESET)]
    st.session_state[PRESET] = preset.key
    set_conversation(preset.conversation, f"preset: {preset.title}")
    st.session_state[MODEL] = preset.model
    set_threshold(preset.threshold)
    st.session_state[KEEP_RECENT] = preset.keep_recent
    st.session_state[COMPACT_ERRORS] = False
    st.session_state[DETECT_ERRORS] = True
    set_rules(preset.rules)
    st.session_state[MESSAGES] = {}
    set_origins(defaults.SETTINGS, f"the preset “{preset.title}”")


def init() -> None:
    """First run of a session: the first preset, loaded and ready."""
    if CONVERSATION in st.session_state:
        return
    st.session_state[MESSAGES] = {}
    st.session_state[FORMAT_CHOICE] = AUTO
    if all_presets():
        apply_preset(next(iter(all_presets())))
        return
    # No presets folder (the package used on its own): start empty, with the defaults.
    st.session_state[PRESET] = None
    empty = Conversation(items=(), format="chat", model=DEFAULT_MODEL)
    set_conversation(empty, "nothing yet: paste, upload or build a conversation")
    start_from_defaults(empty)


def load_text(text: str | bytes, name: str, label: str, entry: str) -> bool:
    """Read pasted or uploaded JSON as a conversation, kept in the picker as ``entry``; on failure
    keep the last good one and leave a message (starting with ``label``) for input ``name``."""
    choice = get(FORMAT_CHOICE)
    try:
        limit = input_limit()[0]
        limits.check_size(len(text), limit)
        conversation = formats.loads(text, None if choice == AUTO else choice, refuse_surrogates=True, limit_mb=limit)
        # the agent's own cuts its bills show though its log does not: the Run tab's baseline is the run as it ran
        conversation = infer(conversation, read_prices().dated(conversation.started).get(conversation.model,
                                                                              conversation.format))
    except InputError as exc:
        set_message(name, f"{label}: {exc}")
        return False
    keep_own(conversation, entry)
    for each in LOADERS:  # a good load answers every earlier failed one: no stale message stays under a box
        set_message(each, None)
    return True


def input_limit() -> tuple[int, str | None]:
    """The input size limit in MB (``PLAYGROUND_MAX_INPUT_MB``, else the default) and, when that
    setting is bad, a message saying the default is used instead."""
    try:
        return limits.max_input_mb(), None
    except InputError as exc:
        return limits.DEFAULT_MAX_INPUT_MB, f"{exc} — using {limits.DEFAULT_MAX_INPUT_MB} MB"


def threshold_bounds(before: int) -> tuple[int, int]:
    return threshold_range(before, get(THRESHOLD))
