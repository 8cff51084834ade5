"""Where metric records go: a :class:`Recorder` per test, found through one accessor.

Assertion helpers, judges and probes record a JSON-able metric record for every gate
they evaluate, and read three settings of the session: ``report_only`` (record, never
fail), ``max_parse_failures`` and ``require_stable`` (an unstable pass fails).  They live
on the :class:`Recorder`, not in module globals.  The pytest plugin activates a fresh
recorder (carrying the session's settings) around each test and attaches its records to
the test's report; the one accessor is :func:`active_recorder`.

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
import types
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterator, Literal, Mapping, TypedDict, TypeVar, Union, cast, get_args, get_origin, get_type_hints
from typing import is_typeddict

from ..errors import JudgerelError

__all__ = ["Record", "MetricRecord", "Check", "GroupResult", "WorstItem", "StabilityInfo", "SequentialInfo",
           "SequentialLookInfo", "RECORD_TYPES",
           "IccRecord", "ScaleConsistencyRecord", "AgreementRecord", "PositionBiasRecord", "LengthBiasRecord",
           "SelfPreferenceRecord", "PassRateRecord", "HumanMeanRecord", "HumanMeanDifferenceRecord",
           "MindEvalScoreRecord", "InjectionRecord", "PairwiseRecord", "RankingRecord",
           "VerdictAgreementRecord", "JudgePanelRecord", "JudgeRunRecord", "RecordError", "new_record",
           "check_record", "record_keys", "Recorder", "active_recorder", "recording", "jsonable"]


# ---------------------------------------------------------------------- the record types
# One TypedDict per record kind (RECORD_TYPES), all plain JSON values: records cross process
# boundaries as they are (xdist serialises the test report's attribute) and the JSON report
# writes them unchanged.  Every key is optional to the type (``total=False``): a gate that
# fails before computing (unparseable replies, a constant judge) records fewer of them.  The
# report schema's ``record`` (report/schema.py) lists the same keys (tests/test_report_schema.py
# checks both ways).  Numbers a statistic computes are ``float | None``: a non-finite float is
# recorded as null.

class Check(TypedDict, total=False):
    """One threshold of a gate: the statistic, its value (and CI), threshold, direction, verdict."""

    statistic: str
    value: float | None
    ci: list[float | None] | None
    threshold: float | None
    direction: Literal["min", "max"]  # "min": value >= threshold passes; "max": value <= threshold passes
    passed: bool | None


class GroupResult(TypedDict, total=False):
    """One group of a gate (a benchmark, a pair of scales, a severity, an annotator...)."""

    value: float | None
    ci: list[float | None] | None
    n: int | None
    k: int | None
    threshold: float | None
    passed: bool | None
    reason: str  # why the group's statistic is undefined
    reasons: list[str]  # the agreement checks the group fails
    nmae: float | None
    n_unlabeled: int
    lam: float | None


class WorstItem(TypedDict, total=False):
    """An item the failure message names: its id, a readable detail and the number behind it."""

    item: str
    detail: str
    error: float | None  # agreement: |judge - human| / range
    spread: float | None  # ICC: the largest spread across raters
    shift: float | None  # length bias: the padded minus the original score


class StabilityInfo(TypedDict, total=False):
    """How far a gate's verdict can be trusted (gates/stability.py)."""

    p_pass: float | None
    unstable: bool
    n_boot: int
    seed: int
    resample: str
    n_undefined: int
    statistic: str
    predictive: bool
    predicts: str
    p_pass_new_items: float | None
    new_items_resample: str
    recentred: bool  # the predictive draws recentred on the observed ICC
    model: str  # "one-way": reruns simulated from the one-way model's posterior predictive
    rough: bool  # below the design where p_pass was checked (stats.stability: MAX_RERUN_SE, MIN_ITEMS_OVER_REPEATS)
    rough_reason: str
    new_items_rough: bool


