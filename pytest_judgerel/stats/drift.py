"""Silent judge drift: a fixed anchor set re-judged every session, compared with its reference.

A provider can change the model behind a name, or a server can be re-quantised, and every gate
moves.  The anchors are ~30 items that the judge configuration rates; their *reference* scores
are recorded once (``m`` samples per anchor, default 2), and every later session re-judges them
(``k`` fresh samples, default 1).  The judge's score of anchor i is modelled as
``y = mu_i + b + e`` with item effect ``mu_i``, a judge offset ``b`` and sampling noise ``e``
(sd ``sigma``).  A silent change moves ``b`` (a *shift*) or ``sigma`` (a *noise* change; an
item-specific re-ordering of the scores shows the same way).

**Per session** (:func:`anchor_comparison`), on the per-anchor differences
``d_i = mean(fresh_i) - mean(reference_i)`` (item effects cancel):

* shift: Student's paired t interval and test of the mean of ``d`` (Student 1908), at a level
  *designed by power* (:func:`designed_shift_level`): the smallest level at which the test still
  has ``power`` (95%) against a shift of the margin, given the judge's noise read from the
  reference (an upper confidence bound of it, plus a rounding allowance), between ``min_level``
  (0.001) and ``max_level`` (0.025; at most ``alpha - noise_alpha``: Bonferroni with the noise
  test, so a drift-free judge is called "drifted" at most ``alpha`` of the time, and usually far
  less).  Choosing the level from the
  error that matters rather than by convention follows Mudge et al. 2012 ("Setting an optimal
  alpha that minimizes errors in null hypothesis significance tests", *PLoS ONE* 7: e32734).
  The reference's within-anchor scatter is independent of the anchor means under the normal
  model, so the level chosen from it does not bias the test;
* "no shift beyond the margin": two one-sided t tests (TOST; Schuirmann 1987) of
  ``|shift| < margin`` at level ``alpha``, the ``1 - 2 alpha`` interval inside the margin;
* noise: ``Q = S_d^2 / S_w^2``, the variance of ``d`` over the anchors over the pooled
  within-anchor variance of the reference.  Without a change, ``S_d^2`` estimates
  ``sigma^2 (1/k + 1/m)`` and ``S_w^2`` estimates ``sigma^2``; the noise ratio
  ``sigma_fresh / sigma_reference`` is ``sqrt(k (Q - 1/m))`` with the normal-theory interval
  from ``Q / (1/k + 1/m) ~ F(n - 1, n (m - 1))`` (a variance-ratio F interval).  The *test*
  is a permutation test instead (Fisher 1935; Good 2005, *Permutation, parametric and bootstrap
  tests of hypotheses*): without a change the ``m + k`` scores of an anchor (the fresh ones
  centred by the estimated shift) are exchangeable, so assigning them at random to the
  reference and fresh roles gives the null distribution of ``Q`` whatever the per-anchor noise
  and the scale's discreteness (the F test's false-alarm rate doubled on a 1-5 scale in
  simulation; the permutation test kept its level).  It needs ``m >= 2``: with one reference
  sample per anchor the variance of ``d`` is ``sigma_f^2 + sigma_r^2`` and the reference's own
  noise cannot be separated from the fresh one, so a change of noise cannot be seen.

**Across sessions** (:func:`drift_monitor`): every comparison shares the same reference, so the
shift estimates of two runs are correlated (the reference's share of their variance is
``rho = (1/m) / (1/k + 1/m)``, 1/3 at the defaults) and a control chart on them, or repeated
two-run tests, would raise false alarms whenever the reference happened to be off.  The monitor
uses the self-starting form (Hawkins 1987, "Self-starting cusum charts for location and scale",
*The Statistician* 36): the baseline is the precision-weighted mean of the reference (shift 0)
and all earlier runs, and the standardised innovations ``z_t = (shift_t - baseline_{t-1}) /
sd`` are independent without drift (innovations of a constant-mean Gaussian model).  A
two-sided CUSUM (Page 1954, "Continuous inspection schemes", *Biometrika* 41) accumulates them,
``S+_t = max(0, S+_{t-1} + z_t - r)``, ``S-_t = max(0, S-_{t-1} - z_t - r)``, and alarms when
either exceeds ``h``.  ``h`` is calibrated by simulating the whole procedure (anchors, variance
estimates, innovations) under the normal model without drift, as the ``1 - false_alarm``
quantile of the largest statistic over ``horizon`` runs, so the chance of any false alarm in
the first ``horizon`` runs is ``false_alarm``.

**Two stages** (:func:`staged_anchor_comparison`): the anchor set holds ``screen`` (30) anchors
plus reserves (10 by default).  Each session re-judges the first ``screen``; only when those are
*clearly* steady (status steady, shift p >= ``screen_p``, noise p >= ``screen_noise_p``) does it
stop, else it re-judges the reserves and decides on all of them.  "Drifted" is only ever decided
on the full set, so its error is that of the full test; the screen costs at most the power lost
to stopping early (<= 0.3% in benchmarks/bench_drift.py) and saves the reserve calls in about 60%
of drift-free sessions.

**Attribution** (:func:`attribute_change`): the anchors say whether the judge moved; the
caller's paired comparison of the system's item scores between the two runs says whether the
scores moved.  A judge shift moves the system's scores too, so the system's shift is corrected
by the judge's (``system - judge``, variances added; exact for a shift common to all items).
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import ReliabilityError, ScaleError
from ..scales import Scale, ScaleLike
from .interval import format_estimate

__all__ = [
    "DEFAULT_MARGIN_FRACTION", "DEFAULT_MIN_ANCHORS", "DEFAULT_MIN_DRIFT", "DEFAULT_REFERENCE_SAMPLES",
    "DEFAULT_MONITOR_FALSE_ALARM", "DEFAULT_NOISE_ALPHA", "DEFAULT_POWER", "DEFAULT_MIN_LEVEL", "DEFAULT_MAX_LEVEL",
    "DEFAULT_SCREEN_ANCHORS", "DEFAULT_SCREEN_P", "DEFAULT_SCREEN_NOISE_P",
    "NoiseRatio", "AnchorComparison", "anchor_comparison", "designed_shift_level", "staged_anchor_comparison",
    "MonitorStep", "DriftMonitor", "drift_monitor", "cusum_decision_limit",
    "DriftAttribution", "attribute_change",
]

DEFAULT_MARGIN_FRACTION = 0.10
"""Equivalence margin of "steady": a tenth of the scale's range (1 point on 0-10).  The same size
as the shift the anchors must catch (benchmarks/bench_drift.py) and as seed 001's per-item nMAE
threshold of 0.1; a judge whose anchor mean moved by less is treated as the same judge."""
DEFAULT_MIN_DRIFT = 0.5
"""A significant shift counts as drift only when it is at least this fraction of the margin
(0.05 of the range by default), so that many anchors do not call a negligible shift a drift."""
DEFAULT_NOISE_ALPHA = 0.01
"""Level of the noise test (two-sided permutation test); the shift test gets at most
``alpha - noise_alpha``."""
DEFAULT_POWER = 0.95
"""Power against a shift of the margin that :func:`designed_shift_level` keeps (the detection goal
of issue 29); the shift test's level is the smallest that keeps it."""
DEFAULT_MAX_LEVEL = 0.025
"""Highest level of the shift test: half the 5% bound.  On a 1-5 scale at noise 0.1 of the range
the t test on the rounded differences of 40 anchors measured 5.2% at a nominal 4% (600 drift-free
sessions), so the full ``alpha - noise_alpha`` would leave no room; at 0.025 it keeps 95% power
there (benchmarks/bench_drift.py)."""
DEFAULT_MIN_LEVEL = 0.001
"""Lowest level of the shift test: the t approximation to the mean of a few dozen discrete
differences is not trusted further into the tail."""
DEFAULT_SCREEN_ANCHORS = 30
"""Anchors re-judged in the first stage of :func:`staged_anchor_comparison`."""
DEFAULT_SCREEN_P = 0.3
DEFAULT_SCREEN_NOISE_P = 0.1
"""The first stage stops (steady) only when the shift's p >= 0.3 and the noise test's p >= 0.1:
in simulation a 0.1-range shift stopped there in <= 0.3% of sessions (1-5 scale, noise 0.1 of the
range, 30 anchors), a drift-free judge in about 62%."""
DEFAULT_SYSTEM_ALPHA = 0.01
"""Level of :func:`attribute_change`'s test of the system's scores.  With the judge drifted, the
corrected shift's error is mostly the anchors' (30-40 anchors against a suite of hundreds of
items), so at 0.05 one judge-only change in twenty was called "both"; a change of a tenth of the
range in a 200-item suite is still found at 0.01 in every simulated case."""
DEFAULT_MIN_ANCHORS = 10
"""Below this many anchors no claim is made ("inconclusive"): the t approximation for the mean of
a few discrete scores is not trusted, and neither claim would have useful power."""
DEFAULT_REFERENCE_SAMPLES = 2
"""Reference samples per anchor to record: 2 makes a change of noise visible (module docstring)."""
DEFAULT_MONITOR_FALSE_ALARM = 0.04
"""Nominal false-alarm rate of the monitor over its horizon.  Exact for normal scores; rounding to
a coarse scale adds about half a point (5.2-5.8% at a nominal 5% on 0-10 with noise 0.05 of the
range, benchmarks/bench_drift.py), so the default leaves room to stay under 5%."""

