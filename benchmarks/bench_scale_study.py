"""The seed-001 scale study at full size through ``pytest_judgerel.Judge`` on the fake server.

150 items x 3 scales (0-5, 0-10, 0-100) x 6 judge models x 5 repeats = 13,500 calls:
``Judge.rate_scales(items, scales, repeats=5)`` for each of 6 model names, all served by one
FakeLLMServer (own process, 50 ms latency, replies on the scale named in the prompt), with
``api_key="sk-bench"``, a fresh temporary cache and the default ``max_concurrency=16``.

Goal: wall time within 1.25x of the critical path.  The bound is the larger of
  * the latency bound  calls / concurrency x latency, and
  * the CPU floor      calls x (CPU per call of raw ``httpx.AsyncClient`` calls with the study's own
                       request bodies and the same concurrency, measured in this run on a sample)
                       / 1 core (one event loop): the least any client must spend per call.

``--profile`` adds a cProfile of both the caller thread and the LLM loop thread and prints where
the time goes.  Run: python benchmarks/bench_scale_study.py [--items 150] [--latency 0.05]
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

from benchmarks.harness import profiling, servers  # noqa: E402

GOAL = 1.25
SCALES = ["0-5", "0-10", "0-100"]


def study_items(n: int) -> list[dict]:
    return [{"id": f"s{i}", "sentence1": f"A person number {i} walks a dog in park {i % 13}.",
             "sentence2": f"Someone {i * 7 % 17} is outside with an animal {i % 5}."} for i in range(n)]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=150)
    ap.add_argument("--judges", type=int, default=6)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--sample", type=int, default=1000, help="calls of the raw httpx loop (CPU floor)")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--top", type=int, default=25, help="rows of the profile listing")
    ap.add_argument("--cache", choices=["temp", "off"], default="temp",
                    help="a fresh temporary cache in record mode (default: the default settings) or cache_mode=off")
    args = ap.parse_args()

    server, url = servers.start_server_process(args.latency, "scale")
    try:
        from pytest_judgerel import Judge
        from pytest_judgerel.llm import LLMClient, LLMSettings
        from pytest_judgerel.llm.wire import chat_body

        conc = LLMSettings().max_concurrency  # the default
        items = study_items(args.items)
        models = [f"openai/judge-{j}" for j in range(args.judges)]
        # the CPU floor on the same calls: the study's own request bodies (items x scales x models), raw httpx
        sample = []
        for i in range(args.sample):
            probe = Judge(model=models[i % len(models)], template="stsb", api_base=url, api_key="sk-bench")
            sample.append(chat_body(probe._request(items[i % len(items)],
                                                   scale=probe._judge_scale(SCALES[i % len(SCALES)]))))
        cpu_per_call, raw_wall = servers.raw_httpx_run(url, sample, conc)
        calls = args.items * len(SCALES) * args.judges * args.repeats
        with tempfile.TemporaryDirectory(prefix="judgerel-scale-study-") as cache:
            client = LLMClient(LLMSettings(cache_dir=cache, cache_mode="record" if args.cache == "temp" else "off"))
            # warm-up outside the timing: imports, template, connection pool
            Judge(model="openai/warmup", template="stsb", api_base=url, api_key="sk-bench", client=client
                  ).rate(items[:2], repeats=1)
            profilers = profiling.start_thread_profilers() if args.profile else None
            before = client.stats.snapshot()
            cpu0, t0 = time.process_time(), time.perf_counter()
            results = {}
            for model in models:
                judge = Judge(model=model, template="stsb", api_base=url, api_key="sk-bench", client=client)
                results[model] = judge.rate_scales(items, SCALES, repeats=args.repeats)
            wall = time.perf_counter() - t0
            cpu = time.process_time() - cpu0
            if profilers:
                profiling.stop_thread_profilers(profilers)
            stats = client.stats.since(before)
            client.close()
        cells = sum(int((r.values == r.values).sum()) for by in results.values() for r in by.values())
    finally:
        server.terminate()
        server.wait(10)

    latency_bound = calls / conc * args.latency
    floor = calls * cpu_per_call / 1
    bound = max(latency_bound, floor)
    ratio = wall / bound
    print(f"cache: {args.cache}")
    print(f"scale study: {args.items} items x {len(SCALES)} scales x {args.judges} judges x {args.repeats} repeats "
          f"= {calls} calls, latency {args.latency * 1000:.0f} ms, concurrency {conc}, load {os.getloadavg()[0]:.2f}")
    print(f"  upstream calls {stats.misses}, hits {stats.hits}, retries {stats.retries}, rated cells {cells}/{calls}")
    print(f"  wall {wall:.2f} s, process CPU {cpu:.2f} s ({cpu / calls * 1000:.2f} ms/call)")
    print(f"  latency bound {latency_bound:.2f} s; raw httpx CPU/call {cpu_per_call * 1000:.2f} ms "
          f"({args.sample} of the study's calls, wall {raw_wall:.2f} s) -> CPU floor {floor:.2f} s; bound = {bound:.2f} s")
    ok = ratio <= GOAL and cells == calls and stats.misses == calls
    print(f"scale_study_wall_vs_bound: {ratio:.2f}x (wall {wall:.1f} s, bound {bound:.1f} s = max(latency "
          f"{latency_bound:.1f} s, cpu floor {floor:.1f} s)) goal<={GOAL}x {'PASS' if ok else 'FAIL'}")
    # the same raw loop's wall per call includes today's machine load (other processes on the cores)
    loaded_floor = calls * raw_wall / args.sample
    loaded_bound = max(latency_bound, loaded_floor)
    print(f"  info: raw loop wall/CPU = {raw_wall / (cpu_per_call * args.sample):.2f} (1.0 on an idle core); "
          f"load-adjusted bound max(latency, calls x raw wall/call) = {loaded_bound:.1f} s -> "
          f"wall/adjusted bound = {wall / loaded_bound:.2f}x")
    print(f"  info: CPU/call {cpu / calls * 1000:.2f} ms vs raw httpx {cpu_per_call * 1000:.2f} ms "
          f"= {cpu / calls / cpu_per_call:.2f}x")
    if profilers:
        profiling.print_thread_profiles(profilers, ("caller thread", "LLM loop thread"), calls, args.top)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
