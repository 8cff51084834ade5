"""Gates on probe results and corrected pass rates: verdicts, messages and metric records."""

import re

import pytest

from pytest_judgerel import (
    Judge,
    JudgeReliabilityFailure,
    assert_no_length_bias,
    assert_no_self_preference,
    assert_pass_rate,
    assert_position_consistent,
    probes,
)
from pytest_judgerel.llm import LLMClient, LLMSettings
from pytest_judgerel.session.recording import recording
from pytest_judgerel.report.schema import REPORT_SCHEMA
from pytest_judgerel.stats import JudgeCalibration, corrected_pass_rate

PAIRS = [{"id": f"p{i}", "question": f"Q{i}", "answer_a": f"first {i}", "answer_b": f"second {i}"}
         for i in range(10)]
ITEMS = [{"id": f"i{i}", "question": f"Q{i}", "answer": f"answer {i}"} for i in range(10)]


@pytest.fixture
def client(tmp_path):
    with LLMClient(LLMSettings(cache_dir=str(tmp_path / "cache"))) as c:
        yield c


def _by_content(messages, **params):
    """Always prefers the pair's original answer_a ('first ...') wherever it is shown (order-blind),
    except on pairs 8 and 9, where it picks whatever is shown first."""
    text = messages[-1]["content"]
    if int(re.search(r"\[Question\]\nQ(\d+)", text).group(1)) >= 8:
        return "[[A]]"
    shown_first = text.split("[Assistant A's answer begins]\n")[1]
    return "[[A]]" if shown_first.startswith("first") else "[[B]]"


def _last(sink, kind):
    return [r for r in sink if r["kind"] == kind][-1]


def _check_schema_shape(rec):
    for key in ("kind", "statistic", "value", "ci", "threshold", "direction", "passed"):
        assert key in rec
    assert rec["direction"] in REPORT_SCHEMA["$defs"]["record"]["properties"]["direction"]["enum"]


# --------------------------------------------------------------------------- position
def test_position_gate_passes_fails_and_records(client, scripted, _private_metric_sink):
    judge = Judge(model=scripted("scripted/content", _by_content), client=client)
    res = probes.position_bias(judge, PAIRS)
    assert res.consistency.count == 8 and res.first_preference.count == 2
    assert assert_position_consistent(res, min_consistency=0.75) is res
    rec = _last(_private_metric_sink, "position_bias")
    _check_schema_shape(rec)
    assert rec["passed"] is True and rec["value"] == 0.8 and rec["threshold"] == 0.75 and rec["direction"] == "min"
    assert rec["ci"] == [pytest.approx(res.consistency.ci_low), pytest.approx(res.consistency.ci_high)]
    assert rec["n"] == 10 and rec["judge"]["template"] == "mtbench-pairwise"
    assert rec["item_scores"]["p9"] == 1.0 and rec["item_scores"]["p0"] == 0.0
    assert rec["first_preference"]["count"] == 2

    with pytest.raises(JudgeReliabilityFailure) as exc:
        assert_position_consistent(res, min_consistency=0.75, use="ci_low", label="pairwise judge")
    msg = str(exc.value)
    assert msg.startswith("pairwise judge: position consistency = 0.8000")
    assert "lower CI bound of the consistency" in msg and "p8: verdict A as given, A swapped" in msg
    assert exc.value.record["passed"] is False

    with pytest.raises(JudgeReliabilityFailure, match="first-position preference 0.2000 exceeds"):
        assert_position_consistent(res, min_consistency=0.5, max_first_preference=0.1)


def _position_result(n_first, n_second, n_consistent, n_tie_mismatch=0):
    from pytest_judgerel.probes.position import PositionBiasResult
    from pytest_judgerel.stats import position_consistency

    fwd = ["A"] * n_first + ["B"] * n_second + ["A"] * n_consistent + ["tie"] * n_tie_mismatch
    rev = ["A"] * n_first + ["B"] * n_second + ["B"] * n_consistent + ["A"] * n_tie_mismatch
    st = position_consistency(fwd, rev)
    verdicts = tuple((f"p{i}", f, r, o) for i, (f, r, o) in enumerate(zip(fwd, rev, st.outcomes)))
    return PositionBiasResult(st, verdicts, (), {"design": "position_bias"})


