"""The benchmarks' winner's-curse guard ranks on the first measurement and returns the fresh one
(benchmarks/harness/fresh.py)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the project root: benchmarks is not installed

from benchmarks.harness.fresh import remeasure_worst  # noqa: E402


def test_the_highest_rows_are_measured_again_in_rank_order() -> None:
    rows = [("a", 0.2), ("b", 0.9), ("c", 0.5), ("d", 0.7)]
    asked = []

    def measure(rank: int, row: tuple[str, float]) -> str:
        asked.append((rank, row[0]))
        return row[0].upper()

    pairs = remeasure_worst(rows, lambda row: row[1], measure, top=3)
    assert pairs == [(("b", 0.9), "B"), (("d", 0.7), "D"), (("c", 0.5), "C")]
    assert asked == [(0, "b"), (1, "d"), (2, "c")]  # each fresh measurement gets its own rank (its seed)


def test_fewer_rows_than_candidates_are_all_measured() -> None:
    assert remeasure_worst([1.0], float, lambda rank, row: row * 2) == [(1.0, 2.0)]
    assert remeasure_worst([], float, lambda rank, row: row) == []
