"""MindEval scores, breakdowns and meta-evaluation (Pombal et al. 2025, sections 2.3, 3.2, 4.2).

* Per interaction: mean of the 5 axes; per system: mean over its interactions (section 4.1, "Reported scores").
  Interactions whose judge reply could not be parsed are excluded and counted (``n_failed``).
* Verbosity: sentences per clinician turn and the share of turns over 4 sentences (the
  paper's short-turn ablation and appendix D.3 use the 4-sentence line).
* Leaderboards: :func:`leaderboard` aligns patients across systems and clusters them by
  significance; :func:`judge_self_preference` compares two judges' leaderboards.
* Meta-evaluation: Kendall tau (scipy tau-b) across interactions against each annotator and
  against the average annotator (averaged exactly, so equal averages tie); MIPSA (equation 1, :func:`pytest_judgerel.stats.ranking.mipsa`);
  median and quartiles over repeated judge runs; pairwise accuracy of two leaderboards.
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Mapping, Sequence

from pytest_judgerel.errors import RatingsError

__all__ = [
    "sentence_count",
    "VerbosityStats",
    "verbosity",
    "interaction_score",
    "SystemScore",
    "system_scores",
    "breakdown",
    "KendallVsAnnotators",
    "kendall_vs_annotators",
    "MIPSAVsAnnotators",
    "judge_mipsa",
    "group_by_patient",
    "repeated_judge_summary",
    "ranking_agreement",
    "aligned_scores",
    "leaderboard",
    "judge_self_preference",
]

AXES = ("CAC", "EPC", "AR", "TRA", "ASCQ")

# A sentence ends at . ! ? (or an ellipsis) followed by whitespace or the end; list items and
# line breaks also end one.  Decimal numbers and common abbreviations do not.
_ABBREV = re.compile(r"\b(?:e\.g|i\.e|etc|vs|Dr|Mr|Mrs|Ms|St|approx)\.", re.IGNORECASE)
_SPLIT = re.compile(r"(?<=[.!?…])[\"')\]]*\s+|\n+")


def sentence_count(text: str) -> int:
    """Heuristic sentence count of one turn (documented in docs/mindeval.md)."""
    cleaned = _ABBREV.sub(lambda m: m.group(0).replace(".", ""), text or "")
    parts = [p for p in _SPLIT.split(cleaned) if re.search(r"\w", p)]
    return len(parts)


@dataclass(frozen=True)
class VerbosityStats:
    """Sentences per clinician turn over one or more interactions."""

    mean_sentences: float
    median_sentences: float
    share_over_4: float
    n_turns: int
    per_turn: tuple[int, ...]


def verbosity(interactions: Any, limit: int = 4) -> VerbosityStats:
    """Verbosity of clinician turns of one :class:`Interaction` or a sequence of them (or of a
    plain list of message dicts, clinician = ``assistant``).  ``share_over_4`` counts turns
    with more than ``limit`` sentences."""
    if hasattr(interactions, "turns"):
        interactions = [interactions]
    counts: list[int] = []
    for it in interactions:
        msgs = it.messages if hasattr(it, "messages") else [it]
        for m in msgs:
            if m.get("role") == "assistant":
                counts.append(sentence_count(str(m.get("content", ""))))
    if not counts:
        raise RatingsError("verbosity needs at least one clinician (assistant) turn")
    return VerbosityStats(
        mean_sentences=sum(counts) / len(counts),
        median_sentences=float(statistics.median(counts)),
        share_over_4=sum(c > limit for c in counts) / len(counts),
        n_turns=len(counts),
        per_turn=tuple(counts),
    )


def _axis_dict(score: Any) -> dict[str, float] | None:
    if score is None:
        return None
    if hasattr(score, "scores"):
        return score.scores
    if isinstance(score, Mapping):
        return dict(score)
    raise RatingsError(f"expected a JudgeScore or an axis dict, got {type(score).__name__}")


def interaction_score(score: Any) -> float | None:
    """Mean of the five axes of one judge score (None when the reply failed to parse)."""
    d = _axis_dict(score)
    if d is None:
        return None
    missing = [a for a in AXES if a not in d]
    if missing:
        raise RatingsError(f"axis scores lack {missing}")
    return sum(float(d[a]) for a in AXES) / len(AXES)


@dataclass(frozen=True)
class SystemScore:
    """A system's MindEval score: mean over interactions of the per-interaction means."""

    system: str
    mean: float
    axes: dict[str, float]
    n: int
    n_failed: int
    per_interaction: tuple[float, ...] = field(default=())


