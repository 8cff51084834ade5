"""The win rate of a candidate over a baseline from pairwise verdicts, ties split, clustered by item.

Each readable verdict scores the candidate 1 (win), 0.5 (tie) or 0 (loss); an item's score is the
mean of its verdicts (every repeat, both answer orders), and the win rate is the mean item score:
items, not verdicts, are the independent units (verdicts of one item share its answers).  The
per-order scores are averaged, so a judge's position preference cancels when every pair is shown
both ways (Zheng et al. 2023, arXiv 2306.05685, section 3.3); MT-Bench's conservative rule (a win
only when both orders agree) shrinks towards 0.5, which would flatter a worse candidate.

Interval: exact Clopper-Pearson (1934) when every item has one verdict and none is a tie (a
binomial count); otherwise the studentized cluster bootstrap over items (bootstrap-t, Efron &
Tibshirani 1993, "An Introduction to the Bootstrap", ch. 12.5; items resampled with all their
verdicts, Field & Welsh 2007, JRSS-B 69, for clustered data; the percentile interval when item
scores are nearly constant and t is undefined in many resamples).  A one-sided level-alpha test takes
the lower bound of the two-sided ``1 - 2 alpha`` interval.  :func:`ppi_win_rate` is the PPI++
estimate of the human win rate (Angelopoulos et al. 2023, arXiv 2311.01453) from human preference
labels on a subset of items.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from ..errors import ReliabilityError
from .interval import HasInterval, check_confidence

__all__ = ["WinRate", "win_rate", "consistent_verdict", "OUTCOME_SCORE", "ppi_win_rate", "N_BOOT"]

OUTCOME_SCORE = {"candidate": 1.0, "tie": 0.5, "baseline": 0.0}
"""The candidate's score for each verdict (a tie counts half a win)."""

N_BOOT = 2000
"""Bootstrap resamples of the cluster bootstrap-t interval."""


@dataclass(frozen=True)
class WinRate(HasInterval):
    """The candidate's win rate ``value`` (ties split) over ``n`` items with its interval.

    ``wins``/``ties``/``losses`` count readable verdicts; ``n_verdicts`` their total;
    ``n_omitted`` items had no readable verdict; ``item_scores`` each item's mean score;
    ``method`` ``"Clopper-Pearson"``, ``"cluster bootstrap-t"``, ``"cluster bootstrap (percentile)"``
    or ``"Clopper-Pearson (no spread)"`` (see :func:`win_rate`)."""

    value: float
    ci_low: float
    ci_high: float
    confidence: float
    n: int
    n_verdicts: int
    wins: int
    ties: int
    losses: int
    method: str
    n_omitted: int = 0
    item_scores: Mapping[str, float] = field(default_factory=dict, repr=False)

    @property
    def _interval_method(self) -> str:  # type: ignore[override]
        return self.method

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "ci": [self.ci_low, self.ci_high], "confidence": self.confidence,
                "n": self.n, "n_verdicts": self.n_verdicts, "wins": self.wins, "ties": self.ties,
                "losses": self.losses, "method": self.method, "n_omitted": self.n_omitted}

    def __str__(self) -> str:
        return (f"win rate {self.formatted(3)} over {self.n} items ({self.wins} wins, {self.ties} ties, "
                f"{self.losses} losses)")


def consistent_verdict(first: str | None, second: str | None) -> str:
    """The verdict of one pair judged in both orders (each in candidate terms: ``"candidate"``,
    ``"baseline"``, ``"tie"`` or None when unreadable): the verdict when both agree,
    ``"inconsistent"`` when they differ, ``"missing"`` when either is unreadable."""
    if first is None or second is None:
        return "missing"
    return first if first == second else "inconsistent"


def _scores(outcomes: Any) -> tuple[list[str], list[np.ndarray]]:
    if isinstance(outcomes, Mapping):
        ids, rows = [str(k) for k in outcomes], list(outcomes.values())
    else:
        rows = list(outcomes)
        ids = [str(i) for i in range(len(rows))]
    arrays = []
    for iid, row in zip(ids, rows):
        vals = np.array([np.nan if v is None else float(v) for v in np.atleast_1d(np.asarray(row, dtype=object))])
        bad = vals[np.isfinite(vals) & ~np.isin(vals, (0.0, 0.5, 1.0))]
        if bad.size:
            raise ReliabilityError(f"item {iid}: verdict score {bad[0]!r} is not 0 (loss), 0.5 (tie) or 1 (win)")
        arrays.append(vals[np.isfinite(vals)])
    return ids, arrays


