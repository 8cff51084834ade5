"""Vectorised ICC and verdict stability (p_pass)."""

import time

import numpy as np
import pytest

from pytest_judgerel.errors import ReliabilityError
from pytest_judgerel.stats import FORMS, icc, icc_statistic, icc_values, verdict_stability


def _matrix(rng, n=40, k=5, signal=1.2, bias=0.0):
    return rng.normal(size=(n, 1)) * signal + rng.normal(size=(n, k)) + rng.normal(size=(1, k)) * bias


# --------------------------------------------------------------------------- icc_values
@pytest.mark.parametrize("form", FORMS)
def test_batch_icc_equals_stats_icc_on_single_matrices(form):
    rng = np.random.default_rng(11)
    checked = 0
    for t in range(60):
        n, k = int(rng.integers(3, 30)), int(rng.integers(2, 7))
        x = _matrix(rng, n, k, signal=rng.uniform(0, 3), bias=rng.uniform(0, 2))
        if t % 4 == 0:
            x = np.round(x)  # ties, as on a Likert scale
        if t % 9 == 0:
            x = x + 1e6  # offset: the centred computation must not lose digits
        try:
            expected = icc(x, form).value
        except ReliabilityError:
            continue
        assert icc_values(x, form) == pytest.approx(expected, abs=1e-12, rel=0)
        checked += 1
    assert checked > 40


def test_batch_icc_on_a_stack_matches_each_matrix():
    rng = np.random.default_rng(2)
    stack = np.stack([_matrix(rng, 12, 3) for _ in range(25)])
    values = icc_values(stack, "A,1")
    assert values.shape == (25,)
    assert np.allclose(values, [icc(m, "A,1").value for m in stack], atol=1e-12, rtol=0)


def test_hand_computed_icc_a1():
    # 3 items x 2 raters; by hand: grand 3, row means 1.5 3 4.5, col means 2.667 3.333
    # SSR = 2 * (2.25 + 0 + 2.25) = 9, MSR = 4.5; SSC = 3 * 2 * (1/3)^2 = 2/3, MSC = 2/3
    # SST = 4+1+1+1+4+... = (1-3)^2+(2-3)^2+(3-3)^2+(3-3)^2+(4-3)^2+(5-3)^2 = 10; SSE = 10 - 9 - 2/3 = 1/3, MSE = 1/6
    # ICC(A,1) = (4.5 - 1/6) / (4.5 + 1/6 + 2 (2/3 - 1/6) / 3) = 4.3333 / 5.0
    x = np.array([[1.0, 2.0], [3.0, 3.0], [4.0, 5.0]])
    assert icc_values(x, "A,1") == pytest.approx((4.5 - 1 / 6) / (4.5 + 1 / 6 + 2 * (2 / 3 - 1 / 6) / 3), abs=1e-12)


DEGENERATE = [
    np.full((4, 3), 2.0),                      # no variance at all
    np.tile([1.0, 2.0, 3.0], (4, 1)),          # raters differ, items do not, no residual
    np.array([[1.0, 2.0], [2.0, 1.0], [1.0, 2.0]]),  # equal item means, residual only
    np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]),  # perfect agreement
    np.array([[1.0, 5.0], [5.0, 1.0], [1.0, 5.0], [5.0, 1.0]]),  # anti-agreement (ICC(A,k) pole side)
    np.array([[0.0, 0.0, 9.0], [0.0, 0.0, 9.0], [1.0, 1.0, 1.0]]),
]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("x", DEGENERATE, ids=range(len(DEGENERATE)))
def test_batch_icc_is_nan_where_stats_icc_raises_or_items_do_not_differ(x, form):
    items_differ = np.ptp(x.mean(axis=1)) > 0
    try:
        expected = icc(x, form).value
    except ReliabilityError:
        assert np.isnan(icc_values(x, form))
    else:
        if items_differ:
            assert icc_values(x, form) == pytest.approx(expected, abs=1e-12)
        else:  # stats.icc gives some forms a value <= 0 here; a gate on it cannot pass anyway
            assert np.isnan(icc_values(x, form)) and expected <= 0


