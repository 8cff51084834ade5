"""The exact (Clopper-Pearson) binomial interval against scipy's ``binomtest(...).proportion_ci``."""

import pytest
from scipy.stats import binomtest

from pytest_judgerel.errors import ReliabilityError
from pytest_judgerel.stats import ExactProportion, Proportion, clopper_pearson

# (count, n, confidence) -> (low, high), printed by scipy 1.17 binomtest(count, n).proportion_ci(c, "exact")
GOLDEN = {
    (0, 10, 0.95): (0.0, 0.30849710781876294),
    (3, 30, 0.95): (0.021117137029722604, 0.2652884504742082),
    (10, 10, 0.95): (0.6915028921812371, 1.0),
    (1, 1, 0.9): (0.04999999999999999, 1.0),
    (17, 40, 0.99): (0.23079054982870315, 0.6373783434032564),
}


@pytest.mark.parametrize("args", sorted(GOLDEN))
def test_golden_values(args):
    r = clopper_pearson(*args)
    assert (r.ci_low, r.ci_high) == pytest.approx(GOLDEN[args], abs=1e-11)
    assert r.value == args[0] / args[1] and r.count == args[0] and r.n == args[1]


@pytest.mark.parametrize("n", [1, 2, 7, 30, 200, 1000])
@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.99])
def test_equals_scipy_exact_interval_on_every_count(n, confidence):
    for count in sorted({0, 1, n // 3, n // 2, n - 1, n} - {-1}):
        ours = clopper_pearson(count, n, confidence)
        ref = binomtest(count, n).proportion_ci(confidence_level=confidence, method="exact")
        assert ours.ci_low == pytest.approx(ref.low, abs=1e-10)
        assert ours.ci_high == pytest.approx(ref.high, abs=1e-10)
        assert ours.ci_low <= ours.value <= ours.ci_high


def test_result_type_and_text():
    r = clopper_pearson(3, 30)
    assert isinstance(r, ExactProportion) and isinstance(r, Proportion)
    assert r.to_dict()["method"] == "clopper-pearson" and r.to_dict()["ci"] == [r.ci_low, r.ci_high]
    assert "Clopper-Pearson" in str(r) and "(3/30)" in str(r)


def test_wider_than_wilson_in_the_middle():
    from pytest_judgerel.stats import wilson_interval

    exact, wilson = clopper_pearson(5, 20), wilson_interval(5, 20)
    assert exact.ci_low < wilson.ci_low and exact.ci_high > wilson.ci_high


@pytest.mark.parametrize("args,cause", [((1, 0), "n must be at least 1"), ((4, 3), "count must lie"),
                                        ((1.5, 3), "count must be an integer"), ((True, 3), "count must be"),
                                        ((1, 3, 1.0), "confidence")])
def test_bad_input_names_its_cause(args, cause):
    with pytest.raises(ReliabilityError, match=cause):
        clopper_pearson(*args)
