"""Judge-error-corrected pass rate (Lee et al. 2025, arXiv:2511.21140)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_judgerel.errors import ReliabilityError
from pytest_judgerel.stats import JudgeCalibration, corrected_pass_rate


def _pairs(tn, fp, tp, fn):
    """Calibration pairs (judge verdict, human label) with the given confusion counts."""
    return [(False, False)] * tn + [(True, False)] * fp + [(True, True)] * tp + [(False, True)] * fn


def test_issue_example():
    # specificity 9/10, sensitivity 8/10; observed 0.7: (0.7 + 0.9 - 1) / (0.9 + 0.8 - 1) = 0.6 / 0.7
    res = corrected_pass_rate(70, 100, calibration=_pairs(tn=9, fp=1, tp=8, fn=2))
    assert res.value == pytest.approx(0.857142857142857, abs=1e-12)
    assert round(res.value, 3) == 0.857
    assert res.observed == 0.7 and res.unclipped == res.value
    assert res.calibration == JudgeCalibration(0.9, 0.8, 10, 10)


def test_interval_by_hand():
    """Lee et al.'s interval (interval="lee"): the smoothed plug-in interval written out step by step for p = 0.7, n = 100, q0 = 0.9
    (m0 = 10), q1 = 0.8 (m1 = 10), 95%."""
    z = 1.959963984540054
    p_s = (70 + z * z / 2) / (100 + z * z)          # 0.69240...
    q0_s, q1_s = (9 + 1) / 12, (8 + 1) / 12          # 0.8333, 0.75
    n_s, m0_s, m1_s = 100 + z * z, 12, 12
    den = q0_s + q1_s - 1                            # 0.58333
    th = (p_s + q0_s - 1) / den
    v0, v1 = q0_s * (1 - q0_s) / m0_s, q1_s * (1 - q1_s) / m1_s
    shift = 2 * z * z * (th * v1 - (1 - th) * v0)
    se = math.sqrt(p_s * (1 - p_s) / n_s + (1 - th) ** 2 * v0 + th ** 2 * v1) / den
    lo, hi = max(0.0, th + shift - z * se), min(1.0, th + shift + z * se)
    res = corrected_pass_rate(70, 100, calibration=JudgeCalibration(0.9, 0.8, 10, 10), interval="lee")
    assert res.ci == pytest.approx((lo, hi), abs=1e-12)
    assert hi == 1.0  # ten calibration items per label leave the upper end open


def test_bigger_calibration_set_narrows_the_interval():
    small = corrected_pass_rate(700, 1000, calibration=JudgeCalibration(0.9, 0.8, 20, 20))
    large = corrected_pass_rate(700, 1000, calibration=JudgeCalibration(0.9, 0.8, 2000, 2000))
    assert small.value == large.value
    assert (large.ci_high - large.ci_low) < (small.ci_high - small.ci_low) / 3


def test_coverage_with_a_known_truth():
    """Simulation: true pass rate 0.6, judge specificity 0.85, sensitivity 0.8; test set of 300,
    calibration sets of 100 + 100.  The 95% interval must cover 0.6 about 95% of the time."""
    rng = np.random.default_rng(2025)
    theta, q0, q1, n, m0, m1 = 0.6, 0.85, 0.8, 300, 100, 100
    hits = 0
    reps = 1500
    for _ in range(reps):
        truth = rng.random(n) < theta
        judged = np.where(truth, rng.random(n) < q1, rng.random(n) >= q0)
        cal = JudgeCalibration(float((rng.random(m0) < q0).mean()), float((rng.random(m1) < q1).mean()), m0, m1)
        res = corrected_pass_rate(int(judged.sum()), n, calibration=cal)
        hits += res.ci_low <= theta <= res.ci_high
    coverage = hits / reps
    assert 0.92 <= coverage <= 0.98, coverage


def test_naive_rate_is_biased_and_the_correction_is_not():
    """Averaged over many simulated test sets the corrected estimate centres on the truth."""
    rng = np.random.default_rng(7)
    theta, q0, q1, n = 0.3, 0.7, 0.95, 2000
    naive, corrected = [], []
    for _ in range(200):
        truth = rng.random(n) < theta
        judged = np.where(truth, rng.random(n) < q1, rng.random(n) >= q0)
        naive.append(judged.mean())
        corrected.append(corrected_pass_rate(int(judged.sum()), n, calibration=JudgeCalibration(q0, q1, 500, 500)).value)
    expected_naive = q1 * theta + (1 - q0) * (1 - theta)  # 0.495
    assert np.mean(naive) == pytest.approx(expected_naive, abs=0.01)
    assert np.mean(corrected) == pytest.approx(theta, abs=0.01)


def test_no_better_than_chance_is_a_clear_error():
    with pytest.raises(ReliabilityError, match="no better than chance.*<= 1"):
        corrected_pass_rate(5, 10, calibration=JudgeCalibration(0.5, 0.5, 10, 10))
    with pytest.raises(ReliabilityError, match="no better than chance"):
        corrected_pass_rate(5, 10, calibration=_pairs(tn=3, fp=7, tp=6, fn=4))  # 0.3 + 0.6


def test_clipping_keeps_value_inside_its_interval():
    # observed 0.05 is below what this judge reports for a system that passes nothing (1 - q0 = 0.1)
    res = corrected_pass_rate(5, 100, calibration=JudgeCalibration(0.9, 0.9, 50, 50))
    assert res.unclipped < 0 and res.value == 0.0 and res.ci_low == 0.0 <= res.ci_high
    high = corrected_pass_rate(100, 100, calibration=JudgeCalibration(0.9, 0.8, 50, 50))
    assert high.unclipped > 1 and high.value == 1.0 == high.ci_high


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
       st.integers(1, 60), st.integers(1, 60), st.data())
def test_low_value_high_always_ordered_and_inside_unit_interval(pn, m0, m1, data):
    passed, n = pn
    tn = data.draw(st.integers(0, m0))
    tp = data.draw(st.integers(0, m1))
    if tn / m0 + tp / m1 <= 1:
        with pytest.raises(ReliabilityError):
            corrected_pass_rate(passed, n, calibration=JudgeCalibration(tn / m0, tp / m1, m0, m1))
        return
    res = corrected_pass_rate(passed, n, calibration=JudgeCalibration(tn / m0, tp / m1, m0, m1))
    assert 0.0 <= res.ci_low <= res.value <= res.ci_high <= 1.0
    assert all(math.isfinite(v) for v in (res.ci_low, res.value, res.ci_high))


def test_verdict_sequences_and_labels():
    res = corrected_pass_rate([True, "pass", 1, 0, "fail", False, np.bool_(True), 1.0], calibration=_pairs(9, 1, 8, 2))
    assert (res.passed, res.n) == (5, 8)  # True, "pass", 1, np.True_, 1.0
    with pytest.raises(ReliabilityError, match="pass/fail"):
        corrected_pass_rate([True, "maybe"], calibration=_pairs(9, 1, 8, 2))
    with pytest.raises(ReliabilityError, match="needs n"):
        corrected_pass_rate(3, calibration=_pairs(9, 1, 8, 2))
    with pytest.raises(ReliabilityError, match="0..n"):
        corrected_pass_rate(12, 10, calibration=_pairs(9, 1, 8, 2))


def test_calibration_needs_both_labels():
    with pytest.raises(ReliabilityError, match="items the humans failed and items they passed"):
        JudgeCalibration.from_pairs([(True, True), (False, True)])
    with pytest.raises(ReliabilityError, match="n_negative"):
        JudgeCalibration(0.9, 0.8, 0, 10)
    with pytest.raises(ReliabilityError, match="specificity"):
        JudgeCalibration(1.2, 0.8, 10, 10)


def _score_statistic(theta0, p, q0, q1, n, m0, m1):
    """The score interval's test statistic written out without numpy: the continuity-corrected
    r = p - (1 - q0)(1 - theta0) - q1 theta0 over its sd at the H0-constrained proportions."""
    g = (1.0, 1.0 - theta0, -theta0)
    x, sizes = (p, q0, q1), (n, m0, m1)
    r = p - (1 - q0) * (1 - theta0) - q1 * theta0
    cc = 0.25 / n + (1 - theta0) * 0.25 / m0 + theta0 * 0.25 / m1  # a quarter count (half is too wide)
    r = math.copysign(max(0.0, abs(r) - cc), r)

    def variances(pt):
        vs = [min(max(v, 0.5 / s), 1 - 0.5 / s) for v, s in zip(pt, sizes)]
        return [v * (1 - v) / s for v, s in zip(vs, sizes)]

    pt = x
    for _ in range(3):
        var = variances(pt)
        w = sum(gi * gi * vi for gi, vi in zip(g, var))
        pt = [min(1.0, max(0.0, xi - vi * gi * r / w)) for xi, vi, gi in zip(x, var, g)]
    return r / math.sqrt(sum(gi * gi * vi for gi, vi in zip(g, variances(pt))))


def test_score_interval_limits_are_where_the_test_statistic_reaches_z():
    z = 1.959963984540054
    res = corrected_pass_rate(150, 300, calibration=JudgeCalibration(0.7, 0.95, 100, 100))
    assert res.value == pytest.approx((0.5 + 0.7 - 1) / 0.65)
    assert 0 < res.ci_low < res.value < res.ci_high < 1
    assert _score_statistic(res.ci_low, 0.5, 0.7, 0.95, 300, 100, 100) == pytest.approx(z, abs=1e-8)
    assert _score_statistic(res.ci_high, 0.5, 0.7, 0.95, 300, 100, 100) == pytest.approx(-z, abs=1e-8)
    lee = corrected_pass_rate(150, 300, calibration=JudgeCalibration(0.7, 0.95, 100, 100), interval="lee")
    assert lee.value == res.value and lee.ci != res.ci


def test_the_lower_tail_with_a_lenient_judge_stays_at_its_nominal_share():
    """Lenient judge (q0 = 0.7, q1 = 0.95) at a true rate of 0.3, where Lee et al.'s lower limit
    exceeds the truth about 3% of the time; the score interval keeps it at or below 2.5%."""
    rng = np.random.default_rng(5)
    theta, q0, q1, n, m0, m1, reps = 0.3, 0.7, 0.95, 300, 100, 100, 1500
    passed = rng.binomial(n, q1 * theta + (1 - q0) * (1 - theta), reps)
    tn, tp = rng.binomial(m0, q0, reps), rng.binomial(m1, q1, reps)
    below = above = 0
    for k, a, b in zip(passed, tn, tp):
        res = corrected_pass_rate(int(k), n, calibration=JudgeCalibration(a / m0, b / m1, m0, m1))
        below += res.ci_low > theta
        above += res.ci_high < theta
    assert below / reps <= 0.025 and above / reps <= 0.025, (below, above)
    assert below + above >= 10  # not vacuously wide: about 2-4% of intervals miss in all


def test_an_interval_that_misses_the_clipped_estimate_is_widened_to_it():
    """One calibration item the judge got right, 20 test items: Lee's smoothed interval ends at
    0.045, below the estimate 0.05; the reported interval is widened to contain it."""
    from pytest_judgerel.stats.pass_rate import _lee_interval

    raw_low, raw_high = _lee_interval(1 / 20, 1.0, 1.0, 20, 1, 30, 1.959963984540054)
    assert raw_high < 0.05
    res = corrected_pass_rate(1, 20, calibration=JudgeCalibration(1.0, 1.0, 1, 30), interval="lee")
    assert res.value == pytest.approx(0.05) and res.ci_low == raw_low and res.ci_high == res.value


def test_unknown_interval_method_is_refused():
    with pytest.raises(ReliabilityError, match="interval must be one of"):
        corrected_pass_rate(5, 10, calibration=JudgeCalibration(0.9, 0.9, 10, 10), interval="wald")


def test_chance_level_calibration_says_what_calibration_set_is_needed():
    """A calibration set drawn at random from a good system's outputs holds few failed
    items; the error names the two group sizes and asks for a set stratified by human label."""
    pairs = [(True, False)] * 3 + [(False, False)] * 1 + [(True, True)] * 35 + [(False, True)] * 15
    with pytest.raises(ReliabilityError) as exc:
        corrected_pass_rate(80, 100, calibration=pairs)
    msg = str(exc.value)
    assert "4 item(s) the humans failed and 50 they passed" in msg and "at least 30 items of each" in msg
    assert "stratified by human label" in msg
