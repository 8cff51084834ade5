"""How every gate ends: :func:`finish` checks the gate's records, then concludes (record,
report-only, require-stable, raise).

Every gate (:mod:`~pytest_judgerel.gates.reliability`, :mod:`~pytest_judgerel.gates.bias`,
:mod:`~pytest_judgerel.gates.pass_rate`, :mod:`~pytest_judgerel.gates.injection`,
:mod:`~pytest_judgerel.gates.human_mean`, :mod:`pytest_judgerel.gates.mindeval`) computes its
statistic and its metric record(s), then calls :func:`finish`, so the session's gate settings mean
the same everywhere.  They live on the test's :class:`~pytest_judgerel.session.recording.Recorder`
(no module globals):

* ``max_parse_failures`` (``--judgerel-max-parse-failures``): :func:`parse_failure_limit` is the
  limit a gate applies when its caller names none;
* ``require_stable`` (``--judgerel-require-stable``): a pass whose verdict is unstable
  (0.05 < p_pass < 0.95 over bootstrap resamples, :mod:`pytest_judgerel.gates.stability`; for a
  sequential gate settled before its cap, its prediction of the cap's verdict) fails;
* ``report_only`` (``--judgerel-report-only``): every record is kept, nothing raises.

Each record is stored with the recorder; a failure raises :class:`JudgeReliabilityFailure` (an
``AssertionError``, so pytest reports it as a failed test) carrying the first record.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence, TypeVar, cast, overload

from ..session.recording import MetricRecord, active_recorder, check_record

__all__ = ["JudgeReliabilityFailure", "finish", "conclude", "conclude_record", "conclude_not_computed",
           "parse_failure_limit"]

T = TypeVar("T")


class JudgeReliabilityFailure(AssertionError):
    """A reliability assertion failed; ``record`` holds the metric record."""

    def __init__(self, message: str, record: MetricRecord | None = None):
        super().__init__(message)
        self.record: MetricRecord = record if record is not None else MetricRecord()


def parse_failure_limit(limit: int | None) -> int:
    """``limit``, or the session's ``--judgerel-max-parse-failures`` when None (0 outside pytest)."""
    from ..errors import ConfigError

    if limit is None:
        return int(active_recorder().max_parse_failures)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise ConfigError(f"max_parse_failures must be an int >= 0, got {limit!r}")
    return limit


@overload
def finish(records: MetricRecord | Sequence[MetricRecord], result: T,
           failure: str | Sequence[str] | None = None) -> T: ...
@overload
def finish(records: MetricRecord | Sequence[MetricRecord], result: None, *, error: BaseException) -> None: ...
def finish(records: MetricRecord | Sequence[MetricRecord], result: Any, failure: str | Sequence[str] | None = None,
           *, error: BaseException | None = None) -> Any:
    """The end of every gate: check each record against its kind's type
    (:func:`~pytest_judgerel.session.recording.check_record`), then conclude (:func:`conclude`:
    record, report-only, require-stable, raise).  ``failure``: None when the gate passed, else the
    failure message (or its lines); ``error``: the statistic could not be computed, raise it.
    Returns ``result`` when the gate passed or the session is report-only."""
    __tracebackhide__ = True
    recs: list[MetricRecord] = [records] if isinstance(records, dict) else list(records)  # type: ignore[list-item]
    for rec in recs:
        check_record(rec)
    if error is not None:
        conclude_not_computed(recs, error)  # records all of them, then raises (unless report-only)
        return None
    message = failure if failure is None or isinstance(failure, str) else "\n".join(failure)
    return conclude(recs, message, result)


