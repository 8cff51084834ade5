"""MindEval scores, breakdowns, meta-evaluation helpers and assertion helpers."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from scipy.stats import kendalltau

from pytest_judgerel.errors import ConfigError, RatingsError
from pytest_judgerel.gates.mindeval import assert_judge_agrees_with_humans, assert_mindeval_score
from pytest_judgerel.mindeval.judge import JudgeScore
from pytest_judgerel.mindeval.metrics import (
    aligned_scores,
    breakdown,
    judge_self_preference,
    leaderboard,
    group_by_patient,
    interaction_score,
    judge_mipsa,
    kendall_vs_annotators,
    ranking_agreement,
    repeated_judge_summary,
    sentence_count,
    system_scores,
    verbosity,
)
from pytest_judgerel.mindeval.profiles import sample_profiles


def js(i, values):
    scores = None if values is None else dict(zip(("CAC", "EPC", "AR", "TRA", "ASCQ"), values))
    return JudgeScore(f"i{i}", scores, None if scores else "missing_axis: x", "", False, "m")


@pytest.mark.parametrize("text,n", [
    ("One. Two! Three?", 3),
    ("I hear you.", 1),
    ("It's about 3.5 hours, e.g. most nights. Does that fit?", 2),
    ("First line\nSecond line\n\n- a bullet", 3),
    ("Hmm... okay. Sure", 3),
    ("", 0),
    ('She said "stop." Then left.', 2),
])
def test_sentence_count(text, n):
    assert sentence_count(text) == n


def test_verbosity_on_messages():
    msgs = [{"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "A. B. C. D. E."},
            {"role": "user", "content": "Ok. Sure. Fine. Yes. No. Maybe."},
            {"role": "assistant", "content": "A. B."}]

    @dataclass
    class I:
        messages: list
        turns: tuple = ()

    v = verbosity(I(msgs))
    assert v.per_turn == (5, 2) and v.mean_sentences == 3.5 and v.share_over_4 == 0.5 and v.n_turns == 2
    with pytest.raises(RatingsError):
        verbosity([I([{"role": "user", "content": "x"}])])


def test_interaction_and_system_scores_exclude_failures():
    a = [js(0, [3, 5, 3, 4, 2]), js(1, [4, 4, 4, 4, 4]), js(2, None)]
    b = [js(3, [2, 2, 2, 2, 2])]
    assert interaction_score(a[0]) == pytest.approx(3.4)
    assert interaction_score(a[2]) is None
    res = system_scores({"A": a, "B": b})
    assert res["A"].mean == pytest.approx((3.4 + 4) / 2) and res["A"].n == 2 and res["A"].n_failed == 1
    assert res["A"].axes["CAC"] == 3.5
    with pytest.raises(RatingsError, match="no parsable"):
        system_scores({"C": [js(0, None)]})


def test_breakdown_by_severity_and_attribute():
    profs = sample_profiles(40, 3)

    @dataclass
    class I:
        profile: object

    inters = [I(p) for p in profs]
    scores = [js(i, [2 if p.severe else 4] * 5) for i, p in enumerate(profs)]
    by_sev = breakdown(inters, scores)
    assert by_sev["severe"].mean == 2 and by_sev["non_severe"].mean == 4
    assert by_sev["severe"].n + by_sev["non_severe"].n == 40
    by_region = breakdown(inters, scores, by="region")
    assert set(by_region) <= {"urban", "suburban", "rural"}
    by_fn = breakdown(inters, scores, by=lambda it: it.profile.age >= 45)
    assert set(by_fn) <= {True, False}


def test_kendall_vs_annotators_matches_scipy():
    rng = np.random.default_rng(0)
    human = rng.integers(1, 7, size=(30, 4)).astype(float)
    human[3, 2] = np.nan
    judge = np.nanmean(human, axis=1) + rng.normal(0, 0.5, 30)
    res = kendall_vs_annotators(list(judge), human)
    keep = ~np.isnan(human[:, 2])
    assert res.per_annotator[2] == pytest.approx(kendalltau(judge[keep], human[keep, 2]).statistic)
    assert res.vs_average == pytest.approx(kendalltau(judge, np.nanmean(human, axis=1)).statistic)
    assert res.n == 30
    with pytest.raises(RatingsError, match="interactions"):
        kendall_vs_annotators([1, 2], human)


def test_judge_mipsa_groups_by_patient_and_aligns_systems():
    # 3 patients x 3 systems, listed in a shuffled system order
    patients = ["p1", "p1", "p1", "p2", "p2", "p2", "p3", "p3", "p3"]
    systems = ["b", "a", "c", "a", "c", "b", "c", "b", "a"]
    truth = {"a": 3.0, "b": 2.0, "c": 1.0}
    human = np.array([[truth[s], truth[s]] for s in systems])
    human[8, 1] = np.nan
    judge = [truth[s] for s in systems]
    res = judge_mipsa(judge, human, patients, systems)
    assert res.vs_average == 1.0 and res.per_annotator == (1.0, 1.0) and res.n_interactions == 3
    flipped = [-v for v in judge]
    assert judge_mipsa(flipped, human, patients, systems).vs_average == 0.0
    assert group_by_patient([1, 2, 3], ["x", "x", "y"], ["b", "a", "a"]) == [[2, 1], [3]]
    with pytest.raises(RatingsError, match="same system"):
        group_by_patient([1, 2], ["x", "x"], ["a", "a"])


def test_repeated_judge_summary_median_and_quartiles():
    rng = np.random.default_rng(4)
    human = rng.normal(size=(20, 3))
    base = human.mean(axis=1)
    runs = [list(base + rng.normal(0, s, 20)) for s in np.linspace(0.1, 1.5, 7)]
    patients = [f"p{i // 2}" for i in range(20)]
    systems = ["a", "b"] * 10
    res = repeated_judge_summary(runs, human, patients, systems)
    taus = sorted(kendalltau(r, base).statistic for r in runs)
    assert res.n_runs == 7 and res.kendall.median == pytest.approx(taus[3])
    # numpy's linear quartiles of 7 sorted values sit at positions 1.5 and 4.5
    assert res.kendall.q1 == pytest.approx((taus[1] + taus[2]) / 2)
    assert res.kendall.q3 == pytest.approx((taus[4] + taus[5]) / 2)
    # MIPSA by hand: one system pair per patient (a, b); it agrees when the judge orders the pair
    # like the average annotator; a run's MIPSA is the share of the 10 patients that agree.
    mipsas = sorted(
        float(np.mean([np.sign(r[i] - r[i + 1]) == np.sign(base[i] - base[i + 1]) for i in range(0, 20, 2)]))
        for r in runs)
    assert res.mipsa is not None and res.mipsa.n == 7
    assert res.mipsa.median == pytest.approx(mipsas[3])
    assert (res.mipsa.q1, res.mipsa.q3) == pytest.approx(((mipsas[1] + mipsas[2]) / 2, (mipsas[4] + mipsas[5]) / 2))
    assert (res.mipsa.minimum, res.mipsa.maximum) == (mipsas[0], mipsas[-1])
    assert len(set(mipsas)) > 2  # the noise levels spread the runs: the check is not vacuous
    assert repeated_judge_summary(runs, human).mipsa is None  # MIPSA needs the patients


def test_ranking_agreement_between_leaderboards():
    a = {"x": 3.9, "y": 3.5, "z": 3.1, "w": 2.0}
    b = {"x": 3.7, "y": 3.8, "z": 3.0, "w": 1.9}
    res = ranking_agreement(a, b)
    assert (res.n_agree, res.n_pairs) == (5, 6)
    with pytest.raises(RatingsError):
        ranking_agreement(a, {"x": 1})


def test_assert_mindeval_score_passes_fails_and_records(_private_metric_sink):
    records = _private_metric_sink
    good = [js(0, [4, 4, 4, 4, 4]), js(1, [3, 3, 3, 3, 3])]
    assert assert_mindeval_score(good, min_mean=3.4) == pytest.approx(3.5)
    assert records[-1]["kind"] == "mindeval_score" and records[-1]["passed"] is True
    assert records[-1]["value"] == pytest.approx(3.5) and records[-1]["threshold"] == 3.4
    with pytest.raises(AssertionError, match="mean MindEval score 3.500 < required 3.6"):
        assert_mindeval_score(good, min_mean=3.6)
    assert records[-1]["passed"] is False
    with pytest.raises(AssertionError, match="1 of 3 judge replies could not be parsed"):
        assert_mindeval_score(good + [js(2, None)], min_mean=1)
    assert records[-1]["parse_failures"] == 1
    assert assert_mindeval_score(good + [js(2, None)], min_mean=1, max_parse_failures=1) == pytest.approx(3.5)
    assert assert_mindeval_score(good, axis="CAC", min_mean=3.5) == 3.5
    with pytest.raises(ConfigError):
        assert_mindeval_score(good, axis="XYZ")


def test_assert_judge_agrees_with_humans(_private_metric_sink):
    records = _private_metric_sink
    patients = [f"p{i // 3}" for i in range(12)]
    systems = ["a", "b", "c"] * 4
    human = np.array([[v, v + 0.5] for v in [5, 3, 1, 4, 2, 1, 6, 4, 2, 5, 4, 1]], dtype=float)
    judge = list(human.mean(axis=1))
    out = assert_judge_agrees_with_humans(judge, human, min_kendall=0.9, min_mipsa=1.0,
                                          patients=patients, systems=systems)
    assert out["kendall"] == pytest.approx(1.0) and out["mipsa"] == 1.0
    assert [r["statistic"].split(" ")[0] for r in records] == ["Kendall", "MIPSA"]
    assert all(r["kind"] == "agreement" and r["passed"] for r in records)
    with pytest.raises(AssertionError, match="Kendall tau vs average annotator -1.000 < 0.5"):
        assert_judge_agrees_with_humans([-v for v in judge], human, min_kendall=0.5)
    with pytest.raises(ConfigError, match="patients"):
        assert_judge_agrees_with_humans(judge, human, min_mipsa=0.5)
    with pytest.raises(ConfigError):
        assert_judge_agrees_with_humans(judge, human)
    assert not math.isnan(out["kendall"])


def _scored(system, pid, values):
    scores = None if values is None else dict(zip(("CAC", "EPC", "AR", "TRA", "ASCQ"), values))
    return JudgeScore(f"{pid}::{system}", scores, None if scores else "x", "", False, "judge")


def test_leaderboard_aligns_patients_and_drops_incomplete_ones():
    rng = np.random.default_rng(8)
    base = rng.uniform(2, 4, 30)
    noise = rng.normal(0, 0.3, 30)
    by_system = {
        "good": [_scored("good", f"p{i}", [base[i] + 1] * 5) for i in range(30)],
        "ok": [_scored("ok", f"p{i}", [base[i]] * 5) for i in reversed(range(30))],  # other order
        "ok2": [_scored("ok2", f"p{i}", None if i == 3 else [base[i] + noise[i]] * 5) for i in range(30)],
    }
    aligned, kept, dropped = aligned_scores(by_system)
    assert dropped == 1 and "p3" not in kept and len(kept) == 29
    assert aligned["ok"][0] == pytest.approx(base[int(kept[0][1:])])
    res = leaderboard(by_system, seed=1, n_resamples=300)
    assert res.systems[0] == "good" and res.clusters == (1, 2, 2) and res.n_items == 29


def test_judge_self_preference_on_judge_scores():
    ref = {s: [_scored(s, f"p{i}", [v] * 5) for i in range(6)] for s, v in [("gpt", 3), ("claude", 4)]}
    jud = {"gpt": [_scored("gpt", f"p{i}", [5] * 5) for i in range(6)],
           "claude": [_scored("claude", f"p{i}", [4] * 5) for i in range(6)]}
    res = judge_self_preference(ref, jud, "gpt")
    assert res.rank_change == 1 and res.share_higher == 1.0 and res.n_interactions == 6


# ----------------------------------------------------------------------------- contract details
def test_sentence_count_keeps_abbreviations_and_ellipses_in_one_sentence():
    assert sentence_count("Dr. Lee said e.g. this, i.e. that. Fine") == 2
    assert sentence_count("Wait… what? Yes.") == 3
    assert sentence_count("(Really.) Then what") == 2
    assert sentence_count("   ") == 0 and sentence_count(None) == 0


def test_verbosity_limit_is_strict_and_adjustable_over_several_interactions():
    @dataclass
    class I:
        messages: list
        turns: tuple = ()

    four = {"role": "assistant", "content": "A. B. C. D."}
    five = {"role": "assistant", "content": "A. B. C. D. E."}
    two = {"role": "assistant"}  # no content: 0 sentences
    v = verbosity([I([four, {"role": "user", "content": "x. y. z. w. v."}]), I([five, two])])
    assert v.per_turn == (4, 5, 0) and v.n_turns == 3 and v.share_over_4 == pytest.approx(1 / 3)
    assert v.median_sentences == 4.0 and v.mean_sentences == 3.0
    assert verbosity([I([four, five])], limit=3).share_over_4 == 1.0
    assert verbosity([four, five, {"role": "user", "content": "A."}]).per_turn == (4, 5)  # plain message dicts
    with pytest.raises(RatingsError, match=r"^verbosity needs at least one clinician \(assistant\) turn$"):
        verbosity([])


def test_scores_must_be_judge_scores_or_axis_dicts_with_every_axis():
    with pytest.raises(RatingsError, match=r"^expected a JudgeScore or an axis dict, got int$"):
        interaction_score(3)
    with pytest.raises(RatingsError, match=r"^axis scores lack \['TRA', 'ASCQ'\]$"):
        interaction_score({"CAC": 1, "EPC": 1, "AR": 1})
    assert interaction_score({"CAC": 1, "EPC": 2, "AR": 3, "TRA": 4, "ASCQ": 5, "extra": 100}) == 3.0
    res = system_scores({"A": [{"CAC": 1, "EPC": 1, "AR": 1, "TRA": 1, "ASCQ": 1}, js(1, [2, 4, 2, 4, 3])]})["A"]
    assert res.system == "A" and res.per_interaction == (1.0, 3.0) and res.axes["EPC"] == 2.5 and res.n_failed == 0
    with pytest.raises(RatingsError, match=r"^system 'C': no parsable judge score among 2 interactions$"):
        system_scores({"C": [js(0, None), None]})


def test_breakdown_needs_one_score_per_interaction_and_names_groups():
    @dataclass
    class I:
        profile: object

    with pytest.raises(RatingsError, match=r"^2 interactions but 1 scores$"):
        breakdown([I(None), I(None)], [js(0, [1] * 5)])
    out = breakdown([I(None), I(None), I(None)], [js(0, [1] * 5), js(1, [3] * 5), js(2, [5] * 5)],
                    by=lambda it: "all")
    assert list(out) == ["all"] and out["all"].system == "all" and out["all"].mean == 3.0 and out["all"].n == 3


def test_kendall_vs_annotators_variants_missing_values_and_errors():
    judge = [1.0, 2.0, 3.0, 4.0, None]
    human = np.array([[1, 2], [2, 2], [3, np.nan], [5, 1], [4, 4]], dtype=float)
    res = kendall_vs_annotators(judge, human, variant="c")
    keep = [0, 1, 2, 3]
    assert res.variant == "c" and res.n == 4
    assert res.per_annotator[0] == pytest.approx(kendalltau([1, 2, 3, 4], human[keep, 0], variant="c").statistic)
    assert res.per_annotator[1] == pytest.approx(kendalltau([1, 2, 4], [2, 2, 1], variant="c").statistic)
    avg = [1.5, 2.0, 3.0, 3.0]  # the average annotator ignores the missing rating
    assert res.vs_average == pytest.approx(kendalltau([1, 2, 3, 4], avg, variant="c").statistic)
    one_column = kendall_vs_annotators([1.0, 2.0, 3.0], [3.0, 1.0, 2.0])
    assert one_column.per_annotator == (pytest.approx(kendalltau([1, 2, 3], [3, 1, 2]).statistic),)
    with pytest.raises(RatingsError, match=r"^judge has 2 interactions but human scores have 3$"):
        kendall_vs_annotators([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(RatingsError, match=r"^human scores must be interactions x annotators, got shape \(2, 1, 1\)$"):
        kendall_vs_annotators([1.0, 2.0], np.ones((2, 1, 1)))
    with pytest.raises(RatingsError, match=r"^Kendall tau needs at least two interactions scored by both"):
        kendall_vs_annotators([1.0, None, 3.0], np.array([[1.0], [2.0], [np.nan]]))
    lone = kendall_vs_annotators([1.0, 2.0, 3.0], np.array([[1.0, np.nan], [2.0, np.nan], [3.0, 5.0]]))
    assert math.isnan(lone.per_annotator[1]) and lone.vs_average == pytest.approx(1.0)


def test_group_by_patient_keeps_first_appearance_order_and_checks_lengths():
    assert group_by_patient([1, 2, 3, 4], ["y", "x", "y", "x"]) == [[1, 3], [2, 4]]
    with pytest.raises(RatingsError, match=r"^values, patients \(and systems\) must have one entry per interaction$"):
        group_by_patient([1, 2], ["x"])
    with pytest.raises(RatingsError, match=r"^values, patients \(and systems\)"):
        group_by_patient([1, 2], ["x", "x"], ["a"])
    with pytest.raises(RatingsError, match=r"^patient 'x' has two interactions with the same system$"):
        group_by_patient([1, 2], ["x", "x"], ["a", "a"])


def test_judge_mipsa_tie_policy_and_an_annotator_without_ratings():
    patients = ["p1"] * 3 + ["p2"] * 3
    judge = [2.0, 2.0, 1.0, 1.0, 2.0, 3.0]
    human = np.array([[3, np.nan], [3, np.nan], [0, np.nan], [1, np.nan], [2, np.nan], [3, np.nan]], dtype=float)
    # p1: judge ties systems 0 and 1 exactly where the human does: "sign" counts it as agreement (3/3),
    # "drop_reference_ties" leaves the pair out (2/2); p2 agrees fully either way
    sign = judge_mipsa(judge, human, patients)
    assert sign.per_annotator[0] == 1.0 and math.isnan(sign.per_annotator[1]) and sign.ties == "sign"
    assert sign.vs_average == 1.0 and sign.n_interactions == 2
    drop = judge_mipsa([2.0, 1.0, 0.0, 1.0, 2.0, 3.0], human, patients, ties="drop_reference_ties")
    assert drop.vs_average == 1.0 and drop.ties == "drop_reference_ties" and drop.per_annotator[0] == 1.0
    runs = [[2.0, 1.0, 0.0, 1.0, 2.0, 3.0]] * 3
    assert repeated_judge_summary(runs, human, patients, ties="drop_reference_ties").mipsa.median == 1.0
    assert repeated_judge_summary(runs, human, patients).mipsa.median == pytest.approx((2 / 3 + 1) / 2)
    # systems align each patient's list by name: reversing p1's system labels reverses its pairs
    systems = ["a", "b", "c", "a", "b", "c"]
    flipped = ["c", "b", "a", "a", "b", "c"]
    assert repeated_judge_summary(runs, human, patients, systems).mipsa.median == pytest.approx((2 / 3 + 1) / 2)
    assert judge_mipsa(runs[0], human, patients, flipped).vs_average == judge_mipsa(runs[0], human, patients).vs_average
    assert judge_mipsa([2.0, 1.0, 0.0, 1.0, 2.0, 3.0], human, patients).vs_average == pytest.approx((2 / 3 + 1) / 2)
    with pytest.raises(RatingsError, match=r"^judge has 5 interactions but human scores have 6$"):
        judge_mipsa(judge[:5], human, patients)
    with pytest.raises(RatingsError, match=r"^repeated_judge_summary needs at least one run$"):
        repeated_judge_summary([], human)


def test_ranking_agreement_reads_system_scores_and_names_the_systems():
    from pytest_judgerel.mindeval.metrics import SystemScore

    a = {"x": SystemScore("x", 3.0, {}, 1, 0), "y": SystemScore("y", 2.0, {}, 1, 0), "z": 1.0}
    res = ranking_agreement(a, {"x": 1.0, "y": 2.0, "z": 0.0})
    assert (res.n_agree, res.n_pairs) == (2, 3)
    with pytest.raises(RatingsError, match=r"^leaderboards cover different systems: \['x', 'y', 'z'\] vs \['x'\]$"):
        ranking_agreement(a, {"x": 1.0})


def test_aligned_scores_reads_ids_positions_floats_and_names_its_errors():
    by_system = {"a": [_scored("a", "p1", [1] * 5), 2.0, None, float("nan")],
                 "b": [_scored("b", "p1", [3] * 5), 4.0, 5.0, 6.0]}
    aligned, kept, dropped = aligned_scores(by_system)
    # patients: "p1" (from the id) and positions "1", "2", "3"; a has no usable score for 2 and 3
    assert kept == ["p1", "1"] and dropped == 2 and aligned == {"a": [1.0, 2.0], "b": [3.0, 4.0]}
    with pytest.raises(RatingsError, match=r"^no systems given$"):
        aligned_scores({})
    with pytest.raises(RatingsError, match=r"^system 'a' has two scores for patient 'p1'$"):
        aligned_scores({"a": [_scored("a", "p1", [1] * 5), _scored("a", "p1", [2] * 5)]})
    with pytest.raises(RatingsError, match=r"^no patient has a parsable score for every system$"):
        aligned_scores({"a": [None], "b": [1.0]})


def test_leaderboard_passes_its_test_settings_to_the_ranking():
    from pytest_judgerel.stats.ranking import rank_systems

    rng = np.random.default_rng(3)
    by_system = {s: [_scored(s, f"p{i}", [v] * 5) for i, v in enumerate(rng.uniform(1, 6, 12) + shift)]
                 for s, shift in (("a", 0.0), ("b", 0.3))}
    aligned, _, _ = aligned_scores(by_system)
    for kwargs in ({"test": "permutation", "alpha": 0.2, "seed": 5, "n_resamples": 200},
                   {"test": "bootstrap", "alpha": 0.01, "seed": 9, "n_resamples": 150}):
        res = leaderboard(by_system, **kwargs)
        ref = rank_systems(aligned, **kwargs)
        assert res.systems == ref.systems and res.p_values[0, 1] == ref.p_values[0, 1]
        assert (res.test, res.alpha) == (kwargs["test"], kwargs["alpha"])
    assert leaderboard(by_system).p_values[0, 1] == rank_systems(aligned).p_values[0, 1]  # the same defaults


def test_judge_self_preference_uses_only_patients_both_judges_scored():
    ref = {"gpt": [_scored("gpt", f"p{i}", [3] * 5) for i in range(4)],
           "claude": [_scored("claude", f"p{i}", [4] * 5) for i in range(4)]}
    jud = {"gpt": [_scored("gpt", f"p{i}", [5 if i < 2 else 3] * 5) for i in (1, 2, 3, 0)],
           "claude": [_scored("claude", f"p{i}", [4] * 5) for i in (1, 2, 3, 0)]}
    jud["gpt"][2] = _scored("gpt", "p3", None)  # p3 unusable for this judge
    res = judge_self_preference(ref, jud, "gpt")
    # common patients in the reference's order: p0, p1, p2 -> judge ranks gpt first on p0 and p1
    assert res.n_interactions == 3 and res.share_higher == pytest.approx(2 / 3)
    other = {"gpt": [_scored("gpt", "q1", [1] * 5)], "claude": [_scored("claude", "q1", [1] * 5)]}
    with pytest.raises(RatingsError, match=r"^the two judges share no fully scored patient$"):
        judge_self_preference(ref, other, "gpt")


def test_judge_side_accepts_judge_scores_axis_dicts_and_failures_and_human_side_a_ratings_object():
    class Panel:
        def to_matrix(self):
            return np.array([[1.0, 2.0], [2.0, 2.0], [3.0, 4.0], [4.0, 5.0]])

    judge = [js(0, [1] * 5), {"CAC": 2, "EPC": 2, "AR": 2, "TRA": 2, "ASCQ": 2}, None, 4.0]
    res = kendall_vs_annotators(judge, Panel())
    assert res.n == 3 and res.vs_average == pytest.approx(1.0)  # 1, 2, 4 against 1.5, 2, 4.5
    listed = kendall_vs_annotators([1.0, 2.0, None, 4.0], [[1, 2], [2, None], [3, 4], [4, 5]])
    assert listed.per_annotator[1] == pytest.approx(1.0)  # None in the human list is a missing rating
    two = kendall_vs_annotators([1.0, 2.0], [[1.0], [2.0]])
    assert two.n == 2 and two.vs_average == pytest.approx(1.0)  # two interactions are enough


def test_patient_ids_are_the_text_before_the_first_separator():
    by_system = {"a": [JudgeScore("p1::a::r2", dict.fromkeys(("CAC", "EPC", "AR", "TRA", "ASCQ"), 3.0), None, "",
                                  False, "m")],
                 "b": [JudgeScore("p1::b::r7", dict.fromkeys(("CAC", "EPC", "AR", "TRA", "ASCQ"), 4.0), None, "",
                                  False, "m")]}
    assert aligned_scores(by_system) == ({"a": [3.0], "b": [4.0]}, ["p1"], 0)


def test_repeated_summary_checks_the_systems_it_is_given():
    human = np.array([[1.0], [2.0], [3.0], [4.0]])
    runs = [[1.0, 2.0, 3.0, 4.0]]
    with pytest.raises(RatingsError, match=r"^patient 'p' has two interactions with the same system$"):
        repeated_judge_summary(runs, human, ["p"] * 4, ["a", "a", "b", "c"])
    assert repeated_judge_summary(runs, human, ["p"] * 4, ["d", "c", "b", "a"]).mipsa.median == 1.0


def test_an_abbreviation_alone_is_one_sentence():
    assert sentence_count("e.g.") == 1 and sentence_count("Dr.") == 1


def test_an_interaction_nobody_rated_gives_no_numpy_warning():
    import warnings

    human = np.array([[1.0, 2.0], [np.nan, np.nan], [3.0, 3.0], [4.0, 5.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Mean of empty slice" would fail here
        assert kendall_vs_annotators([1.0, 2.0, 3.0, 4.0], human).n == 3
        assert judge_mipsa([1.0, 2.0, 3.0, 4.0], human, ["p", "p", "p", "p"]).vs_average == 1.0


def test_average_annotator_is_exact_so_equal_averages_tie():
    """(1.0 + 1.6) / 2 and (1.2 + 1.4) / 2 are both 13/10, but floating-point means differ in the
    last bit; the average annotator is computed exactly and rounded once, so they tie."""
    from fractions import Fraction

    from pytest_judgerel.mindeval.metrics import _average_annotator, _rational

    assert np.mean([1.0, 1.6]) != np.mean([1.2, 1.4])  # the rounding the exact mean avoids
    avg = _average_annotator(np.array([[1.0, 1.6], [1.2, 1.4], [np.nan, 2.2], [np.nan, np.nan]]))
    assert avg[0] == avg[1] == 1.3 and avg[2] == 2.2 and np.isnan(avg[3])
    assert _rational(0.1 + 0.2) == Fraction(3, 10) and _rational(17 / 5) == Fraction(17, 5)
    assert _rational(np.pi) == Fraction(np.pi)  # no simple fraction rounds to it: kept exact
    # judge vs the average annotator: the tie is seen by MIPSA (sign policy) and Kendall tau-b
    judge = [1.0, 2.0, 3.0, 4.0]
    human = [[1.0, 1.6], [1.2, 1.4], [2.0, 2.0], [3.0, 3.0]]
    k = kendall_vs_annotators(judge, human)
    assert k.vs_average == pytest.approx(kendalltau(judge, [1.3, 1.3, 2.0, 3.0]).statistic, abs=1e-15)
