"""Per session: fresh anchor scores against their recorded reference -> steady, drifted or inconclusive.

A provider can change the model behind a name, or a server can be re-quantised, and every gate
moves.  The anchors are ~30 items that the judge configuration rates; their *reference* scores
are recorded once (``m`` samples per anchor, default 4), and every later session re-judges them
(``k`` fresh samples, default 1).  The judge's score of anchor i is modelled as ``y = mu_i + b +
e`` with item effect ``mu_i``, a judge offset ``b`` and sampling noise ``e`` (sd ``sigma``).  A
silent change moves ``b`` (a *shift*) or ``sigma`` (a *noise* change; an item-specific
re-ordering of the scores shows the same way).  :func:`anchor_comparison` works on the per-anchor
differences ``d_i = mean(fresh_i) - mean(reference_i)`` (item effects cancel):

* shift: Student's paired t interval and test of the mean of ``d`` (Student 1908), at the level
  :func:`designed_shift_level` chooses by power (Mudge et al. 2012, *PLoS ONE* 7: e32734), at
  most ``alpha - noise_alpha``: Bonferroni with the noise test, so a drift-free judge is called
  "drifted" at most ``alpha`` of the time;
* "no shift beyond the margin": two one-sided t tests (TOST; Schuirmann 1987) of ``|shift| <
  margin`` at level ``alpha``, the ``1 - 2 alpha`` interval inside the margin;
* noise: the permutation test of :mod:`~pytest_judgerel.stats.anchor_noise` (``m >= 2``).

:func:`staged_anchor_comparison` re-judges the first ``screen`` anchors (30) and the reserve only
when those are not *clearly* steady; "drifted" is only ever decided on the full set, so its error
is that of the full test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

import numpy as np

from ..errors import ReliabilityError, ScaleError
from ..scales import Scale, ScaleLike
from ._input import as_vector_or_matrix, check_alpha
from .anchor_noise import NoiseRatio, noise_ratio
from .interval import format_estimate

__all__ = [
    "DEFAULT_MARGIN_FRACTION", "DEFAULT_MIN_ANCHORS", "DEFAULT_MIN_DRIFT", "DEFAULT_REFERENCE_SAMPLES",
    "DEFAULT_NOISE_ALPHA", "DEFAULT_POWER", "DEFAULT_MIN_LEVEL", "DEFAULT_MAX_LEVEL",
    "DEFAULT_SCREEN_ANCHORS", "DEFAULT_SCREEN_P", "DEFAULT_SCREEN_NOISE_P",
    "COARSE_LEVELS", "COARSE_REFERENCE_SAMPLES", "AnchorComparison", "anchor_comparison", "designed_shift_level",
    "reference_samples_for", "staged_anchor_comparison",
]

DEFAULT_MARGIN_FRACTION = 0.10
"""Equivalence margin of "steady": a tenth of the scale's range (1 point on 0-10), the size of the
shift the anchors must catch (benchmarks/bench_drift.py); a judge whose anchor mean moved by less is
treated as the same judge."""
DEFAULT_MIN_DRIFT = 0.5
"""A significant shift counts as drift only when it is at least this fraction of the margin
(0.05 of the range by default), so that many anchors do not call a negligible shift a drift."""
DEFAULT_NOISE_ALPHA = 0.025
"""Level of the noise test (permutation test, nine tenths of it to an increase of the noise:
:data:`~pytest_judgerel.stats.anchor_noise.UP_SHARE`); the shift test gets at most
``alpha - noise_alpha``, so the two together keep ``alpha`` (Bonferroni)."""
DEFAULT_POWER = 0.95
"""Power against a shift of the margin that :func:`designed_shift_level` keeps; the shift test's
level is the smallest that keeps it."""
DEFAULT_MAX_LEVEL = 0.025
"""Highest level of the shift test: half the 5% bound.  The t test on the rounded differences of a
coarse scale runs above its nominal level, so the full ``alpha - noise_alpha`` would leave no room;
at 0.025 it keeps the power (benchmarks/bench_drift.py measures both)."""
DEFAULT_MIN_LEVEL = 0.001
"""Lowest level of the shift test: the t approximation to the mean of a few dozen discrete
differences is not trusted further into the tail."""
DEFAULT_SCREEN_ANCHORS = 30
"""Anchors re-judged in the first stage of :func:`staged_anchor_comparison`."""
DEFAULT_SCREEN_P = 0.3
DEFAULT_SCREEN_NOISE_P = 0.3
"""The first stage stops (steady) only when the shift's p >= 0.3 and the noise test's p >= 0.3:
rarely for a shift of the margin, often for a drift-free judge (benchmarks/bench_drift.py)."""
DEFAULT_MIN_ANCHORS = 10
"""Below this many anchors no claim is made ("inconclusive"): the t approximation for the mean of
a few discrete scores is not trusted, and neither claim would have useful power."""
DEFAULT_REFERENCE_SAMPLES = 4
"""Reference samples per anchor to record (once per anchor set) on a scale of more than
:data:`COARSE_LEVELS` levels: 2 make a change of noise visible
(:mod:`~pytest_judgerel.stats.anchor_noise`); 4 halve the reference's own error, which every
later session inherits (benchmarks/bench_drift.py)."""
COARSE_REFERENCE_SAMPLES = 8
"""Reference samples per anchor on a coarse scale: most anchors of a judge with little noise
never vary there, and the reference must show which do, or a doubling of the noise is missed."""
COARSE_LEVELS = 7
"""A scale with at most this many levels (1-5, 0-5, 1-7) is coarse."""

STATUSES = ("steady", "drifted", "inconclusive")


def reference_samples_for(scale: ScaleLike) -> int:
    """Reference samples per anchor to record on ``scale``: :data:`COARSE_REFERENCE_SAMPLES` on a
    scale of at most :data:`COARSE_LEVELS` levels, else :data:`DEFAULT_REFERENCE_SAMPLES`."""
    points = _scale_of(scale).points
    return COARSE_REFERENCE_SAMPLES if points is not None and len(points) <= COARSE_LEVELS \
        else DEFAULT_REFERENCE_SAMPLES


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
    sc = _scale_of(scale)
    alpha = check_alpha(alpha)
    _check_options(alpha, noise_alpha, power, min_level, max_level, min_drift, min_anchors, nan_policy,
                   n_permutations)
    margin = _checked_margin(margin, sc)
    ids, ref, new, n_omitted = _complete_anchors(reference, fresh, sc, nan_policy)
    n, m, k = int(ref.shape[0]), ref.shape[1], new.shape[1]
    noise_alpha = float(noise_alpha) if m >= 2 else 0.0
    shift_alpha = min(float(max_level), alpha - noise_alpha)
    if power is not None and m >= 2 and n >= min_anchors:
        shift_alpha = _designed_level_of(ref, k, sc, margin, float(power), shift_alpha, float(min_level))
    d = new.mean(axis=1) - ref.mean(axis=1)
    base: dict[str, Any] = dict(n=n, n_omitted=n_omitted, reference_samples=m, fresh_samples=k, scale=sc.name,
                scale_range=float(sc.range), margin=margin, alpha=alpha, shift_confidence=1 - shift_alpha,
                reference_share=(1 / m) / (1 / k + 1 / m), noise_alpha=noise_alpha, anchor_ids=ids,
                differences=tuple(float(x) for x in d))
    if n < min_anchors:
        return AnchorComparison(
            status="inconclusive",
            reasons=(f"too few anchors: {n} usable (min_anchors {min_anchors}); no claim either way",),
            shift=float(d.mean()), shift_ci=None, shift_se=None, shift_p=None, equivalence_p=None,
            equivalence_ci=None, noise=None, agreement=None, agreement_ci=None, **base)
    return _compare(ref, new, sc, margin, alpha, shift_alpha, noise_alpha, min_drift, n_permutations, seed, base)


def _check_options(alpha: float, noise_alpha: Any, power: Any, min_level: Any, max_level: Any, min_drift: Any,
                   min_anchors: Any, nan_policy: Any, n_permutations: Any) -> None:
    """The options of :func:`anchor_comparison` (``alpha`` already checked)."""
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


def _checked_margin(margin: Any, sc: Scale) -> float:
    """The equivalence margin in scale units (default :data:`DEFAULT_MARGIN_FRACTION` of the range)."""
    if margin is None:
        margin = DEFAULT_MARGIN_FRACTION * sc.range
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0 < margin < math.inf:
        raise ReliabilityError(f"the margin must be a finite number > 0 (scale units), got {margin!r}")
    return float(margin)


def _complete_anchors(reference: Any, fresh: Any, sc: Scale, nan_policy: str
                      ) -> tuple[tuple[Any, ...] | None, np.ndarray, np.ndarray, int]:
    """(anchor ids, reference, fresh, anchors omitted): the aligned anchors with all their scores,
    every score on the scale."""
    ids, ref, new = _align(reference, fresh)
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
    n_omitted = int(missing.sum())
    if ref.shape[0] == 0:
        raise ReliabilityError(f"no anchor has all its scores ({n_omitted} omitted)")
    return ids, ref, new, n_omitted


def _designed_level_of(ref: np.ndarray, k: int, sc: Scale, margin: float, power: float, max_level: float,
                       min_level: float) -> float:
    """:func:`designed_shift_level` for these anchors: the judge's noise read from the reference."""
    n, m = ref.shape
    within = float(np.sqrt(((ref - ref.mean(axis=1, keepdims=True)) ** 2).sum() / (n * (m - 1))))
    return designed_shift_level(within, n, m, k, margin, step=0.0 if sc.fractional else float(sc.step),
                                power=power, max_level=max_level, min_level=min(min_level, max_level))


