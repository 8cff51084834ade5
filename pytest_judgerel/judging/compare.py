"""Pairwise comparison of two systems' answers by a judge, every pair in both orders.

``compare(judge, items, candidate=..., baseline=..., repeats=k)`` renders the pairwise template
(default: the shipped MT-Bench one, :mod:`pytest_judgerel.probes.pairwise`) for each item with the
candidate's answer as A and the baseline's as B, and again swapped, ``k`` times each (repeat r is
sample index r), through the judge's client (cache, budget, dry run, concurrency), and parses each
reply strictly: a verdict per order (candidate, baseline, tie) or unreadable (None, with its
``JudgeFailure``; never guessed).  The result keeps every verdict and reply, the position-consistent
verdict per pair and the position-inconsistency rate; its win rate is
:func:`pytest_judgerel.stats.pairwise.win_rate` over items.  ``JudgePanel.compare`` runs one
comparison per model and combines them with a jury rule (:mod:`pytest_judgerel.stats.jury`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..errors import ConfigError
from ..session.recording import active_recorder, new_record

__all__ = ["PairVerdict", "Comparison", "PendingComparison", "compare", "compare_panel"]

_FROM_A = {"A": "candidate", "B": "baseline", "tie": "tie"}  # the candidate shown first (as A)
_FROM_B = {"A": "baseline", "B": "candidate", "tie": "tie"}  # the candidate shown second


@dataclass(frozen=True)
class PairVerdict:
    """One pair at one repeat: the verdict (in candidate terms) with the candidate shown first and
    shown second, the position-consistent verdict and both replies."""

    item: str
    repeat: int
    first: str | None
    second: str | None
    consistent: str
    replies: tuple[str, str] = ("", "")


@dataclass(frozen=True)
class Comparison:
    """A candidate against a baseline on ``items``: every :class:`PairVerdict`, the unreadable
    replies (``parse_failures``), the judge's ``provenance`` and, for a jury, its verdicts."""

    candidate: str
    baseline: str
    verdicts: tuple[PairVerdict, ...]
    parse_failures: tuple[Any, ...]
    provenance: dict[str, Any]
    calls: int = 0
    repeats: int = 1
    jury: Any = None  # stats.jury.JuryVerdicts when a panel compared
    per_judge: dict[str, "Comparison"] = field(default_factory=dict, repr=False)

    @property
    def item_ids(self) -> list[str]:
        return list(dict.fromkeys(v.item for v in self.verdicts))

    @property
    def n_items(self) -> int:
        return len(self.item_ids)

    @property
    def n_raters(self) -> int:
        return 2 * self.repeats

    @property
    def n_unreadable(self) -> int:
        return sum((v.first is None) + (v.second is None) for v in self.verdicts)

    def outcomes(self) -> dict[str, list[float | None]]:
        """Per item the candidate's score of each verdict (1 win, 0.5 tie, 0 loss, None unreadable);
        for a jury, the jury's combined score per item."""
        from ..stats.pairwise import OUTCOME_SCORE

        if self.jury is not None:
            return {i: [self.jury.combined.get(i)] for i in self.item_ids}
        out: dict[str, list[float | None]] = {i: [] for i in self.item_ids}
        for v in self.verdicts:
            out[v.item] += [None if x is None else OUTCOME_SCORE[x] for x in (v.first, v.second)]
        return out

    def item_scores(self) -> dict[str, float]:
        """Each item's mean score over its readable verdicts (items without one left out)."""
        out = {}
        for item, xs in self.outcomes().items():
            read = [x for x in xs if x is not None]
            if read:
                out[item] = sum(read) / len(read)
        return out

    def win_rate(self, confidence: float = 0.95, **kwargs: Any) -> Any:
        """The candidate's win rate, ties split, clustered by item (:func:`~pytest_judgerel.stats.pairwise.win_rate`)."""
        from ..stats.pairwise import win_rate

        return win_rate(self.outcomes(), confidence=confidence, **kwargs)

    def position_inconsistency(self, confidence: float = 0.95) -> Any:
        """Share of pairs (read in both orders) whose two verdicts differ, with its Wilson interval;
        None when no pair was read in both orders."""
        from ..stats.proportion import wilson_interval

        read = [v for v in self.verdicts if v.consistent != "missing"]
        if not read:
            return None
        return wilson_interval(sum(v.consistent == "inconsistent" for v in read), len(read), confidence)

    def quote(self, item: str) -> str:
        """A reply of the judge on ``item`` that preferred the baseline (else any reply)."""
        for v in self.verdicts:
            if v.item == item:
                for side, reply in zip((v.first, v.second), v.replies):
                    if side == "baseline":
                        return reply
        return next((r for v in self.verdicts if v.item == item for r in v.replies if r), "")

    def __str__(self) -> str:
        inc = self.position_inconsistency()
        return (f"{self.candidate} vs {self.baseline}: {self.n_items} items x {self.repeats} repeat(s) x 2 orders; "
                f"{self.n_unreadable} unreadable verdict(s); position-inconsistent on "
                f"{'n/a' if inc is None else f'{inc.value:.3f}'} of pairs")


