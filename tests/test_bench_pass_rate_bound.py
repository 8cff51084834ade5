"""The exact calls bound of the sequential pass-rate benchmark (benchmarks/harness/pass_rate_bound.py):
its rule, run on simulated data, spends what the linear program says and keeps the promises it was
given; with no room for error it stops exactly when the fixed verdict is settled; and the
benchmark grades a design unless that bound is over the goal."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the project root: benchmarks is not installed

from benchmarks.bench_sequential import worst_lines  # noqa: E402
from benchmarks.harness.pass_rate_bound import least_calls_share, simulate_rule  # noqa: E402
from benchmarks.harness.sequential_designs import Cell, RateDesign, exact_bound  # noqa: E402
from pytest_judgerel.stats.sequential import PASS_RATE_EPS_PASS  # noqa: E402

N, CUTOFF, THRESHOLD = 60, 48, 0.8  # pass when 48 of 60 items pass (min_rate 0.8, a perfect judge)


def _settled_share(n_cap: int, cutoff: int, q: float) -> float:
    """E[items judged until the count reaches ``cutoff`` or can no longer reach it] / n_cap, by
    forward recursion over the count (independent of the linear program)."""
    alive = np.zeros(n_cap + 1)
    alive[0] = 1.0
    expected = 0.0
    for n in range(n_cap):
        counts = np.arange(n_cap + 1)
        settled = (counts >= cutoff) | (counts + (n_cap - n) < cutoff)
        expected += n * alive[settled].sum()
        alive[settled] = 0.0
        alive = alive * (1 - q) + np.concatenate([[0.0], alive[:-1]]) * q
    return (expected + n_cap * alive.sum()) / n_cap


def test_as_the_room_for_error_closes_the_rule_stops_when_the_verdict_is_settled() -> None:
    """The rule that stops only once the fixed verdict is settled keeps every promise, so it bounds the
    least calls from above; as the allowances shrink the bound rises to it."""
    settled = _settled_share(N, CUTOFF, 0.7)
    shares = [least_calls_share(N, CUTOFF, 0.7, threshold_raw=THRESHOLD, eps_pass=e, oc=e, agree_clear=1 - e,
                                agree_at=1 - e, method="lp").share for e in (1e-4, 1e-6, 1e-8)]
    assert shares == sorted(shares) and shares[-1] <= settled + 1e-9
    assert settled - shares[-1] < 0.002 and settled - shares[0] > 0.01


def test_the_bounds_rule_spends_what_it_says_and_keeps_its_promises() -> None:
    bound = least_calls_share(N, CUTOFF, 0.9, threshold_raw=THRESHOLD, method="lp")
    assert bound.stop_pass is not None and 0.0 < bound.share < _settled_share(N, CUTOFF, 0.9)  # the promises' room is used
    rng = np.random.default_rng(11)
    runs = 40_000
    at = simulate_rule(bound, 0.9, runs, rng)
    assert at["share"] == pytest.approx(bound.share, abs=0.01)
    for q in (0.74, 0.78, 0.8, 0.82, 0.86, 0.9):
        got = simulate_rule(bound, q, runs, rng)
        p_fixed = float(binom.sf(CUTOFF - 1, N, q))
        slack = 4 * np.sqrt(PASS_RATE_EPS_PASS / runs) + 0.002  # Monte Carlo, and the promises on a grid of rates
        assert got["reversed"] <= PASS_RATE_EPS_PASS + slack, (q, got)
        assert abs(got["oc"]) <= 0.03 + 2 * slack, (q, got)
        if min(p_fixed, 1 - p_fixed) <= 0.05:
            assert got["agreement"] >= 0.98 - 2 * slack, (q, got)
        if q == THRESHOLD:
            assert got["agreement"] >= 0.95 - 2 * slack, (q, got)


@pytest.mark.parametrize(("n_cap", "cutoff", "raw", "threshold"), [(60, 48, 0.9, 0.8), (60, 48, 0.7, 0.8),
                                                                   (120, 60, 0.6, 0.5), (154, 142, 0.97, 0.92)])
def test_the_dual_bound_is_the_linear_programs_optimum_from_below(n_cap: int, cutoff: int, raw: float,
                                                                 threshold: float) -> None:
    """The fast Lagrangian bound never exceeds the program's optimum and closes on it (its ``gap``)."""
    exact = least_calls_share(n_cap, cutoff, raw, threshold_raw=threshold, method="lp").share
    dual = least_calls_share(n_cap, cutoff, raw, threshold_raw=threshold)
    assert dual.share <= exact + 1e-6 and exact - dual.share <= dual.gap + 1e-5 and dual.gap <= 2e-4


def test_each_promise_costs_calls() -> None:
    """Loosening a promise never raises the bound, and on this design each of them binds."""
    base = least_calls_share(N, CUTOFF, 0.9, threshold_raw=THRESHOLD).share
    for loose in ({"eps_pass": 0.05}, {"agree_clear": 0.9}, {"oc": 0.1, "agree_clear": 0.9, "agree_at": 0.8}):
        assert least_calls_share(N, CUTOFF, 0.9, threshold_raw=THRESHOLD, **loose).share < base - 0.005, loose