class SequentialLookInfo(TypedDict, total=False):
    """One look of a sequential gate (stats.sequential's SequentialLook, in brief)."""

    look: int
    used: int
    decision: Literal["continue", "pass", "fail"]
    p_pass_at_cap: float | None
    observed: float | None
    n_sim: int | None
    items: int | None  # a look on a first share of the items: how many (None: all of them)
    probe_items: int  # items of the offsets probe the look saw on every repeat (0: none)


class SequentialInfo(TypedDict, total=False):
    """What a sequential gate drew and why it stopped (gates/sequential.py's SequentialRun)."""

    unit: Literal["repeats", "items"]
    used: int
    cap: int
    calls: int
    cap_calls: int
    saved_calls: int
    stop: Literal["settled", "cap", "fixed", "parse failures", "budget"]
    decision: Literal["continue", "pass", "fail"] | None
    early: bool
    reason: str
    p_pass_at_cap: float | None
    rule: str | None
    eps_pass: float | None
    eps_fail: float | None
    looks: list[SequentialLookInfo]
    plan: dict[str, Any]  # a dry run's: cap_calls, expected_calls, expected_share, basis


class Record(TypedDict, total=False):
    """What every record has: its ``kind``, the judge that produced it and the verdict."""

    kind: str
    judge: dict[str, Any] | None  # the fields that identify the judge (judging/identity.py hashes them)
    passed: bool | None
    parse_failures: int
    error: str  # the statistic could not be computed: why (``value`` is then null)
    n: int | None
    k: int | None


class MetricRecord(Record, total=False):
    """What every gate records (the base of every gate kind's record).

    ``value`` None with ``error`` set: the statistic could not be computed (e.g. a constant
    judge).  ``checks`` holds one :class:`Check` per threshold when a gate has several (an
    agreement gate with ICC and nMAE).  ``report_only`` and ``unstable`` are set by the gate
    conclusion (gates/conclusion.py), ``p_pass`` and ``stability`` by gates/stability.py.
    """

    statistic: str
    label: str | None
    value: float | None
    ci: list[float | None] | None
    threshold: float | None
    direction: Literal["min", "max"]
    report_only: bool
    checks: list[Check]
    groups: dict[str, GroupResult]
    worst_items: list[WorstItem]
    use: Literal["estimate", "ci_low", "ci_high", "equivalence"]
    confidence: float
    n_omitted: int
    item_scores: dict[str, float | None]  # per-item loss, lower is better (the baseline's paired test)
    p_pass: float | None
    p_pass_new_items: float | None
    stability: StabilityInfo
    unstable: bool


class IccRecord(MetricRecord, total=False):
    """``icc``: :func:`~pytest_judgerel.assert_icc_above`."""

    repeats_needed: dict[str, Any]  # stats.planning's RepeatsPlan.to_dict()
    sequential: SequentialInfo  # drawn sequentially (--judgerel-sequential)


class ScaleConsistencyRecord(MetricRecord, total=False):
    """``scale_consistency``: :func:`~pytest_judgerel.assert_scale_consistent`."""

    scales: list[str]
    matrix: list[list[float | None]]  # the pairwise ICCs, scales x scales (1 on the diagonal)


class AgreementRecord(MetricRecord, total=False):
    """``agreement`` and ``nmae``: :func:`~pytest_judgerel.assert_agreement` (and the MindEval
    agreement gate, which records the base fields only)."""

    icc: float | None
    nmae: float | None
    thresholds: dict[str, float | None]  # {"min_icc": ..., "max_nmae": ...}
    pairs: list[list[float | None]] | None  # [human, judge] item means, for the HTML scatter


class PositionBiasRecord(MetricRecord, total=False):
    """``position_bias``: :func:`~pytest_judgerel.assert_position_consistent`."""

    first_preference: dict[str, Any]  # stats.proportion's Proportion.to_dict()
    second_preference: dict[str, Any]
    n_first: int
    n_second: int
    p_position: float | None
    alpha: float | None
    position_preference: bool
    low_consistency: bool
    n_missing: int
    n_tie_mismatch: int
    max_first_preference: float | None


