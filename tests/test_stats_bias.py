"""Wilson intervals, position consistency and paired shifts against independent references."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from pytest_judgerel.errors import ReliabilityError
from pytest_judgerel.stats import paired_shift, position_consistency, wilson_interval


# --------------------------------------------------------------------------- Wilson
def test_wilson_zero_successes_closed_form():
    # x = 0: lower 0, upper z^2 / (n + z^2)
    z = 1.959963984540054
    r = wilson_interval(0, 10)
    assert r.value == 0 and r.ci_low == 0
    assert r.ci_high == pytest.approx(z * z / (10 + z * z), abs=1e-12)


def test_wilson_half_by_hand():
    # x = 5, n = 10: centre 0.5; half = z sqrt(0.025 + z^2/400) / (1 + z^2/10)
    z = 1.959963984540054
    half = z * math.sqrt(0.025 + z * z / 400) / (1 + z * z / 10)
    r = wilson_interval(5, 10)
    assert r.ci == pytest.approx((0.5 - half, 0.5 + half), abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 300).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
       st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_wilson_matches_scipy(xn, confidence):
    x, n = xn
    ref = sps.binomtest(x, n).proportion_ci(confidence_level=confidence, method="wilson")
    r = wilson_interval(x, n, confidence)
    assert r.ci_low == pytest.approx(ref.low, abs=1e-12) and r.ci_high == pytest.approx(ref.high, abs=1e-12)
    assert r.ci_low <= r.value <= r.ci_high


@pytest.mark.parametrize("args", [(3, 2), (-1, 5), (1, 0), (1.5, 3), (True, 3)])
def test_wilson_bad_input(args):
    with pytest.raises(ReliabilityError):
        wilson_interval(*args)


# --------------------------------------------------------------------------- position consistency
def test_position_consistency_counts_by_hand():
    forward = ["A", "B", "A", "B", "tie", "A", "tie", None, "A", "B"]
    reverse = ["B", "A", "A", "B", "tie", "tie", "B", "A", "A", None]
    # consistent: 0, 1, 4; first (A, A): 2, 8; second (B, B): 3; tie mismatch: 5, 6; missing: 7, 9
    r = position_consistency(forward, reverse)
    assert r.outcomes == ("consistent", "consistent", "first", "second", "consistent", "tie_mismatch",
                          "tie_mismatch", "missing", "first", "missing")
    assert (r.n_pairs, r.n_valid, r.n_missing, r.n_tie_mismatch) == (10, 8, 2, 2)
    assert r.consistency.count == 3 and r.consistency.value == 3 / 8
    assert r.first_preference.count == 2 and r.second_preference.count == 1
    ref = sps.binomtest(3, 8).proportion_ci(method="wilson")
    assert r.consistency.ci == pytest.approx((ref.low, ref.high), abs=1e-12)


def test_position_consistency_rejects_unknown_verdicts_and_all_missing():
    with pytest.raises(ReliabilityError, match="not one of"):
        position_consistency(["A"], ["left"])
    with pytest.raises(ReliabilityError, match="readable verdict"):
        position_consistency([None, "A"], ["B", None])
    with pytest.raises(ReliabilityError, match="reverse"):
        position_consistency(["A"], [])


# --------------------------------------------------------------------------- paired shift
def test_paired_shift_matches_scipy_ttest_rel():
    rng = np.random.default_rng(1)
    before = rng.uniform(0, 1, 30)
    after = np.clip(before + rng.normal(0.05, 0.1, 30), 0, 1)
    r = paired_shift(before, after)
    ref = sps.ttest_rel(after, before)
    ci = ref.confidence_interval(0.95)
    assert r.mean == pytest.approx(float(np.mean(after - before)), abs=1e-15)
    assert r.t == pytest.approx(ref.statistic, abs=1e-10) and r.p == pytest.approx(ref.pvalue, abs=1e-12)
    assert r.ci == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert r.p_greater == pytest.approx(sps.ttest_rel(after, before, alternative="greater").pvalue, abs=1e-12)


def test_paired_shift_constant_difference_is_exact():
    r = paired_shift([0.2, 0.4, 0.6], [0.4, 0.6, 0.8])
    assert r.mean == pytest.approx(0.2) and r.ci == pytest.approx((0.2, 0.2)) and r.p == 0.0 and r.t is None
    zero = paired_shift([0.2, 0.4], [0.2, 0.4])
    assert zero.mean == 0 and zero.p == 1.0 and zero.p_greater == 1.0


def test_paired_shift_drops_missing_pairs():
    r = paired_shift([0.1, np.nan, 0.3, 0.5], [0.2, 0.9, np.nan, 0.7])
    assert r.n == 2 and r.mean == pytest.approx(0.15)


def test_paired_shift_needs_two_pairs():
    with pytest.raises(ReliabilityError, match="at least 2"):
        paired_shift([0.1, np.nan], [0.2, 0.3])
