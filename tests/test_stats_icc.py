"""ICC: golden vectors (pingouin 0.7 = psych >= 2.2.3, STATS_NOTES.md section 2), robustness, bad input."""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pytest_judgerel.errors import ReliabilityError
from pytest_judgerel.stats import ICCResult, icc, icc_table, koo_li_band
from pytest_judgerel.stats.icc import FORMS, canonical_form

DATA = Path(__file__).parent / "data" / "stats"
MATRICES = ("sf_6x4", "gen_150x12", "gen_25x2")
SF = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], dtype=float)


def load_matrix(name: str) -> np.ndarray:
    with open(DATA / f"{name}_matrix.csv", newline="") as fh:
        rows = list(csv.reader(fh))[1:]
    return np.array([[float(v) for v in r[1:]] for r in rows])


def load_pingouin(name: str) -> dict[str, dict[str, float]]:
    with open(DATA / f"{name}_pingouin_icc.csv", newline="") as fh:
        return {r["Type"]: {k: float(v) for k, v in r.items() if k != "Type"} for r in csv.DictReader(fh)}


def assert_p_close(ours: float, ref: float) -> None:
    """p-values: rtol 1e-10, or on a log scale where they are subnormal / underflow."""
    if ref < 1e-300:
        assert 0 <= ours < 1e-300
        if ref > 0:
            assert ours > 0 and abs(math.log10(ours) - math.log10(ref)) < 1e-3
    else:
        assert ours == pytest.approx(ref, rel=1e-10)


# ------------------------------------------------------------------------------------ golden
@pytest.mark.parametrize("name", MATRICES)
def test_all_six_forms_equal_pingouin_golden_vectors(name):
    table = icc_table(load_matrix(name))
    ref = load_pingouin(name)
    assert set(ref) == {r.label for r in table.results.values()}
    for label, row in ref.items():
        res = table[label]
        assert res.value == pytest.approx(row["ICC"], rel=1e-12, abs=0)
        assert res.f == pytest.approx(row["F"], rel=1e-12, abs=0)
        assert res.ci_low == pytest.approx(row["CI95_lower"], rel=1e-12, abs=0)
        assert res.ci_high == pytest.approx(row["CI95_upper"], rel=1e-12, abs=0)
        assert (res.df1, res.df2) == (int(row["df1"]), int(row["df2"]))
        assert_p_close(res.p, row["pval"])
        assert res.ci_low <= res.value <= res.ci_high


@pytest.mark.parametrize("name", MATRICES)
def test_single_form_call_equals_table_and_json_reference(name):
    ref = json.loads((DATA / "reference_values.json").read_text())["icc"][name]["pingouin"]
    x = load_matrix(name)
    for row in ref:
        res = icc(x, row["Type"])
        assert res.value == pytest.approx(row["ICC"], rel=1e-12, abs=0)
        assert res.ci == pytest.approx((row["CI95_lower"], row["CI95_upper"]), rel=1e-12, abs=0)


@pytest.mark.parametrize("name", MATRICES)
def test_mean_squares_rater_bias_test_and_satterthwaite_df(name):
    anova = json.loads((DATA / "reference_values.json").read_text())["anova"][name]
    res = icc(load_matrix(name), "A,1")
    assert (res.n, res.k) == (anova["n"], anova["k"])
    for ours, key in ((res.ms_items, "MSR"), (res.ms_raters, "MSC"), (res.ms_error, "MSE"), (res.ms_within, "MSW"),
                      (res.f_raters, "F_raters"), (res.satterthwaite_df, "v_satterthwaite")):
        assert ours == pytest.approx(anova[key], rel=1e-12), key
    assert_p_close(res.p_raters, anova["p_raters"])
    assert (res.df1_raters, res.df2_raters) == (res.k - 1, (res.n - 1) * (res.k - 1))


