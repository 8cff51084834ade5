"""The one gate conclusion (gates/conclusion.py) in report-only mode: tests that fail on the planted
bugs of issue 31's held-out mutants (docs/benchmarks.md, "Issue 31's planted bugs")."""

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


def test_a_statistic_not_computed_records_every_record_of_its_gate_before_raising():
    """Found by the held-out mutants: ``finish(records, None, error=...)`` outside report-only mode
    recorded the first record and raised, so the gate's other records never reached the report."""
    from pytest_judgerel.gates.common import finish

    with recording(Recorder()) as rec:
        with pytest.raises(ReliabilityError, match="a constant judge"):
            finish([_rec("ICC", False), _rec("nMAE", False)], None, error=ReliabilityError("a constant judge"))
    assert [r["statistic"] for r in rec.records] == ["ICC", "nMAE"]
    assert not any("report_only" in r for r in rec.records)


# ---------------------------------------------------------------- held-out bugs (benchmarks/held_out_mutants.py)
def _unstable(rec: MetricRecord) -> MetricRecord:
    rec["stability"] = {"p_pass": 0.5, "unstable": True, "n_boot": 1000, "resample": "items", "predictive": True,
                        "predicts": "new items"}
    return rec


def test_require_stable_keeps_the_message_of_a_gate_that_failed_anyway():
    """G01: under require-stable, a failing gate whose verdict is also unstable had its own failure
    message replaced by the "unstable pass" message (which says it passes)."""
    with recording(Recorder(require_stable=True)) as rec:
        with pytest.raises(JudgeReliabilityFailure) as info:
            conclude([_unstable(_rec("ICC", False))], "ICC(A,1) = 0.2000 below its threshold 0.5")
    assert "below its threshold 0.5" in str(info.value) and "passes its threshold" not in str(info.value)
    assert rec.records[0]["passed"] is False and "unstable" not in rec.records[0]


def test_a_failure_carries_the_first_record_and_names_its_judge():
    """G03: the failure carried (and named the judge of) the last record of the gate."""
    first, second = _rec("ICC", False), _rec("nMAE", False)
    first["judge"], second["judge"] = {"model": "openai/first-judge"}, {"model": "openai/second-judge"}
    with recording(Recorder()):
        with pytest.raises(JudgeReliabilityFailure) as info:
            conclude([first, second], "both below their thresholds")
    assert info.value.record["statistic"] == "ICC"
    assert "judge: openai/first-judge" in str(info.value) and "second-judge" not in str(info.value)


# ---------------------------------------------------------------- batch 2's survivors
def _consistent(n: int = 20, k: int = 3):
    import numpy as np

    rng = np.random.default_rng(5)
    return rng.uniform(0, 10, n)[:, None] + rng.normal(0, 0.3, (n, k))


def _with_parse_failures(count: int):
    from pytest_judgerel import Ratings
    from pytest_judgerel.judging.judge import JudgeFailure

    data = _consistent()
    fails = []
    for i in range(count):
        data[i, 0] = float("nan")
        fails.append(JudgeFailure(item=f"item{i}", rater="r0", cause="no_number", message="no number",
                                  reply=f"reply {i} has no score"))
    return Ratings.from_array(data, parse_failures=fails)


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_exactly_max_parse_failures_unparsed_replies_still_pass(limit):
    """G05: the limit read as strict (``< limit``): exactly ``max_parse_failures`` unparsed replies
    failed the gate.  ``limit`` failures pass (the argument and the session's limit alike); one
    more fails and quotes the replies."""
    from pytest_judgerel import assert_icc_above

    with recording(Recorder()) as rec:
        assert assert_icc_above(_with_parse_failures(limit), 0.5, max_parse_failures=limit).value > 0.5
    assert rec.records[-1]["passed"] is True and rec.records[-1]["parse_failures"] == limit
    with recording(Recorder(max_parse_failures=limit)):
        assert_icc_above(_with_parse_failures(limit), 0.5)
    with recording(Recorder()), pytest.raises(JudgeReliabilityFailure) as info:
        assert_icc_above(_with_parse_failures(limit + 1), 0.5, max_parse_failures=limit)
    assert f"{limit + 1} judge replies could not be parsed (max_parse_failures={limit})" in str(info.value)


def test_a_statistic_not_computed_records_every_record_of_its_gate_in_report_only_mode():
    """G07: a gate with several records (``finish([rec1, rec2], None, error=...)``) whose statistic
    could not be computed recorded only the first: the report lost the others."""
    from pytest_judgerel.gates.common import finish

    records = [_rec("ICC", False), _rec("nMAE", False), _rec("Kendall", False)]
    with recording(Recorder(report_only=True)) as rec:
        assert finish(records, None, error=ReliabilityError("a constant judge")) is None
    assert [r["statistic"] for r in rec.records] == ["ICC", "nMAE", "Kendall"]
    assert all(r["report_only"] is True for r in rec.records)


# ---------------------------------------------------------------- batch 3's survivors
def test_require_stable_fails_only_the_unstable_records_of_a_gate():
    """G09: require-stable marked every record of the gate unstable and failed, the stable ones
    too (the report then showed a stable, passing ICC as failed).  The message names only the
    unstable record, and nothing is marked when every record is stable."""
    stable, shaky = _rec("ICC", True), _unstable(_rec("nMAE", True))
    stable["stability"] = {"p_pass": 0.99, "unstable": False, "n_boot": 1000, "resample": "items"}
    with recording(Recorder(require_stable=True)) as rec:
        with pytest.raises(JudgeReliabilityFailure) as info:
            conclude([stable, shaky], None)
    by_name = {r["statistic"]: r for r in rec.records}
    assert by_name["ICC"]["passed"] is True and "unstable" not in by_name["ICC"]
    assert by_name["nMAE"]["passed"] is False and by_name["nMAE"]["unstable"] is True
    message = str(info.value)
    assert message.startswith("nMAE = 0.8000 passes its threshold 0.5, but the verdict is unstable") and "ICC" not in message
    calm = _rec("ICC", True)
    calm["stability"] = dict(stable["stability"])
    with recording(Recorder(require_stable=True)) as rec:
        assert conclude([calm], None, result="ok") == "ok"
    assert rec.records[0]["passed"] is True and "unstable" not in rec.records[0]
