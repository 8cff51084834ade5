"""Sequential gates: stop early once the cap's verdict is settled, the fixed verdict at the cap."""

import math

import numpy as np
import pytest

from pytest_judgerel.errors import ReliabilityError
from pytest_judgerel.stats import icc
from pytest_judgerel.stats.pass_rate import JudgeCalibration, corrected_pass_rate
from pytest_judgerel.stats.ppi import ppi_mean
from pytest_judgerel.stats.sequential import (
    LookSchedule,
    icc_fixed_verdict,
    icc_sequential_look,
    items_schedule,
    pass_rate_cutoff,
    pass_rate_sequential_look,
    human_mean_sequential_look,
    repeats_schedule,
)

CAP = 10


def _judge(seed, rho, n=40, k=CAP, offsets=0.0):
    """Items x repeats with true ICC(1,1) ``rho`` (plus repeat offsets of variance ``offsets``)."""
    rng = np.random.default_rng(seed)
    return (math.sqrt(rho) * rng.normal(size=(n, 1)) + math.sqrt(1 - rho) * rng.normal(size=(n, k))
            + math.sqrt(offsets) * rng.normal(size=(1, k)))


def _run(x, threshold=0.7, **kw):
    for r in repeats_schedule(x.shape[1]).looks:
        look = icc_sequential_look(x[:, :r], threshold=threshold, cap=x.shape[1], **kw)
        if look.stopped:
            return look
    raise AssertionError("never stopped")


# --------------------------------------------------------------------------- schedules
def test_schedules():
    assert repeats_schedule(10).looks == tuple(range(2, 11))
    assert repeats_schedule(5, first=3).looks == (3, 4, 5)
    assert items_schedule(1000).looks == tuple(range(100, 1001, 100))
    assert items_schedule(120).looks == (50, 100, 120)  # batches of at least 50
    s = items_schedule(1000, batch=300)
    assert s.looks == (300, 600, 900, 1000) and s.cap == 1000
    assert s.look_number(600) == 2 and s.next_size(600) == 900 and s.next_size(1000) is None
    with pytest.raises(ReliabilityError, match="past the cap"):
        repeats_schedule(3, first=4)
    with pytest.raises(ReliabilityError, match="cap"):
        repeats_schedule(1)


# --------------------------------------------------------------------------- ICC over repeats
def test_reliable_judge_stops_early_with_pass():
    look = _run(_judge(1, 0.95))
    assert look.decision == "pass" and look.used <= 3 and look.p_pass_at_cap >= 0.98
    assert look.share_of_cap <= 0.3 and "settled" in look.reason


def test_unreliable_judge_stops_early_with_fail():
    look = _run(_judge(2, 0.3))
    assert look.decision == "fail" and look.used == 2 and look.p_pass_at_cap <= 0.02


@pytest.mark.parametrize("seed", [6, 9])
def test_borderline_judge_runs_to_the_cap_and_gives_the_fixed_verdict(seed):
    x = _judge(seed, 0.7)  # true ICC on the threshold; seeds whose prefixes stay unsettled
    look = _run(x)
    assert look.used == CAP and look.at_cap and look.next_size is None
    fixed = icc_fixed_verdict(x, 0.7)
    assert (look.decision == "pass") == fixed.passed and look.observed == fixed.tested
    assert look.p_pass_at_cap == float(fixed.passed)


def test_a_continue_names_the_next_look():
    x = _judge(6, 0.7)
    look = icc_sequential_look(x[:, :4], threshold=0.7, cap=CAP)
    assert look.decision == "continue" and look.next_size == 5 and look.look == 3
    assert 0.02 < look.p_pass_at_cap < 0.98


@pytest.mark.parametrize("form", ["A,1", "A,k", "C,1", "C,k", "1,1", "1,k"])
@pytest.mark.parametrize("use", ["estimate", "ci_low"])
def test_the_cap_verdict_is_the_fixed_rule_exactly(form, use):
    x = _judge(3, 0.6, k=6, offsets=0.1)
    res = icc(x, form)  # the gate: icc(ratings, form, confidence) and value / ci_low >= threshold
    tested = res.value if use == "estimate" else res.ci_low
    for threshold in (tested - 1e-9, tested, tested + 1e-9):
        look = icc_sequential_look(x, threshold=threshold, cap=6, form=form, use=use)
        assert look.decision == ("pass" if tested >= threshold else "fail")
        assert look.observed == tested


