"""One session for every path: a Judge, probe, study run or MindEval role built in a
test body without an endpoint or client uses the session's endpoint, client (cache mode and
folder) and request settings; explicit values win; in-process models never inherit a server.

Every test runs against real loopback HTTP servers (:class:`FakeLLMServer`), the session's
requiring its key, and a second "trap" server named by ``OPENAI_BASE_URL`` that must see nothing.
"""

from __future__ import annotations

import json
import os

import pytest

from pytest_judgerel.session.context import SessionContext, activate, current_context
from pytest_judgerel.errors import CacheMissError, ConfigError
from pytest_judgerel.testing.fake_server import FakeLLMServer
from pytest_judgerel.session.settings import Settings

ITEMS = [{"id": f"i{i}", "sentence1": f"a{i}", "sentence2": "b"} for i in range(4)]
KEY = "sk-session-key"


def reply(request) -> str:
    """Each format the paths ask for: the MindEval judge's five lines, a backstory, a pairwise
    verdict, a conversation turn, else a score."""
    from pytest_judgerel.mindeval.judge import AXES

    text = " ".join(str(m.get("content", "")) for m in request.messages)
    if all(name in text for name in AXES.values()):
        return "\n".join(f"{name}: 4" for name in AXES.values())
    if "Write exactly 4 paragraphs" in text:
        return "\n\n".join(["A quiet childhood by the sea, then a long career in logistics."] * 4)
    if "[[A]]" in text:
        return "[[A]]"
    if request.messages[0].get("role") == "system" and "scale" not in text:
        return "I hear you."
    return "3"