STATUSES = ("steady", "drifted", "inconclusive")
VERDICTS = ("judge drifted", "system changed", "both", "none", "undetermined")


# --------------------------------------------------------------------------- input


def _scale_of(scale: ScaleLike) -> Scale:
    try:
        return Scale.parse(scale)
    except ScaleError:
        raise
    except (TypeError, ValueError) as exc:
        raise ScaleError(f"cannot read scale {scale!r}: {exc}") from None


def _as_samples(data: Any, name: str) -> tuple[tuple[Any, ...] | None, np.ndarray]:
    """(anchor ids or None, anchors x samples float array) from a mapping, a 1-D/2-D array or a
    ``to_matrix()`` object.  NaN (or None) marks a missing score."""
    from ._input import as_vector_or_matrix

    if isinstance(data, Mapping):
        if not data:
            raise ReliabilityError(f"{name} is empty: no anchors")
        ids = tuple(data)
        rows = []
        for key in ids:
            value = data[key]
            row = as_vector_or_matrix([value] if np.ndim(value) == 0 else list(value), name=f"{name}[{key!r}]")
            if row.ndim != 1:
                raise ReliabilityError(f"{name}[{key!r}] must be a score or a list of scores, got shape {row.shape}")
            rows.append(row)
        counts = {len(r) for r in rows}
        if len(counts) != 1:
            by_count: dict[int, list[Any]] = {}
            for key, r in zip(ids, rows):
                by_count.setdefault(len(r), []).append(key)
            detail = "; ".join(f"{c} samples: {v[:5]!r}" for c, v in sorted(by_count.items()))
            raise ReliabilityError(f"{name}: anchors have different numbers of samples ({detail}); "
                                   "pad with NaN and pass nan_policy='omit', or record the same number")
        return ids, np.vstack(rows)
    item_ids = tuple(data.item_ids) if getattr(data, "item_ids", None) is not None else None
    arr = as_vector_or_matrix(data, name=name)
    return item_ids, (arr[:, None] if arr.ndim == 1 else arr)


def _align(reference: Any, fresh: Any) -> tuple[tuple[Any, ...] | None, np.ndarray, np.ndarray]:
    ref_ids, ref = _as_samples(reference, "reference")
    new_ids, new = _as_samples(fresh, "fresh")
    if ref_ids is not None and new_ids is not None:
        if set(ref_ids) != set(new_ids):
            missing = [a for a in ref_ids if a not in set(new_ids)]
            extra = [a for a in new_ids if a not in set(ref_ids)]
            raise ReliabilityError(
                f"the fresh anchors do not match the reference: missing from fresh {missing[:10]!r}"
                f"{' ...' if len(missing) > 10 else ''}, not in the reference {extra[:10]!r}"
                f"{' ...' if len(extra) > 10 else ''}")
        order = {a: i for i, a in enumerate(new_ids)}
        new = new[[order[a] for a in ref_ids]]
    elif ref.shape[0] != new.shape[0]:
        raise ReliabilityError(f"the reference has {ref.shape[0]} anchors but fresh has {new.shape[0]}")
    return ref_ids if ref_ids is not None else new_ids, ref, new


# --------------------------------------------------------------------------- per session


@dataclass(frozen=True)
class NoiseRatio:
    """``value`` = sigma_fresh / sigma_reference (1 = unchanged) with its normal-theory F interval
    (``ci_low``/``ci_high`` at ``confidence``; module docstring); ``p`` is the two-sided
    permutation p value of H0 "the fresh scores vary around the reference as the reference
    varies around itself" (``n_permutations`` random assignments, ``seed``).  ``q`` is the
    observed ``S_d^2 / S_w^2`` and ``reference_sd`` the reference's within-anchor sd (scale
    units).  A fully deterministic reference (``reference_sd`` 0) has no ratio (None) but
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

    @property
    def direction(self) -> str:
        """``"up"`` when the fresh scores scatter more than the reference's noise, else ``"down"``."""
        if self.value is None:
            return "up" if self.q is not None and math.isinf(self.q) else "none"
        return "up" if self.value > 1 else "down"

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "ci": None if self.ci_low is None else [self.ci_low, self.ci_high],
                "confidence": self.confidence, "p": self.p, "q": _json_float(self.q),
                "reference_sd": self.reference_sd, "fresh_sd": self.fresh_sd, "direction": self.direction,
                "n_permutations": self.n_permutations, "seed": self.seed}


