"""Benchmark: the pairwise non-inferiority gate keeps its error rates under position bias and ties.

Run: python benchmarks/bench_pairwise.py [--quick] [--designs N] [--reps R] [--seed S]
[--only fixed|sequential] [--seq-designs N] [--seq-reps R] [--seq-fresh R]

Simulation with known truth.  Designs are drawn with a fixed seed from this domain:

* items n: 100-300; repeats k: 1-3 (each pair judged k times in each order);
* tie rate t: 0-0.30 (a verdict is a tie with probability t);
* position bias b: 0.50-0.60 (between equal answers the one shown first wins a share b of the
  non-tie verdicts: logit P(first wins) = logit p + logit b);
* item heterogeneity: P(candidate better | no tie) p_i ~ Beta(c mu, c (1 - mu)), c in 2-10;
* margin m: 0.05-0.10; alpha = 0.05.

The truth is the population win rate with ties split, both orders averaged:
``W = t / 2 + (1 - t) E[(sigma(l + beta) + sigma(l - beta)) / 2]``, ``l = logit p``, ``beta =
logit b``, found by quadrature; mu is solved so that W is exactly the value wanted.

Goals (the issue's):
1. at the margin (W = 0.5 - m) the gate (``assert_not_worse``'s rule: the one-sided 1 - alpha lower
   bound of :func:`pytest_judgerel.stats.pairwise.win_rate` > 0.5 - m) passes at most alpha + 0.01
   of data sets, pooled over designs, and no design's rate is significantly above it (its exact
   99% lower bound <= alpha + 0.01);
2. power >= 0.8 in every design at the stated effect W = 0.55 (the candidate wins 55%, ties split);
   the power for equal systems (W = 0.5, a distance of only the margin) is printed as INFO: it
   needs more items than some designs have;
3. judging one order only (the candidate always shown first; the anchor is the both-orders gate of
   the same run) visibly fails goal 1.

Sequential section (``--only sequential``; the rule of
:mod:`pytest_judgerel.stats.sequential_pairwise`, looks on ``comparison_schedule``).  Designs drawn
from: n 40-400, k 1-3, ties 0-0.30, bias 0.50-0.60, c 2-10, margin 0-0.10; truths W = 0.5 - margin
+ (-0.10, -0.05, -0.02, 0, 0.02, 0.05, 0.10).  Each data set is judged by the fixed gate (the
anchor, same data) and by the sequential rule on its item prefixes.  Goals:
4. |P(seq pass) - P(fixed pass)| <= 0.03 at every design and truth, graded on fresh data sets:
   the 3 worst cells on the benchmark's data sets are measured again on ``--seq-fresh`` independent
   ones and the largest fresh gap graded (the worst of many noisy estimates is biased upwards);
5. pass stops reversed by the cap (an early pass where the fixed gate on the cap's data fails)
   <= 0.01 of the data sets (pooled);
6. where the fixed verdict is 95% predictable (P(fixed pass) >= 0.95 or <= 0.05) the sequential
   gate spends on average at most half the cap's calls (mean and worst cell printed).
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import integrate, optimize, stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # a script: the project root, for benchmarks.harness

from benchmarks.harness.fresh import remeasure_worst  # noqa: E402
from pytest_judgerel.stats.pairwise import win_rate  # noqa: E402
from pytest_judgerel.stats.proportion import clopper_pearson  # noqa: E402
from pytest_judgerel.stats.sequential_pairwise import comparison_schedule, comparison_sequential_look  # noqa: E402

ALPHA = 0.05
EFFECT = 0.55


@dataclass(frozen=True)
class Design:
    n: int
    repeats: int
    tie: float
    bias: float
    conc: float
    margin: float

    def __str__(self) -> str:
        return (f"n={self.n:3d} k={self.repeats} ties={self.tie:.2f} bias={self.bias:.2f}/{1 - self.bias:.2f} "
                f"c={self.conc:4.1f} margin={self.margin:.3f}")


def draw_designs(count: int, seed: int) -> list[Design]:
    rng = np.random.default_rng(seed)
    return [Design(int(rng.integers(100, 301)), int(rng.integers(1, 4)), float(rng.uniform(0, 0.30)),
                   float(rng.uniform(0.5, 0.6)), float(rng.uniform(2, 10)), float(rng.uniform(0.05, 0.10)))
            for _ in range(count)]


def _sigmoid(x: np.ndarray | float) -> np.ndarray | float:
    return 1 / (1 + np.exp(-x))


def true_win_rate(mu: float, d: Design) -> float:
    """W for a mean ``mu`` of p, by quadrature over the Beta's quantiles (a bounded integrand)."""
    beta = math.log(d.bias / (1 - d.bias))
    dist = stats.beta(d.conc * mu, d.conc * (1 - mu))

    def f(u: float) -> float:
        p = min(max(float(dist.ppf(u)), 1e-15), 1 - 1e-15)
        lp = math.log(p / (1 - p))
        return (float(_sigmoid(lp + beta)) + float(_sigmoid(lp - beta))) / 2

    inner = integrate.quad(f, 0, 1, limit=200, epsabs=1e-10)[0]
    return d.tie / 2 + (1 - d.tie) * inner


