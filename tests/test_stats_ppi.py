"""Prediction-powered estimates of the human-scale mean (PPI, Angelopoulos et al. 2023; PPI++,
Angelopoulos, Duchi & Zrnic 2024), pinned against independent computations."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from pytest_judgerel.errors import ReliabilityError
from pytest_judgerel.stats import HumanMean, PPIMean, paired_shift, ppi_mean, ppi_mean_by, ppi_mean_difference

# a tiny data set small enough to check by hand
F_L = [2.0, 3.0, 5.0, 4.0]        # judge on the labelled items
Y_L = [1.0, 3.0, 4.0, 4.0]        # humans on the same items
F_U = [3.0, 1.0, 4.0, 5.0, 2.0]   # judge on the unlabelled items


def _t(df, conf=0.95):
    return sps.t.ppf(0.5 + conf / 2, df)


def test_tiny_data_by_hand():
    # n = 4, N = 5. Cov(Y, f) over the labelled items: means y 3, f 3.5;
    # sum (y-3)(f-3.5) = (-2)(-1.5) + 0 + (1)(1.5) + (1)(0.5) = 5 -> cov 5/3
    # Var(f) over all 9 judge scores [2,3,5,4,3,1,4,5,2]: mean 29/9, sum of squares 109 -> (109 - 841/9)/8
    var_f = (109 - 841 / 9) / 8
    lam = (5 / 3) / ((1 + 4 / 5) * var_f)
    resid = np.array(Y_L) - lam * np.array(F_L)
    value = resid.mean() + lam * 3.0  # mean of F_U = 15/5
    var = resid.var(ddof=1) / 4 + lam ** 2 * np.var(F_U, ddof=1) / 5
    half = _t(3) * math.sqrt(var)
    res = ppi_mean(F_L, Y_L, F_U)
    assert isinstance(res, PPIMean) and res.tuned
    assert res.lam == pytest.approx(lam, rel=1e-12)
    assert res.value == pytest.approx(value, rel=1e-12)
    assert res.ci_low == pytest.approx(value - half, rel=1e-12)
    assert res.ci_high == pytest.approx(value + half, rel=1e-12)
    assert res.se == pytest.approx(math.sqrt(var), rel=1e-12)
    assert res.effective_n == pytest.approx(np.var(Y_L, ddof=1) / var, rel=1e-12)
    assert (res.n_labeled, res.n_unlabeled) == (4, 5)
    assert res.judge_bias == pytest.approx(0.5)  # mean(f - y) on the labelled items
    assert res.judge_mean == pytest.approx(29 / 9)


def test_lambda_zero_is_the_classical_t_interval():
    res = ppi_mean(F_L, Y_L, F_U, lam=0.0)
    y = np.array(Y_L)
    se = y.std(ddof=1) / 2
    lo, hi = sps.t.interval(0.95, 3, loc=y.mean(), scale=se)
    assert res.value == pytest.approx(3.0)
    assert (res.ci_low, res.ci_high) == pytest.approx((lo, hi), rel=1e-12)
    assert res.classical == HumanMean(3.0, pytest.approx(lo), pytest.approx(hi), pytest.approx(se), 4, 0.95)
    assert res.effective_n == pytest.approx(4.0)
    assert res.width_ratio == pytest.approx(1.0)
    assert not res.tuned


def test_lambda_one_is_classic_ppi():
    """Angelopoulos et al. 2023: theta = mean(f_u) + mean(y - f), var = Var(f_u)/N + Var(y - f)/n."""
    for res in (ppi_mean(F_L, Y_L, F_U, tuned=False), ppi_mean(F_L, Y_L, F_U, lam=1.0)):
        rect = np.array(Y_L) - np.array(F_L)
        assert res.value == pytest.approx(3.0 + rect.mean())
        assert res.se ** 2 == pytest.approx(np.var(F_U, ddof=1) / 5 + rect.var(ddof=1) / 4)
        assert res.lam == 1.0 and not res.tuned


def test_unbiased_whatever_the_judge_bias_and_scale():
    """A judge on another scale with an offset: the estimate stays on the human scale."""
    rng = np.random.default_rng(3)
    y = rng.normal(3.0, 1.0, 3000)
    f = 10 + 4 * y + rng.normal(0, 1.5, 3000)
    res = ppi_mean(f[:200], y[:200], f[200:])
    assert abs(res.value - y.mean()) < 3 * res.se
    assert 0.15 < res.lam < 0.3  # ~ Cov/Var = 4 / (16 + 2.25), shrunk by 1/(1 + n/N)
    assert res.width_ratio < 0.5 and res.effective_n > 600


def test_tuned_variance_never_above_classical_or_classic_ppi_on_a_bad_judge():
    rng = np.random.default_rng(5)
    y = rng.normal(0, 1, 1200)
    f = rng.normal(0, 1, 1200)  # a judge unrelated to the humans
    tuned = ppi_mean(f[:100], y[:100], f[100:])
    classic = ppi_mean(f[:100], y[:100], f[100:], tuned=False)
    human = ppi_mean(f[:100], y[:100], f[100:], lam=0)
    assert abs(tuned.lam) < 0.3
    assert classic.se > human.se  # classic PPI pays for a useless judge
    assert tuned.se < classic.se and tuned.se < 1.1 * human.se


def test_confidence_widens_the_interval():
    a, b = ppi_mean(F_L, Y_L, F_U, confidence=0.8), ppi_mean(F_L, Y_L, F_U, confidence=0.99)
    assert a.value == b.value and b.ci_high - b.ci_low > a.ci_high - a.ci_low
    assert (b.ci_high - b.ci_low) / (a.ci_high - a.ci_low) == pytest.approx(_t(3, 0.99) / _t(3, 0.8))


@pytest.mark.parametrize("bad, match", [
    (dict(judge_labeled=[1.0, 2.0]), "same items"),
    (dict(judge_labeled=[1, 2], human_labeled=[1, 2]), "too few human labels: 2"),
    (dict(judge_unlabeled=[3.0]), "too few unlabelled"),
    (dict(human_labeled=[1.0, float("nan"), 4.0, 4.0]), r"human_labeled has 1 missing .* index 1"),
    (dict(judge_unlabeled=[3.0, None, 2.0]), r"judge_unlabeled has 1 missing"),
    (dict(judge_labeled=[2.0, 3.0, float("inf"), 4.0]), "infinite"),
    (dict(human_labeled=[True, False, True, True]), "boolean"),
    (dict(human_labeled=["a", "b", "c", "d"]), "numeric"),
    (dict(human_labeled=np.ones((4, 2, 2))), "1-D .* or 2-D"),
    (dict(human_labeled=[[1, None], [None, None], [3, 4], [5, 6]]), r"human_labeled has 1 missing .* index 1"),
    (dict(confidence=1.0), "confidence"),
    (dict(lam=float("nan")), "lam"),
])
def test_bad_input_errors_name_the_cause(bad, match):
    kw = dict(judge_labeled=F_L, human_labeled=Y_L, judge_unlabeled=F_U)
    kw.update(bad)
    with pytest.raises(ReliabilityError, match=match):
        ppi_mean(**kw)


def test_items_by_raters_or_repeats_are_averaged_per_item():
    from pytest_judgerel.ratings import Ratings

    humans = [[0.0, 2.0], [3.0, None], [4.0, 4.0], [3.0, 5.0]]  # item means 1, 3, 4, 4 = Y_L
    judge = Ratings.from_array(np.column_stack([F_L, F_L]))      # two repeats of the same scores
    assert ppi_mean(judge, humans, F_U) == ppi_mean(F_L, Y_L, F_U)


def test_constant_judge_cannot_be_tuned():
    with pytest.raises(ReliabilityError, match=r"same score .* \(lam=0\)"):
        ppi_mean([2, 2, 2, 2], Y_L, [2, 2, 2])
    # a fixed weight is still defined: the judge's constant cancels out
    res = ppi_mean([2, 2, 2, 2], Y_L, [2, 2, 2], lam=1.0)
    assert res.value == pytest.approx(3.0)


def test_constant_human_labels_give_no_interval():
    with pytest.raises(ReliabilityError, match=r"zero width \(every human label is 4\)"):
        ppi_mean([1, 2, 3, 4], [4, 4, 4, 4], [1, 5, 2])


def test_str_and_dict():
    res = ppi_mean(F_L, Y_L, F_U)
    d = res.to_dict()
    assert d["ci"] == [res.ci_low, res.ci_high] and d["classical"]["n"] == 4 and d["tuned"] is True
    assert "PPI++" in str(res) and "human-only" in str(res)


# ---------------------------------------------------------------------- groups
def test_by_group_equals_separate_estimates():
    rng = np.random.default_rng(1)
    y = rng.normal(3, 1, 400)
    f = y + rng.normal(0.5, 0.5, 400)
    g = np.where(np.arange(400) % 2 == 0, "x", "y")
    lab = np.arange(400) < 80
    res = ppi_mean_by(f[lab], y[lab], f[~lab], g[lab], g[~lab])
    assert list(res) == ["x", "y"]
    for name in ("x", "y"):
        m = g == name
        alone = ppi_mean(f[lab & m], y[lab & m], f[~lab & m])
        assert res[name] == alone


def test_by_group_errors():
    with pytest.raises(ReliabilityError, match=r"group\(s\) \['z'\] have unlabelled items but no human label"):
        ppi_mean_by(F_L, Y_L, F_U, ["a"] * 4, ["a"] * 4 + ["z"])
    with pytest.raises(ReliabilityError, match="group 'b': too few human labels"):
        ppi_mean_by(F_L + [1, 2], Y_L + [1, 2], F_U + [1, 2], ["a"] * 4 + ["b"] * 2, ["a"] * 5 + ["b"] * 2)
    with pytest.raises(ReliabilityError, match="groups_labeled"):
        ppi_mean_by(F_L, Y_L, F_U, ["a"] * 3, ["a"] * 5)


# ---------------------------------------------------------------------- difference
def _two_systems(seed=0, n=60, N=400):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n + N)
    ya = 3.2 + x + 0.5 * rng.normal(size=n + N)
    yb = 3.0 + x + 0.5 * rng.normal(size=n + N)
    fa = 1 + 0.8 * ya + 0.4 * rng.normal(size=n + N)
    fb = 1.3 + 0.8 * yb + 0.4 * rng.normal(size=n + N)
    return (fa[:n], ya[:n], fa[n:]), (fb[:n], yb[:n], fb[n:])


def test_difference_at_lambda_zero_is_the_paired_t_interval():
    a, b = _two_systems()
    res = ppi_mean_difference(a, b, lam=(0.0, 0.0))
    shift = paired_shift(b[1], a[1])  # after - before = a - b
    assert res.value == pytest.approx(shift.mean, rel=1e-12)
    assert (res.ci_low, res.ci_high) == pytest.approx((shift.ci_low, shift.ci_high), rel=1e-12)
    assert res.classical.value == pytest.approx(shift.mean)
    assert res.effective_n == pytest.approx(60)


def test_paired_difference_with_equal_weights_is_a_ppi_mean_of_the_differences():
    """All items shared, lambda_a = lambda_b = 1: the estimate is PPI on y_a - y_b with judge f_a - f_b."""
    a, b = _two_systems(1)
    res = ppi_mean_difference(a, b, tuned=False)
    one = ppi_mean(a[0] - b[0], a[1] - b[1], a[2] - b[2], lam=1.0)
    assert res.value == pytest.approx(one.value, rel=1e-12)
    assert res.se == pytest.approx(one.se, rel=1e-12)
    assert (res.ci_low, res.ci_high) == pytest.approx((one.ci_low, one.ci_high), rel=1e-12)
    assert res.a.value - res.b.value == pytest.approx(res.value)


def test_unpaired_difference_adds_the_variances():
    a, b = _two_systems(2)
    b = (b[0][:40], b[1][:40], b[2][:300])
    res = ppi_mean_difference(a, b, paired=False, lam=(0.7, 0.4))
    ea, eb = ppi_mean(*a, lam=0.7), ppi_mean(*b, lam=0.4)
    assert res.value == pytest.approx(ea.value - eb.value, rel=1e-12)
    assert res.se == pytest.approx(math.hypot(ea.se, eb.se), rel=1e-12)
    assert not res.paired and not res.paired_unlabeled


def test_tuned_pair_minimises_the_variance():
    """The jointly tuned (lambda_a, lambda_b) give a variance no grid point beats (on the same
    plug-in variance, with the pooled judge variances the tuning uses replaced by the exact
    per-term ones, the optimum moves by a little only)."""
    a, b = _two_systems(4, n=80, N=800)
    best = ppi_mean_difference(a, b)
    grid = [ppi_mean_difference(a, b, lam=(la, lb)).se
            for la in np.linspace(best.lam[0] - 0.3, best.lam[0] + 0.3, 7)
            for lb in np.linspace(best.lam[1] - 0.3, best.lam[1] + 0.3, 7)]
    assert best.se <= min(grid) * 1.01
    assert best.tuned


def test_pairing_uses_the_covariance():
    a, b = _two_systems(6)
    paired = ppi_mean_difference(a, b, lam=(0.5, 0.5))
    unpaired = ppi_mean_difference(a, b, paired=False, lam=(0.5, 0.5))
    assert paired.value == pytest.approx(unpaired.value)
    assert paired.se < 0.7 * unpaired.se  # the shared item difficulty cancels


def test_difference_errors():
    a, b = _two_systems()
    with pytest.raises(ReliabilityError, match="paired=True but system a has 60 labelled items and system b 59"):
        ppi_mean_difference(a, (b[0][:59], b[1][:59], b[2]))
    with pytest.raises(ReliabilityError, match="paired_unlabeled=False"):
        ppi_mean_difference(a, (b[0], b[1], b[2][:10]))
    with pytest.raises(ReliabilityError, match="system b needs .*'human_labeled' is missing"):
        ppi_mean_difference(a, {"judge_labeled": b[0], "judge_unlabeled": b[2]})
    with pytest.raises(ReliabilityError, match=r"system a: too few human labels"):
        ppi_mean_difference(([1, 2], [1, 2], [1, 2, 3]), b, paired=False)
    with pytest.raises(ReliabilityError, match="same score"):
        ppi_mean_difference(a, (np.ones(60), b[1], np.ones(400)))
    with pytest.raises(ReliabilityError, match="pair"):
        ppi_mean_difference(a, b, lam=0.5)


def test_difference_accepts_mappings():
    a, b = _two_systems()
    keys = ("judge_labeled", "human_labeled", "judge_unlabeled")
    res = ppi_mean_difference(dict(zip(keys, a)), dict(zip(keys, b)))
    assert res == ppi_mean_difference(a, b)
    assert "paired labels" in str(res) and res.to_dict()["paired"] is True


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.floats(-3, 3), st.floats(0.1, 5))
def test_shift_and_scale_of_the_judge_do_not_move_the_tuned_estimate(seed, shift, scale):
    """lambda-hat rescales with the judge, so theta is invariant to an affine change of the judge."""
    rng = np.random.default_rng(seed)
    y = rng.normal(size=40)
    f = y + rng.normal(size=40)
    base = ppi_mean(f[:10], y[:10], f[10:])
    moved = ppi_mean(shift + scale * f[:10], y[:10], shift + scale * f[10:])
    assert moved.value == pytest.approx(base.value, rel=1e-9, abs=1e-9)
    assert moved.se == pytest.approx(base.se, rel=1e-9)
    assert moved.lam == pytest.approx(base.lam / scale, rel=1e-9)


# ---------------------------------------------------------------------- resamples (p_pass)
@pytest.mark.parametrize("kw", [{}, {"tuned": False}, {"lam": 0.3}])
def test_vectorised_resamples_equal_ppi_mean_on_each_resample(kw):
    from pytest_judgerel.stats.ppi import ppi_mean_resamples

    a, _ = _two_systems(7, n=30, N=80)
    values, lows, highs = ppi_mean_resamples(*a, n_boot=5, seed=11, **kw)
    rng = np.random.default_rng(11)  # the same draws: labelled indices first, then unlabelled
    il, iu = rng.integers(0, 30, size=(5, 30)), rng.integers(0, 80, size=(5, 80))
    for b in range(5):
        one = ppi_mean(a[0][il[b]], a[1][il[b]], a[2][iu[b]], **kw)
        assert (values[b], lows[b], highs[b]) == pytest.approx((one.value, one.ci_low, one.ci_high), rel=1e-10)


def test_resamples_mark_undefined_ones():
    from pytest_judgerel.stats.ppi import ppi_mean_resamples

    # a judge that is constant except on one labelled item: some resamples leave it constant
    values, lows, _ = ppi_mean_resamples([0, 0, 0, 1], [1, 2, 3, 4], [0, 0, 0], n_boot=200, seed=0)
    assert np.isnan(values).any() and np.isfinite(values).any()
    assert np.array_equal(np.isnan(values), np.isnan(lows))


@pytest.mark.parametrize("kw", [{}, {"tuned": False}, {"lam": 0.3}])
def test_rows_with_shared_labelled_items_equal_ppi_mean_row_by_row(kw):
    """The sequential human-mean look's completions: the same labelled items in every row
    (broadcast), a different unlabelled set per row, undefined rows NaN as ppi_mean raises."""
    from pytest_judgerel.stats.interval import check_confidence
    from pytest_judgerel.stats.ppi import _estimates_by_row, _lam_arg

    a, _ = _two_systems(3, n=25, N=60)
    rng = np.random.default_rng(5)
    stack = a[2][rng.integers(0, 60, size=(6, 60))]
    stack[5] = 2.0  # a constant unlabelled set: defined unless the judge is constant overall
    values, lows, highs = _estimates_by_row(a[0][None, :], a[1][None, :], stack, check_confidence(0.9),
                                            kw.get("tuned", True), _lam_arg(kw.get("lam")))
    for b in range(6):
        one = ppi_mean(a[0], a[1], stack[b], confidence=0.9, **kw)
        assert (values[b], lows[b], highs[b]) == pytest.approx((one.value, one.ci_low, one.ci_high), rel=1e-10)


def test_rows_are_undefined_exactly_where_ppi_mean_raises():
    from pytest_judgerel.stats.ppi import _estimates_by_row

    f, y = np.full(5, 1.0), np.array([1.0, 2, 3, 4, 5])
    stack = np.array([[1.0, 1, 1], [1.0, 2, 1]])  # row 0: a constant judge (raises when tuning)
    values, lows, _ = _estimates_by_row(f[None, :], y[None, :], stack, 0.95, True, None)
    with pytest.raises(ReliabilityError, match="same score"):
        ppi_mean(f, y, stack[0])
    assert np.isnan(values[0]) and np.isnan(lows[0])
    assert values[1] == pytest.approx(ppi_mean(f, y, stack[1]).value, rel=1e-12)