def test_batch_icc_never_finite_where_stats_icc_raises_on_small_integer_matrices():
    rng = np.random.default_rng(0)
    for _ in range(1500):
        x = rng.integers(0, 3, size=(int(rng.integers(2, 5)), int(rng.integers(2, 4)))).astype(float)
        for form in FORMS:
            try:
                expected = icc(x, form).value
            except ReliabilityError:
                assert np.isnan(icc_values(x, form)), (form, x.tolist())
                continue
            got = icc_values(x, form)
            assert np.isnan(got) and np.ptp(x.mean(axis=1)) == 0 or got == pytest.approx(expected, abs=1e-12)


def test_icc_values_refuses_missing_and_tiny_input():
    with pytest.raises(ReliabilityError, match="complete"):
        icc_values([[1.0, np.nan], [2.0, 3.0]])
    with pytest.raises(ReliabilityError, match="at least 2"):
        icc_values([[1.0, 2.0]])


# --------------------------------------------------------------------------- p_pass
def test_statistic_on_its_threshold_gives_p_pass_near_half_and_unstable():
    rng = np.random.default_rng(5)
    for scheme in ("items", "repeats", "items+repeats"):
        ps = []
        for seed in range(12):
            x = _matrix(rng)
            observed = float(icc_values(x, "A,1"))  # the statistic as verdict_stability computes it
            assert observed == pytest.approx(icc(x, "A,1").value, abs=1e-12)
            res = verdict_stability(icc_statistic("A,1"), x, observed, resample=scheme, n_boot=600, seed=seed)
            assert res.passed and res.observed == observed
            assert res.unstable, (scheme, res.p_pass)
            ps.append(res.p_pass)
        assert 0.38 <= float(np.mean(ps)) <= 0.6, (scheme, ps)


def test_far_from_the_threshold_p_pass_is_near_zero_or_one():
    x = _matrix(np.random.default_rng(8))
    value = icc(x, "A,1").value
    low = verdict_stability(icc_statistic("A,1"), x, value - 0.4, n_boot=500)
    high = verdict_stability(icc_statistic("A,1"), x, value + 0.4, n_boot=500)
    assert low.p_pass >= 0.99 and not low.unstable and low.passed
    assert high.p_pass <= 0.01 and not high.unstable and not high.passed


def test_direction_max_mirrors_min():
    x = _matrix(np.random.default_rng(9))
    t = icc(x, "A,1").value - 0.05
    mn = verdict_stability(icc_statistic("A,1"), x, t, "min", n_boot=400, seed=3)
    mx = verdict_stability(icc_statistic("A,1"), x, t, "max", n_boot=400, seed=3)
    # same resamples; a tie with the threshold is measure-zero for continuous data
    assert mn.p_pass + mx.p_pass == pytest.approx(1.0)


def test_p_pass_matches_the_share_computed_by_hand_with_the_same_generator():
    """Independent re-implementation of the 'items' scheme with the documented generator."""
    x = _matrix(np.random.default_rng(12), n=15, k=3)
    res = verdict_stability(icc_statistic("C,1"), x, 0.5, n_boot=300, seed=42)
    rng = np.random.default_rng(42)
    rows = rng.integers(0, 15, size=(300, 15))
    wins = sum(icc(x[r], "C,1").value >= 0.5 for r in rows)
    assert res.p_pass == wins / 300


def test_seeded_and_recorded():
    x = _matrix(np.random.default_rng(1))
    a = verdict_stability(icc_statistic("A,1"), x, 0.5, n_boot=200, seed=7)
    b = verdict_stability(icc_statistic("A,1"), x, 0.5, n_boot=200, seed=7)
    assert a == b and a.n_boot == 200 and a.seed == 7
    d = a.to_dict()
    assert d["n_boot"] == 200 and d["seed"] == 7 and d["p_pass"] == a.p_pass and d["statistic"] == "ICC(A,1)"


