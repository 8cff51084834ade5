"""Gates on pairwise comparisons: is the candidate no worse than the baseline, better, ranked as expected?

``assert_not_worse(comparison, margin=, alpha=)`` is a non-inferiority test on the candidate's win
rate with ties split (:func:`pytest_judgerel.stats.pairwise.win_rate`: items are the units,
every repeat and both answer orders of an item together): it passes when the one-sided
``1 - alpha`` lower bound exceeds ``0.5 - margin``.  ``assert_better`` is the superiority test
(lower bound above ``0.5 + margin``).  With ``human=`` preference labels on a subset of items the
gate tests the PPI++ estimate of the human win rate instead (:func:`~pytest_judgerel.stats.pairwise.ppi_win_rate`).
``assert_ranking`` fits Bradley-Terry strengths to comparisons of several systems
(:mod:`pytest_judgerel.stats.bradley_terry`) and checks the expected order pair by pair.  A failure
names the items the candidate lost most clearly and quotes the judge.
"""

from __future__ import annotations

from typing import Any, Literal, Mapping, Sequence

from .common import WORST, Summary, fail_unparsed, gate_fields, label_prefix, not_computed, parse_failure_lines, \
    worst_lines
from .conclusion import finish
from .sequential import settle_comparison
from .stability import attach_stability
from ..errors import ReliabilityError
from ..session.recording import PairwiseRecord, RankingRecord, WorstItem
from ..stats.interval import format_estimate

__all__ = ["assert_not_worse", "assert_better", "assert_ranking"]