def test_position_gate_separates_noise_from_a_position_preference(_private_metric_sink):
    # noise: 15 first, 15 second, 70 consistent -> consistency 0.70, no preference
    noisy = _position_result(15, 15, 70)
    with pytest.raises(JudgeReliabilityFailure) as exc:
        assert_position_consistent(noisy, min_consistency=0.85)
    msg = str(exc.value)
    assert "low consistency: the consistency 0.7000 is below the threshold 0.85" in msg
    assert "no significant position preference (sign test p = 1)" in msg and "noise" in msg
    assert "position preference: the judge significantly prefers" not in msg
    rec = exc.value.record
    assert rec["low_consistency"] is True and rec["position_preference"] is False and rec["p_position"] == 1.0
    assert (rec["n_first"], rec["n_second"], rec["alpha"]) == (15, 15, 0.05)

    # bias: 36 first vs 16 second, consistency 0.48 -> both checks fail, the message names both
    biased = _position_result(36, 16, 48)
    with pytest.raises(JudgeReliabilityFailure) as exc:
        assert_position_consistent(biased, min_consistency=0.4)
    msg = str(exc.value)
    assert "position preference: the judge significantly prefers the answer shown first (36 first vs 16 second" in msg
    assert "low consistency" not in msg and exc.value.record["position_preference"] is True
    assert assert_position_consistent(biased, min_consistency=0.4, alpha=None) is biased  # test switched off
    assert assert_position_consistent(biased, min_consistency=0.4, alpha=0.001) is biased  # p = 0.0078

    second = _position_result(2, 14, 84)
    with pytest.raises(JudgeReliabilityFailure, match="prefers the answer shown second"):
        assert_position_consistent(second, min_consistency=0.8)


def test_first_preference_cap_honours_use():
    # 14 of 100 pairs first (share 0.14, Wilson lower bound 0.085), 10 second: not significant
    res = _position_result(14, 10, 76)
    with pytest.raises(JudgeReliabilityFailure, match="the first-position preference 0.1400 exceeds"):
        assert_position_consistent(res, min_consistency=0.5, max_first_preference=0.1)
    lower = res.stats.first_preference.ci_low
    assert lower < 0.1
    assert assert_position_consistent(res, min_consistency=0.5, max_first_preference=0.1, use="ci_low") is res
    with pytest.raises(JudgeReliabilityFailure, match="lower CI bound of the first-position preference"):
        assert_position_consistent(res, min_consistency=0.5, max_first_preference=lower - 0.01, use="ci_low")


def test_position_gate_p_pass_includes_the_sign_test(_private_metric_sink):
    on_edge = _position_result(30, 16, 54)  # p = 0.054: the sign test sits next to alpha
    assert on_edge.stats.p_position == pytest.approx(0.0541, abs=1e-3)
    assert assert_position_consistent(on_edge, min_consistency=0.3) is on_edge
    edge = _last(_private_metric_sink, "position_bias")["p_pass"]
    assert 0.2 < edge < 0.8
    assert_position_consistent(on_edge, min_consistency=0.3, alpha=None)
    assert _last(_private_metric_sink, "position_bias")["p_pass"] > 0.95


def test_position_gate_bad_alpha():
    with pytest.raises(ValueError, match="alpha"):
        assert_position_consistent(_position_result(1, 1, 8), min_consistency=0.5, alpha=1.5)


def test_position_gate_fails_first_on_parse_failures(client, scripted):
    def junk(messages, **params):
        return "no idea" if "Q3" in messages[-1]["content"] else "[[C]]"

    res = probes.position_bias(Judge(model=scripted("scripted/junk", junk), client=client, reask=False), PAIRS)
    with pytest.raises(JudgeReliabilityFailure, match="not computed: unparseable judge replies") as exc:
        assert_position_consistent(res, min_consistency=0.5)
    assert "'no idea'" in str(exc.value) and exc.value.record["parse_failures"] == 2
    ok = assert_position_consistent(res, min_consistency=0.5, max_parse_failures=2)
    assert ok.stats.n_valid == 9