def _compare(ref: np.ndarray, new: np.ndarray, sc: Scale, margin: float, alpha: float, shift_alpha: float,
             noise_alpha: float, min_drift: float, n_permutations: int, seed: int,
             base: dict[str, Any]) -> AnchorComparison:
    """The shift, equivalence and noise tests on enough complete anchors, and the status they give."""
    from .bias import equivalence_test, paired_shift

    n, m = ref.shape
    d = new.mean(axis=1) - ref.mean(axis=1)
    ps = paired_shift(ref.mean(axis=1), new.mean(axis=1), confidence=1 - shift_alpha)
    eq = equivalence_test(d, margin, alpha=alpha, bound=float(sc.range))  # |d| cannot exceed the range
    noise = noise_ratio(ref, new, float(ps.mean), n_permutations, seed) if m >= 2 else None
    agreement, agreement_ci = _agreement(ref.mean(axis=1), new.mean(axis=1))
    reasons = _drift_reasons(ps, noise, float(sc.range), shift_alpha, noise_alpha, min_drift * margin)
    if reasons:
        status = "drifted"
    elif eq.equivalent:
        status = "steady"
        reasons.append(f"|shift| < {margin:g} shown (TOST p = {eq.p:.2g}; {1 - 2 * alpha:.0%} interval "
                       f"{eq.ci_low:+.3g}, {eq.ci_high:+.3g})")
        if ps.p < shift_alpha:
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
        agreement_ci=agreement_ci, **base)


