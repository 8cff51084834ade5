"""Input validation shared by every statistic (stats/_input.py): every accepted form and every refusal."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from pytest_judgerel.errors import ReliabilityError
from pytest_judgerel.stats.interval import check_use
from pytest_judgerel.stats._input import (
    as_matrix,
    as_vector_or_matrix,
    check_min_shape,
    collapse_repeats,
    drop_missing,
    ids_of,
    item_means,
)

NAN = float("nan")


@pytest.mark.parametrize("data, message", [
    (np.array(["a", "b"]), r"^ratings must be numeric, got values of dtype <U1 \(e\.g\. np\.str_\('a'\)\)$"),
    (np.array([], dtype="U1"), r"^ratings must be numeric, got dtype <U1$"),
    ([], r"^ratings is empty \(shape \(0,\)\)$"),
    ([[1, np.inf], [2, 3]], r"^ratings contains an infinite rating at index \(0, 1\)$"),
    ([[1, 2], [3, -np.inf]], r"^ratings contains an infinite rating at index \(1, 1\)$"),
    ([1, 2, 3], r"^ratings must be 2-D \(items x raters\), got 1-D with shape \(3,\)$"),
    (np.zeros((2, 2, 2)), r"^ratings is 3-D \(2, 2, 2\): read as items x raters x repeats; pass "
                          r"duplicates='mean'\|'first'\|'last' to collapse repeated judgments of a cell$"),
    ([[1, 2], [3]], r"^ratings is ragged \(rows of different lengths or nested sequences\)$"),
    ([[1, "x"]], r"^ratings must be numeric, got 'x' \(str\)$"),
    (b"ab", r"^ratings must be numeric ratings, got bytes$"),
    ("1,2", r"^ratings must be numeric ratings, got str$"),
    (None, r"^ratings must be numeric ratings, got NoneType$"),
    (np.array([[True, False]]), r"^ratings holds booleans; convert them to numbers \(0/1\) explicitly if intended$"),
    ([[1, np.bool_(True)]], r"^ratings holds a boolean \(np\.True_\); ratings must be numbers$"),
    ([[1, True]], r"^ratings holds a boolean \(True\); ratings must be numbers$"),
])
def test_refusals_name_the_cause(data, message):
    with pytest.raises(ReliabilityError, match=message):
        as_matrix(data)


def test_inhomogeneous_arrays_are_ragged_and_the_name_is_used():
    with pytest.raises(ReliabilityError, match=r"^judge ratings is ragged \(rows of different lengths\): "):
        as_matrix(_Ragged(), name="judge ratings")
    with pytest.raises(ReliabilityError, match=r"^judge must be 1-D \(items\) or 2-D \(items x raters\), got shape "
                                               r"\(1, 1, 1\)$"):
        as_vector_or_matrix(np.zeros((1, 1, 1)), name="judge")
    with pytest.raises(ReliabilityError, match=r"^duplicates must be one of \('raise', 'mean', 'first', 'last'\), "
                                               r"got 'median'$"):
        as_matrix([[1.0]], duplicates="median")


class _Ragged:
    """Not a list or tuple: numpy reads it as an array and fails on the inhomogeneous shape."""

    def __array__(self, dtype=None, copy=None):
        return np.array([[1.0, 2.0], [3.0]])


def test_accepted_forms_give_float_copies():
    src = np.array([[1, 2], [3, 4]])
    out = as_matrix(src)
    assert out.dtype == np.float64 and out.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    out[0, 0] = 99
    assert src[0, 0] == 1  # a copy, never a view of the caller's data
    assert as_matrix([[1, None], [2.5, 3]])[0, 1] != as_matrix([[1, None], [2.5, 3]])[0, 1]  # None -> NaN
    assert as_matrix(((1, 2), (3, 4))).tolist() == [[1.0, 2.0], [3.0, 4.0]]

    class R:
        def to_matrix(self):
            return [[1, 2], [3, 4]]

    assert as_matrix(R()).tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert as_vector_or_matrix([1, 2], name="x").tolist() == [1.0, 2.0]


def test_repeats_collapse_by_each_policy_skipping_missing_ones():
    x = np.array([[[1.0, 3.0, NAN], [NAN, NAN, NAN]], [[NAN, 2.0, 6.0], [4.0, NAN, 5.0]]])
    mean = as_matrix(x, duplicates="mean")
    first = collapse_repeats(x, "first")
    last = collapse_repeats(x, "last")
    assert mean[0, 0] == 2.0 and mean[1, 0] == 4.0 and mean[1, 1] == 4.5 and math.isnan(mean[0, 1])
    assert first[0, 0] == 1.0 and first[1, 0] == 2.0 and first[1, 1] == 4.0 and math.isnan(first[0, 1])
    assert last[0, 0] == 3.0 and last[1, 0] == 6.0 and last[1, 1] == 5.0 and math.isnan(last[0, 1])
    assert as_matrix(x, duplicates="last").tolist()[1] == [6.0, 5.0]


def test_item_means_ignore_missing_ratings_and_one_dimensional_input_is_copied():
    m = item_means(np.array([[1.0, 3.0], [NAN, 4.0], [NAN, NAN]]))
    assert m[0] == 2.0 and m[1] == 4.0 and math.isnan(m[2])
    v = np.array([1.0, 2.0])
    out = item_means(v)
    out[0] = 9
    assert v[0] == 1.0


def test_minimum_shape_is_checked_with_the_callers_limits_and_name():
    with pytest.raises(ReliabilityError, match=r"^r has 1 item\(s\); at least 2 items are needed$"):
        check_min_shape(np.ones((1, 3)), name="r")
    with pytest.raises(ReliabilityError, match=r"^ratings has 1 rater\(s\); at least 2 raters are needed$"):
        check_min_shape(np.ones((3, 1)))
    with pytest.raises(ReliabilityError, match=r"^ratings has 2 item\(s\); at least 3 items are needed$"):
        check_min_shape(np.ones((2, 3)), min_items=3)
    with pytest.raises(ReliabilityError, match=r"^ratings has 2 rater\(s\); at least 3 raters are needed$"):
        check_min_shape(np.ones((3, 2)), min_raters=3)
    check_min_shape(np.ones((2, 2)))


def test_missing_ratings_are_named_or_dropped_listwise():
    x = np.array([[1.0, NAN], [2.0, 3.0], [NAN, NAN], [4.0, 5.0]])
    with pytest.raises(ReliabilityError, match=r"^nan_policy must be one of \('raise', 'omit'\), got 'drop'$"):
        drop_missing(x, "drop")
    with pytest.raises(ReliabilityError, match=r"^judge has 3 missing rating\(s\) in item\(s\) \['a', 'c'\] from "
                                               r"rater\(s\) \['r1', 'r2'\]; fill them or pass nan_policy='omit' to "
                                               r"drop those items$"):
        drop_missing(x, "raise", name="judge", item_ids=list("abcd"), rater_ids=["r1", "r2"])
    with pytest.raises(ReliabilityError, match=r"^ratings has 3 missing rating\(s\) in item\(s\) \[0, 2\] from "
                                               r"rater\(s\) \[0, 1\];"):
        drop_missing(x, "raise")
    kept, omitted = drop_missing(x, "omit")
    assert kept.tolist() == [[2.0, 3.0], [4.0, 5.0]] and omitted == 2
    same, none = drop_missing(kept, "raise")
    assert same is kept and none == 0
    with pytest.raises(ReliabilityError, match=r"^nan_policy='omit' dropped 2 of 3 items with missing ratings; 1 "
                                               r"complete item\(s\) remain, at least 2 are needed$"):
        drop_missing(np.array([[1.0, NAN], [2.0, 3.0], [NAN, 4.0]]), "omit")


def test_a_rater_without_any_rating_is_named_when_too_few_items_remain():
    x = np.full((3, 3), NAN)
    x[:, 0] = [1.0, 2.0, 3.0]
    x[0, 2] = 5.0
    with pytest.raises(ReliabilityError, match=r"at least 2 are needed; rater\(s\) \['b'\] have no ratings at all, "
                                               r"remove them$"):
        drop_missing(x, "omit", rater_ids=["a", "b", "c"])


def test_long_lists_of_items_are_cut_after_ten():
    x = np.full((12, 2), 1.0)
    x[:, 1] = NAN
    with pytest.raises(ReliabilityError, match=r"in item\(s\) \[0, 1, 2, 3, 4, 5, 6, 7, 8, 9\] \(\+2 more\) from"):
        drop_missing(x, "raise")


def test_ids_are_tuples_and_a_string_is_not_a_list_of_ids():
    class R:
        item_ids = ["a", "b"]
        rater_ids = "judge"

    assert ids_of(R(), "item_ids") == ("a", "b") and ids_of(R(), "rater_ids") is None
    assert ids_of(object(), "item_ids") is None


def test_exactly_ten_items_are_listed_without_a_remainder():
    x = np.full((10, 2), 1.0)
    x[:, 1] = NAN
    with pytest.raises(ReliabilityError) as info:
        drop_missing(x, "raise")
    assert "in item(s) [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] from rater(s) [1];" in str(info.value)


def test_float_input_is_copied_too_and_a_single_present_repeat_is_its_own_mean():
    src = np.array([[1.0, 2.0], [3.0, 4.0]])
    out = as_matrix(src)
    out[0, 0] = 99.0
    assert src[0, 0] == 1.0
    one = as_matrix(np.array([[[NAN, 5.0]], [[1.0, 3.0]]]), duplicates="mean")
    assert one.tolist() == [[5.0], [2.0]]
    with pytest.raises(ReliabilityError, match=r"^judge must be numeric ratings, got str$"):
        as_vector_or_matrix("1,2", name="judge")


def test_last_present_repeat_among_four():
    x = np.array([[[1.0, 3.0, NAN, NAN], [NAN, 2.0, NAN, 7.0]]])
    assert collapse_repeats(x, "last").tolist() == [[3.0, 7.0]]
    assert collapse_repeats(x, "first").tolist() == [[1.0, 2.0]]


def test_cells_and_items_without_ratings_give_nan_without_a_numpy_warning():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 0/0 would warn "invalid value encountered in divide"
        assert math.isnan(collapse_repeats(np.array([[[NAN, NAN]]]), "mean")[0, 0])
        assert math.isnan(item_means(np.array([[NAN, NAN], [1.0, 2.0]]))[0])


def test_check_use_returns_an_allowed_use_and_names_the_choices_otherwise():
    assert check_use("ci_low", ("estimate", "ci_low")) == "ci_low"
    with pytest.raises(ReliabilityError, match=r"^use must be one of \('estimate', 'ci_low'\), got 'mean'$"):
        check_use("mean", ("estimate", "ci_low"))
    assert issubclass(ReliabilityError, ValueError)  # callers that catch ValueError still do


@pytest.mark.parametrize("bad", [0, 1, 1.5, -0.1, True, "0.95", None, float("nan")])
def test_the_one_confidence_check_refuses_levels_outside_the_open_unit_interval(bad):
    from pytest_judgerel.stats.interval import check_confidence

    message = rf"^confidence must be strictly between 0 and 1, got {re.escape(repr(bad))}$"
    with pytest.raises(ReliabilityError, match=message):
        check_confidence(bad)
    assert check_confidence(np.float32(0.5)) == 0.5 and type(check_confidence(0.9)) is float
