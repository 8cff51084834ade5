"""One-way random-effects ICC when items have different numbers of ratings.

When the raters of an item are not the same people for every item and the number of
ratings varies (ConvAbuse: 2 to 6 annotators per conversation), the items x raters matrix
is not crossed and the two-way forms do not apply.  The one-way random-effects ANOVA for
unequal group sizes (Searle 1971; Donner 1986) uses every rating:

    a items, n_i ratings of item i, N = sum n_i
    MSB = sum_i n_i (mean_i - mean)^2 / (a - 1)                  between items
    MSW = sum_i sum_j (y_ij - mean_i)^2 / (N - a)                within items
    n0  = (N - sum_i n_i^2 / N) / (a - 1)                        effective ratings per item
    ICC(1,1) = (MSB - MSW) / (MSB + (n0 - 1) MSW)                one rating
    ICC(1,k) = (MSB - MSW) / MSB                                 mean of n0 ratings (the panel mean)

With equal group sizes n0 = k and both values, F test and intervals equal the
Shrout & Fleiss (1979) ICC(1,1) / ICC(1,k) of :func:`pytest_judgerel.stats.icc`.  The
interval is the F-based one with n0 in place of k (Searle 1971; exact only for equal sizes).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np

from ..errors import ReliabilityError
from ._input import as_matrix
from .interval import check_confidence
from .icc import _ICCEstimate

__all__ = ["OneWayICCResult", "icc_oneway"]

_FORMS = ("1,1", "1,k")


@dataclass(frozen=True)
class OneWayICCResult(_ICCEstimate):
    """ICC(1,1) or ICC(1,k) of an unbalanced one-way design.

    ``n0`` is the effective number of ratings per item, (N - sum n_i^2 / N) / (a - 1);
    ``f`` = MSB / MSW on (``df1``, ``df2``) = (a - 1, N - a) tests H0: ICC = 0.
    ``n`` items (a), ``n_ratings`` ratings (N), ``k_min``/``k_max`` the fewest and most
    ratings of an item, ``n_omitted`` items without any rating (left out).
    """

    n_ratings: int
    n0: float
    k_min: int
    k_max: int
    ms_between: float
    ms_within: float
    n_omitted: int = 0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(label=self.label, band=self.band)
        return d

    def __str__(self) -> str:
        sizes = str(self.k_min) if self.k_min == self.k_max else f"{self.k_min}-{self.k_max}"
        return (
            f"{self.label} = {self.formatted(3)} {self.band} (Koo & Li); one-way, unequal group sizes: n = {self.n} items, {self.n_ratings} ratings "
            f"({sizes} per item), n0 = {self.n0:.4g}; F({self.df1}, {self.df2}) = {self.f:.4g}, p = {self.p:.3g}"
        )


def icc_oneway(data: Any, form: str = "1,1", *, confidence: float = 0.95) -> OneWayICCResult:
    """One-way ICC using every rating, items with any number of ratings.

    ``data``: an items x slots matrix with NaN (or None) where an item has fewer ratings,
    an object with ``to_matrix()`` (e.g. :class:`~pytest_judgerel.ratings.Ratings`), or a
    sequence of per-item rating sequences of any lengths.  The column an item's rating sits
    in carries no meaning.  ``form``: ``"1,1"`` (one rating) or ``"1,k"`` (the mean of n0
    ratings).  Raises :class:`~pytest_judgerel.errors.ReliabilityError` naming the cause
    when the ICC is undefined.
    """
    from scipy import special

    if form not in _FORMS:
        raise ReliabilityError(f"icc_oneway computes forms {_FORMS}, got {form!r}")
    confidence = check_confidence(confidence)
    groups, n_omitted = _groups(data)
    a = len(groups)
    sizes = np.array([g.size for g in groups], dtype=float)
    n_total = int(sizes.sum())
    if a < 2:
        raise ReliabilityError(f"{a} item(s) with ratings; at least 2 are needed")
    if n_total - a < 1:
        raise ReliabilityError("every item has a single rating: the within-item variance is not estimable")
    centre = float(np.concatenate(groups).mean())  # centred sums keep digits under large offsets
    means = np.array([float(np.mean(g - centre)) for g in groups])
    grand = float((sizes * means).sum() / n_total)
    ss_between = float((sizes * (means - grand) ** 2).sum())
    ss_within = float(sum(float(((g - centre - m) ** 2).sum()) for g, m in zip(groups, means)))
    total = ss_between + ss_within
    if total == 0.0:
        raise ReliabilityError("all ratings are identical (zero variance): the one-way ICC is 0/0 and undefined")
    df1, df2 = a - 1, n_total - a
    if ss_between <= 1e-24 * total:
        ss_between = 0.0  # equal item means: ICC(1,1) = -1/(n0 - 1), its lowest value, as stats.icc gives it
        if form == "1,k":
            raise ReliabilityError("all item means are equal (zero between-item variance, MSB = 0): ICC(1,k) = "
                                   "(MSB - MSW) / MSB is 0/0 and undefined")
    msb, msw = ss_between / df1, ss_within / df2
    if msw <= 1e-24 * total:
        msw = 0.0
    n0 = (n_total - float((sizes ** 2).sum()) / n_total) / df1
    f = math.inf if msw == 0 else msb / msw
    p = 0.0 if math.isinf(f) else float(special.fdtrc(df1, df2, f))
    q = 1 - (1 - confidence) / 2
    f_low = f / float(special.fdtri(df1, df2, q))
    f_high = f * float(special.fdtri(df2, df1, q))
    if form == "1,1":
        value = (msb - msw) / (msb + (n0 - 1) * msw)
        lo, hi = (_single(f_low, n0), _single(f_high, n0))
    else:
        value = (msb - msw) / msb
        lo, hi = (_average(f_low), _average(f_high))
    return OneWayICCResult(
        form=form, value=float(value), ci_low=float(lo), ci_high=float(hi), confidence=float(confidence),
        f=float(f), df1=df1, df2=df2, p=p, n=a, n_ratings=n_total, n0=float(n0),
        k_min=int(sizes.min()), k_max=int(sizes.max()), ms_between=float(msb), ms_within=float(msw),
        n_omitted=n_omitted,
    )


def _single(f_limit: float, n0: float) -> float:
    return 1.0 if math.isinf(f_limit) else (f_limit - 1) / (f_limit + n0 - 1)


def _average(f_limit: float) -> float:
    return 1.0 if math.isinf(f_limit) else 1 - 1 / f_limit


def _groups(data: Any) -> tuple[list[np.ndarray], int]:
    """Per-item arrays of the present ratings, and the number of items without any."""
    rows: Sequence[Any]
    if isinstance(data, (list, tuple)) and data and all(
            isinstance(r, (list, tuple, np.ndarray)) for r in data) and len({len(r) for r in data}) > 1:
        width = max(len(r) for r in data)
        rows = [list(r) + [None] * (width - len(r)) for r in data]  # ragged: pad, then validate as usual
        mat = as_matrix(rows)
    else:
        mat = as_matrix(data)
    present = ~np.isnan(mat)
    groups = [row[keep] for row, keep in zip(mat, present) if keep.any()]
    return groups, int((~present.any(axis=1)).sum())