def test_a_k_at_the_cap_uses_the_caps_k():
    x = _judge(4, 0.5, k=8)
    look = icc_sequential_look(x, threshold=0.0, cap=8, form="A,k")
    assert look.observed == pytest.approx(icc(x, "A,k").value, abs=1e-15)
    assert look.observed != pytest.approx(icc(x[:, :2], "A,k").value)


def test_ci_low_rule_predicts_the_stricter_verdict():
    x = _judge(5, 0.8)
    est = icc_sequential_look(x[:, :3], threshold=0.7, cap=CAP)
    low = icc_sequential_look(x[:, :3], threshold=0.7, cap=CAP, use="ci_low", n_sim=200)
    assert low.p_pass_at_cap <= est.p_pass_at_cap
    assert "lower CI bound" in low.rule


def test_deterministic_given_a_seed():
    x = _judge(6, 0.7)[:, :4]
    a = icc_sequential_look(x, threshold=0.7, cap=CAP, seed=11)
    b = icc_sequential_look(x, threshold=0.7, cap=CAP, seed=11)
    c = icc_sequential_look(x, threshold=0.7, cap=CAP, seed=12)
    assert a == b
    assert a.p_pass_at_cap != c.p_pass_at_cap or a.n_sim != c.n_sim


def test_an_unsettled_look_may_stop_simulating_without_changing_the_decision():
    x = _judge(6, 0.7)[:, :4]
    quick = icc_sequential_look(x, threshold=0.7, cap=CAP, n_sim=400)
    assert quick.decision == "continue" and quick.n_sim < 400  # passes > eps_fail n_sim, fails > eps_pass n_sim


def test_a_constant_judge_fails_without_nan():
    x = np.full((30, 3), 4.0)
    look = icc_sequential_look(x, threshold=0.5, cap=CAP)
    assert look.decision == "fail" and look.p_pass_at_cap == 0.0 and look.observed is None
    at_cap = icc_sequential_look(np.full((30, 4), 4.0), threshold=0.5, cap=4)
    assert at_cap.decision == "fail" and at_cap.observed is None and "identical" in at_cap.reason
    for value in look.to_dict().values():
        assert not (isinstance(value, float) and math.isnan(value))


def test_perfect_agreement_so_far_passes():
    rng = np.random.default_rng(0)
    x = np.repeat(rng.integers(0, 6, size=(40, 1)).astype(float), 3, axis=1)
    look = icc_sequential_look(x, threshold=0.8, cap=CAP)
    assert look.decision == "pass" and look.observed == 1.0


def test_missing_ratings_are_named_or_omitted():
    x = _judge(1, 0.95)[:, :3]
    x[5, 1] = np.nan
    with pytest.raises(ReliabilityError, match=r"item\(s\) \[5\]"):
        icc_sequential_look(x, threshold=0.7, cap=CAP)
    look = icc_sequential_look(x, threshold=0.7, cap=CAP, nan_policy="omit")
    assert look.decision == "pass"


@pytest.mark.parametrize("kwargs, match", [
    ({"cap": 3}, "more than the cap"),
    ({"threshold": float("nan")}, "threshold must be a finite number"),
    ({"eps": 0.5}, "eps must be"),
    ({"use": "ci_high"}, "use must be"),
    ({"form": "Z,1"}, "unknown ICC form"),
    ({"confidence": 1.0}, "confidence"),
    ({"n_sim": 0}, "n_sim"),
    ({"nan_policy": "drop"}, "nan_policy"),
    ({"schedule": items_schedule(10)}, "counts items"),
    ({"schedule": LookSchedule((2, 3), "repeats")}, "cap is 10"),
])
def test_icc_input_errors_name_their_cause(kwargs, match):
    args = {"threshold": 0.7, "cap": CAP, **kwargs}
    with pytest.raises(ReliabilityError, match=match):
        icc_sequential_look(_judge(1, 0.9)[:, :4], **args)


