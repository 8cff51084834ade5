"""What every gate shares: argument checks, the parse-failure gate, not-computed, and the fields
every gate's record starts with.

A gate module imports this module, :mod:`~pytest_judgerel.gates.conclusion` (``finish``, where
every gate ends) and :mod:`~pytest_judgerel.gates.stability`, never another gate module.  The
shape of a gate::

    check_threshold(min_x, "min_x", UNIT_RANGE)               # bad arguments raise ValueError
    failures = parse_failure_lines(source, max_parse_failures)
    if failures:                                              # too many unparseable replies
        return fail_unparsed(source, failures, "my_kind", statistic, min_x, label)
    ...compute; a ReliabilityError -> return not_computed(source, "my_kind", statistic, min_x, label, exc)
    rec: MyKindRecord = {**gate_fields("my_kind", statistic, label, Summary(...), min_x, "min", source),
                         "use": use, ...}                      # mypy checks the keys and their types
    attach_stability(rec, ...)
    rec["passed"] = ok
    return finish(rec, result, None if ok else lines)        # records, raises unless report-only

A new kind of record declares its TypedDict in :mod:`pytest_judgerel.session.recording`
(``RECORD_TYPES``) and its new keys in the report schema's ``record``; ``finish`` checks the
record against its kind's type at run time (:func:`~pytest_judgerel.session.recording.check_record`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal, Mapping, Sequence, cast

from ..session.recording import MetricRecord, SequentialInfo, WorstItem
from ..stats.interval import check_use as _check_use
from .conclusion import finish, parse_failure_limit

__all__ = ["ICC_RANGE", "UNIT_RANGE", "ANY_RANGE", "WORST", "Direction", "Use", "Summary", "check_equivalence",
           "check_threshold", "check_use", "label_prefix", "n_parse_failures", "parse_failure_lines", "provenance",
           "gate_fields", "fail_unparsed", "not_computed", "worst_lines"]

Direction = Literal["min", "max"]
"""Which side of the threshold passes: ``"min"`` (value >= threshold) or ``"max"`` (value <= threshold)."""
Use = Literal["estimate", "ci_low", "ci_high", "equivalence"]
"""What a gate tests: the estimate, a bound of its CI, or an equivalence test."""

#: where a threshold can lie: an ICC within [-1, 1]; an nMAE, share or rate within [0, 1]; a mean anywhere
ICC_RANGE = (-1.0, 1.0)
UNIT_RANGE = (0.0, 1.0)
ANY_RANGE = (float("-inf"), float("inf"))

WORST = 5
"""How many items a failure message (and the record's ``worst_items``) names."""


@dataclass(frozen=True)
class Summary:
    """The value, CI, n and k a gate's record reads from its result (``ci_low``/``ci_high`` None:
    no interval)."""

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None
    k: int | None = None

    @classmethod
    def of(cls, result: Any) -> "Summary":
        """From a result with ``value``, ``ci_low``, ``ci_high``, ``n`` and ``k`` (an ICC result)."""
        return cls(result.value, result.ci_low, result.ci_high, result.n, result.k)

    @property
    def ci(self) -> list[float | None] | None:
        return None if self.ci_low is None and self.ci_high is None else [self.ci_low, self.ci_high]


def label_prefix(label: str | None) -> str:
    """The start of a failure message: ``"label: "`` or nothing."""
    return f"{label}: " if label else ""


def check_threshold(value: Any, name: str, bounds: tuple[float, float] = ICC_RANGE) -> None:
    """A threshold must be a finite number within ``bounds``, where its statistic lies."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    low, high = bounds
    if not low <= value <= high:
        raise ValueError(f"{name}={value!r} is outside [{low:g}, {high:g}], where the statistic lies: "
                         "no result could pass or fail on it meaningfully")


def check_use(use: str, allowed: tuple[Use, ...]) -> Use:
    """``use`` (what a gate tests: the estimate, a CI bound...) when it is one of ``allowed``, else a
    ``ReliabilityError`` (a ``ValueError``): the shared check of :mod:`pytest_judgerel.stats`."""
    return cast(Use, _check_use(use, allowed))  # one of ``allowed``: a Use


def check_equivalence(use: str, margin: float, name: str, alpha: Any) -> None:
    """``use="equivalence"`` needs a margin > 0; ``alpha`` (the TOST level) lies strictly in (0, 0.5)."""
    if use == "equivalence" and not margin > 0:
        raise ValueError(f"use='equivalence' needs a margin {name} > 0, got {margin!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 0.5:
        raise ValueError(f"alpha must lie strictly between 0 and 0.5, got {alpha!r}")


def n_parse_failures(source: Any) -> int:
    """How many replies behind ``source`` (judge Ratings, a probe result) could not be parsed."""
    return len(getattr(source, "parse_failures", ()) or ())


def parse_failure_lines(source: Any, limit: int | None, why: str | None = None) -> list[str]:
    """Failure lines when more replies failed to parse than allowed (``limit``; None: the session's
    ``--judgerel-max-parse-failures``, 0 outside pytest); empty when within the limit.  ``why``
    replaces ``max_parse_failures=<limit>`` in the first line for a gate whose own rule sets it."""
    limit = parse_failure_limit(limit)
    fails = list(getattr(source, "parse_failures", ()) or ())
    if len(fails) <= limit:
        return []
    lines = [f"  {len(fails)} judge repl{'y' if len(fails) == 1 else 'ies'} could not be parsed "
             f"({why or f'max_parse_failures={limit}'}); these are not scores:"]
    for f in fails[:WORST]:
        reply = getattr(f, "reply", None) or (f.get("reply") if isinstance(f, Mapping) else str(f))
        cause = getattr(f, "cause", None) or (f.get("cause") if isinstance(f, Mapping) else "")
        item = getattr(f, "item", None) or (f.get("item") if isinstance(f, Mapping) else "")
        text = (reply or "").replace("\n", "\\n")
        lines.append(f"    {item} [{cause}]: {text[:160]!r}")
    return lines


def provenance(source: Any) -> dict[str, Any] | None:
    """The judge fields ``source`` carries (``Ratings.provenance``), for the record's ``judge``."""
    prov = getattr(source, "provenance", None)
    return dict(prov) if prov else None


def gate_fields(kind: str, statistic: str, label: str | None, summary: Summary | None, threshold: float | None,
                direction: Direction, source: Any) -> MetricRecord:
    """The fields every gate's record starts with: the statistic, its value, CI, n and k
    (``summary``; None: not computed), the threshold and its direction, no groups and no worst
    items yet, and the parse failures and judge of ``source`` (None: no judge input)."""
    s = summary if summary is not None else Summary(None)
    return {"kind": kind, "statistic": statistic, "label": label, "value": s.value, "ci": s.ci, "n": s.n,
            "k": s.k, "threshold": threshold, "direction": direction, "groups": {}, "worst_items": [],
            "parse_failures": n_parse_failures(source), "judge": provenance(source)}


def _unrated(kind: str, statistic: str, label: str | None, threshold: float | None, direction: Direction,
             source: Any, sequential: SequentialInfo | None) -> MetricRecord:
    rec = gate_fields(kind, statistic, label, None, threshold, direction, source)
    rec.update({"passed": False, "n": getattr(source, "n_items", None), "k": getattr(source, "n_raters", None)})
    if sequential is not None:  # declared by the sequential gates' kinds only; check_record holds the rest to that
        cast(dict[str, Any], rec)["sequential"] = sequential
    return rec


def fail_unparsed(source: Any, failures: Sequence[str], kind: str, statistic: str, threshold: float | None,
                  label: str | None, direction: Direction = "min", *, sequential: SequentialInfo | None = None) -> Any:
    """End a gate before computing anything: too many replies were not scores (``failures``
    from :func:`parse_failure_lines`).  Raises; returns None in report-only mode (typed ``Any``:
    a gate's declared return type stays the result a gate that computed returns).  ``sequential``:
    a sequential gate's block (what it drew before it ended), kept in the record."""
    __tracebackhide__ = True
    rec = _unrated(kind, statistic, label, threshold, direction, source, sequential)
    first = f"{label_prefix(label)}{statistic} not computed: unparseable judge replies"
    return finish(rec, None, [first, *failures])


def not_computed(source: Any, kind: str, statistic: str, threshold: float | None, label: str | None,
                 exc: BaseException, direction: Direction = "min", *, sequential: SequentialInfo | None = None) -> Any:
    """End a gate whose statistic cannot be computed (e.g. a constant judge): recorded as such
    (``value`` null, ``error`` the cause), then ``exc`` is raised; None in report-only mode
    (typed ``Any``, as :func:`fail_unparsed`; ``sequential`` as there)."""
    __tracebackhide__ = True
    rec = _unrated(kind, statistic, label, threshold, direction, source, sequential)
    rec["error"] = str(exc)
    return finish(rec, None, error=exc)


def worst_lines(worst: Sequence[WorstItem], title: str) -> list[str]:
    """The failure message's list of the items ``worst`` names, under ``title``."""
    if not worst:
        return []
    return [f"  {title}:"] + [f"    {w.get('item')}: {w.get('detail')}" for w in worst]
