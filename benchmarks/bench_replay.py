"""Warm replay of 10,000 cached calls in a fresh subprocess.

Goals: < 1 ms per call, litellm never imported, peak RSS < 200 MiB.  The cache is
filled directly with entries of the form the client writes (make_entry +
key_fields), then a subprocess replays them with cache_mode="replay", once as a
single batch (complete_many) and once call by call (complete).

Run: python benchmarks/bench_replay.py [--calls 10000]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time

REPLAY = r"""
import json, resource, sys, time
from pytest_judgerel.llm import LLMClient, LLMRequest, LLMSettings
cache_dir, n = sys.argv[1], int(sys.argv[2])
def request(i):
    return LLMRequest(model="openai/gpt-4o-mini", temperature=1.0, sample_index=i % 5, namespace="bench",
                      messages=[{"role": "system", "content": "You grade answers from 1 to 5."},
                                {"role": "user", "content": f"Question {i // 5}: is this answer helpful?"}])
requests = [request(i) for i in range(n)]
client = LLMClient(LLMSettings(cache_dir=cache_dir, cache_mode="replay"))
t0 = time.perf_counter()
batch = client.complete_many(requests)
batch_s = time.perf_counter() - t0
t0 = time.perf_counter()
single = [client.complete(r) for r in requests]
single_s = time.perf_counter() - t0
assert all(r.cached for r in batch) and [r.text for r in batch] == [r.text for r in single]
assert client.stats.misses == 0 and client.stats.hits == 2 * n
client.close()
print(json.dumps({"batch_ms_per_call": batch_s / n * 1000, "single_ms_per_call": single_s / n * 1000,
                  "litellm_imported": "litellm" in sys.modules,
                  "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "texts_ok": all(r.text == f"{i % 5 + 1}" for i, r in enumerate(batch))}))
"""


def fill(cache_dir: str, n: int) -> None:
    from pytest_judgerel.llm.backend import make_entry
    from pytest_judgerel.llm.disk_backend import DiskCacheBackend
    from pytest_judgerel.llm.keys import cache_key, key_fields
    from pytest_judgerel.llm.request import LLMRequest

    backend = DiskCacheBackend(cache_dir)
    now = time.time()
    for i in range(n):
        request = LLMRequest(model="openai/gpt-4o-mini", temperature=1.0, sample_index=i % 5, namespace="bench",
                             messages=[{"role": "system", "content": "You grade answers from 1 to 5."},
                                       {"role": "user", "content": f"Question {i // 5}: is this answer helpful?"}])
        key = cache_key(request)
        backend.set(key, make_entry(key, key_fields(request), {
            "text": f"{i % 5 + 1}", "model": "gpt-4o-mini-2024-07-18",
            "usage": {"prompt_tokens": 30, "completion_tokens": 1, "total_tokens": 31},
            "cost": 5.1e-06, "latency": 0.4, "timestamp": now, "attempts": 1}))
    backend.close()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=10_000)
    args = parser.parse_args()
    cache_dir = tempfile.mkdtemp(prefix="judgerel_replay_")
    start = time.perf_counter()
    fill(cache_dir, args.calls)
    print(f"filled {args.calls} entries in {time.perf_counter() - start:.1f} s ({cache_dir})")
    try:
        done = subprocess.run([sys.executable, "-c", REPLAY, cache_dir, str(args.calls)],
                              capture_output=True, text=True, timeout=600)
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    if done.returncode != 0:
        print(done.stderr)
        return 1
    result = json.loads(done.stdout.strip().splitlines()[-1])
    batch, single = result["batch_ms_per_call"], result["single_ms_per_call"]
    rss = result["peak_rss_mib"]
    print(f"replay_batch_ms_per_call: {batch:.3f} ms  goal<1 ms {'PASS' if batch < 1 else 'FAIL'}")
    print(f"replay_single_ms_per_call: {single:.3f} ms  goal<1 ms {'PASS' if single < 1 else 'FAIL'}")
    print(f"litellm_imported: {result['litellm_imported']}  goal False "
          f"{'PASS' if not result['litellm_imported'] else 'FAIL'}")
    print(f"peak_rss: {rss:.1f} MiB  goal<200 MiB {'PASS' if rss < 200 else 'FAIL'}")
    print(f"replayed texts correct: {result['texts_ok']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
