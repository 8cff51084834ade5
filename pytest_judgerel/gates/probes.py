"""Assertion helpers for bias probes and judge-error-corrected pass rates.

Like every gate (the shared machinery is :mod:`pytest_judgerel.gates.common`), each helper
returns its result when the gate passes, raises
:class:`~pytest_judgerel.gates.conclusion.JudgeReliabilityFailure` (an ``AssertionError``) with a full
explanation when it does not, and records a metric record for the session report either way;
in report-only mode they record and never fail.  Replies that could not be parsed fail the
gate first (``max_parse_failures``, default the session's ``--judgerel-max-parse-failures``).
"""

from __future__ import annotations

from typing import Any

from .common import (
    ANY_RANGE,
    UNIT_RANGE,
    WORST,
    Summary,
    check_equivalence,
    check_threshold,
    check_use,
    fail_unparsed,
    finish,
    gate_fields,
    head,
    parse_failure_lines,
    worst_lines,
)
from .sequential import settle_pass_rate
from .stability import attach_stability, mean_gate_stability
from ..ratings import Ratings
from ..stats.interval import format_estimate
from ..session.recording import (
    LengthBiasRecord,
    PassRateRecord,
    PositionBiasRecord,
    SelfPreferenceRecord,
    WorstItem,
)

__all__ = ["assert_position_consistent", "assert_no_length_bias", "assert_no_self_preference", "assert_pass_rate"]


# ---------------------------------------------------------------------- position
def assert_position_consistent(result: Any, min_consistency: float, *, use: str = "estimate",
                               alpha: float | None = 0.05, max_first_preference: float | None = None,
                               max_parse_failures: int | None = None, label: str | None = None) -> Any:
    """Assert the judge gives the same verdict when a pair's answers swap places, and shows no
    position preference.

    ``result`` comes from :func:`pytest_judgerel.probes.position_bias`.  Two separate checks:

    * **consistency** (noise): the share of pairs with the same verdict in both orders (or, with
      ``use="ci_low"``, its lower Wilson bound) must reach ``min_consistency``;
    * **position preference** (bias): the exact two-sided sign test of the pairs won by the
      first position both times against those won by the second must not be significant at
      ``alpha`` (``None`` turns the test off).  A judge without position bias that is merely
      noisy loses consistency on both sides alike and passes this check.

    ``max_first_preference`` caps the share of pairs won by whichever answer is shown first; it
    honours ``use``: the point estimate, or with ``use="ci_low"`` its lower Wilson bound (the cap
    then fails only when the data show the share above it).  The failure message says which
    check failed.
    """
    __tracebackhide__ = True
    if not hasattr(result, "verdicts") or not hasattr(result, "inconsistent_pairs"):
        got = type(result).__name__
        raise TypeError(f"assert_position_consistent takes the result of pytest_judgerel.probes.position_bias("
                        f"judge, pairs) (a PositionBiasResult), got a {got}"
                        + (": stats.position_consistency(...) computes the statistic only; run the probe "
                           "instead" if got == "PositionConsistency" else ""))
    check_threshold(min_consistency, "min_consistency", UNIT_RANGE)
    use = check_use(use, ("estimate", "ci_low"))
    if max_first_preference is not None:
        check_threshold(max_first_preference, "max_first_preference", UNIT_RANGE)
    if alpha is not None and (isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1):
        raise ValueError(f"alpha must lie strictly between 0 and 1 (or be None), got {alpha!r}")
    statistic = "position consistency"
    failures = parse_failure_lines(result, max_parse_failures)
    if failures:
        return fail_unparsed(result, failures, "position_bias", statistic, min_consistency, label)
    if result.stats is None:
        return fail_unparsed(result, ["  no pair got a readable verdict in both orders"], "position_bias",
                             statistic, min_consistency, label)
    s = result.stats
    c = s.consistency
    fp, sp = s.first_preference, s.second_preference
    tested = c.value if use == "estimate" else c.ci_low
    first_tested = fp.value if use == "estimate" else fp.ci_low
    p_position = s.p_position
    ok_consistency = tested >= min_consistency
    ok_position = alpha is None or p_position >= alpha
    ok_first = max_first_preference is None or first_tested <= max_first_preference
    worst: list[WorstItem] = [{"item": str(pid), "detail": _verdict_detail(f, r, o)}
                              for pid, f, r, o in result.inconsistent_pairs()[:WORST]]
    rec: PositionBiasRecord = {
        **gate_fields("position_bias", statistic, label, Summary(c.value, c.ci_low, c.ci_high, s.n_valid, 2),
                      min_consistency, "min", result),
        "use": use, "worst_items": worst, "confidence": c.confidence,
        "first_preference": fp.to_dict(), "second_preference": sp.to_dict(), "n_first": s.n_first,
        "n_second": s.n_second, "p_position": p_position, "alpha": alpha, "position_preference": not ok_position,
        "low_consistency": not ok_consistency, "n_missing": s.n_missing, "n_tie_mismatch": s.n_tie_mismatch,
        "max_first_preference": max_first_preference,
        "item_scores": {str(pid): float(o != "consistent") for pid, _f, _r, o in result.verdicts if o != "missing"},
    }
    outcomes = [o for _pid, _f, _r, o in result.verdicts if o != "missing"]
    per_pair = [[float(o == "consistent"), float(o == "first"), float(o == "first") - float(o == "second")]
                for o in outcomes]
    extra: list[tuple[int, str, float, str]] = \
        [(1, "mean" if use == "estimate" else "wilson_low", max_first_preference, "max")] \
        if max_first_preference is not None else []
    if alpha is not None:
        extra.append((2, "sign_p", alpha, "min"))
    attach_stability(rec, mean_gate_stability(
        per_pair, min_consistency, "min", "mean" if use == "estimate" else "wilson_low", c.confidence,
        extra=extra, name=statistic))
    ok = ok_consistency and ok_position and ok_first
    rec["passed"] = ok
    if ok:
        return finish(rec, result)
    lines = [
        f"{head(label)}position consistency = {c.formatted()} ({c.count} of {s.n_valid} pairs keep their verdict when the answers swap)",
        f"  the answer shown first won both orders on {s.n_first} pair(s) ({fp.formatted(3)}), "
        f"the answer shown second on {s.n_second} ({sp.value:.3f}); exact two-sided sign test "
        f"p = {p_position:.3g}; {s.n_tie_mismatch} tie in one order only",
    ]
    if not ok_position:
        lines.append(f"  position preference: the judge significantly prefers the answer shown {s.preferred} "
                     f"({s.n_first} first vs {s.n_second} second wins, p = {p_position:.3g} < alpha {alpha:g})")
    if not ok_consistency:
        what = "consistency" if use == "estimate" else "lower CI bound of the consistency"
        if alpha is None:
            cause = ""
        elif not ok_position:
            cause = " (the position preference above accounts for part of it)"
        else:
            cause = (f"; with no significant position preference (sign test p = {p_position:.3g}) the inconsistent "
                     "verdicts are noise (they change between calls), not a bias toward a position")
        lines.append(f"  low consistency: the {what} {tested:.4f} is below the threshold {min_consistency}{cause}")
    if not ok_first:
        what = "first-position preference" if use == "estimate" else "lower CI bound of the first-position preference"
        lines.append(f"  the {what} {first_tested:.4f} exceeds max_first_preference {max_first_preference}")
    if s.n_missing:
        lines.append(f"  {s.n_missing} pair(s) without a readable verdict in both orders were left out")
    lines += worst_lines(worst, "pairs whose verdict depends on the order")
    return finish(rec, result, lines)


