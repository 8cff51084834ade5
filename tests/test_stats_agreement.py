"""nMAE, correlations, Krippendorff's alpha, Spearman-Brown, bootstrap (vectors: STATS_NOTES.md sections 2d-2e, 5.1)."""

from __future__ import annotations

import csv
import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

from pytest_judgerel.errors import ReliabilityError, ScaleError
from pytest_judgerel.stats import (
    bootstrap_ci,
    icc,
    kendall,
    krippendorff_alpha,
    nmae,
    pearson,
    spearman,
    spearman_brown,
)

DATA = Path(__file__).parent / "data" / "stats"
LEVELS = ("nominal", "ordinal", "interval", "ratio")


def load_matrix(name: str) -> np.ndarray:
    with open(DATA / f"{name}_matrix.csv", newline="") as fh:
        return np.array([[float(v) for v in r[1:]] for r in list(csv.reader(fh))[1:]])


def load_pair(name: str) -> tuple[list[float], list[float]]:
    with open(DATA / f"{name}.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    return [float(r["x"]) for r in rows], [float(r["y"]) for r in rows]


# ------------------------------------------------------------------------------------ nMAE
@pytest.fixture(scope="module")
def nmae_vector():
    return json.loads((DATA / "meta_eval_vectors.json").read_text())["nmae"]


def test_nmae_equals_reference_vector(nmae_vector):
    v = nmae_vector
    res = nmae(v["llm"], v["human"], scale=tuple(v["scale"]))
    assert res.value == pytest.approx(v["nMAE"], rel=1e-12)
    assert res.value == pytest.approx(0.125, rel=1e-12)  # STATS_NOTES 5.1: per-item |delta| sums to 5, /8 /5
    assert res.n == 8 and res.n_omitted == 0
    assert np.allclose(np.array(res.per_item) * 5, v["per_item_abs_diff"], rtol=1e-12, atol=0)
    assert res.mae == pytest.approx(0.625)


def test_nmae_lists_items_above_threshold_worst_first(nmae_vector):
    v = nmae_vector
    res = nmae(v["llm"], v["human"], "0-5", item_ids=[f"q{i}" for i in range(8)])
    worst = res.items_above(0.1)
    expected = sorted(((f"q{i}", d / 5) for i, d in enumerate(v["per_item_abs_diff"]) if d / 5 > 0.1),
                      key=lambda t: -t[1])
    assert [i for i, _ in worst] == [i for i, _ in expected] and worst[0][0] == "q6"
    assert res.items_above(1.0) == []
    assert "4 item(s) with nMAE > 0.1" in str(res)
    assert json.dumps(res.to_dict())


def test_nmae_one_dimensional_inputs_and_scale_range():
    judge, human = [0, 50, 100, 25], [10, 50, 80, 25]
    res = nmae(judge, human, (0, 100))
    assert res.value == pytest.approx((10 + 0 + 20 + 0) / 4 / 100)
    assert nmae(human, judge, "0-100").value == res.value  # symmetric


def test_nmae_drops_items_without_ratings_on_either_side():
    judge = [[4, np.nan], [np.nan, np.nan], [2, 3]]
    human = [5, 4, np.nan]
    res = nmae(judge, human, "0-5")
    assert res.n == 1 and res.n_omitted == 2 and res.item_ids == (0,)
    assert res.value == pytest.approx(1 / 5)


def test_nmae_takes_item_ids_from_ratings_like_objects():
    class R:
        item_ids = ("a", "b", "c")

        def to_matrix(self):
            return np.array([[1.0, 2.0], [3.0, 3.0], [5.0, 4.0]])

    res = nmae(R(), [1.0, 3.0, 0.0], "0-5")
    assert res.items_above(0.1) == [("c", pytest.approx(4.5 / 5))]


@pytest.mark.parametrize(
    "judge, human, scale, message",
    [
        ([1, 2, 3], [1, 2], "0-5", "3 items but human ratings 2"),
        ([1, 2, 7], [1, 2, 3], "0-5", "outside scale 0-5"),
        ([np.nan, 2], [1, np.nan], "0-5", "no item has both"),
        ([[[1]]], [1], "0-5", "1-D .* or 2-D"),
        ([True, False], [1, 0], "0-5", "boolean"),
    ],
)
def test_nmae_bad_input(judge, human, scale, message):
    with pytest.raises(ReliabilityError, match=message):
        nmae(judge, human, scale)


def test_nmae_bad_scale():
    with pytest.raises(ScaleError):
        nmae([1, 2], [1, 2], "five")


# ------------------------------------------------------------------------------------ correlations
@pytest.mark.parametrize("pair, prefix", [("kendall_pair1", ""), ("kendall_pair2", "pair2_")])
def test_kendall_tau_b_and_c_equal_reference(pair, prefix):
    with open(DATA / "kendall_results.csv", newline="") as fh:
        ref = {k: float(v) for k, v in next(csv.DictReader(fh)).items()}
    x, y = load_pair(pair)
    b, c = kendall(x, y, variant="b"), kendall(x, y, variant="c")
    assert b.value == pytest.approx(ref[f"{prefix}tau_b"], rel=1e-12)
    assert c.value == pytest.approx(ref[f"{prefix}tau_c"], rel=1e-12)
    assert b.p == pytest.approx(ref[f"{prefix}pval_b"], rel=1e-10)
    assert c.p == pytest.approx(ref[f"{prefix}pval_c"], rel=1e-10)
    assert b.n == len(x) and b.method == "kendall-tau-b"


def test_kendall_tau_b_from_hand_counts():
    ref = json.loads((DATA / "reference_values.json").read_text())["kendall"]["manual_pair1"]
    p, q, tx, ty = ref["P"], ref["Q"], ref["ties_x_only"], ref["ties_y_only"]
    x, y = load_pair("kendall_pair1")
    assert kendall(x, y).value == pytest.approx((p - q) / math.sqrt((p + q + tx) * (p + q + ty)), rel=1e-12)


def test_pearson_value_p_and_fisher_ci_match_scipy():
    from scipy import stats

    x, y = load_pair("kendall_pair2")
    res = pearson(x, y, confidence=0.9)
    ref = stats.pearsonr(x, y)
    ci = ref.confidence_interval(confidence_level=0.9)
    assert res.value == pytest.approx(ref.statistic, rel=1e-12)
    assert res.p == pytest.approx(ref.pvalue, rel=1e-10)
    assert (res.ci_low, res.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-12)
    assert res.ci_low < res.value < res.ci_high and res.confidence == 0.9


def test_pearson_perfect_correlation_has_finite_interval():
    res = pearson([1, 2, 3, 4, 5], [2, 4, 6, 8, 10])
    assert res.value == 1.0 and (res.ci_low, res.ci_high) == (1.0, 1.0)


def test_spearman_matches_scipy_and_uses_item_means_for_matrices():
    from scipy import stats

    x = load_matrix("gen_25x2")
    h = np.arange(25.0) % 7
    res = spearman(x, h)
    ref = stats.spearmanr(x.mean(axis=1), h)
    assert res.value == pytest.approx(ref.statistic, rel=1e-12) and res.p == pytest.approx(ref.pvalue, rel=1e-10)
    assert res.ci_low is None


def test_correlation_drops_incomplete_pairs():
    res = pearson([1, 2, np.nan, 4, 5], [1, 3, 2, np.nan, 4])
    assert res.n == 3 and res.n_omitted == 2 and res.ci_low is None  # Fisher CI needs n > 3


@pytest.mark.parametrize(
    "fn, x, y, message",
    [
        (pearson, [1, 1, 1, 1], [1, 2, 3, 4], "x is constant"),
        (spearman, [1, 2, 3, 4], [5, 5, 5, 5], "y is constant"),
        (kendall, [1, 2], [2, 1], "at least 3"),
        (pearson, [1, 2, 3], [1, 2], "3 items but y has 2"),
        (spearman, ["a", "b", "c"], [1, 2, 3], "numeric"),
    ],
)
def test_correlation_bad_input(fn, x, y, message):
    with pytest.raises(ReliabilityError, match=message):
        fn(x, y)


def test_kendall_rejects_unknown_variant():
    with pytest.raises(ReliabilityError, match="variant"):
        kendall([1, 2, 3], [1, 3, 2], variant="a")


# ------------------------------------------------------------------------------------ Krippendorff
@pytest.mark.parametrize("name", ["sf_6x4", "gen_150x12"])
@pytest.mark.parametrize("level", LEVELS)
def test_krippendorff_alpha_equals_reference(name, level):
    with open(DATA / "krippendorff_alpha.csv", newline="") as fh:
        ref = {r["matrix"]: r for r in csv.DictReader(fh)}[name]
    res = krippendorff_alpha(load_matrix(name), level)
    assert res.value == pytest.approx(float(ref[level]), rel=1e-12)
    assert res.level == level


# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", example with missing data
# (4 coders x 12 units; published alphas rounded to 3 dp) and the 3 x 15 example of STATS_NOTES 2d.
K2011 = np.array([[1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
                  [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
                  [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
                  [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan]]).T
CANON = np.array([[np.nan, np.nan, np.nan, np.nan, np.nan, 3, 4, 1, 2, 1, 1, 3, 3, np.nan, 3],
                  [1, np.nan, 2, 1, 3, 3, 4, 3, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan],
                  [np.nan, np.nan, 2, 1, 3, 4, 4, np.nan, 2, 1, 1, 3, 3, np.nan, 4]]).T


@pytest.mark.parametrize("level, published", list(zip(LEVELS, (0.743, 0.815, 0.849, 0.797))))
def test_krippendorff_published_example_with_missing_data(level, published):
    res = krippendorff_alpha(K2011, level)
    assert round(res.value, 3) == published
    assert res.n_units == 11 and res.n_raters == 4  # the unit rated by one coder is not pairable


@pytest.mark.parametrize("level, ref", list(zip(LEVELS, (0.691358024691358, 0.8067214199413153,
                                                         0.8108448928121059, 0.8089436707842471))))
def test_krippendorff_canonical_example(level, ref):
    assert krippendorff_alpha(CANON, level).value == pytest.approx(ref, rel=1e-12)


def _alpha_by_explicit_coincidence_matrix(x: np.ndarray, level: str) -> float:
    """Textbook construction: V x V coincidence matrix, margins, metric table."""
    vals = np.unique(x[~np.isnan(x)])
    pos = {v: i for i, v in enumerate(vals)}
    o = np.zeros((vals.size, vals.size))
    for row in x:
        present = row[~np.isnan(row)]
        if present.size < 2:
            continue
        for a, b in itertools.permutations(range(present.size), 2):
            o[pos[present[a]], pos[present[b]]] += 1 / (present.size - 1)
    nc = o.sum(axis=0)
    n = nc.sum()
    d = np.zeros_like(o)
    for c, k in itertools.product(range(vals.size), repeat=2):
        vc, vk = vals[c], vals[k]
        if level == "nominal":
            d[c, k] = float(vc != vk)
        elif level == "interval":
            d[c, k] = (vc - vk) ** 2
        elif level == "ratio":
            d[c, k] = 0.0 if vc + vk == 0 else ((vc - vk) / (vc + vk)) ** 2
        else:
            lo, hi = min(c, k), max(c, k)
            d[c, k] = (nc[lo:hi + 1].sum() - (nc[lo] + nc[hi]) / 2) ** 2
    expected = np.outer(nc, nc) - np.diag(nc)
    return 1 - (n - 1) * (o * d).sum() / (expected * d).sum()


@pytest.mark.parametrize("level", LEVELS)
def test_krippendorff_closed_forms_equal_explicit_coincidence_matrix(level):
    rng = np.random.default_rng(11)
    x = rng.integers(0, 6, size=(30, 5)).astype(float)
    x[rng.random(x.shape) < 0.2] = np.nan
    assert krippendorff_alpha(x, level).value == pytest.approx(_alpha_by_explicit_coincidence_matrix(x, level),
                                                               rel=1e-12)


def test_krippendorff_perfect_agreement_is_one_and_interval_is_affine_invariant():
    x = np.array([[1, 1, 1], [4, 4, np.nan], [2, 2, 2], [5, 5, 5]], dtype=float)
    for level in LEVELS:
        assert krippendorff_alpha(x, level).value == pytest.approx(1.0)
    y = load_matrix("sf_6x4")
    assert krippendorff_alpha(3 * y - 7, "interval").value == pytest.approx(
        krippendorff_alpha(y, "interval").value, rel=1e-12)


@pytest.mark.parametrize(
    "data, level, message",
    [
        ([[1, np.nan], [np.nan, 2]], "interval", "at least 2 raters"),
        ([[3, 3], [3, 3]], "nominal", "identical"),
        ([[1, 2], [2, 3]], "cardinal", "level must be one of"),
        ([[-1, 2], [2, 3]], "ratio", "non-negative"),
    ],
)
def test_krippendorff_bad_input(data, level, message):
    with pytest.raises(ReliabilityError, match=message):
        krippendorff_alpha(np.array(data, dtype=float), level)


# ------------------------------------------------------------------------------------ Spearman-Brown
def test_spearman_brown_steps_single_icc_up_to_average():
    sf = load_matrix("sf_6x4")
    single, average = icc(sf, "A,1"), icc(sf, "A,k")
    assert spearman_brown(single.value, 4) == pytest.approx(average.value, rel=1e-12)
    assert spearman_brown(average.value, 1 / 4) == pytest.approx(single.value, rel=1e-12)
    assert spearman_brown(0.5, 1) == 0.5 and spearman_brown(1.0, 7) == 1.0


@pytest.mark.parametrize("rho, k", [(1.2, 2), (0.5, 0), (0.5, -1), (float("nan"), 2), (True, 2), (-1.0, 2)])
def test_spearman_brown_bad_input(rho, k):
    with pytest.raises(ReliabilityError, match="spearman_brown"):
        spearman_brown(rho, k)


# ------------------------------------------------------------------------------------ bootstrap
@pytest.fixture(scope="module")
def segments():
    return np.loadtxt(DATA / "paired_bootstrap_segments.csv", delimiter=",", skiprows=1)


def _diff(a, b):
    return float(np.mean(a) - np.mean(b))


def test_bootstrap_is_seeded_and_reproducible(segments):
    a, b = segments[:, 0], segments[:, 1]
    r1 = bootstrap_ci(_diff, a, b, n_resamples=400, seed=7)
    r2 = bootstrap_ci(_diff, a, b, n_resamples=400, seed=7)
    r3 = bootstrap_ci(_diff, a, b, n_resamples=400, seed=8)
    assert r1 == r2 and r1.ci != r3.ci
    assert r1.estimate == pytest.approx(0.00708, abs=5e-6)  # STATS_NOTES 5.4
    assert r1.ci_low < r1.estimate < r1.ci_high and r1.standard_error > 0


def test_bootstrap_percentile_interval_equals_hand_resampling_with_the_same_indices():
    """scipy draws rng.integers(0, n, (n_resamples, n)); resampling the index vector reproduces it."""
    rng = np.random.default_rng(5)
    a = rng.normal(size=40)
    res = bootstrap_ci(np.mean, a, n_resamples=300, seed=3, method="percentile", confidence=0.9)
    idx = np.random.default_rng(3).integers(0, 40, size=(300, 40))
    means = a[idx].mean(axis=1)
    assert (res.ci_low, res.ci_high) == pytest.approx(tuple(np.percentile(means, [5, 95])), rel=1e-12)


def test_paired_bootstrap_is_narrower_than_unpaired_for_correlated_samples():
    rng = np.random.default_rng(2)
    base = rng.normal(0, 1, 200)
    a, b = base + rng.normal(0, 0.1, 200), base + 0.05 + rng.normal(0, 0.1, 200)
    paired = bootstrap_ci(_diff, a, b, n_resamples=500, seed=1, method="percentile")
    unpaired = bootstrap_ci(_diff, a, b, n_resamples=500, seed=1, method="percentile", paired=False)
    assert (paired.ci_high - paired.ci_low) < 0.5 * (unpaired.ci_high - unpaired.ci_low)


def test_bootstrap_resamples_item_rows_of_a_matrix():
    x = load_matrix("gen_150x12")
    res = bootstrap_ci(lambda m: icc(m, "A,1").value, x, n_resamples=200, seed=0, method="percentile")
    assert res.estimate == pytest.approx(icc(x, "A,1").value)
    assert res.ci_low < res.estimate < res.ci_high
    assert 0.5 < res.ci_low and res.ci_high < 0.75  # close to the F-based CI [0.567, 0.691]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"samples": ()}, "at least one sample"),
        ({"samples": ([1.0, 2.0, 3.0], [1.0, 2.0])}, "same number of rows"),
        ({"samples": ([1.0],)}, "at least 2 rows"),
        ({"samples": ([1.0, 2.0, 3.0],), "confidence": 1.0}, "confidence"),
        ({"samples": ([1.0, 2.0, 3.0],), "n_resamples": 0}, "n_resamples"),
    ],
)
def test_bootstrap_bad_input(kwargs, message):
    kwargs = dict(kwargs)  # the parameter dict is shared by reruns of this test: never mutate it
    samples = kwargs.pop("samples")
    with pytest.raises(ReliabilityError, match=message):
        bootstrap_ci(np.mean, *samples, **kwargs)


def test_bootstrap_degenerate_statistic_raises():
    with pytest.raises(ReliabilityError, match="NaN"):
        bootstrap_ci(lambda a: float("nan"), [1.0, 2.0, 3.0, 4.0], n_resamples=50, method="percentile")


# ------------------------------------------------------------------------------------ contract details
def test_nmae_names_each_side_accepts_rounding_at_the_bounds_and_reports_in_full():
    with pytest.raises(ReliabilityError, match=r"^judge ratings must be 1-D \(items\) or 2-D"):
        nmae([[[1]]], [1], "0-5")
    with pytest.raises(ReliabilityError, match=r"^human ratings must be 1-D \(items\) or 2-D"):
        nmae([1], [[[1]]], "0-5")
    with pytest.raises(ReliabilityError, match=r"^no item has both a judge and a human rating$"):
        nmae([np.nan, 2], [1, np.nan], "0-5")
    assert nmae([1 - 1e-9, 5 + 1e-9], [1, 5], "1-5").value == pytest.approx(0.0, abs=1e-9)
    res = nmae([1, 5, 3], [2, 5, 3], "1-5", item_ids=["a", "b", "c"])
    assert res.to_dict() == {"value": pytest.approx(1 / 12), "n": 3, "scale": [1.0, 5.0], "n_omitted": 0,
                             "worst_items": [{"item": "a", "error": 0.25}]}


def test_correlation_results_in_full():
    r = pearson([1, 2, 3, 4], [1, 2, 3, 5])
    # four items are enough for the Fisher-z interval: tanh(atanh r -/+ 1.959964 / sqrt(4 - 3))
    z, half = math.atanh(r.value), 1.959963984540054
    assert (r.ci_low, r.ci_high) == pytest.approx((math.tanh(z - half), math.tanh(z + half)), rel=1e-12)
    assert r.to_dict() == {"method": "pearson", "value": r.value, "p": r.p, "n": 4, "ci_low": r.ci_low,
                           "ci_high": r.ci_high, "confidence": 0.95, "n_omitted": 0}
    assert str(r) == "pearson = 0.9827 [95% CI 0.3893, 0.9997], p = 0.0173, n = 4"
    three = pearson([1, 2, 3], [3, 2, 1])
    assert three.value == pytest.approx(-1.0) and three.ci_low is None and three.confidence is None
    assert str(three) == f"pearson = -1.0000, p = {three.p:.3g}, n = 3"
    for bad in (0, 1, 1.5):
        with pytest.raises(ReliabilityError, match=rf"^confidence must be strictly between 0 and 1, got {bad!r}$"):
            pearson([1, 2, 3], [1, 3, 2], confidence=bad)
    s = spearman([1, 2, 3, np.nan], [1, 3, 2, 4])
    assert (s.method, s.n, s.n_omitted) == ("spearman", 3, 1)
    k = kendall([1, 2, 3, 4, np.nan], [1, 3, 2, 4, 1], variant="c")
    assert (k.method, k.n, k.n_omitted) == ("kendall-tau-c", 4, 1)
    with pytest.raises(ReliabilityError, match=r"^x must be 1-D"):
        pearson([[[1]]], [1, 2, 3])
    with pytest.raises(ReliabilityError, match=r"^y must be 1-D"):
        spearman([1, 2, 3], [[[1]]])
    with pytest.raises(ReliabilityError, match=r"^y is constant \(2\.0 for every item\): the correlation is undefined$"):
        kendall([1, 2, 3], [2, 2, 2])


def test_krippendorff_defaults_counts_and_named_errors():
    x = [[1, 2, np.nan], [3, 3, 4], [np.nan, 5, 5], [2, np.nan, np.nan]]
    res = krippendorff_alpha(x)
    assert res == krippendorff_alpha(x, "interval") and res.level == "interval"
    assert (res.n_units, res.n_values, res.n_raters) == (3, 7, 3)  # the last unit has one rating only
    with pytest.raises(ReliabilityError, match=r"^reliability data must be numeric ratings, got str$"):
        krippendorff_alpha("1,2")
    with pytest.raises(ReliabilityError, match=r"^no unit has ratings from at least 2 raters: alpha is undefined$"):
        krippendorff_alpha([[1, np.nan], [np.nan, 2]])
    with pytest.raises(ReliabilityError, match=r"^ratio-level alpha needs non-negative values$"):
        krippendorff_alpha([[1, -1], [2, 2]], "ratio")
    with pytest.raises(ReliabilityError, match=r"^all pairable ratings are identical: no expected disagreement, "
                                               r"alpha is undefined$"):
        krippendorff_alpha([[3, 3], [3, 3]], "nominal")


def test_ratio_alpha_with_more_than_1024_distinct_values_equals_the_full_coincidence_sum():
    # D_e is summed in blocks of 1024 distinct values; with 1500 distinct values two blocks count
    rng = np.random.default_rng(6)
    truth = rng.uniform(1, 100, 750)
    x = np.column_stack([truth, truth * rng.uniform(0.9, 1.1, 750)])
    values = x.ravel()
    assert np.unique(values).size == 1500
    d2 = ((values[:, None] - values[None, :]) / (values[:, None] + values[None, :])) ** 2
    expected_pairs = d2.sum()  # every ordered pair of pairable values
    observed = 2.0 * (((x[:, 0] - x[:, 1]) / (x[:, 0] + x[:, 1])) ** 2).sum()  # m_u = 2: weight 1
    alpha = 1.0 - (values.size - 1) * observed / expected_pairs
    assert krippendorff_alpha(x, "ratio").value == pytest.approx(alpha, rel=1e-10)


def test_spearman_brown_names_the_bad_argument():
    with pytest.raises(ReliabilityError, match=r"^spearman_brown: rho must be a finite number, got nan$"):
        spearman_brown(float("nan"), 2)
    with pytest.raises(ReliabilityError, match=r"^spearman_brown: k must be a finite number, got True$"):
        spearman_brown(0.5, True)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy: the standard error of a single resample
def test_bootstrap_defaults_fields_and_argument_checks():
    res = bootstrap_ci(np.mean, [1.0, 2.0, 3.0, 4.0, 7.0])
    assert (res.n_resamples, res.seed, res.method, res.confidence) == (2000, 0, "BCa", 0.95)
    assert res.ci_low <= res.estimate == 3.4 <= res.ci_high
    assert str(res) == "3.4 [95% BCa bootstrap CI 2, 5.6] (2000 resamples, seed 0)"

    class Matrix:
        def to_matrix(self):
            return np.array([[1.0, 2.0], [2.0, 2.0], [3.0, 5.0], [4.0, 4.0]])

    one = bootstrap_ci(lambda m: float(m.mean()), Matrix(), n_resamples=1, method="percentile", seed=3)
    assert one.estimate == 2.875 and one.n_resamples == 1 and one.seed == 3 and one.method == "percentile"
    for kwargs, message in (({"confidence": 0}, r"^confidence must be strictly between 0 and 1, got 0$"),
                            ({"n_resamples": True}, r"^n_resamples must be a positive integer, got True$"),
                            ({"n_resamples": 2.5}, r"^n_resamples must be a positive integer, got 2\.5$")):
        with pytest.raises(ReliabilityError, match=message):
            bootstrap_ci(np.mean, [1.0, 2.0, 3.0], **kwargs)
    with pytest.raises(ReliabilityError, match=r"^every sample needs at least 2 rows to resample, got sizes \[0\]$"):
        bootstrap_ci(np.mean, 5.0)
    with pytest.raises(ReliabilityError, match=r"^bootstrap_ci needs at least one sample$"):
        bootstrap_ci(np.mean)
    with pytest.raises(ReliabilityError, match=r"^bootstrap interval is NaN: the statistic is degenerate on resampled "
                                               r"data \(too few items or no variation\); try method='percentile' or "
                                               r"more items$"):
        bootstrap_ci(lambda a: float("nan"), [1.0, 2.0, 3.0, 4.0], n_resamples=50, method="percentile")


def test_bootstrap_reads_none_as_a_missing_value():
    with pytest.raises(ReliabilityError, match=r"^bootstrap interval is NaN"):
        bootstrap_ci(np.mean, [1.0, None, 3.0, 4.0], n_resamples=50)
