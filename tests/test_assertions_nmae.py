"""assert_nmae_below on a scale that does not start at 0, with the expectation computed by hand.

Replaces ``tests/test_assertions.py::test_nmae_below_and_scale_required``, which compared the
result with its own recorded value and used only 1-5 data read back through the same code.
"""

import pytest

from pytest_judgerel import JudgeReliabilityFailure, Ratings, assert_nmae_below
from pytest_judgerel.session.recording import recording
from pytest_judgerel.errors import ReliabilityError


@pytest.fixture
def records():
    with recording() as recorder:
        yield recorder.records


JUDGE = Ratings.from_array([[1.0], [5.0], [3.0], [2.0]], rater_ids=["judge"], scale="1-5")
HUMAN = Ratings.from_array([[1, 1], [4, 4], [3, 4], [2, 2]], rater_ids=["h1", "h2"], scale="1-5")
# Human panel means 1, 4, 3.5, 2; |judge - human| = 0, 1, 0.5, 0; MAE 0.375.  Seed 001 eq. (5)
# divides by the range R = 5 - 1 = 4: nMAE = 0.09375 (dividing by the maximum 5 would give 0.075).
EXPECTED = 0.375 / 4


def test_nmae_below_divides_by_the_scale_range_and_records_the_value(records):
    res = assert_nmae_below(JUDGE, HUMAN, 0.1)
    assert res.nmae == pytest.approx(EXPECTED, rel=1e-12)
    assert res.scale.low == 1 and res.scale.high == 5
    rec = records[-1]
    assert (rec["kind"], rec["statistic"], rec["direction"], rec["passed"]) == ("nmae", "nMAE", "max", True)
    assert rec["value"] == pytest.approx(EXPECTED, rel=1e-12) and rec["threshold"] == 0.1


def test_nmae_below_fails_between_the_range_and_the_maximum_reading(records):
    # 0.075 (max) < 0.09 < 0.09375 (range): only the range reading fails this threshold
    with pytest.raises(JudgeReliabilityFailure, match=r"nMAE"):
        assert_nmae_below(JUDGE, HUMAN, 0.09)
    assert records[-1]["passed"] is False and records[-1]["value"] == pytest.approx(EXPECTED, rel=1e-12)


def test_nmae_below_needs_a_scale_when_plain_arrays_carry_none():
    with pytest.raises(ReliabilityError, match="scale"):
        assert_nmae_below(JUDGE.values[:, 0], HUMAN.values, 0.2)
    plain = assert_nmae_below(JUDGE.values[:, 0], HUMAN.values, 0.2, scale="1-5")
    assert plain.nmae == pytest.approx(EXPECTED, rel=1e-12)
