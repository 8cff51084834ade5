"""Silent judge drift at its edges, in-process: the CUSUM's downward side and reset, the shift test's
level, big negative shifts, the noise test's centring, two tails and bias-corrected ratio,
attribution's minimum change, failed anchors replaced from the reserve, too few answered anchors,
coarse-scale references, and the status across configurations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pytest_judgerel.anchors.check import overall_status
from pytest_judgerel.stats import (anchor_comparison, attribute_change, drift_monitor, reference_samples_for,
                                   staged_anchor_comparison)
from pytest_judgerel.stats.anchor_noise import UP_SHARE


def _scores(rng, mu, sd, size, offset=0.0, low=0, high=10):
    return np.clip(np.round(mu[:, None] + offset + rng.normal(0, sd, (mu.size, size))), low, high)


def _cont(rng, mu, sd, size, offset=0.0):
    """Continuous scores on 0-10 (clipped, not rounded)."""
    return np.clip(mu[:, None] + offset + rng.normal(0, sd, (mu.size, size)), 0, 10)


def _run(shift, se=0.1, n=30, m=4):
    return {"shift": shift, "shift_se": se, "n": n, "reference_samples": m, "fresh_samples": 1}


# --------------------------------------------------------------------------- the CUSUM monitor


def test_the_monitor_alarms_downwards_on_a_falling_judge():
    runs = [_run(0.0)] * 3 + [_run(-0.05 * t) for t in range(1, 15)]
    mon = drift_monitor(runs)
    assert mon.alarmed and mon.direction == "down"
    step = mon.steps[mon.first_alarm - 1]
    assert step.lower > mon.decision_limit and step.upper < mon.decision_limit


def test_the_cusum_statistics_reset_at_zero():
    """After an excursion the statistic in the other direction restarts from 0, never below."""
    runs = [_run(0.3), _run(0.3), _run(-0.3), _run(-0.3), _run(-0.3), _run(0.0)]
    mon = drift_monitor(runs)
    ups = [s.upper for s in mon.steps]
    downs = [s.lower for s in mon.steps]
    assert min(ups) >= 0 and min(downs) >= 0
    assert ups[0] > 0 and downs[0] == 0  # a rise feeds the upper side only
    assert 0 in ups[2:]  # falling runs empty the upper side to exactly zero, not below
    for t in range(1, len(mon.steps)):  # S+_t = max(0, S+_{t-1} + z_t - r)
        z = mon.steps[t].z
        assert ups[t] == pytest.approx(max(0.0, ups[t - 1] + z - mon.reference_value))
        assert downs[t] == pytest.approx(max(0.0, downs[t - 1] - z - mon.reference_value))


# --------------------------------------------------------------------------- the per-session tests


def test_the_shift_test_keeps_its_level_on_continuous_scores():
    """Without drift, the shift test rejects at about its designed level (never far above it)."""
    rejected, levels = 0, []
    for seed in range(400):
        rng = np.random.default_rng(seed)
        mu = rng.uniform(2, 8, 30)
        ref, new = _cont(rng, mu, 0.8, 4), _cont(rng, mu, 0.8, 1)
        res = anchor_comparison(ref, new, "0-10", seed=seed)
        levels.append(res.shift_level)
        rejected += res.shift_p < res.shift_level
    level = float(np.mean(levels))
    assert 0.001 <= level <= 0.025
    # binomial sd of 400 trials at 0.025 is 0.0078: the rate stays within three of them
    assert rejected / 400 <= level + 3 * math.sqrt(level * (1 - level) / 400)


@pytest.mark.parametrize("shift", [-3.0, -6.0])
def test_a_big_negative_shift_is_drifted_with_its_sign(shift):
    rng = np.random.default_rng(3)
    mu = rng.uniform(6, 9, 30)
    ref, new = _scores(rng, mu, 0.7, 4), _scores(rng, mu, 0.7, 1, shift)
    res = anchor_comparison(ref, new, "0-10")
    assert res.status == "drifted" and res.shift < shift / 2 and res.shift_ci[1] < 0
    assert any("shifted by -" in r for r in res.reasons)
    assert not res.to_dict()["equivalence_p"] < 0.05  # far outside the margin: never steady


def test_the_noise_test_is_centred_by_the_shift():
    """A pure shift (the noise unchanged) does not read as a noise change."""
    ps = []
    for seed in range(40):
        rng = np.random.default_rng(seed)
        mu = rng.uniform(2, 6, 30)
        ref, new = _cont(rng, mu, 0.7, 4), _cont(rng, mu, 0.7, 1, 2.5)
        res = anchor_comparison(ref, new, "0-10", seed=seed)
        assert res.status == "drifted"
        ps.append(res.noise.p)
    assert np.mean(np.array(ps) < 0.025) <= 0.1 and np.median(ps) > 0.2


def test_the_noise_test_has_two_tails_weighted_to_an_increase():
    rng = np.random.default_rng(8)
    mu = rng.uniform(3.5, 6.5, 40)
    ref = _cont(rng, mu, 0.8, 4)
    quiet = anchor_comparison(ref, _cont(rng, mu, 0.02, 1), "0-10")
    loud = anchor_comparison(ref, _cont(rng, mu, 2.4, 1), "0-10")
    assert quiet.noise.direction == "down" and loud.noise.direction == "up"
    for res in (quiet, loud):
        n = res.noise
        assert n.p == pytest.approx(min(1.0, n.p_up / UP_SHARE, n.p_down / (1 - UP_SHARE)))
    assert loud.status == "drifted" and loud.noise.p < 0.025 and loud.noise.value > 2
    # a judge that became nearly deterministic scatters less: the lower tail sees it
    assert quiet.noise.p_down < 0.0025 and quiet.status == "drifted"
    assert any("scatter less" in r for r in quiet.reasons)


@pytest.mark.parametrize("scale,sd", [("1-5", 0.3), ("0-5", 0.4), ("0-10", 0.6), ("0-100", 6.0)])
def test_the_noise_ratio_of_an_unchanged_judge_is_about_one(scale, sd):
    """The ratio is corrected by the permutation mean of Q: on average about 1 on every scale."""
    low, high = (int(x) for x in scale.split("-"))
    m = reference_samples_for(scale)
    values = []
    for seed in range(60):
        rng = np.random.default_rng(seed)
        mu = rng.uniform(low + 0.2 * (high - low), low + 0.8 * (high - low), 40)
        ref, new = _scores(rng, mu, sd, m, 0, low, high), _scores(rng, mu, sd, 1, 0, low, high)
        n = anchor_comparison(ref, new, scale, seed=seed).noise
        if n.value is not None:
            values.append(n.value)
            assert n.bias > 0
    assert len(values) >= 50 and 0.9 <= np.mean(values) <= 1.1


def test_coarse_scales_record_more_reference_samples():
    assert reference_samples_for("1-5") == reference_samples_for("0-5") == reference_samples_for("1-7") == 8
    assert reference_samples_for("0-10") == reference_samples_for("0-100") == 4


# --------------------------------------------------------------------------- failed anchors


def _reference(seed=0, n=40, m=4):
    rng = np.random.default_rng(seed)
    mu = rng.uniform(2, 8, n)
    ref = _scores(rng, mu, 0.7, m)
    return mu, {f"a{i}": list(ref[i]) for i in range(n)}


def test_failed_first_stage_anchors_are_replaced_from_the_reserve():
    mu, reference = _reference()
    rng = np.random.default_rng(1)
    fresh = {f"a{i}": [float(v)] for i, v in enumerate(_scores(rng, mu, 0.7, 1)[:, 0])}
    failing = {f"a{i}" for i in range(5)}
    asked: list[list[str]] = []

    def judge(ids):
        asked.append(list(ids))
        return {a: [float("nan")] if a in failing else fresh[a] for a in ids}

    res = staged_anchor_comparison(reference, judge, "0-10", nan_policy="omit")
    assert asked[0] == [f"a{i}" for i in range(30)]
    assert asked[1] == [f"a{i}" for i in range(30, 35)]  # five reserve anchors replace the five failures
    stage = res.first_stage if res.first_stage is not None else res
    assert stage.n == 30  # the first stage has its designed size
    assert res.status in ("steady", "drifted", "inconclusive") and res.n_omitted == 5


def test_too_few_answered_anchors_are_inconclusive_with_the_reason():
    mu, reference = _reference()
    rng = np.random.default_rng(2)
    fresh = {f"a{i}": [float(v)] for i, v in enumerate(_scores(rng, mu, 0.7, 1)[:, 0])}

    def judge(ids):  # every other call fails, the reserve too
        return {a: ([float("nan")] if int(a[1:]) % 2 else fresh[a]) for a in ids}

    res = staged_anchor_comparison(reference, judge, "0-10", nan_policy="omit")
    assert res.status == "inconclusive" and res.n == 20
    assert any("only 20 of 40 anchors asked were answered (the design needs 30" in r for r in res.reasons)

    def shifted(ids):  # the same failures, but a drift the 20 answers show: still drifted
        return {a: ([float("nan")] if int(a[1:]) % 2 else [min(10.0, fresh[a][0] + 3)]) for a in ids}

    moved = staged_anchor_comparison(reference, shifted, "0-10", nan_policy="omit")
    assert moved.status == "drifted" and any("the design needs 30" in r for r in moved.reasons)


def test_every_anchor_failing_is_an_error_not_a_verdict():
    _, reference = _reference()
    with pytest.raises(ValueError, match="none of the 40 anchors asked was answered"):
        staged_anchor_comparison(reference, lambda ids: {a: [float("nan")] for a in ids}, "0-10",
                                 nan_policy="omit")


# --------------------------------------------------------------------------- attribution and statuses


def test_attribution_ignores_a_significant_system_move_below_the_minimum_change():
    rng = np.random.default_rng(4)
    mu = rng.uniform(2, 8, 30)
    steady = anchor_comparison(_scores(rng, mu, 0.5, 4), _scores(rng, mu, 0.5, 1), "0-10")
    assert steady.status == "steady"
    # a huge suite makes a 0.2-point move significant; the floor (0.5 x margin = 0.5 point) keeps it "none"
    small = attribute_change(steady, 0.2, 0.01)
    assert small.verdict == "none" and small.min_change == pytest.approx(0.5) and not small.system_changed
    big = attribute_change(steady, 0.8, 0.01)
    assert big.verdict == "system changed" and big.system_changed
    assert attribute_change(steady, 0.2, 0.01, min_change=0.1).verdict == "system changed"


def test_the_block_status_is_the_most_alarming_configuration():
    assert overall_status(["steady", "inconclusive"]) == "inconclusive"
    assert overall_status(["inconclusive", "drifted", "steady"]) == "drifted"
    assert overall_status(["recorded", "steady"]) == "steady"
    assert overall_status([]) == "off"
