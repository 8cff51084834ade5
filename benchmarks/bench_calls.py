"""Throughput of the LLM layer on the fake server (200 calls, 50 ms latency).

Compares, at the same concurrency:
  * ours:               LLMClient(cache_mode="off").complete_many
  * raw openai:         openai.AsyncOpenAI + asyncio.Semaphore + gather
  * bare litellm async: litellm.acompletion + asyncio.Semaphore + gather (CPU reference)
  * sequential litellm: a plain loop of litellm.completion
Goals: ours within 1.5x of raw openai; >= 8x faster than the sequential loop; our
CPU per call close to the bare litellm.acompletion loop.  The server runs in its
own process so the CPU numbers are the client's alone.

Run: python benchmarks/bench_calls.py [--calls 200] [--latency 0.05] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

SERVER = r"""
import sys, time
from pytest_judgerel.testing.fake_server import FakeLLMServer
srv = FakeLLMServer(latency=float(sys.argv[1])).start()
print(srv.url, flush=True)
time.sleep(3600)
"""


def _messages(i: int) -> list[dict]:
    return [{"role": "user", "content": f"benchmark prompt number {i}"}]


def measure(label: str, fn):
    cpu0, t0 = time.process_time(), time.perf_counter()
    fn()
    return label, time.perf_counter() - t0, time.process_time() - cpu0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each concurrent variant; the fastest counts")
    parser.add_argument("--model", default="openai/gpt-4o-mini",
                        help="model string sent to the fake server (a priced model, as users have)")
    parser.add_argument("--sequential-calls", type=int, default=None,
                        help="calls for the slow sequential loop (scaled to --calls); default = --calls")
    args = parser.parse_args()
    n, conc, model = args.calls, args.concurrency, args.model
    seq_n = args.sequential_calls or n

    server = subprocess.Popen([sys.executable, "-c", SERVER, str(args.latency)], stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().strip()
        import warnings

        warnings.simplefilter("ignore")
        import litellm
        import openai

        from pytest_judgerel.llm import LLMClient, LLMRequest, LLMSettings

        litellm.suppress_debug_info = True
        common = {"api_base": url, "api_key": "sk-bench", "timeout": 60, "max_retries": 0, "num_retries": 0}

        # warm-ups (imports, connection pools, lazy pydantic models)
        litellm.completion(model=model, messages=_messages(-1), **common)
        asyncio.run(litellm.acompletion(model=model, messages=_messages(-2), **common))
        client = LLMClient(LLMSettings(cache_dir=tempfile.mkdtemp(), cache_mode="off", max_concurrency=conc))
        client.complete(LLMRequest(model=model, messages=_messages(-3), api_base=url, api_key="sk-bench"))

        def ours():
            reqs = [LLMRequest(model=model, messages=_messages(i), api_base=url, api_key="sk-bench")
                    for i in range(n)]
            out = client.complete_many(reqs)
            assert len(out) == n and all(r.text for r in out)

        record_counter = [0]

        def ours_record_cold():
            # record mode on an empty cache: adds the key lock, the re-check and the SQLite write
            record_counter[0] += 1
            with LLMClient(LLMSettings(cache_dir=tempfile.mkdtemp(), max_concurrency=conc)) as rec:
                reqs = [LLMRequest(model=model, messages=_messages(i), api_base=url, api_key="sk-bench",
                                   namespace=str(record_counter[0])) for i in range(n)]
                assert len(rec.complete_many(reqs)) == n

        def raw_openai():
            async def run():
                aclient = openai.AsyncOpenAI(base_url=url, api_key="sk-bench", max_retries=0, timeout=60)
                sem = asyncio.Semaphore(conc)

                async def one(i):
                    async with sem:
                        r = await aclient.chat.completions.create(model=model.split("/", 1)[-1], messages=_messages(i))
                        return r.choices[0].message.content

                await one(-4)
                start = time.perf_counter()
                cpu = time.process_time()
                out = await asyncio.gather(*(one(i) for i in range(n)))
                assert len(out) == n
                await aclient.close()
                return time.perf_counter() - start, time.process_time() - cpu

            return asyncio.run(run())

        def bare_litellm_async():
            async def run():
                sem = asyncio.Semaphore(conc)

                async def one(i):
                    async with sem:
                        r = await litellm.acompletion(model=model, messages=_messages(i), **common)
                        return r.choices[0].message.content

                await one(-5)
                start = time.perf_counter()
                cpu = time.process_time()
                out = await asyncio.gather(*(one(i) for i in range(n)))
                assert len(out) == n
                return time.perf_counter() - start, time.process_time() - cpu

            return asyncio.run(run())

        def sequential_litellm():
            for i in range(seq_n):
                litellm.completion(model=model, messages=_messages(i), **common)

        runs = {"ours": [], "openai": [], "bare": [], "record": []}
        for _ in range(args.repeat):  # interleaved, so a burst of machine load hits all variants alike
            runs["ours"].append(measure("ours", ours)[1:])
            runs["openai"].append(raw_openai())
            runs["bare"].append(bare_litellm_async())
            runs["record"].append(measure("record", ours_record_cold)[1:])
        ours_wall, ours_cpu = min(runs["ours"])
        openai_wall, openai_cpu = min(runs["openai"])
        bare_wall, bare_cpu = min(runs["bare"])
        rec_wall, rec_cpu = min(runs["record"])
        _, seq_wall, seq_cpu = measure("sequential", sequential_litellm)
        seq_wall_scaled = seq_wall * n / seq_n
        client.close()
    finally:
        server.terminate()
        server.wait(10)

    print(f"best of {args.repeat} runs; {n} calls, server latency {args.latency * 1000:.0f} ms, concurrency {conc}, load {os.getloadavg()[0]:.2f}")
    rows = [("ours (LLMClient, cache off)", ours_wall, ours_cpu, n),
            ("ours (record mode, cold cache)", rec_wall, rec_cpu, n),
            ("raw openai.AsyncOpenAI", openai_wall, openai_cpu, n),
            ("bare litellm.acompletion gather", bare_wall, bare_cpu, n),
            (f"sequential litellm.completion ({seq_n} calls)", seq_wall, seq_cpu, seq_n)]
    for label, wall, cpu, count in rows:
        print(f"  {label:45s} wall {wall:7.3f} s  {count / wall:7.1f} calls/s  CPU/call {cpu / count * 1000:6.2f} ms")
    vs_openai = ours_wall / openai_wall
    vs_seq = seq_wall_scaled / ours_wall
    cpu_ratio = (ours_cpu / n) / (bare_cpu / n)
    print(f"calls_vs_raw_openai: {vs_openai:.2f}x slower  goal<=1.5x {'PASS' if vs_openai <= 1.5 else 'FAIL'}")
    print(f"calls_vs_sequential_litellm: {vs_seq:.1f}x faster  goal>=8x {'PASS' if vs_seq >= 8 else 'FAIL'}")
    print(f"cpu_per_call_vs_bare_litellm: {cpu_ratio:.2f}x  ({ours_cpu / n * 1000:.2f} ms vs {bare_cpu / n * 1000:.2f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
