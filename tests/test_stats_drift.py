"""Silent judge drift: anchor comparison (stats.anchor_drift, stats.anchor_noise), history monitor (stats.cusum),
attribution (stats.drift_attribution)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from pytest_judgerel.errors import ReliabilityError, ScaleError
from pytest_judgerel.stats import (AnchorComparison, anchor_comparison, attribute_change, drift_monitor,
                                   paired_shift)
from pytest_judgerel.stats.cusum import cusum_decision_limit

N = 30


def _judge(rng, mu, sd, size, offset=0.0):
    return np.clip(np.round(mu[:, None] + offset + rng.normal(0, sd, (mu.size, size))), 0, 10)


def _anchors(seed=0, *, shift=0.0, noise_factor=1.0, n=N, sd=0.75):
    rng = np.random.default_rng(seed)
    mu = rng.uniform(2, 8, n)
    return _judge(rng, mu, sd, 2), _judge(rng, mu, sd * noise_factor, 1, shift)


def test_unchanged_judge_is_steady():
    ref, fresh = _anchors(1)
    res = anchor_comparison(ref, fresh, "0-10")
    assert res.status == "steady"
    assert res.margin == pytest.approx(1.0)  # 0.1 of the range
    lo, hi = res.equivalence_ci
    assert -1.0 < lo <= res.shift <= hi < 1.0
    assert res.noise is not None and res.noise.p >= 0.025
    assert res.calls == N and res.n == N


def test_shifted_judge_is_drifted():
    ref, fresh = _anchors(2, shift=1.0)  # 0.1 of the 0-10 range
    res = anchor_comparison(ref, fresh, "0-10")
    assert res.status == "drifted"
    assert res.shift_ci[0] > 0 and res.shift_p < 0.025
    assert res.shift_fraction == pytest.approx(res.shift / 10)
    assert any("shifted" in r for r in res.reasons)


def test_noise_change_is_flagged_as_drift_without_a_shift():
    ref, fresh = _anchors(3, noise_factor=3.0)
    res = anchor_comparison(ref, fresh, "0-10")
    assert res.status == "drifted"
    assert res.noise.p < 0.025 and res.noise.direction == "up"
    assert res.noise.value > 1.5 and res.noise.ci_low <= res.noise.value <= res.noise.ci_high
    assert any("scatter more" in r for r in res.reasons)


def test_a_deterministic_judge_that_repeats_its_reference_is_steady():
    mu = np.arange(N) % 11
    ref = np.column_stack([mu, mu])
    res = anchor_comparison(ref, mu, "0-10")
    assert res.status == "steady" and res.shift == 0.0
    assert res.noise.p == 1.0 and res.noise.value is None


def test_too_few_anchors_are_inconclusive_with_a_reason():
    ref, fresh = _anchors(4, n=6, shift=3.0)
    res = anchor_comparison(ref, fresh, "0-10")
    assert res.status == "inconclusive"
    assert "too few anchors" in res.reasons[0] and res.shift_ci is None


def test_wide_interval_is_inconclusive_not_steady():
    ref, fresh = _anchors(5, sd=2.5, n=12)  # noisy judge, few anchors: the interval cannot fit in +/-1
    res = anchor_comparison(ref, fresh, "0-10", margin=0.3)
    assert res.status == "inconclusive"
    assert "not inside" in res.reasons[-1]


def test_one_reference_sample_does_not_test_noise():
    ref, fresh = _anchors(6)
    res = anchor_comparison(ref[:, 0], fresh, "0-10")
    assert res.noise is None and not res.noise_tested
    assert res.status == "steady" and any("noise not tested" in r for r in res.reasons)


def test_mappings_are_aligned_by_anchor_id():
    ref, fresh = _anchors(7, shift=1.0)
    ref_map = {f"a{i}": list(ref[i]) for i in range(N)}
    fresh_map = {f"a{i}": float(fresh[i, 0]) for i in reversed(range(N))}
    res = anchor_comparison(ref_map, fresh_map, (0, 10))
    assert res.shift == pytest.approx(anchor_comparison(ref, fresh, "0-10").shift)
    assert res.anchor_ids[0] == "a0"


def test_mismatched_anchors_raise_naming_them():
    ref = {"a": [1, 2], "b": [3, 3]}
    with pytest.raises(ReliabilityError, match=r"missing from fresh \['b'\].*not in the reference \['c'\]"):
        anchor_comparison(ref, {"a": 1, "c": 2}, "0-10")
    with pytest.raises(ReliabilityError, match="30 anchors but fresh has 29"):
        anchor_comparison(np.ones((30, 2)), np.ones(29), "0-10")


def test_nan_raises_unless_omitted():
    ref, fresh = _anchors(8)
    fresh[3, 0] = np.nan
    with pytest.raises(ReliabilityError, match=r"lack a score \(NaN\): \[3\]"):
        anchor_comparison(ref, fresh, "0-10")
    res = anchor_comparison(ref, fresh, "0-10", nan_policy="omit")
    assert res.n == N - 1 and res.n_omitted == 1


def test_empty_and_out_of_scale_input_raise():
    with pytest.raises(ReliabilityError, match="empty"):
        anchor_comparison({}, {}, "0-10")
    with pytest.raises(ReliabilityError, match="empty"):
        anchor_comparison([], [], "0-10")
    with pytest.raises(ScaleError, match="outside the scale"):
        anchor_comparison(np.full((N, 2), 5.0), np.full(N, 11.0), "0-10")
    with pytest.raises(ReliabilityError, match="margin"):
        anchor_comparison(np.ones((N, 2)), np.ones(N), "0-10", margin=math.nan)


def test_to_dict_is_json():
    ref, fresh = _anchors(9, shift=1.0)
    d = anchor_comparison(ref, fresh, "0-10").to_dict()
    back = json.loads(json.dumps(d, allow_nan=False))
    assert back["status"] == "drifted" and back["noise"]["reference_sd"] > 0
    assert back["agreement"]["statistic"] == "ICC(A,1)"


def _history(slope, runs=20, seed=0, sd=0.75):
    rng = np.random.default_rng(seed)
    mu = rng.uniform(2, 8, N)
    ref = _judge(rng, mu, sd, 2)
    return [anchor_comparison(ref, _judge(rng, mu, sd, 1, slope * (t + 1)), "0-10", n_permutations=99)
            for t in range(runs)]


def test_monitor_alarms_on_slow_drift():
    mon = drift_monitor(_history(0.06), n_paths=5000)  # 0.006 of the range per run
    assert mon.alarmed and mon.direction == "up"
    assert mon.first_alarm is not None and mon.first_alarm <= 20
    assert mon.steps[mon.first_alarm - 1].alarm


def test_monitor_is_quiet_on_a_stationary_series():
    mon = drift_monitor(_history(0.0, seed=3), n_paths=5000)
    assert not mon.alarmed and mon.first_alarm is None
    assert max(max(s.upper, s.lower) for s in mon.steps) < mon.decision_limit


def test_monitor_accepts_stored_dicts_and_serialises():
    hist = _history(0.0, runs=5, seed=4)
    a = drift_monitor(hist, n_paths=5000)
    b = drift_monitor([json.loads(json.dumps(c.to_dict())) for c in hist], n_paths=5000)
    assert [s.z for s in a.steps] == pytest.approx([s.z for s in b.steps])
    json.dumps(a.to_dict(), allow_nan=False)


def test_monitor_rejects_bad_input():
    with pytest.raises(ReliabilityError, match="at least one"):
        drift_monitor([])
    with pytest.raises(ReliabilityError, match="shift_se must be a finite number"):
        drift_monitor([{"shift": 0.1, "shift_se": math.nan, "n": 30, "reference_samples": 2, "fresh_samples": 1}])
    few = anchor_comparison(np.ones((5, 2)), np.ones(5), "0-10")
    with pytest.raises(ReliabilityError, match="too few anchors"):
        drift_monitor([few], n_paths=5000)


def test_decision_limit_grows_with_the_horizon():
    assert cusum_decision_limit(30, 2, 1, 40, n_paths=5000) > cusum_decision_limit(30, 2, 1, 10, n_paths=5000)


def _system(seed, judge_shift=0.0, change=0.0, noise_factor=1.0):
    rng = np.random.default_rng(seed)
    q = rng.uniform(2, 8, 200)
    before = _judge(rng, q, 0.75, 1)[:, 0]
    after = _judge(rng, q + change, 0.75 * noise_factor, 1, judge_shift)[:, 0]
    return paired_shift(before, after)


@pytest.mark.parametrize("scenario, anchors_kw, system_kw, expected", [
    ("judge shift only", {"shift": 1.0}, {"judge_shift": 1.0}, "judge drifted"),
    ("judge noise only", {"noise_factor": 3.0}, {"noise_factor": 3.0}, "judge drifted"),
    ("system change only", {}, {"change": 1.0}, "system changed"),
    ("neither", {}, {}, "none"),
    ("both", {"shift": 1.0}, {"judge_shift": 1.0, "change": -1.5}, "both"),
])
def test_attribution(scenario, anchors_kw, system_kw, expected):
    anchors = anchor_comparison(*_anchors(11, **anchors_kw), "0-10")
    res = attribute_change(anchors, _system(12, **system_kw))
    assert res.verdict == expected, (scenario, str(anchors), str(res))
    json.dumps(res.to_dict(), allow_nan=False)


def test_attribution_without_numbers_and_with_an_open_judge():
    assert attribute_change("steady", True).verdict == "system changed"
    assert attribute_change("steady", False).verdict == "none"
    assert attribute_change("inconclusive", True).verdict == "undetermined"
    drifted = attribute_change("drifted", True)
    assert drifted.verdict == "judge drifted" and "cannot be separated" in drifted.reason
    with pytest.raises(ReliabilityError, match="anchor status"):
        attribute_change("moved", True)
    with pytest.raises(ReliabilityError, match="standard error"):
        attribute_change("steady", 0.3)


def test_the_shift_level_is_the_smallest_that_keeps_95_percent_power():
    from scipy import stats

    from pytest_judgerel.stats import designed_shift_level

    # a quiet judge on 0-10: far more power than needed, so the level drops to its floor
    assert designed_shift_level(0.5, 40, 2, 1, 1.0, step=1.0) == 0.001
    # a noisy one on 1-5: the ceiling (0.025) is needed
    assert designed_shift_level(0.5, 40, 2, 1, 0.4, step=1.0) == 0.025
    level = designed_shift_level(1.0, 40, 2, 1, 1.0)
    assert 0.001 < level < 0.025
    # at that level the t test has 95% power against the margin at the noise's 80% upper bound
    var_up = 1.0 * 40 / stats.chi2.ppf(0.2, 40)
    lam = 1.0 * math.sqrt(40) / math.sqrt(var_up * 1.5)
    crit = stats.t.isf(level / 2, 39)
    assert stats.nct.sf(crit, 39, lam) == pytest.approx(0.95, abs=1e-6)
    assert designed_shift_level(1.0, 40, 1, 1, 1.0) == 0.025  # no within-anchor noise: the ceiling
    res = anchor_comparison(*_anchors(1), "0-10")
    assert res.noise_alpha == 0.025 and 0.001 <= res.shift_level <= 0.025
    assert res.to_dict()["shift_level"] == res.shift_level


def test_two_stages_ask_the_reserve_only_when_needed():
    from pytest_judgerel.stats import staged_anchor_comparison

    rng = np.random.default_rng(4)
    mu = rng.uniform(2, 8, 40)
    ref = {f"a{i}": list(r) for i, r in enumerate(_judge(rng, mu, 0.75, 2))}
    asked: list[list[str]] = []

    def judge(shift):
        def ask(ids):
            asked.append(list(ids))
            return {a: float(np.clip(np.round(mu[int(a[1:])] + shift + rng.normal(0, 0.75)), 0, 10)) for a in ids}
        return ask

    stages = []
    for _ in range(6):
        asked.clear()
        res = staged_anchor_comparison(ref, judge(0.0), "0-10")
        assert asked[0] == [f"a{i}" for i in range(30)] and res.screened == 30 and res.status == "steady"
        assert res.calls == sum(len(a) for a in asked) == 40 - res.reserve_skipped
        stages.append(len(asked))
    assert 1 in stages  # clearly steady: the reserve is not asked
    asked.clear()
    res = staged_anchor_comparison(ref, judge(1.5), "0-10")
    assert res.status == "drifted" and len(asked) == 2 and res.n == 40 and res.first_stage is not None
    assert res.first_stage.n == 30 and res.to_dict()["first_stage"]["n"] == 30
    # the monitor follows the first stage, which every run judges
    mon = drift_monitor([res.to_dict()], n_paths=5000)
    assert mon.n_anchors == 30 and mon.steps[0].shift == pytest.approx(res.first_stage.shift)
    with pytest.raises(ReliabilityError, match="anchor_id"):
        staged_anchor_comparison(np.ones((40, 2)), judge(0.0), "0-10")


def test_a_cancelling_system_change_is_named():
    anchors = anchor_comparison(*_anchors(11, shift=1.0), "0-10")
    res = attribute_change(anchors, 0.0, 0.05)  # the suite did not move although the judge did
    assert res.verdict == "both" and "opposite of the judge's shift" in res.reason
