"""What a new user met on a clean clone with the README only, one block per finding.

Each test reproduces the finding as the user met it (a pytest run in a subprocess, a client call,
a report built from plain data) and asserts the fixed behaviour.
"""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NO_KEY = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "JUDGEREL_API_KEY", "JUDGEREL_MODEL",
          "JUDGEREL_API_BASE")


def _no_key(monkeypatch):
    for name in NO_KEY:
        monkeypatch.delenv(name, raising=False)


# ---------------------------------------------------------------- 1. the README on the embedded model
def test_the_readme_says_what_the_temperature_zero_gate_means_on_the_embedded_model():
    """The embedded model passes the temperature-0 test-retest example (ICC 1.0, determinism): the
    README must not claim it passes no reliability gate, and the example says why it passes."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    about = readme[readme.index("**About the embedded model.**"):]
    about = about[:about.index("```")]
    flat = " ".join(about.split())
    assert "passes no reliability gate" not in flat
    assert "temperature 0" in flat and "ICC 1.0" in flat and "determinism, not quality" in flat
    example = (ROOT / "examples" / "test_stsb_judge.py").read_text(encoding="utf-8")
    body = example[example.index("def test_judge_is_stable_at_temperature_zero"):]
    body = body[:body.index("\n\n\n")]
    assert "determinism, not quality" in " ".join(body.split()) and "is_embedded_model" in body
    assert "11 minutes" in readme  # how long the 30-second example takes on the embedded model


# ---------------------------------------------------------------- 2. a missing key in a MindEval fixture
MINDEVAL_NO_KEY = """
import pytest
from pytest_judgerel.mindeval.backstory import generate_backstories
from pytest_judgerel.mindeval.profiles import sample_profiles

@pytest.fixture(scope="module")
def backstories(judgerel_endpoint, judgerel_client):
    return generate_backstories(sample_profiles(3, seed=1), judgerel_endpoint, judgerel_client)

@pytest.mark.parametrize("i", range(4))
def test_uses_backstories(backstories, i):
    assert backstories

def test_after(judge):
    judge.rate([{"sentence1": "a", "sentence2": "b"}], repeats=1)
"""


def test_a_missing_key_in_a_module_fixture_stops_the_session_with_one_short_error(pytester, monkeypatch):
    """Before: four ~90-line setup errors saying "call failed, not retried" (the backstory
    re-wrapped the MissingKeyError) and the session ran on.  Now: one error, a few lines, stop."""
    _no_key(monkeypatch)
    pytester.makepyfile(test_me=MINDEVAL_NO_KEY)
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:xdist", "--judge-model=openai/gpt-4o-mini",
                                "--judgerel-cache-mode=off")
    out = result.stdout.str()
    result.assert_outcomes(errors=1)
    assert "Interrupted" in out and "OPENAI_API_KEY" in out
    assert "call failed, not retried" not in out
    errors = out[out.index("= ERRORS ="):out.index("judgerel summary")]
    assert len(errors.strip().splitlines()) <= 4, errors  # the header line and the one message
    assert "MissingKeyError: model 'openai/gpt-4o-mini' needs an API key" in errors


def test_a_missing_key_is_not_counted_as_errors_since_nothing_was_sent(monkeypatch):
    from pytest_judgerel.errors import MissingKeyError
    from pytest_judgerel.llm import LLMClient, LLMRequest, LLMSettings

    _no_key(monkeypatch)
    with LLMClient(LLMSettings(cache_mode="off", max_attempts=3, backoff_base=0.01)) as client:
        requests = [LLMRequest(model="openai/gpt-4o-mini", messages=({"role": "user", "content": f"x{i}"},))
                    for i in range(3)]
        results = client.complete_many(requests, return_exceptions=True)
        assert all(isinstance(r, MissingKeyError) for r in results)
        assert client.stats.errors == 0 and client.stats.http_calls == 0 and client.stats.litellm_calls == 0


# ---------------------------------------------------------------- 3. a model with no provider
def test_a_model_with_no_provider_is_a_usage_error_at_start(pytester):
    pytester.makepyfile("""
        def test_a(judge):
            judge.rate([{"sentence1": "a", "sentence2": "b"}], repeats=1)
    """)
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:xdist", "--judge-model=nonsense")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "'nonsense'" in err and "provider/model" in err and "openai/gpt-4o-mini" in err
    assert "HTTP 400" not in err + result.stdout.str()


# ---------------------------------------------------------------- 4. a failing gate shows no plugin frames
FAILING_GATE = """
import numpy as np
from pytest_judgerel import Ratings, assert_icc_above

