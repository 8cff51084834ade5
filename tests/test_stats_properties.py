"""Property-based tests of the ICC (and a few agreement statistics) with Hypothesis."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from pytest_judgerel.errors import ReliabilityError
from pytest_judgerel.stats import icc_table, krippendorff_alpha, nmae, spearman_brown
from pytest_judgerel.stats.icc import FORMS, icc

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FIELDS = ("value", "ci_low", "ci_high", "f", "p")


@st.composite
def rating_matrices(draw, min_items=2, max_items=12, min_raters=2, max_raters=6, high=10):
    n = draw(st.integers(min_items, max_items))
    k = draw(st.integers(min_raters, max_raters))
    return draw(hnp.arrays(np.float64, (n, k), elements=st.integers(0, high).map(float)))


def table_or_none(x):
    try:
        return icc_table(x)
    except ReliabilityError:
        return None


def defined_table(x):
    t = table_or_none(x)
    assume(t is not None)
    return t


def assert_tables_close(a, b, rtol=1e-9, atol=1e-9):
    for form in FORMS:
        for name in FIELDS:
            u, v = getattr(a[form], name), getattr(b[form], name)
            assert u == pytest.approx(v, rel=rtol, abs=atol), (form, name)


# Perfect agreement on 3 items: the McGraw & Wong ICC(A,1) limits came out as (1.0000000000000002, 1.0)
# for [[0, 0], [0, 0], [3, 3]] (an inverted interval); [[0, 0], [0, 0], [1, 1]] is the shape Hypothesis
# found.  A strongly negative ICC(A,1) whose formula limits (-1.00, -0.99) excluded the estimate -0.90.
INVERTED_CI_EXAMPLES = ([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]], [[0.0, 0.0], [0.0, 0.0], [3.0, 3.0]],
                        [[1.0, 1.0], [9.0, -4.0]], [[2.0, 7.0], [5.0, 5.0]])


@SETTINGS
@given(rating_matrices())
@example(np.array(INVERTED_CI_EXAMPLES[0]))
@example(np.array(INVERTED_CI_EXAMPLES[1]))
@example(np.array(INVERTED_CI_EXAMPLES[2]))
@example(np.array(INVERTED_CI_EXAMPLES[3]))
def test_never_nan_either_a_full_result_or_reliability_error(x):
    try:
        t = icc_table(x)
    except ReliabilityError as exc:  # a named cause, never a silent NaN
        assert " undefined for these ratings: " in str(exc) or "all ratings are identical" in str(exc), str(exc)
        return
    for res in t.results.values():
        for name in ("value", "ci_low", "ci_high", "p", "f_raters", "p_raters", "ms_items", "ms_error"):
            v = getattr(res, name)
            assert not math.isnan(v), name
        assert all(math.isfinite(v) for v in (res.value, res.ci_high, res.p))
        # only ICC(A,k) may have a lower limit of -inf (ICC(A,1) limit below the step-up pole -1/(k-1))
        assert math.isfinite(res.ci_low) or (res.form == "A,k" and res.ci_low == -math.inf)
        assert res.value <= 1 + 1e-12 and 0 <= res.p <= 1
        assert res.ci_low <= res.value <= res.ci_high <= 1, (res.form, res.ci_low, res.value, res.ci_high)


@SETTINGS
@given(rating_matrices())
def test_average_forms_are_spearman_brown_of_single_forms(x):
    t = defined_table(x)
    k = t.k
    for family in ("1", "A", "C"):
        single, average = t[f"{family},1"].value, t[f"{family},k"].value
        assume(abs(1 + (k - 1) * single) > 1e-6)
        assert average == pytest.approx(spearman_brown(single, k), rel=1e-9, abs=1e-9)
    for limit in ("ci_low", "ci_high"):
        single = getattr(t["A,1"], limit)
        assume(abs(1 + (k - 1) * single) > 1e-6)
        if 1 + (k - 1) * single < 0:  # below the step-up pole: the average-form interval is unbounded below
            assert limit == "ci_low" and t["A,k"].ci_low == -math.inf
        else:
            assert getattr(t["A,k"], limit) == pytest.approx(spearman_brown(single, k), rel=1e-9, abs=1e-9)


@SETTINGS
@given(rating_matrices(), st.randoms(use_true_random=False))
def test_invariant_under_rater_and_item_permutation(x, rnd):
    t = defined_table(x)
    rows, cols = list(range(x.shape[0])), list(range(x.shape[1]))
    rnd.shuffle(rows)
    rnd.shuffle(cols)
    assert_tables_close(icc_table(x[rows][:, cols]), t)


@SETTINGS
@given(rating_matrices(), st.lists(st.integers(-20, 20), min_size=6, max_size=6))
# Rater offsets that push ICC(A,1) below the step-up pole: ICC(A,k) (and so icc_table) becomes
# undefined although the consistency forms are unchanged; the property is about the C forms only.
@example(np.array([[0.0, 0.0, 4.0, 0.0], [0.0, 0.0, 0.0, 9.0]]), [-9, -6, -8, -11, 0, 0])
def test_consistency_forms_ignore_rater_offsets_agreement_forms_do_not(x, offsets):
    t = defined_table(x)
    shift = np.array(offsets[: x.shape[1]], dtype=float)
    for form in ("C,1", "C,k"):
        shifted = icc(x + shift, form)
        for name in FIELDS:
            assert getattr(shifted, name) == pytest.approx(getattr(t[form], name), rel=1e-9, abs=1e-9)
    # Large, distinct offsets inflate MS_raters: the absolute-agreement ICC moves towards 0.
    big = x + 100.0 * np.arange(x.shape[1])
    for form in ("A,1", "A,k"):
        base, moved = t[form].value, icc(big, form).value
        if t[form].ms_items > t[form].ms_error:
            assert moved < base
        else:
            assert abs(moved) <= abs(base) + 1e-12


@SETTINGS
@given(rating_matrices(), st.sampled_from([0.01, 0.5, 3.0, 250.0, -2.0]), st.floats(-1e3, 1e3))
def test_invariant_to_affine_rescaling_of_all_ratings(x, scale, shift):
    t = defined_table(x)
    assume(1 + (t.k - 1) * t["A,1"].value > 1e-6)  # the average form is ill-conditioned at its pole
    assert_tables_close(icc_table(scale * x + shift), t, rtol=1e-7, atol=1e-9)


@SETTINGS
@given(rating_matrices())
def test_constant_offset_of_1e9_changes_no_icc_by_more_than_1e9(x):
    t = defined_table(x)
    shifted = icc_table(x + 1e9)
    for form in FORMS:
        assert abs(shifted[form].value - t[form].value) <= 1e-9


@SETTINGS
@given(rating_matrices())
def test_consistency_average_form_equals_cronbach_alpha(x):
    t = defined_table(x)
    k = x.shape[1]
    alpha = k / (k - 1) * (1 - x.var(axis=0, ddof=1).sum() / x.sum(axis=1).var(ddof=1))
    assert t["C,k"].value == pytest.approx(alpha, rel=1e-9, abs=1e-9)


@SETTINGS
@given(rating_matrices(min_items=3))
@example(np.array(INVERTED_CI_EXAMPLES[1]))
def test_every_interval_contains_the_estimate_exactly(x):
    t = defined_table(x)
    for form in FORMS:
        r = t[form]
        assert r.ci_low <= r.value <= r.ci_high, (form, r.ci_low, r.value, r.ci_high)


# ------------------------------------------------------------------------------------ degenerate cases
@SETTINGS
@given(st.integers(1, 8), st.integers(1, 6), st.floats(-100, 100, allow_nan=False))
def test_constant_matrix_always_raises(n, k, value):
    with pytest.raises(ReliabilityError):
        icc_table(np.full((n, k), value))


@SETTINGS
@given(rating_matrices(min_items=1, max_items=1), st.sampled_from(FORMS))
def test_single_item_raises(x, form):
    with pytest.raises(ReliabilityError, match="1 item"):
        icc(x, form)


@SETTINGS
@given(rating_matrices(min_raters=1, max_raters=1), st.sampled_from(FORMS))
def test_single_rater_raises(x, form):
    with pytest.raises(ReliabilityError, match="1 rater"):
        icc(x, form)


@SETTINGS
@given(rating_matrices(min_items=3), st.data())
def test_missing_cell_raise_names_it_and_omit_drops_exactly_that_item(x, data):
    i = data.draw(st.integers(0, x.shape[0] - 1))
    j = data.draw(st.integers(0, x.shape[1] - 1))
    y = x.copy()
    y[i, j] = np.nan
    with pytest.raises(ReliabilityError, match=rf"item\(s\) \[{i}\] from rater\(s\) \[{j}\]"):
        icc(y)
    expected = table_or_none(np.delete(x, i, axis=0))
    try:
        got = icc_table(y, nan_policy="omit")
    except ReliabilityError:
        assert expected is None
        return
    assert expected is not None and got["A,1"].n_omitted == 1
    assert got["A,1"].value == expected["A,1"].value


@SETTINGS
@given(rating_matrices(), st.sampled_from(["inf", "bool", "str"]))
def test_non_numeric_or_infinite_cells_raise(x, kind):
    cells = x.tolist()
    cells[0][0] = {"inf": math.inf, "bool": True, "str": "7"}[kind]
    with pytest.raises(ReliabilityError, match={"inf": "infinite", "bool": "boolean", "str": "numeric"}[kind]):
        icc(cells)


# ------------------------------------------------------------------------------------ agreement
@SETTINGS
@given(rating_matrices(min_items=2, high=5), rating_matrices(min_items=2, high=5))
def test_nmae_is_bounded_and_symmetric(a, b):
    n = min(a.shape[0], b.shape[0])
    a, b = a[:n], b[:n]
    res = nmae(a, b, "0-5")
    assert 0 <= res.value <= 1
    assert res.value == pytest.approx(nmae(b, a, "0-5").value, rel=1e-12)
    assert res.value == pytest.approx(np.mean(np.abs(a.mean(axis=1) - b.mean(axis=1))) / 5, rel=1e-12)


@SETTINGS
@given(rating_matrices(max_raters=4), st.sampled_from([0.5, 4.0]), st.floats(-50, 50))
def test_interval_alpha_is_affine_invariant_and_at_most_one(x, scale, shift):
    try:
        base = krippendorff_alpha(x, "interval").value
    except ReliabilityError:
        # complete data: the only undefined case is no expected disagreement (one value throughout)
        assert np.all(x == x.flat[0])
        return
    assert base <= 1 + 1e-12
    assert krippendorff_alpha(scale * x + shift, "interval").value == pytest.approx(base, rel=1e-9, abs=1e-9)
