"""Verdict stability: the probability that the same gate passes again.

A gate compares a statistic with a threshold.  Two numbers (``docs/concepts.md``, "Verdict
stability: p_pass", reads them in full):

* the **bootstrap share** (``predictive=False``): the share of B bootstrap resamples on which the
  gate passes (Efron & Tibshirani 1993, ch. 6).  It says how sure this run is of its own
  statistic; read as the probability that a rerun passes it is over-confident, since a rerun
  brings its own sampling noise.
* the **predictive probability** (``predictive=True``, what the gates record): every replicate
  is resampled twice by the same scheme (what the data could have been, then a rerun drawn from
  it) and ``p_pass`` is the share of such reruns that pass; for normal sampling error ``se`` it
  is ``Phi((observed - threshold) / (sqrt(2) se))`` (Killeen 2005, *Psychological Science* 16,
  345-353).  ``recentre=True`` moves the draws' median to the observed value (Efron & Tibshirani
  1993, section 10.6); ``model="one-way"`` (the ICC gates over repeats) draws the rerun from the
  one-way random-effects model instead (:func:`_one_way_share`; Box & Tiao 1973).

``resample``: ``"items"`` (rows, the same in every matrix; a rerun on new items), ``"repeats"``
(new repeats within each item, :func:`_repeat_parts`; a rerun on the same items) or
``"items+repeats"`` (both; Davison & Hinkley 1997, section 3.8).  ``rough_reason`` names a design
below the line where ``p_pass`` was measured calibrated (``benchmarks/bench_calibration.py``).
The generator is ``numpy.random.default_rng(seed)``: the same data and seed give the same
p_pass.  A resample on which the statistic is undefined (NaN, or it raises
:class:`~pytest_judgerel.errors.ReliabilityError`) counts as not passing (``n_undefined``).
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
"""Below this many items a resampled predictive p_pass over repeats is marked ``rough``: the line
where it was measured calibrated (``benchmarks/bench_calibration.py``)."""

MAX_RERUN_SE = 0.055
"""Above this standard error of the ICC at the threshold (:func:`icc_standard_error`) the one-way
predictive p_pass is marked ``rough``.  The line separates larger calibration errors from smaller
ones (``benchmarks/bench_calibration.py`` measures them), not a calibrated number from an
uncalibrated one: above it read p_pass to about +-0.1."""

_RESAMPLE = ("items", "repeats", "items+repeats")
_MODELS = ("bootstrap", "one-way")
_RERUN_OF = {"items": "new-items", "repeats": "same-items", "items+repeats": "new-items"}
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
    model: str = "bootstrap"

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
                "rough_reason": self.rough_reason, "model": self.model}

    def __str__(self) -> str:
        flag = (" (unstable)" if self.unstable else "") + (" (rough)" if self.rough else "")
        side = ">=" if self.direction == "min" else "<="
        kind = "predictive " if self.predictive else ""
        drawn = (f"{self.n_boot} simulated {_RERUN_OF[self.resample]} reruns (one-way model, " if self.model == "one-way"
                 else f"{self.n_boot} {kind}{self.resample} resamples (")
        return (f"p_pass = {self.p_pass:.3f}{flag}: {self.statistic or 'statistic'} {side} {self.threshold:g} on "
                f"{drawn}seed {self.seed}); observed {self.observed:.4g} "
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
    model: str = "bootstrap",
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
    ``model="one-way"`` (with ``predictive``, one items x repeats matrix, ``resample`` ``"repeats"``
    or ``"items+repeats"``) draws the rerun from the posterior predictive of the one-way
    random-effects model instead of resampling (module docstring); ``n_boot`` is then the number of
    simulated reruns.
    """
    _check_arguments(statistic, threshold, direction, resample, n_boot, nan_policy, predictive, recentre, model)
    vec = bool(getattr(statistic, "vectorized", False)) if vectorized is None else bool(vectorized)
    mats = _matrices(data, nan_policy, vec)

    def passes(values: np.ndarray) -> np.ndarray:
        ok = values >= threshold if direction == "min" else values <= threshold
        return ok & np.isfinite(values)

    observed = _scalar(statistic, mats)
    if not math.isfinite(observed):
        raise ReliabilityError(f"the statistic is undefined on the data itself ({observed!r}): there is no verdict to resample")
    rng = np.random.default_rng(seed)
    common: dict[str, Any] = dict(
        observed=observed, passed=bool(passes(np.array([observed]))[0]), threshold=float(threshold),
        direction=direction, n_boot=n_boot, seed=seed, resample=resample, statistic=_statistic_name(statistic))
    if model == "one-way":
        if len(mats) != 1 or mats[0].shape[1] < 2:
            raise ReliabilityError("model='one-way' needs one items x repeats matrix with 2 or more repeats")
        share, undefined = _one_way_share(statistic, vec, mats[0], passes, rng, n_boot, resample == "repeats")
        return VerdictStability(p_pass=share, n_undefined=undefined, predictive=True,
                                rough_reason=_rough_one_way(mats[0], threshold), model=model, **common)
    chosen = range(len(mats)) if repeats_in is None else repeats_in
    parts = [_repeat_parts(m) if resample != "items" and j in chosen and m.shape[1] > 1 else None
             for j, m in enumerate(mats)]
    values = _resampled_values(statistic, vec, mats, parts, rng, n_boot, resample, predictive)
    n_undefined = int((~np.isfinite(values)).sum())
    shift = 0.0
    if recentre:
        finite = values[np.isfinite(values)]
        shift = float(np.median(finite)) - observed if finite.size else 0.0
    n_pass = int(passes(values - shift).sum())
    return VerdictStability(p_pass=n_pass / n_boot, n_undefined=n_undefined,
                            predictive=bool(predictive), recentred=bool(recentre),
                            rough_reason=_rough_bootstrap(mats, parts, predictive, resample), **common)


