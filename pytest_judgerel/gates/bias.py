"""Gates on the bias probes of :mod:`pytest_judgerel.probes`: position, length and self-preference.

Like every gate, each returns the probe's result when the gate passes, raises
:class:`~pytest_judgerel.gates.conclusion.JudgeReliabilityFailure` (an ``AssertionError``) with a full
explanation when it does not, and records a metric record for the session report either way;
in report-only mode they record and never fail.  Replies that could not be parsed fail the
gate first (``max_parse_failures``, default the session's ``--judgerel-max-parse-failures``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .common import (
    ANY_RANGE,
    UNIT_RANGE,
    WORST,
    Summary,
    Use,
    check_equivalence,
    check_threshold,
    check_use,
    fail_unparsed,
    gate_fields,
    label_prefix,
    parse_failure_lines,
    worst_lines,
)
from .conclusion import finish
from .stability import attach_stability, mean_gate_stability
from ..session.recording import LengthBiasRecord, PositionBiasRecord, SelfPreferenceRecord, WorstItem

__all__ = ["assert_position_consistent", "assert_no_length_bias", "assert_no_self_preference"]


# ---------------------------------------------------------------------- position
@dataclass(frozen=True)
class _PositionVerdict:
    """The three checks of the position gate on a probe's statistics: the tested consistency and
    first-position preference (estimate or lower Wilson bound) and whether each check passed."""

    tested: float
    first_tested: float
    ok_consistency: bool
    ok_position: bool
    ok_first: bool

    @property
    def ok(self) -> bool:
        return self.ok_consistency and self.ok_position and self.ok_first


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
    v = _position_verdict(result.stats, use, min_consistency, alpha, max_first_preference)
    worst: list[WorstItem] = [{"item": str(pid), "detail": _verdict_detail(f, r, o)}
                              for pid, f, r, o in result.inconsistent_pairs()[:WORST]]
    rec = _position_record(result, v, worst, min_consistency, use, alpha, max_first_preference, label)
    rec["passed"] = v.ok
    if v.ok:
        return finish(rec, result)
    return finish(rec, result, _position_failure_lines(result, v, worst, min_consistency, use, alpha,
                                                       max_first_preference, label))


def _position_verdict(s: Any, use: str, min_consistency: float, alpha: float | None,
                      max_first_preference: float | None) -> _PositionVerdict:
    """The three checks on the probe's statistics ``s``."""
    tested = s.consistency.value if use == "estimate" else s.consistency.ci_low
    first_tested = s.first_preference.value if use == "estimate" else s.first_preference.ci_low
    return _PositionVerdict(tested, first_tested, ok_consistency=tested >= min_consistency,
                            ok_position=alpha is None or s.p_position >= alpha,
                            ok_first=max_first_preference is None or first_tested <= max_first_preference)


