"""Agreement between judges and humans: nMAE, correlations, Krippendorff's alpha, bootstrap.

* nMAE: seed 001 (Li et al. 2026) eqs. (4)-(5), on per-item panel means.
* Pearson (Fisher-z CI), Spearman and Kendall tau-b / tau-c: thin wrappers over scipy.
* Krippendorff's alpha (Krippendorff 2011, "Computing Krippendorff's alpha-reliability"):
  own implementation from the coincidence-matrix definition, in closed forms.
* Spearman-Brown prophecy formula and a seeded, reproducible bootstrap CI.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import ReliabilityError
from .interval import HasInterval, check_confidence
from ..scales import Scale, ScaleLike
from ._input import as_matrix, as_vector_or_matrix, ids_of, item_means


# ---------------------------------------------------------------------------- nMAE
@dataclass(frozen=True)
class NMAEResult:
    """nMAE with the per-item normalised absolute errors |mean_judge - mean_human| / R.

    ``per_item[i]`` belongs to ``item_ids[i]`` (item positions when no ids were
    given); items lacking a judge or a human rating are dropped (``n_omitted``).
    """

    value: float
    n: int
    scale_low: float
    scale_high: float
    per_item: tuple[float, ...]
    item_ids: tuple[Any, ...]
    judge_means: tuple[float, ...]
    human_means: tuple[float, ...]
    n_omitted: int = 0

    @property
    def mae(self) -> float:
        """Unnormalised MAE, seed 001 eq. (4)."""
        return self.value * (self.scale_high - self.scale_low)

    def items_above(self, threshold: float = 0.1) -> list[tuple[Any, float]]:
        """(item, normalised error) with error > threshold, worst first (seed 001 uses 0.1)."""
        bad = [(i, e) for i, e in zip(self.item_ids, self.per_item) if e > threshold]
        return sorted(bad, key=lambda t: -t[1])

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value, "n": self.n, "scale": [self.scale_low, self.scale_high],
            "n_omitted": self.n_omitted, "worst_items": [
                {"item": i, "error": e} for i, e in self.items_above(0.1)[:10]],
        }

    def __str__(self) -> str:
        return (f"nMAE = {self.value:.4f} (MAE {self.mae:.4g} on scale {self.scale_low:g}-{self.scale_high:g}); "
                f"n = {self.n} items; {len(self.items_above(0.1))} item(s) with nMAE > 0.1")


def nmae(judge: Any, human: Any, scale: ScaleLike, *, item_ids: Sequence[Any] | None = None) -> NMAEResult:
    """Normalised MAE between per-item judge and human panel means (seed 001 eqs. 4-5).

    ``judge`` and ``human``: 1-D (one score per item) or 2-D items x raters
    (NaN = missing; the per-item mean uses the ratings present).  ``scale``:
    ``(low, high)``, ``"0-5"`` or a :class:`~pytest_judgerel.scales.Scale`; R = high - low.
    """
    sc = Scale.parse(scale)
    j = item_means(as_vector_or_matrix(judge, name="judge ratings"))
    h = item_means(as_vector_or_matrix(human, name="human ratings"))
    if j.shape != h.shape:
        raise ReliabilityError(f"judge ratings cover {j.size} items but human ratings {h.size}")
    for name, m in (("judge", j), ("human", h)):
        out = m[(m < sc.low - 1e-9) | (m > sc.high + 1e-9)]
        if out.size:
            raise ReliabilityError(f"{name} scores outside scale {sc.name}: e.g. {float(out[0])!r}; pass the scale used")
    ids = tuple(item_ids) if item_ids is not None else (ids_of(judge, "item_ids") or ids_of(human, "item_ids"))
    if ids is not None and len(ids) != j.size:
        raise ReliabilityError(f"{len(ids)} item ids for {j.size} items")
    keep = ~(np.isnan(j) | np.isnan(h))
    if not keep.any():
        raise ReliabilityError("no item has both a judge and a human rating")
    err = np.abs(j[keep] - h[keep]) / sc.range
    kept_ids = tuple(np.flatnonzero(keep).tolist()) if ids is None else tuple(i for i, k in zip(ids, keep) if k)
    return NMAEResult(
        value=float(err.mean()), n=int(keep.sum()), scale_low=float(sc.low), scale_high=float(sc.high),
        per_item=tuple(err.tolist()), item_ids=kept_ids, judge_means=tuple(j[keep].tolist()),
        human_means=tuple(h[keep].tolist()), n_omitted=int((~keep).sum()),
    )


# ---------------------------------------------------------------------------- correlations
@dataclass(frozen=True)
class CorrelationResult(HasInterval):
    """A correlation coefficient with its p-value (H0: no association) and, for Pearson, a Fisher-z CI."""

    method: str
    value: float
    p: float
    n: int
    ci_low: float | None = None
    ci_high: float | None = None
    confidence: float | None = None
    n_omitted: int = 0

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def __str__(self) -> str:
        return f"{self.method} = {self.formatted(4)}, p = {self.p:.3g}, n = {self.n}"


def pearson(x: Any, y: Any, *, confidence: float = 0.95) -> CorrelationResult:
    """Pearson r (scipy.stats.pearsonr) with the Fisher-z interval tanh(atanh r -/+ z/sqrt(n-3))."""
    from scipy import special, stats

    a, b, omitted = _paired(x, y)
    confidence = check_confidence(confidence)
    res = stats.pearsonr(a, b)
    r = float(np.clip(res.statistic, -1.0, 1.0))
    lo = hi = None
    if a.size > 3:
        z = math.atanh(r) if abs(r) < 1 else math.copysign(math.inf, r)
        half = float(special.ndtri(1 - (1 - confidence) / 2)) / math.sqrt(a.size - 3)
        lo, hi = math.tanh(z - half), math.tanh(z + half)
    return CorrelationResult("pearson", r, float(res.pvalue), int(a.size), lo, hi,
                             confidence if lo is not None else None, omitted)


def spearman(x: Any, y: Any) -> CorrelationResult:
    """Spearman rank correlation (scipy.stats.spearmanr, t-approximation p-value)."""
    from scipy import stats

    a, b, omitted = _paired(x, y)
    res = stats.spearmanr(a, b)
    return CorrelationResult("spearman", float(res.statistic), float(res.pvalue), int(a.size), n_omitted=omitted)


def kendall(x: Any, y: Any, *, variant: str = "b") -> CorrelationResult:
    """Kendall tau-b (ties in both) or tau-c (Stuart's, for unequal numbers of levels), via scipy."""
    from scipy import stats

    if variant not in ("b", "c"):
        raise ReliabilityError(f"kendall variant must be 'b' or 'c', got {variant!r}")
    a, b, omitted = _paired(x, y)
    res = stats.kendalltau(a, b, variant=variant)
    return CorrelationResult(f"kendall-tau-{variant}", float(res.statistic), float(res.pvalue), int(a.size),
                             n_omitted=omitted)


def _paired(x: Any, y: Any) -> tuple[np.ndarray, np.ndarray, int]:
    """Per-item scores (2-D input -> item means), NaN pairs dropped; needs >= 3 items and variation."""
    a = item_means(as_vector_or_matrix(x, name="x"))
    b = item_means(as_vector_or_matrix(y, name="y"))
    if a.shape != b.shape:
        raise ReliabilityError(f"x has {a.size} items but y has {b.size}")
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    if a.size < 3:
        raise ReliabilityError(f"{a.size} complete item pair(s); a correlation needs at least 3")
    for name, v in (("x", a), ("y", b)):
        if np.all(v == v[0]):
            raise ReliabilityError(f"{name} is constant ({float(v[0])!r} for every item): the correlation is undefined")
    return a, b, int((~keep).sum())


# ---------------------------------------------------------------------------- Krippendorff
@dataclass(frozen=True)
class KrippendorffResult:
    """Krippendorff's alpha; ``n_units``/``n_values`` count pairable units and values."""

    value: float
    level: str
    n_units: int
    n_values: int
    n_raters: int

    def __str__(self) -> str:
        return (f"Krippendorff alpha ({self.level}) = {self.value:.4f}; {self.n_units} pairable units, "
                f"{self.n_values} pairable values, {self.n_raters} raters")


_LEVELS = ("nominal", "ordinal", "interval", "ratio")


def krippendorff_alpha(data: Any, level: str = "interval") -> KrippendorffResult:
    """alpha = 1 - D_o / D_e from the coincidence matrix of ``data`` (units x raters, NaN = missing).

    With o_ck the coincidences (pairs of values within a unit, each weighted
    1/(m_u - 1)) and n_c their margins over the N pairable values:
    alpha = 1 - (N - 1) * sum_ck o_ck d2_ck / sum_ck n_c n_k d2_ck.
    The sums are evaluated without building the V x V matrix: within-unit pairs
    directly, expected pairs in closed form (interval, nominal), ordinal as the
    interval metric on mid-ranks of the n_c distribution (d_ck = r_k - r_c with
    r_c = sum_{g<c} n_g + n_c/2), ratio over distinct values.
    """
    if level not in _LEVELS:
        raise ReliabilityError(f"level must be one of {_LEVELS}, got {level!r}")
    x = as_matrix(data, name="reliability data")
    m = (~np.isnan(x)).sum(axis=1)
    units = x[m >= 2]
    if units.shape[0] == 0:
        raise ReliabilityError("no unit has ratings from at least 2 raters: alpha is undefined")
    m_u = m[m >= 2].astype(float)
    values = units[~np.isnan(units)]
    if level == "ratio" and (values < 0).any():
        raise ReliabilityError("ratio-level alpha needs non-negative values")
    if level == "ordinal":
        uniq, counts = np.unique(values, return_counts=True)
        midrank = np.cumsum(counts) - counts / 2.0
        present = ~np.isnan(units)
        units = np.full(units.shape, np.nan)
        units[present] = midrank[np.searchsorted(uniq, values)]  # values are units[present], same order
        values = units[present]
    metric = "interval" if level == "ordinal" else level

    observed = 0.0  # sum over ordered within-unit pairs of d2, weighted 1/(m_u - 1)
    for j in range(units.shape[1]):
        for l in range(j + 1, units.shape[1]):
            both = ~(np.isnan(units[:, j]) | np.isnan(units[:, l]))
            d2 = _d2(units[both, j], units[both, l], metric)
            observed += 2.0 * float((d2 / (m_u[both] - 1)).sum())
    expected = _expected_pairs(values, metric)
    if expected == 0:
        raise ReliabilityError("all pairable ratings are identical: no expected disagreement, alpha is undefined")
    alpha = 1.0 - (values.size - 1) * observed / expected
    return KrippendorffResult(float(alpha), level, int(units.shape[0]), int(values.size), int(x.shape[1]))


def _d2(a: np.ndarray, b: np.ndarray, metric: str) -> np.ndarray:
    if metric == "nominal":
        return (a != b).astype(float)
    if metric == "interval":
        return (a - b) ** 2
    s = a + b
    return np.divide(a - b, s, out=np.zeros_like(s), where=s != 0) ** 2


def _expected_pairs(values: np.ndarray, metric: str) -> float:
    """sum over ordered pairs of distinct pairable values of d2 (the D_e numerator)."""
    n = values.size
    if metric == "interval":
        dev = values - values.mean()
        return 2.0 * n * float(dev @ dev)
    uniq, counts = np.unique(values, return_counts=True)
    counts = counts.astype(float)
    if metric == "nominal":
        return float(n * n - counts @ counts)
    total = 0.0
    for start in range(0, uniq.size, 1024):  # ratio: O(V^2) in row blocks
        block = uniq[start:start + 1024, None]
        d2 = _d2(np.broadcast_to(block, (block.size, uniq.size)), np.broadcast_to(uniq, (block.size, uniq.size)),
                 "ratio")
        total += float(counts[start:start + 1024] @ d2 @ counts)
    return total


# ---------------------------------------------------------------------------- Spearman-Brown, bootstrap
def spearman_brown(rho: float, k: float) -> float:
    """Reliability of the mean of k raters from single-rater reliability rho: k rho / (1 + (k-1) rho).

    Also works backwards with k < 1 (k = 1/m gives the single-rater value of an m-rater mean).
    """
    for name, v in (("rho", rho), ("k", k)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)) or not math.isfinite(v):
            raise ReliabilityError(f"spearman_brown: {name} must be a finite number, got {v!r}")
    if k <= 0:
        raise ReliabilityError(f"spearman_brown: k must be positive, got {k!r}")
    if rho > 1:
        raise ReliabilityError(f"spearman_brown: rho must be <= 1, got {rho!r}")
    den = 1 + (k - 1) * rho
    if den == 0:
        raise ReliabilityError(f"spearman_brown: 1 + (k-1)*rho = 0 for rho={rho!r}, k={k!r}")
    return float(k * rho / den)


