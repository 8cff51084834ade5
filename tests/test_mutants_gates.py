"""The one gate conclusion (gates/conclusion.py) in report-only mode: tests that fail on the planted
bugs of issue 31's held-out mutants (docs/_drafts/mutants.md)."""

from __future__ import annotations

import pytest

from pytest_judgerel.errors import ReliabilityError
from pytest_judgerel.gates.conclusion import JudgeReliabilityFailure, conclude, conclude_not_computed
from pytest_judgerel.session.recording import MetricRecord, Recorder, recording


def _rec(name: str, passed: bool) -> MetricRecord:
    rec = MetricRecord()
    rec.update({"kind": "icc", "statistic": name, "value": 0.8 if passed else 0.2, "threshold": 0.5,
                "passed": passed})
    return rec


def test_report_only_marks_only_the_records_that_failed():
    """Mutant: report-only marks every record of a failing gate, the passing ones too."""
    with recording(Recorder(report_only=True)) as rec:
        result = conclude([_rec("ICC", True), _rec("nMAE", False)], "nMAE above its threshold", result="kept")
    assert result == "kept"
    by_name = {r["statistic"]: r for r in rec.records}
    assert by_name["nMAE"].get("report_only") is True
    assert "report_only" not in by_name["ICC"]


def test_report_only_marks_every_record_when_none_is_marked_failed():
    with recording(Recorder(report_only=True)) as rec:
        conclude([_rec("ICC", True)], "failed by its groups")
    assert rec.records[0].get("report_only") is True


def test_a_gate_that_fails_outside_report_only_raises_and_marks_nothing():
    with recording(Recorder()) as rec:
        with pytest.raises(JudgeReliabilityFailure, match="nMAE above"):
            conclude([_rec("ICC", True), _rec("nMAE", False)], "nMAE above its threshold")
    assert len(rec.records) == 2 and not any("report_only" in r for r in rec.records)


def test_a_statistic_not_computed_is_recorded_in_report_only_mode():
    """Mutant: in report-only mode the "not computed" record is dropped (the report would not show
    the gate at all)."""
    with recording(Recorder(report_only=True)) as rec:
        assert conclude_not_computed(_rec("ICC", False), ReliabilityError("a constant judge")) is None
    assert len(rec.records) == 1 and rec.records[0]["report_only"] is True and rec.records[0]["statistic"] == "ICC"


def test_a_statistic_not_computed_is_recorded_then_raised():
    with recording(Recorder()) as rec:
        with pytest.raises(ReliabilityError, match="a constant judge"):
            conclude_not_computed(_rec("ICC", False), ReliabilityError("a constant judge"))
    assert len(rec.records) == 1 and "report_only" not in rec.records[0]
