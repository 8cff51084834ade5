"""The predictive p_pass over repeats drawn from the one-way random-effects model
(variance components from their posterior, then a simulated rerun), as the ICC gates use it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from pytest_judgerel.errors import ReliabilityError
from pytest_judgerel.stats import icc_statistic, verdict_stability
from pytest_judgerel.stats.icc_batch import icc_values


def _data(n: int, k: int, rho: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(0, math.sqrt(rho / (1 - rho)), (n, 1)) + rng.normal(size=(n, k))


@pytest.mark.parametrize("offset", [0.0, 0.02, -0.02, 0.04])
def test_new_items_prediction_is_killeens_at_large_n(offset):
    """At 300 items the ICC is near normal with Fisher's variance 2 (1 - r)^2 (1 + (k-1) r)^2 /
    (k (k-1) (n-1)); a rerun on new items passes with Phi((observed - threshold) / (sqrt(2) se))
    (Killeen 2005).  The posterior predictive must agree; a predictive without the posterior
    stage (plug-in components) would give Phi(d / se), a copy of the same-items number less."""
    n, k = 300, 4
    x = _data(n, k, 0.7, 2)
    obs = float(icc_values(x[None], "A,1")[0])
    se = math.sqrt(2 * (1 - obs) ** 2 * (1 + (k - 1) * obs) ** 2 / (k * (k - 1) * (n - 1)))
    thr = obs - offset
    new = verdict_stability(icc_statistic("A,1"), x, thr, resample="items+repeats", n_boot=4000, seed=0,
                            predictive=True, model="one-way")
    assert new.p_pass == pytest.approx(norm.cdf(offset / (math.sqrt(2) * se)), abs=0.035)
    assert new.model == "one-way" and not new.rough and new.to_dict()["model"] == "one-way"
    same = verdict_stability(icc_statistic("A,1"), x, thr, resample="repeats", n_boot=4000, seed=0,
                             predictive=True, model="one-way")
    if offset:  # the same items leave only the judge's noise: a sharper prediction
        assert abs(same.p_pass - 0.5) > abs(new.p_pass - 0.5) + 0.05


def test_same_items_keep_their_item_effects():
    """One item far above the rest stays above them in every same-items rerun and in almost no
    new-items rerun (the statistic: is item 0 the highest item?)."""
    x = _data(40, 4, 0.6, 5)
    x[0] += 8

    def first_is_top(stack: np.ndarray) -> np.ndarray:
        m = np.asarray(stack).mean(axis=-1)
        return (m[..., 0] >= m.max(axis=-1)).astype(float)

    first_is_top.vectorized = True  # type: ignore[attr-defined]
    same = verdict_stability(first_is_top, x, 0.5, resample="repeats", n_boot=500, predictive=True, model="one-way")
    new = verdict_stability(first_is_top, x, 0.5, resample="items+repeats", n_boot=500, predictive=True,
                            model="one-way")
    assert same.p_pass > 0.99 and new.p_pass < 0.2


def test_model_is_seeded_and_takes_any_statistic():
    x = _data(40, 4, 0.75, 1)
    a = verdict_stability(icc_statistic("A,1"), x, 0.7, resample="items+repeats", n_boot=300, seed=3,
                          predictive=True, model="one-way")
    b = verdict_stability(icc_statistic("A,1"), x, 0.7, resample="items+repeats", n_boot=300, seed=3,
                          predictive=True, model="one-way")
    assert a.p_pass == b.p_pass and 0 < a.p_pass < 1
    low = verdict_stability(icc_statistic("A,1", "ci_low"), x, 0.7, resample="items+repeats", n_boot=300, seed=3,
                            predictive=True, model="one-way")  # not vectorised: one rerun at a time
    assert low.p_pass < a.p_pass
    assert "simulated new-items reruns (one-way model" in str(a)


def test_model_refuses_what_it_cannot_simulate():
    x = _data(40, 4, 0.75, 1)
    for kw in ({"predictive": False}, {"predictive": True, "resample": "items"},
               {"predictive": True, "recentre": True}):
        kw = {"resample": "repeats", **kw}
        with pytest.raises(ReliabilityError, match="model='one-way'"):
            verdict_stability(icc_statistic("A,1"), x, 0.7, model="one-way", **kw)  # type: ignore[arg-type]
    with pytest.raises(ReliabilityError, match="one items x repeats matrix"):
        verdict_stability(lambda a, b: 0.0, (x, x), 0.7, resample="repeats", predictive=True, model="one-way")
    with pytest.raises(ReliabilityError, match="model must be one of"):
        verdict_stability(icc_statistic("A,1"), x, 0.7, model="two-way")
