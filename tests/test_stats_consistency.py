"""Inter-scale consistency (seed 001 section 4.3, Table 1: all scales jointly and every pair)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pytest_judgerel.errors import ReliabilityError, ScaleError
from pytest_judgerel.scales import Scale
from pytest_judgerel.stats import icc, scale_consistency


def judge_scores(n=40, seed=0, drift_100=0.0):
    """One simulated judge: a latent quality in [0, 1] read out on three scales with noise."""
    rng = np.random.default_rng(seed)
    t = rng.uniform(0.1, 0.9, n)
    return {
        "0-5": np.clip(5 * t[:, None] + rng.normal(0, 0.3, (n, 3)), 0, 5),   # 3 repeats
        "0-10": np.clip(10 * t + rng.normal(0, 0.6, n), 0, 10),              # 1 run
        "0-100": np.clip(100 * (t[:, None] + drift_100) + rng.normal(0, 6, (n, 2)), 0, 100),  # 2 repeats
    }


def test_joint_and_pairwise_icc_equal_icc_on_the_normalised_item_means():
    r = judge_scores()
    res = scale_consistency(r)
    norm = np.column_stack([r["0-5"].mean(axis=1) / 5, r["0-10"] / 10, r["0-100"].mean(axis=1) / 100])
    assert np.allclose(res.normalized, norm, rtol=1e-12, atol=0)
    assert res.joint == icc(norm, "A,1")
    assert list(res.pairwise) == [("0-5", "0-10"), ("0-5", "0-100"), ("0-10", "0-100")]
    assert res.pairwise[("0-5", "0-100")] == icc(norm[:, [0, 2]], "A,1")
    assert res.n_items == 40 and res.scales == ("0-5", "0-10", "0-100") and res.form == "A,1"


def test_matrix_is_symmetric_with_unit_diagonal_and_min_pair_is_the_smallest():
    res = scale_consistency(judge_scores(seed=4))
    m = res.matrix
    assert m.shape == (3, 3) and np.allclose(m, m.T) and np.all(np.diag(m) == 1.0)
    (a, b), worst = res.min_pair
    assert worst.value == min(r.value for r in res.pairwise.values()) == m.min()
    assert res.pairwise[(a, b)] is worst


def test_exact_linear_rescaling_is_perfectly_consistent():
    t = np.linspace(0, 1, 11)
    res = scale_consistency({"0-5": 5 * t, "0-10": 10 * t, "0-100": 100 * t})
    for r in [res.joint, *res.pairwise.values()]:
        assert r.value == pytest.approx(1.0) and r.ci == pytest.approx((1.0, 1.0))


def test_a_scale_shifted_upwards_lowers_absolute_agreement_but_not_consistency():
    shifted = judge_scores(seed=2, drift_100=0.08)
    a = scale_consistency(shifted, form="A,1")
    c = scale_consistency(shifted, form="ICC(C,1)")
    assert c.form == "C,1"
    assert a.joint.value < c.joint.value
    assert a.min_pair[0] in {("0-5", "0-100"), ("0-10", "0-100")}


def test_text_dict_and_pairwise_off():
    res = scale_consistency(judge_scores(), pairwise=False)
    assert res.pairwise == {} and res.min_pair is None
    assert np.isnan(res.matrix[0, 1])
    full = scale_consistency(judge_scores())
    text = str(full)
    assert "0-5, 0-10, 0-100" in text and "0-5 vs 0-10" in text and "0-10 vs 0-100" in text
    d = json.loads(json.dumps(full.to_dict()))
    assert d["min_pair"]["value"] == pytest.approx(full.min_pair[1].value)
    assert set(d["pairwise"]) == {"0-5 vs 0-10", "0-5 vs 0-100", "0-10 vs 0-100"}


def test_explicit_scales_as_mapping_or_sequence():
    t = np.array([0.1, 0.5, 0.9, 0.3])
    data = {"coarse": 1 + 5 * t, "fine": 100 * t + np.array([1, -1, 0, 2])}
    by_map = scale_consistency(data, scales={"coarse": "1-6", "fine": Scale(0, 100)})
    by_seq = scale_consistency(data, scales=[(1, 6), "0-100"])
    assert by_map.joint == by_seq.joint
    with pytest.raises(ReliabilityError, match="no scale given"):
        scale_consistency(data, scales={"coarse": "1-6"})
    with pytest.raises(ReliabilityError, match="1 scales given for 2"):
        scale_consistency(data, scales=["1-6"])


class _Ratings:
    def __init__(self, ids, values):
        self.item_ids = tuple(ids)
        self._values = np.asarray(values, dtype=float)

    def to_matrix(self):
        return self._values.reshape(len(self.item_ids), -1)


def test_ratings_like_entries_are_aligned_by_item_ids():
    t = {"a": 0.2, "b": 0.9, "c": 0.5, "d": 0.4}
    five = _Ratings("abcd", [5 * t[i] for i in "abcd"])
    ten = _Ratings("dcba", [10 * t[i] + 0.1 for i in "dcba"])
    res = scale_consistency({"0-5": five, "0-10": ten})
    assert res.item_ids == tuple("abcd")
    assert np.allclose(res.normalized[:, 1], [t[i] + 0.01 for i in "abcd"])


def test_different_items_are_named_in_the_error():
    with pytest.raises(ReliabilityError, match=r"only in '0-5': \['d'\], only in '0-10': \['e'\]"):
        scale_consistency({"0-5": _Ratings("abcd", [1, 2, 3, 4]), "0-10": _Ratings("abce", [1, 2, 3, 4])})


@pytest.mark.parametrize(
    "data, message",
    [
        ({"0-5": [1, 2, 3]}, "at least 2 scales"),
        ({"0-5": [1, 2, 3], "0-10": [1, 2]}, "different numbers of items"),
        ({"0-5": [1, 2, 6], "0-10": [1, 2, 3]}, "outside 0-5"),
        ({"0-5": [[[1]], [[2]]], "0-10": [1, 2]}, "1-D .* or 2-D"),
        ({"0-5": [1, 2, np.nan], "0-10": [1, 2, 3]}, "missing"),
        ({"0-5": [2, 2, 2], "0-10": [4, 4, 4]}, "identical"),
    ],
)
def test_bad_input(data, message):
    with pytest.raises(ReliabilityError, match=message):
        scale_consistency(data)


def test_unknown_scale_name_needs_explicit_scales():
    with pytest.raises(ScaleError):
        scale_consistency({"coarse": [1, 2, 3], "fine": [1, 2, 3]})


def test_missing_repeats_are_averaged_and_omit_drops_empty_items():
    data = {"0-5": [[1, np.nan], [2, 3], [np.nan, np.nan], [5, 4], [0, 1]], "0-10": [2, 5, 7, 9, 1]}
    res = scale_consistency(data, nan_policy="omit")
    assert res.joint.n == 4 and res.joint.n_omitted == 1
    assert res.normalized[1, 0] == pytest.approx(2.5 / 5)


def test_project_ratings_carry_their_own_scale_and_item_ids():
    from pytest_judgerel.ratings import Ratings

    t = np.array([0.1, 0.4, 0.8, 0.6, 0.3])
    coarse = Ratings.from_array(np.column_stack([1 + 5 * t, 1 + 5 * t]), item_ids=list("abcde"), scale="1-6")
    fine = Ratings.from_array((100 * t)[::-1, None], item_ids=list("edcba"), scale="0-100")
    res = scale_consistency({"six-point": coarse, "percent": fine})
    assert res.item_ids == tuple("abcde")
    assert res.joint.value == pytest.approx(1.0)


# ------------------------------------------------------------------ contract details (mutation testing)
def test_scores_on_the_scale_bounds_pass_and_past_them_are_named_in_the_scales_units():
    on_bounds = {"0-1": [-1e-9, 0.5, 1 + 1e-9, 0.2], "0-10": [0.0, 5.0, 10.0, 3.0]}  # within rounding
    assert scale_consistency(on_bounds, scales=[Scale(0, 1, fractional=True), "0-10"]).n_items == 4
    with pytest.raises(ReliabilityError, match=r"^scores for scale '0-5' fall outside 0-5: e\.g\. -0\.5; "
                                               r"pass the scale actually used$"):
        scale_consistency({"0-5": [-0.5, 2, 3], "0-10": [1, 4, 6]})
    with pytest.raises(ReliabilityError, match=r"fall outside 0-10: e\.g\. 10\.5;"):
        scale_consistency({"0-5": [1, 2, 3], "0-10": [1, 4, 10.5]})


def test_a_badly_shaped_entry_is_named_by_its_scale():
    with pytest.raises(ReliabilityError, match=r"^ratings on scale '0-10' must be 1-D"):
        scale_consistency({"0-5": [1, 2], "0-10": [[[1]], [[2]]]})


def test_different_items_list_at_most_five_of_each_side():
    six, other = _Ratings("abcdefgh", range(8)), _Ratings("abmnopqr", range(8))
    with pytest.raises(ReliabilityError) as info:
        scale_consistency({"0-10": six, "0-5": other})
    msg = str(info.value)
    assert "only in '0-10': ['c', 'd', 'e', 'f', 'g'], only in '0-5': ['m', 'n', 'o', 'p', 'q']" in msg


def test_form_and_confidence_reach_the_joint_and_every_pairwise_icc():
    r = judge_scores(seed=2)
    res = scale_consistency(r, form="C,1", confidence=0.8)
    for one in (res.joint, *res.pairwise.values()):
        assert one.form == "C,1" and one.confidence == 0.8
    assert res.joint == icc(res.normalized, "C,1", confidence=0.8)
    assert scale_consistency(r).joint.form == "A,1"  # the default: absolute agreement


def test_text_and_dict_in_full():
    t = np.array([0.1, 0.5, 0.9, 0.3])
    res = scale_consistency({"0-5": 5 * t, "0-10": 10 * t + np.array([0.5, -0.5, 0.0, 0.2])})
    j, p = res.joint, res.pairwise[("0-5", "0-10")]
    assert str(res) == (f"inter-scale consistency, ICC(A,1) on 4 items (scores mapped to [0, 1])\n"
                        f"  0-5, 0-10: {j.value:.3f} [{j.ci_low:.3f}, {j.ci_high:.3f}] {j.band}\n"
                        f"  0-5 vs 0-10: {p.value:.3f} [{p.ci_low:.3f}, {p.ci_high:.3f}] {p.band}")
    d = res.to_dict()
    assert d == {"scales": ["0-5", "0-10"], "form": "A,1", "n_items": 4, "joint": j.to_dict(),
                 "pairwise": {"0-5 vs 0-10": p.to_dict()}, "min_pair": {"pair": ["0-5", "0-10"], "value": p.value},
                 "matrix": [[1.0, p.value], [p.value, 1.0]]}
    assert scale_consistency({"0-5": 5 * t, "0-10": 10 * t + 0.1}, pairwise=False).to_dict()["min_pair"] is None