def _summarise(name: str, scores: Sequence[Any]) -> SystemScore:
    ok = [_axis_dict(s) for s in scores]
    good = [d for d in ok if d is not None]
    failed = len(ok) - len(good)
    if not good:
        raise RatingsError(f"system {name!r}: no parsable judge score among {len(ok)} interactions")
    per = tuple(interaction_score(d) for d in good)
    axes = {a: sum(float(d[a]) for d in good) / len(good) for a in AXES}
    return SystemScore(name, sum(per) / len(per), axes, len(good), failed, per)  # type: ignore[arg-type]


def system_scores(scores_by_system: Mapping[str, Sequence[Any]]) -> dict[str, SystemScore]:
    """``{system: [JudgeScore or axis dict, ...]}`` -> ``{system: SystemScore}``."""
    return {name: _summarise(name, scores) for name, scores in scores_by_system.items()}


def breakdown(
    interactions: Sequence[Any], scores: Sequence[Any], by: str | Callable[[Any], Any] = "severity"
) -> dict[Any, SystemScore]:
    """Scores grouped by ``"severity"`` (``"severe"`` / ``"non_severe"``, as in Figure 3), by a
    profile attribute name (e.g. ``"region"``) or by a callable ``f(interaction) -> group``.
    ``scores[i]`` belongs to ``interactions[i]``."""
    if len(interactions) != len(scores):
        raise RatingsError(f"{len(interactions)} interactions but {len(scores)} scores")
    if by == "severity":
        from pytest_judgerel.mindeval.profiles import is_severe

        key = lambda it: "severe" if is_severe(it.profile) else "non_severe"  # noqa: E731
    elif isinstance(by, str):
        key = lambda it: getattr(it.profile, by)  # noqa: E731
    else:
        key = by
    groups: dict[Any, list[Any]] = {}
    for it, sc in zip(interactions, scores):
        groups.setdefault(key(it), []).append(sc)
    return {g: _summarise(str(g), sc) for g, sc in groups.items()}


# ----------------------------------------------------------------------------- meta-evaluation

def _vector(values: Any) -> Any:
    """One float per interaction (NaN for a failed judge reply) from floats, JudgeScores or axis dicts."""
    import numpy as np

    out = []
    for v in values:
        if v is None:
            out.append(np.nan)
        elif hasattr(v, "scores") or isinstance(v, Mapping):
            s = interaction_score(v)
            out.append(np.nan if s is None else s)
        else:
            out.append(float(v))
    return np.asarray(out, dtype=float)


def _human_matrix(human: Any) -> Any:
    import numpy as np

    mat = np.asarray(human.to_matrix() if hasattr(human, "to_matrix") else human, dtype=float)
    if mat.ndim == 1:
        mat = mat[:, None]
    if mat.ndim != 2:
        raise RatingsError(f"human scores must be interactions x annotators, got shape {mat.shape}")
    return mat


_MAX_DENOMINATOR = 10**6


def _rational(value: float) -> Fraction:
    """The rational a float stands for: the simplest fraction with a denominator up to 10^6 that
    rounds to it (within 4 ulps; a score like 17/5 or 7/3 computed in floating point), else the
    float's exact binary value.  Two such fractions differ by at least 1e-12, far more than the
    rounding, so the recovered value is unique for scores of ordinary size."""
    exact = Fraction(value)
    simple = exact.limit_denominator(_MAX_DENOMINATOR)
    return simple if abs(float(simple) - value) <= 4 * math.ulp(value) else exact


def _average_annotator(mat: Any) -> Any:
    """Per row, the mean of the present (non-NaN) values computed in exact rational arithmetic and
    rounded once (NaN for a row without any): equal averages are then equal floats, so the
    exact sign and tie comparisons of Kendall tau and MIPSA see them as ties.  ``np.nanmean``
    rounds every partial sum and can make 7/3 + 10/3 differ from 8/3 + 9/3."""
    import numpy as np

    out = np.full(mat.shape[0], np.nan)
    for i, row in enumerate(mat):
        present = [float(v) for v in row if not math.isnan(v)]
        if present:
            out[i] = float(sum((_rational(v) for v in present), Fraction(0)) / len(present))
    return out


def _tau(x: Any, y: Any, variant: str) -> tuple[float, int]:
    import numpy as np
    from scipy.stats import kendalltau

    keep = ~(np.isnan(x) | np.isnan(y))
    n = int(keep.sum())
    if n < 2:
        return math.nan, n
    return float(kendalltau(x[keep], y[keep], variant=variant).statistic), n


