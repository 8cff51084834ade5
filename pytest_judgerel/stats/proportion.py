"""A binomial proportion with its Wilson score interval (or the exact Clopper-Pearson one).

Wilson (1927), "Probable inference, the law of succession, and statistical inference", JASA 22:
the interval inverts the score test, ``(p + z^2/(2n) +/- z sqrt(p(1-p)/n + z^2/(4n^2))) / (1 + z^2/n)``.
It stays inside [0, 1] and keeps near-nominal coverage for small n and for proportions near 0
or 1, where the Wald interval collapses or overshoots (Brown, Cai & DasGupta 2001, Statistical
Science 16, recommend it for n < 40).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..errors import ReliabilityError
from .interval import HasInterval, check_confidence

__all__ = ["Proportion", "wilson_interval", "ExactProportion", "clopper_pearson"]


@dataclass(frozen=True)
class Proportion(HasInterval):
    """``count`` successes out of ``n``: ``value`` = count / n with a Wilson ``confidence`` interval."""

    _interval_method = "Wilson"

    value: float
    ci_low: float
    ci_high: float
    count: int
    n: int
    confidence: float

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "ci": [self.ci_low, self.ci_high], "count": self.count, "n": self.n,
                "confidence": self.confidence}

    def __str__(self) -> str:
        return f"{self.value:.3f} ({self.count}/{self.n}) {self.interval.format(3)}"


def wilson_interval(count: int, n: int, confidence: float = 0.95) -> Proportion:
    """The proportion ``count / n`` with its Wilson score interval (two-sided, ``confidence``)."""
    from scipy.special import ndtri

    for name, v in (("count", count), ("n", n)):
        if isinstance(v, bool) or not isinstance(v, int) and not (hasattr(v, "__index__")):
            raise ReliabilityError(f"wilson_interval: {name} must be an integer, got {v!r}")
    count, n = int(count), int(n)
    if n < 1:
        raise ReliabilityError(f"wilson_interval: n must be at least 1, got {n}")
    if not 0 <= count <= n:
        raise ReliabilityError(f"wilson_interval: count must lie in 0..n={n}, got {count}")
    confidence = check_confidence(confidence)
    z = float(ndtri(1 - (1 - confidence) / 2))
    p = count / n
    z2n = z * z / n
    centre = (p + z2n / 2) / (1 + z2n)
    half = z * math.sqrt(p * (1 - p) / n + z2n / (4 * n)) / (1 + z2n)
    lo = 0.0 if count == 0 else max(0.0, centre - half)
    hi = 1.0 if count == n else min(1.0, centre + half)
    return Proportion(p, min(lo, p), max(hi, p), count, n, float(confidence))


@dataclass(frozen=True)
class ExactProportion(Proportion):
    """A :class:`Proportion` whose interval is the exact Clopper-Pearson interval."""

    _interval_method = "Clopper-Pearson"

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "method": "clopper-pearson"}


def clopper_pearson(count: int, n: int, confidence: float = 0.95) -> ExactProportion:
    """The proportion ``count / n`` with its exact (Clopper-Pearson) two-sided interval.

    Clopper & Pearson (1934), "The use of confidence or fiducial limits illustrated in the case of
    the binomial", Biometrika 26: the bounds invert the two one-sided binomial tests, so they are
    the ``alpha/2`` quantile of Beta(count, n - count + 1) and the ``1 - alpha/2`` quantile of
    Beta(count + 1, n - count), with 0 (count = 0) and 1 (count = n) at the edges.  Its coverage is
    at least ``confidence`` for every true proportion (conservative), which is why a gate that must
    not understate a rate (an attack's success rate) uses it; equal to
    ``scipy.stats.binomtest(count, n).proportion_ci(confidence, method="exact")``.
    """
    from scipy.special import betaincinv

    for name, v in (("count", count), ("n", n)):
        if isinstance(v, bool) or not isinstance(v, int) and not (hasattr(v, "__index__")):
            raise ReliabilityError(f"clopper_pearson: {name} must be an integer, got {v!r}")
    count, n = int(count), int(n)
    if n < 1:
        raise ReliabilityError(f"clopper_pearson: n must be at least 1, got {n}")
    if not 0 <= count <= n:
        raise ReliabilityError(f"clopper_pearson: count must lie in 0..n={n}, got {count}")
    confidence = check_confidence(confidence)
    alpha = 1 - confidence
    lo = 0.0 if count == 0 else float(betaincinv(count, n - count + 1, alpha / 2))
    hi = 1.0 if count == n else float(betaincinv(count + 1, n - count, 1 - alpha / 2))
    return ExactProportion(count / n, lo, hi, count, n, float(confidence))