@dataclass(frozen=True)
class BootstrapResult(HasInterval):
    """Point estimate on the full data and a bootstrap confidence interval."""

    estimate: float
    ci_low: float
    ci_high: float
    confidence: float
    standard_error: float
    n_resamples: int
    method: str
    seed: int | None

    _estimate_name = "estimate"

    @property
    def _interval_method(self) -> str:  # type: ignore[override]
        return f"{self.method} bootstrap"

    def __str__(self) -> str:
        return f"{self.formatted(4, fmt='g')} ({self.n_resamples} resamples, seed {self.seed})"


def bootstrap_ci(
    statistic: Callable[..., float],
    *samples: Any,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int | None = 0,
    paired: bool = True,
    method: str = "BCa",
) -> BootstrapResult:
    """Bootstrap CI of ``statistic(*samples)`` via scipy.stats.bootstrap, resampling rows (items).

    Samples may be 1-D or 2-D (rows = items, e.g. an items x raters matrix for
    ICC); rows are resampled, with the same row indices for every sample when
    ``paired``.  A fixed ``seed`` makes the interval reproducible.
    """
    from scipy import stats

    if not samples:
        raise ReliabilityError("bootstrap_ci needs at least one sample")
    confidence = check_confidence(confidence)
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 1:
        raise ReliabilityError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    arrays = [np.asarray(s.to_matrix() if hasattr(s, "to_matrix") else s, dtype=float) for s in samples]
    sizes = [a.shape[0] if a.ndim else 0 for a in arrays]
    if min(sizes) < 2:
        raise ReliabilityError(f"every sample needs at least 2 rows to resample, got sizes {sizes}")
    if paired and len(set(sizes)) > 1:
        raise ReliabilityError(f"paired bootstrap needs samples with the same number of rows, got {sizes}")

    on_indices: Callable[..., float]
    if paired:
        data: tuple[np.ndarray, ...] = (np.arange(sizes[0]),)

        def on_indices(idx: np.ndarray) -> float:  # type: ignore[misc]  # one signature per branch
            return float(statistic(*(a[idx] for a in arrays)))
    else:
        data = tuple(np.arange(s) for s in sizes)

        def on_indices(*idx: np.ndarray) -> float:
            return float(statistic(*(a[i] for a, i in zip(arrays, idx))))

    estimate = float(statistic(*arrays))
    with warnings.catch_warnings():  # a NaN interval is turned into a ReliabilityError below
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        res = stats.bootstrap(data, on_indices, n_resamples=n_resamples, vectorized=False, paired=False,
                              confidence_level=confidence, method=method, rng=np.random.default_rng(seed))
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if math.isnan(lo) or math.isnan(hi):
        raise ReliabilityError("bootstrap interval is NaN: the statistic is degenerate on resampled data "
                               "(too few items or no variation); try method='percentile' or more items")
    return BootstrapResult(estimate, lo, hi, float(confidence), float(res.standard_error), n_resamples,
                           method, seed)
