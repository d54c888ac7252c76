"""OpenAI Responses meters: images by the published rules, honest notes for what is not counted."""

from __future__ import annotations

import base64
import dataclasses
import io
import statistics

import pytest
from PIL import Image

from playground import formats
from playground.conversation import Tool, frozen
from playground.meter import images, tokens, tooldefs
from playground.refit import accuracy

from .conftest import TOKEN_COUNTS, shared


@pytest.fixture(scope="module")
def measured() -> accuracy.ProviderMeasure:
    result = accuracy.measure_provider(shared(TOKEN_COUNTS), "responses")
    assert result is not None
    return result


def data_url(width: int, height: int) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def test_median_error_without_encrypted_reasoning_is_within_ten_percent(measured):
    plain = [c for c in measured.cases if c.computable and not c.encrypted]
    assert len(plain) >= 60
    assert statistics.median(abs(c.error) for c in plain) <= 0.10
    assert statistics.median(abs(c.loo_error) for c in plain) <= 0.10


def test_every_case_with_encrypted_reasoning_says_how_it_was_counted(measured):
    encrypted = [c for c in measured.cases if c.encrypted]
    assert encrypted
    for case in encrypted:
        assert any("reasoning item" in note for note in case.estimate_because), case


def test_leave_one_out_on_the_shared_set_stays_within_three_percent(measured):
    plain = [c for c in measured.cases if c.computable and not c.encrypted and not c.repository]
    assert statistics.median(abs(c.loo_error) for c in plain) <= 0.03


CLASSES = ("strict_tool_dated", "custom_tool_grammar", "custom_tool_text", "reasoning_effort_dated",
           "reasoning_item_current", "reasoning_item_earlier")


@pytest.mark.parametrize("kind", CLASSES)
def test_each_class_has_a_real_recorded_case_within_five_percent(measured, kind):
    """tests/recorded-bills/responses.json: real recorded cassettes (see its README.md)."""
    cases = [c for c in measured.cases if c.repository and kind in c.kind]
    assert cases, kind
    assert min(abs(c.error) for c in cases) <= 0.05, [(c.counted, c.billed) for c in cases]
    assert statistics.median(abs(c.error) for c in cases) <= 0.05


def test_every_count_off_the_bill_says_why(measured):
    assert [c.number for c in measured.cases if c.counted != c.billed and not c.estimate_because] == []


def image_request(model: str, url: str, detail: str = "auto") -> dict:
    return {"model": model, "input": [{"role": "user", "content": [
        {"type": "input_text", "text": "What is this?"}, {"type": "input_image", "image_url": url, "detail": detail}]}]}


def test_tile_rule_with_detail():
    without = tokens.count(formats.read({"model": "gpt-4o", "input": [{"role": "user", "content": [
        {"type": "input_text", "text": "What is this?"}]}]}, "responses")).total
    one_tile = tokens.count(formats.read(image_request("gpt-4o", data_url(100, 100)), "responses")).total
    low = tokens.count(formats.read(image_request("gpt-4o", data_url(2000, 1000), "low"), "responses")).total
    assert one_tile - without == 85 + 170
    assert low - without == 85


def test_published_examples():
    """OpenAI's worked examples: 1024 × 1024 high detail on gpt-4o is 4 tiles (765 tokens);
    2048 × 4096 becomes 768 × 1536, 6 tiles (1105); patch models: 1024 × 1024 is 1024 patches."""
    assert images.openai_tokens("gpt-4o", 1024, 1024, "high") == 765
    assert images.openai_tokens("gpt-4o", 2048, 4096, "high") == 1105
    assert images.openai_tokens("gpt-4.1-mini", 1024, 1024) == round(1024 * 1.62 + 0.5)
    assert images.openai_tokens("gpt-4.1-mini", 1800, 2400) == pytest.approx(1452 * 1.62, abs=1)


def reasoning_request(*reasoning: dict, tail: tuple[dict, ...] = ()) -> dict:
    return {"model": "gpt-5", "input": [{"role": "user", "content": "hi"}, *reasoning,
                                        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
                                        {"type": "function_call_output", "call_id": "c1", "output": "ok"}, *tail]}


def test_reasoning_of_the_current_turn_is_billed_and_grows_with_its_content():
    short = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "g" * 2_000}
    long = {**short, "encrypted_content": "g" * 10_000}
    without = tokens.count(formats.read(reasoning_request(), "responses")).total
    counted_short = tokens.count(formats.read(reasoning_request(short), "responses"))
    counted_long = tokens.count(formats.read(reasoning_request(long), "responses")).total
    assert without < counted_short.total < counted_long
    assert any("1 reasoning item of the current turn with encrypted content" in n for n in counted_short.notes)