def _verdict_detail(forward: str | None, reverse: str | None, outcome: str) -> str:
    what = {"first": "the answer shown first wins both times", "second": "the answer shown second wins both times",
            "tie_mismatch": "a tie in one order only"}.get(outcome, outcome)
    return f"verdict {forward} as given, {reverse} swapped ({what})"


# ---------------------------------------------------------------------- length
def assert_no_length_bias(result: Any, max_shift: float, *, use: str = "estimate", two_sided: bool = False,
                          alpha: float = 0.05, power: float = 0.8, max_parse_failures: int | None = None,
                          label: str | None = None) -> Any:
    """Assert content-free padding does not raise the judge's score by more than ``max_shift``.

    ``result`` comes from :func:`pytest_judgerel.probes.length_bias`; the shift is the mean of
    (padded - original) scores normalised to [0, 1].  ``use``:

    * ``"estimate"``: the mean shift must not exceed ``max_shift`` (no error control);
    * ``"ci_high"``: the upper end of the paired t interval must not exceed it;
    * ``"equivalence"``: the claim "no length bias" as a test: two one-sided t tests (TOST) at
      level ``alpha`` with the margin ``max_shift`` must show the shift below it (a judge with
      a shift of ``max_shift`` passes at most ``alpha`` of the time).  The record and the
      message give the items the claim needs for ``power`` when the judge has no bias at all
      (:func:`pytest_judgerel.stats.equivalence_sample_size`).

    With ``two_sided`` a drop counts as well (the absolute shift is gated; TOST then tests
    ``-max_shift < shift < max_shift``).
    """
    __tracebackhide__ = True
    from ..stats.bias import equivalence_test
    from ..stats.planning import equivalence_sample_size

    check_threshold(max_shift, "max_shift", (-1.0, 1.0))
    use = check_use(use, ("estimate", "ci_high", "equivalence"))
    check_equivalence(use, max_shift, "max_shift", alpha)
    if isinstance(power, bool) or not isinstance(power, (int, float)) or not 0 < power < 1:
        raise ValueError(f"power must lie strictly between 0 and 1, got {power!r}")
    statistic = "length shift"
    failures = parse_failure_lines(result, max_parse_failures)
    if failures:
        return fail_unparsed(result, failures, "length_bias", statistic, max_shift, label, direction="max")
    sh = result.shift
    shifts = [v for v in result.item_shifts.values() if v is not None]
    tost = plan = None
    if use == "equivalence":
        tost = equivalence_test(shifts, max_shift, alpha, two_sided, bound=1.0)  # shifts lie in [-1, 1]
        tested = max(abs(tost.ci_low), abs(tost.ci_high)) if two_sided else tost.ci_high
        ok = tost.equivalent
        if tost.sd > 0:
            plan = equivalence_sample_size(max_shift, tost.sd, alpha=alpha, power=power, two_sided=two_sided)
    else:
        if two_sided:
            tested = abs(sh.mean) if use == "estimate" else max(abs(sh.ci_low), abs(sh.ci_high))
        else:
            tested = sh.mean if use == "estimate" else sh.ci_high
        ok = tested <= max_shift
    sc = result.scale
    worst: list[WorstItem] = [
        {"item": str(i), "detail": f"{s:+.3f} of the scale range ({s * sc.range:+.3g} on {sc.name})", "shift": s}
        for i, s in result.largest_shifts(WORST)]
    loss: dict[str, float | None] = {str(i): (abs(s) if two_sided else s)
                                     for i, s in result.item_shifts.items() if s is not None}
    rec: LengthBiasRecord = {
        **gate_fields("length_bias", statistic, label, Summary(sh.mean, sh.ci_low, sh.ci_high, sh.n), max_shift,
                      "max", result),
        "use": use, "two_sided": two_sided, "worst_items": worst, "confidence": sh.confidence, "p": sh.p,
        "p_greater": sh.p_greater, "test": "TOST (skew-robust)" if tost is not None else "paired t",
        "scale": sc.name, "field": result.field, "length_ratio": result.length_ratio,
        "n_omitted": result.n_omitted, "item_scores": loss,
    }
    if tost is not None:
        rec.update({"equivalence": tost.to_dict(), "alpha": alpha})
    if plan is not None:
        rec["items_needed"] = plan.to_dict()
    if use == "equivalence":  # the TOST decision is the (1 - 2 alpha) interval inside the margin
        kind, conf = ("abs_t" if two_sided else "t_high"), 1 - 2 * alpha
    else:
        kind = ("abs_mean" if use == "estimate" else "abs_t") if two_sided else ("mean" if use == "estimate" else "t_high")
        conf = sh.confidence
    attach_stability(rec, mean_gate_stability(shifts, max_shift, "max", kind, conf, name=statistic))
    rec["passed"] = ok
    if ok:
        return finish(rec, result)
    lines = [
        f"{head(label)}length shift = {sh.mean:+.4f} of the scale range {sh.interval.format(signed=True)}, "
        f"paired t p = {sh.p:.3g} (n = {sh.n} items; {sh.mean * sc.range:+.3g} points on {sc.name})",
    ]
    if tost is not None:
        side = f"-{max_shift} < shift < {max_shift}" if two_sided else f"shift < {max_shift}"
        lines.append(f"  'no length bias' is not shown: the equivalence test (TOST, alpha {alpha:g}) of {side} gives "
                     f"p = {tost.p:.3g}; its {1 - 2 * alpha:.0%} interval [{tost.ci_low:+.4f}, {tost.ci_high:+.4f}] "
                     "is not inside the margin")
        if tost.inconclusive:
            lines.append(f"  {tost.inconclusive_reason}")
        if plan is not None and plan.n is not None:
            lines.append(f"  showing it with power {power:g} for a judge without bias needs about {plan.n} items at "
                         f"this spread (sd {tost.sd:.3g} of the per-item shifts); this run has {tost.n}")
        if sh.p < 0.05:
            lines.append(f"  the shift is also significantly different from 0 (paired t p = {sh.p:.3g}): padding "
                         f"{'raised' if sh.mean > 0 else 'lowered'} the judge's scores")
    else:
        lines.append(f"  padding {result.field!r} with content-free sentences to {result.length_ratio:.1f}x its "
                     f"length {'raised' if sh.mean > 0 else 'changed'} the judge's scores")
        what = ("|shift|" if two_sided else "shift") if use == "estimate" else \
            ("largest |CI bound|" if two_sided else "upper CI bound of the shift")
        lines.append(f"  the {what} {tested:.4f} exceeds max_shift {max_shift}")
    if result.n_omitted:
        lines.append(f"  {result.n_omitted} item(s) without a score in both versions were left out")
    lines += worst_lines(worst, "items whose score rose most with padding")
    return finish(rec, result, lines)