def test_callable_statistic_on_two_matrices_resampled_together():
    """A statistic of judge and human ratings: items stay paired across both."""
    rng = np.random.default_rng(4)
    truth = rng.normal(size=30)
    judge = truth[:, None] + rng.normal(scale=0.3, size=(30, 3))
    human = truth[:, None] + rng.normal(scale=0.3, size=(30, 2))

    def corr(j, h):
        return np.corrcoef(j.mean(axis=1), h.mean(axis=1))[0, 1]

    res = verdict_stability(corr, (judge, human), 0.5, n_boot=200, repeats_in=(0,))
    assert res.p_pass == 1.0  # with pairing kept the correlation stays high
    rng2 = np.random.default_rng(0)
    scrambled = verdict_stability(lambda j, h: corr(j, h[rng2.permutation(30)]), (judge, human), 0.5, n_boot=200)
    assert scrambled.p_pass < 0.2  # sanity: unpaired data would fail


def test_a_tuple_of_one_score_per_item_vectors():
    rng = np.random.default_rng(10)
    a = rng.normal(size=25)
    b = a + rng.normal(scale=0.5, size=25)
    res = verdict_stability(lambda x, y: np.corrcoef(x[:, 0], y[:, 0])[0, 1], (a, b), 0.3, n_boot=100)
    assert res.observed == pytest.approx(np.corrcoef(a, b)[0, 1]) and res.p_pass == 1.0
    with pytest.raises(ReliabilityError, match="same items"):
        verdict_stability(lambda x, y: 0.0, (a, b[:-1]), 0.3, n_boot=10)
    with pytest.raises(ReliabilityError, match="numeric"):
        verdict_stability(lambda x: 0.0, [["a", "b"], ["c", "d"]], 0.3, n_boot=10)


def test_undefined_resamples_count_as_not_passing():
    x = np.array([[1.0, 1.0]] * 9 + [[5.0, 5.0]])  # most resamples miss the one different item
    res = verdict_stability(icc_statistic("A,1"), x, 0.5, n_boot=400, seed=0)
    assert res.n_undefined > 0
    assert res.p_pass == pytest.approx(1 - res.n_undefined / 400)  # every defined resample has ICC 1


def test_ci_low_statistic_uses_the_f_interval():
    x = _matrix(np.random.default_rng(6), n=25, k=3)
    stat = icc_statistic("A,1", use="ci_low")
    assert not stat.vectorized
    assert stat(x) == pytest.approx(icc(x, "A,1").ci_low, abs=1e-12)
    res = verdict_stability(stat, x, icc(x, "A,1").ci_low, n_boot=150)
    assert 0.2 < res.p_pass < 0.8


def test_forty_items_five_repeats_thousand_resamples_is_fast():
    x = _matrix(np.random.default_rng(0))
    start = time.perf_counter()
    verdict_stability(icc_statistic("A,1"), x, 0.5, resample="items+repeats", n_boot=1000)
    assert time.perf_counter() - start < 1.0  # measured ~0.01 s; generous for a loaded CI machine


def test_missing_ratings():
    x = _matrix(np.random.default_rng(0), n=20, k=3)
    x[2, 1] = np.nan
    with pytest.raises(ReliabilityError, match="nan_policy='omit'"):
        verdict_stability(icc_statistic("A,1"), x, 0.5, n_boot=10)
    res = verdict_stability(icc_statistic("A,1"), x, 0.5, n_boot=50, nan_policy="omit")
    assert res.observed == pytest.approx(icc(x, "A,1", nan_policy="omit").value)


@pytest.mark.parametrize("kwargs, match", [
    ({"direction": "up"}, "direction"),
    ({"resample": "raters"}, "resample"),
    ({"n_boot": 0}, "n_boot"),
    ({"threshold": float("nan")}, "threshold"),
])
def test_bad_arguments(kwargs, match):
    x = _matrix(np.random.default_rng(0), n=10, k=2)
    args = {"threshold": 0.5, **kwargs}
    threshold = args.pop("threshold")
    with pytest.raises(ReliabilityError, match=match):
        verdict_stability(icc_statistic("A,1"), x, threshold, **args)


