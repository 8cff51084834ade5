"""Assertion helpers on real numbers: pass, fail with a full message, record a metric."""

import numpy as np
import pytest

from pytest_judgerel import (
    JudgeReliabilityFailure,
    Ratings,
    assert_agreement,
    assert_icc_above,
    assert_nmae_below,
    assert_scale_consistent,
)
from pytest_judgerel.session.recording import recording
from pytest_judgerel.judging.judge import JudgeFailure

SF = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]


@pytest.fixture
def records():
    with recording() as rec:
        yield rec.records


def consistent(n=40, k=4, noise=0.3, seed=1):
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0, 10, n)
    return truth[:, None] + rng.normal(0, noise, (n, k))


def test_icc_pass_returns_result_and_records(records):
    res = assert_icc_above(consistent(), 0.9)
    assert res.value > 0.9
    (rec,) = records
    assert rec["kind"] == "icc" and rec["passed"] is True
    assert rec["statistic"] == "ICC(A,1)" and rec["n"] == 40 and rec["k"] == 4
    assert rec["ci"][0] < rec["value"] < rec["ci"][1]


def test_icc_failure_message_has_statistic_ci_n_k_threshold_and_worst_items(records):
    with pytest.raises(JudgeReliabilityFailure) as exc:
        assert_icc_above(SF, 0.75)
    msg = str(exc.value)
    assert "ICC(A,1) = 0.2898" in msg
    assert "95% CI" in msg and "n=6 items, k=4 raters" in msg
    assert "below the threshold 0.75" in msg
    assert "largest spread across raters" in msg and "item0" in msg
    assert records[-1]["passed"] is False


def test_use_ci_low_is_stricter():
    data = consistent(n=8, noise=1.5, seed=3)
    est = assert_icc_above(data, 0.5)
    with pytest.raises(JudgeReliabilityFailure, match="lower CI bound"):
        assert_icc_above(data, est.value - 1e-9, use="ci_low")


def test_icc_per_group_breakdown_catches_hidden_weak_group(records):
    good = consistent(n=20, seed=2)
    rng = np.random.default_rng(9)
    weak = rng.uniform(0, 10, (20, 4))  # no agreement at all
    r = Ratings.from_array(np.vstack([good, weak]), item_groups={"benchmark": ["good"] * 20 + ["weak"] * 20})
    with pytest.raises(JudgeReliabilityFailure) as exc:
        assert_icc_above(r, 0.5, by="benchmark")
    msg = str(exc.value)
    assert "good:" in msg and "weak:" in msg and "FAIL" in msg
    assert records[-1]["groups"]["weak"]["passed"] is False
    assert records[-1]["groups"]["good"]["passed"] is True


def test_parse_failures_fail_the_assertion_and_quote_replies(records):
    data = consistent(n=10)
    data[3, 1] = np.nan
    fail = JudgeFailure(item="item3", rater="r1", cause="no_number", message="no number", reply="I think it is good")
    r = Ratings.from_array(data, parse_failures=[fail])
    with pytest.raises(JudgeReliabilityFailure) as exc:
        assert_icc_above(r, 0.1)
    msg = str(exc.value)
    assert "1 judge reply could not be parsed" in msg and "I think it is good" in msg and "no_number" in msg
    assert records[-1]["parse_failures"] == 1
    # allowed failures: the item is omitted and reported
    res = assert_icc_above(r, 0.1, max_parse_failures=1)
    assert res.n == 9 and res.n_omitted == 1


def test_threshold_must_be_finite():
    with pytest.raises(ValueError, match="threshold must be a finite number"):
        assert_icc_above(SF, float("nan"))


def test_nan_data_is_never_a_pass():
    from pytest_judgerel.errors import ReliabilityError

    data = np.array(SF, dtype=float)
    data[0, 0] = np.nan
    with pytest.raises(ReliabilityError, match="missing"):
        assert_icc_above(data, 0.0)
    constant = np.ones((5, 3))
    with pytest.raises(ReliabilityError):
        assert_icc_above(constant, 0.0)


def test_scale_consistency_pass_and_fail(records):
    rng = np.random.default_rng(4)
    truth = rng.uniform(0, 1, 30)
    by_scale = {
        "0-5": Ratings.from_array(np.round(truth * 5)[:, None], scale="0-5"),
        "0-10": Ratings.from_array(np.round(truth * 10)[:, None], scale="0-10"),
        "0-100": Ratings.from_array(np.round(truth * 100)[:, None], scale="0-100"),
    }
    res = assert_scale_consistent(by_scale, 0.8)
    assert res.joint.value > 0.8
    assert records[-1]["matrix"][0][0] == 1.0 and records[-1]["scales"] == ["0-5", "0-10", "0-100"]
    by_scale["0-100"] = Ratings.from_array(rng.integers(0, 101, (30, 1)), scale="0-100")
    with pytest.raises(JudgeReliabilityFailure) as exc:
        assert_scale_consistent(by_scale, 0.8)
    assert "0-10 vs 0-100" in str(exc.value) or "0-5 vs 0-100" in str(exc.value)


