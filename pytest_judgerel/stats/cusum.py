"""Across sessions: a self-starting CUSUM over the anchor shifts of a run history.

Every anchor comparison shares the same reference, so the shift estimates of two runs are
correlated (the reference's share of their variance is ``rho = (1/m) / (1/k + 1/m)``, 1/3 at the
defaults) and a control chart on them, or repeated two-run tests, would raise false alarms
whenever the reference happened to be off.  :func:`drift_monitor` uses the self-starting form
(Hawkins 1987, "Self-starting cusum charts for location and scale", *The Statistician* 36): the
baseline is the precision-weighted mean of the reference (shift 0) and all earlier runs, and the
standardised innovations ``z_t = (shift_t - baseline_{t-1}) / sd`` are independent without drift
(innovations of a constant-mean Gaussian model).  A two-sided CUSUM (Page 1954, "Continuous
inspection schemes", *Biometrika* 41) accumulates them, ``S+_t = max(0, S+_{t-1} + z_t - r)``,
``S-_t = max(0, S-_{t-1} - z_t - r)``, and alarms when either exceeds ``h``.
:func:`cusum_decision_limit` calibrates ``h`` by simulating the whole procedure (anchors, variance
estimates, innovations) under the normal model without drift, as the ``1 - false_alarm``
quantile of the largest statistic over ``horizon`` runs, so the chance of any false alarm in the
first ``horizon`` runs is ``false_alarm``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import ReliabilityError
from ._json import json_float

__all__ = ["DEFAULT_MONITOR_FALSE_ALARM", "MonitorStep", "DriftMonitor", "drift_monitor", "cusum_decision_limit"]

DEFAULT_MONITOR_FALSE_ALARM = 0.04
"""Nominal false-alarm rate of the monitor over its horizon.  Exact for normal scores; rounding to
a coarse scale adds to it (benchmarks/bench_drift.py measures it), so the default leaves room to
stay under 5%."""


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
        return {"run": self.run, "shift": self.shift, "baseline": self.baseline, "z": json_float(self.z),
                "upper": json_float(self.upper), "lower": json_float(self.lower), "alarm": self.alarm}


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

    ``comparisons``: :class:`~pytest_judgerel.stats.anchor_drift.AnchorComparison` objects or their
    ``to_dict()`` forms (what the report stores), all against the same reference.  A two-stage
    comparison contributes its first stage (the anchors every run re-judges).  ``reference_value``
    r is the CUSUM's allowance in standard deviations of the innovation (0.5: tuned to shifts of
    about one standard error of a run's shift, a few hundredths of the range at the defaults).  The
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
