"""The pairwise benchmark grades its operating-characteristic goal on fresh data sets of the worst few
cells (benchmarks/bench_pairwise.py: the worst of many noisy gaps is biased upwards), and its gap's
standard error is the paired difference's."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the project root: benchmarks is not installed

import benchmarks.bench_pairwise as bench  # noqa: E402

DESIGN = bench.Design(60, 1, 0.1, 0.55, 5.0, 0.05)


def _cell(design: int, truth: int, p_fix: float, p_seq: float, reps: int = 200) -> bench.SeqCell:
    discordant = round(abs(p_seq - p_fix) * reps)
    return bench.SeqCell(design, truth, p_fix, p_seq, 0.5, 0, discordant, reps)


def test_the_gap_standard_error_is_the_paired_differences() -> None:
    cell = bench.SeqCell(0, 0, 0.50, 0.47, 0.5, 0, 10, 200)  # 10 discordant of 200, gap 0.03
    assert bench._gap_se(cell) == pytest.approx(math.sqrt((10 / 200 - 0.03 ** 2) / 200))
    one_way = bench.SeqCell(0, 0, 0.50, 0.47, 0.5, 0, 6, 200)  # every discordant set on one side
    assert bench._gap_se(one_way) == pytest.approx(math.sqrt((0.03 - 0.03 ** 2) / 200))


def test_the_fresh_gaps_of_the_worst_cells_are_graded(monkeypatch: pytest.MonkeyPatch) -> None:
    cells = [_cell(0, 0, 0.20, 0.16), _cell(0, 1, 0.50, 0.48), _cell(1, 2, 0.70, 0.695), _cell(1, 3, 0.9, 0.875)]
    fresh = {(0, 0): 0.012, (0, 1): 0.005, (1, 3): 0.031, (1, 2): 0.5}
    asked = []

    def measure(d: bench.Design, i: int, j: int, reps: int, rng: np.random.Generator) -> bench.SeqCell:
        asked.append((i, j, reps))
        return _cell(i, j, 0.5, 0.5 - fresh[(i, j)], reps)

    monkeypatch.setattr(bench, "seq_cell", measure)
    ok, line = bench._fresh_gap(cells, [DESIGN, DESIGN], 1000, seed=1)
    assert sorted(asked) == [(0, 0, 1000), (0, 1, 1000), (1, 3, 1000)]  # the 3 worst, not the 0.005 one
    assert ok is False and line.startswith("0.031 on 1000 fresh data sets")
    assert "0.040 -> 0.012" in line and "0.025 -> 0.031" in line

    fresh[(1, 3)] = 0.010
    asked.clear()
    ok, line = bench._fresh_gap(cells, [DESIGN, DESIGN], 1000, seed=1)
    assert ok is True and line.startswith("0.012 on 1000 fresh data sets")


def test_a_fresh_cell_is_measured_on_its_own_data_sets() -> None:
    rng = np.random.default_rng(5)
    cell = bench.seq_cell(DESIGN, 0, 3, 12, rng)
    assert cell.reps == 12 and 0.0 <= cell.p_fix <= 1.0 and 0.0 < cell.share <= 1.0
    assert cell.discordant >= round(cell.gap * cell.reps)