@dataclass(frozen=True)
class AnchorComparison:
    """Fresh anchor scores against their reference: ``status`` ``"steady"``, ``"drifted"`` or
    ``"inconclusive"``, with ``reasons`` in words.

    ``shift`` (fresh - reference, scale units) has the paired t interval ``shift_ci`` at
    ``shift_confidence`` = 1 - (the shift test's level), so "the interval excludes 0" is the
    test; ``*_fraction`` are the same over the scale's range.  ``shift_se`` is its standard
    error, ``shift_p`` the two-sided p value; ``equivalence_p`` the TOST p value of
    ``|shift| < margin`` (``equivalence_ci``: its ``1 - 2 alpha`` interval).  ``noise`` is None
    with one reference sample per anchor (``noise_tested`` False).  ``agreement`` is ICC(A,1)
    of the per-anchor reference and fresh means with its 95% CI (None when undefined, e.g.
    every anchor scored alike); descriptive only, it does not enter the status.
    ``reference_share`` is the reference's share of the shift's variance without a change,
    ``(1/m) / (1/k + 1/m)`` (the correlation of two runs' shifts, used by the monitor).
    ``shift_level`` is the shift test's level (designed by power, :func:`designed_shift_level`),
    ``noise_alpha`` the noise test's.  From :func:`staged_anchor_comparison`: ``screened`` is the
    number of anchors of the first stage and ``reserve_skipped`` the reserve anchors it did not
    ask (0 when it went on to all of them); both None/0 for a one-stage comparison.
    ``first_stage`` is the first stage's comparison when the reserve was asked: every run of a
    history judges those anchors, so the monitor follows them.
    """

    status: str
    reasons: tuple[str, ...]
    n: int
    n_omitted: int
    reference_samples: int
    fresh_samples: int
    scale: str
    scale_range: float
    margin: float
    alpha: float
    shift: float | None
    shift_ci: tuple[float, float] | None
    shift_confidence: float
    shift_se: float | None
    shift_p: float | None
    equivalence_p: float | None
    equivalence_ci: tuple[float, float] | None
    noise: NoiseRatio | None
    agreement: float | None
    agreement_ci: tuple[float, float] | None
    reference_share: float
    noise_alpha: float = DEFAULT_NOISE_ALPHA
    screened: int | None = None
    reserve_skipped: int = 0
    first_stage: "AnchorComparison | None" = field(default=None, repr=False)
    anchor_ids: tuple[Any, ...] | None = field(default=None, repr=False)
    differences: tuple[float, ...] = field(default=(), repr=False)

    @property
    def margin_fraction(self) -> float:
        return self.margin / self.scale_range

    @property
    def shift_fraction(self) -> float | None:
        return None if self.shift is None else self.shift / self.scale_range

    @property
    def shift_fraction_ci(self) -> tuple[float, float] | None:
        if self.shift_ci is None:
            return None
        return (self.shift_ci[0] / self.scale_range, self.shift_ci[1] / self.scale_range)

    @property
    def shift_level(self) -> float:
        """Level of the shift test (1 - ``shift_confidence``)."""
        return 1 - self.shift_confidence

    @property
    def noise_tested(self) -> bool:
        return self.noise is not None

    @property
    def calls(self) -> int:
        """Judge calls this session spent on the anchors (anchors x fresh samples)."""
        return (self.n + self.n_omitted) * self.fresh_samples

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status, "reasons": list(self.reasons), "n": self.n, "n_omitted": self.n_omitted,
            "reference_samples": self.reference_samples, "fresh_samples": self.fresh_samples,
            "calls": self.calls, "scale": self.scale, "scale_range": self.scale_range, "margin": self.margin,
            "margin_fraction": self.margin_fraction, "alpha": self.alpha, "shift": self.shift,
            "shift_ci": _pair(self.shift_ci), "shift_confidence": self.shift_confidence,
            "shift_fraction": self.shift_fraction, "shift_fraction_ci": _pair(self.shift_fraction_ci),
            "shift_se": self.shift_se, "shift_p": self.shift_p, "equivalence_p": self.equivalence_p,
            "equivalence_ci": _pair(self.equivalence_ci), "noise_tested": self.noise_tested,
            "noise": None if self.noise is None else self.noise.to_dict(),
            "agreement": None if self.agreement is None else {
                "statistic": "ICC(A,1)", "value": self.agreement, "ci": _pair(self.agreement_ci)},
            "reference_share": self.reference_share, "shift_level": self.shift_level,
            "noise_alpha": self.noise_alpha, "screened": self.screened, "reserve_skipped": self.reserve_skipped,
            "first_stage": None if self.first_stage is None else {
                key: value for key, value in self.first_stage.to_dict().items()
                if key in ("status", "n", "n_omitted", "reference_samples", "fresh_samples", "shift", "shift_se",
                           "shift_p", "noise")},
        }

    def __str__(self) -> str:
        shift = ("shift n/a" if self.shift is None or self.shift_ci is None else
                 "shift " + format_estimate(self.shift, *self.shift_ci, self.shift_confidence, digits=3, signed=True,
                                            fmt="g") + f" on {self.scale} (margin +/-{self.margin:.3g})")
        noise = ("" if self.noise is None or self.noise.value is None else
                 f", noise ratio {self.noise.value:.2f} (p = {self.noise.p:.3g})")
        return f"judge {self.status}: {shift}{noise}, n = {self.n} anchors; " + "; ".join(self.reasons)


