"""Benchmark by simulation (known truth): PPI++ intervals of the human-scale mean.

Run: python benchmarks/bench_ppi.py [--reps N] [--seed S]

Each replication draws a population of items with a true human score; humans label n = 100 of
them, a biased judge (other scale, offset) correlated r with the human labels scores all
n + N = 2,100.  ``stats.ppi_mean`` (tuned, 95%) is computed, and the human-only t interval beside
it.  Goals: coverage of the true population mean within 93-97%, each tail missing
1-4% of the time (nominal 2.5%: the interval must not lean to one side), mean width at least 25%
below the human-only interval (ratio <= 0.75).  Scenarios:

* ``normal``: continuous human scores, judge = 2 + 1.5 * (a score correlated r = 0.7 with the
  human's), i.e. biased and on another scale;
* ``likert``: human labels on 1-5 (rounded), judge on 0-10 (rounded) with r ~ 0.70, skewed;
* ``paired difference``: two systems on the same 100 labelled and 2,000 unlabelled inputs,
  ``ppi_mean_difference`` (paired); coverage of the true difference.

Seeded; about 20 s on one core.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from pytest_judgerel.stats import ppi_mean, ppi_mean_difference

N_LAB, N_UNLAB = 100, 2000
COVERAGE_GOAL = (0.93, 0.97)
WIDTH_GOAL = 0.75
TAIL_GOAL = (0.01, 0.04)  # each tail of a 95% interval should miss about 2.5%: neither side may lean


def _judge(y: np.ndarray, r: float, rng: np.random.Generator) -> np.ndarray:
    """A score correlated ``r`` with ``y`` (standardised by the population sd)."""
    z = (y - y.mean()) / y.std()
    return r * z + np.sqrt(1 - r * r) * rng.standard_normal(y.size)


def normal_case(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    n = N_LAB + N_UNLAB
    y = 3.0 + rng.standard_normal(n)
    f = 2.0 + 1.5 * _judge(y, 0.7, rng)  # biased (+offset, other scale), r = 0.7 with humans
    idx = rng.permutation(n)
    lab, unl = idx[:N_LAB], idx[N_LAB:]
    return f[lab], y[lab], f[unl], 3.0


def _likert(latent: np.ndarray) -> np.ndarray:
    return np.clip(np.round(3.6 + 0.9 * latent + 0.3 * latent ** 2), 1, 5)


def likert_case(rng: np.random.Generator, truth: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    n = N_LAB + N_UNLAB
    latent = rng.standard_normal(n)
    y = _likert(latent + 0.45 * rng.standard_normal(n))
    f = np.clip(np.round(7.5 + 1.8 * latent + 0.8 * rng.standard_normal(n)), 0, 10)
    idx = rng.permutation(n)
    lab, unl = idx[:N_LAB], idx[N_LAB:]
    return f[lab], y[lab], f[unl], truth


def paired_case(rng: np.random.Generator):
    n = N_LAB + N_UNLAB
    x = rng.standard_normal(n)  # input difficulty, shared by both systems
    ya = 3.2 + x + 0.6 * rng.standard_normal(n)
    yb = 3.0 + x + 0.6 * rng.standard_normal(n)
    fa = 1.0 + 0.8 * ya + 0.5 * rng.standard_normal(n)
    fb = 1.3 + 0.8 * yb + 0.5 * rng.standard_normal(n)  # the judge favours system b
    idx = rng.permutation(n)
    lab, unl = idx[:N_LAB], idx[N_LAB:]
    return (fa[lab], ya[lab], fa[unl]), (fb[lab], yb[lab], fb[unl]), 0.2


def run(case, reps: int, rng: np.random.Generator, difference: bool = False) -> dict[str, float]:
    low = high = 0
    ratios, lams, eff, corr = [], [], [], []
    for _ in range(reps):
        if difference:
            a, b, truth = case(rng)
            res = ppi_mean_difference(a, b, paired=True)
            corr.append(np.corrcoef(a[0], a[1])[0, 1])
        else:
            f, y, fu, truth = case(rng)
            res = ppi_mean(f, y, fu)
            corr.append(np.corrcoef(f, y)[0, 1])
        low += truth < res.ci_low
        high += truth > res.ci_high
        w_h = res.classical.ci_high - res.classical.ci_low
        ratios.append((res.ci_high - res.ci_low) / w_h)
        lams.append(res.lam if not difference else res.lam[0])
        eff.append(res.effective_n)
    return {"coverage": 1 - (low + high) / reps, "below": low / reps, "above": high / reps,
            "width_ratio": float(np.mean(ratios)), "lam": float(np.mean(lams)), "effective_n": float(np.mean(eff)),
            "r": float(np.mean(corr))}


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=20240101)
    args = ap.parse_args(argv)
    if args.reps < 400:
        ap.error("the goals need at least 400 replications")
    rng = np.random.default_rng(args.seed)
    # the Likert population mean, by a large draw of the same model (its own stream)
    big = np.random.default_rng(args.seed + 1).standard_normal((2, 4_000_000))
    likert_mean = float(_likert(big[0] + 0.45 * big[1]).mean())
    t0 = time.perf_counter()
    failed = 0
    for name, case, diff in (("normal", normal_case, False),
                             ("likert", lambda r: likert_case(r, likert_mean), False),
                             ("paired_difference", paired_case, True)):
        res = run(case, args.reps, rng, diff)
        lo, hi = COVERAGE_GOAL
        ok_cov = lo <= res["coverage"] <= hi
        print(f"ppi_coverage_{name}: {res['coverage']:.3f} of {args.reps} 95% intervals cover the truth "
              f"(below {res['below']:.3f}, above {res['above']:.3f}; judge-human r {res['r']:.2f}, mean lambda "
              f"{res['lam']:.2f}) "
              f"goal {lo:.2f}-{hi:.2f} {verdict(ok_cov)}")
        t_lo, t_hi = TAIL_GOAL
        ok_tails = t_lo <= res["below"] <= t_hi and t_lo <= res["above"] <= t_hi
        print(f"ppi_tails_{name}: {res['below']:.3f} below, {res['above']:.3f} above (nominal 0.025 each) "
              f"goal {t_lo:.2f}-{t_hi:.2f} {verdict(ok_tails)}")
        ok_w = res["width_ratio"] <= WIDTH_GOAL
        print(f"ppi_width_{name}: {res['width_ratio']:.3f} x the human-only width, worth "
              f"{res['effective_n']:.0f} of {N_LAB} labels goal <= {WIDTH_GOAL} {verdict(ok_w)}")
        failed += (not ok_cov) + (not ok_tails) + (not ok_w)
    print(f"({args.reps} replications per scenario, n = {N_LAB} labelled, N = {N_UNLAB} unlabelled, "
          f"{time.perf_counter() - t0:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
