"""The tuned policy inside the book's own agent loop: ``CompactionHook``, called where the seed's
loop calls Listing 6.5's ``apply_compaction(context, request)``, with that signature.

The book gives its types only as far as the listing uses them, so the hook reads them by their
attributes (duck typing), never by class: a tool call is an item with ``tool_call_id``, ``name`` and
``arguments`` (a dict); a tool result one with ``tool_call_id``, ``name``, ``status`` and ``content``
(a list); a message one with ``role`` and ``content`` (a string or a list of strings). The
``request.contents`` it is given is read as Chat Completions messages (a call joins the assistant
message before it, results are ``tool`` messages, a list of strings is text parts), through the same
core as the wrapped clients (``endpoint.ChatCompletions``, one ``Session`` for the run: replay's
stored mode, one call at a time); the request to send is written back to ``request.contents`` as the
caller's own objects. An item the policy kept is the caller's very object; one it changed is a new
object of the caller's class (``dataclasses.replace`` for a dataclass, else the class called with
the listing's fields): a call with its compacted ``arguments``, a result with its compacted
``content``. The caller's list and items are never changed. A ``status`` is carried, not read: the
Chat form has no place for it (error results are known by the rules' error patterns, as in any
Chat Completions run). The listing's ``context`` is not read.

The hook never sees the reply, so a call it prepared is committed (the run moves on, its record is
kept and logged) when the provider is known to have taken it: at ``done(usage=…)``, which an agent
calls after each model call as the Agents SDK's ``on_llm_end`` is called, or else at the next hook
call whose contents are not the last call's (the reply read from them where they grew past it: the
assistant items that follow). The same contents again is the same call retried, never one more;
contents that do not begin with the last call's start the run again. The last call's reply reaches
the log only through ``done(reply=…)``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..conversation import ABSENT, Item, Message, Origin, ToolCall, ToolResult, content_text, shared
from ..errors import InputError
from ..policies import Policy
from ..summarize.cut import is_summary
from .client import CHAT, session
from .endpoint import Call, plain
from .openai_client import ChatCompletions
from .policy_file import PolicyFile
from .record import CallRecord

# The attributes Listing 6.5 reads of each kind of item, which recognise it and which a class that is
# not a dataclass is called with when the hook writes a changed item back.
FIELDS = {"call": ("tool_call_id", "name", "arguments"), "result": ("tool_call_id", "name", "status", "content"),
          "message": ("role", "content")}


def seed_hook(policy: Policy | PolicyFile, log: str | Path | None = None, *, model: str | None = None,
              tools: Iterable[Mapping[str, Any]] | None = None) -> CompactionHook:
    """Listing 6.5's ``apply_compaction(context, request)`` running ``policy`` (``pg.make`` or
    ``pg.load_policy``) as replay's stored mode runs it; see ``CompactionHook``."""
    return CompactionHook(policy, log, model=model, tools=tools)


