"""OpenAI Responses meters: images by the published rules, honest notes for what is not counted."""

from __future__ import annotations

import base64
import io
import statistics

import pytest
from PIL import Image

from playground import formats
from playground.meter import images, tokens
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


def test_every_case_with_encrypted_reasoning_says_so(measured):
    encrypted = [c for c in measured.cases if c.encrypted]
    assert encrypted
    for case in encrypted:
        assert any("reasoning item" in note and "encrypted content not counted" in note
                   for note in case.estimate_because), case


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


def test_encrypted_reasoning_is_never_a_silent_zero():
    body = {"model": "gpt-5", "input": [
        {"role": "user", "content": "hi"},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA..."},
        {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "gAAAA..."},
        {"role": "user", "content": "again"}]}
    result = tokens.count(formats.read(body, "responses"))
    assert not result.exact
    assert "estimate: 2 reasoning items with encrypted content not counted" in result.notes


def test_an_image_url_without_size_says_so():
    result = tokens.count(formats.read(image_request("gpt-4o", "https://example.com/a.png"), "responses"))
    assert any("image given by URL" in note for note in result.notes)
