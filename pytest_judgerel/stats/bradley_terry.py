"""Bradley-Terry strengths of several systems from pairwise verdicts, ties split, with item-clustered intervals.

Bradley & Terry (1952, Biometrika 39): ``P(i beats j) = pi_i / (pi_i + pi_j)``.  A tie counts half
a win for each side (as the win rate does; Rao & Kupper 1967 model ties explicitly, which changes
the scale of the strengths, not their order).  The maximum-likelihood strengths are found by
Hunter's (2004, Annals of Statistics 32) MM iteration ``pi_i <- W_i / sum_j n_ij / (pi_i + pi_j)``,
normalised to a mean log-strength of 0.  Intervals resample items (every comparison of an item
together, the cluster bootstrap; percentile intervals), as the win rate's do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..errors import ReliabilityError
from .interval import check_confidence

__all__ = ["BradleyTerry", "bradley_terry", "fit_strengths"]


@dataclass(frozen=True)
class BradleyTerry:
    """Log-strengths ``strength[system]`` (mean 0) and, for each ordered pair, the probability that
    the first beats the second with its percentile interval (``win_probability[(a, b)]`` =
    ``(estimate, low, high)``).  ``n`` items, ``n_comparisons`` verdicts."""

    systems: tuple[str, ...]
    strength: dict[str, float]
    win_probability: dict[tuple[str, str], tuple[float, float, float]]
    confidence: float
    n: int
    n_comparisons: int
    n_boot: int = 0
    strength_ci: dict[str, tuple[float, float]] = field(default_factory=dict)

    def ranking(self) -> list[str]:
        """Systems from the strongest to the weakest."""
        return sorted(self.systems, key=lambda s: -self.strength[s])

    def to_dict(self) -> dict[str, Any]:
        return {"systems": list(self.systems), "strength": dict(self.strength),
                "strength_ci": {s: list(v) for s, v in self.strength_ci.items()}, "confidence": self.confidence,
                "n": self.n, "n_comparisons": self.n_comparisons}


def fit_strengths(wins: np.ndarray, games: np.ndarray, iters: int = 500, tol: float = 1e-10) -> np.ndarray:
    """Log-strengths (mean 0) from ``wins[i, j]`` (i's wins over j, ties as halves) and ``games[i, j]``."""
    k = wins.shape[0]
    total = wins.sum(axis=1)
    pi = np.ones(k)
    for _ in range(iters):
        denom = (games / (pi[:, None] + pi[None, :])).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            new = np.where(denom > 0, total / denom, pi)
        new = np.clip(new, 1e-12, None)
        new /= np.exp(np.log(new).mean())
        if np.max(np.abs(new - pi)) < tol:
            pi = new
            break
        pi = new
    return np.log(pi)


def _tables(rows: np.ndarray, k: int, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Win and game tables from ``rows`` (columns: item, a, b, a's score), items weighted."""
    item, a, b, s = rows[:, 0].astype(int), rows[:, 1].astype(int), rows[:, 2].astype(int), rows[:, 3]
    w = np.ones(len(rows)) if weights is None else weights[item]
    wins = np.zeros((k, k))
    games = np.zeros((k, k))
    np.add.at(wins, (a, b), w * s)
    np.add.at(wins, (b, a), w * (1 - s))
    np.add.at(games, (a, b), w)
    np.add.at(games, (b, a), w)
    return wins, games


def bradley_terry(comparisons: Sequence[tuple[Any, str, str, float]], *, confidence: float = 0.95,
                  n_boot: int = 1000, seed: int = 0) -> BradleyTerry:
    """Strengths from ``comparisons``: ``(item id, system a, system b, a's score)`` with the score
    1 (a won), 0.5 (tie) or 0 (b won).  Every system must be compared, and the comparison graph
    connected (otherwise strengths are not identified)."""
    conf = check_confidence(confidence)
    systems = sorted({c[1] for c in comparisons} | {c[2] for c in comparisons})
    if len(systems) < 2:
        raise ReliabilityError("Bradley-Terry needs comparisons between at least two systems")
    items = sorted({str(c[0]) for c in comparisons})
    sidx, iidx = {s: i for i, s in enumerate(systems)}, {s: i for i, s in enumerate(items)}
    rows = np.array([(iidx[str(c[0])], sidx[c[1]], sidx[c[2]], float(c[3])) for c in comparisons], dtype=float)
    wins, games = _tables(rows, len(systems))
    _check_connected(games, systems)
    theta = fit_strengths(wins, games)
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(n_boot):
        counts = np.bincount(rng.integers(0, len(items), len(items)), minlength=len(items)).astype(float)
        w, g = _tables(rows, len(systems), counts)
        boots.append(fit_strengths(w, g))
    draws = np.array(boots) if boots else theta[None, :]
    alpha = 1 - conf
    probs: dict[tuple[str, str], tuple[float, float, float]] = {}
    for i, a in enumerate(systems):
        for j, b in enumerate(systems):
            if i != j:
                p = 1 / (1 + np.exp(-(draws[:, i] - draws[:, j])))
                lo, hi = np.quantile(p, [alpha / 2, 1 - alpha / 2])
                probs[(a, b)] = (float(1 / (1 + np.exp(-(theta[i] - theta[j])))), float(lo), float(hi))
    ci = {s: (float(np.quantile(draws[:, i], alpha / 2)), float(np.quantile(draws[:, i], 1 - alpha / 2)))
          for i, s in enumerate(systems)}
    return BradleyTerry(tuple(systems), {s: float(theta[i]) for i, s in enumerate(systems)}, probs, conf,
                        len(items), len(rows), n_boot, ci)


def _check_connected(games: np.ndarray, systems: Sequence[str]) -> None:
    seen, todo = {0}, [0]
    while todo:
        i = todo.pop()
        for j in np.nonzero(games[i])[0]:
            if int(j) not in seen:
                seen.add(int(j))
                todo.append(int(j))
    if len(seen) < len(systems):
        apart = [systems[i] for i in range(len(systems)) if i not in seen]
        raise ReliabilityError(f"systems {apart} are never compared with {systems[0]!r} (directly or through "
                               "others): their strengths are not identified")