def _check_args(margin: Any, alpha: Any) -> None:
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0 <= margin < 0.5:
        raise ValueError(f"margin must be a number in [0, 0.5) (a win-rate distance from 0.5), got {margin!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 0.5:
        raise ValueError(f"alpha must lie strictly between 0 and 0.5, got {alpha!r}")


def _worst(comparison: Any, scores: Mapping[str, float]) -> list[WorstItem]:
    losers = sorted((s, i) for i, s in scores.items() if s < 0.5)[:WORST]
    out: list[WorstItem] = []
    for s, item in losers:
        quote = " ".join(comparison.quote(item).split())
        out.append({"item": item, "detail": f"candidate score {s:.2f}; judge: {quote[:200]!r}", "error": 1 - s})
    return out


def _human(comparison: Any, human: Mapping[str, Any], conf: float) -> tuple[Any, dict[str, Any]]:
    from ..stats.pairwise import ppi_win_rate

    ppi = ppi_win_rate(comparison.item_scores(), human, confidence=conf)
    return ppi, {"estimator": "PPI++", **ppi.to_dict()}


def _compare_gate(comparison: Any, hypothesis: Literal["not_worse", "better"], margin: float, alpha: float,
                  human: Mapping[str, Any] | None, max_parse_failures: int | None, label: str | None) -> Any:
    __tracebackhide__ = True
    _check_args(margin, alpha)
    threshold = 0.5 - margin if hypothesis == "not_worse" else 0.5 + margin
    comparison, run = settle_comparison(comparison, threshold=threshold, alpha=alpha, human=human is not None,
                                        max_parse_failures=max_parse_failures)  # sequential mode: drawn in steps
    seq = None if run is None else run.to_dict()
    if not hasattr(comparison, "outcomes") or not hasattr(comparison, "verdicts"):
        raise TypeError(f"takes the result of judge.compare(...) (a Comparison), got {type(comparison).__name__}")
    statistic = "human win rate (PPI++)" if human is not None else "win rate"
    failures = parse_failure_lines(comparison, max_parse_failures)
    if failures:
        return fail_unparsed(comparison, failures, "pairwise", statistic, threshold, label, sequential=seq)
    conf = 1 - 2 * alpha  # the two-sided interval whose lower bound is the one-sided 1 - alpha bound
    try:
        judged = comparison.win_rate(confidence=conf)
        tested, extra = (judged, {}) if human is None else _human(comparison, human, conf)
    except ReliabilityError as exc:
        return not_computed(comparison, "pairwise", statistic, threshold, label, exc, sequential=seq)
    inc = comparison.position_inconsistency()
    rec: PairwiseRecord = {
        **gate_fields("pairwise", statistic, label, Summary(tested.value, tested.ci_low, tested.ci_high,
                                                             judged.n, comparison.n_raters), threshold, "min",
                      comparison),
        "use": "ci_low", "confidence": conf, "hypothesis": hypothesis, "margin": float(margin), "alpha": float(alpha),
        "candidate": comparison.candidate, "baseline": comparison.baseline, "wins": judged.wins, "ties": judged.ties,
        "losses": judged.losses, "n_verdicts": judged.n_verdicts, "n_unreadable": comparison.n_unreadable,
        "repeats": comparison.repeats, "interval_method": judged.method, "n_omitted": judged.n_omitted,
        "position_inconsistency": None if inc is None else inc.to_dict(),
        "item_scores": {i: 1 - s for i, s in judged.item_scores.items()},
        "worst_items": _worst(comparison, judged.item_scores),
    }
    if human is not None:
        rec["human"], rec["judge_win_rate"] = extra, judged.to_dict()
    if comparison.jury is not None:
        rec["jury"] = comparison.jury.to_dict()
    attach_stability(rec, None)
    ok = tested.ci_low > threshold
    if run is not None:
        rec["sequential"] = run.to_dict()
        ok = run.verdict(ok)  # a look that settled the cap's verdict early decides; at the cap the rule above
    rec["passed"] = ok
    if ok:
        return finish(rec, comparison)
    lines = _failure_lines(comparison, rec, tested, judged, threshold, label)
    return finish(rec, comparison, lines if run is None else [*lines, run.line()])


def _failure_lines(comparison: Any, rec: PairwiseRecord, tested: Any, judged: Any, threshold: float,
                   label: str | None) -> list[str]:
    claim = "no worse than" if rec["hypothesis"] == "not_worse" else "better than"
    margin, alpha = rec["margin"], rec["alpha"] or 0.0
    inc = rec["position_inconsistency"]
    method = judged.method if tested is judged else "PPI++"
    lines = [
        f"{label_prefix(label)}{comparison.candidate} is not shown {claim} {comparison.baseline}: {rec['statistic']} = "
        f"{format_estimate(tested.value, tested.ci_low, tested.ci_high, rec['confidence'], digits=3, method=method)}",
        f"  the one-sided {1 - alpha:.0%} lower bound {tested.ci_low:.3f} does not exceed {threshold:.3f} "
        f"(0.5 {'-' if rec['hypothesis'] == 'not_worse' else '+'} margin {margin:g})",
        f"  {judged.n} items, {judged.n_verdicts} verdicts ({comparison.repeats} repeat(s) x 2 orders): "
        f"{judged.wins} wins, {judged.ties} ties, {judged.losses} losses, {comparison.n_unreadable} unreadable; "
        f"interval: {judged.method} over items"
        + ("" if inc is None else f"; position-inconsistent on {inc['value']:.3f} of pairs"),
    ]
    if comparison.jury is not None:
        lines.append(f"  {comparison.jury.describe()}")
    return lines + worst_lines(rec["worst_items"], "items the candidate lost most clearly")


def assert_not_worse(comparison: Any, *, margin: float = 0.05, alpha: float = 0.05,
                     human: Mapping[str, Any] | None = None, max_parse_failures: int | None = None,
                     label: str | None = None) -> Any:
    """Assert the candidate is no worse than the baseline by more than ``margin``: the one-sided
    ``1 - alpha`` lower bound of its win rate (ties split, clustered by item) exceeds ``0.5 - margin``.

    ``comparison`` comes from ``judge.compare(items, candidate=..., baseline=...)`` (or a
    ``JudgePanel``'s, combined by its jury rule).  ``human``: ``{item id: "candidate"/"baseline"/
    "tie"}`` preference labels on a subset: the gate then tests the PPI++ estimate of the human win
    rate.  Unreadable verdicts beyond ``max_parse_failures`` fail the gate first.
    """
    __tracebackhide__ = True
    return _compare_gate(comparison, "not_worse", margin, alpha, human, max_parse_failures, label)


def assert_better(comparison: Any, *, margin: float = 0.0, alpha: float = 0.05,
                  human: Mapping[str, Any] | None = None, max_parse_failures: int | None = None,
                  label: str | None = None) -> Any:
    """Assert the candidate beats the baseline: the one-sided ``1 - alpha`` lower bound of its win
    rate exceeds ``0.5 + margin`` (see :func:`assert_not_worse` for the arguments)."""
    __tracebackhide__ = True
    return _compare_gate(comparison, "better", margin, alpha, human, max_parse_failures, label)


def assert_ranking(comparisons: Sequence[Any], expected: Sequence[str], *, margin: float = 0.0,
                   alpha: float = 0.05, n_boot: int = 1000, label: str | None = None) -> Any:
    """Assert systems rank as ``expected`` (best first) under Bradley-Terry strengths fitted to
    ``comparisons`` (each a ``Comparison`` whose ``candidate``/``baseline`` name two systems: pass
    ``names=(a, b)`` to ``judge.compare``): for each neighbour pair, the one-sided ``1 - alpha``
    lower bound of P(the better beats the next) exceeds ``0.5 - margin``.  Returns the fit."""
    __tracebackhide__ = True
    from ..stats.bradley_terry import bradley_terry

    _check_args(margin, alpha)
    if len(expected) < 2 or len(set(expected)) != len(expected):
        raise ValueError(f"expected must name two or more distinct systems, best first, got {list(expected)!r}")
    rows = [(i, c.candidate, c.baseline, s) for c in comparisons for i, xs in c.outcomes().items()
            for s in xs if s is not None]
    threshold = 0.5 - margin
    source = comparisons[0] if comparisons else None
    try:
        fit = bradley_terry(rows, confidence=1 - 2 * alpha, n_boot=n_boot)
        unknown = sorted(set(expected) - set(fit.systems))
        if unknown:
            raise ReliabilityError(f"expected names systems no comparison covers: {unknown}")
    except ReliabilityError as exc:
        return not_computed(source, "ranking", "Bradley-Terry P(next beaten)", threshold, label, exc)
    pairs = [(a, b, *fit.win_probability[(a, b)]) for a, b in zip(expected, expected[1:])]
    adjacent: list[dict[str, Any]] = [{"better": a, "worse": b, "p": p, "ci": [lo, hi]} for a, b, p, lo, hi in pairs]
    low = min(lo for *_, lo, _hi in pairs)
    rec: RankingRecord = {
        **gate_fields("ranking", "Bradley-Terry P(next beaten)", label,
                      Summary(low, None, None, fit.n, len(fit.systems)), threshold, "min", source),
        "use": "ci_low", "confidence": fit.confidence, "margin": float(margin), "alpha": float(alpha),
        "expected": list(expected), "ranking": fit.ranking(), "strength": dict(fit.strength), "adjacent": adjacent,
    }
    attach_stability(rec, None)
    bad = [(a, b, p, lo) for a, b, p, lo, _hi in pairs if not lo > threshold]
    rec["passed"] = not bad
    if not bad:
        return finish(rec, fit)
    lines = [f"{label_prefix(label)}the ranking {' > '.join(expected)} is not shown "
             f"(Bradley-Terry over {fit.n} items; fitted order {' > '.join(fit.ranking())}):"]
    lines += [f"  P({a} beats {b}) = {p:.3f}, one-sided {1 - alpha:.0%} lower bound {lo:.3f} <= {threshold:.3f}"
              for a, b, p, lo in bad]
    return finish(rec, fit, lines)
