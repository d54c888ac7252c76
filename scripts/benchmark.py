"""Benchmark: count and compact a synthetic ~1M-token agent run, against the floor.

The floor is a process that loads the encoding and makes one tiktoken pass over all the
conversation's text: no process on one thread can count it faster (the meter reads a large request
ahead on several threads, so ``count`` may come in under it). Everything is measured in this one run
(this machine is noisy, so the commands run in rounds and each ratio is the median of the
rounds' ratios, two runs made moments apart) and printed as ratios:

    python scripts/benchmark.py [--tokens 1000000] [--repeat 3]

Targets: ``count`` as a whole process ≤ 1.1× the floor process, ``compact`` ≤ 1.25× (with the
threshold at 0 it compacts, then summarizes the older history offline; ``--no-summarize`` alone is
printed too), each the median of the rounds' ratios, and
recomputing in-process after one rule changes ≤ 0.1× the in-process floor (counts are cached
per text, so only what the changed rule touched is encoded again). A whole-run ``replay``
process (every assistant turn one call; the rules policy, stored, default settings) ≤ 3× one
``compact`` process of the same conversation with default settings, and ``compare`` (every
policy) ≤ 10×; the same ratios in process (fresh engines, no start-up or parsing to share) are
printed too.

    python scripts/benchmark.py --only linear [--sizes 500,1000,2000,4000] [--repeat 1]
    python scripts/benchmark.py --only agent [--sizes 500,1000,2000] [--repeat 5]   (the wrapper beside replay)

replays every strategy in both modes with its own defaults, and compares them in both modes, on runs
of N read_file calls: each doubling's CPU-time ratio (target ≤ 2.2×), and the rules per call against the
rules stored at 2,000 calls (target ≤ 3×). ``--thinking``: the same run as Anthropic's, thinking before
every call and a user turn every 100 calls (what is billed depends on where each request ends).
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playground import formats  # noqa: E402
from playground.compaction import Settings  # noqa: E402
from playground.conversation import ToolCall, content_text  # noqa: E402
from playground.engine import Engine  # noqa: E402
from playground.meter.encodings import get_encoding  # noqa: E402
from playground.meter.tokens import Meter  # noqa: E402
from playground.policies import POLICIES, MaskingPolicy, PolicySettings, RulesPolicy, make  # noqa: E402
from playground.rules.ruleset import book_rules, load_rules, rules_to_json  # noqa: E402
from playground.run.compare import compare  # noqa: E402
from playground.run.prices import read_prices  # noqa: E402
from playground.run.replay import MODES, replay  # noqa: E402

WORDS = ("the", "solar", "grid", "storage", "battery", "capacity", "report", "analysis", "growth", "market",
         "energy", "price", "module", "inverter", "panel", "efficiency", "demand", "policy", "region", "install",
         "cost", "data", "figure", "result", "trend", "source", "annual")


def _prose(rng: random.Random, words: int) -> str:
    sentences = []
    while words > 0:
        n = rng.randint(8, 20)
        sentences.append(" ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + ".")
        words -= n
    return " ".join(sentences)


def _code(rng: random.Random, lines: int) -> str:
    return "\n".join(f"    value_{rng.randint(0, 999)} = compute({rng.randint(0, 99)}, '{rng.choice(WORDS)}')"
                     for _ in range(lines))


def synthetic(target_tokens: int, seed: int = 7) -> dict:
    """A Chat Completions request: file writes, reads, searches and shell runs, about
    ``target_tokens`` prompt tokens in 2,000+ messages."""
    rng = random.Random(seed)
    messages: list[dict] = [{"role": "system", "content": "You are a careful research and coding agent."},
                            {"role": "user", "content": "Build the solar market report and its analysis code."}]
    per_step = 1000
    for step in range(max(1, target_tokens // per_step)):
        call_id = f"call_{step:05d}"
        kind = step % 4
        if kind == 0:
            name, args, result = "create_file", {"file_path": f"report/part_{step}.md",
                                                 "content": _prose(rng, 900)}, "Saved."
        elif kind == 1:
            name, args, result = "read_file", {"path": f"src/module_{step}.py"}, _code(rng, 90)
        elif kind == 2:
            name, args, result = "search_web", {"query": f"solar {rng.choice(WORDS)} {2015 + step % 10}"}, _prose(
                rng, 900)
        else:
            name, args, result = "bash", {"command": f"pytest tests/test_{step}.py -q"}, _code(rng, 80)
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]})
        messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
        if step % 10 == 9:
            messages.append({"role": "assistant", "content": _prose(rng, 40)})
    messages.append({"role": "assistant", "content": "Done."})
    return {"model": "gpt-4o", "messages": messages}


def read_file_run(calls: int, rules: int = 0) -> dict:
    """A Chat run of ``calls`` read_file calls, each answered by a 40-line result: over a 20,000
    threshold at nearly every call, the case that made replay quadratic. ``rules``: lines of
    project rules in the system prompt (1,700 make ~22,000 tokens: every request is over 20,000
    from the first call, however much a policy takes out)."""
    system = "\n".join(["You are a coding agent.", *(f"Rule {k}: keep module {k} tidy and documented."
                                                     for k in range(rules))])
    messages: list[dict] = [{"role": "system", "content": system}, {"role": "user", "content": "Read the modules."}]
    for n in range(10_000, 10_000 + calls):  # five digits each: every call the same size at every run length
        call_id = f"call_{n}"
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": "read_file", "arguments": json.dumps({"path": f"src/mod_{n}.py"})}}]})
        messages.append({"role": "tool", "tool_call_id": call_id, "content": "\n".join(
            f"    value_{n}_{k} = compute({n}, {k})  # line {k} of module {n}" for k in range(40))})
    messages.append({"role": "assistant", "content": "Done."})
    return {"model": "gpt-4o", "messages": messages}


THINKING_MODEL = "claude-sonnet-4-5"
THINKING_TURN = 100  # calls per user turn in a thinking run: the earlier turns' thinking leaves the bill


def thinking_run(calls: int) -> dict:
    """``read_file_run`` as an Anthropic run with extended thinking: a thinking block before each call,
    billed only in its own turn, and a user message every ``THINKING_TURN`` calls that ends one (replay
    once counted every request of such a run whole: quadratic)."""
    messages: list[dict] = [{"role": "user", "content": "Read the modules."}]
    for n in range(10_000, 10_000 + calls):
        call_id = f"toolu_{n}"
        messages.append({"role": "assistant", "content": [
            {"type": "thinking", "thinking": f"Module {n} is next; its helpers may matter.", "signature": f"s{n}"},
            {"type": "tool_use", "id": call_id, "name": "read_file", "input": {"path": f"src/mod_{n}.py"}}]})
        blocks: list[dict] = [{"type": "tool_result", "tool_use_id": call_id, "content": "\n".join(
            f"    value_{n}_{k} = compute({n}, {k})  # line {k} of module {n}" for k in range(40))}]
        if (n + 1) % THINKING_TURN == 0:
            blocks.append({"type": "text", "text": f"Good. Go on from module {n + 1}."})
        messages.append({"role": "user", "content": blocks})
    messages.append({"role": "assistant", "content": [{"type": "text", "text": "Done."}]})
    return {"model": THINKING_MODEL, "system": "You are a coding agent.", "max_tokens": 4096,
            "thinking": {"type": "enabled", "budget_tokens": 2048}, "messages": messages}


# each strategy with its own defaults, as ``replay --threshold 20000 --trigger 20000`` builds it: the rules summarize
# when still over the threshold, and summarize's and hybrid's limits follow the threshold; the agents' own keep theirs
LINEAR_OPTIONS = {"threshold": 20_000, "trigger": 20_000}
# every call over the threshold (and the summarization limit) from the first: a long system prompt
STEADY_RULES = 1_700
SIZES = (500, 1000, 2000)
TARGET = 2.2  # the most a doubling of the run may multiply its replay time by (issue 33)
SLOW_CALL = 0.005  # s: --regime counts the calls over this (one that costs a part of the run's length)


def linearity(repeat: int, sizes: tuple[int, ...] = SIZES, steady: bool = False, summarize: bool = True,
              strategies: tuple[str, ...] = (), thinking: bool = False) -> None:
    """Replay (every strategy, both modes) and compare (both modes) on runs of each size: the time
    ratio of each doubling (linear: 2×), and the rules per call against the rules stored at the
    largest size up to 2,000. ``steady``: every call is over the threshold and the summarization
    limit from the first, so each doubling compares the same work per call; in the plain runs a
    policy's requests fall back under the threshold for the first few hundred calls.
    ``summarize`` False: the rules never summarize (``--no-summarize``), the rows measured before.
    ``strategies``: only these (and no compare); the rules per call against stored needs ``rules``.
    ``thinking``: the Anthropic run with extended thinking (``thinking_run``), counted for its Claude model."""
    model = THINKING_MODEL if thinking else "gpt-4o"
    price = read_prices().get(model)
    settings = PolicySettings().with_options(**LINEAR_OPTIONS, summarize=summarize)
    runs = {size: formats.read(thinking_run(size) if thinking else read_file_run(size, STEADY_RULES if steady else 0))
            for size in sizes}
    # "none" changes nothing: the replay's own work per call (each request built, counted, matched against the
    # prompt cache, read for hidden uses), which every policy's replay does too — the floor of the others
    cases = [(f"replay {name:<25} {mode:<8}", name, mode) for name in strategies or POLICIES for mode in MODES]
    cases += [] if strategies else [(f"compare, all strategies {'':<7} {mode:<8}", None, mode) for mode in MODES]
    what = ("a ~22,000-token system prompt: over the threshold and the limit at every call" if steady
            else f"Anthropic, thinking before every call, a user turn every {THINKING_TURN} calls" if thinking
            else "each strategy's defaults" if summarize else "--no-summarize")
    print(f"\nreplay on {'/'.join(f'{s:,}' for s in sizes)} read_file calls (threshold 20,000, {what}), "
          f"{repeat} round(s), CPU time, best shown; ratio per doubling, median of the rounds' (target ≤ {TARGET}×):",
          flush=True)
    # warm up first (the vocabulary loaded, the rules' patterns compiled): the first case's smallest run is no slower
    compare(runs[sizes[0]], [make(key, settings) for key in POLICIES], Engine().meter(model), price)
    times: dict[tuple[str | None, str], list[float]] = {}
    for label, name, mode in cases:
        def one(size: int, name: str | None = name, mode: str = mode) -> None:
            if name is None:
                compare(runs[size], [make(key, settings) for key in POLICIES], Engine().meter(model), price, mode=mode)
            else:
                replay(runs[size], make(name, settings), Engine().meter(model), price, mode=mode)
        rounds = [[_cpu(lambda size=size: one(size)) for size in sizes] for _ in range(repeat)]
        columns = [list(column) for column in zip(*rounds, strict=True)]
        times[name, mode] = [min(column) for column in columns]
        ratios = "  ".join(_ratio(later, earlier) for earlier, later in itertools.pairwise(columns))
        print(f"  {label} " + "  ".join(f"{min(t):6.2f} s" for t in columns) + f"   ratios {ratios}", flush=True)
    if ("rules", "stored") not in times:
        return
    at = max((k for k, size in enumerate(sizes) if size <= 2000), default=len(sizes) - 1)
    per_call, stored = times["rules", "per-call"][at], times["rules", "stored"][at]
    print(f"rules per call against rules stored at {sizes[at]:,} calls: {per_call:.2f} s / {stored:.2f} s = "
          f"{per_call / stored:.2f}×  (target ≤ 3×)", flush=True)


def regime(sizes: tuple[int, ...], strategies: tuple[str, ...], thinking: bool = False) -> None:
    """Per call, the CPU time of each call of a replay (``--regime``): the first (which counts and
    indexes the whole run), then by kind — those that write a summary, those that change the request
    otherwise (compact, mask, truncate) and those that send it unchanged — and how many took over
    ``SLOW_CALL`` and how long in all, at each size. A ratio per doubling mixes the kinds in shares
    that change with the run; these say whether each kind costs the same at every length. CPU time,
    not wall time: this shared machine's other work does not count. ``thinking``: the run of
    ``thinking_run``, counted for its Claude model."""
    model, run_of = (THINKING_MODEL, thinking_run) if thinking else ("gpt-4o", read_file_run)
    price = read_prices().get(model)
    settings = PolicySettings().with_options(**LINEAR_OPTIONS)
    print(f"\nper call, CPU time (process_time), each strategy's defaults, per-call mode"
          f"{', the --thinking run' if thinking else ''}:", flush=True)
    for name in strategies or ("rules", "hybrid"):
        replay(formats.read(run_of(sizes[0])), make(name, settings), Engine().meter(model), price,
               mode="per-call")  # warm up
        measured: list[tuple[float, dict[str, list[float]]]] = []
        for size in sizes:
            conversation = formats.read(run_of(size))
            gc.collect()
            stamps = [time.process_time()]
            run = replay(conversation, make(name, settings), Engine().meter(model), price, mode="per-call",
                         progress=lambda done, total, stamps=stamps: stamps.append(time.process_time()))
            took = [later - earlier for earlier, later in itertools.pairwise(stamps)]
            kinds: dict[str, list[float]] = {"summarizing": [], "firing": [], "unchanged": []}
            for call, spent in zip(run.calls[1:], took[1:], strict=True):
                kind = "summarizing" if call.summarization_output_tokens else "firing" if call.fired else "unchanged"
                kinds[kind].append(spent)
            slow = [t for t in took[1:] if t > SLOW_CALL]  # (calls that read a part of the run, or collect garbage)
            shown = "; ".join(f"{len(spent):>5,} {kind} {1e3 * statistics.mean(spent or [0]):5.2f} ms"
                              for kind, spent in kinds.items())
            print(f"  {name:<23} {size:>5,} calls: {stamps[-1] - stamps[0]:6.2f} s; first call {took[0]:5.2f} s; "
                  f"{shown}; {len(slow):>3} over {1e3 * SLOW_CALL:.0f} ms, {sum(slow):5.2f} s", flush=True)
            measured.append((took[0], kinds))
        for (size, one), (double, two) in itertools.pairwise(zip(sizes, measured, strict=True)):
            if (ceiling := summarizing_ceiling(one, two)) is not None:
                said = (f"at most {1e3 * ceiling:5.2f} ms a summarizing call" if ceiling >= 0
                        else "over at any cost of a summarizing call")
                print(f"  {name:<23} {size:>5,} → {double:,}: {said} for ≤ {TARGET}×, the rest as measured", flush=True)


def summarizing_ceiling(one: tuple[float, dict[str, list[float]]], two: tuple[float, dict[str, list[float]]]
                        ) -> float | None:
    """What a summarizing call may cost, in s, for a replay of the second size to take at most ``TARGET``
    times the first, every other call (and the first, which reads the whole run) as measured; None when
    the summarizing calls do not grow more than ``TARGET``-fold (then any cost of theirs only helps). A
    doubling whose later calls summarize and whose first stretch, under the limit, does not is over 2× by
    what that stretch did not spend: this says how cheap summarizing would have to be for the ratio to
    hide it (below 0: the rest alone is over)."""
    def rest(first: float, kinds: dict[str, list[float]]) -> float:
        return first + sum(sum(spent) for kind, spent in kinds.items() if kind != "summarizing")

    share = len(two[1]["summarizing"]) - TARGET * len(one[1]["summarizing"])
    return (TARGET * rest(*one) - rest(*two)) / share if share > 0 else None


def _cpu(run) -> float:
    """The CPU time of ``run`` (``process_time``: every thread of this process, none of this shared
    machine's other work, which moved one round's wall time of one size by more than a doubling's
    excess over 2×), from a collected heap, so each size starts from the same garbage collector."""
    gc.collect()
    start = time.process_time()
    run()
    return time.process_time() - start


def _best(repeat: int, run) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def _process(*args: str) -> None:
    subprocess.run([sys.executable, *args], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)


def _interleaved(repeat: int, commands: list[tuple[str, ...]]) -> list[list[float]]:
    """Each command's time in each round: the commands run in turn, round after round, so a slow
    spell of this noisy machine hits the commands of one round alike rather than one of them."""
    rounds = []
    for _ in range(repeat):
        times = []
        for command in commands:
            start = time.perf_counter()
            _process(*command)
            times.append(time.perf_counter() - start)
        rounds.append(times)
    return [list(column) for column in zip(*rounds, strict=True)]


def _ratio(times: list[float], against: list[float]) -> str:
    """The median of the per-round ratios, with their range: each pairs two runs made moments apart,
    which the best of each, taken in different rounds, does not."""
    ratios = sorted(a / b for a, b in zip(times, against, strict=True))
    middle = statistics.median(ratios)
    spread = f" ({ratios[0]:.2f}–{ratios[-1]:.2f})" if len(ratios) > 1 else ""
    return f"{middle:4.2f}×{spread}"


def all_text(conversation: formats.Conversation) -> str:
    return "".join(item.arguments if isinstance(item, ToolCall) else content_text(item.content)
                   for item in conversation.items)


def _linear_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``--only linear``."""
    parser.add_argument("--sizes", type=lambda text: tuple(int(size) for size in text.split(",")), default=SIZES,
                        help="with --only linear: the run lengths, each twice the last (500,1000,2000,4000)")
    parser.add_argument("--steady", action="store_true", help="with --only linear: runs over the threshold at every "
                                                             "call from the first (a long system prompt)")
    parser.add_argument("--no-summarize", action="store_true", help="with --only linear: the rules never summarize")
    parser.add_argument("--thinking", action="store_true", help="with --only linear: an Anthropic run with thinking "
                        "before every call and a user turn every 100 calls (Claude's meter)")
    parser.add_argument("--strategies", type=lambda text: tuple(text.split(",")), default=(),
                        help="with --only linear: replay only these strategies (comma-separated), no compare")
    parser.add_argument("--regime", action="store_true", help="with --only linear: instead, each call's CPU time "
                        "per call, summarizing calls and others apart (rules and hybrid unless --strategies)")


