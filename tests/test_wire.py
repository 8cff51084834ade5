"""The HTTP fast path (pytest_judgerel/llm/wire.py) against litellm on a real loopback server:
the same bodies on the wire, the same answers, costs and cache entries, the same error rules."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pytest_judgerel.errors import ConfigError, LLMCallError, MissingKeyError
from pytest_judgerel.llm import LLMClient, LLMRequest, LLMSettings
from pytest_judgerel.testing import FakeLLMServer, FaultPlan
from pytest_judgerel.llm.wire import BACKENDS, chat_body, route

MSGS = ({"role": "system", "content": "You grade."}, {"role": "user", "content": "Rate “this” é from 0 to 5."})


def _client(tmp_path, backend, mode="off", **kw):
    return LLMClient(LLMSettings(cache_dir=tmp_path / "cache", cache_mode=mode, backend=backend, **kw))


def _request(url, **kw):
    fields = dict(model="openai/judge", messages=MSGS, api_base=url, api_key="sk-test")
    fields.update(kw)
    return LLMRequest(**fields)


# ------------------------------------------------------------------------------------------ routing
@pytest.mark.parametrize("backend, model, api_base, expected", [
    ("auto", "openai/judge", "http://127.0.0.1:1/v1", "http"),
    ("auto", "openai/gpt-4o-mini", None, "http"),
    ("auto", "openai/o3-mini", None, "litellm"),          # litellm rewrites its parameters
    ("auto", "openai/gpt-5-mini", None, "litellm"),
    ("auto", "openai/o3-mini", "http://127.0.0.1:1/v1", "litellm"),  # litellm rewrites by name, any server
    ("auto", "hosted_vllm/qwen", "http://127.0.0.1:1/v1", "http"),
    ("auto", "hosted_vllm/qwen", None, "litellm"),
    ("auto", "anthropic/claude-3-5-haiku", None, "litellm"),
    ("auto", "gpt-4o-mini", None, "litellm"),             # no provider prefix: litellm's guess
    ("auto", "scripted/x", None, "litellm"),              # in-process models have no wire
    ("http", "scripted/x", None, "litellm"),
    ("litellm", "openai/judge", "http://127.0.0.1:1/v1", "litellm"),
    ("http", "openai/o3-mini", None, "http"),
])
def test_route(backend, model, api_base, expected):
    assert route(backend, model, api_base) == expected


@pytest.mark.parametrize("model, api_base, cause", [
    ("anthropic/claude-3-5-haiku", None, "speaks OpenAI-compatible endpoints only"),
    ("ollama/llama3", "http://127.0.0.1:1", "speaks OpenAI-compatible endpoints only"),
    ("hosted_vllm/qwen", None, "needs an api_base"),
])
def test_http_backend_refuses_what_it_cannot_send_before_any_call(tmp_path, model, api_base, cause):
    with FakeLLMServer(latency=0) as srv:
        client = _client(tmp_path, "http")
        with pytest.raises(ConfigError, match=cause):
            client.complete(LLMRequest(model=model, messages=MSGS, api_base=api_base, api_key="k"))
        assert srv.requests == 0 and client.stats.calls == 0
        client.close()


def test_backend_setting_is_checked(monkeypatch):
    with pytest.raises(ConfigError, match="backend must be one of auto, litellm, http"):
        LLMSettings(backend="fast")
    monkeypatch.setenv("JUDGEREL_BACKEND", "litellm")
    assert LLMSettings().backend == "litellm"
    monkeypatch.setenv("JUDGEREL_BACKEND", "bogus")
    with pytest.raises(ConfigError, match="got 'bogus'"):
        LLMSettings()
    assert BACKENDS == ("auto", "litellm", "http")


# ------------------------------------------------------------------------- the same call on the wire
REQUESTS = [
    {},
    {"temperature": 0.7, "top_p": 0.9, "max_tokens": 20, "seed": 3},
    {"stop": ("\n", "END"), "grammar": 'root ::= [0-5]'},
    {"response_format": {"type": "json_object"}},
    {"extra_params": {"presence_penalty": 0.1, "logit_bias": {"1": 2}}},
    {"extra_params": {"extra_body": {"min_p": 0.05}}},
    {"grammar": 'root ::= [0-5]', "extra_params": {"extra_body": {"min_p": 0.05}}},
    {"tools": ({"type": "function", "function": {"name": "score", "parameters": {"type": "object",
                                                                                  "properties": {}}}},)},
]


@pytest.mark.parametrize("model", ["openai/judge", "hosted_vllm/judge"])
@pytest.mark.parametrize("fields", REQUESTS, ids=lambda f: ",".join(f) or "plain")
def test_fast_path_sends_the_body_litellm_sends(tmp_path, fields, model):
    with FakeLLMServer(latency=0) as srv:
        for backend in ("http", "litellm"):
            client = _client(tmp_path, backend)
            client.complete(_request(srv.url, model=model, **fields))
            client.close()
        bodies = [entry["body"] for entry in srv.log]
    assert len(bodies) == 2
    assert bodies[0] == bodies[1]
    assert bodies[0] == chat_body(_request(srv.url, model=model, **fields))


def test_same_answers_usage_and_cost_through_both_paths(tmp_path):
    """A priced model (litellm's table) costs the same through the fast path, read without litellm."""
    with FakeLLMServer(latency=0) as srv:
        replies = {}
        for backend in ("http", "litellm"):
            client = _client(tmp_path, backend)
            reqs = [_request(srv.url, model="openai/gpt-4o-mini", sample_index=i, seed=i) for i in range(4)]
            replies[backend] = client.complete_many(reqs)
            assert (client.stats.http_calls, client.stats.litellm_calls) == ((4, 0) if backend == "http" else (0, 4))
            client.close()
    for fast, ref in zip(replies["http"], replies["litellm"]):
        assert (fast.text, fast.model, dict(fast.usage)) == (ref.text, ref.model, dict(ref.usage))
        assert ref.cost > 0 and fast.cost == pytest.approx(ref.cost, rel=1e-12)
        assert fast.key == ref.key


def test_unpriced_model_costs_nothing(tmp_path):
    with FakeLLMServer(latency=0) as srv:
        client = _client(tmp_path, "http")
        assert client.complete(_request(srv.url, model="openai/my-local-model")).cost == 0.0
        client.close()


@pytest.mark.parametrize("record, replay", [("http", "litellm"), ("litellm", "http")])
def test_a_cassette_recorded_through_one_path_replays_through_the_other(tmp_path, record, replay):
    with FakeLLMServer(latency=0) as srv:
        reqs = [_request(srv.url, sample_index=i, temperature=1.0) for i in range(5)]
        recorder = _client(tmp_path, record, mode="record")
        first = [r.text for r in recorder.complete_many(reqs)]
        recorder.close()
        sent = srv.requests
        player = _client(tmp_path, replay, mode="replay")
        second = player.complete_many(reqs)
        player.close()
        assert srv.requests == sent == 5
    assert [r.text for r in second] == first and all(r.cached for r in second)


def test_fast_path_run_never_imports_litellm(tmp_path):
    """The reason for the fast path: a run against an OpenAI-compatible server skips litellm's import."""
    script = f"""
import sys
from pytest_judgerel import Judge
from pytest_judgerel.llm import LLMClient, LLMSettings
from pytest_judgerel.testing import FakeLLMServer
with FakeLLMServer(latency=0) as srv:
    client = LLMClient(LLMSettings(cache_dir={str(tmp_path / 'c')!r}))
    judge = Judge(model="openai/judge", template="stsb", scale="0-5", api_base=srv.url, api_key="k", client=client)
    ratings = judge.rate([{{"id": "a", "sentence1": "x", "sentence2": "y"}}], repeats=2)
    client.close()
print(int((ratings.values == ratings.values).sum()), client.stats.http_calls, "litellm" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, "JUDGEREL_BACKEND": "auto"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["2", "2", "False"]


# ------------------------------------------------------------------------------- errors and keys
@pytest.mark.parametrize("kind", ["429", "500", "503", "timeout", "disconnect", "malformed", "empty"])
def test_fast_path_retries_every_transient_fault_once(tmp_path, kind):
    plan = FaultPlan(schedule={0: kind}, retry_after=0.01, timeout_sleep=2.0)
    with FakeLLMServer(latency=0, faults=plan) as srv:
        client = _client(tmp_path, "http", timeout=0.5, backoff_base=0.01)
        reply = client.complete(_request(srv.url))
        client.close()
    assert reply.attempts == 2 and reply.text.strip() and client.stats.retries == 1


def test_fast_path_gives_up_after_max_attempts_with_the_status(tmp_path):
    with FakeLLMServer(latency=0, faults=FaultPlan(rate=1.0, kinds=("503",))) as srv:
        client = _client(tmp_path, "http", max_attempts=3, backoff_base=0.0)
        with pytest.raises(LLMCallError, match=r"HTTP 503, gave up after 3 attempts"):
            client.complete(_request(srv.url))
        assert srv.requests == 3 and client.stats.errors == 1
        client.close()


def test_fast_path_honours_retry_after(tmp_path):
    import time

    plan = FaultPlan(schedule={0: "429"}, retry_after=0.4)
    with FakeLLMServer(latency=0, faults=plan) as srv:
        client = _client(tmp_path, "http", backoff_base=0.0)
        t0 = time.perf_counter()
        client.complete(_request(srv.url))
        assert time.perf_counter() - t0 >= 0.4
        client.close()


def test_rejected_key_is_not_retried_and_names_the_fix_without_the_key(tmp_path):
    with FakeLLMServer(latency=0, api_key="sk-right") as srv:
        client = _client(tmp_path, "http")
        with pytest.raises(LLMCallError) as info:
            client.complete(_request(srv.url, api_key="sk-wrong-secret"))
        client.close()
        assert srv.requests == 1
    message = str(info.value)
    assert "HTTP 401, not retryable" in message and "JUDGEREL_API_KEY" in message
    assert "sk-wrong-secret" not in message and info.value.__cause__ is None


def test_server_key_is_sent_and_env_key_is_read(tmp_path, monkeypatch):
    with FakeLLMServer(latency=0, api_key="sk-env-key") as srv:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-env-key")
        client = _client(tmp_path, "http")
        assert client.complete(_request(srv.url, api_key=None)).text
        client.close()


def test_no_key_for_a_local_server_sends_a_placeholder(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeLLMServer(latency=0) as srv:
        client = _client(tmp_path, "http")
        assert client.complete(_request(srv.url, api_key=None)).text
        client.close()


def test_no_key_for_openai_itself_sends_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    client = _client(tmp_path, "http")
    with pytest.raises(MissingKeyError, match="set the environment variable OPENAI_API_KEY"):
        client.complete(LLMRequest(model="openai/gpt-4o-mini", messages=MSGS))
    assert client.stats.http_calls == 0 and client.stats.errors == 0 and client.stats.retries == 0  # nothing sent
    client.close()


def test_bad_request_is_not_retried_and_quotes_the_server(tmp_path):
    with FakeLLMServer(latency=0) as srv:
        client = _client(tmp_path, "http")
        # the fake server answers 404 for an unknown path: a wrong api_base is not retried
        with pytest.raises(LLMCallError, match=r"HTTP 404, not retryable"):
            client.complete(_request(srv.url + "/nowhere"))
        assert client.stats.retries == 0 and client.stats.errors == 1
        client.close()


def test_a_key_echoed_by_the_server_is_masked(monkeypatch):
    """A server that quotes the key it refused: the message keeps its text, never the key."""
    import asyncio

    from pytest_judgerel.llm import wire

    monkeypatch.setattr(wire, "_error_message", lambda status, body: f"HTTP {status}: bad key sk-echoed-secret-key")
    with FakeLLMServer(latency=0, api_key="sk-the-right-one") as srv:
        transport = wire.WireTransport()
        call = transport.prepare(_request(srv.url, api_key="sk-echoed-secret-key"), "sk-echoed-secret-key")
        async def send_then_close() -> None:
            try:
                await transport.send(call, 5.0)
            finally:
                await transport.aclose()

        with pytest.raises(wire.WireHTTPError) as info:
            asyncio.run(send_then_close())
    assert info.value.status_code == 401
    assert "sk-echoed-secret-key" not in str(info.value) and "bad key ***" in str(info.value)
    assert "sk-echoed-secret-key" not in repr(call)


def test_litellm_own_settings_in_extra_params_route_to_litellm_or_are_refused():
    assert route("auto", "openai/judge", "http://h:1/v1", ("extra_headers",)) == "litellm"
    assert route("auto", "openai/judge", "http://h:1/v1", ("presence_penalty",)) == "http"
    assert route("http", "openai/judge", "http://h:1/v1", ("extra_headers",)) == "http"
    with pytest.raises(ConfigError, match=r"\['drop_params'\] are litellm's own settings"):
        route("http", "openai/judge", "http://h:1/v1", ("drop_params",))


def test_extra_headers_are_sent_as_headers_not_in_the_body(tmp_path):
    from pytest_judgerel.llm.wire import WireTransport

    req = _request("http://h:1/v1", extra_params={"extra_headers": {"X-Team": "eval"}, "presence_penalty": 0.1})
    call = WireTransport().prepare(req, "sk-test")
    assert call.headers["X-Team"] == "eval" and call.headers["Authorization"] == "Bearer sk-test"
    assert b"extra_headers" not in call.content and b"presence_penalty" in call.content
    with FakeLLMServer(latency=0) as srv:
        client = _client(tmp_path, "http")
        client.complete(_request(srv.url, extra_params={"extra_headers": {"X-Team": "eval"}}))
        client.close()
        assert "extra_headers" not in srv.log[0]["body"]


@pytest.mark.parametrize("key", ["sk-from-a-dotenv-file\n", " sk-padded-key", "sk-bad\x00key"],
                         ids=["newline", "space", "nul"])  # an id with the key would name it in the message
def test_a_key_with_whitespace_or_control_characters_fails_clearly_without_showing_it(tmp_path, key):
    with FakeLLMServer(latency=0) as srv:
        client = _client(tmp_path, "http")
        with pytest.raises(LLMCallError, match="contains whitespace or a control character") as info:
            client.complete(_request(srv.url, api_key=key))
        assert srv.requests == 0 and client.stats.retries == 0
        client.close()
    assert key.strip("\n ") not in str(info.value)


def test_a_redirect_is_followed_like_the_openai_sdk(tmp_path):
    import http.server
    import threading

    with FakeLLMServer(latency=0) as srv:
        class Moved(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's naming
                self.send_response(307)
                self.send_header("Location", srv.url + "/chat/completions")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        moved = http.server.HTTPServer(("127.0.0.1", 0), Moved)
        threading.Thread(target=moved.serve_forever, daemon=True).start()
        try:
            client = _client(tmp_path, "http")
            reply = client.complete(_request(f"http://127.0.0.1:{moved.server_port}/v1"))
            client.close()
        finally:
            moved.shutdown()
        assert reply.text.strip() and reply.attempts == 1 and srv.requests == 1


def test_aiohttp_failures_are_classified_like_the_other_clients():
    """The wire's own exceptions: a dropped connection, a truncated body and a read timeout are
    retried as connection and timeout failures; a refused certificate is a connection failure too."""
    import aiohttp

    from pytest_judgerel.llm.retry import classify_failure

    dropped = classify_failure(aiohttp.ServerDisconnectedError())
    truncated = classify_failure(aiohttp.ClientPayloadError("Response payload is not completed"))
    slow = classify_failure(aiohttp.ServerTimeoutError("Timeout on reading data from socket"))
    assert (dropped.kind, dropped.retryable) == ("connection", True)
    assert (truncated.kind, truncated.retryable) == ("connection", True)
    assert (slow.kind, slow.retryable, slow.status) == ("timeout", True, 408)


def test_the_fast_path_pools_with_aiohttp_and_closes_its_session(tmp_path):
    """One session per client, reused across calls, closed by the client's close."""
    with FakeLLMServer(latency=0) as srv:
        client = _client(tmp_path, "http")
        for i in range(3):
            client.complete(_request(srv.url, messages=[{"role": "user", "content": f"pooled {i}"}]))
        transport = client._transports["http"]
        session = transport._wire._client
        assert type(session).__module__.startswith("aiohttp") and not session.closed
        client.close()
        assert session.closed