def _answers(rows: Sequence[tuple[str, Mapping[str, Any]]], source: Any, name: str) -> dict[str, Any]:
    if isinstance(source, str):
        missing = [iid for iid, item in rows if source not in item]
        if missing:
            raise ConfigError(f"{name}={source!r} names a field that items {missing[:5]} lack")
        return {iid: item[source] for iid, item in rows}
    if isinstance(source, Mapping):
        answers = {str(k): v for k, v in source.items()}
        missing = [iid for iid, _ in rows if iid not in answers]
        if missing:
            raise ConfigError(f"{name} has no answer for items {missing[:5]}")
        return answers
    raise ConfigError(f"{name} must be a mapping item id -> answer or the name of an item field, "
                      f"got {type(source).__name__}")


@dataclass(frozen=True)
class _Plan:
    """What a comparison judges: the items, both systems' answers, the template and the repeats."""

    rows: list[tuple[str, Mapping[str, Any]]]
    cand: dict[str, Any]
    base: dict[str, Any]
    tmpl: Any
    fields: tuple[str, str]
    names: tuple[str, str]
    repeats: int


def _judge_items(judge: Any, plan: _Plan, idx: Sequence[int]) -> tuple[list[PairVerdict], list[Any], int]:
    """Judge the items ``idx`` of ``plan`` (every repeat, both orders) and record the judge run:
    (verdicts, unreadable replies, calls including re-asks)."""
    from .items import JudgeFailure
    from .templates import render
    from .pairwise import build_request, judge_pairs, pairwise_fingerprint
    from ..stats.pairwise import consistent_verdict

    a, b = plan.fields
    requests = []
    for i in idx:
        iid, item = plan.rows[i]
        for r in range(plan.repeats):
            for first, second in ((plan.cand[iid], plan.base[iid]), (plan.base[iid], plan.cand[iid])):
                requests.append(build_request(judge, render(plan.tmpl, {**item, a: first, b: second}, judge.scale), r))
    results = judge_pairs(judge, requests) if requests else []
    verdicts, failures = [], []
    for slot in range(0, len(results), 2):
        iid, r = plan.rows[idx[slot // (2 * plan.repeats)]][0], (slot // 2) % plan.repeats
        sides: list[str | None] = []
        for order, mapping, (verdict, resp, error, reasked) in (("candidate-first", _FROM_A, results[slot]),
                                                                 ("candidate-second", _FROM_B, results[slot + 1])):
            sides.append(None if verdict is None else mapping[verdict])
            if error is not None:
                failures.append(JudgeFailure(item=iid, rater=f"r{r}/{order}", cause=error.cause, message=str(error),
                                             reply=error.reply, reasked=reasked))
        replies = (str(getattr(results[slot][1], "text", "") or ""), str(getattr(results[slot + 1][1], "text", "") or ""))
        verdicts.append(PairVerdict(iid, r, sides[0], sides[1], consistent_verdict(sides[0], sides[1]), replies))
    n_reasked = sum(x[3] for x in results)
    active_recorder().record(new_record(
        "judge_run", judge=pairwise_fingerprint(judge, plan.tmpl), items=len(idx), calls=len(requests) + n_reasked,
        reasked=n_reasked, parse_failures=len(failures), failures=[f.to_dict() for f in failures[:20]],
        passed=not failures))
    return verdicts, failures, len(requests) + n_reasked


def _comparison(judge: Any, plan: _Plan, verdicts: Sequence[PairVerdict], failures: Sequence[Any],
                calls: int) -> Comparison:
    from .pairwise import pairwise_fingerprint

    fp = pairwise_fingerprint(judge, plan.tmpl)
    return Comparison(str(plan.names[0]), str(plan.names[1]), tuple(verdicts), tuple(failures),
                      {**fp, "design": "pairwise-compare", "repeats": plan.repeats}, calls, plan.repeats)


class PendingComparison:
    """A comparison not drawn yet: what :func:`compare` returns in sequential mode.  A sequential
    pairwise gate (``gates.sequential.settle_comparison``) draws it by item prefixes in the judging
    order (:func:`~pytest_judgerel.judging.pending.judging_order`), every repeat and both orders of an
    item together (the same requests as the fixed design's, so both share the cache); any other use
    (an attribute, ``str``, another gate) first draws the whole cap (:meth:`materialize`)."""

    def __init__(self, judge: Any, plan: _Plan) -> None:
        from .pending import judging_order

        self._judge, self._plan = judge, plan
        self._order = judging_order([iid for iid, _ in plan.rows])
        self._drawn: dict[int, tuple[list[PairVerdict], list[Any], int]] = {}
        self._full: Comparison | None = None

    @property
    def design(self) -> Any:
        """The cap: items x (2 x repeats) judge calls (``judging.pending.PendingDesign``)."""
        from .pending import PendingDesign

        return PendingDesign(len(self._plan.rows), 2 * self._plan.repeats)

    @property
    def materialized(self) -> bool:
        return self._full is not None

    @property
    def calls_drawn(self) -> int:
        """Pair judgements drawn so far (re-asks not counted)."""
        return len(self._drawn) * 2 * self._plan.repeats

    def _take(self, idx: Sequence[int]) -> Comparison:
        missing = [i for i in idx if i not in self._drawn]
        if missing:
            verdicts, failures, calls = _judge_items(self._judge, self._plan, missing)
            for i in missing:
                iid = self._plan.rows[i][0]
                self._drawn[i] = ([v for v in verdicts if v.item == iid], [f for f in failures if f.item == iid], 0)
            self._drawn[missing[0]] = (*self._drawn[missing[0]][:2], calls)  # calls counted once per batch
        parts = [self._drawn[i] for i in idx]
        return _comparison(self._judge, self._plan, [v for p in parts for v in p[0]], [f for p in parts for f in p[1]],
                           sum(p[2] for p in parts))

    def items_prefix(self, items: int) -> Comparison:
        """The comparison of the first ``items`` items in the judging order, drawing the missing ones."""
        if not 1 <= items <= len(self._plan.rows):
            raise ValueError(f"items_prefix({items}): the cap is {len(self._plan.rows)} items")
        return self._take(self._order[:items])

    def materialize(self) -> Comparison:
        """Draw the whole cap (what is missing of it): the fixed design's :class:`Comparison`."""
        if self._full is None:
            self._full = self._take(list(range(len(self._plan.rows))))
        return self._full

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.materialize(), name)

    def __str__(self) -> str:
        return str(self.materialize())

    def __repr__(self) -> str:  # never draws (pytest may repr a test's locals)
        d = self.design
        return f"PendingComparison({d.items} items x {self._plan.repeats} repeat(s) x 2 orders, {self.calls_drawn} " \
               f"of {d.calls} calls drawn)"


def compare(judge: Any, items: Any, *, candidate: Any, baseline: Any, repeats: int = 1, template: Any = None,
            fields: Sequence[str] = ("answer_a", "answer_b"), names: Sequence[str] = ("candidate", "baseline")
            ) -> Any:
    """Judge each item's candidate answer against its baseline answer in both orders, ``repeats``
    times (see the module docstring); ``fields`` are the template's two answer fields, ``names``
    the two systems' names in the record.  Returns a :class:`Comparison`; in sequential mode
    (``judge.sequential``) a :class:`PendingComparison` a sequential gate draws in steps."""
    from .items import item_rows
    from .pairwise import pairwise_template

    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ConfigError(f"repeats must be an integer >= 1, got {repeats!r}")
    if len(fields) != 2 or fields[0] == fields[1]:
        raise ConfigError(f"fields must name the template's two answer fields, got {fields!r}")
    rows = item_rows(items)
    plan = _Plan(rows, _answers(rows, candidate, "candidate"), _answers(rows, baseline, "baseline"),
                 pairwise_template(template, fields), (fields[0], fields[1]), (str(names[0]), str(names[1])), repeats)
    if getattr(judge, "sequential", False):
        return PendingComparison(judge, plan)
    verdicts, failures, calls = _judge_items(judge, plan, range(len(rows)))
    return _comparison(judge, plan, verdicts, failures, calls)


def _drawn(comparison: Any) -> Comparison:
    return comparison.materialize() if isinstance(comparison, PendingComparison) else comparison


def compare_panel(judges: Mapping[str, Any], items: Any, *, rule: str = "majority", tie_rule: str = "tie",
                  weights: Mapping[str, float] | None = None, **kwargs: Any) -> Comparison:
    """:func:`compare` by each judge of ``{name: judge}``, combined per item by a jury ``rule``
    (:func:`pytest_judgerel.stats.jury.combine_verdicts`); every judge's comparison is kept."""
    from ..stats.jury import combine_verdicts

    per = {name: _drawn(compare(j, items, **kwargs)) for name, j in judges.items()}  # a jury is drawn in full
    scores = {name: c.item_scores() for name, c in per.items()}
    jury = combine_verdicts(scores, rule, tie_rule=tie_rule, weights=weights)
    first = next(iter(per.values()))
    prov = {**first.provenance, "model": [c.provenance.get("model") for c in per.values()],
            "design": "pairwise-jury", "jury_rule": rule}
    failures = tuple(f for c in per.values() for f in c.parse_failures)
    active_recorder().record(new_record(
        "judge_panel", judge=prov, models=[str(m) for m in per], items=first.n_items, k=len(per),
        effective_judges=jury.effective_judges, mean_error_correlation=None, reference="panel"))
    verdicts = tuple(v for c in per.values() for v in c.verdicts)
    return Comparison(first.candidate, first.baseline, verdicts, failures, prov,
                      sum(c.calls for c in per.values()), first.repeats, jury, per)
