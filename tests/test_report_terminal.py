"""Terminal summary content, report-only mode, and output errors that fail cleanly."""

from __future__ import annotations

import json

import pytest

from pytest_judgerel.report.build import assemble_report
from pytest_judgerel.report.gate import evaluate_gate
from pytest_judgerel.report.terminal import metric_rows, totals_line, write_summary


class FakeTR:
    def __init__(self, verbose: int = 0) -> None:
        self.lines: list[tuple[str, dict]] = []

        class _Opt:
            pass

        class _Cfg:
            option = _Opt()

        _Cfg.option.verbose = verbose
        self.config = _Cfg()

    def write_sep(self, sep: str, title: str = "", **markup) -> None:
        self.lines.append((f"== {title} ==", markup))

    def write_line(self, line: str, **markup) -> None:
        self.lines.append((line, markup))

    def text(self) -> str:
        return "\n".join(line for line, _ in self.lines)


REC = {"kind": "icc", "statistic": "ICC(A,1)", "value": 0.61, "ci": [0.4, 0.75], "threshold": 0.7,
       "direction": "min", "passed": False, "n": 20, "k": 3,
       "groups": {"easy": {"value": 0.9, "ci": [0.8, 0.95], "n": 10, "passed": True},
                  "hard": {"value": 0.3, "ci": [0.0, 0.6], "n": 10, "passed": False}}}


def test_rows_show_failing_groups_and_all_groups_when_verbose() -> None:
    rep = assemble_report([{"nodeid": "t.py::x", "outcome": "failed", "records": [REC]}], settings={})
    rows = metric_rows(rep)
    assert rows == [("t.py::x", "ICC(A,1)", "0.6100", "[0.400, 0.750]", ">= 0.7", "FAIL", "-"),
                    ("    hard", "", "0.3000", "[0.000, 0.600]", "", "fail", "")]
    assert len(metric_rows(rep, verbose=True)) == 3


def test_nothing_is_written_without_metrics_calls_or_reasons() -> None:
    tr = FakeTR()
    write_summary(tr, assemble_report([], settings={}), [], None)
    assert tr.lines == []


def test_totals_line_reports_calls_hit_rate_retries_cost_and_parse_failures() -> None:
    rep = assemble_report([{"nodeid": "a", "records": [{"kind": "judge_run", "parse_failures": 2}],
                            "calls": {"calls": 8, "hits": 6, "misses": 2, "retries": 3, "cost": 0.25}}],
                          settings={})
    assert totals_line(rep["totals"]) == (
        "judge calls: 8 (cache hits 6, misses 2, hit rate 75%), retries 3, errors 0, cost $0.2500, "
        "parse failures 2; metrics 0 in 1 tests, 0 below threshold")


def test_report_only_regression_is_yellow_and_error_is_red(tmp_path) -> None:
    rep = assemble_report([{"nodeid": "t.py::x", "records": [dict(REC, report_only=True)]}], settings={},
                          report_only=True)
    (tmp_path / "b.json").write_text("not json")
    regressions, errors = evaluate_gate(rep, baseline=str(tmp_path / "b.json"), report_only=True)
    assert regressions == [] and len(errors) == 1 and rep["gate"]["status"] == "failed"
    tr = FakeTR()
    write_summary(tr, rep, errors, None)
    text = tr.text()
    assert "FAIL*" in text and "REPORT-ONLY MODE" in text
    failed = [(line, m) for line, m in tr.lines if line.startswith("judgerel gate FAILED: baseline")]
    assert failed and failed[0][1].get("red")


def test_update_without_baseline_path_is_an_error() -> None:
    rep = assemble_report([], settings={})
    _, errors = evaluate_gate(rep, baseline=None, update_baseline=True)
    assert errors == ["--judgerel-update-baseline needs --judgerel-baseline PATH (nothing was written)"]


PROJECT = '''
import numpy as np
from pytest_judgerel import assert_icc_above

def test_weak():
    rng = np.random.default_rng(0)
    assert_icc_above(rng.normal(0, 1, (15, 3)), 0.8)   # fails unless report-only
'''


def test_report_only_mode_passes_and_says_so(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_r=PROJECT)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--judgerel-report-only",
                                           "--judgerel-json=r.json")
    assert result.ret == 0
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        "*REPORT-ONLY*",
        "*judgerel summary*",
        "test_r.py::test_weak*ICC(A,1)*>= 0.8*FAIL[*]*",
        "REPORT-ONLY MODE: reliability assertions and the baseline gate were evaluated and reported but did "
        "not fail any test or the session (FAIL* marks what would have failed).",
    ])
    rep = json.loads((pytester.path / "r.json").read_text())
    assert rep["report_only"] is True and rep["tests"][0]["records"][0]["report_only"] is True
    plain = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert plain.ret == 1


def test_unwritable_output_fails_the_session_without_traceback(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_r=PROJECT.replace("0.8)", "-1.0)"))
    (pytester.path / "taken").mkdir()
    (pytester.path / "taken" / "x").write_text("a directory cannot be replaced by a file")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--judgerel-json=taken")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["judgerel gate FAILED: could not write the JSON report taken: *",
                                 "*1 passed*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
