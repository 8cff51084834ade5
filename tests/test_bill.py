"""The bill: caps that bind (every request reserves its worst case before it is sent, retries
included; in-process models never count; an unpriced model under a cost cap is a usage error)
and a plan that matches the run (placeholders counted apart from in-process calls, completion
tokens from the expected reply, repeated prompts planned once).  Real HTTP to the loopback fake
server, counted on the server's side; pytester for the plugin's behaviour."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from pytest_judgerel.errors import BudgetExceededError, ConfigError
from pytest_judgerel.llm import LLMClient, LLMRequest, LLMSettings
from pytest_judgerel.llm.budget import Budget
from pytest_judgerel.llm.prices import token_prices, worst_case_cost
from pytest_judgerel.testing import FakeLLMServer, FaultPlan

pytest_plugins = ["pytester"]

PRICED = "openai/gpt-4o-mini"  # priced in litellm's table; the fake server answers any model name

BATCH = """
from pytest_judgerel import assert_icc_above

ITEMS = [{{"sentence1": f"first sentence {{i}} of the batch", "sentence2": "second"}} for i in range({items})]

def test_batch(judge):
    assert_icc_above(judge.rate(ITEMS, repeats={repeats}), 0.5)
"""

SCRIPTED = """
import pytest
from pytest_judgerel import assert_icc_above
from pytest_judgerel.llm import register_scripted

register_scripted("scripted/steady", lambda messages, **kw: "3")
ITEMS = [{"sentence1": f"pair {i}", "sentence2": "other"} for i in range(20)]

@pytest.mark.judge(model="scripted/steady")
def test_scripted(judge):
    judge.rate(ITEMS, repeats=3)
