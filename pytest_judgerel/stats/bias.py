"""Statistics of judge bias probes: position consistency of pairwise verdicts, paired score shifts.

* Position consistency (Zheng et al. 2023, "Judging LLM-as-a-Judge with MT-Bench and Chatbot
  Arena", NeurIPS, section 3.3 and Table 2): each pair is judged with the answers in both
  orders; a judge is *consistent* on a pair when its verdict names the same answer (or a tie)
  both times, *biased toward the first position* when it picks whichever answer is shown first
  both times (and toward the second likewise).  Each share is a binomial proportion with a
  Wilson interval.  Low consistency alone does not show a position bias (a judge answering at
  random is inconsistent on both sides alike); a *position preference* is tested by the exact
  two-sided sign test (Dixon & Mood 1946) of first- against second-position wins, ``p = min(1,
  2 P(X <= min(f, s)))`` with ``X ~ Binomial(f + s, 1/2)``.
* Paired shift: the mean of per-item differences ``after - before`` with Student's paired t
  interval and test (Student 1908).
* Equivalence ("no effect"): two one-sided tests (TOST; Schuirmann 1987) against a margin
  ``delta``: the shift lies within ``(-delta, delta)`` when both ``H0: mean <= -delta`` and ``H0:
  mean >= delta`` are rejected at level alpha (the ``1 - 2 alpha`` interval inside the margin);
  one-sided rejects only ``mean >= delta``.  Plain t is anti-conservative on the side opposite a
  skew (a bonus on a few items that most samples miss), so by default (``method="robust"``) a
  one-sided test rejects only where both Hall's skew-corrected t (:func:`_hall_t`) and the
  studentised bootstrap (:func:`_bootstrap_t`) reject, and on the long-tail side only with
  ``n > 25 g^2`` items (:func:`_items_for_skew`); ``benchmarks/bench_tost_skew.py`` measures its
  false "equivalent" rate.  Without spread the test is exact given the support ``bound``
  (:func:`_exact_constant`).  A confidence bound alone says nothing about power: see
  :func:`~pytest_judgerel.stats.planning.equivalence_sample_size`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..errors import ReliabilityError
from ._input import check_alpha
from .interval import HasInterval, check_confidence
from .proportion import Proportion, wilson_interval

__all__ = ["VERDICTS", "PositionConsistency", "position_consistency", "sign_test_p", "PairedShift", "paired_shift",
           "Equivalence", "equivalence_test"]

VERDICTS = ("A", "B", "tie")
"""Pairwise verdicts: the answer shown first (A), second (B), or a tie."""


@dataclass(frozen=True)
class PositionConsistency:
    """Shares of pairs (judged in both orders) with a consistent verdict or a position preference.

    ``consistency``: same answer (or tie) in both orders.  ``first_preference``: the answer shown
    first won both times (Zheng et al. 2023 Table 2, "biased toward first");
    ``second_preference`` likewise.  The three are shares of ``n_valid`` pairs; the rest of the
    valid pairs have a tie in one order only (``n_tie_mismatch``).  ``n_missing`` pairs lack a
    readable verdict in at least one order and are left out.  ``n_first`` / ``n_second`` count
    the pairs won by the first / second position both times and ``p_position`` is the exact
    two-sided sign test of the two counts (1.0 when both are 0; module docstring).
    """

    consistency: Proportion
    first_preference: Proportion
    second_preference: Proportion
    n_pairs: int
    n_valid: int
    n_missing: int
    n_tie_mismatch: int
    outcomes: tuple[str, ...] = field(default=(), repr=False)

    @property
    def n_first(self) -> int:
        return self.first_preference.count

    @property
    def n_second(self) -> int:
        return self.second_preference.count

    @property
    def p_position(self) -> float:
        return sign_test_p(self.n_first, self.n_second)

    @property
    def preferred(self) -> str | None:
        """``"first"`` or ``"second"``: the position that won more pairs (None on a tie)."""
        return None if self.n_first == self.n_second else "first" if self.n_first > self.n_second else "second"

    def to_dict(self) -> dict[str, Any]:
        return {"consistency": self.consistency.to_dict(), "first_preference": self.first_preference.to_dict(),
                "second_preference": self.second_preference.to_dict(), "n_pairs": self.n_pairs,
                "n_valid": self.n_valid, "n_missing": self.n_missing, "n_tie_mismatch": self.n_tie_mismatch,
                "n_first": self.n_first, "n_second": self.n_second, "p_position": self.p_position}


def sign_test_p(first: int, second: int) -> float:
    """Exact two-sided sign test of ``first`` against ``second`` wins (H0: each win is the first
    position's with probability 1/2): ``scipy.stats.binomtest(first, first + second).pvalue``."""
    from scipy.stats import binomtest

    for name, v in (("first", first), ("second", second)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ReliabilityError(f"sign test: {name} must be a count >= 0, got {v!r}")
    if first + second == 0:
        return 1.0
    return float(binomtest(int(first), int(first + second), 0.5, alternative="two-sided").pvalue)


def position_consistency(forward: Sequence[str | None], reverse: Sequence[str | None],
                         confidence: float = 0.95) -> PositionConsistency:
    """Position consistency of pairwise verdicts.

    ``forward[i]`` is the verdict on pair i with its first answer shown as A, ``reverse[i]``
    with the answers swapped; each is ``"A"``, ``"B"``, ``"tie"`` or None (unreadable).
    ``outcomes[i]`` of the result is ``"consistent"``, ``"first"``, ``"second"``,
    ``"tie_mismatch"`` or ``"missing"``.
    """
    if len(forward) != len(reverse):
        raise ReliabilityError(f"{len(forward)} forward verdicts but {len(reverse)} reverse verdicts")
    outcomes = []
    for i, (f, r) in enumerate(zip(forward, reverse)):
        for v in (f, r):
            if v is not None and v not in VERDICTS:
                raise ReliabilityError(f"pair {i}: verdict {v!r} is not one of {VERDICTS} or None")
        if f is None or r is None:
            outcomes.append("missing")
        elif (f, r) in (("A", "B"), ("B", "A"), ("tie", "tie")):
            outcomes.append("consistent")
        elif f == r == "A":
            outcomes.append("first")
        elif f == r == "B":
            outcomes.append("second")
        else:
            outcomes.append("tie_mismatch")
    n_valid = sum(o != "missing" for o in outcomes)
    if n_valid == 0:
        raise ReliabilityError(f"none of {len(outcomes)} pairs has a readable verdict in both orders")

    def share(kind: str) -> Proportion:
        return wilson_interval(outcomes.count(kind), n_valid, confidence)

    return PositionConsistency(
        consistency=share("consistent"), first_preference=share("first"), second_preference=share("second"),
        n_pairs=len(outcomes), n_valid=n_valid, n_missing=len(outcomes) - n_valid,
        n_tie_mismatch=outcomes.count("tie_mismatch"), outcomes=tuple(outcomes),
    )


@dataclass(frozen=True)
class PairedShift(HasInterval):
    """Mean of per-item differences with Student's paired t interval and test.

    ``p`` is two-sided (H0: mean difference 0); ``p_greater`` one-sided (H1: mean > 0).  When
    every difference is the same (sd 0) the interval is that value and the test is exact:
    p = 1 for a zero shift, 0 otherwise.
    """

    _estimate_name = "mean"

    mean: float
    ci_low: float
    ci_high: float
    confidence: float
    sd: float
    n: int
    t: float | None
    df: int
    p: float
    p_greater: float
    differences: tuple[float, ...] = field(default=(), repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"mean": self.mean, "ci": [self.ci_low, self.ci_high], "confidence": self.confidence,
                "sd": self.sd, "n": self.n, "t": self.t, "df": self.df, "p": self.p, "p_greater": self.p_greater}

    def __str__(self) -> str:
        return (f"mean shift {self.formatted(signed=True)}, "
                f"paired t p = {self.p:.3g} (n = {self.n})")


def paired_shift(before: Any, after: Any, confidence: float = 0.95) -> PairedShift:
    """Mean of ``after - before`` over items present in both (NaN pairs dropped; needs 2 or more).

    Student's paired t interval and test agree (p < alpha exactly when the interval excludes 0);
    the mean of bounded differences is near normal for the 20 or more items a probe needs."""
    from scipy import stats

    a = np.asarray(before, dtype=float).ravel()
    b = np.asarray(after, dtype=float).ravel()
    if a.shape != b.shape:
        raise ReliabilityError(f"before has {a.size} items but after has {b.size}")
    confidence = check_confidence(confidence)
    keep = ~(np.isnan(a) | np.isnan(b))
    if np.isinf(a[keep]).any() or np.isinf(b[keep]).any():
        raise ReliabilityError("paired_shift: infinite scores")
    d = b[keep] - a[keep]
    n = int(d.size)
    if n < 2:
        raise ReliabilityError(f"a paired shift needs at least 2 items scored both ways, got {n}")
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    df = n - 1
    if sd <= 1e-12 * max(1.0, abs(mean)):
        p = 1.0 if mean == 0 else 0.0
        return PairedShift(mean, mean, mean, float(confidence), 0.0, n, None, df, p,
                           1.0 if mean <= 0 else 0.0, tuple(d.tolist()))
    se = sd / math.sqrt(n)
    t = mean / se
    half = float(stats.t.ppf(1 - (1 - confidence) / 2, df)) * se
    p = float(2 * stats.t.sf(abs(t), df))
    return PairedShift(mean, mean - half, mean + half, float(confidence), sd, n, float(t), df, min(1.0, p),
                       float(stats.t.sf(t, df)), tuple(d.tolist()))


@dataclass(frozen=True)
class Equivalence:
    """Two one-sided tests (TOST) that a paired mean shift lies within ``(-margin, margin)``
    (``two_sided``) or below ``margin`` (one-sided).

    ``p`` is the larger of the one-sided p values (``p_lower``: H0 mean <= -margin, None when
    one-sided; ``p_upper``: H0 mean >= margin); ``equivalent`` is ``p < alpha``, the same as the
    ``1 - 2 alpha`` interval (``ci_low``, ``ci_high``; one-sided: ``1 - alpha`` upper bound)
    lying inside the margin.  ``method``: ``"robust"`` (Hall and the bootstrap-t, with Cochran's
    rule), ``"hall"`` (skew-corrected t), ``"t"`` (Student) or ``"exact"`` (no spread, with
    ``bound``); ``skewness`` is the sample skewness ``g`` used.  ``items_for_skew``: the smallest n
    with ``n > 25 g^2`` (Cochran's rule; ``"robust"`` only, else 0); ``inconclusive_reason`` says
    why a one-sided test was not trusted (fewer items than that: :func:`_items_for_skew`).
    """

    mean: float
    margin: float
    alpha: float
    two_sided: bool
    p_lower: float | None
    p_upper: float
    ci_low: float
    ci_high: float
    n: int
    sd: float
    method: str = "t"
    skewness: float = 0.0
    bound: float | None = None
    items_for_skew: int = 0
    inconclusive_reason: str = ""

    @property
    def inconclusive(self) -> bool:
        """True when too few items for the skew of the differences left a one-sided test untrusted."""
        return bool(self.inconclusive_reason)

    @property
    def p(self) -> float:
        return self.p_upper if self.p_lower is None else max(self.p_lower, self.p_upper)

    @property
    def equivalent(self) -> bool:
        return self.p < self.alpha

    def to_dict(self) -> dict[str, Any]:
        return {"mean": self.mean, "margin": self.margin, "alpha": self.alpha, "two_sided": self.two_sided,
                "p_lower": self.p_lower, "p_upper": self.p_upper, "p": self.p, "equivalent": self.equivalent,
                "ci": [self.ci_low, self.ci_high], "n": self.n, "sd": self.sd, "method": self.method,
                "skewness": self.skewness, "bound": self.bound, "items_for_skew": self.items_for_skew,
                "inconclusive": self.inconclusive, "inconclusive_reason": self.inconclusive_reason}

    def __str__(self) -> str:
        side = f"|shift| < {self.margin:g}" if self.two_sided else f"shift < {self.margin:g}"
        return (f"TOST {side}: mean {self.mean:+.4f} [{1 - 2 * self.alpha if self.two_sided else 1 - self.alpha:.0%} "
                f"interval {self.ci_low:+.4f}, {self.ci_high:+.4f}], p = {self.p:.3g} (n = {self.n}, "
                f"{self.method}): {'equivalent' if self.equivalent else self.inconclusive_reason or 'not shown'}")


_TOST_METHODS = ("robust", "hall", "t")


def _hall_t(u: float, g: float, n: int) -> float:
    """Hall's (1992) cubic skewness correction of Johnson's (1978) modified t: with ``u = (mean -
    mu0) / s`` and the sample skewness ``g = m3 / s^3``, ``T = sqrt(n) (u + g / (6 n) + g u^2 / 3
    + g^2 u^3 / 27)``, referred to t(n - 1).  T is increasing in the mean (:func:`_hall_u`
    inverts it, which gives the interval)."""
    return math.sqrt(n) * (u + g / (6 * n) + g * u * u / 3 + g * g * u ** 3 / 27)


def _hall_u(t: float, g: float, n: int) -> float:
    """The ``u`` whose :func:`_hall_t` is ``t``: ``u = (3 / g) ((1 + g y)^(1/3) - 1)`` with ``y = t /
    sqrt(n) - g / (6 n)`` (closed-form inverse of the cubic)."""
    y = t / math.sqrt(n) - g / (6 * n)
    if abs(g) < 1e-12:
        return y
    return 3 / g * (np.cbrt(1 + g * y) - 1)


def equivalence_test(differences: Any, margin: float, alpha: float = 0.05, two_sided: bool = True, *,
                     method: str = "robust", bound: float | None = None, n_boot: int = 2000,
                     seed: int = 0) -> Equivalence:
    """TOST on per-item differences (NaN dropped; 2 or more needed); module docstring.

    ``method``: ``"robust"`` (default: rejects only where both Hall's skew-corrected t and the
    studentised bootstrap, ``n_boot`` resamples with ``seed``, reject, and not on the long-tail
    side of a skew with fewer than ``25 g^2`` items: then inconclusive), ``"hall"`` or ``"t"``
    (Schuirmann 1987).  ``bound``: the largest possible absolute difference (e.g. 1 for
    normalised scores), used when every difference is equal (exact test; without it such data
    show nothing, p = 1).
    """
    from scipy import stats

    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not margin > 0 or math.isinf(margin):
        raise ReliabilityError(f"the equivalence margin must be a finite number > 0, got {margin!r}")
    alpha = check_alpha(alpha)
    if method not in _TOST_METHODS:
        raise ReliabilityError(f"method must be one of {_TOST_METHODS}, got {method!r}")
    if bound is not None and (isinstance(bound, bool) or not isinstance(bound, (int, float))
                              or not math.isfinite(bound) or not bound >= margin):
        raise ReliabilityError(f"bound (the largest possible |difference|) must be a finite number >= the margin "
                               f"{margin!r}, got {bound!r}")
    d = np.asarray(differences, dtype=float).ravel()
    d = d[~np.isnan(d)]
    if np.isinf(d).any():
        raise ReliabilityError("equivalence_test: infinite differences")
    n = int(d.size)
    if n < 2:
        raise ReliabilityError(f"an equivalence test needs at least 2 differences, got {n}")
    if bound is not None and np.abs(d).max() > bound:
        raise ReliabilityError(f"a difference of {float(np.abs(d).max())!r} exceeds bound={bound!r}")
    mean, sd, df = float(d.mean()), float(d.std(ddof=1)), n - 1
    if sd <= 1e-12 * max(1.0, abs(mean)):  # no spread: only the support bounds the unseen
        upper = _exact_constant(mean, margin, bound, n)
        lower = _exact_constant(-mean, margin, bound, n) if two_sided else None
        return Equivalence(mean, float(margin), float(alpha), two_sided, lower, upper, mean, mean, n, 0.0,
                           "exact" if bound is not None else "none", 0.0,
                           None if bound is None else float(bound))
    g = float(((d - mean) ** 3).mean() / sd ** 3) if method != "t" else 0.0
    s = sd  # Hall's u is in units of the sd, not of the standard error
    upper = float(stats.t.cdf(_hall_t((mean - margin) / s, g, n), df))
    lower = float(stats.t.sf(_hall_t((mean + margin) / s, g, n), df)) if two_sided else None
    q = float(stats.t.ppf(1 - alpha, df))
    hi = mean - s * _hall_u(-q, g, n)
    lo = mean - s * _hall_u(q, g, n) if two_sided else -math.inf
    need, reason = 0, ""
    if method == "robust":
        b_up, b_lo, b_hi, b_low = _bootstrap_t(d, mean, sd, margin, alpha, n_boot, seed)
        upper, hi = max(upper, b_up), max(hi, b_hi)
        if two_sided:
            lower, lo = max(lower, b_lo), min(lo, b_low)  # type: ignore[arg-type,type-var]
        need = _items_for_skew(g)
        if n < need and (g > 0 or two_sided):  # Cochran's rule on the long-tail side
            support = math.inf if bound is None else float(bound)
            if g > 0:
                upper, hi = 1.0, max(hi, support)
            else:
                lower, lo = 1.0, min(lo, -support)
            reason = (f"inconclusive: too few items for differences this skewed (sample skewness {g:+.2f}; "
                      f"Cochran's rule n > 25 g^2 asks for at least {need} items, this run has {n}), so the "
                      f"{'upper' if g > 0 else 'lower'} one-sided test is not trusted")
    return Equivalence(mean, float(margin), float(alpha), two_sided, lower, upper, lo, hi, n, sd, method, g,
                       None if bound is None else float(bound), need, reason)


_COCHRAN_FACTOR = 25.0
"""Cochran's rule (1977, section 2.15): a normal-theory interval of a mean needs ``n > 25 g^2``."""


def _items_for_skew(skewness: float) -> int:
    """The smallest number of items n with ``n > 25 g^2`` (Cochran's rule for a normal-theory
    interval of a mean; Cochran 1977, *Sampling Techniques*, 3rd ed., section 2.15) for sample
    skewness ``g``: below it the one-sided test on the long-tail side (the upper one when ``g >
    0``) is inconclusive (p = 1, its bound the support: ``bound`` or infinity)."""
    return int(math.floor(_COCHRAN_FACTOR * skewness * skewness)) + 1


def _bootstrap_t(d: np.ndarray, mean: float, sd: float, margin: float, alpha: float, n_boot: int,
                 seed: int) -> tuple[float, float, float, float]:
    """Studentised bootstrap (Efron & Tibshirani 1993, section 12.5) of both one-sided tests:
    ``(p_upper, p_lower, upper bound, lower bound)``, where ``p_upper`` is the share of resampled
    t at or below the observed ``(mean - margin) / se`` and the bounds invert the same rule
    (``p < alpha`` exactly when the bound lies inside the margin).  A resample without spread
    counts against rejection in both tests."""
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 100:
        raise ReliabilityError(f"n_boot must be an integer >= 100, got {n_boot!r}")
    n = d.size
    x = d[np.random.default_rng(seed).integers(0, n, size=(n_boot, n))]
    means = np.add.reduce(x, axis=1) / n
    sds = np.sqrt(np.add.reduce((x - means[:, None]) ** 2, axis=1) / (n - 1))
    ok = sds > 1e-12 * max(1.0, abs(mean))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(ok, (means - mean) / (sds / math.sqrt(n)), 0.0)
    t_up, t_lo = np.sort(np.where(ok, t, -np.inf)), np.sort(np.where(ok, t, np.inf))
    se = sd / math.sqrt(n)
    j = max(1, math.ceil(alpha * n_boot))  # reject iff fewer than alpha * n_boot resamples are as extreme
    p_up = float((t_up <= (mean - margin) / se).sum()) / n_boot
    p_lo = float((t_lo >= (mean + margin) / se).sum()) / n_boot
    return p_up, p_lo, float(mean - se * t_up[j - 1]), float(mean - se * t_lo[n_boot - j])


def _exact_constant(c: float, margin: float, bound: float | None, n: int) -> float:
    """p of H0 mean >= margin when all n differences equal c, where no variance can be estimated:
    a distribution on [-bound, bound] with mean >= margin puts at least ``(margin - c) / (bound -
    c)`` of its mass away from c, so ``P(all n equal c) <= ((bound - margin) / (bound - c))^n``.
    1 when c >= margin or no bound is known (a difference the sample missed can then be as large
    as the scale allows)."""
    if bound is None or c >= margin:
        return 1.0
    return float(((bound - margin) / (bound - c)) ** n)
