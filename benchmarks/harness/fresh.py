"""Grading the worst of many noisy measurements without the winner's curse.

The largest of many noisy estimates is biased upwards: the cell that looks worst is often one whose
own data happened to run high.  The benchmarks therefore pick their candidates on one draw and grade
them on another: :func:`remeasure_worst` ranks the rows by their first measurement and measures the
few highest again, on data drawn independently of the ones that picked them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["remeasure_worst"]

Row = TypeVar("Row")
Fresh = TypeVar("Fresh")


def remeasure_worst(rows: Sequence[Row], score: Callable[[Row], float], measure: Callable[[int, Row], Fresh],
                    top: int = 3) -> list[tuple[Row, Fresh]]:
    """The ``top`` rows with the highest ``score`` (highest first), each paired with ``measure(rank,
    row)``: its measurement on fresh data (``rank`` from 0, for the fresh data's seed)."""
    ranked = sorted(rows, key=score, reverse=True)[:top]
    return [(row, measure(rank, row)) for rank, row in enumerate(ranked)]