def test_shrout_fleiss_published_two_decimal_values_and_rater_bias():
    t = icc_table(SF)
    published = {"1,1": 0.17, "A,1": 0.29, "C,1": 0.71, "1,k": 0.44, "A,k": 0.62, "C,k": 0.91}
    for form, value in published.items():
        assert round(t[form].value, 2) == value
    # the F reported with each form tests "items differ"; the rater-bias test is MSC/MSE
    assert t["A,1"].f == pytest.approx(t["A,1"].ms_items / t["A,1"].ms_error)
    assert t["A,1"].f_raters == pytest.approx(31.86648501362406, rel=1e-12)
    assert t["A,1"].p_raters == pytest.approx(9.454263202470431e-07, rel=1e-10)
    assert t["A,1"].satterthwaite_df == pytest.approx(4.785143862212757, rel=1e-12)
    assert t["C,1"].satterthwaite_df is None


def test_agreement_average_ci_is_spearman_brown_of_single_limits():
    t = icc_table(load_matrix("gen_25x2"))
    k = t.k
    sb = lambda r: k * r / (1 + (k - 1) * r)  # noqa: E731
    assert t["A,k"].ci_low == pytest.approx(sb(t["A,1"].ci_low), rel=1e-12)
    assert t["A,k"].ci_high == pytest.approx(sb(t["A,1"].ci_high), rel=1e-12)


# ------------------------------------------------------------------------------------ forms
@pytest.mark.parametrize(
    "alias, canon",
    [("A,1", "A,1"), ("ICC(A,1)", "A,1"), ("ICC2", "A,1"), ("ICC(2,1)", "A,1"), ("icc2k", "A,k"),
     ("ICC1", "1,1"), ("ICC1k", "1,k"), ("ICC3", "C,1"), ("ICC(3,k)", "C,k"), ("c,k", "C,k"),
     ("ICC(A,L)", "A,k"), ("ICC(A, k)", "A,k"), ("1,1", "1,1")],
)
def test_form_aliases(alias, canon):
    assert canonical_form(alias) == canon
    assert icc(SF, alias).form == canon


@pytest.mark.parametrize("bad", ["B,1", "ICC4", "", "A,1,1", None, 2])
def test_unknown_form_is_rejected_with_the_valid_names(bad):
    with pytest.raises(ReliabilityError, match="unknown ICC form"):
        icc(SF, bad)


def test_table_mapping_interface_and_text():
    t = icc_table(SF)
    assert list(t) == list(FORMS) and len(t) == 6
    text = str(t)
    for form in FORMS:
        assert f"ICC({form})" in text
    assert "rater bias" in text
    d = json.loads(json.dumps(t.to_dict()))
    assert d["forms"]["A,k"]["value"] == pytest.approx(t["A,k"].value)
    assert d["forms"]["A,1"]["band"] == "poor"


def test_result_is_frozen_and_str_shows_band_ci_and_rater_bias():
    res = icc(load_matrix("gen_150x12"), "A,k")
    assert isinstance(res, ICCResult)
    with pytest.raises(AttributeError):
        res.value = 0.0  # type: ignore[misc]
    text = str(res)
    assert "ICC(A,k) = 0.953" in text and "excellent" in text and "95% CI 0.940, 0.964" in text
    assert "rater bias F(11, 1639)" in text


@pytest.mark.parametrize(
    "value, band", [(-0.3, "poor"), (0.0, "poor"), (0.4999, "poor"), (0.5, "moderate"), (0.7499, "moderate"),
                    (0.75, "good"), (0.9, "good"), (0.9001, "excellent"), (1.0, "excellent")],
)
def test_koo_li_bands(value, band):
    assert koo_li_band(value) == band


def test_koo_li_band_rejects_nan():
    with pytest.raises(ReliabilityError):
        koo_li_band(float("nan"))


