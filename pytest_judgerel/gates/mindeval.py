"""The MindEval gates (seed 004): a system's interaction score and the judge's agreement with humans.

Each helper computes a metric record per statistic and ends like every gate, in
:func:`pytest_judgerel.gates.conclusion.finish` (the one gate conclusion): recorded with the
active recorder, an unstable pass fails under ``--judgerel-require-stable``, the parse-failure
limit defaults to ``--judgerel-max-parse-failures``, and a failure raises
:class:`~pytest_judgerel.gates.conclusion.JudgeReliabilityFailure` (an ``AssertionError``) with a
readable message, except in report-only mode, where it records and returns.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from pytest_judgerel.errors import ConfigError
from pytest_judgerel.gates.conclusion import finish, parse_failure_limit
from pytest_judgerel.session.recording import AgreementRecord, GroupResult, MetricRecord, MindEvalScoreRecord

__all__ = ["assert_mindeval_score", "assert_judge_agrees_with_humans"]


def _finish(records: Sequence[MetricRecord], problems: Sequence[str], title: str) -> None:
    """End the gate (:func:`pytest_judgerel.gates.conclusion.finish`): one message for all its records."""
    finish(records, None, f"{title}: " + "; ".join(problems) if problems else None)


def _base(statistic: str, value: float | None, n: int, threshold: float | None, passed: bool, judge: Any,
          parse_failures: int, groups: dict[str, GroupResult]) -> MetricRecord:
    """The fields of a MindEval gate's record (the thresholds are minimums)."""
    return {"statistic": statistic, "value": value, "ci": None, "n": n, "k": None, "threshold": threshold,
            "direction": "min", "passed": passed, "groups": groups, "worst_items": [], "judge": judge,
            "parse_failures": parse_failures}


def assert_mindeval_score(
    scores: Sequence[Any],
    min_mean: float | None = None,
    *,
    axis: str | None = None,
    max_parse_failures: int | None = None,
    by_severity: bool = False,
    interactions: Sequence[Any] | None = None,
    judge: Any = None,
) -> float:
    """Assert the mean MindEval score (or one axis) over interactions is at least ``min_mean``.

    ``scores``: :class:`~pytest_judgerel.mindeval.judge.JudgeScore` s (or axis dicts / None for
    a failed parse).  More than ``max_parse_failures`` unparsable replies fail the assertion on
    their own (failed replies are never scored as 3); default: the session's
    ``--judgerel-max-parse-failures`` (0 outside pytest).  ``by_severity`` with ``interactions``
    adds severe / non-severe groups to the record (and checks each against ``min_mean``).
    Returns the mean.
    """
    from pytest_judgerel.gates.stability import attach_stability
    from pytest_judgerel.mindeval.judge import AXES
    from pytest_judgerel.mindeval.metrics import breakdown, interaction_score

    max_parse_failures = parse_failure_limit(max_parse_failures)
    if axis is not None and axis not in AXES:
        raise ConfigError(f"axis must be one of {list(AXES)}, got {axis!r}")
    dicts = [s.scores if hasattr(s, "scores") else s for s in scores]
    failures = sum(d is None for d in dicts)
    good = [d for d in dicts if d is not None]
    values: list[float] = [float(d[axis]) if axis else float(interaction_score(d) or 0.0) for d in good]
    mean = sum(values) / len(values) if values else math.nan
    problems = []
    if failures > max_parse_failures:
        problems.append(f"{failures} of {len(dicts)} judge replies could not be parsed or the call failed "
                        f"(allowed {max_parse_failures})")
    if not values:
        problems.append("no parsable judge score")
    elif min_mean is not None and not mean >= min_mean:
        problems.append(f"mean {'MindEval score' if axis is None else axis} {mean:.3f} < required {min_mean:g}")
    groups: dict[str, GroupResult] = {}
    if by_severity:
        if interactions is None or len(interactions) != len(scores):
            raise ConfigError("by_severity needs the interactions, one per score")
        for g, s in breakdown(list(interactions), list(scores), by="severity").items():
            v = s.axes[axis] if axis else s.mean
            ok = min_mean is None or v >= min_mean
            groups[str(g)] = {"value": v, "ci": None, "n": s.n, "passed": ok}
            if not ok:
                problems.append(f"{g} patients: mean {v:.3f} < required {min_mean:g}")
    worst = sorted(
        ((getattr(s, "interaction_id", str(i)), v) for i, (s, v) in enumerate(zip(
            [s for s in scores if (s.scores if hasattr(s, "scores") else s) is not None], values))),
        key=lambda t: t[1],
    )[:5]
    passed = not problems
    stability = None
    if min_mean is not None and len(values) >= 2:
        from pytest_judgerel.gates.stability import mean_gate_stability

        stability = mean_gate_stability(values, min_mean, "min", "mean", name="mean MindEval score")
    rec: MindEvalScoreRecord = {
        "kind": "mindeval_score",
        **_base(f"mean {'5-axis score' if axis is None else axis} (1-6)", None if math.isnan(mean) else mean,
                len(values), min_mean, passed, judge.fingerprint() if hasattr(judge, "fingerprint") else judge,
                failures, groups),
        "worst_items": [{"item": str(i), "detail": f"{v:.2f}"} for i, v in worst],
    }
    attach_stability(rec, stability)
    _finish([rec], problems, "MindEval score check failed")
    return mean


