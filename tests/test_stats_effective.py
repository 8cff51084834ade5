"""The effective number of independent judges, k / (1 + (k - 1) r) (Kish's design effect)."""

import itertools

import numpy as np
import pytest

from pytest_judgerel.errors import ReliabilityError
from pytest_judgerel.ratings import Ratings
from pytest_judgerel.stats import EffectiveJudges, effective_judges


def _panel(rho, k=6, n=400, seed=0):
    rng = np.random.default_rng(seed)
    t = rng.normal(3, 1, n)
    c = np.sqrt(rho) * rng.normal(size=(n, 1))
    u = np.sqrt(1 - rho) * rng.normal(size=(n, k))
    return t[:, None] + c + u, t


def test_with_gold_equals_the_mean_pairwise_pearson_of_the_errors():
    scores, t = _panel(0.3, k=4, n=50, seed=1)
    err = scores - t[:, None]
    rs = [np.corrcoef(err[:, i], err[:, j])[0, 1] for i, j in itertools.combinations(range(4), 2)]
    r = float(np.mean(rs))
    res = effective_judges(scores, t)
    assert isinstance(res, EffectiveJudges)
    assert res.mean_error_correlation == pytest.approx(r, rel=1e-12)
    assert res.value == pytest.approx(4 / (1 + 3 * r), rel=1e-12)
    assert (res.k, res.n, res.reference, res.gold_noise, res.n_omitted) == (4, 50, "human", None, 0)
    assert res.pairwise[0][1] == pytest.approx(rs[0], rel=1e-12) and res.pairwise[2][2] == 1.0


def test_known_panels():
    independent, t = _panel(0.0)
    assert effective_judges(independent, t).value == pytest.approx(6, abs=1)
    correlated, t = _panel(0.5)
    assert effective_judges(correlated, t).value == pytest.approx(6 / 3.5, abs=0.3)
    assert effective_judges(correlated, t).redundant and not effective_judges(independent, t).redundant


def test_identical_errors_are_one_judge():
    rng = np.random.default_rng(2)
    t = rng.normal(size=30)
    e = rng.normal(size=30)
    scores = np.column_stack([t + e, t + 2 * e + 1, t + 0.5 * e])  # same error, other scales and offsets
    res = effective_judges(scores, t)
    assert res.mean_error_correlation == pytest.approx(1.0)
    assert res.value == pytest.approx(1.0)
    assert res.share == pytest.approx(1 / 3)


def test_human_raters_are_averaged_and_their_noise_removed():
    """Gold = mean of m noisy raters: the shared gold error inflates r unless removed."""
    rng = np.random.default_rng(3)
    n, k, m = 3000, 6, 3
    t = rng.normal(size=n)
    scores = t[:, None] + rng.normal(size=(n, k))
    humans = t[:, None] + 0.8 * rng.normal(size=(n, m))
    res = effective_judges(scores, humans)
    assert res.gold_noise == pytest.approx(0.64 / m, rel=0.1)
    assert res.value == pytest.approx(6, abs=0.6)
    # by hand: errors against the rater mean, covariances minus the noise of that mean
    err = scores - humans.mean(axis=1)[:, None]
    noise = np.mean(humans.var(axis=1, ddof=1) / m)
    cov = np.cov(err, rowvar=False) - noise
    sd = np.sqrt(np.diag(cov))
    corr = cov / np.outer(sd, sd)
    assert res.mean_error_correlation == pytest.approx(corr[np.triu_indices(k, 1)].mean(), rel=1e-9)
    # a single gold column cannot show its noise: the independent judges look correlated
    naive = effective_judges(scores, humans.mean(axis=1))
    assert naive.gold_noise is None and naive.value < 4


def test_without_gold_against_the_leave_one_out_panel_mean():
    independent, _ = _panel(0.0, n=2000)
    res = effective_judges(independent)
    assert res.reference == "panel"
    assert res.value == pytest.approx(6, abs=1)
    # by hand: deviations from the leave-one-out mean, rescaled from -1/(k-1), negatives set to 0
    k = 6
    loo = (independent.sum(axis=1, keepdims=True) - independent) / (k - 1)
    c = np.corrcoef(independent - loo, rowvar=False)
    r_star = np.maximum((c + 1 / (k - 1)) * (k - 1) / k, 0)
    assert res.mean_error_correlation == pytest.approx(r_star[np.triu_indices(k, 1)].mean(), rel=1e-9)


