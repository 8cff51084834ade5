"""MindEval at benchmark size on the fake server: 50 patients x 20 turns, then the judge.

``pytest_judgerel.mindeval.run_interactions`` (patient and clinician are model names served by
one FakeLLMServer in its own process, latency L) followed by ``MindEvalJudge.score`` over the 50
conversations, with default client settings (a fresh temporary cache, max_concurrency 16).

Critical path: every conversation is 20 sequential calls and its judge call one more, so no
schedule can beat 21 L.  Per the project rule the bound is the larger of
  * the latency bound  max(21 L, calls / concurrency x L)  (with 16 slots, 1050 calls need
    at least 1050/16 L), and
  * the CPU floor      calls x CPU per call of raw ``httpx.AsyncClient`` calls with the same request
                       bodies and concurrency (same run): the least any client must spend per call.
Goal: wall <= 1.25x bound.  Run: python benchmarks/bench_mindeval.py [--patients 50] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

GOAL = 1.25
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # a script: the project root, for benchmarks.harness
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

from benchmarks.harness import profiling, servers  # noqa: E402

STORY = ("I grew up in a small town and moved to the city for work.\n\nWork has been stressful lately.\n\n"
         "I sleep badly and worry about my family.\n\nA friend suggested I talk to someone.")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--patients", type=int, default=50)
    ap.add_argument("--turns", type=int, default=20)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--cache", choices=["temp", "off"], default="temp",
                    help="a fresh temporary cache (default settings, record mode) or cache_mode='off'")
    ap.add_argument("--profile", action="store_true", help="thread-CPU cProfile of the caller and LLM loop threads")
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--sample", type=int, default=1050, help="recorded calls replayed by the raw httpx loop")
    args = ap.parse_args()

    server, url = servers.start_server_process(args.latency, "mindeval")
    # the MindEval API takes model names only: point litellm's OpenAI provider at the fake server
    os.environ["OPENAI_API_BASE"] = url
    os.environ["OPENAI_BASE_URL"] = url
    os.environ["OPENAI_API_KEY"] = "sk-bench"
    try:
        from pytest_judgerel.llm import LLMClient, LLMSettings
        from pytest_judgerel.mindeval import MindEvalJudge, run_interactions, sample_profiles

        conc = LLMSettings().max_concurrency
        profiles = [p.with_backstory(STORY) for p in sample_profiles(args.patients, 4)]
        with tempfile.TemporaryDirectory(prefix="judgerel-mindeval-bench-") as cache:
            client = LLMClient(LLMSettings(cache_dir=cache, cache_mode="record" if args.cache == "temp" else "off"))
            # warm-up outside the timing (imports, prompt files, connection pool): one short conversation
            warm = [p.with_backstory(STORY) for p in sample_profiles(1, 999)]
            run_interactions(warm, "openai/clinician-warm", client, turns=2, patient_model="openai/patient-warm")
            profilers = profiling.start_thread_profilers() if args.profile else None
            before = client.stats.snapshot()
            cpu0, t0 = time.process_time(), time.perf_counter()
            inters = run_interactions(profiles, "openai/clinician", client, turns=args.turns,
                                      patient_model="openai/patient")
            t_conv = time.perf_counter() - t0
            judge = MindEvalJudge("openai/mindeval-judge", client)
            scores = judge.score(inters)
            wall = time.perf_counter() - t0
            cpu = time.process_time() - cpu0
            if profilers:
                profiling.stop_thread_profilers(profilers)
            stats = client.stats.since(before)
            client.close()
            # CPU floor on the same calls: replay the request bodies through raw httpx
            if args.cache == "temp":
                recorded = servers.calls_from_cache(cache)
            else:  # rebuild them from the conversations (what the runner sent, system prompts included)
                recorded = servers.calls_from_interactions(inters, judge)
            cpu_per_call, raw_wall = servers.raw_httpx_run(url, servers.bodies_of(recorded, min(args.sample, len(recorded))),
                                                           conc)
            args.sample = min(args.sample, len(recorded))
    finally:
        server.terminate()
        server.wait(10)

    calls = args.patients * (args.turns + 1)
    L = args.latency
    path = (args.turns + 1) * L
    latency_bound = max(path, calls / conc * L)
    floor = calls * cpu_per_call
    bound = max(latency_bound, floor)
    ok_scores = sum(1 for s in scores if s.ok)
    turns_ok = all(len(i.turns) == args.turns + 1 for i in inters)
    print(f"cache: {args.cache}")
    print(f"mindeval: {args.patients} patients x {args.turns} turns + judge = {calls} calls, L = {L * 1000:.0f} ms, "
          f"concurrency {conc}, load {os.getloadavg()[0]:.2f}")
    print(f"  upstream calls {stats.misses} (retries {stats.retries}), conversations complete {turns_ok}, "
          f"judge scores parsed {ok_scores}/{len(scores)}")
    print(f"  wall {wall:.2f} s (conversations {t_conv:.2f} s, judge {wall - t_conv:.2f} s), process CPU {cpu:.2f} s "
          f"({cpu / calls * 1000:.2f} ms/call)")
    print(f"  critical path {args.turns + 1} L = {path:.2f} s; with {conc} slots calls/concurrency x L = {calls / conc * L:.2f} s; "
          f"raw httpx CPU/call on {args.sample} of the same calls {cpu_per_call * 1000:.2f} ms -> CPU floor {floor:.2f} s; bound = {bound:.2f} s")
    loaded_bound = max(latency_bound, calls * raw_wall / args.sample)
    print(f"  info: wall / {args.turns + 1} L = {wall / path:.2f}x; load-adjusted bound (raw loop wall/call) "
          f"{loaded_bound:.2f} s -> {wall / loaded_bound:.2f}x")
    ok = wall / bound <= GOAL and ok_scores == len(scores) == args.patients and turns_ok
    print(f"mindeval_wall_vs_bound: {wall / bound:.2f}x (wall {wall:.1f} s, bound {bound:.1f} s = max({args.turns + 1} L {path:.2f} s, "
          f"calls/conc x L {calls / conc * L:.2f} s, cpu floor {floor:.2f} s)) goal<={GOAL}x {'PASS' if ok else 'FAIL'}")
    if profilers:
        profiling.print_thread_profiles(profilers, ("caller thread (runner loop, judge)", "LLM loop thread"),
                                        args.patients * (args.turns + 1), args.top)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
