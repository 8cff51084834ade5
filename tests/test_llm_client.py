"""LLMClient against the fake server and scripted models: cache modes, repeats, stats, concurrency."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import pytest

from pytest_judgerel.errors import CacheMissError, ConfigError, LLMCallError
from pytest_judgerel.llm.client import CallStats, LLMClient, LLMSettings
from pytest_judgerel.llm.endpoint import default_model, resolve_endpoint
from pytest_judgerel.llm.request import LLMRequest
from pytest_judgerel.llm.scripted import register_scripted
from pytest_judgerel.testing.fake_server import FakeLLMServer

from llm_fixtures import GatedFakeServer, cache_dir, fake_request, make_client, server, unique_model  # noqa: F401


def test_repeats_are_distinct_samples_and_replay_identically_without_upstream_calls(server, cache_dir):
    requests = [fake_request(server, f"rate item {i}", temperature=1.0, sample_index=r)
                for i in range(5) for r in range(6)]
    with make_client(cache_dir) as client:
        first = client.complete_many(requests)
    assert server.requests == 30
    assert len({resp.key for resp in first}) == 30
    # sampling at temperature 1: the six repeats of an item are not all the same answer
    for i in range(5):
        assert len({resp.text for resp in first[i * 6:(i + 1) * 6]}) > 1
    assert not any(resp.cached for resp in first)

    server.reset()
    with make_client(cache_dir, cache_mode="replay") as client:
        second = client.complete_many(requests)
        assert client.stats.hits == 30 and client.stats.misses == 0
    assert server.requests == 0
    assert [r.text for r in second] == [r.text for r in first]
    assert all(r.cached for r in second)
    assert [r.key for r in second] == [r.key for r in first]


def test_results_come_back_in_input_order(cache_dir):
    model = unique_model()
    register_scripted(model, lambda messages, **p: "echo:" + messages[-1]["content"])
    requests = [LLMRequest(model=model, messages=[{"role": "user", "content": str(i)}]) for i in range(40)]
    with make_client(cache_dir) as client:
        out = client.complete_many(requests)
    assert [r.text for r in out] == [f"echo:{i}" for i in range(40)]


def test_replay_miss_names_test_model_and_prompt(server, cache_dir):
    request = fake_request(server, "Is the capital of France Paris? Answer 0-10.",
                           metadata={"test": "tests/test_geo.py::test_capital"})
    with make_client(cache_dir, cache_mode="replay") as client:
        with pytest.raises(CacheMissError) as info:
            client.complete(request)
    message = str(info.value)
    assert "tests/test_geo.py::test_capital" in message
    assert "openai/fake" in message
    assert "capital of France" in message
    assert server.requests == 0


def test_replay_miss_without_metadata_names_the_running_test(server, cache_dir):
    with make_client(cache_dir, cache_mode="replay") as client:
        with pytest.raises(CacheMissError, match="test_replay_miss_without_metadata_names_the_running_test"):
            client.complete(fake_request(server, "anything"))


def test_refresh_calls_again_and_overwrites_once_per_session(cache_dir):
    model = unique_model()
    answers = iter(["first", "second", "third"])
    calls = []

    def changing(messages, **params):
        calls.append(1)
        return next(answers)

    register_scripted(model, changing)
    request = LLMRequest(model=model, messages=[{"role": "user", "content": "q"}])
    with make_client(cache_dir) as client:
        assert client.complete(request).text == "first"
        assert client.complete(request).text == "first"  # record mode: a hit
    time.sleep(0.01)
    with make_client(cache_dir, cache_mode="refresh") as client:
        refreshed = client.complete(request)
        again = client.complete(request)  # written during this session: reused
    assert refreshed.text == "second" and not refreshed.cached
    assert again.text == "second" and again.cached
    with make_client(cache_dir, cache_mode="replay") as client:
        assert client.complete(request).text == "second"
    assert len(calls) == 2


def test_off_mode_never_reads_or_writes(server, cache_dir):
    request = fake_request(server, "hello")
    with make_client(cache_dir, cache_mode="off") as client:
        client.complete(request)
        client.complete(request)
        assert client.stats.misses == 2 and client.stats.hits == 0
    assert server.requests == 2
    assert not cache_dir.exists()


def test_identical_requests_in_flight_are_answered_once(server, cache_dir):
    request = fake_request(server, "same prompt", temperature=0.7)
    with make_client(cache_dir) as client:
        out = client.complete_many([request] * 10)
        assert client.stats.misses == 1 and client.stats.hits == 9
    assert server.requests == 1
    assert len({r.text for r in out}) == 1


def test_stats_count_tokens_and_snapshot_difference(server, cache_dir):
    with make_client(cache_dir) as client:
        client.complete_many([fake_request(server, f"one two three {i}") for i in range(3)])
        before = client.stats.snapshot()
        client.complete_many([fake_request(server, f"one two three {i}") for i in range(5)])
        share = client.stats.since(before)
        assert share.calls == 5 and share.hits == 3 and share.misses == 2
        assert share.prompt_tokens == 2 * 4  # the fake server counts words
        assert share.completion_tokens == 2
        assert share.cost == 0.0  # no price known for openai/fake
        assert share.wall_time > 0
        data = client.stats.to_dict()
        assert data["calls"] == 8 and data["hits"] == 3 and data["hit_rate"] == pytest.approx(3 / 8)
        assert json.loads(json.dumps(data)) == data
    assert isinstance(before, CallStats) and before.calls == 3


def test_response_fields(server, cache_dir):
    with make_client(cache_dir) as client:
        response = client.complete(fake_request(server, "a b"))
    assert response.text.isdigit() and 0 <= int(response.text) <= 10
    assert response.model == "fake"
    assert response.usage == {"prompt_tokens": 2, "completion_tokens": 1, "total_tokens": 3}
    assert response.latency > 0.005 and response.attempts == 1 and len(response.key) == 64


def test_concurrency_is_bounded_by_the_process_semaphore(cache_dir):
    # the server holds requests until 4 are in flight: the peak is the client's limit, whatever the load
    with GatedFakeServer(gate=4, latency=0.1) as srv:
        with make_client(cache_dir, cache_mode="off", max_concurrency=4, timeout=60.0) as client:
            start = time.perf_counter()
            out = client.complete_many([fake_request(srv, f"p{i}") for i in range(12)])
            elapsed = time.perf_counter() - start
        assert srv.max_in_flight == 4 and srv.requests == 12 and len(out) == 12
        assert elapsed >= 0.29  # at least 3 waves of 0.1 s (a slower machine only adds time)


def test_requests_per_minute_limit_spaces_calls(server, cache_dir):
    with make_client(cache_dir, cache_mode="off", rpm=600) as client:  # one call per 0.1 s
        client.complete(fake_request(server, "warm"))
        start = time.perf_counter()
        client.complete_many([fake_request(server, f"r{i}") for i in range(6)])
        elapsed = time.perf_counter() - start
    assert elapsed >= 0.45


def test_sync_api_works_inside_a_running_event_loop(server, cache_dir):
    client = make_client(cache_dir)

    async def inside():
        sync_result = client.complete_many([fake_request(server, "x"), fake_request(server, "y")])
        async_result = await client.acomplete_many([fake_request(server, "x"), fake_request(server, "z")])
        single = await client.acomplete(fake_request(server, "y"))
        return sync_result, async_result, single

    sync_result, async_result, single = asyncio.run(inside())
    client.close()
    assert sync_result[0].text == async_result[0].text and async_result[0].cached
    assert single.text == sync_result[1].text
    assert server.requests == 3


def test_a_failed_request_does_not_hide_the_others(cache_dir):
    model = unique_model()

    def picky(messages, **params):
        if messages[-1]["content"] == "bad":
            from pytest_judgerel.testing import ScriptedHTTPError

            raise ScriptedHTTPError(400, "this prompt is refused")
        return "ok " + messages[-1]["content"]

    register_scripted(model, picky)
    requests = [LLMRequest(model=model, messages=[{"role": "user", "content": c}]) for c in ("a", "bad", "b")]
    with make_client(cache_dir) as client:
        with pytest.raises(LLMCallError, match="this prompt is refused"):
            client.complete_many(requests)
        mixed = client.complete_many(requests, return_exceptions=True)
    assert mixed[0].text == "ok a" and mixed[0].cached  # stored by the first batch
    assert isinstance(mixed[1], LLMCallError)
    assert mixed[2].text == "ok b"


def test_closed_client_and_bad_input(cache_dir):
    client = make_client(cache_dir)
    with pytest.raises(ConfigError, match="expected LLMRequest"):
        client.complete_many([{"model": "m"}])
    client.close()
    with pytest.raises(ConfigError, match="closed"):
        client.complete_many([LLMRequest(model="m", messages=[{"role": "user", "content": "x"}])])


@pytest.mark.parametrize("bad, field", [({"cache_mode": "sometimes"}, "cache_mode"),
                                        ({"max_concurrency": 0}, "max_concurrency"),
                                        ({"timeout": 0}, "timeout"),
                                        ({"rpm": -5}, "rpm"),
                                        ({"max_attempts": 0}, "max_attempts")])
def test_bad_settings_raise(bad, field):
    with pytest.raises(ConfigError, match=field):
        LLMSettings(**bad)


def test_default_model(monkeypatch):
    import pytest_judgerel.llm.local as local

    monkeypatch.setenv("JUDGEREL_MODEL", "openai/gpt-4o-mini")
    assert resolve_endpoint().model == "openai/gpt-4o-mini"
    monkeypatch.delenv("JUDGEREL_MODEL")
    monkeypatch.setattr(local, "local_model_available", lambda: True)
    assert default_model() == "local/smollm2" == resolve_endpoint().model
    monkeypatch.setattr(local, "local_model_available", lambda: False)
    with pytest.raises(ConfigError) as info:
        resolve_endpoint()
    for hint in ("--judge-model", "judgerel_model", "JUDGEREL_MODEL", "pytest-judgerel[local]"):
        assert hint in str(info.value)


def test_secrets_are_never_stored(server, cache_dir, tmp_path):
    secret = "sk-THIS-IS-A-SECRET-4242"
    with make_client(cache_dir) as client:
        client.complete_many([fake_request(server, f"q{i}", api_key=secret) for i in range(3)])
    from pytest_judgerel.__main__ import main

    out = tmp_path / "export.jsonl"
    assert main(["cache", "export", "--dir", str(cache_dir), "--out", str(out)]) == 0
    files = [p for p in cache_dir.rglob("*") if p.is_file()] + [out]
    assert files
    for path in files:
        assert secret.encode() not in path.read_bytes(), path
    assert "api_key" not in out.read_text()


WARM_REPLAY = r"""
import json, sys
from pytest_judgerel.llm import LLMClient, LLMSettings, LLMRequest
client = LLMClient(LLMSettings(cache_dir=sys.argv[1], cache_mode=sys.argv[2]))
reqs = [LLMRequest(model=sys.argv[3], messages=[{"role": "user", "content": f"w{i}"}], sample_index=i % 2) for i in range(20)]
out = client.complete_many(reqs)
client.close()
print(json.dumps({"texts": [r.text for r in out], "litellm": "litellm" in sys.modules,
                  "diskcache": "diskcache" in sys.modules}))
