"""Know the bill before the run and cap it, and the two pieces drift checks
build on: the server's ``system_fingerprint`` kept with every answer, and ``fresh`` calls that
bypass the cache.  Real HTTP to the loopback fake server; pytester for the plugin's behaviour."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from pytest_judgerel.errors import BudgetExceededError
from pytest_judgerel.llm import LLMClient, LLMRequest, LLMSettings
from pytest_judgerel.testing import FakeLLMServer

pytest_plugins = ["pytester"]

GATE = """
from pytest_judgerel import assert_icc_above

ITEMS = [{"sentence1": f"first sentence {i}", "sentence2": "second"} for i in range(40)]

def test_gate(judge):
    ratings = judge.rate(ITEMS, repeats=10)
    assert_icc_above(ratings, 0.5)
"""


def _request(server, text, index=0):
    return LLMRequest(model="openai/judge", api_base=server.url, messages=[{"role": "user", "content": text}],
                      sample_index=index, max_tokens=8)


@pytest.mark.parametrize("backend", ["http", "litellm"])
def test_the_fingerprint_and_model_the_server_reports_are_kept_and_replayed(tmp_path, backend):
    with FakeLLMServer(latency=0, reported_model="judge-2025-01", system_fingerprint="fp_1") as server:
        with LLMClient(LLMSettings(cache_dir=tmp_path, backend=backend)) as client:
            first = client.complete(_request(server, "rate this"))
        assert (first.model, first.system_fingerprint, first.cached) == ("judge-2025-01", "fp_1", False)
        server.system_fingerprint, server.reported_model = "fp_2", "judge-2025-06"  # a silent update
        with LLMClient(LLMSettings(cache_dir=tmp_path, cache_mode="replay", backend=backend)) as client:
            again = client.complete(_request(server, "rate this"))
        assert (again.model, again.system_fingerprint, again.cached) == ("judge-2025-01", "fp_1", True)
        with LLMClient(LLMSettings(cache_dir=tmp_path, backend=backend)) as client:
            fresh = client.complete_many([_request(server, "rate this")], fresh=True)[0]
        assert (fresh.model, fresh.system_fingerprint, fresh.cached) == ("judge-2025-06", "fp_2", False)
        assert server.requests == 2


def test_a_server_without_a_fingerprint_gives_none(tmp_path):
    with FakeLLMServer(latency=0) as server, LLMClient(LLMSettings(cache_dir=tmp_path)) as client:
        assert client.complete(_request(server, "x")).system_fingerprint is None


def test_the_fake_server_shifts_its_answers_within_the_scale(tmp_path):
    prompts = [f"rate {i} from 0 to 10" for i in range(30)]
    with FakeLLMServer(latency=0) as server, LLMClient(LLMSettings(cache_mode="off")) as client:
        before = [int(r.text) for r in client.complete_many([_request(server, p) for p in prompts])]
        server.shift = 3
        after = [int(r.text) for r in client.complete_many([_request(server, p) for p in prompts])]
    assert [min(10, b + 3) for b in before] == after


def test_fresh_calls_never_read_or_write_the_cache(tmp_path):
    with FakeLLMServer(latency=0) as server:
        with LLMClient(LLMSettings(cache_dir=tmp_path)) as client:
            stored = client.complete(_request(server, "anchor"))
            server.shift = 1
            fresh = client.complete_many([_request(server, "anchor"), _request(server, "anchor")], fresh=True)
            assert [r.cached for r in fresh] == [False, False] and server.requests == 3
            assert client.stats.fresh == 2 and client.stats.misses == 3
            assert client.stats.http_calls + client.stats.litellm_calls == 3  # either path (JUDGEREL_BACKEND)
            again = client.complete(_request(server, "anchor"))
            assert again.cached and again.text == stored.text  # the fresh answers were not stored
            new = client.complete_many([_request(server, "never stored")], fresh=True)[0]
        with LLMClient(LLMSettings(cache_dir=tmp_path, cache_mode="replay")) as client:
            with pytest.raises(Exception, match="no cached answer"):
                client.complete(_request(server, "never stored"))
        assert new.text


def test_the_call_past_the_cap_raises_and_every_later_call_too(tmp_path):
    with FakeLLMServer(latency=0) as server, \
            LLMClient(LLMSettings(cache_dir=tmp_path, max_calls=3, max_concurrency=2)) as client:
        results = client.complete_many([_request(server, "q", i) for i in range(6)], return_exceptions=True)
        assert server.requests == 3
        refused = [r for r in results if isinstance(r, BudgetExceededError)]
        assert len(refused) == 3 and "--judgerel-max-calls 3" in str(refused[0])
        assert client.stats.refused == 3 and client.stats.errors == 3
        with pytest.raises(BudgetExceededError, match="max-calls 3"):
            client.complete(_request(server, "later"))
        answered = [i for i, r in enumerate(results) if not isinstance(r, BaseException)]
        assert len(answered) == 3 and all(client.complete(_request(server, "q", i)).cached for i in answered)
        assert server.requests == 3


def test_the_cost_cap_reserves_the_worst_case_before_sending(tmp_path):
    # gpt-4o-mini is priced in litellm's table; the fake server reports word counts as tokens
    from pytest_judgerel.llm.prices import token_prices, worst_case_cost

    request = LLMRequest(model="openai/gpt-4o-mini", api_base="http://127.0.0.1:9/v1", api_key="k",
                         messages=[{"role": "user", "content": "one two three"}], max_tokens=8)
    worst = worst_case_cost(request, token_prices("openai/gpt-4o-mini"))
    with FakeLLMServer(latency=0) as server, \
            LLMClient(LLMSettings(cache_dir=tmp_path, max_cost=1.05 * worst, max_concurrency=1)) as client:
        request = replace(request, api_base=server.url)
        spent = client.complete(request).cost
        assert 0.05 * worst < spent < worst  # the real usage settles the reservation
        with pytest.raises(BudgetExceededError, match=r"--judgerel-max-cost \$[0-9.e-]+ reached"):
            client.complete(request.with_sample(1))  # spent + its worst case would pass the cap
        assert server.requests == 1
        assert client.budget.state()["cost"] == pytest.approx(spent)


def test_dry_run_sends_nothing_and_plans_what_a_real_run_sends(pytester, tmp_path):
    pytester.makepyfile(test_gate=GATE)
    with FakeLLMServer(latency=0) as server:
        args = ["--judge-model=openai/judge", f"--judge-api-base={server.url}", "-p", "no:cacheprovider",
                "-p", "no:randomly", f"--judgerel-cache-dir={tmp_path / 'cache'}"]
        dry = pytester.runpytest(*args, "--judgerel-dry-run", f"--judgerel-json={tmp_path / 'dry.json'}")
        assert dry.ret == 0 and server.requests == 0
        out = dry.stdout.str()
        assert "DRY RUN" in out and "planned upstream calls: 400" in out and "test_gate.py::test_gate" in out
        plan = json.loads((tmp_path / "dry.json").read_text())["session"]["dry_run"]
        assert plan["planned_calls"] == 400 and plan["per_test"] == {"test_gate.py::test_gate": 400}
        assert plan["prompt_tokens_estimate"] > 0 and plan["completion_tokens_max"] == 400 * 512
        real = pytester.runpytest(*args, "--judgerel-report-only", f"--judgerel-json={tmp_path / 'real.json'}")
        assert real.ret == 0
        assert server.requests == 400
        assert json.loads((tmp_path / "real.json").read_text())["totals"]["misses"] == 400


def test_budget_stops_a_gate_and_the_run_says_why(pytester, tmp_path):
    pytester.makepyfile(test_gate=GATE, test_later="def test_later(judge):\n    judge.rate([{'sentence1': 'a', "
                                                   "'sentence2': 'b'}], repeats=1)\n")
    with FakeLLMServer(latency=0.002) as server:
        result = pytester.runpytest("--judge-model=openai/judge", f"--judge-api-base={server.url}",
                                    "-p", "no:cacheprovider", "-p", "no:randomly", "--judgerel-max-concurrency=8",
                                    f"--judgerel-cache-dir={tmp_path / 'cache'}", "--judgerel-max-calls=100",
                                    f"--judgerel-json={tmp_path / 'r.json'}")
        assert 100 <= server.requests <= 100 + 8
        assert result.ret == 1
        out = result.stdout.str()
        assert "BUDGET STOPPED THE RUN" in out and "--judgerel-max-calls 100 reached" in out
        result.assert_outcomes(failed=2)  # the gate that needed 400, and the later test at once
        report = json.loads((tmp_path / "r.json").read_text())
        assert report["totals"]["budget_stopped"] is True
        assert report["session"]["budget"]["calls"] == server.requests
        assert "max-calls 100" in report["session"]["budget"]["exceeded"]


def test_budget_is_shared_by_xdist_workers(pytester, tmp_path):
    pytester.makepyfile(**{f"test_gate{i}": GATE.replace("first sentence", f"set {i} sentence") for i in range(2)})
    with FakeLLMServer(latency=0.002) as server:
        result = pytester.runpytest_subprocess("-n", "2", "--judge-model=openai/judge",
                                               f"--judge-api-base={server.url}", "-p", "no:cacheprovider",
                                               f"--judgerel-cache-dir={tmp_path / 'cache'}",
                                               "--judgerel-max-calls=150", "--judgerel-max-concurrency=4",
                                               f"--judgerel-json={tmp_path / 'r.json'}")
        assert 150 <= server.requests <= 150 + 2 * 4
        assert result.ret == 1 and "BUDGET STOPPED THE RUN" in result.stdout.str()
        assert json.loads((tmp_path / "r.json").read_text())["totals"]["budget_stopped"] is True
