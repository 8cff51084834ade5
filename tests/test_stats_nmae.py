"""nMAE (seed 001, Li et al. 2026, eqs. 4-5) on scales that do not start at 0, values worked by hand.

Every nMAE vector elsewhere uses a 0-based scale, where dividing by the scale's maximum and
dividing by its range R = high - low agree; these cases tell them apart.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from pytest_judgerel.errors import ReliabilityError
from pytest_judgerel.scales import Scale
from pytest_judgerel.stats import nmae


def test_one_to_five_scale_divides_by_the_range_four():
    # |4-5| + |2-2| + |1-3| + |5-4| = 4 over 4 items: MAE 1.0, nMAE = 1.0 / (5 - 1) = 0.25 (0.2 with /5)
    res = nmae([4, 2, 1, 5], [5, 2, 3, 4], "1-5")
    assert res.value == pytest.approx(0.25, rel=1e-12)
    assert res.per_item == pytest.approx((0.25, 0.0, 0.5, 0.25), rel=1e-12)
    assert (res.scale_low, res.scale_high) == (1.0, 5.0)
    assert res.mae == pytest.approx(1.0, rel=1e-12)  # eq. (4): nMAE * R


def test_negative_scale_and_panel_means():
    # scale -2..2 (R = 4); judge panel means 1.5 and -2, human 0 and -1: errors 1.5 and 1 -> 1.25 / 4
    res = nmae([[1, 2], [-2, -2]], [[0, 0, 0], [-1, -1, -1]], Scale(-2, 2))
    assert res.value == pytest.approx(1.25 / 4, rel=1e-12)
    assert res.judge_means == (1.5, -2.0) and res.human_means == (0.0, -1.0)
    assert res.mae == pytest.approx(1.25, rel=1e-12)


def test_scores_on_the_bounds_are_inside_and_just_past_them_outside():
    assert nmae([1, 5], [5, 1], "1-5").value == pytest.approx(1.0)  # the largest possible error
    assert nmae([1 - 5e-10, 5 + 5e-10], [1, 5], "1-5").value == pytest.approx(0.0, abs=1e-9)  # rounding tolerance
    with pytest.raises(ReliabilityError, match=r"judge scores outside scale 1-5: e\.g\. 0\.5"):
        nmae([0.5, 3], [1, 3], "1-5")
    with pytest.raises(ReliabilityError, match=r"human scores outside scale 1-5: e\.g\. 6\.0"):
        nmae([1, 3], [6, 3], "1-5")
    with pytest.raises(ReliabilityError, match="judge scores outside"):
        nmae([1 - 1e-8, 3], [1, 3], "1-5")


def test_items_above_is_strict_worst_first_and_defaults_to_one_tenth():
    # errors on 1-5 (R = 4): 0.1 exactly, 0.25, 0.5, 0.125
    res = nmae([1.4, 2, 1, 1.5], [1, 3, 3, 1], "1-5", item_ids=["a", "b", "c", "d"])
    assert res.per_item == pytest.approx((0.1, 0.25, 0.5, 0.125), rel=1e-12)
    assert [i for i, _ in res.items_above()] == ["c", "b", "d"]  # 0.1 is not above 0.1
    assert [i for i, _ in res.items_above(0.2)] == ["c", "b"]
    d = res.to_dict()
    assert d["scale"] == [1.0, 5.0] and d["n"] == 4 and d["n_omitted"] == 0
    assert [w["item"] for w in d["worst_items"]] == ["c", "b", "d"]
    assert json.loads(json.dumps(d)) == d
    assert str(res) == "nMAE = 0.2437 (MAE 0.975 on scale 1-5); n = 4 items; 3 item(s) with nMAE > 0.1"


def test_to_dict_lists_at_most_ten_worst_items():
    judge = [5.0] * 12
    human = [1.0 + i / 10 for i in range(12)]  # errors (4 - i/10)/4, all > 0.1, worst first = item 0
    d = nmae(judge, human, "1-5").to_dict()
    assert [w["item"] for w in d["worst_items"]] == list(range(10))


def test_item_ids_are_checked_and_kept_for_rated_items_only():
    with pytest.raises(ReliabilityError, match="3 item ids for 2 items"):
        nmae([1, 2], [1, 2], "1-5", item_ids=["a", "b", "c"])
    res = nmae([1, math.nan, 3], [2, 2, 3], "1-5", item_ids=["a", "b", "c"])
    assert res.item_ids == ("a", "c") and res.n == 2 and res.n_omitted == 1
    assert res.value == pytest.approx((1 / 4 + 0) / 2)


def test_item_ids_come_from_the_human_side_when_the_judge_has_none():
    class Human:
        item_ids = ("x", "y")

        def to_matrix(self):
            return np.array([[2.0], [4.0]])

    res = nmae([1.0, 4.0], Human(), "1-5")
    assert res.item_ids == ("x", "y") and res.items_above(0.0) == [("x", pytest.approx(0.25))]
