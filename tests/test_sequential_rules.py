"""The sequential rules' edges: stop levels at their exact boundary, the simulation's early stop,
schedules for caps not divisible by their step, "every remaining item must pass", looks on a first
share of the items, the verdict of the settling look, the record's levels, the hashed judging
order, an ICC gate that runs to its cap, and the planned calls."""

from __future__ import annotations

import hashlib
import json
import random
import re

import numpy as np
import pytest
from scipy.stats import binom

from pytest_judgerel import Judge, assert_icc_above
from pytest_judgerel.gates.sequential import SequentialRun
from pytest_judgerel.judging.pending import judging_order
from pytest_judgerel.stats import sequential as seq
from pytest_judgerel.stats.pass_rate import JudgeCalibration
from pytest_judgerel.stats.sequential import (
    icc_fixed_verdict,
    icc_sequential_look,
    items_schedule,
    pass_rate_cutoff,
    pass_rate_schedule,
    pass_rate_sequential_look,
    repeats_schedule,
)
from pytest_judgerel.stats.sequential_plan import expected_pass_rate_share, plan_icc, plan_pass_rate

PERFECT = JudgeCalibration(1.0, 1.0, 100, 400)


# ---------------------------------------------------------------------------- stop levels
@pytest.mark.parametrize(("eps_pass", "eps_fail"), [(0.01, 0.03), (0.25, 0.125), (0.0625, 0.0625)])
def test_the_stop_levels_hold_at_their_exact_boundary(eps_pass, eps_fail):
    assert seq._decide(1 - eps_pass, eps_pass, eps_fail, "g")[0] == "pass"
    assert seq._decide(np.nextafter(1 - eps_pass, 0), eps_pass, eps_fail, "g")[0] == "continue"
    assert seq._decide(eps_fail, eps_pass, eps_fail, "g")[0] == "fail"
    assert seq._decide(np.nextafter(eps_fail, 1), eps_pass, eps_fail, "g")[0] == "continue"


def test_the_simulation_stops_early_only_once_continue_is_certain():
    calls = []

    def half(b):  # half of every block passes
        calls.append(b)
        return b // 2

    # after one block: 50 passes > 0.03 x 400 and 50 fails > 0.01 x 400: no stop can come of the rest
    assert seq._simulate_until_settled(half, 400, 0.01, 0.03, 100) == (50, 100) and calls == [100]
    # every completion passes: a pass stop stays possible, so all 400 run
    assert seq._simulate_until_settled(lambda b: b, 400, 0.01, 0.03, 100) == (400, 400)
    # 12 passes of 400 is exactly eps_fail x 400: not yet "more than", so the run goes on
    assert seq._simulate_until_settled(lambda b: 3, 400, 0.01, 0.03, 100) == (12, 400)


# ---------------------------------------------------------------------------- schedules
def test_batches_for_caps_not_divisible_by_their_step():
    assert items_schedule(1234).looks == tuple(range(124, 1234, 124)) + (1234,)  # ceil(1234 / 10) = 124
    assert items_schedule(57, batch=20).looks == (20, 40, 57)
    assert pass_rate_schedule(73).looks == (20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 73)  # steps of max(5, ceil(73 / 20))
    assert pass_rate_schedule(487).looks == tuple(range(20, 487, 13)) + (487,)  # ceil(487 / 40) = 13
    assert pass_rate_schedule(15).looks == (15,)  # fewer items than the first look: the cap only


def test_icc_looks_start_on_a_first_share_of_the_items():
    s = repeats_schedule(3, n_items=100, probe=False)
    assert s.stages == ((34, 2, 0), (68, 2, 0), (None, 2, 0), (None, 3, 0)) and s.n_items == 100
    assert [s.stage_number(m, r) for m, r, _ in s.stages] == [1, 2, 3, 4]
    assert repeats_schedule(5, n_items=20).item_looks == (10,)  # at least ITEM_LOOK_MIN items a look
    assert repeats_schedule(5, n_items=10).item_looks == ()
    assert s.to_dict()["item_looks"] == [34, 68] and "item_looks" not in repeats_schedule(3).to_dict()


