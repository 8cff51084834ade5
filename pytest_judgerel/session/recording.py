"""Where metric records go: a :class:`Recorder` per test, found through one accessor.

Assertion helpers, judges and probes record a JSON-able metric record for every gate
they evaluate, and read three settings of the session: ``report_only`` (record, never
fail), ``max_parse_failures`` and ``require_stable`` (an unstable pass fails).  Both live on the :class:`Recorder`, not in module
globals.  The pytest plugin activates a fresh recorder (carrying the session's
settings) around each test and attaches its records to the test's report; the one
accessor is :func:`active_recorder`.

Outside pytest, records are dropped unless you collect them::

    with recording() as rec:          # or recording(report_only=True)
        assert_icc_above(ratings, 0.8)
    rec.records                       # the metric records

The active recorder is a :class:`contextvars.ContextVar`: it follows the test's thread
and its asyncio tasks; code that records from a thread it started itself should run
it with ``contextvars.copy_context().run`` (or pass the records on).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import threading
from dataclasses import dataclass, field
from typing import Any, Iterator, TypedDict, cast

__all__ = ["MetricRecord", "Check", "Recorder", "new_record", "active_recorder", "recording", "jsonable"]


class Check(TypedDict, total=False):
    """One threshold of a gate: the statistic, its value (and CI), threshold, direction, verdict."""

    statistic: str
    value: float | None
    ci: list[float | None] | None
    threshold: float | None
    direction: str  # "min": value >= threshold passes; "max": value <= threshold passes
    passed: bool | None


class MetricRecord(TypedDict, total=False):
    """What every gate records (JSON-able; validated by the report schema's ``record``).

    ``value`` None with ``error`` set: the statistic could not be computed (e.g. a constant
    judge).  ``checks`` holds one :class:`Check` per threshold when a gate has several (an
    agreement gate with ICC and nMAE).  Kind-specific fields (``item_scores``, ``matrix``,
    probe shares...) may be added; the report schema allows them.
    """

    kind: str
    statistic: str
    label: str | None
    value: float | None
    ci: list[float | None] | None
    n: int | None
    k: int | None
    threshold: float | None
    direction: str
    passed: bool | None
    report_only: bool
    error: str
    checks: list[Check]
    groups: dict[str, dict[str, Any]]
    worst_items: list[dict[str, Any]]
    judge: dict[str, Any] | None
    parse_failures: int
    use: str
    confidence: float
    n_omitted: int
    pairs: list[list[float | None]] | None
    scales: list[str]
    matrix: list[list[float | None]]
    item_scores: dict[str, float | None]
    p_pass: float | None
    stability: dict[str, Any]
    repeats_needed: dict[str, Any]
    unstable: bool
    # a ``judge_run`` record (one per batch of judge calls; not a metric): its size and failures
    items: int
    calls: int
    reasked: int
    failures: list[dict[str, Any]]


def new_record(kind: str, **fields: Any) -> MetricRecord:
    """The one constructor of every record a gate, judge or probe hands the recorder: ``kind``
    plus its fields.  Fields :class:`MetricRecord` does not declare are kept: the report schema
    allows kind-specific fields (probe shares, MindEval groups...)."""
    rec: dict[str, Any] = {"kind": kind}
    rec.update(fields)
    return cast(MetricRecord, rec)


@dataclass
class Recorder:
    """The records of one test (or one ``with recording():`` block) and the gate settings."""

    report_only: bool = False
    max_parse_failures: int = 0
    require_stable: bool = False  # an unstable pass (0.05 < p_pass < 0.95) fails
    records: list[MetricRecord] = field(default_factory=list)
    keep: bool = True  # False: a stand-in that drops what it is given (no test is running)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def record(self, rec: MetricRecord) -> None:
        """Store one record built by :func:`new_record` (plain JSON types; non-finite floats
        become None)."""
        clean = cast(MetricRecord, jsonable(rec))
        if self.keep:
            with self._lock:
                self.records.append(clean)

    def since(self, start: int) -> list[MetricRecord]:
        """Records added after the first ``start`` (a copy)."""
        with self._lock:
            return list(self.records[start:])


_ACTIVE: contextvars.ContextVar[Recorder | None] = contextvars.ContextVar("judgerel_recorder", default=None)


def active_recorder() -> Recorder:
    """The recorder of the running test or ``with recording():`` block; otherwise a stand-in
    with default settings that keeps nothing."""
    rec = _ACTIVE.get()
    return rec if rec is not None else Recorder(keep=False)


@contextlib.contextmanager
def recording(recorder: Recorder | None = None, **settings: Any) -> Iterator[Recorder]:
    """Activate ``recorder`` (or a new one with ``settings``) for the block; yields it."""
    rec = recorder if recorder is not None else Recorder(**settings)
    token = _ACTIVE.set(rec)
    try:
        yield rec
    finally:
        _ACTIVE.reset(token)


def jsonable(value: Any) -> Any:
    """Plain JSON types only; non-finite floats become None (never a comparable NaN)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return int(value)
    try:
        f = float(value)
    except (TypeError, ValueError):
        return str(value)
    return f if math.isfinite(f) else None
