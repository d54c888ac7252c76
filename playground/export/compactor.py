"""The compactor the Python export ships: standard library only, working on wire JSON.

``export_python`` writes this file's source, followed by the current rules and settings as
``CONFIG`` and a one-argument ``compact``, into a module a person drops into their agent. It
mirrors ``compaction`` (its ``walker``) decision for decision (the threshold aside, which it can only estimate
without the provider's accounting), and a test runs the export against the engine on every
preset and trace, so the two cannot drift apart unnoticed. Nothing here imports the playground.
``count_tokens`` is always a plain tiktoken-style count: for Claude models the model's ratio from
``CONFIG["accounting"]`` is applied here, as the playground's meter applies it. ``tiktoken_counter``
builds one offline from a local copy of the vocabulary, and ``run`` is the command line
(``python compactor.py IN.json -o OUT.json``) the export ends with.

Items, in the engine's order: Chat — each message, then each entry of an assistant's
``tool_calls``; Responses — each ``input`` item; Anthropic — a message with string (or empty)
content, or each block of its content. A call is a ``tool_calls`` entry / ``function_call`` /
``tool_use``; a result a ``tool`` message / ``function_call_output`` / ``tool_result``.
"""

from __future__ import annotations

import argparse
import copy
import fnmatch
import gzip
import hashlib
import json
import os
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

NUMERIC = ("chars", "lines", "tokens")
KEYED = ("recall_key",)  # the key of the text replaced (playground.recall): any text once it is replaced
BUILTINS = ("tool", "call_id", *NUMERIC, *KEYED)
RECALL_KEY_CHARS = 12  # hex characters of the SHA-256 of the text's UTF-8 bytes
FALLBACKS = {"file_path": ("file_path", "path")}  # as in the book
UNKNOWN = "unknown"
ERROR_HEAD = 2000  # error patterns read the head of a result


def estimate_tokens(text: str) -> int:
    """The default counter: one token per four characters, rounded up — a rough estimate for
    English and code with OpenAI's and Anthropic's tokenizers. Pass your tokenizer's counter
    (``lambda t: len(encoding.encode_ordinary(t))`` with tiktoken) for exact decisions."""
    return (len(text) + 3) // 4


def tiktoken_counter(vocabulary: str, encoding: str = "o200k_base") -> Callable[[str], int]:
    """A ``count_tokens`` that works offline: tiktoken's own ``encoding``, its vocabulary read from
    ``vocabulary`` — the ``.tiktoken`` file OpenAI publishes for it, or a gzipped copy such as the
    playground's ``playground/vocab/o200k_base.tiktoken.gz``. Needs ``pip install tiktoken``.
    Nothing is downloaded: the file is put where tiktoken's loader looks first (a private
    ``TIKTOKEN_CACHE_DIR``, set only while the encoding is built), and tiktoken checks it against
    the hash it publishes."""
    import tiktoken  # only here: the rest of this module needs no package

    data = Path(vocabulary).read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    url = f"https://openaipublic.blob.core.windows.net/encodings/{encoding}.tiktoken"  # the key tiktoken caches under
    previous = os.environ.get("TIKTOKEN_CACHE_DIR")
    with tempfile.TemporaryDirectory() as cache:
        Path(cache, hashlib.sha1(url.encode()).hexdigest()).write_bytes(data)
        os.environ["TIKTOKEN_CACHE_DIR"] = cache
        try:
            built = tiktoken.get_encoding(encoding)
        finally:
            if previous is None:
                os.environ.pop("TIKTOKEN_CACHE_DIR", None)
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = previous
    return lambda text: len(built.encode_ordinary(text))


def tool_matches(pattern: str, name: str) -> bool:
    """An exact name, a glob (``mcp__github__*``, ``*``) or alternatives (``Read|read_file``)."""
    return any(alternative == name or (set("*?[") & set(alternative) and fnmatch.fnmatchcase(name, alternative))
               for alternative in (part.strip() for part in pattern.split("|")))


