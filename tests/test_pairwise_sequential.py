"""Pairwise gates in sequential mode: the stop rule's boundaries (a settled pass, a settled fail,
the undecided middle), the cap decides by the fixed gate's own rule, and end to end through a
loopback server: a clearly better candidate stops before its cap with fewer upstream requests
than the fixed run, a dry run plans the cap and its expected calls, a budget stop mid-draw leaves
a record with the sequential block."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from reported_run import run_reported
from test_pairwise_gates import _right, shown
from pytest_judgerel.stats.pairwise import win_rate
from pytest_judgerel.stats.sequential_pairwise import (COMPARISON_FIRST, comparison_schedule, COMPARISON_EPS_FAIL, COMPARISON_EPS_PASS,
                                                       comparison_sequential_look, expected_comparison_share)
from pytest_judgerel.testing.fake_server import FakeLLMServer

N = 120


def _outcomes(scores) -> dict[str, list[float]]:
    return {f"i{k}": list(s) for k, s in enumerate(scores)}


def test_clear_wins_stop_with_pass_and_clear_losses_with_fail_at_the_first_look():
    wins = _outcomes([[1.0, 1.0]] * 27 + [[1.0, 0.0]] * 3)
    losses = _outcomes([[0.0, 0.0]] * 24 + [[1.0, 0.0]] * 6)
    up = comparison_sequential_look(wins, n_cap=200, threshold=0.45, alpha=0.05)
    down = comparison_sequential_look(losses, n_cap=200, threshold=0.45, alpha=0.05)
    assert up.decision == "pass" and up.p_pass_at_cap >= 1 - COMPARISON_EPS_PASS and up.look == 1
    assert down.decision == "fail" and down.p_pass_at_cap <= COMPARISON_EPS_FAIL
    assert not up.at_cap and up.used == COMPARISON_FIRST and up.cap == 200


def test_a_candidate_near_the_threshold_draws_more_and_its_p_cap_rises_with_the_wins():
    rng = np.random.default_rng(3)
    base = rng.choice([0.0, 0.5, 1.0], size=(40, 2), p=[0.4, 0.15, 0.45])
    near = comparison_sequential_look(_outcomes(base), n_cap=200, threshold=0.45, alpha=0.05)
    assert near.decision == "continue" and COMPARISON_EPS_FAIL < near.p_pass_at_cap < 1 - COMPARISON_EPS_PASS
    better = base.copy()
    better[:6] = 1.0  # six more items won outright
    higher = comparison_sequential_look(_outcomes(better), n_cap=200, threshold=0.45, alpha=0.05)
    assert higher.p_pass_at_cap > near.p_pass_at_cap


def test_ties_only_do_not_settle_a_pass_at_the_first_look():
    # without weight on unseen wins and losses the predictive would hold only ties (a constant: no spread)
    ties = comparison_sequential_look(_outcomes([[1.0, 0.0]] * COMPARISON_FIRST), n_cap=200, threshold=0.45,
                                      alpha=0.05)
    assert ties.decision == "continue"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_at_the_cap_the_fixed_gates_rule_decides(seed):
    rng = np.random.default_rng(seed)
    data = _outcomes(rng.choice([0.0, 0.5, 1.0], size=(60, 2), p=[0.35, 0.2, 0.45]))
    low = win_rate(data, confidence=0.9).ci_low
    for threshold in (low - 0.01, low + 0.01):
        look = comparison_sequential_look(data, n_cap=60, threshold=threshold, alpha=0.05)
        assert look.at_cap and look.decision == ("pass" if low > threshold else "fail")
        assert look.p_pass_at_cap == (1.0 if low > threshold else 0.0)


def test_more_items_than_the_cap_is_an_error():
    from pytest_judgerel.errors import ReliabilityError

    with pytest.raises(ReliabilityError, match="never draws past its cap"):
        comparison_sequential_look(_outcomes([[1.0]] * 30), n_cap=20, threshold=0.45, alpha=0.05)


def test_the_expected_share_is_below_the_cap_and_smaller_far_from_the_threshold():
    far, _ = expected_comparison_share(200, 1, 0.45, 0.05, truths=[0.8], runs=4)
    near, basis = expected_comparison_share(200, 1, 0.45, 0.05, runs=4)
    assert 0 < far < near <= 1 and far <= comparison_schedule(200).looks[1] / 200
    assert "true win rates" in basis


# ---------------------------------------------------------------------------- end to end
def script(request) -> str:
    """The judge checks both sums; a right one beats a wrong one, two right ones tie (no position bias)."""
    question, first, second = shown(request)
    ok_a, ok_b = _right(question, first), _right(question, second)
    if ok_a == ok_b:
        return "Both answers are equally correct.\n[[C]]"
    return f"Assistant {'A' if ok_a else 'B'}'s sum is right.\n[[{'A' if ok_a else 'B'}]]"


def coin(request) -> str:
    """Verdicts by a hash of the prompt: A, B or a tie (45/45/10)."""
    u = int(hashlib.sha256(request.messages[-1]["content"].encode()).hexdigest(), 16) % 100
    return "[[A]]" if u < 45 else "[[B]]" if u < 90 else "[[C]]"


def _test_file(url: str) -> str:
    return f'''
import pytest
from pytest_judgerel import assert_not_worse

ITEMS, CAND, BASE = [], {{}}, {{}}
for k in range({N}):
    a, b = k + 3, 2 * k + 1
    ITEMS.append({{"id": f"q{{k:03d}}", "question": f"What is {{a}} + {{b}}?"}})
    right, wrong = f"{{a}} + {{b}} = {{a + b}}.", f"{{a}} + {{b}} = {{a + b + 2}}."
    CAND[f"q{{k:03d}}"] = right if k % 10 else wrong  # right on 90% of the items
    BASE[f"q{{k:03d}}"] = wrong if k % 2 else right   # right on half of them


@pytest.mark.judge(model="openai/fake", api_base="{url}")
def test_not_worse(judge):
    assert_not_worse(judge.compare(ITEMS, candidate=CAND, baseline=BASE, repeats=1), margin=0.05)
'''


@pytest.fixture
def server():
    with FakeLLMServer(latency=0.0) as srv:
        srv.responder = script
        yield srv


def _run(pytester, server, *args: str, name: str):
    result, upstream, records, report = run_reported(pytester, server, *args, name=name, kinds=("pairwise",))
    return result, upstream, [r for test in records.values() for r in test], report


def test_a_clearly_better_candidate_stops_before_its_cap_with_fewer_requests_than_the_fixed_run(pytester, server):
    pytester.makepyfile(test_cmp=_test_file(server.url))
    fixed, fixed_calls, (frec,), _ = _run(pytester, server, "--judgerel-cache-dir=fixed", name="fixed")
    seq, seq_calls, (srec,), _ = _run(pytester, server, "--judgerel-cache-dir=seq", "--judgerel-sequential",
                                      name="seq")
    fixed.assert_outcomes(passed=1)
    seq.assert_outcomes(passed=1)
    assert 0 < fixed_calls <= 2 * N and "sequential" not in frec  # a pair of equal answers is one request twice
    block = srec["sequential"]
    assert block["early"] and block["stop"] == "settled" and block["decision"] == "pass"
    assert block["cap"] == N and block["cap_calls"] == 2 * N and block["used"] < N
    assert block["calls"] == 2 * block["used"] and 0 < seq_calls <= block["calls"] and seq_calls < fixed_calls / 2
    assert srec["n"] == block["used"] and srec["passed"] is True


def test_a_dry_run_plans_the_cap_and_its_expected_calls(pytester, server):
    pytester.makepyfile(test_cmp=_test_file(server.url))
    result, sent, (rec,), report = _run(pytester, server, "--judgerel-dry-run", "--judgerel-sequential", name="dry")
    assert sent == 0
    block = rec["sequential"]
    assert block["stop"] == "fixed" and "dry run" in block["reason"]
    assert block["plan"]["cap_calls"] == 2 * N and 0 < block["plan"]["expected_calls"] < 2 * N
    assert 0 < report["session"]["dry_run"]["planned_calls"] <= 2 * N  # the cap's distinct requests


def test_a_budget_stop_mid_draw_leaves_a_record_with_the_sequential_block(pytester, server):
    server.responder = coin  # a candidate on the threshold: no early stop at 30 items
    pytester.makepyfile(test_cmp=_test_file(server.url))
    result, sent, (rec,), _ = _run(pytester, server, "--judgerel-sequential", "--judgerel-max-calls=70",
                                   name="budget")
    result.assert_outcomes(failed=1)
    block = rec["sequential"]
    assert rec["passed"] is False and rec["value"] is None and "budget" in rec["error"].lower()
    assert block["stop"] == "budget" and sent <= 70 and COMPARISON_FIRST <= block["used"] < N and block["calls"] == 2 * block["used"]
    assert "refused the look" in block["reason"]


def _items(n: int):
    items, cand, base = [], {}, {}
    for k in range(n):
        a, b = k + 3, 2 * k + 1
        iid = f"q{k:03d}"
        items.append({"id": iid, "question": f"What is {a} + {b}?"})
        right, wrong = f"{a} + {b} = {a + b}.", f"{a} + {b} = {a + b + 2}."
        cand[iid], base[iid] = (right if k % 10 else wrong), (wrong if k % 2 else right)
    return items, cand, base


def test_any_other_use_of_a_pending_comparison_draws_the_cap_and_human_labels_run_fixed(fake_llm_server,
                                                                                       _private_metric_sink):
    from pytest_judgerel import Judge, assert_better
    from pytest_judgerel.judging.compare import PendingComparison
    from pytest_judgerel.llm import LLMClient, LLMSettings

    fake_llm_server.responder = script
    items, cand, base = _items(60)
    with LLMClient(LLMSettings(cache_mode="off")) as c:
        judge = Judge(model="openai/fake", api_base=fake_llm_server.url, api_key="sk-test", client=c, sequential=True)
        pending = judge.compare(items, candidate=cand, baseline=base, repeats=1)
        assert isinstance(pending, PendingComparison) and fake_llm_server.requests == 0
        assert "0 of 120 calls drawn" in repr(pending)  # repr never draws
        assert pending.n_items == 60 and pending.materialized  # an attribute draws the whole cap
        again = judge.compare(items, candidate=cand, baseline=base, repeats=1)
        human = {"q001": "candidate", "q002": "candidate", "q010": "baseline"}
        assert_better(again, margin=0.0, human=human, alpha=0.2)
    rec = [r for r in _private_metric_sink if r.get("kind") == "pairwise"][-1]
    assert rec["sequential"]["stop"] == "fixed" and "human labels" in rec["sequential"]["reason"]
    assert rec["n"] == 60 and rec["statistic"] == "human win rate (PPI++)"