def test_the_offsets_probe_follows_the_first_all_items_look():
    s = repeats_schedule(7, n_items=150)
    assert s.probe == 8 and s.stages[:4] == ((50, 2, 0), (100, 2, 0), (None, 2, 0), (None, 2, 8))
    assert s.stages[-1] == (None, 7, 8) and len(s.stages) == 9
    assert [s.stage_number(m, r, bool(p)) for m, r, p in s.stages] == list(range(1, 10))
    assert s.to_dict()["probe"] == 8 and "probe" not in repeats_schedule(7, n_items=150, probe=False).to_dict()
    assert repeats_schedule(7, n_items=30).probe == 3  # at least PROBE_MIN items
    assert repeats_schedule(2, n_items=150).probe == 0 and repeats_schedule(7).probe == 0  # no repeat to probe


def test_the_offsets_probe_settles_what_two_repeats_cannot():
    """Two repeats leave the repeats' offsets on 1 df (a heavy-tailed posterior); every repeat on 15
    items pins them, so the same look settles (seeds where the plain look continues)."""
    s = repeats_schedule(7, n_items=150)
    settled = 0
    for seed in (0, 2, 3):
        rng = np.random.default_rng(seed)
        x = rng.normal(size=(150, 1)) * 0.85 + rng.normal(size=(150, 7)) * 0.5 + rng.normal(size=(1, 7)) * 0.2
        plain = icc_sequential_look(x[:, :2], threshold=0.55, cap=7, schedule=s)
        probed = icc_sequential_look(x[:, :2], threshold=0.55, cap=7, schedule=s, probe=x[:15])
        assert plain.decision == "continue" and probed.p_pass_at_cap > plain.p_pass_at_cap
        settled += probed.decision == "pass"
        assert probed.look == 4 and probed.probe_items == 15 and "every repeat on 15 items" in str(probed)
        assert probed.share_of_cap == pytest.approx((150 * 2 + 15 * 5) / (150 * 7))  # the probe's calls count
    assert settled == 3
    with pytest.raises(seq.ReliabilityError, match="every repeat of the cap"):
        icc_sequential_look(x[:, :2], threshold=0.55, cap=7, schedule=s, probe=x[:15, :6])


def test_a_look_on_a_first_share_of_the_items_is_not_the_cap():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(60, 1)) + 0.2 * rng.normal(size=(60, 2))  # ICC about 0.96: settles at once
    s = repeats_schedule(2, n_items=60)
    look = icc_sequential_look(x[:20], threshold=0.7, cap=2, schedule=s)
    assert look.partial and not look.at_cap and look.items == 20 and look.items_cap == 60
    assert look.decision == "pass" and look.share_of_cap == pytest.approx(20 / 60)
    assert "40 items not drawn yet" in look.reason and "on 20/60 items" in str(look)
    mid = np.sqrt(0.7) * rng.normal(size=(20, 1)) + np.sqrt(0.3) * rng.normal(size=(20, 2))
    unsure = icc_sequential_look(mid, threshold=float(icc_fixed_verdict(mid, 0.5).tested), cap=2, schedule=s,
                                 eps=0.001)
    assert unsure.decision == "continue" and unsure.next_size == 2  # the same repeats, on more items
    with pytest.raises(seq.ReliabilityError, match="more than the cap's 60"):
        icc_sequential_look(rng.normal(size=(61, 2)), threshold=0.7, cap=2, schedule=s)


# ---------------------------------------------------------------------------- pass rate
def test_every_remaining_item_must_pass():
    cut = pass_rate_cutoff(100, min_rate=0.9, calibration=PERFECT)
    count = cut.count - 10
    # count of 90 passed: all 10 remaining must pass; the predictive is P(10 of 10) under the Jeffreys posterior
    look = pass_rate_sequential_look(count, 90, n_cap=100, min_rate=0.9, calibration=PERFECT, cutoff=cut)
    a, b = 0.5 + count, 0.5 + 90 - count
    expected = float(np.prod([(a + j) / (a + b + j) for j in range(10)]))
    assert look.p_pass_at_cap == pytest.approx(expected, rel=1e-9) and look.decision == "continue"
    # one more failure and the cutoff is out of reach: a certain fail
    out = pass_rate_sequential_look(count - 1, 90, n_cap=100, min_rate=0.9, calibration=PERFECT, cutoff=cut)
    assert out.p_pass_at_cap == 0.0 and out.decision == "fail" and "whatever the 10 remaining" in out.reason


