"""The gate on a judge-error-corrected pass rate (:func:`pytest_judgerel.stats.corrected_pass_rate`).

The judge's pass rate on the test set is corrected for its errors, measured on a human-labelled
calibration set (Lee et al. 2025).  Like every gate, it returns the result when the gate passes,
raises :class:`~pytest_judgerel.gates.conclusion.JudgeReliabilityFailure` with a full explanation
when it does not, and records a metric record for the session report either way; in report-only
mode it records and never fails.  Judge ``Ratings`` are drawn in item batches in sequential mode
(:mod:`pytest_judgerel.gates.sequential`).
"""

from __future__ import annotations

from typing import Any

from .common import UNIT_RANGE, Summary, check_threshold, check_use, fail_unparsed, gate_fields, label_prefix, \
    parse_failure_lines
from .conclusion import finish
from .sequential import settle_pass_rate
from .stability import attach_stability
from ..ratings import Ratings
from ..session.recording import PassRateRecord
from ..stats.interval import format_estimate

__all__ = ["assert_pass_rate"]


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
        f"{label_prefix(label)}corrected pass rate = "
        f"{format_estimate(res.value, res.ci_low, res.ci_high, res.confidence)} "
        f"(the judge passed {res.passed} of {res.n} = {res.observed:.4f})",
        f"  judge on the calibration set: specificity {cal.specificity:.3f} ({cal.n_negative} items humans "
        f"failed), sensitivity {cal.sensitivity:.3f} ({cal.n_positive} items humans passed); "
        "theta = (p + q0 - 1) / (q0 + q1 - 1), Lee et al. 2025",
        seq.line() if seq is not None and seq.early else f"  the {what} {tested:.4f} is below min_rate {min_rate}",
    ]
    return finish(rec, res, lines)