def test_confidence_level_changes_interval_width():
    x = load_matrix("gen_25x2")
    for form in FORMS:
        wide, narrow = icc(x, form, confidence=0.99), icc(x, form, confidence=0.80)
        assert wide.ci_low < narrow.ci_low <= narrow.value <= narrow.ci_high < wide.ci_high
        assert narrow.confidence == 0.80


# ------------------------------------------------------------------------------------ robustness
@pytest.mark.parametrize("name", ["sf_6x4", "gen_25x2"])
def test_large_offset_changes_no_icc_by_more_than_1e9(name):
    x = load_matrix(name)  # integer-valued, so x + 1e9 is exact
    base, shifted = icc_table(x), icc_table(x + 1e9)
    for form in FORMS:
        for attr in ("value", "ci_low", "ci_high"):
            assert abs(getattr(shifted[form], attr) - getattr(base[form], attr)) <= 1e-9, (form, attr)
        assert shifted[form].f == pytest.approx(base[form].f, rel=1e-9)


def test_perfect_agreement_gives_one_with_degenerate_but_finite_ci():
    x = np.array([[1, 1, 1], [3, 3, 3], [2, 2, 2], [5, 5, 5]], dtype=float)
    for res in icc_table(x).results.values():
        assert res.value == 1.0 and res.ci == (1.0, 1.0)
        assert res.f == math.inf and res.p == 0.0
        assert res.f_raters == 0.0 and res.p_raters == 1.0


def test_perfect_consistency_with_rater_offsets():
    x = np.array([[1, 3, 6], [2, 4, 7], [4, 6, 9], [0, 2, 5], [3, 5, 8]], dtype=float)
    t = icc_table(x)
    assert t["C,1"].value == 1.0 and t["C,k"].value == 1.0
    assert t["C,1"].ci == (1.0, 1.0)
    assert 0 < t["A,1"].value < t["A,k"].value < 1
    for res in t.results.values():
        assert not any(math.isnan(v) for v in (res.value, res.ci_low, res.ci_high, res.f, res.p))
    assert t["A,1"].f_raters == math.inf and t["A,1"].p_raters == 0.0


def test_integer_input_equals_float_input():
    assert icc(SF.astype(int), "C,k") == icc(SF, "C,k")


# ------------------------------------------------------------------------------------ missing data
def test_nan_raise_names_the_missing_items_and_raters():
    x = SF.copy()
    x[2, 1] = np.nan
    x[4, 3] = np.nan
    with pytest.raises(ReliabilityError, match=r"item\(s\) \[2, 4\] from rater\(s\) \[1, 3\]"):
        icc(x)


def test_nan_omit_drops_items_listwise_and_reports_count():
    x = SF.copy()
    x[2, 1] = np.nan
    res = icc(x, "A,1", nan_policy="omit")
    assert res.n_omitted == 1 and res.n == 5
    assert res == dataclasses.replace(icc(np.delete(SF, 2, axis=0), "A,1"), n_omitted=1)
    assert "1 omitted" in str(res)


def test_nan_omit_with_fewer_than_two_complete_items_fails():
    x = SF.copy()
    x[1:, 0] = np.nan
    with pytest.raises(ReliabilityError, match="1 complete item"):
        icc(x, nan_policy="omit")


def test_none_counts_as_missing():
    rows = SF.tolist()
    rows[0][0] = None
    with pytest.raises(ReliabilityError, match="missing"):
        icc(rows)


def test_ratings_like_object_ids_appear_in_the_error():
    class FakeRatings:
        item_ids = ("q1", "q2", "q3", "q4", "q5", "q6")
        rater_ids = ("gpt", "claude", "llama", "human")

        def to_matrix(self):
            x = SF.copy()
            x[3, 2] = np.nan
            return x

    with pytest.raises(ReliabilityError, match=r"\['q4'\] from rater\(s\) \['llama'\]"):
        icc(FakeRatings())
    assert icc(FakeRatings(), nan_policy="omit").n == 5


