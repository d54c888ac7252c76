"""OpenHands conversations, read as a playground-native conversation (counted like Chat, and sent
as Chat; tool results keep their error flag): the V1 SDK's ``events/`` folder, its events one a
line, and V0's saved trajectories.

V1 (OpenHands/software-agent-sdk @ 611629e6, ``openhands/sdk/conversation/persistence_const.py``,
``event_store.py``, ``event/llm_convertible/*.py``, ``event/condenser.py``): a conversation folder
holds ``base_state.json`` and ``events/event-<5-digit index>-<id>.json``, one event each, tagged by
``kind``. ``SystemPromptEvent`` is the system message; ``MessageEvent`` a user or agent message
(``llm_message``); ``ActionEvent`` the agent's tool call (``tool_call`` with ``id``, ``name``,
``arguments``, and its ``thought`` as the assistant's text; actions of one ``llm_response_id`` are
one reply); ``ObservationEvent`` the tool's result (``observation.content``, ``is_error``);
``UserRejectObservation`` and ``AgentErrorEvent`` answer a call too. ``Condensation`` is OpenHands
compacting its own history (``forgotten_event_ids``, ``summary``, ``summary_offset``); what OpenHands sent
after it is recorded (``Conversation.compactions``) as ``View.from_events`` (``openhands/sdk/context/view.py``)
builds it: every event so far but the forgotten ones (of every condensation), a call and its result only
together, the newest summary, then the events that follow (the summary stands at ``summary_offset`` among
the kept events; here it comes after them, which changes no count).
State updates, pauses and condensation requests are OpenHands' own records, skipped and counted.

V0 (All-Hands-AI/OpenHands, ``tests/runtime/trajs``, ``openhands/events/serialization``): a JSON
list of events, each an ``action`` (``message``, ``run``, ``edit``, ``read``, ``finish``…) or an
``observation`` (with ``cause``, the action's id); with function calling each carries
``tool_call_metadata`` (``tool_call_id``, ``function_name`` and the raw ``model_response``, whose
message holds the call's arguments and the reply's text).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import replace
from typing import Any

from ..conversation import AgentCompaction, Conversation, Item, ToolCall, ToolResult, turn_starts
from ..words import plural
from . import native
from ._reader import Folder, Reader, as_log, billed_note, counted, read_note, text_of
from ._wire import check, need

NAME = "openhands"
TITLE = "OpenHands conversation (V1 events/ folder or JSONL, V0 trajectory)"
_V1_KINDS = ("MessageEvent", "ActionEvent", "ObservationEvent", "SystemPromptEvent", "ConversationStateUpdateEvent",
             "Condensation", "AgentErrorEvent", "UserRejectObservation")
_EVENTS = "events/"


def _v1_events(data: Any) -> list[Any] | None:
    """V1 events from a conversation folder (or a zip of one) or a list of them; None if not V1."""
    if isinstance(data, Folder):  # the conversation folder, or its events/ folder itself
        events = data.under(_EVENTS) or {name: data.files[name] for name in sorted(data.files)}
        if not events or not all(name.rsplit("/", 1)[-1].startswith("event-") for name in events):
            return None
        return list(events.values())
    if isinstance(data, list) and data and all(isinstance(e, dict) and isinstance(e.get("kind"), str)
                                               and "source" in e for e in data):
        return data if any(e["kind"] in _V1_KINDS for e in data) else None
    return None


_V0_EVENT = re.compile(r"(?:^|/)events/(\d+)\.json$")
METADATA = "metadata.json"


def _v0_folder(data: Any) -> tuple[list[Any], Any] | None:
    """A V0 session folder (``sessions/<id>/``, ``openhands/storage/locations.py``): ``events/<id>.json``, one
    event each, and ``metadata.json`` (``ConversationMetadata``: ``llm_model``, ``prompt_tokens``…); the events
    in id order, and the metadata (None when absent). None when the folder is not one."""
    if not isinstance(data, Folder):
        return None
    numbered = sorted((int(found.group(1)), name) for name in data.files if (found := _V0_EVENT.search(name)))
    events = [data.files[name] for _, name in numbered]
    if not events or not _is_v0(events):
        return None
    folder = numbered[0][1][:_V0_EVENT.search(numbered[0][1]).start()]  # type: ignore[union-attr]
    return events, data.files.get(f"{folder}/{METADATA}" if folder else METADATA)


def _is_v0(data: Any) -> bool:
    return isinstance(data, list) and bool(data) and all(
        isinstance(e, dict) and isinstance(e.get("id"), int) and "source" in e and ("action" in e or "observation" in e)
        for e in data)


def looks_like(data: Any) -> int:
    return 6 if _v1_events(data) is not None or _is_v0(data) or _v0_folder(data) is not None else 0


def part(data: Any) -> str | None:
    """What to give instead of a file that is one part of an OpenHands folder and no run alone."""
    if isinstance(data, dict) and isinstance(data.get("conversation_id"), str) and "selected_repository" in data:
        return ("this is an OpenHands V0 session's metadata.json (the model and the totals): give its session folder "
                "(sessions/<id>/, with metadata.json and events/<n>.json), or a .zip of it, instead")
    if isinstance(data, dict) and isinstance(data.get("agent"), dict) and "stats" in data and "id" in data:
        return ("this is an OpenHands V1 conversation's base_state.json: give the conversation folder (with "
                "base_state.json and events/), or a .zip of it, instead")
    return None


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) else None


class _Build:
    """Native items, and what the notes say about the rest."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.skipped: Counter[str] = Counter()
        self.notes: list[str] = []
        self.calls: set[str] = set()
        self.orphans: list[str] = []
        self.replies: set[str] = set()  # model responses whose text is already an item
        self.models: Counter[str] = Counter()
        self.billed: dict[str, int] = {}  # model response id (or stats update) → its prompt tokens
        self.billed_so_far = 0
        self.event: Any = None  # the id of the event being read, and of the event each item came from
        self.event_of: list[Any] = []
        self.condensations: list[tuple[int, set[Any], bool, str]] = []  # (resume, forgotten, a summary?, where)
        self.reply_at: dict[str, int] = {}  # model response id → the position of its reply's first item
        self.accumulated = 0  # V0 llm_metrics' accumulated prompt tokens at the event before

    def add(self, item: dict[str, Any]) -> None:
        self.items.append(item)
        self.event_of.append(self.event)

    def message(self, role: str, text: str) -> None:
        if text:
            self.add({"type": "message", "role": role, "content": text})

    def call(self, call_id: str, name: str, arguments: Any, text: str, response: str | None) -> None:
        if response is None or response not in self.replies:
            self.message("assistant", text)
            if response is not None:
                self.replies.add(response)
        parsed = arguments
        if isinstance(arguments, str):
            try:
                parsed = json.loads(arguments)
            except ValueError:
                parsed = arguments
        self.add({"type": "tool_call", "call_id": call_id, "name": name,
                           "arguments": parsed if isinstance(parsed, dict | str) else json.dumps(parsed)})
        self.calls.add(call_id)

    def result(self, call_id: str, text: str, failed: bool) -> None:
        if call_id not in self.calls:
            self.orphans.append(call_id)
            return
        self.add({"type": "tool_result", "call_id": call_id, "content": text,
                           "status": "error" if failed else "success"})

    def condensed(self, where: str, forgotten: Any, summary: Any) -> None:
        """OpenHands compacting its history: its summary as a user message where it happened."""
        size = f"forgot {plural(len(forgotten), 'event')}" if isinstance(forgotten, list) else "condensed"
        summarized = isinstance(summary, str) and bool(summary)
        gone = {event for event in forgotten if isinstance(event, str | int)} if isinstance(forgotten, list) else set()
        self.condensations.append((len(self.items), gone, summarized, where))
        if summarized:
            self.message("user", summary)
            self.notes.append(f"OpenHands condensed its history at {where} ({size}): its summary is the user message "
                              f"at items[{len(self.items) - 1}]. Everything before is shown too; OpenHands itself no "
                              "longer sent the forgotten events.")
        else:
            self.notes.append(f"OpenHands condensed its history at {where} ({size}, no summary recorded).")


