"""Separate stopping levels for "pass" and "fail": eps_pass bounds the extra false passes."""

from pathlib import Path

import numpy as np
import pytest

from pytest_judgerel.errors import ReliabilityError
from pytest_judgerel.stats.pass_rate import JudgeCalibration
from pytest_judgerel.stats.sequential import (
    ICC_EPS_FAIL,
    ICC_EPS_PASS,
    PASS_RATE_EPS_FAIL,
    PASS_RATE_EPS_PASS,
    human_mean_sequential_look,
    icc_sequential_look,
    items_schedule,
    pass_rate_cutoff,
    pass_rate_sequential_look,
)

PERFECT = JudgeCalibration(1.0, 1.0, 100, 400)
N_CAP, MIN_RATE = 1000, 0.9


def _look(count, seen=500, **kw):
    return pass_rate_sequential_look(count, seen, n_cap=N_CAP, min_rate=MIN_RATE, calibration=PERFECT, **kw)


def _count_with_p(lo, hi, seen=500):
    """A pass count after ``seen`` items whose predictive probability of the cap's pass lies in (lo, hi)."""
    for count in range(seen + 1):
        p = _look(count, seen, eps=0.25).p_pass_at_cap
        if lo < p < hi:
            return count, p
    raise AssertionError(f"no count gives p in ({lo}, {hi})")


def test_the_defaults_are_asymmetric_and_recorded():
    assert ICC_EPS_PASS < ICC_EPS_FAIL and PASS_RATE_EPS_PASS < PASS_RATE_EPS_FAIL
    look = _look(450)
    assert (look.eps_pass, look.eps_fail) == (PASS_RATE_EPS_PASS, PASS_RATE_EPS_FAIL)
    assert look.to_dict()["eps_pass"] == PASS_RATE_EPS_PASS and look.to_dict()["eps_fail"] == PASS_RATE_EPS_FAIL


def test_the_icc_rule_uses_the_documented_levels_by_default():
    """docs/concepts.md ("How the levels were chosen"): the ICC rule stops at 0.01 / 0.02."""
    import numpy as np

    from pytest_judgerel.stats.sequential import icc_sequential_look

    x = np.random.default_rng(0).normal(size=(40, 1)) + 0.3 * np.random.default_rng(1).normal(size=(40, 3))
    look = icc_sequential_look(x, threshold=0.7, cap=10)
    assert (ICC_EPS_PASS, ICC_EPS_FAIL) == (0.01, 0.02) and (look.eps_pass, look.eps_fail) == (0.01, 0.02)


def test_the_pass_rate_rule_uses_the_documented_levels_by_default():
    """docs/concepts.md ("The pass-rate gate's pass side: 0.02"): the pass-rate rule's levels are calibrated
    to 0.02 / 0.03, the pass side the stricter, and its record says so."""
    look = _look(450)
    assert (PASS_RATE_EPS_PASS, PASS_RATE_EPS_FAIL) == (0.02, 0.03) and (look.eps_pass, look.eps_fail) == (0.02, 0.03)
    text = (Path(__file__).resolve().parents[1] / "docs" / "concepts.md").read_text(encoding="utf-8")
    assert "| 0.02 / 0.03, exact at every rate |" in text


def test_eps_sets_both_sides_and_each_side_can_be_overridden():
    look = _look(450, eps=0.04)
    assert (look.eps_pass, look.eps_fail) == (0.04, 0.04)
    look = _look(450, eps=0.04, eps_fail=0.2)
    assert (look.eps_pass, look.eps_fail) == (0.04, 0.2)
    look = _look(450, eps_pass=0.002)
    assert (look.eps_pass, look.eps_fail) == (0.002, PASS_RATE_EPS_FAIL)


def _stops(eps_pass=PASS_RATE_EPS_PASS, eps_fail=PASS_RATE_EPS_FAIL):
    from pytest_judgerel.stats.sequential_pass_rate import pass_rate_stops
    from pytest_judgerel.stats.sequential import pass_rate_schedule

    cutoff = pass_rate_cutoff(N_CAP, min_rate=MIN_RATE, calibration=PERFECT)
    return pass_rate_stops(N_CAP, cutoff.count, pass_rate_schedule(N_CAP).looks, eps_pass, eps_fail)