def _human_judge(n=60, bias=0.0, noise=0.3, seed=5):
    rng = np.random.default_rng(seed)
    truth = rng.uniform(1, 5, n)
    human = Ratings.from_array(
        np.clip(np.round(truth[:, None] + rng.normal(0, 0.4, (n, 3))), 1, 5),
        rater_ids=["a1", "a2", "a3"], item_groups={"benchmark": ["x"] * (n // 2) + ["y"] * (n - n // 2)},
        scale="1-5",
    )
    judge = Ratings.from_array(np.clip(truth + bias + rng.normal(0, noise, n), 1, 5)[:, None],
                               rater_ids=["judge"], scale="1-5")
    return judge, human


def test_agreement_pass_fail_and_by_group(records):
    judge, human = _human_judge()
    res = assert_agreement(judge, human, min_icc=0.6, max_nmae=0.15, by="benchmark")
    assert set(res.groups) == {"x", "y"}
    assert 0 <= res.nmae < 0.15
    rec = records[-1]
    assert rec["kind"] == "agreement" and rec["pairs"] and len(rec["pairs"]) == 60
    biased, human = _human_judge(bias=1.5)
    with pytest.raises(JudgeReliabilityFailure) as exc:
        assert_agreement(biased, human, min_icc=0.8, max_nmae=0.1)
    msg = str(exc.value)
    assert "nMAE" in msg and "worst-aligned items" in msg


def test_reliability_illusion_is_named():
    judge, human = _human_judge(n=60, noise=0.2)
    vals = judge.values.copy()
    rng = np.random.default_rng(0)
    vals[30:, 0] = rng.uniform(1, 5, 30)  # the judge is random on benchmark y
    judge = Ratings.from_array(vals, item_ids=judge.item_ids, rater_ids=["judge"], scale="1-5")
    with pytest.raises(JudgeReliabilityFailure, match="reliability illusion|benchmark=y"):
        assert_agreement(judge, human, min_icc=0.3, by="benchmark")


def test_nmae_below_and_scale_required(records):
    judge, human = _human_judge()
    res = assert_nmae_below(judge, human, 0.2)
    assert records[-1]["kind"] == "nmae" and records[-1]["direction"] == "max"
    assert res.nmae == pytest.approx(records[-1]["value"])
    from pytest_judgerel.errors import ReliabilityError

    with pytest.raises(ReliabilityError, match="scale"):
        assert_nmae_below(judge.values[:, 0], human.values, 0.2)


def test_report_only_records_but_does_not_fail():
    with recording(report_only=True) as rec:
        res = assert_icc_above(SF, 0.99)
    assert res.value < 0.99
    assert rec.records[-1]["passed"] is False and rec.records[-1]["report_only"] is True


def test_review_regressions_in_agreement():
    # an item without any judge score (allowed parse failure) is omitted, not a crash
    judge, human = _human_judge()
    vals = judge.values.copy()
    vals[0, 0] = np.nan
    fail = JudgeFailure(item=judge.item_ids[0], rater="judge", cause="no_number", message="x", reply="meh")
    j = Ratings.from_array(vals, item_ids=judge.item_ids, rater_ids=["judge"], scale="1-5", parse_failures=[fail])
    res = assert_agreement(j, human, min_icc=0.5, max_parse_failures=1)
    assert res.n == 59 and res.n_omitted == 1
    # nMAE-only gate needs no ICC: identical constant scores pass with nMAE 0
    const = Ratings.from_array(np.full((5, 1), 3.0), scale="1-5")
    assert assert_nmae_below(const, Ratings.from_array(np.full((5, 2), 3.0), scale="1-5"), 0.1).nmae == 0
    # the same bounds are the same scale, fractional or not
    from pytest_judgerel import Scale

    frac = Ratings.from_array(judge.values, item_ids=judge.item_ids, scale=Scale(1, 5, fractional=True))
    assert assert_agreement(frac, human, max_nmae=0.5).scale.low == 1
    # positional inputs of different lengths are an error, not a silent truncation
    from pytest_judgerel.errors import ReliabilityError

    with pytest.raises(ReliabilityError, match="judge has 3 items but human has 4"):
        assert_nmae_below([1, 2, 3], [[1, 1], [2, 2], [3, 3], [4, 4]], 0.2, scale="0-5")