"""


def _args(server, tmp_path, model="openai/judge", *more):
    return [f"--judge-model={model}", f"--judge-api-base={server.url}", "-p", "no:cacheprovider", "-p", "no:randomly",
            f"--judgerel-cache-dir={tmp_path / 'cache'}", f"--judgerel-json={tmp_path / 'r.json'}", *more]


def _report(tmp_path):
    return json.loads((tmp_path / "r.json").read_text())


def _worst(body):
    """The worst-case cost of one request the server received (the budget's own bound)."""
    request = SimpleNamespace(messages=body["messages"], max_tokens=body.get("max_tokens"))
    return worst_case_cost(request, token_prices(PRICED))


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist"])
def test_a_cost_cap_stops_a_240_call_batch_within_one_calls_worst_case(pytester, tmp_path, workers):
    pytester.makepyfile(test_batch=BATCH.format(items=80, repeats=3))
    cap = 0.001
    with FakeLLMServer(latency=0.002) as server:
        result = pytester.runpytest(*workers, *_args(server, tmp_path, PRICED, "--judgerel-max-cost=0.001"))
        sent = server.requests
        worst = max(_worst(entry["body"]) for entry in server.log)
        budget = _report(tmp_path)["session"]["budget"]
        assert result.ret == 1 and "BUDGET STOPPED THE RUN" in result.stdout.str()
        assert 0 < sent < 240 and budget["calls"] == sent
        assert cap - worst <= budget["cost"] <= cap  # never past the cap, stopped within one worst case
        assert budget["cost"] == pytest.approx(_report(tmp_path)["totals"]["cost"])
        assert "spent" in budget["exceeded"]
        # every paid answer was kept: a rerun without the cap pays only for the rest
        again = pytester.runpytest(*workers, *_args(server, tmp_path, PRICED, "--judgerel-report-only"))
        assert again.ret == 0 and server.requests == 240


def test_max_calls_counts_every_request_retries_included(pytester, tmp_path):
    pytester.makepyfile(test_batch=BATCH.format(items=100, repeats=3))
    faults = FaultPlan(rate=0.2, kinds=("429", "500"), seed=3)
    with FakeLLMServer(latency=0.002, faults=faults) as server:
        result = pytester.runpytest(*_args(server, tmp_path, "openai/judge", "--judgerel-max-calls=101"))
        assert server.requests == 101 and server.fault_count() > 0  # counted on the server's side
        report = _report(tmp_path)
        assert report["session"]["budget"]["calls"] == 101 and report["totals"]["retries"] > 0
        assert result.ret == 1 and "101 upstream requests sent (retries included)" in result.stdout.str()


def test_scripted_calls_never_count_as_upstream(pytester, tmp_path):
    pytester.makepyfile(test_scripted=SCRIPTED)
    with FakeLLMServer(latency=0) as server:
        dry = pytester.runpytest(*_args(server, tmp_path, "openai/judge", "--judgerel-dry-run"))
        plan = _report(tmp_path)["session"]["dry_run"]
        assert dry.ret == 0 and plan["planned_calls"] == 0 and plan["inprocess_calls"] == 60
        assert plan["per_test"] == {} and "in-process calls, never upstream: 60" in dry.stdout.str()
        result = pytester.runpytest(*_args(server, tmp_path, "openai/judge", "--judgerel-max-calls=1"))
        result.assert_outcomes(passed=1)
        report = _report(tmp_path)
        assert server.requests == 0 and report["session"]["budget"]["calls"] == 0
        assert report["totals"]["inprocess_calls"] == 60 and report["totals"]["http_calls"] == 0


def test_a_cost_cap_on_an_unpriced_model_is_a_usage_error_unless_priced(pytester, tmp_path):
    pytester.makepyfile(test_batch=BATCH.format(items=4, repeats=1))
    with FakeLLMServer(latency=0) as server:
        refused = pytester.runpytest(*_args(server, tmp_path, "openai/my-own-judge", "--judgerel-max-cost=1"))
        assert refused.ret == pytest.ExitCode.USAGE_ERROR and server.requests == 0
        assert "'openai/my-own-judge'" in refused.stderr.str() and "--judgerel-price-per-mtok" in refused.stderr.str()
        priced = pytester.runpytest(*_args(server, tmp_path, "openai/my-own-judge", "--judgerel-max-cost=100",
                                           "--judgerel-price-per-mtok=1000,2000", "--judgerel-report-only"))
        assert priced.ret == 0 and server.requests == 4
        report = _report(tmp_path)
        words = sum(len(str(m["content"]).split()) for e in server.log for m in e["body"]["messages"])
        assert report["totals"]["cost"] == pytest.approx(words * 1e-3 + 4 * 2e-3)  # 1 word of reply each
        assert report["session"]["budget"]["cost"] == pytest.approx(report["totals"]["cost"])
        bad = pytester.runpytest(*_args(server, tmp_path, "openai/my-own-judge", "--judgerel-price-per-mtok=cheap"))
        assert bad.ret == pytest.ExitCode.USAGE_ERROR and "IN,OUT" in bad.stderr.str()


def test_a_client_refuses_an_unpriced_model_under_a_cost_cap(tmp_path):
    with LLMClient(LLMSettings(cache_dir=tmp_path, max_cost=1.0)) as client:
        with pytest.raises(ConfigError, match="'openai/unpriced-thing'.*--judgerel-price-per-mtok"):
            client.complete(LLMRequest(model="openai/unpriced-thing", api_base="http://127.0.0.1:9/v1",
                                       messages=[{"role": "user", "content": "x"}]))
        assert client.stats.errors == 1 and client.stats.http_calls == 0


def test_the_dry_run_cost_is_null_not_zero_for_an_unpriced_model(pytester, tmp_path):
    pytester.makepyfile(test_batch=BATCH.format(items=5, repeats=2))
    with FakeLLMServer(latency=0) as server:
        dry = pytester.runpytest(*_args(server, tmp_path, "openai/my-own-judge", "--judgerel-dry-run"))
        plan = _report(tmp_path)["session"]["dry_run"]
        assert dry.ret == 0 and plan["planned_calls"] == 10 and plan["unpriced_calls"] == 10
        assert plan["cost_estimate"] is None and plan["cost_max"] is None
        assert "cost unknown (10 planned calls of models without a price" in dry.stdout.str()
        priced = pytester.runpytest(*_args(server, tmp_path, "openai/my-own-judge", "--judgerel-dry-run",
                                           "--judgerel-price-per-mtok=1,1"))
        plan = _report(tmp_path)["session"]["dry_run"]
        assert priced.ret == 0 and plan["cost_estimate"] > 0 and plan["unpriced_calls"] == 0


def _dry(**settings):
    return LLMClient(LLMSettings(cache_mode="off", dry_run=True, **settings))


def test_planned_completion_tokens_come_from_the_expected_reply_bounded_by_max_tokens():
    reply = "Reasoning: " + "word " * 40 + "\nScore: 3"  # ~54 tokens at 4 characters per token
    requests = [LLMRequest(model=PRICED, api_base="http://127.0.0.1:9/v1", max_tokens=cap, sample_index=i,
                           messages=[{"role": "user", "content": "rate this " * 10}], metadata={"dry_reply": reply})
                for i, cap in enumerate((16, 512, None))]
    with _dry() as client:
        answers = client.complete_many(requests)
        stats = client.stats
    expected = round(len(reply) / 4)
    assert [a.usage["completion_tokens"] for a in answers] == [16, expected, expected]  # never past max_tokens
    assert stats.planned_completion_tokens == 16 + 2 * expected
    assert stats.planned_completion_max == 16 + 512 + 512  # the bound: max_tokens (512 when unset)
    price = token_prices(PRICED)
    assert stats.planned_cost == pytest.approx(stats.planned_prompt_tokens * price[0] + (16 + 2 * expected) * price[1])
    assert stats.planned_cost_max == pytest.approx(stats.planned_prompt_tokens * price[0] + 1040 * price[1])
    assert stats.planned_cost < stats.planned_cost_max


def test_a_judge_plans_its_score_not_its_max_tokens(pytester, tmp_path):
    pytester.makepyfile(test_batch=BATCH.format(items=10, repeats=2))
    with FakeLLMServer(latency=0) as server:
        pytester.runpytest(*_args(server, tmp_path, PRICED, "--judgerel-dry-run", "--judge-max-tokens=300"))
        plan = _report(tmp_path)["session"]["dry_run"]
    assert plan["planned_calls"] == 20 and plan["completion_tokens_max"] == 20 * 300
    assert plan["completion_tokens_estimate"] == 20  # a one-token score each
    assert plan["calls_max"] == (20 + 20) * 4  # one re-ask each at most, 4 attempts per request
    assert plan["cost_estimate"] < plan["cost_max"]


REPEATED = """
ITEMS = [{"sentence1": f"pair {i}", "sentence2": "other"} for i in range(6)]

def test_twice(judge):
    judge.rate(ITEMS, repeats=2)
    judge.rate(ITEMS, repeats=2)  # the same prompts: answered from the cache in a real run

def test_again_in_another_test(judge):
    judge.rate(ITEMS[:3], repeats=1)
"""


def test_a_dry_run_remembers_repeated_prompts(pytester, tmp_path):
    pytester.makepyfile(test_repeated=REPEATED)
    request = LLMRequest(model=PRICED, api_base="http://127.0.0.1:9/v1", messages=[{"role": "user", "content": "q"}])
    with LLMClient(LLMSettings(cache_dir=tmp_path / "unit", dry_run=True)) as client:
        client.complete_many([request, request, request.with_sample(1)])
        client.complete(request)
        assert (client.stats.planned, client.stats.hits, client.stats.misses) == (2, 2, 2)
    with FakeLLMServer(latency=0) as server:
        dry = pytester.runpytest(*_args(server, tmp_path, "openai/judge", "--judgerel-dry-run"))
        plan = _report(tmp_path)["session"]["dry_run"]
        assert dry.ret == 0 and plan["planned_calls"] == 12
        assert plan["per_test"] == {"test_repeated.py::test_twice": 12}
        pytester.runpytest(*_args(server, tmp_path, "openai/judge", "--judgerel-report-only"))
        assert server.requests == 12


def test_a_dead_processs_reservation_is_released(tmp_path):
    budget = Budget(None, 1.0, tmp_path, "run")
    budget._update(lambda state: state["reserved"].update({"999999999": 0.9}))  # no such process
    request = SimpleNamespace(test_name="t", model=PRICED)
    import asyncio

    assert asyncio.run(budget.reserve(request, 0.5))
    state = budget.state()
    assert "999999999" not in state["reserved"] and state["calls"] == 1
    budget.settle(0.5, 0.25)
    assert budget.state()["cost"] == 0.25 and budget.state()["reserved"] == {}
    with pytest.raises(BudgetExceededError, match=r"\$0\.250000 spent; the next request could cost up to"):
        asyncio.run(budget.reserve(request, 0.8))


def test_the_dry_run_of_the_examples_plans_the_requests_each_example_test_sends(tmp_path):
    """A dry run over examples/ (a configured judge: no embedded model needed) exits 0 and plans,
    test by test, the upstream requests a real run then sends to the server; a sequential gate is
    planned at its cap, which bounds what it sends.  Slow: the examples run twice."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from test_llama_server import _plausible_reply

    root = Path(__file__).resolve().parents[1]
    with FakeLLMServer(latency=0.0, responder=_plausible_reply) as server:
        env = dict(os.environ, OPENAI_API_KEY="sk-test", PYTHONDONTWRITEBYTECODE="1")
        base = [sys.executable, "-m", "pytest", str(root / "examples"), "-p", "no:cacheprovider", "-q", "-n", "0",
                f"--judge-model={PRICED}", f"--judge-api-base={server.url}", f"--judgerel-cache-dir={tmp_path / 'c'}"]
        dry = subprocess.run(base + ["--judgerel-dry-run", f"--judgerel-json={tmp_path / 'dry.json'}"], cwd=tmp_path,
                             env=env, capture_output=True, text=True, timeout=1800)
        assert dry.returncode == 0 and server.requests == 0, dry.stdout[-3000:]
        subprocess.run(base + ["--judgerel-report-only", f"--judgerel-json={tmp_path / 'real.json'}"], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=1800)
        received = server.requests
    plan = json.loads((tmp_path / "dry.json").read_text())["session"]["dry_run"]
    real = json.loads((tmp_path / "real.json").read_text())
    sent = {t["nodeid"]: (t.get("calls") or {}).get("http_calls", 0) for t in real["tests"]}
    assert sum(sent.values()) == received and real["totals"]["retries"] == 0
    assert plan["errored"] == [] and any("mindeval" in n for n in plan["per_test"])
    at_cap = set(plan["sequential_at_cap"])
    for nodeid in set(plan["per_test"]) | {n for n, v in sent.items() if v}:
        planned = plan["per_test"].get(nodeid, 0)
        if nodeid in at_cap:
            assert sent.get(nodeid, 0) <= planned, nodeid
        else:
            assert sent.get(nodeid, 0) == planned, nodeid
    assert received <= plan["calls_max"]
