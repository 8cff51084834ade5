"""The one gate conclusion (gates/conclusion.py) in report-only mode: tests that fail on the planted
held-out planted bugs (docs/benchmarks.md, "Planted bugs and the held-out measurement")."""

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
    from pytest_judgerel.gates.conclusion import finish

    with recording(Recorder()) as rec:
        with pytest.raises(ReliabilityError, match="a constant judge"):
            finish([_rec("ICC", False), _rec("nMAE", False)], None, error=ReliabilityError("a constant judge"))
    assert [r["statistic"] for r in rec.records] == ["ICC", "nMAE"]
    assert not any("report_only" in r for r in rec.records)


# ---------------------------------------------------------------- held-out bugs (tools/mutation/held_out_mutants.py)
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
    from pytest_judgerel.gates.conclusion import finish

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


# ---------------------------------------------------------------- the conclusion's other rules
def test_the_parse_failure_limit_is_the_sessions_unless_given_and_must_be_a_count():
    from pytest_judgerel.errors import ConfigError
    from pytest_judgerel.gates.conclusion import parse_failure_limit

    with recording(Recorder()):
        assert parse_failure_limit(None) == 0 and parse_failure_limit(0) == 0 and parse_failure_limit(4) == 4
    with recording(Recorder(max_parse_failures=2)):
        assert parse_failure_limit(None) == 2 and parse_failure_limit(0) == 0
    for bad in (-1, True, 1.5, "2"):
        with pytest.raises(ConfigError) as info:
            parse_failure_limit(bad)
        assert str(info.value) == f"max_parse_failures must be an int >= 0, got {bad!r}"


def test_the_unparsed_replies_message_counts_quotes_and_cuts():
    """One reply is "reply", more are "replies"; at most five are quoted, each with its item and
    cause, newlines shown as \\n and the reply cut at 160 characters."""
    from pytest_judgerel import Ratings, assert_icc_above
    from pytest_judgerel.judging.judge import JudgeFailure

    data = _consistent()

    def failing(count: int, reply: str) -> Ratings:
        fails = [JudgeFailure(item=f"item{i}", rater="r0", cause="no_number", message="no number", reply=reply)
                 for i in range(count)]
        d = data.copy()
        d[:count, 0] = float("nan")
        return Ratings.from_array(d, parse_failures=fails)

    with recording(Recorder()), pytest.raises(JudgeReliabilityFailure) as one:
        assert_icc_above(failing(1, "line one\nline two"), 0.5)
    assert "  1 judge reply could not be parsed (max_parse_failures=0); these are not scores:" in str(one.value)
    assert "    item0 [no_number]: 'line one\\\\nline two'" in str(one.value)
    with recording(Recorder()) as rec, pytest.raises(JudgeReliabilityFailure) as many:
        assert_icc_above(failing(7, "x" * 300), 0.5, label="long")
    message = str(many.value)
    assert message.startswith("long: ICC(A,1) not computed: unparseable judge replies")
    assert "7 judge replies could not be parsed" in message
    assert [f"item{i} [no_number]" in message for i in range(7)] == [True] * 5 + [False] * 2
    assert f"'{'x' * 160}'" in message and "x" * 161 not in message
    assert rec.records[-1]["passed"] is False and rec.records[-1]["value"] is None
    assert rec.records[-1]["parse_failures"] == 7 and rec.records[-1]["n"] == 20


@pytest.mark.parametrize("threshold, ok", [(1.0, True), (-1.0, True), (1.0001, False), (-1.5, False),
                                           (float("nan"), False), (True, False), ("0.5", False)])
def test_an_icc_threshold_must_be_a_finite_number_within_the_iccs_range(threshold, ok):
    from pytest_judgerel import assert_icc_above

    data = _consistent()
    with recording(Recorder(report_only=True)):
        if ok:
            assert_icc_above(data, threshold)
        else:
            with pytest.raises(ValueError, match=r"threshold(=| must be a finite number)"):
                assert_icc_above(data, threshold)


def test_require_stable_in_report_only_mode_marks_and_keeps_going():
    """An unstable pass under require-stable *and* report-only: recorded as failed, unstable and
    report-only, and the gate returns its result instead of raising."""
    with recording(Recorder(require_stable=True, report_only=True)) as rec:
        assert conclude([_unstable(_rec("ICC", True))], None, result="kept") == "kept"
    r = rec.records[0]
    assert (r["passed"], r["unstable"], r["report_only"]) == (False, True, True)


