"""The fast path, retries and prices through public behaviour: tests written for the bugs of
``tools/mutation/held_out_mutants.py`` (batch 1) that the earlier tests let through.  Real HTTP to a
loopback server (the scripted server of tests/test_llm_mutants.py, which logs each request's path,
headers and prompt), a public ``LLMClient``; docs/benchmarks.md lists each bug and its test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_judgerel.errors import LLMCallError
from pytest_judgerel.llm import LLMClient, LLMRequest, LLMSettings

from test_llm_mutants import Scripted, _completion, certificate, scripted_server  # noqa: F401 (fixtures)


def _client(tmp_path: Path, **settings: Any) -> LLMClient:
    options: dict[str, Any] = {"cache_mode": "off", "backend": "http", "max_attempts": 1, "backoff_base": 0.001,
                               "backoff_max": 0.01, "timeout": 20.0, "cache_dir": str(tmp_path / "cache")}
    options.update(settings)
    return LLMClient(LLMSettings(**options))


def _request(url: str | None, text: str, **fields: Any) -> LLMRequest:
    fields.setdefault("api_key", "sk-test-0000")
    return LLMRequest(model=fields.pop("model", "openai/judge"), api_base=url,
                      messages=({"role": "user", "content": text},), **fields)


# ---------------------------------------------------------------- URLs and headers
def test_each_server_of_one_client_gets_its_own_requests(scripted_server, tmp_path):
    """W02: the URL memo not keyed by the server (every call goes to the first server seen)."""
    first, second = scripted_server(), scripted_server()
    with _client(tmp_path) as client:
        for i, server in enumerate([first, second, first, second]):
            client.complete(_request(server.url, f"call {i}"))
    assert [e["prompt"] for e in first.log] == ["call 0", "call 2"]
    assert [e["prompt"] for e in second.log] == ["call 1", "call 3"]
    assert all(e["path"] == "/v1/chat/completions" for e in first.log + second.log)


def test_keys_that_share_a_long_prefix_are_each_sent_as_themselves(scripted_server, tmp_path):
    """W03: the per-key headers remembered under a prefix of the key (OpenAI's project keys all
    begin ``sk-proj-``)."""
    server = scripted_server()
    keys = ["sk-proj-AAAAAAAAAAAAAAAA-1", "sk-proj-AAAAAAAAAAAAAAAA-2", "sk-proj-BBBB", "sk-proj-AAAAAAAAAAAAAAAA-1"]
    with _client(tmp_path) as client:
        for i, key in enumerate(keys):
            client.complete(_request(server.url, f"key {i}", api_key=key))
    assert [e["headers"]["authorization"] for e in server.log] == [f"Bearer {k}" for k in keys]


def test_the_requests_own_key_wins_over_the_providers_variable(scripted_server, tmp_path, monkeypatch):
    """W04: OPENAI_API_KEY preferred to the key the request carries."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    server = scripted_server()
    with _client(tmp_path) as client:
        client.complete(_request(server.url, "own key", api_key="sk-the-requests-own"))
        client.complete(_request(server.url, "no key", api_key=None))
    assert [e["headers"]["authorization"] for e in server.log] == [
        "Bearer sk-the-requests-own", "Bearer sk-from-the-environment"]


def test_extra_headers_replace_the_default_ones_as_the_openai_sdk_does(scripted_server, tmp_path):
    """W05: a request's extra_headers cannot replace a default header (a gateway's own token in
    Authorization, another Accept)."""
    server = scripted_server()
    with _client(tmp_path) as client:
        client.complete(_request(server.url, "override", extra_params={
            "extra_headers": {"Authorization": "Bearer gateway-token", "Accept": "application/x-ndjson"}}))
        client.complete(_request(server.url, "plain"))
    sent = [e["headers"] for e in server.log]
    assert sent[0]["authorization"] == "Bearer gateway-token" and sent[0]["accept"] == "application/x-ndjson"
    assert sent[1]["authorization"] == "Bearer sk-test-0000" and sent[1]["accept"] == "application/json"


@pytest.mark.parametrize("off, on", [("false", "true"), ("0", "1"), ("False", "TRUE"), ("no", "yes"),
                                     ("off", "on"), ("NO", "yes"), (" false ", "true")])