def test_one_repeat_is_not_a_look():
    with pytest.raises(ReliabilityError, match="at least 2 repeats"):
        icc_sequential_look(_judge(1, 0.9)[:, :1], threshold=0.7, cap=CAP)


# --------------------------------------------------------------------------- pass rate over items
CAL = JudgeCalibration(0.9, 0.95, 100, 400)


@pytest.mark.parametrize("use", ["estimate", "ci_low"])
def test_pass_rate_cutoff_is_the_fixed_rules_step(use):
    n = 60
    cut = pass_rate_cutoff(n, min_rate=0.8, calibration=CAL, use=use)
    assert 0 < cut.count <= n
    for count in range(n + 1):
        res = corrected_pass_rate(count, n, calibration=CAL)
        tested = res.value if use == "estimate" else res.ci_low
        assert (tested >= 0.8) == (count >= cut.count), count


def test_pass_rate_cutoff_edges():
    assert pass_rate_cutoff(50, min_rate=0.0, calibration=CAL).count == 0
    assert pass_rate_cutoff(50, min_rate=1.0, calibration=CAL, use="ci_low").count == 51  # nothing passes


def _beta_binomial_tail(need, t, a, b):
    """P(S >= need), S ~ BetaBinomial(t, a, b), summed term by term with the standard library."""
    lbeta = lambda x, y: math.lgamma(x) + math.lgamma(y) - math.lgamma(x + y)  # noqa: E731
    return sum(math.comb(t, j) * math.exp(lbeta(j + a, t - j + b) - lbeta(a, b)) for j in range(need, t + 1))


def test_pass_rate_predictive_is_the_beta_binomial():
    cut = pass_rate_cutoff(1000, min_rate=0.9, calibration=CAL)
    look = pass_rate_sequential_look(88, 100, n_cap=1000, min_rate=0.9, calibration=CAL, cutoff=cut)
    expected = _beta_binomial_tail(cut.count - 88, 900, 0.5 + 88, 0.5 + 12)
    assert look.p_pass_at_cap == pytest.approx(expected, abs=1e-12)
    assert look.decision == "continue" and look.next_size == 120  # pass_rate_schedule(1000): 20, 70, 120, ...


def test_pass_rate_stops_early_both_ways_and_is_certain_when_curtailed():
    high = pass_rate_sequential_look(99, 100, n_cap=1000, min_rate=0.9, calibration=CAL)
    low = pass_rate_sequential_look(70, 100, n_cap=1000, min_rate=0.9, calibration=CAL)
    assert high.decision == "pass" and low.decision == "fail" and high.used == 100
    cut = pass_rate_cutoff(1000, min_rate=0.9, calibration=CAL)
    done = pass_rate_sequential_look(cut.count, 950, n_cap=1000, min_rate=0.9, calibration=CAL)
    assert done.decision == "pass" and done.p_pass_at_cap == 1.0 and "whatever" in done.reason
    lost = pass_rate_sequential_look(cut.count - 51, 950, n_cap=1000, min_rate=0.9, calibration=CAL)
    assert lost.decision == "fail" and lost.p_pass_at_cap == 0.0


@pytest.mark.parametrize("count", [0, 850, 864, 865, 866, 1000])
def test_pass_rate_at_the_cap_is_the_fixed_rule(count):
    res = corrected_pass_rate(count, 1000, calibration=CAL)
    look = pass_rate_sequential_look(count, 1000, n_cap=1000, min_rate=0.9, calibration=CAL)
    assert (look.decision == "pass") == (res.value >= 0.9)


