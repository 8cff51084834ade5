"""Statistics (TOST, verdict stability): tests written for the bugs of
``benchmarks/held_out_mutants.py`` that the earlier tests let through (docs/benchmarks.md)."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_judgerel.stats.bias import equivalence_test


# ---------------------------------------------------------------- TOST
@pytest.mark.parametrize("two_sided", [True, False])
def test_bootstrap_resamples_without_spread_count_against_equivalence(two_sided):
    """T05: a resample whose differences are all equal counted *for* rejection.  Nine zeros and one
    0.05: (9/10)^10 = 35% of resamples are all zeros, so the bootstrap part of the robust test
    cannot reject below that share (the issue's all-zero samples were declared equivalent)."""
    d = [0.0] * 9 + [0.05]
    share_constant = 0.9 ** 10
    result = equivalence_test(d, margin=0.2, two_sided=two_sided)
    assert result.p_upper >= share_constant - 0.05 and not result.equivalent
    if two_sided:
        assert result.p_lower is not None and result.p_lower >= share_constant - 0.05
    # the skew-corrected t alone rejects: the bootstrap is what keeps the verdict honest here
    assert equivalence_test(d, margin=0.2, two_sided=two_sided, method="hall").equivalent


# ---------------------------------------------------------------- the predictive bootstrap's stages
def _rows_with_spread(m: np.ndarray) -> float:
    return float((np.ptp(m, axis=1) > 1e-9).mean())


def _distinct_items(m: np.ndarray) -> float:
    return len(np.unique(np.round(m.mean(axis=1)))) / m.shape[0]


def test_the_first_predictive_stage_draws_repeats_from_the_pooled_deviations():
    """Q03: the first stage drew each item's repeats from its own deviations (documented: pooled,
    the one-way model's residual bootstrap).  39 items without spread and one with a lot: drawn
    from the pool, the large deviations land on many items at each stage (most replicates have
    over 20% of items with spread); drawn per item, they stay on the one item and its few
    neighbours of the second stage (4% of replicates)."""
    from pytest_judgerel.stats.stability import verdict_stability

    rows = np.tile(np.arange(40.0)[:, None], (1, 4))
    rows[0] = [0.0, 10.0, 20.0, 30.0]
    result = verdict_stability(_rows_with_spread, rows, 0.2, "min", resample="repeats", n_boot=400, seed=1,
                               predictive=True)
    assert result.p_pass > 0.5, result


@pytest.mark.parametrize("resample, predictive, two_item_stages", [
    ("items", False, False), ("items", True, True), ("repeats", True, False),
    ("items+repeats", False, False), ("items+repeats", True, True)])
def test_items_are_resampled_at_every_stage_of_their_scheme(resample, predictive, two_item_stages):
    """Q04: ``items+repeats`` kept the items in its first stage.  200 items, each its own constant
    level: one bootstrap draw of the items keeps about 63% distinct items, a draw of a draw about
    47%, and resampling repeats only keeps them all."""
    from pytest_judgerel.stats.stability import verdict_stability

    data = np.tile(np.arange(200.0)[:, None], (1, 3))
    result = verdict_stability(_distinct_items, data, 0.55, "max", resample=resample, n_boot=200, seed=1,
                               predictive=predictive)
    assert result.p_pass == (1.0 if two_item_stages else 0.0)


# ---------------------------------------------------------------- batch 2's survivors
@pytest.mark.parametrize("predictive", [False, True])
def test_repeats_in_keeps_the_other_matrices_columns_as_observed(predictive):
    """Q07: ``repeats_in`` ignored: a human panel's raters (the second matrix) were resampled as
    if they were the judge's repeats.  With ``resample="repeats"`` and ``repeats_in=(0,)`` the
    items stay and only the judge's columns are drawn again, so a statistic of the humans alone
    never changes (p_pass exactly 1); drawn as repeats, the raters' mean crosses the threshold
    in many replicates."""
    from pytest_judgerel.stats.stability import verdict_stability

    rng = np.random.default_rng(3)
    judge = rng.normal(0.0, 1.0, (30, 4))
    humans = np.tile([0.0, 0.0, 10.0], (30, 1))  # one rater of three far from the others

    def humans_mean(judge_matrix: np.ndarray, human_matrix: np.ndarray) -> float:
        return float(np.mean(human_matrix))

    kept = verdict_stability(humans_mean, (judge, humans), 3.0, "min", resample="repeats", n_boot=200, seed=2,
                             repeats_in=(0,), predictive=predictive)
    assert kept.observed == pytest.approx(10 / 3) and kept.p_pass == 1.0, kept
    drawn = verdict_stability(humans_mean, (judge, humans), 3.0, "min", resample="repeats", n_boot=200, seed=2,
                              predictive=predictive)
    assert drawn.p_pass < 0.9, drawn  # the default: every matrix with columns is a set of repeats


# ---------------------------------------------------------------- batch 3's survivors: a mean gate's bounds
def _exact_bounds(x: np.ndarray, confidence: float) -> dict[str, float]:
    """Each bound of ``mean_gate_stability`` computed independently with scipy: Student's t interval,
    the Wilson score interval (scipy's binomtest, Wilson 1927) and the exact two-sided sign test."""
    from scipy import stats as st

    mean, n = float(x.mean()), x.size
    low, high = st.t.interval(confidence, n - 1, loc=mean, scale=st.sem(x))
    out = {"mean": mean, "abs_mean": abs(mean), "t_low": low, "t_high": high, "abs_t": max(abs(low), abs(high))}
    if set(np.unique(x)) <= {0.0, 1.0}:  # a share of 0/1 values
        wilson = st.binomtest(int(x.sum()), n).proportion_ci(confidence, method="wilson")
        out.update(wilson_low=wilson.low, wilson_high=wilson.high)
    return out


@pytest.mark.parametrize("kind", ["t_low", "t_high", "abs_t", "mean", "abs_mean", "wilson_low", "wilson_high"])
@pytest.mark.parametrize("direction", ["min", "max"])
def test_a_mean_gates_verdict_is_its_bound_against_the_threshold(kind, direction):
    """Q09: the p_pass of a gate on a mean's lower t bound tested the upper bound.  The verdict on
    the data itself (``passed``) flips exactly at the bound computed independently, for every bound
    and both directions, at the 0.90 confidence given (not the default 0.95)."""
    from pytest_judgerel.gates.stability import mean_gate_stability

    rng = np.random.default_rng(4)
    x = (rng.uniform(size=25) < 0.35).astype(float) if kind.startswith("wilson") else rng.normal(-0.1, 0.3, 25)
    bound = _exact_bounds(x, 0.90)[kind]
    eps = 1e-7
    inside, outside = (bound - eps, bound + eps) if direction == "min" else (bound + eps, bound - eps)
    passes = mean_gate_stability(x, inside, direction, kind, 0.90, name="bound")
    fails = mean_gate_stability(x, outside, direction, kind, 0.90, name="bound")
    assert passes.passed and passes.observed == 1.0, (kind, bound)
    assert not fails.passed and fails.observed == 0.0, (kind, bound)


def test_the_lower_t_bounds_p_pass_is_below_the_means_and_the_upper_bounds():
    """Q09 through p_pass itself: at a threshold equal to the mean, a rerun's mean passes about half
    the time, its lower t bound (at or below its mean) rarely and its upper bound mostly."""
    from pytest_judgerel.gates.stability import mean_gate_stability

    x = np.random.default_rng(8).normal(0.5, 0.3, 40)
    p = {kind: mean_gate_stability(x, float(x.mean()), "min", kind, 0.95).p_pass for kind in ("t_low", "mean", "t_high")}
    assert p["t_low"] < 0.2 and 0.3 < p["mean"] < 0.7 and p["t_high"] > 0.8, p


@pytest.mark.parametrize("first, second", [(14, 4), (4, 14), (9, 9), (0, 0)])
def test_a_sign_gate_is_the_exact_two_sided_sign_test(first, second):
    """``sign_p``: the exact two-sided sign test of the +1 against the -1 entries (ties, 0, left
    out; no informative entry: p = 1), as scipy's binomtest computes it."""
    from scipy import stats as st

    from pytest_judgerel.gates.stability import mean_gate_stability

    x = np.array([1.0] * first + [-1.0] * second + [0.0] * 5)
    p = 1.0 if first + second == 0 else st.binomtest(first, first + second, 0.5).pvalue
    assert mean_gate_stability(x, p - 1e-9, "min", "sign_p").passed
    if p < 1.0:
        assert not mean_gate_stability(x, p + 1e-9, "min", "sign_p").passed
