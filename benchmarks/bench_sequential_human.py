"""Benchmark: the sequential human-mean (PPI++) gate stops early without changing the fixed verdict.

Run: python benchmarks/bench_sequential_human.py [--quick] [--datasets N] [--seed S] [--eps-pass E] [--eps-fail E]

Simulation with known truth (seeded), as ``bench_sequential.py`` does for the ICC and pass-rate
gates: every data set is drawn in full up front, the fixed verdict computed on it, and the
sequential run sees prefixes of the same answers.  ``assert_human_mean_above(min_mean=3.0)``
(estimate rule): 100 labelled items (judged in full) and N = 1,000 unlabelled ones judged in
batches of 100, true mean human label 2.7-3.3.  Two judges: a continuous one (``y = mu + z``,
judge ``0.5 + 0.8 y + 0.6 e``, correlation 0.8) and an ordinal one (human labels 1-5 and judge
scores 1-10 rounded from one latent score, the truth the mean of the rounded labels, exact from
the normal CDF).  Calls count the labelled items' judge calls too: ``(100 + judged) / 1,100``.

Goals: calls <= 40% of the fixed design's (mean over data sets) where the truth lies >= 0.15
from ``min_mean`` (about 2.3 standard errors of the fixed estimate); verdicts equal to the fixed
design's in >= 97% of data sets (each judge and overall); with the truth on the threshold, false
passes at most the fixed design's + 0.01.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import numpy as np

from pytest_judgerel.stats.sequential import (
    HUMAN_MEAN_EPS_FAIL,
    HUMAN_MEAN_EPS_PASS,
    human_mean_sequential_look,
    items_schedule,
)

N_LABELED, N_UNLABELED, HUMAN_THRESHOLD = 100, 1000, 3.0
HUMAN_TRUTHS = (2.7, 2.8, 2.85, 2.9, 2.95, 3.0, 3.05, 3.1, 3.15, 3.2, 3.3)
HUMAN_FAR = 0.15
GOAL_CALLS, GOAL_AGREE, GOAL_FALSE_PASS = 0.40, 0.97, 0.01


@dataclass
class Outcome:
    truth: float
    used: int
    cap: int
    seq_pass: bool
    fixed_pass: bool


# ---------------------------------------------------------------------------- human-scale mean (PPI++)
def _ordinal_mean(mu: float) -> float:
    """E[clip(round(L), 1, 5)] for a latent L ~ N(mu, 1): the true mean human label of the ordinal judge."""
    from scipy.stats import norm

    cuts = norm.cdf(np.array([1.5, 2.5, 3.5, 4.5]) - mu)
    probs = np.diff(np.concatenate([[0.0], cuts, [1.0]]))
    return float(np.dot(np.arange(1, 6), probs))


def _ordinal_latent_mean(truth: float) -> float:
    lo, hi = -2.0, 8.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _ordinal_mean(mid) < truth else (lo, mid)
    return (lo + hi) / 2


def _human_data(judge: str, truth: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(human labels of the labelled items, judge scores of all items: labelled first)."""
    size = N_LABELED + N_UNLABELED
    if judge == "continuous":
        y = truth + rng.standard_normal(size)
        return y[:N_LABELED], 0.5 + 0.8 * y + 0.6 * rng.standard_normal(size)
    latent = _ordinal_latent_mean(truth) + rng.standard_normal(size)
    y = np.clip(np.round(latent), 1, 5)
    f = np.clip(np.round(2 * latent - 0.5 + 0.8 * rng.standard_normal(size)), 1, 10)
    return y[:N_LABELED], f


def human_outcomes(judge: str, per_truth: int, at_threshold: int, seed: int, rule: dict[str, float]) -> list[Outcome]:
    schedule = items_schedule(N_UNLABELED)
    out = []
    for t_i, truth in enumerate(HUMAN_TRUTHS):
        rng = np.random.default_rng([seed, t_i, 11, len(judge)])
        for d in range(at_threshold if truth == HUMAN_THRESHOLD else per_truth):
            y, f = _human_data(judge, truth, rng)
            fl, fu = f[:N_LABELED], f[N_LABELED:]
            for m in schedule.looks:
                look = human_mean_sequential_look(fl, y, fu[:m], n_unlabeled_cap=N_UNLABELED, min_mean=HUMAN_THRESHOLD,
                                                  schedule=schedule, seed=d, **rule)
                if look.stopped:
                    break
            fixed = _human_fixed(fl, y, fu)
            out.append(Outcome(truth, N_LABELED + look.used, N_LABELED + N_UNLABELED, look.decision == "pass", fixed))
    return out


def _human_fixed(fl: np.ndarray, y: np.ndarray, fu: np.ndarray) -> bool:
    """The fixed gate's verdict on all N unlabelled items (the look at the cap: ppi_mean itself)."""
    return human_mean_sequential_look(fl, y, fu, n_unlabeled_cap=N_UNLABELED, min_mean=HUMAN_THRESHOLD,
                                      schedule=items_schedule(N_UNLABELED)).decision == "pass"



