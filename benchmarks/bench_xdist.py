"""pytest-xdist speed-up on a CPU-bound reliability suite: ``-n 2`` vs ``-n 0``.

A temporary project of ``--tests`` tests (about 10 s of CPU in total, calibrated on this
machine) computes ICCs with bootstrap confidence intervals (``pytest_judgerel.stats``) on
random items x raters matrices and asserts them with ``assert_icc_above``; the plugin is
active as in a user's run.  Each variant runs ``--runs`` times (best wall counts).

Goal: speed-up (wall of -n 0 / wall of -n 2) >= 1.6x.
Run: python benchmarks/bench_xdist.py [--tests 20] [--seconds 10]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL = 1.6

WORK = r'''
import numpy as np

def judge_matrix(seed, n=40, k=4):
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0, 5, size=(n, 1))
    return np.clip(np.round(truth + rng.normal(scale=0.6, size=(n, k)), 1), 0, 5)

def bootstrap_icc(m, resamples, seed):
    from pytest_judgerel.stats import icc
    rng = np.random.default_rng(seed)
    vals = np.empty(resamples)
    for b in range(resamples):
        vals[b] = icc(m[rng.integers(0, len(m), len(m))], form="A,1").value
    return np.quantile(vals, [0.025, 0.975])
'''

TESTS = r'''
import pytest
from _work import judge_matrix, bootstrap_icc
from pytest_judgerel import assert_icc_above

@pytest.mark.parametrize("seed", range({tests}))
def test_icc_with_bootstrap_ci(seed):
    m = judge_matrix(seed)
    low, high = bootstrap_icc(m, {resamples}, seed)
    assert low <= high
    assert_icc_above(m, 0.3)
'''


def calibrate(seconds_per_test: float) -> int:
    """Bootstrap resamples that take about ``seconds_per_test`` of CPU here (in-process, once)."""
    ns: dict = {}
    exec(WORK, ns)
    m = ns["judge_matrix"](0)
    ns["bootstrap_icc"](m, 20, 0)  # warm-up: imports
    t0 = time.process_time()
    ns["bootstrap_icc"](m, 200, 0)
    per = (time.process_time() - t0) / 200
    return max(20, int(seconds_per_test / per))


def _burn(n: int) -> float:
    x = 0
    for i in range(n):
        x += i * i
    return float(x)


def machine_parallelism(n: int = 8_000_000) -> float:
    """Speed-up of 2 processes over 1 on a pure-Python loop right now (2.0 on two idle cores;
    lower when other processes hold the cores).  Printed next to the result, not used in it."""
    import multiprocessing as mp

    t0 = time.perf_counter()
    _burn(n)
    one = time.perf_counter() - t0
    with mp.get_context("spawn").Pool(2) as pool:
        pool.map(_burn, [1000, 1000])  # start-up outside the timing
        t0 = time.perf_counter()
        pool.map(_burn, [n, n])
        two = time.perf_counter() - t0
    return 2 * one / two


def run(project: Path, args: list[str]) -> float:
    env = dict(os.environ)
    env.pop("PYTEST_ADDOPTS", None)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=project,
                          capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        print(proc.stdout[-3000:], proc.stderr[-2000:])
        raise SystemExit(f"pytest {' '.join(args)} failed with exit code {proc.returncode}")
    return wall


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tests", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=30.0, help="total CPU seconds of the suite")
    ap.add_argument("--runs", type=int, default=2)
    args = ap.parse_args()
    resamples = calibrate(args.seconds / args.tests)
    with tempfile.TemporaryDirectory(prefix="judgerel-xdist-bench-") as tmp:
        project = Path(tmp)
        (project / "_work.py").write_text(WORK, encoding="utf-8")
        (project / "test_cpu.py").write_text(TESTS.format(tests=args.tests, resamples=resamples), encoding="utf-8")
        (project / "pytest.ini").write_text("[pytest]\npythonpath = .\n", encoding="utf-8")
        serial, parallel = [], []
        for _ in range(args.runs):  # interleaved, so load bursts hit both variants
            serial.append(run(project, ["-n", "0"]))
            parallel.append(run(project, ["-n", "2"]))
    s, p = min(serial), min(parallel)
    available = machine_parallelism()
    speedup = s / p
    print(f"suite: {args.tests} tests x {resamples} bootstrap ICCs (~{args.seconds:.0f} s CPU), "
          f"cores {os.cpu_count()}, load {os.getloadavg()[0]:.2f}")
    print(f"  -n 0: {', '.join(f'{w:.2f}' for w in serial)} s   -n 2: {', '.join(f'{w:.2f}' for w in parallel)} s")
    print(f"  info: 2 processes vs 1 on a pure-Python loop right now: {available:.2f}x (2.0 = two free cores); "
          f"xdist reaches {speedup / available:.0%} of that")
    ok = speedup >= GOAL
    print(f"xdist_speedup_n2_vs_n0: {speedup:.2f}x (-n 0 {s:.1f} s, -n 2 {p:.1f} s) goal>={GOAL}x "
          f"{'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
