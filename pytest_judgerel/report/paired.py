"""Paired test on per-item scores for baseline comparison (stdlib only).

One-sided Wilcoxon signed-rank test (Wilcoxon 1945): H1 says the current
per-item losses are larger than the baseline's on the same items.  Zero
differences are dropped (Wilcoxon's convention), tied magnitudes get average
ranks.  The p-value is exact (the permutation distribution of W+ over sign
flips, by dynamic programming on doubled ranks) up to :data:`EXACT_MAX_N`
non-zero pairs, else the normal approximation with tie correction and
continuity correction (Hollander & Wolfe 1999, sec. 3.1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

EXACT_MAX_N = 60


@dataclass(frozen=True)
class PairedTestResult:
    """Outcome of the one-sided signed-rank test ``current > baseline``."""

    n_common: int
    n_nonzero: int
    w_plus: float
    p_value: float
    method: str  # "exact" | "normal" | "none"
    mean_difference: float


def _average_ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        avg = (i + j) / 2 + 1
        for t in range(i, j + 1):
            ranks[order[t]] = avg
        i = j + 1
    return ranks


def signed_rank_greater(differences: list[float]) -> tuple[float, float, str, int]:
    """(W+, one-sided p-value for "differences tend to be positive", method, non-zero n)."""
    d = [float(x) for x in differences if x != 0 and math.isfinite(x)]
    n = len(d)
    if n == 0:
        return 0.0, 1.0, "none", 0
    ranks = _average_ranks([abs(x) for x in d])
    w_plus = sum(r for r, x in zip(ranks, d) if x > 0)
    if n <= EXACT_MAX_N:
        doubled = [int(round(2 * r)) for r in ranks]
        total = sum(doubled)
        counts = [0] * (total + 1)
        counts[0] = 1
        reach = 0
        for step in doubled:
            reach += step
            for s in range(reach, step - 1, -1):
                counts[s] += counts[s - step]
        observed = int(round(2 * w_plus))
        p = sum(counts[observed:]) / (2 ** n)
        return w_plus, min(1.0, p), "exact", n
    mean = n * (n + 1) / 4
    ties: dict[float, int] = {}
    for r in ranks:
        ties[r] = ties.get(r, 0) + 1
    var = n * (n + 1) * (2 * n + 1) / 24 - sum(t ** 3 - t for t in ties.values()) / 48
    if var <= 0:
        return w_plus, 1.0, "normal", n
    z = (w_plus - mean - 0.5) / math.sqrt(var)
    p = 0.5 * math.erfc(z / math.sqrt(2))
    return w_plus, p, "normal", n


def paired_worse(baseline: Mapping[str, float | None], current: Mapping[str, float | None]) -> PairedTestResult:
    """Test whether per-item losses (lower is better) got worse on the items both runs scored."""
    common = [k for k in baseline if k in current and baseline[k] is not None and current[k] is not None]
    diffs = [float(current[k]) - float(baseline[k]) for k in common]  # type: ignore[arg-type]
    w, p, method, n_nonzero = signed_rank_greater(diffs)
    mean = sum(diffs) / len(diffs) if diffs else 0.0
    return PairedTestResult(len(common), n_nonzero, w, p, method, mean)