class LengthBiasRecord(MetricRecord, total=False):
    """``length_bias``: :func:`~pytest_judgerel.assert_no_length_bias`."""

    two_sided: bool
    p: float | None
    p_greater: float | None
    test: str
    scale: str
    field: str
    length_ratio: float | None
    alpha: float
    equivalence: dict[str, Any]  # stats.bias's EquivalenceTest.to_dict()
    items_needed: dict[str, Any]  # stats.planning's equivalence_sample_size(...).to_dict()


class SelfPreferenceRecord(MetricRecord, total=False):
    """``self_preference``: :func:`~pytest_judgerel.assert_no_self_preference`."""

    own_model: str
    models: list[str]
    reference_rank: int
    judge_rank: int
    rank_change: int
    share_higher: float | None
    share_lower: float | None
    share_equal: float | None
    p_sign: float | None
    n_dropped: int
    alpha: float
    equivalence: dict[str, Any]


class PassRateRecord(MetricRecord, total=False):
    """``pass_rate``: :func:`~pytest_judgerel.assert_pass_rate`."""

    observed: float | None
    passed_count: int
    specificity: float | None
    sensitivity: float | None
    n_negative: int
    n_positive: int
    unclipped: float | None
    interval_method: str
    sequential: SequentialInfo


class InjectionRecord(MetricRecord, total=False):
    """``injection``: :func:`~pytest_judgerel.assert_injection_resistant` (the worst family's flip
    rate is the record's value; ``families`` holds every family's flips, n, rate and exact CI)."""

    n_attacks: int
    margin: float | None
    pass_line: float | None
    goal: str
    attacked_field: str | None
    excluded_items: list[str]
    worst_family: str
    families: dict[str, dict[str, Any]]
    pooled: dict[str, Any]
    pooled_rate: float | None
    positions: dict[str, dict[str, Any]]
    fields: dict[str, dict[str, Any]]
    noise: dict[str, Any] | None


class HumanMeanRecord(MetricRecord, total=False):
    """``human_mean``: :func:`~pytest_judgerel.assert_human_mean_above`."""

    lam: float | None
    tuned: bool
    n_unlabeled: int
    effective_n: float | None
    classical: dict[str, Any]  # the human-only mean (stats.ppi's HumanMean.to_dict())
    judge_mean: float | None
    judge_bias: float | None
    sequential: SequentialInfo


class HumanMeanDifferenceRecord(MetricRecord, total=False):
    """``human_mean_difference``: :func:`~pytest_judgerel.assert_human_mean_difference`."""

    lam: list[float | None]  # one per system
    tuned: bool
    paired: bool
    paired_unlabeled: bool | None
    effective_n: float | None
    classical: dict[str, Any]
    new_mean: float | None
    old_mean: float | None
    new_ci: list[float | None]
    old_ci: list[float | None]


class MindEvalScoreRecord(MetricRecord, total=False):
    """``mindeval_score``: :func:`~pytest_judgerel.mindeval.assert_mindeval_score` (the base fields)."""


class PairwiseRecord(MetricRecord, total=False):
    """``pairwise``: :func:`~pytest_judgerel.assert_not_worse` and :func:`~pytest_judgerel.assert_better`
    (the value is the candidate's win rate, ties split; the threshold 0.5 - margin or 0.5 + margin)."""

    hypothesis: Literal["not_worse", "better"]
    margin: float | None
    alpha: float | None
    candidate: str
    baseline: str
    wins: int
    ties: int
    losses: int
    n_verdicts: int
    n_unreadable: int
    repeats: int
    interval_method: str
    position_inconsistency: dict[str, Any] | None  # stats.proportion's Proportion.to_dict()
    judge_win_rate: dict[str, Any]  # with human labels: the judge's own win rate (stats.pairwise's WinRate.to_dict())
    human: dict[str, Any]  # with human labels: the PPI++ estimate's details (n labelled, lambda)
    jury: dict[str, Any]  # a panel's comparison: stats.jury's JuryVerdicts.to_dict() (rule, per-judge verdicts)
    sequential: SequentialInfo  # drawn sequentially (--judgerel-sequential)


