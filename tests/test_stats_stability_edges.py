"""The predictive p_pass over repeats (recentring, the rough flag), and the planted bugs these
tests kill (p_pass_new_items copied from p_pass; the repeats stage resampling items)."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_judgerel.errors import ReliabilityError
from pytest_judgerel.gates.stability import icc_gate_stability
from pytest_judgerel.stats import icc_statistic, verdict_stability
from pytest_judgerel.stats.icc_batch import icc_values


def _data(n: int, k: int, rho: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(0, np.sqrt(rho / (1 - rho)), (n, 1)) + rng.normal(size=(n, k))


def _first_item_mean():
    def stat(x: np.ndarray) -> np.ndarray:
        return np.asarray(x)[..., 0, :].mean(axis=-1)

    stat.vectorized = True  # type: ignore[attr-defined]
    return stat


@pytest.mark.parametrize("recentre", [False, True])
def test_repeats_resampling_keeps_the_items(recentre):
    """Item 0 scores about 10, every other item about 0: as long as the items stay, every resample's
    item 0 is near 10; a scheme that also resampled items would put another item there most of the time."""
    rng = np.random.default_rng(0)
    x = rng.normal(0, 0.1, (30, 4))
    x[0] += 10
    res = verdict_stability(_first_item_mean(), x, 5.0, resample="repeats", n_boot=400, seed=1, predictive=True,
                            recentre=recentre)
    assert res.p_pass == 1.0
    if not recentre:  # (recentred, this odd statistic's median draw is moved back onto item 0's mean)
        new = verdict_stability(_first_item_mean(), x, 5.0, resample="items+repeats", n_boot=400, seed=1,
                                predictive=True)
        assert new.p_pass < 0.1  # items resampled twice: item 0's slot holds item 0 in about 1/30^2 + ... of draws


def test_gate_p_pass_new_items_is_its_own_prediction():
    """p_pass_new_items predicts a rerun on new items: wider than the same-items prediction, and
    exactly the items+repeats predictive probability (not a copy of p_pass)."""
    x = _data(40, 5, 0.6, 3)
    observed = float(icc_values(x[None], "A,1")[0])
    st = icc_gate_stability(x, "A,1", "estimate", 0.95, observed - 0.06, True)
    assert st.same_items.resample == "repeats" and st.new_items.resample == "items+repeats"
    direct = verdict_stability(icc_statistic("A,1"), x, observed - 0.06, resample="items+repeats", n_boot=1000,
                               seed=0, nan_policy="omit", predictive=True, model="one-way")
    assert st.new_items.p_pass == direct.p_pass
    assert st.same_items.p_pass - st.new_items.p_pass > 0.1


@pytest.mark.parametrize("scheme", ["repeats", "items+repeats"])
def test_recentred_prediction_on_the_threshold_is_a_coin_flip(scheme):
    """A statistic exactly on its threshold: a rerun passes half the time.  Two bootstrap stages
    each add the ICC's bootstrap bias, which moved the unrecentred number off 0.5."""
    for seed in range(3):
        x = _data(20, 3, 0.75, seed)
        observed = float(icc_values(x[None], "A,1")[0])
        res = verdict_stability(icc_statistic("A,1"), x, observed, resample=scheme, n_boot=2000, seed=0,
                                predictive=True, recentre=True)
        assert res.p_pass == pytest.approx(0.5, abs=0.03) and res.recentred


def test_gate_over_repeats_uses_the_one_way_model_and_is_rough_below_the_minimum_design():
    small = icc_gate_stability(_data(20, 3, 0.75, 1), "A,1", "estimate", 0.95, 0.75, True)
    assert small.same_items.model == "one-way" and small.same_items.rough and small.new_items.rough
    assert "standard error" in small.same_items.rough_reason and "(rough)" in str(small.same_items)
    assert "45 items with 3 repeats" in small.same_items.rough_reason  # items_for_calibrated_rerun(0.75, 3)
    big = icc_gate_stability(_data(40, 4, 0.75, 1), "A,1", "estimate", 0.95, 0.75, True)
    assert not big.same_items.rough and not big.new_items.rough and big.same_items.to_dict()["rough"] is False
    # the same 40 x 4 design is rough at a lower threshold, where its ICC is less precise
    assert icc_gate_stability(_data(40, 4, 0.6, 1), "A,1", "estimate", 0.95, 0.6, True).new_items.rough
    ordinal = np.clip(np.round(_data(40, 4, 0.75, 1) + 3), 1, 5)
    coarse = icc_gate_stability(ordinal, "A,1", "estimate", 0.95, 0.75, True)
    assert coarse.same_items.rough and coarse.new_items.rough and "5 or fewer levels" in coarse.new_items.rough_reason
    # without repeats (new items only) nothing is rough: the mean gates were calibrated at 30 items
    assert not verdict_stability(_first_item_mean(), _data(10, 1, 0.5, 0), 0.0, predictive=True).rough


def test_minimum_design_is_where_the_standard_error_reaches_the_limit():
    from pytest_judgerel.stats.stability import MAX_RERUN_SE, icc_standard_error, items_for_calibrated_rerun

    for t, k, n in ((0.75, 4, 38), (0.75, 3, 45), (0.6, 4, 71)):
        assert items_for_calibrated_rerun(t, k) == n
        assert icc_standard_error(t, n, k) <= MAX_RERUN_SE < icc_standard_error(t, n - 1, k)
        assert not verdict_stability(icc_statistic("A,1"), _data(n, k, t, 0), t, resample="repeats", n_boot=50,
                                     predictive=True, model="one-way").rough
        assert verdict_stability(icc_statistic("A,1"), _data(n - 1, k, t, 0), t, resample="repeats", n_boot=50,
                                 predictive=True, model="one-way").rough


def test_gate_record_carries_the_flags():
    from pytest_judgerel.gates.stability import attach_stability

    rec: dict = {}
    attach_stability(rec, icc_gate_stability(_data(20, 3, 0.75, 1), "A,1", "estimate", 0.95, 0.75, True))
    assert rec["stability"]["rough"] is True and rec["stability"]["model"] == "one-way"
    assert rec["stability"]["new_items_rough"] is True and rec["stability"]["rough_reason"]


def test_recentre_needs_predictive():
    with pytest.raises(ReliabilityError, match="predictive=True"):
        verdict_stability(icc_statistic("A,1"), _data(20, 3, 0.5, 0), 0.5, resample="repeats", recentre=True)