# ---------------------------------------------------------------------------- the driver's run
def _run_with(decision, used, cap):
    look = seq.SequentialLook(decision, 1, used, cap, "repeats", 0.995 if decision == "pass" else 0.01, 0.8, 0.7,
                              0.01, 0.03, "rule", "why")
    stop = "cap" if used >= cap else "settled"
    return SequentialRun("repeats", used, cap, used * 10, cap * 10, (look,), stop, "why")


def test_the_verdict_is_the_settling_looks_before_the_cap_and_the_rules_at_it():
    early_pass, early_fail = _run_with("pass", 2, 10), _run_with("fail", 2, 10)
    assert early_pass.verdict(False) is True and early_fail.verdict(True) is False  # the look decides
    at_cap = _run_with("pass", 10, 10)
    assert at_cap.verdict(False) is False and at_cap.verdict(True) is True  # the gate's own rule decides


def test_the_record_carries_the_looks_levels():
    block = _run_with("fail", 3, 10).to_dict()
    assert (block["eps_pass"], block["eps_fail"]) == (0.01, 0.03) and block["rule"] == "rule"
    assert block["looks"][0]["items"] is None and "plan" not in block


def test_items_are_judged_in_the_order_of_their_ids_hashes():
    ids = ["b", "a", "item-10", "item-2", "z"]
    by_hash = sorted(range(len(ids)), key=lambda i: hashlib.sha256(ids[i].encode()).hexdigest())
    assert judging_order(ids) == by_hash
    assert sorted(ids[i] for i in judging_order(ids)) == sorted(ids)
    moved = ids[1:] + ids[:1]  # the data set's order does not change the judging order
    assert [moved[i] for i in judging_order(moved)] == [ids[i] for i in by_hash]


def test_an_icc_gate_runs_to_its_cap_when_no_look_settles(scripted, monkeypatch):
    def reply(messages, **params):
        item = int(re.search(r"sentence-(\d+)-", json.dumps(messages)).group(1))
        return str(min(5, max(0, round(item % 6 + random.Random(f"{item} {params['sample_seed']}").gauss(0, 1.2)))))

    monkeypatch.setattr(seq, "_decide", lambda p, *a: ("continue", "unsettled"))  # no look before the cap stops
    scripted("scripted/seq-to-cap", reply)
    judge = Judge(model="scripted/seq-to-cap", template="stsb", sequential=True, repeats=4)
    items = [{"id": f"i{i}", "sentence1": f"sentence-{i}-a", "sentence2": "b"} for i in range(30)]
    from pytest_judgerel.session.recording import recording

    with recording() as rec:
        result = assert_icc_above(judge.rate(items), 0.2)
    (block,) = [r["sequential"] for r in rec.records if r["kind"] == "icc"]
    assert block["stop"] == "cap" and not block["early"] and block["calls"] == block["cap_calls"] == 120
    assert [lk["items"] for lk in block["looks"]] == [10, 20, None, None, None, None]
    assert [lk["probe_items"] for lk in block["looks"]] == [0, 0, 0, 3, 3, 0]  # the probe: 3 items x 4 repeats
    fixed = Judge(model="scripted/seq-to-cap", template="stsb", repeats=4).rate(items)
    assert icc_fixed_verdict(fixed, 0.2).passed and result.value == pytest.approx(icc_fixed_verdict(fixed, 0.2).tested)


def test_a_gate_that_stops_at_the_offsets_probe_draws_the_probes_cells(scripted, monkeypatch):
    def reply(messages, **params):
        item = int(re.search(r"sentence-(\d+)-", json.dumps(messages)).group(1))
        return str(min(5, max(0, round(item % 6 + random.Random(f"{item} {params['sample_seed']}").gauss(0, 0.5)))))

    calls = []

    def decide(p, *a):  # the first three looks continue, the probe's look settles
        calls.append(p)
        return ("pass", "settled") if len(calls) == 4 else ("continue", "unsettled")

    monkeypatch.setattr(seq, "_decide", decide)
    scripted("scripted/seq-probe", reply)
    judge = Judge(model="scripted/seq-probe", template="stsb", sequential=True, repeats=4)
    items = [{"id": f"i{i}", "sentence1": f"sentence-{i}-a", "sentence2": "b"} for i in range(30)]
    from pytest_judgerel.session.recording import recording

    with recording() as rec:
        assert_icc_above(judge.rate(items), 0.2)
    (block,) = [r["sequential"] for r in rec.records if r["kind"] == "icc"]
    assert block["stop"] == "settled" and block["early"] and block["used"] == 2
    assert block["calls"] == 30 * 2 + 3 * 2 and block["cap_calls"] == 120  # 2 repeats, + repeats 3-4 of 3 items
    assert block["looks"][-1]["probe_items"] == 3 and len(block["looks"]) == 4


