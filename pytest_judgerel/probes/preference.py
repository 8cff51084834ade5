"""Self-preference probe for any pointwise judge (generalises MindEval's ``judge_self_preference``).

Self-preference (Panickssery et al. 2024; Wataoka et al. 2024; MindEval section 4.2): a judge
ranks outputs of its own model higher than a reference does.  ``self_preference(judge,
outputs, reference=...)`` rates outputs tagged with the task they answer and the model that
wrote them, takes the reference's scores of the same outputs (human scores in a field, a
mapping, or another judge), and computes the MindEval statistic
(:func:`pytest_judgerel.stats.ranking.self_preference`) with a t interval and a sign test
(:func:`pytest_judgerel.stats.self_preference_test`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from ..errors import ConfigError

__all__ = ["SelfPreferenceProbeResult", "self_preference"]


@dataclass(frozen=True)
class SelfPreferenceProbeResult:
    """Outcome of :func:`self_preference`: ``test`` is the
    :class:`~pytest_judgerel.stats.SelfPreferenceTest`; ``judge_ratings`` (and
    ``reference_ratings`` when the reference is a judge) the Ratings behind it."""

    test: Any
    own_model: str
    models: tuple[str, ...]
    judge_ratings: Any
    reference_ratings: Any = None
    n_dropped: int = 0
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def value(self) -> float:
        return self.test.mean_rank_change

    @property
    def parse_failures(self) -> tuple[Any, ...]:
        out = tuple(self.judge_ratings.parse_failures)
        if self.reference_ratings is not None:
            out += tuple(self.reference_ratings.parse_failures)
        return out

    def __str__(self) -> str:
        return str(self.test)


def self_preference(judge: Any, outputs: Any, *, reference: Any, own_model: str | None = None,
                    task_field: str = "task", model_field: str = "model", repeats: int = 1,
                    confidence: float = 0.95) -> SelfPreferenceProbeResult:
    """Does ``judge`` rank its own model's outputs higher than ``reference`` does?

    ``outputs``: mappings with the judge template's fields plus ``task_field`` (which prompt
    the output answers) and ``model_field`` (which model wrote it); an ``id`` is optional
    (default ``"<task>/<model>"``).  ``reference``: the name of a field holding a reference
    score (e.g. a human rating), a mapping ``{output id: score}``, or another judge (anything
    with ``rate(items, repeats)``).  ``own_model``: the tag of the judge's own model
    (default ``judge.model``).  Scores of judge and reference may use different scales: only
    the ranks of the models within a task count.
    """
    from ..stats.preference import self_preference_test

    rows = _tagged(outputs, task_field, model_field)
    own = own_model if own_model is not None else judge.model
    models = tuple(dict.fromkeys(str(it[model_field]) for _, it in rows))
    if own not in models:
        raise ConfigError(f"own_model {own!r} wrote none of the outputs; the outputs are tagged with models "
                          f"{list(models)} (pass own_model= with the tag of the judge's model)")
    items = dict(rows)
    judge_r = judge.rate(items, repeats)
    judge_scores = dict(zip(judge_r.item_ids, judge_r.item_means()))
    ref_r = None
    if isinstance(reference, str):
        ref_scores = {}
        for iid, it in rows:
            if reference not in it:
                raise ConfigError(f"output {iid!r} has no reference field {reference!r}")
            ref_scores[iid] = _score(it[reference], iid)
    elif isinstance(reference, Mapping):
        missing = [iid for iid, _ in rows if iid not in reference]
        if missing:
            raise ConfigError(f"reference has no score for output(s) {missing[:5]}")
        ref_scores = {iid: _score(reference[iid], iid) for iid, _ in rows}
    elif callable(getattr(reference, "rate", None)):
        ref_r = reference.rate(items, repeats)
        ref_scores = dict(zip(ref_r.item_ids, ref_r.item_means()))
    else:
        raise ConfigError("reference must be a field name, a mapping {output id: score} or a judge, got "
                          f"{type(reference).__name__}")

    def table(scores: Mapping[str, float]) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {m: {} for m in models}
        for iid, it in rows:
            out[str(it[model_field])][str(it[task_field])] = scores[iid]
        return out

    jud_t, ref_t = table(judge_scores), table(ref_scores)
    test = self_preference_test(ref_t, jud_t, own, confidence=confidence)
    tasks = {str(it[task_field]) for _, it in rows}
    prov = {**dict(judge_r.provenance), "design": "self_preference", "own_model": own}
    return SelfPreferenceProbeResult(test, own, models, judge_r, ref_r, len(tasks) - test.n, prov)


def _score(value: Any, iid: str) -> float:
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise ConfigError(f"reference score of output {iid!r} must be a number, got {value!r}")
    return float(value)


def _tagged(outputs: Any, task_field: str, model_field: str) -> list[tuple[str, Mapping[str, Any]]]:
    rows: list[tuple[str, Mapping[str, Any]]] = []
    seen: set[tuple[str, str]] = set()
    listed = outputs.items() if isinstance(outputs, Mapping) else enumerate(outputs)
    for key, it in listed:
        if not isinstance(it, Mapping):
            raise ConfigError(f"output {key!r} must be a mapping of fields, got {type(it).__name__}")
        for f in (task_field, model_field):
            if it.get(f) is None:
                raise ConfigError(f"output {key!r} has no {f!r} tag (fields: {sorted(map(str, it))})")
        pair = (str(it[task_field]), str(it[model_field]))
        if pair in seen:
            raise ConfigError(f"two outputs of model {pair[1]!r} for task {pair[0]!r}")
        seen.add(pair)
        iid = str(key if isinstance(outputs, Mapping) else it.get("id", it.get("item_id", f"{pair[0]}/{pair[1]}")))
        if any(iid == r[0] for r in rows):
            raise ConfigError(f"duplicate output id {iid!r}")
        rows.append((iid, it))
    if not rows:
        raise ConfigError("no outputs to judge")
    return rows
