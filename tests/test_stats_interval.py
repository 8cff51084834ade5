"""The one interval convention: a sign the printed digits do not show is dropped, an interval
contains its endpoints, and the checks every statistic shares."""

from __future__ import annotations

import math

import pytest

from pytest_judgerel.errors import ReliabilityError
from pytest_judgerel.stats.interval import Interval, check_confidence, check_use, format_estimate, format_interval


@pytest.mark.parametrize("value, digits, text", [(-0.00004, 4, "0.0000"), (-0.0004, 3, "0.000"),
                                                 (-1e-12, 2, "0.00"), (-0.0005, 3, "-0.001"), (0.0, 3, "0.000")])
def test_a_negative_value_that_rounds_to_zero_prints_without_its_sign(value, digits, text):
    assert format_estimate(value, None, None, digits=digits) == text


def test_a_signed_zero_prints_plus_and_a_visible_negative_keeps_its_minus():
    assert format_estimate(-0.00001, None, None, digits=3, signed=True) == "+0.000"
    assert format_estimate(-0.012, None, None, digits=3, signed=True) == "-0.012"
    assert format_interval(-0.00002, 0.5, 0.95, digits=3) == "[95% CI 0.000, 0.500]"


def test_an_interval_contains_its_endpoints_and_nothing_outside():
    ci = Interval(0.2, 0.8)
    assert ci.contains(0.2) and ci.contains(0.8) and ci.contains(0.5)
    assert not ci.contains(math.nextafter(0.2, 0.0)) and not ci.contains(math.nextafter(0.8, 1.0))
    assert not ci.contains(float("nan"))
    point = Interval(0.5, 0.5)
    assert point.contains(0.5) and point.width == 0.0


def test_a_missing_or_nan_number_prints_na():
    assert format_estimate(None, None, None) == "n/a"
    assert format_interval(float("nan"), 0.3, 0.9, digits=2) == "[90% CI n/a, 0.30]"


@pytest.mark.parametrize("bad", [0, 1, -0.1, 1.5, True, "0.95", None, float("nan")])
def test_check_confidence_refuses_anything_but_a_number_strictly_inside_0_1(bad):
    with pytest.raises(ReliabilityError, match="confidence must be strictly between 0 and 1"):
        check_confidence(bad)


def test_check_confidence_and_check_use_return_what_they_accept():
    assert check_confidence(0.9) == 0.9
    assert check_use("ci_low", ("estimate", "ci_low")) == "ci_low"
    with pytest.raises(ReliabilityError, match=r"use must be one of \('estimate', 'ci_low'\), got 'mean'"):
        check_use("mean", ("estimate", "ci_low"))