def _check_arguments(statistic: Any, threshold: Any, direction: Any, resample: Any, n_boot: Any, nan_policy: Any,
                     predictive: bool, recentre: bool, model: Any) -> None:
    """The arguments of :func:`verdict_stability` that do not depend on the data."""
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
    if model not in _MODELS:
        raise ReliabilityError(f"model must be one of {_MODELS}, got {model!r}")
    if model != "bootstrap" and (not predictive or recentre or resample == "items"):
        raise ReliabilityError("model='one-way' simulates a rerun over repeats: it needs predictive=True, "
                               "resample='repeats' or 'items+repeats', and no recentre")
    if not callable(statistic):
        raise ReliabilityError(f"statistic must be callable, got {type(statistic).__name__}")


def _statistic_name(statistic: Callable[..., Any]) -> str:
    """The name a result shows for ``statistic``: its ``name`` or function name ("" for a lambda)."""
    name = getattr(statistic, "name", None) or getattr(statistic, "__name__", "")
    return str(name) if name != "<lambda>" else ""


def _resampled_values(statistic: Callable[..., Any], vec: bool, mats: Sequence[np.ndarray],
                      parts: Sequence[tuple[np.ndarray, np.ndarray] | None], rng: np.random.Generator, n_boot: int,
                      resample: str, predictive: bool) -> np.ndarray:
    """The statistic on ``n_boot`` resamples (two-stage when ``predictive``), drawn in blocks of at
    most ``_MAX_BLOCK_CELLS`` values when the statistic takes stacks."""
    n_items = mats[0].shape[0]
    cells = sum(m.shape[0] * m.shape[1] for m in mats)
    block = max(1, min(n_boot, _MAX_BLOCK_CELLS // max(cells, 1))) if vec else n_boot
    out: list[np.ndarray] = []
    done = 0
    while done < n_boot:
        b = min(block, n_boot - done)
        stacks = _resample(mats, parts, rng, b, n_items, resample, pooled=predictive)
        if predictive:
            stacks = _resample_stacks(stacks, [p is not None for p in parts], rng, resample)
        if vec:
            out.append(np.asarray(statistic(*stacks), dtype=float).reshape(b))
        else:
            out.append(np.array([_scalar(statistic, [s[i] for s in stacks]) for i in range(b)], dtype=float))
        done += b
    return np.concatenate(out)


def _rough_bootstrap(mats: Sequence[np.ndarray], parts: Sequence[tuple[np.ndarray, np.ndarray] | None],
                     predictive: bool, resample: str) -> str:
    """Why the resampled predictive p_pass of this design is rough ("" where it was measured
    calibrated): fewer than :data:`MIN_ITEMS_OVER_REPEATS` items with resampled repeats, or
    ratings on 5 or fewer levels with items and repeats resampled."""
    n_items = mats[0].shape[0]
    repeated = [m for m, p in zip(mats, parts) if p is not None]
    if predictive and repeated and n_items < MIN_ITEMS_OVER_REPEATS:
        return (f"{n_items} items (< {MIN_ITEMS_OVER_REPEATS}) with resampled repeats: p_pass was off its rerun "
                "pass rate by up to 0.14 in a decile at 20 items x 3 repeats (benchmarks/bench_calibration.py)")
    if predictive and resample == "items+repeats" and all(np.unique(m).size <= 5 for m in repeated):
        return ("ratings on 5 or fewer levels with items and repeats resampled: p_pass_new_items was off its rerun "
                "pass rate by up to 0.10 in a decile at 40 items x 4 repeats (benchmarks/bench_calibration.py)")
    return ""


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
    (the adjusted two-stage bootstrap of Davison & Hinkley 1997, section 3.8).

    Drawn as they are, k values with replacement keep on average only (k - 1)/k of the
    within-item variance, and redrawn values around the observed item means add their noise a
    second time to the spread of the means; both would overstate agreement.  So the values are
    drawn around ``g + c (m_i - g)`` with ``c = sqrt(max(0, 1 - MSW/MSR))`` and the deviations
    are scaled by ``sqrt(k / (k - 1))``: resampled repeats then reproduce MSR and MSW in
    expectation."""
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


def _one_way_share(statistic: Callable[..., Any], vec: bool, x: np.ndarray, passes: Callable[[np.ndarray], np.ndarray],
                   rng: np.random.Generator, n_draws: int, same_items: bool) -> tuple[float, int]:
    """Posterior predictive pass probability of a rerun under the one-way random-effects model
    ``x_ij = mu + a_i + e_ij``, ``a_i ~ N(0, s_a^2)``, ``e_ij ~ N(0, s_e^2)``: what a rerun varies
    (the items' true scores, the judge's noise, the new run's estimation noise) with the
    uncertainty of this run's variance components on top.  Returns (share, undefined reruns).

    Per draw: ``s_e^2 = SSW / chi2(n(k-1))`` and ``s_e^2 + k s_a^2 = SSB / chi2(n-1)`` (the
    posterior under the noninformative prior of Box & Tiao 1973, section 5.2; ``s_a^2`` truncated
    at 0), then an n x k rerun: new items ``a_i ~ N(0, s_a^2)``, or (``same_items``) the same items
    with ``a_i`` from their posterior ``N(g + lam (m_i - g), lam s_e^2 / k)``, ``lam = s_a^2 /
    (s_a^2 + s_e^2 / k)`` (Box & Tiao 1973, section 7.2).  Each draw is weighted by ``(1 - rho)(1
    + (k - 1) rho)``, which turns Box and Tiao's prior into a uniform prior on the ICC ``rho``."""
    n, k = x.shape
    means = x.mean(axis=1)
    grand = float(means.mean())
    ssb = k * float(((means - grand) ** 2).sum())
    ssw = float(((x - means[:, None]) ** 2).sum())
    shares = np.zeros(2)
    undefined = 0
    done = 0
    block = max(1, min(n_draws, _MAX_BLOCK_CELLS // (n * k)))
    while done < n_draws:
        b = min(block, n_draws - done)
        # Box & Tiao (1973, section 5.2): SSW / se2 ~ chi2(n(k-1)), SSB / (se2 + k sa2) ~ chi2(n-1)
        se2 = ssw / rng.chisquare(n * (k - 1), b)
        tau = ssb / rng.chisquare(n - 1, b)
        sa2 = np.maximum(tau - se2, 0.0) / k
        with np.errstate(divide="ignore", invalid="ignore"):
            rho = np.where(sa2 + se2 > 0, sa2 / (sa2 + se2), 0.0)
        weight = (1 - rho) * (1 + (k - 1) * rho)  # from the prior 1/(se2 tau) to a uniform prior on rho
        if same_items:
            with np.errstate(divide="ignore", invalid="ignore"):
                lam = np.where(sa2 > 0, sa2 / (sa2 + se2 / k), 0.0)
            centre = grand + lam[:, None] * (means - grand)[None, :]
            items = centre + np.sqrt(lam * se2 / k)[:, None] * rng.standard_normal((b, n))
        else:
            items = grand + np.sqrt(sa2)[:, None] * rng.standard_normal((b, n))
        sim = items[..., None] + np.sqrt(se2)[:, None, None] * rng.standard_normal((b, n, k))
        if vec:
            values = np.asarray(statistic(sim), dtype=float).reshape(b)
        else:
            values = np.array([_scalar(statistic, [m]) for m in sim], dtype=float)
        shares += (float((weight * passes(values)).sum()), float(weight.sum()))
        undefined += int((~np.isfinite(values)).sum())
        done += b
    return (float(shares[0] / shares[1]) if shares[1] > 0 else 0.0), undefined


def _rough_one_way(x: np.ndarray, threshold: float) -> str:
    """Why the one-way predictive of this design is rough ("" where it was measured calibrated):
    ratings on 5 or fewer levels (the normal model does not see their floor and ceiling), or an ICC
    standard error at the threshold above :data:`MAX_RERUN_SE`."""
    n, k = x.shape
    if np.unique(x).size <= 5:
        return ("ratings on 5 or fewer levels: the normal model misses their floor and ceiling, and p_pass was off "
                "its rerun pass rate by more than 0.08 in a decile at 40 items x 4 repeats "
                "(benchmarks/bench_calibration.py)")
    t = min(max(float(threshold), 0.0), 0.999)
    se = icc_standard_error(t, n, k)
    if se <= MAX_RERUN_SE:
        return ""
    return (f"{n} items x {k} repeats measure an ICC of {t:g} with standard error {se:.3f} (> {MAX_RERUN_SE}): "
            f"p_pass then depends on where the true ICCs lie and was off its rerun pass rate by up to 0.13 in a "
            f"decile; at this threshold {items_for_calibrated_rerun(t, k)} items with {k} repeats are enough "
            "(benchmarks/bench_calibration.py)")


def icc_standard_error(icc: float, n: int, k: int) -> float:
    """Large-sample standard error of a one-way ICC from n items x k repeats (Fisher 1925, section 40):
    ``sqrt(2 (1 - r)^2 (1 + (k - 1) r)^2 / (k (k - 1) (n - 1)))``."""
    return math.sqrt(2 * (1 - icc) ** 2 * (1 + (k - 1) * icc) ** 2 / (k * (k - 1) * (n - 1)))


def items_for_calibrated_rerun(threshold: float, k: int) -> int:
    """Fewest items with k repeats whose :func:`icc_standard_error` at ``threshold`` is at most
    :data:`MAX_RERUN_SE`: from there on the one-way p_pass is not marked rough (continuous ratings)."""
    t = min(max(float(threshold), 0.0), 0.999)
    return 1 + math.ceil(2 * (1 - t) ** 2 * (1 + (k - 1) * t) ** 2 / (k * (k - 1) * MAX_RERUN_SE ** 2) - 1e-9)
