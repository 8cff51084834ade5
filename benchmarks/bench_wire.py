"""The judge path at the wire: ``Judge.rate`` against raw aiohttp on the same server, in one run.

Judge calls (STS-B template, scale 0-5, 200 items x 10 repeats) at concurrency 16, 64 and 256
against one FakeLLMServer in its own process answering after 50 ms (so the CPU figures are the
client's alone):

* anchor   raw ``aiohttp.ClientSession``: the same request bodies, the same concurrency, JSON in and
           out (``benchmarks.harness.servers.raw_aiohttp_run``);
* info     raw ``httpx.AsyncClient`` beside it (its pool's CPU per call grows with concurrency);
* ours     ``Judge.rate`` through ``LLMClient`` with the default backend (``auto``: the HTTP fast path
           for this ``openai/`` endpoint), cache off and cache in record mode (a fresh folder);
* info     the same through ``backend="litellm"`` (cache off, at the first concurrency only);
* bound    record mode's floor (``benchmarks.harness.record_floor``): the anchor plus only what a
           recording client cannot skip with this cache (the key and the batch's lookup, the cross-process
           lock and, where something may have been stored since the lookup, a second read,
           the stored entry), and the same storing an entry without its request (the least any entry
           layout holds), and that with a judge's own work added (its prompts rendered, requests built,
           replies parsed: :func:`judge_own_cpu`, a tight loop).  Where even that costs more than the
           goal allows, the record goal cannot hold for this cache design, and a
           ``wire_cpu_record_bound`` line says so.

Variants run interleaved ``--repeat`` times; the fastest of each counts (bursts of machine load
hit all alike).  Goals: CPU per call <= 1.5x raw aiohttp at every concurrency (cache off and
record mode); record mode's CPU per call at the highest concurrency within 1.3x of the lowest's;
wall <= 1.25x max(latency bound, raw aiohttp wall), latency bound = calls / concurrency x latency.

Run: python benchmarks/bench_wire.py [--items 200] [--repeats 10] [--latency 0.05]
     [--concurrency 16,64,256] [--profile]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # a script: the project root, for benchmarks.harness

from benchmarks.bench_scale_study import study_items as items  # noqa: E402
from benchmarks.harness import profiling, record_floor, servers  # noqa: E402

CPU_GOAL = 1.5
FLAT_GOAL = 1.3
WALL_GOAL = 1.25


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--concurrency", default="16,64,256", help="comma-separated concurrencies")
    ap.add_argument("--repeat", type=int, default=3, help="interleaved runs of each variant; the fastest counts")
    ap.add_argument("--no-litellm", action="store_true", help="skip the informational litellm-backend run")
    ap.add_argument("--profile", action="store_true", help="thread-CPU cProfile of one record-mode run")
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args()

    server, url = servers.start_server_process(args.latency, "scale")
    calls = args.items * args.repeats
    levels = [int(c) for c in str(args.concurrency).split(",")]
    rows: dict[int, dict[str, tuple[float, float]]] = {}
    via_litellm = profilers = None
    try:
        from pytest_judgerel import Judge
        from pytest_judgerel.llm import LLMClient, LLMSettings
        from pytest_judgerel.llm.wire import chat_body

        data = items(args.items)
        model = "openai/bench-judge"

        def judge(client: LLMClient) -> Judge:
            return Judge(model=model, template="stsb", scale="0-5", api_base=url, api_key="sk-bench", client=client)

        # the anchor's bodies: exactly what the judge sends, item by item, repeat by repeat
        probe = judge(LLMClient(LLMSettings(cache_mode="off")))
        scale = probe._judge_scale("0-5")
        one_round = [chat_body(probe._request(item, scale=scale)) for item in data]
        bodies = [b for _ in range(args.repeats) for b in one_round]
        # the floor's requests: every repeat its own cache entry, as the judge's are
        requests = [probe._request(item, scale=scale, sample_index=r) for r in range(args.repeats) for item in data]
        own = judge_own_cpu(probe, data, scale, args.repeats)
        counter = [0]

        def run_floor(store: str, conc: int) -> tuple[float, float]:
            with tempfile.TemporaryDirectory(prefix="judgerel-floor-") as cache:
                cpu, wall = record_floor.record_floor_run(url, requests, conc, cache, store=store)
            return wall, cpu

        def run_judge(mode: str, conc: int, backend: str = "auto", profile: bool = False) -> tuple[float, float, object]:
            counter[0] += 1
            with tempfile.TemporaryDirectory(prefix="judgerel-wire-") as cache:
                client = LLMClient(LLMSettings(cache_dir=cache, cache_mode=mode, max_concurrency=conc,
                                               backend=backend))
                j = judge(client)
                j.with_(namespace=f"warm{counter[0]}").rate(data[:conc], repeats=1)  # pool, imports, template
                profilers = profiling.start_thread_profilers() if profile else None
                before = client.stats.snapshot()
                c0, t0 = time.process_time(), time.perf_counter()
                ratings = j.with_(namespace=f"run{counter[0]}").rate(data, repeats=args.repeats)
                wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                if profilers:
                    profiling.stop_thread_profilers(profilers)
                stats = client.stats.since(before)
                client.close()
            rated = int((ratings.values == ratings.values).sum())
            assert rated == calls and stats.misses == calls, (rated, stats)
            if backend == "auto":
                assert stats.http_calls == calls, stats
            return wall, cpu / calls, profilers

        for conc in levels:
            runs: dict[str, list[tuple[float, float]]] = {"aiohttp": [], "httpx": [], "off": [], "record": [],
                                                          "floor": [], "floor_answer": []}
            for _ in range(args.repeat):
                cpu, wall = servers.raw_aiohttp_run(url, bodies, conc)
                runs["aiohttp"].append((wall, cpu))
                cpu, wall = servers.raw_httpx_run(url, bodies, conc)
                runs["httpx"].append((wall, cpu))
                runs["off"].append(run_judge("off", conc)[:2])
                runs["record"].append(run_judge("record", conc)[:2])
                runs["floor"].append(run_floor("entry", conc))
                runs["floor_answer"].append(run_floor("answer", conc))
            rows[conc] = {k: (min(w for w, _ in v), min(c for _, c in v)) for k, v in runs.items()}
        if not args.no_litellm:
            via_litellm = run_judge("off", levels[0], backend="litellm")[:2]
        if args.profile:
            profilers = run_judge("record", levels[-1], profile=True)[2]
    finally:
        server.terminate()
        server.wait(10)
    return report(args, calls, levels, rows, via_litellm, profilers, own)


def judge_own_cpu(judge: Any, data: list, scale: Any, repeats: int, rounds: int = 3) -> float:
    """CPU seconds per call of what a judge must do beside the wire and the cache, in a tight loop (a
    lower estimate: in place the same code runs with colder caches): each item's prompt rendered once,
    a request built for every repeat, a bare-integer reply (the fake server's) parsed."""
    from pytest_judgerel.judging.parsing import try_parse

    best = float("inf")
    for _ in range(rounds):
        c0 = time.process_time()
        for item in data:
            messages = judge._messages(item, scale)
            for r in range(repeats):
                judge._request(item, scale=scale, sample_index=r, messages=messages)
                try_parse("3", judge.output, scale, judge.axes)
        best = min(best, time.process_time() - c0)
    return best / (len(data) * repeats)


def report(args: argparse.Namespace, calls: int, levels: list[int], rows: dict[int, dict[str, tuple[float, float]]],
           via_litellm: tuple[float, float] | None, profilers: object, own: float) -> int:
    """Print the table and the goals (ratios against raw aiohttp in the same run); 0 when all pass."""
    print(f"wire: {args.items} items x {args.repeats} repeats = {calls} judge calls (STS-B, 0-5), latency "
          f"{args.latency * 1000:.0f} ms, best of {args.repeat}, load {os.getloadavg()[0]:.2f}")
    columns = ("aiohttp", "httpx", "off", "record", "floor", "floor_answer")
    print(f"  {'concurrency':>11}  {'raw aiohttp':>16}  {'raw httpx':>16}  {'judge, off':>16}  {'judge, record':>16}"
          f"  {'record floor':>16}  {'floor, answer':>16}   (CPU ms/call, wall s)")
    for conc in levels:
        cells = "  ".join(f"{rows[conc][k][1] * 1000:8.2f} {rows[conc][k][0]:6.2f}s" for k in columns)
        print(f"  {conc:>11}  {cells}")
    if via_litellm is not None:
        raw = rows[levels[0]]["aiohttp"][1]
        print(f"  info: judge through litellm (cache off, concurrency {levels[0]}): CPU "
              f"{via_litellm[1] * 1000:.2f} ms/call ({via_litellm[1] / raw:.2f}x raw aiohttp), wall {via_litellm[0]:.2f} s")
    results = []
    for conc in levels:
        row = rows[conc]
        raw_wall, raw_cpu = row["aiohttp"]
        bound = max(calls / conc * args.latency, raw_wall)
        for mode in ("off", "record"):
            wall, cpu = row[mode]
            results.append((f"wire_cpu_{mode}_vs_raw_aiohttp_c{conc}", cpu / raw_cpu, CPU_GOAL,
                            f"{cpu * 1000:.2f} vs {raw_cpu * 1000:.2f} ms/call"))
            results.append((f"wire_wall_{mode}_vs_bound_c{conc}", wall / bound, WALL_GOAL,
                            f"{wall:.2f} s vs max(latency {calls / conc * args.latency:.2f} s, raw {raw_wall:.2f} s)"))
    print(f"  a judge's own work per call beside the wire and the cache (prompt rendered once per item, request "
          f"built, reply parsed; tight loop): {own * 1000:.3f} ms")
    bounds = [record_bound(conc, rows[conc], own) for conc in levels]
    lo, hi = rows[levels[0]]["record"][1], rows[levels[-1]]["record"][1]
    results.append((f"wire_cpu_record_c{levels[-1]}_vs_c{levels[0]}", hi / lo, FLAT_GOAL,
                    f"{hi * 1000:.2f} vs {lo * 1000:.2f} ms/call"))
    ok = True
    for name, ratio, goal, detail in results:
        verdict = "PASS" if ratio <= goal else "FAIL"
        ok = ok and verdict == "PASS"
        print(f"{name}: {ratio:.2f}x ({detail}) goal<={goal}x {verdict}")
    for line in bounds:
        print(line)
    if profilers:
        profiling.print_thread_profiles(profilers, ("caller thread", "LLM loop thread"), calls, args.top)
    return 0 if ok else 1


def record_bound(conc: int, row: dict[str, tuple[float, float]], own: float) -> str:
    """The INFO line of record mode's floor at ``conc``: its ratios to raw aiohttp, the same with a
    judge's own work added (``own``: :func:`judge_own_cpu`), and what they leave of the CPU goal
    (``rows[conc]`` of :func:`main`: wall and CPU per call of each variant)."""
    raw = row["aiohttp"][1]
    floor, least, record = row["floor"][1] / raw, row["floor_answer"][1] / raw, row["record"][1] / raw
    judge_least, judge_floor = least + own / raw, floor + own / raw
    if least > CPU_GOAL:
        verdict = "the goal cannot hold on this cache design, whatever an entry holds"
    elif judge_least > CPU_GOAL:
        verdict = "the goal cannot hold for a judge on this cache design, whatever an entry holds"
    elif judge_floor > CPU_GOAL:
        verdict = "the goal can hold for a judge only with an entry smaller than today's"
    else:
        verdict = f"the goal leaves {CPU_GOAL - judge_floor:.2f}x of raw for the rest of the client's work"
    return (f"wire_cpu_record_bound_c{conc}: floor {floor:.2f}x raw aiohttp (key, lookup, lock, entry stored), "
            f"{least:.2f}x storing the answer alone, {judge_least:.2f}x with a judge's own work "
            f"(+{own / raw:.2f}x); the judge {record:.2f}x, {record - floor:+.2f}x over its floor: {verdict} INFO")


if __name__ == "__main__":
    sys.exit(main())
