"""The ICC rule reads the repeats' offsets from the observed repeats and the offsets probe together:
draws of the all-items posterior reweighted by the probe's likelihood (stats.sequential)."""

import math

import numpy as np
import pytest

from pytest_judgerel.stats.sequential import (
    OFFSET_PRIOR_DF,
    PROBE_CANDIDATES,
    _offsets_mean_square,
    _offsets_posterior,
    _probe_evidence,
    _probe_reweighted,
    icc_sequential_look,
    repeats_schedule,
)


def _all_items_draws(ssc, r, s_e, size, seed):
    rng = np.random.default_rng(seed)
    return _offsets_mean_square(ssc, r - 1, np.full(size * PROBE_CANDIDATES, s_e), OFFSET_PRIOR_DF, rng)


def test_a_probe_without_information_leaves_the_all_items_posterior():
    """Weights from a likelihood that is flat (no df): the resampled draws follow the candidates."""
    n, s_e, size = 80, 0.3, 20_000
    ems = _all_items_draws(0.5, 2, s_e, size, 0).reshape(size, PROBE_CANDIDATES)
    picked = _probe_reweighted(ems, np.full(size, s_e), n, 8, 0.0, 0, np.random.default_rng(1))
    plain = np.maximum(0.0, (ems - s_e) / n).ravel()  # every candidate: the all-items posterior
    for q in (0.5, 0.9, 0.99):
        assert np.quantile(picked, q) == pytest.approx(np.quantile(plain, q), rel=0.1, abs=1e-4)
    assert np.mean(picked == 0) == pytest.approx(np.mean(plain == 0), abs=0.02)


def test_the_resampled_draws_follow_the_posterior_given_both():
    """Against the posterior on a grid: scaled-inverse-chi-square (prior + r - 1 df) for EMS_c times the
    probe's likelihood (s_e + m s_b)^(-df/2) exp(-SS / (2 (s_e + m s_b)))."""
    n, r, m, s_e, ssc, ss, df, size = 60, 2, 8, 0.4, 3.0, 4.0, 5, 40_000
    ems = _all_items_draws(ssc, r, s_e, size, 2).reshape(size, PROBE_CANDIDATES)
    picked = _probe_reweighted(ems, np.full(size, s_e), n, m, ss, df, np.random.default_rng(3))
    grid = np.exp(np.linspace(math.log(1e-3), math.log(1e4), 400_000))
    nu, scale = r - 1 + OFFSET_PRIOR_DF, ssc + OFFSET_PRIOR_DF * s_e
    s_b = np.maximum(0.0, (grid - s_e) / n)
    var = s_e + m * s_b
    log_post = (-(nu / 2 + 1) * np.log(grid) - scale / (2 * grid)
                - df / 2 * np.log(var) - ss / (2 * var) + np.log(grid))  # + log E: the grid is in log E
    w = np.exp(log_post - log_post.max())
    cdf = np.cumsum(w) / w.sum()
    assert np.mean(picked == 0) == pytest.approx(cdf[np.searchsorted(grid, s_e)], abs=0.02)
    for q in (0.7, 0.9, 0.99):
        exact = s_b[np.searchsorted(cdf, q)]
        assert np.quantile(picked, q) == pytest.approx(exact, rel=0.08)


def test_a_probe_that_shows_no_offsets_cuts_the_tail_below_either_source_alone():
    """Two repeats of 100 items without offsets and a 10-item probe of 7 repeats without them: the
    combined posterior's 99% quantile of s_b lies under the all-items one's and the probe-only one's."""
    rng = np.random.default_rng(4)
    x = rng.normal(size=(100, 1)) + 0.5 * rng.normal(size=(100, 7))
    s_e = np.full(20_000, 0.25)
    cols = x[:, :2].mean(axis=0)
    ssc = 100 * float(((cols - cols.mean()) ** 2).sum())
    both = _offsets_posterior(ssc, 100, 2, 7, s_e, OFFSET_PRIOR_DF, np.random.default_rng(5), x[:10]).s_b
    alone = _offsets_posterior(ssc, 100, 2, 7, s_e, OFFSET_PRIOR_DF, np.random.default_rng(5), None).s_b
    cp = x[:10].mean(axis=0)
    probe_only = np.maximum(0.0, (_offsets_mean_square(10 * float(((cp - cp.mean()) ** 2).sum()), 6, s_e,
                                                       OFFSET_PRIOR_DF, np.random.default_rng(6)) - s_e) / 10)
    top = np.quantile(both, 0.99)
    assert top < np.quantile(alone, 0.99) and top < np.quantile(probe_only, 0.99)


def test_the_probes_evidence_is_its_new_columns_and_their_contrast():
    probe = np.array([[1.0, 2.0, 4.0, 6.0], [3.0, 2.0, 6.0, 4.0]])  # column means 2, 2, 5, 5
    ss, df = _probe_evidence(probe, 2)
    assert df == 2 and ss == pytest.approx(2 * 0.0 + 2 * 3.0 ** 2 / (1 / 2 + 1 / 2))


def test_the_look_with_the_probe_is_reproducible_under_its_seed():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(60, 1)) + 0.6 * rng.normal(size=(60, 6)) + 0.3 * rng.normal(size=(1, 6))
    s = repeats_schedule(6, n_items=60)
    looks = [icc_sequential_look(x[:, :3], threshold=0.6, cap=6, schedule=s, probe=x[:s.probe], seed=seed)
             for seed in (11, 11, 12)]
    assert looks[0].p_pass_at_cap == looks[1].p_pass_at_cap and looks[0].n_sim == looks[1].n_sim
    assert 0.0 < looks[0].p_pass_at_cap < 1.0 and looks[0].probe_items == s.probe
