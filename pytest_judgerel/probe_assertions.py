"""Assertion helpers for bias probes and judge-error-corrected pass rates.

Like :mod:`pytest_judgerel.assertions` (whose record and failure machinery they reuse), each
helper returns its result when the gate passes, raises
:class:`~pytest_judgerel.assertions.JudgeReliabilityFailure` (an ``AssertionError``) with a full
explanation when it does not, and records a metric record for the session report either way;
in report-only mode they record and never fail.  Replies that could not be parsed fail the
gate first (``max_parse_failures``, default the session's ``--judgerel-max-parse-failures``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .assertions import UNIT_RANGE
from .gate_stats import attach_stability, mean_gate_stability
from .assertions import _check_threshold, _metric_record, _parse_failure_lines, _parse_gate
from .gate_conclusion import conclude_record

_ANY = (float("-inf"), float("inf"))

__all__ = ["assert_position_consistent", "assert_no_length_bias", "assert_no_self_preference", "assert_pass_rate"]

_WORST = 5


@dataclass(frozen=True)
class _Summary:
    """The value, CI, n and k a metric record reads from a result."""

    value: float
    ci_low: float
    ci_high: float
    n: int | None
    k: int | None = None


def _head(label: str | None) -> str:
    return f"{label}: " if label else ""


def _check_use(use: str, allowed: tuple[str, ...]) -> None:
    if use not in allowed:
        raise ValueError(f"use must be one of {allowed}, got {use!r}")


# ---------------------------------------------------------------------- position
def assert_position_consistent(result: Any, min_consistency: float, *, use: str = "estimate",
                               max_first_preference: float | None = None, max_parse_failures: int | None = None,
                               label: str | None = None) -> Any:
    """Assert the judge gives the same verdict when a pair's answers swap places.

    ``result`` comes from :func:`pytest_judgerel.probes.position_bias`.  The consistency rate
    (or its lower Wilson bound, ``use="ci_low"``) must reach ``min_consistency``; with
    ``max_first_preference``, the share of pairs won by whichever answer is shown first must
    not exceed it either.
    """
    _check_threshold(min_consistency, "min_consistency", UNIT_RANGE)
    _check_use(use, ("estimate", "ci_low"))
    if max_first_preference is not None:
        _check_threshold(max_first_preference, "max_first_preference", UNIT_RANGE)
    statistic = "position consistency"
    failures = _parse_failure_lines(result, max_parse_failures)
    if failures:
        return _parse_gate(result, failures, "position_bias", statistic, min_consistency, label)
    if result.stats is None:
        return _parse_gate(result, ["  no pair got a readable verdict in both orders"], "position_bias",
                           statistic, min_consistency, label)
    s = result.stats
    c = s.consistency
    tested = c.value if use == "estimate" else c.ci_low
    ok_consistency = tested >= min_consistency
    ok_first = max_first_preference is None or s.first_preference.value <= max_first_preference
    worst = [{"item": pid, "detail": _verdict_detail(f, r, o)} for pid, f, r, o in result.inconsistent_pairs()[:_WORST]]
    rec = _metric_record(
        "position_bias", statistic, label, _Summary(c.value, c.ci_low, c.ci_high, s.n_valid, 2), min_consistency,
        "min", result, use=use, worst_items=worst, confidence=c.confidence,
        first_preference=s.first_preference.to_dict(), second_preference=s.second_preference.to_dict(),
        n_missing=s.n_missing, n_tie_mismatch=s.n_tie_mismatch, max_first_preference=max_first_preference,
        item_scores={pid: float(o != "consistent") for pid, _f, _r, o in result.verdicts if o != "missing"},
    )
    outcomes = [o for _pid, _f, _r, o in result.verdicts if o != "missing"]
    per_pair = [[float(o == "consistent"), float(o == "first")] for o in outcomes]
    attach_stability(rec, mean_gate_stability(
        per_pair, min_consistency, "min", "mean" if use == "estimate" else "wilson_low", c.confidence,
        extra=[(1, "mean", max_first_preference, "max")] if max_first_preference is not None else [],
        name=statistic))
    ok = ok_consistency and ok_first
    rec["passed"] = ok
    if ok:
        return conclude_record(rec, None, result)
    fp, sp = s.first_preference, s.second_preference
    lines = [
        f"{_head(label)}position consistency = {c.value:.4f} [{c.confidence:.0%} Wilson CI {c.ci_low:.4f}, "
        f"{c.ci_high:.4f}] ({c.count} of {s.n_valid} pairs keep their verdict when the answers swap)",
        f"  prefers whichever answer is shown first on {fp.count} pair(s) ({fp.value:.3f} "
        f"[CI {fp.ci_low:.3f}, {fp.ci_high:.3f}]), the second on {sp.count} ({sp.value:.3f}); "
        f"{s.n_tie_mismatch} tie in one order only",
    ]
    if not ok_consistency:
        what = "consistency" if use == "estimate" else "lower CI bound of the consistency"
        lines.append(f"  the {what} {tested:.4f} is below the threshold {min_consistency}")
    if not ok_first:
        lines.append(f"  the first-position preference {fp.value:.4f} exceeds max_first_preference "
                     f"{max_first_preference}")
    if s.n_missing:
        lines.append(f"  {s.n_missing} pair(s) without a readable verdict in both orders were left out")
    if worst:
        lines.append("  pairs whose verdict depends on the order:")
        lines += [f"    {w['item']}: {w['detail']}" for w in worst]
    return conclude_record(rec, "\n".join(lines), result)


def _verdict_detail(forward: str | None, reverse: str | None, outcome: str) -> str:
    what = {"first": "the answer shown first wins both times", "second": "the answer shown second wins both times",
            "tie_mismatch": "a tie in one order only"}.get(outcome, outcome)
    return f"verdict {forward} as given, {reverse} swapped ({what})"


# ---------------------------------------------------------------------- length
def assert_no_length_bias(result: Any, max_shift: float, *, use: str = "estimate", two_sided: bool = False,
                          max_parse_failures: int | None = None, label: str | None = None) -> Any:
    """Assert content-free padding does not raise the judge's score by more than ``max_shift``.

    ``result`` comes from :func:`pytest_judgerel.probes.length_bias`; the shift is the mean of
    (padded - original) scores normalised to [0, 1].  ``use="ci_high"`` gates the upper end of
    the paired t interval instead (stricter).  With ``two_sided`` a drop counts as well
    (the absolute shift is gated).
    """
    _check_threshold(max_shift, "max_shift", (-1.0, 1.0))
    _check_use(use, ("estimate", "ci_high"))
    statistic = "length shift"
    failures = _parse_failure_lines(result, max_parse_failures)
    if failures:
        return _parse_gate(result, failures, "length_bias", statistic, max_shift, label, direction="max")
    sh = result.shift
    if two_sided:
        tested = abs(sh.mean) if use == "estimate" else max(abs(sh.ci_low), abs(sh.ci_high))
    else:
        tested = sh.mean if use == "estimate" else sh.ci_high
    ok = tested <= max_shift
    sc = result.scale
    worst = [{"item": i, "detail": f"{s:+.3f} of the scale range ({s * sc.range:+.3g} on {sc.name})", "shift": s}
             for i, s in result.largest_shifts(_WORST)]
    loss = {i: (abs(s) if two_sided else s) for i, s in result.item_shifts.items() if s is not None}
    rec = _metric_record(
        "length_bias", statistic, label, _Summary(sh.mean, sh.ci_low, sh.ci_high, sh.n), max_shift, "max", result,
        use=use, two_sided=two_sided, worst_items=worst, confidence=sh.confidence, p=sh.p, p_greater=sh.p_greater,
        test="paired t", scale=sc.name, field=result.field, length_ratio=result.length_ratio,
        n_omitted=result.n_omitted, item_scores=loss,
    )
    shifts = [v for v in result.item_shifts.values() if v is not None]
    kind = ("abs_mean" if use == "estimate" else "abs_t") if two_sided else ("mean" if use == "estimate" else "t_high")
    attach_stability(rec, mean_gate_stability(shifts, max_shift, "max", kind, sh.confidence, name=statistic))
    rec["passed"] = ok
    if ok:
        return conclude_record(rec, None, result)
    lines = [
        f"{_head(label)}length shift = {sh.mean:+.4f} of the scale range [{sh.confidence:.0%} CI {sh.ci_low:+.4f}, "
        f"{sh.ci_high:+.4f}], paired t p = {sh.p:.3g} (n = {sh.n} items; {sh.mean * sc.range:+.3g} points on {sc.name})",
        f"  padding {result.field!r} with content-free sentences to {result.length_ratio:.1f}x its length "
        f"{'raised' if sh.mean > 0 else 'changed'} the judge's scores",
    ]
    what = ("|shift|" if two_sided else "shift") if use == "estimate" else \
        ("largest |CI bound|" if two_sided else "upper CI bound of the shift")
    lines.append(f"  the {what} {tested:.4f} exceeds max_shift {max_shift}")
    if result.n_omitted:
        lines.append(f"  {result.n_omitted} item(s) without a score in both versions were left out")
    if worst:
        lines.append("  items whose score rose most with padding:")
        lines += [f"    {w['item']}: {w['detail']}" for w in worst]
    return conclude_record(rec, "\n".join(lines), result)


# ---------------------------------------------------------------------- self-preference
def assert_no_self_preference(result: Any, max_rank_change: float, *, use: str = "estimate",
                              max_parse_failures: int | None = None, label: str | None = None) -> Any:
    """Assert the judge does not lift its own model's outputs above where the reference puts them.

    ``result`` comes from :func:`pytest_judgerel.probes.self_preference`; the gated value is the
    mean per-task rank change of the own model (reference rank - judge rank; positive = the
    judge favours itself), or the upper end of its t interval (``use="ci_high"``).
    """
    _check_threshold(max_rank_change, "max_rank_change", _ANY)
    _check_use(use, ("estimate", "ci_high"))
    statistic = "self-preference rank change"
    failures = _parse_failure_lines(result, max_parse_failures)
    if failures:
        return _parse_gate(result, failures, "self_preference", statistic, max_rank_change, label, direction="max")
    t = result.test
    r = t.result
    tested = t.mean_rank_change if use == "estimate" else t.ci_high
    ok = tested <= max_rank_change
    rec = _metric_record(
        "self_preference", statistic, label, _Summary(t.mean_rank_change, t.ci_low, t.ci_high, t.n,
                                                      len(result.models)),
        max_rank_change, "max", result, use=use, confidence=t.confidence, own_model=result.own_model,
        models=list(result.models), reference_rank=r.reference_rank, judge_rank=r.judge_rank,
        rank_change=r.rank_change, share_higher=r.share_higher, share_lower=r.share_lower,
        share_equal=r.share_equal, p_sign=t.p_sign, n_dropped=result.n_dropped,
        item_scores={str(task): float(v) for task, v in zip(t.tasks, t.per_task)},
    )
    attach_stability(rec, mean_gate_stability(list(t.per_task), max_rank_change, "max",
                                               "mean" if use == "estimate" else "t_high", t.confidence,
                                               name=statistic))
    rec["passed"] = ok
    if ok:
        return conclude_record(rec, None, result)
    lines = [
        f"{_head(label)}self-preference of {result.own_model}: mean per-task rank change {t.mean_rank_change:+.3f} "
        f"[{t.confidence:.0%} CI {t.ci_low:+.3f}, {t.ci_high:+.3f}] over {t.n} tasks and {len(result.models)} models",
        f"  the judge ranks its own model higher than the reference on {t.n_higher} task(s), lower on "
        f"{t.n_lower}, the same on {t.n_equal} (sign test p = {t.p_sign:.3g}); leaderboard rank "
        f"{r.reference_rank} under the reference, {r.judge_rank} under the judge",
        f"  the {'mean rank change' if use == 'estimate' else 'upper CI bound'} {tested:+.4f} exceeds "
        f"max_rank_change {max_rank_change}",
    ]
    if result.n_dropped:
        lines.append(f"  {result.n_dropped} task(s) without a score for every model were left out")
    return conclude_record(rec, "\n".join(lines), result)


# ---------------------------------------------------------------------- corrected pass rate
def assert_pass_rate(passed: Any, n: int | None = None, *, min_rate: float, calibration: Any = None,
                     use: str = "estimate", confidence: float = 0.95, label: str | None = None) -> Any:
    """Assert the judge-error-corrected pass rate reaches ``min_rate``.

    ``passed``/``n``/``calibration`` as for :func:`pytest_judgerel.stats.corrected_pass_rate`
    (or ``passed`` is already a :class:`~pytest_judgerel.stats.CorrectedPassRate`).
    ``use="ci_low"`` gates the lower confidence bound, which includes the uncertainty of the
    judge's specificity and sensitivity.
    """
    from .stats.pass_rate import CorrectedPassRate, corrected_pass_rate

    _check_threshold(min_rate, "min_rate", UNIT_RANGE)
    _check_use(use, ("estimate", "ci_low"))
    if isinstance(passed, CorrectedPassRate):
        if calibration is not None or n is not None:
            raise ValueError("pass either a CorrectedPassRate or passed/n/calibration, not both")
        res = passed
    else:
        if calibration is None:
            raise ValueError("assert_pass_rate corrects the judge's pass rate for its errors: pass calibration="
                             "[(judge verdict, human label), ...] from a human-labelled calibration set")
        res = corrected_pass_rate(passed, n, calibration=calibration, confidence=confidence)
    tested = res.value if use == "estimate" else res.ci_low
    ok = tested >= min_rate
    cal = res.calibration
    rec = _metric_record(
        "pass_rate", "corrected pass rate", label, _Summary(res.value, res.ci_low, res.ci_high, res.n), min_rate,
        "min", None, use=use, confidence=res.confidence, observed=res.observed, passed_count=res.passed,
        specificity=cal.specificity, sensitivity=cal.sensitivity, n_negative=cal.n_negative,
        n_positive=cal.n_positive, unclipped=res.unclipped,
    )
    rec["passed"] = ok
    if ok:
        return conclude_record(rec, None, res)
    what = "corrected pass rate" if use == "estimate" else "lower CI bound of the corrected pass rate"
    lines = [
        f"{_head(label)}corrected pass rate = {res.value:.4f} [{res.confidence:.0%} CI {res.ci_low:.4f}, "
        f"{res.ci_high:.4f}] (the judge passed {res.passed} of {res.n} = {res.observed:.4f})",
        f"  judge on the calibration set: specificity {cal.specificity:.3f} ({cal.n_negative} items humans "
        f"failed), sensitivity {cal.sensitivity:.3f} ({cal.n_positive} items humans passed); "
        "theta = (p + q0 - 1) / (q0 + q1 - 1), Lee et al. 2025",
        f"  the {what} {tested:.4f} is below min_rate {min_rate}",
    ]
    return conclude_record(rec, "\n".join(lines), res)