# ---------------------------------------------------------------------- self-preference
def assert_no_self_preference(result: Any, max_rank_change: float, *, use: str = "estimate",
                              alpha: float = 0.05, max_parse_failures: int | None = None,
                              label: str | None = None) -> Any:
    """Assert the judge does not lift its own model's outputs above where the reference puts them.

    ``result`` comes from :func:`pytest_judgerel.probes.self_preference`; the gated value is the
    mean per-task rank change of the own model (reference rank - judge rank; positive = the
    judge favours itself), or the upper end of its t interval (``use="ci_high"``).
    ``use="equivalence"`` makes "no self-preference" a test: the one-sided TOST at ``alpha``
    must show the mean rank change below the margin ``max_rank_change`` (> 0).
    """
    __tracebackhide__ = True
    from ..stats.bias import equivalence_test

    check_threshold(max_rank_change, "max_rank_change", ANY_RANGE)
    use = check_use(use, ("estimate", "ci_high", "equivalence"))
    check_equivalence(use, max_rank_change, "max_rank_change", alpha)
    statistic = "self-preference rank change"
    failures = parse_failure_lines(result, max_parse_failures)
    if failures:
        return fail_unparsed(result, failures, "self_preference", statistic, max_rank_change, label, direction="max")
    t = result.test
    r = t.result
    tost = equivalence_test(list(t.per_task), max_rank_change, alpha, two_sided=False,
                            bound=float(len(result.models) - 1)) \
        if use == "equivalence" else None
    tested = t.mean_rank_change if use == "estimate" else t.ci_high if tost is None else tost.ci_high
    ok = tested <= max_rank_change if tost is None else tost.equivalent
    rec: SelfPreferenceRecord = {
        **gate_fields("self_preference", statistic, label,
                      Summary(t.mean_rank_change, t.ci_low, t.ci_high, t.n, len(result.models)),
                      max_rank_change, "max", result),
        "use": use, "confidence": t.confidence, "own_model": result.own_model, "models": list(result.models),
        "reference_rank": r.reference_rank, "judge_rank": r.judge_rank, "rank_change": r.rank_change,
        "share_higher": r.share_higher, "share_lower": r.share_lower, "share_equal": r.share_equal,
        "p_sign": t.p_sign, "n_dropped": result.n_dropped,
        "item_scores": {str(task): float(v) for task, v in zip(t.tasks, t.per_task)},
    }
    if tost is not None:
        rec.update({"equivalence": tost.to_dict(), "alpha": alpha})
    attach_stability(rec, mean_gate_stability(list(t.per_task), max_rank_change, "max",
                                               "mean" if use == "estimate" else "t_high",
                                               t.confidence if tost is None else 1 - 2 * alpha, name=statistic))
    rec["passed"] = ok
    if ok:
        return finish(rec, result)
    lines = [
        f"{head(label)}self-preference of {result.own_model}: mean per-task rank change "
        f"{t.formatted(3, signed=True)} over {t.n} tasks and {len(result.models)} models",
        f"  the judge ranks its own model higher than the reference on {t.n_higher} task(s), lower on "
        f"{t.n_lower}, the same on {t.n_equal} (sign test p = {t.p_sign:.3g}); leaderboard rank "
        f"{r.reference_rank} under the reference, {r.judge_rank} under the judge",
    ]
    if tost is None:
        lines.append(f"  the {'mean rank change' if use == 'estimate' else 'upper CI bound'} {tested:+.4f} exceeds "
                     f"max_rank_change {max_rank_change}")
    else:
        lines.append(f"  'no self-preference' is not shown: the one-sided equivalence test (TOST, alpha {alpha:g}) of "
                     f"rank change < {max_rank_change} gives p = {tost.p:.3g}; the upper {1 - alpha:.0%} bound "
                     f"{tost.ci_high:+.4f} is not below the margin")
        if tost.inconclusive:
            lines.append(f"  {tost.inconclusive_reason}")
    if result.n_dropped:
        lines.append(f"  {result.n_dropped} task(s) without a score for every model were left out")
    return finish(rec, result, lines)


