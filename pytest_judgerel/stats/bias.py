"""Statistics of judge bias probes: position consistency of pairwise verdicts, paired score shifts.

* Position consistency (Zheng et al. 2023, "Judging LLM-as-a-Judge with MT-Bench and Chatbot
  Arena", NeurIPS, section 3.3 and Table 2): each pair is judged with the answers in both
  orders.  A judge is *consistent* on a pair when its verdict names the same answer (or a tie)
  both times; it is *biased toward the first position* when it picks whichever answer is shown
  first both times, and toward the second likewise.  Pairs are independent units, so each share
  is a binomial proportion with a Wilson interval (:mod:`~pytest_judgerel.stats.proportion`).
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

__all__ = ["VERDICTS", "PositionConsistency", "position_consistency", "PairedShift", "paired_shift"]

VERDICTS = ("A", "B", "tie")
"""Pairwise verdicts: the answer shown first (A), second (B), or a tie."""


@dataclass(frozen=True)
class PositionConsistency:
    """Shares of pairs (judged in both orders) with a consistent verdict or a position preference.

    ``consistency``: same answer (or tie) in both orders.  ``first_preference``: the answer shown
    first won both times (Zheng et al. 2023 Table 2, "biased toward first");
    ``second_preference`` likewise.  The three are shares of ``n_valid`` pairs; the rest of the
    valid pairs have a tie in one order only (``n_tie_mismatch``).  ``n_missing`` pairs lack a
    readable verdict in at least one order and are left out.
    """

    consistency: Proportion
    first_preference: Proportion
    second_preference: Proportion
    n_pairs: int
    n_valid: int
    n_missing: int
    n_tie_mismatch: int
    outcomes: tuple[str, ...] = field(default=(), repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"consistency": self.consistency.to_dict(), "first_preference": self.first_preference.to_dict(),
                "second_preference": self.second_preference.to_dict(), "n_pairs": self.n_pairs,
                "n_valid": self.n_valid, "n_missing": self.n_missing, "n_tie_mismatch": self.n_tie_mismatch}


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