def assert_judge_agrees_with_humans(
    judge_scores: Sequence[Any],
    human_scores: Any,
    min_kendall: float | None = None,
    min_mipsa: float | None = None,
    *,
    patients: Sequence[Any] | None = None,
    systems: Sequence[Any] | None = None,
    ties: str = "sign",
    judge: Any = None,
    max_parse_failures: int | None = None,
) -> dict[str, float]:
    """Assert a judge agrees with human annotators (MindEval section 3.2).

    ``judge_scores``: one score per interaction; ``human_scores``: interactions x annotators
    (NaN = missing) or one column.  Kendall tau (tau-b) and MIPSA are computed against the
    average annotator; MIPSA needs ``patients`` (and ``systems`` to align the system order).
    More than ``max_parse_failures`` judge replies that failed (None, or a score without
    ``scores``) fail the gate (default: the session's ``--judgerel-max-parse-failures``).
    Returns ``{"kendall": ..., "mipsa": ...}`` (only the statistics asked for).
    """
    from pytest_judgerel.gates.stability import attach_stability
    from pytest_judgerel.mindeval.metrics import judge_mipsa, kendall_vs_annotators

    max_parse_failures = parse_failure_limit(max_parse_failures)
    if min_kendall is None and min_mipsa is None:
        raise ConfigError("give min_kendall and/or min_mipsa")
    if min_mipsa is not None and patients is None:
        raise ConfigError("min_mipsa needs patients= (systems are compared within a patient)")
    out: dict[str, float] = {}
    problems = []
    records: list[AgreementRecord] = []
    failures = sum(1 for s in judge_scores if s is None or (hasattr(s, "scores") and s.scores is None))
    fp = judge.fingerprint() if hasattr(judge, "fingerprint") else judge
    if min_kendall is not None:
        kt = kendall_vs_annotators(judge_scores, human_scores)
        ok = kt.vs_average >= min_kendall
        out["kendall"] = kt.vs_average
        records.append({"kind": "agreement", **_base(
            "Kendall tau-b vs average annotator", kt.vs_average, kt.n, min_kendall, ok, fp, failures,
            _annotator_groups(kt.per_annotator))})
        if not ok:
            problems.append(f"Kendall tau vs average annotator {kt.vs_average:.3f} < {min_kendall:g} (n={kt.n})")
    if min_mipsa is not None:
        mp = judge_mipsa(judge_scores, human_scores, patients, systems, ties)  # type: ignore[arg-type]
        ok = mp.vs_average >= min_mipsa
        out["mipsa"] = mp.vs_average
        records.append({"kind": "agreement", **_base(
            f"MIPSA vs average annotator (ties={ties})", mp.vs_average, mp.n_interactions, min_mipsa, ok, fp,
            failures, _annotator_groups(mp.per_annotator))})
        if not ok:
            problems.append(f"MIPSA vs average annotator {mp.vs_average:.3f} < {min_mipsa:g} "
                            f"({mp.n_interactions} patients)")
    if failures > max_parse_failures:
        problems.append(f"{failures} of {len(judge_scores)} judge replies could not be parsed or the call "
                        f"failed (allowed {max_parse_failures})")
        for rec in records:
            rec["passed"] = False
    for rec in records:
        attach_stability(rec, None)
    _finish(records, problems, "judge disagrees with humans")
    return out


def _annotator_groups(per_annotator: Sequence[float]) -> dict[str, GroupResult]:
    """One group per annotator: the statistic against that annotator alone (no verdict of its own)."""
    return {f"annotator {j}": {"value": None if math.isnan(v) else v, "ci": None, "n": None, "passed": None}
            for j, v in enumerate(per_annotator)}