def test_undefined_observed_statistic_is_an_error():
    with pytest.raises(ReliabilityError, match="undefined on the data"):
        verdict_stability(icc_statistic("A,1"), np.ones((5, 2)), 0.5, n_boot=10)


@pytest.mark.parametrize("p, unstable", [(0.0, False), (0.05, False), (0.0500001, True), (0.5, True),
                                         (0.9499999, True), (0.95, False), (1.0, False)])
def test_unstable_band_is_open_at_both_ends(p, unstable):
    from pytest_judgerel.stats.stability import VerdictStability

    st = VerdictStability(p_pass=p, observed=0.5, passed=True, threshold=0.5, direction="min", n_boot=1000,
                          seed=0, resample="items")
    assert st.unstable is unstable and st.to_dict()["unstable"] is unstable


def _mean_statistic():
    def mean(x):
        return x.mean(axis=-2)[..., 0]

    mean.vectorized = True
    return mean


def test_predictive_p_pass_adds_the_reruns_own_noise():
    """For a mean, the rerun on new items differs from this run by two sampling errors, so the
    predictive probability is Phi(d / (sqrt(2) se)) and the bootstrap share Phi(d / se)."""
    from scipy.stats import norm

    x = np.random.default_rng(21).normal(0.0, 1.0, 400)
    x = x - x.mean() + 0.06  # observed mean 0.06, se = sd / 20
    se = x.std(ddof=1) / 20
    share = verdict_stability(_mean_statistic(), x, 0.0, resample="items", n_boot=20000, seed=1)
    pred = verdict_stability(_mean_statistic(), x, 0.0, resample="items", n_boot=20000, seed=1, predictive=True)
    assert share.p_pass == pytest.approx(norm.cdf(0.06 / se), abs=0.015)
    assert pred.p_pass == pytest.approx(norm.cdf(0.06 / (np.sqrt(2) * se)), abs=0.015)
    assert pred.predictive and not share.predictive and "predictive items resamples" in str(pred)
    assert pred.to_dict()["predictive"] is True
    again = verdict_stability(_mean_statistic(), x, 0.0, resample="items", n_boot=20000, seed=1, predictive=True)
    assert again.p_pass == pred.p_pass


@pytest.mark.parametrize("scheme", ["repeats", "items+repeats"])
def test_predictive_p_pass_over_repeats_is_less_extreme_than_the_share(scheme):
    rng = np.random.default_rng(5)
    x = _matrix(rng, 40, 4, signal=1.2)
    stat = icc_statistic("A,1")
    observed = icc(x, "A,1").value
    for thr in (observed - 0.08, observed + 0.08):
        share = verdict_stability(stat, x, thr, resample=scheme, n_boot=2000, seed=0)
        pred = verdict_stability(stat, x, thr, resample=scheme, n_boot=2000, seed=0, predictive=True)
        assert abs(pred.p_pass - 0.5) < abs(share.p_pass - 0.5)
    on = verdict_stability(stat, x, observed, resample=scheme, n_boot=2000, seed=0, predictive=True)
    assert 0.35 < on.p_pass < 0.6  # on its threshold: a coin flip (minus the ICC's small downward bias)


def test_predictive_repeats_draw_deviations_from_all_items_pooled():
    """The residual bootstrap: an item whose 3 repeats happen to agree still gets new samples
    that differ (the model's items share one within-item variance); the plain repeats
    bootstrap keeps such an item constant."""
    from pytest_judgerel.stats.stability import _draw_deviations

    dev = np.zeros((200, 4, 3))
    dev[:, 1:, :] = np.array([-1.0, 0.0, 1.0])  # item 0: no spread of its own
    rng = np.random.default_rng(0)
    own = _draw_deviations(dev, rng, pooled=False)
    pooled = _draw_deviations(dev, rng, pooled=True)
    assert (own[:, 0, :] == 0).all()
    assert pooled[:, 0, :].std() > 0.5 and set(np.unique(pooled)) <= {-1.0, 0.0, 1.0}