def test_every_documented_false_word_turns_ssl_verify_off(scripted_server, certificate, tmp_path, monkeypatch,
                                                          off, on):
    """W06: only ``false`` and ``0`` honoured (``no`` and ``off`` left certificates checked); the
    default (certificates checked, nothing sent) is test_llm_mutants.py's."""
    server = scripted_server(tls=certificate)
    monkeypatch.setenv("SSL_VERIFY", off)
    with _client(tmp_path) as client:
        assert client.complete(_request(server.url, f"verify {off}")).text == "3"
    monkeypatch.setenv("SSL_VERIFY", on)
    with _client(tmp_path) as client:
        with pytest.raises(LLMCallError, match="(?i)certificate"):
            client.complete(_request(server.url, f"verify {on}"))


def test_a_reply_of_whitespace_only_is_retried_as_empty(scripted_server, tmp_path):
    """W08: a reply whose text is only blanks accepted as the answer (and cached)."""
    server = scripted_server([(200, _completion(" \n\t "), {})])
    with _client(tmp_path, max_attempts=2) as client:
        reply = client.complete(_request(server.url, "blank first"))
        assert reply.text == "3" and client.stats.retries == 1
    assert len(server.log) == 2


# ---------------------------------------------------------------- retries
@pytest.mark.parametrize("status", [408, 409, 425, 429])
def test_the_retryable_4xx_codes_are_retried(scripted_server, tmp_path, status):
    """R01: a listed 4xx code (408 request timeout) dropped from the retryable ones."""
    server = scripted_server([(status, b'{"error": {"message": "try again"}}', {})])
    with _client(tmp_path, max_attempts=2) as client:
        assert client.complete(_request(server.url, f"status {status}")).text == "3"
        assert client.stats.retries == 1
    assert len(server.log) == 2


def test_a_403_is_a_key_failure_with_the_key_hint(scripted_server, tmp_path):
    """R02: 403 classified as a plain HTTP error (no "missing or rejected key" and no hint)."""
    server = scripted_server([(403, b'{"error": {"message": "this key may not use this model"}}', {})])
    with _client(tmp_path, max_attempts=3) as client:
        with pytest.raises(LLMCallError) as info:
            client.complete(_request(server.url, "forbidden"))
        assert client.stats.retries == 0
    message = str(info.value)
    assert "HTTP 403, not retryable; missing or rejected key" in message and "JUDGEREL_API_KEY" in message
    assert len(server.log) == 1


def test_retry_after_ms_is_read_in_milliseconds(scripted_server, tmp_path):
    """R03: ``retry-after-ms`` read as seconds (a 300 ms hint became a 30 s wait, the cap)."""
    import time

    server = scripted_server([(429, b'{"error": {"message": "slow down"}}', {"retry-after-ms": "300"})])
    with _client(tmp_path, max_attempts=2, backoff_base=0.0) as client:
        start = time.perf_counter()
        assert client.complete(_request(server.url, "ms hint")).text == "3"
        waited = time.perf_counter() - start
    assert 0.3 <= waited < 10.0, waited


# ---------------------------------------------------------------- prices
def test_a_call_is_priced_by_the_model_asked_for_not_the_name_the_server_reports(scripted_server, tmp_path):
    """P03: priced by the model name the reply carries (a server's own or dated name, without the
    provider prefix: no price, cost 0)."""
    from pytest_judgerel.llm.prices import call_cost

    server = scripted_server([(200, _completion("4", model="served-under-another-name"), {})])
    with _client(tmp_path) as client:
        reply = client.complete(_request(server.url, "priced", model="openai/gpt-4o-mini"))
        assert reply.model == "served-under-another-name"
        expected = call_cost("openai/gpt-4o-mini", reply.usage)
        assert expected > 0 and reply.cost == pytest.approx(expected) and client.stats.cost == pytest.approx(expected)


# ---------------------------------------------------------------- batch 2's survivors
def test_an_openai_error_body_is_shown_as_its_message_not_raw(scripted_server, tmp_path):
    """W10: an OpenAI-style error body (``{"error": {"message": ...}}``) shown raw, JSON and all,
    instead of its message."""
    body = b'{"error": {"message": "The model judge-x does not exist", "type": "invalid_request_error"}}'
    server = scripted_server([(404, body, {})])
    with _client(tmp_path, max_attempts=1) as client:
        with pytest.raises(LLMCallError) as info:
            client.complete(_request(server.url, "unknown model"))
    message = str(info.value)
    assert "HTTP 404: The model judge-x does not exist" in message, message
    assert "invalid_request_error" not in message and '{"error"' not in message, message
    assert len(server.log) == 1


