"""The sequential benchmark grades an "any design" calls goal where the estimating floor is within it,
on fresh data sets of the worst few, and bounds the other designs with an INFO line
(benchmarks/bench_sequential.py, docs/concepts.md)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the project root: benchmarks is not installed

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from benchmarks.bench_sequential import FRESH_TOP, calls_lines, worst_lines  # noqa: E402
from benchmarks.harness.sequential_designs import Cell, IccDesign  # noqa: E402


def _cell(index: int, share: float, floor: float, p_fixed: float = 0.99) -> Cell:
    design = IccDesign(index, 60, 6, 0.6, (1, 5), "homoscedastic", 0.0)
    return Cell(design, 0.7, 0.1, p_fixed, shares=[share, share], oracle=floor / 2, floor=floor)


def test_any_design_goal_is_graded_where_the_floor_is_within_it() -> None:
    cells = [_cell(0, 0.45, 0.40), _cell(1, 0.70, 0.58)]
    graded, bound = worst_lines("icc caps >= 6, 95% predictable", cells, 0.50)
    assert graded[0] == ("sequential_calls_worst[icc caps >= 6, 95% predictable, designs with estimating floor <= 0.5 "
                         "at every clear truth]")
    assert graded[3] is True and "0.450 of the fixed calls at icc#0" in graded[1]
    assert "(1 of 2 designs, 1 of 2 designs and truths)" in graded[1]
    assert bound[0] == "sequential_calls_bound[icc caps >= 6, 95% predictable, estimating floor > 0.5]"
    assert bound[3] is None and "worst 0.700 of the fixed calls at icc#1" in bound[1]
    assert "floor is 0.580-0.580" in bound[1] and "at most +0.120 against its estimating floor" in bound[1]


def test_a_graded_design_over_the_goal_fails() -> None:
    lines = worst_lines("icc caps >= 6, 95% predictable", [_cell(0, 0.66, 0.47), _cell(1, 0.70, 0.58)], 0.50)
    assert lines[0][3] is False and "0.660 of the fixed calls at icc#0" in lines[0][1]


def test_only_bounded_designs_give_no_graded_line_and_no_goal_gives_info() -> None:
    lines = worst_lines("x", [_cell(1, 0.70, 0.58)], 0.50)
    assert [line[0].split("[")[0] for line in lines] == ["sequential_calls_bound"]
    info = worst_lines("x", [_cell(0, 0.45, 0.40)], None)
    assert info[0][3] is None and info[0][2] == "-"


def test_a_design_with_a_truth_out_of_reach_is_not_graded_at_its_other_truths() -> None:
    """"At most the goal in any design" cannot hold for a design with a clear truth where no rule meets
    it, so that design's other truths are reported (INFO), not graded; a design reachable at every
    clear truth is graded."""
    reachable = _cell(0, 0.45, 0.40)
    near_miss, out_of_reach = _cell(1, 0.56, 0.45), _cell(1, 0.70, 0.58)
    out_of_reach.truth = 0.5  # the same design at another truth
    graded, other, bound = worst_lines("icc caps >= 6, 95% predictable", [reachable, near_miss, out_of_reach], 0.50)
    assert graded[3] is True and "at icc#0" in graded[1] and "(1 of 2 designs, 1 of 3 designs and truths)" in graded[1]
    assert other[0] == ("sequential_calls_worst[icc caps >= 6, 95% predictable, other truths of designs with a "
                        "estimating floor over 0.5]")
    assert other[3] is None and "0.560 of the fixed calls at icc#1" in other[1]
    assert bound[3] is None and "0.700 of the fixed calls at icc#1" in bound[1]
    alone = worst_lines("x", [near_miss], 0.50)  # the same truth in a design reachable everywhere: graded, fails
    assert alone[0][3] is False


def test_calls_lines_grade_the_mean_on_every_clear_design() -> None:
    cells = [_cell(0, 0.30, 0.20), _cell(1, 0.50, 0.58), _cell(2, 0.90, 0.9, p_fixed=0.5)]
    lines = calls_lines("icc caps >= 6", cells, 0.35, 0.50)
    mean = next(line for line in lines if line[0] == "sequential_calls_mean[icc caps >= 6]")
    assert "0.400 of the fixed calls over 2 clear designs" in mean[1] and mean[3] is False


def test_any_design_is_graded_on_fresh_data_sets_of_the_worst_few():
    """The worst designs are picked on the benchmark's data sets and graded on fresh ones: the largest
    fresh mean of the FRESH_TOP candidates, not the selected maximum (the winner's curse)."""
    cells = [_cell(0, 0.55, 0.45), _cell(1, 0.52, 0.45), _cell(2, 0.51, 0.45), _cell(3, 0.30, 0.30),
             _cell(4, 0.90, 0.60)]
    fresh = {0: [0.47, 0.47], 1: [0.49, 0.49], 2: [0.46, 0.46], 3: [0.99], 4: [0.99]}
    asked: list[int] = []

    def refresh(cell: Cell) -> list[float]:
        asked.append(cell.design.index)
        return fresh[cell.design.index]

    graded = worst_lines("icc caps >= 6, 95% predictable", cells, 0.50, refresh)[0]
    assert sorted(asked) == [0, 1, 2] and FRESH_TOP == 3  # the 3 worst within the floor, each once
    assert graded[3] is True and graded[1].startswith("0.490 of the fixed calls on fresh data sets (2 per truth) "
                                                      "at icc#1")
    assert "icc#0 truth 0.700 0.550 -> 0.470" in graded[1] and "icc#1 truth 0.700 0.520 -> 0.490" in graded[1]
    fresh[2] = [0.53]
    assert worst_lines("x", cells, 0.50, refresh)[0][3] is False  # a candidate over the goal on fresh data fails


def test_fresh_data_sets_are_new_draws_of_the_same_design_and_truth():
    """fresh_shares: the same cell's calls on data sets independent of its own (another derived seed),
    reproducible for a seed."""
    from benchmarks.harness.sequential_designs import RateDesign, fresh_shares, rate_cells

    design = RateDesign(0, 200, 0.7, 1.0, 1.0, "estimate")
    cell = rate_cells(design, 200, 5, plan=False)[-1]  # truth 0.8, clear
    again = fresh_shares(cell, 0, 200, 5)
    assert again == fresh_shares(cell, 0, 200, 5) and again != cell.shares
    assert abs(float(sum(again)) / 200 - float(sum(cell.shares)) / 200) < 0.05  # the same design and truth


def test_the_exact_pass_rate_lines_pass_on_drawn_designs_and_fail_on_an_undefined_figure(monkeypatch) -> None:
    import numpy as np

    import pytest_judgerel.stats.sequential_pass_rate as exact
    from benchmarks.bench_sequential import exact_rate_lines
    from benchmarks.harness.sequential_designs import draw_rate_designs

    designs = [d for d in draw_rate_designs(6, 2031) if d.n <= 120][:2]
    assert designs and all(ok for *_, ok in exact_rate_lines(designs))
    real = exact.pass_rate_operating

    def with_nan(stops, rates):
        op = real(stops, rates)
        op.reversed[3] = np.nan
        return op

    monkeypatch.setattr(exact, "pass_rate_operating", with_nan)
    lines = exact_rate_lines(designs)
    assert lines[0][3] is False and "inf" in lines[0][1]


def _rate_cell(design, truth: float, share: float) -> Cell:
    from scipy.stats import binom

    from pytest_judgerel.stats.sequential import pass_rate_cutoff

    cutoff = pass_rate_cutoff(design.n, min_rate=design.min_rate, calibration=design.calibration, use=design.use)
    return Cell(design, truth, 0.0, float(binom.sf(cutoff.count - 1, design.n, truth)), shares=[share], floor=0.1,
                oracle=0.05)


def test_the_mean_agnostic_bound_pools_each_designs_least_mean_by_its_clear_truths() -> None:
    """The line's figure is each design's least mean over its clear truths, weighted by how many it has,
    and a pooled bound over the goal says the goal cannot hold at the gate's looks."""
    from benchmarks.bench_sequential import agnostic_mean_lines
    from benchmarks.harness.pass_rate_agnostic_dual import least_calls_dual
    from benchmarks.harness.sequential_designs import RateDesign
    from pytest_judgerel.stats.sequential import pass_rate_schedule

    a, b = RateDesign(0, 60, 0.8, 1.0, 1.0, "estimate"), RateDesign(1, 90, 0.6, 1.0, 1.0, "estimate")
    cells = [_rate_cell(a, 0.65, 0.5), _rate_cell(a, 0.95, 0.5), _rate_cell(b, 0.45, 0.5), _rate_cell(a, 0.8, 1.0)]
    assert [c.clear for c in cells] == [True, True, True, False]
    [line] = agnostic_mean_lines("x", cells, 0.35)
    gate = []
    for design, truths in ((a, [0.65, 0.95]), (b, [0.45])):
        from pytest_judgerel.stats.sequential import pass_rate_cutoff

        count = pass_rate_cutoff(design.n, min_rate=design.min_rate, use=design.use,
                                 calibration=design.calibration).count
        gate.append(least_calls_dual(design.n, count, pass_rate_schedule(design.n).looks, truths,
                                     threshold_raw=design.min_rate, eps_fail=0.03, objective="mean").worst)
    pooled = (2 * gate[0] + gate[1]) / 3
    assert np.isfinite(pooled) and 0 < pooled < 1  # a NaN would format alike on both sides
    assert f"spends less than {pooled:.4f} on average over these 3 clear designs and truths" in line[1]
    assert line[3] is None
    assert line[2].endswith("cannot hold at the gate's looks for a rule that keeps its bounds") == (pooled > 0.35)
    [high] = agnostic_mean_lines("x", cells, 0.2)
    assert high[2].endswith("cannot hold at the gate's looks for a rule that keeps its bounds") == (pooled > 0.2)


def test_the_agnostic_worst_line_names_the_graded_design_with_the_most_calls_and_its_bounds() -> None:
    from benchmarks.bench_sequential import agnostic_lines
    from benchmarks.harness.pass_rate_agnostic_dual import least_calls_dual
    from benchmarks.harness.sequential_designs import RateDesign
    from pytest_judgerel.stats.sequential import pass_rate_cutoff, pass_rate_schedule

    a, b = RateDesign(0, 60, 0.8, 1.0, 1.0, "estimate"), RateDesign(1, 90, 0.6, 1.0, 1.0, "estimate")
    out_of_reach = _rate_cell(b, 0.45, 0.5)
    out_of_reach.floor = 0.9  # a design where the goal cannot hold is not graded, so not named
    cells = [_rate_cell(a, 0.65, 0.5), _rate_cell(a, 0.95, 0.5), out_of_reach]
    [line] = agnostic_lines("x", cells, 0.75, top=3)
    count = pass_rate_cutoff(60, min_rate=0.8, use="estimate", calibration=a.calibration).count
    at_looks = least_calls_dual(60, count, pass_rate_schedule(60).looks, [0.65, 0.95], threshold_raw=0.8).worst
    every = least_calls_dual(60, count, tuple(range(1, 61)), [0.65, 0.95], threshold_raw=0.8).worst
    assert line[1].startswith(a.label()) and f"spends less than {at_looks:.3f}" in line[1]
    assert f"{every:.3f} with a look after every item" in line[1] and every <= at_looks + 1e-6
    assert line[3] is None and line[2] == "<= 0.75" + ("" if every <= 0.75 else ": cannot hold here, whatever the looks")


def test_an_icc_designs_p_fixed_adds_sets_of_its_own_and_leaves_the_data_sets_as_they_were() -> None:
    """The first 400 sets come from the cell's stream (where the data sets follow), the rest from a
    stream of their own: more sets sharpen P(fixed) without changing a single data set."""
    from benchmarks.harness.sequential_designs import IccGenerator, _icc_p_fixed, icc_fixed_passes

    design = IccDesign(3, 24, 4, 0.55, (1, 5), "homoscedastic", 0.0)
    gen = IccGenerator(design)
    rho = 0.5
    old, new = np.random.default_rng(42), np.random.default_rng(42)
    first = icc_fixed_passes(gen.scores(rho, old, design.n, design.cap, 400), design.threshold)
    p = _icc_p_fixed(gen, rho, new, np.random.default_rng(7), 1000)
    own = np.random.default_rng(7)
    second = icc_fixed_passes(gen.scores(rho, own, design.n, design.cap, 400), design.threshold)
    third = icc_fixed_passes(gen.scores(rho, own, design.n, design.cap, 200), design.threshold)
    assert 0.0 < p < 1.0
    assert p == (int(first.sum()) + int(second.sum()) + int(third.sum())) / 1000
    # the cell's stream is where it would be after the old 400 sets: its next data set is the same
    assert np.array_equal(gen.scores(rho, old, design.n, design.cap), gen.scores(rho, new, design.n, design.cap))


def test_the_pass_rate_any_design_line_grades_the_exact_shares_not_the_data_sets() -> None:
    """Where the rule's calls are computed exactly (the pass rate), the line grades them: no data set
    is drawn again and the simulated mean does not decide."""
    from benchmarks.harness.sequential_designs import RateDesign

    a, b = RateDesign(0, 300, 0.7, 1.0, 1.0, "estimate"), RateDesign(1, 300, 0.6, 1.0, 1.0, "estimate")
    low, high = _rate_cell(a, 0.8, 0.60), _rate_cell(b, 0.7, 0.30)  # simulated shares
    low.exact_share, high.exact_share = 0.40, 0.44

    def refresh(cell: Cell) -> list[float]:
        raise AssertionError("exact shares need no fresh data sets")

    [graded] = worst_lines("pass rate >= 150 items, 95% predictable", [low, high], 0.45, refresh)
    assert graded[3] is True and graded[1].startswith("0.440 of the fixed calls (exact) at rate#1")
    high.exact_share = 0.451
    assert worst_lines("x", [low, high], 0.45, refresh)[0][3] is False


def test_a_design_no_one_rule_can_meet_is_reported_not_graded() -> None:
    """A pass-rate design whose least worst calls over its clear truths, for any rule that does not know
    the truth (``Cell.agnostic``, a look after every item), is over the goal gets an INFO line; the goal
    is graded on the others, and a design whose bound is within the goal is graded as before.  The bound
    belongs to one predictability level's truths: the 99% line does not use the 95% one."""
    from benchmarks.harness.sequential_designs import RateDesign

    a, b = RateDesign(0, 300, 0.7, 1.0, 1.0, "estimate"), RateDesign(1, 476, 0.6, 1.0, 1.0, "estimate")
    ok, over = _rate_cell(a, 0.8, 0.4), _rate_cell(b, 0.7, 0.4)
    ok.exact_share, over.exact_share = 0.40, 0.466
    ok.agnostic, over.agnostic = {0.95: 0.38}, {0.95: 0.4511}
    graded, other, info = worst_lines("x", [ok, over], 0.45)
    assert graded[3] is True and "at rate#0" in graded[1] and "(1 of 2 designs" in graded[1]
    assert other[3] is None and "0.466 of the fixed calls (exact) at rate#1" in other[1]
    assert info[0] == "sequential_calls_agnostic_over[x, 0.45]" and info[3] is None
    assert "least worst 0.4511-0.4511" in info[1] and "the rule's worst there 0.4660" in info[1]
    assert worst_lines("x", [ok, over], 0.45, level=0.99)[0][3] is False  # the bound of fewer truths is not known
    over.agnostic = {0.95: 0.449}  # one rule could meet it: the design is graded, and the rule fails it
    assert worst_lines("x", [ok, over], 0.45)[0][3] is False


def test_the_simulated_gate_is_checked_against_its_exact_calls() -> None:
    from benchmarks.bench_sequential import simulated_vs_exact_lines
    from benchmarks.harness.sequential_designs import RateDesign, rate_cells

    cells = rate_cells(RateDesign(0, 120, 0.7, 1.0, 1.0, "estimate"), 300, 5, plan=False)
    assert all(c.exact_share is not None and 0 < c.exact_share <= 1 for c in cells)
    [line] = simulated_vs_exact_lines("pass rate", cells)
    assert line[3] is True and f"over {len(cells)} designs and truths" in line[1]
    cells[1].exact_share += 0.15  # the gate spends other than computed
    assert simulated_vs_exact_lines("pass rate", cells)[0][3] is False
    same = _rate_cell(cells[0].design, 0.9, 0.2)
    same.shares, same.exact_share = [0.2] * 300, 0.201  # every data set stopped at one look, a rare stop elsewhere
    assert simulated_vs_exact_lines("x", [same])[0][3] is True
    same.exact_share = 0.25  # more than one run in 300 could move the mean
    assert simulated_vs_exact_lines("x", [same])[0][3] is False


def test_the_truth_agnostic_bound_is_computed_where_a_design_can_decide_the_line() -> None:
    """agnostic_bounds: per predictability level, on the designs whose rule spends more than the goal less a
    margin at such a truth, the least worst of one rule with a look after every item over those truths."""
    from benchmarks.bench_sequential import agnostic_bounds
    from benchmarks.harness.pass_rate_agnostic_dual import least_calls_dual
    from benchmarks.harness.sequential_designs import RateDesign
    from pytest_judgerel.stats.sequential import pass_rate_cutoff

    a = RateDesign(0, 60, 0.8, 1.0, 1.0, "estimate")
    cells = [_rate_cell(a, 0.65, 0.5), _rate_cell(a, 0.68, 0.5), _rate_cell(a, 0.95, 0.5)]
    cells[0].exact_share, cells[1].exact_share, cells[2].exact_share = 0.74, 0.50, 0.30
    assert all(c.clear for c in cells)
    assert [c.p_fixed >= 0.99 or c.p_fixed <= 0.01 for c in cells] == [True, False, True]
    count = pass_rate_cutoff(60, min_rate=0.8, use="estimate", calibration=a.calibration).count
    every = tuple(range(1, 61))
    agnostic_bounds(cells, 0.75)
    at_95 = least_calls_dual(60, count, every, [0.65, 0.68, 0.95], threshold_raw=0.8).worst
    at_99 = least_calls_dual(60, count, every, [0.65, 0.95], threshold_raw=0.8).worst
    assert 0 < at_99 <= at_95 < 1
    assert cells[0].agnostic == {0.95: pytest.approx(at_95), 0.99: pytest.approx(at_99)}
    assert cells[1].agnostic == {0.95: pytest.approx(at_95)}  # not 99% predictable
    far = [_rate_cell(a, 0.65, 0.5)]
    far[0].exact_share = 0.72  # within the goal by more than the margin (0.02): no bound needed
    agnostic_bounds(far, 0.75)
    assert far[0].agnostic == {}