def solve_mu(target: float, d: Design) -> float:
    return float(optimize.brentq(lambda m: true_win_rate(m, d) - target, 1e-4, 1 - 1e-4, xtol=1e-12))


def simulate(d: Design, mu: float, rng: np.random.Generator, both_orders: bool) -> list[np.ndarray]:
    """Per item the candidate's verdict scores (1, 0.5, 0): k repeats x (2 or 1) orders."""
    beta = math.log(d.bias / (1 - d.bias))
    p = rng.beta(d.conc * mu, d.conc * (1 - mu), size=d.n)
    lp = np.log(np.clip(p, 1e-12, 1 - 1e-12) / np.clip(1 - p, 1e-12, 1))
    orders = [beta, -beta] if both_orders else [beta]  # +beta: the candidate shown first
    cols = []
    for shift in orders:
        pw = np.asarray(_sigmoid(lp + shift))[:, None]
        u = rng.random((d.n, d.repeats))
        tie = rng.random((d.n, d.repeats)) < d.tie
        cols.append(np.where(tie, 0.5, (u < pw).astype(float)))
    return list(np.concatenate(cols, axis=1))


def passes(outcomes: list[np.ndarray], margin: float, seed: int) -> bool:
    wr = win_rate(outcomes, confidence=1 - 2 * ALPHA, seed=seed)
    return wr.ci_low > 0.5 - margin


def rate(d: Design, target: float, reps: int, seed: int, both_orders: bool) -> tuple[int, int]:
    mu = solve_mu(target, d)
    rng = np.random.default_rng(seed)
    hits = sum(passes(simulate(d, mu, rng, both_orders), d.margin, seed + r) for r in range(reps))
    return hits, reps


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="4 designs x 200 data sets")
    ap.add_argument("--designs", type=int, default=8)
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=20261128)
    ap.add_argument("--seq-designs", type=int, default=6, help="designs of the sequential section")
    ap.add_argument("--seq-reps", type=int, default=200, help="data sets per design and truth (sequential section)")
    ap.add_argument("--seq-fresh", type=int, default=1000,
                    help="fresh data sets for each of the 3 worst cells of the operating-characteristic goal")
    ap.add_argument("--only", choices=("fixed", "sequential"), help="run one section (default: both)")
    args = ap.parse_args(argv)
    code = 0
    if args.only != "fixed":
        code |= sequential_section(args)
    if args.only == "sequential":
        return code
    n_designs, reps = (4, 200) if args.quick else (args.designs, args.reps)
    designs = draw_designs(n_designs, args.seed)
    print(f"pairwise non-inferiority gate: {n_designs} designs x {reps} data sets, alpha={ALPHA}, seed {args.seed}")
    rows = []
    for i, d in enumerate(designs):
        fp = rate(d, 0.5 - d.margin, reps, args.seed + 10 * i, True)
        pw = rate(d, EFFECT, reps, args.seed + 10 * i + 1, True)
        one = rate(d, 0.5 - d.margin, reps, args.seed + 10 * i + 2, False)
        even = rate(d, 0.5, reps, args.seed + 10 * i + 3, True)
        rows.append((d, fp, pw, one))
        print(f"  {d}: false pass {fp[0] / reps:.3f}  power@W={EFFECT} {pw[0] / reps:.3f}  "
              f"(INFO power@W=0.50 {even[0] / reps:.3f})  one-order false pass {one[0] / reps:.3f}", flush=True)
    return report(rows, reps) | code


