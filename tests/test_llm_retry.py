"""Retries against every fault kind of the fake server, Retry-After, fail-fast errors."""

from __future__ import annotations

import random
import time

import pytest

from pytest_judgerel.errors import CacheMissError, ConfigError, LLMCallError
from pytest_judgerel.llm.request import LLMRequest
from pytest_judgerel.llm.retry import RetryPolicy, classify_failure, EmptyResponseError
from pytest_judgerel.llm.scripted import register_scripted
from pytest_judgerel.testing import ScriptedHTTPError
from pytest_judgerel.testing.fake_server import FAULT_KINDS, FakeLLMServer, FaultPlan

from llm_fixtures import cache_dir, fake_request, make_client, unique_model  # noqa: F401

PROMPTS = [f"judge answer {i}" for i in range(8)]


def _clean_answers(tmp_path):
    with FakeLLMServer(latency=0.005) as srv:
        with make_client(tmp_path / "clean", cache_mode="off") as client:
            return [r.text for r in client.complete_many([fake_request(srv, p) for p in PROMPTS])]


@pytest.mark.parametrize("kind", FAULT_KINDS)
def test_each_fault_kind_is_retried_and_results_match_a_clean_run(kind, tmp_path):
    clean = _clean_answers(tmp_path)
    # the first three requests to arrive fail with this fault.  The client's timeout (3 s) is far
    # above a healthy answer's time even on a loaded machine, so only the planned faults retry;
    # the "timeout" fault holds its answer much longer than that.
    plan = FaultPlan(schedule={0: kind, 1: kind, 2: kind}, retry_after=0.05, timeout_sleep=60.0)
    with FakeLLMServer(latency=0.005, faults=plan) as srv:
        with make_client(tmp_path / "c", timeout=3.0) as client:
            out = client.complete_many([fake_request(srv, p) for p in PROMPTS])
            stats = client.stats
        assert srv.requests == len(PROMPTS) + 3
    assert [r.text for r in out] == clean
    assert stats.retries == 3 and stats.errors == 0 and stats.misses == len(PROMPTS)
    assert sum(r.attempts for r in out) == len(PROMPTS) + 3


def test_random_faults_at_a_rate_give_the_clean_results(tmp_path):
    clean = _clean_answers(tmp_path)
    plan = FaultPlan(rate=0.3, kinds=("429", "500", "503", "malformed", "empty", "disconnect"), seed=7)
    with FakeLLMServer(latency=0.005, faults=plan) as srv:
        with make_client(tmp_path / "c", max_attempts=8) as client:
            out = client.complete_many([fake_request(srv, p) for p in PROMPTS])
            retries = client.stats.retries
        assert retries == srv.fault_count() > 0
    assert [r.text for r in out] == clean


def test_retries_are_bounded_and_failures_are_not_cached(tmp_path):
    plan = FaultPlan(rate=1.0, kinds=("500",))
    with FakeLLMServer(latency=0.0, faults=plan) as srv:
        request = fake_request(srv, "always failing", metadata={"test": "t::x"})
        with make_client(tmp_path / "c", max_attempts=3) as client:
            with pytest.raises(LLMCallError) as info:
                client.complete(request)
            assert client.stats.retries == 2 and client.stats.errors == 1
        assert srv.requests == 3
    assert "HTTP 500" in str(info.value) and "gave up after 3 attempts" in str(info.value)
    assert "fake server error 500" in str(info.value)
    with make_client(tmp_path / "c", cache_mode="replay") as client:
        with pytest.raises(CacheMissError):
            client.complete(request)


def test_empty_content_forever_is_an_error_not_a_cached_empty_answer(tmp_path):
    with FakeLLMServer(latency=0.0, faults=FaultPlan(rate=1.0, kinds=("empty",))) as srv:
        with make_client(tmp_path / "c", max_attempts=2) as client:
            with pytest.raises(LLMCallError, match="empty"):
                client.complete(fake_request(srv, "q"))
        assert srv.requests == 2
    from pytest_judgerel.llm.cache_admin import cache_stats

    assert cache_stats(tmp_path / "c").entries == 0


def test_retry_after_is_honoured_and_capped(tmp_path):
    plan = FaultPlan(schedule={0: "429"}, retry_after=0.4)
    with FakeLLMServer(latency=0.0, faults=plan) as srv:
        with make_client(tmp_path / "a", backoff_base=0.0, cache_mode="off") as client:
            start = time.perf_counter()
            client.complete(fake_request(srv, "q"))
            assert time.perf_counter() - start >= 0.4
    plan = FaultPlan(schedule={0: "429"}, retry_after=600)
    with FakeLLMServer(latency=0.0, faults=plan) as srv:
        with make_client(tmp_path / "b", backoff_base=0.0, retry_after_cap=0.1, cache_mode="off") as client:
            start = time.perf_counter()
            client.complete(fake_request(srv, "q"))
            assert time.perf_counter() - start < 3.0
            assert client.stats.retries == 1


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_client_errors_fail_fast_with_the_provider_message(status, tmp_path):
    model = unique_model()
    calls = []

    def refusing(messages, **params):
        calls.append(1)
        raise ScriptedHTTPError(status, f"provider says no ({status})")

    register_scripted(model, refusing)
    with make_client(tmp_path / "c") as client:
        with pytest.raises(LLMCallError) as info:
            client.complete(LLMRequest(model=model, messages=[{"role": "user", "content": "x"}]))
        assert client.stats.retries == 0
    assert len(calls) == 1
    assert f"provider says no ({status})" in str(info.value)
    assert f"HTTP {status}" in str(info.value) and "not retryable" in str(info.value)