# ---------------------------------------------------------------- batch 3's survivors
@pytest.mark.parametrize("model, sent", [("hosted_vllm/meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B-Instruct"),
                                         ("openai/org/team/judge", "org/team/judge"),
                                         ("openai/judge", "judge")])
def test_a_model_name_keeps_everything_after_its_provider_on_the_wire(scripted_server, tmp_path, model, sent):
    """W14: the model sent as the part after the *last* slash (``rpartition``): a vLLM model named
    by its Hugging Face id (``hosted_vllm/meta-llama/Llama-3``) lost its organisation and the server
    answered 404.  Only the provider prefix goes; the reply's model falls back to that same name
    when the server reports none."""
    no_model = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": "2"}}]}).encode()
    server = scripted_server([(200, _completion("4", model="served"), {}), (200, no_model, {})])
    with _client(tmp_path) as client:
        first = client.complete(_request(server.url, "named", model=model))
        second = client.complete(_request(server.url, "unnamed", model=model))
    assert [e["body"]["model"] for e in server.log] == [sent, sent]
    assert (first.text, first.model) == ("4", "served")
    assert (second.text, second.model) == ("2", sent)


def test_a_retry_after_given_as_an_http_date_is_honoured(scripted_server, tmp_path):
    """R11: ``Retry-After: <HTTP date>`` (RFC 9110 section 10.2.3, the other form besides seconds)
    ignored: the retry went out at once.  The date is about 2 s ahead of now (whole seconds), so the
    wait is over 1 s; without a hint the backoff here is 0."""
    import time
    from email.utils import formatdate

    server = scripted_server()
    with _client(tmp_path, max_attempts=2, backoff_base=0.0) as client:
        when = formatdate(time.time() + 2.0, usegmt=True)  # just before the call: load cannot eat the margin
        server.script.append((429, b'{"error": {"message": "slow down"}}', {"Retry-After": when}))
        start = time.perf_counter()
        assert client.complete(_request(server.url, "date hint")).text == "3"
        waited = time.perf_counter() - start
        assert client.stats.retries == 1
    assert 0.9 <= waited < 10.0, waited


@pytest.mark.parametrize("ahead, low, high", [(20.0, 18.0, 20.01), (-30.0, 0.0, 0.0)])
def test_classify_failure_reads_a_retry_after_date_as_seconds_from_now(ahead, low, high):
    """R11: the date form of Retry-After, read by ``classify_failure``: a date 20 s ahead is a wait
    of about 20 s, a date in the past a wait of 0 (never negative, never ignored); an unreadable
    value is no hint."""
    import time
    from email.utils import formatdate

    from pytest_judgerel.llm.retry import classify_failure
    from pytest_judgerel.llm.wire import WireHTTPError

    info = classify_failure(WireHTTPError(503, "HTTP 503: busy", {"retry-after": formatdate(time.time() + ahead,
                                                                                              usegmt=True)}))
    assert info.retryable and info.retry_after is not None and low <= info.retry_after <= high, info
    assert classify_failure(WireHTTPError(503, "HTTP 503", {"retry-after": "soon"})).retry_after is None


# ---------------------------------------------------------------- the wire's other rules
@pytest.mark.parametrize("model, backend", [
    ("openai/omni-judge", "http"), ("openai/my-o1", "http"), ("openai/gpt-4o", "http"), ("openai/gpt-4.1", "http"),
    ("openai/o1", "litellm"), ("openai/o4-mini", "litellm"), ("openai/gpt-5", "litellm"), ("openai/", "litellm"),
    ("hosted_vllm/meta-llama/Llama-3", "http"), ("hosted_vllm/", "litellm"), ("openrouter/x/y", "litellm"),
])
def test_auto_routes_by_the_name_after_the_provider(model, backend):
    """``auto`` leaves to litellm only OpenAI's reasoning models, named ``o<digit>...`` or
    ``gpt-5...`` from the start of the name (a name that merely contains ``o1`` or starts with
    ``o`` goes over the wire), and a name with no model after its provider."""
    from pytest_judgerel.llm.wire import route

    assert route("auto", model, "http://127.0.0.1:9/v1") == backend


def test_the_http_backend_refuses_a_provider_without_a_model_name():
    from pytest_judgerel.errors import ConfigError
    from pytest_judgerel.llm.wire import route

    with pytest.raises(ConfigError, match="speaks OpenAI-compatible endpoints only .* not model 'openai/'"):
        route("http", "openai/", "http://127.0.0.1:9/v1")


