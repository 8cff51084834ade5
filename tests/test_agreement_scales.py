"""assertions.agreement normalises each side on its own scale (seed 001: scores mapped to [0, 1]).

Expectations are computed here from the formulas (seed 001 eqs. 2 and 5), not with the
project's statistics code.
"""

from __future__ import annotations

import numpy as np
import pytest

from pytest_judgerel import Ratings
from pytest_judgerel.gates.reliability import agreement, assert_agreement
from pytest_judgerel.errors import ReliabilityError


def _icc_a1(x: np.ndarray) -> float:
    """ICC(A,1), seed 001 eq. (2), from a two-way ANOVA written out here."""
    n, k = x.shape
    grand = x.mean()
    ms_i = k * ((x.mean(axis=1) - grand) ** 2).sum() / (n - 1)
    ms_r = n * ((x.mean(axis=0) - grand) ** 2).sum() / (k - 1)
    resid = x - x.mean(axis=1, keepdims=True) - x.mean(axis=0, keepdims=True) + grand
    ms_e = (resid ** 2).sum() / ((n - 1) * (k - 1))
    return (ms_i - ms_e) / (ms_i + (k - 1) * ms_e + k * (ms_r - ms_e) / n)


@pytest.fixture
def panel():
    rng = np.random.default_rng(7)
    truth = rng.uniform(0.5, 4.5, 40)
    human = np.clip(np.round(truth[:, None] + rng.normal(0, 0.5, (40, 3))), 0, 5)
    ids = [f"i{i}" for i in range(40)]
    return Ratings.from_array(human, item_ids=ids, scale="0-5"), ids


def test_judge_on_0_10_at_twice_the_human_mean_agrees_perfectly(panel):
    human, ids = panel
    judge = Ratings.from_array(2 * human.item_means()[:, None], item_ids=ids, rater_ids=["j"], scale="0-10")
    res = agreement(judge, human)
    assert res.nmae == pytest.approx(0.0, abs=1e-12)
    assert res.icc.value == pytest.approx(1.0, abs=1e-12)
    assert (res.judge_scale.name, res.human_scale.name) == ("0-10", "0-5")
    assert res.scale.low == 0 and res.scale.high == 1 and "0-10" in res.scale.name and "0-5" in res.scale.name


def test_rounded_0_10_judge_matches_the_hand_computed_normalised_statistics(panel):
    human, ids = panel
    j = np.round(2 * human.item_means())  # a judge that answers on the integer 0-10 grid
    judge = Ratings.from_array(j[:, None], item_ids=ids, rater_ids=["j"], scale="0-10")
    hu, ju = human.values.mean(axis=1) / 5, j / 10
    res = agreement(judge, human)
    assert res.nmae == pytest.approx(np.abs(ju - hu).mean(), rel=1e-12)
    assert res.icc.value == pytest.approx(_icc_a1(np.column_stack([hu, ju])), rel=1e-12)
    assert res.nmae < 0.05 and res.icc.value > 0.95
    # the old, raw comparison on one range would have reported a large disagreement
    raw_nmae = np.abs(j - human.values.mean(axis=1)).mean() / 10
    assert raw_nmae > 0.15
    worst_item, worst = res.worst_items(1)[0]
    assert worst == pytest.approx(np.abs(ju - hu).max(), rel=1e-12) and worst_item in ids


def test_same_scale_results_are_the_eq5_values(panel):
    human, ids = panel
    rng = np.random.default_rng(3)
    j = np.clip(human.item_means() + rng.normal(0, 0.7, 40), 0, 5)
    judge = Ratings.from_array(j[:, None], item_ids=ids, rater_ids=["j"], scale="0-5")
    res = agreement(judge, human)
    assert res.scale.name == "0-5"
    assert res.nmae == pytest.approx(np.abs(j - human.values.mean(axis=1)).mean() / 5, rel=1e-12)
    assert res.icc.value == pytest.approx(_icc_a1(np.column_stack([human.values.mean(axis=1), j])), rel=1e-9)


def test_scale_argument_fills_a_side_without_one_and_refuses_to_override(panel):
    human, ids = panel
    j = 2 * human.item_means()
    res = agreement(list(j), Ratings.from_array(human.values, scale=None), scale="0-10")
    assert res.nmae == pytest.approx(np.abs(j / 10 - human.values.mean(axis=1) / 10).mean(), rel=1e-12)
    judge = Ratings.from_array(j[:, None], item_ids=ids, rater_ids=["j"], scale="0-10")
    with pytest.raises(ReliabilityError, match="conflicts with the human ratings' own scale 0-5"):
        agreement(judge, human, scale="0-10")
    with pytest.raises(ReliabilityError, match="pass scale="):
        agreement(list(j), human.values)


def test_assert_agreement_passes_across_scales_and_names_both(panel):
    human, ids = panel
    judge = Ratings.from_array(2 * human.item_means()[:, None], item_ids=ids, rater_ids=["j"], scale="0-10")
    assert assert_agreement(judge, human, min_icc=0.9, max_nmae=0.05).icc.value > 0.99
    bad = Ratings.from_array(np.full((40, 1), 10.0), item_ids=ids, rater_ids=["j"], scale="0-10")
    with pytest.raises(AssertionError, match=r"judge 0-10, human 0-5"):
        assert_agreement(bad, human, max_nmae=0.05)


def test_groups_use_each_sides_scale_too(panel):
    human, ids = panel
    groups = {"benchmark": ["a" if i < 20 else "b" for i in range(40)]}
    human = Ratings.from_array(human.values, item_ids=ids, scale="0-5", item_groups=groups)
    judge = Ratings.from_array(2 * human.item_means()[:, None], item_ids=ids, rater_ids=["j"], scale="0-10")
    res = agreement(judge, human, by="benchmark")
    assert set(res.groups) == {"a", "b"}
    assert all(g.nmae == pytest.approx(0.0, abs=1e-12) for g in res.groups.values())