def test_pass_rate_takes_verdicts_and_checks_inputs():
    verdicts = [True] * 95 + [False] * 5
    assert pass_rate_sequential_look(verdicts, n_cap=1000, min_rate=0.9, calibration=CAL).used == 100
    with pytest.raises(ReliabilityError, match="more than the cap"):
        pass_rate_sequential_look(90, 100, n_cap=50, min_rate=0.9, calibration=CAL)
    with pytest.raises(ReliabilityError, match="no better than chance"):
        pass_rate_sequential_look(90, 100, n_cap=1000, min_rate=0.9,
                                  calibration=JudgeCalibration(0.5, 0.5, 10, 10))
    with pytest.raises(ReliabilityError, match="prior"):
        pass_rate_sequential_look(90, 100, n_cap=1000, min_rate=0.9, calibration=CAL, prior=(0.0, 1.0))
    with pytest.raises(ReliabilityError, match="cutoff was computed"):
        pass_rate_sequential_look(90, 100, n_cap=1000, min_rate=0.9, calibration=CAL,
                                  cutoff=pass_rate_cutoff(500, min_rate=0.9, calibration=CAL))
    with pytest.raises(ReliabilityError, match="min_rate"):
        pass_rate_cutoff(100, min_rate=float("nan"), calibration=CAL)


# --------------------------------------------------------------------------- PPI++ human mean
def _ppi_data(seed, shift):
    rng = np.random.default_rng(seed)
    y = rng.normal(3 + shift, 1, 60)
    f = y + rng.normal(0.3, 0.5, 60)
    fu = rng.normal(3 + shift, 1, 1000) + rng.normal(0.3, 0.5, 1000)
    return f, y, fu


def test_human_mean_stops_early_far_from_the_threshold():
    f, y, fu = _ppi_data(0, 1.0)
    look = human_mean_sequential_look(f, y, fu[:100], n_unlabeled_cap=1000, min_mean=3.0, n_sim=100)
    assert look.decision == "pass" and look.used == 100


def test_human_mean_at_the_cap_is_the_fixed_rule():
    f, y, fu = _ppi_data(1, 0.0)
    res = ppi_mean(f, y, fu)
    for use, tested in (("estimate", res.value), ("ci_low", res.ci_low)):
        for thr in (tested - 1e-9, tested + 1e-9):
            look = human_mean_sequential_look(f, y, fu, n_unlabeled_cap=1000, min_mean=thr, use=use)
            assert (look.decision == "pass") == (tested >= thr) and look.observed == tested


def test_human_mean_input_errors():
    f, y, fu = _ppi_data(2, 0.0)
    with pytest.raises(ReliabilityError, match="more than the cap"):
        human_mean_sequential_look(f, y, fu, n_unlabeled_cap=500, min_mean=3.0)
    with pytest.raises(ReliabilityError, match="NaN|missing|finite"):
        human_mean_sequential_look(f, y, np.r_[fu[:99], np.nan], n_unlabeled_cap=1000, min_mean=3.0)


def test_missing_ratings_at_the_cap_fail_as_the_gate_does_and_say_why():
    x = _judge(1, 0.95, k=4)
    x[3, 2] = np.nan
    look = icc_sequential_look(x, threshold=0.7, cap=4)
    assert look.decision == "fail" and look.observed is None and "missing" in look.reason
    assert icc_sequential_look(x, threshold=0.7, cap=4, nan_policy="omit").decision == "pass"


def test_human_mean_completions_follow_the_bayesian_bootstrap():
    """p_cap of the vectorised look against a plain loop of the same predictive (Dirichlet weights,
    then the remaining scores drawn from them, ppi_mean on each completion), with the threshold at
    the loop's upper quartile: a sampler that dropped the weights' spread would read far lower."""
    f, y, fu = _ppi_data(4, 0.0)
    seen = fu[:150]
    rng = np.random.default_rng(99)
    ref = np.array([ppi_mean(f, y, np.concatenate(
        [seen, seen[rng.choice(seen.size, size=850, p=rng.dirichlet(np.ones(seen.size)))]])).value
        for _ in range(1000)])
    thr = float(np.quantile(ref, 0.75))
    look = human_mean_sequential_look(f, y, seen, n_unlabeled_cap=1000, min_mean=thr, n_sim=2000, eps=0.001)
    assert look.decision == "continue"
    assert abs(look.p_pass_at_cap - 0.25) < 0.06  # MC sd of the difference about 0.017
