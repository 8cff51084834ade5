"""Golden-vector and behaviour tests for pytest_judgerel.stats.ranking.

Vectors: tests/data/meta_eval/ (copied from the project's statistical reference, NOTES section 5).
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from pytest_judgerel.errors import ReliabilityError
from pytest_judgerel.stats.ranking import (
    mipsa,
    pairwise_accuracy,
    paired_bootstrap,
    paired_permutation,
    perm_both,
    rank_systems,
    self_preference,
    significance_clusters,
    summarize_repeats,
)

DATA = Path(__file__).parent / "data" / "meta_eval"


@pytest.fixture(scope="module")
def vectors():
    return json.loads((DATA / "meta_eval_vectors.json").read_text())


@pytest.fixture(scope="module")
def segments():
    with open(DATA / "paired_bootstrap_segments.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    return [float(r["sysA"]) for r in rows], [float(r["sysB"]) for r in rows]


# ---------------------------------------------------------------- MIPSA

def test_mipsa_matches_vector(vectors):
    v = vectors["mipsa"]
    res = mipsa(v["annotator_a"], v["annotator_b"])
    assert res.value == pytest.approx(v["MIPSA"], abs=1e-15)
    assert res.per_interaction == pytest.approx(v["per_interaction_acc"], abs=1e-15)
    assert res.n_interactions == 5
    assert res.n_pairs == 3 + 3 + 6 + 1 + 3
    assert res.skipped == ()


def test_mipsa_drop_reference_ties_changes_only_tied_interactions(vectors):
    v = vectors["mipsa"]
    res = mipsa(v["annotator_a"], v["annotator_b"], ties="drop_reference_ties")
    # interaction 3 (b = [3, 3]) has its only pair tied in b -> skipped
    assert res.skipped == (3,)
    assert math.isnan(res.per_interaction[3])
    # interaction 4: b = [2,4,3] has no ties -> unchanged 0; interaction 1: b=[4,2,1] no ties
    assert res.per_interaction[0] == 1.0
    assert res.per_interaction[1] == pytest.approx(2 / 3)
    assert res.value == pytest.approx((1 + 2 / 3 + 5 / 6 + 0) / 4)


def test_mipsa_pair_tied_for_both_annotators_is_agreement_one_sided_tie_is_not():
    # The documented rule (Kocmi / mt-metrics-eval sign equality), which the vector above never
    # exercises: pairs (0,1), (0,2), (1,2) of one interaction.
    both_tied = mipsa([[2, 2, 1]], [[3, 3, 0]])  # (0,1) tied in both: agree; the others agree
    assert both_tied.per_interaction == (1.0,) and both_tied.n_pairs == 3
    only_a = mipsa([[2, 2, 1]], [[3, 4, 0]])  # (0,1) tied only in a: disagreement
    assert only_a.value == pytest.approx(2 / 3)
    only_b = mipsa([[2, 1, 0]], [[3, 3, 0]])  # (0,1) tied only in b: disagreement
    assert only_b.value == pytest.approx(2 / 3)
    # drop_reference_ties leaves out the pair tied in b (both-tied or not) and keeps a tie only in a
    assert mipsa([[2, 2, 1]], [[3, 3, 0]], ties="drop_reference_ties").n_pairs == 2
    kept = mipsa([[2, 2, 1]], [[3, 4, 0]], ties="drop_reference_ties")
    assert kept.value == pytest.approx(2 / 3) and kept.n_pairs == 3 and kept.ties == "drop_reference_ties"


def test_mipsa_identical_annotators_is_one_and_reversed_is_zero():
    a = [[1, 2, 3], [5, 4, 6, 1]]
    assert mipsa(a, a).value == 1.0
    rev = [[-x for x in row] for row in a]
    assert mipsa(a, rev).value == 0.0


def test_mipsa_skips_interactions_with_one_system_and_nan():
    res = mipsa([[1.0], [1, 2, float("nan")]], [[2.0], [1, 3, 2]])
    assert res.skipped == (0,)
    assert res.per_interaction[1] == 1.0  # NaN system dropped, the remaining pair agrees
    assert res.n_pairs == 1


def test_mipsa_rejects_bad_input():
    with pytest.raises(ReliabilityError, match="ties"):
        mipsa([[1, 2]], [[1, 2]], ties="bogus")
    with pytest.raises(ReliabilityError, match="interaction 0"):
        mipsa([[1, 2]], [[1, 2, 3]])
    with pytest.raises(ReliabilityError, match="interactions"):
        mipsa([[1, 2]], [])
    with pytest.raises(ReliabilityError, match="at least one"):
        mipsa([[1]], [[1]])


# ---------------------------------------------------------------- pairwise accuracy

def test_pairwise_accuracy_matches_vector(vectors):
    v = vectors["kocmi_accuracy"]
    res = pairwise_accuracy(v["metric"], v["human"])
    assert res.value == pytest.approx(v["pooled_accuracy"], abs=1e-15)
    assert {k: list(x) for k, x in res.per_group.items()} == v["per_lp_[agree,pairs]"]


def test_pairwise_accuracy_flat_with_groups_equals_mapping(vectors):
    v = vectors["kocmi_accuracy"]
    metric = v["metric"]["en-de"] + v["metric"]["zh-en"]
    human = v["human"]["en-de"] + v["human"]["zh-en"]
    groups = ["en-de"] * 5 + ["zh-en"] * 4
    res = pairwise_accuracy(metric, human, groups=groups)
    assert (res.n_agree, res.n_pairs) == (13, 16)
    # without groups, cross-group pairs are formed and the answer changes
    assert pairwise_accuracy(metric, human).n_pairs == 36


def test_pairwise_accuracy_errors():
    with pytest.raises(ReliabilityError, match="groups differ"):
        pairwise_accuracy({"a": [1, 2]}, {"b": [1, 2]})
    with pytest.raises(ReliabilityError, match="labels"):
        pairwise_accuracy([1, 2, 3], [1, 2, 3], groups=["x"])
    with pytest.raises(ReliabilityError, match="NaN"):
        pairwise_accuracy([1, float("nan")], [1, 2])


# ---------------------------------------------------------------- paired bootstrap

def test_paired_bootstrap_matches_vector(vectors, segments):
    v = vectors["koehn_paired_bootstrap"]
    res = paired_bootstrap(*segments, n_resamples=v["B"], seed=12345)
    assert res.delta == pytest.approx(v["delta"], abs=1e-12)
    assert (res.wins_a, res.wins_b, res.ties) == (v["wins_a"], v["wins_b"], v["ties"])
    assert res.p_value == pytest.approx(v["koehn_p_A_not_better"], abs=1e-12)
    assert (res.p_value <= 0.05) is v["significant_at_95"]
    assert res.sacrebleu_p == pytest.approx(v["sacrebleu_style_p"], abs=1e-15)
    assert res.ci_a == pytest.approx(tuple(v["sysA_bootstrap_95ci"]), abs=1e-12)


def test_paired_bootstrap_clear_difference_is_significant():
    rng = np.random.default_rng(1)
    b = rng.normal(3, 0.5, 60)
    a = b + 0.4
    res = paired_bootstrap(a, b, n_resamples=500, seed=3)
    assert res.wins_a == 500 and res.p_value == 0.0
    assert res.ci_a[0] < a.mean() < res.ci_a[1]


def test_paired_bootstrap_rejects_unpaired():
    with pytest.raises(ReliabilityError, match="equal lengths"):
        paired_bootstrap([1, 2, 3], [1, 2])
    with pytest.raises(ReliabilityError, match="NaN"):
        paired_bootstrap([1, 2, float("nan")], [1, 2, 3])


# ---------------------------------------------------------------- permutation

def test_perm_both_exact_matches_vector(vectors):
    v = vectors["perm_both"]
    res = perm_both(v["gold"], v["metric1"], v["metric2"], exact=True)
    assert res.observed == pytest.approx(v["delta_obs"], abs=1e-12)
    assert res.n_permutations == 256 and res.count == 8
    assert res.p_value == pytest.approx(v["exact_p_2^8_swaps"], abs=1e-15)


def test_paired_permutation_with_gold_is_perm_both(vectors):
    v = vectors["perm_both"]
    res = paired_permutation(v["metric1"], v["metric2"], gold=v["gold"], exact=True)
    assert res.p_value == pytest.approx(0.03125, abs=1e-15)
    with pytest.raises(ReliabilityError, match="gold"):
        paired_permutation(v["metric1"], v["metric2"], gold=v["gold"], alternative="less")


def test_exact_mean_permutation_matches_explicit_enumeration():
    import itertools

    rng = np.random.default_rng(2)
    a, b = rng.normal(size=10), rng.normal(size=10)
    d = a - b
    null = [np.mean(np.array(s) * d) for s in itertools.product((1, -1), repeat=10)]
    expected = sum(x >= d.mean() - 1e-12 for x in null) / 1024
    assert paired_permutation(a, b, exact=True).p_value == pytest.approx(expected)
    custom = paired_permutation(a, b, statistic=np.median, exact=True)
    assert custom.n_permutations == 1024 and 0 < custom.p_value <= 1


def test_perm_both_sampled_close_to_exact(vectors):
    v = vectors["perm_both"]
    res = perm_both(v["gold"], v["metric1"], v["metric2"], exact=False, n_resamples=20000, seed=0)
    # Monte Carlo standard error at p ~ 0.03 with 20000 draws is ~0.0012
    assert abs(res.p_value - 0.03125) < 0.006
    assert abs(res.p_value - v["mtme_PermutationSigDiff_p(np.random.seed(0),k=20000,early stop)"]) < 0.006


def test_paired_permutation_exact_mean_difference_by_hand():
    a, b = [3.0, 4.0, 5.0], [1.0, 2.0, 6.0]
    # differences d = [2, 2, -1]; observed mean diff = 1; null = mean of sign-flipped d
    res = paired_permutation(a, b, exact=True)
    null = [(s1 * 2 + s2 * 2 + s3 * -1) / 3 for s1 in (1, -1) for s2 in (1, -1) for s3 in (1, -1)]
    expected = sum(x >= 1 - 1e-12 for x in null) / 8
    assert res.p_value == pytest.approx(expected)
    assert res.exact and res.n_permutations == 8
    two = paired_permutation(a, b, exact=True, alternative="two-sided")
    assert two.p_value == pytest.approx(sum(abs(x) >= 1 - 1e-12 for x in null) / 8)


def test_paired_permutation_sampled_is_seeded_and_bounded():
    rng = np.random.default_rng(5)
    a = rng.normal(size=40)
    b = a - 0.3 + rng.normal(scale=0.2, size=40)
    r1 = paired_permutation(a, b, n_resamples=2000, seed=7)
    r2 = paired_permutation(a, b, n_resamples=2000, seed=7)
    assert r1 == r2
    assert 0 < r1.p_value < 0.01  # never exactly 0 with the +1 correction
    assert paired_permutation(a, b, exact="auto").exact is False
    with pytest.raises(ReliabilityError, match="too large"):
        paired_permutation(a, b, exact=True)


# ---------------------------------------------------------------- clusters and ranking

def test_significance_clusters_matches_vector(vectors):
    v = vectors["assign_ranks"]
    sig = v["sig_matrix_upper(p for H0: metric j >= metric i)"]
    assert significance_clusters(sig, alpha=v["pval"]) == v["ranks"]


def test_significance_clusters_all_separated_and_none_separated():
    m = np.zeros((3, 3))
    assert significance_clusters(m, 0.05) == [1, 2, 3]
    assert significance_clusters(np.ones((3, 3)), 0.05) == [1, 1, 1]


@pytest.mark.parametrize("test", ["bootstrap", "permutation", "ttest"])
def test_rank_systems_orders_and_clusters(test):
    rng = np.random.default_rng(11)
    base = rng.normal(3.0, 0.6, 50)
    scores = {
        "strong": base + 1.0 + rng.normal(0, 0.1, 50),
        "weak_a": base + rng.normal(0, 0.1, 50),
        "weak_b": base + 0.01 + rng.normal(0, 0.1, 50),
    }
    res = rank_systems(scores, test=test, alpha=0.05, seed=1, n_resamples=500)
    assert res.systems[0] == "strong"
    assert res.rank_of("strong") == 1
    assert res.rank_of("weak_a") == res.rank_of("weak_b") == 2
    assert res.p_values[0, 1] <= 0.05
    assert np.isnan(res.p_values[1, 0])
    assert res.to_dict()["clusters"] == [1, 2, 2]


def test_rank_systems_requires_paired_scores():
    with pytest.raises(ReliabilityError, match="same items"):
        rank_systems({"a": [1, 2, 3], "b": [1, 2]})
    with pytest.raises(ReliabilityError, match="test must be"):
        rank_systems({"a": [1, 2], "b": [2, 1]}, test="z")


# ---------------------------------------------------------------- self-preference, repeats

def test_self_preference_detects_a_judge_favouring_itself():
    reference = {"gpt": [3, 3, 4, 2], "claude": [4, 4, 5, 3], "gemini": [2, 2, 3, 1]}
    judge = {"gpt": [5, 3, 5, 2.5], "claude": [4, 4, 4, 3], "gemini": [2, 2, 3, 1]}
    res = self_preference(reference, judge, own_system="gpt")
    assert res.reference_rank == 2 and res.judge_rank == 1 and res.rank_change == 1
    # per interaction: rank of gpt under reference [2,2,2,2]; under judge [1,2,1,2]
    assert res.share_higher == pytest.approx(0.5)
    assert res.share_equal == pytest.approx(0.5)
    assert res.mean_interaction_rank_change == pytest.approx((1 + 0 + 1 + 0) / 4)
    neutral = self_preference(reference, reference, own_system="gpt")
    assert neutral.rank_change == 0 and neutral.share_equal == 1.0
    with pytest.raises(ReliabilityError, match="own_system"):
        self_preference(reference, judge, own_system="llama")


def test_summarize_repeats_quartiles():
    res = summarize_repeats([0.5, 0.1, 0.3, 0.2, 0.4, float("nan")])
    assert (res.q1, res.median, res.q3) == pytest.approx((0.2, 0.3, 0.4))
    assert res.n == 5 and res.n_missing == 1
    with pytest.raises(ReliabilityError):
        summarize_repeats([float("nan")])


# ---------------------------------------------------------------- contract details (mutation testing)
# Each test below pins a rule a plausible bug would break; expectations are worked by hand or
# recomputed from the documented algorithm (docstrings), never read back from the same call.

@pytest.mark.parametrize("call, message", [
    (lambda: mipsa([["x", "y"]], [[1, 2]]), r"^a\[0\] must be numeric, got \['x', 'y'\]$"),
    (lambda: mipsa([[1, 2]], [[[1, 2]]]), r"^b\[0\] must be one-dimensional, got shape \(1, 2\)$"),
    (lambda: mipsa([[1]], [[1]]), r"^MIPSA needs at least one interaction with two comparable systems$"),
    (lambda: pairwise_accuracy({"g": [1, 2]}, [1, 2]),
     r"^metric_scores and human_scores must both be mappings or both sequences$"),
    (lambda: pairwise_accuracy([1, 2], {"g": [1, 2]}),
     r"^metric_scores and human_scores must both be mappings or both sequences$"),
    (lambda: pairwise_accuracy({"g": [1, 2]}, {"g": [1, 2]}, groups=["g", "g"]),
     r"^groups must be None when scores are given as mappings$"),
    (lambda: pairwise_accuracy([[1, 2]], [1, 2]), r"^metric_scores must be one-dimensional"),
    (lambda: pairwise_accuracy([1, 2], [[1, 2]]), r"^human_scores must be one-dimensional"),
    (lambda: pairwise_accuracy([1, 2, 3], [1, 2]), r"^metric_scores has 3 systems but human_scores has 2$"),
    (lambda: pairwise_accuracy({"g": [1, 2]}, {"g": [1, 2, 3]}), r"^group 'g': 2 metric scores but 3 human scores$"),
    (lambda: pairwise_accuracy({"g": [[1, 2]]}, {"g": [1, 2]}), r"^metric_scores\['g'\] must be one-dimensional"),
    (lambda: pairwise_accuracy({"g": [1, 2]}, {"g": [[1, 2]]}), r"^human_scores\['g'\] must be one-dimensional"),
    (lambda: pairwise_accuracy({"g": [1]}, {"g": [1]}), r"^pairwise accuracy needs at least one group with two systems$"),
    (lambda: paired_bootstrap([[1, 2]], [1, 2]), r"^a must be one-dimensional"),
    (lambda: paired_bootstrap([1, 2], [[1, 2]]), r"^b must be one-dimensional"),
    (lambda: paired_bootstrap([1], [2]), r"^paired test needs at least 2 paired items, got 1$"),
    (lambda: paired_bootstrap([1, float("nan")], [1, 2]), r"^paired test input contains NaN \(drop unpaired items first\)$"),
    (lambda: paired_bootstrap([1, 2], [1, 2], n_resamples=0), r"^n_resamples must be >= 1, got 0$"),
    (lambda: paired_permutation([1, 2], [2, 1], alternative="bigger"),
     r"^alternative must be one of \('greater', 'less', 'two-sided'\), got 'bigger'$"),
    (lambda: paired_permutation([1, 2], [2, 1], exact="yes"), r"^exact must be True, False or 'auto', got 'yes'$"),
    (lambda: paired_permutation([1, 2], [2, 1], n_resamples=0), r"^n_resamples must be >= 1, got 0$"),
    (lambda: paired_permutation([1, 2], [2, 1], statistic=lambda x: float("inf")),
     r"^the observed statistic is not finite \(nan\)$"),
    (lambda: paired_permutation([1, 2], [2, 1], gold=[1, 2], statistic=np.mean),
     r"^with gold=, the statistic is the correlation with gold and alternative 'greater'$"),
    (lambda: perm_both([1, 2, 3], [1, 2], [2, 1]), r"^gold has 3 items but the metrics have 2$"),
    (lambda: perm_both([[1, 2]], [1, 2], [2, 1]), r"^gold must be one-dimensional"),
    (lambda: perm_both([1, 2, 3], [1, 2, 3], [3, 1, 2], correlation="cosine"), r"^unknown correlation 'cosine'$"),
    (lambda: perm_both([1, 2, 3], [2, 2, 2], [3, 1, 2]), r"^metric1 is constant; cannot z-score it$"),
    (lambda: perm_both([1, 2, 3], [3, 1, 2], [5, 5, 5]), r"^metric2 is constant; cannot z-score it$"),
    (lambda: significance_clusters([[0.0, 0.1, 0.2], [0.0, 0.0, 0.3]]), r"^sig_matrix must be square, got shape \(2, 3\)$"),
    (lambda: significance_clusters([0.1, 0.2]), r"^sig_matrix must be square, got shape \(2,\)$"),
    (lambda: significance_clusters([[1, None], [1, 1]]), r"^sig_matrix has NaN above the diagonal in column 1$"),
    (lambda: rank_systems({"a": [1, 2]}, alpha=0), r"^alpha must be in \(0, 1\), got 0$"),
    (lambda: rank_systems({"a": [1, 2]}, alpha=1), r"^alpha must be in \(0, 1\), got 1$"),
    (lambda: rank_systems({}), r"^scores_by_system must be a non-empty mapping \{system: per-item scores\}$"),
    (lambda: rank_systems([[1, 2]]), r"^scores_by_system must be a non-empty mapping"),
    (lambda: rank_systems({"a": [[1, 2]]}), r"^scores of 'a' must be one-dimensional"),
    (lambda: rank_systems({"a": [1, 2, 3], "b": [1, 2]}),
     r"^all systems need scores on the same items \(paired\); lengths: a=3, b=2$"),
    (lambda: rank_systems({"a": [1, 2], "b": [1, float("nan")], "c": [float("nan"), 1]}),
     r"^NaN scores for \['b', 'c'\]; drop unpaired items first$"),
    (lambda: self_preference({"a": [1]}, {"b": [1]}, "a"), r"^reference_scores and judge_scores must cover the same systems$"),
    (lambda: self_preference({"a": [1]}, {"a": [1]}, "a"), r"^self-preference needs at least two systems$"),
    (lambda: self_preference({"a": [1, 2], "b": [2, 1]}, {"a": [1], "b": [2]}, "a"),
     r"^reference has 2 interactions but the judge has 1$"),
    (lambda: summarize_repeats([[1.0]]), r"^values must be one-dimensional"),
    (lambda: summarize_repeats([float("nan")]), r"^summarize_repeats needs at least one non-NaN value$"),
])
def test_every_error_names_its_cause(call, message):
    with pytest.raises(ReliabilityError, match=message):
        call()


def test_a_two_item_paired_test_and_a_single_resample_are_allowed():
    res = paired_bootstrap([2.0, 3.0], [1.0, 1.0], n_resamples=1, seed=0)
    assert res.n_resamples == 1 and res.wins_a == 1 and res.p_value == 0.0
    assert res.mean_a == 2.5 and res.mean_b == 1.0 and res.seed == 0
    assert res.ci_b == (1.0, 1.0)  # every resample of b is [1, 1]
    one = paired_permutation([2.0, 3.0], [1.0, 1.0], n_resamples=1, seed=0)
    assert one.n_permutations == 1 and one.p_value in (0.5, 1.0)  # (count + 1) / (1 + 1)
    assert paired_permutation([2.0, 3.0], [1.0, 1.0], exact=True, n_resamples=0).n_permutations == 4


def test_documented_defaults_of_the_resampling_tests():
    rng = np.random.default_rng(8)
    a, b = rng.normal(size=25), rng.normal(size=25)
    assert paired_bootstrap(a, b) == paired_bootstrap(a, b, n_resamples=1000, seed=12345, level=0.95)
    assert paired_permutation(a, b) == paired_permutation(a, b, n_resamples=10000, seed=12345, exact=False)
    gold = rng.normal(size=25)
    assert perm_both(gold, a, b) == perm_both(gold, a, b, n_resamples=1000, seed=12345, exact=False)  # n > 16
    assert perm_both(gold[:8], a[:8], b[:8]).exact  # "auto": enumerated up to 16 items
    scores = {"x": a, "y": b}
    assert rank_systems(scores).p_values[0, 1] == rank_systems(scores, seed=12345, n_resamples=1000).p_values[0, 1]
    assert significance_clusters([[1, 0.05], [1, 1]]) == [1, 2]  # default alpha 0.05, p == alpha separates


def test_exact_enumeration_is_automatic_up_to_16_items_and_allowed_up_to_20():
    rng = np.random.default_rng(4)
    assert paired_permutation(rng.normal(size=16), rng.normal(size=16), exact="auto").n_permutations == 2**16
    assert paired_permutation(rng.normal(size=17), rng.normal(size=17), exact="auto", n_resamples=50).exact is False
    a, b = rng.normal(size=20), rng.normal(size=20)
    assert paired_permutation(a, b, exact=True).n_permutations == 2**20
    with pytest.raises(ReliabilityError, match=r"^exact enumeration of 2\^21 masks is too large \(max n = 20\)"):
        paired_permutation(np.append(a, 0.0), np.append(b, 1.0), exact=True)


def _documented_sampled_null(a, b, n_resamples, seed):
    """The mean-difference null of paired_permutation's docstring, rebuilt: masks drawn as
    default_rng(seed).integers(0, 2, size=(R, n)); keep (1) or swap (0) each pair."""
    masks = np.random.default_rng(seed).integers(0, 2, size=(n_resamples, len(a))).astype(bool)
    a, b = np.asarray(a), np.asarray(b)
    return np.where(masks, a, b).mean(axis=1) - np.where(masks, b, a).mean(axis=1)


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_sampled_permutation_p_value_follows_the_documented_masks_and_correction(alternative):
    rng = np.random.default_rng(9)
    a = rng.normal(size=12)
    b = a - 0.15 + rng.normal(scale=0.8, size=12)  # a weak effect: p far from 0 and 1
    res = paired_permutation(a, b, n_resamples=400, seed=21, alternative=alternative)
    null = _documented_sampled_null(a, b, 400, 21)
    obs = float(np.mean(a) - np.mean(b))
    count = {"greater": np.sum(null >= obs - 1e-12), "less": np.sum(null <= obs + 1e-12),
             "two-sided": np.sum(np.abs(null) >= abs(obs) - 1e-12)}[alternative]
    assert res.count == count and res.p_value == pytest.approx((count + 1) / 401)
    assert 0.02 < res.p_value < 0.98
    assert (res.exact, res.alternative, res.seed, res.n_permutations) == (False, alternative, 21, 400)
    assert res != paired_permutation(a, b, n_resamples=400, seed=22, alternative=alternative)  # the seed matters


def test_exact_permutation_counts_the_identity_mask_and_near_ties_within_1e_12_only():
    # d = [1, 1.5e-12]: the mask flipping d[1] gives a mean 1.5e-12 below the observed one: a real
    # (if tiny) difference, not rounding, so it is not counted; p = 1/4 (the identity mask only).
    assert paired_permutation([1.0, 1.5e-12], [0.0, 0.0], exact=True).p_value == 0.25
    assert paired_permutation([-1.0, -1.5e-12], [0.0, 0.0], exact=True, alternative="less").p_value == 0.25
    # the tolerance scales with |observed|: d = [4, 1.5e-12] has observed ~2, tolerance 2e-12, so the
    # same flip (1.5e-12 below) is a rounding-level tie and counts
    assert paired_permutation([4.0, 1.5e-12], [0.0, 0.0], exact=True).p_value == 0.5
    two = paired_permutation([3.0, 4.0, 5.0], [1.0, 2.0, 6.0], exact=True, alternative="less")
    # d = [2, 2, -1], observed 1: count the sign-flipped means at or below it
    null = [(s1 * 2 + s2 * 2 - s3) / 3 for s1 in (1, -1) for s2 in (1, -1) for s3 in (1, -1)]
    assert two.p_value == sum(x <= 1 + 1e-12 for x in null) / 8 and two.seed is None


def _perm_both_by_enumeration(gold, m1, m2, corr):
    """PERM-BOTH (Deutsch, Dror & Roth 2021) by brute force: z-score both metrics (population sd),
    swap elementwise under every mask, p = share of masks with delta >= observed."""
    import itertools

    gold, m1, m2 = (np.asarray(v, dtype=float) for v in (gold, m1, m2))
    z1, z2 = (m1 - m1.mean()) / m1.std(), (m2 - m2.mean()) / m2.std()
    obs = corr(z1, gold) - corr(z2, gold)
    hits = 0
    for mask in itertools.product((True, False), repeat=len(gold)):
        mask = np.array(mask)
        h1, h2 = np.where(mask, z1, z2), np.where(mask, z2, z1)
        hits += corr(h1, gold) - corr(h2, gold) >= obs - 1e-12 * max(1.0, abs(obs))
    return obs, hits / 2 ** len(gold)


@pytest.mark.parametrize("name", ["pearson", "spearman", "kendall", "callable"])
def test_perm_both_equals_brute_force_enumeration_for_every_correlation(name):
    from scipy import stats as sps

    gold = [3.0, 1.0, 4.0, 1.5, 5.0, 2.0, 2.5]
    m1 = [29.0, 12.0, 35.0, 20.0, 48.0, 10.0, 30.0]  # a 0-100 scale with a large mean
    m2 = [-2.0, -1.5, -1.0, -3.0, 0.0, -0.5, -2.5]   # a negative scale
    corr = {"pearson": lambda x, y: float(np.corrcoef(x, y)[0, 1]),
            "spearman": lambda x, y: float(sps.spearmanr(x, y)[0]),
            "kendall": lambda x, y: float(sps.kendalltau(x, y)[0]),
            "callable": lambda x, y: float(np.mean(x * y))}[name]
    obs, p = _perm_both_by_enumeration(gold, m1, m2, corr)
    arg = corr if name == "callable" else name
    res = perm_both(gold, m1, m2, correlation=arg, exact=True)
    assert res.observed == pytest.approx(obs, abs=1e-12) and res.p_value == pytest.approx(p, abs=1e-15)
    via = paired_permutation(m1, m2, gold=gold, correlation=arg, exact=True)
    assert via == res
    sampled = paired_permutation(m1, m2, gold=gold, correlation=arg, n_resamples=64, seed=5, exact=False)
    assert sampled == perm_both(gold, m1, m2, correlation=arg, n_resamples=64, seed=5, exact=False)
    assert sampled.n_permutations == 64 and sampled.seed == 5


def test_perm_both_accepts_a_metric_whose_sd_is_exactly_one():
    res = perm_both([1.0, 2.0, 3.0, 4.0], [0.0, 2.0, 0.0, 2.0], [1.0, 3.0, 2.0, 4.0], exact=True)
    assert 0 < res.p_value <= 1


def test_rank_systems_breaks_ties_by_name_and_reports_its_settings():
    res = rank_systems({"b": [1.0, 2.0, 3.0], "a": [3.0, 2.0, 1.0]}, test="ttest", alpha=0.2)
    assert res.systems == ("a", "b") and res.means == {"a": 2.0, "b": 2.0}
    assert (res.test, res.alpha, res.n_items) == ("ttest", 0.2, 3)
    same = rank_systems({"x": [1.0, 2.0, 4.0], "y": [1.0, 2.0, 4.0]}, test="ttest")
    assert same.p_values[0, 1] == 1.0 and same.clusters == (1, 1)  # identical systems: p = 1, not NaN


@pytest.mark.parametrize("test", ["bootstrap", "permutation", "ttest"])
def test_rank_systems_p_values_are_those_of_the_named_test(test):
    from scipy import stats as sps

    rng = np.random.default_rng(12)
    hi = rng.normal(3.2, 1.0, 30)
    lo = hi - 0.2 + rng.normal(0, 0.6, 30)
    res = rank_systems({"lo": lo, "hi": hi}, test=test, seed=4, n_resamples=300, alpha=0.01)
    assert res.systems == ("hi", "lo")
    expected = {"bootstrap": lambda: paired_bootstrap(hi, lo, n_resamples=300, seed=4).p_value,
                "permutation": lambda: paired_permutation(hi, lo, n_resamples=300, seed=4).p_value,
                "ttest": lambda: sps.ttest_rel(hi, lo, alternative="greater").pvalue}[test]()
    assert res.p_values[0, 1] == pytest.approx(expected, rel=1e-12)
    assert 0.001 < expected < 0.5
    assert res.to_dict() == {"systems": ["hi", "lo"], "means": {"hi": float(hi.mean()), "lo": float(lo.mean())},
                             "p_values": [[None, float(expected)], [None, None]], "clusters": list(res.clusters),
                             "test": test, "alpha": 0.01, "n_items": 30}


def test_pairwise_accuracy_single_pair_and_labels_of_mixed_types():
    one = pairwise_accuracy([1.0, 2.0], [1.0, 2.0])
    assert (one.value, one.n_agree, one.n_pairs) == (1.0, 1, 1)
    # the labels 1 and "1" are different groups (no conversion to a common string type)
    res = pairwise_accuracy([1, 2, 2, 1], [1, 2, 1, 2], groups=[1, 1, "1", "1"])
    assert res.per_group == {1: (1, 1), "1": (0, 1)}


def test_self_preference_with_two_systems_and_the_judge_model_ranked_best_by_reference():
    reference = {"own": [5.0, 4.0, 5.0], "other": [1.0, 2.0, 3.0]}
    judge = {"own": [1.0, 4.0, 5.0], "other": [2.0, 2.0, 3.0]}
    res = self_preference(reference, judge, "own")
    # per interaction ranks of "own": reference 1, 1, 1; judge 2, 1, 1 -> diff = ref - judge = -1, 0, 0
    assert (res.system, res.reference_rank, res.judge_rank, res.rank_change) == ("own", 1, 1, 0)
    assert res.share_lower == pytest.approx(1 / 3) and res.share_higher == 0.0
    assert res.share_equal == pytest.approx(2 / 3) and res.n_interactions == 3
    assert res.mean_interaction_rank_change == pytest.approx(-1 / 3)
    tied = self_preference({"b": [1.0], "a": [1.0]}, {"b": [1.0], "a": [1.0]}, "b")
    assert tied.reference_rank == 2  # equal means: names break the tie, "a" before "b"


def test_summarize_repeats_reports_extremes_and_counts():
    res = summarize_repeats([4.0, float("nan"), 1.0, 3.0, 2.0, float("nan")])
    assert (res.minimum, res.maximum, res.n, res.n_missing) == (1.0, 4.0, 4, 2)
    assert (res.q1, res.median, res.q3) == pytest.approx((1.75, 2.5, 3.25))  # linear interpolation


def test_clusters_follow_alpha_and_its_default_is_five_percent():
    assert significance_clusters([[1, 0.06], [1, 1]]) == [1, 1]  # 0.06 > 0.05: not separated
    assert significance_clusters([[1, 0.06], [1, 1]], alpha=0.1) == [1, 2]
    rng = np.random.default_rng(12)
    hi = rng.normal(3.2, 1.0, 30)
    lo = hi - 0.2 + rng.normal(0, 0.6, 30)
    p = rank_systems({"lo": lo, "hi": hi}, test="ttest").p_values[0, 1]
    assert 0.0001 < p < 0.99
    assert rank_systems({"lo": lo, "hi": hi}, test="ttest", alpha=0.99).clusters == (1, 2)
    assert rank_systems({"lo": lo, "hi": hi}, test="ttest", alpha=0.0001).clusters == (1, 1)
