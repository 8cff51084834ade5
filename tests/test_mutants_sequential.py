"""The ICC rule's offsets posterior from the probe and the observed repeats together, checked against the
model it assumes (the held-out bugs of batch 7 that the first tests let through: SQ01, a contrast scaled
by its variance instead of divided by it, and SQ06, the all-items repeats given the cap's degrees of
freedom; tools/mutation/held_out_batch7.py)."""

import math

import numpy as np
import pytest

from pytest_judgerel.stats.sequential import OFFSET_PRIOR_DF, _offsets_posterior, _probe_evidence


@pytest.mark.parametrize("r, k", [(2, 6), (3, 7), (2, 3)])
def test_the_probes_evidence_is_a_scaled_chi_square_on_its_new_columns(r, k):
    """y_ij = a_i + b_j + e_ij on m probe items: SS ~ (s_e + m s_b) chi2(k - r), by simulation (mean and
    variance of SS / (s_e + m s_b) against k - r and 2 (k - r))."""
    m, s_e, s_b, sims = 9, 0.5, 0.2, 20_000
    rng = np.random.default_rng(20261128 + 10 * r + k)
    ratios = np.empty(sims)
    for i in range(sims):
        y = (rng.normal(0, 1.0, (m, 1)) + rng.normal(0, math.sqrt(s_b), (1, k))
             + rng.normal(0, math.sqrt(s_e), (m, k)))
        ss, df = _probe_evidence(y, r)
        ratios[i] = ss / (s_e + m * s_b)
    assert df == k - r
    assert ratios.mean() == pytest.approx(k - r, rel=0.03)
    assert ratios.var() == pytest.approx(2 * (k - r), rel=0.08)


def _grid_posterior(ssc, n, r, m, s_e, ss, df):
    """P(s_b = 0) and the s_b grid with its cdf: the all-items scaled-inverse-chi-square posterior of
    EMS_c = s_e + n s_b (prior OFFSET_PRIOR_DF at s_e, r - 1 df) times the probe's likelihood."""
    grid = np.exp(np.linspace(math.log(1e-3), math.log(1e4), 400_000))
    nu, scale = r - 1 + OFFSET_PRIOR_DF, ssc + OFFSET_PRIOR_DF * s_e
    s_b = np.maximum(0.0, (grid - s_e) / n)
    var = s_e + m * s_b
    log_post = (-(nu / 2 + 1) * np.log(grid) - scale / (2 * grid) - df / 2 * np.log(var) - ss / (2 * var)
                + np.log(grid))  # the grid is uniform in log EMS_c
    w = np.exp(log_post - log_post.max())
    cdf = np.cumsum(w) / w.sum()
    return cdf[np.searchsorted(grid, s_e)], s_b, cdf


def test_the_offsets_posterior_given_the_probe_is_the_exact_one():
    """Through ``_offsets_posterior`` (2 repeats of 70 items seen, a 6-repeat cap, an 8-item probe): the
    drawn s_b follow the grid posterior given both sources, each with its own degrees of freedom."""
    n, r, cap, m, s_e, size = 70, 2, 6, 8, 0.4, 40_000
    rng = np.random.default_rng(5)
    probe = rng.normal(0, 1.0, (m, 1)) + rng.normal(0, 0.3, (1, cap)) + rng.normal(0, math.sqrt(s_e), (m, cap))
    ssc = 2.5  # the observed repeats' SS_c over all n items
    drawn = _offsets_posterior(ssc, n, r, cap, np.full(size, s_e), OFFSET_PRIOR_DF, np.random.default_rng(6),
                               probe).s_b
    ss, df = _probe_evidence(probe, r)
    at_zero, s_b, cdf = _grid_posterior(ssc, n, r, m, s_e, ss, df)
    assert np.mean(drawn == 0) == pytest.approx(at_zero, abs=0.02)
    for q in (0.5, 0.9, 0.99):
        exact = s_b[np.searchsorted(cdf, q)]
        assert np.quantile(drawn, q) == pytest.approx(exact, rel=0.1, abs=1e-4)
