"""Ranking statistics for comparing systems (and judges) on shared items.

numpy/scipy only.  Sources of every formula:

* MIPSA -- Pombal et al. 2025, "MindEval", arXiv:2511.18491, equation (1).
* Pairwise accuracy -- Kocmi et al. 2021, "To Ship or Not to Ship", arXiv:2107.10821
  (micro-average over groups as in mt-metrics-eval ``CompareMetricsWithGlobalAccuracy``).
* Paired bootstrap -- Koehn 2004, "Statistical Significance Tests for Machine Translation
  Evaluation", EMNLP; the two-sided p of sacrebleu ``--paired-bs`` is reported as well.
* Paired permutation (approximate randomisation) and PERM-BOTH -- Deutsch, Dror & Roth 2021,
  arXiv:2104.00054; used by WMT23 (Freitag et al. 2023).
* Significance clusters -- the greedy ``AssignRanks`` rule of mt-metrics-eval (WMT23).

Tie convention used throughout (Kocmi / mt-metrics-eval): two annotators agree on a pair when
``sign(a_i - a_j) == sign(b_i - b_j)``; a tie in both is agreement, a tie in only one is not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from pytest_judgerel.errors import ReliabilityError

__all__ = [
    "MIPSAResult",
    "PairwiseAccuracyResult",
    "PairedBootstrapResult",
    "PermutationResult",
    "RankingResult",
    "SelfPreferenceResult",
    "RepeatSummary",
    "mipsa",
    "pairwise_accuracy",
    "paired_bootstrap",
    "paired_permutation",
    "perm_both",
    "significance_clusters",
    "rank_systems",
    "self_preference",
    "summarize_repeats",
]

_MIPSA_TIES = ("sign", "drop_reference_ties")


# --------------------------------------------------------------------------- helpers

def _as_1d(values: Any, name: str) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ReliabilityError(f"{name} must be numeric, got {values!r:.80}") from exc
    if arr.ndim != 1:
        raise ReliabilityError(f"{name} must be one-dimensional, got shape {arr.shape}")
    return arr


def _pair_signs(x: np.ndarray) -> np.ndarray:
    """sign(x_i - x_j) for all i < j, in ``itertools.combinations`` order."""
    i, j = np.triu_indices(len(x), k=1)
    return np.sign(x[i] - x[j])


# --------------------------------------------------------------------------- MIPSA

@dataclass(frozen=True)
class MIPSAResult:
    """Mean interaction-level pairwise system accuracy (MindEval eq. 1).

    ``per_interaction`` is aligned with the input (``nan`` for a skipped interaction);
    ``skipped`` lists the indices of interactions with fewer than two comparable systems
    (or, with ``ties="drop_reference_ties"``, no untied reference pair).
    """

    value: float
    per_interaction: tuple[float, ...]
    n_interactions: int
    n_pairs: int
    skipped: tuple[int, ...]
    ties: str


def mipsa(a: Sequence[Sequence[float]], b: Sequence[Sequence[float]], ties: str = "sign") -> MIPSAResult:
    """MIPSA = (1/K) sum_k PSA_k, PSA_k = share of system pairs ordered alike by ``a`` and ``b``.

    ``a`` and ``b`` hold, per interaction (patient) k, the scores of the C_k systems that talked
    to that patient, in the same system order for both annotators.  ``b`` is the reference
    (e.g. the human) for the ``"drop_reference_ties"`` policy.

    Tie policies:

    * ``"sign"`` (default, Kocmi / mt-metrics-eval): agree iff ``sign(a_i-a_j) == sign(b_i-b_j)``;
      a tie in both counts as agreement, a one-sided tie as disagreement.
    * ``"drop_reference_ties"``: pairs tied in ``b`` are left out of PSA_k; a tie only in ``a``
      still counts as disagreement.

    Systems with a NaN score in either annotator are dropped from their interaction; an
    interaction with fewer than two systems left (or no pair left) is skipped, not counted as 0.
    """
    if ties not in _MIPSA_TIES:
        raise ReliabilityError(f"ties must be one of {_MIPSA_TIES}, got {ties!r}")
    if len(a) != len(b):
        raise ReliabilityError(f"a has {len(a)} interactions but b has {len(b)}")
    per: list[float] = []
    skipped: list[int] = []
    n_pairs = 0
    for k, (row_a, row_b) in enumerate(zip(a, b)):
        xa = _as_1d(row_a, f"a[{k}]")
        xb = _as_1d(row_b, f"b[{k}]")
        if len(xa) != len(xb):
            raise ReliabilityError(f"interaction {k}: a has {len(xa)} systems but b has {len(xb)}")
        keep = ~(np.isnan(xa) | np.isnan(xb))
        xa, xb = xa[keep], xb[keep]
        if len(xa) < 2:
            per.append(math.nan)
            skipped.append(k)
            continue
        sa, sb = _pair_signs(xa), _pair_signs(xb)
        if ties == "drop_reference_ties":
            used = sb != 0
            sa, sb = sa[used], sb[used]
        if len(sa) == 0:
            per.append(math.nan)
            skipped.append(k)
            continue
        per.append(float(np.mean(sa == sb)))
        n_pairs += len(sa)
    used_values = [p for p in per if not math.isnan(p)]
    if not used_values:
        raise ReliabilityError("MIPSA needs at least one interaction with two comparable systems")
    return MIPSAResult(
        value=float(np.mean(used_values)),
        per_interaction=tuple(per),
        n_interactions=len(used_values),
        n_pairs=n_pairs,
        skipped=tuple(skipped),
        ties=ties,
    )


# --------------------------------------------------------------------------- pairwise accuracy

@dataclass(frozen=True)
class PairwiseAccuracyResult:
    """Kocmi et al. 2021 pairwise (system-ranking) accuracy, micro-averaged over groups.

    ``per_group`` maps each group to ``(n_agree, n_pairs)``.
    """

    value: float
    n_agree: int
    n_pairs: int
    per_group: dict[Any, tuple[int, int]] = field(default_factory=dict)


def pairwise_accuracy(
    metric_scores: Any,
    human_scores: Any,
    groups: Sequence[Any] | None = None,
) -> PairwiseAccuracyResult:
    """Share of system pairs ordered the same way by metric and humans (sign equality).

    Pairs are formed only within a group (a test set / language pair / patient model...).
    Input forms: two mappings ``{group: [score per system]}`` with the same keys; or two flat
    sequences with ``groups`` (one label per element); or two flat sequences (one group).
    Agreements and pairs are summed over groups (micro average), as in WMT22/23.
    Both scores must be "higher is better".
    """
    if isinstance(metric_scores, Mapping) or isinstance(human_scores, Mapping):
        if not (isinstance(metric_scores, Mapping) and isinstance(human_scores, Mapping)):
            raise ReliabilityError("metric_scores and human_scores must both be mappings or both sequences")
        if groups is not None:
            raise ReliabilityError("groups must be None when scores are given as mappings")
        if set(metric_scores) != set(human_scores):
            raise ReliabilityError(
                f"groups differ: metric has {sorted(map(str, metric_scores))}, human has {sorted(map(str, human_scores))}"
            )
        pairs = [(g, metric_scores[g], human_scores[g]) for g in metric_scores]
    else:
        m = _as_1d(metric_scores, "metric_scores")
        h = _as_1d(human_scores, "human_scores")
        if len(m) != len(h):
            raise ReliabilityError(f"metric_scores has {len(m)} systems but human_scores has {len(h)}")
        if groups is None:
            pairs = [(None, m, h)]
        else:
            if len(groups) != len(m):
                raise ReliabilityError(f"groups has {len(groups)} labels for {len(m)} scores")
            labels = list(dict.fromkeys(groups))
            g_arr = np.asarray(groups, dtype=object)
            pairs = [(g, m[g_arr == g], h[g_arr == g]) for g in labels]
    per_group: dict[Any, tuple[int, int]] = {}
    total_agree = total_pairs = 0
    for g, ms, hs in pairs:
        ms = _as_1d(ms, f"metric_scores[{g!r}]")
        hs = _as_1d(hs, f"human_scores[{g!r}]")
        if len(ms) != len(hs):
            raise ReliabilityError(f"group {g!r}: {len(ms)} metric scores but {len(hs)} human scores")
        if np.isnan(ms).any() or np.isnan(hs).any():
            raise ReliabilityError(f"group {g!r} contains NaN scores")
        sm, sh = _pair_signs(ms), _pair_signs(hs)
        agree, n = int(np.sum(sm == sh)), len(sm)
        per_group[g] = (agree, n)
        total_agree += agree
        total_pairs += n
    if total_pairs == 0:
        raise ReliabilityError("pairwise accuracy needs at least one group with two systems")
    return PairwiseAccuracyResult(total_agree / total_pairs, total_agree, total_pairs, per_group)


# --------------------------------------------------------------------------- paired bootstrap

@dataclass(frozen=True)
class PairedBootstrapResult:
    """Koehn (2004) paired bootstrap of system A against system B.

    ``p_value`` = 1 - wins_a / B (ties count against A): "A better than B" at level alpha iff
    ``p_value <= alpha``.  ``sacrebleu_p`` is sacrebleu's two-sided
    ``(#{|d_b| - mean|d| > |d_obs|} + 1) / (B + 1)``.  ``ci_a``/``ci_b`` are percentile intervals
    of each system's resampled mean (indices ``B//40`` and ``B - B//40 - 1`` for 95%).
    """

    delta: float
    mean_a: float
    mean_b: float
    wins_a: int
    wins_b: int
    ties: int
    n_resamples: int
    p_value: float
    sacrebleu_p: float
    ci_a: tuple[float, float]
    ci_b: tuple[float, float]
    seed: int | None


def _paired_arrays(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    xa, xb = _as_1d(a, "a"), _as_1d(b, "b")
    if len(xa) != len(xb):
        raise ReliabilityError(f"paired test needs equal lengths, got {len(xa)} and {len(xb)}")
    if len(xa) < 2:
        raise ReliabilityError(f"paired test needs at least 2 paired items, got {len(xa)}")
    if np.isnan(xa).any() or np.isnan(xb).any():
        raise ReliabilityError("paired test input contains NaN (drop unpaired items first)")
    return xa, xb


def _percentile_interval(sorted_values: np.ndarray, level: float) -> tuple[float, float]:
    n = len(sorted_values)
    cut = int(round(n * (1.0 - level) / 2.0))  # 25 of 1000 for 95%, = B//40
    return float(sorted_values[cut]), float(sorted_values[n - cut - 1])


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    n_resamples: int = 1000,
    seed: int | None = 12345,
    level: float = 0.95,
) -> PairedBootstrapResult:
    """Koehn 2004 paired bootstrap on per-item scores (mean as the system statistic).

    Index generation (fixed, so results are reproducible):
    ``rng = np.random.default_rng(seed); idx = rng.choice(N, size=(B, N), replace=True)``;
    the same index row resamples both systems.
    """
    xa, xb = _paired_arrays(a, b)
    if n_resamples < 1:
        raise ReliabilityError(f"n_resamples must be >= 1, got {n_resamples}")
    n = len(xa)
    rng = np.random.default_rng(seed)
    idx = rng.choice(n, size=(n_resamples, n), replace=True)
    sa = xa[idx].mean(axis=1)
    sb = xb[idx].mean(axis=1)
    wins_a = int(np.sum(sa > sb))
    wins_b = int(np.sum(sb > sa))
    ties = n_resamples - wins_a - wins_b
    delta_obs = float(xa.mean() - xb.mean())
    abs_d = np.abs(sa - sb)
    sacre = (int(np.sum(abs_d - abs_d.mean() > abs(delta_obs))) + 1) / (n_resamples + 1)
    return PairedBootstrapResult(
        delta=delta_obs,
        mean_a=float(xa.mean()),
        mean_b=float(xb.mean()),
        wins_a=wins_a,
        wins_b=wins_b,
        ties=ties,
        n_resamples=n_resamples,
        p_value=1.0 - wins_a / n_resamples,
        sacrebleu_p=sacre,
        ci_a=_percentile_interval(np.sort(sa), level),
        ci_b=_percentile_interval(np.sort(sb), level),
        seed=seed,
    )


# --------------------------------------------------------------------------- paired permutation

@dataclass(frozen=True)
class PermutationResult:
    """Paired permutation (swap) test of ``statistic(a) - statistic(b)``.

    ``exact`` tells whether all 2^n swap masks were enumerated (then ``p_value = count / 2^n``,
    the identity mask included); otherwise ``p_value = (count + 1) / (R + 1)`` over R random masks.
    """

    observed: float
    p_value: float
    count: int
    n_permutations: int
    exact: bool
    alternative: str
    seed: int | None


_ALTERNATIVES = ("greater", "less", "two-sided")
_EXACT_AUTO_MAX_N = 16
_EXACT_MAX_N = 20


def _count_extreme(null: np.ndarray, observed: float, alternative: str) -> int:
    # a tiny tolerance keeps masks equivalent to the observed one from flipping on rounding
    tol = 1e-12 * max(1.0, abs(observed))
    if alternative == "greater":
        return int(np.sum(null >= observed - tol))
    if alternative == "less":
        return int(np.sum(null <= observed + tol))
    return int(np.sum(np.abs(null) >= abs(observed) - tol))


def paired_permutation(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    statistic: Callable[[np.ndarray], float] | None = None,
    n_resamples: int = 10000,
    seed: int | None = 12345,
    exact: bool | str = False,
    alternative: str = "greater",
    gold: Sequence[float] | None = None,
    correlation: str | Callable[[np.ndarray, np.ndarray], float] = "pearson",
) -> PermutationResult:
    """Paired permutation test: swap ``a_i`` and ``b_i`` independently with probability 1/2.

    ``statistic`` maps a score vector to a number (default: the mean); the test statistic is
    ``statistic(a') - statistic(b')``.  ``alternative="greater"`` tests "A better than B".
    ``exact=True`` enumerates all 2^n masks (refused above n = 20); ``exact="auto"`` does so
    for n <= 16 and samples otherwise.  Masks are drawn as
    ``np.random.default_rng(seed).integers(0, 2, size=(R, n))``.

    With ``gold`` given, ``a`` and ``b`` are two metrics' scores and the test is PERM-BOTH
    (see :func:`perm_both`): "metric a correlates better with gold than metric b".
    """
    if gold is not None:
        if statistic is not None or alternative != "greater":
            raise ReliabilityError("with gold=, the statistic is the correlation with gold and alternative 'greater'")
        return perm_both(gold, a, b, correlation=correlation, n_resamples=n_resamples, seed=seed, exact=exact)
    xa, xb = _paired_arrays(a, b)
    if alternative not in _ALTERNATIVES:
        raise ReliabilityError(f"alternative must be one of {_ALTERNATIVES}, got {alternative!r}")
    n = len(xa)
    if exact == "auto":
        exact = n <= _EXACT_AUTO_MAX_N
    elif not isinstance(exact, bool):
        raise ReliabilityError(f"exact must be True, False or 'auto', got {exact!r}")
    if exact and n > _EXACT_MAX_N:
        raise ReliabilityError(f"exact enumeration of 2^{n} masks is too large (max n = {_EXACT_MAX_N}); use exact=False")
    if not exact and n_resamples < 1:
        raise ReliabilityError(f"n_resamples must be >= 1, got {n_resamples}")

    if exact:
        # row r is the binary expansion of r: all 2^n keep(1)/swap(0) masks
        masks = ((np.arange(2**n, dtype=np.int64)[:, None] >> np.arange(n - 1, -1, -1)) & 1).astype(bool)
    else:
        rng = np.random.default_rng(seed)
        masks = rng.integers(0, 2, size=(n_resamples, n)).astype(bool)
    if statistic is None:
        # mean(h1) - mean(h2) = mean(sign * d) with sign = +1 (keep) / -1 (swap)
        d = xa - xb
        observed = float(d.mean())
        null = np.where(masks, 1.0, -1.0) @ d / n
    else:
        h1 = np.where(masks, xa, xb)
        h2 = np.where(masks, xb, xa)
        observed = float(statistic(xa)) - float(statistic(xb))
        null = np.array([float(statistic(r1)) - float(statistic(r2)) for r1, r2 in zip(h1, h2)])
    if not math.isfinite(observed):
        raise ReliabilityError(f"the observed statistic is not finite ({observed})")
    count = _count_extreme(null, observed, alternative)
    total = len(masks)
    p = count / total if exact else (count + 1) / (total + 1)
    return PermutationResult(observed, float(p), count, total, bool(exact), alternative, None if exact else seed)


def _zscore(x: np.ndarray, name: str) -> np.ndarray:
    sd = x.std()
    if sd == 0 or not math.isfinite(sd):
        raise ReliabilityError(f"{name} is constant; cannot z-score it")
    return (x - x.mean()) / sd


def perm_both(
    gold: Sequence[float] | np.ndarray,
    metric1: Sequence[float] | np.ndarray,
    metric2: Sequence[float] | np.ndarray,
    correlation: str | Callable[[np.ndarray, np.ndarray], float] = "pearson",
    n_resamples: int = 1000,
    seed: int | None = 12345,
    exact: bool | str = "auto",
) -> PermutationResult:
    """PERM-BOTH test (Deutsch, Dror & Roth 2021) that metric1 correlates better with gold than metric2.

    Both metrics are z-scored, then element-wise swapped between them; the statistic is
    ``corr(h1, gold) - corr(h2, gold)`` and the p-value counts draws ``>=`` the observed delta.
    ``correlation``: ``"pearson"``, ``"spearman"``, ``"kendall"`` or a callable ``(x, gold) -> float``.
    """
    g = _as_1d(gold, "gold")
    m1, m2 = _paired_arrays(metric1, metric2)
    if len(g) != len(m1):
        raise ReliabilityError(f"gold has {len(g)} items but the metrics have {len(m1)}")
    if callable(correlation):
        corr = correlation
    elif correlation == "pearson":
        def corr(x: np.ndarray, y: np.ndarray) -> float:
            return float(np.corrcoef(x, y)[0, 1])
    elif correlation in ("spearman", "kendall"):
        from scipy import stats as sps

        fn = sps.spearmanr if correlation == "spearman" else sps.kendalltau

        def corr(x: np.ndarray, y: np.ndarray) -> float:
            return float(fn(x, y)[0])
    else:
        raise ReliabilityError(f"unknown correlation {correlation!r}")
    return paired_permutation(
        _zscore(m1, "metric1"),
        _zscore(m2, "metric2"),
        statistic=lambda x: corr(x, g),
        n_resamples=n_resamples,
        seed=seed,
        exact=exact,
        alternative="greater",
    )


# --------------------------------------------------------------------------- clustering and ranking

def significance_clusters(sig_matrix: Any, alpha: float = 0.05) -> list[int]:
    """Greedy significance clusters (mt-metrics-eval ``AssignRanks``, WMT23).

    ``sig_matrix[i][j]`` (i < j, entries sorted best-first) is the p-value of "i is better
    than j".  A new cluster starts at j when some member of the *current* cluster beats j with
    ``p <= alpha``; earlier clusters are not re-checked.  Returns 1-based ranks.
    """
    sig = np.asarray(sig_matrix, dtype=float)
    if sig.ndim != 2 or sig.shape[0] != sig.shape[1]:
        raise ReliabilityError(f"sig_matrix must be square, got shape {sig.shape}")
    ranks: list[int] = []
    rank, start = 1, 0
    for i in range(sig.shape[0]):
        column = sig[start:i, i]
        if np.isnan(column).any():
            raise ReliabilityError(f"sig_matrix has NaN above the diagonal in column {i}")
        if np.any(column <= alpha):
            rank += 1
            start = i
        ranks.append(rank)
    return ranks


@dataclass(frozen=True)
class RankingResult:
    """Systems sorted by mean score with pairwise p-values and significance clusters.

    ``p_values[i][j]`` (i < j, in ``systems`` order) is the p-value of "systems[i] better than
    systems[j]"; entries on and below the diagonal are NaN.  ``clusters[i]`` is the rank of
    ``systems[i]`` (systems sharing a rank are not significantly different).
    """

    systems: tuple[str, ...]
    means: dict[str, float]
    p_values: np.ndarray
    clusters: tuple[int, ...]
    test: str
    alpha: float
    n_items: int

    def rank_of(self, system: str) -> int:
        return self.clusters[self.systems.index(system)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "systems": list(self.systems),
            "means": dict(self.means),
            "p_values": [[None if math.isnan(v) else float(v) for v in row] for row in self.p_values],
            "clusters": list(self.clusters),
            "test": self.test,
            "alpha": self.alpha,
            "n_items": self.n_items,
        }


_RANK_TESTS = ("bootstrap", "permutation", "ttest")


def _scores_matrix(scores_by_system: Mapping[str, Sequence[float]]) -> tuple[list[str], np.ndarray]:
    if not isinstance(scores_by_system, Mapping) or len(scores_by_system) < 1:
        raise ReliabilityError("scores_by_system must be a non-empty mapping {system: per-item scores}")
    names = [str(k) for k in scores_by_system]
    rows = [_as_1d(v, f"scores of {k!r}") for k, v in scores_by_system.items()]
    lengths = {len(r) for r in rows}
    if len(lengths) != 1:
        raise ReliabilityError(
            "all systems need scores on the same items (paired); lengths: "
            + ", ".join(f"{n}={len(r)}" for n, r in zip(names, rows))
        )
    mat = np.vstack(rows)
    if np.isnan(mat).any():
        bad = [n for n, r in zip(names, rows) if np.isnan(r).any()]
        raise ReliabilityError(f"NaN scores for {bad}; drop unpaired items first")
    return names, mat


def rank_systems(
    scores_by_system: Mapping[str, Sequence[float]],
    test: str = "bootstrap",
    alpha: float = 0.05,
    seed: int | None = 12345,
    n_resamples: int = 1000,
) -> RankingResult:
    """Rank systems by mean per-item (per-interaction) score and cluster them by significance.

    Sort by decreasing mean (exact ties broken by name); for every pair i < j compute the
    one-sided p-value that i is better than j with ``test``: ``"bootstrap"`` (Koehn 1 - win
    rate), ``"permutation"`` (paired swap test of the mean difference) or ``"ttest"`` (one-sided
    paired t-test, what the MindEval release uses); then :func:`significance_clusters`.
    """
    if test not in _RANK_TESTS:
        raise ReliabilityError(f"test must be one of {_RANK_TESTS}, got {test!r}")
    if not 0 < alpha < 1:
        raise ReliabilityError(f"alpha must be in (0, 1), got {alpha}")
    names, mat = _scores_matrix(scores_by_system)
    means = mat.mean(axis=1)
    order = sorted(range(len(names)), key=lambda i: (-means[i], names[i]))
    names = [names[i] for i in order]
    mat = mat[order]
    m = len(names)
    pv = np.full((m, m), np.nan)
    for i in range(m):
        for j in range(i + 1, m):
            if test == "bootstrap":
                pv[i, j] = paired_bootstrap(mat[i], mat[j], n_resamples=n_resamples, seed=seed).p_value
            elif test == "permutation":
                pv[i, j] = paired_permutation(mat[i], mat[j], n_resamples=n_resamples, seed=seed).p_value
            else:
                from scipy import stats as sps

                d = mat[i] - mat[j]
                pv[i, j] = 1.0 if np.all(d == 0) else float(sps.ttest_rel(mat[i], mat[j], alternative="greater").pvalue)
    clusters = significance_clusters(pv, alpha)  # reads only the upper triangle (i < j)
    return RankingResult(
        systems=tuple(names),
        means={n: float(v) for n, v in zip(names, mat.mean(axis=1))},
        p_values=pv,
        clusters=tuple(clusters),
        test=test,
        alpha=alpha,
        n_items=mat.shape[1],
    )


# --------------------------------------------------------------------------- self-preference

@dataclass(frozen=True)
class SelfPreferenceResult:
    """How a judge ranks its own model compared with a reference judge.

    Ranks are 1 = best.  ``rank_change = reference_rank - judge_rank`` (positive: the judge puts
    its own model higher on the leaderboard).  Per interaction, the own model's rank among the
    systems is compared (average ranks for ties): ``share_higher`` is the share of interactions
    where the judge ranks it better than the reference does.
    """

    system: str
    reference_rank: int
    judge_rank: int
    rank_change: int
    mean_interaction_rank_change: float
    share_higher: float
    share_lower: float
    share_equal: float
    n_interactions: int


def self_preference(
    reference_scores: Mapping[str, Sequence[float]],
    judge_scores: Mapping[str, Sequence[float]],
    own_system: str,
) -> SelfPreferenceResult:
    """Self-preference bias of a judge whose underlying model is ``own_system``.

    Both mappings give per-interaction scores per system (same systems, same interactions).
    Cf. MindEval section 4.2 and Wataoka et al. 2024.
    """
    from scipy.stats import rankdata

    if set(reference_scores) != set(judge_scores):
        raise ReliabilityError("reference_scores and judge_scores must cover the same systems")
    if own_system not in judge_scores:
        raise ReliabilityError(f"own_system {own_system!r} is not among the systems {sorted(judge_scores)}")
    if len(judge_scores) < 2:
        raise ReliabilityError("self-preference needs at least two systems")
    keys = list(reference_scores)
    ref_names, ref = _scores_matrix({k: reference_scores[k] for k in keys})
    _, jud = _scores_matrix({k: judge_scores[k] for k in keys})
    if ref.shape != jud.shape:
        raise ReliabilityError(f"reference has {ref.shape[1]} interactions but the judge has {jud.shape[1]}")
    own = keys.index(own_system)

    def leaderboard_rank(mat: np.ndarray) -> int:
        means = mat.mean(axis=1)
        order = sorted(range(len(keys)), key=lambda i: (-means[i], str(keys[i])))
        return order.index(own) + 1

    ref_rank, jud_rank = leaderboard_rank(ref), leaderboard_rank(jud)
    ref_r = rankdata(-ref, axis=0)[own]  # rank of own model per interaction (1 = best)
    jud_r = rankdata(-jud, axis=0)[own]
    diff = ref_r - jud_r
    n = len(diff)
    return SelfPreferenceResult(
        system=own_system,
        reference_rank=ref_rank,
        judge_rank=jud_rank,
        rank_change=ref_rank - jud_rank,
        mean_interaction_rank_change=float(diff.mean()),
        share_higher=float(np.mean(diff > 0)),
        share_lower=float(np.mean(diff < 0)),
        share_equal=float(np.mean(diff == 0)),
        n_interactions=n,
    )


# --------------------------------------------------------------------------- repeated runs

@dataclass(frozen=True)
class RepeatSummary:
    """Median and quartiles of a statistic over repeated judge runs (MindEval reports 30 runs).

    Quartiles use numpy's default linear interpolation.  ``n_missing`` counts NaN runs dropped.
    """

    median: float
    q1: float
    q3: float
    minimum: float
    maximum: float
    n: int
    n_missing: int


def summarize_repeats(values: Sequence[float]) -> RepeatSummary:
    """Median, first and third quartile of ``values`` (NaN runs are dropped and counted)."""
    x = _as_1d(values, "values")
    missing = int(np.isnan(x).sum())
    x = x[~np.isnan(x)]
    if len(x) == 0:
        raise ReliabilityError("summarize_repeats needs at least one non-NaN value")
    q1, med, q3 = np.percentile(x, [25, 50, 75])
    return RepeatSummary(float(med), float(q1), float(q3), float(x.min()), float(x.max()), len(x), missing)