# ---------------------------------------------------------------------- corrected pass rate
def assert_pass_rate(passed: Any, n: int | None = None, *, min_rate: float, calibration: Any = None,
                     use: str = "estimate", confidence: float = 0.95, interval: str = "score",
                     label: str | None = None) -> Any:
    """Assert the judge-error-corrected pass rate reaches ``min_rate``.

    ``passed``/``n``/``calibration`` as for :func:`pytest_judgerel.stats.corrected_pass_rate`
    (or ``passed`` is already a :class:`~pytest_judgerel.stats.CorrectedPassRate`, or the judge's
    ``Ratings`` with one column on the ``0-1`` scale: the top point passes; drawn in item batches in
    sequential mode, :mod:`pytest_judgerel.gates.sequential`).
    ``use="ci_low"`` gates the lower confidence bound, which includes the uncertainty of the
    judge's specificity and sensitivity; ``interval`` picks its method (``"score"``, default, or
    Lee et al.'s ``"lee"``).  The record's ``p_pass`` is null: the interval already carries the
    uncertainty of both the test set and the calibration set.
    """
    __tracebackhide__ = True
    from ..stats.pass_rate import CorrectedPassRate, corrected_pass_rate

    check_threshold(min_rate, "min_rate", UNIT_RANGE)
    use = check_use(use, ("estimate", "ci_low"))
    passed, n, seq = settle_pass_rate(passed, n, min_rate=min_rate, calibration=calibration, use=use,
                                      confidence=confidence, interval=interval)  # judge Ratings: verdicts
    if isinstance(passed, CorrectedPassRate):
        if calibration is not None or n is not None:
            raise ValueError("pass either a CorrectedPassRate or passed/n/calibration, not both")
        res = passed
    else:
        if calibration is None:
            raise ValueError("assert_pass_rate corrects the judge's pass rate for its errors: pass calibration="
                             "[(judge verdict, human label), ...] from a human-labelled calibration set")
        if isinstance(passed, Ratings):  # unparsed replies: no verdict for some items (settle_pass_rate)
            failures = parse_failure_lines(passed, 0, "a corrected pass rate needs a verdict for every item")
            return fail_unparsed(passed, failures, "pass_rate", "corrected pass rate", min_rate, label,
                                 sequential=None if seq is None else seq.to_dict())
        res = corrected_pass_rate(passed, n, calibration=calibration, confidence=confidence, interval=interval)
    tested = res.value if use == "estimate" else res.ci_low
    ok = tested >= min_rate if seq is None else seq.verdict(tested >= min_rate)
    cal = res.calibration
    rec: PassRateRecord = {
        **gate_fields("pass_rate", "corrected pass rate", label, Summary(res.value, res.ci_low, res.ci_high, res.n),
                      min_rate, "min", None),
        "use": use, "confidence": res.confidence, "observed": res.observed, "passed_count": res.passed,
        "specificity": cal.specificity, "sensitivity": cal.sensitivity, "n_negative": cal.n_negative,
        "n_positive": cal.n_positive, "unclipped": res.unclipped, "interval_method": res.interval,
    }
    if seq is not None:
        rec["sequential"] = seq.to_dict()
    attach_stability(rec, None)  # p_pass: null, as documented: the interval carries the calibration uncertainty
    rec["passed"] = ok
    if ok:
        return finish(rec, res)
    what = "corrected pass rate" if use == "estimate" else "lower CI bound of the corrected pass rate"
    lines = [
        f"{head(label)}corrected pass rate = "
        f"{format_estimate(res.value, res.ci_low, res.ci_high, res.confidence)} (the judge passed {res.passed} of {res.n} = {res.observed:.4f})",
        f"  judge on the calibration set: specificity {cal.specificity:.3f} ({cal.n_negative} items humans "
        f"failed), sensitivity {cal.sensitivity:.3f} ({cal.n_positive} items humans passed); "
        "theta = (p + q0 - 1) / (q0 + q1 - 1), Lee et al. 2025",
        seq.line() if seq is not None and seq.early else f"  the {what} {tested:.4f} is below min_rate {min_rate}",
    ]
    return finish(rec, res, lines)