def test_earlier_turns_reasoning_is_not_billed_and_says_so():
    item = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "g" * 5_000}
    later = ({"role": "user", "content": "again"},)
    with_item = tokens.count(formats.read(reasoning_request(item, tail=later), "responses"))
    assert with_item.total == tokens.count(formats.read(reasoning_request(tail=later), "responses")).total
    assert any("1 reasoning item from earlier turns: not billed" in n for n in with_item.notes)


def test_reasoning_sent_by_id_is_never_a_silent_zero():
    by_id = {"type": "reasoning", "id": "rs_1", "summary": []}
    result = tokens.count(formats.read(reasoning_request(by_id, by_id), "responses"))
    assert not result.exact
    assert any(n.startswith("estimate: 2 reasoning items of the current turn sent without encrypted content")
               for n in result.notes)


def test_custom_tools_are_counted_with_their_grammar():
    tool = {"type": "custom", "name": "run_sql", "description": "Run SQL.",
            "format": {"type": "grammar", "syntax": "lark", "definition": "start: \"SELECT\" WORD"}}
    body = {"model": "gpt-5", "input": "hi", "tools": [tool]}
    bigger = {**body, "tools": [{**tool, "format": {**tool["format"], "definition": "start: " + "a " * 50}}]}
    plain = tokens.count(formats.read({"model": "gpt-5", "input": "hi"}, "responses")).total
    counted = tokens.count(formats.read(body, "responses"))
    assert counted.total - plain > 60
    assert tokens.count(formats.read(bigger, "responses")).total > counted.total
    assert any(n.startswith("custom tools:") for n in counted.notes)


def test_a_schema_reference_is_read_as_the_type_it_names():
    """A pydantic model nested in a tool's parameters arrives as ``$ref`` + ``$defs``: the model reads the
    type written out (a recursive one once), and it costs what the written-out type costs."""
    inner = {"type": "object", "properties": {"name": {"type": "string"}, "children": {
        "type": "array", "items": {"$ref": "#/$defs/Node"}}}, "required": ["name", "children"]}
    referring = {"type": "object", "properties": {"node": {"$ref": "#/$defs/Node"}}, "$defs": {"Node": inner}}
    written = {"type": "object", "properties": {"node": {**inner, "properties": {
        "name": {"type": "string"}, "children": {"type": "array", "items": {}}}}}}
    tool = Tool(name="f", parameters=frozen(referring))
    assert tooldefs.render_function(tool) == tooldefs.render_function(Tool(name="f", parameters=frozen(written)))
    assert "name: string" in tooldefs.render_function(tool)


def test_what_the_provider_stored_is_named_as_not_counted():
    body = {"model": "gpt-4.1", "previous_response_id": "resp_1", "input": [
        {"type": "item_reference", "id": "msg_1"}, {"role": "user", "content": "and then?"}]}
    result = tokens.count(formats.read(body, "responses"))
    plain = tokens.count(formats.read({"model": "gpt-4.1", "input": [{"role": "user", "content": "and then?"}]},
                                      "responses"))
    assert result.total == plain.total
    assert any(n.startswith("estimate: previous_response_id given") for n in result.notes)
    assert any(n.startswith("estimate: 1 item sent by reference (item_reference)") for n in result.notes)


def test_hosted_tools_are_named_as_not_countable():
    body = {"model": "gpt-4.1", "input": "hi", "tools": [{"type": "web_search"}, {"type": "mcp", "server_label": "x"}]}
    notes = tokens.count(formats.read(body, "responses")).notes
    assert any("not countable from the body" in n and "mcp, web_search" in n for n in notes)


def strict_request(started: str | None):
    tool = {"type": "function", "name": "f", "description": "", "strict": True,
            "parameters": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}}
    conversation = formats.read({"model": "gpt-4o", "input": "hi", "tools": [tool]}, "responses")
    return dataclasses.replace(conversation, started=started)


def test_a_dated_overhead_applies_by_the_request_date_and_an_undated_request_says_so():
    then, now, undated = (tokens.count(strict_request(d)) for d in ("2025-03-27T11:40:30Z", "2025-10-24", None))
    assert then.total - now.total == 18 + 192
    assert undated.total == now.total
    assert any("no date, counted by today's rule" in n for n in undated.notes)
    assert any("2025-03-27" in n for n in then.notes)
    assert not any("no date" in n for n in now.notes)


def test_an_image_url_without_size_says_so():
    result = tokens.count(formats.read(image_request("gpt-4o", "https://example.com/a.png"), "responses"))
    assert any("image given by URL" in note for note in result.notes)