def report(rows: list, reps: int) -> int:
    limit = ALPHA + 0.01
    total = len(rows) * reps
    pooled = sum(r[1][0] for r in rows) / total
    worst = max(rows, key=lambda r: r[1][0])
    worst_low = clopper_pearson(worst[1][0], reps, 0.98).ci_low  # one-sided 99% lower bound
    one_pooled = sum(r[3][0] for r in rows) / total
    min_power = min(r[2][0] / reps for r in rows)
    ok1 = pooled <= limit and worst_low <= limit
    ok2 = min_power >= 0.8
    one_fails = one_pooled > limit
    ratio = one_pooled / pooled if pooled > 0 else float("inf")
    print(f"{'PASS' if ok1 else 'FAIL'} false-pass rate at the margin, both orders: pooled {pooled:.4f} <= "
          f"{limit:.2f}; worst design {worst[1][0] / reps:.3f} (exact 99% lower bound {worst_low:.3f} <= {limit:.2f})")
    print(f"{'PASS' if ok2 else 'FAIL'} power >= 0.8 at W = {EFFECT}: smallest over designs {min_power:.3f}")
    print(f"{'PASS' if one_fails else 'FAIL'} one order only visibly fails goal 1: pooled false-pass rate "
          f"{one_pooled:.4f} > {limit:.2f} ({ratio:.1f}x the both-orders anchor of this run)")
    return 0 if ok1 and ok2 and one_fails else 1


SEQ_OFFSETS = (-0.10, -0.05, -0.02, 0.0, 0.02, 0.05, 0.10)


def draw_seq_designs(count: int, seed: int) -> list[Design]:
    rng = np.random.default_rng([seed, 7])
    return [Design(int(rng.integers(40, 401)), int(rng.integers(1, 4)), float(rng.uniform(0, 0.30)),
                   float(rng.uniform(0.5, 0.6)), float(rng.uniform(2, 10)), float(rng.uniform(0, 0.10)))
            for _ in range(count)]


def sequential_run(items: list[np.ndarray], threshold: float) -> tuple[bool, bool, int]:
    """(fixed passes, sequential passes, items used) on one data set; the early pass is the look's."""
    n = len(items)
    data = {f"i{k}": list(a) for k, a in enumerate(items)}
    keys = list(data)
    fixed = win_rate(data, confidence=1 - 2 * ALPHA).ci_low > threshold  # the gate's own rule (seed 0)
    sched = comparison_schedule(n)
    for size in sched.looks:
        if size == n:
            return fixed, fixed, n
        look = comparison_sequential_look({k: data[k] for k in keys[:size]}, n_cap=n, threshold=threshold,
                                          alpha=ALPHA, schedule=sched, seed=size)
        if look.stopped:
            return fixed, look.decision == "pass", size
    raise AssertionError("the schedule ends at the cap")


@dataclass(frozen=True)
class SeqCell:
    """One design at one truth of the sequential section: pass rates, mean calls share, reversed pass stops."""

    design: int
    truth: int
    p_fix: float
    p_seq: float
    share: float
    reversed: int
    discordant: int  # data sets where the two verdicts differ
    reps: int

    @property
    def gap(self) -> float:
        return abs(self.p_seq - self.p_fix)


def seq_truth(d: Design, j: int) -> float:
    """The win rate ``SEQ_OFFSETS[j]`` from design ``d``'s threshold, kept within 0.03-0.97."""
    return min(0.97, max(0.03, 0.5 - d.margin + SEQ_OFFSETS[j]))


def seq_cell(d: Design, i: int, j: int, reps: int, rng: np.random.Generator) -> SeqCell:
    """``reps`` data sets of design ``d`` (number ``i``) at truth :func:`seq_truth` ``(d, j)``."""
    threshold = 0.5 - d.margin
    mu = solve_mu(seq_truth(d, j), d)
    runs = [sequential_run(simulate(d, mu, rng, True), threshold) for _ in range(reps)]
    return SeqCell(i, j, sum(r[0] for r in runs) / reps, sum(r[1] for r in runs) / reps,
                   float(np.mean([r[2] for r in runs])) / d.n, sum(r[1] and not r[0] and r[2] < d.n for r in runs),
                   sum(r[0] != r[1] for r in runs), reps)


