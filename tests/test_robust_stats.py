"""Statistics under hostile input through the assertion helpers: a clear exception or a finite
statistic, never a passing NaN."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from robust import hostile_stats

REPORT = hostile_stats.hostile_stats_run()
HELPERS = sorted({o.helper for o in REPORT.outcomes})
MUST_ERROR = {"inf", "-inf", "all_nan", "one_item", "empty", "strings"}


def test_every_helper_saw_every_hostile_case():
    cases = set(hostile_stats.hostile_matrices())
    assert len(HELPERS) == 6 and len(cases) >= 12
    assert {(o.helper, o.case) for o in REPORT.outcomes} == {(h, c) for h in HELPERS for c in cases}


def test_no_helper_ever_passes_or_fails_with_a_non_finite_statistic():
    assert not REPORT.passing_nan, [(o.helper, o.case, o.values) for o in REPORT.passing_nan]
    for o in REPORT.outcomes:
        if o.kind in ("passed", "failed"):
            assert o.values and all(math.isfinite(v) for v in o.values), o


@pytest.mark.parametrize("helper", HELPERS)
def test_undefined_input_raises_a_clear_error(helper):
    for o in REPORT.outcomes:
        if o.helper == helper and o.case in MUST_ERROR and not (o.case == "strings" and "agreement" in helper
                                                                    or o.case == "strings" and "nmae" in helper):
            assert o.kind == "error", o
            assert any(w in o.detail.lower() for w in ("infinite", "missing", "no rating", "item", "empty",
                                                      "numeric")), o


def test_non_numeric_cells_in_agreement_name_the_cell():
    bad = [o for o in REPORT.outcomes if o.case == "strings"]
    assert all(o.kind == "error" for o in bad), [(o.helper, o.detail) for o in bad if o.kind != "error"]


def test_icc_is_location_invariant_at_huge_offsets():
    from pytest_judgerel.stats.icc import icc

    m = hostile_stats.hostile_matrices()["clean"]
    ref = icc(m, form="A,1").value
    assert icc(m + 1e9, form="A,1").value == pytest.approx(ref, abs=1e-6)
    shifted = m + 1e15  # stored values are rounded to multiples of 0.125: compare with the same data
    assert icc(shifted, form="A,1").value == pytest.approx(icc(shifted - 1e15, form="A,1").value, abs=1e-9)


def test_overflowing_ratings_never_pass():
    big = [o for o in REPORT.outcomes if o.case == "overflow_1e300"]
    assert big and all(o.kind == "error" for o in big), big


def test_overflow_error_names_the_overflow():
    from pytest_judgerel.errors import ReliabilityError
    from pytest_judgerel.stats.icc import icc

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ReliabilityError, match="overflow|too large|finite"):
            icc(hostile_stats.hostile_matrices()["overflow_1e300"], form="A,1")


def test_constant_rater_and_single_rater_designs_give_finite_values():
    """Defined cases stay defined: a constant column still has an ICC; agreement with a one-column
    judge is a mean comparison."""
    ok = [o for o in REPORT.outcomes if o.case in ("constant_all", "one_rater") and o.kind == "passed"]
    assert ok and all(all(math.isfinite(v) for v in o.values) for o in ok)
    from pytest_judgerel import assert_icc_above

    m = hostile_stats.hostile_matrices()["clean"].copy()
    m[:, 2] = 2.0
    res = assert_icc_above(m, -1.0)
    assert np.isfinite(res.value)
