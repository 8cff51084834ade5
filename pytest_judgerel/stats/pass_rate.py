"""Pass rate corrected for the judge's errors (Lee et al. 2025, arXiv:2511.21140).

A judge with specificity q0 = P(judge fails | truly bad) and sensitivity q1 = P(judge passes |
truly good) reports, in expectation, ``p = q1 theta + (1 - q0)(1 - theta)`` for a system whose
true pass rate is theta.  Inverting gives the plug-in estimate (the Rogan-Gladen correction,
Rogan & Gladen 1978; Lee et al. section 3):

    theta = (p + q0 - 1) / (q0 + q1 - 1)

with q0 and q1 measured on a human-labelled calibration set (m0 truly bad items, m1 truly good
ones).  It is defined only when q0 + q1 > 1: a judge no better than chance carries no
information about theta.  q0 is measured on the items humans failed and q1 on those they passed,
so the interval is only as narrow as the *smaller* group allows: sample the calibration set
stratified by human label, with at least 30 items of each.

The confidence interval (``interval=``): ``"score"`` (default), the values theta0 that a
score-type test with a continuity correction does not reject (:func:`_score_z`; the Fieller 1954
construction for a ratio, variances under the null as in Wilson 1927), or ``"lee"``, the
smoothed plug-in delta-method interval of Lee et al. section 4 (:func:`_lee_interval`).  The
delta method is shortest exactly where the estimate is furthest off, so its lower limit misses
more often than its level says; ``benchmarks/bench_pass_rate_tails.py`` measures both tails.
Both ends are clipped to [0, 1], as the estimate is, and, so that ``ci_low <= value <=
ci_high`` always holds, an interval that misses the clipped estimate (possible only with a
handful of items) is widened to include it.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np

from ..errors import ReliabilityError
from .interval import check_confidence, format_estimate

__all__ = ["JudgeCalibration", "CorrectedPassRate", "corrected_pass_rate"]

_INTERVALS = ("score", "lee")
_HALF_COUNT = 0.25  # continuity correction of the score interval: a quarter count of each proportion


def _label(value: Any, what: str, where: str) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, float, np.integer, np.floating)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("pass", "fail", "true", "false", "1", "0"):
        return value.strip().lower() in ("pass", "true", "1")
    raise ReliabilityError(f"{where}: {what} {value!r} is not a pass/fail label "
                           "(use True/False, 1/0 or 'pass'/'fail')")


@dataclass(frozen=True)
class JudgeCalibration:
    """How well a binary judge matches human labels: specificity q0 on ``n_negative`` items the
    humans failed, sensitivity q1 on ``n_positive`` items they passed."""

    specificity: float
    sensitivity: float
    n_negative: int
    n_positive: int

    def __post_init__(self) -> None:
        for name in ("specificity", "sensitivity"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
                raise ReliabilityError(f"{name} must be a proportion in [0, 1], got {v!r}")
        for name in ("n_negative", "n_positive"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ReliabilityError(
                    f"{name} must be a positive count of calibration items, got {v!r} (the CI needs the "
                    "calibration sizes; a calibration set needs items of both human labels)")

    @classmethod
    def from_pairs(cls, pairs: Iterable[Sequence[Any]]) -> "JudgeCalibration":
        """From ``(judge verdict, human label)`` pairs; verdicts and labels are pass/fail."""
        tp = fn = tn = fp = 0
        for i, pair in enumerate(pairs):
            try:
                verdict, label = pair
            except (TypeError, ValueError):
                raise ReliabilityError(f"calibration pair {i} must be (judge verdict, human label), got {pair!r}") from None
            where = f"calibration pair {i}"
            j, h = _label(verdict, "judge verdict", where), _label(label, "human label", where)
            if h:
                tp, fn = tp + j, fn + (not j)
            else:
                tn, fp = tn + (not j), fp + j
        if tn + fp == 0 or tp + fn == 0:
            raise ReliabilityError(
                f"the calibration set needs items the humans failed and items they passed; it has "
                f"{tn + fp} failed and {tp + fn} passed")
        return cls(tn / (tn + fp), tp / (tp + fn), tn + fp, tp + fn)

    def to_dict(self) -> dict[str, Any]:
        return {"specificity": self.specificity, "sensitivity": self.sensitivity,
                "n_negative": self.n_negative, "n_positive": self.n_positive}


@dataclass(frozen=True)
class CorrectedPassRate:
    """Judge-error-corrected pass rate theta with its CI (module docstring).

    ``observed`` = passed / n as the judge reports it; ``unclipped`` is theta before clipping
    to [0, 1] (outside it when the observed rate is implausible for this judge); ``interval``
    the method of the CI (``"score"`` or ``"lee"``).
    """

    value: float
    ci_low: float
    ci_high: float
    confidence: float
    observed: float
    passed: int
    n: int
    calibration: JudgeCalibration
    unclipped: float
    interval: str = "score"

    @property
    def ci(self) -> tuple[float, float]:
        return (self.ci_low, self.ci_high)

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "ci": [self.ci_low, self.ci_high], "confidence": self.confidence,
                "observed": self.observed, "passed": self.passed, "n": self.n, "unclipped": self.unclipped,
                "interval": self.interval, "calibration": self.calibration.to_dict()}

    def __str__(self) -> str:
        c = self.calibration
        return (f"corrected pass rate {format_estimate(self.value, self.ci_low, self.ci_high, self.confidence)} "
                f"from observed {self.observed:.4f} ({self.passed}/{self.n}); judge "
                f"specificity {c.specificity:.3f} (n={c.n_negative}), sensitivity {c.sensitivity:.3f} "
                f"(n={c.n_positive})")


def corrected_pass_rate(passed: Any, n: int | None = None, *, calibration: Any,
                        confidence: float = 0.95, interval: str = "score") -> CorrectedPassRate:
    """The pass rate a perfect judge would report, from the judge's ``passed`` out of ``n``.

    ``passed``: a count (with ``n``) or a sequence of the judge's pass/fail verdicts.
    ``calibration``: ``(judge verdict, human label)`` pairs, or a :class:`JudgeCalibration`.
    ``interval``: ``"score"`` (default) or ``"lee"`` (module docstring).
    Raises :class:`~pytest_judgerel.errors.ReliabilityError` when specificity + sensitivity <= 1.
    """
    from scipy.special import ndtri

    count, total = _counts(passed, n)
    cal = calibration if isinstance(calibration, JudgeCalibration) else JudgeCalibration.from_pairs(calibration)
    confidence = check_confidence(confidence)
    if interval not in _INTERVALS:
        raise ReliabilityError(f"interval must be one of {_INTERVALS}, got {interval!r}")
    q0, q1 = cal.specificity, cal.sensitivity
    if q0 + q1 <= 1:
        raise ReliabilityError(
            f"the judge is no better than chance on the calibration set: specificity {q0:.3f} + sensitivity "
            f"{q1:.3f} = {q0 + q1:.3f} <= 1, so its verdicts carry no information about the true pass rate "
            f"and the correction (p + q0 - 1) / (q0 + q1 - 1) is undefined. The calibration set has "
            f"{cal.n_negative} item(s) the humans failed and {cal.n_positive} they passed: q0 and q1 are "
            "measured on each group separately, so label at least 30 items of each (sample the calibration "
            "set stratified by human label, not at random from the system's outputs)")
    p = count / total
    raw = (p + q0 - 1) / (q0 + q1 - 1)
    value = min(1.0, max(0.0, raw))
    z = float(ndtri(1 - (1 - confidence) / 2))
    limits = _lee_interval if interval == "lee" else _score_interval
    lo, hi = limits(p, q0, q1, total, cal.n_negative, cal.n_positive, z)
    lo, hi = min(lo, value), max(hi, value)
    return CorrectedPassRate(value, lo, hi, float(confidence), p, count, total, cal, raw, interval)


def _lee_interval(p: float, q0: float, q1: float, n: int, m0: int, m1: int, z: float) -> tuple[float, float]:
    """Lee et al.'s smoothed plug-in delta-method interval, clipped to [0, 1], as in their reference
    implementation (``confidence_interval`` in UW-Madison-Lee-Lab/LLM-judge-reporting).

    p, q0 and q1 are first smoothed (p with z^2/2 pseudo-successes out of z^2, Agresti-Coull
    style; q0 and q1 with one pseudo-success out of two); the delta-method standard error
    ``sqrt(p(1-p)/n + (1-theta)^2 q0(1-q0)/m0 + theta^2 q1(1-q1)/m1) / (q0 + q1 - 1)`` adds the
    calibration uncertainty of q0 and q1 to the test-set uncertainty of p, and a second-order
    bias term ``2 z^2 (theta q1(1-q1)/m1 - (1-theta) q0(1-q0)/m0)`` recentres the interval.  If
    the smoothed q0 + q1 is not above 1 the interval is the whole range [0, 1]."""
    z2 = z * z
    ps, q0s, q1s = (n * p + z2 / 2) / (n + z2), (m0 * q0 + 1) / (m0 + 2), (m1 * q1 + 1) / (m1 + 2)
    ns, m0s, m1s = n + z2, m0 + 2, m1 + 2
    den = q0s + q1s - 1
    if den <= 0:
        return 0.0, 1.0
    th = (ps + q0s - 1) / den
    var0, var1 = q0s * (1 - q0s) / m0s, q1s * (1 - q1s) / m1s
    shift = 2 * z2 * (th * var1 - (1 - th) * var0)
    se = math.sqrt(ps * (1 - ps) / ns + (1 - th) ** 2 * var0 + th ** 2 * var1) / den
    clip = lambda x: min(1.0, max(0.0, x))  # noqa: E731
    return clip(th + shift - z * se), clip(th + shift + z * se)


def _score_z(theta0: float, p: float, q0: float, q1: float, sizes: np.ndarray) -> float:
    """Signed score statistic of H0 theta = theta0: r / sd(r).  Decreases in theta0.

    Under H0 the judge's expected pass rate is ``pi0 = q1 theta0 + (1 - q0)(1 - theta0)``, so ``r
    = p - (1 - q0)(1 - theta0) - q1 theta0`` has mean 0 and variance ``pi(1-pi)/n + (1-theta0)^2
    q0(1-q0)/m0 + theta0^2 q1(1-q1)/m1`` (Fieller 1954).  The variances are evaluated at the
    estimates constrained to H0 (the variance-weighted projection of (p, q0, q1) onto the plane
    r = 0, iterated three times), as a score test evaluates them under its null (Wilson 1927),
    and ``|r|`` is reduced by a quarter count of each proportion (``0.25/n + (1-theta0) 0.25/m0 +
    theta0 0.25/m1``, half of Yates' continuity correction: the counts are discrete)."""
    g = np.array([1.0, 1.0 - theta0, -theta0])  # r = g . (p, q0, q1) - (1 - theta0)
    x = np.array([p, q0, q1])
    r = float(g @ x) - (1.0 - theta0)
    cc = _HALF_COUNT * (1 / sizes[0] + (1 - theta0) / sizes[1] + theta0 / sizes[2])
    r = math.copysign(max(0.0, abs(r) - cc), r)
    floor = 0.5 / sizes  # a proportion of 0 or 1 still has sampling variance: half a count
    xt = x
    for _ in range(3):
        v = np.clip(xt, floor, 1 - floor)
        var = v * (1 - v) / sizes
        xt = np.clip(x - var * g * r / float(g @ (var * g)), 0.0, 1.0)
    v = np.clip(xt, floor, 1 - floor)
    return r / math.sqrt(float(g @ (v * (1 - v) / sizes * g)))


def _score_interval(p: float, q0: float, q1: float, n: int, m0: int, m1: int, z: float) -> tuple[float, float]:
    """The theta0 in [0, 1] whose score test is not rejected at two-sided level 2 (1 - Phi(z))."""
    from scipy.optimize import brentq

    sizes = np.array([n, m0, m1], dtype=float)
    f = lambda t: _score_z(t, p, q0, q1, sizes)  # noqa: E731
    est = min(1.0, max(0.0, (p + q0 - 1) / (q0 + q1 - 1)))
    at = f(est)  # 0 unless the estimate was clipped
    lo = est if at > z else 0.0 if f(0.0) <= z else brentq(lambda t: f(t) - z, 0.0, est, xtol=1e-12)
    hi = est if at < -z else 1.0 if f(1.0) >= -z else brentq(lambda t: f(t) + z, est, 1.0, xtol=1e-12)
    return lo, hi


def _counts(passed: Any, n: int | None) -> tuple[int, int]:
    if isinstance(passed, numbers.Integral) and not isinstance(passed, bool):
        passed, n = int(passed), n if n is None or isinstance(n, bool) else int(n)
        if n is None:
            raise ReliabilityError("corrected_pass_rate: a pass count needs n (the number of items judged)")
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ReliabilityError(f"n must be a positive integer, got {n!r}")
        if not 0 <= passed <= n:
            raise ReliabilityError(f"passed must lie in 0..n={n}, got {passed}")
        return passed, n
    if isinstance(passed, (str, bytes)) or not hasattr(passed, "__iter__"):
        raise ReliabilityError(f"passed must be a count or a sequence of pass/fail verdicts, got {passed!r}")
    verdicts = [_label(v, "judge verdict", f"verdict {i}") for i, v in enumerate(passed)]
    if not verdicts:
        raise ReliabilityError("no judge verdicts given")
    if n is not None and n != len(verdicts):
        raise ReliabilityError(f"n={n} but {len(verdicts)} verdicts were given")
    return sum(verdicts), len(verdicts)
