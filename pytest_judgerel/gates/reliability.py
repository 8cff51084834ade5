"""Assertion helpers: compute a reliability statistic, fail with a full explanation.

Each helper returns its result object when it passes, raises
:class:`JudgeReliabilityFailure` (an ``AssertionError``) when it does not, and
records a metric record for the session report in both cases (see
``docs/architecture.md``).  In report-only mode (``--judgerel-report-only``)
they record and never fail.

Definitions: ICC forms after McGraw & Wong (1996) / pingouin 0.7; human-judge
agreement and nMAE after seed 001 (Li et al. 2026), section 3.2 and eqs. (4)-(5).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping

import numpy as np

from .common import (
    UNIT_RANGE,
    WORST,
    Direction,
    Summary,
    check_threshold,
    check_use,
    fail_unparsed,
    gate_fields,
    label_prefix,
    n_parse_failures,
    not_computed,
    parse_failure_lines,
    provenance,
    worst_lines,
)
from .conclusion import JudgeReliabilityFailure, finish
from .sequential import settle_icc
from .stability import (
    agreement_gate_stability,
    attach_stability,
    icc_gate_stability,
    repeats_plan,
    scale_gate_stability,
)
from ..session.recording import AgreementRecord, Check, GroupResult, IccRecord, ScaleConsistencyRecord, WorstItem
from ..errors import ReliabilityError
from ..ratings import Ratings
from ..scales import Scale, ScaleLike
from ..stats.interval import format_estimate

__all__ = [
    "JudgeReliabilityFailure",
    "assert_icc_above",
    "assert_scale_consistent",
    "assert_agreement",
    "assert_nmae_below",
    "AgreementResult",
]


# ---------------------------------------------------------------------- ICC
def assert_icc_above(
    ratings: Any,
    threshold: float,
    form: str = "A,1",
    use: str = "estimate",
    *,
    confidence: float = 0.95,
    nan_policy: str = "raise",
    by: str | None = None,
    max_parse_failures: int | None = None,
    label: str | None = None,
):
    """Assert that the ICC of ``ratings`` (items x raters) is at least ``threshold``.

    ``use="ci_low"`` asserts the lower confidence bound instead of the point
    estimate (the stricter gate for small samples).  ``by`` names an item group:
    every group must pass too, since a pooled ICC can hide a weak subgroup
    (seed 001 section 5.2).  Returns the :class:`~pytest_judgerel.stats.ICCResult`.
    """
    __tracebackhide__ = True
    from ..stats.icc import icc, koo_li_band

    check_threshold(threshold, "threshold")
    use = check_use(use, ("estimate", "ci_low"))
    ratings, seq = settle_icc(ratings, threshold=threshold, form=form, use=use, confidence=confidence,
                              nan_policy=nan_policy, by=by, max_parse_failures=max_parse_failures)
    failures = parse_failure_lines(ratings, max_parse_failures)
    if failures:
        return fail_unparsed(ratings, failures, "icc", f"ICC({form})", threshold, label,
                             sequential=None if seq is None else seq.to_dict())
    if n_parse_failures(ratings) and nan_policy == "raise":
        nan_policy = "omit"  # allowed parse failures are missing cells: drop their items, reported as n_omitted
    try:
        result = icc(ratings, form=form, confidence=confidence, nan_policy=nan_policy)
    except ReliabilityError as exc:
        return not_computed(ratings, "icc", f"ICC({form})", threshold, label, exc,
                            sequential=None if seq is None else seq.to_dict())
    tested = result.value if use == "estimate" else result.ci_low
    passed = tested >= threshold if seq is None else seq.verdict(tested >= threshold)
    groups: dict[str, GroupResult] = {}
    if by is not None:
        for name, sub in _item_groups(ratings, by):
            groups[name] = _group_icc(sub, form, confidence, nan_policy, threshold, use)
    group_failed = [g for g, r in groups.items() if r.get("passed") is False]
    statistic = f"ICC({result.form})" if not str(result.form).startswith("ICC") else str(result.form)
    worst = _worst_spread_items(ratings)
    rec: IccRecord = {**gate_fields("icc", statistic, label, Summary.of(result), threshold, "min", ratings),
                      "use": use, "groups": groups, "worst_items": worst, "confidence": confidence}
    if result.n_omitted:
        rec["n_omitted"] = result.n_omitted
    if seq is not None:
        rec["sequential"] = seq.to_dict()
    over_repeats = (provenance(ratings) or {}).get("design") == "repeats"
    attach_stability(rec, icc_gate_stability(ratings, form, use, confidence, threshold, over_repeats))
    plan = repeats_plan(result, threshold) if use == "estimate" else None
    if plan is not None:
        rec["repeats_needed"] = plan.to_dict()
    ok = passed and not group_failed
    rec["passed"] = ok
    if ok:
        return finish(rec, result)
    lines = [
        f"{label_prefix(label)}{statistic} = {format_estimate(result.value, result.ci_low, result.ci_high, confidence)} "
        f"(n={result.n} items, k={result.k} {'repeats' if over_repeats else 'raters'}; "
        f"Koo & Li: {koo_li_band(result.value)})",
        *_icc_verdict_lines(seq, plan, over_repeats, passed, tested, use, threshold),
    ]
    if result.n_omitted:
        lines.append(f"  {result.n_omitted} item(s) with missing ratings were omitted")
    lines += _group_lines(groups)
    lines += worst_lines(worst, "largest spread across " + ("repeats" if over_repeats else "raters"))
    return finish(rec, result, lines)


def _icc_verdict_lines(seq: Any, plan: Any, over_repeats: bool, passed: bool, tested: float, use: str,
                       threshold: float) -> list[str]:
    """Why the ICC gate failed: a sequential look settled it, the pooled ICC is below the threshold
    (with the samples per item its mean needs), or only a group failed."""
    if seq is not None and seq.early:  # a look settled the verdict before the cap
        return [seq.line()] + ([f"  {_plan_line(plan, over_repeats)}"] if plan is not None else [])
    if not passed:
        what = "estimate" if use == "estimate" else "lower CI bound"
        return [f"  the {what} {tested:.4f} is below the threshold {threshold}"] + (
            [f"  {_plan_line(plan, over_repeats)}"] if plan is not None else [])
    return [f"  pooled passes the threshold {threshold}"]


# ---------------------------------------------------------------------- scales
def assert_scale_consistent(
    ratings_by_scale: Mapping[str, Any],
    min_icc: float,
    pairwise: bool = True,
    *,
    form: str = "A,1",
    use: str = "estimate",
    max_parse_failures: int | None = None,
    label: str | None = None,
):
    """Assert a judge grades consistently across scales (seed 001 Table 1).

    Each scale's ratings (items x repeats, or one column) are mapped linearly to
    [0, 1]; the ICC across scales must reach ``min_icc`` jointly and, with
    ``pairwise=True``, for every pair of scales.  Returns the consistency result.
    """
    __tracebackhide__ = True
    from ..stats.consistency import scale_consistency

    check_threshold(min_icc, "min_icc")
    use = check_use(use, ("estimate", "ci_low"))
    failures: list[str] = []
    for name, r in ratings_by_scale.items():
        failures += [f"  [{name}] {line.strip()}" for line in parse_failure_lines(r, max_parse_failures)]
    first = next(iter(ratings_by_scale.values()), None)
    if failures:
        return fail_unparsed(first, failures, "scale_consistency", f"ICC({form}) across scales", min_icc, label)
    allowed = any(n_parse_failures(r) for r in ratings_by_scale.values())
    try:
        result = scale_consistency(ratings_by_scale, form=form, pairwise=pairwise,
                                   nan_policy="omit" if allowed else "raise")
    except ReliabilityError as exc:
        return not_computed(first, "scale_consistency", f"ICC({form}) across scales", min_icc, label, exc)
    joint = result.joint

    def tested(r: Any) -> float:
        return r.value if use == "estimate" else r.ci_low

    groups: dict[str, GroupResult] = {
        "joint": _icc_group_record(joint, min_icc, tested(joint) >= min_icc)
    }
    if pairwise:
        for pair, r in result.pairwise.items():
            groups[" vs ".join(pair)] = _icc_group_record(r, min_icc, tested(r) >= min_icc)
    bad = [g for g, r in groups.items() if not r["passed"]]
    rec: ScaleConsistencyRecord = {
        **gate_fields("scale_consistency", f"ICC({joint.form}) across scales", label, Summary.of(joint), min_icc,
                      "min", first),
        "use": use, "groups": groups, "scales": list(ratings_by_scale),
        "matrix": _consistency_matrix(result, list(ratings_by_scale)),
        "parse_failures": sum(n_parse_failures(r) for r in ratings_by_scale.values()),
    }
    attach_stability(rec, scale_gate_stability(result.normalized, form, use, 0.95, min_icc, pairwise))
    ok = not bad
    rec["passed"] = ok
    if ok:
        return finish(rec, result)
    lines = [
        f"{label_prefix(label)}inter-scale consistency ICC({joint.form}) over "
        f"{', '.join(ratings_by_scale)} = {joint.formatted()} "
        f"(n={joint.n} items); threshold {min_icc} ({use})"
    ]
    if bad:
        lines.append("  below the threshold: " + ", ".join(bad))
    lines += _group_lines(groups)
    return finish(rec, result, lines)


# ---------------------------------------------------------------------- agreement
@dataclass(frozen=True)
class AgreementResult:
    """Human-judge agreement on one set of items (seed 001 section 3.2).

    Each side is mapped linearly to [0, 1] on its own scale first (as seed 001 section 4.3
    does across scales), so a judge on 0-10 compares correctly with humans on 0-5.  ``icc``
    is ICC(A,1) on the S x 2 matrix [human panel mean, judge mean]; ``nmae`` is eq. (5),
    the mean absolute difference of the two normalised means (= mean |judge - human| /
    range when both sides share a scale).  ``scale`` is the scale nMAE is expressed on:
    the common scale, or the unit range 0-1 (named after both) when the sides differ;
    ``judge_scale`` and ``human_scale`` are each side's own scale.
    """

    icc: Any
    nmae: float
    n: int
    scale: Scale
    item_errors: dict[str, float] = field(default_factory=dict)
    groups: dict[str, "AgreementResult"] = field(default_factory=dict)
    n_omitted: int = 0
    judge_scale: Scale | None = None
    human_scale: Scale | None = None
    #: (human, judge) item means on [0, 1], for the gate's verdict stability
    unit_means: tuple[Any, Any] | None = field(default=None, repr=False, compare=False)

    def worst_items(self, limit: int = WORST, min_error: float = 0.0) -> list[tuple[str, float]]:
        items = sorted(self.item_errors.items(), key=lambda kv: -kv[1])
        return [(i, e) for i, e in items if e > min_error][:limit]


def agreement(judge_ratings: Any, human_ratings: Any, *, scale: ScaleLike | None = None,
              by: str | None = None, confidence: float = 0.95, require_icc: bool = True) -> AgreementResult:
    """Compute human-judge agreement, pooled and per group of ``by``.

    Each side is normalised on its own scale (``Ratings.scale``); ``scale`` is the scale of
    a side that carries none (e.g. a plain list of scores).  ``by`` names an item group of
    either ratings (e.g. ``"benchmark"``) or a rater group of the human ratings (e.g.
    ``"subgroup"``: agreement with each human subgroup's panel mean).
    """
    judge, human = _as_ratings(judge_ratings, "judge"), _as_ratings(human_ratings, "human")
    positional = not isinstance(judge_ratings, Ratings) and not isinstance(human_ratings, Ratings)
    if positional and judge.n_items != human.n_items:
        raise ReliabilityError(f"judge has {judge.n_items} items but human has {human.n_items}: "
                               "pass Ratings with item ids to compare different item sets")
    js, hs = _resolve_scale(scale, judge, human)
    judge, human = judge.align(human)
    pooled = _agreement_core(judge, human, js, hs, confidence, strict=require_icc)
    groups: dict[str, AgreementResult] = {}
    if by is not None:
        if by in human.rater_groups:
            for label in human.rater_group_labels(by):
                sub = human.select_raters(**{by: label})
                groups[label] = _agreement_core(judge, sub, js, hs, confidence, strict=False)
        else:
            source = judge if by in judge.item_groups else human
            if by not in source.item_groups:
                raise ReliabilityError(
                    f"no item or rater group {by!r}; item groups: {sorted(set(judge.item_groups) | set(human.item_groups))}, "
                    f"human rater groups: {sorted(human.rater_groups)}"
                )
            labels = source.item_groups[by]
            for label in dict.fromkeys(labels):
                mask = [lab == label for lab in labels]
                groups[label] = _agreement_core(
                    judge.select_items(mask), human.select_items(mask), js, hs, confidence, strict=False
                )
    return AgreementResult(pooled.icc, pooled.nmae, pooled.n, pooled.scale, pooled.item_errors, groups,
                           pooled.n_omitted, js, hs, unit_means=pooled.unit_means)


def assert_agreement(
    judge_ratings: Any,
    human_ratings: Any,
    min_icc: float | None = None,
    max_nmae: float | None = None,
    by: str | None = None,
    *,
    scale: ScaleLike | None = None,
    use: str = "estimate",
    max_parse_failures: int | None = None,
    label: str | None = None,
) -> AgreementResult:
    """Assert a judge agrees with a human panel: ICC(A,1) >= ``min_icc`` and/or
    nMAE <= ``max_nmae``, pooled and in every group of ``by``."""
    __tracebackhide__ = True
    if min_icc is None and max_nmae is None:
        raise ValueError("assert_agreement needs min_icc, max_nmae or both")
    if min_icc is not None:
        check_threshold(min_icc, "min_icc")
    if max_nmae is not None:
        check_threshold(max_nmae, "max_nmae", UNIT_RANGE)
    use = check_use(use, ("estimate", "ci_low"))
    # the record's main statistic: the ICC when it is gated, else nMAE
    kind, main_stat, main_threshold = ("agreement", "ICC(A,1)", min_icc) if min_icc is not None else \
        ("nmae", "nMAE", max_nmae)
    direction: Direction = "min" if min_icc is not None else "max"
    failures = parse_failure_lines(judge_ratings, max_parse_failures)
    if failures:
        return fail_unparsed(judge_ratings, failures, kind, main_stat, main_threshold, label, direction)
    try:
        res = agreement(judge_ratings, human_ratings, scale=scale, by=by, require_icc=min_icc is not None)
    except ReliabilityError as exc:
        return not_computed(judge_ratings, kind, main_stat, main_threshold, label, exc, direction)

    ok_pooled, why_pooled = _agreement_verdict(res, min_icc, max_nmae, use)
    groups = _agreement_groups(res, min_icc, max_nmae, use)
    worst: list[WorstItem] = [{"item": str(i), "detail": f"|judge-human|/range = {e:.3f}", "error": e}
                              for i, e in res.worst_items()]
    main = Summary(res.icc.value, res.icc.ci_low, res.icc.ci_high, res.n, 2) if min_icc is not None else \
        Summary(float(res.nmae), n=res.n, k=2)
    rec: AgreementRecord = {
        **gate_fields(kind, main_stat, label, main, main_threshold, direction, judge_ratings),
        "use": use, "groups": groups, "worst_items": worst,
        "icc": None if res.icc is None else res.icc.value, "nmae": res.nmae, "n_omitted": res.n_omitted,
        "thresholds": {"min_icc": min_icc, "max_nmae": max_nmae},
        "pairs": _scatter_pairs(judge_ratings, human_ratings),
        # per-item loss (|judge - human| / scale range, lower is better): enables the paired
        # signed-rank test of the baseline comparison (report/baseline.py)
        "item_scores": {str(i): float(e) for i, e in res.item_errors.items()},
        "checks": _agreement_checks(res, min_icc, max_nmae, use),
    }
    if res.unit_means is not None:
        attach_stability(rec, agreement_gate_stability(*res.unit_means, min_icc, max_nmae, use, 0.95))
    bad_groups = [g for g, info in groups.items() if not info["passed"]]
    ok = ok_pooled and not bad_groups
    rec["passed"] = ok
    if ok:
        return finish(rec, res)
    return finish(rec, res, _agreement_failure_lines(res, why_pooled, groups, bad_groups, worst, by, min_icc, label))


def _agreement_verdict(r: AgreementResult, min_icc: float | None, max_nmae: float | None,
                       use: str) -> tuple[bool, list[str]]:
    """Whether ``r`` (pooled or one group) passes the agreement thresholds, and why not."""
    why = []
    if r.icc is None and min_icc is not None:
        return False, ["ICC undefined for this group (too few items or no variance)"]
    if min_icc is not None:
        v = r.icc.value if use == "estimate" else r.icc.ci_low
        if v < min_icc:
            why.append(f"ICC(A,1) {v:.4f} < {min_icc}")
    if max_nmae is not None and r.nmae > max_nmae:
        why.append(f"nMAE {r.nmae:.4f} > {max_nmae}")
    return not why, why


def _agreement_groups(res: AgreementResult, min_icc: float | None, max_nmae: float | None,
                      use: str) -> dict[str, GroupResult]:
    """The record's ``groups``: each group's ICC, nMAE, n and verdict."""
    groups: dict[str, GroupResult] = {}
    for g, sub in res.groups.items():
        ok, why = _agreement_verdict(sub, min_icc, max_nmae, use)
        groups[g] = {
            "value": None if sub.icc is None else sub.icc.value,
            "ci": None if sub.icc is None else [sub.icc.ci_low, sub.icc.ci_high],
            "nmae": sub.nmae,
            "n": sub.n,
            "passed": ok,
            "reasons": why,
        }
    return groups


def _agreement_checks(res: AgreementResult, min_icc: float | None, max_nmae: float | None,
                      use: str) -> list[Check]:
    """One check per threshold given: the summary shows which one failed."""
    checks: list[Check] = []
    if min_icc is not None:
        icc_tested = None if res.icc is None else (res.icc.value if use == "estimate" else res.icc.ci_low)
        checks.append({"statistic": "ICC(A,1)" + (" lower CI bound" if use == "ci_low" else ""),
                       "value": icc_tested, "threshold": min_icc, "direction": "min",
                       "ci": None if res.icc is None else [res.icc.ci_low, res.icc.ci_high],
                       "passed": icc_tested is not None and icc_tested >= min_icc})
    if max_nmae is not None:
        checks.append({"statistic": "nMAE", "value": float(res.nmae), "threshold": max_nmae, "direction": "max",
                       "passed": bool(res.nmae <= max_nmae)})
    return checks


def _agreement_failure_lines(res: AgreementResult, why_pooled: list[str], groups: Mapping[str, GroupResult],
                             bad_groups: list[str], worst: list[WorstItem], by: str | None, min_icc: float | None,
                             label: str | None) -> list[str]:
    """The agreement gate's failure message: pooled, each group, the worst-aligned items."""
    ok_pooled = not why_pooled
    icc_txt = "undefined" if res.icc is None else \
        res.icc.formatted()
    lines = [
        f"{label_prefix(label)}judge-human agreement on {res.n} items (scale {res.scale.name}): "
        f"ICC(A,1) = {icc_txt}, nMAE = {res.nmae:.4f}"
        + (f" ({res.n_omitted} item(s) without a judge or human score omitted)" if res.n_omitted else "")
    ]
    lines.append("  pooled: " + ("passes" if ok_pooled else "; ".join(why_pooled)))
    if bad_groups and ok_pooled and min_icc is not None:
        lines.append(
            "  the pooled agreement passes but "
            f"{len(bad_groups)} group(s) of {by!r} fail: an aggregate hides a weak group (the agreement "
            "counterpart of seed 001's 'reliability illusion', section 5.2)"
        )
    for g, info in groups.items():
        icc_txt = "n/a" if info["value"] is None else f"{info['value']:.4f}"
        lines.append(
            f"  {by}={g}: ICC(A,1) {icc_txt}, nMAE {info['nmae']:.4f}, n={info['n']} "
            + ("ok" if info["passed"] else "FAIL: " + "; ".join(info["reasons"]))
        )
    return lines + worst_lines(worst, "worst-aligned items")


def assert_nmae_below(
    judge_ratings: Any,
    human_ratings: Any,
    threshold: float,
    by: str | None = None,
    *,
    scale: ScaleLike | None = None,
    max_parse_failures: int | None = None,
    label: str | None = None,
) -> AgreementResult:
    """Assert nMAE (seed 001 eq. 5) between judge and human panel means is at most ``threshold``."""
    __tracebackhide__ = True
    return assert_agreement(
        judge_ratings, human_ratings, max_nmae=threshold, by=by, scale=scale,
        max_parse_failures=max_parse_failures, label=label,
    )


# ---------------------------------------------------------------------- internals
def _plan_line(plan: Any, over_repeats: bool) -> str:
    """How many samples (or raters) per item the mean needs to reach the threshold."""
    if plan.repeats is None:
        return f"no number of samples per item reaches the threshold ({plan.reason})"
    what = "samples" if over_repeats else "ratings"
    hint = (f"; judge.rate(items, repeats={plan.repeats}, aggregate='mean') scores with that mean"
            if over_repeats else "")
    return f"{str(plan).replace('samples', what, 1)}{hint}"


def _as_ratings(data: Any, what: str) -> Ratings:
    if isinstance(data, Ratings):
        return data
    if callable(getattr(data, "ratings", None)):  # e.g. a HumanDataset: keep its item ids and scale
        return data.ratings()
    if hasattr(data, "to_matrix"):
        ids = getattr(data, "item_ids", None)
        r = Ratings.from_array(data.to_matrix(), item_ids=ids)
        return Ratings.from_array(r.values, item_ids=r.item_ids, rater_ids=[f"{what}{j}" for j in range(r.n_raters)])
    rows = list(data) if not isinstance(data, np.ndarray) else data
    if isinstance(rows, np.ndarray) and rows.ndim == 1 or (
            not isinstance(rows, np.ndarray) and rows and not isinstance(rows[0], (list, tuple, np.ndarray))):
        rows = [[v] for v in rows]  # one score per item: a single rater column
    r = Ratings.from_array(rows)  # names a non-numeric, boolean or infinite cell
    return Ratings.from_array(r.values, rater_ids=[f"{what}{j}" for j in range(r.n_raters)])


def _resolve_scale(scale: ScaleLike | None, judge: Ratings, human: Ratings) -> tuple[Scale, Scale]:
    """(judge scale, human scale): each side's own, else ``scale``, else the other side's."""
    given = None if scale is None else Scale.parse(scale)
    own = {"judge": judge.scale, "human": human.scale}
    if given is not None:
        for side, sc in own.items():
            if sc is not None and (sc.low, sc.high) != (given.low, given.high):
                raise ReliabilityError(
                    f"scale={given.name} conflicts with the {side} ratings' own scale {sc.name}: each side is "
                    f"normalised on its own scale, so drop scale= (it only fills in a side without a scale)"
                )
        return own["judge"] or given, own["human"] or given
    if own["judge"] is None and own["human"] is None:
        raise ReliabilityError("nMAE needs the scale range: pass scale='0-5' (or ratings with a scale)")
    return own["judge"] or own["human"], own["human"] or own["judge"]  # type: ignore[return-value]


def _agreement_core(judge: Ratings, human: Ratings, judge_scale: Scale, human_scale: Scale,
                    confidence: float, strict: bool = True) -> AgreementResult:
    from ..stats.agreement import nmae
    from ..stats.icc import icc

    # items without any judge score (e.g. an allowed parse failure) or without any human score
    # (e.g. a rater subgroup that did not see them) cannot be compared: drop them, count them
    rated = ~np.isnan(judge.values).all(axis=1) & ~np.isnan(human.values).all(axis=1)
    if rated.sum() < 2:
        raise ReliabilityError(f"only {int(rated.sum())} item(s) have both a judge and a human score")
    if not rated.all():
        judge, human = judge.select_items(rated), human.select_items(rated)
    ids = list(judge.item_ids)
    # each side on [0, 1] by its own scale: a judge on 0-10 and humans on 0-5 are comparable
    jm, hm = judge_scale.normalize(judge.item_means()), human_scale.normalize(human.item_means())
    err = nmae(jm, hm, scale=(0.0, 1.0))
    errors = {i: float(abs(a - b)) for i, a, b in zip(ids, jm, hm)}
    try:
        icc_res = icc(np.column_stack([hm, jm]), form="A,1", confidence=confidence)
    except ReliabilityError:
        if strict:
            raise
        icc_res = None
    if (judge_scale.low, judge_scale.high) == (human_scale.low, human_scale.high):
        shared = human_scale
    else:
        shared = Scale(0, 1, fractional=True, name=f"0-1 (judge {judge_scale.name}, human {human_scale.name})")
    return AgreementResult(icc_res, float(err.value), len(jm), shared, errors,
                           n_omitted=int((~rated).sum()), judge_scale=judge_scale, human_scale=human_scale,
                           unit_means=(hm, jm))


def _group_icc(sub: Ratings, form: str, confidence: float, nan_policy: str, threshold: float,
               use: str) -> GroupResult:
    from ..stats.icc import icc

    try:
        r = icc(sub, form=form, confidence=confidence, nan_policy=nan_policy)
    except ReliabilityError as exc:
        return {"value": None, "ci": None, "n": sub.n_items, "passed": False, "reason": str(exc)}
    tested = r.value if use == "estimate" else r.ci_low
    return _icc_group_record(r, threshold, tested >= threshold)


def _icc_group_record(r: Any, threshold: float, passed: bool) -> GroupResult:
    return {"value": r.value, "ci": [r.ci_low, r.ci_high], "n": r.n, "k": r.k,
            "threshold": threshold, "passed": bool(passed)}


def _group_lines(groups: Mapping[str, GroupResult]) -> list[str]:
    out = []
    for g, r in groups.items():
        if r.get("value") is None:
            out.append(f"  {g}: undefined ({r.get('reason', 'degenerate')}) FAIL")
            continue
        ci = r.get("ci") or [float("nan")] * 2
        out.append(
            f"  {g}: {format_estimate(r['value'], ci[0], ci[1])} n={r.get('n')} "
            + ("ok" if r["passed"] else "FAIL")
        )
    return out


def _item_groups(ratings: Any, by: str) -> Iterator[tuple[str, Ratings]]:
    if not isinstance(ratings, Ratings):
        raise ReliabilityError(f"by={by!r} needs a Ratings object with item groups")
    for label in ratings.item_group_labels(by):
        yield label, ratings.select_items(**{by: label})


def _worst_spread_items(ratings: Any) -> list[WorstItem]:
    r = ratings if isinstance(ratings, Ratings) else None
    mat = r.values if r is not None else np.asarray(getattr(ratings, "to_matrix", lambda: ratings)(), dtype=float)
    if mat.ndim != 2 or mat.shape[1] < 2:
        return []
    with np.errstate(all="ignore"):
        spread = np.nanmax(mat, axis=1) - np.nanmin(mat, axis=1)
    order = np.argsort(-np.nan_to_num(spread, nan=-1))[:WORST]
    ids = r.item_ids if r is not None else [f"item{i}" for i in range(mat.shape[0])]
    out: list[WorstItem] = []
    for i in order:
        if not np.isfinite(spread[i]) or spread[i] <= 0:
            continue
        vals = ", ".join("nan" if np.isnan(v) else f"{v:g}" for v in mat[i][:10])
        out.append({"item": str(ids[i]), "detail": f"scores [{vals}] spread {spread[i]:g}", "spread": float(spread[i])})
    return out


def _scatter_pairs(judge: Any, human: Any, limit: int = 2000) -> list[list[float | None]] | None:
    try:
        j, h = _as_ratings(judge, "judge"), _as_ratings(human, "human")
        j, h = j.align(h)
        jm, hm = j.item_means(), h.item_means()
    except Exception:  # the assertion itself reports the real problem
        return None
    return [[float(a), float(b)] for a, b in list(zip(hm, jm))[:limit]]


def _consistency_matrix(result: Any, names: list[str]) -> list[list[float | None]]:
    m: list[list[float | None]] = [[1.0 if a == b else None for b in names] for a in names]
    for (a, b), r in getattr(result, "pairwise", {}).items():
        if a in names and b in names:
            m[names.index(a)][names.index(b)] = m[names.index(b)][names.index(a)] = r.value
    return m
