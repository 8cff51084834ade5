"""The noise test of the anchors: does the judge scatter as much as when its reference was recorded?

With ``n`` anchors, ``m`` reference and ``k`` fresh samples each, ``Q = S_d^2 / S_w^2`` is the
variance of the per-anchor differences ``d_i = mean(fresh_i) - mean(reference_i)`` over the
pooled within-anchor variance of the reference.  Without a change ``S_d^2`` estimates ``sigma^2
(1/k + 1/m)`` and ``S_w^2`` estimates ``sigma^2``; the noise ratio ``sigma_fresh /
sigma_reference`` is ``sqrt(k (Q - 1/m))`` with the normal-theory interval from ``Q / (1/k + 1/m)
~ F(n - 1, n (m - 1))`` (a variance-ratio F interval).

The *test* is a permutation test instead (Fisher 1935; Good 2005, *Permutation, parametric and
bootstrap tests of hypotheses*): without a change the ``m + k`` scores of an anchor (the fresh
ones centred by the estimated shift) are exchangeable, so assigning them at random to the
reference and fresh roles gives the null distribution of ``Q`` whatever the per-anchor noise and
the scale's discreteness, where the F test does not keep its level.  It needs ``m >= 2``: with
one reference sample per anchor the variance of ``d`` is ``sigma_f^2 + sigma_r^2`` and the
reference's own noise cannot be separated from the fresh one, so a change of noise cannot be seen.
The two tails get unequal shares of the level (Bonferroni-weighted: ``UP_SHARE`` to an increase,
the rest to a decrease), since a noisier judge is the change that moves gates.  The reported
ratio uses ``Q`` divided by its permutation mean over ``c = 1/k + 1/m`` (its mean without a
change): the ratio of two variance estimates is biased upwards (Jensen), most on coarse scales
where few anchors vary, and the permutation mean measures that bias for the data at hand.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._json import json_float

__all__ = ["UP_SHARE", "NoiseRatio", "noise_ratio"]

UP_SHARE = 0.9
"""Share of the noise test's level given to an increase of the noise (the rest to a decrease)."""


@dataclass(frozen=True)
class NoiseRatio:
    """``value`` = sigma_fresh / sigma_reference (1 = unchanged) with its normal-theory F interval
    (``ci_low``/``ci_high`` at ``confidence``; module docstring); ``p`` is the two-sided
    permutation p value of H0 "the fresh scores vary around the reference as the reference
    varies around itself" (``n_permutations`` random assignments, ``seed``), the smaller of
    ``p_up / UP_SHARE`` and ``p_down / (1 - UP_SHARE)`` (the one-sided tails).  ``q`` is the
    observed ``S_d^2 / S_w^2`` over ``c`` (1 without a change), ``bias`` the permutation mean of
    ``Q / c`` that ``value`` is corrected by, and ``reference_sd`` the reference's within-anchor
    sd (scale units).  A fully deterministic reference (``reference_sd`` 0) has no ratio (None) but
    still a test."""

    value: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float
    p: float
    q: float | None
    reference_sd: float
    fresh_sd: float | None
    n_permutations: int
    seed: int
    p_up: float = 1.0
    p_down: float = 1.0
    bias: float = 1.0

    @property
    def direction(self) -> str:
        """``"up"`` when the fresh scores scatter more than the reference's noise, else ``"down"``."""
        if self.value is None:
            return "up" if self.q is not None and math.isinf(self.q) else "none"
        return "up" if self.value > 1 else "down"

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "ci": None if self.ci_low is None else [self.ci_low, self.ci_high],
                "confidence": self.confidence, "p": self.p, "q": json_float(self.q),
                "reference_sd": self.reference_sd, "fresh_sd": self.fresh_sd, "direction": self.direction,
                "p_up": self.p_up, "p_down": self.p_down, "bias": self.bias, "n_permutations": self.n_permutations, "seed": self.seed}