def test_scripted_rate_limit_with_retry_after_then_success(tmp_path):
    model = unique_model()
    attempts = []

    def flaky(messages, **params):
        attempts.append(time.perf_counter())
        if len(attempts) < 3:
            raise ScriptedHTTPError(429, "slow down", retry_after=0.15)
        return "done"

    register_scripted(model, flaky)
    with make_client(tmp_path / "c", backoff_base=0.0) as client:
        response = client.complete(LLMRequest(model=model, messages=[{"role": "user", "content": "x"}]))
        assert client.stats.retries == 2
    assert response.text == "done" and response.attempts == 3
    assert attempts[1] - attempts[0] >= 0.14 and attempts[2] - attempts[1] >= 0.14



class _ProviderStatusError(Exception):
    """Not a ScriptedHTTPError: an error of the script's own making that carries an HTTP status."""

    def __init__(self, status_code, retry_after=None):
        super().__init__(f"upstream said {status_code}")
        self.status_code = status_code
        self.retry_after = retry_after


def test_any_script_error_with_a_status_code_fails_like_that_status(tmp_path):
    """The product recognises a script's HTTP failure by its ``status_code`` attribute (duck
    typing), so it never imports the test support that defines ScriptedHTTPError."""
    model, refused = unique_model(), unique_model()
    attempts = []

    def flaky(messages, **params):
        attempts.append(1)
        if len(attempts) < 2:
            raise _ProviderStatusError(429, retry_after=0.01)
        return "done"

    def not_found(messages, **params):
        raise _ProviderStatusError(404)

    register_scripted(model, flaky)
    register_scripted(refused, not_found)
    with make_client(tmp_path / "c", backoff_base=0.0) as client:
        response = client.complete(LLMRequest(model=model, messages=[{"role": "user", "content": "x"}]))
        assert response.text == "done" and client.stats.retries == 1
        with pytest.raises(LLMCallError) as info:
            client.complete(LLMRequest(model=refused, messages=[{"role": "user", "content": "x"}]))
    assert "HTTP 404" in str(info.value) and "upstream said 404" in str(info.value)


def test_full_jitter_delays_stay_within_the_exponential_ceiling():
    policy = RetryPolicy(max_attempts=6, base_delay=0.5, max_delay=4.0, rng=random.Random(3))
    for attempt in range(1, 7):
        ceiling = min(4.0, 0.5 * 2 ** (attempt - 1))
        delays = [policy.delay(attempt) for _ in range(200)]
        assert all(0.0 <= d <= ceiling for d in delays)
        assert max(delays) > 0.8 * ceiling  # full jitter spreads over the whole range
    assert policy.delay(1, retry_after=10.0) == 10.0
    assert RetryPolicy(retry_after_cap=2.0).delay(1, retry_after=10.0) == 2.0
    with pytest.raises(ConfigError):
        RetryPolicy(max_attempts=0)


def test_classification():
    assert classify_failure(EmptyResponseError("x")).retryable
    assert not classify_failure(ValueError("bad")).retryable

    class Fake(Exception):
        def __init__(self, status):
            super().__init__(f"status {status}")
            self.status_code = status

    assert classify_failure(Fake(429)).retryable
    assert classify_failure(Fake(503)).retryable
    assert not classify_failure(Fake(400)).retryable
    assert not classify_failure(Fake(404)).retryable


@pytest.mark.parametrize("status", [408, 409, 500, 502, 503, 529])
def test_retryable_statuses_from_a_scripted_provider(status, tmp_path):
    model = unique_model()
    calls = []

    def once_failing(messages, **params):
        calls.append(1)
        if len(calls) == 1:
            raise ScriptedHTTPError(status, f"transient {status}")
        return "recovered"

    register_scripted(model, once_failing)
    with make_client(tmp_path / "c") as client:
        response = client.complete(LLMRequest(model=model, messages=[{"role": "user", "content": "x"}]))
        assert client.stats.retries == 1
    assert response.text == "recovered" and response.attempts == 2 and len(calls) == 2


def test_missing_credentials_fail_fast_even_when_reported_as_500():
    from pytest_judgerel.llm.retry import classify_failure

    class InternalServerError(Exception):
        status_code = 500

    info = classify_failure(InternalServerError("OpenAIException - Missing credentials. Please pass an `api_key`"))
    assert not info.retryable and info.kind == "auth"

    class AuthenticationError(Exception):
        status_code = 401

    assert not classify_failure(AuthenticationError("bad key")).retryable