class CompactionHook:
    """``hook(context, request)`` in the place of the book's ``apply_compaction``: sets
    ``request.contents`` to what replay's stored mode sends at this call of the run. ``log``: the run
    log each committed call appends a line to (a Chat Completions run ``pg.load`` reads); ``model``:
    whose meter counts the requests (default: the policy file's); ``tools``: the tool definitions the
    agent sends, in the Chat Completions form, counted in every prompt (the listing's request holds
    none the hook could read). One hook is one run."""

    def __init__(self, policy: Policy | PolicyFile, log: str | Path | None = None, *, model: str | None = None,
                 tools: Iterable[Mapping[str, Any]] | None = None) -> None:
        self.session = session(policy, CHAT, model)
        self.endpoint = _Chat(None, self.session, Path(log) if log is not None else None)
        self._head: dict[str, Any] = {"tools": plain(list(tools))} if tools else {}
        if self.session.model is not None:
            self._head["model"] = self.session.model
        # the call prepared, its items' sources and the contents it was prepared from (as Chat messages)
        self._pending: tuple[Call, tuple[int | None, ...], list[dict[str, Any]]] | None = None
        self._sources: tuple[int | None, ...] = ()  # the contents' index each item the last call sent came from

    @property
    def records(self) -> tuple[CallRecord, ...]:
        """Every committed call's record so far (also in ``log`` when one was given)."""
        return tuple(self.session.records)

    def __call__(self, context: Any, request: Any) -> None:
        contents = _contents(request)
        wire, places = _wire(contents)
        self._settle(wire)
        call, _ = self.endpoint.prepare({**self._head, "messages": wire})
        if call is None:  # (the core reads any list: never, but then the contents go as they are)
            return
        pending = call.pending
        fresh = pending.given[pending.seen:]
        # where each item the policy was given came from among the contents: the history, as the last
        # call sent it (a summary gives its items fresh origins, so they are followed call to call)
        known = self._sources if len(pending.request) > len(fresh) else ()
        given = [*known, *(places.get(item.origin) for item in fresh)]
        sources = tuple(None if at is None else given[at] for at in _align(pending.request, pending.sent.items))
        self._pending = (call, sources, wire)
        originals = {places[item.origin]: item for item in pending.given if item.origin in places}
        written = (_written(now, source, originals, contents) for now, source in zip(pending.sent.items, sources,
                                                                                     strict=True))
        request.contents = [item for item in written if item is not None]

    def done(self, usage: Any = None, reply: Iterable[Any] | None = None) -> CallRecord | None:
        """The provider took the call the hook prepared last: commit it now, with the provider's
        ``usage`` (its counts, logged as they came) and, for the log, its ``reply`` (the items the
        agent appends for it: the last call's reply is in the log only so). None: no call was waiting."""
        if self._pending is None:
            return None
        self._commit(self._pending, _Taken(_wire(list(reply))[0] if reply is not None else None, usage))
        return self.session.records[-1]

    def _settle(self, wire: list[dict[str, Any]]) -> None:
        """Commit the call prepared last when these contents show the provider took it: they differ
        from its own (the same contents again is that call retried). Its reply is the assistant
        messages that follow its contents, when they begin with them."""
        pending = self._pending
        if pending is None:
            return
        before = pending[2]
        if wire == before:
            self._pending = None
            return
        reply = None
        if wire[:len(before)] == before:
            reply = []
            for message in wire[len(before):]:
                if message["role"] != "assistant":
                    break
                reply.append(message)
        self._commit(pending, _Taken(reply or None, None))

    def _commit(self, pending: tuple[Call, tuple[int | None, ...], list[dict[str, Any]]], taken: _Taken) -> None:
        """The run moves on to the call prepared last (its request is the history the next grows)."""
        (call, self._sources, _), self._pending = pending, None
        self.endpoint.finish(call, taken)


@dataclass(frozen=True)
class _Taken:
    """What the hook knows of a call the provider took: the reply (as Chat messages) and the usage."""

    reply: list[dict[str, Any]] | None
    usage: Any


class _Chat(ChatCompletions):
    """The Chat Completions endpoint whose response is what the hook was told (``_Taken``)."""

    def reply(self, response: Any) -> list[Any] | None:
        return response.reply

    def usage(self, response: Any) -> Any:
        return response.usage


def _contents(request: Any) -> list[Any]:
    contents = getattr(request, "contents", None)
    if isinstance(contents, str | bytes | Mapping) or not isinstance(contents, Iterable):
        raise InputError("the request has no list of contents (Listing 6.5's request.contents)",
                         where="request.contents", value=type(contents).__name__)
    return list(contents)


def _kind(item: Any, where: str) -> str:
    """``call``, ``result`` or ``message``: what an item of the contents is, by the attributes the
    listing reads of it."""
    for name, attributes in FIELDS.items():
        if all(hasattr(item, attribute) for attribute in attributes):
            return name
    raise InputError(f"a {type(item).__name__} is no item of the book's contents: a message has role and content, "
                     "a tool call tool_call_id, name and arguments, a tool result tool_call_id, name, status and "
                     "content", where=where)


def _wire(contents: list[Any]) -> tuple[list[dict[str, Any]], dict[Origin, int]]:
    """The contents as Chat Completions messages, and where each item the Chat reader gives back
    came from (its origin: message and call index) among the contents."""
    messages: list[dict[str, Any]] = []
    places: dict[Origin, int] = {}
    for n, item in enumerate(contents):
        where = f"request.contents[{n}]"
        found = _kind(item, where)
        if found == "call":
            if not isinstance(item.arguments, Mapping):
                raise InputError("a tool call's arguments are not a dict", where=f"{where}.arguments",
                                 value=type(item.arguments).__name__)
            if not messages or messages[-1]["role"] != "assistant":
                messages.append({"role": "assistant", "content": None})
            calls = messages[-1].setdefault("tool_calls", [])
            places[Origin(len(messages) - 1, len(calls))] = n
            calls.append({"id": item.tool_call_id, "type": "function",
                          "function": {"name": item.name, "arguments": json.dumps(dict(item.arguments))}})
            continue
        if found == "result":
            messages.append({"role": "tool", "tool_call_id": item.tool_call_id,
                             "content": _content(item.content, f"{where}.content")})
        else:
            messages.append({"role": item.role, "content": _content(item.content, f"{where}.content")})
        places[Origin(len(messages) - 1)] = n
    return messages, places