def win_rate(outcomes: Any, *, confidence: float = 0.95, n_boot: int = N_BOOT, seed: int = 0) -> WinRate:
    """The candidate's win rate with ties split and its item-clustered interval.

    ``outcomes``: per item the candidate's score of each verdict (1, 0.5, 0; None or NaN for an
    unreadable one), as ``{item id: [scores]}`` or a sequence of sequences.  Items without a
    readable verdict are left out (``n_omitted``).  Exact when every item has one verdict and none
    is a tie, else the cluster bootstrap-t (``n_boot`` resamples from ``seed``).
    """
    conf = check_confidence(confidence)
    ids, arrays = _scores(outcomes)
    keep = [(i, a) for i, a in zip(ids, arrays) if a.size]
    if not keep:
        raise ReliabilityError("no item has a readable verdict: no win rate")
    scores = np.array([a.mean() for _, a in keep])
    flat = np.concatenate([a for _, a in keep])
    wins, ties, losses = int((flat == 1).sum()), int((flat == 0.5).sum()), int((flat == 0).sum())
    n = scores.size
    value = float(scores.mean())
    if all(a.size == 1 for _, a in keep) and ties == 0:
        lo, hi, method = *_exact(wins, n, conf), "Clopper-Pearson"
    else:
        lo, hi, method = _bootstrap_t(scores, conf, n_boot, seed)
    return WinRate(value, lo, hi, conf, n, int(flat.size), wins, ties, losses, method, len(ids) - n,
                   {i: float(a.mean()) for i, a in keep})


def _exact(count: int, n: int, conf: float) -> tuple[float, float]:
    from .proportion import clopper_pearson

    cp = clopper_pearson(count, n, conf)
    return cp.ci_low, cp.ci_high


def _bootstrap_t(scores: np.ndarray, conf: float, n_boot: int, seed: int) -> tuple[float, float, str]:
    """Studentized bootstrap interval of the mean of ``scores`` (items resampled) and its method.
    When more than alpha/4 of the resamples have no spread (nearly constant item scores: their t is
    undefined) it is the percentile interval of the resampled means instead.  A sample with no
    spread at all has no standard error: its interval is the exact one of the counts it implies
    (floor and ceiling of ``mean * n`` wins of ``n``)."""
    n = scores.size
    mean = float(scores.mean())
    se = float(scores.std(ddof=1)) / math.sqrt(n) if n > 1 else 0.0
    if se == 0.0:
        lo, _ = _exact(int(math.floor(mean * n + 1e-9)), n, conf)
        _, hi = _exact(int(math.ceil(mean * n - 1e-9)), n, conf)
        return min(lo, mean), max(hi, mean), "Clopper-Pearson (no spread)"
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 100:
        raise ReliabilityError(f"n_boot must be an integer >= 100, got {n_boot!r}")
    rng = np.random.default_rng(seed)
    draws = scores[rng.integers(0, n, size=(n_boot, n))]
    m = draws.mean(axis=1)
    s = draws.std(axis=1, ddof=1) / math.sqrt(n)
    alpha = 1 - conf
    if float((s == 0).mean()) > alpha / 4:  # nearly constant scores: t has no distribution, take percentiles
        lo, hi = np.quantile(m, [alpha / 2, 1 - alpha / 2])
        return max(0.0, min(float(lo), mean)), min(1.0, max(float(hi), mean)), "cluster bootstrap (percentile)"
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(s > 0, (m - mean) / s, np.sign(m - mean) * np.inf)
    t = np.nan_to_num(t, nan=0.0)
    q_lo, q_hi = np.quantile(t, [alpha / 2, 1 - alpha / 2], method="higher")
    lo = mean - float(q_hi) * se if math.isfinite(q_hi) else 0.0
    hi = mean - float(q_lo) * se if math.isfinite(q_lo) else 1.0
    return max(0.0, min(lo, mean)), min(1.0, max(hi, mean)), "cluster bootstrap-t"


def ppi_win_rate(item_scores: Mapping[str, float], human: Mapping[str, Any], *, confidence: float = 0.95) -> Any:
    """PPI++ estimate of the win rate humans would give, from the judge's ``item_scores`` on every
    item and human preference labels (``"candidate"``/``"baseline"``/``"tie"`` or 1/0.5/0) on a
    subset (:func:`pytest_judgerel.stats.ppi.ppi_mean`, lambda tuned).  Returns its ``PPIMean``."""
    from .ppi import ppi_mean

    unknown = sorted(set(map(str, human)) - set(item_scores))
    if unknown:
        raise ReliabilityError(f"human labels for items the judge did not compare: {unknown[:5]}")
    labels = {str(k): _human_score(k, v) for k, v in human.items()}
    labeled = [k for k in item_scores if k in labels]
    rest = [k for k in item_scores if k not in labels]
    return ppi_mean([item_scores[k] for k in labeled], [labels[k] for k in labeled],
                    [item_scores[k] for k in rest], confidence=confidence)


def _human_score(item: Any, label: Any) -> float:
    if isinstance(label, str) and label in OUTCOME_SCORE:
        return OUTCOME_SCORE[label]
    if not isinstance(label, bool) and isinstance(label, (int, float)) and float(label) in (0.0, 0.5, 1.0):
        return float(label)
    raise ReliabilityError(f"human label {label!r} of item {item}: use 'candidate', 'baseline', 'tie' or 1, 0, 0.5")