def summary(name: str, outcomes: list[Outcome], threshold: float, far: float) -> dict[str, float]:
    far_o = [o for o in outcomes if abs(o.truth - threshold) >= far - 1e-12]
    at = [o for o in outcomes if abs(o.truth - threshold) < 1e-12]

    def mean(values: list[float]) -> float:  # NaN (a FAIL) when a tuning run left the group out
        return float(np.mean(values)) if values else float("nan")

    return {
        "calls_far": mean([o.used / o.cap for o in far_o]),
        "max_share": max(o.used / o.cap for o in outcomes),
        "agree": mean([o.seq_pass == o.fixed_pass for o in outcomes]),
        "seq_pass_at": mean([o.seq_pass for o in at]),
        "fixed_pass_at": mean([o.fixed_pass for o in at]),
        "n": len(outcomes), "n_at": len(at),
        "se_more_at": paired_difference_se(at),
    }


def paired_difference_se(outcomes: list[Outcome]) -> float:
    """Standard error of P(seq pass) - P(fixed pass) on the same data sets (paired proportions:
    ``sqrt(b + c - (b - c)^2 / n) / n`` with b, c the two kinds of disagreement; Agresti 2013, 10.1)."""
    n = len(outcomes)
    if not n:
        return float("nan")
    b = sum(o.seq_pass and not o.fixed_pass for o in outcomes)
    c = sum(o.fixed_pass and not o.seq_pass for o in outcomes)
    return float(np.sqrt(max(0.0, b + c - (b - c) ** 2 / n)) / n)


def table(name: str, outcomes: list[Outcome]) -> None:
    print(f"  {name}")
    print(f"    {'truth':>6} {'sets':>5} {'calls/fixed':>11} {'agree':>6} {'seq pass':>8} {'fixed pass':>10}")
    for truth in sorted({o.truth for o in outcomes}):
        sub = [o for o in outcomes if o.truth == truth]
        print(f"    {truth:6.3f} {len(sub):5d} {np.mean([o.used / o.cap for o in sub]):11.3f} "
              f"{np.mean([o.seq_pass == o.fixed_pass for o in sub]):6.3f} {np.mean([o.seq_pass for o in sub]):8.3f} "
              f"{np.mean([o.fixed_pass for o in sub]):10.3f}")


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer data sets")
    ap.add_argument("--datasets", type=int, default=None,
                    help="data sets per truth and judge (default 200, 1,000 on the threshold; quick 20 / 60)")
    ap.add_argument("--seed", type=int, default=2028)
    ap.add_argument("--eps-pass", type=float, default=HUMAN_MEAN_EPS_PASS)
    ap.add_argument("--eps-fail", type=float, default=HUMAN_MEAN_EPS_FAIL)
    args = ap.parse_args(argv)
    rule = {"eps_pass": args.eps_pass, "eps_fail": args.eps_fail}
    per, at = (args.datasets or (20 if args.quick else 200)), (60 if args.quick else 1000)
    print(f"human-scale mean (PPI++) >= {HUMAN_THRESHOLD} over unlabelled items: {N_LABELED} labelled + "
          f"{N_UNLABELED} unlabelled items, looks every {items_schedule(N_UNLABELED).looks[0]}; eps_pass "
          f"{args.eps_pass:g}, eps_fail {args.eps_fail:g}; calls include the labelled items'")
    by = {judge: human_outcomes(judge, per, at, args.seed, rule) for judge in ("continuous", "ordinal 1-5")}
    for judge, res in by.items():
        table(judge, res)
    ok = True
    for name, res in list(by.items()) + [("all", [o for r in by.values() for o in r])]:
        fam = summary(name, res, HUMAN_THRESHOLD, HUMAN_FAR)
        more = fam["seq_pass_at"] - fam["fixed_pass_at"]
        for key, measured, goal, good in (
                ("calls", f"{fam['calls_far']:.3f} of the fixed design's calls, truth >= {HUMAN_FAR} from the "
                 "threshold", f"<= {GOAL_CALLS}", fam["calls_far"] <= GOAL_CALLS),
                ("agreement", f"{fam['agree']:.4f} of {fam['n']} data sets give the fixed verdict", f">= {GOAL_AGREE}",
                 fam["agree"] >= GOAL_AGREE),
                ("false_pass", f"{more:+.4f} more false passes than the fixed design (SE {fam['se_more_at']:.4f}, "
                 f"{fam['n_at']} data sets on the threshold)", f"<= {GOAL_FALSE_PASS}", more <= GOAL_FALSE_PASS)):
            print(f"sequential_human_mean_{key}[{name}]: measured {measured} goal {goal} {verdict(good)}")
            ok &= good
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
