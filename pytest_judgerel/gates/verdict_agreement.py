"""The gate on a pass/fail judge's agreement with human pass/fail verdicts.

``assert_verdict_agreement(judge_verdicts, human_verdicts, min_kappa=, min_ac1=, min_tpr=,
min_tnr=)`` computes :func:`pytest_judgerel.stats.verdict_agreement.verdict_agreement` (Cohen's
kappa, Gwet's AC1, TPR/TNR with exact intervals, the base rate, the confusion table) and checks
each threshold given, on the estimate or (``use="ci_low"``) the lower bound of its interval.  The
failure shows the confusion table and the base rate, and names the disagreeing items: those the
judge passed and humans failed, and those it failed and humans passed.
"""

from __future__ import annotations

from typing import Any, Mapping

from .common import ICC_RANGE, UNIT_RANGE, Summary, check_threshold, check_use, gate_fields, label_prefix, \
    not_computed
from .conclusion import finish
from .stability import attach_stability
from ..errors import ReliabilityError
from ..ratings import Ratings
from ..session.recording import Check, VerdictAgreementRecord, WorstItem

__all__ = ["assert_verdict_agreement"]

_SHOWN = 10  # disagreeing ids named per direction in a failure


def _verdicts(source: Any) -> Mapping[str, Any]:
    """``{item id: verdict}`` from a mapping, a sequence (ids: positions) or judge ``Ratings`` with
    one column on a two-point scale (the top point passes)."""
    if isinstance(source, Ratings):
        if source.values.shape[1] != 1:
            raise ValueError("judge Ratings for verdict agreement must have one column (rate with repeats=1)")
        if source.scale is None:
            raise ValueError("judge Ratings for verdict agreement need a scale: its top point is a pass")
        top = source.scale.high
        return {str(i): (None if v != v else bool(v == top)) for i, v in zip(source.item_ids, source.values[:, 0])}
    if isinstance(source, Mapping):
        return {str(k): v for k, v in source.items()}
    return {str(i): v for i, v in enumerate(source)}


def assert_verdict_agreement(judge_verdicts: Any, human_verdicts: Any, *, min_kappa: float | None = None,
                             min_ac1: float | None = None, min_tpr: float | None = None,
                             min_tnr: float | None = None, use: str = "estimate", confidence: float = 0.95,
                             label: str | None = None) -> Any:
    """Assert a pass/fail judge agrees with humans: Cohen's kappa >= ``min_kappa``, Gwet's AC1 >=
    ``min_ac1``, TPR >= ``min_tpr``, TNR >= ``min_tnr`` (each checked when given; at least one).

    Verdicts: ``{item id: verdict}`` (True/False, 1/0, ``"pass"``/``"fail"``), sequences in the same
    order, or judge ``Ratings`` with one column on a 0-1 scale.  ``use="ci_low"`` tests the lower
    bound of each interval (normal for kappa, t for AC1, Clopper-Pearson for TPR/TNR).
    """
    __tracebackhide__ = True
    from ..stats.verdict_agreement import verdict_agreement

    wanted = {"min_kappa": min_kappa, "min_ac1": min_ac1, "min_tpr": min_tpr, "min_tnr": min_tnr}
    given = {k: v for k, v in wanted.items() if v is not None}
    if not given:
        raise ValueError("give at least one of min_kappa, min_ac1, min_tpr, min_tnr")
    for name, v in given.items():
        check_threshold(v, name, ICC_RANGE if name in ("min_kappa", "min_ac1") else UNIT_RANGE)
    use = check_use(use, ("estimate", "ci_low"))
    source = judge_verdicts if isinstance(judge_verdicts, Ratings) else None
    main = next(iter(given))
    try:
        res = verdict_agreement(_verdicts(judge_verdicts), _verdicts(human_verdicts), confidence=confidence)
    except ReliabilityError as exc:
        return not_computed(source, "verdict_agreement", "Cohen's kappa", given[main], label, exc)
    stats = {"min_kappa": ("Cohen's kappa", res.kappa), "min_ac1": ("Gwet's AC1", res.ac1),
             "min_tpr": ("TPR", res.tpr), "min_tnr": ("TNR", res.tnr)}
    checks: list[Check] = []
    for name, threshold in given.items():
        stat, r = stats[name]
        value = None if r is None else (r.value if use == "estimate" else r.ci_low)
        checks.append({"statistic": stat, "value": value, "ci": None if r is None else [r.ci_low, r.ci_high],
                       "threshold": float(threshold), "direction": "min",
                       "passed": value is not None and value >= threshold})
    k = res.kappa
    rec: VerdictAgreementRecord = {
        **gate_fields("verdict_agreement", "Cohen's kappa", label,
                      Summary(None if k is None else k.value, None if k is None else k.ci_low,
                              None if k is None else k.ci_high, res.n, 2), given.get("min_kappa"), "min", source),
        "use": use, "confidence": float(confidence), "checks": checks, "thresholds": dict(wanted),
        "kappa": None if k is None else k.to_dict(), "ac1": res.ac1.to_dict(),
        "tpr": None if res.tpr is None else res.tpr.to_dict(), "tnr": None if res.tnr is None else res.tnr.to_dict(),
        "base_rate": res.base_rate.to_dict(), "observed": res.observed, "confusion": dict(res.confusion),
        "false_pass": list(res.false_pass), "false_fail": list(res.false_fail), "n_omitted": res.n_omitted,
        "worst_items": _disagreeing(res),
    }
    attach_stability(rec, None)
    ok = all(c["passed"] for c in checks)
    rec["passed"] = ok
    if ok:
        return finish(rec, res)
    return finish(rec, res, _lines(res, checks, use, label))


