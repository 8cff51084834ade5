"""A jury: several judges' verdicts on each item combined by a named rule.

Each judge's verdict on an item is a score in [0, 1]: 1 the candidate wins (or the item passes),
0 it loses (fails), 0.5 a tie; a judge that saw an item several times gives the mean.  A vote is the
side of 0.5 a judge's score lies on (``"win"``, ``"loss"``, ``"tie"``).  The rules:

* ``mean``, ``median``: of the judges' scores;
* ``majority``: the side most judges vote for; when no side has more votes than every other,
  ``tie_rule`` decides: ``"tie"`` (0.5), ``"loss"`` (0: the candidate must win outright) or ``"win"`` (1);
* ``unanimity``: 1 when every judge votes win, 0 when every judge votes loss, else 0.5 (as a tie);
* ``weighted``: the mean weighted by each judge's measured agreement with humans (e.g. its
  Cohen's kappa; negative weights count 0; Verga et al. 2024, arXiv 2404.18796, pool a panel, the
  weights are this project's choice and are recorded).

Judges missing an item are left out of that item's verdict.  The effective number of independent
judges (:func:`pytest_judgerel.stats.effective_judges`) says what the jury is worth.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import ReliabilityError

__all__ = ["JURY_RULES", "TIE_RULES", "JuryVerdicts", "combine_verdicts"]

JURY_RULES = ("mean", "median", "majority", "unanimity", "weighted")
TIE_RULES = ("tie", "loss", "win")


@dataclass(frozen=True)
class JuryVerdicts:
    """The jury's score per item (``combined``), the rule that made it, each judge's scores
    (``per_judge``), how many items needed the tie rule, and the effective number of judges."""

    rule: str
    tie_rule: str | None
    judges: tuple[str, ...]
    combined: dict[str, float]
    per_judge: dict[str, dict[str, float]] = field(repr=False)
    weights: dict[str, float] | None = None
    n_tie_broken: int = 0
    effective_judges: float | None = None
    effective_note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "tie_rule": self.tie_rule, "judges": list(self.judges),
                "weights": None if self.weights is None else dict(self.weights), "n_tie_broken": self.n_tie_broken,
                "effective_judges": self.effective_judges, "effective_note": self.effective_note,
                "per_judge": {j: dict(v) for j, v in self.per_judge.items()}}

    def describe(self) -> str:
        rule = self.rule + (f" (tie rule: {self.tie_rule})" if self.rule == "majority" else "")
        eff = (f"worth {self.effective_judges:.1f} independent judges" if self.effective_judges is not None
               else f"effective number of judges not computed: {self.effective_note}")
        return f"jury of {len(self.judges)} ({', '.join(self.judges)}), rule {rule}; {eff}"


def _vote(score: float) -> int:
    return 1 if score > 0.5 else -1 if score < 0.5 else 0


def _combine_one(scores: np.ndarray, w: np.ndarray, rule: str, tie_rule: str) -> tuple[float, bool]:
    if rule == "mean":
        return float(scores.mean()), False
    if rule == "median":
        return float(np.median(scores)), False
    if rule == "weighted":
        if w.sum() <= 0:
            raise ReliabilityError("every judge of this item has weight 0: no weighted verdict")
        return float((scores * w).sum() / w.sum()), False
    votes = [_vote(s) for s in scores]
    if rule == "unanimity":
        return (1.0 if all(v == 1 for v in votes) else 0.0 if all(v == -1 for v in votes) else 0.5), False
    counts = {v: votes.count(v) for v in (1, 0, -1)}
    top = max(counts.values())
    leaders = [v for v, c in counts.items() if c == top]
    if len(leaders) == 1:
        return {1: 1.0, 0: 0.5, -1: 0.0}[leaders[0]], False
    return {"tie": 0.5, "loss": 0.0, "win": 1.0}[tie_rule], True


def combine_verdicts(per_judge: Mapping[str, Mapping[str, float]], rule: str = "majority", *,
                     tie_rule: str = "tie", weights: Mapping[str, float] | None = None,
                     human: Mapping[str, float] | None = None) -> JuryVerdicts:
    """Combine ``{judge: {item: score}}`` by ``rule`` (:data:`JURY_RULES`; ``tie_rule`` for
    ``majority``; ``weights`` ``{judge: agreement}`` for ``weighted``).  ``human`` (gold scores per
    item, optional) makes the effective number of judges count errors against the gold."""
    if rule not in JURY_RULES:
        raise ReliabilityError(f"rule must be one of {JURY_RULES}, got {rule!r}")
    if tie_rule not in TIE_RULES:
        raise ReliabilityError(f"tie_rule must be one of {TIE_RULES}, got {tie_rule!r}")
    judges = [str(j) for j in per_judge]
    if len(judges) < 2:
        raise ReliabilityError(f"a jury needs at least 2 judges, got {judges}")
    w_all = _weights(judges, rule, weights)
    items = list(dict.fromkeys(i for j in per_judge.values() for i in j))
    combined: dict[str, float] = {}
    broken = 0
    for item in items:
        have = [(k, float(per_judge[j][item])) for k, j in enumerate(per_judge) if item in per_judge[j]
                and per_judge[j][item] is not None and np.isfinite(per_judge[j][item])]
        if not have:
            continue
        scores = np.array([s for _, s in have])
        if ((scores < 0) | (scores > 1)).any():
            raise ReliabilityError(f"item {item}: jury scores lie in [0, 1], got {scores.tolist()}")
        value, tie = _combine_one(scores, w_all[[k for k, _ in have]], rule, tie_rule)
        combined[str(item)] = value
        broken += tie
    eff, note = _effective(per_judge, items, human)
    return JuryVerdicts(rule, tie_rule if rule == "majority" else None, tuple(judges), combined,
                        {str(j): {str(i): float(v) for i, v in s.items()} for j, s in per_judge.items()},
                        None if rule != "weighted" else dict(zip(judges, w_all.tolist())), broken, eff, note)


def _weights(judges: Sequence[str], rule: str, weights: Mapping[str, float] | None) -> np.ndarray:
    if rule != "weighted":
        return np.ones(len(judges))
    if weights is None:
        raise ReliabilityError("rule 'weighted' needs weights={judge: measured agreement with humans}")
    missing = [j for j in judges if j not in weights]
    if missing:
        raise ReliabilityError(f"rule 'weighted': no weight for judge(s) {missing}")
    w = np.array([float(weights[j]) for j in judges])
    if not np.isfinite(w).all():
        raise ReliabilityError(f"rule 'weighted': weights must be finite, got {dict(weights)}")
    return np.clip(w, 0.0, None)


def _effective(per_judge: Mapping[str, Mapping[str, float]], items: Sequence[str],
               human: Mapping[str, float] | None) -> tuple[float | None, str]:
    from .effective import effective_judges

    mat = np.array([[per_judge[j].get(i, np.nan) for j in per_judge] for i in items], dtype=float)
    gold = None if human is None else np.array([human.get(i, np.nan) for i in items], dtype=float)
    try:
        eff = effective_judges(mat, gold)
    except ReliabilityError as exc:
        return None, str(exc)
    return float(eff.value), f"errors against {'human gold' if gold is not None else 'the rest of the jury'}"