def _v1(events: list[Any], build: _Build) -> None:
    for position, raw in enumerate(events):
        place = f"event {position}"
        event = check(raw, dict, place)
        build.event = event.get("id")
        kind = event.get("kind")
        if kind == "SystemPromptEvent":
            build.message("system", text_of([event.get("system_prompt")]))
        elif kind == "MessageEvent":
            message = need(event, "llm_message", dict, place)
            extended = event.get("extended_content") or []
            build.message(str(message.get("role", "user")), text_of(message.get("content")) + text_of(extended))
        elif kind == "ActionEvent":
            call = need(event, "tool_call", dict, place)
            build.call(need(call, "id", str, f"{place}.tool_call"), need(call, "name", str, f"{place}.tool_call"),
                       call.get("arguments") or {}, text_of(event.get("thought")),
                       _string(event.get("llm_response_id")))
            _v1_model(event.get("metrics"), build)
        elif kind == "ObservationEvent":
            observation = need(event, "observation", dict, place)
            build.result(need(event, "tool_call_id", str, place), text_of(observation.get("content")),
                         observation.get("is_error") is True)
        elif kind == "UserRejectObservation":
            build.result(need(event, "tool_call_id", str, place),
                         f"Action rejected: {event.get('rejection_reason', 'User rejected the action')}", True)
        elif kind == "AgentErrorEvent" and isinstance(event.get("tool_call_id"), str):
            build.result(event["tool_call_id"], str(event.get("error", "")), True)
        elif kind == "AgentErrorEvent":
            build.message("user", str(event.get("error", "")))
        elif kind == "Condensation":
            build.condensed(place, event.get("forgotten_event_ids"), event.get("summary"))
        else:
            build.skipped[str(kind)] += 1
            _v1_stats(event, build)