def _agent(sizes: tuple[int, ...], repeat: int) -> None:
    """``--only agent``: the wrapper beside replay (``benchmark_agent``), on its own sizes unless given."""
    from scripts.benchmark_agent import SIZES as AGENT_SIZES
    from scripts.benchmark_agent import report
    report(AGENT_SIZES if sizes == SIZES else sizes, repeat=repeat)


def _part(args: argparse.Namespace) -> bool:
    """``--only agent`` and ``--only linear`` (with ``--regime`` or not): run it; False for the rest."""
    if args.only == "agent":
        _agent(args.sizes, args.repeat)
    elif args.only == "linear" and args.regime:
        regime(args.sizes, args.strategies, thinking=args.thinking)
    elif args.only == "linear":
        linearity(args.repeat, args.sizes, steady=args.steady, summarize=not args.no_summarize,
                  strategies=args.strategies, thinking=args.thinking)
    return args.only in ("agent", "linear")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=1_000_000, help="size of the synthetic conversation")
    parser.add_argument("--repeat", type=int, default=5, help="repeats per timing (the best is kept)")
    parser.add_argument("--only", choices=("linear", "1m", "agent"), help="run only this part: linear = replay "
                        "(every strategy, both modes) and compare on runs of 500, 1,000 and 2,000 calls; 1m = the "
                        "~1M-token processes and in-process figures; agent = the wrapper's added time per call beside "
                        "replay's (500, 1,000 and 2,000 calls unless --sizes)")
    _linear_arguments(parser)
    args = parser.parse_args()
    if _part(args):
        return

    body = synthetic(args.tokens)
    conversation = formats.read(body)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        request, text_file = folder / "request.json", folder / "text.txt"
        request.write_text(json.dumps(body))
        text_file.write_text(all_text(conversation))
        total = Meter("gpt-4o").count(conversation).total
        print(f"synthetic request: {total:,} tokens, {len(body['messages']):,} messages, "
              f"{len(conversation.items):,} items, {request.stat().st_size / 1e6:.1f} MB")

        floor_script = ("import sys; from playground.meter.encodings import get_encoding; "
                        "text = open(sys.argv[1], encoding='utf-8').read(); "
                        "print(len(get_encoding('o200k_base').encode_ordinary(text)))")
        out = str(folder / "out.json")
        floor, count, compact_process, compact_only, compact_default, replay_process, compare_process = _interleaved(
            args.repeat, [
                ("-c", floor_script, str(text_file)),
                ("-m", "playground", "count", str(request)),
                ("-m", "playground", "compact", str(request), "--threshold", "0", "-o", out),
                ("-m", "playground", "compact", str(request), "--threshold", "0", "--no-summarize", "-o", out),
                ("-m", "playground", "compact", str(request), "-o", out),
                ("-m", "playground", "replay", str(request), "--json"),
                ("-m", "playground", "compare", str(request), "--json"),
            ])

    encoding = get_encoding("o200k_base")
    text = all_text(conversation)
    floor_in_process = _best(args.repeat, lambda: encoding.encode_ordinary(text))
    rules = book_rules()
    settings = Settings(threshold=0)
    engine = Engine()  # one engine, as a page session holds one
    engine.compact(conversation, rules, settings)  # warm the per-text cache, as a UI session is
    edited = rules_to_json(rules)
    edited["tool_results"][0]["template"] = "Read {file_path} ({lines} lines). Re-read if needed."
    changed = load_rules(edited)
    started = time.perf_counter()
    engine.compact(conversation, changed, settings)  # the first recompute: the changed rule's items re-decided
    first_recompute = time.perf_counter() - started
    recompute = _best(args.repeat, lambda: engine.compact(conversation, changed, settings))

    print(f"{args.repeat} rounds; best time shown, ratio = median of the rounds' ratios (their range)")
    print(f"floor process (load encoding + one pass):   {min(floor):6.2f} s")
    print(f"count process:      {min(count):6.2f} s   ratio {_ratio(count, floor)}  (target ≤ 1.1×)")
    print(f"compact process:    {min(compact_process):6.2f} s   ratio {_ratio(compact_process, floor)}  "
          "(target ≤ 1.25×; threshold 0, so it also summarizes nearly everything offline)")
    print(f"  compaction only:  {min(compact_only):6.2f} s   ratio {_ratio(compact_only, floor)}  (--no-summarize)")
    print(f"compact process, default settings (threshold {Settings().threshold:,}): {min(compact_default):6.2f} s")
    print(f"  replay process (rules, stored, defaults): {min(replay_process):6.2f} s   ratio "
          f"{_ratio(replay_process, compact_default)}  (target ≤ 3×)")
    print(f"  compare process (all strategies):         {min(compare_process):6.2f} s   ratio "
          f"{_ratio(compare_process, compact_default)}  (target ≤ 10×)")
    print(f"in-process floor (one encoding pass):       {floor_in_process:6.3f} s")
    print(f"first recompute after one rule change: {first_recompute:6.3f} s   "
          f"ratio {first_recompute / floor_in_process:4.2f}×  (uncached: the changed rule's items re-decided)")
    print(f"repeat recompute (best of {args.repeat}):       {recompute:6.3f} s   "
          f"ratio {recompute / floor_in_process:4.2f}×  (decisions cached, as a rerun with nothing new)")

    _replay_ratios(conversation, args.repeat)
    if args.only != "1m":
        linearity(max(1, args.repeat // 2))


def _replay_ratios(conversation: formats.Conversation, repeat: int) -> None:
    """Replay and compare against one compact in process, each with a fresh engine (so each encodes
    the text once): stricter than the process ratios, which share start-up and parsing."""
    price = read_prices().get("gpt-4o")
    one_compact = _best(repeat, lambda: Engine().compact(conversation, book_rules(), Settings()))

    def run(policy, mode="stored"):
        return lambda: replay(conversation, policy, Engine().meter("gpt-4o"), price, mode=mode)

    stored = _best(repeat, run(RulesPolicy()))
    everything = _best(repeat, lambda: compare(conversation, [make(name) for name in POLICIES],
                                                            Engine().meter("gpt-4o"), price))
    masking_per_call = _best(max(1, repeat // 2), run(MaskingPolicy(), "per-call"))
    calls = len(replay(conversation, RulesPolicy(), Engine().meter("gpt-4o"), price).calls)
    print(f"one compact, in process (fresh engine):     {one_compact:6.3f} s   ({calls:,} calls in the run)")
    print(f"replay, rules, stored:  {stored:6.3f} s   ratio {stored / one_compact:4.2f}×")
    print(f"compare, all {len(POLICIES)} strategies, stored: {everything:6.3f} s   ratio "
          f"{everything / one_compact:4.2f}×")
    print(f"replay, masking, per-call: {masking_per_call:6.3f} s   ratio {masking_per_call / one_compact:4.2f}×  "
          "(per-call re-applies the policy to the whole prefix at every call)")


if __name__ == "__main__":
    main()
