"""The whole call path against a real OpenAI-compatible server: llama-cpp-python's own
``llama_cpp.server`` on 127.0.0.1, serving the embedded SmolLM2 GGUF, reached only through
``--judge-model=openai/smollm2 --judge-api-base=...`` as a vLLM/llama.cpp/Ollama user would.

CI runs these (``JUDGEREL_REQUIRE_LLAMA_SERVER``): a missing ``server`` extra fails there.
The escape test points ``OPENAI_BASE_URL``/``OPENAI_API_BASE`` at a second, counting server:
any request that leaves the configured endpoint lands there.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from pytest_judgerel.llm.llama_server import LlamaCppServer, server_available

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not server_available(),
                                reason="llama_cpp.server (the 'server' extra) is not installed")

#: the servers here require a key (as a real deployment may): a key that is never sent fails
KEY = "sk-judgerel-test-key"


@pytest.fixture(scope="module")
def llama():
    with LlamaCppServer(n_ctx=8192, api_key=KEY) as server:
        yield server


@pytest.fixture
def clean_env(monkeypatch):
    """No key and no provider endpoint from the developer's shell; the session's key is KEY."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "JUDGEREL_MODEL", "JUDGEREL_API_BASE",
                 "JUDGEREL_CONSTRAIN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JUDGEREL_API_KEY", KEY)


def _report(path: Path) -> dict:
    return json.loads(path.read_text())


_PYTEST_WORDS = {"passed": "passed", "failed": "failed", "skipped": "skipped", "error": "error", "errors": "error",
                 "xfailed": "xfailed", "xpassed": "xpassed"}


def _pytest_counts(stdout: str) -> dict[str, int]:
    """pytest's own outcome counts, from its final summary line."""
    last = [line for line in stdout.splitlines() if re.search(r"\d+ (passed|failed|skipped|errors?)\b", line)][-1]
    return {_PYTEST_WORDS[w]: int(n) for n, w in re.findall(r"(\d+) (\w+)", last) if w in _PYTEST_WORDS}


def _json_outcomes(rep: dict) -> dict[str, int]:
    """Outcome counts of the JSON report's test list (every test pytest ran)."""
    counts: dict[str, int] = {}
    for t in rep["tests"]:
        counts[t["outcome"]] = counts.get(t["outcome"], 0) + 1
    return counts


JUDGE_TESTS = """
import math
import pytest
from pytest_judgerel import load_dataset

ITEMS = load_dataset("stsb", subset=6, stratify="genre")

@pytest.mark.judge(template="stsb", temperature=0.8, max_tokens=8)
@pytest.mark.scale("0-5", "0-10", "0-100")
@pytest.mark.repeats(2)
def test_repeats_on_each_scale(judge, scale):
    ratings = judge.rate(ITEMS)
    assert ratings.shape == (6, 2)
    assert not ratings.parse_failures
    assert all(scale.low <= v <= scale.high for v in ratings.values.ravel())  # no NaN either
    assert judge.endpoint.api_base == "{url}" and judge.model == "openai/smollm2"

@pytest.mark.judge(template="stsb", temperature=0.8, max_tokens=8)
@pytest.mark.scale("0-5", "0-10")
def test_across_scales(judge):
    by_scale = judge.rate_scales(ITEMS)
    for name, ratings in by_scale.items():
        assert not ratings.parse_failures and not any(math.isnan(v) for v in ratings.values.ravel()), name
"""


def test_the_real_server_refuses_a_request_without_its_key(llama, clean_env, tmp_path):
    """The key check is real: without JUDGEREL_API_KEY the server answers 401 and the call fails."""
    from pytest_judgerel.errors import LLMCallError
    from pytest_judgerel.llm import LLMClient, LLMRequest, LLMSettings

    with LLMClient(LLMSettings(cache_mode="off", max_attempts=1)) as client:
        with pytest.raises(LLMCallError, match="401|[Aa]uth"):
            client.complete(LLMRequest(model=llama.model, api_base=llama.url, max_tokens=2,
                                       messages=({"role": "user", "content": "Say 1"},)))