def _v1_model(metrics: Any, build: _Build) -> None:
    usage = metrics.get("accumulated_token_usage") if isinstance(metrics, dict) else None
    if isinstance(usage, dict) and isinstance(usage.get("model"), str):
        build.models[usage["model"]] += 1


def _v1_stats(event: dict, build: _Build) -> None:
    """A ``stats`` state update: the model's name, and the prompt tokens billed so far (kept as each
    call's own: the rise since the update before)."""
    value = event.get("value") if event.get("key") == "stats" else None
    metrics = value.get("usage_to_metrics") if isinstance(value, dict) else None
    default = metrics.get("default") if isinstance(metrics, dict) else None
    if isinstance(default, dict):
        if isinstance(default.get("model_name"), str):
            build.models[default["model_name"]] += 1
        usage = default.get("accumulated_token_usage")
        if isinstance(usage, dict) and isinstance(usage.get("prompt_tokens"), int):
            build.billed[f"stats {len(build.billed)}"] = usage["prompt_tokens"] - build.billed_so_far
            build.billed_so_far = usage["prompt_tokens"]


def _v0(events: list[dict], build: _Build) -> None:
    for event in events:
        place = f"event id {event.get('id')}"
        build.event = event.get("id")
        meta = event.get("tool_call_metadata") if isinstance(event.get("tool_call_metadata"), dict) else None
        response = meta.get("model_response") if meta else None
        if isinstance(response, dict):
            _v0_response(response, build)
            if isinstance(response.get("id"), str):
                build.reply_at.setdefault(response["id"], len(build.items))
        _v0_metrics(event.get("llm_metrics"), response.get("id") if isinstance(response, dict) else None, build)
        action, observation = event.get("action"), event.get("observation")
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        if action == "condensation":
            build.condensed(place, _v0_forgotten(args), args.get("summary"))
        elif meta and action:
            message = _v0_message(response)
            call_id = need(meta, "tool_call_id", str, f"{place}.tool_call_metadata")
            listed = message.get("tool_calls") if isinstance(message.get("tool_calls"), list) else []
            arguments = next((c["function"].get("arguments") for c in listed if isinstance(c, dict)
                              and c.get("id") == call_id and isinstance(c.get("function"), dict)), None)
            reply = response.get("id") if isinstance(response, dict) else None
            build.call(call_id, need(meta, "function_name", str, f"{place}.tool_call_metadata"),
                       arguments if arguments is not None else args, text_of(message.get("content")),
                       reply if isinstance(reply, str) else None)
        elif meta and observation:
            extras = event.get("extras") if isinstance(event.get("extras"), dict) else {}
            metadata = extras.get("metadata") if isinstance(extras.get("metadata"), dict) else {}
            exit_code = extras.get("exit_code", metadata.get("exit_code"))
            failed = observation == "error" or (isinstance(exit_code, int) and exit_code not in (0, -1))
            build.result(need(meta, "tool_call_id", str, f"{place}.tool_call_metadata"), str(event.get("content", "")),
                         failed)
        elif action == "message":
            build.message("user" if event.get("source") == "user" else "assistant",
                          str(args.get("content", event.get("message", ""))))
        else:
            build.skipped[f"{'action' if action else 'observation'} {action or observation}"] += 1


