"""What every reliability gate adds to its metric record: how far its verdict can be trusted.

* ``p_pass``: the predicted probability that the same gate passes on a rerun
  (:mod:`pytest_judgerel.stats.stability`, ``predictive=True``: two-stage resampling, so the
  rerun's own sampling noise counts as well as the uncertainty of this run).  Which rerun: where
  the data has repeated judge samples per item (an ICC over repeats), a rerun on the *same items
  with new judge samples* (what a cache refresh in CI does); ``p_pass_new_items`` then adds the
  prediction for a rerun on *new items* (and new samples).  Where the data has no repeats,
  ``p_pass`` predicts a rerun on new items.  0.05 < p_pass < 0.95 marks the verdict unstable.
  It covers the pooled check(s) of the gate (every threshold at once); per-group verdicts are
  listed per group.  ``benchmarks/bench_calibration.py`` checks the calibration.
* ``repeats_needed``: for an ICC of single samples over repeats, how many samples per item
  the mean needs to reach the threshold (Spearman-Brown; :mod:`pytest_judgerel.stats.planning`),
  with the CI of that number.

Seeded (``SEED``), so a rerun on the same cache prints the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from ..errors import ReliabilityError

if TYPE_CHECKING:  # pragma: no cover
    from ..session.recording import MetricRecord

__all__ = ["N_BOOT", "SEED", "RERUNS", "GateStability", "icc_gate_stability", "scale_gate_stability", "agreement_gate_stability",
           "mean_gate_stability", "repeats_plan", "attach_stability"]

N_BOOT = 1000
SEED = 0


def _combined(tests: list[Callable[[np.ndarray], np.ndarray]]) -> Callable[[np.ndarray], np.ndarray]:
    """A vectorized statistic that is 1.0 where every test passes on a stack (B, n, k), else 0.0."""

    def statistic(stack: np.ndarray) -> Any:
        single = stack.ndim == 2  # the observed data itself, not a stack of resamples
        stack = stack[None] if single else stack
        ok = np.ones(stack.shape[0], dtype=bool)
        for test in tests:
            with np.errstate(all="ignore"):
                ok &= test(stack)
        return float(ok[0]) if single else ok.astype(float)

    statistic.vectorized = True  # type: ignore[attr-defined]
    return statistic


def _icc_passes(form: str, use: str, confidence: float, threshold: float, columns: Any = None
                ) -> Callable[[np.ndarray], np.ndarray]:
    from ..stats.icc_batch import icc_statistic, icc_values

    if use == "estimate":
        def test(stack: np.ndarray) -> np.ndarray:
            values = icc_values(stack if columns is None else stack[:, :, columns], form)
            return np.isfinite(values) & (values >= threshold)
    else:  # the lower CI bound has no batch form: one resample at a time
        one = icc_statistic(form, use, confidence)

        def test(stack: np.ndarray) -> np.ndarray:
            sub = stack if columns is None else stack[:, :, columns]
            values = np.asarray(one(sub), dtype=float)
            return np.isfinite(values) & (values >= threshold)
    return test


RERUNS = {"items": "new items", "repeats": "same items, new judge samples",
          "items+repeats": "new items, new judge samples",
          "labelled+unlabelled items": "new labelled and unlabelled items (bootstrap share, not a predictive "
                                       "probability)"}
"""Which rerun a predictive p_pass of each resampling scheme predicts."""


@dataclass(frozen=True)
class GateStability:
    """The p_pass of a gate whose data has repeats: ``same_items`` (a rerun with new judge samples
    on the same items; the record's ``p_pass``) and ``new_items`` (``p_pass_new_items``)."""

    same_items: Any
    new_items: Any


def _stability(tests: list[Callable[[np.ndarray], np.ndarray]], matrix: np.ndarray, resample: str,
               name: str) -> Any:
    from ..stats.stability import verdict_stability

    statistic = _combined(tests)
    statistic.name = name  # type: ignore[attr-defined]
    try:
        return verdict_stability(statistic, matrix, 0.5, "min", resample=resample, n_boot=N_BOOT, seed=SEED,
                                 nan_policy="omit", predictive=True)
    except ReliabilityError:
        return None  # e.g. fewer than 2 complete items: no verdict to resample


def icc_gate_stability(ratings: Any, form: str, use: str, confidence: float, threshold: float,
                       over_repeats: bool) -> Any:
    """p_pass of ``ICC(form) >= threshold`` (``use``: estimate or lower CI bound): over repeats a
    :class:`GateStability` (same items with new samples, and new items), otherwise the rerun on
    new items of ``ratings``."""
    matrix = np.asarray(ratings.to_matrix() if hasattr(ratings, "to_matrix") else ratings, dtype=float)
    if matrix.ndim != 2 or matrix.shape[1] < 2:
        return None
    tests = [_icc_passes(form, use, confidence, threshold)]
    name = f"ICC({form}) >= {threshold:g}"
    if not over_repeats:
        return _stability(tests, matrix, "items", name)
    same = _icc_over_repeats(matrix, form, use, confidence, threshold, "repeats", name)
    return None if same is None else GateStability(
        same, _icc_over_repeats(matrix, form, use, confidence, threshold, "items+repeats", name))


def _icc_over_repeats(matrix: np.ndarray, form: str, use: str, confidence: float, threshold: float,
                      resample: str, name: str) -> Any:
    """Predictive p_pass of an ICC over repeats: reruns simulated from the one-way random-effects
    model (``model="one-way"``, :mod:`pytest_judgerel.stats.stability`), each judged on the ICC
    itself (not the 0/1 verdict of the gate's other checks)."""
    from ..stats.icc_batch import icc_statistic
    from ..stats.stability import verdict_stability

    icc_stat = icc_statistic(form, use, confidence)

    def statistic(x: np.ndarray) -> Any:
        return icc_stat(x)

    statistic.vectorized = icc_stat.vectorized  # type: ignore[attr-defined]
    statistic.name = icc_stat.name  # type: ignore[attr-defined]  # the threshold is printed beside it
    try:
        return verdict_stability(statistic, matrix, threshold, "min", resample=resample, n_boot=N_BOOT, seed=SEED,
                                 nan_policy="omit", predictive=True, model="one-way")
    except ReliabilityError:
        return None  # e.g. fewer than 2 complete items, or no ICC on the data itself


def scale_gate_stability(normalized: Any, form: str, use: str, confidence: float, min_icc: float,
                         pairwise: bool) -> Any:
    """p_pass of an inter-scale consistency gate (joint and, ``pairwise``, every pair) on the
    items x scales matrix of per-item means on [0, 1]."""
    matrix = np.asarray(normalized, dtype=float)
    s = matrix.shape[1]
    tests = [_icc_passes(form, use, confidence, min_icc)]
    if pairwise:
        tests += [_icc_passes(form, use, confidence, min_icc, [i, j]) for i in range(s) for j in range(i + 1, s)]
    return _stability(tests, matrix, "items", f"ICC({form}) across scales >= {min_icc:g}")


def agreement_gate_stability(human_means: Any, judge_means: Any, min_icc: float | None, max_nmae: float | None,
                             use: str, confidence: float) -> Any:
    """p_pass of an agreement gate (ICC(A,1) of [human, judge] and/or nMAE) on resampled items;
    both sides as item means on [0, 1]."""
    matrix = np.column_stack([np.asarray(human_means, dtype=float), np.asarray(judge_means, dtype=float)])
    tests: list[Callable[[np.ndarray], np.ndarray]] = []
    if min_icc is not None:
        tests.append(_icc_passes("A,1", use, confidence, min_icc))
    if max_nmae is not None:
        tests.append(lambda stack: np.abs(stack[:, :, 1] - stack[:, :, 0]).mean(axis=1) <= max_nmae)
    parts = ([f"ICC(A,1) >= {min_icc:g}"] if min_icc is not None else []) + (
        [f"nMAE <= {max_nmae:g}"] if max_nmae is not None else [])
    return _stability(tests, matrix, "items", " and ".join(parts))


def _bound(kind: str, confidence: float) -> Callable[[np.ndarray], np.ndarray]:
    """Per resample (rows of ``x``, shape (B, n)): the mean, its Student t bounds, the Wilson
    bounds of a share of 0/1 values (Wilson 1927), or (``sign_p``) the exact two-sided sign-test
    p value of the +1 against the -1 entries, as the probe gates compute them."""
    from scipy import stats as st

    def f(x: np.ndarray) -> np.ndarray:
        n = x.shape[1]
        if kind == "sign_p":  # x holds +1 (first position won), -1 (second), 0: exact two-sided sign test
            first, second = (x > 0).sum(axis=1), (x < 0).sum(axis=1)
            tail = st.binom.cdf(np.minimum(first, second), first + second, 0.5)
            return np.where(first + second == 0, 1.0, np.minimum(1.0, 2 * tail))
        mean = x.mean(axis=1)
        if kind == "mean":
            return mean
        if kind == "abs_mean":
            return np.abs(mean)
        if kind.startswith("t_") or kind == "abs_t":
            half = st.t.ppf(0.5 + confidence / 2, n - 1) * x.std(axis=1, ddof=1) / np.sqrt(n)
            if kind == "t_low":
                return mean - half
            if kind == "t_high":
                return mean + half
            return np.maximum(np.abs(mean - half), np.abs(mean + half))
        z = st.norm.ppf(0.5 + confidence / 2)
        centre = (mean + z * z / (2 * n)) / (1 + z * z / n)
        half = z * np.sqrt(mean * (1 - mean) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return centre - half if kind == "wilson_low" else centre + half

    return f


def mean_gate_stability(values: Any, threshold: float, direction: str, bound: str = "mean",
                        confidence: float = 0.95, extra: Sequence[tuple[int, str, float, str]] = (), name: str = ""
                        ) -> Any:
    """p_pass of a gate on per-item values (a column each): ``bound`` of column 0 (``mean``,
    ``abs_mean``, ``t_low``, ``t_high``, ``abs_t``, ``wilson_low``, ``wilson_high``, ``sign_p``) against
    ``threshold`` in ``direction``; ``extra`` adds ``(column, bound, threshold, direction)``
    checks that must pass too.  Items are resampled with replacement."""
    matrix = np.asarray(values, dtype=float)
    matrix = matrix[:, None] if matrix.ndim == 1 else matrix

    def check(column: int, kind: str, thr: float, side: str) -> Callable[[np.ndarray], np.ndarray]:
        f = _bound(kind, confidence)

        def test(stack: np.ndarray) -> np.ndarray:
            v = f(stack[:, :, column])
            return np.isfinite(v) & (v >= thr if side == "min" else v <= thr)
        return test

    tests = [check(0, bound, threshold, direction)] + [check(*c) for c in extra]
    return _stability(tests, matrix, "items", name)


def repeats_plan(result: Any, threshold: float) -> Any:
    """Samples per item whose mean reaches ``threshold``, from a single-sample ICC result (with its
    CI); None for average-measure forms or when it cannot be computed."""
    from ..stats.planning import repeats_needed

    form = str(getattr(result, "form", ""))
    if form.endswith("k") or not 0 < threshold < 1:
        return None
    try:
        return repeats_needed(result, threshold)
    except ReliabilityError:
        return None


def attach_stability(rec: "MetricRecord", stability: Any) -> None:
    """Put ``p_pass`` (and ``p_pass_new_items`` for data with repeats; the stability details
    under ``stability``) into a metric record."""
    if stability is None:
        rec["p_pass"] = None
        return
    new_items = None
    if isinstance(stability, GateStability):
        stability, new_items = stability.same_items, stability.new_items
    rec["p_pass"] = stability.p_pass
    rec["stability"] = {"p_pass": stability.p_pass, "unstable": stability.unstable, "n_boot": stability.n_boot,
                        "seed": stability.seed, "resample": stability.resample,
                        "n_undefined": stability.n_undefined, "statistic": stability.statistic,
                        "predictive": stability.predictive, "predicts": RERUNS[stability.resample],
                        "recentred": getattr(stability, "recentred", False),
                        "model": getattr(stability, "model", "bootstrap"),
                        "rough": getattr(stability, "rough", False),
                        "rough_reason": getattr(stability, "rough_reason", "")}
    if new_items is not None:
        rec["p_pass_new_items"] = new_items.p_pass
        rec["stability"]["p_pass_new_items"] = new_items.p_pass
        rec["stability"]["new_items_resample"] = new_items.resample
        rec["stability"]["new_items_rough"] = new_items.rough
