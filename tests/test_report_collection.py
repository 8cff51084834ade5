"""Metric records reach the controller identically with and without xdist, and survive a worker crash.

Every test runs pytest in a subprocess (pytester) on small numpy matrices with
``assert_icc_above`` (no LLM) and reads the JSON report the controller wrote.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from pytest_judgerel.report.schema import validate_report

TESTS = '''
import os
import numpy as np
import pytest
from pytest_judgerel import assert_icc_above

def _m(noise, seed, n=12):
    rng = np.random.default_rng(seed)
    truth = np.linspace(0, 5, n)
    return np.column_stack([truth + rng.normal(0, noise, n) for _ in range(3)])

def test_good():
    assert_icc_above(_m(0.2, 1), 0.7)

def test_two_metrics():
    assert_icc_above(_m(0.3, 2), 0.6, label="first")
    assert_icc_above(_m(0.5, 3), 0.5, label="second")

def test_weak_judge():
    assert_icc_above(_m(4.0, 4), 0.9)

@pytest.mark.parametrize("seed", [5, 6, 7])
def test_param(seed):
    assert_icc_above(_m(0.4, seed), 0.6)

def test_no_metric():
    assert 1 + 1 == 2
'''

CRASH = '''
def test_crash():
    assert_icc_above(_m(0.2, 9), 0.7)   # recorded, then the worker dies before the report is sent
    os._exit(3)
'''

MODES = {
    "plain": [],
    "n0": ["-n", "0"],
    "n2": ["-n", "2"],
    "no_xdist": ["-p", "no:xdist"],
}


def _records_by_test(report):
    return {t["nodeid"]: [(r["statistic"], r.get("label"), r["value"], r["ci"], r["passed"])
                          for r in t["records"]] for t in report["tests"]}


def _run(pytester: pytest.Pytester, *args: str):
    out = pytester.path / "report.json"
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", f"--judgerel-json={out}", *args)
    return result, json.loads(out.read_text())


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_judged=TESTS)
    return pytester


def test_records_identical_in_every_xdist_mode(project: pytest.Pytester) -> None:
    reports = {}
    for name, args in MODES.items():
        result, report = _run(project, *args)
        result.assert_outcomes(passed=6, failed=1)
        assert result.ret == 1
        validate_report(report)
        reports[name] = report
    expected = _records_by_test(reports["plain"])
    assert sorted(expected) == sorted(
        ["test_judged.py::test_good", "test_judged.py::test_two_metrics", "test_judged.py::test_weak_judge"]
        + [f"test_judged.py::test_param[{s}]" for s in (5, 6, 7)] + ["test_judged.py::test_no_metric"])
    assert expected["test_judged.py::test_no_metric"] == []  # listed with its outcome, without records
    assert [r[1] for r in expected["test_judged.py::test_two_metrics"]] == ["first", "second"]
    assert expected["test_judged.py::test_weak_judge"][0][4] is False
    for name, report in reports.items():
        assert _records_by_test(report) == expected, name
        assert report["totals"]["metrics"] == 7 and report["totals"]["failed_metrics"] == 1, name
        assert report["crashed"] == []
    outcomes = {t["nodeid"]: t["outcome"] for t in reports["n2"]["tests"]}
    assert outcomes["test_judged.py::test_weak_judge"] == "failed"
    assert outcomes["test_judged.py::test_good"] == outcomes["test_judged.py::test_no_metric"] == "passed"


def test_worker_crash_keeps_other_records_and_lists_the_crash(project: pytest.Pytester) -> None:
    project.path.joinpath("test_judged.py").write_text(TESTS + CRASH)
    result, report = _run(project, "-n", "2")
    validate_report(report)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*crashed tests (worker died*test_judged.py::test_crash*"])
    assert report["crashed"] == ["test_judged.py::test_crash"]
    nodeids = {t["nodeid"] for t in report["tests"]}
    assert {"test_judged.py::test_good", "test_judged.py::test_two_metrics",
            "test_judged.py::test_weak_judge"} <= nodeids
    assert sum(1 for n in nodeids if "test_param" in n) == 3
    # the crashed test's own record died with its worker
    assert "test_judged.py::test_crash" not in {t["nodeid"] for t in report["tests"] if t["records"]}


def test_only_the_controller_writes_the_report(project: pytest.Pytester) -> None:
    result, report = _run(project, "-n", "2", "--judgerel-history=hist", "--judgerel-html=report.html")
    assert result.ret == 1
    html = (project.path / "report.html").read_text()
    assert all(t["nodeid"] in html for t in report["tests"] if t["records"])
    # one report and one history run, holding the records of tests from both workers
    assert [p.name for p in (project.path / "hist").iterdir()] == [
        f"0001_{report['run']['fingerprint']}.json"]
    assert report["totals"]["metrics"] == 7
    leftovers = [p.name for p in project.path.iterdir() if p.name.startswith(".judgerel-")]
    assert leftovers == []


def test_summary_table_and_totals(project: pytest.Pytester) -> None:
    result, _ = _run(project)
    result.stdout.fnmatch_lines([
        "*judgerel summary*",
        "test*statistic*value*CI*threshold*verdict*",
        "test_judged.py::test_good*ICC(A,1)*0.9*[[]0.*>= 0.7*PASS*",
        "test_judged.py::test_two_metrics ?first?*ICC(A,1)*PASS*",
        "test_judged.py::test_weak_judge*ICC(A,1)*>= 0.9*FAIL*",
        "judge calls: 0 (cache hits 0, misses 0, hit rate -), retries 0, errors 0, cost $0.0000, "
        "parse failures 0; metrics 7 in 7 tests, 1 below threshold",
    ])
    # the summary comes before pytest's final line, which is still printed
    assert result.outlines[-1].startswith("=") and "1 failed, 6 passed" in result.outlines[-1]


def test_junit_xml_carries_flat_metric_properties(project: pytest.Pytester) -> None:
    """plugin.py appends report.junit.junit_properties() to user_properties (never skipped: a
    missing feature must fail here, not hide behind a skip reason CI does not catch)."""
    for args in ([], ["-n", "2"]):
        xml_path = project.path / "junit.xml"
        result = project.runpytest_subprocess("-p", "no:cacheprovider", f"--junitxml={xml_path}", *args)
        assert result.ret == 1
        root = ET.parse(xml_path).getroot()
        props = {}
        for case in root.iter("testcase"):
            props[case.get("name")] = {p.get("name"): p.get("value") for p in case.iter("property")}
        good = props["test_good"]
        assert float(good["judgerel.ICC(A,1)"]) > 0.9
        assert good["judgerel.ICC(A,1).verdict"] == "pass"
        assert good["judgerel.ICC(A,1).threshold"] == "0.7"
        assert good["judgerel.ICC(A,1).ci"].startswith("[0.")
        assert props["test_weak_judge"]["judgerel.ICC(A,1).verdict"] == "fail"
        assert "judgerel.ICC(A,1) [second]" in props["test_two_metrics"]
        # no property holds a Python repr of the transport dict
        assert not any(v.startswith("{") for p in props.values() for v in p.values())
        assert "test_no_metric" not in props or not props["test_no_metric"]