def _text(content: Any) -> str:
    """The text a model reads from a content value: a string, or the text of its blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def _parse(arguments: str) -> dict | None:
    try:
        value = json.loads(arguments)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


class _Item:
    """One item of the request: where it sits in the wire data and how to read and write it."""

    def __init__(self, kind: str, role: str, wire: dict | None = None, call_id: str = "", name: str = "",
                 is_error: bool = False, key: str = "") -> None:
        self.kind, self.role, self.wire, self.call_id, self.name = kind, role, wire, call_id, name
        self.is_error, self.key = is_error, key  # key: the wire field holding content or arguments

    def arguments(self) -> str:
        value = self.wire[self.key]
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    def set_arguments(self, arguments: dict) -> None:
        text = json.dumps(arguments, ensure_ascii=False)
        self.wire[self.key] = text if isinstance(self.wire[self.key], str) else json.loads(text)

    def content(self) -> str:
        return _text(self.wire.get(self.key))


def _chat_items(messages: list) -> list[_Item]:
    items = []
    for message in messages:
        if message.get("role") == "tool":
            items.append(_Item("result", "tool", message, message["tool_call_id"], key="content"))
            continue
        items.append(_Item("message", message.get("role", "")))
        for call in message.get("tool_calls") or []:
            items.append(_Item("call", "assistant", call["function"], call["id"], call["function"]["name"],
                               key="arguments"))
    return items


def _responses_items(entries: list) -> list[_Item]:
    items = []
    for entry in entries:
        kind = entry.get("type", "message")
        if kind == "function_call":
            items.append(_Item("call", "assistant", entry, entry["call_id"], entry["name"], key="arguments"))
        elif kind == "function_call_output":
            items.append(_Item("result", "tool", entry, entry["call_id"], key="output"))
        else:  # messages, and reasoning or hosted tool items, which speak as the assistant
            items.append(_Item("message", str(entry.get("role", "assistant"))))
    return items


def _anthropic_items(messages: list) -> list[_Item]:
    items = []
    for message in messages:
        role, content = message.get("role", ""), message.get("content")
        if isinstance(content, str) or not content:
            items.append(_Item("message", role))
            continue
        for block in content:
            kind = block.get("type")
            if kind == "tool_use":
                items.append(_Item("call", "assistant", block, block["id"], block["name"], key="input"))
            elif kind == "tool_result":
                items.append(_Item("result", "tool", block, block["tool_use_id"], is_error=bool(block.get("is_error")),
                                   key="content"))
            else:
                items.append(_Item("message", role))
    return items


def _items(request: Any, format: str) -> tuple[Any, list[_Item]]:
    """A copy of the request (never edit the caller's) and its items."""
    request = copy.deepcopy(request)
    if format == "responses":
        entries = request if isinstance(request, list) else request.get("input")
        return request, _responses_items(entries) if isinstance(entries, list) else []
    messages = request if isinstance(request, list) else request["messages"]
    if format == "chat":
        return request, _chat_items(messages)
    if format == "anthropic":
        return request, _anthropic_items(messages)
    raise ValueError(f"format must be 'chat', 'responses' or 'anthropic', not {format!r}")


def _pairs(items: list[_Item]) -> dict[int, int]:
    """Call position -> the position of the first result answering it (the most recent
    earlier call with the result's id, so reused ids pair correctly)."""
    open_calls: dict[str, int] = {}
    answers: dict[int, int] = {}
    for position, item in enumerate(items):
        if item.kind == "call":
            open_calls[item.call_id] = position
        elif item.kind == "result" and item.call_id in open_calls:
            answers.setdefault(open_calls[item.call_id], position)
    return answers


class _Template:
    def __init__(self, pieces: list) -> None:
        self.pieces = [(literal, field) for literal, field in pieces]
        self.fields = list(dict.fromkeys(field for _, field in self.pieces if field is not None))

    def render(self, values: dict[str, str]) -> str:
        return "".join(literal + (values[field] if field is not None else "") for literal, field in self.pieces)

    def matches(self, text: str, values: dict[str, str], loose: set[str]) -> bool:
        """Whether ``text`` is already this template rendered for the same call (any numbers in
        the counting fields, anything in the ``loose`` ones: the argument a call rule replaces),
        so compacting twice changes nothing."""
        if not self.pieces:
            return text == ""
        pattern = "".join(re.escape(literal) + ("" if field is None else r"\d+" if field in NUMERIC
                                                else ".*" if field in loose or field in KEYED
                                                else re.escape(values[field]))
                          for literal, field in self.pieces)
        return re.fullmatch(pattern, text, re.DOTALL) is not None


def _values(template: _Template, arguments: dict | None, builtins: dict[str, Callable[[], Any]],
            limit: int) -> dict[str, str]:
    """Values for a template's fields: built-ins first, then the call's arguments (a value over
    ``limit`` characters is cut with "…"), ``unknown`` for an argument the call lacks."""
    arguments = arguments or {}
    values = {}
    for field in template.fields:
        if field in builtins:
            values[field] = str(builtins[field]())
            continue
        key = next((k for k in FALLBACKS.get(field, (field,)) if k in arguments), None)
        if key is None:
            values[field] = UNKNOWN
            continue
        value = arguments[key]
        value = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        values[field] = value[: limit - 1] + "…" if limit and len(value) > limit else value
    return values


def _failed(item: _Item, config: dict) -> bool:
    if item.is_error:
        return True
    if not config.get("detect_errors", True):
        return False
    head = item.content()[:ERROR_HEAD]
    return any(re.search(pattern["pattern"], head, re.MULTILINE) for pattern in config["error_patterns"])


def _first_result_rule(rows: list, name: str) -> dict | None:
    return next((row for row in rows if tool_matches(row["tool"], name)), None)


def _call_rules(rows: list, name: str) -> list[dict]:
    """The first matching row per argument name, in table order."""
    found: dict[str, dict] = {}
    for row in rows:
        if tool_matches(row["tool"], name):
            found.setdefault(row["argument"], row)
    return list(found.values())


def compact_with(config: dict, request: Any, format: str = "chat",
                 count_tokens: Callable[[str], int] | None = None) -> Any:
    """``request`` (a message list or request body in ``format``) with the rules applied, as a
    new object; below ``config["threshold"]`` (estimated from the JSON text) it comes back as is."""
    count = count_tokens or estimate_tokens
    request, items = _items(request, format)
    if _text_tokens(config, count, json.dumps(request, ensure_ascii=False)) < config["threshold"]:
        return request
    _name_results(items)
    answers = _pairs(items)
    answered_by = {result: call for call, result in answers.items()}
    originals = {p: _parse(item.arguments()) for p, item in enumerate(items) if item.kind == "call"}
    errors = {p for p, item in enumerate(items) if item.kind == "result" and _failed(item, config)}
    last_assistant = max((p for p, item in enumerate(items) if item.role == "assistant"), default=-1)
    parallel = {p for p in range(len(items) - 1) if items[p].kind == items[p + 1].kind == "call"}
    parallel |= {p + 1 for p in parallel}
    read = sorted(call for call, result in answers.items() if result < last_assistant)  # tool uses the model read
    newest = read[-config["keep_recent"]:] if config["keep_recent"] else []
    protected = set(newest) | {answers[p] for p in newest}
    for position, item in enumerate(items):
        if item.kind == "result":
            rule = _first_result_rule(config["tool_results"], item.name)
            if rule is not None:
                call = answered_by.get(position)
                waiting = position >= last_assistant
                _apply(config, count, item, rule, item.content(), originals.get(call) if call is not None else None,
                       waiting, position in errors, position in protected, None, False)
        elif item.kind == "call":
            result = answers.get(position)
            for rule in _call_rules(config["tool_calls"], item.name):
                arguments = originals[position]
                value = arguments.get(rule["argument"]) if arguments else None
                text = None if value is None else value if isinstance(value, str) else json.dumps(
                    value, ensure_ascii=False)
                waiting = result is None or result >= last_assistant  # its result not in, or not read yet
                _apply(config, count, item, rule, text, _parse(item.arguments()), waiting, result in errors,
                       position in protected, rule["argument"], position in parallel)
    return request


def _name_results(items: list[_Item]) -> None:
    """Give each result its tool's name: that of the most recent earlier call with its id."""
    latest: dict[str, str] = {}
    for item in items:
        if item.kind == "call":
            latest[item.call_id] = item.name
        elif item.kind == "result":
            item.name = latest.get(item.call_id, "")


def _text_tokens(config: dict, count: Callable[[str], int], text: str) -> int:
    """Tokens of ``text`` for the model, as the playground's ``{tokens}`` shows them: the counter's
    count, times the model's ratio for Claude (whose tokenizer is estimated as o200k_base × a
    ratio fitted on billed counts)."""
    accounting = config["accounting"]
    return round(count(text) * accounting["text"]) if accounting["kind"] == "claude" else count(text)


def _item_tokens(config: dict, count: Callable[[str], int], item: _Item, body: Any, parallel: bool) -> int:
    """Tokens the item adds to the request, as the playground's meter counts them for the model
    the export was made for. ``body``: a call's arguments (JSON text), a result's content (a
    string or a list of blocks)."""
    accounting = config["accounting"]
    if accounting["kind"] == "claude":
        return _claude_tokens(accounting, count, item, body)
    if item.kind == "result":
        return accounting["per_message"] + count("tool") + count(_text(body)) + count(item.name)
    return (count("functions." + item.name) + count(body) + accounting["call"]
            + (accounting["parallel"] if parallel else 0))


def _claude_tokens(accounting: dict, count: Callable[[str], int], item: _Item, body: Any) -> int:
    """Anthropic's fitted accounting: the sum of constant × feature, rounded (Python's ``round``).

    Every call and result carries one message overhead and one tool block: compaction measures
    an item on its own, and a tool block never continues a text block. Text is counted per
    block, as the playground does. Thinking is never part of a tool item. Images, documents and
    other blocks inside a result are not mirrored: they do not cancel out (a reference replaces
    them too), but they only add to the playground's count before an edit, so this side's
    "before" can only be smaller — it may leave alone a result with images that the playground
    replaces, never replace one the playground leaves.
    """
    if item.kind == "result":
        text, keys = sum(count(block) for block in _texts(body)), 0
    else:
        text, keys = count(item.name) + count(body), _keys(_parse(body))
    # Summed in the playground's order, so the floats (and their rounding) are the same.
    return round(sum((accounting["message"], accounting["tool_block"], text * accounting["text"],
                      keys * accounting["tool_use_key"])))


def _texts(content: Any) -> list[str]:
    """The text blocks of a content value (a string is one)."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return []


def _keys(value: Any) -> int:
    """Keys of a tool_use input, nested ones too: each costs its own markup around the value."""
    if isinstance(value, dict):
        return len(value) + sum(_keys(item) for item in value.values())
    if isinstance(value, list):
        return sum(_keys(item) for item in value)
    return 0


def _loose(template: _Template, argument: str | None) -> set[str]:
    """Fields read from the very argument a call rule replaces (gone after the edit)."""
    if argument is None:
        return set()
    return {field for field in template.fields if argument in FALLBACKS.get(field, (field,))}


def _apply(config: dict, count: Callable[[str], int], item: _Item, rule: dict, text: str | None,
           arguments: dict | None, waiting: bool, failed: bool, protected: bool, argument: str | None,
           parallel: bool) -> None:
    """One rule on one item, with the engine's guards in the engine's order."""
    if not rule["enabled"] or text is None:
        return
    template = _Template(rule["pieces"])
    builtins = {"tool": lambda: item.name, "call_id": lambda: item.call_id, "chars": lambda: len(text),
                "lines": lambda: len(text.splitlines()), "tokens": lambda: _text_tokens(config, count, text),
                "recall_key": lambda: hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[
                    :RECALL_KEY_CHARS]}
    values = _values(template, arguments, builtins, config["value_limit"])
    if (template.matches(text, values, _loose(template, argument)) or waiting
            or (failed and not config["compact_errors"]) or protected):
        return
    before = _item_tokens(config, count, item, item.wire.get(item.key) if argument is None else item.arguments(),
                          parallel)
    # min_tokens: a result's item tokens; for a call rule, the replaced value as the call carries it.
    measured = before if argument is None else _text_tokens(
        config, count, json.dumps((arguments or {})[argument], ensure_ascii=False))
    if measured < rule["min_tokens"]:
        return
    replacement = template.render(values)
    if argument is None:
        if _item_tokens(config, count, item, replacement, parallel) < before:
            item.wire[item.key] = replacement
        return
    edited = {**(arguments or {}), argument: replacement}
    if _item_tokens(config, count, item, json.dumps(edited, ensure_ascii=False), parallel) < before:
        item.set_arguments(edited)


def detect_format(request: Any) -> str:
    """The API format of a request or message list: Responses (``input``, or typed items),
    Anthropic (``tool_use`` / ``tool_result`` blocks, or a top-level ``system``) or Chat."""
    if isinstance(request, dict) and "input" in request:
        return "responses"
    messages = request.get("messages") if isinstance(request, dict) else request
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise ValueError("expected a request with messages or input, or a list of messages")
    if any("role" not in m and "type" in m for m in messages):
        return "responses"
    blocks = [b for m in messages if isinstance(m.get("content"), list) for b in m["content"] if isinstance(b, dict)]
    if any(b.get("type") in ("tool_use", "tool_result") for b in blocks) or (
            isinstance(request, dict) and "system" in request):
        return "anthropic"
    return "chat"


def run(config: dict, argv: list[str] | None = None) -> int:
    """``python compactor.py IN.json -o OUT.json``: the request compacted with ``config``. Exit 2
    with one line on stderr for a file it cannot read or a request it cannot take."""
    parser = argparse.ArgumentParser(prog="compactor.py",
                                     description="Compact an LLM request with the rules exported from Compaction "
                                                 "Playground.")
    parser.add_argument("request", help="request JSON file (a request body or a message list), or - for stdin")
    parser.add_argument("-o", "--output", help="where to write the compacted request (default: stdout)")
    parser.add_argument("--format", choices=("chat", "responses", "anthropic"), help="API format (default: detected)")
    parser.add_argument("--vocab", help=f"local copy of the {config['encoding']} vocabulary "
                                        "(.tiktoken or .tiktoken.gz; needs tiktoken) for exact token counts; without "
                                        "it tokens are estimated at four characters each")
    args = parser.parse_args(argv)
    try:
        text = sys.stdin.read() if args.request == "-" else Path(args.request).read_text(encoding="utf-8")
        request = json.loads(text)
        format = args.format or detect_format(request)
        count = tiktoken_counter(args.vocab, config["encoding"]) if args.vocab else None
        out = json.dumps(compact_with(config, request, format, count), ensure_ascii=False, indent=2) + "\n"
        if args.output in (None, "-"):
            sys.stdout.write(out)
        else:
            Path(args.output).write_text(out, encoding="utf-8")
    except (OSError, ValueError, KeyError, TypeError, ImportError) as exc:
        print(f"compactor.py: error: {args.request}: {exc}", file=sys.stderr)
        return 2
    if count is None:
        print("compactor.py: note: tokens estimated at four characters each (pass --vocab for exact counts): "
              "min_tokens, 'not smaller' and the threshold may decide differently from the playground",
              file=sys.stderr)
    return 0
