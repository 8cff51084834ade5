"""The sequential benchmark grades an "any design" calls goal where the estimating floor is within it
and bounds the other designs with an INFO line (benchmarks/bench_sequential.py, docs/concepts.md)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the project root: benchmarks is not installed

from benchmarks.bench_sequential import calls_lines, worst_lines  # noqa: E402
from benchmarks.harness.sequential_designs import Cell, IccDesign  # noqa: E402


def _cell(index: int, share: float, floor: float, p_fixed: float = 0.99) -> Cell:
    design = IccDesign(index, 60, 6, 0.6, (1, 5), "homoscedastic", 0.0)
    return Cell(design, 0.7, 0.1, p_fixed, shares=[share, share], oracle=floor / 2, floor=floor)


def test_any_design_goal_is_graded_where_the_floor_is_within_it() -> None:
    cells = [_cell(0, 0.45, 0.40), _cell(1, 0.70, 0.58)]
    graded, bound = worst_lines("icc caps >= 6, 95% predictable", cells, 0.50)
    assert graded[0] == "sequential_calls_worst[icc caps >= 6, 95% predictable, estimating floor <= 0.5]"
    assert graded[3] is True and "0.450 of the fixed calls at icc#0" in graded[1] and "(1 of 2 " in graded[1]
    assert bound[0] == "sequential_calls_bound[icc caps >= 6, 95% predictable, estimating floor > 0.5]"
    assert bound[3] is None and "worst 0.700 of the fixed calls at icc#1" in bound[1]
    assert "floor is 0.580-0.580" in bound[1] and "at most +0.120 against its floor" in bound[1]


def test_a_graded_design_over_the_goal_fails() -> None:
    lines = worst_lines("icc caps >= 6, 95% predictable", [_cell(0, 0.66, 0.47), _cell(1, 0.70, 0.58)], 0.50)
    assert lines[0][3] is False and "0.660 of the fixed calls at icc#0" in lines[0][1]


def test_only_bounded_designs_give_no_graded_line_and_no_goal_gives_info() -> None:
    lines = worst_lines("x", [_cell(1, 0.70, 0.58)], 0.50)
    assert [line[0].split("[")[0] for line in lines] == ["sequential_calls_bound"]
    info = worst_lines("x", [_cell(0, 0.45, 0.40)], None)
    assert info[0][3] is None and info[0][2] == "-"


def test_calls_lines_grade_the_mean_on_every_clear_design() -> None:
    cells = [_cell(0, 0.30, 0.20), _cell(1, 0.50, 0.58), _cell(2, 0.90, 0.9, p_fixed=0.5)]
    lines = calls_lines("icc caps >= 6", cells, 0.35, 0.50)
    mean = next(line for line in lines if line[0] == "sequential_calls_mean[icc caps >= 6]")
    assert "0.400 of the fixed calls over 2 clear designs" in mean[1] and mean[3] is False