def _drift_reasons(ps: Any, noise: NoiseRatio | None, scale_range: float, shift_alpha: float, noise_alpha: float,
                   min_shift: float) -> list[str]:
    """Why the judge drifted, if it did: a significant shift of at least ``min_shift``, a change of noise."""
    reasons: list[str] = []
    if ps.p < shift_alpha and abs(ps.mean) >= min_shift:
        reasons.append(f"the judge's scores shifted by {ps.mean:+.3g} ({ps.mean / scale_range:+.1%} of the range; "
                       f"p = {ps.p:.2g} < {shift_alpha:.2g})")
    if noise is not None and noise.p < noise_alpha:
        what = ("scatter more around the reference than the judge's recorded noise"
                if noise.direction == "up" else "scatter less around the reference than the judge's recorded noise")
        ratio = "" if noise.value is None else f" (noise ratio {noise.value:.2f})"
        reasons.append(f"the fresh scores {what}{ratio}; p = {noise.p:.2g} < {noise_alpha:g}")
    return reasons


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
    (``{id: score or [scores]}``, NaN or None for a failed call); it is called for the first stage,
    for reserve anchors that replace the first stage's unanswered ones, and, unless that stage is
    clearly steady, once more for the rest of the reserve.  ``options`` go to
    :func:`anchor_comparison` (with ``nan_policy="omit"`` for unanswered anchors).  The design needs
    ``min(screen, anchors)`` answered anchors: with fewer, a comparison that is not "drifted" is
    "inconclusive", with the reason (a drift shown on fewer anchors keeps its error rate).
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
    answered = [a for a in first if _answered(fresh.get(a))]
    while len(answered) < len(first) and reserve:  # a failed call is replaced from the reserve
        take, reserve = reserve[:len(first) - len(answered)], reserve[len(first) - len(answered):]
        fresh.update(dict(judge(take)))
        answered += [a for a in take if _answered(fresh.get(a))]
    asked = [a for a in ids if a in fresh]
    if not answered:
        raise ReliabilityError(f"none of the {len(asked)} anchors asked was answered: no comparison")
    if not reserve:
        return _designed_minimum(anchor_comparison({a: reference[a] for a in asked}, fresh, scale, **options),
                                 min(screen, len(ids)), len(asked))
    stage1 = anchor_comparison({a: reference[a] for a in answered}, {a: fresh[a] for a in answered}, scale,
                               **options)
    clear = (stage1.status == "steady" and stage1.shift_p is not None and stage1.shift_p >= screen_p
             and (stage1.noise is None or stage1.noise.p >= screen_noise_p) and len(answered) >= screen)
    if clear:
        note = (f"first stage: {len(first)} anchors clearly steady (shift p = {stage1.shift_p:.2g} >= {screen_p:g}"
                + ("" if stage1.noise is None else f", noise p = {stage1.noise.p:.2g} >= {screen_noise_p:g}")
                + f"); the {len(reserve)} reserve anchors were not asked")
        return replace(stage1, reasons=stage1.reasons + (note,), screened=len(first), reserve_skipped=len(reserve),
                       n_omitted=len(asked) - len(answered))
    fresh.update(dict(judge(reserve)))
    asked = [a for a in ids if a in fresh]
    final = anchor_comparison({a: reference[a] for a in asked}, fresh, scale, **options)
    note = f"first stage: {len(first)} anchors not clearly steady ({stage1.status}); decided on all {len(asked)}"
    final = replace(final, reasons=final.reasons + (note,), screened=len(first), reserve_skipped=0,
                    first_stage=stage1)
    return _designed_minimum(final, screen, len(asked))


