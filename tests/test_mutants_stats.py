"""Statistics (TOST, verdict stability): tests written for the bugs of
``tools/mutation/held_out_mutants.py`` that the earlier tests let through (docs/benchmarks.md)."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_judgerel.stats.bias import equivalence_test


# ---------------------------------------------------------------- TOST
@pytest.mark.parametrize("two_sided", [True, False])
def test_bootstrap_resamples_without_spread_count_against_equivalence(two_sided):
    """T05: a resample whose differences are all equal counted *for* rejection.  Nine zeros and one
    0.05: (9/10)^10 = 35% of resamples are all zeros, so the bootstrap part of the robust test
    cannot reject below that share (the issue's all-zero samples were declared equivalent)."""
    d = [0.0] * 9 + [0.05]
    share_constant = 0.9 ** 10
    result = equivalence_test(d, margin=0.2, two_sided=two_sided)
    assert result.p_upper >= share_constant - 0.05 and not result.equivalent
    if two_sided:
        assert result.p_lower is not None and result.p_lower >= share_constant - 0.05
    # the skew-corrected t alone rejects: the bootstrap is what keeps the verdict honest here
    assert equivalence_test(d, margin=0.2, two_sided=two_sided, method="hall").equivalent


# ---------------------------------------------------------------- the predictive bootstrap's stages
def _rows_with_spread(m: np.ndarray) -> float:
    return float((np.ptp(m, axis=1) > 1e-9).mean())


def _distinct_items(m: np.ndarray) -> float:
    return len(np.unique(np.round(m.mean(axis=1)))) / m.shape[0]


def test_the_first_predictive_stage_draws_repeats_from_the_pooled_deviations():
    """Q03: the first stage drew each item's repeats from its own deviations (documented: pooled,
    the one-way model's residual bootstrap).  39 items without spread and one with a lot: drawn
    from the pool, the large deviations land on many items at each stage (most replicates have
    over 20% of items with spread); drawn per item, they stay on the one item and its few
    neighbours of the second stage (4% of replicates)."""
    from pytest_judgerel.stats.stability import verdict_stability

    rows = np.tile(np.arange(40.0)[:, None], (1, 4))
    rows[0] = [0.0, 10.0, 20.0, 30.0]
    result = verdict_stability(_rows_with_spread, rows, 0.2, "min", resample="repeats", n_boot=400, seed=1,
                               predictive=True)
    assert result.p_pass > 0.5, result


@pytest.mark.parametrize("resample, predictive, two_item_stages", [
    ("items", False, False), ("items", True, True), ("repeats", True, False),
    ("items+repeats", False, False), ("items+repeats", True, True)])
def test_items_are_resampled_at_every_stage_of_their_scheme(resample, predictive, two_item_stages):
    """Q04: ``items+repeats`` kept the items in its first stage.  200 items, each its own constant
    level: one bootstrap draw of the items keeps about 63% distinct items, a draw of a draw about
    47%, and resampling repeats only keeps them all."""
    from pytest_judgerel.stats.stability import verdict_stability

    data = np.tile(np.arange(200.0)[:, None], (1, 3))
    result = verdict_stability(_distinct_items, data, 0.55, "max", resample=resample, n_boot=200, seed=1,
                               predictive=predictive)
    assert result.p_pass == (1.0 if two_item_stages else 0.0)


# ---------------------------------------------------------------- batch 2's survivors
@pytest.mark.parametrize("predictive", [False, True])
def test_repeats_in_keeps_the_other_matrices_columns_as_observed(predictive):
    """Q07: ``repeats_in`` ignored: a human panel's raters (the second matrix) were resampled as
    if they were the judge's repeats.  With ``resample="repeats"`` and ``repeats_in=(0,)`` the
    items stay and only the judge's columns are drawn again, so a statistic of the humans alone
    never changes (p_pass exactly 1); drawn as repeats, the raters' mean crosses the threshold
    in many replicates."""
    from pytest_judgerel.stats.stability import verdict_stability

    rng = np.random.default_rng(3)
    judge = rng.normal(0.0, 1.0, (30, 4))
    humans = np.tile([0.0, 0.0, 10.0], (30, 1))  # one rater of three far from the others

    def humans_mean(judge_matrix: np.ndarray, human_matrix: np.ndarray) -> float:
        return float(np.mean(human_matrix))

    kept = verdict_stability(humans_mean, (judge, humans), 3.0, "min", resample="repeats", n_boot=200, seed=2,
                             repeats_in=(0,), predictive=predictive)
    assert kept.observed == pytest.approx(10 / 3) and kept.p_pass == 1.0, kept
    drawn = verdict_stability(humans_mean, (judge, humans), 3.0, "min", resample="repeats", n_boot=200, seed=2,
                              predictive=predictive)
    assert drawn.p_pass < 0.9, drawn  # the default: every matrix with columns is a set of repeats


# ---------------------------------------------------------------- batch 3's survivors: a mean gate's bounds
def _exact_bounds(x: np.ndarray, confidence: float) -> dict[str, float]:
    """Each bound of ``mean_gate_stability`` computed independently with scipy: Student's t interval,
    the Wilson score interval (scipy's binomtest, Wilson 1927) and the exact two-sided sign test."""
    from scipy import stats as st

    mean, n = float(x.mean()), x.size
    low, high = st.t.interval(confidence, n - 1, loc=mean, scale=st.sem(x))
    out = {"mean": mean, "abs_mean": abs(mean), "t_low": low, "t_high": high, "abs_t": max(abs(low), abs(high))}
    if set(np.unique(x)) <= {0.0, 1.0}:  # a share of 0/1 values
        wilson = st.binomtest(int(x.sum()), n).proportion_ci(confidence, method="wilson")
        out.update(wilson_low=wilson.low, wilson_high=wilson.high)
    return out


@pytest.mark.parametrize("kind", ["t_low", "t_high", "abs_t", "mean", "abs_mean", "wilson_low", "wilson_high"])
@pytest.mark.parametrize("direction", ["min", "max"])
def test_a_mean_gates_verdict_is_its_bound_against_the_threshold(kind, direction):
    """Q09: the p_pass of a gate on a mean's lower t bound tested the upper bound.  The verdict on
    the data itself (``passed``) flips exactly at the bound computed independently, for every bound
    and both directions, at the 0.90 confidence given (not the default 0.95)."""
    from pytest_judgerel.gates.stability import mean_gate_stability

    rng = np.random.default_rng(4)
    x = (rng.uniform(size=25) < 0.35).astype(float) if kind.startswith("wilson") else rng.normal(-0.1, 0.3, 25)
    bound = _exact_bounds(x, 0.90)[kind]
    eps = 1e-7
    inside, outside = (bound - eps, bound + eps) if direction == "min" else (bound + eps, bound - eps)
    passes = mean_gate_stability(x, inside, direction, kind, 0.90, name="bound")
    fails = mean_gate_stability(x, outside, direction, kind, 0.90, name="bound")
    assert passes.passed and passes.observed == 1.0, (kind, bound)
    assert not fails.passed and fails.observed == 0.0, (kind, bound)


def test_the_lower_t_bounds_p_pass_is_below_the_means_and_the_upper_bounds():
    """Q09 through p_pass itself: at a threshold equal to the mean, a rerun's mean passes about half
    the time, its lower t bound (at or below its mean) rarely and its upper bound mostly."""
    from pytest_judgerel.gates.stability import mean_gate_stability

    x = np.random.default_rng(8).normal(0.5, 0.3, 40)
    p = {kind: mean_gate_stability(x, float(x.mean()), "min", kind, 0.95).p_pass for kind in ("t_low", "mean", "t_high")}
    assert p["t_low"] < 0.2 and 0.3 < p["mean"] < 0.7 and p["t_high"] > 0.8, p


@pytest.mark.parametrize("first, second", [(14, 4), (4, 14), (9, 9), (0, 0)])
def test_a_sign_gate_is_the_exact_two_sided_sign_test(first, second):
    """``sign_p``: the exact two-sided sign test of the +1 against the -1 entries (ties, 0, left
    out; no informative entry: p = 1), as scipy's binomtest computes it."""
    from scipy import stats as st

    from pytest_judgerel.gates.stability import mean_gate_stability

    x = np.array([1.0] * first + [-1.0] * second + [0.0] * 5)
    p = 1.0 if first + second == 0 else st.binomtest(first, first + second, 0.5).pvalue
    assert mean_gate_stability(x, p - 1e-9, "min", "sign_p").passed
    if p < 1.0:
        assert not mean_gate_stability(x, p + 1e-9, "min", "sign_p").passed


# ---------------------------------------------------------------- verdict_stability's verdict and record (broadened)
def _mean_of_all(x: np.ndarray) -> float:
    return float(np.mean(x))


@pytest.mark.parametrize("direction", ["min", "max"])
def test_a_statistic_exactly_on_its_threshold_passes_either_way(direction):
    """``>=`` for min and ``<=`` for max: the observed verdict at the threshold is a pass."""
    from pytest_judgerel.stats.stability import verdict_stability

    x = np.array([[0.25, 0.75], [0.5, 0.5], [0.0, 1.0], [0.5, 0.5]])  # mean exactly 0.5
    result = verdict_stability(_mean_of_all, x, 0.5, direction, n_boot=50, seed=1)
    assert result.observed == 0.5 and result.passed is True
    assert verdict_stability(_mean_of_all, x, 0.5 + (1e-9 if direction == "min" else -1e-9), direction,
                             n_boot=50, seed=1).passed is False


def test_the_record_of_a_verdict_names_its_statistic_and_reads_a_result_objects_value():
    from types import SimpleNamespace

    from pytest_judgerel.stats.stability import verdict_stability

    x = np.arange(20.0).reshape(10, 2)
    named = verdict_stability(_mean_of_all, x, 5.0, n_boot=40, seed=3)
    assert named.statistic == "_mean_of_all" and named.observed == 9.5
    anonymous = verdict_stability(lambda m: SimpleNamespace(value=float(m.max())), x, 5.0, n_boot=40, seed=3)
    assert anonymous.statistic == "" and anonymous.observed == 19.0 and anonymous.p_pass == 1.0
    assert named.mc_error == pytest.approx(np.sqrt(named.p_pass * (1 - named.p_pass) / 40), abs=1e-15)
    assert str(named) == (f"p_pass = {named.p_pass:.3f}{' (unstable)' if named.unstable else ''}: _mean_of_all >= 5 on "
                          "40 items resamples (seed 3); observed 9.5 passes")


def test_the_text_of_a_one_way_and_a_max_verdict():
    from pytest_judgerel.stats.stability import VerdictStability

    one_way = VerdictStability(p_pass=0.5, observed=0.61234, passed=False, threshold=0.7, direction="min", n_boot=800,
                               seed=0, resample="repeats", statistic="ICC(A,1)", predictive=True, model="one-way")
    assert str(one_way) == ("p_pass = 0.500 (unstable): ICC(A,1) >= 0.7 on 800 simulated same-items reruns (one-way "
                            "model, seed 0); observed 0.6123 fails")
    capped = VerdictStability(p_pass=1.0, observed=0.1, passed=True, threshold=0.2, direction="max", n_boot=100,
                              seed=None, resample="items", predictive=True, rough_reason="small")
    assert str(capped) == ("p_pass = 1.000 (rough): statistic <= 0.2 on 100 predictive items resamples (seed None); "
                           "observed 0.1 passes")
    assert capped.to_dict()["rough"] is True and capped.to_dict()["rough_reason"] == "small"


@pytest.mark.parametrize("n_items, rough", [(39, True), (40, False)])
def test_p_pass_over_resampled_repeats_is_rough_below_forty_items(n_items, rough):
    from pytest_judgerel.stats.stability import MIN_ITEMS_OVER_REPEATS, verdict_stability

    assert MIN_ITEMS_OVER_REPEATS == 40
    x = np.random.default_rng(2).normal(0, 1, (n_items, 3)) + np.arange(n_items)[:, None] / 7
    result = verdict_stability(_mean_of_all, x, 0.0, resample="repeats", n_boot=20, seed=0, predictive=True)
    assert result.rough is rough
    if rough:
        assert result.rough_reason.startswith(f"{n_items} items (< 40) with resampled repeats")
    assert not verdict_stability(_mean_of_all, x, 0.0, resample="repeats", n_boot=20, seed=0).rough  # not predictive


@pytest.mark.parametrize("kwargs, message", [
    ({"direction": "above"}, "direction must be 'min' (statistic >= threshold passes) or 'max', got 'above'"),
    ({"threshold": float("inf")}, "threshold must be a finite number, got inf"),
    ({"threshold": True}, "threshold must be a finite number, got True"),
    ({"resample": "raters"}, "resample must be one of ('items', 'repeats', 'items+repeats'), got 'raters'"),
    ({"n_boot": 0}, "n_boot must be a positive integer, got 0"),
    ({"n_boot": True}, "n_boot must be a positive integer, got True"),
    ({"nan_policy": "drop"}, "nan_policy must be 'raise' or 'omit', got 'drop'"),
    ({"recentre": True}, "recentre=True recentres the predictive draws: it needs predictive=True"),
    ({"model": "two-way"}, "model must be one of ('bootstrap', 'one-way'), got 'two-way'"),
    ({"model": "one-way", "predictive": True}, "model='one-way' simulates a rerun over repeats"),
    ({"data": np.zeros((1, 3))}, "resampling needs at least 2 items, got 1"),
    ({"data": (np.zeros((4, 2)), np.zeros((5, 2)))}, "matrices resampled together need the same items, got [4, 5] rows"),
    ({"data": ()}, "data is an empty tuple"),
])
def test_verdict_stability_refuses_what_it_cannot_resample(kwargs, message):
    from pytest_judgerel.errors import ReliabilityError
    from pytest_judgerel.stats.stability import verdict_stability

    args = {"data": np.arange(12.0).reshape(6, 2), "threshold": 1.0, "n_boot": 10}
    args.update(kwargs)
    data, threshold = args.pop("data"), args.pop("threshold")
    with pytest.raises(ReliabilityError) as info:
        verdict_stability(_mean_of_all, data, threshold, **args)
    assert str(info.value).startswith(message), str(info.value)


def test_items_with_a_missing_rating_are_omitted_or_refused():
    from pytest_judgerel.errors import ReliabilityError
    from pytest_judgerel.stats.stability import verdict_stability

    x = np.array([[1.0, 2.0], [np.nan, 3.0], [5.0, 6.0], [7.0, 8.0]])
    kept = verdict_stability(_mean_of_all, x, 0.0, nan_policy="omit", n_boot=10)
    assert kept.observed == pytest.approx(29 / 6)
    with pytest.raises(ReliabilityError, match=r"undefined on the data itself \(nan\)"):  # passed through: NaN
        verdict_stability(_mean_of_all, x, 0.0, n_boot=10)

    def vec(stack):
        return stack.mean(axis=(-2, -1))

    with pytest.raises(ReliabilityError, match=r"^1 item\(s\) have missing ratings; pass nan_policy='omit'$"):
        verdict_stability(vec, x, 0.0, n_boot=10, vectorized=True)


# ---------------------------------------------------------------- the gates' stability helpers
def test_attach_stability_without_a_verdict_records_p_pass_none_only():
    from pytest_judgerel.gates.stability import attach_stability

    rec: dict = {}
    attach_stability(rec, None)
    assert rec == {"p_pass": None}


def test_an_icc_gate_on_one_column_has_no_p_pass_and_repeats_plan_needs_a_single_form():
    from pytest_judgerel.gates.stability import icc_gate_stability, repeats_plan
    from pytest_judgerel.stats import icc

    assert icc_gate_stability(np.arange(10.0)[:, None], "A,1", "estimate", 0.95, 0.5, False) is None
    x = np.random.default_rng(1).normal(0, 1, (30, 1)) + np.random.default_rng(2).normal(0, 1, (30, 3))
    single, average = icc(x, form="A,1"), icc(x, form="A,k")
    assert repeats_plan(average, 0.8) is None
    assert repeats_plan(single, 0.0) is None and repeats_plan(single, 1.0) is None
    plan = repeats_plan(single, 0.8)
    assert plan is not None and plan.repeats >= 1


@pytest.mark.parametrize("min_icc, max_nmae, name", [(0.5, None, "ICC(A,1) >= 0.5"), (None, 0.2, "nMAE <= 0.2"),
                                                     (0.5, 0.2, "ICC(A,1) >= 0.5 and nMAE <= 0.2")])
def test_an_agreement_gates_p_pass_names_its_conditions(min_icc, max_nmae, name):
    from pytest_judgerel.gates.stability import agreement_gate_stability

    rng = np.random.default_rng(5)
    human = rng.uniform(0, 1, 40)
    judge = np.clip(human + rng.normal(0, 0.05, 40), 0, 1)
    result = agreement_gate_stability(human, judge, min_icc, max_nmae, "estimate", 0.95)
    assert result.statistic == name and result.passed and result.p_pass > 0.95


def test_an_nmae_exactly_at_its_limit_passes_the_agreement_gates_verdict():
    from pytest_judgerel.gates.stability import agreement_gate_stability

    human = np.array([0.0, 0.5, 1.0, 0.25])
    judge = human + np.array([0.25, -0.25, -0.25, 0.25])  # nMAE exactly 0.25
    assert agreement_gate_stability(human, judge, None, 0.25, "estimate", 0.95).passed
    assert not agreement_gate_stability(human, judge, None, 0.2499, "estimate", 0.95).passed


def test_attach_stability_of_a_gate_over_repeats_records_both_reruns():
    from pytest_judgerel.gates.stability import GateStability, attach_stability
    from pytest_judgerel.stats.stability import VerdictStability

    same = VerdictStability(p_pass=0.97, observed=0.8, passed=True, threshold=0.7, direction="min", n_boot=1000,
                            seed=0, resample="repeats", statistic="ICC(A,1)", predictive=True, model="one-way")
    new = VerdictStability(p_pass=0.62, observed=0.8, passed=True, threshold=0.7, direction="min", n_boot=1000,
                           seed=0, resample="items+repeats", statistic="ICC(A,1)", predictive=True, model="one-way",
                           rough_reason="few items")
    rec: dict = {}
    attach_stability(rec, GateStability(same, new))
    assert rec["p_pass"] == 0.97 and rec["p_pass_new_items"] == 0.62
    st = rec["stability"]
    assert (st["p_pass"], st["unstable"], st["resample"], st["predicts"]) == (0.97, False, "repeats",
                                                                              "same items, new judge samples")
    assert (st["p_pass_new_items"], st["new_items_resample"], st["new_items_rough"]) == (0.62, "items+repeats", True)
    assert (st["model"], st["rough"], st["n_boot"], st["seed"], st["statistic"]) == ("one-way", False, 1000, 0,
                                                                                    "ICC(A,1)")
    plain: dict = {}
    attach_stability(plain, new)
    assert plain["p_pass"] == 0.62 and "p_pass_new_items" not in plain
    assert plain["stability"]["predicts"] == "new items, new judge samples" and plain["stability"]["unstable"] is True