def _content(content: Any, where: str) -> Any:
    """A string as it is; a list of strings as text parts (the listing's results hold a list)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list | tuple) and all(isinstance(part, str) for part in content):
        return [{"type": "text", "text": part} for part in content]
    raise InputError("content is neither a string nor a list of strings", where=where,
                     value=type(content).__name__)


def _align(request: tuple[Item, ...], sent: tuple[Item, ...]) -> list[int | None]:
    """For each item sent, the item of the request it is (kept, or edited in place), or None (a
    message the policy wrote). Items alike but for their origin are one item; between the ends both
    share, a middle of one length is edited in place, and one a summary shortened pairs its items
    before the summary from the left and those after it from the right."""
    limit = min(len(request), len(sent))
    head = shared(request, sent)  # (the items kept as they were, compared in C)
    while head < limit and _same(request[head], sent[head]):
        head += 1
    tail = 0
    while tail < limit - head and _same(request[-1 - tail], sent[-1 - tail]):
        tail += 1
    found: list[int | None] = [*range(head), *[None] * (len(sent) - head - tail),
                               *range(len(request) - tail, len(request))]
    old, new = len(request) - head - tail, len(sent) - head - tail
    summaries = [k for k in range(head, head + new) if is_summary(sent[k])]
    left, right = (new, 0) if old == new else \
        (summaries[0] - head, head + new - summaries[-1] - 1) if summaries else (0, 0)
    if left + right <= old:
        for k in range(left):
            found[head + k] = head + k
        for k in range(1, right + 1):
            found[head + new - k] = head + old - k
    return found


def _same(one: Item, other: Item) -> bool:
    """One item, whatever its origin (a summary reads the request again with fresh ones)."""
    return one == other or (type(one) is type(other) and dataclasses.replace(one, origin=other.origin) == other)


def _written(now: Item, source: int | None, originals: dict[int, Item], contents: list[Any]) -> Any:
    """The item of the request sent, as the caller's object: its own where the policy kept it, a
    new one of its class where the policy changed it, None for the empty assistant message a Chat
    request holds before tool calls (no item of the contents)."""
    if source is None:
        if isinstance(now, Message) and now.role == "assistant" and not content_text(now.content):
            return None
        return _new(now, contents)
    original = contents[source]
    if _same(now, originals[source]):
        return original
    found = _kind(original, f"request.contents[{source}]")
    if found == "call" and isinstance(now, ToolCall):
        return _copy(original, found, arguments=json.loads(now.arguments))
    if found == "result" and isinstance(now, ToolResult):
        return _copy(original, found, content=_back(original.content, now))
    if found == "message" and isinstance(now, Message):
        return _copy(original, found, role=now.role, content=_back(original.content, now))
    return _new(now, contents)


def _back(was: Any, now: Message | ToolResult) -> Any:
    """The content the policy sent, in the form the caller's was: a string, or a list of strings."""
    if isinstance(was, str):
        return content_text(now.content)
    if isinstance(now.content, tuple):
        return [part.text for part in now.content if part.text is not None]
    return [] if now.content is None or now.content is ABSENT else [now.content]


def _copy(original: Any, found: str, **changes: Any) -> Any:
    """A new object of ``original``'s class with ``changes``: ``dataclasses.replace`` for a
    dataclass, else the class called with the listing's fields (as the listing builds its own)."""
    if dataclasses.is_dataclass(original):
        return dataclasses.replace(original, **changes)  # type: ignore[type-var]
    return type(original)(**{name: getattr(original, name) for name in FIELDS[found]} | changes)


def _new(now: Item, contents: list[Any]) -> Any:
    """An item the policy wrote (a summary's message), made of the caller's message class."""
    if not isinstance(now, Message):
        raise InputError("the policy sent a tool call or result no item of the contents holds; the hook can write "
                         "back only the caller's own", where="request.contents", value=getattr(now, "name", ""))
    template = next((item for n, item in enumerate(contents) if _kind(item, f"request.contents[{n}]") == "message"),
                    None)
    if template is None:
        raise InputError("the policy wrote a message, and the contents hold none whose class could hold it",
                         where="request.contents")
    text = content_text(now.content)
    content = text if isinstance(template.content, str) else [text]
    try:
        return type(template)(role=now.role, content=content)
    except TypeError as exc:
        raise InputError(f"{type(template).__name__} cannot be made from role and content alone ({exc})",
                         where="request.contents") from None
