"""Benchmark: pytest_judgerel.stats.icc_table vs pingouin.intraclass_corr on a 5497 x 6 matrix.

Run: python benchmarks/bench_icc.py [--repeats N]

The matrix is the 5497 x 6 one of the statistical reference (STATS_NOTES.md section 2b:
numpy default_rng(0), drawn after the 150 x 12 and 25 x 2 matrices, 0-100 scale).
Both implementations compute all six forms with F, p and 95% CI; values must agree
to rtol 1e-10, and the speed ratio (median wall time, pingouin including the
long-format conversion a user needs) is printed next to the goal (>= 50x).
pingouin is imported only here; it is not a dependency of the package.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings

import numpy as np

from pytest_judgerel.stats import icc_table

GOAL = 50.0
NOTES_ICC_A1 = 0.7777674633215205  # STATS_NOTES.md 2b, gen_5497x6, pingouin 0.7.0


def reference_matrix() -> np.ndarray:
    rng = np.random.default_rng(0)
    # 150 x 12 and 25 x 2 are drawn first so that the 5497 x 6 matrix is the reference one.
    rng.normal(2.5, 1.0, size=(150, 1)), rng.normal(0.0, 0.3, size=(1, 12)), rng.normal(0.0, 0.7, size=(150, 12))
    rng.normal(5.5, 2.0, size=(25, 1)), rng.normal(0.0, 1.2, size=(25, 2))
    t = rng.uniform(10, 90, size=(5497, 1))
    b = rng.normal(0, 4, size=(1, 6))
    e = rng.normal(0, 12, size=(5497, 6))
    return np.clip(t + b + e, 0.0, 100.0)


def median_time(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)

    warnings.simplefilter("ignore")
    import pandas as pd
    import pingouin

    pingouin.options["round.column.CI95"] = None  # pingouin rounds the CI to 2 dp by default
    x = reference_matrix()
    n, k = x.shape

    def run_pingouin():
        long = pd.DataFrame({"item": np.repeat(np.arange(n), k), "rater": np.tile(np.arange(k), n),
                             "score": x.ravel()})
        return pingouin.intraclass_corr(long, targets="item", raters="rater", ratings="score")

    def run_ours():
        return icc_table(x)

    ours, theirs = run_ours(), run_pingouin().set_index("Type")
    worst = 0.0
    for res in ours.results.values():
        row = theirs.loc[res.label]
        ref = (row["ICC"], row["F"], row["CI95"][0], row["CI95"][1])
        for got, want in zip((res.value, res.f, res.ci_low, res.ci_high), ref):
            worst = max(worst, abs(got - want) / abs(want))
        assert (res.df1, res.df2) == (row["df1"], row["df2"]), res.label
        assert res.p == row["pval"] or abs(res.p - row["pval"]) <= 1e-10 * row["pval"], res.label
    values_ok = worst <= 1e-10 and abs(ours["A,1"].value - NOTES_ICC_A1) <= 1e-12

    t_pg = median_time(run_pingouin, args.repeats)
    t_ours = median_time(run_ours, max(args.repeats, 50))
    ratio = t_pg / t_ours
    print(f"matrix: {n} x {k}; all six forms with F, p and 95% CI")
    print(f"pingouin {pingouin.__version__}: {t_pg * 1e3:.2f} ms   judgerel: {t_ours * 1e3:.3f} ms  (median)")
    print(f"icc_values: max_rel_diff={worst:.2e} goal<=1e-10 {'PASS' if values_ok else 'FAIL'}")
    print(f"icc_vs_pingouin: ratio={ratio:.1f}x goal>={GOAL:g}x {'PASS' if ratio >= GOAL else 'FAIL'}")
    print(ours)
    return 0 if values_ok and ratio >= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