def anchor_comparison(
    reference: Any,
    fresh: Any,
    scale: ScaleLike,
    *,
    margin: float | None = None,
    alpha: float = 0.05,
    noise_alpha: float = DEFAULT_NOISE_ALPHA,
    power: float | None = DEFAULT_POWER,
    min_level: float = DEFAULT_MIN_LEVEL,
    max_level: float = DEFAULT_MAX_LEVEL,
    min_drift: float = DEFAULT_MIN_DRIFT,
    min_anchors: int = DEFAULT_MIN_ANCHORS,
    nan_policy: str = "raise",
    n_permutations: int = 999,
    seed: int = 0,
) -> AnchorComparison:
    """Compare fresh anchor scores with the recorded reference (module docstring: the tests).

    ``reference`` and ``fresh``: ``{anchor_id: score or [scores]}`` mappings with the same
    anchors, or arrays (anchors x samples, or one score per anchor) in the same order, or
    ``to_matrix()`` objects.  ``scale``: a :class:`~pytest_judgerel.scales.Scale`, a name such
    as ``"0-10"`` or ``(low, high)``.  ``margin`` in scale units (default
    :data:`DEFAULT_MARGIN_FRACTION` of the range).

    Rules (``alpha`` bounds the false-alarm rate of "drifted" for an unchanged judge):

    * fewer than ``min_anchors`` usable anchors: ``"inconclusive"``;
    * ``"drifted"`` when the shift test rejects at its level and ``|shift| >= min_drift *
      margin``, or the noise test rejects at ``noise_alpha``.  The shift's level is
      :func:`designed_shift_level` (the smallest keeping ``power`` against a shift of the margin,
      within ``[min_level, min(max_level, alpha - noise_alpha)]``); ``power=None`` uses the upper
      end.  With one reference sample per anchor the noise cannot be tested and the shift's level
      is at most ``min(max_level, alpha)``;
    * ``"steady"`` when TOST shows ``|shift| < margin`` at level ``alpha`` (a judge shifted by
      the margin is called steady at most ``alpha`` of the time) and the noise test does not
      reject (with one reference sample the noise is not tested, and a reason says so);
    * otherwise ``"inconclusive"``.

    ``nan_policy="omit"`` drops anchors with a missing score (``n_omitted``); ``"raise"``
    names them.
    """
    from .bias import equivalence_test, paired_shift

    sc = _scale_of(scale)
    alpha = _check_alpha(alpha)
    if isinstance(min_drift, bool) or not isinstance(min_drift, (int, float)) or not 0 <= min_drift <= 1:
        raise ReliabilityError(f"min_drift must be a fraction of the margin in [0, 1], got {min_drift!r}")
    if isinstance(min_anchors, bool) or not isinstance(min_anchors, int) or min_anchors < 3:
        raise ReliabilityError(f"min_anchors must be an integer >= 3, got {min_anchors!r}")
    if nan_policy not in ("raise", "omit"):
        raise ReliabilityError(f"nan_policy must be 'raise' or 'omit', got {nan_policy!r}")
    if isinstance(noise_alpha, bool) or not isinstance(noise_alpha, (int, float)) or not 0 < noise_alpha < alpha:
        raise ReliabilityError(f"noise_alpha must lie strictly between 0 and alpha ({alpha:g}), got {noise_alpha!r}")
    if power is not None and (isinstance(power, bool) or not isinstance(power, (int, float)) or not 0.5 < power < 1):
        raise ReliabilityError(f"power must lie strictly between 0.5 and 1 (or be None), got {power!r}")
    if isinstance(max_level, bool) or not isinstance(max_level, (int, float)) or not 0 < max_level <= alpha:
        raise ReliabilityError(f"max_level must lie in (0, alpha], got {max_level!r}")
    if isinstance(min_level, bool) or not isinstance(min_level, (int, float)) or not 0 < min_level <= max_level:
        raise ReliabilityError(f"min_level must lie in (0, max_level], got {min_level!r}")
    if isinstance(n_permutations, bool) or not isinstance(n_permutations, int) or n_permutations < 99:
        raise ReliabilityError(f"n_permutations must be an integer >= 99, got {n_permutations!r}")
    if margin is None:
        margin = DEFAULT_MARGIN_FRACTION * sc.range
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0 < margin < math.inf:
        raise ReliabilityError(f"the margin must be a finite number > 0 (scale units), got {margin!r}")
    margin = float(margin)

    ids, ref, new = _align(reference, fresh)
    m, k = ref.shape[1], new.shape[1]
    for name, arr in (("reference", ref), ("fresh", new)):
        present = arr[~np.isnan(arr)]
        if present.size and (present.min() < sc.low - 1e-9 or present.max() > sc.high + 1e-9):
            bad = present[(present < sc.low - 1e-9) | (present > sc.high + 1e-9)][0]
            raise ScaleError(f"{name} holds {bad:g}, outside the scale {sc.name} ({sc.low:g}..{sc.high:g})")
    missing = np.isnan(ref).any(axis=1) | np.isnan(new).any(axis=1)
    if missing.any():
        if nan_policy == "raise":
            where = np.flatnonzero(missing)
            names = [ids[i] if ids is not None else int(i) for i in where[:10]]
            raise ReliabilityError(
                f"{where.size} anchor(s) lack a score (NaN): {names!r}{' ...' if where.size > 10 else ''}; "
                "pass nan_policy='omit' to leave them out")
        ref, new = ref[~missing], new[~missing]
        ids = tuple(a for a, gone in zip(ids, missing) if not gone) if ids is not None else None
    n, n_omitted = int(ref.shape[0]), int(missing.sum())
    if n == 0:
        raise ReliabilityError(f"no anchor has all its scores ({n_omitted} omitted)")
    rho = (1 / m) / (1 / k + 1 / m)
    noise_alpha = float(noise_alpha) if m >= 2 else 0.0
    shift_alpha = min(float(max_level), alpha - noise_alpha)
    if power is not None and m >= 2 and n >= min_anchors:
        within = float(np.sqrt(((ref - ref.mean(axis=1, keepdims=True)) ** 2).sum() / (n * (m - 1))))
        shift_alpha = designed_shift_level(within, n, m, k, margin, step=0.0 if sc.fractional else float(sc.step),
                                           power=float(power), max_level=shift_alpha,
                                           min_level=min(float(min_level), shift_alpha))
    d = new.mean(axis=1) - ref.mean(axis=1)
    base = dict(n=n, n_omitted=n_omitted, reference_samples=m, fresh_samples=k, scale=sc.name,
                scale_range=float(sc.range), margin=margin, alpha=alpha, shift_confidence=1 - shift_alpha,
                reference_share=rho, noise_alpha=noise_alpha, anchor_ids=ids,
                differences=tuple(float(x) for x in d))
    if n < min_anchors:
        mean = float(d.mean())
        return AnchorComparison(
            status="inconclusive",
            reasons=(f"too few anchors: {n} usable (min_anchors {min_anchors}); no claim either way",),
            shift=mean, shift_ci=None, shift_se=None, shift_p=None, equivalence_p=None, equivalence_ci=None,
            noise=None, agreement=None, agreement_ci=None, **base)  # type: ignore[arg-type]

    ps = paired_shift(ref.mean(axis=1), new.mean(axis=1), confidence=1 - shift_alpha)
    eq = equivalence_test(d, margin, alpha=alpha, bound=float(sc.range))  # |d| cannot exceed the range
    noise = _noise_ratio(ref, new, float(ps.mean), n_permutations, seed) if m >= 2 else None
    agreement, agreement_ci = _agreement(ref.mean(axis=1), new.mean(axis=1))

    reasons: list[str] = []
    shift_rejects = ps.p < shift_alpha
    big = abs(ps.mean) >= min_drift * margin
    noise_rejects = noise is not None and noise.p < noise_alpha
    if shift_rejects and big:
        reasons.append(f"the judge's scores shifted by {ps.mean:+.3g} ({ps.mean / sc.range:+.1%} of the range; "
                       f"p = {ps.p:.2g} < {shift_alpha:.2g})")
    if noise_rejects:
        assert noise is not None
        what = ("scatter more around the reference than the judge's recorded noise"
                if noise.direction == "up" else "scatter less around the reference than the judge's recorded noise")
        ratio = "" if noise.value is None else f" (noise ratio {noise.value:.2f})"
        reasons.append(f"the fresh scores {what}{ratio}; p = {noise.p:.2g} < {noise_alpha:g}")
    if reasons:
        status = "drifted"
    elif eq.equivalent and not noise_rejects:
        status = "steady"
        reasons.append(f"|shift| < {margin:g} shown (TOST p = {eq.p:.2g}; {1 - 2 * alpha:.0%} interval "
                       f"{eq.ci_low:+.3g}, {eq.ci_high:+.3g})")
        if shift_rejects:
            reasons.append(f"a small shift {ps.mean:+.3g} is significant but below {min_drift:g} x the margin")
        if noise is None:
            reasons.append("noise not tested: one reference sample per anchor (record 2 to see a noise change)")
    else:
        status = "inconclusive"
        reasons.append(f"the shift's {1 - 2 * alpha:.0%} interval [{eq.ci_low:+.3g}, {eq.ci_high:+.3g}] is not inside "
                       f"+/-{margin:g} and no drift is shown; more anchors or fresh samples per anchor narrow it")
    return AnchorComparison(
        status=status, reasons=tuple(reasons), shift=float(ps.mean), shift_ci=(float(ps.ci_low), float(ps.ci_high)),
        shift_se=float(ps.sd / math.sqrt(n)), shift_p=float(ps.p), equivalence_p=float(eq.p),
        equivalence_ci=(float(eq.ci_low), float(eq.ci_high)), noise=noise, agreement=agreement,
        agreement_ci=agreement_ci, **base)  # type: ignore[arg-type]


