"""The ICC rule's prior on the repeat offsets: centred at "no offsets" with a few
pseudo-df, it lifts a good judge's P(pass at cap) at 2 repeats, still charges offsets that the
data show, and 0 pseudo-df is the flat-prior rule."""

import math

import numpy as np
import pytest

from pytest_judgerel.errors import ReliabilityError
from pytest_judgerel.stats.sequential import OFFSET_PRIOR_DF, _offsets_mean_square, icc_sequential_look

CAP = 10


def _judge(seed, rho, n=40, k=CAP, offsets=0.0):
    rng = np.random.default_rng(seed)
    return (math.sqrt(rho) * rng.normal(size=(n, 1)) + math.sqrt(1 - rho) * rng.normal(size=(n, k))
            + math.sqrt(offsets) * rng.normal(size=(1, k)))


def test_the_prior_keeps_the_offsets_tail_finite_with_two_repeats():
    rng = np.random.default_rng(0)
    ems_e = np.full(200_000, 0.2)
    flat = _offsets_mean_square(0.2, 1, ems_e, 0.0, rng)         # SS_c / chi2(1): no finite mean
    prior = _offsets_mean_square(0.2, 1, ems_e, OFFSET_PRIOR_DF, rng)
    assert np.quantile(flat, 0.99) > 1000 * 0.2
    assert np.quantile(prior, 0.99) < 200 * 0.2
    # the scaled-inverse-chi-square's median (SS_c + nu0 EMS_e) / chi2_0.5(df + nu0)
    from scipy.stats import chi2

    expected = (0.2 + OFFSET_PRIOR_DF * 0.2) / chi2.ppf(0.5, 1 + OFFSET_PRIOR_DF)
    assert np.median(prior) == pytest.approx(expected, rel=0.02)


def test_the_data_outweigh_the_prior_as_repeats_come_in():
    rng = np.random.default_rng(1)
    ems_e = np.full(100_000, 0.2)
    ssc, df = 9 * 2.0, 9                                            # 10 repeats whose mean square is 2.0
    draws = _offsets_mean_square(ssc, df, ems_e, OFFSET_PRIOR_DF, rng)
    assert 1.2 < np.median(draws) < 2.0


def test_a_good_judge_reads_higher_at_two_repeats_than_under_the_flat_prior():
    lifts = []
    for seed in range(6):
        x = _judge(seed, 0.85)[:, :2]
        flat = icc_sequential_look(x, threshold=0.7, cap=CAP, offset_prior_df=0, n_sim=400)
        prior = icc_sequential_look(x, threshold=0.7, cap=CAP, n_sim=400)
        lifts.append(prior.p_pass_at_cap - flat.p_pass_at_cap)
    assert np.mean(lifts) > 0.03 and min(lifts) > -0.02


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_offsets_the_data_show_still_count(seed):
    x = _judge(seed, 0.85)[:, :4] + np.array([0.0, 0.8, -0.8, 0.5])  # a judge 0.85 reliable but for clear offsets
    look = icc_sequential_look(x, threshold=0.7, cap=CAP)
    assert look.observed < 0.7 and look.decision != "pass" and look.p_pass_at_cap <= 0.1


def test_offset_prior_df_is_checked():
    x = _judge(4, 0.8)[:, :3]
    with pytest.raises(ReliabilityError, match="offset_prior_df"):
        icc_sequential_look(x, threshold=0.7, cap=CAP, offset_prior_df=-1)
    with pytest.raises(ReliabilityError, match="offset_prior_df"):
        icc_sequential_look(x, threshold=0.7, cap=CAP, offset_prior_df=float("nan"))