def test_judge_on_the_real_server_rates_every_item_then_replays(pytester, llama, clean_env, tmp_path):
    """Repeats, scales and grammar passthrough (--judgerel-constrain=always): every item rated,
    no parse failure and no re-ask; then a replay run answers every call from the cache."""
    pytester.makepyfile(test_judge=JUDGE_TESTS.replace("{url}", llama.url))
    common = [f"--judge-model={llama.model}", f"--judge-api-base={llama.url}", "--judgerel-constrain=always",
              "--judgerel-timeout=600",
              f"--judgerel-cache-dir={tmp_path / 'cache'}", "-p", "no:cacheprovider"]
    first = pytester.runpytest(*common, f"--judgerel-json={tmp_path / 'record.json'}")
    first.assert_outcomes(passed=4)
    rep = _report(tmp_path / "record.json")
    assert rep["settings"]["endpoint"] == {"model": "openai/smollm2", "api_base": llama.url,
                                           "source": "--judge-model", "api_base_source": "--judge-api-base",
                                           "embedded": False, "api_key_set": True, "used": True}
    totals = rep["totals"]
    # 6 items x (3 scales x 2 repeats + 2 scales x 1) = 48 calls; the 0-5 and 0-10 single
    # samples of test_across_scales repeat test_repeats' sample 0, so they are hits
    assert totals["errors"] == 0 and totals["parse_failures"] == 0 and totals["calls"] == 48
    assert totals["misses"] == 36 and totals["hits"] == 12
    backend = os.environ.get("JUDGEREL_BACKEND", "").strip() or "auto"  # CI runs this file through both
    via = "litellm_calls" if backend == "litellm" else "http_calls"     # auto: the fast path for openai/
    assert totals[via] == 36 and totals["http_calls"] + totals["litellm_calls"] == 36
    runs = [r for t in rep["tests"] for r in t["records"] if r.get("kind") == "judge_run"]
    assert runs and all(r["reasked"] == 0 and r["parse_failures"] == 0 for r in runs)
    assert f"judgerel: model=openai/smollm2 (--judge-model) endpoint={llama.url} (--judge-api-base)" \
        in first.stdout.str()
    assert f"backend={backend} ({'litellm' if backend == 'litellm' else 'HTTP fast path'})" in first.stdout.str()

    # the cassette recorded through the fast path replays through litellm
    replay = pytester.runpytest(*common, "--judgerel-cache-mode=replay", "--judgerel-backend=litellm",
                                f"--judgerel-json={tmp_path / 'replay.json'}")
    replay.assert_outcomes(passed=4)
    totals = _report(tmp_path / "replay.json")["totals"]
    assert totals["misses"] == 0 and totals["hits"] == totals["calls"] == 48


def test_both_paths_get_the_same_answers_from_the_real_server(llama, clean_env, tmp_path):
    """Greedy, grammar-constrained calls (temperature 0) through the fast path and through litellm:
    the same answers and token counts; the fast path's cache then replays through litellm."""
    from pytest_judgerel.judging.judge import grammar_for
    from pytest_judgerel.llm import LLMClient, LLMRequest, LLMSettings
    from pytest_judgerel.scales import Scale

    grammar = grammar_for("number", Scale.parse("0-10"))
    reqs = [LLMRequest(model=llama.model, api_base=llama.url, api_key=KEY, max_tokens=8, temperature=0.0,
                       grammar=grammar, messages=({"role": "user", "content": f"Rate sentence {i} from 0 to 10."},))
            for i in range(4)]
    answers = {}
    for backend in ("http", "litellm"):
        with LLMClient(LLMSettings(cache_dir=tmp_path / backend, backend=backend, timeout=600)) as client:
            answers[backend] = client.complete_many(reqs)
            assert client.stats.http_calls == (4 if backend == "http" else 0)
    for fast, ref in zip(answers["http"], answers["litellm"]):
        assert fast.text == ref.text and re.fullmatch(r"\s*(10|\d)\s*", fast.text)
        assert fast.usage == ref.usage and fast.key == ref.key
    with LLMClient(LLMSettings(cache_dir=tmp_path / "http", cache_mode="replay", backend="litellm")) as client:
        assert [r.text for r in client.complete_many(reqs)] == [r.text for r in answers["http"]]