def designed_shift_level(
    reference_sd: float,
    n_anchors: int,
    reference_samples: int,
    fresh_samples: int,
    margin: float,
    *,
    step: float = 0.0,
    power: float = DEFAULT_POWER,
    max_level: float = DEFAULT_MAX_LEVEL,
    min_level: float = DEFAULT_MIN_LEVEL,
    sd_confidence: float = 0.8,
) -> float:
    """The smallest level of the paired t test of the shift that keeps ``power`` against a shift
    of ``margin``, within ``[min_level, max_level]`` (the level chosen from the error that matters,
    Mudge et al. 2012, *PLoS ONE* 7: e32734).

    The judge's noise is the reference's within-anchor sd ``reference_sd`` (``n (m - 1)`` degrees
    of freedom), taken at its one-sided ``sd_confidence`` upper bound (chi-square) so that an
    estimate that came out low does not cost power.  The difference of an anchor then has variance
    ``sd_up^2 (1/k + 1/m) + step^2 / (4 k)``: the last term allows for rounding the shifted fresh
    scores to the scale's grid, which can spread them by up to one step where the reference,
    less noisy than the step, showed no spread (a Bernoulli variance is at most 1/4).  With
    noncentrality ``lambda = margin sqrt(n) / sd_d`` the critical value is the ``1 - power``
    quantile of the noncentral t (``n - 1`` df) and the level its two-sided tail under H0.
    ``max_level`` without a within-anchor variance (one reference sample).
    """
    from scipy import stats

    n, m, k = n_anchors, reference_samples, fresh_samples
    if m < 2 or n < 3:
        return float(max_level)
    df_w = n * (m - 1)
    var_up = float(reference_sd) ** 2 * df_w / float(stats.chi2.ppf(1 - sd_confidence, df_w))
    var_d = var_up * (1 / k + 1 / m) + float(step) ** 2 / (4 * k)
    if var_d <= 0:
        return float(min_level)
    lam = float(margin) * math.sqrt(n) / math.sqrt(var_d)
    crit = float(stats.nct.ppf(1 - power, n - 1, lam))
    if not math.isfinite(crit) or crit <= 0:
        return float(max_level)
    level = float(2 * stats.t.sf(crit, n - 1))
    return float(min(max_level, max(min_level, level)))