@dataclass(frozen=True)
class KendallVsAnnotators:
    """Kendall tau between a judge and each annotator, and the average annotator (NaN pairs
    dropped per comparison; ``n`` = interactions used against the average)."""

    per_annotator: tuple[float, ...]
    vs_average: float
    n: int
    variant: str


def kendall_vs_annotators(judge: Sequence[Any], human: Any, variant: str = "b") -> KendallVsAnnotators:
    """Kendall tau across all interactions (MindEval Table 3, below the diagonal).

    ``judge``: one score per interaction (floats, JudgeScores or axis dicts; None = failed);
    ``human``: interactions x annotators (NaN = missing), or one column.
    """
    x = _vector(judge)
    mat = _human_matrix(human)
    if mat.shape[0] != len(x):
        raise RatingsError(f"judge has {len(x)} interactions but human scores have {mat.shape[0]}")
    per = tuple(_tau(x, mat[:, j], variant)[0] for j in range(mat.shape[1]))
    vs_avg, n = _tau(x, _average_annotator(mat), variant)
    if math.isnan(vs_avg):
        raise RatingsError("Kendall tau needs at least two interactions scored by both judge and humans")
    return KendallVsAnnotators(per, vs_avg, n, variant)


def group_by_patient(values: Sequence[float], patients: Sequence[Any], systems: Sequence[Any] | None = None) -> list[list[float]]:
    """Flat per-interaction values -> per-patient lists (MIPSA input), systems in a fixed order.

    With ``systems``, each patient's list is ordered by system name so two annotators' lists
    align; without it, the input order within a patient is kept.
    """
    if len(values) != len(patients) or (systems is not None and len(systems) != len(values)):
        raise RatingsError("values, patients (and systems) must have one entry per interaction")
    order: list[Any] = []
    buckets: dict[Any, list[tuple[Any, float]]] = {}
    for i, (v, p) in enumerate(zip(values, patients)):
        if p not in buckets:
            buckets[p] = []
            order.append(p)
        buckets[p].append((str(systems[i]) if systems is not None else i, v))
    out = []
    for p in order:
        items = buckets[p]
        if systems is not None:
            names = [s for s, _ in items]
            if len(set(names)) != len(names):
                raise RatingsError(f"patient {p!r} has two interactions with the same system")
            items = sorted(items)
        out.append([v for _, v in items])
    return out


@dataclass(frozen=True)
class MIPSAVsAnnotators:
    """MIPSA of a judge against each annotator and against the average annotator."""

    per_annotator: tuple[float, ...]
    vs_average: float
    n_interactions: int
    ties: str


def judge_mipsa(
    judge: Sequence[Any], human: Any, patients: Sequence[Any], systems: Sequence[Any] | None = None,
    ties: str = "sign",
) -> MIPSAVsAnnotators:
    """MIPSA (equation 1) with the human as reference, per annotator and vs their average.

    ``patients[i]`` (and optionally ``systems[i]``) identify interaction i; systems are only
    compared within a patient.  Tie policy: see :func:`pytest_judgerel.stats.ranking.mipsa`.
    """
    from pytest_judgerel.stats.ranking import mipsa

    x = _vector(judge)
    mat = _human_matrix(human)
    if mat.shape[0] != len(x):
        raise RatingsError(f"judge has {len(x)} interactions but human scores have {mat.shape[0]}")
    a = group_by_patient(list(x), patients, systems)
    per = []
    for j in range(mat.shape[1]):
        b = group_by_patient(list(mat[:, j]), patients, systems)
        try:
            per.append(mipsa(a, b, ties=ties).value)
        except ValueError:
            per.append(math.nan)
    res = mipsa(a, group_by_patient(list(_average_annotator(mat)), patients, systems), ties=ties)
    return MIPSAVsAnnotators(tuple(per), res.value, res.n_interactions, ties)


@dataclass(frozen=True)
class RepeatedMetaEval:
    """Median and quartiles of Kendall tau and MIPSA (vs the average annotator) over judge runs."""

    kendall: Any
    mipsa: Any | None
    n_runs: int


