"""Benchmark: the position gate's sign test -- false alarms without a position bias, power with one.

Run: python benchmarks/bench_position.py [--reps N]

Simulation with known truth (seeded).  Each data set is n pairs, each judged in both orders by
:func:`pytest_judgerel.stats.position_consistency`; the gate's position check is its exact
two-sided sign test of first- against second-position wins at alpha = 0.05.

* No position bias: on every pair one answer is better; the judge names it, except on a share
  of calls (0, 20% or 50%) where it answers at random.  A position alarm here is false.
* Position bias: equal-quality pairs on which each call picks the answer shown first with
  probability 0.6 (and 0.7), so a pair is won by the first position both times with probability
  0.36 and by the second with 0.16.

Goals: every false-alarm rate <= alpha + 0.01; power >= 0.8 at a 0.6 preference with 100 pairs.
For contrast the share of data sets failing a consistency threshold of 0.85 is printed: noise
alone fails it, and a 0.6 preference barely moves it.  The power is also computed exactly, by
summing the multinomial probabilities of every (first, second, other) count with the gate's
own p value (:func:`pytest_judgerel.stats.sign_test_p`), with the smallest number of pairs that
reaches 0.8.  The exact test is conservative (its false-alarm rate stays below alpha whatever
the number of decisive pairs), which costs power: at a 0.6 preference only about 52 of 100 pairs
are decisive, and the exact power at 100 pairs is 0.77.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from scipy import stats

from pytest_judgerel.stats import position_consistency, sign_test_p

ALPHA = 0.05


def _simulate(rng: np.random.Generator, reps: int, n: int, noise: float, first_prob: float | None):
    """reps data sets of n pairs -> (share with p < alpha, share with consistency < 0.85)."""
    alarms = low = 0
    for _ in range(reps):
        if first_prob is None:  # one answer better; random answers on a share of calls
            better_first = rng.random(n) < 0.5
            calls = []
            for swapped in (False, True):
                right = np.where(better_first != swapped, "A", "B")
                guess = np.where(rng.random(n) < 0.5, "A", "B")
                calls.append(np.where(rng.random(n) < noise, guess, right))
        else:  # equal quality: each call picks the first-shown answer with probability first_prob
            calls = [np.where(rng.random(n) < first_prob, "A", "B") for _ in range(2)]
        res = position_consistency(list(calls[0]), list(calls[1]))
        alarms += res.p_position < ALPHA
        low += res.consistency.value < 0.85
    return alarms / reps, low / reps


def _p_table(n: int) -> np.ndarray:
    """p[f, s]: the exact two-sided sign-test p value for every count up to n (the package's
    formula, vectorised; checked against :func:`sign_test_p` on a sample of cells)."""
    f, s = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    table = np.minimum(1.0, 2 * stats.binom.cdf(np.minimum(f, s), f + s, 0.5))
    table[(f + s) == 0] = 1.0
    for i, j in ((0, 5), (7, 2), (n // 3, n // 5), (n // 2, n // 2 - 3)):
        assert abs(table[i, j] - sign_test_p(i, j)) < 1e-9, (i, j)
    return table


def exact_rejection(n: int, p_first: float, p_second: float) -> float:
    """P(sign test p < alpha) for n pairs whose outcomes are first / second / other with these
    probabilities: the sum over every count of its multinomial probability."""
    f, s = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    ok = f + s <= n
    rest = np.where(ok, n - f - s, 0)
    with np.errstate(all="ignore"):
        log = (stats.binom.logpmf(f, n, p_first) + stats.binom.logpmf(s, n - f, p_second / (1 - p_first))
               if p_first < 1 else np.where((f == n) & (s == 0), 0.0, -np.inf))
    prob = np.where(ok & (rest >= 0), np.exp(log), 0.0)
    return float((prob * (_p_table(n) < ALPHA)).sum())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2000)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    rng = np.random.default_rng(20)
    worst_false = 0.0
    print(f"{'scenario':34} {'pairs':>5} {'sign test alarms':>17} {'consistency < 0.85':>19}")
    for noise in (0.0, 0.2, 0.5):
        for n in (20, 50, 100, 200):
            alarm, low = _simulate(rng, args.reps, n, noise, None)
            worst_false = max(worst_false, alarm)
            print(f"{f'no bias, {noise:.0%} random calls':34} {n:5d} {alarm:17.4f} {low:19.4f}")
    power = {}
    for pref in (0.6, 0.7):
        for n in (50, 100, 200):
            alarm, low = _simulate(rng, args.reps, n, 0.0, pref)
            power[(pref, n)] = alarm
            print(f"{f'first-position preference {pref}':34} {n:5d} {alarm:17.4f} {low:19.4f}")
    exact_power = exact_rejection(100, 0.36, 0.16)
    exact_null = max(exact_rejection(n, q / 2, q / 2) for n in (20, 50, 100, 200) for q in (0.1, 0.25, 0.5, 1.0))
    needed = next(n for n in range(100, 400) if exact_rejection(n, 0.36, 0.16) >= 0.8)
    print(f"exact (enumerated): power {exact_power:.4f} at a 0.6 preference with 100 pairs; 0.8 is reached at "
          f"{needed} pairs; largest false-alarm rate {exact_null:.4f} (20-200 pairs, 10-100% decisive)")
    print(f"({args.reps} data sets per row, {time.perf_counter() - t0:.1f} s)")
    worst_false = max(worst_false, exact_null)
    ok_false = worst_false <= ALPHA + 0.01
    ok_power = exact_power >= 0.8
    print(f"position_false_alarms: worst {worst_false:.4f} over 12 no-bias settings goal<={ALPHA + 0.01:.2f} "
          f"{'PASS' if ok_false else 'FAIL'}")
    print(f"position_power: {exact_power:.4f} exact ({power[(0.6, 100)]:.4f} simulated) at a 0.6 preference, "
          f"100 pairs goal>=0.8 "
          f"{'PASS' if ok_power else 'FAIL'}")
    return 0 if ok_false and ok_power else 1


if __name__ == "__main__":
    sys.exit(main())