def test_position_gate_with_no_readable_pair(client, scripted):
    res = probes.position_bias(Judge(model=scripted("scripted/mute", lambda m, **p: "?"), client=client,
                                     reask=False), PAIRS[:2])
    assert res.stats is None
    with pytest.raises(JudgeReliabilityFailure, match="no pair got a readable verdict"):
        assert_position_consistent(res, min_consistency=0.5, max_parse_failures=10)


def test_report_only_records_and_does_not_fail(client, scripted, _private_metric_sink):
    res = probes.position_bias(Judge(model=scripted("scripted/firsty", lambda m, **p: "[[A]]"), client=client),
                               PAIRS[:4])
    with recording(report_only=True) as recorder:
        assert assert_position_consistent(res, min_consistency=0.9) is res
    rec = _last(recorder.records, "position_bias")
    assert rec["passed"] is False and rec["report_only"] is True


# --------------------------------------------------------------------------- length
def _scores_by_length(messages, **params):
    answer = re.search(r"Answer to evaluate: “(.*?)”", messages[-1]["content"], re.S).group(1)
    return "4" if len(answer) > 40 else "3"


def test_length_gate(client, scripted, _private_metric_sink):
    judge = Judge(model=scripted("scripted/long", _scores_by_length), template="truthfulqa", client=client)
    res = probes.length_bias(judge, ITEMS)
    with pytest.raises(JudgeReliabilityFailure) as exc:
        assert_no_length_bias(res, max_shift=0.1)
    msg = str(exc.value)
    assert "length shift = +0.2000 of the scale range" in msg and "+1 points on 0-5" in msg
    assert "padding 'answer'" in msg and "i0: +0.200 of the scale range" in msg
    rec = exc.value.record
    _check_schema_shape(rec)
    assert rec["kind"] == "length_bias" and rec["direction"] == "max" and rec["value"] == pytest.approx(0.2)
    assert rec["test"] == "paired t" and rec["item_scores"]["i3"] == pytest.approx(0.2)
    assert assert_no_length_bias(res, max_shift=0.25) is res
    assert _last(_private_metric_sink, "length_bias")["passed"] is True


def test_length_gate_two_sided_and_ci(client, scripted):
    def shorter_is_better(messages, **params):
        return "1" if _scores_by_length(messages) == "4" else "3"

    judge = Judge(model=scripted("scripted/terse", shorter_is_better), template="truthfulqa", client=client)
    res = probes.length_bias(judge, ITEMS)
    assert res.shift.mean == pytest.approx(-0.4)
    assert assert_no_length_bias(res, max_shift=0.05) is res  # one-sided: a drop is not verbosity bias
    with pytest.raises(JudgeReliabilityFailure, match=r"\|shift\| 0.4000 exceeds"):
        assert_no_length_bias(res, max_shift=0.05, two_sided=True)
    with pytest.raises(ValueError, match="use must be"):
        assert_no_length_bias(res, max_shift=0.05, use="ci_low")


def _alternating(messages, **params):
    """Padding moves item i's score by +1 (even i) or -1 (odd i): no bias on average, spread 1 point."""
    answer = re.search(r"Answer to evaluate: “(.*?)”", messages[-1]["content"], re.S).group(1)
    i = int(re.search(r"answer (\d+)", answer).group(1))
    return "3" if len(answer) <= 40 else ("4" if i % 2 == 0 else "2")


