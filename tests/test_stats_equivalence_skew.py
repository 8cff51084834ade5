"""The equivalence test (TOST) under skew -- Cochran's rule n > 25 g^2 on the side of
the long tail makes the default test inconclusive instead of anti-conservative."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pytest_judgerel.stats import equivalence_test


def _skewed(n: int, seed: int) -> np.ndarray:
    """Right-skewed differences around 0 (sample skewness about 2)."""
    d = np.random.default_rng(seed).exponential(0.1, n) - 0.1
    return d - d.mean()


def test_lognormal_differences_on_the_margin_keep_alpha():
    """Lognormal differences (skew 6.2) with true mean on the margin, n = 20: Hall's t said
    "equivalent" about 10% of the time, Hall with the bootstrap-t 0.07-0.11; the default with
    Cochran's rule at most alpha + 0.01."""
    rng = np.random.default_rng(31)
    data = [0.05 + 0.05 * (rng.lognormal(0, 1, 20) - math.exp(0.5)) / math.sqrt((math.e - 1) * math.e)
            for _ in range(600)]
    robust = np.mean([equivalence_test(d, 0.05, two_sided=False, n_boot=500).equivalent for d in data])
    hall = np.mean([equivalence_test(d, 0.05, two_sided=False, method="hall").equivalent for d in data])
    assert robust <= 0.06 and hall > 0.075


def test_too_few_items_for_the_skew_is_inconclusive_on_the_long_tail_side():
    d = _skewed(20, 1)  # mean 0, far inside a margin of 0.2
    g = equivalence_test(d, 0.2, method="hall").skewness
    assert g > 1.5
    res = equivalence_test(d, 0.2, bound=1.0)
    assert not res.equivalent and res.inconclusive and res.p_upper == 1.0 and res.ci_high == 1.0
    assert res.items_for_skew == math.floor(25 * g * g) + 1 > 20
    assert f"at least {res.items_for_skew} items" in res.inconclusive_reason and "upper" in res.inconclusive_reason
    assert res.to_dict()["inconclusive"] is True and "inconclusive" in str(res)
    assert res.p_lower is not None and res.p_lower < 0.05  # the short-tail side is still tested
    assert math.isinf(equivalence_test(d, 0.2).ci_high)  # without a bound the mean is not bounded
    # the mirror image: the lower test is the untrusted one; one-sided ("no upward shift") it is not run
    left = equivalence_test(-d, 0.2, bound=1.0)
    assert left.inconclusive and left.p_lower == 1.0 and left.ci_low == -1.0 and "lower" in left.inconclusive_reason
    one = equivalence_test(-d, 0.2, two_sided=False)
    assert one.equivalent and not one.inconclusive
    # the same decision rule as before: equivalent exactly when the interval is inside the margin
    for r in (res, left, one):
        inside = (-0.2 < r.ci_low or not r.two_sided) and r.ci_high < 0.2
        assert r.equivalent == inside == (r.p < 0.05)


def test_enough_items_for_the_skew_are_tested_as_before():
    d = np.concatenate([_skewed(20, 1)] * 8)  # the same skewness at n = 160 > 25 g^2
    res = equivalence_test(d, 0.2)
    assert not res.inconclusive and res.equivalent and res.items_for_skew <= 160
    assert not equivalence_test(_skewed(20, 1), 0.2, method="hall").inconclusive  # the rule belongs to "robust"


def test_normal_differences_keep_their_power():
    rng = np.random.default_rng(2)
    runs = [equivalence_test(rng.normal(0, 0.1, 40), 0.05, two_sided=False, n_boot=500) for _ in range(200)]
    assert np.mean([r.equivalent for r in runs]) >= 0.85
    assert np.mean([r.inconclusive for r in runs]) <= 0.01
