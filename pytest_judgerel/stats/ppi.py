"""Prediction-powered estimates of the human-scale mean (PPI, PPI++ with power tuning).

A few items carry a human label ``Y`` and a judge score ``f``; many more carry only the judge
score.  Prediction-powered inference (Angelopoulos, Bates, Fannjiang, Jordan & Zrnic 2023,
"Prediction-powered inference", Science 382) estimates the mean of ``Y`` over the population
from both, with the judge's bias removed by the labelled items (the *rectifier*); PPI++
(Angelopoulos, Duchi & Zrnic 2024, "PPI++: efficient prediction-powered inference",
arXiv:2311.01453, mean estimation) weights the judge by a tuning parameter lambda:

    theta(lambda) = mean_l(Y - lambda f) + lambda mean_u(f)

    Var(theta)    = Var(Y - lambda f) / n + lambda^2 Var(f_u) / N

with ``n`` labelled and ``N`` unlabelled items.  The estimate is unbiased for every fixed
lambda, whatever the judge's bias; lambda = 0 is the classical (human-only) mean, lambda = 1
is the original PPI.  The variance is smallest at ``lambda* = Cov(Y, f) / ((1 + n/N) Var(f))``
(PPI++'s optimal tuning for the mean, as in the ``ppi_py`` reference code), estimated with
Cov(Y, f) on the labelled items and Var(f) on every judge score; the plug-in lambda-hat keeps
the interval's asymptotic coverage (PPI++'s central limit theorem for a data-dependent lambda),
and the tuned estimate is never asymptotically worse than the human-only one.  Choices where the
papers leave room: :func:`_estimate` and :func:`_t`.  The difference of two systems
(:func:`ppi_mean_difference`) applies the same estimator to ``theta_a - theta_b``, with the
covariance of shared items in its variance and both lambdas tuned jointly (:func:`_tune_pair`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import ReliabilityError
from .interval import HasInterval, check_confidence, format_interval
from ._input import as_vector_or_matrix, item_means

__all__ = ["HumanMean", "PPIMean", "PPIDifference", "ppi_mean", "ppi_mean_by", "ppi_mean_difference",
           "ppi_mean_resamples", "MIN_LABELED", "MIN_UNLABELED"]

MIN_LABELED = 3
"""Fewest human labels: the variance of the rectifier and lambda-hat need a few degrees of freedom."""
MIN_UNLABELED = 2
"""Fewest unlabelled judge scores (their variance enters the interval)."""


@dataclass(frozen=True)
class HumanMean(HasInterval):
    """The classical human-only mean of the labelled items with its Student t interval."""

    value: float
    ci_low: float
    ci_high: float
    se: float
    n: int
    confidence: float

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "ci": [self.ci_low, self.ci_high], "se": self.se, "n": self.n,
                "confidence": self.confidence}


@dataclass(frozen=True)
class PPIMean(HasInterval):
    """PPI++ estimate of the human-scale mean (module docstring).

    ``lam`` is the tuning weight of the judge (0: humans only, 1: classic PPI); ``tuned`` says
    whether it was estimated (lambda-hat) or fixed.  ``effective_n`` is the number of human labels
    the classical mean would need for the same variance (``Var(Y) / se^2``): the estimate is
    worth that many labels.  ``classical`` is the human-only mean of the same labels.
    ``judge_mean`` is the judge's own mean over every item it scored (uncorrected) and
    ``judge_bias`` its mean excess over the human label on the labelled items (meaningful when
    both use the same scale).
    """

    value: float
    ci_low: float
    ci_high: float
    se: float
    confidence: float
    lam: float
    tuned: bool
    n_labeled: int
    n_unlabeled: int
    effective_n: float
    classical: HumanMean
    judge_mean: float
    judge_bias: float

    @property
    def n(self) -> int:
        """Human labels (the sample size of the interval's leading term)."""
        return self.n_labeled

    @property
    def k(self) -> None:
        return None

    @property
    def width_ratio(self) -> float:
        """Interval width relative to the human-only interval (< 1: the judge helped)."""
        w = self.classical.ci_high - self.classical.ci_low
        return (self.ci_high - self.ci_low) / w if w > 0 else math.nan

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "ci": [self.ci_low, self.ci_high], "se": self.se,
                "confidence": self.confidence, "lam": self.lam, "tuned": self.tuned,
                "n_labeled": self.n_labeled, "n_unlabeled": self.n_unlabeled, "effective_n": self.effective_n,
                "classical": self.classical.to_dict(), "judge_mean": self.judge_mean,
                "judge_bias": self.judge_bias}

    def __str__(self) -> str:
        c = self.classical
        return (f"human-scale mean {self.formatted(4)}"
                f" (PPI++, lambda {self.lam:.3f}, {self.n_labeled} human labels + {self.n_unlabeled} judge-only "
                f"items, worth {self.effective_n:.0f} labels); human-only {c.formatted(4)}")


