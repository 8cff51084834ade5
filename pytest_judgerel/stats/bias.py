"""Statistics of judge bias probes: position consistency of pairwise verdicts, paired score shifts.

* Position consistency (Zheng et al. 2023, "Judging LLM-as-a-Judge with MT-Bench and Chatbot
  Arena", NeurIPS, section 3.3 and Table 2): each pair is judged with the answers in both
  orders.  A judge is *consistent* on a pair when its verdict names the same answer (or a tie)
  both times; it is *biased toward the first position* when it picks whichever answer is shown
  first both times, and toward the second likewise.  Pairs are independent units, so each share
  is a binomial proportion with a Wilson interval (:mod:`~pytest_judgerel.stats.proportion`).
  Low consistency alone does not show a position bias: a judge that answers at random on some
  calls is inconsistent on both sides alike.  A *position preference* shows as more pairs won by
  the first position than by the second (or the reverse); without one, each pair that a position
  wins both times is as likely won by the first as by the second, so the exact two-sided sign
  test (Dixon & Mood 1946) of first- against second-position wins,
  ``p = min(1, 2 P(X <= min(f, s)))`` with ``X ~ Binomial(f + s, 1/2)``, tests it.
* Equivalence of a paired shift ("no effect"): two one-sided t tests (TOST; Schuirmann 1987)
  against a margin ``delta``: the shift is shown to lie within ``(-delta, delta)`` when both
  ``H0: mean <= -delta`` and ``H0: mean >= delta`` are rejected at level alpha, i.e. when the
  ``1 - 2 alpha`` t interval lies inside the margin; one-sided ("no upward shift") rejects only
  ``mean >= delta``.  A confidence bound alone gives no such guarantee about power: see
  :func:`~pytest_judgerel.stats.planning.equivalence_sample_size`.
* Paired shift: the mean of per-item differences ``after - before`` with Student's paired t
  interval and test (Student 1908): the interval and the test agree (p < alpha exactly when
  the interval excludes 0), and the mean of bounded differences is near normal for the 20 or
  more items a probe needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..errors import ReliabilityError
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
class PairedShift:
    """Mean of per-item differences with Student's paired t interval and test.

    ``p`` is two-sided (H0: mean difference 0); ``p_greater`` one-sided (H1: mean > 0).  When
    every difference is the same (sd 0) the interval is that value and the test is exact:
    p = 1 for a zero shift, 0 otherwise.
    """

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

    @property
    def ci(self) -> tuple[float, float]:
        return (self.ci_low, self.ci_high)

    def to_dict(self) -> dict[str, Any]:
        return {"mean": self.mean, "ci": [self.ci_low, self.ci_high], "confidence": self.confidence,
                "sd": self.sd, "n": self.n, "t": self.t, "df": self.df, "p": self.p, "p_greater": self.p_greater}

    def __str__(self) -> str:
        return (f"mean shift {self.mean:+.4f} [{self.confidence:.0%} CI {self.ci_low:+.4f}, {self.ci_high:+.4f}], "
                f"paired t p = {self.p:.3g} (n = {self.n})")


def paired_shift(before: Any, after: Any, confidence: float = 0.95) -> PairedShift:
    """Mean of ``after - before`` over items present in both (NaN pairs dropped; needs 2 or more)."""
    from scipy import stats

    a = np.asarray(before, dtype=float).ravel()
    b = np.asarray(after, dtype=float).ravel()
    if a.shape != b.shape:
        raise ReliabilityError(f"before has {a.size} items but after has {b.size}")
    if not 0 < confidence < 1:
        raise ReliabilityError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
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
    """Two one-sided t tests (TOST) that a paired mean shift lies within ``(-margin, margin)``
    (``two_sided``) or below ``margin`` (one-sided).

    ``p`` is the larger of the one-sided p values (``p_lower``: H0 mean <= -margin, None when
    one-sided; ``p_upper``: H0 mean >= margin); ``equivalent`` is ``p < alpha``, the same as the
    ``1 - 2 alpha`` interval (``ci_low``, ``ci_high``; one-sided: ``1 - alpha`` upper bound)
    lying inside the margin.
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

    @property
    def p(self) -> float:
        return self.p_upper if self.p_lower is None else max(self.p_lower, self.p_upper)

    @property
    def equivalent(self) -> bool:
        return self.p < self.alpha

    def to_dict(self) -> dict[str, Any]:
        return {"mean": self.mean, "margin": self.margin, "alpha": self.alpha, "two_sided": self.two_sided,
                "p_lower": self.p_lower, "p_upper": self.p_upper, "p": self.p, "equivalent": self.equivalent,
                "ci": [self.ci_low, self.ci_high], "n": self.n, "sd": self.sd}

    def __str__(self) -> str:
        side = f"|shift| < {self.margin:g}" if self.two_sided else f"shift < {self.margin:g}"
        return (f"TOST {side}: mean {self.mean:+.4f} [{1 - 2 * self.alpha if self.two_sided else 1 - self.alpha:.0%} "
                f"interval {self.ci_low:+.4f}, {self.ci_high:+.4f}], p = {self.p:.3g} (n = {self.n}): "
                f"{'equivalent' if self.equivalent else 'not shown'}")


def equivalence_test(differences: Any, margin: float, alpha: float = 0.05, two_sided: bool = True) -> Equivalence:
    """TOST (Schuirmann 1987) on per-item differences (NaN dropped; 2 or more needed)."""
    from scipy import stats

    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not margin > 0 or math.isinf(margin):
        raise ReliabilityError(f"the equivalence margin must be a finite number > 0, got {margin!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 0.5:
        raise ReliabilityError(f"alpha must lie strictly between 0 and 0.5, got {alpha!r}")
    d = np.asarray(differences, dtype=float).ravel()
    d = d[~np.isnan(d)]
    if np.isinf(d).any():
        raise ReliabilityError("equivalence_test: infinite differences")
    n = int(d.size)
    if n < 2:
        raise ReliabilityError(f"an equivalence test needs at least 2 differences, got {n}")
    mean, sd, df = float(d.mean()), float(d.std(ddof=1)), n - 1
    if sd <= 1e-12 * max(1.0, abs(mean)):  # no spread: the mean is known exactly
        upper = 0.0 if mean < margin else 1.0
        lower = (0.0 if mean > -margin else 1.0) if two_sided else None
        return Equivalence(mean, float(margin), float(alpha), two_sided, lower, upper, mean, mean, n, 0.0)
    se = sd / math.sqrt(n)
    upper = float(stats.t.cdf((mean - margin) / se, df))
    lower = float(stats.t.sf((mean + margin) / se, df)) if two_sided else None
    half = float(stats.t.ppf(1 - alpha, df)) * se
    lo = mean - half if two_sided else -math.inf
    return Equivalence(mean, float(margin), float(alpha), two_sided, lower, upper, lo, mean + half, n, sd)
