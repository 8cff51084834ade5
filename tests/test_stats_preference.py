"""Self-preference with an interval and a sign test, aligned on tasks (stats.preference)."""

import numpy as np
import pytest
from scipy import stats as sps

from pytest_judgerel.errors import ReliabilityError
from pytest_judgerel.stats import aligned_self_preference, self_preference_test
from pytest_judgerel.stats.ranking import self_preference


def test_hand_case_judge_lifts_its_own_model_on_every_task():
    # reference: own model 3 < other 4 on all 6 tasks (rank 2); judge: own 5 > other 4 (rank 1)
    ref = {"me": {t: 3 for t in range(6)}, "other": {t: 4 for t in range(6)}}
    jud = {"me": {t: 5 for t in range(6)}, "other": {t: 4 for t in range(6)}}
    res = self_preference_test(ref, jud, "me")
    assert res.mean_rank_change == 1.0 and res.ci == (1.0, 1.0)
    assert (res.n_higher, res.n_lower, res.n_equal) == (6, 0, 0)
    assert res.p_sign == pytest.approx(0.5 ** 6)  # one-sided sign test, all 6 tasks up
    assert res.result.rank_change == 1 and res.result.share_higher == 1.0


def test_per_task_changes_average_to_the_statistic_and_give_a_t_interval():
    rng = np.random.default_rng(3)
    systems = ["me", "b", "c", "d"]
    ref = {s: {t: float(rng.integers(1, 6)) for t in range(25)} for s in systems}
    jud = {s: {t: v + (1.5 if s == "me" else 0) + float(rng.normal(0, 1)) for t, v in ref[s].items()}
           for s in systems}
    res = self_preference_test(ref, jud, "me")
    full = self_preference({s: list(ref[s].values()) for s in systems},
                           {s: list(jud[s].values()) for s in systems}, "me")
    assert res.mean_rank_change == pytest.approx(full.mean_interaction_rank_change, abs=1e-12)
    assert res.result == full
    d = np.array(res.per_task)
    ci = sps.ttest_1samp(d, 0).confidence_interval(0.95)
    assert res.ci == pytest.approx((ci.low, ci.high), abs=1e-12)
    up, down = int((d > 0).sum()), int((d < 0).sum())
    assert res.p_sign == pytest.approx(sps.binomtest(up, up + down, 0.5, alternative="greater").pvalue)
    assert res.mean_rank_change > 0 and res.p_sign < 0.05


def test_alignment_keeps_tasks_scored_for_every_system_by_both():
    ref = {"me": {"t1": 1, "t2": 2, "t3": 3, "t4": 1}, "other": {"t1": 2, "t2": 1, "t3": None, "t4": 2}}
    jud = {"me": {"t1": 3, "t2": 2, "t3": 1, "t4": 3}, "other": {"t1": 1, "t2": float("nan"), "t3": 2, "t4": 1}}
    res = self_preference_test(ref, jud, "me")
    assert res.tasks == ("t1", "t4")  # t2: judge NaN for other; t3: reference None for other
    assert aligned_self_preference(ref, jud, "me").n_interactions == 2


def test_errors():
    ref = {"me": {1: 1.0, 2: 2.0}, "other": {1: 2.0, 2: 1.0}}
    with pytest.raises(ReliabilityError, match="different systems"):
        self_preference_test(ref, {"me": {1: 1.0}}, "me")
    with pytest.raises(ReliabilityError, match="own_system"):
        self_preference_test(ref, ref, "nobody")
    with pytest.raises(ReliabilityError, match="at least 2 tasks"):
        self_preference_test({"me": {1: 1.0}, "o": {1: 2.0}}, {"me": {1: 1.0}, "o": {1: 2.0}}, "me")
    with pytest.raises(ReliabilityError, match="no task"):
        self_preference_test({"me": {1: 1.0}, "o": {2: 2.0}}, {"me": {1: 1.0}, "o": {2: 2.0}}, "me")
    with pytest.raises(ReliabilityError, match="not a number"):
        self_preference_test({"me": {1: "x"}, "o": {1: 2.0}}, {"me": {1: 1.0}, "o": {1: 2.0}}, "me")