def repeated_judge_summary(
    runs: Sequence[Sequence[Any]], human: Any, patients: Sequence[Any] | None = None,
    systems: Sequence[Any] | None = None, ties: str = "sign",
) -> RepeatedMetaEval:
    """Summarise repeated judge runs as the paper does (30 runs; median with 1st/3rd quartiles)."""
    from pytest_judgerel.stats.ranking import summarize_repeats

    if not runs:
        raise RatingsError("repeated_judge_summary needs at least one run")
    taus = [kendall_vs_annotators(r, human).vs_average for r in runs]
    mips = None
    if patients is not None:
        mips = summarize_repeats([judge_mipsa(r, human, patients, systems, ties).vs_average for r in runs])
    return RepeatedMetaEval(summarize_repeats(taus), mips, len(runs))


def ranking_agreement(scores_a: Mapping[str, Any], scores_b: Mapping[str, Any]) -> Any:
    """Pairwise accuracy (Kocmi et al. 2021) between two leaderboards over the same systems,
    e.g. with two patient models or two judges (MindEval Table 5).  Values may be floats or
    :class:`SystemScore` s."""
    from pytest_judgerel.stats.ranking import pairwise_accuracy

    if set(scores_a) != set(scores_b):
        raise RatingsError(f"leaderboards cover different systems: {sorted(scores_a)} vs {sorted(scores_b)}")
    names = sorted(scores_a)
    val = lambda v: v.mean if isinstance(v, SystemScore) else float(v)  # noqa: E731
    return pairwise_accuracy([val(scores_a[n]) for n in names], [val(scores_b[n]) for n in names])


# ----------------------------------------------------------------------------- leaderboards

def _profile_of(score: Any, index: int) -> str:
    iid = getattr(score, "interaction_id", None)
    return str(iid).split("::", 1)[0] if iid else str(index)


def aligned_scores(scores_by_system: Mapping[str, Sequence[Any]]) -> tuple[dict[str, list[float]], list[str], int]:
    """Per-interaction means aligned by patient across systems.

    Patients are identified by the ``profile_id`` part of ``JudgeScore.interaction_id`` (else by
    position).  Only patients with a parsable score for every system are kept.  Returns
    ``({system: [score per kept patient]}, kept patient ids, number of patients dropped)``.
    """
    if not scores_by_system:
        raise RatingsError("no systems given")
    per: dict[str, dict[str, float]] = {}
    all_patients: list[str] = []
    for name, scores in scores_by_system.items():
        table: dict[str, float] = {}
        for i, s in enumerate(scores):
            pid = _profile_of(s, i)
            if pid in table:
                raise RatingsError(f"system {name!r} has two scores for patient {pid!r}")
            if pid not in all_patients:
                all_patients.append(pid)
            v = interaction_score(s) if (hasattr(s, "scores") or isinstance(s, Mapping) or s is None) else float(s)
            if v is not None and not math.isnan(v):
                table[pid] = v
        per[name] = table
    kept = [p for p in all_patients if all(p in t for t in per.values())]
    if not kept:
        raise RatingsError("no patient has a parsable score for every system")
    return {n: [t[p] for p in kept] for n, t in per.items()}, kept, len(all_patients) - len(kept)


def leaderboard(
    scores_by_system: Mapping[str, Sequence[Any]], test: str = "bootstrap", alpha: float = 0.05,
    seed: int | None = 12345, n_resamples: int = 1000,
) -> Any:
    """MindEval-style leaderboard: systems sorted by mean score with significance clusters
    (:func:`pytest_judgerel.stats.ranking.rank_systems`) on patients every system was scored on.
    The returned ranking has ``n_items`` = patients kept; ``dropped`` patients are reported by
    :func:`aligned_scores`."""
    from pytest_judgerel.stats.ranking import rank_systems

    aligned, _, _ = aligned_scores(scores_by_system)
    return rank_systems(aligned, test=test, alpha=alpha, seed=seed, n_resamples=n_resamples)


def judge_self_preference(
    reference: Mapping[str, Sequence[Any]], judge: Mapping[str, Sequence[Any]], own_system: str
) -> Any:
    """Self-preference of a judge whose model is ``own_system`` against a reference judge, on the
    patients both judges scored for every system (see ``stats.ranking.self_preference``;
    ``stats.self_preference_test`` adds an interval and a test)."""
    from pytest_judgerel.stats.preference import aligned_self_preference

    ref, ref_ids, _ = aligned_scores(reference)
    jud, jud_ids, _ = aligned_scores(judge)
    if not set(ref_ids) & set(jud_ids):
        raise RatingsError("the two judges share no fully scored patient")
    return aligned_self_preference({n: dict(zip(ref_ids, v)) for n, v in ref.items()},
                                   {n: dict(zip(jud_ids, v)) for n, v in jud.items()}, own_system)