@pytest.mark.parametrize("body, shown", [
    (b'{"error": "quota exceeded for today"}', "HTTP 400: quota exceeded for today"),
    (b'{"message": "prompt too long", "code": 7}', "HTTP 400: prompt too long"),
    (b'{"error": {"code": 7}}', 'HTTP 400: {"error": {"code": 7}}'),
    (b"plain words from a proxy", "HTTP 400: plain words from a proxy"),
    (b"", "HTTP 400: no body"),
    (b'{"error": {"message": "' + b"m" * 700 + b'"}}', "HTTP 400: " + "m" * 500),
    (b"p" * 700, "HTTP 400: " + "p" * 300),
])
def test_an_error_status_is_shown_with_the_servers_own_words(scripted_server, tmp_path, body, shown):
    """The failure quotes the server: OpenAI's ``{"error": {"message"}}`` (elsewhere), a bare
    ``{"error": "..."}`` or ``{"message": ...}``, else the start of the body (300 bytes; a message
    500 characters), and says when there was no body."""
    server = scripted_server([(400, body, {})])
    with _client(tmp_path) as client:
        with pytest.raises(LLMCallError) as info:
            client.complete(_request(server.url, "error body"))
        assert client.stats.errors == 1 and client.stats.retries == 0
    assert str(info.value).endswith(f"WireHTTPError: {shown}"), str(info.value)[-200:]


def test_the_failure_names_the_model_server_status_attempts_and_test(scripted_server, tmp_path):
    server = scripted_server([(503, b'{"error": {"message": "busy"}}', {})] * 2)
    with _client(tmp_path, max_attempts=2) as client:
        with pytest.raises(LLMCallError) as info:
            client.complete(_request(server.url, "give up", metadata={"test": "tests/test_x.py::test_y"}))
        assert client.stats.retries == 1 and client.stats.errors == 1
    assert str(info.value) == (f"model 'openai/judge' at {server.url} call failed (HTTP 503, gave up after 2 attempts) "
                               "for test tests/test_x.py::test_y: WireHTTPError: HTTP 503: busy")


def test_a_key_the_server_echoes_in_its_error_is_masked(scripted_server, tmp_path):
    key = "sk-echoed-secret-0123456789"
    server = scripted_server([(400, b'{"error": {"message": "key ' + key.encode() + b' is not valid"}}', {})])
    with _client(tmp_path) as client:
        with pytest.raises(LLMCallError) as info:
            client.complete(_request(server.url, "echo", api_key=key))
    assert key not in str(info.value) and "HTTP 400: key *** is not valid" in str(info.value)


@pytest.mark.parametrize("key, masked", [("sk-12345", True), ("sk-1234", False)])
def test_an_echoed_key_is_masked_from_eight_characters_on(scripted_server, tmp_path, key, masked):
    """Keys of 8 characters or more are masked in an echoed error body; shorter ones are not (so
    that a short placeholder key does not blank common words out of a server's message)."""
    server = scripted_server([(400, b'{"error": {"message": "key ' + key.encode() + b' refused"}}', {})])
    with _client(tmp_path) as client:
        with pytest.raises(LLMCallError) as info:
            client.complete(_request(server.url, "echo", api_key=key))
    shown = "***" if masked else key
    assert f"HTTP 400: key {shown} refused" in str(info.value)


def test_the_organisation_header_is_sent_when_openai_organization_is_set(scripted_server, tmp_path, monkeypatch):
    server = scripted_server()
    monkeypatch.delenv("OPENAI_ORGANIZATION", raising=False)
    with _client(tmp_path) as client:
        client.complete(_request(server.url, "no org"))
    monkeypatch.setenv("OPENAI_ORGANIZATION", "org-team-7")
    with _client(tmp_path) as client:
        client.complete(_request(server.url, "with org"))
    assert "openai-organization" not in server.log[0]["headers"]
    assert server.log[1]["headers"]["openai-organization"] == "org-team-7"