def test_length_gate_equivalence_shows_no_bias_with_enough_items(client, scripted, _private_metric_sink):
    judge = Judge(model=scripted("scripted/alt", _alternating), template="truthfulqa", client=client)
    many = [{"id": f"i{i}", "question": f"Q{i}", "answer": f"answer {i}"} for i in range(60)]
    res = probes.length_bias(judge, many)
    assert res.shift.mean == pytest.approx(0.0, abs=1e-12) and res.shift.sd == pytest.approx(0.2, rel=0.02)
    assert assert_no_length_bias(res, max_shift=0.1, use="equivalence") is res
    rec = _last(_private_metric_sink, "length_bias")
    assert rec["use"] == "equivalence" and rec["test"] == "TOST (skew-robust)" and rec["equivalence"]["equivalent"]
    assert rec["equivalence"]["p"] < 0.05 and rec["items_needed"]["n"] <= 60 and rec["p_pass"] is not None
    from pytest_judgerel.report.schema import validate

    validate(dict(rec), REPORT_SCHEMA["$defs"]["record"], "length record")  # use="equivalence" is a known value

    few = probes.length_bias(judge, many[:10])
    with pytest.raises(JudgeReliabilityFailure) as exc:
        assert_no_length_bias(few, max_shift=0.1, use="equivalence")
    msg = str(exc.value)
    needed = exc.value.record["items_needed"]["n"]
    assert "'no length bias' is not shown: the equivalence test (TOST, alpha 0.05)" in msg
    assert f"needs about {needed} items at this spread" in msg and "this run has 10" in msg and needed > 10
    assert exc.value.record["equivalence"]["p"] >= 0.05
    # the estimate alone passes the same data: it tests nothing
    assert assert_no_length_bias(few, max_shift=0.1) is few
    with pytest.raises(ValueError, match="margin max_shift > 0"):
        assert_no_length_bias(few, max_shift=0.0, use="equivalence")


# --------------------------------------------------------------------------- self-preference
def _outputs():
    rows = []
    for t in range(6):
        for m in ("scripted/me-gate", "other-1", "other-2"):
            rows.append({"task": f"t{t}", "model": m, "question": f"q{t}", "answer": f"{m} answer",
                         "human": 3 if m == "other-1" else 2})
    return rows


def test_self_preference_gate(client, scripted):
    def fond_of_self(messages, **params):
        return "5" if "me-gate answer" in messages[-1]["content"] else "3"

    judge = Judge(model=scripted("scripted/me-gate", fond_of_self), template="truthfulqa", client=client)
    res = probes.self_preference(judge, _outputs(), reference="human")
    # reference: own model tied last (rank 2.5) on every task; judge: first -> change +1.5
    assert res.test.mean_rank_change == pytest.approx(1.5)
    with pytest.raises(JudgeReliabilityFailure) as exc:
        assert_no_self_preference(res, max_rank_change=0.5)
    msg = str(exc.value)
    assert "self-preference of scripted/me-gate: mean per-task rank change +1.500" in msg
    # leaderboard ties (me and other-2 both mean 2) break by name: other-2 before scripted/me-gate
    assert "higher than the reference on 6 task(s)" in msg and "leaderboard rank 3 under the reference, 1" in msg
    rec = exc.value.record
    _check_schema_shape(rec)
    assert rec["kind"] == "self_preference" and rec["rank_change"] == 2 and rec["k"] == 3
    assert rec["p_sign"] == pytest.approx(0.5 ** 6)
    assert assert_no_self_preference(res, max_rank_change=2.0) is res
    # every task +1.5 (no spread): the TOST shows it below 2.0, not below 1.0
    assert assert_no_self_preference(res, max_rank_change=2.0, use="equivalence") is res
    with pytest.raises(JudgeReliabilityFailure, match="'no self-preference' is not shown") as exc:
        assert_no_self_preference(res, max_rank_change=1.0, use="equivalence")
    assert exc.value.record["equivalence"]["p"] == 1.0 and exc.value.record["use"] == "equivalence"
    with pytest.raises(ValueError, match="margin"):
        assert_no_self_preference(res, max_rank_change=0.0, use="equivalence")


# --------------------------------------------------------------------------- pass rate
CAL = [(False, False)] * 9 + [(True, False)] + [(True, True)] * 8 + [(False, True)] * 2