def staged_anchor_comparison(
    reference: Any,
    judge: Any,
    scale: ScaleLike,
    *,
    screen: int = DEFAULT_SCREEN_ANCHORS,
    screen_p: float = DEFAULT_SCREEN_P,
    screen_noise_p: float = DEFAULT_SCREEN_NOISE_P,
    **options: Any,
) -> AnchorComparison:
    """Re-judge the anchors in two stages (module docstring) and compare them with the reference.

    ``reference``: ``{anchor_id: [scores]}`` in the anchor set's order (the first ``screen`` are the
    first stage, the rest the reserve).  ``judge(ids)`` returns the fresh scores of those anchors
    (``{id: score or [scores]}``); it is called once for the first stage and, unless that stage
    is clearly steady, once more for the reserve.  ``options`` go to :func:`anchor_comparison`.
    With no more than ``screen`` anchors it is one :func:`anchor_comparison` of all of them.
    """
    if not isinstance(reference, Mapping):
        raise ReliabilityError("staged_anchor_comparison needs the reference as {anchor_id: [scores]}")
    if isinstance(screen, bool) or not isinstance(screen, int) or screen < 3:
        raise ReliabilityError(f"screen must be an integer >= 3, got {screen!r}")
    for name, v in (("screen_p", screen_p), ("screen_noise_p", screen_noise_p)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < 1:
            raise ReliabilityError(f"{name} must lie strictly between 0 and 1, got {v!r}")
    ids = list(reference)
    first, reserve = ids[:screen], ids[screen:]
    fresh = dict(judge(first))
    if not reserve:
        return anchor_comparison(reference, fresh, scale, **options)
    stage1 = anchor_comparison({a: reference[a] for a in first}, fresh, scale, **options)
    clear = (stage1.status == "steady" and stage1.shift_p is not None and stage1.shift_p >= screen_p
             and (stage1.noise is None or stage1.noise.p >= screen_noise_p))
    if clear:
        note = (f"first stage: {len(first)} anchors clearly steady (shift p = {stage1.shift_p:.2g} >= {screen_p:g}"
                + ("" if stage1.noise is None else f", noise p = {stage1.noise.p:.2g} >= {screen_noise_p:g}")
                + f"); the {len(reserve)} reserve anchors were not asked")
        return replace(stage1, reasons=stage1.reasons + (note,), screened=len(first), reserve_skipped=len(reserve))
    fresh.update(dict(judge(reserve)))
    final = anchor_comparison(reference, fresh, scale, **options)
    note = f"first stage: {len(first)} anchors not clearly steady ({stage1.status}); decided on all {len(ids)}"
    return replace(final, reasons=final.reasons + (note,), screened=len(first), reserve_skipped=0, first_stage=stage1)


def _q_statistic(ref: np.ndarray, new: np.ndarray) -> np.ndarray:
    """``S_d^2 / S_w^2`` over the last two axes (anchors, samples); leading axes are permutations.
    inf when only the reference is constant, NaN when both are."""
    m, k = ref.shape[-1], new.shape[-1]
    n = ref.shape[-2]
    d = new.mean(axis=-1) - ref.mean(axis=-1)
    s_d2 = d.var(axis=-1, ddof=1)
    s_w2 = ((ref - ref.mean(axis=-1, keepdims=True)) ** 2).sum(axis=(-2, -1)) / (n * (m - 1))
    tiny = 1e-12 * max(1.0, float(np.max(np.abs(ref))) if ref.size else 1.0) ** 2
    s_d2 = np.where(s_d2 <= tiny, 0.0, s_d2)
    s_w2 = np.where(s_w2 <= tiny, 0.0, s_w2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(s_d2 / s_w2)


def _noise_ratio(ref: np.ndarray, new: np.ndarray, shift: float, n_permutations: int, seed: int,
                 confidence: float = 0.95) -> NoiseRatio:
    from scipy import stats

    n, m = ref.shape
    k = new.shape[1]
    q = float(_q_statistic(ref, new))
    s_w = float(np.sqrt(((ref - ref.mean(axis=1, keepdims=True)) ** 2).sum() / (n * (m - 1))))
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
        q_null = np.where(s_d2 <= tiny, 0.0, s_d2) / np.where(s_w2 <= tiny, 0.0, s_w2)
    if math.isnan(q):  # both constant: the fresh scores repeat the reference exactly
        p = 1.0
    else:
        upper = (1 + np.sum(q_null >= q * (1 - 1e-12))) / (n_permutations + 1)
        lower = (1 + np.sum(q_null <= q * (1 + 1e-12))) / (n_permutations + 1)
        p = float(min(1.0, 2 * min(upper, lower)))
    c = 1 / k + 1 / m
    if s_w == 0 or not math.isfinite(q):
        value = lo = hi = fresh_sd = None
    else:
        a = 1 - confidence
        f_hi = float(stats.f.ppf(1 - a / 2, n - 1, n * (m - 1)))
        f_lo = float(stats.f.ppf(a / 2, n - 1, n * (m - 1)))

        def ratio(qc: float) -> float:  # Q / c estimates (sigma_f^2 / k + sigma_r^2 / m) / (c sigma_r^2)
            return math.sqrt(max(0.0, k * (qc - 1 / m)))

        value, lo, hi = ratio(q), ratio(q / f_hi), ratio(q / f_lo)
        fresh_sd = value * s_w
    return NoiseRatio(value=value, ci_low=lo, ci_high=hi, confidence=confidence, p=p,
                      q=None if math.isnan(q) else q / c, reference_sd=s_w, fresh_sd=fresh_sd,
                      n_permutations=n_permutations, seed=seed)


def _agreement(ref_means: np.ndarray, new_means: np.ndarray) -> tuple[float | None, tuple[float, float] | None]:
    from .icc import icc

    try:
        res = icc(np.column_stack([ref_means, new_means]), "A,1")
    except ReliabilityError:
        return None, None
    if not all(math.isfinite(v) for v in (res.value, res.ci_low, res.ci_high)):
        return None, None
    return float(res.value), (float(res.ci_low), float(res.ci_high))


# --------------------------------------------------------------------------- history monitor


@dataclass(frozen=True)
class MonitorStep:
    """One run of the monitor: its ``shift`` (scale units), the ``baseline`` it was compared with
    (the weighted mean of the reference and the earlier runs), the standardised innovation ``z``,
    the CUSUM statistics ``upper`` / ``lower`` and whether either exceeded the limit."""

    run: int
    shift: float
    baseline: float
    z: float
    upper: float
    lower: float
    alarm: bool

    def to_dict(self) -> dict[str, Any]:
        return {"run": self.run, "shift": self.shift, "baseline": self.baseline, "z": _json_float(self.z),
                "upper": _json_float(self.upper), "lower": _json_float(self.lower), "alarm": self.alarm}


@dataclass(frozen=True)
class DriftMonitor:
    """Self-starting two-sided CUSUM over the anchor shifts of a run history (module docstring).

    ``first_alarm`` is the 1-based run of the first alarm (None: none); ``direction`` ``"up"`` or
    ``"down"`` for it.  Without drift, an alarm in the first ``horizon`` runs has probability
    ``false_alarm`` (under the normal model; ``decision_limit`` h calibrated by simulation with
    ``n_paths`` paths and ``seed``); runs beyond the horizon are computed but not covered: record a
    new reference (or restart the history) after ``horizon`` runs or after an alarm.
    """

    steps: tuple[MonitorStep, ...]
    first_alarm: int | None
    direction: str | None
    decision_limit: float
    reference_value: float
    horizon: int
    false_alarm: float
    n_anchors: int
    reference_samples: int
    fresh_samples: int
    n_paths: int
    seed: int

    @property
    def alarmed(self) -> bool:
        return self.first_alarm is not None

    @property
    def beyond_horizon(self) -> bool:
        return len(self.steps) > self.horizon

    def to_dict(self) -> dict[str, Any]:
        return {"steps": [s.to_dict() for s in self.steps], "alarmed": self.alarmed,
                "first_alarm": self.first_alarm, "direction": self.direction,
                "decision_limit": self.decision_limit, "reference_value": self.reference_value,
                "horizon": self.horizon, "false_alarm": self.false_alarm, "beyond_horizon": self.beyond_horizon,
                "n_anchors": self.n_anchors, "reference_samples": self.reference_samples,
                "fresh_samples": self.fresh_samples, "n_paths": self.n_paths, "seed": self.seed}

    def __str__(self) -> str:
        if self.first_alarm is None:
            return (f"no drift alarm over {len(self.steps)} runs (CUSUM h = {self.decision_limit:.2f}, "
                    f"false-alarm rate {self.false_alarm:g} over {self.horizon} runs)")
        return (f"drift alarm at run {self.first_alarm} ({self.direction}; CUSUM h = {self.decision_limit:.2f}, "
                f"false-alarm rate {self.false_alarm:g} over {self.horizon} runs)")


def _innovations(shift: np.ndarray, var: np.ndarray, rho: float, prior_var: Any = None,
                 prior_weight: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Standardised innovations of runs (last axis) against the reference (shift 0) and earlier runs.

    ``var[..., t]`` is the run's own estimate of the shift's variance; the variance is pooled over
    runs 1..t (the same judge without drift), together with ``prior_var`` (the same variance from
    the reference's within-anchor scatter) weighted as ``prior_weight`` runs.  In units of that variance the reference mean has
    variance ``rho`` and a run's fresh mean ``1 - rho``; the baseline is their precision-weighted
    mean and the innovation's variance ``(1 - rho) + 1 / (1/rho + (t - 1)/(1 - rho))``."""
    runs = shift.shape[-1]
    pooled = np.cumsum(var, axis=-1)
    if prior_var is not None and prior_weight > 0:
        pooled = pooled + np.asarray(prior_var, dtype=float)[..., None] * prior_weight
    pooled = pooled / (np.arange(1, runs + 1) + (prior_weight if prior_var is not None else 0.0))
    earlier = np.concatenate([np.zeros(shift.shape[:-1] + (1,)), np.cumsum(shift, axis=-1)[..., :-1]], axis=-1)
    t_prev = np.arange(runs)
    precision = 1 / rho + t_prev / (1 - rho)
    baseline = earlier / (1 - rho) / precision
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (shift - baseline) / np.sqrt(pooled * ((1 - rho) + 1 / precision))
    return np.asarray(z), np.asarray(baseline)


def _cusum(z: np.ndarray, r: float) -> tuple[np.ndarray, np.ndarray]:
    upper = np.empty_like(z)
    lower = np.empty_like(z)
    up = np.zeros(z.shape[:-1])
    down = np.zeros(z.shape[:-1])
    for t in range(z.shape[-1]):
        up = np.maximum(0.0, up + z[..., t] - r)
        down = np.maximum(0.0, down - z[..., t] - r)
        upper[..., t], lower[..., t] = up, down
    return upper, lower


@functools.lru_cache(maxsize=64)
def cusum_decision_limit(n_anchors: int, reference_samples: int, fresh_samples: int, horizon: int = 20,
                         false_alarm: float = DEFAULT_MONITOR_FALSE_ALARM, reference_value: float = 0.5,
                         n_paths: int = 40000,
                         seed: int = 0, reference_noise: bool = True) -> float:
    """Decision limit h of :func:`drift_monitor`: the ``1 - false_alarm`` quantile of the largest
    two-sided CUSUM statistic over ``horizon`` drift-free runs, simulated end to end (normal
    anchors with their item effects cancelled, ``reference_samples`` reference and
    ``fresh_samples`` fresh samples each, the per-run variance estimates and the self-starting
    innovations; with ``reference_noise`` the variance is also pooled with the reference's
    within-anchor variance, as :func:`drift_monitor` does when the runs carry it), so the shared
    reference and the estimated variances are accounted for."""
    for name, v, low in (("n_anchors", n_anchors, 3), ("reference_samples", reference_samples, 1),
                         ("fresh_samples", fresh_samples, 1), ("horizon", horizon, 1), ("n_paths", n_paths, 1000)):
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise ReliabilityError(f"{name} must be an integer >= {low}, got {v!r}")
    if not 0 < false_alarm < 0.5:
        raise ReliabilityError(f"false_alarm must lie strictly between 0 and 0.5, got {false_alarm!r}")
    if not 0 <= reference_value < 5:
        raise ReliabilityError(f"reference_value must lie in [0, 5), got {reference_value!r}")
    rng = np.random.default_rng(seed)
    rho = (1 / reference_samples) / (1 / fresh_samples + 1 / reference_samples)
    peaks = np.empty(n_paths)
    chunk = 5000
    for start in range(0, n_paths, chunk):
        p = min(chunk, n_paths - start)
        ref = rng.standard_normal((p, n_anchors, reference_samples))
        fresh_mean = rng.standard_normal((p, horizon, n_anchors)) / math.sqrt(fresh_samples)
        d = fresh_mean - ref.mean(axis=-1)[:, None, :]
        prior, weight = _reference_prior(ref, fresh_samples) if reference_noise else (None, 0.0)
        z, _ = _innovations(d.mean(axis=-1), d.var(axis=-1, ddof=1) / n_anchors, rho, prior, weight)
        up, down = _cusum(z, reference_value)
        peaks[start:start + p] = np.maximum(up, down).max(axis=-1)
    return float(np.quantile(peaks, 1 - false_alarm))


def _reference_prior(ref: np.ndarray, fresh_samples: int) -> tuple[Any, float]:
    """The shift's variance implied by the reference's within-anchor variance ``S_w^2`` (anchors x
    samples on the last two axes): ``S_w^2 (1/k + 1/m) / n``, worth ``n (m - 1) / (n - 1)`` runs."""
    n, m = ref.shape[-2], ref.shape[-1]
    if m < 2:
        return None, 0.0
    s_w2 = ((ref - ref.mean(axis=-1, keepdims=True)) ** 2).sum(axis=(-2, -1)) / (n * (m - 1))
    return s_w2 * (1 / fresh_samples + 1 / m) / n, n * (m - 1) / (n - 1)


def _monitored(c: Any) -> Any:
    """The part of a comparison the monitor follows: its first stage when the reserve was asked
    (the anchors every run judges), else the comparison itself."""
    stage = c.get("first_stage") if isinstance(c, Mapping) else getattr(c, "first_stage", None)
    return c if stage is None else stage


def _reference_sd(c: Any) -> float | None:
    noise = c.get("noise") if isinstance(c, Mapping) else getattr(c, "noise", None)
    if noise is None:
        return None
    sd = noise.get("reference_sd") if isinstance(noise, Mapping) else getattr(noise, "reference_sd", None)
    return float(sd) if isinstance(sd, (int, float)) and not isinstance(sd, bool) and math.isfinite(sd) else None


def _comparison_fields(c: Any, i: int) -> tuple[float, float, int, int, int]:
    get = c.get if isinstance(c, Mapping) else (lambda key: getattr(c, key, None))
    n, m, k = get("n"), get("reference_samples"), get("fresh_samples")
    numbers = []
    for name, v in (("shift", get("shift")), ("shift_se", get("shift_se"))):
        if v is None or isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ReliabilityError(f"run {i + 1}: {name} must be a finite number, got {v!r}"
                                   + (" (too few anchors?)" if v is None else ""))
        numbers.append(float(v))
    shift, se = numbers
    if se < 0:
        raise ReliabilityError(f"run {i + 1}: shift_se must be >= 0, got {se!r}")
    counts = []
    for name, v in (("n", n), ("reference_samples", m), ("fresh_samples", k)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ReliabilityError(f"run {i + 1}: {name} must be a positive integer, got {v!r}")
        counts.append(v)
    return float(shift), float(se), counts[0], counts[1], counts[2]


def drift_monitor(
    comparisons: Sequence[Any],
    *,
    horizon: int = 20,
    false_alarm: float = DEFAULT_MONITOR_FALSE_ALARM,
    reference_value: float = 0.5,
    n_paths: int = 40000,
    seed: int = 0,
) -> DriftMonitor:
    """Self-starting two-sided CUSUM over a run history of anchor comparisons, oldest first.

    ``comparisons``: :class:`AnchorComparison` objects or their ``to_dict()`` forms (what the
    report stores), all against the same reference.  A two-stage comparison contributes its first
    stage (the anchors every run re-judges).  ``reference_value`` r is the CUSUM's
    allowance in standard deviations of the innovation (0.5: tuned to shifts of about one
    standard error of a run's shift, a few hundredths of the range at the defaults).  The
    limit is :func:`cusum_decision_limit` for the design of the runs (the most common anchor
    count; exact when every run re-judges the same anchors).
    """
    comparisons = [_monitored(c) for c in comparisons]
    runs = [_comparison_fields(c, i) for i, c in enumerate(comparisons)]
    if not runs:
        raise ReliabilityError("the drift monitor needs at least one anchor comparison")
    designs = {(m, k) for _, _, _, m, k in runs}
    if len({m for m, _ in designs}) != 1:
        raise ReliabilityError(f"the runs compare with different references ({sorted(designs)} reference/fresh "
                               "samples): the monitor needs one reference")
    m = runs[0][3]
    ks = [r[4] for r in runs]
    ns = [r[2] for r in runs]
    k = max(set(ks), key=ks.count)
    n = max(set(ns), key=ns.count)
    if n < 3:
        raise ReliabilityError(f"the monitor needs runs with at least 3 anchors, got {n}")
    rho = (1 / m) / (1 / k + 1 / m)
    shift = np.array([r[0] for r in runs])
    var = np.array([r[1] ** 2 for r in runs])
    ref_sds = [sd for sd in (_reference_sd(c) for c in comparisons) if sd is not None]
    use_prior = m >= 2 and bool(ref_sds)
    h = cusum_decision_limit(n, m, k, horizon, float(false_alarm), float(reference_value), n_paths, seed,
                             reference_noise=use_prior)
    prior = ref_sds[0] ** 2 * (1 / k + 1 / m) / n if use_prior else None
    if not var.any() and not prior:
        # no scatter at all (a deterministic judge): any non-zero shift is a change
        z = np.where(shift == 0, 0.0, np.sign(shift) * np.inf)
        baseline = np.zeros_like(shift)
    else:
        if var.any():
            var = np.where(var == 0, np.nan, var)
            var = np.where(np.isnan(var), np.nanmean(var), var)
        z, baseline = _innovations(shift, var, rho, prior, n * (m - 1) / (n - 1) if use_prior else 0.0)
    up, down = _cusum(z, reference_value)
    steps = []
    first: int | None = None
    direction: str | None = None
    for t in range(len(runs)):
        alarm = bool(up[t] > h or down[t] > h)
        if alarm and first is None:
            first, direction = t + 1, "up" if up[t] > h else "down"
        steps.append(MonitorStep(run=t + 1, shift=float(shift[t]), baseline=float(baseline[t]),
                                 z=float(z[t]), upper=float(up[t]), lower=float(down[t]), alarm=alarm))
    return DriftMonitor(steps=tuple(steps), first_alarm=first, direction=direction, decision_limit=h,
                        reference_value=float(reference_value), horizon=horizon, false_alarm=float(false_alarm),
                        n_anchors=n, reference_samples=m, fresh_samples=k, n_paths=n_paths, seed=seed)


# --------------------------------------------------------------------------- attribution


@dataclass(frozen=True)
class DriftAttribution:
    """Who moved between two runs: ``verdict`` ``"judge drifted"``, ``"system changed"``,
    ``"both"``, ``"none"`` or ``"undetermined"`` (the judge is neither shown steady nor drifted
    while the system's scores changed).  ``system_shift`` is the caller's shift of the system's
    scores, ``corrected_shift`` the same minus the judge's anchor shift (when the judge drifted
    and numbers were given), ``system_changed`` the decision on it."""

    verdict: str
    reason: str
    judge_status: str
    system_changed: bool
    system_shift: float | None
    system_se: float | None
    corrected_shift: float | None
    corrected_se: float | None
    p: float | None
    alpha: float
    min_change: float

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "reason": self.reason, "judge_status": self.judge_status,
                "system_changed": self.system_changed, "system_shift": self.system_shift,
                "system_se": self.system_se, "corrected_shift": self.corrected_shift,
                "corrected_se": self.corrected_se, "p": self.p, "alpha": self.alpha, "min_change": self.min_change}

    def __str__(self) -> str:
        return f"{self.verdict}: {self.reason}"


def attribute_change(
    anchors: Any,
    system: Any,
    system_se: float | None = None,
    *,
    alpha: float = DEFAULT_SYSTEM_ALPHA,
    min_change: float | None = None,
) -> DriftAttribution:
    """Attribute a change between two runs to the judge, the system under test, both, or neither.

    ``anchors``: the later run's :class:`AnchorComparison` (or its ``to_dict()``, or just its
    status string).  ``system``: the caller's paired comparison of the system's item scores
    between the two runs (judge scale units): an object with ``mean``, ``sd`` and ``n`` (such as
    :class:`~pytest_judgerel.stats.bias.PairedShift`), a shift with ``system_se``, or a bool
    (changed or not; then a judge drift cannot be separated from a system change).

    With numbers, the system's shift is tested two-sided with a normal quantile at ``alpha``; a
    move counts only when also ``|shift| >= min_change`` (scale units; default
    :data:`DEFAULT_MIN_DRIFT` x the anchors' margin, the same practical floor as a judge shift, 0
    when the anchors carry no margin), so a large suite does not report a negligible move.  When
    the judge drifted with a significant shift, the system's shift is also corrected by it
    (``system - judge``, standard errors added in quadrature) and tested the same way.

    Each verdict needs its own evidence: "judge drifted" needs the anchors to have drifted;
    "system changed" needs the suite to move while the anchors hold (steady); "both" needs the
    anchors to have drifted and the suite's move to differ from the judge's shift.  When the
    suite did not move by itself, "both" says so in its reason (a system change cancelling the
    judge's, or a false alarm of the anchors).  "none": the suite did not move and the anchors did
    not drift; "undetermined": the suite moved and the anchors are inconclusive.
    """
    from scipy import stats

    alpha = _check_alpha(alpha)
    status: Any
    if isinstance(anchors, str):
        status, j_shift, j_se, margin = anchors, None, None, None
    else:
        get = anchors.get if isinstance(anchors, Mapping) else (lambda key: getattr(anchors, key, None))
        status, j_shift, j_se, margin = get("status"), get("shift"), get("shift_se"), get("margin")
        j_p, j_conf = get("shift_p"), get("shift_confidence")
        if isinstance(j_p, (int, float)) and isinstance(j_conf, (int, float)) and not j_p < 1 - j_conf:
            j_shift = j_se = None  # the judge drifted in its noise, not its level: nothing to correct
    if min_change is None:
        min_change = DEFAULT_MIN_DRIFT * float(margin) if isinstance(margin, (int, float)) else 0.0
    if isinstance(min_change, bool) or not isinstance(min_change, (int, float)) or not 0 <= min_change < math.inf:
        raise ReliabilityError(f"min_change must be a finite number >= 0 (scale units), got {min_change!r}")
    if status not in STATUSES:
        raise ReliabilityError(f"anchor status must be one of {STATUSES}, got {status!r}")

    s_shift: float | None = None
    s_se: float | None = None
    c_shift: float | None = None
    c_se: float | None = None
    p: float | None = None
    cancelled = False
    if isinstance(system, (bool, np.bool_)):
        changed = bool(system)
    else:
        if isinstance(system, (int, float)) and not isinstance(system, bool):
            s_shift, s_se = float(system), system_se
        elif all(hasattr(system, a) for a in ("mean", "sd", "n")):
            s_shift, s_se = float(system.mean), float(system.sd) / math.sqrt(system.n)
        else:
            raise ReliabilityError("system must be a bool, a shift with system_se, or an object with mean, sd and n "
                                   f"(a PairedShift); got {type(system).__name__}")
        if s_se is None or isinstance(s_se, bool) or not isinstance(s_se, (int, float)) or not s_se >= 0 \
                or not math.isfinite(s_se) or not math.isfinite(s_shift):
            raise ReliabilityError(f"the system's shift and standard error must be finite numbers (se >= 0), "
                                   f"got {s_shift!r} and {s_se!r}")
        s_se = float(s_se)

        def moved(shift: float, se: float) -> tuple[bool, float]:
            pv = (1.0 if shift == 0 else 0.0) if se == 0 else float(2 * stats.norm.sf(abs(shift) / se))
            return pv < alpha and abs(shift) >= min_change, pv

        raw_moved, p = moved(s_shift, s_se)
        c_shift, c_se = s_shift, s_se
        changed = raw_moved
        if status == "drifted" and j_shift is not None and j_se is not None:
            c_shift, c_se = s_shift - float(j_shift), math.hypot(s_se, float(j_se))
            changed, p = moved(c_shift, c_se)
            cancelled = changed and not raw_moved

    corrected = status == "drifted" and c_shift is not None and c_shift != s_shift
    sys_words = ("the system's scores moved" + (" beyond the judge's shift" if corrected else "")
                 if changed else "the system's scores did not move" + (" beyond the judge's shift" if corrected else ""))
    if status == "drifted":
        if corrected and cancelled:
            verdict = "both"
            reason = ("the anchors show judge drift and the system's scores did not move by themselves, so the system "
                      "moved by about the opposite of the judge's shift; the only other reading is one of the "
                      "anchors' rare false alarms: re-run the anchors to tell")
        elif changed and isinstance(system, (bool, np.bool_)):
            verdict = "judge drifted"
            reason = ("the anchors show judge drift; the system's own change cannot be separated from it "
                      "without the shifts (pass the system's shift and standard error)")
        else:
            verdict = "both" if changed else "judge drifted"
            reason = f"the anchors show judge drift and {sys_words}"
    elif changed:
        verdict = "system changed" if status == "steady" else "undetermined"
        reason = (f"the anchors show a steady judge and {sys_words}" if status == "steady" else
                  f"{sys_words}, but the anchors neither show the judge steady nor drifted: the cause is open")
    else:
        verdict = "none"
        reason = f"{sys_words} and the anchors are {status}"
    return DriftAttribution(verdict=verdict, reason=reason, judge_status=status, system_changed=changed,
                            system_shift=s_shift, system_se=s_se, corrected_shift=c_shift if corrected else None,
                            corrected_se=c_se if corrected else None, p=p, alpha=alpha,
                            min_change=float(min_change))


# --------------------------------------------------------------------------- helpers


def _check_alpha(alpha: Any) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 0.5:
        raise ReliabilityError(f"alpha must lie strictly between 0 and 0.5, got {alpha!r}")
    return float(alpha)


def _pair(v: tuple[float, float] | None) -> list[float] | None:
    return None if v is None else [float(v[0]), float(v[1])]


def _json_float(v: float | None) -> float | str | None:
    """inf as the strings "inf"/"-inf" (JSON has no infinity); NaN never reaches here."""
    if v is None or math.isfinite(v):
        return v
    return "inf" if v > 0 else "-inf"