@pytest.mark.parametrize("usage, expected", [
    (None, {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}),
    ({"prompt_tokens": 11, "completion_tokens": None}, {"prompt_tokens": 11, "completion_tokens": 0, "total_tokens": 0}),
    ([1, 2, 3], {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}),
    ({"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}, {"prompt_tokens": 7, "completion_tokens": 2,
                                                                       "total_tokens": 9}),
])
def test_a_replys_usage_is_read_as_token_counts(scripted_server, tmp_path, usage, expected):
    body = {"model": "m", "choices": [{"message": {"content": "4"}}], "system_fingerprint": "fp_abc"}
    if usage is not None:
        body["usage"] = usage
    server = scripted_server([(200, json.dumps(body).encode(), {})])
    with _client(tmp_path) as client:
        reply = client.complete(_request(server.url, "usage"))
        assert client.stats.prompt_tokens == expected["prompt_tokens"]
        assert client.stats.completion_tokens == expected["completion_tokens"]
    assert reply.usage == expected and reply.system_fingerprint == "fp_abc" and reply.attempts == 1


@pytest.mark.parametrize("content", [None, "", ["4"], {"text": "4"}])
def test_a_reply_without_text_content_is_retried(scripted_server, tmp_path, content):
    body = json.dumps({"model": "m", "choices": [{"message": {"content": content}}]}).encode()
    server = scripted_server([(200, body, {})])
    with _client(tmp_path, max_attempts=2) as client:
        reply = client.complete(_request(server.url, "no text"))
        assert client.stats.retries == 1
    assert reply.text == "3" and reply.attempts == 2 and reply.system_fingerprint is None


# ---------------------------------------------------------------- retry classification and policy
class _Status(Exception):
    def __init__(self, status: int, message: str = "", headers: dict[str, str] | None = None):
        super().__init__(message or f"status {status}")
        self.status_code = status
        self.headers = headers or {}


@pytest.mark.parametrize("exc, retryable, kind, status", [
    (_Status(500, "Missing credentials. Please pass an api_key"), False, "auth", 500),
    (_Status(400, "The api_key client option must be set"), False, "auth", 400),
    (_Status(403), False, "auth", 403),
    (_Status(422), False, "http_422", 422),
    (_Status(404), False, "http_404", 404),
    (_Status(599), True, "http_599", 599),
    (_Status(500), True, "http_500", 500),
    (ValueError("bad"), False, "ValueError", None),
    (KeyError("k"), False, "KeyError", None),
    (RuntimeError("odd"), True, "RuntimeError", None),
])
def test_classify_failure_kinds(exc, retryable, kind, status):
    from pytest_judgerel.llm.retry import classify_failure

    info = classify_failure(exc)
    assert (info.retryable, info.kind, info.status) == (retryable, kind, status), info


def test_classify_failure_reads_httpx_timeouts_and_connection_errors():
    import httpx

    from pytest_judgerel.llm.retry import classify_failure

    timeout = classify_failure(httpx.ReadTimeout("timed out"))
    assert (timeout.retryable, timeout.kind, timeout.status) == (True, "timeout", 408)
    refused = classify_failure(httpx.ConnectError("connection refused"))
    assert (refused.retryable, refused.kind, refused.status) == (True, "connection", None)
    empty = classify_failure(__import__("pytest_judgerel.llm.retry", fromlist=["x"]).EmptyResponseError("nothing"))
    assert (empty.retryable, empty.kind, empty.message) == (True, "empty", "nothing")


def test_classify_failure_keeps_the_message_before_an_appended_traceback():
    from pytest_judgerel.llm.retry import classify_failure

    info = classify_failure(_Status(503, "upstream busy\nTraceback (most recent call last):\n  File x"))
    assert info.message == "upstream busy"
    assert classify_failure(RuntimeError()).message == "RuntimeError"


@pytest.mark.parametrize("headers, wait", [
    ({"retry-after": "7"}, 7.0), ({"retry-after": "2.5"}, 2.5), ({"retry-after": "-3"}, 0.0),
    ({"retry-after-ms": "1500"}, 1.5), ({"retry-after-ms": "-20"}, 0.0),
    ({"retry-after-ms": "soon", "retry-after": "4"}, 4.0), ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
    ({}, None),
])
def test_retry_after_hints_in_seconds_and_milliseconds(headers, wait):
    """``retry-after-ms`` wins over ``retry-after``; an unreadable one falls back to the other; a
    negative hint is no wait; only a retryable status carries a hint."""
    from pytest_judgerel.llm.retry import classify_failure

    assert classify_failure(_Status(429, headers=headers)).retry_after == wait
    assert classify_failure(_Status(400, headers=headers)).retry_after is None