def sequential_section(args: argparse.Namespace) -> int:
    n_designs, reps = (3, 60) if args.quick else (args.seq_designs, args.seq_reps)
    fresh = 200 if args.quick else args.seq_fresh
    designs = draw_seq_designs(n_designs, args.seed)
    print(f"sequential pairwise gate: {n_designs} designs x {len(SEQ_OFFSETS)} truths x {reps} data sets, "
          f"alpha={ALPHA}, seed {args.seed}; anchor: the fixed gate on the same data")
    cells: list[SeqCell] = []
    for i, d in enumerate(designs):
        row = [seq_cell(d, i, j, reps, np.random.default_rng([args.seed, i, j])) for j in range(len(SEQ_OFFSETS))]
        cells += row
        print(f"  {d}\n    " + "\n    ".join(
            f"W={seq_truth(d, c.truth):.2f}: fixed {c.p_fix:.2f} "
            f"seq {c.p_seq:.2f} calls {c.share:.2f}" for c in row), flush=True)
    ok4, gap_line = _fresh_gap(cells, designs, fresh, args.seed)
    total = sum(c.reps for c in cells)
    rev = sum(c.reversed for c in cells) / total
    ok5 = rev <= 0.01
    predictable = [c.share for c in cells if c.p_fix >= 0.95 or c.p_fix <= 0.05]
    mean_share = float(np.mean(predictable)) if predictable else float("nan")
    ok6 = bool(predictable) and mean_share <= 0.5
    print(f"{'PASS' if ok4 else 'FAIL'} |P(seq pass) - P(fixed pass)| <= 0.03 at every truth: {gap_line}")
    print(f"{'PASS' if ok5 else 'FAIL'} pass stops reversed by the cap <= 0.01: {rev:.4f} of {total} data sets")
    print(f"{'PASS' if ok6 else 'FAIL'} calls where the fixed verdict is 95% predictable: mean share of the cap "
          f"{mean_share:.3f} <= 0.5 (worst cell {max(predictable, default=float('nan')):.3f}; "
          f"{len(predictable)} cells)")
    return 0 if ok4 and ok5 and ok6 else 1


def _fresh_gap(cells: list[SeqCell], designs: list[Design], fresh: int, seed: int,
               candidates: int = 3) -> tuple[bool, str]:
    """The operating-characteristic goal graded without the winner's curse (:mod:`benchmarks.harness.fresh`):
    the ``candidates`` cells with the largest gaps are measured again on ``fresh`` independent data sets
    each and the largest fresh gap is graded; each candidate's "there -> fresh" pair is printed, with
    the fresh SE."""
    pairs = remeasure_worst(cells, lambda c: c.gap, lambda _, c: seq_cell(
        designs[c.design], c.design, c.truth, fresh, np.random.default_rng([seed, c.design, c.truth, 1])), candidates)
    graded = max((f for _, f in pairs), key=lambda c: c.gap)
    there = " / ".join(f"design {c.design} truth {SEQ_OFFSETS[c.truth]:+.2f}: {c.gap:.3f} -> {f.gap:.3f} "
                       f"(SE {_gap_se(f):.3f})" for c, f in pairs)
    return graded.gap <= 0.03, (f"{graded.gap:.3f} on {fresh} fresh data sets at {designs[graded.design]}, "
                                f"truth {SEQ_OFFSETS[graded.truth]:+.2f} from the threshold; the {candidates} worst "
                                f"on the benchmark's data sets, there -> fresh: {there}")


def _gap_se(c: SeqCell) -> float:
    """Standard error of the paired difference of pass rates: per data set the difference is -1, 0 or
    1, so its variance is the discordant share minus the squared mean gap."""
    return math.sqrt(max(c.discordant / c.reps - c.gap ** 2, 0.0) / c.reps)


if __name__ == "__main__":
    sys.exit(main())
