"""The seed-001 scale study through ``pytest_judgerel.Judge`` on the fake server, then its warm replay.

``items`` x 3 scales (0-5, 0-10, 0-100) x 6 judge models x 5 repeats calls (150 items: 13,500;
``--items 1111``: 99,990): ``Judge.rate_scales(items, scales, repeats=5)`` for each of 6 model
names, all served by one FakeLLMServer (own process, 50 ms latency, replies on the scale named in
the prompt), ``api_key="sk-bench"``, a fresh temporary cache in record mode, ``max_concurrency``
``--concurrency`` (default 64).  Then the whole study again in the same process from that cache
(``cache_mode="replay"``, a new client): the warm replay.

Anchors, measured in this run on ``--sample`` of the study's own request bodies: raw
``aiohttp.ClientSession`` at concurrency 16, 64 and 256 (the wire's CPU floor per call; raw
``httpx.AsyncClient`` shown beside it, on 500 of them: its CPU per call grows with concurrency), and at the
study's concurrency record mode's floor on the same calls (``benchmarks.harness.record_floor``: what the
CPU goal leaves for the client's own work).  Goals:
  * wall <= 1.3x max(latency bound = calls / concurrency x latency, raw aiohttp CPU floor = calls x
    raw aiohttp CPU per call at the study's concurrency, on one core);
  * CPU per call <= 1.5x raw aiohttp's (record mode);
  * cache <= 1 KB on disk per answer; warm replay <= 0.10 ms per call;
  * peak RSS of study plus replay <= 250 MB.

Run: python benchmarks/bench_scale_study.py [--items 150] [--latency 0.05] [--concurrency 64] [--profile]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # a script: the project root, for benchmarks.harness

from benchmarks.harness import profiling, record_floor, servers  # noqa: E402

WALL_GOAL = 1.3
CPU_GOAL = 1.5
CACHE_GOAL = 1024
REPLAY_GOAL = 0.10e-3
RSS_GOAL = 250
SCALES = ["0-5", "0-10", "0-100"]
ANCHOR_LEVELS = (16, 64, 256)


def study_items(n: int) -> list[dict]:
    return [{"id": f"s{i}", "sentence1": f"A person number {i} walks a dog in park {i % 13}.",
             "sentence2": f"Someone {i * 7 % 17} is outside with an animal {i % 5}."} for i in range(n)]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def anchors(url: str, items: list[dict], models: list[str], sample: int,
            study_conc: int) -> dict[int, dict[str, tuple[float, float]]]:
    """{concurrency: {"aiohttp"/"httpx": (CPU s per call, wall s)}} on ``sample`` of the study's bodies, and
    at ``study_conc`` also ``"floor"``: record mode's floor on those calls (``benchmarks.harness.record_floor``)."""
    from pytest_judgerel import Judge
    from pytest_judgerel.llm.wire import chat_body

    requests = []
    for i in range(sample):
        probe = Judge(model=models[i % len(models)], template="stsb", api_base=url, api_key="sk-bench")
        requests.append(probe._request(items[i % len(items)], scale=probe._judge_scale(SCALES[i % len(SCALES)]),
                                       sample_index=i))
    bodies = [chat_body(request) for request in requests]
    out = {conc: {"aiohttp": servers.raw_aiohttp_run(url, bodies, conc),
                  "httpx": servers.raw_httpx_run(url, bodies[:500], conc)}
           for conc in sorted({*ANCHOR_LEVELS, study_conc})}
    with tempfile.TemporaryDirectory(prefix="judgerel-floor-") as cache:
        out[study_conc]["floor"] = record_floor.record_floor_run(url, requests, study_conc, cache)
    return out


def run_study(url: str, items: list[dict], models: list[str], settings: object, repeats: int) -> tuple[float, float, object, int]:
    """(wall s, CPU s, the client's stats, rated cells) of the whole study through one client."""
    from pytest_judgerel import Judge
    from pytest_judgerel.llm import LLMClient

    client = LLMClient(settings)  # type: ignore[arg-type]
    before = client.stats.snapshot()
    cpu0, t0 = time.process_time(), time.perf_counter()
    cells = 0
    for model in models:
        judge = Judge(model=model, template="stsb", api_base=url, api_key="sk-bench", client=client)
        by_scale = judge.rate_scales(items, SCALES, repeats=repeats)
        cells += sum(int((r.values == r.values).sum()) for r in by_scale.values())  # only the ratings are kept
        del by_scale
    client.close()
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    return wall, cpu, client.stats.since(before), cells


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=150)
    ap.add_argument("--judges", type=int, default=6)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--sample", type=int, default=2000, help="calls of each raw anchor loop")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--top", type=int, default=25, help="rows of the profile listing")
    args = ap.parse_args()

    server, url = servers.start_server_process(args.latency, "scale")
    try:
        from pytest_judgerel import Judge
        from pytest_judgerel.llm import LLMClient, LLMSettings

        conc = args.concurrency
        items = study_items(args.items)
        models = [f"openai/judge-{j}" for j in range(args.judges)]
        anchor = anchors(url, items, models, args.sample, args.concurrency)
        calls = args.items * len(SCALES) * args.judges * args.repeats
        with tempfile.TemporaryDirectory(prefix="judgerel-scale-study-") as cache:
            with LLMClient(LLMSettings(cache_mode="off", max_concurrency=conc)) as warm:  # imports, template, pool
                Judge(model="openai/warmup", template="stsb", api_base=url, api_key="sk-bench", client=warm
                      ).rate(items[:2], repeats=1)
            rss_before = peak_rss_mb()
            profilers = profiling.start_thread_profilers() if args.profile else None
            server_cpu = servers.process_cpu_seconds(server.pid)
            wall, cpu, stats, cells = run_study(url, items, models, LLMSettings(
                cache_dir=cache, cache_mode="record", max_concurrency=conc), args.repeats)
            server_cpu = servers.process_cpu_seconds(server.pid) - server_cpu
            if profilers:
                profiling.stop_thread_profilers(profilers)
            rss_study = peak_rss_mb()
            disk = sum(p.stat().st_size for p in Path(cache).rglob("*") if p.is_file())
            r_wall, r_cpu, r_stats, r_cells = run_study(url, items, models, LLMSettings(
                cache_dir=cache, cache_mode="replay", max_concurrency=conc), args.repeats)
            rss_replay = peak_rss_mb()
    finally:
        server.terminate()
        server.wait(10)
    return report(args, calls, anchor, (wall, cpu, stats, cells, server_cpu), (r_wall, r_cpu, r_stats, r_cells),
                  (rss_before, rss_study, rss_replay), disk, profilers)