def _disagreeing(res: Any) -> list[WorstItem]:
    out: list[WorstItem] = [{"item": i, "detail": "judge pass, human fail"} for i in res.false_pass[:5]]
    return out + [{"item": i, "detail": "judge fail, human pass"} for i in res.false_fail[:5]]


def _lines(res: Any, checks: list[Check], use: str, label: str | None) -> list[str]:
    c = res.confusion
    what = "" if use == "estimate" else " (lower bound)"
    failed = [f"{ch['statistic']}{what} {'undefined' if ch['value'] is None else format(ch['value'], '.3f')} "
              f"< {ch['threshold']}" for ch in checks if not ch["passed"]]
    kappa = (res.kappa.formatted(3) if res.kappa is not None else f"undefined ({res.kappa_error})")
    tpr = "n/a (humans passed no item)" if res.tpr is None else res.tpr.formatted(3)
    tnr = "n/a (humans failed no item)" if res.tnr is None else res.tnr.formatted(3)
    lines = [
        f"{label_prefix(label)}the judge's pass/fail verdicts do not agree with humans': {'; '.join(failed)}",
        f"  Cohen's kappa {kappa}; Gwet's AC1 {res.ac1.formatted(3)}; observed agreement {res.observed:.3f}",
        f"  TPR {tpr}; TNR {tnr}; human pass rate (base rate) {res.base_rate.value:.3f}, judge pass rate "
        f"{res.judge_rate:.3f}, {res.n} items",
        "  confusion (judge x human):   human pass  human fail",
        f"                 judge pass   {c['tp']:>10}  {c['fp']:>10}",
        f"                 judge fail   {c['fn']:>10}  {c['tn']:>10}",
    ]
    for title, ids in (("judge passed, humans failed", res.false_pass), ("judge failed, humans passed", res.false_fail)):
        if ids:
            more = f" (+{len(ids) - _SHOWN} more)" if len(ids) > _SHOWN else ""
            lines.append(f"  {title}: {', '.join(ids[:_SHOWN])}{more}")
    return lines
