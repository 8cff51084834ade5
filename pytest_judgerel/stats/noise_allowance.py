"""How far a judge's own sampling noise can move a score: the noise allowance of a flip.

A judge rates ``k`` items ``r_i`` times each (the clean repeats); a reply is ``clip(mu_i + sigma
e)`` on the scale ``[low, high]`` (``e`` standard normal), rounded to the judge's reply step.  If an
attack changes nothing, an attacked reply minus the clean mean has, before clipping, mean 0 and
variance ``sigma^2 (1/r + 1/m)`` (``m`` attacked samples), and ``(attacked - clean) / (s sqrt(1/r +
1/m))`` follows Student's t with ``df = sum r_i - k`` degrees of freedom (the pooled two-sample t
statistic; Student 1908, Casella & Berger 2002, section 8.3).  So a gain above ``t_{1-alpha, df} s
sqrt(1/r + 1/m)`` happens by noise alone with probability ``alpha`` (:meth:`NoiseAllowance.points`).
Clipping only shrinks a gain (it lifts low clean replies and lowers high attacked ones), but it
shrinks the *observed* spread of low items, so ``s`` is the larger of the pooled within-item sd
and the censored-normal estimate (Tobit; Tobin 1958: replies at a bound count as latent values
beyond half a reply step inside it, the others as observed, one mean per item, maximum
likelihood).  Without any spread (a deterministic judge) or with one sample per item it is 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

__all__ = ["NoiseAllowance", "noise_allowance", "reply_step"]


@dataclass(frozen=True)
class NoiseAllowance:
    """The within-item standard deviation ``sd`` of the clean repeats (pooled, or censored-normal
    ML when larger), its
    degrees of freedom ``df``, the per-comparison false-flip probability ``alpha`` and the
    one-sided critical value ``t`` (``t_{1-alpha, df}``; None when ``df`` is 0)."""

    sd: float
    df: int
    alpha: float
    t: float | None

    def points(self, n_clean: int, n_attacked: int) -> float:
        """The score gain that noise alone exceeds with probability ``alpha``, for a clean mean of
        ``n_clean`` samples and an attacked mean of ``n_attacked`` (0 when ``df`` is 0)."""
        if self.t is None or n_clean < 1 or n_attacked < 1:
            return 0.0
        return self.t * self.sd * math.sqrt(1.0 / n_clean + 1.0 / n_attacked)

    def to_dict(self) -> dict[str, float | int | None]:
        return {"sd": self.sd, "df": self.df, "alpha": self.alpha, "t": self.t}


def reply_step(values: np.ndarray) -> float:
    """The judge's reply step: 1 when every reply is whole, 0.1 when every reply has one decimal,
    else 0 (continuous)."""
    x = values[~np.isnan(values)]
    for step in (1.0, 0.1):
        if np.allclose(x / step, np.round(x / step), atol=1e-6):
            return step
    return 0.0


def noise_allowance(groups: Sequence[Any], alpha: float, low: float | None = None,
                    high: float | None = None) -> NoiseAllowance:
    """The noise allowance from ``groups`` (one sequence of repeated scores per item; NaN ignored)
    on the scale ``[low, high]`` (None: unbounded on that side)."""
    from scipy import stats as sps

    if not (isinstance(alpha, (int, float)) and 0 < alpha < 0.5):
        raise ValueError(f"alpha must be in (0, 0.5), got {alpha!r}")
    rows = [x[~np.isnan(x)] for x in (np.asarray(g, dtype=float) for g in groups)]
    rows = [x for x in rows if len(x)]
    df = sum(len(x) for x in rows) - len(rows)
    if df <= 0:
        return NoiseAllowance(0.0, 0, float(alpha), None)
    t = float(sps.t.ppf(1.0 - alpha, df))
    ss = sum(float(np.sum((x - x.mean()) ** 2)) for x in rows)
    if ss == 0.0:
        return NoiseAllowance(0.0, df, float(alpha), t)
    return NoiseAllowance(_censored_sd(rows, math.sqrt(ss / df), low, high), df, float(alpha), t)


def _censored_sd(rows: list[np.ndarray], start: float, low: float | None, high: float | None) -> float:
    """The ML estimate of the common sd of normal replies clipped to ``[low, high]``, one mean per row."""
    from scipy import optimize, stats as sps

    allv = np.concatenate(rows)
    half = reply_step(allv) / 2.0
    lo_c = None if low is None else low + half
    hi_c = None if high is None else high - half
    at_lo = [np.isclose(x, low) if low is not None else np.zeros(len(x), bool) for x in rows]
    at_hi = [np.isclose(x, high) if high is not None else np.zeros(len(x), bool) for x in rows]
    if not any(np.any(~(a | b)) for a, b in zip(at_lo, at_hi)):
        return start  # every reply at a bound: nothing to estimate the latent spread from
    span = (float(allv.max() - allv.min()) or 1.0)

    def nll(theta: np.ndarray) -> float:
        sigma = math.exp(theta[-1])
        total = 0.0
        for x, mu, lo, hi in zip(rows, theta[:-1], at_lo, at_hi):
            mid = ~(lo | hi)
            total -= float(np.sum(sps.norm.logpdf(x[mid], mu, sigma)))
            if lo.any():
                total -= float(lo.sum()) * float(sps.norm.logcdf(_known(lo_c), mu, sigma))
            if hi.any():
                total -= float(hi.sum()) * float(sps.norm.logsf(_known(hi_c), mu, sigma))
        return total

    theta0 = np.array([float(x.mean()) for x in rows] + [math.log(max(start, 1e-3 * span))])
    bounds = [(float(allv.min()) - 3 * span, float(allv.max()) + 3 * span)] * len(rows)
    bounds.append((math.log(1e-4 * span), math.log(10 * span)))
    fit = optimize.minimize(nll, theta0, method="L-BFGS-B", bounds=bounds)
    return max(start, float(math.exp(fit.x[-1]))) if fit.success or np.isfinite(fit.fun) else start


def _known(x: float | None) -> float:
    """``x``, known to be set (a censoring point exists wherever a reply sits at that bound)."""
    assert x is not None
    return x