def test_accepts_the_project_ratings_model():
    from pytest_judgerel.ratings import Ratings

    r = Ratings.from_array(SF)
    assert icc(r, "C,1").value == pytest.approx(0.7148407148407154, rel=1e-12)


def test_three_d_repeats_need_an_explicit_duplicates_policy():
    rng = np.random.default_rng(3)
    cube = SF[:, :, None] + rng.normal(0, 0.5, size=(6, 4, 3))
    with pytest.raises(ReliabilityError, match="3-D"):
        icc(cube)
    assert icc(cube, duplicates="mean").value == pytest.approx(icc(cube.mean(axis=2)).value, rel=1e-12)
    assert icc(cube, duplicates="first").value == pytest.approx(icc(cube[:, :, 0]).value, rel=1e-12)
    assert icc(cube, duplicates="last").value == pytest.approx(icc(cube[:, :, 2]).value, rel=1e-12)
    cube[0, 0, 0] = np.nan  # mean and first use the repeats present
    assert icc(cube, duplicates="first").ms_items == pytest.approx(
        icc(np.where(np.isnan(cube[:, :, 0]), cube[:, :, 1], cube[:, :, 0])).ms_items)
    with pytest.raises(ReliabilityError, match="duplicates must be one of"):
        icc(cube, duplicates="median")


# ------------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    "data, message",
    [
        ([[1.0, 2.0, 3.0]], "1 item"),
        ([[1.0], [2.0], [3.0]], "1 rater"),
        ([[3.0, 3.0], [3.0, 3.0], [3.0, 3.0]], "all ratings are identical"),
        ([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]], "every rater gave one constant score"),
        ([[1.0, 2.0], [3.0, math.inf]], "infinite"),
        ([["a", "b"], ["c", "d"]], "numeric"),
        ([[1.0, "x"], [2.0, 3.0]], "numeric"),
        ([[True, False], [False, True]], "boolean"),
        ([[1.0, True], [2.0, 3.0]], "boolean"),
        ([[1.0, 2.0], [3.0]], "ragged"),
        (np.zeros((2, 2, 2)), "3-D"),
        (np.zeros((0, 3)), "empty"),
        ([1.0, 2.0, 3.0], "2-D"),
        ("1,2;3,4", "numeric"),
        (None, "numeric"),
    ],
)
def test_bad_input_raises_reliability_error_naming_the_cause(data, message):
    with pytest.raises(ReliabilityError, match=message):
        icc(data)


def test_equal_item_means_make_average_forms_undefined_but_single_forms_negative():
    x = np.array([[1.0, 3.0], [3.0, 1.0], [2.0, 2.0]])
    single = icc(x, "C,1")
    assert single.value == pytest.approx(-1.0) and single.f == 0.0 and single.p == 1.0
    with pytest.raises(ReliabilityError, match="all item means are equal"):
        icc(x, "C,k")
    with pytest.raises(ReliabilityError, match=r"ICC\(1,k\).* undefined"):
        icc_table(x)


def test_two_by_two_with_no_item_or_rater_effect_is_undefined_for_agreement():
    with pytest.raises(ReliabilityError, match=r"ICC\(A,1\) is undefined"):
        icc([[1.0, 2.0], [2.0, 1.0]], "A,1")


@pytest.mark.parametrize("confidence", [0, 1, 1.5, -0.1, True, "0.95"])
def test_bad_confidence(confidence):
    with pytest.raises(ReliabilityError, match="confidence"):
        icc(SF, confidence=confidence)


def test_bad_nan_policy():
    with pytest.raises(ReliabilityError, match="nan_policy"):
        icc(SF, nan_policy="propagate")