"""


@pytest.mark.parametrize("mode", ["replay", "record"])
def test_warm_replay_never_imports_litellm(cache_dir, mode):
    model = unique_model()
    register_scripted(model, lambda messages, **p: "w:" + messages[-1]["content"])
    reqs = [LLMRequest(model=model, messages=[{"role": "user", "content": f"w{i}"}], sample_index=i % 2)
            for i in range(20)]
    with make_client(cache_dir) as client:
        expected = [r.text for r in client.complete_many(reqs)]
    done = subprocess.run([sys.executable, "-c", WARM_REPLAY, str(cache_dir), mode, model],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["texts"] == expected
    assert result["litellm"] is False
    assert result["diskcache"] is True


def test_importing_the_package_is_cheap():
    code = ("import sys, pytest_judgerel.llm as m, pytest_judgerel.testing as t; m.LLMRequest; m.LLMClient; t.FakeLLMServer; "
            "print(sorted(x for x in ('litellm', 'diskcache', 'openai', 'httpx') if x in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_cost_of_a_priced_model_is_recorded(server, cache_dir):
    requests = [fake_request(server, f"price me {i}", model="openai/gpt-4o-mini") for i in range(2)]
    with make_client(cache_dir) as client:
        first = client.complete_many(requests)
        assert client.stats.cost == pytest.approx(sum(r.cost for r in first))
        spent = client.stats.snapshot()
        again = client.complete_many(requests)
        assert client.stats.since(spent).cost == 0.0  # hits spend nothing
    assert all(r.cost > 0 for r in first)
    assert [r.cost for r in again] == [r.cost for r in first]  # the recorded cost is kept with the entry


STRICT_WARNINGS_TEST = '''
from pytest_judgerel.llm import LLMClient, LLMSettings, LLMRequest
from pytest_judgerel.testing import FakeLLMServer
def test_calls_under_strict_warnings(tmp_path):
    with FakeLLMServer(latency=0.0) as srv:
        with LLMClient(LLMSettings(cache_dir=str(tmp_path), max_attempts=1)) as client:
            out = client.complete_many([LLMRequest(model="openai/gpt-4o-mini", api_base=srv.url, api_key="k",
                                                   messages=[{"role": "user", "content": f"hi{i}"}]) for i in range(3)])
            assert len(out) == 3 and client.stats.retries == 0
'''


def test_litellm_warnings_do_not_break_tests_run_with_W_error(tmp_path):
    (tmp_path / "test_strict.py").write_text(STRICT_WARNINGS_TEST)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error",
                           "test_strict.py"], cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_a_cancelled_caller_does_not_waste_the_answer_or_leak_the_lock(cache_dir):
    with FakeLLMServer(latency=1.0) as srv:
        client = make_client(cache_dir)
        request = fake_request(srv, "slow one")

        async def impatient():
            await asyncio.wait_for(client.acomplete_many([request, request]), 0.3)

        with pytest.raises(asyncio.TimeoutError):
            asyncio.run(impatient())
        start = time.perf_counter()
        answer = client.complete(request)  # joins the call still in flight, or reads its stored answer
        assert time.perf_counter() - start < 5.0
        assert answer.cached and srv.requests == 1
        client.close()
    # the key lock was released: another client (same process, own lock object) gets the entry at once
    with make_client(cache_dir, cache_mode="replay") as other:
        assert other.complete(request).text == answer.text
        lock = other.backend.key_lock(answer.key)
        assert lock.acquire(0)
        lock.release()


def test_what_reaches_litellm_and_the_server(server, cache_dir):
    client = make_client(cache_dir, timeout=7.5)
    request = fake_request(server, "q", temperature=0.2, max_tokens=3, seed=9, stop=["\n"], grammar='root ::= "1"',
                           metadata={"test": "t"}, extra_params={"presence_penalty": 0.1})
    kwargs = client.transport("litellm").kwargs(request, None, client.settings.timeout)
    assert kwargs["timeout"] == 7.5 and kwargs["max_retries"] == 0 and kwargs["num_retries"] == 0
    assert "metadata" not in kwargs
    client.complete(request)
    client.close()
    body = server.log[0]["body"]
    assert body["grammar"] == 'root ::= "1"'  # llama.cpp-style servers read it from the JSON body
    assert body["temperature"] == 0.2 and body["max_tokens"] == 3 and body["seed"] == 9
    assert body["stop"] == ["\n"] and body["presence_penalty"] == 0.1
    assert body["messages"] == [{"role": "user", "content": "q"}]


LITELLM_ENV = r"""
import json, os, sys
import pytest_judgerel.plugin  # importing the plugin changes no environment variable
before = {k: os.environ.get(k) for k in ("LITELLM_LOCAL_MODEL_COST_MAP", "LITELLM_OFFLINE_MODE")}
from pytest_judgerel.llm import LLMClient, LLMRequest, LLMSettings, register_scripted
register_scripted("scripted/env", lambda messages, **p: "ok")
with LLMClient(LLMSettings(cache_mode="off")) as client:
    client.complete(LLMRequest(model="scripted/env", messages=[{"role": "user", "content": "x"}]))
