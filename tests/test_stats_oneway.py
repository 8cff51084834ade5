"""One-way ICC with unequal numbers of ratings per item (stats.oneway).

Expectations come from (1) the pingouin golden vectors for equal group sizes, (2) a one-way
ANOVA written out with plain loops in this file, (3) scipy.stats.f_oneway for F and p.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from pytest_judgerel.errors import ReliabilityError
from pytest_judgerel.stats import OneWayICCResult, icc, icc_oneway

DATA = Path(__file__).parent / "data" / "stats"


def _golden(name):
    with open(DATA / f"{name}_pingouin_icc.csv", newline="") as fh:
        return {row["Type"]: row for row in csv.DictReader(fh)}


def _matrix(name):
    with open(DATA / f"{name}_matrix.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    return np.array([[float(x) for x in r[1:]] for r in rows[1:]])


@pytest.mark.parametrize("name", ["sf_6x4", "gen_25x2", "gen_150x12"])
def test_equal_group_sizes_equal_the_golden_one_way_forms(name):
    x, gold = _matrix(name), _golden(name)
    for form in ("1,1", "1,k"):
        g = gold[f"ICC({form})"]
        r = icc_oneway(x, form)
        assert r.n0 == pytest.approx(x.shape[1], abs=1e-12)
        assert r.value == pytest.approx(float(g["ICC"]), abs=1e-12)
        assert r.f == pytest.approx(float(g["F"]), rel=1e-12)
        assert (r.df1, r.df2) == (int(g["df1"]), int(g["df2"]))
        assert r.p == pytest.approx(float(g["pval"]), rel=1e-9, abs=1e-300)
        assert r.ci_low == pytest.approx(float(g["CI95_lower"]), abs=1e-12)
        assert r.ci_high == pytest.approx(float(g["CI95_upper"]), abs=1e-12)
        same = icc(x, form)  # and the project's balanced implementation
        assert (r.value, r.ci_low, r.ci_high) == pytest.approx((same.value, same.ci_low, same.ci_high), abs=1e-12)


def _hand_anova(groups):
    """Textbook one-way ANOVA with loops (Searle 1971): MSB, MSW, n0."""
    a = len(groups)
    n_total = sum(len(g) for g in groups)
    grand = sum(sum(g) for g in groups) / n_total
    ssb = 0.0
    ssw = 0.0
    for g in groups:
        m = sum(g) / len(g)
        ssb += len(g) * (m - grand) ** 2
        for y in g:
            ssw += (y - m) ** 2
    msb, msw = ssb / (a - 1), ssw / (n_total - a)
    n0 = (n_total - sum(len(g) ** 2 for g in groups) / n_total) / (a - 1)
    return msb, msw, n0


UNEQUAL = [  # 2 to 6 ratings per item, as in ConvAbuse
    [0, 1], [3, 4, 4], [1, 1, 2, 0, 1, 2], [4, 3, 4, 4], [2, 2], [0, 0, 1, 0, 0],
    [3, 2, 4], [1, 0], [4, 4, 3, 4, 4, 3], [2, 3, 1],
]


def test_unequal_groups_match_a_hand_written_anova_and_scipy_f_oneway():
    msb, msw, n0 = _hand_anova(UNEQUAL)
    single, average = icc_oneway(UNEQUAL, "1,1"), icc_oneway(UNEQUAL, "1,k")
    assert single.n0 == pytest.approx(n0, rel=1e-12) and not float(n0).is_integer()
    assert single.value == pytest.approx((msb - msw) / (msb + (n0 - 1) * msw), rel=1e-12)
    assert average.value == pytest.approx((msb - msw) / msb, rel=1e-12)
    assert (single.ms_between, single.ms_within) == pytest.approx((msb, msw), rel=1e-12)
    ref = sps.f_oneway(*[np.array(g, float) for g in UNEQUAL])
    assert single.f == pytest.approx(ref.statistic, rel=1e-12)
    assert single.p == pytest.approx(ref.pvalue, rel=1e-9)
    n_total = sum(map(len, UNEQUAL))
    assert (single.n, single.n_ratings, single.df1, single.df2) == (10, n_total, 9, n_total - 10)
    assert (single.k_min, single.k_max) == (2, 6)
    # interval: F limits with n0 in place of k (Searle 1971)
    fl = single.f / sps.f.ppf(0.975, 9, n_total - 10)
    fu = single.f * sps.f.ppf(0.975, n_total - 10, 9)
    assert single.ci == pytest.approx(((fl - 1) / (fl + n0 - 1), (fu - 1) / (fu + n0 - 1)), rel=1e-9)
    assert average.ci == pytest.approx((1 - 1 / fl, 1 - 1 / fu), rel=1e-9)
    assert "n0 = " in str(single) and isinstance(single, OneWayICCResult)


def test_matrix_with_nan_equals_ragged_lists_and_ignores_column_positions():
    width = max(map(len, UNEQUAL))
    mat = np.full((len(UNEQUAL), width), np.nan)
    for i, g in enumerate(UNEQUAL):
        mat[i, width - len(g):] = g  # right-aligned: positions carry no meaning
    mat = np.vstack([mat, np.full(width, np.nan)])  # an item nobody rated
    r = icc_oneway(mat)
    assert r.value == pytest.approx(icc_oneway(UNEQUAL).value, rel=1e-12)
    assert r.n_omitted == 1 and r.n == 10


def test_large_offset_keeps_digits():
    shifted = [[y + 1e9 for y in g] for g in UNEQUAL]
    assert icc_oneway(shifted).value == pytest.approx(icc_oneway(UNEQUAL).value, abs=1e-9)


def test_perfect_within_item_agreement_is_one():
    r = icc_oneway([[1, 1], [3, 3, 3], [5]])
    assert r.value == 1.0 and math.isinf(r.f) and r.p == 0.0 and r.ci == (1.0, 1.0)


@pytest.mark.parametrize("data,message", [
    ([[1, 2, 3]], "at least 2"),
    ([[1], [2], [3]], "single rating"),
    ([[2, 2], [2, 2, 2]], "identical"),
    ([[1, "x"], [2, 3]], "numeric"),
])
def test_bad_input_names_the_cause(data, message):
    with pytest.raises(ReliabilityError, match=message):
        icc_oneway(data)


def test_equal_item_means_give_the_lowest_icc_as_stats_icc_does():
    """MSB = 0: ICC(1,1) = -MSW / (MSB + (n0 - 1) MSW) = -1/(n0 - 1), F = 0, p = 1, like
    icc(x, "1,1") on equal group sizes; ICC(1,k) = (MSB - MSW) / MSB stays undefined."""
    x = [[1, 2, 3], [3, 2, 1], [2, 1, 3]]
    one, ref = icc_oneway(x), icc(x, "1,1")
    assert one.value == pytest.approx(ref.value) == pytest.approx(-0.5)
    assert (one.f, one.p) == (ref.f, ref.p) == (0.0, 1.0)
    assert one.ci == pytest.approx(ref.ci) and ref.ci == pytest.approx((-0.5, -0.5))
    with pytest.raises(ReliabilityError, match="item means are equal.*ICC\\(1,k\\)"):
        icc_oneway(x, "1,k")
    with pytest.raises(ReliabilityError, match="item means are equal"):
        icc(x, "1,k")
    unequal = icc_oneway([[1, 3], [3, 1, 2]])  # means 2 and 2; n0 = (5 - 13/5) / 1 = 2.4
    assert unequal.value == pytest.approx(-1 / 1.4) and unequal.n0 == pytest.approx(2.4)


def test_bad_form_and_confidence():
    with pytest.raises(ReliabilityError, match="forms"):
        icc_oneway(UNEQUAL, "A,1")
    with pytest.raises(ReliabilityError, match="confidence"):
        icc_oneway(UNEQUAL, confidence=1.5)