class RankingRecord(MetricRecord, total=False):
    """``ranking``: :func:`~pytest_judgerel.assert_ranking` (the value is the smallest lower bound
    of P(a system beats the next one in the expected order) under Bradley-Terry)."""

    margin: float | None
    alpha: float | None
    expected: list[str]
    ranking: list[str]
    strength: dict[str, float | None]
    adjacent: list[dict[str, Any]]


class VerdictAgreementRecord(MetricRecord, total=False):
    """``verdict_agreement``: :func:`~pytest_judgerel.assert_verdict_agreement` (the value is Cohen's
    kappa; ``checks`` holds every threshold given)."""

    kappa: dict[str, Any] | None
    ac1: dict[str, Any]
    tpr: dict[str, Any] | None
    tnr: dict[str, Any] | None
    base_rate: dict[str, Any]
    observed: float | None
    confusion: dict[str, int]
    false_pass: list[str]
    false_fail: list[str]
    thresholds: dict[str, float | None]


class JudgePanelRecord(Record, total=False):
    """``judge_panel`` (not a metric): how many independent judges a panel is worth."""

    models: list[str]
    items: int
    effective_judges: float | None
    mean_error_correlation: float | None
    reference: str


class JudgeRunRecord(Record, total=False):
    """``judge_run`` (not a metric): one batch of judge calls, its size and failures."""

    items: int
    calls: int
    reasked: int
    failures: list[dict[str, Any]]  # JudgeFailure.to_dict(), the first 20
    served: list[dict[str, Any]]  # per judge configuration, the server-reported models and fingerprints
    anchor_calls: list[dict[str, Any]]  # drift anchors' candidates; taken off the record on the worker


RECORD_TYPES: dict[str, type] = {
    "icc": IccRecord,
    "scale_consistency": ScaleConsistencyRecord,
    "agreement": AgreementRecord,
    "nmae": AgreementRecord,
    "position_bias": PositionBiasRecord,
    "length_bias": LengthBiasRecord,
    "self_preference": SelfPreferenceRecord,
    "pass_rate": PassRateRecord,
    "injection": InjectionRecord,
    "human_mean": HumanMeanRecord,
    "human_mean_difference": HumanMeanDifferenceRecord,
    "mindeval_score": MindEvalScoreRecord,
    "pairwise": PairwiseRecord,
    "ranking": RankingRecord,
    "verdict_agreement": VerdictAgreementRecord,
    "judge_panel": JudgePanelRecord,
    "judge_run": JudgeRunRecord,
}
"""The record type of each ``kind``: a new kind of record adds its TypedDict here (and its new
keys to the report schema's ``record``)."""


# ---------------------------------------------------------------------- the one checked path
class RecordError(JudgerelError, TypeError):
    """A record does not match the type of its kind: an undeclared key, a value of the wrong type,
    an unknown kind (the message names the kind, the key and both types)."""


R = TypeVar("R", bound=Record)


def new_record(kind: str, **fields: Any) -> Record:
    """A record of ``kind`` with ``fields``, checked at run time (:func:`check_record`).  Code
    whose record type is known statically builds it as that TypedDict (mypy checks the keys) and
    the gate conclusion checks it again at run time."""
    return check_record(cast(Record, {"kind": kind, **fields}))  # checked at run time


def check_record(rec: R) -> R:
    """``rec`` unchanged, once its kind is known and every key is declared by the kind's type
    with a value of that type (numpy scalars count as the numbers they hold; a non-finite float
    counts as null, as it is recorded); else :class:`RecordError`."""
    _check_plain(jsonable(rec))
    return rec


def _check_plain(rec: Mapping[str, Any]) -> None:
    """:func:`check_record` of a record already made plain JSON (:func:`jsonable`)."""
    kind = rec.get("kind")
    cls = RECORD_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise RecordError(f"record kind {kind!r} is not declared: one of {sorted(RECORD_TYPES)} "
                          "(a new kind adds its TypedDict to session.recording.RECORD_TYPES)")
    problem = _typed_dict_problem(rec, cls, f"{kind!r} record")
    if problem is not None:
        raise RecordError(problem)


