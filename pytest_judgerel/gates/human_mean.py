"""Gates on the human-scale mean of a system, estimated from a few human labels and many judge
scores (prediction-powered inference, PPI++; :mod:`pytest_judgerel.stats.ppi`).

Like every gate (the shared machinery is :mod:`pytest_judgerel.gates.common`), each returns
its result when the gate passes, raises
:class:`~pytest_judgerel.gates.conclusion.JudgeReliabilityFailure` with a full explanation when it does
not, and records a metric record for the session report either way (JSON, JUnit, HTML,
terminal, baseline); in report-only mode they record and never fail.  ``use="ci_low"`` gates the
lower confidence bound instead of the estimate.

Judge scores may be plain sequences or :class:`~pytest_judgerel.ratings.Ratings` from a judge
(items x repeats: the per-item mean is used, and the judge's provenance goes into the record);
replies that could not be parsed fail the gate first (``max_parse_failures``), and allowed ones
drop their items (``n_omitted``).  Human labels may be one per item or items x raters (the
per-item mean).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Sequence

import numpy as np

from .common import (
    ANY_RANGE,
    Summary,
    Use,
    check_threshold,
    check_use,
    fail_unparsed,
    gate_fields,
    label_prefix,
    not_computed,
    parse_failure_lines,
)
from .conclusion import finish
from .sequential import settle_human_mean
from .stability import N_BOOT, SEED, attach_stability
from ..errors import ReliabilityError
from ..session.recording import GroupResult, HumanMeanDifferenceRecord, HumanMeanRecord

__all__ = ["assert_human_mean_above", "assert_human_mean_difference"]


def _per_item(data: Any) -> Any:
    """Item means of a Ratings-like or 2-D (items x columns) input; anything else unchanged."""
    if hasattr(data, "to_matrix"):
        data = np.asarray(data.to_matrix(), dtype=float)
    if isinstance(data, np.ndarray) and data.ndim == 2 and data.dtype.kind in "iuf":
        m = data.astype(float)
        counts = (~np.isnan(m)).sum(axis=1)
        return np.where(counts > 0, np.nansum(m, axis=1) / np.maximum(counts, 1), np.nan)
    return data


def _drop_unparsed(f: Any, y: Any, fu: Any, labeled_failures: bool, unlabeled_failures: bool
                   ) -> tuple[Any, Any, Any, int]:
    """Drop the items whose judge score is missing because a reply could not be parsed (only
    inputs that carry allowed parse failures; any other missing value is an error downstream)."""
    omitted = 0
    if labeled_failures:
        fa = np.asarray(f, dtype=float)
        keep = ~np.isnan(fa)
        ya = y if isinstance(y, np.ndarray) else np.asarray(y, dtype=object)
        if not keep.all() and len(ya) == len(fa):
            f, y, omitted = fa[keep], ya[keep], int((~keep).sum())
    if unlabeled_failures:
        fua = np.asarray(fu, dtype=float)
        keep = ~np.isnan(fua)
        fu, omitted = fua[keep], omitted + int((~keep).sum())
    return f, y, fu, omitted


def _failures_of(data: Any) -> list[Any]:
    return list(getattr(data, "parse_failures", ()) or ())


def _item_groups(data: Any, by: str, name: str) -> tuple[str, ...]:
    groups = getattr(data, "item_groups", None)
    if not groups or by not in groups:
        have = sorted(groups) if groups else []
        raise ValueError(f"by={by!r} needs {name} as judge Ratings whose items carry a {by!r} group "
                         f"(it has {have or 'none'}); or pass groups=(labelled groups, unlabelled groups)")
    return tuple(groups[by])


def _judge_inputs(*sources: Any) -> Any:
    """The first judge input that carries provenance (a Ratings from a judge), for the record."""
    return next((s for s in sources if hasattr(s, "to_matrix")), None)


def _ppi_stability(f: Any, y: Any, fu: Any, threshold: float, use: str, confidence: float, tuned: bool,
                   lam: float | None, statistic: str, observed: float) -> Any:
    """p_pass of the gate on resamples of the labelled and the unlabelled items."""
    from ..stats.ppi import ppi_mean_resamples
    from ..stats.stability import VerdictStability

    try:
        values, lows, _ = ppi_mean_resamples(f, y, fu, n_boot=N_BOOT, seed=SEED, confidence=confidence,
                                             tuned=tuned, lam=lam)
    except ReliabilityError:
        return None
    tested = values if use == "estimate" else lows
    ok = np.isfinite(tested) & (tested >= threshold)
    return VerdictStability(p_pass=float(ok.mean()), observed=observed, passed=observed >= threshold,
                            threshold=threshold,
                            direction="min", n_boot=N_BOOT, seed=SEED, resample="labelled+unlabelled items",
                            n_undefined=int((~np.isfinite(tested)).sum()), statistic=statistic)


def _line(res: Any) -> str:
    c = res.classical
    return (f"human-scale mean = {res.formatted()} "
            f"(PPI++: {res.n_labeled} human labels + {res.n_unlabeled} judge-only items, lambda {res.lam:.3f}, "
            f"worth {res.effective_n:.0f} human labels); human-only {c.value:.4f} [{c.ci_low:.4f}, {c.ci_high:.4f}]")


# ---------------------------------------------------------------------- one system
def assert_human_mean_above(judge_labeled: Any, human_labeled: Any = None, judge_unlabeled: Any = None, *,
                            min_mean: float, use: str = "estimate", confidence: float = 0.95, tuned: bool = True,
                            lam: float | None = None, groups: tuple[Sequence[Any], Sequence[Any]] | None = None,
                            by: str | None = None, max_parse_failures: int | None = None,
                            label: str | None = None) -> Any:
    """Assert the human-scale mean of a system reaches ``min_mean`` (on the human scale).

    ``judge_labeled``/``human_labeled``: the judge's scores and the human labels of the labelled
    items (same order); ``judge_unlabeled``: the judge's scores on the other items; or pass a
    :class:`~pytest_judgerel.stats.PPIMean` as ``judge_labeled`` alone.  ``tuned``/``lam`` as for
    :func:`pytest_judgerel.stats.ppi_mean`.  ``groups=(labelled groups, unlabelled groups)``: every
    group (benchmark, model...) must pass too; ``by="benchmark"`` takes the groups from the item
    groups of judge ``Ratings`` (items with a ``benchmark`` field).  Returns the
    :class:`~pytest_judgerel.stats.PPIMean`.
    """
    __tracebackhide__ = True
    from ..stats.ppi import PPIMean, ppi_mean, ppi_mean_by

    check_threshold(min_mean, "min_mean", ANY_RANGE)
    use = check_use(use, ("estimate", "ci_low"))
    statistic = "human-scale mean (PPI++)"
    judge_labeled, judge_unlabeled, seq = settle_human_mean(
        judge_labeled, human_labeled, judge_unlabeled, min_mean=min_mean, use=use, confidence=confidence, tuned=tuned,
        lam=lam, grouped=by is not None or groups is not None, max_parse_failures=max_parse_failures)
    source = _judge_inputs(judge_labeled, judge_unlabeled)
    block = None if seq is None else seq.to_dict()  # kept on the failure paths' records too
    if by is not None:
        if groups is not None:
            raise ValueError("pass groups= or by=, not both")
        groups = (_item_groups(judge_labeled, by, "judge_labeled"),
                  _item_groups(judge_unlabeled, by, "judge_unlabeled"))
    if isinstance(judge_labeled, PPIMean):
        if human_labeled is not None or judge_unlabeled is not None or groups is not None:
            raise ValueError("pass either a PPIMean or judge_labeled/human_labeled/judge_unlabeled, not both")
        res, f = judge_labeled, None
        y = fu = None
        n_omitted = 0
    else:
        if human_labeled is None or judge_unlabeled is None:
            raise ValueError("assert_human_mean_above needs judge_labeled, human_labeled and judge_unlabeled "
                             "(or a PPIMean)")
        unparsed = SimpleNamespace(parse_failures=[*_failures_of(judge_labeled), *_failures_of(judge_unlabeled)])
        failures = parse_failure_lines(unparsed, max_parse_failures)
        if failures:
            return fail_unparsed(source, failures, "human_mean", statistic, min_mean, label, sequential=block)
        f, y, fu, n_omitted = _drop_unparsed(_per_item(judge_labeled), _per_item(human_labeled),
                                             _per_item(judge_unlabeled), bool(_failures_of(judge_labeled)),
                                             bool(_failures_of(judge_unlabeled)))
        try:
            res = ppi_mean(f, y, fu, confidence=confidence, tuned=tuned, lam=lam)
        except ReliabilityError as exc:
            return not_computed(source, "human_mean", statistic, min_mean, label, exc, sequential=block)
    tested = res.value if use == "estimate" else res.ci_low
    passed = tested >= min_mean if seq is None else seq.verdict(tested >= min_mean)
    per: dict[str, Any] = {}  # group -> its PPIMean
    if groups is not None:
        gl, gu = groups
        if n_omitted:
            raise ValueError("groups= cannot be combined with unparsed judge replies (items were dropped); "
                             "drop them from the groups as well or set max_parse_failures=0")
        try:
            per = ppi_mean_by(f, y, fu, gl, gu, confidence=confidence, tuned=tuned, lam=lam)
        except ReliabilityError as exc:
            return not_computed(source, "human_mean", statistic, min_mean, label, exc, sequential=block)
    group_records = _group_records(per, use, min_mean)
    bad_groups = [g for g, r in group_records.items() if not r["passed"]]
    rec = _mean_record(res, source, statistic, label, min_mean, use, group_records, n_omitted,
                       len(_failures_of(judge_labeled)) + len(_failures_of(judge_unlabeled)), seq)
    attach_stability(rec, None if f is None else _ppi_stability(
        f, y, fu, min_mean, use, res.confidence, res.tuned, None if res.tuned else res.lam, statistic, tested))
    ok = passed and not bad_groups
    rec["passed"] = ok
    if ok:
        return finish(rec, res)
    return finish(rec, res, _mean_failure_lines(res, seq, passed, tested, use, min_mean, n_omitted,
                                                {g: per[g] for g in bad_groups}, label))


def _mean_record(res: Any, source: Any, statistic: str, label: str | None, min_mean: float, use: Use,
                 group_records: dict[str, GroupResult], n_omitted: int, parse_failures: int,
                 seq: Any) -> HumanMeanRecord:
    """The record of a computed human-scale mean gate (its verdict and stability come after)."""
    rec: HumanMeanRecord = {
        **gate_fields("human_mean", statistic, label, Summary(res.value, res.ci_low, res.ci_high, res.n_labeled),
                      min_mean, "min", source),
        "use": use, "confidence": res.confidence, "lam": res.lam, "tuned": res.tuned,
        "n_unlabeled": res.n_unlabeled, "effective_n": res.effective_n, "classical": res.classical.to_dict(),
        "judge_mean": res.judge_mean, "judge_bias": res.judge_bias, "groups": group_records, "n_omitted": n_omitted,
        "parse_failures": parse_failures,
    }
    if seq is not None:
        rec["sequential"] = seq.to_dict()
    return rec


def _group_records(per: dict[str, Any], use: str, min_mean: float) -> dict[str, GroupResult]:
    """The record's ``groups``: each group's PPI mean (``per``) and its verdict."""
    records: dict[str, GroupResult] = {}
    for g, r in per.items():
        t = r.value if use == "estimate" else r.ci_low
        records[g] = {"value": r.value, "ci": [r.ci_low, r.ci_high], "n": r.n_labeled,
                      "n_unlabeled": r.n_unlabeled, "lam": r.lam, "passed": bool(t >= min_mean)}
    return records


def _mean_failure_lines(res: Any, seq: Any, passed: bool, tested: float, use: str, min_mean: float,
                        n_omitted: int, bad_groups: dict[str, Any], label: str | None) -> list[str]:
    """The failure message: the estimate, why it fails (a sequential look settled it, the pooled
    mean is low, or only a group failed), the judge's own bias, the groups below ``min_mean``."""
    lines = [f"{label_prefix(label)}{_line(res)}"]
    if seq is not None and seq.early:  # a look settled the verdict before the cap
        lines.append(seq.line())
    elif not passed:
        what = "estimate" if use == "estimate" else "lower CI bound"
        lines.append(f"  the {what} {tested:.4f} is below min_mean {min_mean}")
    else:
        lines.append(f"  pooled passes min_mean {min_mean}")
    lines.append(f"  the judge's own mean is {res.judge_mean:.4f}; on the labelled items it exceeds the human label "
                 f"by {res.judge_bias:+.4f} on average (PPI removes that bias)")
    if n_omitted:
        lines.append(f"  {n_omitted} item(s) without a readable judge score were left out")
    for g, r in bad_groups.items():
        lines.append(f"  group {g}: {r.formatted()} (n={r.n_labeled} labels) "
                     f"below min_mean {min_mean}")
    return lines


