"""Self-preference of a judge, with an interval and a test, on tasks aligned across systems.

The statistic is :func:`pytest_judgerel.stats.ranking.self_preference` (MindEval section 4.2;
Wataoka et al. 2024): per task, the rank of the judge's own system among the systems under the
judge and under a reference (humans or another judge); ``rank change = reference rank - judge
rank`` (positive: the judge lifts its own system).  This module adds what a gate needs:

* alignment: only tasks with a finite score for every system under both the judge and the
  reference enter (MindEval's ``judge_self_preference`` aligns patients the same way);
* a Student t interval for the mean per-task rank change (the per-task changes are the
  statistic evaluated on one task at a time);
* an exact one-sided sign test (binomial, H0: a task is as likely to move the own system up as
  down; ties dropped) of the shares ``share_higher`` vs ``share_lower``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Hashable, Mapping

import numpy as np

from ..errors import ReliabilityError
from .interval import HasInterval, check_confidence

__all__ = ["aligned_self_preference", "SelfPreferenceTest", "self_preference_test"]


def _aligned(reference: Mapping[str, Mapping[Hashable, Any]], judge: Mapping[str, Mapping[Hashable, Any]]
             ) -> tuple[list[str], list[Hashable], dict[str, list[float]], dict[str, list[float]]]:
    systems = list(reference)
    if set(systems) != set(judge):
        raise ReliabilityError(f"reference and judge cover different systems: {sorted(map(str, reference))} vs "
                               f"{sorted(map(str, judge))}")
    if len(systems) < 2:
        raise ReliabilityError("self-preference needs at least two systems")

    def finite(v: Any) -> bool:
        try:
            return v is not None and math.isfinite(float(v))
        except (TypeError, ValueError):
            raise ReliabilityError(f"score {v!r} is not a number") from None

    first = reference[systems[0]]
    tasks = [t for t in first
             if all(t in reference[s] and finite(reference[s][t]) and t in judge[s] and finite(judge[s][t])
                    for s in systems)]
    if not tasks:
        raise ReliabilityError("no task has a score for every system from both the judge and the reference")
    ref = {s: [float(reference[s][t]) for t in tasks] for s in systems}
    jud = {s: [float(judge[s][t]) for t in tasks] for s in systems}
    return systems, tasks, ref, jud


def aligned_self_preference(reference: Mapping[str, Mapping[Hashable, Any]],
                            judge: Mapping[str, Mapping[Hashable, Any]], own_system: str) -> Any:
    """:func:`~pytest_judgerel.stats.ranking.self_preference` on the tasks every system has a
    finite score for under both ``reference`` and ``judge`` (``{system: {task: score}}``)."""
    from .ranking import self_preference

    _, _, ref, jud = _aligned(reference, judge)
    return self_preference(ref, jud, own_system)


@dataclass(frozen=True)
class SelfPreferenceTest(HasInterval):
    """Self-preference with inference.  ``result`` is the
    :class:`~pytest_judgerel.stats.ranking.SelfPreferenceResult`; ``mean_rank_change`` its
    ``mean_interaction_rank_change`` with a Student t interval; ``p_sign`` the exact one-sided
    sign test that the judge moves its own system up more often than down."""

    _estimate_name = "mean_rank_change"

    result: Any
    mean_rank_change: float
    ci_low: float
    ci_high: float
    confidence: float
    n_higher: int
    n_lower: int
    n_equal: int
    p_sign: float
    tasks: tuple[Hashable, ...] = field(default=(), repr=False)
    per_task: tuple[float, ...] = field(default=(), repr=False)

    @property
    def n(self) -> int:
        return len(self.per_task)

    def to_dict(self) -> dict[str, Any]:
        r = self.result
        return {"system": r.system, "reference_rank": r.reference_rank, "judge_rank": r.judge_rank,
                "rank_change": r.rank_change, "mean_rank_change": self.mean_rank_change,
                "ci": [self.ci_low, self.ci_high], "confidence": self.confidence, "n_higher": self.n_higher,
                "n_lower": self.n_lower, "n_equal": self.n_equal, "p_sign": self.p_sign, "n": self.n}

    def __str__(self) -> str:
        r = self.result
        return (f"self-preference of {r.system}: mean per-task rank change {self.formatted(3, signed=True)} "
                f"over {self.n} tasks "
                f"(up {self.n_higher}, down {self.n_lower}, same {self.n_equal}; sign test p = {self.p_sign:.3g}); "
                f"leaderboard rank {r.reference_rank} -> {r.judge_rank}")


def self_preference_test(reference: Mapping[str, Mapping[Any, Any]],
                         judge: Mapping[str, Mapping[Any, Any]], own_system: str, *,
                         confidence: float = 0.95) -> SelfPreferenceTest:
    """Self-preference of the judge whose model is ``own_system`` against ``reference``.

    Both are ``{system: {task: score}}`` (a task: one prompt every system answered); scores may
    be on different scales, only the ranks within a task count.
    """
    from scipy import stats

    from .bias import paired_shift
    from .ranking import self_preference

    systems, tasks, ref, jud = _aligned(reference, judge)
    if own_system not in systems:
        raise ReliabilityError(f"own_system {own_system!r} is not among the systems {sorted(map(str, systems))}")
    check_confidence(confidence)
    result = self_preference(ref, jud, own_system)
    per_task = np.array([self_preference({s: [ref[s][i]] for s in systems}, {s: [jud[s][i]] for s in systems},
                                         own_system).mean_interaction_rank_change for i in range(len(tasks))])
    n = per_task.size
    if n < 2:
        raise ReliabilityError(f"self-preference needs at least 2 tasks scored for every system, got {n}")
    shift = paired_shift(np.zeros(n), per_task, confidence)  # one-sample t interval of the mean change
    up, down = int((per_task > 0).sum()), int((per_task < 0).sum())
    p_sign = float(stats.binomtest(up, up + down, 0.5, alternative="greater").pvalue) if up + down else 1.0
    return SelfPreferenceTest(result, shift.mean, shift.ci_low, shift.ci_high, float(confidence), up, down,
                              n - up - down, p_sign, tuple(tasks), tuple(per_task.tolist()))
