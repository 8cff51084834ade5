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
