"""One endpoint for every call: resolution order, validation, the client's guard, and every
call path (judge fixture, Judge in Python, panel, study runner, MindEval roles) on one server."""

from __future__ import annotations

import json

import pytest

from pytest_judgerel.errors import ConfigError
from pytest_judgerel.llm.endpoint import Endpoint, as_endpoint, resolve_endpoint
from pytest_judgerel.testing.fake_server import FakeLLMServer


@pytest.fixture
def no_env(monkeypatch):
    for name in ("JUDGEREL_MODEL", "JUDGEREL_API_BASE", "JUDGEREL_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_explicit_beats_environment_beats_embedded(no_env):
    import pytest_judgerel.llm.local as local

    no_env.setattr(local, "local_model_available", lambda: True)
    assert resolve_endpoint() == Endpoint("local/smollm2", source="embedded default")
    no_env.setenv("JUDGEREL_MODEL", "openai/env-model")
    no_env.setenv("JUDGEREL_API_BASE", "http://10.0.0.5:8000/v1")
    no_env.setenv("JUDGEREL_API_KEY", "sk-env")
    ep = resolve_endpoint()
    assert (ep.model, ep.api_base, ep.api_key, ep.source) == ("openai/env-model", "http://10.0.0.5:8000/v1",
                                                             "sk-env", "env JUDGEREL_MODEL")
    ep = resolve_endpoint("openai/explicit")
    assert (ep.model, ep.api_base, ep.source) == ("openai/explicit", "http://10.0.0.5:8000/v1", "explicit")
    session = Endpoint("openai/session", "http://127.0.0.1:9/v1", "k", source="--judge-model")
    assert resolve_endpoint(default=session) is session
    marker = resolve_endpoint("openai/marker", default=session)  # a marker's model keeps the session's server
    assert (marker.model, marker.api_base, marker.api_key) == ("openai/marker", session.api_base, "k")
    assert as_endpoint(session) is session and as_endpoint("openai/x").api_base is None


@pytest.mark.parametrize("kwargs, words", [
    ({"model": ""}, "non-empty"),
    ({"model": "openai/x", "api_base": "127.0.0.1:8000"}, "http(s) URL"),
    ({"model": "smollm2", "api_base": "http://127.0.0.1:8000/v1"}, "'openai/smollm2'"),
    ({"model": "local/smollm2", "api_base": "http://127.0.0.1:8000/v1"}, "runs in this process"),
])
def test_bad_endpoints_are_named(kwargs, words):
    with pytest.raises(ConfigError, match=words.replace("(", r"\(").replace(")", r"\)")):
        Endpoint(**kwargs)


def test_an_api_base_without_a_model_is_an_error_not_the_embedded_model(no_env):
    with pytest.raises(ConfigError, match="no judge model"):
        resolve_endpoint(api_base="http://127.0.0.1:8000/v1")


def test_the_key_is_never_shown():
    ep = Endpoint("openai/x", "http://127.0.0.1:1/v1", "sk-SECRET")
    assert "SECRET" not in repr(ep) and "SECRET" not in json.dumps(ep.describe()) and "SECRET" not in ep.label()
    assert ep.describe()["api_key_set"] is True


def test_the_client_refuses_a_request_that_would_leave_the_session_server(tmp_path):
    from pytest_judgerel.llm import LLMClient, LLMRequest, LLMSettings

    session = Endpoint("openai/judge", "http://127.0.0.1:1/v1")
    with LLMClient(LLMSettings(cache_mode="off"), endpoint=session) as client:
        with pytest.raises(ConfigError, match="provider's default endpoint"):
            client.complete(LLMRequest(model="openai/judge", messages=({"role": "user", "content": "x"},)))


def _reply(request) -> str:
    """Each role's expected format: the 5-axis judge, the backstory, a turn, else a score."""
    from pytest_judgerel.mindeval.judge import AXES

    text = " ".join(str(m.get("content", "")) for m in request.messages)
    if all(name in text for name in AXES.values()):
        return "\n".join(f"{name}: 4" for name in AXES.values())
    if "Write exactly 4 paragraphs" in text:
        return "\n\n".join(["A quiet childhood by the sea, then a long career in logistics."] * 4)
    if request.messages[0].get("role") == "system" and "scale" not in text:
        return "I hear you."
    return "3"


PATHS = """
import pytest
from pytest_judgerel import Judge, load_dataset
from pytest_judgerel.study.analysis import run_study

ITEMS = [{"sentence1": f"a{i}", "sentence2": "b"} for i in range(4)]

def test_fixture(judge):
    judge.rate(ITEMS, repeats=2)

def test_python_judge(judgerel_endpoint, judgerel_client):
    Judge(endpoint=judgerel_endpoint, template="stsb", client=judgerel_client).rate(ITEMS, repeats=1)

@pytest.mark.judge_panel("openai/one", "openai/two")
def test_panel(judge_panel):
    judge_panel.rate(ITEMS)

def test_study(judgerel_endpoint, judgerel_client):
    run_study({"stsb": load_dataset("stsb", subset=4)}, ["openai/one", "openai/two"], ("0-5", "0-10"),
              endpoint=judgerel_endpoint, client=judgerel_client)

@pytest.mark.patients(n=1, turns=2)
def test_mindeval(interaction, mindeval_judge):
    assert interaction.profile.member_narrative
    (score,) = mindeval_judge.score([interaction])
    assert score.failure is None
"""


@pytest.mark.parametrize("backend", ["auto", "litellm"])
def test_every_call_path_of_a_session_reaches_the_configured_server(pytester, monkeypatch, tmp_path, backend):
    """judge fixture, Judge(endpoint=...), the panel, run_study and the four MindEval roles, with
    OPENAI_BASE_URL/OPENAI_API_BASE at a second server that must see nothing; through the HTTP
    fast path (auto, for openai/) and through litellm."""
    pytester.makepyfile(test_paths=PATHS)
    with FakeLLMServer(latency=0.0, responder=_reply) as served, FakeLLMServer(latency=0.0) as trap:
        for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE"):
            monkeypatch.setenv(name, trap.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-trap")
        monkeypatch.delenv("JUDGEREL_BACKEND", raising=False)
        result = pytester.runpytest("--judge-model=openai/judge", f"--judge-api-base={served.url}",
                                    f"--judgerel-backend={backend}",
                                    f"--judgerel-json={tmp_path / 'r.json'}", "-p", "no:cacheprovider")
        result.assert_outcomes(passed=5)
        assert trap.requests == 0
        rep = json.loads((tmp_path / "r.json").read_text())
        assert served.requests == rep["totals"]["misses"] > 0
        assert rep["settings"]["endpoint"]["api_base"] == served.url
        assert rep["settings"]["backend"] == backend
        via = "http_calls" if backend == "auto" else "litellm_calls"
        assert rep["totals"][via] == rep["totals"]["misses"] and rep["totals"]["http_calls"] + \
            rep["totals"]["litellm_calls"] == rep["totals"]["misses"]
        header = "HTTP fast path" if backend == "auto" else "litellm"
        assert f"backend={backend} ({header})" in result.stdout.str()
        assert f"upstream via http {rep['totals']['http_calls']}" in result.stdout.str()
        models = {entry["body"]["model"] for entry in served.log}
        assert {"judge", "one", "two"} <= models  # litellm sends the name without the openai/ prefix


def test_constrain_comes_from_option_ini_env_and_marker(pytester, monkeypatch):
    pytester.makepyfile("""
        import pytest
        def test_default(judge):
            print("CONSTRAIN", judge.constrain)
        @pytest.mark.judge(constrain="never")
        def test_marker(judge):
            print("MARKER", judge.constrain)
    """)
    out = pytester.runpytest("-s", "--judge-model=scripted/x").stdout.str()
    assert "CONSTRAIN auto" in out and "MARKER never" in out
    out = pytester.runpytest("-s", "--judge-model=scripted/x", "--judgerel-constrain=always").stdout.str()
    assert "CONSTRAIN always" in out and "MARKER never" in out
    monkeypatch.setenv("JUDGEREL_CONSTRAIN", "never")
    assert "CONSTRAIN never" in pytester.runpytest("-s", "--judge-model=scripted/x").stdout.str()
    pytester.makepyfile(test_bad="""
        import pytest
        @pytest.mark.judge(constrain="sometimes")
        def test_bad(judge): pass
    """)
    result = pytester.runpytest("test_bad.py", "--judge-model=scripted/x")
    assert result.ret == pytest.ExitCode.USAGE_ERROR and "constrain='sometimes'" in result.stderr.str()


def test_a_constrained_judge_sends_the_grammar_to_its_server(tmp_path):
    from pytest_judgerel import Judge
    from pytest_judgerel.llm import LLMClient, LLMSettings

    with FakeLLMServer(latency=0.0) as server, LLMClient(LLMSettings(cache_mode="off")) as client:
        for constrain, sent in (("auto", False), ("always", True), ("never", False)):
            server.reset()
            Judge(model="openai/x", api_base=server.url, constrain=constrain, client=client).rate(
                [{"sentence1": "a", "sentence2": "b"}], repeats=1)
            assert ("grammar" in server.log[-1]["body"]) is sent, constrain
