"""The corrected pass rate's tail benchmark draws its settings from its stated domain and grades the
largest tail on fresh data sets (benchmarks/bench_pass_rate_tails.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the project root: benchmarks is not installed

import benchmarks.bench_pass_rate_tails as bench  # noqa: E402


def test_drawn_settings_lie_in_the_stated_domain_and_follow_the_seed() -> None:
    drawn = bench.draw_settings(200, seed=3)
    for theta, q0, q1, n, m0, m1 in drawn:
        assert 0.05 <= theta <= 0.95 and 0.6 <= q0 <= 0.99 and 0.6 <= q1 <= 0.99 and q0 + q1 >= 1.4
        assert 50 <= n <= 1000 and 30 <= m0 <= 200 and 30 <= m1 <= 200
    assert drawn == bench.draw_settings(200, seed=3) and drawn != bench.draw_settings(200, seed=4)
    assert max(s[3] for s in drawn) > 600 and min(s[3] for s in drawn) < 80  # the whole range, not one corner


def test_the_largest_tails_are_graded_on_fresh_data_sets(monkeypatch: pytest.MonkeyPatch) -> None:
    a, b, c, d = ((0.1 * i, 0.8, 0.8, 100, 30, 30) for i in range(1, 5))
    drawn = [(a, 0.031, 0.010), (b, 0.020, 0.024), (c, 0.010, 0.012), (d, 0.026, 0.011)]
    fresh = {a: (0.022, 0.011), b: (0.021, 0.020), d: (0.029, 0.010), c: (0.5, 0.5)}
    asked = []

    def measure(setting: tuple, reps: int, rng: np.random.Generator, interval: str) -> tuple[float, float]:
        asked.append((setting, reps, interval))
        return fresh[setting]

    monkeypatch.setattr(bench, "tails", measure)
    ok, line = bench.grade(drawn, 16000, seed=1)
    assert sorted(s[0] for s, _, _ in asked) == [0.1, 0.2, 0.4]  # the three largest, not the smallest
    assert all(reps == 16000 and interval == "score" for _, reps, interval in asked)
    assert ok is False and line.startswith("0.0290 on 16000 fresh data sets at theta=0.4")  # over 0.0275
    fresh[d] = (0.024, 0.010)
    ok, line = bench.grade(drawn, 16000, seed=1)
    assert ok is True and line.startswith("0.0240 on 16000") and "0.0310 -> 0.0220" in line


def test_the_tail_limit_is_two_monte_carlo_errors_over_nominal() -> None:
    assert bench.tail_limit(4000) == pytest.approx(0.025 + 2 * (0.025 * 0.975 / 4000) ** 0.5)
    assert bench.tail_limit(16000) < bench.tail_limit(4000)