def conclude(records: Sequence[MetricRecord], message: str | None, result: Any = None) -> Any:
    """Record ``records``; return ``result`` when the gate passed (``message`` None) or the
    session is report-only, else raise :class:`JudgeReliabilityFailure` with ``message``.

    Under ``require_stable`` a pass whose record says its verdict is unstable fails (the record
    is marked ``passed: False, unstable: True``).  In report-only mode the records that failed
    are marked ``report_only``."""
    __tracebackhide__ = True
    recorder = active_recorder()
    if message is None and recorder.require_stable:
        shaky = [rec for rec in records if _unstable(rec)]
        if shaky:
            for rec in shaky:
                rec["passed"] = False
                rec["unstable"] = True
                seq = cast(dict[str, Any], rec).get("sequential")
                if seq is not None:  # the block's decision is the test's outcome
                    seq["decision"] = "fail"
                    seq["reason"] = f"{seq.get('reason')}; --judgerel-require-stable failed the unstable pass"
            message = "\n".join(_unstable_message(rec) for rec in shaky)
    if message is not None and recorder.report_only:
        failed = [rec for rec in records if not rec.get("passed")] or list(records)
        for rec in failed:
            rec["report_only"] = True
    for rec in records:
        recorder.record(rec)
    if message is None or recorder.report_only:
        return result
    first = records[0] if records else None
    raise JudgeReliabilityFailure(message + _judge_line(first.get("judge") if first else None), first)


def _unstable(rec: MetricRecord) -> bool:
    """Whether a record's verdict is unstable.  A sequential gate that a look settled before its cap
    is judged on the cap's prediction (its ``p_pass_at_cap``, the verdict the fixed design would
    reach on these answers), not on the prefix it drew; otherwise on the record's ``stability``."""
    seq = cast(dict[str, Any], rec).get("sequential") or {}
    if seq.get("early") and seq.get("p_pass_at_cap") is not None:
        return bool(0.05 < float(seq["p_pass_at_cap"]) < 0.95)
    return bool((rec.get("stability") or {}).get("unstable"))


def conclude_record(rec: MetricRecord, message: str | None, result: Any = None) -> Any:
    """:func:`conclude` for a gate with one record."""
    __tracebackhide__ = True
    return conclude([rec], message, result)


def conclude_not_computed(records: MetricRecord | Sequence[MetricRecord], exc: BaseException) -> None:
    """A statistic that could not be computed (e.g. a constant judge): record every record of the
    gate as such, then raise ``exc``; in report-only mode record them and return None (nothing fails)."""
    __tracebackhide__ = True
    recs = [records] if isinstance(records, dict) else list(records)
    recorder = active_recorder()
    for rec in recs:
        if recorder.report_only:
            rec["report_only"] = True
        recorder.record(rec)
    if recorder.report_only:
        return None
    raise exc


def _show(v: Any) -> str:
    return f"{v:.4f}" if isinstance(v, float) else str(v)


def _unstable_message(rec: MetricRecord) -> str:
    stability = rec.get("stability") or {}
    label = rec.get("label")
    return (f"{label + ': ' if label else ''}{rec.get('statistic')} = {_show(rec.get('value'))} passes its "
            f"threshold {rec.get('threshold')}, but the verdict is unstable: "
            + (f"a rerun ({stability.get('predicts') or stability['resample']}) is predicted to pass with "
               f"probability {stability['p_pass']:.0%}" if stability.get("predictive") else
               f"it passes on only {stability['p_pass']:.0%} of {stability['n_boot']} bootstrap resamples "
               f"({stability['resample']})")
            + "; --judgerel-require-stable keeps a pass only when p_pass >= 95% (kept passes then fail their "
            "rerun at most 5% of the time). More items (or repeats) make it stable.")


def _judge_line(judge: Any) -> str:
    """The judge that produced the ratings, for a failure message (a weak embedded model says so)."""
    model = judge.get("model") if isinstance(judge, Mapping) else None
    if not model:
        return ""
    names = ", ".join(model) if isinstance(model, (list, tuple)) else str(model)
    line = f"\n  judge: {names}"
    if isinstance(model, str) and model.startswith("local/"):
        from ..llm.endpoint import EMBEDDED_LABEL

        line += (f" ({EMBEDDED_LABEL}); its failures say little about your judge: configure a real one "
                 "with --judge-model=<litellm model>")
    return line
