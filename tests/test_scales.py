"""Grading scales: construction, parsing, grid membership, normalisation (seed 001, section 3.3)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pytest_judgerel.errors import ScaleError
from pytest_judgerel.scales import NAMED_SCALES, Scale


# ------------------------------------------------------------------ construction
def test_names_are_derived_from_the_bounds_unless_given():
    assert Scale(0, 10).name == "0-10"
    assert Scale(2.5, 7.5, step=0.5).name == "2.5-7.5"
    assert Scale(-2, 2).name == "-2-2"
    assert Scale(1.0, 5.0).name == "1-5"  # whole floats print as integers
    assert Scale(0, 10, name="stars").name == "stars" and str(Scale(0, 10, name="stars")) == "stars"
    assert str(Scale(1, 6)) == "1-6"


@pytest.mark.parametrize("kwargs, message", [
    (dict(low=True, high=5), r"^scale low must be a finite number, got True$"),
    (dict(low="0", high=5), r"^scale low must be a finite number, got '0'$"),
    (dict(low=0, high=math.inf), r"^scale high must be a finite number, got inf$"),
    (dict(low=0, high=math.nan), r"^scale high must be a finite number, got nan$"),
    (dict(low=0, high=5, step=None), r"^scale step must be a finite number, got None$"),
    (dict(low=5, high=5), r"^scale high \(5\) must be greater than low \(5\)$"),
    (dict(low=5, high=1), r"^scale high \(1\) must be greater than low \(5\)$"),
    (dict(low=0, high=5, step=0), r"^scale step must be positive, got 0$"),
    (dict(low=0, high=5, step=-1), r"^scale step must be positive, got -1$"),
    (dict(low=0, high=5, step=2), r"^scale step 2 does not divide the range 0-5$"),
])
def test_invalid_scales_are_refused_with_the_cause(kwargs, message):
    with pytest.raises(ScaleError, match=message):
        Scale(**kwargs)


def test_a_fractional_scale_needs_no_dividing_step_and_a_near_divisor_is_accepted():
    assert Scale(0, 5, step=2, fractional=True).fractional
    assert Scale(0, 1, step=0.1).points == pytest.approx([i / 10 for i in range(11)])  # 1 / 0.1 = 9.999...


# ------------------------------------------------------------------ parsing
@pytest.mark.parametrize("spec, low, high", [
    ("2-9", 2, 9), (" 2 - 9 ", 2, 9), ("2 to 9", 2, 9), ("2–9", 2, 9), ("-3-3", -3, 3),
    ("0.5-2.5", 0.5, 2.5), ((1, 4), 1, 4), ([1, 4], 1, 4), ({"low": 1, "high": 4}, 1, 4),
])
def test_parse_reads_names_pairs_and_dicts(spec, low, high):
    sc = Scale.parse(spec)
    assert (sc.low, sc.high, sc.step, sc.fractional) == (low, high, 1.0, False)
    assert type(sc.low) is type(low)  # "2" is read as the integer 2, "0.5" as a float


def test_parse_keeps_scales_and_named_scales_and_reads_a_step_or_flags():
    sc = Scale(0, 10, step=2)
    assert Scale.parse(sc) is sc
    assert Scale.parse("0-100") is NAMED_SCALES["0-100"]
    assert Scale.parse((0, 10, 2.5)).step == 2.5
    assert Scale.parse({"low": 1, "high": 6, "fractional": True}).fractional
    assert sorted(NAMED_SCALES) == ["0-10", "0-100", "0-5", "1-10", "1-5", "1-6"]


@pytest.mark.parametrize("spec, message", [
    ("five", r"^cannot read scale 'five': use 'LOW-HIGH' such as '0-10', or one of \['0-10', '0-100', '0-5', "
             r"'1-10', '1-5', '1-6'\]$"),
    ("0-10-20", r"^cannot read scale '0-10-20'"),
    ((1,), r"^cannot read scale \(1,\): expected a name, \(low, high\) or Scale$"),
    ((1, 2, 3, 4), r"^cannot read scale \(1, 2, 3, 4\): expected"),
    (None, r"^cannot read scale None: expected"),
    (5, r"^cannot read scale 5: expected"),
])
def test_parse_refuses_what_it_cannot_read(spec, message):
    with pytest.raises(ScaleError, match=message):
        Scale.parse(spec)


# ------------------------------------------------------------------ use
def test_range_points_and_their_types():
    assert Scale(1, 5).range == 4 and Scale(-2, 2).range == 4
    pts = Scale(1, 3).points
    assert pts == [1, 2, 3] and all(type(p) is int for p in pts)
    assert Scale(1, 3, step=0.5).points == [1, 1.5, 2, 2.5, 3]
    assert Scale(1, 6, fractional=True).points is None


@pytest.mark.parametrize("value, expected", [
    (1, True), (5, True), (3, True), (1 - 1e-10, True), (5 + 1e-10, True), (1 - 1e-8, False), (5 + 1e-8, False),
    (0, False), (6, False), (2.5, False), (3 + 1e-10, True), (3 + 1e-8, False), (math.nan, False), (math.inf, False),
])
def test_contains_on_a_discrete_scale_that_starts_at_one(value, expected):
    assert Scale(1, 5).contains(value) is expected


def test_contains_measures_the_grid_from_the_lower_bound_and_fractional_scales_have_none():
    odd = Scale(1, 4, step=1.5)  # grid 1, 2.5, 4
    assert odd.contains(2.5) and not odd.contains(2) and not odd.contains(3)
    frac = Scale(1, 6, fractional=True)
    assert frac.contains(3.75) and frac.contains(1) and not frac.contains(6.5) and not frac.contains(-math.inf)


def test_validate_returns_the_value_or_names_scale_bounds_and_grid():
    assert Scale(0, 10).validate(7) == 7
    with pytest.raises(ScaleError, match=r"^7\.5 is not on scale 0-10 \(0\.\.10 in steps of 1\)$"):
        Scale(0, 10).validate(7.5)
    with pytest.raises(ScaleError, match=r"^11 is not on scale 1-6 \(1\.\.6\)$"):
        Scale(1, 6, fractional=True).validate(11)
    with pytest.raises(ScaleError, match=r"^0\.25 is not on scale 0\.5-2\.5 \(0\.5\.\.2\.5 in steps of 0\.5\)$"):
        Scale(0.5, 2.5, step=0.5).validate(0.25)


def test_normalize_maps_low_to_zero_and_high_to_one_and_denormalize_inverts_it():
    sc = Scale(1, 5)
    assert sc.normalize(1) == 0.0 and sc.normalize(5) == 1.0 and sc.normalize(2) == 0.25
    assert sc.normalize(3.0) == 0.5
    np.testing.assert_array_equal(sc.normalize([1, 2, 5]), [0.0, 0.25, 1.0])
    np.testing.assert_array_equal(sc.normalize(np.array([3, 4])), [0.5, 0.75])
    assert sc.denormalize(0.25) == 2.0 and sc.denormalize(1) == 5
    np.testing.assert_array_equal(sc.denormalize([0.0, 0.5]), [1.0, 3.0])
    neg = Scale(-10, 10)
    assert neg.normalize(0) == 0.5 and neg.denormalize(0.75) == 5.0
    np.testing.assert_array_equal(neg.denormalize(np.array([0.0, 1.0])), [-10.0, 10.0])


def test_rounding_tolerance_at_the_bounds_of_a_fractional_scale():
    frac = Scale(1, 5, fractional=True)
    assert frac.contains(1 - 1e-9) and frac.contains(5 + 1e-9)
    assert not frac.contains(1 - 2e-9) and not frac.contains(5 + 2e-9)


def test_normalize_and_denormalize_read_missing_values_as_nan():
    out = Scale(1, 5).normalize([1, None, 5])
    assert out[0] == 0.0 and math.isnan(out[1]) and out[2] == 1.0
    back = Scale(1, 5).denormalize([0.5, None])
    assert back[0] == 3.0 and math.isnan(back[1])
