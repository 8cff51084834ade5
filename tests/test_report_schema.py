"""The JSON report and the baseline match their versioned schemas; the validator rejects bad files."""

from __future__ import annotations

import copy
import json

import pytest

from pytest_judgerel.report.baseline import updated_baseline
from pytest_judgerel.report.build import assemble_report
from pytest_judgerel.report.schema import (
    BASELINE_SCHEMA,
    REPORT_SCHEMA,
    REPORT_VERSION,
    ReportFormatError,
    schema_errors,
    validate_baseline,
    validate_report,
)

TESTS = '''
import numpy as np
from pytest_judgerel import Ratings, assert_agreement, assert_icc_above, assert_scale_consistent

rng = np.random.default_rng(0)
truth = np.linspace(0, 5, 16)

def test_icc_groups():
    m = np.column_stack([truth + rng.normal(0, 0.3, 16) for _ in range(3)])
    r = Ratings.from_array(m, item_groups={"bench": ["a"] * 8 + ["b"] * 8},
                           provenance={"model": "m1", "template_hash": "t1", "temperature": 0.0})
    assert_icc_above(r, 0.6, by="bench")

def test_agreement():
    judge = np.clip(truth + rng.normal(0, 0.5, 16), 0, 5)
    human = np.column_stack([np.clip(truth + rng.normal(0, 0.4, 16), 0, 5) for _ in range(3)])
    assert_agreement(Ratings.from_array(judge[:, None], scale="0-5"), Ratings.from_array(human, scale="0-5"),
                     min_icc=0.5, max_nmae=0.3)

def test_scales():
    assert_scale_consistent({"0-5": truth, "0-10": np.clip(truth * 2 + rng.normal(0, .3, 16), 0, 10)}, 0.7)
'''


@pytest.fixture(scope="module")
def written_report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    import subprocess
    import sys

    d = tmp_path_factory.mktemp("schema_run")
    (d / "test_s.py").write_text(TESTS)
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--judgerel-json=r.json",
                    "--judgerel-baseline=b.json", "--judgerel-update-baseline", "test_s.py"],
                   cwd=d, capture_output=True, text=True, timeout=300)
    return {"report": json.loads((d / "r.json").read_text()), "baseline": json.loads((d / "b.json").read_text())}


def test_written_report_is_valid(written_report: dict) -> None:
    report = written_report["report"]
    validate_report(report)
    assert report["schema"] == "pytest-judgerel/report" and report["version"] == REPORT_VERSION
    kinds = sorted(r["kind"] for t in report["tests"] for r in t["records"])
    assert kinds == ["agreement", "icc", "scale_consistency"]


def test_written_report_is_valid_for_jsonschema(written_report: dict) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator.check_schema(REPORT_SCHEMA)
    jsonschema.Draft202012Validator(REPORT_SCHEMA).validate(written_report["report"])
    jsonschema.Draft202012Validator.check_schema(BASELINE_SCHEMA)
    jsonschema.Draft202012Validator(BASELINE_SCHEMA).validate(written_report["baseline"])


def test_written_baseline_is_valid(written_report: dict) -> None:
    validate_baseline(written_report["baseline"])
    tests = written_report["baseline"]["tests"]
    assert "ICC(A,1) / a" in tests["test_s.py::test_icc_groups"]
    assert tests["test_s.py::test_agreement"]["nMAE"]["direction"] == "max"


def test_report_has_no_nan(written_report: dict) -> None:
    text = json.dumps(written_report["report"], allow_nan=True)
    assert "NaN" not in text and "Infinity" not in text
    assert written_report["report"]["totals"]["metrics"] == 3


@pytest.mark.parametrize("mutate, fragment", [
    (lambda r: r.pop("totals"), "missing required key 'totals'"),
    (lambda r: r.__setitem__("version", "1"), "$.version"),
    (lambda r: r["tests"][0].__setitem__("outcome", "exploded"), "$.tests[0].outcome"),
    (lambda r: r["tests"][0]["records"][0].__setitem__("value", "high"), "$.tests[0].records[0].value"),
    (lambda r: r["tests"][0]["records"][0].__setitem__("ci", [0.1]), "fewer than 2 items"),
    (lambda r: r["totals"].__setitem__("hit_rate", 1.5), "maximum 1"),
    (lambda r: r["gate"].__setitem__("status", "maybe"), "$.gate.status"),
    (lambda r: r["tests"][0]["records"][0].__setitem__("direction", "up"), "direction"),
])
def test_validator_names_the_violation(written_report: dict, mutate, fragment: str) -> None:
    bad = copy.deepcopy(written_report["report"])
    mutate(bad)
    with pytest.raises(ReportFormatError, match="invalid report") as exc:
        validate_report(bad)
    assert fragment in str(exc.value)
    jsonschema = pytest.importorskip("jsonschema")
    assert not jsonschema.Draft202012Validator(REPORT_SCHEMA).is_valid(bad)


def test_newer_major_version_is_refused_with_both_versions() -> None:
    rep = assemble_report([], settings={})
    rep["version"] = REPORT_VERSION + 1
    with pytest.raises(ReportFormatError, match=f"version {REPORT_VERSION + 1}.*reads version {REPORT_VERSION}"):
        validate_report(rep)


def test_baseline_rejects_unknown_metric_keys() -> None:
    base = updated_baseline(None, assemble_report([{"nodeid": "t::x", "records": [
        {"kind": "icc", "statistic": "ICC(A,1)", "value": 0.8, "ci": [0.7, 0.9], "direction": "min",
         "passed": True, "n": 10}]}], settings={}))
    validate_baseline(base)
    base["tests"]["t::x"]["ICC(A,1)"]["typo"] = 1
    assert any("typo" in e for e in schema_errors(base, BASELINE_SCHEMA))


def test_empty_report_is_valid() -> None:
    rep = assemble_report([], settings={"model": None})
    validate_report(rep)
    assert rep["totals"]["tests"] == 0 and rep["totals"]["hit_rate"] is None
