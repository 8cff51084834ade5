"""Benchmark: sequential gates stop early without changing the fixed design's verdict.

Run: python benchmarks/bench_sequential.py [--quick] [--datasets N] [--icc-at-threshold N] [--seed S]
     [--icc-only | --rate-only | --human-only]

Simulation with known truth (seeded).  Every data set is drawn in full up front -- the cap's
answers -- and the fixed design's verdict is computed on it; the sequential run
(:mod:`pytest_judgerel.stats.sequential`, default eps and n_sim) sees prefixes of the same
answers at the looks of its schedule and stops when its verdict is settled.

* **ICC over repeats** (``assert_icc_above(..., threshold=0.7, form="A,1")``): n = 40 items x
  cap 10 repeats, true ICC(A,1) from 0.4 to 0.95.  Three judges: exchangeable repeats
  (``y = a_i + e_ij``), repeats with offsets (``+ b_j``, a fifth of the non-item variance) and
  ordinal 0-5 scores (a latent ``2.5 + 1.2 (a_i + e_ij)`` rounded and clipped; its true ICC is
  that of the rounded scores, found on 40,000 simulated items).  Looks at 2, 3, ..., 10 repeats.
* **Corrected pass rate over items** (``assert_pass_rate(min_rate=0.9)``): N = 1,000 items, true
  rates 0.80-0.99; a perfect judge and one with specificity 0.90 / sensitivity 0.95 (its
  calibration fixed at those values, 100 / 400 items), the estimate and the lower-bound rule.
  Looks every 100 items (``items_schedule``'s default for 1,000 items).
* **Human-scale mean, PPI++** (``assert_human_mean_above(min_mean=3.0)``, the default estimate
  rule): 100 labelled items (judged in full: the labels are known up front) and N = 1,000
  unlabelled ones judged in batches of 100, true mean human label 2.7-3.3.  Two judges: a
  continuous one (``y = mu + z``, judge ``0.5 + 0.8 y + 0.6 e``, correlation 0.8) and an ordinal
  one (human labels 1-5 and judge scores 1-10 rounded from one latent score, the truth the mean
  of the rounded labels, exact from the normal CDF).  Calls count the labelled items' judge
  calls too: ``(100 + judged) / 1,100``.  "Far" is >= 0.15 from ``min_mean`` (about 2.3 standard
  errors of the fixed estimate), the analogue of the ICC's 0.1 (2 standard errors at n = 40, k = 10).

Goals: calls <= 40% of the fixed design's (mean over data sets) where the truth lies >= 0.1 from
the ICC threshold, >= 0.04 from the pass-rate threshold or >= 0.15 from the human-mean threshold
(not in the issue, which names ICC and pass-rate truths: our analogue), and never past the cap; verdicts equal
to the fixed design's on the same answers in >= 97% of data sets (each family and overall);
with the truth on the threshold, false passes at most the fixed design's + 0.01.

The calls goal for the pass rate is graded as the issue states it (truth >= 0.04 from
``min_rate``) for the default gate (``use="estimate"``).  The lower-bound rule (``use="ci_low"``)
passes only once the bound clears ``min_rate``, so its own boundary -- the truth at which the
fixed rule passes half the data sets, printed per setting -- lies near 0.92-0.94, and no rule
that keeps its verdict can stop early at truths 0.94-0.96.  Its literal-reading lines are printed
as INFO with that reason; the lines graded for it measure the distance from its own boundary.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass

import numpy as np

from pytest_judgerel.stats.icc_batch import icc_values
from pytest_judgerel.stats.pass_rate import JudgeCalibration
from pytest_judgerel.stats.sequential import (
    HUMAN_MEAN_EPS_FAIL,
    HUMAN_MEAN_EPS_PASS,
    ICC_EPS_FAIL,
    ICC_EPS_PASS,
    OFFSET_PRIOR_DF,
    PASS_RATE_EPS_FAIL,
    PASS_RATE_EPS_PASS,
    icc_fixed_verdict,
    human_mean_sequential_look,
    icc_sequential_look,
    items_schedule,
    pass_rate_cutoff,
    pass_rate_sequential_look,
    repeats_schedule,
)

N_ITEMS, CAP, ICC_THRESHOLD = 40, 10, 0.7
ICC_TRUTHS = (0.4, 0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9, 0.95)
ICC_FAR = 0.1
N_PASS, RATE_THRESHOLD = 1000, 0.9
RATE_TRUTHS = (0.80, 0.84, 0.86, 0.88, 0.90, 0.92, 0.94, 0.96, 0.99)
RATE_FAR = 0.04
JUDGES = {"perfect judge": JudgeCalibration(1.0, 1.0, 100, 400),
          "q0 0.90, q1 0.95": JudgeCalibration(0.90, 0.95, 100, 400)}
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


# ---------------------------------------------------------------------------- ICC
def _ordinal(latent: np.ndarray) -> np.ndarray:
    return np.clip(np.round(2.5 + 1.2 * latent), 0, 5)


def _draw(case: str, rho: float, rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    a = rng.normal(0, np.sqrt(rho), (n, 1))
    if case == "offsets":
        return a + rng.normal(0, np.sqrt(0.2 * (1 - rho)), (1, k)) + rng.normal(0, np.sqrt(0.8 * (1 - rho)), (n, k))
    x = a + rng.normal(0, np.sqrt(1 - rho), (n, k))
    return _ordinal(x) if case == "ordinal" else x


def _ordinal_latent(truth: float) -> float:
    """The latent ICC whose rounded 0-5 scores have true ICC(A,1) ``truth`` (40,000 items, bisection)."""
    rng = np.random.default_rng(12345)
    a, e = rng.standard_normal((40_000, 1)), rng.standard_normal((40_000, 4))
    lo, hi = 0.01, 0.995
    for _ in range(30):
        mid = (lo + hi) / 2
        value = float(icc_values(_ordinal(np.sqrt(mid) * a + np.sqrt(1 - mid) * e), "A,1"))
        lo, hi = (mid, hi) if value < truth else (lo, mid)
    return (lo + hi) / 2


def run_icc(x: np.ndarray, seed: int, rule: dict[str, float]) -> tuple[int, bool]:
    schedule = repeats_schedule(CAP)
    for r in schedule.looks:
        look = icc_sequential_look(x[:, :r], threshold=ICC_THRESHOLD, cap=CAP, seed=seed, schedule=schedule, **rule)
        if look.stopped:
            return look.used, look.decision == "pass"
    raise AssertionError("the cap always stops")  # pragma: no cover


def icc_outcomes(case: str, per_truth: int, at_threshold: int, seed: int, rule: dict[str, float],
                 truths: tuple[float, ...] = ICC_TRUTHS) -> list[Outcome]:
    out = []
    for t_i, truth in enumerate(ICC_TRUTHS):
        if truth not in truths:
            continue
        rho = _ordinal_latent(truth) if case == "ordinal" else truth
        rng = np.random.default_rng([seed, t_i, len(case)])
        for d in range(at_threshold if truth == ICC_THRESHOLD else per_truth):
            x = _draw(case, rho, rng, N_ITEMS, CAP)
            fixed = icc_fixed_verdict(x, ICC_THRESHOLD, "A,1").passed
            used, passed = run_icc(x, d, rule)
            out.append(Outcome(truth, used, CAP, passed, fixed))
    return out


# ---------------------------------------------------------------------------- pass rate
def rate_outcomes(cal: JudgeCalibration, use: str, per_truth: int, at_threshold: int, seed: int,
                  rule: dict[str, float], batch: int | None) -> list[Outcome]:
    schedule = items_schedule(N_PASS, batch)
    cutoff = pass_rate_cutoff(N_PASS, min_rate=RATE_THRESHOLD, calibration=cal, use=use)
    out = []
    for t_i, truth in enumerate(RATE_TRUTHS):
        rng = np.random.default_rng([seed, t_i, 7 if use == "estimate" else 8, int(cal.specificity * 100)])
        raw = cal.sensitivity * truth + (1 - cal.specificity) * (1 - truth)
        for _ in range(at_threshold if truth == RATE_THRESHOLD else per_truth):
            verdicts = rng.random(N_PASS) < raw
            fixed = int(verdicts.sum()) >= cutoff.count
            for m in schedule.looks:
                look = pass_rate_sequential_look(int(verdicts[:m].sum()), m, n_cap=N_PASS, min_rate=RATE_THRESHOLD,
                                                 calibration=cal, use=use, cutoff=cutoff, schedule=schedule,
                                                 **rule)
                if look.stopped:
                    break
            out.append(Outcome(truth, look.used, N_PASS, look.decision == "pass", fixed))
    return out


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


def fixed_pass_probability(cal: JudgeCalibration, use: str, truth: float) -> float:
    """P(the fixed pass-rate gate passes | true rate ``truth``): the judge's count over N items is
    binomial with rate ``q1 truth + (1 - q0)(1 - truth)`` and passes from the cutoff up."""
    from scipy.stats import binom

    cutoff = pass_rate_cutoff(N_PASS, min_rate=RATE_THRESHOLD, calibration=cal, use=use)
    raw = cal.sensitivity * truth + (1 - cal.specificity) * (1 - truth)
    return float(binom.sf(cutoff.count - 1, N_PASS, raw))


def half_pass_point(cal: JudgeCalibration, use: str) -> float:
    """The true rate at which the fixed rule passes half the data sets (its own boundary; bisection)."""
    lo, hi = 0.5, 1.0
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if fixed_pass_probability(cal, use, mid) < 0.5 else (lo, mid)
    return (lo + hi) / 2


# ---------------------------------------------------------------------------- report
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


CI_LOW_INFO = ("INFO (not graded: the lower-bound rule's own boundary, its 50%-pass point, lies near 0.92-0.94, "
               "so these truths are not 0.04 from the verdict it keeps; graded from that point below)")


def calls_by_truth(families: dict[str, list[Outcome]], threshold: float, far: float) -> list[tuple[str, float, float]]:
    """(family, truth, mean share of the fixed design's calls) for every truth >= ``far`` from the threshold."""
    rows = []
    for name, outcomes in families.items():
        for truth in sorted({o.truth for o in outcomes}):
            if abs(truth - threshold) >= far - 1e-12:
                rows.append((name, truth, float(np.mean([o.used / o.cap for o in outcomes if o.truth == truth]))))
    return rows


def graded(name: str) -> bool:
    """The pass-rate calls goal is graded on its literal reading for the default gate (use="estimate")."""
    return "use=ci_low" not in name


def print_calls_by_truth(goal: str, rows: list[tuple[str, float, float]]) -> bool:
    """One line per family and truth: the calls goal as the issue states it (every truth, not their mean);
    the lower-bound pass-rate rule's lines are information (:data:`CI_LOW_INFO`)."""
    for name, truth, share in rows:
        mark = verdict(share <= GOAL_CALLS) if graded(name) else CI_LOW_INFO
        print(f"{goal}[{name}, truth {truth:g}]: measured {share:.3f} of the fixed design's calls "
              f"goal <= {GOAL_CALLS} {mark}")
    return all(share <= GOAL_CALLS for name, _, share in rows if graded(name))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer data sets (under a minute)")
    ap.add_argument("--datasets", type=int, default=None, help="ICC data sets per truth (default 400; quick 6)")
    ap.add_argument("--seed", type=int, default=2028)
    ap.add_argument("--icc-at-threshold", type=int, default=None,
                    help="ICC data sets per family with the truth on the threshold (default 2000; quick 60)")
    ap.add_argument("--icc-truths", type=str, default=None,
                    help="comma-separated ICC truths to run (default all; to tune the rule)")
    for key, what, levels in (("icc", "ICC", (ICC_EPS_PASS, ICC_EPS_FAIL)),
                              ("rate", "pass-rate", (PASS_RATE_EPS_PASS, PASS_RATE_EPS_FAIL)),
                              ("human", "human-mean", (HUMAN_MEAN_EPS_PASS, HUMAN_MEAN_EPS_FAIL))):
        for side, default in zip(("pass", "fail"), levels):
            ap.add_argument(f"--{key}-eps-{side}", type=float, default=default,
                            help=f"the {what} rule's {side}-side eps (default {default})")
    ap.add_argument("--rate-batch", type=int, default=None,
                    help="items per look of the pass-rate rule (default items_schedule's)")
    ap.add_argument("--rate-only", action="store_true", help="only the pass-rate rule (to tune it)")
    ap.add_argument("--offset-prior-df", type=float, default=OFFSET_PRIOR_DF,
                    help=f"the ICC rule's prior df on the repeat offsets (default {OFFSET_PRIOR_DF:g})")
    ap.add_argument("--icc-only", action="store_true", help="only the ICC rule (to tune it)")
    ap.add_argument("--human-only", action="store_true", help="only the human-mean (PPI++) rule")
    ap.add_argument("--human-datasets", type=int, default=None,
                    help="human-mean data sets per truth and judge (default 200, 1,000 on the threshold; quick 20 / 60)")
    args = ap.parse_args(argv)
    rule = {"eps_pass": args.icc_eps_pass, "eps_fail": args.icc_eps_fail, "offset_prior_df": args.offset_prior_df}
    rate_rule = {"eps_pass": args.rate_eps_pass, "eps_fail": args.rate_eps_fail}
    # 400 per truth: a per-truth mean of calls to about +-0.01 (1 SE); 2,000 on the threshold: the
    # difference in false passes to about +-0.003 (1 SE), so a 0.01 line is not decided by one seed's luck
    per_icc = args.datasets or (6 if args.quick else 400)
    at_icc = args.icc_at_threshold or (60 if args.quick else 2000)
    truths = ICC_TRUTHS if args.icc_truths is None else tuple(float(t) for t in args.icc_truths.split(","))
    per_rate, at_rate = (60, 240) if args.quick else (400, 1600)
    t0 = time.perf_counter()

    only = "icc" if args.icc_only else "rate" if args.rate_only else "human" if args.human_only else None
    if only in (None, "icc"):
        print(f"ICC(A,1) >= {ICC_THRESHOLD} over repeats: {N_ITEMS} items, cap {CAP} repeats, looks "
              f"{list(repeats_schedule(CAP).looks)}; eps_pass {args.icc_eps_pass:g}, eps_fail {args.icc_eps_fail:g}, "
              f"offset prior df {args.offset_prior_df:g}")
    icc_by: dict[str, list[Outcome]] = {}
    human_rule = {"eps_pass": args.human_eps_pass, "eps_fail": args.human_eps_fail}
    per_human, at_human = (args.human_datasets or (20 if args.quick else 200)), (60 if args.quick else 1000)
    for case in ("exchangeable", "offsets", "ordinal") if only in (None, "icc") else ():
        icc_by[case] = icc_outcomes(case, per_icc, at_icc, args.seed, rule, truths)
        table(case, icc_by[case])
    icc_all = [o for res in icc_by.values() for o in res]
    t_icc = time.perf_counter() - t0
    if only in (None, "rate"):
        print(f"corrected pass rate >= {RATE_THRESHOLD} over items: {N_PASS} items, looks every "
              f"{items_schedule(N_PASS, args.rate_batch).looks[0]}; eps_pass {args.rate_eps_pass:g}, "
              f"eps_fail {args.rate_eps_fail:g}")
    rate_by: dict[str, list[Outcome]] = {}
    boundary: dict[str, float] = {}
    for judge, cal in (JUDGES if only in (None, "rate") else {}).items():
        for use in ("estimate", "ci_low"):
            name = f"{judge}, use={use}"
            rate_by[name] = rate_outcomes(cal, use, per_rate, at_rate, args.seed, rate_rule, args.rate_batch)
            boundary[name] = half_pass_point(cal, use)
            table(f"{name} (the fixed rule passes half the data sets at truth {boundary[name]:.4f})", rate_by[name])
    rate_all = [o for res in rate_by.values() for o in res]
    if only in (None, "human"):
        print(f"human-scale mean (PPI++) >= {HUMAN_THRESHOLD} over unlabelled items: {N_LABELED} labelled + "
              f"{N_UNLABELED} unlabelled items, looks every {items_schedule(N_UNLABELED).looks[0]}; eps_pass "
              f"{args.human_eps_pass:g}, eps_fail {args.human_eps_fail:g}; calls include the labelled items'")
    human_by: dict[str, list[Outcome]] = {}
    for judge in ("continuous", "ordinal 1-5") if only in (None, "human") else ():
        human_by[judge] = human_outcomes(judge, per_human, at_human, args.seed, human_rule)
        table(judge, human_by[judge])
    human_all = [o for res in human_by.values() for o in res]
    took = time.perf_counter() - t0
    print(f"({len(icc_all)} ICC data sets in {t_icc:.1f} s, {len(rate_all)} pass-rate and {len(human_all)} "
          f"human-mean data sets; {took:.1f} s)")

    groups = [("icc", icc_by, ICC_THRESHOLD, ICC_FAR), ("pass_rate", rate_by, RATE_THRESHOLD, RATE_FAR),
              ("human_mean", human_by, HUMAN_THRESHOLD, HUMAN_FAR)]
    groups = [g for g in groups if g[1]]
    everything = [o for _, fams, _, _ in groups for res in fams.values() for o in res]
    lines: list[tuple[str, str, str, bool | None]] = []
    for what, fams, threshold, far in groups:
        pooled = summary(what, [o for res in fams.values() for o in res], threshold, far)
        lines.append((f"sequential_{what}_calls", f"{pooled['calls_far']:.3f} of the fixed design's calls, the mean "
                      f"over every truth >= {far} from the threshold", f"<= {GOAL_CALLS}",
                      pooled["calls_far"] <= GOAL_CALLS))
        rows = calls_by_truth(fams, threshold, far)
        worst = max((row for row in rows if graded(row[0])), key=lambda row: row[2], default=("none", 0.0, np.nan))
        scope = "" if what == "icc" else ", use=estimate"
        lines.append((f"sequential_{what}_calls_per_truth", f"{worst[2]:.3f} of the fixed design's calls at the worst "
                      f"truth >= {far} from the threshold{scope} ({worst[0]}, truth {worst[1]:g}; each listed below)",
                      f"<= {GOAL_CALLS} at every truth", worst[2] <= GOAL_CALLS))
        info = [row for row in rows if not graded(row[0])]
        if info:
            worst_i = max(info, key=lambda row: row[2])
            lines.append((f"sequential_{what}_calls_per_truth[use=ci_low, from min_rate]", f"{worst_i[2]:.3f} of the "
                          f"fixed design's calls at the worst truth >= {far} from min_rate ({worst_i[0]}, truth "
                          f"{worst_i[1]:g})", f"<= {GOAL_CALLS} at every truth", None))
        for name, res in fams.items():
            if name not in boundary:
                continue
            own = [(name, t, share) for _, t, share in calls_by_truth({name: res}, boundary[name], far)]
            worst_o = max(own, key=lambda row: row[2], default=(name, 0.0, np.nan))
            lines.append((f"sequential_{what}_calls_from_own_boundary[{name}]", f"{worst_o[2]:.3f} of the fixed "
                          f"design's calls at the worst truth >= {far} from the rule's 50%-pass point "
                          f"{boundary[name]:.4f} (truth {worst_o[1]:g}; "
                          + ", ".join(f"{t:g}: {sh:.3f}" for _, t, sh in own) + ")",
                          f"<= {GOAL_CALLS} at every truth", worst_o[2] <= GOAL_CALLS))
        for name, res in fams.items():
            fam = summary(name, res, threshold, far)
            lines.append((f"sequential_{what}_agreement[{name}]", f"{fam['agree']:.4f} of {fam['n']} data sets give "
                          "the fixed verdict", f">= {GOAL_AGREE}", fam["agree"] >= GOAL_AGREE))
        lines.append((f"sequential_{what}_agreement", f"{pooled['agree']:.4f} of {pooled['n']} data sets give the "
                      "fixed verdict", f">= {GOAL_AGREE}", pooled["agree"] >= GOAL_AGREE))
        for name, fam in [(n, summary(n, r, threshold, far)) for n, r in fams.items()] + [("all", pooled)]:
            if not fam["n_at"]:  # --icc-truths without the threshold: nothing to grade
                lines.append((f"sequential_{what}_false_pass[{name}]", "not run (no data set on the threshold)",
                              f"<= {GOAL_FALSE_PASS}", None))
                continue
            more = fam["seq_pass_at"] - fam["fixed_pass_at"]
            lines.append((f"sequential_{what}_false_pass[{name}]", f"{more:+.4f} more false passes than the fixed "
                          f"design (SE {fam['se_more_at']:.4f}; sequential {fam['seq_pass_at']:.4f}, fixed "
                          f"{fam['fixed_pass_at']:.4f}; truth on "
                          f"the threshold, {fam['n_at']} data sets)", f"<= {GOAL_FALSE_PASS}", more <= GOAL_FALSE_PASS))
    most = max(o.used / o.cap for o in everything)
    lines.append(("sequential_max_calls", f"{most:.3f} of the cap at most", "<= 1.0", most <= 1.0))
    agree_all = float(np.mean([o.seq_pass == o.fixed_pass for o in everything]))
    lines.append(("sequential_agreement", f"{agree_all:.4f} overall", f">= {GOAL_AGREE}", agree_all >= GOAL_AGREE))
    ok = True
    for name, measured, goal, good in lines:
        info = CI_LOW_INFO if "ci_low" in name else "INFO (not graded)"
        print(f"{name}: measured {measured} goal {goal} {info if good is None else verdict(good)}")
        ok &= good is None or good
    for what, fams, threshold, far in groups:  # the calls goal as the issue states it: at every such truth
        ok &= print_calls_by_truth(f"sequential_{what}_calls_at", calls_by_truth(fams, threshold, far))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
