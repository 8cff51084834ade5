"""Opt-in: the loader, violations() and the human-human statistics on a real copy of the
MindEval release's data files.

Set ``MINDEVAL_RELEASE_DIR`` to a checkout of SWORDHealth/mind-eval (or to its ``data``
folder); the project does not ship those files (the release has no licence).  Skipped when
the variable is unset.  The expected numbers are those in docs/mindeval.md, which were
computed from the file by a separate script written without the project's code; the
paper's numbers are its Tables 3 and 13-17.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

from pytest_judgerel.mindeval.annotations import (
    annotator_agreement,
    annotator_ids,
    fewshot_examples,
    load_human_annotations,
)
from pytest_judgerel.mindeval.profiles import load_profiles, rule_set_of, violations

_ENV = "MINDEVAL_RELEASE_DIR"


def _data_dir() -> Path:
    root = os.environ.get(_ENV)
    if not root:
        pytest.skip(f"{_ENV} is not set (point it at a copy of the MindEval release to run this test)")
    for d in (Path(root) / "data", Path(root)):
        if (d / "human_annotations.jsonl").is_file():
            return d
    raise AssertionError(f"{_ENV}={root} has no human_annotations.jsonl (nor data/human_annotations.jsonl)")


@pytest.fixture(scope="module")
def data_dir() -> Path:
    return _data_dir()


@pytest.fixture(scope="module", params=["score", "not_applicable"])
def convs(request, data_dir):
    return request.param, load_human_annotations(data_dir / "human_annotations.jsonl", zero_means=request.param)


def test_human_annotations_load_with_patients_systems_and_annotators(convs):
    _, cs = convs
    assert len(cs) == 60
    systems = {c.system for c in cs}
    assert len(systems) == 3 and all(sum(c.system == s for c in cs) == 20 for s in systems)
    by_patient: dict[str, list[str]] = {}
    for c in cs:
        by_patient.setdefault(c.patient_id, []).append(c.system)
    assert len(by_patient) == 20 and all(sorted(v) == sorted(systems) for v in by_patient.values())
    assert len(annotator_ids(cs)) == 4 and all(len(c.annotators) == 4 for c in cs)
    assert all(len(c.messages) == 21 and c.messages[0]["role"] == "assistant" for c in cs)
    assert all(c.profile().name == c.patient["name"] for c in cs)


def test_release_profiles_load_and_satisfy_the_authors_rules(data_dir):
    profiles = load_profiles(data_dir / "profiles.jsonl")
    assert len(profiles) == 50
    assert all(rule_set_of(p) == ("authors",) for p in profiles)
    assert [violations(p) for p in profiles] == [[]] * 50
    fig4 = [p for p in profiles if p.name == "Dennis" and p.age == 47]  # the paper's Figure 4 patient
    assert len(fig4) == 1 and fig4[0].living_situation == "alone with a cat"


# the paper: Kendall tau of P_n against the mean of the other three (the "Avg. P" row) and
# MIPSA (the "Avg. P" column), Table 3 for the average and Tables 13-17 per axis
PAPER_VS_OTHERS = {
    None: ((0.3987, 0.1550, 0.3618, 0.3292), (0.6842, 0.5868, 0.6307, 0.6618)),
    "CAC": ((0.4495, 0.1331, 0.1250, 0.1880), (0.7259, 0.5995, 0.5557, 0.5447)),
    "EPC": ((0.2586, -0.0313, 0.1875, 0.2366), (0.6618, 0.5605, 0.7013, 0.7390)),
    "AR": ((0.2868, 0.1458, 0.1368, 0.3453), (0.6965, 0.5478, 0.6224, 0.6921)),
    "TRA": ((0.2752, 0.1102, 0.1118, 0.1382), (0.5618, 0.5917, 0.5351, 0.4531)),
    "ASCQ": ((0.4215, 0.1237, 0.1405, 0.2483), (0.7434, 0.6224, 0.5653, 0.5702)),
}
PAPER_PAIRS_AVG = {  # Table 3: (Kendall, MIPSA) of P_i and P_j
    (0, 1): (0.1556, 0.5693), (0, 2): (0.3854, 0.7623), (0, 3): (0.3690, 0.6706),
    (1, 2): (0.1324, 0.5303), (1, 3): (0.1178, 0.5833), (2, 3): (0.2619, 0.5693),
}
# ours, as recorded in docs/mindeval.md (P1..P4 matched to the annotator ids as described there).
# The rows for the average of the axes (None) use the exact average annotator; a floating-point mean
# puts 3 of their MIPSA cells 1/60 off and Kendall up to 0.0039.
OURS_VS_OTHERS = {
    "score": {
        None: ((0.4289, 0.1304, 0.3562, 0.3459), (0.7000, 0.5167, 0.6333, 0.6000)),
        "CAC": ((0.4058, 0.1076, 0.1069, 0.1399), (0.5500, 0.4167, 0.3667, 0.4333)),
        "EPC": ((0.2976, -0.0417, 0.1938, 0.2627), (0.5333, 0.4000, 0.5833, 0.5500)),
        "AR": ((0.2827, 0.0905, 0.1090, 0.3182), (0.5500, 0.3667, 0.4333, 0.5167)),
        "TRA": ((0.2913, 0.1449, 0.1314, 0.1719), (0.4500, 0.4833, 0.3833, 0.3667)),
        "ASCQ": ((0.3828, 0.1199, 0.1426, 0.2570), (0.5833, 0.4500, 0.3667, 0.4167)),
    },
    "not_applicable": {
        None: ((0.4190, 0.0990, 0.2868, 0.3438), (0.6833, 0.5167, 0.6333, 0.6333)),
        "CAC": ((0.4058, 0.1076, 0.1069, 0.1399), (0.5500, 0.4167, 0.3667, 0.4333)),
        "EPC": ((0.3339, -0.0127, 0.3335, 0.2938), (0.5000, 0.4500, 0.6833, 0.5667)),
        "AR": ((0.2827, 0.0905, 0.1090, 0.3182), (0.5500, 0.3667, 0.4333, 0.5167)),
        "TRA": ((0.2184, 0.1412, 0.0728, 0.1774), (0.4667, 0.4500, 0.4333, 0.4333)),
        "ASCQ": ((0.3828, 0.1199, 0.1426, 0.2570), (0.5833, 0.4500, 0.3667, 0.4167)),
    },
}
# largest |ours - paper| over the 6 pairs and 4 "vs the others" cells of each table
MAX_GAP = {  # axis: (Kendall 0 = score, Kendall 0 = n/a, MIPSA 0 = score, MIPSA 0 = n/a)
    None: (0.044, 0.115, 0.083, 0.070), "CAC": (0.066, 0.066, 0.261, 0.261),
    "EPC": (0.067, 0.146, 0.220, 0.172), "AR": (0.056, 0.056, 0.229, 0.229),
    "TRA": (0.035, 0.190, 0.206, 0.306), "ASCQ": (0.065, 0.065, 0.213, 0.213),
}


def _as_paper_order(res):
    """P1..P4: the annotators in the order (sorted ids) 2nd, 4th, 1st, 3rd, the permutation with
    the smallest total gap to Table 3 under both zero conventions (see the test below)."""
    return res.reordered([res.annotators[i] for i in (1, 3, 0, 2)])


def _gaps(res, axis):
    paper_k, paper_m = PAPER_VS_OTHERS[axis]
    k = [abs(res.kendall_vs_others[i] - paper_k[i]) for i in range(4)]
    m = [abs(res.mipsa_vs_others[i] - paper_m[i]) for i in range(4)]
    if axis is None:
        pairs = PAPER_PAIRS_AVG
    else:
        pairs = {}
    for (i, j), (pk, pm) in pairs.items():
        k.append(abs(res.kendall[j][i] - pk))
        m.append(abs(res.mipsa[i][j] - pm))
    return max(k), max(m)


@pytest.mark.parametrize("axis", [None, "CAC", "EPC", "AR", "TRA", "ASCQ"])
def test_human_human_statistics_equal_the_documented_numbers(convs, axis):
    zero, cs = convs
    res = _as_paper_order(annotator_agreement(cs, axis))
    assert res.n_patients == 20 and res.n_conversations == 60
    want_k, want_m = OURS_VS_OTHERS[zero][axis]
    assert res.kendall_vs_others == pytest.approx(want_k, abs=5e-5)
    assert res.mipsa_vs_others == pytest.approx(want_m, abs=5e-5)
    for i, j in itertools.permutations(range(4), 2):
        assert res.kendall[i][j] == pytest.approx(res.kendall[j][i], abs=1e-12)  # symmetric
    if axis is None:
        gap_k, gap_m = _gaps(res, axis)
        col = 0 if zero == "score" else 1
        assert gap_k == pytest.approx(MAX_GAP[None][col], abs=5e-4)
        assert gap_m == pytest.approx(MAX_GAP[None][2 + col], abs=5e-4)


def _total_gap(res):
    """Sum of |ours - paper| over every cell of Table 3, Kendall and MIPSA."""
    pk, pm = PAPER_VS_OTHERS[None]
    total = sum(abs(res.kendall_vs_others[i] - pk[i]) + abs(res.mipsa_vs_others[i] - pm[i]) for i in range(4))
    return total + sum(abs(res.kendall[j][i] - k) + abs(res.mipsa[i][j] - m) for (i, j), (k, m) in PAPER_PAIRS_AVG.items())


def test_the_annotator_order_is_the_best_fit_to_table_3(data_dir):
    orders = list(itertools.permutations(range(4)))
    for zero, kendall_only in (("score", 0.037), ("not_applicable", 0.101)):
        res = annotator_agreement(load_human_annotations(data_dir / "human_annotations.jsonl", zero_means=zero))
        as_p = {o: res.reordered([res.annotators[i] for i in o]) for o in orders}
        assert min(orders, key=lambda o: _total_gap(as_p[o])) == (1, 3, 0, 2)
        # fitted on the Kendall cells alone, P3 and P4 swap (the figures quoted in the issue)
        by_kendall = min(orders, key=lambda o: _gaps(as_p[o], None)[0])
        assert by_kendall == (1, 3, 2, 0) and _gaps(as_p[by_kendall], None)[0] == pytest.approx(kendall_only, abs=5e-4)


def test_zero_as_a_score_reproduces_the_release_few_shot_targets(data_dir):
    path = data_dir / "human_annotations.jsonl"
    as_score = [ex.scores["CAC"] for ex in fewshot_examples(load_human_annotations(path))]
    assert as_score == [3.75, 3.5, 4.375, 3.375, 3.75]  # the targets printed in the release's judge prompt
    as_na = [ex.scores for ex in fewshot_examples(load_human_annotations(path, zero_means="not_applicable"))]
    assert sum(s != t.scores for s, t in zip(as_na, fewshot_examples(load_human_annotations(path)))) == 4


def test_the_annotated_patients_pass_the_profile_rules(data_dir):
    """The 20 patients of the human-annotation file meet the rules (the goal rule applies to the
    authors' labels only: applied to the others it would reject 7 of them)."""
    convs = load_human_annotations(data_dir / "human_annotations.jsonl")
    patients = {c.patient_id: c.profile() for c in convs}
    assert len(patients) == 20
    assert {pid: violations(p) for pid, p in patients.items() if violations(p)} == {}