def _v0_forgotten(args: dict) -> Any:
    """V0's forgotten events: a list of ids, or a range of them (``forgotten_events_start_id``…``end_id``)."""
    first, last = args.get("forgotten_events_start_id"), args.get("forgotten_events_end_id")
    if args.get("forgotten_event_ids") is None and isinstance(first, int) and isinstance(last, int):
        return list(range(first, last + 1))
    return args.get("forgotten_event_ids")


def _v0_message(response: Any) -> dict:
    choices = response.get("choices") if isinstance(response, dict) else None
    message = choices[0].get("message") if isinstance(choices, list) and choices and isinstance(choices[0], dict) \
        else None
    return message if isinstance(message, dict) else {}


def _v0_metrics(metrics: Any, response: Any, build: _Build) -> None:
    """An event's ``llm_metrics`` (``openhands/llm/metrics.py``): the call's own ``token_usages`` entry (by
    ``response_id``), else the rise of ``accumulated_token_usage.prompt_tokens`` (what newer V0 keeps on each
    action, ``_prepare_metrics_for_frontend``); its ``prompt_tokens`` hold the cache reads (litellm's)."""
    if not isinstance(metrics, dict):
        return
    usage = metrics.get("accumulated_token_usage")
    if isinstance(usage, dict) and isinstance(usage.get("model"), str) and usage["model"]:
        build.models[usage["model"]] += 1
    if not isinstance(response, str) or response in build.billed:
        return
    own = [u for u in metrics.get("token_usages") or [] if isinstance(u, dict) and u.get("response_id") == response]
    if own and isinstance(own[-1].get("prompt_tokens"), int):
        build.billed[response] = own[-1]["prompt_tokens"]
    elif isinstance(usage, dict) and isinstance(usage.get("prompt_tokens"), int):
        if usage["prompt_tokens"] > build.accumulated:
            build.billed[response] = usage["prompt_tokens"] - build.accumulated
        build.accumulated = usage["prompt_tokens"]


def _v0_response(response: dict, build: _Build) -> None:
    if isinstance(response.get("model"), str):
        build.models[response["model"]] += 1
    usage = response.get("usage")
    if isinstance(usage, dict) and isinstance(usage.get("prompt_tokens"), int) and isinstance(response.get("id"), str):
        build.billed[response["id"]] = usage["prompt_tokens"]


def read(data: Any) -> Conversation:
    build = _Build()
    metadata: Any = None
    events = _v1_events(data)
    if events is not None:
        _v1(events, build)
        form = "V1 events folder" if isinstance(data, Folder) else "V1 event list"
    else:
        folder = _v0_folder(data)
        events, metadata = folder if folder is not None else (data, None)
        _v0(check(events, list, "document"), build)
        form = "V0 session folder" if folder is not None else "V0 trajectory"
    metadata = metadata if isinstance(metadata, dict) else {}
    body: dict[str, Any] = {"format": native.MARKER, "items": build.items}
    model = build.models.most_common(1)[0][0] if build.models else _state_model(data) or _string(
        metadata.get("llm_model"))
    if model:
        body["model"] = model
    system = any(item.get("role") == "system" for item in build.items)  # V1 logs its system prompt
    notes = [read_note(f"an OpenHands {form}", len(events), "event", len(build.items), "OpenHands", system),
             *build.notes]
    if build.skipped:
        notes.append(f"Skipped (OpenHands' own records, not sent to the model): {counted(build.skipped)}.")
    if build.orphans:
        notes.append(f"Dropped, as their call is not in this log: {plural(len(build.orphans), 'observation')}, "
                     f"{', '.join(build.orphans[:5])}.")
    if metadata:
        notes.extend(_metadata_notes(metadata))
    if form.startswith("V1"):
        notes.extend(billed_note("OpenHands", "the rise in stats' accumulated prompt_tokens",
                                 [tokens for tokens in build.billed.values() if tokens > 0]))
    conversation = as_log(native.read(body), NAME, notes)
    if not form.startswith("V1"):
        conversation = _placed(conversation, build)
    return replace(conversation, compactions=_compactions(conversation.items, build))


