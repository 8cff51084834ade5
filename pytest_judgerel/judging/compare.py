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

__all__ = ["PairVerdict", "Comparison", "compare", "compare_panel"]

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


def compare(judge: Any, items: Any, *, candidate: Any, baseline: Any, repeats: int = 1, template: Any = None,
            fields: Sequence[str] = ("answer_a", "answer_b"), names: Sequence[str] = ("candidate", "baseline")
            ) -> Comparison:
    """Judge each item's candidate answer against its baseline answer in both orders, ``repeats``
    times (see the module docstring); ``fields`` are the template's two answer fields, ``names``
    the two systems' names in the record."""
    from .items import JudgeFailure, item_rows
    from .templates import render
    from .pairwise import build_request, judge_pairs, pairwise_fingerprint, pairwise_template
    from ..stats.pairwise import consistent_verdict

    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ConfigError(f"repeats must be an integer >= 1, got {repeats!r}")
    if len(fields) != 2 or fields[0] == fields[1]:
        raise ConfigError(f"fields must name the template's two answer fields, got {fields!r}")
    tmpl = pairwise_template(template, fields)
    rows = item_rows(items)
    cand, base = _answers(rows, candidate, "candidate"), _answers(rows, baseline, "baseline")
    a, b = fields
    requests = []
    for iid, item in rows:
        for r in range(repeats):
            for first, second in ((cand[iid], base[iid]), (base[iid], cand[iid])):
                requests.append(build_request(judge, render(tmpl, {**item, a: first, b: second}, judge.scale), r))
    results = judge_pairs(judge, requests)
    verdicts, failures = [], []
    for slot in range(0, len(results), 2):
        iid, r = rows[slot // (2 * repeats)][0], (slot // 2) % repeats
        sides: list[str | None] = []
        for order, mapping, (verdict, resp, error, reasked) in (("candidate-first", _FROM_A, results[slot]),
                                                                 ("candidate-second", _FROM_B, results[slot + 1])):
            sides.append(None if verdict is None else mapping[verdict])
            if error is not None:
                failures.append(JudgeFailure(item=iid, rater=f"r{r}/{order}", cause=error.cause, message=str(error),
                                             reply=error.reply, reasked=reasked))
        replies = (str(getattr(results[slot][1], "text", "") or ""), str(getattr(results[slot + 1][1], "text", "") or ""))
        verdicts.append(PairVerdict(iid, r, sides[0], sides[1], consistent_verdict(sides[0], sides[1]), replies))
    fp = pairwise_fingerprint(judge, tmpl)
    n_reasked = sum(x[3] for x in results)
    active_recorder().record(new_record(
        "judge_run", judge=fp, items=len(rows), calls=len(requests) + n_reasked, reasked=n_reasked,
        parse_failures=len(failures), failures=[f.to_dict() for f in failures[:20]], passed=not failures))
    return Comparison(str(names[0]), str(names[1]), tuple(verdicts), tuple(failures),
                      {**fp, "design": "pairwise-compare", "repeats": repeats}, len(requests) + n_reasked, repeats)


def compare_panel(judges: Mapping[str, Any], items: Any, *, rule: str = "majority", tie_rule: str = "tie",
                  weights: Mapping[str, float] | None = None, **kwargs: Any) -> Comparison:
    """:func:`compare` by each judge of ``{name: judge}``, combined per item by a jury ``rule``
    (:func:`pytest_judgerel.stats.jury.combine_verdicts`); every judge's comparison is kept."""
    from ..stats.jury import combine_verdicts

    per = {name: compare(j, items, **kwargs) for name, j in judges.items()}
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
