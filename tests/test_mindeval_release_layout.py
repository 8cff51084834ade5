"""MindEval human annotations in the release's exact layout, on small synthetic files.

The layout (flat keys with dots, ``.users`` beside every rating list, annotator order changing
from line to line, no patient id, a per-conversation ``interaction_goal``) is that of the
authors' ``data/human_annotations.jsonl``; every value here is made up.  Expectations are
computed in this file (scipy's kendalltau, a hand-written MIPSA loop), not with project code.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import kendalltau

from pytest_judgerel.errors import RatingsError
from pytest_judgerel.mindeval.annotations import (
    annotator_agreement,
    annotator_ids,
    axis_scores_from_subcriteria,
    fewshot_examples,
    human_score_matrix,
    load_human_annotations,
)

CRITS = (1, 2, 3, 4, 6, 7, 8, 9, 10, 11)
ANNOTATORS = ("u-anna", "u-ben", "u-cleo", "u-dev")
SYSTEMS = ("vendor/model-a", "vendor/model-b", "other/model-c")
AXES = {"CAC": (1, 2), "EPC": (3, 4), "AR": (6, 7), "TRA": (8, 9), "ASCQ": (10,)}


def key(c: int) -> str:
    return f"criterion_{c}.responses" if c != 11 else "criterion11.responses"  # the release's spelling


def attributes(name: str, age: int, goal: str) -> dict:
    return {"name": name, "sex": "Female", "gender_identity": "Female", "sexual_orientation": "Asexual",
            "age": age, "race": "Asian", "thought_process": "t", "general_outlook": "o",
            "conversation_style": "c", "mood": "tense", "education": "high school graduate",
            "profession": "Cashier", "employment_status": "employed part time",
            "financial_situation": "f", "support_system": "mostly friends", "siblings": "s",
            "relationship_status": "single", "living_situation": "alone", "exercise": "inactive",
            "sleep_quality": "q", "attitude_towards_mindfulness": "a", "region": "rural",
            "depressive_symptoms": "mild depressive symptoms", "anxious_symptoms": "mild anxious symptoms",
            "interaction_goal": goal}


def record(cid, system, attrs, scores, rng):
    """One line in the release layout; ``scores[annotator][criterion]`` -> int 0-6."""
    rec = {"id": cid, "status": "completed", "_server_id": "srv", "member_profile": "**Member Profile:** ...",
           "conversation": "**Turn 1** ..."}
    for c in CRITS:
        order = list(scores)
        rng.shuffle(order)  # annotator order differs between lines and fields
        rec[key(c)] = [scores[a][c] for a in order]
        rec[key(c) + ".users"] = order
        rec[key(c) + ".status"] = ["submitted"] * len(order)
    rec["score_justification.responses"] = ["short note"]
    rec["score_justification.responses.users"] = [ANNOTATORS[0]]
    rec["score_justification.responses.status"] = ["submitted"]
    rec["safety_justification.responses"] = None
    rec["safety_justification.responses.users"] = None
    rec["safety_justification.responses.status"] = None
    rec["model"] = system
    rec["member_attributes"] = attrs
    rec["messages"] = [{"role": "assistant", "content": f"Hi {attrs['name']}. How are you doing?"},
                       {"role": "user", "content": "Fine, I guess."}]
    return rec


def synthetic(n_patients=4, seed=0, zeros=True):
    rng = random.Random(seed)
    recs, truth = [], {}
    for p in range(n_patients):
        for s_i, system in enumerate(SYSTEMS):
            cid = f"conv-{p}-{s_i}"
            attrs = attributes(f"P{p}", 30 + p, goal=f"goal of {cid}")  # varies per conversation
            scores = {a: {c: rng.randint(1, 6) for c in CRITS} for a in ANNOTATORS}
            if zeros and (p + s_i) % 3 == 0:
                scores[ANNOTATORS[(p + s_i) % 4]][rng.choice((1, 4, 9))] = 0
            truth[cid] = (system, f"P{p}", scores)
            recs.append(record(cid, system, attrs, scores, rng))
    return recs, truth


def write(tmp_path, recs, name="human_annotations.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


def axis_value(scores, axis, zero_means):
    vals = [scores[c] for c in AXES[axis] if not (zero_means == "not_applicable" and scores[c] == 0)]
    return sum(vals) / len(vals) if vals else math.nan


def test_loads_the_release_layout_aligning_annotators_by_id(tmp_path):
    recs, truth = synthetic()
    convs = load_human_annotations(write(tmp_path, recs))
    assert len(convs) == 12 and {c.system for c in convs} == set(SYSTEMS)
    assert {c.annotators for c in convs} == {ANNOTATORS}
    for c in convs:
        system, name, scores = truth[c.conversation_id]
        assert c.system == system and c.patient["name"] == name
        for a in ANNOTATORS:
            assert c.sub_scores[c.annotators.index(a)] == {k: float(v) for k, v in scores[a].items()}
            for axis in AXES:
                assert c.axis(axis, a) == axis_value(scores[a], axis, "score")
        assert c.messages[0]["role"] == "assistant"
    # one patient per attribute object without its per-conversation goal: 4 patients x 3 systems
    by_patient = {}
    for c in convs:
        by_patient.setdefault(c.patient_id, set()).add(c.system)
    assert len(by_patient) == 4 and all(v == set(SYSTEMS) for v in by_patient.values())
    assert len({json.dumps(c.patient, sort_keys=True) for c in convs}) == 12  # the goal differs
    assert all(c.patient_id.startswith(c.patient["name"] + "-") for c in convs)


@pytest.mark.parametrize("zero_means", ["score", "not_applicable"])
def test_zero_convention_is_a_named_parameter(tmp_path, zero_means):
    recs, truth = synthetic()
    convs = load_human_annotations(write(tmp_path, recs), zero_means=zero_means)
    n_zero = 0
    for c in convs:
        scores = truth[c.conversation_id][2]
        for a in ANNOTATORS:
            n_zero += sum(v == 0 for v in scores[a].values())
            for axis in AXES:
                got, want = c.axis(axis, a), axis_value(scores[a], axis, zero_means)
                assert (math.isnan(got) and math.isnan(want)) or got == want
            if zero_means == "not_applicable":
                assert all(math.isnan(c.sub_scores[c.annotators.index(a)][k]) for k, v in scores[a].items() if v == 0)
    assert n_zero > 0  # the fixture does hold zeros
    with pytest.raises(RatingsError, match="zero_means must be one of"):
        load_human_annotations(write(tmp_path, recs), zero_means="missing")


def test_human_score_matrix_columns_are_annotator_ids(tmp_path):
    recs, truth = synthetic()
    convs = load_human_annotations(write(tmp_path, recs))
    mat = human_score_matrix(convs)
    cac = human_score_matrix(convs, axis="CAC")
    assert mat.shape == (12, 4) and annotator_ids(convs) == ANNOTATORS
    for i, c in enumerate(convs):
        scores = truth[c.conversation_id][2]
        for j, a in enumerate(ANNOTATORS):
            assert cac[i, j] == axis_value(scores[a], "CAC", "score")
            assert mat[i, j] == pytest.approx(np.mean([axis_value(scores[a], x, "score") for x in AXES]))


def _mipsa_by_hand(x, y, patients, systems):
    """Equation (1) with the sign tie policy: per patient, the share of system pairs ordered alike."""
    shares = []
    for p in dict.fromkeys(patients):
        idx = sorted((i for i in range(len(x)) if patients[i] == p), key=lambda i: systems[i])
        pairs = list(itertools.combinations(idx, 2))
        agree = sum(np.sign(x[i] - x[j]) == np.sign(y[i] - y[j]) for i, j in pairs)
        shares.append(agree / len(pairs))
    return float(np.mean(shares))


@pytest.mark.parametrize("axis", [None, "CAC", "ASCQ"])
def test_annotator_agreement_matches_scipy_kendall_and_a_hand_written_mipsa(tmp_path, axis):
    recs, truth = synthetic(n_patients=6, seed=3, zeros=False)
    convs = load_human_annotations(write(tmp_path, recs))
    table = {}
    for c in convs:
        scores = truth[c.conversation_id][2]
        table[c.conversation_id] = [
            np.mean([axis_value(scores[a], x, "score") for x in AXES]) if axis is None
            else axis_value(scores[a], axis, "score") for a in ANNOTATORS]
    m = np.array([table[c.conversation_id] for c in convs])
    patients = [truth[c.conversation_id][1] for c in convs]
    systems = [c.system for c in convs]
    res = annotator_agreement(convs, axis)
    assert res.annotators == ANNOTATORS and res.n_patients == 6 and res.n_conversations == 18
    for i, j in itertools.permutations(range(4), 2):
        assert res.kendall[i][j] == pytest.approx(kendalltau(m[:, i], m[:, j]).statistic, abs=1e-12)
        assert res.mipsa[i][j] == pytest.approx(_mipsa_by_hand(m[:, i], m[:, j], patients, systems), abs=1e-12)
    for i in range(4):
        # the paper's Avg. P for annotator i, averaged exactly (scores are tenths) and rounded once
        others = np.array([float(sum(Fraction(v).limit_denominator(100) for v in row) / 3)
                           for row in np.delete(m, i, axis=1)])
        assert res.kendall_vs_others[i] == pytest.approx(kendalltau(m[:, i], others).statistic, abs=1e-12)
        assert res.mipsa_vs_others[i] == pytest.approx(_mipsa_by_hand(m[:, i], others, patients, systems), abs=1e-12)
    flipped = res.reordered(ANNOTATORS[::-1])
    assert flipped.kendall[0][1] == res.kendall[3][2] and flipped.mipsa_vs_others[0] == res.mipsa_vs_others[3]
    text = res.to_table(["P1", "P2", "P3", "P4"])
    rows = text.splitlines()
    assert rows[0] == "| annotator | P1 | P2 | P3 | P4 | mean of the others |"
    assert rows[3].startswith(f"| P2 | {res.kendall[1][0]:.4f} |  | {res.mipsa[1][2]:.4f} |")
    assert rows[-1].startswith(f"| mean of the others | {res.kendall_vs_others[0]:.4f} |")


def test_fewshot_examples_use_the_annotator_means_and_the_patient_profile(tmp_path):
    recs, truth = synthetic()
    convs = load_human_annotations(write(tmp_path, recs))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the therapist-first warning is not raised for these
        (ex,) = fewshot_examples(convs, ids=["conv-1-2"])
    scores = truth["conv-1-2"][2]
    for axis in AXES:
        assert ex.scores[axis] == pytest.approx(np.mean([axis_value(scores[a], axis, "score") for a in ANNOTATORS]))
    assert ex.profile.recent_mood == "tense" and ex.profile.program_goal.startswith("goal ")
    assert "- Name: P1" in ex.render()
    with pytest.raises(RatingsError, match="not among the 12 loaded"):
        fewshot_examples(convs)  # the release's ids are not in a synthetic file


def test_a_rating_that_is_not_submitted_is_missing(tmp_path):
    recs, _ = synthetic(n_patients=1, zeros=False)
    recs[0][key(1) + ".status"] = ["submitted", "draft", "submitted", "submitted"]
    who = recs[0][key(1) + ".users"][1]
    (conv, *_) = load_human_annotations(write(tmp_path, recs))
    assert math.isnan(conv.sub_scores[conv.annotators.index(who)][1])
    assert conv.axis("CAC", who) == conv.sub_scores[conv.annotators.index(who)][2]  # CAC from c2 alone


def _broken(change):
    recs, _ = synthetic(n_patients=1, zeros=False)
    rec = recs[0]
    change(rec)
    return [rec]


@pytest.mark.parametrize("change,message", [
    (lambda r: r.pop(key(3) + ".users"), "needs 'criterion_3.responses.users'"),
    (lambda r: r[key(3) + ".users"].pop(), "needs 'criterion_3.responses.users'"),
    (lambda r: r.__setitem__(key(4) + ".users", ["a", "a", "b", "c"]), "names an annotator twice"),
    (lambda r: r[key(6)].__setitem__(0, 7), "holds 7; ratings are numbers 0-6"),
    (lambda r: r[key(6)].__setitem__(0, True), "holds True"),
    (lambda r: r.__setitem__(key(7), "4,4,4,4"), "must be a list"),
    (lambda r: r.__setitem__(key(8) + ".status", ["submitted"]), "one status per rating"),
    (lambda r: r.pop("model"), "no 'model'"),
    (lambda r: r.pop("member_attributes"), "no 'member_attributes'"),
    (lambda r: r.__setitem__("member_attributes", ["x"]), "must be an object"),
    (lambda r: r.__setitem__("messages", "Hi"), "'messages' must be a list"),
    (lambda r: [r.pop(k) for k in list(r) if k.startswith("criterion")], "no criterion_N.responses fields"),
])
def test_bad_lines_raise_with_their_location(tmp_path, change, message):
    with pytest.raises(RatingsError, match=message) as info:
        load_human_annotations(write(tmp_path, _broken(change)))
    assert "human_annotations.jsonl:1" in str(info.value)


def test_duplicate_ids_not_json_and_empty_files(tmp_path):
    recs, _ = synthetic(n_patients=1)
    recs[1]["id"] = recs[0]["id"]
    with pytest.raises(RatingsError, match=r":2: conversation id conv-0-0 appears twice"):
        load_human_annotations(write(tmp_path, recs))
    bad = tmp_path / "x.jsonl"
    bad.write_text("{oops\n")
    with pytest.raises(RatingsError, match="x.jsonl:1: not valid JSON"):
        load_human_annotations(bad)
    bad.write_text("\n")
    with pytest.raises(RatingsError, match="no annotated conversations"):
        load_human_annotations(bad)


def test_custom_axis_mapping_and_missing_sub_criteria():
    assert axis_scores_from_subcriteria({1: 2.0, 2: 4.0, 11: 6.0}, {"ALL": (1, 2, 11)}) == {"ALL": 4.0}
    assert math.isnan(axis_scores_from_subcriteria({1: math.nan}, {"X": (1,)})["X"])


def test_too_few_annotators_for_the_mean_of_the_others(tmp_path):
    recs, _ = synthetic(n_patients=2, zeros=False)
    for r in recs:
        for c in CRITS:
            keep = [i for i, u in enumerate(r[key(c) + ".users"]) if u in ANNOTATORS[:2]]
            r[key(c)] = [r[key(c)][i] for i in keep]
            r[key(c) + ".users"] = [r[key(c) + ".users"][i] for i in keep]
            r[key(c) + ".status"] = ["submitted"] * len(keep)
    convs = load_human_annotations(write(tmp_path, recs))
    with pytest.raises(RatingsError, match="at least 3 annotators"):
        annotator_agreement(convs)


def _exact_kendall_b(x, y):
    """Kendall tau-b from exact comparisons of rationals (Kendall 1945): (C - D) / sqrt((n0 - n1)(n0 - n2))."""
    conc = disc = tie_x = tie_y = pairs = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        pairs += 1
        dx, dy = (x[i] > x[j]) - (x[i] < x[j]), (y[i] > y[j]) - (y[i] < y[j])
        tie_x += dx == 0
        tie_y += dy == 0
        conc += dx * dy > 0
        disc += dx * dy < 0
    return (conc - disc) / math.sqrt((pairs - tie_x) * (pairs - tie_y))


def _exact_mipsa(x, y, patients, systems):
    """Equation (1), sign tie policy, on rationals: per patient the share of system pairs whose
    signs agree; averaged as a Fraction."""
    shares = []
    for p in dict.fromkeys(patients):
        idx = sorted((i for i in range(len(x)) if patients[i] == p), key=lambda i: systems[i])
        pairs = list(itertools.combinations(idx, 2))
        sign = lambda v: (v > 0) - (v < 0)  # noqa: E731
        agree = sum(sign(x[i] - x[j]) == sign(y[i] - y[j]) for i, j in pairs)
        shares.append(Fraction(agree, len(pairs)))
    return sum(shares, Fraction(0)) / len(shares)


@pytest.mark.parametrize("axis", [None, "CAC", "ASCQ"])
def test_vs_the_others_equals_exact_rational_arithmetic(tmp_path, axis):
    """The mean of the other annotators compared exactly: sub-criteria are integers, so every
    axis value, interaction mean and mean of the others is a rational computed here with
    Fractions; ties among the averages (e.g. 7/3 + 10/3 = 8/3 + 9/3) must count as ties."""
    recs, truth = synthetic(n_patients=40, seed=11, zeros=False)
    convs = load_human_annotations(write(tmp_path, recs))

    def exact_axis(scores, ax):
        vals = [Fraction(scores[c]) for c in AXES[ax]]
        return sum(vals, Fraction(0)) / len(vals)

    def exact_score(scores):
        if axis is not None:
            return exact_axis(scores, axis)
        return sum((exact_axis(scores, ax) for ax in AXES), Fraction(0)) / len(AXES)

    m = [[exact_score(truth[c.conversation_id][2][a]) for a in ANNOTATORS] for c in convs]
    patients = [truth[c.conversation_id][1] for c in convs]
    systems = [c.system for c in convs]
    res = annotator_agreement(convs, axis)
    float_ties_differ = 0
    for i in range(4):
        own = [row[i] for row in m]
        others = [sum((row[j] for j in range(4) if j != i), Fraction(0)) / 3 for row in m]
        assert res.mipsa_vs_others[i] == pytest.approx(float(_exact_mipsa(own, others, patients, systems)), abs=1e-15)
        assert res.kendall_vs_others[i] == pytest.approx(_exact_kendall_b(own, others), abs=1e-14)
        rounded = np.delete(np.array(m, dtype=float), i, axis=1).mean(axis=1)
        float_ties_differ += sum(
            (others[a] == others[b]) != (rounded[a] == rounded[b]) for a, b in itertools.combinations(range(len(m)), 2))
    if axis is None:
        assert float_ties_differ > 0  # the data holds averages that floating-point means would not tie