def report(args: argparse.Namespace, calls: int, anchor: dict, study: tuple, replay: tuple, rss: tuple,
           disk: int, profilers: object) -> int:
    """Print the anchors, the study, the replay and the goals; 0 when all pass."""
    conc = args.concurrency
    wall, cpu, stats, cells, server_cpu = study
    r_wall, r_cpu, r_stats, r_cells = replay
    print(f"scale study: {args.items} items x {len(SCALES)} scales x {args.judges} judges x {args.repeats} repeats "
          f"= {calls} calls, latency {args.latency * 1000:.0f} ms, concurrency {conc}, load {os.getloadavg()[0]:.2f}")
    print(f"  anchors on {args.sample} of the study's calls (CPU ms/call, wall s, raw aiohttp's wall / its latency bound):")
    for level, row in anchor.items():
        print(f"    c={level:<4} raw aiohttp {row['aiohttp'][0] * 1000:6.3f} {row['aiohttp'][1]:6.2f}s "
              f"({row['aiohttp'][1] / (args.sample / level * args.latency):.2f}x)   "
              f"raw httpx {row['httpx'][0] * 1000:6.3f} {row['httpx'][1]:6.2f}s")
    raw_cpu, floor_cpu = anchor[conc]["aiohttp"][0], anchor[conc]["floor"][0]
    latency_bound = calls / conc * args.latency
    floor = calls * raw_cpu
    bound = max(latency_bound, floor)
    print(f"  study (record): upstream {stats.misses}, hits {stats.hits}, retries {stats.retries}, rated {cells}/{calls}; "
          f"wall {wall:.2f} s, CPU {cpu:.2f} s ({cpu / calls * 1000:.3f} ms/call)")
    print(f"  CPU the study asked of this {os.cpu_count()}-core machine: judge process {cpu:.1f} s + fake server "
          f"{server_cpu:.1f} s ({server_cpu / calls * 1000:.3f} ms/call) = {cpu + server_cpu:.1f} s in {wall:.1f} s of wall "
          f"({(cpu + server_cpu) / wall:.2f} cores busy), load {os.getloadavg()[0]:.2f}")
    print(f"  replay: hits {r_stats.hits}, misses {r_stats.misses}, rated {r_cells}/{calls}; wall {r_wall:.2f} s "
          f"({r_wall / calls * 1000:.3f} ms/call), CPU {r_cpu / calls * 1000:.3f} ms/call")
    print(f"  peak RSS: {rss[0]:.0f} MB before, {rss[1]:.0f} MB after the study, {rss[2]:.0f} MB after the replay; "
          f"cache {disk / 1e6:.1f} MB on disk ({disk / max(calls, 1):.0f} bytes per answer)")
    ok_counts = cells == calls and stats.misses == calls and r_cells == calls and r_stats.hits == calls
    results = [
        ("scale_study_wall_vs_bound", wall / bound, WALL_GOAL,
         f"wall {wall:.1f} s, bound {bound:.1f} s = max(latency {latency_bound:.1f} s, raw aiohttp CPU floor {floor:.1f} s)"),
        ("scale_study_cpu_vs_raw_aiohttp", cpu / calls / raw_cpu, CPU_GOAL,
         f"{cpu / calls * 1000:.3f} vs {raw_cpu * 1000:.3f} ms/call at c={conc}"),
        ("scale_study_cache_bytes_per_answer", disk / calls / CACHE_GOAL, 1.0, f"{disk / calls:.0f} bytes, goal <= {CACHE_GOAL}"),
        ("scale_study_replay_per_call", r_wall / calls / REPLAY_GOAL, 1.0,
         f"{r_wall / calls * 1000:.3f} ms/call, goal <= {REPLAY_GOAL * 1000:.2f}"),
        ("scale_study_peak_rss", rss[2] / RSS_GOAL, 1.0, f"{rss[2]:.0f} MB, goal <= {RSS_GOAL} MB"),
    ]
    ok = ok_counts
    for name, ratio, goal, detail in results:
        verdict = "PASS" if ratio <= goal and ok_counts else "FAIL"
        ok = ok and verdict == "PASS"
        print(f"{name}: {ratio:.2f}x ({detail}) goal<={goal}x {verdict}")
    print(f"scale_study_cpu_bound: record mode's floor (raw aiohttp plus the key, the lookup, the lock and the stored "
          f"entry, benchmarks/harness/record_floor.py) {floor_cpu / raw_cpu:.2f}x raw aiohttp at c={conc}; the study "
          f"{cpu / calls / floor_cpu:.2f}x its floor; the goal leaves {CPU_GOAL - floor_cpu / raw_cpu:.2f}x of raw "
          f"for the client's own work INFO")
    if profilers:
        profiling.print_thread_profiles(profilers, ("caller thread", "LLM loop thread"), calls, args.top)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