@dataclass(frozen=True)
class PPIDifference(HasInterval):
    """PPI++ estimate of ``theta_a - theta_b`` for two systems (module docstring).

    ``lam`` holds (lambda_a, lambda_b); ``a`` and ``b`` are each system's own estimate with the
    same lambdas; ``classical`` is the human-only difference (paired t when ``paired``).
    ``effective_n`` is the number of human labels per system the human-only difference would need
    for the same variance.
    """

    value: float
    ci_low: float
    ci_high: float
    se: float
    confidence: float
    lam: tuple[float, float]
    tuned: bool
    paired: bool
    paired_unlabeled: bool
    a: PPIMean
    b: PPIMean
    classical: HumanMean
    effective_n: float

    @property
    def n(self) -> int:
        return min(self.a.n_labeled, self.b.n_labeled)

    @property
    def k(self) -> int:
        return 2

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "ci": [self.ci_low, self.ci_high], "se": self.se,
                "confidence": self.confidence, "lam": list(self.lam), "tuned": self.tuned, "paired": self.paired,
                "paired_unlabeled": self.paired_unlabeled, "a": self.a.to_dict(), "b": self.b.to_dict(),
                "classical": self.classical.to_dict(), "effective_n": self.effective_n}

    def __str__(self) -> str:
        c = self.classical
        return (f"difference of human-scale means {self.formatted(4, signed=True)} (PPI++, lambda {self.lam[0]:.3f} / {self.lam[1]:.3f}, "
                f"{'paired' if self.paired else 'independent'} labels); human-only {c.value:+.4f} "
                f"{format_interval(c.ci_low, c.ci_high, digits=4, signed=True)}")


# ---------------------------------------------------------------------- input
def _vector(data: Any, name: str) -> np.ndarray:
    """One value per item: a 1-D sequence, or items x columns (raters, repeats; a ``Ratings``),
    averaged per item over the values present (the shared input checks of :mod:`._input`)."""
    arr = as_vector_or_matrix(data, name=name)
    if arr.ndim == 2:
        arr = item_means(arr)
    bad = np.flatnonzero(np.isnan(arr))
    if bad.size:
        raise ReliabilityError(
            f"{name} has {bad.size} missing (NaN/None) value(s), first at index {int(bad[0])}: drop those items (a "
            "labelled item needs both its human label and its judge score)")
    return arr


def _lam_arg(lam: Any) -> float | None:
    if lam is None:
        return None
    if isinstance(lam, bool) or not isinstance(lam, (int, float)) or not math.isfinite(lam):
        raise ReliabilityError(f"lam must be a finite number (or None to tune it), got {lam!r}")
    return float(lam)


