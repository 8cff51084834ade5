"""ICC point estimates of many matrices at once (bootstrap resamples), from the same mean squares.

:func:`icc_values` takes a stack of shape ``(..., n, k)`` and returns one ICC per matrix with
the formulas of :mod:`pytest_judgerel.stats.icc` (Shrout & Fleiss 1979; McGraw & Wong 1996;
seed 001 eqs. 2-3), evaluated with numpy over the whole stack: the two-way ANOVA sums of
squares come from centred data and directly computed residuals, as in ``stats.icc``, so each
value equals ``stats.icc(matrix, form).value`` to rounding.  Where ``stats.icc`` would raise
(no variance, an undefined form) the value is NaN, and also wherever the items do not differ
(MS_items = 0, where ``stats.icc`` gives some forms a value of -1/(k-1) or below and raises for
the others): callers decide what an undefined resample means.  :func:`icc_statistic` wraps a form as a statistic for
:func:`~pytest_judgerel.stats.stability.verdict_stability`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ReliabilityError
from .icc import canonical_form
from .interval import check_confidence

__all__ = ["icc_values", "icc_statistic", "ICCStatistic"]

_SS_NOISE = 1e-24  # as in stats.icc: a sum of squares below this share of the total is rounding noise
_POLE_SLACK = 1 - 1e-12


def icc_values(stack: Any, form: str = "A,1") -> np.ndarray:
    """ICC ``form`` of every matrix in ``stack`` (shape ``(..., n, k)``, complete data); NaN where undefined."""
    canon = canonical_form(form)
    x = np.asarray(stack, dtype=float)
    if x.ndim < 2:
        raise ReliabilityError(f"icc_values needs matrices of shape (..., items, raters), got shape {x.shape}")
    n, k = x.shape[-2:]
    if n < 2 or k < 2:
        raise ReliabilityError(f"an ICC needs at least 2 items and 2 raters, got {n} x {k}")
    if np.isnan(x).any():
        raise ReliabilityError("icc_values needs complete matrices (drop items with missing ratings first)")
    msr, msc, mse, msw, zero = _mean_squares(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho_a = msr - mse
        rho_a = rho_a / (msr + (k - 1) * mse + k * (msc - mse) / n)
        if canon == "1,1":
            out = (msr - msw) / (msr + (k - 1) * msw)
        elif canon == "A,1":
            out = rho_a
        elif canon == "C,1":
            out = (msr - mse) / (msr + (k - 1) * mse)
        elif canon == "1,k":
            out = (msr - msw) / msr
        elif canon == "A,k":
            out = np.where(rho_a > -1.0 / (k - 1) * _POLE_SLACK, (msr - mse) / (msr + (msc - mse) / n), np.nan)
        else:  # "C,k"
            out = (msr - mse) / msr
    # items that do not differ (MS_items = 0) leave nothing to be reliable about: stats.icc
    # raises for most forms there (F = 0/0 or an undefined interval); here every form is NaN
    out = np.where(zero | (msr == 0) | ~np.isfinite(out), np.nan, out)
    return out if out.ndim else out[()]


def _mean_squares(x: np.ndarray) -> tuple[np.ndarray, ...]:
    """MSR, MSC, MSE, MSW of every matrix, and a mask of matrices with zero total variance."""
    n, k = x.shape[-2:]
    c = x - x.mean(axis=(-2, -1), keepdims=True)
    row = c.mean(axis=-1)  # (..., n)
    col = c.mean(axis=-2)  # (..., k)
    g = row.mean(axis=-1, keepdims=True)
    dr, dc = row - g, col - g
    ssr = k * np.einsum("...i,...i->...", dr, dr)
    ssc = n * np.einsum("...j,...j->...", dc, dc)
    resid = c - row[..., :, None] - dc[..., None, :]
    sse = np.einsum("...ij,...ij->...", resid, resid)
    total = ssr + ssc + sse
    if not np.all(np.isfinite(total)):
        raise ReliabilityError("ratings are too large: the sums of squares overflow float64; rescale the ratings")
    noise = _SS_NOISE * total
    ssr, ssc, sse = (np.where(s <= noise, 0.0, s) for s in (ssr, ssc, sse))
    msr = ssr / (n - 1)
    msc = ssc / (k - 1)
    mse = sse / ((n - 1) * (k - 1))
    msw = (ssc + sse) / (n * (k - 1))
    return msr, msc, mse, msw, total == 0


@dataclass(frozen=True)
class ICCStatistic:
    """An ICC form as a statistic: ``stat(matrix) -> float``; ``stat(stack) -> array`` when vectorized.

    ``use="estimate"`` is vectorized (:func:`icc_values`); ``"ci_low"``/``"ci_high"`` compute
    :func:`~pytest_judgerel.stats.icc` (with its F-based CI) one matrix at a time.  Undefined
    values are NaN.
    """

    form: str = "A,1"
    use: str = "estimate"
    confidence: float = 0.95

    @property
    def vectorized(self) -> bool:
        return self.use == "estimate"

    @property
    def name(self) -> str:
        suffix = "" if self.use == "estimate" else f" {self.use}"
        return f"ICC({self.form}){suffix}"

    def __call__(self, data: Any) -> Any:
        if self.use == "estimate":
            return icc_values(data, self.form)
        from .icc import icc

        x = np.asarray(data, dtype=float)
        if x.ndim == 2:
            return self._one(icc, x)
        flat = x.reshape((-1,) + x.shape[-2:])
        return np.array([self._one(icc, m) for m in flat]).reshape(x.shape[:-2])

    def _one(self, icc: Any, m: np.ndarray) -> float:
        try:
            r = icc(m, form=self.form, confidence=self.confidence)
        except ReliabilityError:
            return float("nan")
        return float(r.ci_low if self.use == "ci_low" else r.ci_high)


def icc_statistic(form: str = "A,1", use: str = "estimate", confidence: float = 0.95) -> ICCStatistic:
    """The statistic an ICC gate tests: its ``form`` and ``use`` (``"estimate"``, ``"ci_low"``, ``"ci_high"``)."""
    if use not in ("estimate", "ci_low", "ci_high"):
        raise ReliabilityError(f"use must be 'estimate', 'ci_low' or 'ci_high', got {use!r}")
    confidence = check_confidence(confidence)
    return ICCStatistic(canonical_form(form), use, float(confidence))