# ---------------------------------------------------------------------- two systems
def _system_arrays(system: Any, name: str) -> Any:
    if isinstance(system, dict):
        return {k: _per_item(v) for k, v in system.items()}
    try:
        parts = tuple(system)
    except TypeError:
        raise ValueError(f"{name} must be (judge_labeled, human_labeled, judge_unlabeled) or a mapping, got "
                         f"{type(system).__name__}") from None
    return tuple(_per_item(p) for p in parts)


def assert_human_mean_difference(new: Any, old: Any = None, *, min_difference: float, use: str = "estimate",
                                 paired: bool = True, paired_unlabeled: bool | None = None,
                                 confidence: float = 0.95, tuned: bool = True, max_parse_failures: int | None = None,
                                 label: str | None = None) -> Any:
    """Assert the human-scale mean of ``new`` minus that of ``old`` is at least ``min_difference``.

    Each system is ``(judge_labeled, human_labeled, judge_unlabeled)`` (or a mapping with those
    keys); or pass a :class:`~pytest_judgerel.stats.PPIDifference` as ``new`` alone.  For a prompt
    change, ``min_difference=-0.1, use="ci_low"`` asserts, with 95% confidence (one-sided 97.5%),
    that the new prompt loses at most 0.1 on the human scale (a non-inferiority gate); ``paired``
    as for :func:`pytest_judgerel.stats.ppi_mean_difference`.  Judge ``Ratings`` with more unparsed
    replies than ``max_parse_failures`` fail the gate first; pairing needs every item, so an
    allowed unparsed reply is an error naming it (drop the item from both systems).  Returns the
    ``PPIDifference``.
    """
    __tracebackhide__ = True
    from ..stats.ppi import PPIDifference, ppi_mean_difference

    check_threshold(min_difference, "min_difference", ANY_RANGE)
    use = check_use(use, ("estimate", "ci_low"))
    statistic = "human-scale mean difference (PPI++)"
    if isinstance(new, PPIDifference):
        if old is not None:
            raise ValueError("pass either a PPIDifference or the two systems, not both")
        res = new
        source = None
    else:
        if old is None:
            raise ValueError("assert_human_mean_difference needs the new and the old system (or a PPIDifference)")
        parts = [p for system in (new, old) for p in (system.values() if isinstance(system, dict) else system)]
        source = _judge_inputs(*parts)
        unparsed = SimpleNamespace(parse_failures=[x for p in parts for x in _failures_of(p)])
        failures = parse_failure_lines(unparsed, max_parse_failures)
        if failures:
            return fail_unparsed(source, failures, "human_mean_difference", statistic, min_difference, label)
        try:
            res = ppi_mean_difference(_system_arrays(new, "new"), _system_arrays(old, "old"), paired=paired,
                                      paired_unlabeled=paired_unlabeled, confidence=confidence, tuned=tuned)
        except ReliabilityError as exc:
            return not_computed(source, "human_mean_difference", statistic, min_difference, label, exc)
    tested = res.value if use == "estimate" else res.ci_low
    ok = tested >= min_difference
    c = res.classical
    rec: HumanMeanDifferenceRecord = {
        **gate_fields("human_mean_difference", statistic, label, Summary(res.value, res.ci_low, res.ci_high, res.n, 2),
                      min_difference, "min", source),
        "use": use, "confidence": res.confidence, "lam": list(res.lam), "tuned": res.tuned,
        "paired": res.paired, "paired_unlabeled": res.paired_unlabeled, "effective_n": res.effective_n,
        "classical": c.to_dict(), "new_mean": res.a.value, "old_mean": res.b.value,
        "new_ci": [res.a.ci_low, res.a.ci_high], "old_ci": [res.b.ci_low, res.b.ci_high],
    }
    attach_stability(rec, None)
    rec["passed"] = ok
    if ok:
        return finish(rec, res)
    what = "estimated difference" if use == "estimate" else "lower CI bound of the difference"
    lines = [
        f"{label_prefix(label)}human-scale mean difference new - old = {res.formatted(signed=True)} "
        f"(PPI++, lambda {res.lam[0]:.3f} / {res.lam[1]:.3f}, "
        f"{'paired' if res.paired else 'independent'} human labels, worth {res.effective_n:.0f} labels per system)",
        f"  new {res.a.formatted()}, old {res.b.formatted()}; human-only difference {c.value:+.4f} "
        f"[{c.ci_low:+.4f}, {c.ci_high:+.4f}]",
        f"  the {what} {tested:+.4f} is below min_difference {min_difference}",
    ]
    return finish(rec, res, lines)