def _inputs(judge_labeled: Any, human_labeled: Any, judge_unlabeled: Any, what: str = ""
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    p = f"{what}: " if what else ""
    f = _vector(judge_labeled, f"{p}judge_labeled")
    y = _vector(human_labeled, f"{p}human_labeled")
    fu = _vector(judge_unlabeled, f"{p}judge_unlabeled")
    if f.size != y.size:
        raise ReliabilityError(f"{p}judge_labeled has {f.size} scores but human_labeled has {y.size} labels: "
                               "they must describe the same items, in the same order")
    if y.size < MIN_LABELED:
        raise ReliabilityError(f"{p}too few human labels: {y.size}; a prediction-powered interval needs at least "
                               f"{MIN_LABELED} labelled items (and is only trustworthy with a few dozen)")
    if fu.size < MIN_UNLABELED:
        raise ReliabilityError(f"{p}too few unlabelled judge scores: {fu.size}; at least {MIN_UNLABELED} are needed "
                               "(with none, use the human-only mean)")
    return f, y, fu


def _t(confidence: float, df: int) -> float:
    """The two-sided quantile of Student's t with ``df`` (n - 1) degrees of freedom, not the normal
    one: identical for many labels, a little wider for few, and at lambda = 0 exactly the
    classical t interval of the human mean (:attr:`PPIMean.classical`)."""
    from scipy import stats

    return float(stats.t.ppf(0.5 + confidence / 2, df))


def _classical(y: np.ndarray, confidence: float) -> HumanMean:
    n = y.size
    se = float(y.std(ddof=1)) / math.sqrt(n)
    half = _t(confidence, n - 1) * se
    m = float(y.mean())
    return HumanMean(m, m - half, m + half, se, n, confidence)


def _cov(a: np.ndarray, b: np.ndarray) -> float:
    """Unbiased (ddof = 1) covariance, as every variance of this module."""
    return float(((a - a.mean()) * (b - b.mean())).sum() / (a.size - 1))


# ---------------------------------------------------------------------- one system
def ppi_mean(judge_labeled: Any, human_labeled: Any, judge_unlabeled: Any, *, confidence: float = 0.95,
             tuned: bool = True, lam: float | None = None) -> PPIMean:
    """PPI++ estimate of the mean human label over all items, with its interval.

    ``judge_labeled[i]`` and ``human_labeled[i]`` are the judge's score and the human label of
    labelled item i; ``judge_unlabeled`` the judge's scores on the other items (judge and humans
    may use different scales: the estimate is on the human scale).  Each may also be items x
    raters or repeats (or a ``Ratings``), averaged per item.  ``tuned`` estimates lambda
    (PPI++); ``tuned=False`` uses lambda = 1 (classic PPI); ``lam`` fixes lambda (0 gives the
    human-only mean).  Raises :class:`~pytest_judgerel.errors.ReliabilityError` for NaN or too few
    items, a constant judge when tuning, and a zero-width interval.
    """
    conf = check_confidence(confidence)
    fixed = _lam_arg(lam)
    f, y, fu = _inputs(judge_labeled, human_labeled, judge_unlabeled)
    return _estimate(f, y, fu, conf, tuned, fixed)


def _estimate(f: np.ndarray, y: np.ndarray, fu: np.ndarray, conf: float, tuned: bool, fixed: float | None
              ) -> PPIMean:
    """:func:`ppi_mean` on checked vectors.  lambda-hat is not clipped to [0, 1] (the ``ppi_py``
    reference code clips): a judge on another scale than the humans (0-10 against 1-5) needs
    lambda far from 1, and a negative lambda is as valid as a positive one."""
    n, N = y.size, fu.size
    if fixed is not None:
        lam, is_tuned = fixed, False
    elif tuned:
        pooled = np.concatenate([f, fu])
        var_f = float(pooled.var(ddof=1))
        if var_f <= 1e-12 * max(1.0, float(np.abs(pooled).max())) ** 2:
            raise ReliabilityError(
                f"the judge gives every item the same score ({pooled[0]:g}): it carries no information about "
                "the human labels and the tuning weight Cov(Y, f) / ((1 + n/N) Var(f)) is undefined; use the "
                "human-only mean (lam=0)")
        lam, is_tuned = _cov(y, f) / ((1 + n / N) * var_f), True
    else:
        lam, is_tuned = 1.0, False
    resid = y - lam * f
    value = float(resid.mean() + lam * fu.mean())
    var = float(resid.var(ddof=1)) / n + lam * lam * float(fu.var(ddof=1)) / N
    se = math.sqrt(max(var, 0.0))
    classical = _classical(y, conf)
    if not se > 1e-12 * max(1.0, abs(value)):
        why = (f"every human label is {y[0]:g}" if np.ptp(y) == 0 else
               "the labelled residuals Y - lambda f and the judge's unlabelled scores do not vary")
        raise ReliabilityError(f"the interval has zero width ({why}): no honest interval can be given from "
                               f"{n} labels; label more items")
    half = _t(conf, n - 1) * se
    var_y = float(y.var(ddof=1))
    return PPIMean(value, value - half, value + half, se, conf, float(lam), is_tuned, n, N,
                   var_y / var if var > 0 else math.nan, classical,
                   float(np.concatenate([f, fu]).mean()), float((f - y).mean()))


# ---------------------------------------------------------------------- per group
def ppi_mean_by(judge_labeled: Any, human_labeled: Any, judge_unlabeled: Any, groups_labeled: Sequence[Any],
                groups_unlabeled: Sequence[Any], *, confidence: float = 0.95, tuned: bool = True,
                lam: float | None = None) -> dict[str, PPIMean]:
    """:func:`ppi_mean` per group (benchmark, model, ...): ``{group: PPIMean}`` in sorted order.

    ``groups_labeled[i]`` names the group of labelled item i, ``groups_unlabeled[j]`` that of
    unlabelled item j.  Each group is estimated (and tuned) on its own items; a group with too
    few labels or unlabelled items raises, naming the group.
    """
    conf = check_confidence(confidence)
    fixed = _lam_arg(lam)
    f = _vector(judge_labeled, "judge_labeled")
    y = _vector(human_labeled, "human_labeled")
    fu = _vector(judge_unlabeled, "judge_unlabeled")
    gl = [str(g) for g in groups_labeled]
    gu = [str(g) for g in groups_unlabeled]
    if len(gl) != y.size or f.size != y.size:
        raise ReliabilityError(f"judge_labeled ({f.size}), human_labeled ({y.size}) and groups_labeled ({len(gl)}) "
                               "must have one entry per labelled item")
    if len(gu) != fu.size:
        raise ReliabilityError(f"judge_unlabeled has {fu.size} scores but groups_unlabeled {len(gu)} entries")
    only_u = sorted(set(gu) - set(gl))
    if only_u:
        raise ReliabilityError(f"group(s) {only_u} have unlabelled items but no human label: their human-scale "
                               "mean cannot be estimated")
    out: dict[str, PPIMean] = {}
    al, au = np.asarray(gl), np.asarray(gu)
    for g in sorted(set(gl)):
        fl, yl, fug = _inputs(f[al == g], y[al == g], fu[au == g], what=f"group {g!r}")
        out[g] = _estimate(fl, yl, fug, conf, tuned, fixed)
    return out


# ---------------------------------------------------------------------- two systems
def _system(data: Any, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if isinstance(data, Mapping):
        try:
            parts = (data["judge_labeled"], data["human_labeled"], data["judge_unlabeled"])
        except KeyError as exc:
            raise ReliabilityError(f"system {name} needs judge_labeled, human_labeled and judge_unlabeled; "
                                   f"{exc.args[0]!r} is missing") from None
    else:
        try:
            parts = tuple(data)
        except TypeError:
            raise ReliabilityError(f"system {name} must be (judge_labeled, human_labeled, judge_unlabeled), got "
                                   f"{type(data).__name__}") from None
        if len(parts) != 3:
            raise ReliabilityError(f"system {name} must be (judge_labeled, human_labeled, judge_unlabeled), got "
                                   f"{len(parts)} parts")
    return _inputs(*parts, what=f"system {name}")


def ppi_mean_difference(a: Any, b: Any, *, paired: bool = True, paired_unlabeled: bool | None = None,
                        confidence: float = 0.95, tuned: bool = True,
                        lam: tuple[float, float] | None = None) -> PPIDifference:
    """PPI++ estimate of ``theta_a - theta_b``: system a's human-scale mean minus system b's.

    ``a`` and ``b`` are ``(judge_labeled, human_labeled, judge_unlabeled)`` (or mappings with those
    keys).  ``paired``: the labelled items are the same for both systems, in the same order (e.g.
    the old and the new prompt answered the same inputs, and humans labelled both answers);
    ``paired_unlabeled`` (default: ``paired``): the unlabelled items are shared too.  Pairing
    brings the covariance of the two systems into the variance, which usually narrows the
    interval a lot.  ``tuned=False`` uses lambda = (1, 1); ``lam`` fixes (lambda_a, lambda_b).
    """
    conf = check_confidence(confidence)
    pu = paired if paired_unlabeled is None else bool(paired_unlabeled)
    fa, ya, fua = _system(a, "a")
    fb, yb, fub = _system(b, "b")
    if paired and fa.size != fb.size:
        raise ReliabilityError(f"paired=True but system a has {fa.size} labelled items and system b {fb.size}: "
                               "paired labels must be the same items in the same order (or pass paired=False)")
    if pu and fua.size != fub.size:
        raise ReliabilityError(f"paired unlabelled items but system a has {fua.size} and system b {fub.size}: "
                               "pass paired_unlabeled=False when the unlabelled items differ")
    if lam is not None:
        try:
            la, lb = (_lam_arg(v) for v in lam)
        except (TypeError, ValueError):
            raise ReliabilityError(f"lam must be a pair (lambda_a, lambda_b), got {lam!r}") from None
        is_tuned = False
    elif tuned:
        la, lb = _tune_pair(fa, ya, fua, fb, yb, fub, paired, pu)
        is_tuned = True
    else:
        la, lb, is_tuned = 1.0, 1.0, False
    ra, rb = ya - la * fa, yb - lb * fb
    ga, gb = la * fua, lb * fub
    value = float(ra.mean() + ga.mean() - rb.mean() - gb.mean())
    if paired:
        var_l = float((ra - rb).var(ddof=1)) / ra.size
    else:
        var_l = float(ra.var(ddof=1)) / ra.size + float(rb.var(ddof=1)) / rb.size
    if pu:
        var_u = float((ga - gb).var(ddof=1)) / ga.size
    else:
        var_u = float(ga.var(ddof=1)) / ga.size + float(gb.var(ddof=1)) / gb.size
    var = var_l + var_u
    se = math.sqrt(max(var, 0.0))
    if not se > 1e-12 * max(1.0, abs(value)):
        raise ReliabilityError("the interval of the difference has zero width: the labelled residuals and the "
                               "judge's unlabelled scores do not vary between items; label more items")
    df = (ra.size - 1) if paired else min(ra.size, rb.size) - 1
    half = _t(conf, df) * se
    sys_a = _estimate(fa, ya, fua, conf, False, la)
    sys_b = _estimate(fb, yb, fub, conf, False, lb)
    if paired:
        d = ya - yb
        classical = _classical(d, conf)
        var_h = float(d.var(ddof=1))
        eff = var_h / var
    else:
        se_h = math.sqrt(float(ya.var(ddof=1)) / ya.size + float(yb.var(ddof=1)) / yb.size)
        m = float(ya.mean() - yb.mean())
        h = _t(conf, min(ya.size, yb.size) - 1) * se_h
        classical = HumanMean(m, m - h, m + h, se_h, min(ya.size, yb.size), conf)
        eff = (float(ya.var(ddof=1)) + float(yb.var(ddof=1))) / var
    return PPIDifference(value, value - half, value + half, se, conf, (float(la or 0.0), float(lb or 0.0)), is_tuned,
                         bool(paired), pu, sys_a, sys_b, classical, float(eff))


def _tune_pair(fa: np.ndarray, ya: np.ndarray, fua: np.ndarray, fb: np.ndarray, yb: np.ndarray, fub: np.ndarray,
               paired: bool, pu: bool) -> tuple[float, float]:
    """(lambda_a, lambda_b) minimising the variance of theta_a - theta_b.

    The variance is ``lambda' A lambda - 2 b' lambda + const`` with the sign of system b folded in
    (its judge enters the difference negatively); judge-score variances use every score of that
    system, covariances between the systems the items they share.  With the same items labelled
    for both systems (``paired``) the rectifier is the per-item difference ``(Y_a - lambda_a f_a)
    - (Y_b - lambda_b f_b)``; likewise for shared unlabelled items (``pu``).  The solution of ``A
    lambda = b`` is the minimum-norm one when A is singular.
    """
    na, nb, Na, Nb = ya.size, yb.size, fua.size, fub.size
    va = float(np.concatenate([fa, fua]).var(ddof=1))
    vb = float(np.concatenate([fb, fub]).var(ddof=1))
    for v, name, pool in ((va, "a", fa), (vb, "b", fb)):
        if v <= 1e-12 * max(1.0, float(np.abs(pool).max())) ** 2:
            raise ReliabilityError(f"the judge gives every item of system {name} the same score: the tuning "
                                   "weights are undefined; pass lam=(0, 0) for the human-only difference")
    shared = []
    if paired:
        shared.append((fa, fb))
    if pu:
        shared.append((fua, fub))
    c_ab = _cov(np.concatenate([s[0] for s in shared]), np.concatenate([s[1] for s in shared])) if shared else 0.0
    A = np.zeros((2, 2))
    bvec = np.zeros(2)
    # labelled part
    if paired:
        d = ya - yb
        A += np.array([[va, -c_ab], [-c_ab, vb]]) / na
        bvec += np.array([_cov(d, fa), -_cov(d, fb)]) / na
    else:
        A += np.diag([va / na, vb / nb])
        bvec += np.array([_cov(ya, fa) / na, _cov(yb, fb) / nb])
    # unlabelled part
    if pu:
        A += np.array([[va, -c_ab], [-c_ab, vb]]) / Na
    else:
        A += np.diag([va / Na, vb / Nb])
    # A is singular when the judge scores both systems alike on every shared item (f_a = f_b + c):
    # then only lambda_a - lambda_b matters and the minimum-norm solution is one of the optima
    sol = np.linalg.pinv(A) @ bvec
    return float(sol[0]), float(sol[1])


# ---------------------------------------------------------------------- resamples
def ppi_mean_resamples(judge_labeled: Any, human_labeled: Any, judge_unlabeled: Any, *, n_boot: int = 1000,
                       seed: int | None = 0, confidence: float = 0.95, tuned: bool = True,
                       lam: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`ppi_mean` on ``n_boot`` bootstrap resamples (labelled and unlabelled items resampled
    separately, with replacement), vectorised: ``(values, ci_lows, ci_highs)``, NaN where a
    resample has no defined estimate (a constant judge when tuning, zero variance).  For the
    verdict stability (``p_pass``) of a gate on the estimate."""
    conf = check_confidence(confidence)
    fixed = _lam_arg(lam)
    f, y, fu = _inputs(judge_labeled, human_labeled, judge_unlabeled)
    n, N = y.size, fu.size
    rng = np.random.default_rng(seed)
    il = rng.integers(0, n, size=(n_boot, n))
    iu = rng.integers(0, N, size=(n_boot, N))
    return _estimates_by_row(f[il], y[il], fu[iu], conf, tuned, fixed)


def _estimates_by_row(fl: np.ndarray, yl: np.ndarray, fuu: np.ndarray, conf: float, tuned: bool,
                      fixed: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`ppi_mean` on every row of the stacks (labelled judge scores ``fl`` and labels ``yl``:
    (b, n) or (1, n) for the same labelled items in every row; unlabelled scores ``fuu``: (b, N)),
    vectorised: ``(values, ci_lows, ci_highs)``, NaN where :func:`ppi_mean` would raise (a constant
    judge when tuning, a zero-width interval; the same tolerances as :func:`_estimate`)."""
    b = fuu.shape[0]
    fl, yl = np.broadcast_to(fl, (b, fl.shape[-1])), np.broadcast_to(yl, (b, yl.shape[-1]))
    n, N = yl.shape[1], fuu.shape[1]
    with np.errstate(all="ignore"):
        undefined = np.zeros(b, dtype=bool)
        if fixed is not None:
            lam_b = np.full(b, fixed)
        elif tuned:
            pooled = np.concatenate([fl, fuu], axis=1)
            var_f = pooled.var(axis=1, ddof=1)
            undefined = var_f <= 1e-12 * np.maximum(1.0, np.abs(pooled).max(axis=1)) ** 2
            cov = ((yl - yl.mean(axis=1, keepdims=True)) * (fl - fl.mean(axis=1, keepdims=True))).sum(axis=1) / (n - 1)
            lam_b = np.where(undefined, np.nan, cov / ((1 + n / N) * var_f))
        else:
            lam_b = np.ones(b)
        resid = yl - lam_b[:, None] * fl
        values = resid.mean(axis=1) + lam_b * fuu.mean(axis=1)
        var = resid.var(axis=1, ddof=1) / n + lam_b ** 2 * fuu.var(axis=1, ddof=1) / N
        se = np.sqrt(np.maximum(var, 0.0))
        half = _t(conf, n - 1) * se
        bad = undefined | ~(se > 1e-12 * np.maximum(1.0, np.abs(values))) | ~np.isfinite(values)
    values = np.where(bad, np.nan, values)
    return values, np.where(bad, np.nan, values - half), np.where(bad, np.nan, values + half)
