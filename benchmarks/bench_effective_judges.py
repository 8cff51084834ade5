"""Benchmark by simulation (known truth): the effective number of independent judges.

Run: python benchmarks/bench_effective_judges.py [--reps N] [--seed S]

Each replication draws 300 items with a true score T and a panel of six judges whose errors
``c + u_j`` share a component c (variance rho) and have their own u_j (variance 1 - rho), so the
true pairwise error correlation is rho and the true effective number is 6 / (1 + 5 rho).
``stats.effective_judges(scores, human=gold)`` is computed.  Goals, as the mean over
replications and in at least 95% of them:

* independent errors (rho = 0), gold = T: within 6 +/- 1;
* rho = 0.5, gold = T: within 1.7 +/- 0.5 (true 1.714);
* rho = 0, gold = the mean of 3 noisy human raters (noise sd 0.8, the shared gold error that
  would make independent judges look correlated, about 3.2 judges uncorrected; removed by the
  gold-noise correction): the mean within 6 +/- 1 (single replications scatter more, the
  gold's own noise is in every error).

* bounded: 8 independent judges against the mean of 3 noisy raters (noise sd 1, as
  large as the judges'), 150 and 50 items: the value never above k = 8 and no error in any
  replication (the gold-noise correction scatters r around 0; uncapped, the formula read up
  to 2,458 and raised when r fell below -1/(k-1)).  The share of capped runs is printed.

Without gold (leave-one-out panel reference) an independent panel must also read 6 +/- 1; the
line for rho = 0.5 without gold is printed for information only (a shared error is invisible
without gold: the estimate overstates the panel's worth).  Seeded; a few seconds on one core.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from pytest_judgerel.stats import effective_judges

K, N_ITEMS = 6, 300


def panel(rho: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    t = 3.0 + rng.standard_normal(N_ITEMS)
    c = np.sqrt(rho) * rng.standard_normal((N_ITEMS, 1))
    u = np.sqrt(1 - rho) * rng.standard_normal((N_ITEMS, K))
    bias = rng.normal(0, 0.3, size=(1, K))  # judges differ in leniency; it does not enter a correlation
    return t[:, None] + bias + c + u, t


def run(rho: float, gold: str, reps: int, rng: np.random.Generator) -> np.ndarray:
    out = np.empty(reps)
    for i in range(reps):
        scores, t = panel(rho, rng)
        if gold == "truth":
            human = t
        elif gold == "noisy":
            human = t[:, None] + 0.8 * rng.standard_normal((N_ITEMS, 3))
        else:
            human = None
        out[i] = effective_judges(scores, human).value
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=23)
    args = ap.parse_args(argv)
    if args.reps < 400:
        ap.error("the goals need at least 400 replications")
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    # (name, rho, gold, target, tolerance, share of replications that must lie within it)
    cases = [("independent", 0.0, "truth", 6.0, 1.0, 0.95), ("correlated_0.5", 0.5, "truth", 1.7, 0.5, 0.95),
             ("independent_noisy_gold", 0.0, "noisy", 6.0, 1.0, 0.0),
             ("independent_no_gold", 0.0, "none", 6.0, 1.0, 0.95),
             ("correlated_0.5_no_gold", 0.5, "none", None, None, None)]
    failed = 0
    for name, rho, gold, target, tol, share in cases:
        v = run(rho, gold, args.reps, rng)
        true = K / (1 + (K - 1) * rho)
        if target is None:
            print(f"info effective_judges_{name}: mean {v.mean():.2f} (true {true:.2f}); a shared error is "
                  "invisible without gold, so this overstates the panel's worth")
            continue
        inside = float(np.mean(np.abs(v - target) <= tol))
        ok = abs(v.mean() - target) <= tol and inside >= share
        failed += not ok
        print(f"effective_judges_{name}: mean {v.mean():.2f} (true {true:.2f}, sd {v.std():.2f}), "
              f"{inside:.1%} of {args.reps} within {target} +/- {tol} (needed {share:.0%}) goal {target}+/-{tol} "
              f"{'PASS' if ok else 'FAIL'}")
    for n_items in (150, 50):
        vals, capped, errors = [], 0, 0
        for _ in range(args.reps):
            t = rng.standard_normal(n_items)
            scores = t[:, None] + rng.standard_normal((n_items, 8))
            humans = t[:, None] + rng.standard_normal((n_items, 3))
            try:
                res = effective_judges(scores, humans)
            except Exception:  # noqa: BLE001 - counted: the goal is none
                errors += 1
                continue
            vals.append(res.value)
            capped += res.capped
        v = np.array(vals)
        ok = errors == 0 and v.max() <= 8
        failed += not ok
        print(f"effective_judges_bounded_{n_items}_items: max {v.max():.2f}, mean {v.mean():.2f} (true 8), "
              f"capped in {capped / args.reps:.1%}, errors {errors} of {args.reps} goal<=8,errors=0 "
              f"{'PASS' if ok else 'FAIL'}")
    print(f"({args.reps} replications per case, {K} judges x {N_ITEMS} items, {time.perf_counter() - t0:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
