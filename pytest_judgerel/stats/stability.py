"""Verdict stability: the probability that the same gate passes again.

A gate compares a statistic with a threshold.  Two numbers:

* the **bootstrap share** (``predictive=False``): the share of B bootstrap resamples on which the
  gate passes (Efron & Tibshirani 1993, ch. 6: the bootstrap distribution of a statistic stands
  in for its sampling distribution).  It describes how sure this run is of its own statistic,
  and is *not* the probability that a rerun passes: a rerun brings its own sampling noise, so
  the difference between its statistic and this one has about twice the variance of either.
  Read as a rerun probability the share is over-confident (a mean gate with share 0.95 passes
  a rerun on new items about 88% of the time).
* the **predictive probability** (``predictive=True``, what the gates record): every replicate
  is resampled twice by the same scheme -- once for what the data could have been, once for the
  rerun drawn from it -- and ``p_pass`` is the share of such reruns that pass.  For a statistic
  with normal sampling error ``se`` this is ``Phi((observed - threshold) / (sqrt(2) se))``, the
  probability that a replication lands on the same side of the threshold under a flat prior on
  the true value (Killeen 2005, Psychological Science 16, 345-353); the resampling form keeps
  the statistic's skew and works for any gate, also one of several thresholds.  Repeats are
  then drawn from the deviations of all items pooled (the residual bootstrap of the one-way
  model, whose items share one within-item variance; Davison & Hinkley 1997, section 3.8): drawn
  from an item's own 3 repeats they overstate the ICC's sampling variance by about a fifth at
  each stage, which left p_pass under-confident.  It is calibrated when
  the true values of the gates it is applied to are spread over a range wider than ``se``
  around the threshold; when every truth sits on the threshold no number computed from the data
  can be (each rerun is a coin flip).  ``benchmarks/bench_calibration.py`` checks it.

**Recentring** (``recentre=True``, what the ICC gates over repeats use): each bootstrap stage
adds the bootstrap's bias of the statistic, so the two-stage draws sit about two biases away
from the observed value, while a rerun and this run share the same bias (their difference has
mean 0).  The predictive draws are therefore shifted so that their median is the observed
value, ``T2 - (median(T2) - T)`` (a median-unbiased predictive distribution; Efron &
Tibshirani 1993, section 10.6, on bias correction by the bootstrap estimate of bias).  It
needs a continuous statistic (not a 0/1 verdict).  Measured (``bench_calibration.py``, issue
31 settings): ICC(A,1) >= 0.75 on 40 items x 4 repeats, true ICC uniform 0.6-0.9, the same-items
p_pass is within 0.08 per decile; ``p_pass_new_items`` still missed it (0.108; recentring
over-corrects it in the middle, unrecentred it erred the other way).

**Rough** (``rough``, ``rough_reason``): below a minimum design the predictive probability
over repeats is off by more than 0.08 in some decile even recentred, and the result says so:
fewer than ``MIN_ITEMS_OVER_REPEATS`` (40) items when repeats are resampled (20 items x 3
repeats: worst decile gaps 0.12-0.14), and, for a rerun on new items, ratings on 5 or fewer
levels (1-5 ratings with floor and ceiling, 40 x 4: 0.10).  The number is still the best
estimate; read it as a rough one.

A statistic far from its threshold gives p_pass near 0 or 1; one sitting on it gives about 0.5,
and the verdict is then a coin flip.

Resampling schemes (``resample``):

* ``"items"`` -- rows (items) with replacement, the same rows in every matrix of ``data``
  (paired); the repeat columns stay as observed.  New items, same judge samples.
* ``"repeats"`` -- items fixed; within each item, new repeats are drawn with replacement from
  its observed repeats.  Same items, new judge samples (what a cache refresh does).  Drawn as
  they are, k values with replacement keep on average only (k - 1)/k of the within-item
  variance, and redrawn values around the observed item means add their noise a second time
  to the spread of the means; both would overstate agreement.  So the values are drawn around
  shrunken item means ``g + c (m_i - g)`` with ``c = sqrt(max(0, 1 - MSW/MSR))`` and their
  deviations scaled by ``sqrt(k / (k - 1))``: the adjusted two-stage bootstrap of Davison &
  Hinkley (1997, section 3.8), which makes the resampled between- and within-item mean squares
  match the observed ones in expectation.
* ``"items+repeats"`` -- both stages (Davison & Hinkley 1997, section 3.8, two-stage sampling).

Which rerun the predictive probability predicts follows from the scheme: ``"repeats"`` a rerun
on the same items with new judge samples (a cache refresh in CI), ``"items"`` and
``"items+repeats"`` a rerun on new items (with new judge samples for the latter).

The generator is ``numpy.random.default_rng(seed)``: the same data and seed give the same
p_pass.  A resample on which the statistic is undefined (NaN, or the statistic raises
:class:`~pytest_judgerel.errors.ReliabilityError`) counts as not passing and is reported in
``n_undefined``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import ReliabilityError

__all__ = ["VerdictStability", "verdict_stability", "UNSTABLE_BAND", "MIN_ITEMS_OVER_REPEATS"]

UNSTABLE_BAND = (0.05, 0.95)
"""A verdict with p_pass strictly inside this band is marked unstable."""

MIN_ITEMS_OVER_REPEATS = 40
"""Below this many items a predictive p_pass over repeats is marked ``rough`` (module docstring)."""

_RESAMPLE = ("items", "repeats", "items+repeats")
_MAX_BLOCK_CELLS = 4_000_000  # values per vectorised block (32 MB of float64)


@dataclass(frozen=True)
class VerdictStability:
    """Bootstrap probability that a gate passes again.

    ``observed`` is the statistic on the data as given and ``passed`` the gate's verdict on it;
    ``p_pass`` the share of ``n_boot`` resamples (``resample`` scheme, ``seed``) that pass;
    ``n_undefined`` resamples had no defined statistic (counted as not passing).
    """

    p_pass: float
    observed: float
    passed: bool
    threshold: float
    direction: str
    n_boot: int
    seed: int | None
    resample: str
    n_undefined: int = 0
    statistic: str = ""
    predictive: bool = False
    recentred: bool = False
    rough_reason: str = ""

    @property
    def rough(self) -> bool:
        """True below the minimum design where p_pass was measured calibrated (``rough_reason``)."""
        return bool(self.rough_reason)

    @property
    def unstable(self) -> bool:
        """True when 0.05 < p_pass < 0.95: a rerun may well give the other verdict."""
        return UNSTABLE_BAND[0] < self.p_pass < UNSTABLE_BAND[1]

    @property
    def mc_error(self) -> float:
        """Monte Carlo standard error of p_pass: sqrt(p (1 - p) / n_boot)."""
        return math.sqrt(self.p_pass * (1 - self.p_pass) / self.n_boot)

    def to_dict(self) -> dict[str, Any]:
        return {"p_pass": self.p_pass, "unstable": self.unstable, "observed": self.observed, "passed": self.passed,
                "threshold": self.threshold, "direction": self.direction, "n_boot": self.n_boot, "seed": self.seed,
                "resample": self.resample, "n_undefined": self.n_undefined, "statistic": self.statistic,
                "predictive": self.predictive, "recentred": self.recentred, "rough": self.rough,
                "rough_reason": self.rough_reason}

    def __str__(self) -> str:
        flag = (" (unstable)" if self.unstable else "") + (" (rough)" if self.rough else "")
        side = ">=" if self.direction == "min" else "<="
        kind = "predictive " if self.predictive else ""
        return (f"p_pass = {self.p_pass:.3f}{flag}: {self.statistic or 'statistic'} {side} {self.threshold:g} on "
                f"{self.n_boot} {kind}{self.resample} resamples (seed {self.seed}); observed {self.observed:.4g} "
                f"{'passes' if self.passed else 'fails'}")


def verdict_stability(
    statistic: Callable[..., Any],
    data: Any,
    threshold: float,
    direction: str = "min",
    *,
    resample: str = "items",
    n_boot: int = 1000,
    seed: int | None = 0,
    vectorized: bool | None = None,
    nan_policy: str = "raise",
    repeats_in: Sequence[int] | None = None,
    predictive: bool = False,
    recentre: bool = False,
) -> VerdictStability:
    """p_pass of the gate ``statistic(data) >= threshold`` (``direction="min"``) or ``<=`` (``"max"``).

    ``data``: an items x repeats matrix (or an object with ``to_matrix()``), or a *tuple* of
    such matrices with the same items (resampled together; ``statistic`` then receives them
    as separate arguments, e.g. judge and human ratings; a 1-D entry is one column).  ``statistic`` maps the matrices
    to a number; when ``vectorized`` (default: its ``vectorized`` attribute, as on
    :func:`~pytest_judgerel.stats.icc_batch.icc_statistic`) it receives stacks of shape
    ``(B, n, k)`` and returns B numbers.  ``nan_policy="omit"`` drops items with a missing
    rating first (as ``stats.icc`` does); ``"raise"`` refuses them for vectorized statistics
    and passes them through otherwise.  See the module docstring for ``resample``;
    ``repeats_in`` lists the matrices whose columns are repeats (default: every matrix with
    more than one column; e.g. ``(0,)`` keeps a human panel's raters as observed).
    ``predictive=True`` gives the predictive probability that a rerun of the kind ``resample``
    describes passes (two-stage resampling; module docstring) instead of the bootstrap share.
    ``recentre=True`` (with ``predictive``; a continuous statistic) shifts the predictive draws
    so that their median is the observed value (module docstring).
    """
    if direction not in ("min", "max"):
        raise ReliabilityError(f"direction must be 'min' (statistic >= threshold passes) or 'max', got {direction!r}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not math.isfinite(threshold):
        raise ReliabilityError(f"threshold must be a finite number, got {threshold!r}")
    if resample not in _RESAMPLE:
        raise ReliabilityError(f"resample must be one of {_RESAMPLE}, got {resample!r}")
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 1:
        raise ReliabilityError(f"n_boot must be a positive integer, got {n_boot!r}")
    if nan_policy not in ("raise", "omit"):
        raise ReliabilityError(f"nan_policy must be 'raise' or 'omit', got {nan_policy!r}")
    if recentre and not predictive:
        raise ReliabilityError("recentre=True recentres the predictive draws: it needs predictive=True")
    if not callable(statistic):
        raise ReliabilityError(f"statistic must be callable, got {type(statistic).__name__}")
    vec = bool(getattr(statistic, "vectorized", False)) if vectorized is None else bool(vectorized)
    mats = _matrices(data, nan_policy, vec)

    def passes(values: np.ndarray) -> np.ndarray:
        ok = values >= threshold if direction == "min" else values <= threshold
        return ok & np.isfinite(values)

    observed = _scalar(statistic, mats)
    if not math.isfinite(observed):
        raise ReliabilityError(f"the statistic is undefined on the data itself ({observed!r}): there is no verdict to resample")
    rng = np.random.default_rng(seed)
    n_items = mats[0].shape[0]
    chosen = range(len(mats)) if repeats_in is None else repeats_in
    parts = [_repeat_parts(m) if resample != "items" and j in chosen and m.shape[1] > 1 else None
             for j, m in enumerate(mats)]
    n_pass = n_undefined = 0
    done = 0
    kept: list[np.ndarray] = []
    cells = sum(m.shape[0] * m.shape[1] for m in mats)
    block = max(1, min(n_boot, _MAX_BLOCK_CELLS // max(cells, 1))) if vec else n_boot
    while done < n_boot:
        b = min(block, n_boot - done)
        stacks = _resample(mats, parts, rng, b, n_items, resample, pooled=predictive)
        if predictive:
            stacks = _resample_stacks(stacks, [p is not None for p in parts], rng, resample)
        if vec:
            values = np.asarray(statistic(*stacks), dtype=float).reshape(b)
        else:
            values = np.array([_scalar(statistic, [s[i] for s in stacks]) for i in range(b)], dtype=float)
        if recentre:
            kept.append(values)
        else:
            n_pass += int(passes(values).sum())
        n_undefined += int((~np.isfinite(values)).sum())
        done += b
    if recentre:
        values = np.concatenate(kept)
        finite = values[np.isfinite(values)]
        shift = float(np.median(finite)) - observed if finite.size else 0.0
        n_pass = int(passes(values - shift).sum())
    rough = ""
    repeated = [m for m, p in zip(mats, parts) if p is not None]
    if predictive and repeated and n_items < MIN_ITEMS_OVER_REPEATS:
        rough = (f"{n_items} items (< {MIN_ITEMS_OVER_REPEATS}) with resampled repeats: p_pass was off its rerun "
                 "pass rate by up to 0.14 in a decile at 20 items x 3 repeats (benchmarks/bench_calibration.py)")
    elif predictive and resample == "items+repeats" and all(np.unique(m).size <= 5 for m in repeated):
        rough = ("ratings on 5 or fewer levels with items and repeats resampled: p_pass_new_items was off its rerun "
                 "pass rate by up to 0.10 in a decile at 40 items x 4 repeats (benchmarks/bench_calibration.py)")
    name = getattr(statistic, "name", None) or getattr(statistic, "__name__", "")
    return VerdictStability(
        p_pass=n_pass / n_boot, observed=observed, passed=bool(passes(np.array([observed]))[0]),
        threshold=float(threshold), direction=direction, n_boot=n_boot, seed=seed, resample=resample,
        n_undefined=n_undefined, statistic=str(name) if name != "<lambda>" else "", predictive=bool(predictive),
        recentred=bool(recentre), rough_reason=rough,
    )


def _matrices(data: Any, nan_policy: str, vectorized: bool) -> list[np.ndarray]:
    parts: Sequence[Any] = list(data) if isinstance(data, tuple) else [data]
    if not parts:
        raise ReliabilityError("data is an empty tuple: pass a matrix or a tuple of matrices")
    mats = []
    for p in parts:
        try:
            m = np.array(p.to_matrix() if hasattr(p, "to_matrix") else p, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ReliabilityError(f"data must be numeric items x repeats matrices: {exc}") from None
        if m.ndim == 1:
            m = m[:, None]
        if m.ndim != 2:
            raise ReliabilityError(f"every matrix must be items x repeats (2-D), got shape {m.shape}")
        mats.append(m)
    sizes = {m.shape[0] for m in mats}
    if len(sizes) != 1:
        raise ReliabilityError(f"matrices resampled together need the same items, got {sorted(sizes)} rows")
    missing = np.zeros(mats[0].shape[0], dtype=bool)
    for m in mats:
        missing |= np.isnan(m).any(axis=1)
    if missing.any():
        if nan_policy == "omit":
            mats = [m[~missing] for m in mats]
        elif vectorized:
            raise ReliabilityError(f"{int(missing.sum())} item(s) have missing ratings; pass nan_policy='omit'")
    if mats[0].shape[0] < 2:
        raise ReliabilityError(f"resampling needs at least 2 items, got {mats[0].shape[0]}")
    return mats


def _scalar(statistic: Callable[..., Any], mats: Sequence[np.ndarray]) -> float:
    try:
        value = statistic(*mats)
    except ReliabilityError:
        return math.nan
    value = getattr(value, "value", value)  # a result object (e.g. ICCResult) counts by its value
    return float(np.asarray(value, dtype=float).reshape(()))


def _resample(mats: Sequence[np.ndarray], parts: Sequence[tuple[np.ndarray, np.ndarray] | None],
              rng: np.random.Generator, b: int, n: int, scheme: str, pooled: bool = False) -> list[np.ndarray]:
    rows = rng.integers(0, n, size=(b, n)) if scheme != "repeats" else np.broadcast_to(np.arange(n), (b, n))
    out = []
    for m, part in zip(mats, parts):
        if part is None:
            out.append(m[rows])  # (b, n, k)
            continue
        centre, dev = part
        out.append(centre[rows][..., None] + _draw_deviations(dev[rows], rng, pooled))
    return out


def _draw_deviations(dev: np.ndarray, rng: np.random.Generator, pooled: bool) -> np.ndarray:
    """k new deviations per item of a stack (B, n, k): drawn with replacement from the item's own
    deviations, or (``pooled``) from every item's of the same replicate (the residual bootstrap of
    the one-way model, whose items share one within-item variance)."""
    b, n, k = dev.shape
    if not pooled:
        return np.take_along_axis(dev, rng.integers(0, k, size=(b, n, k)), axis=2)
    flat = dev.reshape(b, n * k)
    return np.take_along_axis(flat, rng.integers(0, n * k, size=(b, n * k)), axis=1).reshape(b, n, k)


def _resample_stacks(stacks: Sequence[np.ndarray], repeated: Sequence[bool], rng: np.random.Generator,
                     scheme: str) -> list[np.ndarray]:
    """One more resample of every replicate in ``stacks`` (each (B, n, k)), by the same scheme:
    the second stage of the predictive bootstrap (module docstring)."""
    b, n = stacks[0].shape[:2]
    rows = rng.integers(0, n, size=(b, n)) if scheme != "repeats" else None
    out = []
    for stack, rep in zip(stacks, repeated):
        picked = stack if rows is None else np.take_along_axis(stack, rows[:, :, None], axis=1)
        if not rep:
            out.append(picked)
            continue
        centre, dev = _repeat_parts_stack(picked)
        out.append(centre[..., None] + _draw_deviations(dev, rng, pooled=True))
    return out


def _repeat_parts_stack(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_repeat_parts` of every matrix of a stack (B, n, k) at once."""
    _, n, k = x.shape
    means = x.mean(axis=2)
    grand = means.mean(axis=1, keepdims=True)
    dev = x - means[..., None]
    msr = k * ((means - grand) ** 2).sum(axis=1) / (n - 1)
    msw = (dev ** 2).sum(axis=(1, 2)) / (n * (k - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        shrink = np.where(msr > 0, np.sqrt(np.maximum(0.0, 1 - msw / np.where(msr > 0, msr, 1.0))), 0.0)
    return grand + shrink[:, None] * (means - grand), dev * math.sqrt(k / (k - 1))


def _repeat_parts(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Shrunken item means and inflated within-item deviations of one items x repeats matrix
    (Davison & Hinkley 1997, section 3.8): resampled repeats then reproduce MSR and MSW."""
    n, k = m.shape
    if np.isnan(m).any():
        raise ReliabilityError("resampling repeats needs complete rows: pass nan_policy='omit'")
    means = m.mean(axis=1)
    grand = means.mean()
    dev = m - means[:, None]
    msr = k * float(((means - grand) ** 2).sum()) / (n - 1)
    msw = float((dev ** 2).sum()) / (n * (k - 1))
    shrink = math.sqrt(max(0.0, 1 - msw / msr)) if msr > 0 else 0.0
    return grand + shrink * (means - grand), dev * math.sqrt(k / (k - 1))