@pytest.fixture
def servers(monkeypatch):
    """(session server requiring KEY, trap server at OPENAI_BASE_URL/OPENAI_API_BASE)."""
    with FakeLLMServer(latency=0.0, responder=reply, api_key=KEY) as served, \
            FakeLLMServer(latency=0.0, responder=reply) as trap:
        for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE"):
            monkeypatch.setenv(name, trap.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-trap")
        monkeypatch.setenv("JUDGEREL_API_KEY", KEY)
        for name in ("JUDGEREL_MODEL", "JUDGEREL_API_BASE", "JUDGEREL_CONSTRAIN", "JUDGEREL_CACHE_MODE",
                     "JUDGEREL_CACHE_DIR"):
            monkeypatch.delenv(name, raising=False)
        yield served, trap


def session(served, tmp_path, **settings) -> SessionContext:
    """A session context as the plugin builds it: --judge-model=openai/fake --judge-api-base=<served>."""
    sources = {name: f"--{name}" for name in settings}
    settings.setdefault("cache_dir", str(tmp_path / "cache"))
    return SessionContext(Settings(model="openai/fake", api_base=served.url, max_attempts=1, timeout=10.0,
                                   **settings, sources={"model": "--judge-model", "api_base": "--judge-api-base",
                                                        **sources}))


# ---------------------------------------------------------------- the issue's scenario, in-process
def test_a_judge_built_by_hand_uses_the_session_endpoint_client_and_cache(servers, tmp_path):
    from pytest_judgerel import Judge

    served, trap = servers
    ctx = session(served, tmp_path)
    with activate(ctx):
        judge = Judge(template="stsb", scale="0-5")  # no model: the session's, not an error
        assert (judge.model, judge.api_base, judge.client) == ("openai/fake", served.url, ctx.client)
        judge.rate(ITEMS, repeats=1)
        named = Judge(model="openai/fake", template="stsb", scale="0-5")  # the session's model, named
        assert named.api_base == served.url and named.client is ctx.client
        named.rate(ITEMS, repeats=2)
    assert trap.requests == 0
    assert served.requests == 8 and served.fault_count() == 0  # 4 + 4 new (repeat 0 was cached)
    assert any((tmp_path / "cache").iterdir())  # the session's cache folder, not the working directory's
    ctx.close()


def test_replay_mode_sends_no_request_from_a_hand_built_judge(servers, tmp_path):
    from pytest_judgerel import Judge

    served, trap = servers
    ctx = session(served, tmp_path, cache_mode="replay")
    with activate(ctx), pytest.raises(CacheMissError, match="replay mode"):
        Judge(model="openai/fake", template="stsb", scale="0-5").rate(ITEMS, repeats=1)
    assert served.requests == trap.requests == 0
    ctx.close()


def test_an_explicit_api_base_beats_the_session_server(servers, tmp_path):
    from pytest_judgerel import Judge

    served, trap = servers
    with FakeLLMServer(latency=0.0, responder=reply, api_key=KEY) as other, activate(session(served, tmp_path)):
        judge = Judge(model="openai/other", api_base=other.url, template="stsb", scale="0-5")
        assert judge.api_key == KEY  # the session's key travels with the explicit server
        judge.rate(ITEMS, repeats=1)
        assert other.requests == 4 and other.fault_count() == 0
    assert served.requests == trap.requests == 0


def test_the_session_key_is_sent_and_a_missing_key_fails(servers, tmp_path, monkeypatch):
    """The session server checks its key: dropping it from the request fails the call."""
    from pytest_judgerel import Judge
    from pytest_judgerel.errors import LLMCallError

    served, _trap = servers
    monkeypatch.delenv("JUDGEREL_API_KEY")
    ctx = session(served, tmp_path, cache_mode="off")
    with activate(ctx), pytest.raises(LLMCallError, match="HTTP 401"):
        Judge(template="stsb", scale="0-5").rate(ITEMS[:1], repeats=1)
    assert served.log[-1]["fault"] == "unauthorized"


def test_named_in_process_models_never_inherit_the_session_server(servers, tmp_path, scripted):
    from pytest_judgerel import Judge
    from pytest_judgerel.llm.endpoint import resolve_endpoint

    served, _ = servers
    name = scripted("scripted/ctx-three", lambda messages, **kw: "3")
    ctx = session(served, tmp_path)
    with activate(ctx):
        judge = Judge(model=name, template="stsb", scale="0-5")
        assert judge.api_base is None and judge.api_key is None
        assert judge.rate(ITEMS, repeats=1).values.tolist() == [[3.0]] * 4
        assert judge.endpoint.with_model("openai/x").api_base is None  # a panel model from it: no server either
        panel_model = Judge(template="stsb").endpoint.with_model(name)
        assert panel_model.api_base is None
    assert resolve_endpoint(name, default=ctx.endpoint).api_base is None
    assert served.requests == 0


# ---------------------------------------------------------------- settings that shape a request
def _grammar_sent(server) -> list[bool]:
    return ["grammar" in entry["body"] for entry in server.log]


def test_constrain_reaches_the_study_runner(servers, tmp_path):
    from pytest_judgerel import load_dataset
    from pytest_judgerel.study.analysis import run_study

    served, trap = servers
    with activate(session(served, tmp_path, constrain="always")):
        run_study({"stsb": load_dataset("stsb", subset=4)}, ["openai/one", "openai/two"], ("0-5", "0-10"))
    assert trap.requests == 0 and served.requests == 16
    assert all(_grammar_sent(served))
    temperatures = {entry["body"].get("temperature") for entry in served.log}
    assert temperatures == {1.0}  # the paper's temperature: the session did not set one


def test_a_session_temperature_that_the_user_set_reaches_the_study(servers, tmp_path):
    from pytest_judgerel import load_dataset
    from pytest_judgerel.study.analysis import run_study

    served, _ = servers
    with activate(session(served, tmp_path, temperature=0.0)):
        run_study({"stsb": load_dataset("stsb", subset=4)}, ["openai/one"], ("0-5",))
    assert {entry["body"].get("temperature") for entry in served.log} == {0.0}


def test_constrain_and_sampling_reach_hand_built_judges_and_probes(servers, tmp_path):
    from pytest_judgerel import Judge, probes

    served, _ = servers
    with activate(session(served, tmp_path, constrain="always", max_tokens=7, reask=False)):
        judge = Judge(template="stsb", scale="0-5")
        assert (judge.constrain, judge.max_tokens, judge.reask) == ("always", 7, False)
        assert Judge(template="stsb", constrain="never").constrain == "never"  # explicit wins
        probes.position_bias(judge, [{"id": "p", "question": "q", "answer_a": "x", "answer_b": "y"}])
    assert served.requests == 2 and all(_grammar_sent(served))
    assert {entry["body"].get("max_tokens") for entry in served.log} == {7}


def test_constrain_and_the_endpoint_reach_every_mindeval_role(servers, tmp_path):
    from pytest_judgerel.mindeval.backstory import generate_backstories
    from pytest_judgerel.mindeval.interaction import run_interactions
    from pytest_judgerel.mindeval.judge import MindEvalJudge
    from pytest_judgerel.mindeval.profiles import sample_profiles

    served, trap = servers
    ctx = session(served, tmp_path, constrain="always")
    with activate(ctx):
        (profile,) = generate_backstories(sample_profiles(1, seed=0))  # model, client, constrain: the session's
        assert served.requests == 1 and _grammar_sent(served) == [True]
        (inter,) = run_interactions([profile], "openai/clinician", ctx.client, turns=2, patient_model="openai/patient")
        judge = MindEvalJudge()
        assert (judge.model, judge.constrain, judge.client) == ("openai/fake", "always", ctx.client)
        (score,) = judge.score(inter)  # one interaction is judged as a list of one
    assert score.failure is None and score.scores["CAC"] == 4
    assert trap.requests == 0
    models = [entry["body"]["model"] for entry in served.log]
    assert {"clinician", "patient", "fake"} <= set(models)
    assert _grammar_sent(served)[-1] is True  # the judge's five-line grammar


def test_mindeval_score_rejects_what_is_not_an_interaction(servers, tmp_path):
    from pytest_judgerel.mindeval.judge import MindEvalJudge

    served, _ = servers
    with activate(session(served, tmp_path)), pytest.raises(ConfigError, match="item 0 is a str"):
        MindEvalJudge().score(["not an interaction"])


# ---------------------------------------------------------------- outside pytest: the environment
def test_outside_a_session_the_environment_resolves_the_same_way(monkeypatch, tmp_path):
    from pytest_judgerel.session import context

    monkeypatch.setattr(context, "_CURRENT", type(context._CURRENT)("judgerel_context_test", default=None))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JUDGEREL_MODEL", "openai/env-model")
    monkeypatch.setenv("JUDGEREL_API_BASE", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("JUDGEREL_CACHE_MODE", "replay")
    monkeypatch.setenv("JUDGEREL_CONSTRAIN", "always")
    ctx = current_context()
    assert ctx.origin == "environment" and ctx is current_context()  # one per environment
    assert (ctx.endpoint.model, ctx.endpoint.api_base) == ("openai/env-model", "http://127.0.0.1:9/v1")
    assert ctx.client.settings.cache_mode == "replay"
    assert ctx.client.settings.cache_dir == os.path.join(str(tmp_path), ".judgerel_cache")
    from pytest_judgerel import Judge

    judge = Judge(template="stsb")
    assert (judge.model, judge.constrain, judge.client) == ("openai/env-model", "always", ctx.client)
    monkeypatch.setenv("JUDGEREL_CACHE_MODE", "off")
    assert current_context() is not ctx and current_context().client.settings.cache_mode == "off"


def test_a_client_built_by_hand_is_guarded_by_the_session_endpoint(servers, tmp_path):
    from pytest_judgerel.llm import LLMClient, LLMRequest, LLMSettings

    served, trap = servers
    with activate(session(served, tmp_path)), LLMClient(LLMSettings(cache_mode="off")) as client:
        with pytest.raises(ConfigError, match="provider's default endpoint"):
            client.complete(LLMRequest(model="openai/fake", messages=({"role": "user", "content": "x"},)))
    assert served.requests == trap.requests == 0


# ---------------------------------------------------------------- the plugin: a real pytest session
SCENARIO = """
import os
import pytest
from pytest_judgerel import Judge
from pytest_judgerel.session.recording import active_recorder

ITEMS = [{"sentence1": f"a{i}", "sentence2": "b"} for i in range(3)]
MODULE_JUDGE = Judge(template="stsb", scale="0-5")  # built at import time, during collection

def test_body_judge():
    Judge(template="stsb", scale="0-5").rate(ITEMS, repeats=1)

def test_named_session_model():
    Judge(model="openai/fake", template="stsb", scale="0-5").rate(ITEMS, repeats=2)

def test_module_judge():
    MODULE_JUDGE.rate(ITEMS, repeats=1)

def test_recorder_limit():
    print("LIMIT", active_recorder().max_parse_failures)
"""


def test_the_issue_scenario_in_a_pytest_session(pytester, servers, tmp_path):
    """--judge-model/--judge-api-base with OPENAI_BASE_URL at a counting trap: record mode sends
    every request to the session server and caches it in --judgerel-cache-dir; replay sends none."""
    served, trap = servers
    pytester.makepyfile(test_scenario=SCENARIO)
    cache = tmp_path / "session-cache"
    args = ["-p", "no:cacheprovider", "-p", "no:xdist", "-s", "--judge-model=openai/fake",
            f"--judge-api-base={served.url}", f"--judgerel-cache-dir={cache}", "--judgerel-max-parse-failures=5"]
    result = pytester.runpytest(*args, "--judgerel-cache-mode=replay")
    result.assert_outcomes(passed=1, failed=3)
    assert served.requests == trap.requests == 0
    result = pytester.runpytest(*args)
    result.assert_outcomes(passed=4)
    assert "LIMIT 5" in result.stdout.str()
    assert trap.requests == 0 and served.requests == 6 and served.fault_count() == 0
    assert (cache / "runs").is_dir()
    result = pytester.runpytest(*args, "--judgerel-cache-mode=replay")
    result.assert_outcomes(passed=4)
    assert served.requests == 6  # every answer replayed from the session's cache folder


def test_the_bias_probe_pattern_runs_against_a_session_server(pytester, servers):
    """A judge marker naming an in-process model, in a session with --judge-api-base: no
    'takes no api_base' error (the bias-probe example's case)."""
    served, _ = servers
    pytester.makepyfile("""
        import pytest
        from pytest_judgerel import Judge
        from pytest_judgerel.llm import register_scripted
        from pytest_judgerel.study.analysis import run_study
        from pytest_judgerel import load_dataset

        register_scripted("scripted/two", lambda messages, **kw: "2")

        @pytest.mark.judge(model="scripted/two")
        def test_marker(judge):
            assert judge.api_base is None
            assert judge.rate([{"sentence1": "a", "sentence2": "b"}], repeats=1).values[0, 0] == 2

        def test_body():
            assert Judge(model="scripted/two").rate([{"sentence1": "a", "sentence2": "b"}], repeats=1).values[0, 0] == 2

        def test_study():
            run_study({"stsb": load_dataset("stsb", subset=3)}, ["scripted/two"], ("0-5",))
    """)
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:xdist", "--judge-model=openai/fake",
                                f"--judge-api-base={served.url}", "--judgerel-cache-mode=off")
    result.assert_outcomes(passed=3)
    assert served.requests == 0


@pytest.mark.parametrize("where", ["flag", "env"])
def test_a_malformed_api_base_is_a_usage_error(pytester, monkeypatch, where):
    pytester.makepyfile("def test_x(judge): pass")
    if where == "env":
        monkeypatch.setenv("JUDGEREL_API_BASE", "http://127.0.0.1:notaport/v1")
        result = pytester.runpytest("-p", "no:cacheprovider", "--judge-model=openai/x")
    else:
        result = pytester.runpytest("-p", "no:cacheprovider", "--judge-model=openai/x", "--judge-api-base=localhost:8000")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert ("JUDGEREL_API_BASE" if where == "env" else "--judge-api-base") in result.stderr.str()


def test_an_api_base_an_in_process_model_cannot_take_is_a_usage_error(pytester):
    pytester.makepyfile("def test_x(judge): pass")
    result = pytester.runpytest("-p", "no:cacheprovider", "--judge-model=scripted/x",
                                "--judge-api-base=http://127.0.0.1:8000/v1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR and "runs in this process" in result.stderr.str()


def test_json_report_names_the_server_a_provider_variable_chose(pytester, servers, tmp_path, monkeypatch):
    """No --judge-api-base, OPENAI_BASE_URL set: the requests go there and the header, the JSON
    and the cache key say so."""
    served, trap = servers
    monkeypatch.setenv("OPENAI_BASE_URL", served.url)
    pytester.makepyfile("""
        def test_x(judge):
            judge.rate([{"sentence1": "a", "sentence2": "b"}], repeats=1)
    """)
    out = tmp_path / "r.json"
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:xdist", "--judge-model=openai/fake",
                                f"--judgerel-json={out}", f"--judgerel-cache-dir={tmp_path / 'c'}")
    result.assert_outcomes(passed=1)
    assert served.requests == 1 and trap.requests == 0
    assert f"endpoint={served.url} (env OPENAI_BASE_URL)" in result.stdout.str()
    endpoint = json.loads(out.read_text())["settings"]["endpoint"]
    assert (endpoint["api_base"], endpoint["api_base_source"]) == (served.url, "env OPENAI_BASE_URL")


def test_the_cache_key_names_a_provider_variable_server(servers, tmp_path, monkeypatch):
    from pytest_judgerel.llm import LLMClient, LLMRequest, LLMSettings

    served, trap = servers
    monkeypatch.setenv("OPENAI_BASE_URL", served.url)
    with LLMClient(LLMSettings(cache_dir=str(tmp_path / "c"))) as client:
        response = client.complete(LLMRequest(model="openai/fake", api_key=KEY,
                                              messages=({"role": "user", "content": "Rate 0-5"},)))
        entry = client.backend.get(response.key)
    assert entry["request"]["api_base"] == served.url
    assert served.requests == 1 and trap.requests == 0


# ---------------------------------------------------------------- xdist: what no report carries
def test_calls_outside_any_test_travel_from_xdist_workers_to_the_report(pytester, tmp_path):
    """Calls made at collection (no test running) are worker output under xdist: the totals of
    -n 2 hold both workers' collection calls, as the single process holds its own."""
    pytester.makeconftest("""
        from pytest_judgerel.llm import register_scripted
        register_scripted("scripted/xdist-four", lambda messages, **kw: "4")
    """)
    pytester.makepyfile("""
        from pytest_judgerel import Judge
        ITEMS = [{"sentence1": f"a{i}", "sentence2": "b"} for i in range(3)]
        Judge(model="scripted/xdist-four").rate(ITEMS, repeats=1)  # at collection: no test carries it

        def test_one():
            Judge(model="scripted/xdist-four").rate(ITEMS[:2], repeats=1)
    """)
    totals = {}
    for name, args in (("single", ["-p", "no:xdist"]), ("xdist", ["-n", "2"])):
        out = tmp_path / f"{name}.json"
        result = pytester.runpytest("-p", "no:cacheprovider", *args, "--judgerel-cache-mode=off",
                                    f"--judgerel-json={out}")
        result.assert_outcomes(passed=1)
        totals[name] = json.loads(out.read_text())["totals"]["calls"]
    assert totals == {"single": 5, "xdist": 8}  # 3 at collection per process + 2 in the test


# ---------------------------------------------------------------- rough edges
def test_a_missing_provider_key_is_named_and_sends_nothing(monkeypatch, tmp_path):
    from pytest_judgerel.errors import MissingKeyError
    from pytest_judgerel.llm import LLMClient, LLMRequest, LLMSettings

    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    with LLMClient(LLMSettings(cache_mode="off", max_attempts=3, backoff_base=0.01)) as client:
        with pytest.raises(MissingKeyError) as info:
            client.complete(LLMRequest(model="openai/gpt-4o-mini", messages=({"role": "user", "content": "x"},)))
        assert client.stats.retries == 0 and client.stats.errors == 0  # nothing was sent
    message = str(info.value)
    assert "OPENAI_API_KEY" in message and "no request was sent" in message and "HTTP" not in message


def test_a_missing_provider_key_stops_the_session_at_the_first_failure(pytester, monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "JUDGEREL_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile("""
        import pytest
        @pytest.mark.parametrize("i", range(4))
        def test_calls(judge, i):
            judge.rate([{"sentence1": f"a{i}", "sentence2": "b"}], repeats=1)
    """)
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:xdist", "--judge-model=openai/gpt-4o-mini",
                                "--judgerel-cache-mode=off")
    result.assert_outcomes(failed=1)
    assert "OPENAI_API_KEY" in result.stdout.str() and "HTTP 500" not in result.stdout.str()


def test_the_report_never_names_a_session_model_that_judged_nothing():
    """Only a marker named the model (scripted): the report's model is the one that judged, and
    the session's embedded default is marked unused."""
    from pytest_judgerel.report.build import SessionRun, build_report

    embedded = {"model": "local/smollm2", "api_base": None, "source": "embedded default"}
    run_record = {"kind": "judge_run", "judge": {"model": "scripted/marker"}, "parse_failures": 0}
    run = SessionRun(rootpath="", settings=Settings(sources={}), endpoint=embedded,
                     tests=({"nodeid": "t::a", "records": [run_record]},), outcomes={"t::a": "passed"})
    report = build_report(run)
    assert report["settings"]["model"] == "scripted/marker"
    assert report["settings"]["endpoint"]["used"] is False and report["settings"]["endpoint"]["model"] == "local/smollm2"
    used = SessionRun(rootpath="", settings=Settings(sources={}), endpoint=embedded, outcomes={"t::a": "passed"},
                      tests=({"nodeid": "t::a", "records": [{**run_record, "judge": {"model": "local/smollm2"}}]},))
    assert build_report(used)["settings"]["model"] == "local/smollm2"
    assert build_report(used)["settings"]["endpoint"]["used"] is True
