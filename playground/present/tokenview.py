"""A text as the model sees it: one span per token, like tiktokenizer.

"Tokens" is an abstract number until you see where the boundaries fall: a path splits into
many pieces, a run of spaces into few, a word in another script into bytes. The spans are the
meter's own encoding's tokens decoded one by one, so their count is the count the meter uses
for that text. A token can hold part of a UTF-8 character (the character's bytes spread over
two tokens); such a token is shown as its bytes (``\\xe2\\x80``) rather than as a broken
character. Only the first ``limit`` tokens are decoded: a page cannot draw 50,000 spans in time.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from ..conversation import Item, ToolCall, content_text
from ..meter.tokens import Meter

DEFAULT_LIMIT = 400
MORE = 2_000  # tokens each "show more" adds
CAP = 10_000  # never decode more than this for the page (rendering 50k spans takes seconds)


@dataclass(frozen=True)
class TokenSpans:
    spans: tuple[str, ...]  # the first ``limit`` tokens, each as text (or its bytes, escaped)
    total: int  # every token of the text
    encoding: str
    truncated: bool  # there are more tokens than spans


def _shown(piece: bytes) -> str:
    """A token's text, or its bytes written out when it is not whole UTF-8 on its own."""
    try:
        return piece.decode("utf-8")
    except UnicodeDecodeError:
        return "".join(f"\\x{byte:02x}" for byte in piece)


def measured_text(item: Item) -> str:
    """The text of an item the meter tokenizes as it is: a call's arguments (its name is counted
    as ``functions.<name>``), otherwise the content. The rest of an item's count is framing."""
    return item.arguments if isinstance(item, ToolCall) else content_text(item.content)


def token_spans(text: str, meter: Meter, limit: int = DEFAULT_LIMIT) -> TokenSpans:
    """The first ``limit`` (at most ``CAP``) tokens of ``text`` as the meter's encoding splits it
    (plain text: special-token strings are just text, as the meter counts them)."""
    tokens = meter.encoding.encode_ordinary(text)
    shown = tokens[:max(0, min(limit, CAP))]
    spans = tuple(_shown(meter.encoding.decode_single_token_bytes(token)) for token in shown)
    return TokenSpans(spans, len(tokens), meter.choice.encoding, len(shown) < len(tokens))


def spans_html(view: TokenSpans) -> str:
    """The spans as alternately shaded HTML, everything escaped; whitespace stays visible
    (a newline token shows ``↵`` and breaks the line)."""
    out = []
    for index, span in enumerate(view.spans):
        shown = html.escape(span).replace("\n", "↵\n")
        out.append(f'<span class="tok tok{index % 2}">{shown}</span>')
    return (f'<div class="tokens" role="figure" aria-label="{view.total:,} tokens">{"".join(out)}'
            + ('<span class="tok-more">…</span>' if view.truncated else "") + "</div>")


STYLE = """<style>
.tokens {font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.85rem; white-space: pre-wrap;
  overflow-wrap: anywhere; line-height: 1.7; max-height: 28rem; overflow-y: auto; padding: 0.5rem;
  border: 1px solid rgba(128,128,128,0.3); border-radius: 0.4rem;}
.tokens .tok {border-radius: 2px;}
.tokens .tok0 {background: rgba(66, 135, 245, 0.22);}
.tokens .tok1 {background: rgba(245, 166, 35, 0.28);}
.tokens .tok-more {opacity: 0.6; padding-left: 0.3rem;}
</style>"""
