"""Position-bias probe: every pair judged in both orders (Zheng et al. 2023, section 3.3, Table 2).

``position_bias(judge, pairs)`` asks the judge's model, through the judge's client and
settings, for a pairwise verdict on each pair with its answers in the given order and again
swapped, and returns the consistency rate and the first- and second-position preference with
Wilson intervals, and the exact two-sided sign test of first- against second-position wins
(:func:`pytest_judgerel.stats.position_consistency`): low consistency is noise, a significant
sign test is a position preference.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from ..session.recording import active_recorder, new_record
from ..errors import ConfigError

__all__ = ["PositionBiasResult", "position_bias"]


@dataclass(frozen=True)
class PositionBiasResult:
    """Outcome of :func:`position_bias`.  ``stats`` holds the shares with their intervals;
    ``verdicts`` is ``(pair id, verdict in the given order, verdict swapped, outcome)`` per pair
    (verdicts name the position, ``"A"`` = shown first); ``parse_failures`` the unreadable
    replies (``JudgeFailure`` s with ``rater`` ``"given"`` or ``"swapped"``)."""

    stats: Any  # PositionConsistency, or None when no pair got two readable verdicts
    verdicts: tuple[tuple[str, str | None, str | None, str], ...]
    parse_failures: tuple[Any, ...]
    provenance: dict[str, Any] = field(default_factory=dict)
    calls: int = 0

    def _stats(self) -> Any:
        if self.stats is None:
            from ..errors import ReliabilityError

            causes = sorted({f.cause for f in self.parse_failures})
            raise ReliabilityError(f"no pair of {len(self.verdicts)} got a readable verdict in both orders "
                                   f"(parse failures: {', '.join(causes) or 'none'})")
        return self.stats

    @property
    def consistency(self) -> Any:
        return self._stats().consistency

    @property
    def first_preference(self) -> Any:
        return self._stats().first_preference

    @property
    def second_preference(self) -> Any:
        return self._stats().second_preference

    @property
    def p_position(self) -> float:
        """Exact two-sided sign test of first- against second-position wins."""
        return self._stats().p_position

    @property
    def n_pairs(self) -> int:
        return len(self.verdicts)

    def inconsistent_pairs(self) -> list[tuple[str, str | None, str | None, str]]:
        return [v for v in self.verdicts if v[3] not in ("consistent", "missing")]

    def __str__(self) -> str:
        if self.stats is None:
            return f"position bias: no readable verdict pair among {len(self.verdicts)} pairs"
        s = self.stats
        return (f"position consistency {s.consistency.formatted(3)} over {s.n_valid} pairs; prefers the first position on "
                f"{s.first_preference.value:.3f}, the second on {s.second_preference.value:.3f} "
                f"({s.n_first} vs {s.n_second} pairs, sign test p = {s.p_position:.3g})"
                + (f"; {s.n_missing} pair(s) without a readable verdict" if s.n_missing else ""))


def position_bias(judge: Any, pairs: Any, *, template: Any = None,
                  fields: Sequence[str] = ("answer_a", "answer_b"), confidence: float = 0.95) -> PositionBiasResult:
    """Judge every pair in both orders and measure position consistency.

    ``pairs``: mappings with the template's fields (default template: ``question``,
    ``answer_a``, ``answer_b``) and optionally an ``id``; or ``{id: fields}``.  ``template``:
    a pairwise template (``# output: pairwise``), default the MT-Bench pairwise prompt;
    ``fields``: the two answer fields that are swapped.  The calls use ``judge.model``,
    ``judge.api_base``, ``judge.api_key``, its sampling settings, namespace and client.
    """
    from ..judging.judge import JudgeFailure, item_rows
    from ..stats.bias import position_consistency
    from ..judging.templates import render
    from ..judging.pairwise import build_request, judge_pairs, pairwise_fingerprint, pairwise_template

    if len(fields) != 2 or fields[0] == fields[1]:
        raise ConfigError(f"fields must name the two answer fields to swap, got {fields!r}")
    tmpl = pairwise_template(template, fields)
    rows = item_rows(pairs)
    a, b = fields
    requests = []
    for _pid, pair in rows:
        swapped = {**pair, a: pair.get(b), b: pair.get(a)}
        for item in (pair, swapped):
            requests.append(build_request(judge, render(tmpl, item, judge.scale)))
    results = judge_pairs(judge, requests)
    forward: list[str | None] = []
    reverse: list[str | None] = []
    failures: list[JudgeFailure] = []
    for n, (pid, _pair) in enumerate(rows):
        for order, slot, bucket in (("given", 2 * n, forward), ("swapped", 2 * n + 1, reverse)):
            verdict, resp, error, reasked = results[slot]
            bucket.append(verdict)
            if error is not None:
                failures.append(JudgeFailure(item=pid, rater=order, cause=error.cause, message=str(error),
                                             reply=error.reply, reasked=reasked))
    fp = pairwise_fingerprint(judge, tmpl)
    n_reasked = sum(r[3] for r in results)
    active_recorder().record(new_record(
        "judge_run", judge=fp, items=len(rows), calls=len(requests) + n_reasked, reasked=n_reasked,
        parse_failures=len(failures), failures=[f.to_dict() for f in failures[:20]], passed=not failures,
    ))
    valid = any(f is not None and r is not None for f, r in zip(forward, reverse))
    stats = position_consistency(forward, reverse, confidence) if valid else None
    outcomes = stats.outcomes if stats is not None else ("missing",) * len(rows)
    verdicts = tuple((pid, f, r, o) for (pid, _), f, r, o in zip(rows, forward, reverse, outcomes))
    return PositionBiasResult(stats, verdicts, tuple(failures), {**fp, "design": "position_bias"},
                              len(requests) + n_reasked)