def test_the_retry_policy_waits_the_servers_hint_within_its_cap():
    import random

    from pytest_judgerel.llm.retry import RetryPolicy

    policy = RetryPolicy(base_delay=0.0, max_delay=0.0, retry_after_cap=5.0, rng=random.Random(1))
    assert [policy.delay(1, hint) for hint in (None, 0.0, 2.0, 5.0, 6.0)] == [0.0, 0.0, 2.0, 5.0, 5.0]
    jitter = RetryPolicy(base_delay=1.0, max_delay=8.0, rng=random.Random(2))
    assert all(jitter.delay(4, 0.001) >= 0.001 for _ in range(50))
    assert max(jitter.delay(4, 0.001) for _ in range(200)) > 7.0  # attempt 4: ceiling min(8, 1 * 2**3) = 8


@pytest.mark.parametrize("fields, message", [
    ({"max_attempts": 0}, "max_attempts must be an int >= 1, got 0"),
    ({"max_attempts": True}, "max_attempts must be an int >= 1, got True"),
    ({"max_attempts": 2.0}, "max_attempts must be an int >= 1, got 2.0"),
    ({"base_delay": -0.1}, "base_delay must be >= 0, got -0.1"),
    ({"max_delay": -1}, "max_delay must be >= 0, got -1"),
    ({"retry_after_cap": -1}, "retry_after_cap must be >= 0, got -1"),
])
def test_a_retry_policy_refuses_impossible_settings(fields, message):
    from pytest_judgerel.errors import ConfigError
    from pytest_judgerel.llm.retry import RetryPolicy

    with pytest.raises(ConfigError) as info:
        RetryPolicy(**fields)
    assert str(info.value) == message
    assert RetryPolicy(max_attempts=1, base_delay=0, max_delay=0, retry_after_cap=0).max_attempts == 1


def test_a_retry_hint_and_status_are_found_where_litellm_and_httpx_keep_them():
    """litellm's ``litellm_response_headers`` first, then the exception's ``headers``, then its
    ``response``'s; the status from ``status_code`` or the response's."""
    from types import SimpleNamespace

    from pytest_judgerel.llm.retry import classify_failure

    class RateLimitError(Exception):
        status_code = 429

    both = RateLimitError("slow down")
    both.litellm_response_headers = {"retry-after": "3"}
    both.headers = {"retry-after": "9"}
    assert classify_failure(both).retry_after == 3.0
    only_own = RateLimitError("slow down")
    only_own.headers = {"retry-after": "9"}
    assert classify_failure(only_own).retry_after == 9.0

    class FromResponse(Exception):
        pass

    nested = FromResponse("busy")
    nested.response = SimpleNamespace(status_code=503, headers={"retry-after": "4"})
    info = classify_failure(nested)
    assert (info.retryable, info.status, info.kind, info.retry_after) == (True, 503, "http_503", 4.0)


# ---------------------------------------------------------------- prices, from litellm's table read here
def _litellm_table() -> dict:
    import importlib.util
    import os

    spec = importlib.util.find_spec("litellm")
    if spec is None:
        pytest.skip("litellm is not installed")
    for folder in spec.submodule_search_locations or []:
        path = os.path.join(folder, "model_prices_and_context_window_backup.json")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as fh:
                return json.load(fh)
    pytest.skip("litellm ships no price table")


@pytest.mark.parametrize("name", ["gpt-4o-mini", "gpt-4o", "gpt-3.5-turbo"])
def test_a_calls_cost_is_prompt_tokens_at_the_input_price_plus_completion_tokens_at_the_output_price(name):
    from pytest_judgerel.llm.prices import call_cost, token_prices

    entry = _litellm_table()[name]
    assert entry["litellm_provider"] == "openai"
    price_in, price_out = float(entry["input_cost_per_token"]), float(entry["output_cost_per_token"])
    assert price_in != price_out
    assert token_prices(f"openai/{name}") == (price_in, price_out)
    assert call_cost(f"openai/{name}", {"prompt_tokens": 1000, "completion_tokens": 10, "total_tokens": 1010}) == \
        pytest.approx(1000 * price_in + 10 * price_out, rel=1e-12)
    assert call_cost(f"openai/{name}", {"completion_tokens": 7}) == pytest.approx(7 * price_out, rel=1e-12)
    assert call_cost(f"openai/{name}", {"prompt_tokens": 7}) == pytest.approx(7 * price_in, rel=1e-12)
    assert call_cost(f"openai/{name}", {}) == 0.0
    assert token_prices(f"anthropic/{name}") is None and call_cost(f"hosted_vllm/{name}", {"prompt_tokens": 9}) == 0.0