def test_pass_rate_gate_on_the_issue_example(_private_metric_sink):
    res = assert_pass_rate(70, 100, min_rate=0.85, calibration=CAL)
    assert res.value == pytest.approx(6 / 7)
    rec = _last(_private_metric_sink, "pass_rate")
    _check_schema_shape(rec)
    assert rec["value"] == pytest.approx(6 / 7) and rec["observed"] == 0.7 and rec["specificity"] == 0.9
    assert rec["sensitivity"] == 0.8 and rec["n"] == 100 and rec["passed"] is True
    assert "p_pass" in rec and rec["p_pass"] is None and rec["interval_method"] == "score"  # documented null
    with pytest.raises(JudgeReliabilityFailure) as exc:
        assert_pass_rate(70, 100, min_rate=0.85, calibration=CAL, use="ci_low")
    assert "lower CI bound of the corrected pass rate" in str(exc.value)
    assert "specificity 0.900 (10 items humans failed)" in str(exc.value)


def test_pass_rate_gate_accepts_a_result_and_needs_a_calibration():
    res = corrected_pass_rate(40, 100, calibration=JudgeCalibration(0.9, 0.8, 50, 50))
    with pytest.raises(JudgeReliabilityFailure, match="below min_rate 0.5"):
        assert_pass_rate(res, min_rate=0.5)
    with pytest.raises(ValueError, match="calibration="):
        assert_pass_rate(40, 100, min_rate=0.5)
    with pytest.raises(ValueError, match="not both"):
        assert_pass_rate(res, 100, min_rate=0.5)


@pytest.mark.parametrize("bad", [float("nan"), "0.5", True])
def test_thresholds_are_checked(bad):
    with pytest.raises(ValueError, match="finite number"):
        assert_pass_rate(70, 100, min_rate=bad, calibration=CAL)


# --------------------------------------------------------------------------- verdict stability
def test_probe_gates_record_p_pass(client, scripted, _private_metric_sink):
    """8 of 10 pairs consistent.  p_pass predicts a rerun on 10 new pairs: the predictive
    resampling draws a plausible data set (j of 10 consistent, Bin(10, 0.8)) and then the rerun
    from it (Bin(10, j/10)), so p_pass = sum_j P(j) P(Bin(10, j/10) >= threshold count),
    computed here by hand; against 0.5 the gate is stable, against 0.8 it is not."""
    from math import comb

    def pmf(n, p, j):
        return comb(n, j) * p ** j * (1 - p) ** (n - j)

    def predictive(at_least):
        return sum(pmf(10, 0.8, j) * sum(pmf(10, j / 10, i) for i in range(at_least, 11)) for j in range(11))

    judge = Judge(model=scripted("scripted/content-stab", _by_content), client=client)
    res = probes.position_bias(judge, PAIRS)
    assert_position_consistent(res, min_consistency=0.5)
    far = _last(_private_metric_sink, "position_bias")
    assert abs(far["p_pass"] - predictive(5)) < 0.03 and far["stability"]["predicts"] == "new items"
    assert far["p_pass"] > 0.95 and far["stability"]["unstable"] is False and far["stability"]["predictive"]
    assert_position_consistent(res, min_consistency=0.8)
    near = _last(_private_metric_sink, "position_bias")
    tail = predictive(8)  # 0.655: the rerun's own noise pulls it below the bootstrap share 0.678
    assert abs(near["p_pass"] - tail) < 0.05 and near["stability"]["unstable"] is True


def test_mindeval_score_gate_records_p_pass(_private_metric_sink):
    from pytest_judgerel import assert_mindeval_score

    scores = [{"CAC": v, "EPC": v, "AR": v, "TRA": v, "ASCQ": v} for v in (4, 5, 4, 5, 4, 5, 4, 5)]
    assert_mindeval_score(scores, min_mean=3.0)
    rec = _last(_private_metric_sink, "mindeval_score")
    assert rec["p_pass"] == 1.0
