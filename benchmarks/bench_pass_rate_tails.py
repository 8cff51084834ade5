"""Benchmark: each tail of the corrected pass rate's 95% interval at or below its nominal 2.5%.

Run: python benchmarks/bench_pass_rate_tails.py [--reps N] [--settings K] [--seed S] [--fresh N]

Simulation with known truth (seeded): a system with true pass rate theta is judged on n items by
a judge with specificity q0 and sensitivity q1, which are estimated on m0 + m1 human-labelled
items; :func:`pytest_judgerel.stats.corrected_pass_rate` gives the interval.  For each setting the
share of data sets whose lower limit lies above theta (the lower tail) and whose upper limit lies
below it (the upper tail) is counted.  Data sets whose calibration leaves q0 + q1 <= 1 (no
correction defined) count as covered by neither tail.

The promise's domain, from which ``--settings`` settings are drawn with ``--seed``: theta
uniform on 0.05-0.95; q0 and q1 uniform on 0.60-0.99 with q0 + q1 >= 1.4 (a judge that tells the
two labels apart); n log-uniform on 50-1,000 judged items; m0 and m1 log-uniform on 30-200 (a
calibration set stratified by human label, at least 30 of each, as docs/concepts.md requires).
Goals for the default score interval: the tails pooled over the drawn settings at most 0.025 (+ 2
standard errors), and every tail at most 0.025 + 2 Monte Carlo standard errors, graded on fresh
data sets: the 3 settings with the largest tail are measured again on ``--fresh`` independent data
sets (the largest of many noisy tails is biased upwards) and the largest fresh tail graded.

For contrast (not graded), ten named settings, among them a lenient judge at a true rate of 0.3,
with the score interval and Lee et al.'s delta-method interval (``interval="lee"``).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # a script: the project root, for benchmarks.harness

from benchmarks.harness.fresh import remeasure_worst  # noqa: E402
from pytest_judgerel.stats.pass_rate import JudgeCalibration, corrected_pass_rate  # noqa: E402

# theta, q0 (specificity), q1 (sensitivity), n, m0, m1: the named settings (a contrast)
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


def draw_settings(count: int, seed: int) -> list[tuple]:
    """``count`` settings (theta, q0, q1, n, m0, m1) drawn from the domain of the module docstring."""
    rng = np.random.default_rng([seed, 5])
    out = []
    for _ in range(count):
        q0, q1 = rng.uniform(0.6, 0.99, 2)
        while q0 + q1 < 1.4:
            q0, q1 = rng.uniform(0.6, 0.99, 2)
        theta = rng.uniform(0.05, 0.95)
        n, m0, m1 = (int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))
                     for lo, hi in ((50, 1000), (30, 200), (30, 200)))
        out.append((round(float(theta), 3), round(float(q0), 3), round(float(q1), 3), n, m0, m1))
    return out


def tail_limit(reps: int) -> float:
    """0.025 plus 2 Monte Carlo standard errors of a tail rate measured on ``reps`` data sets."""
    return NOMINAL + 2 * math.sqrt(NOMINAL * (1 - NOMINAL) / reps)


def grade(drawn: list[tuple[tuple, float, float]], fresh: int, seed: int, candidates: int = 3) -> tuple[bool, str]:
    """The worst-tail goal on fresh data sets (:mod:`benchmarks.harness.fresh`): the ``candidates``
    settings of ``drawn`` ((setting, lower tail, upper tail)) with the largest tail are measured again on
    ``fresh`` data sets each and the largest fresh tail is graded against :func:`tail_limit` of ``fresh``."""
    pairs = remeasure_worst(drawn, lambda row: max(row[1], row[2]), lambda i, row: (
        row[0], *tails(row[0], fresh, np.random.default_rng([seed, 9, i]), "score")), candidates)
    top = max((b for _, b in pairs), key=lambda row: max(row[1], row[2]))
    there = " / ".join(f"{_name(a[0])}: {max(a[1], a[2]):.4f} -> {max(b[1], b[2]):.4f}" for a, b in pairs)
    value = max(top[1], top[2])
    return value <= tail_limit(fresh), (f"{value:.4f} on {fresh} fresh data sets at {_name(top[0])} (the "
                                        f"{candidates} largest there -> fresh: {there}) goal<={tail_limit(fresh):.4f}")


def _name(s: tuple) -> str:
    return f"theta={s[0]:g} q0={s[1]:g} q1={s[2]:g} n={s[3]} m0={s[4]} m1={s[5]}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=4000, help="data sets per setting")
    ap.add_argument("--settings", type=int, default=40, help="settings drawn from the domain")
    ap.add_argument("--seed", type=int, default=2029, help="draws the settings and their data")
    ap.add_argument("--fresh", type=int, default=16000, help="fresh data sets for each of the 3 largest tails")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    header = f"{'theta':>5} {'q0':>5} {'q1':>5} {'n':>5} {'m0':>4} {'m1':>4} | score: below above"
    print(f"named settings (a contrast, not graded)\n{header} | lee: below above")
    for i, s in enumerate(SETTINGS):
        lo, hi = tails(s, args.reps, np.random.default_rng(100 + i), "score")
        llo, lhi = tails(s, args.reps, np.random.default_rng(100 + i), "lee")
        print(f"{_row(s)} | {lo:12.4f} {hi:5.4f} | {llo:10.4f} {lhi:5.4f}")
    drawn = []
    print(f"\n{args.settings} settings drawn from the domain (seed {args.seed})\n{header}")
    for i, s in enumerate(draw_settings(args.settings, args.seed)):
        lo, hi = tails(s, args.reps, np.random.default_rng([args.seed, i]), "score")
        drawn.append((s, lo, hi))
        print(f"{_row(s)} | {lo:12.4f} {hi:5.4f}", flush=True)
    pooled = float(np.mean([row[1] for row in drawn] + [row[2] for row in drawn]))
    pooled_limit = tail_limit(2 * args.reps * len(drawn))  # every tail of every drawn setting together
    ok_worst, worst_line = grade(drawn, args.fresh, args.seed)
    print(f"({len(SETTINGS)} named and {len(drawn)} drawn settings x {args.reps} data sets, "
          f"{time.perf_counter() - t0:.1f} s)")
    ok_pooled = pooled <= pooled_limit
    print(f"pass_rate_tails_pooled: {pooled:.4f} over {2 * len(drawn)} tails of the drawn settings "
          f"goal<={pooled_limit:.4f} {'PASS' if ok_pooled else 'FAIL'}")
    print(f"pass_rate_tails_worst: {worst_line} {'PASS' if ok_worst else 'FAIL'}")
    return 0 if ok_pooled and ok_worst else 1


def _row(s: tuple) -> str:
    return f"{s[0]:5.2f} {s[1]:5.2f} {s[2]:5.2f} {s[3]:5d} {s[4]:4d} {s[5]:4d}"


if __name__ == "__main__":
    sys.exit(main())
