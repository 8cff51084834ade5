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


# --------------------------------------------------------------------------- sign test
def test_sign_test_by_hand_and_against_scipy():
    from pytest_judgerel.stats import sign_test_p

    # 8 first vs 2 second: P(X <= 2 | n = 10) = (1 + 10 + 45) / 1024; two-sided doubles it
    assert sign_test_p(8, 2) == pytest.approx(2 * 56 / 1024, abs=1e-15)
    assert sign_test_p(2, 8) == sign_test_p(8, 2)
    assert sign_test_p(5, 5) == 1.0 and sign_test_p(0, 0) == 1.0
    for f, s in [(36, 16), (0, 7), (30, 22), (100, 70)]:
        assert sign_test_p(f, s) == pytest.approx(sps.binomtest(f, f + s, 0.5).pvalue, rel=1e-12)
    with pytest.raises(ReliabilityError, match="count"):
        sign_test_p(-1, 3)


def test_position_consistency_reports_first_and_second_wins_and_the_sign_test():
    forward = ["A"] * 9 + ["B"] * 3 + ["A", "B"] * 4 + [None]
    reverse = ["A"] * 9 + ["B"] * 3 + ["B", "A"] * 4 + ["A"]
    r = position_consistency(forward, reverse)
    assert (r.n_first, r.n_second, r.n_valid) == (9, 3, 20) and r.consistency.count == 8
    assert r.p_position == pytest.approx(sps.binomtest(9, 12).pvalue) and r.preferred == "first"
    d = r.to_dict()
    assert d["n_first"] == 9 and d["n_second"] == 3 and d["p_position"] == r.p_position


def test_noisy_judge_without_bias_loses_consistency_but_not_the_sign_test():
    """A judge that answers at random on 20% of calls: consistency near 0.82, first and second
    wins alike; the sign test stays quiet at about its nominal rate."""
    rng = np.random.default_rng(3)
    alarms, low = 0, 0
    for _ in range(400):
        truth = rng.random(100) < 0.5  # which answer is better
        calls = []
        for swapped in (False, True):
            right = np.where(truth != swapped, "A", "B")
            noise = rng.random(100) < 0.2
            calls.append(np.where(noise, np.where(rng.random(100) < 0.5, "A", "B"), right))
        r = position_consistency(list(calls[0]), list(calls[1]))
        alarms += r.p_position < 0.05
        low += r.consistency.value < 0.85
    assert alarms / 400 <= 0.06 and low / 400 >= 0.6  # consistency 0.9^2 + 0.1^2 = 0.82 on average


# --------------------------------------------------------------------------- TOST
def test_equivalence_test_is_two_one_sided_t_tests():
    from pytest_judgerel.stats import equivalence_test

    d = np.random.default_rng(4).normal(0.01, 0.1, 60)
    res = equivalence_test(d, 0.05, method="t")
    lower = sps.ttest_1samp(d, -0.05, alternative="greater").pvalue
    upper = sps.ttest_1samp(d, 0.05, alternative="less").pvalue
    assert res.p_lower == pytest.approx(lower, rel=1e-10) and res.p_upper == pytest.approx(upper, rel=1e-10)
    assert res.p == max(lower, upper)
    half = sps.t.ppf(0.95, 59) * d.std(ddof=1) / math.sqrt(60)
    assert (res.ci_low, res.ci_high) == pytest.approx((d.mean() - half, d.mean() + half))
    assert res.equivalent == (-0.05 < res.ci_low and res.ci_high < 0.05) == (res.p < 0.05)
    one = equivalence_test(d, 0.05, two_sided=False, method="t")
    assert one.p_lower is None and one.p == pytest.approx(upper, rel=1e-10)


def test_equivalence_test_error_rate_at_the_margin():
    """A true shift exactly at the margin is declared equivalent at most alpha of the time."""
    from pytest_judgerel.stats import equivalence_test

    rng = np.random.default_rng(8)
    hits = sum(equivalence_test(rng.normal(0.05, 0.1, 40), 0.05).equivalent for _ in range(2000))
    assert hits / 2000 <= 0.05 + 0.01