def test_a_pass_stop_needs_the_calibrated_pass_level():
    stops = _stops()
    i = 10
    seen, boundary = stops.looks[i], stops.pass_counts[i]
    at, below = _look(boundary, seen), _look(boundary - 1, seen)
    assert at.decision == "pass" and at.p_pass_at_cap >= stops.pass_level
    assert below.decision == "continue" and below.p_pass_at_cap < stops.pass_level
    assert f"eps_pass = {PASS_RATE_EPS_PASS:g}" in at.reason and f"{stops.pass_level:.4f}" in at.reason
    # each side is calibrated with the other's stops off: a loose fail side does not loosen the pass side
    assert _stops(eps_fail=0.3).pass_level == stops.pass_level
    assert _look(boundary - 1, seen, eps_fail=0.3).decision != "pass"
    assert _stops(eps_pass=0.05).pass_level < stops.pass_level  # a larger eps_pass stops earlier


def test_a_fail_stop_needs_the_calibrated_fail_level():
    stops = _stops()
    i = 10
    seen, boundary = stops.looks[i], stops.fail_counts[i]
    at, above = _look(boundary, seen), _look(boundary + 1, seen)
    assert at.decision == "fail" and at.p_pass_at_cap <= stops.fail_level
    assert above.decision == "continue" and above.p_pass_at_cap > stops.fail_level
    assert "eps_fail = 0.03" in at.reason
    assert _look(boundary, seen, eps=0.001).decision == "continue"  # a stricter fail side waits
    assert _stops(eps_pass=0.3).fail_level == stops.fail_level  # nor does a loose pass side loosen it


@pytest.mark.parametrize("kwargs, match", [
    ({"eps_pass": 0.0}, "eps_pass must be"),
    ({"eps_fail": 0.5}, "eps_fail must be"),
    ({"eps_pass": True}, "eps_pass must be"),
    ({"eps": -0.1}, "eps must be"),
])
def test_stop_levels_are_checked_and_named(kwargs, match):
    with pytest.raises(ReliabilityError, match=match):
        _look(450, **kwargs)
    with pytest.raises(ReliabilityError, match=match):
        icc_sequential_look(np.ones((5, 2)) + np.arange(5)[:, None], threshold=0.5, cap=4, **kwargs)
    with pytest.raises(ReliabilityError, match=match):
        human_mean_sequential_look([1, 2, 3], [1, 2, 3], [1, 2, 3], n_unlabeled_cap=10, min_mean=2.0, **kwargs)


def test_icc_look_uses_both_levels():
    rng = np.random.default_rng(3)
    x = np.sqrt(0.7) * rng.normal(size=(40, 1)) + np.sqrt(0.3) * rng.normal(size=(40, 4))
    look = icc_sequential_look(x, threshold=0.7, cap=10, eps_pass=0.01, eps_fail=0.3)
    assert (look.eps_pass, look.eps_fail) == (0.01, 0.3)
    p = look.p_pass_at_cap
    assert look.decision == ("pass" if p >= 0.99 else "fail" if p <= 0.3 else "continue")


def _sequential_vs_fixed(truth, eps_pass, eps_fail, sets, seed):
    """(P(seq pass, fixed fail), P(seq fail, fixed pass)) over ``sets`` data sets at the true rate."""
    cutoff = pass_rate_cutoff(N_CAP, min_rate=MIN_RATE, calibration=PERFECT)
    schedule = items_schedule(N_CAP)
    rng = np.random.default_rng(seed)
    wrong_pass = wrong_fail = 0
    for _ in range(sets):
        verdicts = rng.random(N_CAP) < truth
        fixed = int(verdicts.sum()) >= cutoff.count
        for m in schedule.looks:
            look = pass_rate_sequential_look(int(verdicts[:m].sum()), m, n_cap=N_CAP, min_rate=MIN_RATE,
                                             calibration=PERFECT, cutoff=cutoff, schedule=schedule,
                                             eps_pass=eps_pass, eps_fail=eps_fail)
            if look.stopped:
                break
        wrong_pass += look.decision == "pass" and not fixed
        wrong_fail += look.decision == "fail" and fixed
    return wrong_pass / sets, wrong_fail / sets


def test_the_pass_side_bounds_the_extra_false_passes_whatever_the_fail_side():
    """At a truth on the threshold, a loose fail side (0.2) makes many wrong fails but no more wrong
    passes than eps_pass = 0.01 allows (600 data sets: 3 sd of a 1% rate is 1.2%)."""
    wrong_pass, wrong_fail = _sequential_vs_fixed(MIN_RATE, 0.01, 0.2, 600, 11)
    assert wrong_pass <= 0.022
    assert wrong_fail > 3 * max(wrong_pass, 0.005)  # the asymmetry is real: errors fall on the fail side
