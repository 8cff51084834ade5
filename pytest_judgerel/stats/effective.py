"""The effective number of independent judges in a panel (design effect of correlated errors).

Averaging k judges whose errors have variance s^2 and mean pairwise correlation r leaves an
error variance of ``s^2 (1 + (k - 1) r) / k`` (the variance of a mean of equicorrelated
variables; Kish 1965, "Survey sampling", section 8.2, design effect of clustering), so the panel
is worth ``k_eff = k / (1 + (k - 1) r)`` independent judges: k when the errors are uncorrelated,
1 when they are identical (Spearman-Brown's step-up read backwards).  r is the mean of the
pairwise Pearson correlations of the errors over the items every judge scored.  *Errors* are
the judges' scores minus a reference:

* with human gold (``human``), ``score_j - gold``.  Noise in the gold is an error every judge
  shares and would inflate r; with several human raters per item its variance (the mean over
  items of the within-item variance over the number of raters) is removed from every error
  variance and covariance (``gold_noise``).
* without gold, the mean of the *other* judges (leave one out; ``reference="panel"``).  Those
  deviations sum to zero, so their correlations average about ``-1 / (k - 1)`` whatever the
  errors: each is rescaled, ``r* = (r + 1/(k-1)) (k-1)/k``, and only the excess of judges that
  err together against the rest (a model family) is kept, ``max(r*, 0)``.  An error the whole
  panel shares is part of the consensus, so without gold k_eff overstates such a panel.

**k_eff is capped at k**: ``value = k / (1 + (k - 1) max(r, 0))``, ``capped`` when r < 0 (almost
always the gold-noise correction, an *estimated* variance subtracted from every covariance;
uncapped, k_eff would exceed k or raise); ``mean_error_correlation`` keeps the uncapped r.  A
judge whose error variance falls to or below the gold noise raises (its correlation is
undefined).  ``benchmarks/bench_effective_judges.py`` measures both references.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ReliabilityError
from ._input import as_matrix, as_vector_or_matrix, item_means

__all__ = ["EffectiveJudges", "effective_judges"]


@dataclass(frozen=True)
class EffectiveJudges:
    """Effective number of independent judges ``value`` = k / (1 + (k - 1) r).

    ``mean_error_correlation`` is r; ``pairwise`` the k x k matrix of error correlations (1 on the
    diagonal, after the corrections of the module docstring); ``reference`` is ``"human"`` (errors
    against gold) or ``"panel"`` (against the leave-one-out panel mean; blind to an error all judges share).
    ``n_omitted`` items lacked a score (or the gold) and were left out.  ``capped``: r < 0, so
    ``value`` is k (the uncapped k / (1 + (k - 1) r) would exceed it; module docstring).
    """

    value: float
    mean_error_correlation: float
    k: int
    n: int
    reference: str
    gold_noise: float | None = None
    n_omitted: int = 0
    pairwise: tuple[tuple[float, ...], ...] = field(default=(), repr=False)
    capped: bool = False

    @property
    def share(self) -> float:
        """k_eff / k: the share of the panel that counts."""
        return self.value / self.k

    @property
    def redundant(self) -> bool:
        """The panel is worth fewer than half its members."""
        return self.value < self.k / 2

    def to_dict(self) -> dict[str, Any]:
        return {"effective_judges": self.value, "mean_error_correlation": self.mean_error_correlation,
                "k": self.k, "n": self.n, "reference": self.reference, "gold_noise": self.gold_noise,
                "n_omitted": self.n_omitted, "capped": self.capped}

    def __str__(self) -> str:
        against = "human gold" if self.reference == "human" else "the leave-one-out panel mean (blind to an error all share)"
        cap = " (capped at k: r < 0)" if self.capped else ""
        return (f"{self.k} judges are worth {self.value:.2f}{cap} independent ones (mean pairwise error correlation "
                f"{self.mean_error_correlation:.3f} against {against}, n = {self.n} items)")


def effective_judges(scores: Any, human: Any = None, *, nan_policy: str = "omit") -> EffectiveJudges:
    """Mean pairwise correlation of judge errors and the effective number of independent judges.

    ``scores``: items x judges (array-like or :class:`~pytest_judgerel.ratings.Ratings`), at least
    2 judges (3 without gold) and 3 items.  ``human``: gold per item (1-D), or items x human raters
    (averaged per item, its noise removed), or None (leave-one-out reference).  ``nan_policy``:
    ``"omit"`` drops items missing a score or the gold, ``"raise"`` refuses them.
    """
    mat = as_matrix(scores, name="scores")
    n_items, k = mat.shape
    if k < 2:
        raise ReliabilityError(f"scores has {k} judge(s); the error correlation of a panel needs at least 2")
    if nan_policy not in ("omit", "raise"):
        raise ReliabilityError(f"nan_policy must be 'omit' or 'raise', got {nan_policy!r}")
    gold = noise_per_item = None
    if human is not None:
        h = as_vector_or_matrix(human, name="human")
        if h.shape[0] != n_items:
            raise ReliabilityError(f"human has {h.shape[0]} items but scores has {n_items}")
        gold = item_means(h)
        if h.ndim == 2 and h.shape[1] > 1:
            m = (~np.isnan(h)).sum(axis=1)
            within = np.full(h.shape[0], np.nan)
            ok = m >= 2
            within[ok] = np.nanvar(h[ok], axis=1, ddof=1)
            noise_per_item = np.where(ok, within / np.maximum(m, 1), np.nan)
    elif k < 3:
        raise ReliabilityError("without human gold the errors are measured against the other judges, which "
                               "needs at least 3 judges; pass human=... for a panel of 2")
    keep = ~np.isnan(mat).any(axis=1)
    if gold is not None:
        keep &= ~np.isnan(gold)
    n_omitted = int((~keep).sum())
    if n_omitted and nan_policy == "raise":
        bad = np.flatnonzero(~keep)[:10].tolist()
        raise ReliabilityError(f"{n_omitted} item(s) lack a judge score or the gold (first: {bad}); pass "
                               "nan_policy='omit' to drop them")
    x = mat[keep]
    n = x.shape[0]
    if n < 3:
        raise ReliabilityError(f"only {n} item(s) have every judge's score{' and the gold' if gold is not None else ''}"
                               "; the error correlation needs at least 3")
    gold_noise = None
    if gold is not None:
        err = x - gold[keep][:, None]
        cov = _cov(err)
        if noise_per_item is not None:
            usable = noise_per_item[keep]
            if np.isfinite(usable).any():
                gold_noise = float(np.nanmean(usable))
                cov = cov - gold_noise
        reference = "human"
    else:
        loo = (x.sum(axis=1, keepdims=True) - x) / (k - 1)
        cov = _cov(x - loo)
        reference = "panel"
    var = np.diag(cov).copy()
    flat = np.flatnonzero(var <= 1e-12 * max(1.0, float(np.abs(x).max())) ** 2)
    if flat.size:
        raise ReliabilityError(
            f"judge(s) {flat.tolist()} have no error variance against "
            f"{'the gold' if gold is not None else 'the rest of the panel'} (their errors are constant"
            f"{' once the gold noise is removed' if gold_noise else ''}): the error correlation is undefined")
    corr = cov / np.sqrt(np.outer(var, var))
    np.fill_diagonal(corr, 1.0)
    if gold is None:
        corr = np.maximum((corr + 1.0 / (k - 1)) * (k - 1) / k, 0.0)
        np.fill_diagonal(corr, 1.0)
    corr = np.clip(corr, -1.0, 1.0)
    iu = np.triu_indices(k, 1)
    r = float(corr[iu].mean())
    value = k / (1 + (k - 1) * max(r, 0.0))  # capped at k (module docstring)
    return EffectiveJudges(float(value), r, k, n, reference, gold_noise, n_omitted,
                           tuple(tuple(float(v) for v in row) for row in corr), capped=r < 0)


def _cov(x: np.ndarray) -> np.ndarray:
    """Column covariance (ddof 1) by einsum: ``np.cov`` goes through BLAS, whose threads stall
    beside other BLAS users on few cores (``benchmarks/bench_blas_contention.py``)."""
    c = x - np.add.reduce(x, axis=0) / x.shape[0]
    return np.einsum("ij,ik->jk", c, c) / (x.shape[0] - 1)
