"""Benchmark: each tail of the corrected pass rate's 95% interval at or below its nominal 2.5%.

Run: python benchmarks/bench_pass_rate_tails.py [--reps N]

Simulation with known truth (seeded): a system with true pass rate theta is judged on n items by
a judge with specificity q0 and sensitivity q1, which are estimated on m0 + m1 human-labelled
items; :func:`pytest_judgerel.stats.corrected_pass_rate` gives the interval.  For each setting the
share of data sets whose lower limit lies above theta (the lower tail) and whose upper limit lies
below it (the upper tail) is counted, for the default score interval and, for comparison, Lee et
al.'s delta-method interval (``interval="lee"``).  Goal: every tail of the score interval at most
0.025 + 2 Monte Carlo standard errors (sqrt(0.025 * 0.975 / reps) each).  Data sets whose
calibration leaves q0 + q1 <= 1 (no correction defined) count as covered by neither tail.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from pytest_judgerel.stats.pass_rate import JudgeCalibration, corrected_pass_rate

# theta, q0 (specificity), q1 (sensitivity), n, m0, m1
SETTINGS = [
    (0.3, 0.70, 0.95, 300, 100, 100),   # lenient judge: the setting where Lee's lower tail is ~3.3%
    (0.3, 0.70, 0.95, 100, 50, 50),
    (0.3, 0.70, 0.95, 1000, 30, 30),
    (0.3, 0.60, 0.98, 1000, 100, 100),
    (0.6, 0.85, 0.80, 300, 100, 100),
    (0.1, 0.90, 0.90, 200, 100, 100),
    (0.8, 0.95, 0.70, 200, 60, 60),     # strict judge
    (0.5, 0.60, 0.95, 500, 200, 200),
    (0.05, 0.95, 0.90, 100, 30, 30),
    (0.95, 0.90, 0.95, 100, 30, 30),
]
NOMINAL = 0.025


def tails(setting: tuple, reps: int, rng: np.random.Generator, interval: str) -> tuple[float, float]:
    theta, q0, q1, n, m0, m1 = setting
    passed = rng.binomial(n, q1 * theta + (1 - q0) * (1 - theta), reps)
    tn, tp = rng.binomial(m0, q0, reps), rng.binomial(m1, q1, reps)
    low = high = 0
    for k, a, b in zip(passed, tn, tp):
        if a / m0 + b / m1 <= 1:
            continue
        res = corrected_pass_rate(int(k), n, calibration=JudgeCalibration(a / m0, b / m1, m0, m1),
                                  interval=interval)
        low += res.ci_low > theta
        high += res.ci_high < theta
    return low / reps, high / reps


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=4000)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    limit = NOMINAL + 2 * math.sqrt(NOMINAL * (1 - NOMINAL) / args.reps)
    worst = 0.0
    print(f"{'theta':>5} {'q0':>5} {'q1':>5} {'n':>5} {'m0':>4} {'m1':>4} | score: below above | lee: below above")
    for i, s in enumerate(SETTINGS):
        lo, hi = tails(s, args.reps, np.random.default_rng(100 + i), "score")
        llo, lhi = tails(s, args.reps, np.random.default_rng(100 + i), "lee")
        worst = max(worst, lo, hi)
        print(f"{s[0]:5.2f} {s[1]:5.2f} {s[2]:5.2f} {s[3]:5d} {s[4]:4d} {s[5]:4d} | {lo:12.4f} {hi:5.4f} | "
              f"{llo:10.4f} {lhi:5.4f}")
    took = time.perf_counter() - t0
    print(f"({len(SETTINGS)} settings x {args.reps} data sets, {took:.1f} s)")
    verdict = "PASS" if worst <= limit else "FAIL"
    print(f"pass_rate_tails: worst tail {worst:.4f} of {len(SETTINGS)} settings goal<={limit:.4f} {verdict}")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