def test_equivalence_test_bad_input():
    from pytest_judgerel.stats import equivalence_test

    with pytest.raises(ReliabilityError, match="margin"):
        equivalence_test([0.1, 0.2], 0.0)
    with pytest.raises(ReliabilityError, match="alpha"):
        equivalence_test([0.1, 0.2], 0.1, alpha=0.5)
    with pytest.raises(ReliabilityError, match="at least 2"):
        equivalence_test([0.1], 0.1)
    with pytest.raises(ReliabilityError, match="method"):
        equivalence_test([0.1, 0.2], 0.1, method="z")
    with pytest.raises(ReliabilityError, match="bound"):
        equivalence_test([0.1, 0.2], 0.1, bound=0.05)
    with pytest.raises(ReliabilityError, match="exceeds bound"):
        equivalence_test([0.1, 2.0], 0.1, bound=1.0)
    const = equivalence_test([0.01, 0.01, 0.01], 0.05)  # no spread, no bound: nothing shown
    assert not const.equivalent and const.sd == 0.0 and const.p == 1.0 and const.method == "none"


def test_equivalence_test_skewed_differences_keep_alpha():
    """A bonus of +0.6 for 1 item in 12 (true shift 0.05 = the margin): plain t says
    "equivalent" 11.5% of the time at n = 60, the default (Hall + bootstrap-t) at most alpha."""
    from pytest_judgerel.stats import equivalence_test

    rng = np.random.default_rng(31)
    data = [0.6 * (rng.random(60) < 1 / 12) for _ in range(600)]
    robust = np.mean([equivalence_test(d, 0.05, two_sided=False, n_boot=500).equivalent for d in data])
    plain = np.mean([equivalence_test(d, 0.05, two_sided=False, method="t").equivalent for d in data])
    assert robust <= 0.05 + 0.01 and plain > 0.08


def test_equivalence_test_robust_is_at_least_as_strict_as_each_part_and_inverts_its_interval():
    from pytest_judgerel.stats import equivalence_test

    rng = np.random.default_rng(3)
    for _ in range(50):
        d = rng.exponential(0.1, 30) - 0.1 + rng.uniform(-0.05, 0.05)
        res, hall = equivalence_test(d, 0.08), equivalence_test(d, 0.08, method="hall")
        assert res.p >= hall.p and res.ci_high >= hall.ci_high and res.ci_low <= hall.ci_low
        assert res.equivalent == (-0.08 < res.ci_low and res.ci_high < 0.08) == (res.p < 0.05)
        assert hall.equivalent == (-0.08 < hall.ci_low and hall.ci_high < 0.08)
        assert res.skewness == pytest.approx(sps.skew(d) * (29 / 30) ** 1.5)  # m3 / s^3, s with ddof 1
    # Hall's correction is Johnson's t to first order: without skew it is Student's t
    d = np.array([-0.02, 0.0, 0.02] * 10)
    assert equivalence_test(d, 0.05, method="hall").p == pytest.approx(equivalence_test(d, 0.05, method="t").p)


def test_equivalence_test_without_spread():
    """All-zero differences are not evidence of equivalence unless the support is bounded: then the
    exact bound ((bound - margin) / (bound - c))^n; a constant on the margin is never equivalent."""
    from pytest_judgerel.stats import equivalence_test

    zeros = [0.0] * 20
    assert not equivalence_test(zeros, 0.05).equivalent  # no spread is no evidence (p is not 0)
    res = equivalence_test(zeros, 0.05, bound=1.0)
    assert res.method == "exact" and res.p_upper == pytest.approx(0.95 ** 20) and not res.equivalent
    assert res.p_lower == pytest.approx(0.95 ** 20)
    assert equivalence_test([0.0] * 60, 0.05, bound=1.0).equivalent  # 0.95^60 = 0.046
    shifted = equivalence_test([0.02] * 40, 0.05, bound=1.0, two_sided=False)
    assert shifted.p == pytest.approx((0.95 / 0.98) ** 40) and shifted.p_lower is None
    for c in (0.05, 0.07):  # a constant shift on or past the margin: never equivalent
        on = equivalence_test([c] * 200, 0.05, bound=1.0)
        assert on.p_upper == 1.0 and not on.equivalent
        assert not equivalence_test([-c] * 200, 0.05, bound=1.0).equivalent
    assert equivalence_test([-0.02] * 200, 0.05, bound=1.0).equivalent
    assert equivalence_test([-0.07] * 200, 0.05, bound=1.0, two_sided=False).equivalent