def test_without_gold_a_model_family_shows():
    """Two families of three judges that err together: visible against the rest of the panel."""
    rng = np.random.default_rng(4)
    n = 2000
    t = rng.normal(size=n)
    fam = np.repeat(rng.normal(size=(n, 2)), 3, axis=1)
    scores = t[:, None] + np.sqrt(0.5) * fam + np.sqrt(0.5) * rng.normal(size=(n, 6))
    no_gold, gold = effective_judges(scores), effective_judges(scores, t)
    assert gold.value == pytest.approx(3.0, abs=0.3)   # true r = 6 of 15 pairs at 0.5 = 0.2
    assert no_gold.value < 4.0                          # the families show without gold
    assert no_gold.value >= gold.value - 0.3            # without gold it does not see less redundancy


def test_a_shared_error_is_invisible_without_gold():
    scores, t = _panel(0.5, n=2000)
    assert effective_judges(scores, t).value < 2.2
    assert effective_judges(scores).value > 5  # documented: blind to an error all judges share


def test_missing_scores_are_omitted_or_refused():
    scores, t = _panel(0.0, k=3, n=40)
    scores[5, 1] = np.nan
    t = t.copy()
    t[7] = np.nan
    res = effective_judges(scores, t)
    assert res.n == 38 and res.n_omitted == 2
    with pytest.raises(ReliabilityError, match=r"2 item\(s\) lack a judge score or the gold \(first: \[5, 7\]\)"):
        effective_judges(scores, t, nan_policy="raise")


def test_accepts_ratings():
    scores, t = _panel(0.2, k=3, n=30)
    r = Ratings.from_array(scores)
    assert effective_judges(r, t) == effective_judges(scores, t)


@pytest.mark.parametrize("scores, human, match", [
    (np.ones((10, 1)), None, "at least 2"),
    (np.random.default_rng(0).normal(size=(10, 2)), None, "at least 3 judges"),
    (np.random.default_rng(0).normal(size=(10, 3)), np.zeros(9), "human has 9 items but scores has 10"),
    (np.random.default_rng(0).normal(size=(2, 3)), None, "at least 3"),
    ([[1, 2, 3], [2, 3, 4], [3, 4, 5], [0, 1, 2]], [1, 2, 3, 0], r"judge\(s\) \[0, 1, 2\] have no error variance"),
    ([["a", "b", "c"]] * 3, None, "numeric"),
])
def test_bad_input(scores, human, match):
    with pytest.raises(ReliabilityError, match=match):
        effective_judges(scores, human)


def test_dict_and_str():
    scores, t = _panel(0.5, k=4, n=100)
    res = effective_judges(scores, t)
    d = res.to_dict()
    assert d["effective_judges"] == res.value and d["mean_error_correlation"] == res.mean_error_correlation
    assert "4 judges are worth" in str(res) and "human gold" in str(res)


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.permutations(range(4)), st.lists(st.floats(0.2, 5), min_size=4, max_size=4),
       st.lists(st.floats(-3, 3), min_size=4, max_size=4))
def test_invariant_to_judge_order_and_to_each_judges_scale(seed, order, scales, shifts):
    """Correlations ignore each judge's offset and scale of its errors and the order of the judges
    (the gold is fixed, so a judge's scores are changed by shifting and scaling its error)."""
    scores, t = _panel(0.3, k=4, n=60, seed=seed)
    err = scores - t[:, None]
    moved = t[:, None] + np.array(shifts) + err * np.array(scales)
    base = effective_judges(scores, t)
    other = effective_judges(moved[:, list(order)], t)
    assert other.value == pytest.approx(base.value, rel=1e-9)
    no_gold = effective_judges(scores[:, list(order)])
    assert no_gold.value == pytest.approx(effective_judges(scores).value, rel=1e-9)
    assert base.value >= 1 - 1e-9  # r <= 1: never fewer than one judge


def test_noisy_gold_never_reads_above_k_and_never_raises():
    """Against 3 noisy raters the gold-noise correction scatters r around 0 for
    independent judges; uncapped, k / (1 + (k - 1) r) reads up to 2,458 for 8 judges and is undefined
    below r = -1/(k - 1).  The value is capped at k and ``capped`` says so."""
    rng = np.random.default_rng(31)
    capped = 0
    for _ in range(200):
        t = rng.normal(size=50)
        res = effective_judges(t[:, None] + rng.normal(size=(50, 8)), t[:, None] + rng.normal(size=(50, 3)))
        assert res.value <= 8 and res.capped == (res.mean_error_correlation < 0)
        assert res.value == pytest.approx(8 / (1 + 7 * max(res.mean_error_correlation, 0.0)))
        capped += res.capped
        if res.capped:
            assert res.value == 8 and "capped at k" in str(res) and res.to_dict()["capped"] is True
    assert 40 < capped < 160  # about half the runs