import litellm
print(json.dumps({"imported": before, "cost_map": os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP"),
                  "offline": os.environ.get("LITELLM_OFFLINE_MODE"),
                  "suppress": litellm.suppress_debug_info, "cache": litellm.cache is None}))
"""


@pytest.mark.parametrize("user_value", [None, "False"])
def test_litellm_is_configured_once_and_leaves_the_environment_as_found(user_value):
    """The offline flags hold for litellm's import only (no price-list download); neither
    importing the plugin nor a call leaves them in the user's environment."""
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("LITELLM_")}
    if user_value is not None:
        env["LITELLM_LOCAL_MODEL_COST_MAP"] = user_value
    done = subprocess.run([sys.executable, "-c", LITELLM_ENV], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["imported"] == {"LITELLM_LOCAL_MODEL_COST_MAP": user_value, "LITELLM_OFFLINE_MODE": None}
    assert result["cost_map"] == user_value
    assert result["offline"] is None
    assert result["suppress"] is True and result["cache"] is True


def test_processes_that_called_litellm_exit_promptly():
    """Regression: without stopping the LLM loop at exit, about 1 exit in 2 deadlocked in
    litellm's HTTP-client ``__del__`` (an import blocked by a daemon thread frozen mid-import)."""
    import os

    code = "import faulthandler\nfaulthandler.dump_traceback_later(45, exit=True)\n" + LITELLM_ENV
    env = {k: v for k, v in os.environ.items() if not k.startswith("LITELLM_")}
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=90)
        assert done.returncode == 0, done.stderr[-3000:]
