"""The token view: the spans are the meter's own tokens, whole characters stay whole, split
characters show as bytes, large texts are cut, and the HTML escapes everything."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from playground.meter.tokens import Meter
from playground.present import tokenview

METER = Meter("gpt-4o")


@given(st.text(max_size=300))
def test_spans_are_the_meters_tokens(text: str):
    view = tokenview.token_spans(text, METER, limit=10_000)
    assert view.total == METER.text(text) == len(view.spans)
    assert not view.truncated
    if "\\x" not in text and all("\\x" not in span for span in view.spans):
        assert "".join(view.spans) == text  # every token whole UTF-8: the spans give back the text


def test_a_character_split_over_two_tokens_shows_as_bytes():
    text = "鿕" * 3  # a rare CJK character: o200k_base splits its three UTF-8 bytes over tokens
    tokens = METER.encoding.encode_ordinary(text)
    pieces = [METER.encoding.decode_single_token_bytes(token) for token in tokens]
    assert any(_not_utf8(piece) for piece in pieces), "pick a character the encoding splits"
    spans = tokenview.token_spans(text, METER).spans
    assert any(span.startswith("\\x") for span in spans)
    assert b"".join(bytes.fromhex(span.replace("\\x", "")) if span.startswith("\\x") else span.encode()
                    for span in spans) == text.encode()


def _not_utf8(piece: bytes) -> bool:
    try:
        piece.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def test_a_large_text_shows_its_first_tokens_and_the_true_total():
    text = "word " * 5_000
    view = tokenview.token_spans(text, METER, limit=400)
    assert len(view.spans) == 400 and view.total == METER.text(text) and view.truncated
    assert len(tokenview.token_spans(text, METER, limit=10**9).spans) == min(tokenview.CAP, view.total)
    assert view.encoding == "o200k_base"
    assert tokenview.token_spans(text, Meter("gpt-4")).encoding == "cl100k_base"


def test_the_text_drawn_is_what_the_meter_tokenizes():
    from playground.conversation import Message, ToolCall

    call = ToolCall(call_id="c1", name="create_file", arguments='{"file_path":"a.md","content":"# Title"}')
    assert tokenview.measured_text(call) == call.arguments
    assert METER.item(call) == METER.text("functions.create_file") + METER.text(call.arguments) + 4
    assert tokenview.measured_text(Message(role="user", content="hello")) == "hello"


def test_html_escapes_and_alternates():
    view = tokenview.token_spans('<script>alert("x")</script>\n&amp;', METER)
    html = tokenview.spans_html(view)
    assert "<script" not in html and "&lt;script" in html and "&amp;amp" in html
    assert html.count('class="tok tok0"') + html.count('class="tok tok1"') == len(view.spans)
    assert 'class="tok tok1"' in html and "↵" in html
    assert "tok-more" in tokenview.spans_html(tokenview.token_spans("a b " * 500, METER, limit=10))


def test_the_page_shows_an_items_tokens_and_more_on_request():
    from streamlit.testing.v1 import AppTest

    from playground.workbench.presets import list_presets

    from .conftest import ROOT

    preset = next(p for p in list_presets() if p.key == "book-report")  # the first preset: the page opens on it
    report = preset.conversation.items[3]  # the create_file call holding the ~10,000-character report
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at = at.number_input(key="tokens_item").set_value(3).run()
    assert not at.exception
    total = Meter(preset.model).text(report.arguments)  # what the meter counts as text
    heading = f"Before: **{total:,} tokens** (o200k_base; the first 400 shown)"
    assert [c.value for c in at.caption if c.value.startswith(heading)]
    assert [h.value for h in at.html if h.value.count('class="tok tok') == 400 and "tokens" in h.value]
    at = at.button(key="tokens_more_item_3_before").click().run()
    assert not at.exception
    assert [h.value for h in at.html if h.value.count('class="tok tok') == min(total, 400 + tokenview.MORE)]