def test_bad_designs_are_refused_and_a_settled_gate_costs_nothing() -> None:
    with pytest.raises(ValueError, match="cutoff"):
        least_calls_share(N, N + 1, 0.9, threshold_raw=THRESHOLD)
    with pytest.raises(ValueError, match="raw"):
        least_calls_share(N, CUTOFF, 1.0, threshold_raw=THRESHOLD)
    with pytest.raises(ValueError, match="method"):
        least_calls_share(N, CUTOFF, 0.9, threshold_raw=THRESHOLD, method="simplex")
    for cutoff, raw in ((150, 0.999), (1, 0.01)):  # every item must pass / one pass is enough: still bounded
        extreme = least_calls_share(150, cutoff, raw, threshold_raw=raw / 2 if cutoff == 1 else 0.995)
        assert 0.0 <= extreme.share <= 1.0
    never = Cell(RateDesign(0, 50, 0.999, 1.0, 1.0, "ci_low"), 0.9, -0.099, 0.0)  # the gate cannot pass on 50
    assert exact_bound(never, 0.03, 0.98, 0.95) == 0.0


def _rate_cell(index: int, share: float, floor: float, exact: float | None) -> Cell:
    return Cell(RateDesign(index, 200, 0.9, 1.0, 1.0, "estimate"), 0.95, 0.05, 0.99, shares=[share, share],
                oracle=floor / 2, floor=floor, exact=exact)


def test_a_pass_rate_design_is_graded_unless_its_exact_bound_is_over_the_goal() -> None:
    """The exact bound decides, not the estimating floor: a design whose floor is under the goal but
    whose bound is over it is bounded; one whose floor is over but bound under is graded."""
    cells = [_rate_cell(0, 0.48, 0.38, 0.47), _rate_cell(1, 0.44, 0.47, 0.43), _rate_cell(2, 0.30, 0.30, None)]
    graded, bounded = worst_lines("pass rate >= 150 items, 95% predictable", cells, 0.45)
    assert graded[0].endswith("exact bound <= 0.45 at every clear truth]") and graded[3] is True
    assert "0.440 of the fixed calls at rate#1" in graded[1] and "(2 of 3 designs, 2 of 3 " in graded[1]
    assert bounded[0].endswith("exact bound > 0.45]") and bounded[3] is None
    assert "rate#0" in bounded[1] and "no rule that keeps the promises on the design" in bounded[1]
    assert "at most +0.010 against its exact bound" in bounded[1]


def test_the_reversal_promise_holds_and_binds_without_the_agreement_ones() -> None:
    """With the operating characteristic and reversals promised but no agreement, the program's rule
    reverses at most eps_pass of the runs at every truth, and uses that room where the verdict is in
    doubt."""
    bound = least_calls_share(N, CUTOFF, 0.9, threshold_raw=THRESHOLD, agree_clear=0.0, agree_at=0.0, method="lp")
    rng = np.random.default_rng(5)
    runs = 40_000
    reversed_at = [simulate_rule(bound, q, runs, rng)["reversed"] for q in (0.76, 0.8, 0.82, 0.84, 0.88)]
    eps = PASS_RATE_EPS_PASS
    assert max(reversed_at) <= eps + 4 * np.sqrt(eps / runs) + 0.002 and max(reversed_at) >= 0.6 * eps


def test_every_count_likely_enough_is_a_state_of_the_program() -> None:
    """The live states are exactly the (items, count) whose fixed verdict is open and whose
    probability at the graded rate is at least ``mass_floor``."""
    for floor in (1e-10, 1e-4):
        bound = least_calls_share(N, CUTOFF, 0.9, threshold_raw=THRESHOLD, mass_floor=floor)
        expected = {(n, s) for n in range(N) for s in range(n + 1)
                    if CUTOFF - (N - n) <= s < CUTOFF and binom.pmf(s, n, 0.9) >= floor}
        assert {(int(n), int(s)) for n, s in bound.states} == expected


def test_a_cells_bound_is_taken_at_its_raw_rate_with_the_threshold_seen_through_the_judge() -> None:
    from pytest_judgerel.stats.sequential import pass_rate_cutoff

    design = RateDesign(3, 80, 0.7, 0.9, 0.85, "estimate")  # an imperfect judge: raw rates differ from truths
    cell = Cell(design, 0.8, 0.1, 0.99)
    cal = design.calibration
    cutoff = pass_rate_cutoff(80, min_rate=0.7, calibration=cal, use="estimate").count

    def raw(t: float) -> float:
        return cal.sensitivity * t + (1 - cal.specificity) * (1 - t)

    direct = least_calls_share(80, cutoff, raw(0.8), threshold_raw=raw(0.7), agree_clear=0.98, agree_at=0.95)
    assert exact_bound(cell, 0.03, 0.98, 0.95) == pytest.approx(direct.share, abs=1e-9)


def test_the_benchmark_computes_the_bound_where_it_can_decide_a_line() -> None:
    """exact_bounds: at every clear truth of a design with a clear truth measured near the goal or whose
    estimating floor is over it; not for designs comfortably under on both counts, nor for unclear truths."""
    from benchmarks.bench_sequential import exact_bounds

    def cell(index: int, share: float, floor: float, p_fixed: float = 0.99, truth: float = 0.9) -> Cell:
        return Cell(RateDesign(index, 60, 0.8, 1.0, 1.0, "estimate"), truth, truth - 0.8, p_fixed, shares=[share],
                    floor=floor)

    near, floor_over, under = cell(0, 0.42, 0.30), cell(1, 0.20, 0.50), cell(2, 0.30, 0.30)
    sibling, unclear = cell(0, 0.10, 0.10, truth=0.95), cell(0, 0.60, 0.60, 0.5, truth=0.8)
    exact_bounds([near, floor_over, under, sibling, unclear], 0.45)
    assert near.exact is not None and floor_over.exact is not None and near.exact == floor_over.exact
    assert sibling.exact is not None and sibling.exact < near.exact  # the design's other clear truth, further out
    assert under.exact is None and unclear.exact is None
