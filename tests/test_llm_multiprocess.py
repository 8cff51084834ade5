"""Cross-process single flight: several processes needing the same keys cause one upstream call per key."""

from __future__ import annotations

import json
import subprocess
import sys

from pytest_judgerel.llm.cache_admin import cache_stats
from pytest_judgerel.testing.fake_server import FakeLLMServer

WORKER = r"""
import json, sys, time
from pytest_judgerel.llm import LLMClient, LLMSettings, LLMRequest
cache_dir, url, start_at = sys.argv[1], sys.argv[2], float(sys.argv[3])
reqs = [LLMRequest(model="openai/fake", api_base=url, api_key="sk-x", temperature=1.0, sample_index=r,
                   messages=[{"role": "user", "content": f"shared item {i}"}]) for i in range(6) for r in range(2)]
client = LLMClient(LLMSettings(cache_dir=cache_dir, timeout=30))
while time.time() < start_at:   # start together so the processes really race
    time.sleep(0.005)
out = client.complete_many(reqs)
print(json.dumps({"texts": [r.text for r in out], "misses": client.stats.misses, "hits": client.stats.hits}))
client.close()
"""


def test_processes_share_one_upstream_call_per_key(tmp_path):
    import time

    cache_dir = tmp_path / "shared_cache"
    # litellm is imported inside the lock holder, which makes the race window wide
    with FakeLLMServer(latency=0.3) as srv:
        start_at = time.time() + 2.5
        procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(cache_dir), srv.url, str(start_at)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(3)]
        results = []
        for proc in procs:
            out, err = proc.communicate(timeout=180)
            assert proc.returncode == 0, err
            results.append(json.loads(out.strip().splitlines()[-1]))
        distinct_keys = 12
        assert srv.requests == distinct_keys
    assert sum(r["misses"] for r in results) == distinct_keys
    assert sum(r["hits"] for r in results) == 2 * distinct_keys
    assert results[0]["texts"] == results[1]["texts"] == results[2]["texts"]
    assert cache_stats(cache_dir).entries == distinct_keys


XDIST_TESTS = r'''
import os
import pytest
from pytest_judgerel.llm import LLMClient, LLMRequest, LLMSettings

@pytest.mark.parametrize("copy", range(4))
def test_same_keys_from_every_worker(copy):
    reqs = [LLMRequest(model="openai/fake", api_base=os.environ["FAKE_URL"], api_key="sk-x",
                       messages=[{"role": "user", "content": f"item {i}"}], temperature=1.0, sample_index=i % 2)
            for i in range(5)]
    with LLMClient(LLMSettings(cache_dir=os.environ["CACHE_DIR"], timeout=30)) as client:
        out = client.complete_many(reqs)
    assert len(out) == 5 and all(r.text.isdigit() for r in out)
'''


def test_xdist_workers_share_the_cache_without_lock_errors(tmp_path):
    import os

    (tmp_path / "test_inner.py").write_text(XDIST_TESTS)
    with FakeLLMServer(latency=0.2) as srv:
        env = {**os.environ, "FAKE_URL": srv.url, "CACHE_DIR": str(tmp_path / "cache")}
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
                               "test_inner.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "4 passed" in done.stdout
        assert srv.requests == 5
    assert "database is locked" not in done.stdout + done.stderr