def _answered(value: Any) -> bool:
    """Whether an anchor's fresh score(s) hold no missing value (a failed or unreadable call)."""
    if value is None:
        return False
    values = [value] if np.ndim(value) == 0 else list(value)
    return bool(values) and all(v is not None and not (isinstance(v, float) and math.isnan(v)) for v in values)


def _designed_minimum(comp: AnchorComparison, needed: int, asked: int) -> AnchorComparison:
    """``comp``, "inconclusive" when fewer than ``needed`` anchors were answered and it is not "drifted"."""
    if comp.n >= needed:
        return comp
    reason = (f"only {comp.n} of {asked} anchors asked were answered (the design needs {needed}; "
              f"{comp.n_omitted} without a fresh score)")
    if comp.status == "drifted":
        return replace(comp, reasons=comp.reasons + (reason,))
    return replace(comp, status="inconclusive", reasons=(reason + "; no claim of steadiness",) + comp.reasons)


def _agreement(ref_means: np.ndarray, new_means: np.ndarray) -> tuple[float | None, tuple[float, float] | None]:
    from .icc import icc

    try:
        res = icc(np.column_stack([ref_means, new_means]), "A,1")
    except ReliabilityError:
        return None, None
    if not all(math.isfinite(v) for v in (res.value, res.ci_low, res.ci_high)):
        return None, None
    return float(res.value), (float(res.ci_low), float(res.ci_high))


def _pair(v: tuple[float, float] | None) -> list[float] | None:
    return None if v is None else [float(v[0]), float(v[1])]
