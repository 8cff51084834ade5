"""Sequential gates: draw repeats (or items) in steps and stop once the cap's verdict is settled.

A fixed gate spends its whole budget: k repeats of n items, or all N items.  A sequential gate
takes the same budget as a **cap** and looks at the data at the points of a :class:`LookSchedule`.
At every look before the cap it computes the **predictive probability** that the fixed gate, run
on the cap's full data, will pass (stochastic curtailment: Lan, Simon & Halperin 1982; the
predictive form of Spiegelhalter, Freedman & Blackburn 1986 and Lee & Liu 2008), ``p_cap = P(fixed
rule on (observed + the not yet drawn data) passes | observed)``, and stops with ``"pass"`` when
``p_cap >= 1 - eps_pass``, with ``"fail"`` when ``p_cap <= eps_fail``.  At the cap the verdict
*is* the fixed gate's rule on the cap's data (the same function, the same arguments).

**What it guarantees.**  Never more than the cap; at the cap, exactly the fixed verdict; where
the predictive model is right, ``P(sequential pass, fixed fail) <= eps_pass`` and ``P(sequential
fail, fixed pass) <= eps_fail`` over all looks together (the events "stopped at look t and the
cap would disagree" are disjoint over t).  So ``eps_pass`` bounds the excess of false passes over
the fixed design whatever the truth, and ``eps_fail`` only costs agreement.

The rules: :func:`icc_sequential_look` (ICC gates over repeats; the remaining repeats simulated
from the two-way random model, :func:`_simulate_completions`), :func:`pass_rate_sequential_look`
(the corrected pass rate over items; the beta-binomial predictive of the judge's pass count under
a Jeffreys prior against the cutoff of :func:`pass_rate_cutoff`: exact, no simulation) and
:func:`human_mean_sequential_look` (the PPI++ mean; the unjudged scores from the Bayesian-bootstrap
predictive of the judged ones, Rubin 1981).  ``benchmarks/bench_sequential.py`` measures them.
Deterministic: ``numpy.random.default_rng(seed)``; a completed data set on which the statistic is
undefined counts as a fail, as the fixed gate fails a statistic it cannot compute.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ReliabilityError
from .interval import check_confidence, check_use

__all__ = [
    "LookSchedule", "SequentialLook", "PassRateCutoff",
    "repeats_schedule", "items_schedule",
    "FixedVerdict", "icc_fixed_verdict", "icc_sequential_look",
    "pass_rate_cutoff", "pass_rate_sequential_look",
    "human_mean_sequential_look",
    "ICC_EPS_PASS", "ICC_EPS_FAIL", "PASS_RATE_EPS_PASS", "PASS_RATE_EPS_FAIL",
    "HUMAN_MEAN_EPS_PASS", "HUMAN_MEAN_EPS_FAIL", "N_SIM", "OFFSET_PRIOR_DF",
]

_USES = ("estimate", "ci_low")
"""What a sequential gate may test: its estimate or the lower bound of its interval."""

ICC_EPS_PASS = 0.01
"""Stop with "pass" when the predictive probability that the cap passes is >= 1 - eps_pass (ICC
rule); it bounds the extra false passes over the fixed design (module docstring)."""
ICC_EPS_FAIL = 0.10
"""Stop with "fail" when that probability is <= eps_fail (ICC rule): the futility level gamma = 0.9 that
Jennison & Turnbull (2000, *Group Sequential Methods*, p. 206) recommend for stochastic curtailment
(Lachin 2005, *Stat. Med.* 24, on futility by conditional power).  Measured with
``benchmarks/bench_sequential.py`` at six seeds (``docs/concepts.md``, "Sequential gates"): it also
offsets the pass side's lean with repeat offsets."""
PASS_RATE_EPS_PASS = 0.01
"""The same for the pass-rate rule (exact predictive, no Monte Carlo error)."""
PASS_RATE_EPS_FAIL = 0.03
"""The fail side of the pass-rate rule."""
HUMAN_MEAN_EPS_PASS = 0.01
"""The pass side of the PPI++ human-mean rule (measured with ``benchmarks/bench_sequential.py --human-only``)."""
HUMAN_MEAN_EPS_FAIL = 0.03
"""The fail side of the PPI++ human-mean rule."""
OFFSET_PRIOR_DF = 4.0
"""Pseudo-degrees of freedom of the ICC rule's prior on the repeats' expected mean square, centred
at "no offsets" (``_offsets_mean_square``; chosen with ``benchmarks/bench_sequential.py``)."""
N_SIM = 400
"""Simulated completions per look (ICC and human-mean rules); Monte Carlo sd at p = 0.98: 0.007."""

