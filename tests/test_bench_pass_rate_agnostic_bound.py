"""The truth-agnostic calls bound of the sequential pass-rate benchmark
(benchmarks/harness/pass_rate_agnostic_bound.py): it agrees with the independent per-truth bound where
the two programs coincide, and it behaves as a bound must when the rule is given less freedom."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the project root: benchmarks is not installed

from benchmarks.harness.pass_rate_agnostic_bound import least_worst_calls  # noqa: E402
from benchmarks.harness.pass_rate_agnostic_dual import least_calls_dual  # noqa: E402
from benchmarks.harness.pass_rate_bound import least_calls_share  # noqa: E402
from pytest_judgerel.stats.sequential_pass_rate import pass_rate_operating, pass_rate_stops  # noqa: E402
from pytest_judgerel.stats.sequential import PASS_RATE_EPS_FAIL, PASS_RATE_EPS_PASS, pass_rate_schedule  # noqa: E402

N, CUTOFF, THRESHOLD = 40, 32, 0.8  # pass when 32 of 40 items pass (min_rate 0.8, a perfect judge)
EVERY = tuple(range(1, N + 1))


@pytest.mark.parametrize("truth", [0.7, 0.9])
def test_with_one_truth_and_a_look_after_every_item_it_is_the_per_truth_bound(truth: float) -> None:
    """Two programs written apart (paths' shares carried by hypergeometric weights here; probability mass
    at the truth there), on the same question: they agree to within their grids' relaxations."""
    agnostic = least_worst_calls(N, CUTOFF, EVERY, [truth], threshold_raw=THRESHOLD).worst
    per_truth = least_calls_share(N, CUTOFF, truth, threshold_raw=THRESHOLD, method="lp").share
    assert np.isfinite(agnostic) and 0 < agnostic < 1
    assert abs(agnostic - per_truth) <= 0.01


def test_fewer_looks_or_more_truths_never_lower_the_bound() -> None:
    looks = pass_rate_schedule(N).looks
    every_one = least_worst_calls(N, CUTOFF, EVERY, [0.9], threshold_raw=THRESHOLD).worst
    schedule_one = least_worst_calls(N, CUTOFF, looks, [0.9], threshold_raw=THRESHOLD).worst
    schedule_two = least_worst_calls(N, CUTOFF, looks, [0.7, 0.9], threshold_raw=THRESHOLD)
    assert schedule_one >= every_one - 1e-6
    assert schedule_two.worst >= schedule_one - 1e-6
    assert schedule_two.worst == pytest.approx(max(schedule_two.shares), abs=1e-6)


def test_the_gates_rule_spends_at_least_the_bound_at_its_own_looks() -> None:
    """The calibrated rule keeps the promises the program imposes on this design, so it cannot spend
    less than the least any such rule spends at its worst truth."""
    looks = pass_rate_schedule(N).looks
    stops = pass_rate_stops(N, CUTOFF, looks, PASS_RATE_EPS_PASS, PASS_RATE_EPS_FAIL)
    rates = np.linspace(0.01, 0.99, 99)
    op = pass_rate_operating(stops, rates)
    clear = (op.p_fixed_pass >= 0.95) | (op.p_fixed_pass <= 0.05)
    assert op.reversed.max() <= PASS_RATE_EPS_PASS + 1e-4 and (op.reversed + op.lost)[clear].max() <= 0.02
    truths = [0.7, 0.95]
    rule = pass_rate_operating(stops, truths).calls_share.max()
    bound = least_worst_calls(N, CUTOFF, looks, truths, threshold_raw=THRESHOLD).worst
    assert bound <= rule + 1e-6


@pytest.mark.parametrize("truth", [0.65, 0.75])
def test_where_the_operating_characteristic_binds_the_two_programs_still_agree(truth: float) -> None:
    """With agreement relaxed to 0.9 the |OC| <= 0.03 promise is what limits the fail stops."""
    kw = dict(threshold_raw=THRESHOLD, agree_at=0.9, agree_clear=0.9)
    agnostic = least_worst_calls(N, CUTOFF, EVERY, [truth], **kw).worst
    per_truth = least_calls_share(N, CUTOFF, truth, method="lp", **kw).share
    assert abs(agnostic - per_truth) <= 0.005


# --------------------------------------------------------------------------- the Lagrangian bound
DUAL_CASES = [("worst", None, pass_rate_schedule(N).looks), ("mean", None, pass_rate_schedule(N).looks),
              ("worst", 0.03, EVERY), ("mean", 0.03, EVERY), ("worst", None, (10, 20, 22, 23, 30, 40))]


@pytest.mark.parametrize("objective, eps_fail, looks", DUAL_CASES)
def test_the_lagrangian_bound_is_the_programs_optimum(objective: str, eps_fail: float | None,
                                                       looks: tuple[int, ...]) -> None:
    """Weak duality makes it a lower bound; the cutting planes close the gap: it equals the program's
    optimum to 1e-5 on both objectives, both sets of promises and three look schedules."""
    truths = [0.7, 0.95]
    kw = dict(threshold_raw=THRESHOLD, eps_fail=eps_fail, objective=objective)
    dual = least_calls_dual(N, CUTOFF, looks, truths, **kw)
    program = least_worst_calls(N, CUTOFF, looks, truths, **kw)
    assert np.isfinite(dual.worst) and 0 < dual.worst < 1
    assert dual.worst <= program.worst + 1e-6
    assert dual.worst == pytest.approx(program.worst, abs=1e-5)


def test_the_lagrangian_bound_on_a_large_design_orders_as_a_bound_must() -> None:
    """Where the program does not solve (hundreds of items): more looks never raise the bound, the
    gate's tighter fail-stop promise never lowers it, and the gate's own rule spends at least it."""
    n, cutoff, threshold = 300, 240, 0.8
    looks = pass_rate_schedule(n).looks
    truths = [0.74, 0.86]
    kw = dict(threshold_raw=threshold)
    at_looks = least_calls_dual(n, cutoff, looks, truths, **kw).worst
    every = least_calls_dual(n, cutoff, tuple(range(1, n + 1)), truths, **kw).worst
    gate = least_calls_dual(n, cutoff, looks, truths, eps_fail=0.03, **kw).worst
    stops = pass_rate_stops(n, cutoff, looks, PASS_RATE_EPS_PASS, PASS_RATE_EPS_FAIL)
    rule = pass_rate_operating(stops, truths).calls_share.max()
    assert 0 < every <= at_looks + 1e-6
    assert gate >= at_looks - 1e-6
    assert gate <= rule + 1e-6
    mean = least_calls_dual(n, cutoff, looks, truths, objective="mean", **kw).worst
    assert mean <= at_looks + 1e-6


def test_the_lagrangian_bound_refuses_an_unknown_objective() -> None:
    with pytest.raises(ValueError, match="objective"):
        least_calls_dual(N, CUTOFF, EVERY, [0.9], threshold_raw=THRESHOLD, objective="median")
