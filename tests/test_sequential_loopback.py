"""Sequential gates on small designs through a loopback server: a k = 3 ICC gate and a 50-item
pass-rate gate stop before their caps, a require-stable replay of a fixed run's answers reaches the
fixed run's verdicts, a dry run plans the caps and prints the calls it expects, and a budget stop
mid-draw leaves a record with the sequential block.  Upstream calls are counted by the fake
OpenAI-compatible server."""

from __future__ import annotations

import json
import random
import re

import pytest

from pytest_judgerel.testing.fake_server import FakeLLMServer
from reported_run import run_reported

N_ITEMS, CAP, N_PASS = 60, 3, 50


def _item_of(body: dict) -> int:
    return int(re.search(r"sentence-(\d+)-", json.dumps(body["messages"])).group(1))


def responder(request) -> str:
    """0-5 scores of a reliable judge (the repeat is the request's seed) and 0-1 verdicts passing 97%."""
    body = request.body
    item = _item_of(body)
    if re.search(r"sentence-\d+-x", json.dumps(body["messages"])):
        return "1" if random.Random(f"verdict {item}").random() < 0.97 else "0"
    rng = random.Random(f"{item} {body.get('seed') or 0}")
    return str(min(5, max(0, item % 6 + (rng.choice((-1, 1)) if rng.random() < 0.1 else 0))))


def _test_file(url: str) -> str:
    return f'''
import pytest
from pytest_judgerel import assert_icc_above, assert_pass_rate

ITEMS = [{{"id": f"i{{i}}", "sentence1": f"sentence-{{i}}-a", "sentence2": "b"}} for i in range({N_ITEMS})]
ANSWERS = [{{"id": f"a{{i}}", "question": "q", "answer": f"sentence-{{i}}-x"}} for i in range({N_PASS})]
CALIBRATION = [(True, True)] * 30 + [(False, False)] * 30


@pytest.mark.judge(model="openai/fake", template="stsb", api_base="{url}", seed=100, temperature=0.7)
@pytest.mark.repeats({CAP})
def test_icc(judge):
    assert_icc_above(judge.rate(ITEMS), 0.7)


@pytest.mark.judge(model="openai/fake", template="truthfulqa", api_base="{url}")
@pytest.mark.scale("0-1")
def test_pass_rate(judge):
    assert_pass_rate(judge.rate(ANSWERS, repeats=1), min_rate=0.8, calibration=CALIBRATION)
'''


@pytest.fixture
def server():
    with FakeLLMServer(latency=0.0) as srv:
        srv.responder = responder
        yield srv


def _run(pytester, server, *args: str, name: str):
    return run_reported(pytester, server, *args, name=name, kinds=("icc", "pass_rate"))


def test_small_designs_stop_before_their_caps(pytester, server):
    pytester.makepyfile(test_gates=_test_file(server.url))
    fixed, fixed_calls, _, _ = _run(pytester, server, "--judgerel-cache-dir=fixed", name="fixed")
    seq, seq_calls, records, _ = _run(pytester, server, "--judgerel-cache-dir=seq", "--judgerel-sequential",
                                      name="seq")
    fixed.assert_outcomes(passed=2)
    seq.assert_outcomes(passed=2)
    assert fixed_calls == N_ITEMS * CAP + N_PASS
    icc, rate = records["test_icc"][0]["sequential"], records["test_pass_rate"][0]["sequential"]
    # k = 3: the first look is on 2 repeats of a first share of the items, far below 2 of 3 repeats
    assert icc["early"] and icc["decision"] == "pass" and icc["calls"] < 2 * N_ITEMS
    assert icc["looks"][-1]["items"] is not None and icc["looks"][-1]["items"] < N_ITEMS
    # 50 items: the first look at 20, then every 10
    assert rate["early"] and rate["decision"] == "pass" and rate["calls"] < N_PASS
    assert seq_calls == icc["calls"] + rate["calls"]


def test_a_require_stable_replay_of_a_fixed_run_reaches_its_verdicts(pytester, server):
    pytester.makepyfile(test_gates=_test_file(server.url))
    fixed, fixed_calls, fixed_records, _ = _run(pytester, server, "--judgerel-require-stable", name="fixed")
    replay, replay_calls, records, _ = _run(pytester, server, "--judgerel-require-stable", "--judgerel-sequential",
                                            "--judgerel-cache-mode=replay", name="replay")
    assert replay_calls == 0 and fixed_calls == N_ITEMS * CAP + N_PASS
    assert fixed.parseoutcomes() == replay.parseoutcomes()
    for test in ("test_icc", "test_pass_rate"):
        (f,), (s,) = fixed_records[test], records[test]
        assert f["passed"] is s["passed"]
        assert s["sequential"]["decision"] == ("pass" if s["passed"] else "fail")  # the record says the outcome


def test_a_dry_run_plans_the_caps_and_prints_the_expected_calls(pytester, server):
    pytester.makepyfile(test_gates=_test_file(server.url))
    result, sent, records, report = _run(pytester, server, "--judgerel-dry-run", "--judgerel-sequential", name="dry")
    assert sent == 0
    plan = report["session"]["dry_run"]
    assert plan["planned_calls"] == N_ITEMS * CAP + N_PASS  # the caps: the most the gates can spend
    seq = plan["sequential"]
    assert seq["cap_calls"] == N_ITEMS * CAP + N_PASS and 0 < seq["expected_calls"] < seq["cap_calls"]
    for test in ("test_icc", "test_pass_rate"):
        block = records[test][0]["sequential"]
        assert block["stop"] == "fixed" and "dry run" in block["reason"] and "stated prior" in block["plan"]["basis"]
    text = result.stdout.str()
    assert re.search(rf"sequential gates: {N_ITEMS * CAP + N_PASS} calls at their caps .* expected ~\d+", text), text


def test_a_budget_stop_mid_draw_leaves_a_record_with_the_sequential_block(pytester, server):
    pytester.makepyfile(test_gates=_test_file(server.url))
    result, sent, records, _ = _run(pytester, server, "--judgerel-sequential", "--judgerel-max-calls=25", "-k", "icc",
                                    name="budget")
    result.assert_outcomes(failed=1)
    (rec,) = records["test_icc"]
    block = rec["sequential"]
    assert rec["passed"] is False and rec["value"] is None and "budget" in rec["error"].lower()
    assert block["stop"] == "budget" and block["calls"] <= 25 and sent <= 25
    assert "refused the look" in block["reason"]