# ---------------------------------------------------------------------------- the plan
def test_the_pass_rate_plan_is_the_rules_exact_expectation():
    cut = pass_rate_cutoff(60, min_rate=0.8, calibration=PERFECT)
    sched = pass_rate_schedule(60)

    def rule(count, seen):
        return pass_rate_sequential_look(count, seen, n_cap=60, min_rate=0.8, calibration=PERFECT, cutoff=cut).decision

    # by enumeration over the pass counts at each look (the rule depends on the count only)
    p, expected = 0.9, 0.0
    alive = {0: 1.0}
    seen = 0
    for size in sched.looks:
        step = size - seen
        grown: dict[int, float] = {}
        for c, w in alive.items():
            for k in range(step + 1):
                grown[c + k] = grown.get(c + k, 0.0) + w * binom.pmf(k, step, p)
        seen = size
        alive = {}
        for c, w in grown.items():
            if size == 60 or rule(c, seen) != "continue":
                expected += w * size / 60
            else:
                alive[c] = w
    assert expected_pass_rate_share(60, p, cut, rule=rule) == pytest.approx(expected, abs=1e-9)
    plan = plan_pass_rate(60, min_rate=0.8, calibration=PERFECT, truth=0.9)
    assert plan.cap_calls == 60 and plan.expected_calls == pytest.approx(60 * expected, abs=1e-6)
    assert plan.basis == "true pass rate 0.9" and "stated prior" in plan_pass_rate(60, min_rate=0.8,
                                                                                   calibration=PERFECT).basis


def test_the_pass_rate_plan_counts_every_call_of_an_item():
    """With ``repeats`` calls per item both the cap and the expected calls scale by them (the share
    is the rule's, whatever the calls per item)."""
    one = plan_pass_rate(60, min_rate=0.8, calibration=PERFECT, truth=0.9)
    three = plan_pass_rate(60, min_rate=0.8, calibration=PERFECT, truth=0.9, repeats=3)
    assert three.cap_calls == 180
    assert 0 < one.expected_calls < 60
    assert three.expected_calls == pytest.approx(3 * one.expected_calls, rel=1e-12)
    assert three.expected_share == pytest.approx(one.expected_share, rel=1e-12)


def test_the_icc_plan_runs_the_rule_on_simulated_judges():
    far = plan_icc(60, 6, 0.5, truth=0.9, runs=4)
    near = plan_icc(60, 6, 0.5, truth=0.5, runs=4)
    assert far.cap_calls == near.cap_calls == 360
    assert 0 < far.expected_calls < near.expected_calls <= 360 and far.expected_share <= 0.2
    assert far.to_dict()["basis"] == "true ICC 0.9, repeats without offsets"


def test_a_dry_run_plans_the_human_means_cap(scripted, monkeypatch):
    from pytest_judgerel import assert_human_mean_above
    from pytest_judgerel.gates import sequential as driver
    from pytest_judgerel.session.recording import recording

    monkeypatch.setattr(driver, "_dry_run", lambda: True)
    scripted("scripted/seq-hm-dry", lambda messages, **p: "4")
    judge = Judge(model="scripted/seq-hm-dry", template="stsb", sequential=True, repeats=1)
    items = [{"id": f"l{i}", "sentence1": f"sentence-{i}-l", "sentence2": "b"} for i in range(30)]
    unlabeled = [{"id": f"u{i}", "sentence1": f"sentence-{i}-u", "sentence2": "c"} for i in range(200)]
    with recording(report_only=True) as rec:
        assert_human_mean_above(judge.rate(items), [4, 3] * 15, judge.rate(unlabeled), min_mean=3.0)
    (block,) = [r["sequential"] for r in rec.records if r["kind"] == "human_mean"]
    assert block["stop"] == "fixed" and block["calls"] == block["cap_calls"] == 200 and "dry run" in block["reason"]
    assert block["plan"] == {"cap_calls": 200, "expected_calls": 200.0, "expected_share": 1.0,
                             "basis": "the cap (no model)"}