def _placed(conversation: Conversation, build: _Build) -> Conversation:
    """V0's bills, each at the call whose reply it paid for (the first item of that model response)."""
    starts = set(turn_starts(conversation.items))
    placed = tuple(sorted((build.reply_at[response], tokens) for response, tokens in build.billed.items()
                          if tokens > 0 and build.reply_at.get(response) in starts))
    if not build.billed:
        return conversation
    left = len([t for t in build.billed.values() if t > 0]) - len(placed)
    other = f"; {plural(left, 'other reply', 'other replies')} not at the start of a call" if left else ""
    note = (f"OpenHands recorded the input tokens billed for {plural(len(placed), 'call')} (model_response.usage."
            f"prompt_tokens, or llm_metrics){other}: the Run view and `replay` show them beside our count and fit a "
            "calibration to them.")
    return replace(conversation, billed=placed, notes=(*conversation.notes, note))


def _metadata_notes(metadata: dict) -> list[str]:
    """What a V0 session's ``metadata.json`` says of the whole run (``ConversationMetadata``)."""
    totals = {key: metadata.get(key) for key in ("prompt_tokens", "completion_tokens", "accumulated_cost")}
    if not any(isinstance(value, int | float) and value for value in totals.values()):
        return []
    said = ", ".join(f"{key} {value:,}" for key, value in totals.items() if isinstance(value, int | float))
    return [f"metadata.json records the run's totals ({said}; model {metadata.get('llm_model') or 'not named'}), "
            "condenser calls included."]


def _state_model(data: Any) -> str | None:
    """The model a V1 conversation folder's ``base_state.json`` configures (``agent.llm.model``):
    what a run whose events record no metrics or stats was sent to."""
    state = data.files.get("base_state.json") if isinstance(data, Folder) else None
    agent = state.get("agent") if isinstance(state, dict) else None
    llm = agent.get("llm") if isinstance(agent, dict) else None
    model = llm.get("model") if isinstance(llm, dict) else None
    return model if isinstance(model, str) and model else None


def _compactions(items: tuple[Item, ...], build: _Build) -> tuple[AgentCompaction, ...]:
    """Each condensation as the request OpenHands sent after it (``View.from_events``)."""
    forgotten: set[Any] = set()
    summaries: set[int] = set()
    found = []
    for resume, gone, summarized, where in build.condensations:
        forgotten |= gone
        kept = [p for p in range(resume) if p not in summaries and build.event_of[p] not in forgotten]
        found.append(AgentCompaction(resume, kept=_matched(items, kept), summary=summarized, where=where, log=items))
        if summarized:
            summaries.add(resume)
    return tuple(found)


def _matched(items: tuple[Item, ...], kept: list[int]) -> tuple[int, ...]:
    """The kept positions with every call and result whose partner is not kept left out, as the view
    filters unmatched tool calls (``_filter_unmatched_tool_calls``)."""
    calls = {items[p].call_id for p in kept if isinstance(items[p], ToolCall)}
    results = {items[p].call_id for p in kept if isinstance(items[p], ToolResult)}
    return tuple(p for p in kept if not (isinstance(items[p], ToolCall) and items[p].call_id not in results)
                 and not (isinstance(items[p], ToolResult) and items[p].call_id not in calls))


READER = Reader(NAME, TITLE, looks_like, read, part)