def record_keys(cls: type) -> dict[str, Any]:
    """The keys a record type declares (its own and its bases'), with their types."""
    return dict(_hints(cls))


@lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, Any]:
    return get_type_hints(cls)


def _typed_dict_problem(value: Mapping[str, Any], cls: type, path: str) -> str | None:
    hints = _hints(cls)
    for key, item in value.items():
        if key not in hints:
            return (f"{path}: key {key!r} is not declared by {cls.__name__} "
                    f"(declared: {', '.join(sorted(hints))})")
        problem = _value_problem(item, hints[key], f"{path}[{key!r}]")
        if problem is not None:
            return problem
    return None


def _value_problem(value: Any, tp: Any, path: str) -> str | None:
    """Why ``value`` (plain JSON) is not of type ``tp``; None when it is."""
    if tp is Any:
        return None
    origin, args = get_origin(tp), get_args(tp)
    if origin is Union or origin is types.UnionType:
        if value is None and type(None) in args:
            return None
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:  # X | None: name the problem inside X
            problem = _value_problem(value, rest[0], path)
            return None if problem is None else problem.replace(f"must be {_name(rest[0])}", f"must be {_name(tp)}", 1)
        if any(_value_problem(value, a, path) is None for a in rest):
            return None
        return _wrong(value, tp, path)
    if origin is Literal:
        return None if value in args else f"{path} must be one of {list(args)}, got {value!r}"
    if origin is list:
        if not isinstance(value, list):
            return _wrong(value, tp, path)
        return next((p for i, v in enumerate(value) if (p := _value_problem(v, args[0], f"{path}[{i}]"))), None)
    if origin is dict:
        if not isinstance(value, dict):
            return _wrong(value, tp, path)
        return next((p for k, v in value.items() if (p := _value_problem(v, args[1], f"{path}[{k!r}]"))), None)
    if is_typeddict(tp):
        return _typed_dict_problem(value, tp, path) if isinstance(value, dict) else _wrong(value, tp, path)
    if tp is type(None):
        ok = value is None
    elif tp is bool:
        ok = isinstance(value, bool)
    elif tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif tp is float:  # a JSON number
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif tp is str:
        ok = isinstance(value, str)
    else:
        raise TypeError(f"record types use JSON types only; {path} is declared {tp!r}")
    return None if ok else _wrong(value, tp, path)


def _name(tp: Any) -> str:
    if isinstance(tp, type) and not get_args(tp):
        return "None" if tp is type(None) else tp.__name__
    return str(tp).replace("typing.", "").replace("NoneType", "None")


def _wrong(value: Any, tp: Any, path: str) -> str:
    return f"{path} must be {_name(tp)}, got {type(value).__name__} {value!r:.80}"


@dataclass
class Recorder:
    """The records of one test (or one ``with recording():`` block) and the gate settings."""

    report_only: bool = False
    max_parse_failures: int = 0
    require_stable: bool = False  # an unstable pass (0.05 < p_pass < 0.95) fails
    records: list[Record] = field(default_factory=list)
    keep: bool = True  # False: a stand-in that drops what it is given (no test is running)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def record(self, rec: Record) -> None:
        """Store one record as plain JSON (non-finite floats become None), once
        :func:`check_record` finds it of its kind's type (checked also when nothing is kept)."""
        clean: Record = jsonable(rec)
        _check_plain(clean)
        if self.keep:
            with self._lock:
                self.records.append(clean)

    def since(self, start: int) -> list[Record]:
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
    """Plain JSON types only; non-finite floats become None (never a comparable NaN); a numpy
    scalar becomes the Python number (or bool) it holds."""
    if getattr(value, "ndim", None) == 0 and callable(getattr(value, "item", None)):
        value = value.item()  # a numpy scalar: np.bool_ -> bool, np.int64 -> int, np.float64 -> float
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