_DECISIONS = ("continue", "pass", "fail")


# ---------------------------------------------------------------------------- schedules
@dataclass(frozen=True)
class LookSchedule:
    """The sizes (repeats, or items, drawn so far) at which a sequential gate looks; the last is the cap."""

    looks: tuple[int, ...]
    unit: str

    @property
    def cap(self) -> int:
        return self.looks[-1]

    @property
    def first(self) -> int:
        return self.looks[0]

    def look_number(self, used: int) -> int:
        """1-based number of the look at ``used`` (looks off the schedule count the scheduled ones passed)."""
        return sum(1 for s in self.looks if s <= used)

    def next_size(self, used: int) -> int | None:
        """The size of the next look after ``used`` (None at or past the cap)."""
        return next((s for s in self.looks if s > used), None)

    def to_dict(self) -> dict[str, Any]:
        return {"looks": list(self.looks), "unit": self.unit, "cap": self.cap}


def _positive_int(value: Any, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ReliabilityError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def repeats_schedule(cap: int, first: int = 2) -> LookSchedule:
    """Looks after repeats ``first, first + 1, ..., cap`` (an ICC needs 2 repeats before it can look)."""
    cap = _positive_int(cap, "cap (the repeats of the fixed design)", 2)
    first = _positive_int(first, "first", 2)
    if first > cap:
        raise ReliabilityError(f"the first look ({first} repeats) lies past the cap ({cap} repeats)")
    return LookSchedule(tuple(range(first, cap + 1)), "repeats")


def items_schedule(cap: int, batch: int | None = None) -> LookSchedule:
    """Looks after every ``batch`` items (default ``max(50, ceil(cap / 10))``) and at the cap."""
    cap = _positive_int(cap, "cap (the items of the fixed design)")
    batch = max(50, math.ceil(cap / 10)) if batch is None else _positive_int(batch, "batch")
    looks = list(range(batch, cap, batch)) + [cap]
    return LookSchedule(tuple(looks), "items")


# ---------------------------------------------------------------------------- result
@dataclass(frozen=True)
class SequentialLook:
    """One look of a sequential gate.

    ``decision``: ``"continue"`` (draw the next step), ``"pass"`` or ``"fail"`` (stop: the
    verdict); ``look`` the 1-based look number on ``schedule``; ``used`` the repeats (or items)
    drawn so far, ``cap`` the fixed design's; ``p_pass_at_cap`` the predictive probability that
    the fixed gate passes on the cap's data (exactly 0 or 1 at the cap); ``observed`` the gate's
    statistic on the data so far (None where undefined); ``reason`` in words; ``n_sim`` the
    simulated completions run (fewer than asked once "continue" was certain, see
    ``_simulate_until_settled``; None for the exact pass-rate rule and at the cap).
    """

    decision: str
    look: int
    used: int
    cap: int
    unit: str
    p_pass_at_cap: float
    observed: float | None
    threshold: float
    eps_pass: float
    eps_fail: float
    rule: str
    reason: str
    n_sim: int | None = None
    seed: int | None = None
    schedule: LookSchedule | None = None

    @property
    def stopped(self) -> bool:
        return self.decision != "continue"

    @property
    def at_cap(self) -> bool:
        return self.used >= self.cap

    @property
    def share_of_cap(self) -> float:
        """Repeats (or items) used as a share of the fixed design's."""
        return self.used / self.cap

    @property
    def next_size(self) -> int | None:
        """Repeats (or items) to have at the next look (None once stopped)."""
        if self.stopped or self.schedule is None:
            return None
        return self.schedule.next_size(self.used)

    def to_dict(self) -> dict[str, Any]:
        return {"decision": self.decision, "look": self.look, "used": self.used, "cap": self.cap,
                "unit": self.unit, "p_pass_at_cap": self.p_pass_at_cap, "observed": self.observed,
                "threshold": self.threshold, "eps_pass": self.eps_pass, "eps_fail": self.eps_fail, "rule": self.rule, "reason": self.reason,
                "n_sim": self.n_sim, "seed": self.seed,
                "schedule": None if self.schedule is None else self.schedule.to_dict()}

    def __str__(self) -> str:
        return (f"sequential {self.rule}: look {self.look}, {self.used}/{self.cap} {self.unit}: "
                f"{self.decision} (P(pass at cap) = {self.p_pass_at_cap:.3f}); {self.reason}")


def _check_eps(eps: Any, name: str = "eps") -> float:
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 < eps < 0.5:
        raise ReliabilityError(f"{name} must be a number strictly between 0 and 0.5, got {eps!r}")
    return float(eps)


def _stop_levels(eps: Any, eps_pass: Any, eps_fail: Any, default_pass: float,
                 default_fail: float) -> tuple[float, float]:
    """(eps_pass, eps_fail): ``eps`` sets both sides; ``eps_pass``/``eps_fail`` override one side."""
    base_pass = default_pass if eps is None else _check_eps(eps)
    base_fail = default_fail if eps is None else _check_eps(eps)
    return (base_pass if eps_pass is None else _check_eps(eps_pass, "eps_pass"),
            base_fail if eps_fail is None else _check_eps(eps_fail, "eps_fail"))


def _check_finite(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(value):
        raise ReliabilityError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def _check_schedule(schedule: LookSchedule | None, default: LookSchedule, cap: int) -> LookSchedule:
    if schedule is None:
        return default
    if not isinstance(schedule, LookSchedule):
        raise ReliabilityError(f"schedule must be a LookSchedule, got {type(schedule).__name__}")
    if schedule.unit != default.unit:
        raise ReliabilityError(f"the schedule counts {schedule.unit}, but this gate draws {default.unit}")
    if schedule.cap != cap:
        raise ReliabilityError(f"the schedule ends at {schedule.cap} {schedule.unit}, but the cap is {cap}")
    return schedule


def _decide(p: float, eps_pass: float, eps_fail: float, what: str) -> tuple[str, str]:
    if p >= 1 - eps_pass:
        return "pass", (f"P({what} passes at the cap) = {p:.3f} >= 1 - eps_pass = {1 - eps_pass:.3f}: "
                        "the verdict is settled")
    if p <= eps_fail:
        return "fail", f"P({what} passes at the cap) = {p:.3f} <= eps_fail = {eps_fail:.3f}: the verdict is settled"
    return "continue", (f"P({what} passes at the cap) = {p:.3f} lies within ({eps_fail:.3f}, "
                        f"{1 - eps_pass:.3f}): draw more")


_BLOCK = 100


def _simulate_until_settled(passes_in: Any, n_sim: int, eps_pass: float, eps_fail: float,
                            block: int) -> tuple[int, int]:
    """Run ``passes_in(b)`` (the passes among b new simulated completions) in blocks up to ``n_sim``.

    Stops early only when the decision at ``n_sim`` is already certain to be "continue": once more
    than ``eps_fail n_sim`` completions have passed (``p <= eps_fail`` is out of reach) *and* more
    than ``eps_pass n_sim`` have failed (``p >= 1 - eps_pass`` is out of reach), whatever the rest
    give.  The decision is therefore exactly the full run's; ``p`` is then the share of the
    completions run.
    """
    passes = done = 0
    while done < n_sim:
        b = min(block, n_sim - done)
        passes += passes_in(b)
        done += b
        if passes > eps_fail * n_sim and done - passes > eps_pass * n_sim:
            break
    return passes, done


# ---------------------------------------------------------------------------- ICC over repeats
def _icc_matrix(ratings: Any) -> np.ndarray:
    from ._input import as_matrix

    return as_matrix(ratings)


@dataclass(frozen=True)
class FixedVerdict:
    """The fixed gate's verdict on the cap's data: ``passed``, the ``tested`` number (the ICC or its
    lower bound; None when it could not be computed) and, then, the ``error`` that says why."""

    passed: bool
    tested: float | None
    error: str | None = None


def icc_fixed_verdict(ratings: Any, threshold: float, form: str = "A,1", use: str = "estimate", *,
                      confidence: float = 0.95, nan_policy: str = "raise") -> FixedVerdict:
    """The fixed ICC gate's verdict, as ``assert_icc_above`` decides it.

    ``icc(ratings, form, confidence, nan_policy)``; the gate tests its value (``use="estimate"``)
    or its lower CI bound (``"ci_low"``) against ``threshold`` (``>=`` passes); a statistic that
    cannot be computed (:class:`ReliabilityError`) fails.
    """
    from .icc import icc

    try:
        res = icc(ratings, form=form, confidence=confidence, nan_policy=nan_policy)
    except ReliabilityError as exc:
        return FixedVerdict(False, None, str(exc))
    tested = res.value if use == "estimate" else res.ci_low
    return FixedVerdict(bool(tested >= threshold), float(tested))


def _chi2_scale(ss: float, df: int, rng: np.random.Generator, size: int) -> np.ndarray:
    """Posterior draws of an expected mean square: ``SS / chi2(df)`` (Box & Tiao 1973, 5.2)."""
    if df <= 0 or ss <= 0:
        return np.zeros(size)
    return ss / rng.chisquare(df, size)


def _offsets_mean_square(ssc: float, df: int, ems_e: np.ndarray, prior_df: float,
                         rng: np.random.Generator) -> np.ndarray:
    """Posterior draws of the repeats' expected mean square ``EMS_c = s_e + n s_b``.

    Conjugate: a scaled-inverse-chi-square prior with ``prior_df`` pseudo-degrees of freedom
    centred at "no offsets" (``EMS_c = EMS_e``, the error mean square drawn with it) updated by
    the repeats' ``SS_c`` on ``r - 1`` df: ``(SS_c + prior_df EMS_e) / chi2(r - 1 + prior_df)``
    (Gelman et al. 2013, *Bayesian Data Analysis* 3rd ed., section 3.3).  With 2-3 repeats
    (1-2 df) the prior's few df keep the draw's tail finite; as repeats come in the data
    dominate.  ``prior_df = 0`` is the flat-prior ``SS_c / chi2(r - 1)`` (Box & Tiao 1973, 5.2).
    """
    if prior_df <= 0:
        return _chi2_scale(ssc, df, rng, ems_e.size)
    return (ssc + prior_df * ems_e) / rng.chisquare(df + prior_df, ems_e.size)


def _simulate_completions(x: np.ndarray, cap: int, n_sim: int, rng: np.random.Generator,
                          offset_prior_df: float = OFFSET_PRIOR_DF) -> np.ndarray:
    """``n_sim`` completions (n_sim, n, cap) of the observed items x repeats ``x``.

    The two-way random model ``y_ij = theta_i + b_j + e_ij`` (McGraw & Wong 1996) with its variance
    components drawn from their approximate posteriors (the error and item mean squares over a
    chi-square draw, ``SS / chi2(df)``, Box & Tiao 1973 section 5.2; the repeats' mean square from
    the conjugate posterior of :func:`_offsets_mean_square`; components by the ANOVA moment
    equations, truncated at 0), the items' true means drawn around their shrunken observed means
    (normal-normal posterior, ``B = s_a^2 / (s_a^2 + s_e^2 / r)``), new repeat offsets ``b_j``
    relative to the mean offset of the observed repeats, and normal noise."""
    n, r = x.shape
    m = cap - r
    g = float(x.mean())
    rows = x.mean(axis=1)
    cols = x.mean(axis=0)
    resid = x - rows[:, None] - cols[None, :] + g
    ssr = r * float(((rows - g) ** 2).sum())
    ssc = n * float(((cols - g) ** 2).sum())
    sse = float((resid ** 2).sum())
    s_e = _chi2_scale(sse, (n - 1) * (r - 1), rng, n_sim)
    s_b = np.maximum(0.0, (_offsets_mean_square(ssc, r - 1, s_e, offset_prior_df, rng) - s_e) / n)
    s_a = np.maximum(0.0, (_chi2_scale(ssr, n - 1, rng, n_sim) - s_e) / r)
    den = s_a + s_e / r
    with np.errstate(divide="ignore", invalid="ignore"):
        shrink = np.where(den > 0, s_a / np.where(den > 0, den, 1.0), 0.0)
    theta = (g + shrink[:, None] * (rows - g)[None, :]
             + np.sqrt(shrink * s_e / r)[:, None] * rng.standard_normal((n_sim, n)))
    # a new repeat's offset relative to the mean offset of the r observed ones
    offsets = (np.sqrt(s_b)[:, None] * rng.standard_normal((n_sim, m))
               - np.sqrt(s_b / r)[:, None] * rng.standard_normal((n_sim, 1)))
    noise = np.sqrt(s_e)[:, None, None] * rng.standard_normal((n_sim, n, m))
    future = theta[:, :, None] + offsets[:, None, :] + noise
    out = np.empty((n_sim, n, cap))
    out[:, :, :r] = x[None]
    out[:, :, r:] = future
    return out


def _icc_passes_on(stack: np.ndarray, form: str, use: str, confidence: float, threshold: float) -> np.ndarray:
    """The fixed rule on every matrix of ``stack``; undefined counts as a fail."""
    if use == "estimate":
        from .icc_batch import icc_values

        values = np.atleast_1d(np.asarray(icc_values(stack, form), dtype=float))
        return np.isfinite(values) & (values >= threshold)
    return np.array([icc_fixed_verdict(s, threshold, form, use, confidence=confidence).passed for s in stack])


def icc_sequential_look(ratings: Any, *, threshold: float, cap: int, form: str = "A,1", use: str = "estimate",
                        confidence: float = 0.95, nan_policy: str = "raise", eps: float | None = None,
                        eps_pass: float | None = None, eps_fail: float | None = None, n_sim: int = N_SIM,
                        seed: int | None = 0, schedule: LookSchedule | None = None,
                        offset_prior_df: float = OFFSET_PRIOR_DF) -> SequentialLook:
    """One look of a sequential ICC gate over repeats.

    ``ratings``: the items x repeats drawn so far (the first ``r`` of the cap's repeats, ``2 <= r
    <= cap``; an object with ``to_matrix()`` works too); ``threshold``/``form``/``use``/
    ``confidence``/``nan_policy``: the fixed gate's (``assert_icc_above``); ``cap``: the fixed
    design's repeats.  Before the cap the decision comes from ``n_sim`` simulated completions
    (module docstring; ``seed``; ``offset_prior_df``: the pseudo-df of the prior on the repeat
    offsets, 0 for the flat prior); it stops with "pass" at ``p_cap >= 1 - eps_pass`` (default
    :data:`ICC_EPS_PASS`) and "fail" at ``p_cap <= eps_fail`` (:data:`ICC_EPS_FAIL`); ``eps`` sets
    both.  At the cap it is :func:`icc_fixed_verdict` on ``ratings``.
    ``nan_policy="omit"`` drops items with a missing rating so far (the fixed gate drops them too).
    """
    from .icc import canonical_form

    threshold = _check_finite(threshold, "threshold")
    canon = canonical_form(form)
    use = check_use(use, _USES)
    confidence = check_confidence(confidence)
    eps_pass, eps_fail = _stop_levels(eps, eps_pass, eps_fail, ICC_EPS_PASS, ICC_EPS_FAIL)
    n_sim = _positive_int(n_sim, "n_sim")
    cap = _positive_int(cap, "cap (the repeats of the fixed design)", 2)
    if nan_policy not in ("raise", "omit"):
        raise ReliabilityError(f"nan_policy must be 'raise' or 'omit', got {nan_policy!r}")
    sched = _check_schedule(schedule, repeats_schedule(cap), cap)
    prior_df = _check_finite(offset_prior_df, "offset_prior_df")
    if prior_df < 0:
        raise ReliabilityError(f"offset_prior_df must be >= 0 (0: the flat prior), got {offset_prior_df!r}")
    x = _icc_matrix(ratings)
    n, r = x.shape
    if r > cap:
        raise ReliabilityError(f"ratings have {r} repeats, more than the cap of {cap}: a sequential gate never "
                               "draws past its cap")
    if r < 2:
        raise ReliabilityError(f"ratings have {r} repeat(s): a look needs at least 2 repeats per item")
    rule = f"ICC({canon}) {'lower CI bound' if use == 'ci_low' else 'estimate'} >= {threshold:g} at {cap} repeats"
    look = sched.look_number(r)
    if r == cap:
        fixed = icc_fixed_verdict(x, threshold, canon, use, confidence=confidence, nan_policy=nan_policy)
        passed, tested = fixed.passed, fixed.tested
        if tested is None:
            why = f"not computed, which fails: {fixed.error}"
        else:
            why = f"{tested:.4f} {'>=' if passed else '<'} {threshold:g}"
        return SequentialLook("pass" if passed else "fail", look, r, cap, "repeats", float(passed), tested,
                              threshold, eps_pass, eps_fail, rule,
                              f"at the cap: the fixed rule on all {cap} repeats ({why})",
                              None, seed, sched)
    missing = np.isnan(x).any(axis=1)
    if missing.any():
        if nan_policy == "raise":
            raise ReliabilityError(f"ratings have missing values in item(s) {np.flatnonzero(missing).tolist()[:10]}; "
                                   "fill them or pass nan_policy='omit' (the fixed gate drops those items too)")
        x = x[~missing]
    if x.shape[0] < 2:
        raise ReliabilityError(f"{x.shape[0]} complete item(s): an ICC needs at least 2 items")
    observed = icc_fixed_verdict(x, threshold, canon, use, confidence=confidence).tested
    rng = np.random.default_rng(seed)
    block = max(1, min(_BLOCK, 2_000_000 // (x.shape[0] * cap)))
    passes, done = _simulate_until_settled(
        lambda b: int(_icc_passes_on(_simulate_completions(x, cap, b, rng, prior_df), canon, use, confidence,
                                     threshold).sum()), n_sim, eps_pass, eps_fail, block)
    p = passes / done
    decision, reason = _decide(p, eps_pass, eps_fail, f"ICC({canon})")
    return SequentialLook(decision, look, r, cap, "repeats", p, observed, threshold, eps_pass, eps_fail, rule,
                          f"{reason} ({done} simulated completions of the two-way model)", done, seed, sched)


# ---------------------------------------------------------------------------- pass rate over items
@dataclass(frozen=True)
class PassRateCutoff:
    """The fixed pass-rate gate on ``n_cap`` items passes exactly when the judge passes at least
    ``count`` of them (``count = n_cap + 1``: no count passes; 0: every count passes)."""

    count: int
    n_cap: int
    min_rate: float
    use: str


def _pass_rate_verdict(count: int, n_cap: int, min_rate: float, calibration: Any, use: str, confidence: float,
                       interval: str) -> bool:
    from .pass_rate import corrected_pass_rate

    res = corrected_pass_rate(count, n_cap, calibration=calibration, confidence=confidence, interval=interval)
    tested = res.value if use == "estimate" else res.ci_low
    return bool(tested >= min_rate)


def _beta_binomial_sf(need: int, trials: int, a: float, b: float) -> float:
    """P(S >= need) for S ~ BetaBinomial(trials, a, b): the sum of its pmf
    ``C(t, j) B(j + a, t - j + b) / B(a, b)`` over j >= need (Johnson, Kemp & Kotz 2005, 6.2.2),
    over the shorter tail."""
    from scipy.special import betaln, gammaln

    j = np.arange(trials + 1, dtype=float)
    log_pmf = (gammaln(trials + 1) - gammaln(j + 1) - gammaln(trials - j + 1)
               + betaln(j + a, trials - j + b) - betaln(a, b))
    pmf = np.exp(log_pmf)
    upper = float(pmf[need:].sum())
    lower = float(pmf[:need].sum())
    p = upper / (upper + lower)  # the pmf sums to 1 up to rounding
    return min(1.0, max(0.0, p))


def pass_rate_cutoff(n_cap: int, *, min_rate: float, calibration: Any, use: str = "estimate",
                     confidence: float = 0.95, interval: str = "score") -> PassRateCutoff:
    """The smallest judge pass count over ``n_cap`` items at which ``assert_pass_rate`` passes.

    The gate tests ``corrected_pass_rate(count, n_cap, ...)``'s value (or lower bound) against
    ``min_rate``; both rise with the count (theta = (p + q0 - 1)/(q0 + q1 - 1) with q0 + q1 > 1,
    and the score bound with it), so the verdict is a step in the count, found by bisection with
    the gate's own function.  Raises where the gate would (q0 + q1 <= 1).
    """
    from .pass_rate import JudgeCalibration

    n_cap = _positive_int(n_cap, "n_cap (the items of the fixed design)")
    min_rate = _check_finite(min_rate, "min_rate")
    use = check_use(use, _USES)
    confidence = check_confidence(confidence)
    cal = calibration if isinstance(calibration, JudgeCalibration) else JudgeCalibration.from_pairs(calibration)

    def ok(c: int) -> bool:
        return _pass_rate_verdict(c, n_cap, min_rate, cal, use, confidence, interval)

    if not ok(n_cap):
        return PassRateCutoff(n_cap + 1, n_cap, min_rate, use)
    lo, hi = -1, n_cap  # ok(hi) holds; ok(lo) is taken as false
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return PassRateCutoff(hi, n_cap, min_rate, use)


def _count_seen(passed: Any, n: int | None) -> tuple[int, int]:
    from .pass_rate import _counts  # noqa: PLC2701 - the gate's own reading of counts and verdicts

    return _counts(passed, n)


def pass_rate_sequential_look(passed: Any, n: int | None = None, *, n_cap: int, min_rate: float,
                              calibration: Any, use: str = "estimate", confidence: float = 0.95,
                              interval: str = "score", eps: float | None = None,
                              eps_pass: float | None = None, eps_fail: float | None = None,
                              prior: tuple[float, float] = (0.5, 0.5), cutoff: PassRateCutoff | None = None,
                              schedule: LookSchedule | None = None) -> SequentialLook:
    """One look of a sequential pass-rate gate over items.

    ``passed``/``n``: the judge's verdicts on the items judged so far (a count with ``n``, or the
    verdicts); ``n_cap``: the fixed design's items; ``min_rate``/``calibration``/``use``/
    ``confidence``/``interval``: the fixed gate's (``assert_pass_rate``).  ``p_pass_at_cap`` is
    the beta-binomial predictive probability (``prior`` Beta(a, b) on the judge's pass
    probability) that the count over all ``n_cap`` items reaches :func:`pass_rate_cutoff`
    (pass ``cutoff`` to skip recomputing it at every look); "pass" at ``p_cap >= 1 - eps_pass``
    (default :data:`PASS_RATE_EPS_PASS`), "fail" at ``p_cap <= eps_fail``
    (:data:`PASS_RATE_EPS_FAIL`); ``eps`` sets both.  At the cap: the fixed verdict.
    """
    count, seen = _count_seen(passed, n)
    n_cap = _positive_int(n_cap, "n_cap (the items of the fixed design)")
    eps_pass, eps_fail = _stop_levels(eps, eps_pass, eps_fail, PASS_RATE_EPS_PASS, PASS_RATE_EPS_FAIL)
    if seen > n_cap:
        raise ReliabilityError(f"{seen} items judged, more than the cap of {n_cap}: a sequential gate never "
                               "draws past its cap")
    a, b = (_check_finite(v, "prior") for v in prior) if len(prior) == 2 else (0.0, 0.0)
    if not (a > 0 and b > 0):
        raise ReliabilityError(f"prior must be two positive Beta parameters (a, b), got {prior!r}")
    if cutoff is None:
        cutoff = pass_rate_cutoff(n_cap, min_rate=min_rate, calibration=calibration, use=use,
                                  confidence=confidence, interval=interval)
    elif cutoff.n_cap != n_cap or cutoff.min_rate != min_rate or cutoff.use != use:
        raise ReliabilityError(f"cutoff was computed for n_cap={cutoff.n_cap}, min_rate={cutoff.min_rate}, "
                               f"use={cutoff.use!r}, not for this gate (n_cap={n_cap}, min_rate={min_rate}, "
                               f"use={use!r})")
    sched = _check_schedule(schedule, items_schedule(n_cap), n_cap)
    rule = (f"corrected pass rate {'lower CI bound' if use == 'ci_low' else 'estimate'} >= {min_rate:g} "
            f"at {n_cap} items (judge passes >= {cutoff.count} of {n_cap})")
    remaining = n_cap - seen
    need = cutoff.count - count
    observed = count / seen
    look = sched.look_number(seen)
    if need <= 0:
        p = 1.0
    elif need > remaining:
        p = 0.0
    else:
        p = _beta_binomial_sf(need, remaining, a + count, b + seen - count)
    if remaining == 0:
        decision = "pass" if need <= 0 else "fail"
        reason = f"at the cap: the judge passed {count} of {n_cap}, the fixed rule needs {cutoff.count}"
    elif p in (0.0, 1.0):
        decision = "pass" if p == 1.0 else "fail"
        reason = (f"settled whatever the {remaining} remaining items give: {count} passes so far, "
                  f"{cutoff.count} needed")
    else:
        decision, reason = _decide(p, eps_pass, eps_fail, "the pass-rate gate")
        reason += f" (beta-binomial predictive of the {remaining} remaining items)"
    return SequentialLook(decision, look, seen, n_cap, "items", p, observed, float(min_rate), eps_pass, eps_fail, rule,
                          reason,
                          None, None, sched)


# ---------------------------------------------------------------------------- PPI++ human mean
def human_mean_sequential_look(judge_labeled: Any, human_labeled: Any, judge_unlabeled: Any, *,
                               n_unlabeled_cap: int, min_mean: float, use: str = "estimate",
                               confidence: float = 0.95, tuned: bool = True, lam: float | None = None,
                               eps: float | None = None, eps_pass: float | None = None,
                               eps_fail: float | None = None, n_sim: int = N_SIM, seed: int | None = 0,
                               schedule: LookSchedule | None = None) -> SequentialLook:
    """One look of a sequential human-mean (PPI++) gate whose unlabelled items are judged in batches.

    ``judge_labeled``/``human_labeled``: all labelled items (known up front); ``judge_unlabeled``:
    the judge's scores on the unlabelled items judged so far (``<= n_unlabeled_cap``);
    ``min_mean``/``use``/``confidence``/``tuned``/``lam``: the fixed gate's
    (``assert_human_mean_above``).  The remaining scores come from the Bayesian-bootstrap
    predictive of the judged ones (module docstring), ``n_sim`` times; "pass" at ``p_cap >= 1 -
    eps_pass`` (default :data:`HUMAN_MEAN_EPS_PASS`), "fail" at ``p_cap <= eps_fail``
    (:data:`HUMAN_MEAN_EPS_FAIL`), ``eps`` sets both; at the cap: the fixed rule.
    """
    from .ppi import _estimates_by_row, _inputs, _lam_arg, ppi_mean  # noqa: PLC2701 - its own room

    min_mean = _check_finite(min_mean, "min_mean")
    use = check_use(use, _USES)
    confidence = check_confidence(confidence)
    eps_pass, eps_fail = _stop_levels(eps, eps_pass, eps_fail, HUMAN_MEAN_EPS_PASS, HUMAN_MEAN_EPS_FAIL)
    n_sim = _positive_int(n_sim, "n_sim")
    cap = _positive_int(n_unlabeled_cap, "n_unlabeled_cap (the unlabelled items of the fixed design)", 2)
    f, y, fu = _inputs(judge_labeled, human_labeled, judge_unlabeled)
    seen = fu.size
    if seen > cap:
        raise ReliabilityError(f"{seen} unlabelled items judged, more than the cap of {cap}: a sequential gate "
                               "never draws past its cap")
    sched = _check_schedule(schedule, items_schedule(cap), cap)
    rule = (f"human-scale mean (PPI++) {'lower CI bound' if use == 'ci_low' else 'estimate'} >= {min_mean:g} "
            f"at {cap} unlabelled items")

    def verdict(scores: np.ndarray) -> tuple[bool, float | None]:
        try:
            res = ppi_mean(f, y, scores, confidence=confidence, tuned=tuned, lam=lam)
        except ReliabilityError:
            return False, None
        tested = res.value if use == "estimate" else res.ci_low
        return bool(tested >= min_mean), float(tested)

    passed, observed = verdict(fu)
    look = sched.look_number(seen)
    if seen == cap:
        return SequentialLook("pass" if passed else "fail", look, seen, cap, "items", float(passed), observed,
                              min_mean, eps_pass, eps_fail, rule,
                              f"at the cap: the fixed rule on all {cap} unlabelled items",
                              None, seed, sched)
    rng = np.random.default_rng(seed)
    remaining = cap - seen
    conf, fixed_lam = confidence, _lam_arg(lam)

    def passes_in(b: int) -> int:
        # Bayesian bootstrap (Rubin 1981): Dirichlet(1, ..., 1) weights on the judged scores, then
        # the remaining scores drawn from them (inverse CDF per row), b completions at once
        w = rng.dirichlet(np.ones(seen), size=b)
        cdf = np.cumsum(w, axis=1)
        cdf[:, -1] = 1.0
        rows = np.arange(b)[:, None]
        flat = np.searchsorted((cdf + rows).ravel(), (rng.random((b, remaining)) + rows).ravel(), side="right")
        idx = np.minimum(flat.reshape(b, remaining) - rows * seen, seen - 1)
        stack = np.concatenate([np.broadcast_to(fu, (b, seen)), fu[idx]], axis=1)
        values, lows, _ = _estimates_by_row(f[None, :], y[None, :], stack, conf, tuned, fixed_lam)
        tested = values if use == "estimate" else lows
        return int((np.isfinite(tested) & (tested >= min_mean)).sum())

    wins, done = _simulate_until_settled(passes_in, n_sim, eps_pass, eps_fail, _BLOCK)
    p = wins / done
    decision, reason = _decide(p, eps_pass, eps_fail, "the human-mean gate")
    return SequentialLook(decision, look, seen, cap, "items", p, observed, min_mean, eps_pass, eps_fail, rule,
                          f"{reason} ({done} Bayesian-bootstrap completions of the {remaining} remaining items)",
                          done, seed, sched)

