"""Designs drawn at random for ``bench_sequential.py``: the stated domain, its data and its runs.

ICC gates (``assert_icc_above(form="A,1")`` over repeats): items ``n`` uniform on 20-200, cap
``k`` uniform on 3-10 repeats, threshold uniform on 0.40-0.90 (two decimals), an integer scale
drawn from 1-5, 1-7, 0-10, 1-10 and 0-100, and one of three noise families: homoscedastic
(``y = a_i + e_ij``), item-dependent (``e_ij`` with an item's variance ``ve h_i``, ``h_i``
log-normal with sd 0.8 on the log scale, mean 1) and repeat offsets (``+ b_j``, a fifth of the
non-item variance).  A latent score ``y`` (total variance 1) lands on the scale as
``clip(round(mid + shift + range y / 5))`` with ``shift`` uniform on +-0.1 of the range.  The
true ICC(A,1) is that of the scale's scores, found by bisection on the latent ICC over a pool
of 2,000 items x 40 repeats (common random numbers).  Truths: the threshold and 0.1 and 0.2
either side of it, those within 0.05-0.97 that the scale reaches (rounding caps the ICC).

Pass-rate gates (``assert_pass_rate``): items ``N`` log-uniform on 20-500, ``min_rate``
uniform on 0.50-0.95, a perfect judge (half the designs) or one whose sensitivity and
specificity are uniform on 0.85-0.99 (its calibration fixed at those values on 100 / 400
items), the estimate rule (three designs in four) or the lower-bound rule.  Truths: ``min_rate``
and 0.05 and 0.1 either side of it, those up to 0.995.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from pytest_judgerel.stats.icc_batch import icc_values
from pytest_judgerel.stats.pass_rate import JudgeCalibration
from pytest_judgerel.stats.sequential import (
    ICC_EPS_FAIL,
    ICC_EPS_PASS,
    PASS_RATE_EPS_FAIL,
    PASS_RATE_EPS_PASS,
    LookSchedule,
    PassRateCutoff,
    SequentialLook,
    icc_sequential_look,
    pass_rate_cutoff,
    pass_rate_schedule,
    pass_rate_sequential_look,
    repeats_schedule,
)
from pytest_judgerel.stats.sequential_pass_rate import pass_rate_operating, pass_rate_stops
from pytest_judgerel.stats.sequential_plan import plan_icc, plan_pass_rate

SCALES = ((1, 5), (1, 7), (0, 10), (1, 10), (0, 100))
NOISES = ("homoscedastic", "item-dependent", "offsets")
ICC_OFFSETS = (-0.2, -0.1, 0.0, 0.1, 0.2)
RATE_OFFSETS = (-0.1, -0.05, 0.0, 0.05, 0.1)
FRESH_TAG = 11
"""The last word of the fresh data sets' derived seeds (the cells' own streams end in 3 and 5)."""
FRESH_MC_SEED = 100_000
"""The ICC rule's Monte Carlo seeds on fresh data sets start here (the cells' own use 0, 1, ...)."""


@dataclass(frozen=True)
class IccDesign:
    """One drawn ICC design."""

    index: int
    n: int
    cap: int
    threshold: float
    scale: tuple[int, int]
    noise: str
    shift: float

    @property
    def family(self) -> str:
        return f"icc {self.noise}"

    def label(self) -> str:
        return (f"icc#{self.index} n={self.n} k={self.cap} thr={self.threshold:.2f} "
                f"{self.scale[0]}-{self.scale[1]} {self.noise}")


@dataclass(frozen=True)
class RateDesign:
    """One drawn pass-rate design."""

    index: int
    n: int
    min_rate: float
    q0: float
    q1: float
    use: str

    @property
    def family(self) -> str:
        judge = "perfect judge" if self.q0 == 1.0 else "imperfect judge"
        return f"pass rate {judge}, use={self.use}"

    @property
    def calibration(self) -> JudgeCalibration:
        return JudgeCalibration(self.q0, self.q1, 100, 400)

    def label(self) -> str:
        return (f"rate#{self.index} N={self.n} min_rate={self.min_rate:.2f} q0={self.q0:.2f} q1={self.q1:.2f} "
                f"use={self.use}")


@dataclass
class Cell:
    """One design at one truth: the runs' outcomes and the fixed gate's pass probability."""

    design: IccDesign | RateDesign
    truth: float
    offset: float
    p_fixed: float
    shares: list[float] = field(default_factory=list)
    seq_pass: list[bool] = field(default_factory=list)
    fixed_pass: list[bool] = field(default_factory=list)
    early_pass: list[bool] = field(default_factory=list)
    expected: float | None = None  # the planned share of the calls (stats.sequential_plan)
    oracle: float | None = None  # the calls share of a rule that knows the truth (oracle_share)
    floor: float | None = None  # the same for a rule that must estimate it (oracle_share(known=False))
    exact: float | None = None  # the least calls of any rule keeping the promises here (pass rate: exact_bound)
    exact_share: float | None = None  # the rule's mean calls share computed exactly (pass rate: pass_rate_operating)
    agnostic: dict[float, float] = field(default_factory=dict)  # per predictability level (0.95, 0.99): the least
    # worst calls over the design's truths that clear of a rule that does not know the truth, with a look after
    # every item (pass rate, designs that can decide a line: bench_sequential.agnostic_bounds)

    @property
    def clear(self) -> bool:
        """The fixed verdict is at least 95% predictable here."""
        return self.p_fixed >= 0.95 or self.p_fixed <= 0.05


def oracle_share(p_fixed: float, stages: list[tuple[float, float]], eps_pass: float, eps_fail: float,
                 paths: int = 4000, known: bool = True) -> float:
    """Mean calls share of an oracle that knows the truth, on a Brownian-motion approximation: the
    cap's statistic is ``W(1) + theta`` with ``theta = Phi^-1(P(fixed passes))``; at a look with
    information fraction ``t`` it has seen ``S = W(t) + theta t`` and the cap passes with probability
    ``Phi((S + theta (1 - t)) / sqrt(1 - t))``; it stops at the levels.  ``stages``: (information
    fraction, calls share) per look, the cap last.  ``known=False``: the same motion seen by a rule
    that must estimate ``theta`` (flat prior: ``Phi(S / sqrt(t (1 - t)))``), the floor of a
    predictive rule at these levels."""
    from scipy.stats import norm

    theta = float(norm.ppf(min(max(p_fixed, 1e-9), 1 - 1e-9)))
    rng = np.random.default_rng(0)
    s = np.zeros(paths)
    t_prev = 0.0
    share = np.ones(paths)
    alive = np.ones(paths, dtype=bool)
    for t, calls in stages[:-1]:
        s = s + theta * (t - t_prev) + np.sqrt(max(t - t_prev, 0.0)) * rng.standard_normal(paths)
        t_prev = t
        p = norm.cdf((s + theta * (1 - t)) / np.sqrt(max(1 - t, 1e-12)) if known
                     else s / np.sqrt(max(t * (1 - t), 1e-12)))
        stop = alive & ((p >= 1 - eps_pass) | (p <= eps_fail))
        share[stop] = calls
        alive &= ~stop
    return float(share.mean())


def icc_stages(design: IccDesign, truth: float) -> list[tuple[float, float]]:
    """(information fraction, calls share) of every look of the schedule without the offsets probe
    (a rule that knows the truth needs none): ICC(1)'s large-sample variance
    ``2 (1 - rho)^2 (1 + (r - 1) rho)^2 / (r (r - 1) (m - 1))`` (Fisher 1925) at m items, r repeats."""
    def info(m: int, r: int) -> float:
        return r * (r - 1) * (m - 1) / (2 * (1 - truth) ** 2 * (1 + (r - 1) * truth) ** 2)

    sched = repeats_schedule(design.cap, n_items=design.n, probe=False)
    full = info(design.n, design.cap)
    return [(info(m or design.n, r) / full, (m or design.n) * r / (design.n * design.cap)) for m, r, _ in sched.stages]


def draw_icc_designs(count: int, seed: int) -> list[IccDesign]:
    rng = np.random.default_rng([seed, 1])
    return [IccDesign(i, int(rng.integers(20, 201)), int(rng.integers(3, 11)), round(float(rng.uniform(0.4, 0.9)), 2),
                      SCALES[int(rng.integers(len(SCALES)))], NOISES[i % len(NOISES)], float(rng.uniform(-0.1, 0.1)))
            for i in range(count)]


def draw_rate_designs(count: int, seed: int) -> list[RateDesign]:
    rng = np.random.default_rng([seed, 2])
    out = []
    for i in range(count):
        n = int(round(math.exp(rng.uniform(math.log(20), math.log(500)))))
        perfect = i % 2 == 0
        q0, q1 = (1.0, 1.0) if perfect else (round(float(rng.uniform(0.85, 0.99)), 3),
                                             round(float(rng.uniform(0.85, 0.99)), 3))
        out.append(RateDesign(i, n, round(float(rng.uniform(0.5, 0.95)), 2), q0, q1,
                              "ci_low" if i % 4 == 3 else "estimate"))
    return out


# ---------------------------------------------------------------------------- ICC data
class IccGenerator:
    """Scores of one design at a latent ICC ``rho``; :meth:`latent_for` finds ``rho`` for a true ICC."""

    def __init__(self, design: IccDesign) -> None:
        self.design = design

    def scores(self, rho: float, rng: np.random.Generator, n: int, k: int, size: int | None = None) -> np.ndarray:
        d = self.design
        shape = (n, k) if size is None else (size, n, k)
        a = rng.standard_normal(shape[:-1] + (1,)) * math.sqrt(rho)
        e = rng.standard_normal(shape)
        ve = 1 - rho
        if d.noise == "offsets":
            b = rng.standard_normal(shape[:-2] + (1, k)) * math.sqrt(0.2 * ve)
            y = a + b + e * math.sqrt(0.8 * ve)
        elif d.noise == "item-dependent":
            h = np.exp(0.8 * rng.standard_normal(shape[:-1] + (1,)) - 0.32)
            y = a + e * np.sqrt(ve * h)
        else:
            y = a + e * math.sqrt(ve)
        lo, hi = d.scale
        span = hi - lo
        return np.clip(np.round((lo + hi) / 2 + d.shift * span + span * y / 5), lo, hi)

    def true_icc(self, rho: float) -> float:
        rng = np.random.default_rng(12345)  # common random numbers: monotone in rho
        return float(icc_values(self.scores(rho, rng, 2000, 40), "A,1"))

    def latent_for(self, truth: float) -> float:
        lo, hi = 0.0, 0.999
        for _ in range(16):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if self.true_icc(mid) < truth else (lo, mid)
        return (lo + hi) / 2


def icc_fixed_passes(stack: np.ndarray, threshold: float) -> np.ndarray:
    values = np.atleast_1d(np.asarray(icc_values(stack, "A,1"), dtype=float))
    return np.isfinite(values) & (values >= threshold)


def run_icc(x: np.ndarray, design: IccDesign, seed: int) -> tuple[float, bool, bool]:
    """(share of the cap's calls, sequential pass, stopped early with "pass") on one data set."""
    sched = repeats_schedule(design.cap, n_items=design.n)
    for items, r, probe in sched.stages:
        look = icc_sequential_look(x[:items or design.n, :r], threshold=design.threshold, cap=design.cap,
                                   schedule=sched, seed=seed, probe=x[:probe] if probe else None)
        if look.stopped:
            return look.share_of_cap, look.decision == "pass", look.decision == "pass" and not look.at_cap
    raise AssertionError("the cap always stops")  # pragma: no cover


#: data sets that estimate an ICC design's P(fixed passes) per truth: the first ``_FIXED_CHUNK`` from the
#: cell's own stream (before its data sets), the rest from a stream of their own (the data sets stay the same)
FIXED_SETS = 2000
_FIXED_CHUNK = 400


def _icc_p_fixed(gen: IccGenerator, rho: float, rng: np.random.Generator, extra: np.random.Generator,
                 sets: int) -> float:
    """P(fixed passes) over ``sets`` data sets, drawn in chunks (memory: a chunk of n x cap x 400)."""
    d = gen.design
    passes, drawn = 0, 0
    while drawn < sets:
        size = min(_FIXED_CHUNK, sets - drawn)
        source = rng if drawn == 0 else extra
        passes += int(icc_fixed_passes(gen.scores(rho, source, d.n, d.cap, size), d.threshold).sum())
        drawn += size
    return passes / sets


def icc_cells(design: IccDesign, datasets: int, seed: int, fixed_sets: int = FIXED_SETS, plan: bool = True,
              at_threshold: int | None = None) -> list[Cell]:
    """The design's cells: ``datasets`` data sets per truth, ``at_threshold`` (default the same) on it;
    ``P(fixed passes)`` from ``fixed_sets`` more (:func:`_icc_p_fixed`)."""
    gen = IccGenerator(design)
    truths = [round(design.threshold + off, 3) for off in ICC_OFFSETS if 0.05 <= design.threshold + off <= 0.97]
    cells = []
    for t_i, target in enumerate(truths):
        rho = gen.latent_for(target)
        truth = gen.true_icc(rho)
        if abs(truth - target) > 0.01:  # out of the scale's reach (rounding caps the ICC)
            continue
        rng = np.random.default_rng([seed, design.index, t_i, 3])
        p_fixed = _icc_p_fixed(gen, rho, rng, np.random.default_rng([seed, design.index, t_i, 7]), fixed_sets)
        cell = Cell(design, truth, round(target - design.threshold, 3), p_fixed)
        stages = icc_stages(design, truth)
        cell.oracle = oracle_share(p_fixed, stages, ICC_EPS_PASS, ICC_EPS_FAIL)
        cell.floor = oracle_share(p_fixed, stages, ICC_EPS_PASS, ICC_EPS_FAIL, known=False)
        if plan:
            cell.expected = plan_icc(design.n, design.cap, design.threshold, truth).expected_share
        for d in range(at_threshold or datasets if cell.offset == 0 else datasets):
            x = gen.scores(rho, rng, design.n, design.cap)
            share, seq, early = run_icc(x, design, d)
            cell.shares.append(share)
            cell.seq_pass.append(seq)
            cell.fixed_pass.append(bool(icc_fixed_passes(x, design.threshold)[0]))
            cell.early_pass.append(early)
        cells.append(cell)
    return cells


def _fresh_rng(cell: Cell, seed: int) -> np.random.Generator:
    """A stream independent of the cell's own data sets (a different derived seed: a tag the
    benchmark's streams never use)."""
    return np.random.default_rng([seed, cell.design.index, int(round(1000 * (cell.offset + 1))), FRESH_TAG])


def fresh_icc_shares(cell: Cell, datasets: int, seed: int) -> list[float]:
    """The calls share of ``datasets`` fresh data sets of an ICC cell (same design and truth, new
    data and new Monte Carlo seeds): the estimate that was not used to pick the cell."""
    design = cell.design
    assert isinstance(design, IccDesign)
    gen = IccGenerator(design)
    rho = gen.latent_for(round(design.threshold + cell.offset, 3))
    rng = _fresh_rng(cell, seed)
    return [run_icc(gen.scores(rho, rng, design.n, design.cap), design, FRESH_MC_SEED + d)[0]
            for d in range(datasets)]


# ---------------------------------------------------------------------------- pass rate
def _run_rate(verdicts: np.ndarray, design: RateDesign, cutoff: PassRateCutoff,
              sched: LookSchedule) -> SequentialLook:
    """The sequential pass-rate rule on one data set's verdicts: the look it stopped at."""
    for m in sched.looks:
        look = pass_rate_sequential_look(int(verdicts[:m].sum()), m, n_cap=design.n, min_rate=design.min_rate,
                                         calibration=design.calibration, use=design.use, cutoff=cutoff,
                                         schedule=sched)
        if look.stopped:
            return look
    raise AssertionError("the cap always stops")  # pragma: no cover


def exact_bound(cell: Cell, oc: float, agree_clear: float, agree_at: float) -> float:
    """The least expected calls share at ``cell``'s truth of any sequential rule that keeps the
    benchmark's promises on its pass-rate design at every truth (|OC| <= ``oc``, agreement
    ``agree_clear`` / ``agree_at``, pass stops reversed <= eps_pass): ``pass_rate_bound.least_calls_share``,
    a linear program over stops after any item; exact, where ``Cell.floor`` approximates."""
    from benchmarks.harness.pass_rate_bound import least_calls_share

    design = cell.design
    assert isinstance(design, RateDesign)
    cal = design.calibration
    cutoff = pass_rate_cutoff(design.n, min_rate=design.min_rate, calibration=cal, use=design.use)

    def raw(rate: float) -> float:
        return cal.sensitivity * rate + (1 - cal.specificity) * (1 - rate)

    if not 0 < cutoff.count <= design.n:  # the fixed gate's verdict is the same whatever is seen
        return 0.0
    return least_calls_share(design.n, cutoff.count, raw(cell.truth), threshold_raw=raw(design.min_rate),
                             eps_pass=PASS_RATE_EPS_PASS, oc=oc, agree_clear=agree_clear, agree_at=agree_at).share


def fresh_rate_shares(cell: Cell, datasets: int, seed: int) -> list[float]:
    """The calls share of ``datasets`` fresh data sets of a pass-rate cell (:func:`fresh_icc_shares`)."""
    design = cell.design
    assert isinstance(design, RateDesign)
    cal = design.calibration
    cutoff = pass_rate_cutoff(design.n, min_rate=design.min_rate, calibration=cal, use=design.use)
    sched = pass_rate_schedule(design.n)
    raw = cal.sensitivity * cell.truth + (1 - cal.specificity) * (1 - cell.truth)
    rng = _fresh_rng(cell, seed)
    return [_run_rate(rng.random(design.n) < raw, design, cutoff, sched).share_of_cap for _ in range(datasets)]


def fresh_shares(cell: Cell, icc_datasets: int, rate_datasets: int, seed: int) -> list[float]:
    """Fresh calls shares of any cell: ``icc_datasets`` or ``rate_datasets`` data sets."""
    if isinstance(cell.design, IccDesign):
        return fresh_icc_shares(cell, icc_datasets, seed)
    return fresh_rate_shares(cell, rate_datasets, seed)


def rate_cells(design: RateDesign, datasets: int, seed: int, plan: bool = True) -> list[Cell]:
    from scipy.stats import binom

    cal = design.calibration
    cutoff = pass_rate_cutoff(design.n, min_rate=design.min_rate, calibration=cal, use=design.use)
    sched = pass_rate_schedule(design.n)
    truths = [round(design.min_rate + off, 3) for off in RATE_OFFSETS if design.min_rate + off <= 0.995]
    stops = pass_rate_stops(design.n, cutoff.count, sched.looks, PASS_RATE_EPS_PASS, PASS_RATE_EPS_FAIL) \
        if 0 < cutoff.count <= design.n else None
    cells = []
    for t_i, truth in enumerate(truths):
        raw = cal.sensitivity * truth + (1 - cal.specificity) * (1 - truth)
        p_fixed = float(binom.sf(cutoff.count - 1, design.n, raw))
        cell = Cell(design, truth, round(truth - design.min_rate, 3), p_fixed)
        stages = [(m / design.n, m / design.n) for m in sched.looks]
        cell.oracle = oracle_share(p_fixed, stages, PASS_RATE_EPS_PASS, PASS_RATE_EPS_FAIL)
        cell.floor = oracle_share(p_fixed, stages, PASS_RATE_EPS_PASS, PASS_RATE_EPS_FAIL, known=False)
        if stops is not None:
            cell.exact_share = float(pass_rate_operating(stops, [raw]).calls_share[0])
        if plan:
            cell.expected = plan_pass_rate(design.n, min_rate=design.min_rate, calibration=cal, use=design.use,
                                           truth=truth).expected_share
        rng = np.random.default_rng([seed, design.index, t_i, 5])
        for _ in range(datasets):
            verdicts = rng.random(design.n) < raw
            look = _run_rate(verdicts, design, cutoff, sched)
            cell.shares.append(look.share_of_cap)
            cell.seq_pass.append(look.decision == "pass")
            cell.fixed_pass.append(int(verdicts.sum()) >= cutoff.count)
            cell.early_pass.append(look.decision == "pass" and not look.at_cap)
        cells.append(cell)
    return cells