MINDEVAL_TEST = """
import pytest
from pytest_judgerel.mindeval.backstory import paragraph_count

@pytest.mark.patients(n=1, seed=3, turns=2, variant="default", max_tokens=120)
def test_interaction_with_backstory_then_judged(interaction, mindeval_judge):
    assert paragraph_count(interaction.profile.member_narrative) == 4   # Figures 5-6: four paragraphs
    assert [m["role"] for m in interaction.messages] == ["user", "assistant", "user"]
    assert interaction.settings["patient_api_base"] == interaction.settings["clinician_api_base"] == "{url}"
    (score,) = mindeval_judge.score([interaction])
    assert score.failure is None and set(score.scores) == {"CAC", "EPC", "AR", "TRA", "ASCQ"}
"""


def test_mindeval_interaction_with_backstory_on_the_real_server(pytester, llama, clean_env, tmp_path):
    """Backstory, patient, clinician and judge all reach the server given by --judge-api-base."""
    pytester.makepyfile(test_mindeval=MINDEVAL_TEST.replace("{url}", llama.url))
    # prompt processing is the cost here: ~50 tokens/s on these CPUs, and the backstory and judge
    # prompts are ~2,700 and ~3,000 tokens (about a minute each), so a call may take minutes under load
    result = pytester.runpytest(f"--judge-model={llama.model}", f"--judge-api-base={llama.url}",
                                "--judgerel-constrain=always", "--judge-max-tokens=400", "--judgerel-timeout=900",
                                f"--judgerel-cache-dir={tmp_path / 'cache'}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def _plausible_reply(request) -> str:
    """Replies in the format each role of the examples asks for (routing, not quality, is tested)."""
    from pytest_judgerel.testing.fake_server import default_responder
    from pytest_judgerel.mindeval.judge import AXES

    text = " ".join(str(m.get("content", "")) for m in request.messages)
    if all(name in text for name in AXES.values()):  # the 5-axis MindEval judge
        return "\n".join(f"{name}: 4" for name in AXES.values())
    if "Write exactly 4 paragraphs" in text:  # the backstory prompt (Figures 5-6)
        return "\n\n".join(["She grew up by the sea. Work keeps her busy."] * 4)
    if '"relevance"' in text:  # the SummEval template asks for a JSON object of five criteria
        return json.dumps({k: 3 for k in ("relevance", "coherence", "fluency", "consistency", "overall")})
    if request.messages and request.messages[0].get("role") == "system" and "scale" not in text:
        return "I hear you. Could you tell me more about your week?"  # patient or clinician turn
    return default_responder(request)


def test_no_request_of_the_examples_escapes_the_configured_endpoint(clean_env, tmp_path):
    """Run the examples (judge, study, MindEval backstory, patient, clinician, judge) with
    --judge-api-base at server A while OPENAI_BASE_URL and OPENAI_API_BASE point at server B:
    B must see no request, and every upstream call of the run must have reached A.  Both are
    loopback OpenAI-compatible servers that count (the routing is what is tested here; the
    llama.cpp tests above cover a real server's behaviour)."""
    import subprocess

    from pytest_judgerel.testing.fake_server import FakeLLMServer

    with FakeLLMServer(latency=0.0, responder=_plausible_reply, api_key=KEY) as served, \
            FakeLLMServer(latency=0.0) as trap:
        env = dict(os.environ, OPENAI_BASE_URL=trap.url, OPENAI_API_BASE=trap.url, OPENAI_API_KEY="sk-trap",
                   PYTHONDONTWRITEBYTECODE="1")
        report = tmp_path / "examples.json"
        done = subprocess.run(
            [sys.executable, "-m", "pytest", str(ROOT / "examples"), "-p", "no:cacheprovider", "-q",
             "--judge-model=openai/served-judge", f"--judge-api-base={served.url}",
             f"--judgerel-cache-dir={tmp_path / 'cache'}", f"--judgerel-json={report}"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
        assert trap.requests == 0, f"{trap.requests} request(s) escaped to the default endpoint"
        reached = served.requests
    rep = _report(report)
    assert rep["settings"]["endpoint"]["api_base"] == served.url
    totals = rep["totals"]
    assert totals["errors"] == 0 and totals["misses"] > 0, done.stdout[-3000:]
    # every answer from a server is stored with the server it came from: all of them are A's, and
    # A answered exactly those (the bias-probe example runs scripted judges in process)
    from pytest_judgerel.llm.cache_admin import read_readable_entries

    entries, _, _ = read_readable_entries(tmp_path / "cache")
    remote = [e["request"] for _, e in entries if not e["request"]["model"].startswith(("scripted/", "local/"))]
    assert remote and all(r["api_base"] == served.url for r in remote)
    assert reached == len(remote), (reached, len(remote))
    # the JSON lists every test pytest ran (with or without records), with pytest's outcome: an
    # example that errors shows here even when it recorded nothing
    counts = _pytest_counts(done.stdout)
    assert _json_outcomes(rep) == rep["session"]["outcomes"] == counts, done.stdout[-3000:]
    assert "error" not in counts, done.stdout[-3000:]
    outcomes = {t["nodeid"]: t["outcome"] for t in rep["tests"]}
    assert any("mindeval" in n for n in outcomes) and any("scale_study" in n for n in outcomes), outcomes
    assert re.search(r"retries \d+, errors 0,", done.stdout), done.stdout[-3000:]  # the summary says errors 0


def test_the_mindeval_example_on_a_2048_token_server_ends_without_a_plugin_error(clean_env, tmp_path):
    """``pytest examples/mindeval`` against a llama.cpp server with a 2048-token context and
    --judgerel-constrain=always.  The backstory prompt (~2,700 tokens) cannot fit: one refused call per
    profile, never retried, and the conversations fall back to the role-only configuration (saying so);
    the judge prompt cannot fit either: those tests skip with the server's message.  No test errors."""
    import subprocess

    with LlamaCppServer(n_ctx=2048) as small:
        report = tmp_path / "mindeval.json"
        done = subprocess.run(
            [sys.executable, "-m", "pytest", str(ROOT / "examples" / "mindeval"), "-p", "no:cacheprovider", "-q",
             "-rs", f"--judge-model={small.model}", f"--judge-api-base={small.url}", "--judgerel-constrain=always",
             "--judgerel-timeout=900", f"--judgerel-cache-dir={tmp_path / 'cache'}", f"--judgerel-json={report}"],
            cwd=tmp_path, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"), capture_output=True, text=True,
            timeout=3000)
    out = done.stdout
    rep = _report(report)
    counts = _pytest_counts(out)
    assert _json_outcomes(rep) == rep["session"]["outcomes"] == counts, out[-4000:]
    assert "error" not in counts and "INTERNALERROR" not in out, out[-4000:]
    assert "LLMCallError" not in out and "ConfigError" not in out, out[-4000:]
    outcome = {t["nodeid"].split("::")[-1]: t["outcome"] for t in rep["tests"]}
    assert outcome["test_profiles_respect_every_constraint"] == "passed"
    assert outcome["test_conversations_have_the_paper_shape"] == "passed", out[-4000:]
    assert outcome["test_every_conversation_is_scored_on_all_five_axes"] == "skipped"
    assert "does not fit this server's context window" in out and "maximum context length is 2048" in out
    assert "role-only patient prompt" in out  # the fallback is said, not silent
    # only a quality gate may fail on this 135M model (an honest verdict, not a plugin error)
    assert {n for n, o in outcome.items() if o == "failed"} <= {"test_clinician_is_not_verbose"}, out[-4000:]
    # the refused calls (5 backstories, 2 judge prompts) were not retried
    assert rep["totals"]["errors"] >= 6 and rep["totals"]["retries"] == 0, out[-4000:]
