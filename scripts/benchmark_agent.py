"""The agent wrapper's own time per call, against replay's: an agent loop of N calls (the linear
benchmark's read_file run) through a client whose ``chat.completions.create`` answers at once with
a real ``ChatCompletion`` (no SDK, no network: the openai client's own serialising of the growing
history is quadratic over a run, the same with or without the wrapper, and would drown it), once
plain and once wrapped with ``pg.compacting``: what differs between the two loops is the wrapper.
The wrapper's added time per call is set beside ``replay --mode stored``'s per-call time on the
same run and policy, at each size, so both the ratio (target ≤ 1.2×) and its growth per doubling
(linear: 2× per doubling of the whole loop, the same time per call) are read from one run. Ratios
only: this machine is shared and noisy, so each time is the process's CPU time (on a machine
whose two cores run others' work too, wall time measures their load). A short run first loads what both load once (the
vocabulary, the price catalogue), so no size pays for it.

    nice -n 15 .venv/bin/python scripts/benchmark.py --only agent [--sizes 500,1000,2000] [--repeat 5]
    .venv/bin/python scripts/benchmark_agent.py [--sizes 500 1000 2000] [--policy rules] [--repeat 3]
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

from openai.types.chat import ChatCompletion

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import playground as pg
from scripts.benchmark import LINEAR_OPTIONS, read_file_run

SIZES = (500, 1000, 2000)
REPLY = {"id": "chatcmpl-bench", "object": "chat.completion", "created": 0, "model": "gpt-4o",
         "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
         "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


class _Completions:
    def __init__(self) -> None:
        self.reply = ChatCompletion.model_validate(REPLY)

    def create(self, **request: object) -> ChatCompletion:
        return self.reply


class _Client:
    """The shape of ``openai.OpenAI`` the wrapper uses, answering every request at once, in-process."""

    def __init__(self) -> None:
        self.chat = type("Chat", (), {})()
        self.chat.completions = _Completions()


def _loop(messages: list[dict], call_ends: list[int], create) -> float:
    """The agent's loop: the history grows by the run's own messages, one request per assistant turn."""
    history: list[dict] = []
    start = time.process_time()
    done = 0
    for end in call_ends:
        history.extend(messages[done:end])
        done = end
        create(model="gpt-4o", messages=history)
    return time.process_time() - start


def measure(size: int, policy: str, repeat: int = 1) -> tuple[float, float, float]:
    """Seconds for the plain loop, the wrapped loop and replay's stored mode on a run of ``size``
    calls, each the best of ``repeat`` runs taken in turn (each with a fresh client, policy and
    meter), so a burst of the shared machine's load falls on one run of one, not on one side."""
    request = read_file_run(size)
    messages = request["messages"]
    call_ends = [n for n, message in enumerate(messages) if message["role"] == "assistant"]
    conversation = pg.loads(json.dumps(request))
    times: list[tuple[float, float, float]] = []
    for _ in range(repeat):
        plain = _loop(messages, call_ends, _Client().chat.completions.create)
        wrapped_client = pg.compacting(_Client(), pg.make(policy, **LINEAR_OPTIONS), model="gpt-4o")
        wrapped = _loop(messages, call_ends, wrapped_client.chat.completions.create)
        start = time.process_time()
        pg.replay(conversation, pg.make(policy, **LINEAR_OPTIONS), pg.Engine().meter("gpt-4o"),
                  pg.read_prices().get("gpt-4o"), mode="stored")
        times.append((plain, wrapped, time.process_time() - start))
    return min(t[0] for t in times), min(t[1] for t in times), min(t[2] for t in times)


def report(sizes: tuple[int, ...] = SIZES, policy: str = "rules", repeat: int = 3) -> None:
    """Print, for each run length, the wrapper's added time per call, replay's per call, their
    ratio (each the best of ``repeat``), and then how the added time grows from one length to the next."""
    options = ", ".join(f"{key} {value}" for key, value in LINEAR_OPTIONS.items())
    print(f"wrapper vs replay --mode stored, policy {policy} ({options}), best of {repeat}:")
    measure(50, policy)  # (loads once what every size would otherwise pay for first)
    added = {}
    for size in sizes:
        plain, wrapped, replayed = measure(size, policy, repeat)
        added[size] = wrapped - plain
        print(f"  {size:>5,} calls: plain loop {plain:6.2f} s, wrapped {wrapped:6.2f} s, replay {replayed:6.2f} s;"
              f" added per call {1000 * added[size] / size:6.2f} ms, replay's per call "
              f"{1000 * replayed / size:6.2f} ms: {added[size] / replayed:4.2f}×", flush=True)
    for earlier, later in itertools.pairwise(sizes):
        print(f"  added time {earlier:,} → {later:,} calls: {added[later] / added[earlier]:4.2f}× "
              f"(linear: {later / earlier:.1f}×), per call {added[later] * earlier / (added[earlier] * later):4.2f}×"
              " (linear: 1.0×)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="run lengths, in calls")
    parser.add_argument("--policy", default="rules", help="the policy both replay and the wrapper run")
    parser.add_argument("--repeat", type=int, default=3, help="runs per size and side (the best is kept)")
    args = parser.parse_args()
    report(tuple(args.sizes), args.policy, args.repeat)


if __name__ == "__main__":
    main()