def noise_ratio(ref: np.ndarray, new: np.ndarray, shift: float, n_permutations: int, seed: int,
                confidence: float = 0.95) -> NoiseRatio:
    """The noise ratio and its permutation test (module docstring) of complete anchors x samples
    arrays: ``ref`` (``m >= 2`` reference samples) and ``new`` (the fresh ones), ``shift`` the
    estimated mean shift that centres the fresh scores."""
    n, m = ref.shape
    k = new.shape[1]
    c = 1 / k + 1 / m
    q = float(_q_statistic(ref, new))
    s_w = float(np.sqrt(((ref - ref.mean(axis=1, keepdims=True)) ** 2).sum() / (n * (m - 1))))
    p_up = p_down = 1.0
    bias = 1.0
    if not math.isnan(q):
        q_null = _permutation_null(ref, new, shift, n_permutations, seed)
        p_up = float((1 + np.sum(q_null >= q * (1 - 1e-12))) / (n_permutations + 1))
        p_down = float((1 + np.sum(q_null <= q * (1 + 1e-12))) / (n_permutations + 1))
        finite = q_null[np.isfinite(q_null)]
        if finite.size and float(finite.mean()) > 0:
            bias = float(finite.mean()) / c
    p = float(min(1.0, p_up / UP_SHARE, p_down / (1 - UP_SHARE)))
    value, lo, hi, fresh_sd = _ratio_with_interval(q / bias, s_w, n, m, k, confidence)
    return NoiseRatio(value=value, ci_low=lo, ci_high=hi, confidence=confidence, p=p,
                      q=None if math.isnan(q) else q / c, reference_sd=s_w, fresh_sd=fresh_sd,
                      n_permutations=n_permutations, seed=seed, p_up=min(1.0, p_up), p_down=min(1.0, p_down),
                      bias=bias)


def _q_statistic(ref: np.ndarray, new: np.ndarray) -> np.ndarray:
    """``S_d^2 / S_w^2`` over the last two axes (anchors, samples); leading axes are permutations.
    inf when only the reference is constant, NaN when both are."""
    m = ref.shape[-1]
    n = ref.shape[-2]
    d = new.mean(axis=-1) - ref.mean(axis=-1)
    s_d2 = d.var(axis=-1, ddof=1)
    s_w2 = ((ref - ref.mean(axis=-1, keepdims=True)) ** 2).sum(axis=(-2, -1)) / (n * (m - 1))
    tiny = 1e-12 * max(1.0, float(np.max(np.abs(ref))) if ref.size else 1.0) ** 2
    s_d2 = np.where(s_d2 <= tiny, 0.0, s_d2)
    s_w2 = np.where(s_w2 <= tiny, 0.0, s_w2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(s_d2 / s_w2)


def _permutation_null(ref: np.ndarray, new: np.ndarray, shift: float, n_permutations: int,
                      seed: int) -> np.ndarray:
    """``n_permutations`` draws of ``Q`` under the permutation null (module docstring)."""
    n, m = ref.shape
    k = new.shape[1]
    # permutation null: the m + k scores of an anchor (fresh centred by the shift) are exchangeable,
    # so every split of them into m reference and k fresh scores is equally likely.  Each anchor's
    # splits are enumerated once (difference of means, reference sum of squares) and drawn per anchor.
    pooled = np.concatenate([ref, new - shift], axis=1)
    splits = list(itertools.combinations(range(m + k), k))
    fresh_pos = np.array(splits)
    ref_pos = np.array([[j for j in range(m + k) if j not in sp] for sp in splits])
    f_part, r_part = pooled[:, fresh_pos], pooled[:, ref_pos]  # anchors x splits x k / m
    d_split = f_part.mean(axis=-1) - r_part.mean(axis=-1)
    ss_split = ((r_part - r_part.mean(axis=-1, keepdims=True)) ** 2).sum(axis=-1)
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, len(splits), size=(n_permutations, n))
    rows = np.arange(n)
    s_d2 = d_split[rows, pick].var(axis=-1, ddof=1)
    s_w2 = ss_split[rows, pick].sum(axis=-1) / (n * (m - 1))
    tiny = 1e-12 * max(1.0, float(np.max(np.abs(pooled)))) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.where(s_d2 <= tiny, 0.0, s_d2) / np.where(s_w2 <= tiny, 0.0, s_w2))


def _ratio_with_interval(q: float, s_w: float, n: int, m: int, k: int, confidence: float
                         ) -> tuple[float | None, float | None, float | None, float | None]:
    """(noise ratio, its F interval, the fresh sd); all None without a finite ratio."""
    from scipy import stats

    if s_w == 0 or not math.isfinite(q):
        return None, None, None, None
    a = 1 - confidence
    f_hi = float(stats.f.ppf(1 - a / 2, n - 1, n * (m - 1)))
    f_lo = float(stats.f.ppf(a / 2, n - 1, n * (m - 1)))

    def ratio(qc: float) -> float:  # Q / c estimates (sigma_f^2 / k + sigma_r^2 / m) / (c sigma_r^2)
        return math.sqrt(max(0.0, k * (qc - 1 / m)))

    value = ratio(q)
    return value, ratio(q / f_hi), ratio(q / f_lo), value * s_w