@pytest.mark.parametrize("predictive, expected", [
    (True, "panel: ICC = 0.8000 passes its threshold 0.5, but the verdict is unstable: a rerun (new items) is "
           "predicted to pass with probability 50%; --judgerel-require-stable keeps a pass only when p_pass >= 95%"),
    (False, "panel: ICC = 0.8000 passes its threshold 0.5, but the verdict is unstable: it passes on only 50% of "
            "1000 bootstrap resamples (items); --judgerel-require-stable"),
])
def test_the_unstable_message_says_what_p_pass_predicts(predictive, expected):
    rec = _unstable(_rec("ICC", True))
    rec["label"] = "panel"
    rec["stability"]["predictive"] = predictive
    with recording(Recorder(require_stable=True)), pytest.raises(JudgeReliabilityFailure) as info:
        conclude([rec], None)
    assert str(info.value).startswith(expected), str(info.value)


@pytest.mark.parametrize("model, line", [
    ("openai/judge", "\n  judge: openai/judge"),
    (["openai/a", "openai/b"], "\n  judge: openai/a, openai/b"),
    ("local/smollm2", "\n  judge: local/smollm2 (embedded SmolLM2-135M-Instruct via llama.cpp: a weak judge, for "
                      "offline runs only); its failures say little about your judge: configure a real one with "
                      "--judge-model=<litellm model>"),
    ("", ""), (None, ""),
])
def test_a_failure_ends_with_the_judge_that_produced_the_ratings(model, line):
    rec = _rec("ICC", False)
    rec["judge"] = {"model": model}
    with recording(Recorder()), pytest.raises(JudgeReliabilityFailure) as info:
        conclude([rec], "ICC below")
    assert str(info.value) == "ICC below" + line


def test_a_gate_without_records_still_raises_with_an_empty_record():
    with recording(Recorder()) as rec, pytest.raises(JudgeReliabilityFailure) as info:
        conclude([], "nothing to show")
    assert str(info.value) == "nothing to show" and info.value.record == {} and rec.records == []


# ---------------------------------------------------------------- what every gate shares (gates/common.py)
def test_a_gates_common_record_fields():
    from types import SimpleNamespace

    from pytest_judgerel.gates.common import Summary, gate_fields

    source = SimpleNamespace(parse_failures=[1, 2], provenance={"model": "openai/j"})
    rec = gate_fields("icc", "ICC(A,1)", "panel", Summary(0.8, 0.7, 0.9, 20, 3), 0.5, "min", source)
    assert rec == {"kind": "icc", "statistic": "ICC(A,1)", "label": "panel", "value": 0.8, "ci": [0.7, 0.9], "n": 20,
                   "k": 3, "threshold": 0.5, "direction": "min", "groups": {}, "worst_items": [],
                   "parse_failures": 2, "judge": {"model": "openai/j"}}
    bare = gate_fields("nmae", "nMAE", None, None, None, "max", None)
    assert (bare["value"], bare["ci"], bare["n"], bare["parse_failures"], bare["judge"]) == (None, None, None, 0, None)
    assert Summary(0.5, 0.1, None).ci == [0.1, None] and Summary(0.5).ci is None


def test_the_shared_argument_checks_and_message_pieces():
    from pytest_judgerel.gates.common import check_equivalence, check_use, label_prefix, worst_lines

    assert check_use("ci_low", ("estimate", "ci_low")) == "ci_low"
    with pytest.raises(ValueError, match=r"^use must be one of \('estimate', 'ci_low'\), got 'mean'$"):
        check_use("mean", ("estimate", "ci_low"))
    check_equivalence("estimate", 0.0, "max_shift", 0.05)  # a margin matters only for equivalence
    check_equivalence("equivalence", 0.1, "max_shift", 0.49)
    with pytest.raises(ValueError, match=r"^use='equivalence' needs a margin max_shift > 0, got 0$"):
        check_equivalence("equivalence", 0, "max_shift", 0.05)
    for alpha in (0, 0.5, True, "0.05"):
        with pytest.raises(ValueError, match="^alpha must lie strictly between 0 and 0.5, got "):
            check_equivalence("estimate", 0.1, "max_shift", alpha)
    assert label_prefix(None) == "" and label_prefix("") == "" and label_prefix("panel") == "panel: "
    assert worst_lines([], "worst items") == []
    assert worst_lines([{"item": "a", "detail": "off by 2"}, {"item": "b", "detail": "off by 1"}], "worst items") == [
        "  worst items:", "    a: off by 2", "    b: off by 1"]