def test_noisy_judge():
    rng = np.random.default_rng(0)
    assert_icc_above(Ratings.from_array(rng.integers(0, 6, size=(12, 3)), scale="0-5"), 0.9)
"""


def test_a_failing_gate_shows_the_explanation_without_the_plugins_frames(pytester):
    pytester.makepyfile(test_gate=FAILING_GATE)
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:xdist")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    failure = out[out.index("_ test_noisy_judge _"):out.index("judgerel summary")]
    assert "gates/reliability.py" not in failure and "gates/conclusion.py" not in failure
    assert "def conclude" not in failure and "recorder = active_recorder()" not in failure
    assert "test_gate.py:" in failure  # the user's own line stays
    explanation = [line for line in failure.splitlines() if line.startswith("E ")]
    assert any("ICC(A,1) = " in line for line in explanation)
    assert any("below the threshold 0.9" in line for line in explanation)


# ---------------------------------------------------------------- 5. the HTML report of an embedded run
def _embedded_report():
    from pytest_judgerel.report.build import SessionRun, build_report
    from pytest_judgerel.session.settings import Settings

    embedded = {"model": "local/smollm2", "api_base": None, "source": "embedded default", "embedded": True}
    record = {"kind": "icc", "statistic": "ICC(A,1)", "value": 0.2, "threshold": 0.75, "passed": False,
              "n": 20, "k": 2, "judge": {"model": "local/smollm2"}}
    run = SessionRun(rootpath="", settings=Settings(sources={}), endpoint=embedded,
                     tests=({"nodeid": "examples/test_x.py::test_gate", "records": [record]},),
                     outcomes={"examples/test_x.py::test_gate": "failed",
                               "examples/test_x.py::test_needs_a_real_judge": "skipped"})
    return build_report(run)


def test_the_html_report_names_the_embedded_stand_in_and_lists_the_skipped_test():
    from pytest_judgerel.report.html import render_html

    report = _embedded_report()
    assert any(t["nodeid"].endswith("test_needs_a_real_judge") for t in report["tests"])  # the JSON has it
    html = render_html(report)
    assert "SmolLM2-135M" in html and "weak stand-in" in html
    row = re.search(r"<code>examples/test_x.py::test_needs_a_real_judge</code></td><td>(\w+)</td>", html)
    assert row and row.group(1) == "skipped"


# ---------------------------------------------------------------- 6. smaller findings
class _Lines:
    def __init__(self):
        self.lines: list[str] = []
        self.config = None

    def write_line(self, line, **markup):
        self.lines.append(line)

    def write_sep(self, sep, title, **markup):
        self.lines.append(f"{sep * 3} {title}")


def test_in_process_calls_are_not_counted_as_upstream_litellm_calls(scripted, tmp_path):
    from pytest_judgerel.llm import LLMClient, LLMRequest, LLMSettings
    from pytest_judgerel.report.terminal import totals_line

    model = scripted("scripted/first-hour-31", lambda messages, **kw: "3")
    with LLMClient(LLMSettings(cache_mode="off")) as client:
        client.complete(LLMRequest(model=model, messages=({"role": "user", "content": "x"},)))
        assert client.stats.misses == 1 and client.stats.litellm_calls == 0 and client.stats.http_calls == 0
        assert "via litellm" not in totals_line(client.stats.to_dict())


def test_the_summary_table_keeps_file_and_test_name_of_a_long_id():
    from pytest_judgerel.report.terminal import fit_test_id

    long = "examples/some/deep/folder/test_stsb_judge.py::test_judge_is_stable_at_temperature_zero[0-100]"
    short = fit_test_id(long, 64)
    assert len(short) <= 64 and short.startswith("test_stsb_judge.py") and short.endswith("[0-100]")
    fits = fit_test_id("a/b.py::t", 64)
    assert fits == "a/b.py::t"
    too_long = fit_test_id("test_" + "x" * 100 + ".py::test_" + "y" * 30, 40)
    assert len(too_long) == 40 and too_long.startswith("test_x") and too_long.endswith("y" * 10)


def _baseline_comp():
    entry = {"nodeid": "t.py::test_a", "metric": "ICC(A,1)", "baseline": 0.9, "current": 0.6, "delta": -0.3,
             "status": "regression", "reason": "dropped 0.3 (tolerance 0.05)"}
    same = {"nodeid": "t.py::test_b", "metric": "ICC(A,1)", "baseline": 0.9, "current": 0.9, "delta": 0.0,
            "status": "pass", "reason": ""}
    counts = {"pass": 1, "improved": 0, "within_noise": 0, "regression": 1, "new": 0, "missing": 0,
              "undefined": 0, "stale": 0, "not_run": 0}
    return {"path": "baseline.json", "found": True, "counts": counts, "entries": [entry, same]}


def test_the_baseline_says_unchanged_in_both_reports_and_each_regression_once():
    from pytest_judgerel.report.html import render_html
    from pytest_judgerel.report.terminal import write_summary

    comp = _baseline_comp()
    reason = "t.py::test_a ICC(A,1): dropped 0.3 (tolerance 0.05)"
    report = {"tests": [], "totals": {}, "gate": {"status": "failed", "reasons": [reason], "errors": [],
                                                  "baseline": comp}}
    tr = _Lines()
    write_summary(tr, report, [reason], None)
    text = "\n".join(tr.lines)
    assert "1 unchanged" in text and sum(line.count("dropped 0.3") for line in tr.lines) == 1, text
    assert "1 baseline regression(s), listed above" in text
    html = render_html(report)
    assert ">unchanged<" in html and "1 unchanged" in html and ">pass<" not in html and "pass 1" not in html


def test_a_failing_icc_gate_over_repeats_calls_its_columns_repeats():
    from pytest_judgerel import JudgeReliabilityFailure, Ratings, assert_icc_above

    values = [[1, 4], [3, 0], [2, 5], [5, 1], [0, 3], [4, 2]]
    repeats = Ratings.from_array(values, scale="0-5", provenance={"design": "repeats"})
    with pytest.raises(JudgeReliabilityFailure) as info:
        assert_icc_above(repeats, 0.9)
    assert "k=2 repeats" in str(info.value) and "raters" not in str(info.value)
    panel = Ratings.from_array(values, scale="0-5")  # a human panel's columns stay raters
    with pytest.raises(JudgeReliabilityFailure, match="k=2 raters"):
        assert_icc_above(panel, 0.9)


def test_a_connection_error_names_the_server(tmp_path):
    from pytest_judgerel.errors import LLMCallError
    from pytest_judgerel.llm import LLMClient, LLMRequest, LLMSettings

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    with LLMClient(LLMSettings(cache_mode="off", max_attempts=1, backend="http")) as client:
        with pytest.raises(LLMCallError) as info:
            client.complete(LLMRequest(model="openai/x", api_base=url, messages=({"role": "user", "content": "x"},)))
    assert url in str(info.value)


def test_the_study_tables_never_print_minus_zero_and_table_1_fits_1400_px():
    from pytest_judgerel.study.reproduce import _fixed as fixed

    assert fixed(-0.0004, 3, signed=True) == "+0.000" and fixed(-0.0004, 3) == "0.000"
    assert fixed(-0.0006, 3, signed=True) == "-0.001" and fixed(0.01234, 4) == "0.0123"
    from pytest_judgerel.study import html as study_html

    source = Path(study_html.__file__).read_text(encoding="utf-8")
    assert "colspan='2'" in source and "colspan='3'" not in source  # two cells per column, not three
    # Table 1: 7 columns; each column's two cells hold at most 7 characters of 13 px monospace
    # (8 px a character) plus 2 x 8 px padding and a border: 2 x 73 px; the row header ~110 px
    assert 110 + 7 * 2 * (7 * 8 + 16 + 1) <= 1400


# ---------------------------------------------------------------- 7. the stats object passed to a gate
def test_the_position_gate_says_what_to_pass_when_given_the_statistic():
    from pytest_judgerel import assert_position_consistent
    from pytest_judgerel.stats import position_consistency

    stats = position_consistency(["A", "B", "A", "tie"], ["A", "A", "A", "tie"])
    with pytest.raises(TypeError, match=r"position_bias\(judge, pairs\).*got a PositionConsistency.*run the probe"):
        assert_position_consistent(stats, 0.8)
