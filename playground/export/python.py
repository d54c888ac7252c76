"""The Python export: the current rules and settings with a standard-library compactor, as one
module a person can drop into their agent and call on every request.

The compactor is ``compactor.py``'s own source (linted and tested as part of the playground);
the export adds the rules, tool patterns, error patterns, value cap, threshold, keep_recent and
min_tokens as one ``CONFIG`` literal, and a ``compact`` that uses it.
"""

from __future__ import annotations

import pprint
from pathlib import Path
from typing import Any

from ..compaction import Settings
from ..meter import claude
from ..meter.accounting import accounting_for
from ..meter.tokens import Meter
from ..rules.ruleset import Rules, Template
from . import compactor

HEADER = '''"""Compaction rules and compactor exported from Compaction Playground (standard library only).

    from compactor import compact
    request = compact(request, format="chat")   # or "responses", "anthropic"

or, from the command line (the format is detected; --vocab: see "Token counts" below):

    python compactor.py IN.json -o OUT.json [--format chat|responses|anthropic] [--vocab o200k_base.tiktoken]

``compact`` takes a Chat Completions message list or request, a Responses ``input`` list or
request, or an Anthropic Messages list or request, and returns a compacted copy (the argument is
never changed). Tool results the model has read become short references chosen by the rules
below; a call's large argument is replaced once the model has read its result; errors, the
newest ``keep_recent`` tool uses the model has read, tool uses it has not read yet, items under a
rule's ``min_tokens`` and replacements that would not be smaller are left alone, exactly as the
playground does.

Token counts: pass ``count_tokens(text) -> int``, a plain tiktoken count with the encoding in
``CONFIG["encoding"]``. Offline — ``tiktoken.get_encoding`` downloads its vocabulary, which fails
without internet — build it from a local copy of the vocabulary file (``pip install tiktoken``;
the file is OpenAI's ``o200k_base.tiktoken``, or the playground's
``playground/vocab/o200k_base.tiktoken.gz``):

    from compactor import compact, tiktoken_counter
    count = tiktoken_counter("o200k_base.tiktoken", CONFIG["encoding"])
    request = compact(request, format="chat", count_tokens=count)

With that counter the output is exactly the playground's. Without one, a rough estimate of one
token per four characters decides ``min_tokens``, whether a reference is smaller, ``{tokens}``
and the threshold, so an item near one of those lines can come out differently from the
playground's export (the command line says so on stderr). For a Claude model, pass the plain
tiktoken count all the same (``o200k_base``): Claude's tokenizer is not published, so the
playground counts o200k_base tokens and scales them by a ratio fitted on billed counts; this
module applies ``CONFIG["accounting"]["text"]`` itself (do not scale your counter). ``min_tokens`` is compared
with a result's tokens and, for a call rule, with the tokens of the argument it replaces. The
threshold is compared with the count of the whole request's JSON text, an estimate that runs a
little high (the JSON syntax is counted too).
"""

'''

FOOTER = '''

def compact(messages_or_request: Any, format: str = "chat", count_tokens: Callable[[str], int] | None = None) -> Any:
    """The request compacted with CONFIG; see the module's docstring."""
    return compact_with(CONFIG, messages_or_request, format, count_tokens)


if __name__ == "__main__":
    raise SystemExit(run(CONFIG))
'''


def _pieces(template: Template) -> list[list[Any]]:
    return [[literal, field] for literal, field in template.pieces]


def accounting(model: str | None) -> dict[str, Any]:
    """The meter's per-item accounting for ``model``, as data (``min_tokens``, "not smaller"
    and ``{tokens}`` depend on it): for Claude, Anthropic's fitted constants from ``claude.py``
    — the ratio of the model's text feature (Claude tokens per o200k token) and the message,
    tool-block and tool_use-key overheads; for every other model, OpenAI's per-message and
    per-call constants."""
    if claude.is_claude(model):
        constants = claude.CONSTANTS
        return {"kind": "claude", "text": constants[claude.text_feature(str(model))], "message": constants["message"],
                "tool_block": constants["tool_block"], "tool_use_key": constants["tool_use_key"]}
    chat = accounting_for(model)
    return {"kind": "chat", "per_message": chat.per_message, "call": chat.call, "parallel": chat.parallel}


def config(rules: Rules, settings: Settings, model: str | None = None) -> dict[str, Any]:
    """Everything the exported compactor decides with, as plain data: the rules with their
    templates already parsed, the settings, and the meter's accounting for ``model``."""
    return {
        "encoding": Meter(model).choice.encoding,  # what count_tokens must count with (tiktoken_counter's)
        "threshold": settings.threshold,
        "keep_recent": settings.keep_recent,
        "compact_errors": settings.compact_errors,
        "detect_errors": settings.detect_errors,
        "value_limit": rules.value_limit,
        "error_patterns": rules.error_patterns.to_json(),
        "accounting": accounting(model),
        "tool_calls": [{"tool": r.tool, "argument": r.argument, "replacement": r.replacement.text,
                        "pieces": _pieces(r.replacement), "enabled": r.enabled, "min_tokens": r.min_tokens}
                       for r in rules.tool_calls],
        "tool_results": [{"tool": r.tool, "template": r.template.text, "pieces": _pieces(r.template),
                          "enabled": r.enabled, "min_tokens": r.min_tokens} for r in rules.tool_results],
    }


def _runtime() -> str:
    """compactor.py without its own docstring (the export has its own)."""
    source = Path(compactor.__file__).read_text(encoding="utf-8")
    return source[source.index("from __future__"):]


def export_python(rules: Rules, settings: Settings, model: str | None = None) -> str:
    """A self-contained module: the compactor, CONFIG (for ``model``'s accounting) and ``compact``."""
    literal = pprint.pformat(config(rules, settings, model), width=110, sort_dicts=False)
    return HEADER + _runtime() + "\n\nCONFIG = " + literal + "\n" + FOOTER
