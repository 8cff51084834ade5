"""The judge path at the wire: ``Judge.rate`` against raw httpx on the same server, in one run.

2,000 judge calls (STS-B template, scale 0-5, 200 items x 10 repeats, concurrency 16) against one
FakeLLMServer in its own process answering after 50 ms (so the CPU figures are the client's alone):

* anchor   raw ``httpx.AsyncClient``: the same request bodies, the same concurrency, JSON in and out
           (``benchmarks.harness.servers.raw_httpx_run``);
* ours     ``Judge.rate`` through ``LLMClient`` with the default backend (``auto``: the HTTP fast path
           for this ``openai/`` endpoint), cache off and cache in record mode (a fresh folder);
* info     the same through ``backend="litellm"`` (cache off), the path every call took before.

Variants run interleaved ``--repeat`` times; the fastest of each counts (bursts of machine load
hit all alike).  Goals (issue 22): CPU per call <= 1.3x raw httpx with the cache off and <= 1.5x in
record mode; wall <= 1.25x max(latency bound, raw httpx wall), latency bound = calls /
concurrency x latency.

Run: python benchmarks/bench_wire.py [--items 200] [--repeats 10] [--latency 0.05] [--profile]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # a script: the project root, for benchmarks.harness

from benchmarks.bench_scale_study import study_items as items  # noqa: E402
from benchmarks.harness import profiling, servers  # noqa: E402

CPU_GOAL_OFF = 1.3
CPU_GOAL_RECORD = 1.5
WALL_GOAL = 1.25


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=3, help="interleaved runs of each variant; the fastest counts")
    ap.add_argument("--no-litellm", action="store_true", help="skip the informational litellm-backend run")
    ap.add_argument("--profile", action="store_true", help="thread-CPU cProfile of one record-mode run")
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args()

    server, url = servers.start_server_process(args.latency, "scale")
    calls = args.items * args.repeats
    conc = args.concurrency
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

        counter = [0]

        def run_judge(mode: str, backend: str = "auto", profile: bool = False) -> tuple[float, float, object]:
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

        runs: dict[str, list[tuple[float, float]]] = {"raw": [], "off": [], "record": []}
        for _ in range(args.repeat):
            cpu_raw, wall_raw = servers.raw_httpx_run(url, bodies, conc)
            runs["raw"].append((wall_raw, cpu_raw))
            runs["off"].append(run_judge("off")[:2])
            runs["record"].append(run_judge("record")[:2])
        via_litellm = None if args.no_litellm else run_judge("off", backend="litellm")[:2]
        profilers = run_judge("record", profile=True)[2] if args.profile else None
    finally:
        server.terminate()
        server.wait(10)

    raw_wall, raw_cpu = min(runs["raw"], key=lambda r: r[1])
    off_wall, off_cpu = min(runs["off"], key=lambda r: r[1])
    rec_wall, rec_cpu = min(runs["record"], key=lambda r: r[1])
    raw_wall = min(w for w, _ in runs["raw"])
    off_wall = min(w for w, _ in runs["off"])
    rec_wall = min(w for w, _ in runs["record"])
    latency_bound = calls / conc * args.latency
    wall_bound = max(latency_bound, raw_wall)
    print(f"wire: {args.items} items x {args.repeats} repeats = {calls} judge calls (STS-B, 0-5), latency "
          f"{args.latency * 1000:.0f} ms, concurrency {conc}, best of {args.repeat}, load {os.getloadavg()[0]:.2f}")
    print(f"  raw httpx:          CPU {raw_cpu * 1000:.2f} ms/call, wall {raw_wall:.2f} s")
    print(f"  judge, cache off:   CPU {off_cpu * 1000:.2f} ms/call, wall {off_wall:.2f} s")
    print(f"  judge, record:      CPU {rec_cpu * 1000:.2f} ms/call, wall {rec_wall:.2f} s")
    if via_litellm is not None:
        print(f"  info: judge through litellm (cache off): CPU {via_litellm[1] * 1000:.2f} ms/call "
              f"({via_litellm[1] / raw_cpu:.2f}x raw), wall {via_litellm[0]:.2f} s ({via_litellm[0] / wall_bound:.2f}x bound)")
    print(f"  latency bound {latency_bound:.2f} s; raw httpx wall {raw_wall:.2f} s -> wall bound {wall_bound:.2f} s")
    results = [
        ("wire_cpu_cache_off_vs_raw_httpx", off_cpu / raw_cpu, CPU_GOAL_OFF,
         f"{off_cpu * 1000:.2f} vs {raw_cpu * 1000:.2f} ms/call"),
        ("wire_cpu_record_vs_raw_httpx", rec_cpu / raw_cpu, CPU_GOAL_RECORD,
         f"{rec_cpu * 1000:.2f} vs {raw_cpu * 1000:.2f} ms/call"),
        ("wire_wall_cache_off_vs_bound", off_wall / wall_bound, WALL_GOAL,
         f"{off_wall:.2f} s vs max(latency {latency_bound:.2f} s, raw {raw_wall:.2f} s)"),
        ("wire_wall_record_vs_bound", rec_wall / wall_bound, WALL_GOAL,
         f"{rec_wall:.2f} s vs max(latency {latency_bound:.2f} s, raw {raw_wall:.2f} s)"),
    ]
    ok = True
    for name, ratio, goal, detail in results:
        verdict = "PASS" if ratio <= goal else "FAIL"
        ok = ok and verdict == "PASS"
        print(f"{name}: {ratio:.2f}x ({detail}) goal<={goal}x {verdict}")
    if profilers:
        profiling.print_thread_profiles(profilers, ("caller thread", "LLM loop thread"), calls, args.top)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