# ------------------------------------------------------------------------------------ package
def test_package_import_is_lazy_and_icc_stays_the_function():
    code = (
        "import sys\n"
        "import pytest_judgerel.stats as s\n"
        "assert 'scipy' not in sys.modules and 'numpy' not in sys.modules, 'eager import'\n"
        "import pytest_judgerel.stats.icc\n"
        "from pytest_judgerel.stats import icc, nmae, scale_consistency\n"
        "assert callable(icc) and icc.__name__ == 'icc' and s.icc is icc\n"
        "assert icc([[1, 2], [2, 3], [4, 4]]).form == 'A,1'\n"
        "try:\n    s.no_such_name\nexcept AttributeError:\n    pass\nelse:\n    raise SystemExit('no error')\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_average_agreement_interval_is_unbounded_below_past_the_step_up_pole():
    x = [[0, 0], [0, 0], [1, 0], [0, 1]]
    single, average = icc(x, "A,1"), icc(x, "A,k")
    assert single.ci_low < -1.0  # below -1/(k-1) for k = 2
    assert average.ci_low == -math.inf and average.ci_high == pytest.approx(2 * single.ci_high / (1 + single.ci_high))
    assert average.value == pytest.approx(2 * single.value / (1 + single.value))


def test_average_agreement_form_is_undefined_when_single_form_is_past_the_pole():
    x = [[0, 1, 0], [0, 0, 2]]
    assert icc(x, "A,1").value == pytest.approx(-2 / 3)  # pingouin would report ICC(A,k) = 6
    with pytest.raises(ReliabilityError, match=r"ICC\(A,k\) is undefined.*pole"):
        icc(x, "A,k")


def test_an_empty_rater_column_is_named_instead_of_silently_dropped():
    x = SF.copy()
    x[:, 3] = np.nan  # pingouin would silently analyse the other 3 raters
    with pytest.raises(ReliabilityError, match=r"rater\(s\) \[3\] have no ratings at all"):
        icc(x, nan_policy="omit")


# ------------------------------------------------------------------------------------ interval order
@pytest.mark.parametrize("x", [[[0, 0], [0, 0], [1, 1]], [[0, 0], [0, 0], [3, 3]], [[0, 0, 0], [0, 0, 0], [7, 7, 7]],
                               [[-3, -3], [-2.9, -2.9], [-2.8, -2.8]]])
def test_perfect_agreement_on_few_items_has_the_exact_interval_one_one(x):
    # MS_raters = MS_error = 0: every form is 1 and so is every limit.  ICC(A,1) and ICC(A,k) used to
    # come out as (1.0000000000000002, 1.0), a lower limit above the estimate and the upper limit.
    for res in icc_table(x).results.values():
        assert res.value == 1.0 and res.ci == (1.0, 1.0), res.label


def test_agreement_interval_is_widened_to_contain_a_strongly_negative_estimate():
    # By hand: grand mean 1.75, row means 1 and 2.5, column means 5 and -1.5: MSR = 2.25,
    # MSC = 42.25, MSE = 86.75 - 2.25 - 42.25 = 42.25, so ICC(A,1) = (2.25 - 42.25) / (2.25 + 42.25).
    # The McGraw & Wong limits at the Satterthwaite df are about (-1.00, -0.99), both below it.
    single = icc([[1, 1], [9, -4]], "A,1")
    assert single.value == pytest.approx(-40 / 44.5, rel=1e-12)
    assert single.ci_low < single.value == single.ci_high
    assert single.ci_low == pytest.approx(-1.0, abs=1e-3)
    # ICC(A,k) = 2 rho / (1 + rho) = -24 for [[2, 7], [5, 5]] (rho = -12/13); its stepped-up upper
    # limit was -152961: the interval is now (-inf, -24].
    average = icc([[2, 7], [5, 5]], "A,k")
    assert average.value == pytest.approx(-24.0, rel=1e-12)
    assert average.ci == (-math.inf, average.value)


@pytest.mark.parametrize("eps", [1e-8, 1e-9, 1e-10, 1e-11])
def test_near_perfect_agreement_is_about_one_not_undefined(eps):
    # One rating off by eps: ICC(A,1) rounds to 1.  The Satterthwaite df was then NaN (a division by
    # 1 - rho), which made the interval, and so the whole ICC, "undefined (degenerate)".
    r = icc([[1, 1], [2, 2], [3, 3 + eps], [4, 4]], "A,1")
    assert r.value == pytest.approx(1.0, abs=1e-12) and r.ci_low <= r.value <= r.ci_high
    assert r.ci_low > 0.999
    # MS_raters = MS_error here (a single deviation), so the limit of the df as rho -> 1,
    # (k-1)(MSC + (n-1) MSE)^2 / (MSC^2 + (n-1) MSE^2), is (1 + 3)^2 / (1 + 3) = 4 with n = 4, k = 2
    assert r.satterthwaite_df == pytest.approx(4.0, rel=1e-9)


def test_satterthwaite_df_in_the_limiting_cases():
    # perfect agreement: (n-1)(k-1); only reported, the interval is [1, 1] whatever the df
    assert icc([[1, 1, 1], [3, 3, 3], [2, 2, 2], [5, 5, 5]], "A,1").satterthwaite_df == 6.0
    # MS_error = 0 with rater offsets: v = (a MSC)^2 / ((a MSC)^2 / (k-1)) = k - 1
    offsets = icc([[1, 3, 6], [2, 4, 7], [4, 6, 9], [0, 2, 5], [3, 5, 8]], "A,1")
    assert offsets.satterthwaite_df == pytest.approx(2.0, rel=1e-12)
    half = [[i, i + 0.5] for i in range(8)]  # MS_raters = 8 * 2 * 0.25**2 = 1 exactly, MS_error = 0
    r = icc(half, "A,1")
    assert (r.ms_raters, r.ms_error) == (1.0, 0.0) and r.satterthwaite_df == pytest.approx(1.0, rel=1e-12)
    assert icc(half, "C,1").satterthwaite_df is None  # only the A forms use it


# ------------------------------------------------------------------------------------ exact texts
@pytest.mark.parametrize("data, form, message", [
    ([[0, 1, 0], [0, 0, 2]], "A,k", "ICC(A,k) is undefined for these ratings: ICC(A,1) = -0.6667 is at or below "
     "-1/(k-1) = -0.5, the pole of the Spearman-Brown step-up to ICC(A,k) (raters disagree more than chance allows)"),
    ([[1, 5], [5, 1]], None, "ICC(A,1), ICC(1,k), ICC(A,k), ICC(C,k) are undefined for these ratings: all item "
     "means are equal (zero between-item variance, MS_items = 0)"),
    ([[1, 2], [1, 2], [1, 2]], None, "ICC(A,1), ICC(C,1), ICC(1,k), ICC(A,k), ICC(C,k) are undefined for these "
     "ratings: items do not differ: every rater gave one constant score to all items (zero between-item and "
     "residual variance)"),
    ([[1, 5], [5, 1]], "C,k", "ICC(C,k) is undefined for these ratings: all item means are equal"),
])
def test_undefined_forms_are_named_with_their_cause(data, form, message):
    with pytest.raises(ReliabilityError) as info:
        icc_table(data) if form is None else icc(data, form)
    assert str(info.value).startswith(message)


def test_koo_li_band_refuses_booleans_and_non_numbers():
    for bad in (True, "0.8", None):
        with pytest.raises(ReliabilityError, match=rf"^koo_li_band needs a number, got {bad!r}$"):
            koo_li_band(bad)
    assert koo_li_band(np.float64(0.95)) == "excellent" and koo_li_band(1) == "excellent"


def test_text_and_dict_of_the_shrout_fleiss_example():
    # values to two decimals as published by Shrout & Fleiss (1979), Table 4; intervals = pingouin (golden)
    t = icc_table(SF)
    assert str(t) == "\n".join([
        "ICC table: n = 6 items, k = 4 raters",
        "form          ICC  95% CI                     F   df1    df2         p  band",
        "ICC(1,1)    0.166  [-0.133,  0.723]      1.795     5     18     0.165  poor",
        "ICC(A,1)    0.290  [ 0.019,  0.761]      11.03     5     15  0.000135  poor",
        "ICC(C,1)    0.715  [ 0.342,  0.946]      11.03     5     15  0.000135  moderate",
        "ICC(1,k)    0.443  [-0.884,  0.912]      1.795     5     18     0.165  poor",
        "ICC(A,k)    0.620  [ 0.071,  0.927]      11.03     5     15  0.000135  moderate",
        "ICC(C,k)    0.909  [ 0.676,  0.986]      11.03     5     15  0.000135  excellent",
        "rater bias (MS_raters/MS_error): F(3, 15) = 31.87, p = 9.45e-07",
    ])
    assert str(t["A,1"]) == ("ICC(A,1) = 0.290 [95% CI 0.019, 0.761] poor (Koo & Li; CI: poor to good); "
                             "F(5, 15) = 11.03, p = 0.000135; n = 6 items, k = 4 raters; rater bias F(3, 15) = "
                             "31.87, p = 9.45e-07")
    assert "(Koo & Li; CI: excellent);" in str(icc_table([[1, 1], [2, 2], [3, 3.01], [4, 4]])["C,1"])
    omitted = SF.tolist()
    omitted[5][3] = None
    assert "; n = 5 items, 1 omitted, k = 4 raters;" in str(icc(omitted, nan_policy="omit"))
    d = t.to_dict()
    assert (d["n"], d["k"], d["n_omitted"], d["confidence"]) == (6, 4, 0, 0.95) and list(d["forms"]) == list(FORMS)
    assert d["forms"]["A,1"]["label"] == "ICC(A,1)" and d["forms"]["A,1"]["band"] == "poor"
    assert d["forms"]["C,k"]["value"] == t["C,k"].value
    assert json.loads(json.dumps(d)) == d


def _mcgraw_wong_a1_interval(x, confidence):
    """ICC(A,1) limits of McGraw & Wong (1996), Table 7, case 2A, written out from the paper with
    scipy's F quantiles (not the project's code path), Satterthwaite df at the estimate."""
    from scipy import stats as sps

    x = np.asarray(x, dtype=float)
    n, k = x.shape
    g = x.mean()
    msr = k * ((x.mean(axis=1) - g) ** 2).sum() / (n - 1)
    msc = n * ((x.mean(axis=0) - g) ** 2).sum() / (k - 1)
    sse = ((x - x.mean(axis=1, keepdims=True) - x.mean(axis=0, keepdims=True) + g) ** 2).sum()
    mse = sse / ((n - 1) * (k - 1))
    rho = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
    a = k * rho / (n * (1 - rho))
    b = 1 + k * rho * (n - 1) / (n * (1 - rho))
    v = (a * msc + b * mse) ** 2 / ((a * msc) ** 2 / (k - 1) + (b * mse) ** 2 / ((n - 1) * (k - 1)))
    q = 1 - (1 - confidence) / 2
    f_star, f_star_rev = sps.f.ppf(q, n - 1, v), sps.f.ppf(q, v, n - 1)
    lo = n * (msr - f_star * mse) / (f_star * (k * msc + (k * n - k - n) * mse) + n * msr)
    hi = n * (f_star_rev * msr - mse) / (k * msc + (k * n - k - n) * mse + n * f_star_rev * msr)
    return rho, lo, hi


@pytest.mark.parametrize("confidence", [0.1, 0.3, 0.6, 0.95, 0.99])
def test_agreement_interval_equals_the_published_formula_at_any_confidence(confidence):
    # At low confidence, 2 items x 6 raters and 30 items with a large rater offset put one of the two
    # F quantiles below 1: the other branch of the overflow-safe form of the limits.
    two_items = [[3, 4, 3, 5, 4, 3], [6, 7, 5, 6, 7, 6]]
    offset = [[0.3, 7.1], [1.2, 4.2], [1.0, 5.3], [-0.3, 8.1], [2.3, 7.0], [2.2, 7.4], [1.5, 6.6], [3.0, 5.8],
              [3.1, 7.9], [3.4, 8.2], [3.5, 7.2], [4.3, 8.1], [3.4, 9.1], [4.3, 8.5], [4.3, 9.7], [5.8, 10.3],
              [5.6, 10.6], [5.6, 10.4], [5.4, 11.8], [6.3, 12.4], [6.9, 12.2], [7.0, 11.4], [8.9, 13.3],
              [8.9, 12.4], [5.6, 14.2], [6.7, 12.5], [8.8, 14.9], [8.9, 14.3], [9.9, 13.4], [10.2, 14.7]]
    two_noisy = [[1, 5, 2, 6, 3, 4], [4, 2, 6, 5, 7, 3]]  # at 30%: F* < 1 and a lower limit below the estimate
    for x in (SF, load_matrix("gen_25x2")[:12], [[3, 4, 2], [5, 5, 4], [1, 2, 2], [4, 3, 5], [2, 2, 1]],
              two_items, offset, two_noisy):
        rho, lo, hi = _mcgraw_wong_a1_interval(x, confidence)
        r = icc(x, "A,1", confidence=confidence)
        assert r.value == pytest.approx(rho, rel=1e-12)
        assert (r.ci_low, r.ci_high) == pytest.approx((min(lo, rho), max(hi, rho)), rel=1e-9, abs=1e-12)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # numpy's, before our named error
def test_anova_totals_noise_floor_and_its_two_errors():
    # Row effect 3, column effect 4, interaction 5 (x = r + c + e patterns): SSR = 36, SSC = 64 and
    # SSE = 100 = SSR + SSC.  MSW = (64 + 100) / 2, so ICC(1,1) = (36 - 82) / (36 + 82).
    r = icc([[12, -6], [-4, -2]], "1,1")
    assert (r.ms_items, r.ms_raters, r.ms_error) == pytest.approx((36.0, 64.0, 100.0))
    assert r.value == pytest.approx(-46 / 118, rel=1e-12)
    # A rater bias of 1e-11 on items spread over 0..1000 is far below the noise floor (1e-24 of the
    # total sum of squares): it is treated as exactly zero, not as a (tiny) significant bias.
    x = np.column_stack([np.arange(1001.0), np.arange(1001.0) + 1e-11])
    flat = icc(x, "A,1")
    assert flat.ms_raters == 0.0 and flat.f_raters == 0.0 and flat.p_raters == 1.0 and flat.value == 1.0
    with pytest.raises(ReliabilityError, match=r"^all ratings are identical \(zero variance\): every ICC form is "
                                               r"0/0 and undefined$"):
        icc([[2, 2], [2, 2]])
    with pytest.raises(ReliabilityError, match=r"^ratings are too large: the sums of squares overflow float64 "
                                               r"\(\|x\| around 1e150 or more\); rescale the ratings$"):
        icc([[1e200, -1e200], [-1e200, 1e200]])


def test_unknown_form_message_lists_every_form_and_the_aliases():
    with pytest.raises(ReliabilityError) as info:
        canonical_form("ICC(4,1)")
    assert str(info.value) == ("unknown ICC form 'ICC(4,1)'; use one of 1,1, A,1, C,1, 1,k, A,k, C,k (also accepted: "
                               "'ICC(A,1)', 'ICC(2,1)', pingouin-style 'ICC1'..'ICC3k')")


def test_table_header_counts_omitted_items():
    x = SF.tolist()
    x[2][1] = None
    assert str(icc_table(x, nan_policy="omit")).splitlines()[0] == "ICC table: n = 5 items, k = 4 raters, 1 items omitted"