def _position_record(result: Any, v: _PositionVerdict, worst: list[WorstItem], min_consistency: float, use: Use,
                     alpha: float | None, max_first_preference: float | None, label: str | None) -> PositionBiasRecord:
    """The position gate's record, with the verdict stability of its three checks."""
    s = result.stats
    c, fp, sp = s.consistency, s.first_preference, s.second_preference
    statistic = "position consistency"
    rec: PositionBiasRecord = {
        **gate_fields("position_bias", statistic, label, Summary(c.value, c.ci_low, c.ci_high, s.n_valid, 2),
                      min_consistency, "min", result),
        "use": use, "worst_items": worst, "confidence": c.confidence,
        "first_preference": fp.to_dict(), "second_preference": sp.to_dict(), "n_first": s.n_first,
        "n_second": s.n_second, "p_position": s.p_position, "alpha": alpha,
        "position_preference": not v.ok_position, "low_consistency": not v.ok_consistency,
        "n_missing": s.n_missing, "n_tie_mismatch": s.n_tie_mismatch, "max_first_preference": max_first_preference,
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
    return rec


def _position_failure_lines(result: Any, v: _PositionVerdict, worst: list[WorstItem], min_consistency: float,
                            use: str, alpha: float | None, max_first_preference: float | None,
                            label: str | None) -> list[str]:
    """The failure message of the position gate: the statistics, then each check that failed."""
    s = result.stats
    c, fp, sp, p_position = s.consistency, s.first_preference, s.second_preference, s.p_position
    lines = [
        f"{label_prefix(label)}position consistency = {c.formatted()} "
        f"({c.count} of {s.n_valid} pairs keep their verdict when the answers swap)",
        f"  the answer shown first won both orders on {s.n_first} pair(s) ({fp.formatted(3)}), "
        f"the answer shown second on {s.n_second} ({sp.value:.3f}); exact two-sided sign test "
        f"p = {p_position:.3g}; {s.n_tie_mismatch} tie in one order only",
    ]
    if not v.ok_position:
        lines.append(f"  position preference: the judge significantly prefers the answer shown {s.preferred} "
                     f"({s.n_first} first vs {s.n_second} second wins, p = {p_position:.3g} < alpha {alpha:g})")
    if not v.ok_consistency:
        what = "consistency" if use == "estimate" else "lower CI bound of the consistency"
        if alpha is None:
            cause = ""
        elif not v.ok_position:
            cause = " (the position preference above accounts for part of it)"
        else:
            cause = (f"; with no significant position preference (sign test p = {p_position:.3g}) the inconsistent "
                     "verdicts are noise (they change between calls), not a bias toward a position")
        lines.append(f"  low consistency: the {what} {v.tested:.4f} is below the threshold {min_consistency}{cause}")
    if not v.ok_first:
        what = "first-position preference" if use == "estimate" else "lower CI bound of the first-position preference"
        lines.append(f"  the {what} {v.first_tested:.4f} exceeds max_first_preference {max_first_preference}")
    if s.n_missing:
        lines.append(f"  {s.n_missing} pair(s) without a readable verdict in both orders were left out")
    return lines + worst_lines(worst, "pairs whose verdict depends on the order")


def _verdict_detail(forward: str | None, reverse: str | None, outcome: str) -> str:
    what = {"first": "the answer shown first wins both times", "second": "the answer shown second wins both times",
            "tie_mismatch": "a tie in one order only"}.get(outcome, outcome)
    return f"verdict {forward} as given, {reverse} swapped ({what})"


# ---------------------------------------------------------------------- length
@dataclass(frozen=True)
class _LengthVerdict:
    """The length gate's decision: the tested value, whether it passed, and with
    ``use="equivalence"`` the TOST and the items the claim needs (``plan``; None: no spread)."""

    tested: float
    ok: bool
    tost: Any = None
    plan: Any = None


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
    check_threshold(max_shift, "max_shift", (-1.0, 1.0))
    use = check_use(use, ("estimate", "ci_high", "equivalence"))
    check_equivalence(use, max_shift, "max_shift", alpha)
    if isinstance(power, bool) or not isinstance(power, (int, float)) or not 0 < power < 1:
        raise ValueError(f"power must lie strictly between 0 and 1, got {power!r}")
    statistic = "length shift"
    failures = parse_failure_lines(result, max_parse_failures)
    if failures:
        return fail_unparsed(result, failures, "length_bias", statistic, max_shift, label, direction="max")
    v = _length_verdict(result, max_shift, use, two_sided, alpha, power)
    sc = result.scale
    worst: list[WorstItem] = [
        {"item": str(i), "detail": f"{s:+.3f} of the scale range ({s * sc.range:+.3g} on {sc.name})", "shift": s}
        for i, s in result.largest_shifts(WORST)]
    rec = _length_record(result, v, worst, max_shift, use, two_sided, alpha, label)
    rec["passed"] = v.ok
    if v.ok:
        return finish(rec, result)
    return finish(rec, result, _length_failure_lines(result, v, worst, max_shift, use, two_sided, alpha, power,
                                                     label))


def _length_verdict(result: Any, max_shift: float, use: str, two_sided: bool, alpha: float,
                    power: float) -> _LengthVerdict:
    """Compare the shift (estimate, CI bound, or TOST with ``use="equivalence"``) with ``max_shift``."""
    from ..stats.bias import equivalence_test
    from ..stats.planning import equivalence_sample_size

    sh = result.shift
    if use == "equivalence":
        shifts = [v for v in result.item_shifts.values() if v is not None]
        tost = equivalence_test(shifts, max_shift, alpha, two_sided, bound=1.0)  # shifts lie in [-1, 1]
        tested = max(abs(tost.ci_low), abs(tost.ci_high)) if two_sided else tost.ci_high
        plan = equivalence_sample_size(max_shift, tost.sd, alpha=alpha, power=power, two_sided=two_sided) \
            if tost.sd > 0 else None
        return _LengthVerdict(tested, tost.equivalent, tost, plan)
    if two_sided:
        tested = abs(sh.mean) if use == "estimate" else max(abs(sh.ci_low), abs(sh.ci_high))
    else:
        tested = sh.mean if use == "estimate" else sh.ci_high
    return _LengthVerdict(tested, tested <= max_shift)


def _length_record(result: Any, v: _LengthVerdict, worst: list[WorstItem], max_shift: float, use: Use,
                   two_sided: bool, alpha: float, label: str | None) -> LengthBiasRecord:
    """The length gate's record, with its verdict stability."""
    sh, sc, statistic = result.shift, result.scale, "length shift"
    loss: dict[str, float | None] = {str(i): (abs(s) if two_sided else s)
                                     for i, s in result.item_shifts.items() if s is not None}
    rec: LengthBiasRecord = {
        **gate_fields("length_bias", statistic, label, Summary(sh.mean, sh.ci_low, sh.ci_high, sh.n), max_shift,
                      "max", result),
        "use": use, "two_sided": two_sided, "worst_items": worst, "confidence": sh.confidence, "p": sh.p,
        "p_greater": sh.p_greater, "test": "TOST (skew-robust)" if v.tost is not None else "paired t",
        "scale": sc.name, "field": result.field, "length_ratio": result.length_ratio,
        "n_omitted": result.n_omitted, "item_scores": loss,
    }
    if v.tost is not None:
        rec.update({"equivalence": v.tost.to_dict(), "alpha": alpha})
    if v.plan is not None:
        rec["items_needed"] = v.plan.to_dict()
    if use == "equivalence":  # the TOST decision is the (1 - 2 alpha) interval inside the margin
        kind, conf = ("abs_t" if two_sided else "t_high"), 1 - 2 * alpha
    else:
        kind = ("abs_mean" if use == "estimate" else "abs_t") if two_sided else ("mean" if use == "estimate" else "t_high")
        conf = sh.confidence
    shifts = [s for s in result.item_shifts.values() if s is not None]
    attach_stability(rec, mean_gate_stability(shifts, max_shift, "max", kind, conf, name=statistic))
    return rec


def _length_failure_lines(result: Any, v: _LengthVerdict, worst: list[WorstItem], max_shift: float, use: str,
                          two_sided: bool, alpha: float, power: float, label: str | None) -> list[str]:
    """The failure message of the length gate: the shift, then why it fails."""
    sh, sc, tost, plan = result.shift, result.scale, v.tost, v.plan
    lines = [
        f"{label_prefix(label)}length shift = {sh.mean:+.4f} of the scale range {sh.interval.format(signed=True)}, "
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
        lines.append(f"  the {what} {v.tested:.4f} exceeds max_shift {max_shift}")
    if result.n_omitted:
        lines.append(f"  {result.n_omitted} item(s) without a score in both versions were left out")
    return lines + worst_lines(worst, "items whose score rose most with padding")


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
        f"{label_prefix(label)}self-preference of {result.own_model}: mean per-task rank change "
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
