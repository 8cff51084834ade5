"""The pass-rate gate's stop levels keep their bounds exactly, at every pass rate of the judge."""

import math

import numpy as np
import pytest

from pytest_judgerel.stats.pass_rate import JudgeCalibration
from pytest_judgerel.stats.sequential_pass_rate import (
    _boundaries,
    _from_items,
    _predictive,
    PASS_RATE_PASS_FROM,
    pass_rate_operating,
    pass_rate_pass_from,
    pass_rate_stops,
)
from pytest_judgerel.stats.sequential import (
    PASS_RATE_EPS_FAIL,
    PASS_RATE_EPS_PASS,
    items_schedule,
    pass_rate_cutoff,
    pass_rate_schedule,
    pass_rate_sequential_look,
)


def _draw_designs(count, seed):
    """Designs from the benchmark's stated domain (20-500 items, min_rate 0.50-0.95, a perfect judge or
    one with sensitivity and specificity 0.85-0.99, either rule), drawn with a seed."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        n = int(round(math.exp(rng.uniform(math.log(20), math.log(500)))))
        q0, q1 = (1.0, 1.0) if i % 2 == 0 else (float(rng.uniform(0.85, 0.99)), float(rng.uniform(0.85, 0.99)))
        cal = JudgeCalibration(q0, q1, 100, 400)
        use = "ci_low" if i % 3 == 2 else "estimate"
        cutoff = pass_rate_cutoff(n, min_rate=float(rng.uniform(0.5, 0.95)), calibration=cal, use=use)
        if 0 < cutoff.count <= n:
            out.append((n, cutoff.count))
    return out


@pytest.mark.parametrize("n_cap, cutoff", _draw_designs(8, 2031))
def test_both_bounds_hold_at_every_rate_of_an_independent_grid(n_cap, cutoff):
    """Graded on 999 rates the calibration never saw (its own grid is ~160 rates)."""
    stops = pass_rate_stops(n_cap, cutoff, pass_rate_schedule(n_cap).looks, PASS_RATE_EPS_PASS, PASS_RATE_EPS_FAIL)
    op = pass_rate_operating(stops, np.linspace(0.001, 0.999, 999))
    assert np.all(np.isfinite(op.reversed)) and np.all(np.isfinite(op.lost))
    assert op.reversed.max() <= PASS_RATE_EPS_PASS + 1e-6
    assert op.lost.max() <= PASS_RATE_EPS_FAIL + 1e-6
    assert op.reversed.max() <= stops.worst_reversed + 1e-6  # the reported worst is the worst
    assert op.lost.max() <= stops.worst_lost + 1e-6
    # and the operating characteristic stays within the larger level of the fixed gate's
    assert np.abs(op.p_seq_pass - op.p_fixed_pass).max() <= PASS_RATE_EPS_FAIL + 1e-4
    assert np.all(op.calls_share <= 1.0 + 1e-12) and np.all(op.calls_share > 0)


@pytest.mark.parametrize("n_cap, cutoff", [(48, 37), (120, 108), (300, 240)])
def test_the_levels_are_the_loosest_that_keep_the_bounds(n_cap, cutoff):
    """One step looser (the next predictive value a look can take) breaks the bound: the bisection
    found the edge, not a level merely on the safe side of it."""
    looks = pass_rate_schedule(n_cap).looks
    stops = pass_rate_stops(n_cap, cutoff, looks, PASS_RATE_EPS_PASS, PASS_RATE_EPS_FAIL)
    predictive = [_predictive(n, n_cap, cutoff, 0.5, 0.5) for n in looks[:-1]]
    values = np.unique(np.concatenate(predictive))
    looser_pass = values[values < stops.pass_level].max()
    looser_fail = values[values > stops.fail_level].min()
    grid = np.linspace(0.001, 0.999, 1999)
    no_pass, no_fail = (-1,) * len(predictive), tuple(p.size for p in predictive)
    from pytest_judgerel.stats.sequential_pass_rate import boundaries_operating

    def pass_side(level):  # the gate's pass boundaries: none before pass_from items unless the cutoff is reached
        return _from_items(_boundaries(predictive, level, "pass"), looks[:-1], cutoff, stops.pass_from)

    assert pass_side(stops.pass_level) == stops.pass_counts
    rev = boundaries_operating(n_cap, cutoff, looks, pass_side(looser_pass), no_pass, grid).reversed
    lost = boundaries_operating(n_cap, cutoff, looks, no_fail, _boundaries(predictive, looser_fail, "fail"), grid).lost
    assert rev.max() > PASS_RATE_EPS_PASS
    assert lost.max() > PASS_RATE_EPS_FAIL


def _simulate(n_cap, min_rate, rate, sets, seed):
    """The look function itself on ``sets`` data sets: (reversed, lost, mean calls share)."""
    cal = JudgeCalibration(1.0, 1.0, 100, 400)
    cutoff = pass_rate_cutoff(n_cap, min_rate=min_rate, calibration=cal)
    schedule = pass_rate_schedule(n_cap)
    rng = np.random.default_rng(seed)
    rev = lost = 0
    shares = []
    for _ in range(sets):
        verdicts = rng.random(n_cap) < rate
        fixed = int(verdicts.sum()) >= cutoff.count
        for m in schedule.looks:
            look = pass_rate_sequential_look(int(verdicts[:m].sum()), m, n_cap=n_cap, min_rate=min_rate,
                                             calibration=cal, cutoff=cutoff, schedule=schedule)
            if look.stopped:
                break
        rev += look.decision == "pass" and not look.at_cap and not fixed
        lost += look.decision == "fail" and not look.at_cap and fixed
        shares.append(look.share_of_cap)
    return rev / sets, lost / sets, float(np.mean(shares)), cutoff.count


@pytest.mark.parametrize("rate", [0.74, 0.8, 0.9])
def test_the_exact_figures_match_the_look_function_run_on_data(rate):
    """An independent check of the dynamic programme: the look function on 3,000 simulated data sets
    (N = 60, min_rate 0.76) reads the same reversals, lost passes and calls, within 4 SE."""
    sets = 3000
    rev, lost, share, cutoff = _simulate(60, 0.76, rate, sets, seed=int(rate * 1000))
    stops = pass_rate_stops(60, cutoff, pass_rate_schedule(60).looks, PASS_RATE_EPS_PASS, PASS_RATE_EPS_FAIL)
    op = pass_rate_operating(stops, [rate])
    for measured, exact in ((rev, op.reversed[0]), (lost, op.lost[0])):
        assert abs(measured - exact) <= 4 * math.sqrt(max(exact, 1e-3) * (1 - exact) / sets)
    assert abs(share - op.calls_share[0]) <= 0.02


@pytest.mark.parametrize("n_cap, min_rate", [(60, 0.76), (300, 0.76), (459, 0.65)])
def test_a_look_on_the_schedule_stops_exactly_at_the_boundaries(n_cap, min_rate):
    """At every count of every look the look function decides what the calibrated boundaries say (on
    300 and 459 items, before a tenth of the items, too)."""
    cal = JudgeCalibration(1.0, 1.0, 100, 400)
    cutoff = pass_rate_cutoff(n_cap, min_rate=min_rate, calibration=cal)
    schedule = pass_rate_schedule(n_cap)
    stops = pass_rate_stops(n_cap, cutoff.count, schedule.looks, PASS_RATE_EPS_PASS, PASS_RATE_EPS_FAIL)
    for i, seen in enumerate(schedule.looks[:-1]):
        for count in range(seen + 1):
            decision = pass_rate_sequential_look(count, seen, n_cap=n_cap, min_rate=min_rate, calibration=cal,
                                                 cutoff=cutoff, schedule=schedule).decision
            expected = ("pass" if count >= stops.pass_counts[i] else
                        "fail" if count <= stops.fail_counts[i] else "continue")
            assert decision == expected, (seen, count)


def test_the_schedule_looks_in_small_steps_from_twenty_items():
    assert pass_rate_schedule(48).looks == (20, 25, 30, 35, 40, 45, 48)
    assert pass_rate_schedule(1000).looks[:3] == (20, 45, 70)  # a fortieth of a gate over 400 items
    assert pass_rate_schedule(12).looks == (12,)


@pytest.mark.parametrize("n_cap, step", [(100, 5), (150, 8), (200, 10), (201, 10), (400, 10), (401, 11), (459, 12)])
def test_the_steps_grow_with_the_gate_up_to_ten_items_then_a_fortieth(n_cap, step):
    looks = pass_rate_schedule(n_cap).looks
    assert looks[0] == 20 and looks[-1] == n_cap
    assert set(np.diff(looks[:-1]).tolist()) == {step}
    assert 0 < looks[-1] - looks[-2] <= step


@pytest.mark.parametrize("prior", [(0.5, 0.5), (2.0, 1.0), (1.0, 3.0)])
def test_the_predictive_of_every_count_is_the_looks_own(prior):
    """The calibration's predictive, all counts at once, is the look function's for each count."""
    from pytest_judgerel.stats.sequential import _beta_binomial_sf

    n, n_cap, cutoff = 30, 80, 60
    p = _predictive(n, n_cap, cutoff, *prior)
    for c in range(n + 1):
        need = cutoff - c
        expected = 1.0 if need <= 0 else 0.0 if need > n_cap - n else _beta_binomial_sf(need, n_cap - n, prior[0] + c,
                                                                                         prior[1] + n - c)
        assert p[c] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("n_cap, cutoff", [(12, 10), (21, 17), (25, 25), (25, 1)])
def test_tiny_gates_and_extreme_cutoffs_keep_the_bounds(n_cap, cutoff):
    """No look before the cap (12 items), one look a single item before it (21), a cutoff that needs every
    item or just one: the bounds still hold and nothing is undefined."""
    looks = pass_rate_schedule(n_cap).looks
    stops = pass_rate_stops(n_cap, cutoff, looks, PASS_RATE_EPS_PASS, PASS_RATE_EPS_FAIL)
    op = pass_rate_operating(stops, np.linspace(0.001, 0.999, 999))
    assert np.all(np.isfinite(op.calls_share)) and np.all(np.isfinite(op.p_seq_pass))
    assert op.reversed.max() <= PASS_RATE_EPS_PASS + 1e-6 and op.lost.max() <= PASS_RATE_EPS_FAIL + 1e-6
    assert len(stops.pass_counts) == len(looks) - 1 == len(stops.fail_counts)


def test_counts_in_the_predictives_tails_read_as_certain_and_nothing_else_moves():
    """The calibration sums the predictive only where it is not within 1e-12 of 0 or 1: every count is
    within that of its fully summed value, and the calibrated rule is the very one the full sums give, on
    designs drawn with a seed (up to 3,000 items, any cutoff, three priors) and where a level falls in
    a tail (a cutoff of one item: pass only where settled)."""
    import pytest_judgerel.stats.sequential_pass_rate as exact

    rng = np.random.default_rng(2033)
    designs = [(25, 1, (0.5, 0.5), 0.01), (21, 17, (0.5, 0.5), 0.01), (300, 240, (0.5, 0.5), 1e-13)]
    for i in range(10):
        n_cap = int(round(math.exp(rng.uniform(math.log(20), math.log(3000)))))
        prior = (0.5, 0.5) if i % 3 else (float(rng.uniform(0.3, 3.0)), float(rng.uniform(0.3, 3.0)))
        designs.append((n_cap, int(rng.integers(1, n_cap + 1)), prior, 0.01))
    for n_cap, cutoff, prior, eps in designs:
        looks = pass_rate_schedule(n_cap).looks
        for n in looks[:-1]:
            windowed, full = _predictive(n, n_cap, cutoff, *prior), _predictive(n, n_cap, cutoff, *prior, tail=0.0)
            assert np.all(np.isfinite(windowed)) and np.max(np.abs(windowed - full)) <= 1e-12
        pass_rate_stops.cache_clear()
        windowed_stops = pass_rate_stops(n_cap, cutoff, looks, eps, 3 * eps, prior)
        pass_rate_stops.cache_clear()
        tail, exact._TAIL = exact._TAIL, 0.0
        try:
            full_stops = pass_rate_stops(n_cap, cutoff, looks, eps, 3 * eps, prior)
        finally:
            exact._TAIL = tail
            pass_rate_stops.cache_clear()
        assert windowed_stops == full_stops, (n_cap, cutoff, prior)


def test_no_pass_stop_before_a_tenth_of_the_items_unless_the_count_secures_it():
    """A gate on 459 items (cutoff 299: min_rate 0.65, a perfect judge) looking at 20, 43, 66, ... items (every
    twentieth, the gate's own looks are closer): its first two looks may stop with "fail" but with "pass" only once 46 items are judged (a tenth), or where
    the count already reaches the cutoff.  The budget those early pass stops would spend goes to the later
    looks: at a true rate of 0.70 the gate spends fewer calls than with pass stops from the first look,
    and both keep the bound at every rate."""
    n_cap, cutoff = 459, 299
    sched = items_schedule(n_cap, batch=23, first=20)
    looks = sched.looks
    assert looks[:3] == (20, 43, 66) and PASS_RATE_PASS_FROM == 0.1 and pass_rate_pass_from(n_cap) == 46
    stops = pass_rate_stops(n_cap, cutoff, looks, PASS_RATE_EPS_PASS, PASS_RATE_EPS_FAIL)
    early = pass_rate_stops(n_cap, cutoff, looks, PASS_RATE_EPS_PASS, PASS_RATE_EPS_FAIL, pass_from=0)
    assert stops.pass_from == 46 and early.pass_from == 0
    assert stops.pass_counts[:2] == (21, 44) and stops.pass_counts[2] <= 66
    assert early.pass_counts[0] <= 20  # without the restriction 20 of 20 would stop with a pass
    assert stops.fail_counts[0] >= 0  # fail stops stay at every look
    grid = np.linspace(0.001, 0.999, 999)
    assert pass_rate_operating(stops, grid).reversed.max() <= PASS_RATE_EPS_PASS + 1e-6
    at_070 = pass_rate_operating(stops, [0.70]).calls_share[0]
    assert at_070 < pass_rate_operating(early, [0.70]).calls_share[0] - 0.01

    cal = JudgeCalibration(1.0, 1.0, 100, 400)
    cut = pass_rate_cutoff(n_cap, min_rate=0.65, calibration=cal)
    assert cut.count == cutoff
    first = pass_rate_sequential_look(20, 20, n_cap=n_cap, min_rate=0.65, calibration=cal, cutoff=cut,
                                      schedule=sched)
    assert first.decision == "continue" and "no pass stop before 46 items are judged" in first.reason
    assert first.p_pass_at_cap >= stops.pass_level  # the level alone would have passed
    third = pass_rate_sequential_look(66, 66, n_cap=n_cap, min_rate=0.65, calibration=cal, cutoff=cut,
                                      schedule=sched)
    assert third.decision == "pass"
    low = pass_rate_cutoff(400, min_rate=0.03, calibration=cal)
    assert low.count <= 18
    settled = pass_rate_sequential_look(18, 20, n_cap=400, min_rate=0.03, calibration=cal, cutoff=low)
    assert settled.decision == "pass" and "settled whatever" in settled.reason
