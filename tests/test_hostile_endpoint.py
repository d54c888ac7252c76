"""A faulty endpoint cannot hang or exhaust the summarizer: ``timeout`` is a deadline on the whole
exchange (a server trickling bytes is cut off like a silent one), a reply is capped in bytes
(a 300 MB summary or a 2 GB body that is not JSON is stopped at the cap, never held), and a
connection dropped mid-reply is reported as that. Against a real local HTTP server."""

from __future__ import annotations

import json
import time
import tracemalloc

import pytest

from playground.llm.endpoint import Endpoint
from playground.llm.failure import LLMError
from playground.llm.transport import reply_cap
from playground.summarize.online import OpenAISummarizer

from .openai_stub import StubServer
from .test_summarize import cli, plan_for_tests


def _fails(model: str, timeout: float = 20.0, retries: int = 0, traced: bool = False) -> tuple[str, float, int]:
    """The message a summary from ``model``'s behaviour fails with, the seconds it took and (when
    ``traced``, which slows Python down) the most bytes Python held at once meanwhile."""
    chosen = plan_for_tests()
    with StubServer() as server:
        summarizer = OpenAISummarizer(Endpoint(model, server.base_url, timeout=timeout, max_retries=retries))
        if traced:
            tracemalloc.start()
        started = time.monotonic()
        try:
            with pytest.raises(LLMError) as caught:
                summarizer.summarize(chosen)
            elapsed = time.monotonic() - started
            peak = tracemalloc.get_traced_memory()[1] if traced else 0
        finally:
            tracemalloc.stop()
    return str(caught.value), elapsed, peak


def test_a_server_trickling_one_byte_every_half_second_is_cut_off_at_the_deadline():
    """Before, httpx's per-read timeout restarted at every byte: ``--timeout 5`` was still waiting
    at 120 s. The reply would take over two minutes; the deadline is 2 s."""
    message, elapsed, _ = _fails("trickle", timeout=2.0)
    assert elapsed < 2.0 + 1.0, f"{elapsed:.1f} s: the deadline must bound every read"
    assert "did not answer: gave up after 2.0 s" in message and "the timeout of 2 s is the whole wait" in message


@pytest.mark.parametrize("model", ["huge-summary", "endless"])
def test_a_huge_reply_is_stopped_at_the_cap_without_holding_it(model):
    """A 300 MB summary (before: 112 s and 16.3 GB) and a 2 GB body that is not JSON (4.2 GB):
    both stop after the cap, and Python never holds much more than the cap."""
    message, _, peak = _fails(model, traced=True)
    cap = reply_cap(len(plan_for_tests().prompt.encode()) + len(plan_for_tests().transcript.encode())
                    + len("History to summarize:\n\n"))
    assert f"larger than the cap of {cap:,} bytes" in message and "stopped reading there" in message
    assert peak < 4 * cap, f"held {peak:,} bytes for a cap of {cap:,}"


def test_a_connection_closed_mid_reply_says_so_not_could_not_connect():
    message, _, _ = _fails("drop", retries=1)
    assert "closed the connection before its reply was complete (2 attempts" in message
    assert "could not connect" not in message and "is the server running" not in message


def test_a_refused_connection_still_says_could_not_connect():
    with StubServer() as server:
        base_url = server.base_url
    with pytest.raises(LLMError, match=r"could not connect to 127\.0\.0\.1"):
        OpenAISummarizer(Endpoint("m", base_url, timeout=2, max_retries=0)).check()


def test_a_good_reply_still_arrives_through_the_capped_deadline_transport():
    with StubServer() as server:
        assert "connected" in OpenAISummarizer(Endpoint("m", server.base_url, timeout=5)).check()
        assert server.requests[-1]["body"]["model"] == "m"


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0", "1e9"])
def test_the_timeout_option_refuses_what_is_not_a_deadline(value, run_file):
    """Before: nan → ValueError, inf → OverflowError, -1 gave up at once, 0 silently meant no timeout."""
    done = cli("compact", str(run_file), "--summarizer", "openai", "--llm-model", "m", "--timeout", value)
    assert done.returncode == 2
    assert done.stderr == (f"python -m playground: error: argument --timeout: expected seconds, more than 0 and at "
                           f"most 3,600, got {value!r} (see --help)\n")


def test_the_command_line_gives_up_on_a_trickling_server_at_its_timeout(run_file, tmp_path):
    out = tmp_path / "out.json"
    with StubServer() as server:
        started = time.monotonic()
        done = cli("compact", str(run_file), "--threshold", "100", "--summarizer", "openai", "--llm-model", "trickle",
                   "--base-url", server.base_url, "--timeout", "2", "-o", str(out), env={"OPENAI_API_KEY": ""})
        elapsed = time.monotonic() - started
    assert done.returncode == 2 and "gave up after 2.0 s" in done.stderr and done.stderr.count("\n") == 1
    assert elapsed < 2 + 10, "the process start and the compaction take a few seconds; the wait itself is 2 s"
    assert json.loads(out.read_text())["messages"], "the compacted request is still written"
