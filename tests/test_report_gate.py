"""The CI gate at session end (report/gate.py), called directly: verdicts, errors, outputs.

The end-to-end runs (exit status of a real pytest session) are in test_report_baseline.py and
test_report_terminal.py; here every branch is driven in-process with a hand-built report.
"""

from __future__ import annotations

import json
import os
from types import SimpleNamespace

import pytest

from pytest_judgerel.report.baseline import updated_baseline
from pytest_judgerel.report.build import assemble_report
from pytest_judgerel.report.gate import apply_outputs, evaluate_gate


def _rec(value, ci):
    return {"kind": "icc", "statistic": "ICC(A,1)", "value": value, "ci": ci, "direction": "min", "passed": True,
            "n": 20, "threshold": 0.5, "judge": None}


def _report(value=0.80, ci=(0.75, 0.85)):
    return assemble_report([{"nodeid": "t::a", "records": [_rec(value, list(ci))]}], settings={})


@pytest.fixture
def baseline(tmp_path):
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(updated_baseline(None, _report())))
    return path


REGRESSION = ("t::a ICC(A,1): 0.8000 -> 0.6000 (-0.2000; allowed drop 0.05); "
              "confidence intervals do not overlap")


def test_without_a_baseline_the_gate_passes_and_records_no_comparison():
    rep = _report()
    assert evaluate_gate(rep, baseline=None) == ([], [])
    assert rep["gate"] == {"status": "passed", "reasons": [], "errors": [], "baseline": None}
    assert rep["outputs"] == {}


def test_a_regression_fails_the_gate_and_report_only_keeps_it_as_a_reason(baseline):
    rep = _report(0.60, (0.55, 0.65))
    regressions, errors = evaluate_gate(rep, baseline=str(baseline))
    assert (regressions, errors) == ([REGRESSION], [])
    assert rep["gate"]["status"] == "failed" and rep["gate"]["reasons"] == [REGRESSION]
    assert rep["gate"]["errors"] == [] and rep["gate"]["baseline"]["counts"]["regression"] == 1
    quiet = _report(0.60, (0.55, 0.65))
    assert evaluate_gate(quiet, baseline=str(baseline), report_only=True) == ([REGRESSION], [])
    assert quiet["gate"]["status"] == "report_only" and quiet["gate"]["reasons"] == [REGRESSION]


def test_tolerances_reach_the_comparison(baseline):
    rep = _report(0.70, (0.68, 0.72))  # a drop of 0.10 with disjoint intervals
    assert evaluate_gate(rep, baseline=str(baseline), max_icc_drop=0.15) == ([], [])
    assert rep["gate"]["baseline"]["tolerances"] == {"max_icc_drop": 0.15, "max_nmae_rise": 0.02, "alpha": 0.05}
    rep = _report(0.70, (0.68, 0.72))
    assert evaluate_gate(rep, baseline=str(baseline), max_nmae_rise=0.5)[0] != []  # nMAE's tolerance is not ICC's
    assert rep["gate"]["baseline"]["tolerances"]["max_nmae_rise"] == 0.5


def test_an_invalid_tolerance_is_an_error_and_the_defaults_are_used(baseline):
    rep = _report(0.76, (0.7, 0.8))  # within the default drop of 0.05
    regressions, errors = evaluate_gate(rep, baseline=str(baseline), max_icc_drop=-1)
    assert regressions == [] and errors == ["invalid baseline tolerance: max_icc_drop must be a number >= 0, got -1"]
    assert rep["gate"]["status"] == "failed" and rep["gate"]["errors"] == errors
    assert rep["gate"]["baseline"]["tolerances"]["max_icc_drop"] == 0.05


def test_an_unreadable_baseline_fails_even_in_report_only_mode(tmp_path):
    bad = tmp_path / "b.json"
    bad.write_text("{not json")
    rep = _report()
    regressions, errors = evaluate_gate(rep, baseline=str(bad), report_only=True)
    assert regressions == [] and len(errors) == 1 and errors[0].startswith(f"baseline {str(bad)!r} is not valid JSON")
    assert rep["gate"]["status"] == "failed" and rep["gate"]["reasons"] == errors


def test_update_needs_a_path_and_writes_the_accepted_run(tmp_path, baseline):
    rep = _report()
    assert evaluate_gate(rep, baseline=None, update_baseline=True) == (
        [], ["--judgerel-update-baseline needs --judgerel-baseline PATH (nothing was written)"])
    assert rep["gate"]["status"] == "failed"
    rep = _report(0.60, (0.55, 0.65))  # a regression, accepted on purpose
    assert evaluate_gate(rep, baseline=str(baseline), update_baseline=True) == ([], [])
    assert rep["gate"]["status"] == "passed" and rep["gate"]["baseline"]["updated"] is True
    assert rep["outputs"]["baseline"] == os.path.abspath(baseline)
    assert json.loads(baseline.read_text())["tests"]["t::a"]["ICC(A,1)"]["value"] == 0.6


def test_update_refuses_an_unreadable_baseline_and_reports_a_failed_write(tmp_path):
    bad = tmp_path / "b.json"
    bad.write_text("[]")
    rep = _report()
    _, errors = evaluate_gate(rep, baseline=str(bad), update_baseline=True)
    assert len(errors) == 1 and errors[0].startswith("baseline not updated: ")
    assert bad.read_text() == "[]"
    blocked = tmp_path / "file"
    blocked.write_text("x")
    rep = _report()
    _, errors = evaluate_gate(rep, baseline=str(blocked / "b.json"), update_baseline=True)
    assert len(errors) == 1 and errors[0].startswith(f"could not write the baseline {blocked / 'b.json'}: ")
    assert rep["gate"]["status"] == "failed" and "baseline" not in rep["outputs"]


def _session(tmp_path, **settings):
    base = dict(report_only=False, baseline=None, update_baseline=False, max_icc_drop=0.05, max_nmae_rise=0.02,
                json=None, html=None, history_dir=None)
    base.update(settings)
    return SimpleNamespace(settings=SimpleNamespace(**base), config=SimpleNamespace(rootpath=tmp_path))


def test_apply_outputs_writes_json_html_and_history(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rep = _report()
    session = _session(tmp_path, json="out/r.json", html="out/r.html", history_dir="hist")
    assert apply_outputs(session, rep) == []
    assert rep["outputs"]["json"] == str(tmp_path / "out" / "r.json")
    assert rep["outputs"]["html"] == str(tmp_path / "out" / "r.html")
    assert json.loads((tmp_path / "out" / "r.json").read_text())["gate"]["status"] == "passed"
    assert (tmp_path / "out" / "r.html").read_text().lstrip().lower().startswith("<!doctype html")
    (run,) = (tmp_path / "hist").iterdir()
    assert rep["outputs"]["history"] == str(run) and run.name.startswith("0001_")


def test_apply_outputs_reports_every_failed_write_and_returns_regressions_unless_report_only(tmp_path, baseline):
    blocked = tmp_path / "file"
    blocked.write_text("x")
    rep = _report(0.60, (0.55, 0.65))
    session = _session(tmp_path, baseline=str(baseline), json=str(blocked / "r.json"), html=str(blocked / "r.html"),
                       history_dir=str(blocked / "h"))
    reasons = apply_outputs(session, rep)
    # the report paths are probed before anything is written (a run never announces a report it cannot write)
    written = [f"could not write the JSON report {blocked / 'r.json'}: ", f"could not write the HTML report {blocked / 'r.html'}: ",
               f"could not write the history run in {blocked / 'h'}: "]
    assert [r[:len(w)] for r, w in zip(reasons, written)] == written and reasons[3:] == [REGRESSION]
    assert rep["gate"]["status"] == "failed" and rep["gate"]["errors"] == reasons[:3]
    assert rep["gate"]["reasons"] == [REGRESSION] + reasons[:3]
    quiet = _report(0.60, (0.55, 0.65))
    assert apply_outputs(_session(tmp_path, baseline=str(baseline), report_only=True), quiet) == []
    assert quiet["gate"]["status"] == "report_only"


def _git_repo(path):
    import subprocess

    path.mkdir()
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    for cmd in (["git", "init", "-q"], ["git", "commit", "-q", "--allow-empty", "-m", "x"]):
        subprocess.run(cmd, cwd=path, check=True, env=env, capture_output=True)
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=path, check=True, capture_output=True,
                          text=True).stdout.strip()


def test_history_records_the_commit_of_the_rootdir_not_of_the_working_directory(tmp_path, monkeypatch):
    commit = _git_repo(tmp_path / "repo")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    rep = _report()
    session = _session(tmp_path / "repo", history_dir=str(tmp_path / "hist"))
    assert apply_outputs(session, rep) == [] and rep["run"]["git_commit"] == commit
    # without a rootpath on the config, the working directory is the root
    monkeypatch.chdir(tmp_path / "repo")
    rep = _report()
    no_root = SimpleNamespace(settings=_session(tmp_path, history_dir=str(tmp_path / "hist")).settings,
                              config=SimpleNamespace())
    assert apply_outputs(no_root, rep) == [] and rep["run"]["git_commit"] == commit


def test_a_failed_write_alone_fails_the_gate_and_names_the_os_error(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("x")
    rep = _report()
    (reason,) = apply_outputs(_session(tmp_path, json=str(blocked / "r.json")), rep)
    assert reason.startswith(f"could not write the JSON report {blocked / 'r.json'}: [Errno ")
    assert "Not a directory" in reason or "File exists" in reason
    assert rep["gate"]["status"] == "failed" and rep["gate"]["reasons"] == [reason]
    for setting, what in (("html", "HTML report"), ("history_dir", "history run in")):
        rep = _report()
        (reason,) = apply_outputs(_session(tmp_path, **{setting: str(blocked / "x")}), rep)
        assert reason.startswith(f"could not write the {what} {blocked / 'x'}: [Errno ")


def test_apply_outputs_passes_every_gate_setting_on(tmp_path, baseline):
    extra = tmp_path / "extra.json"
    data = json.loads(baseline.read_text())
    data["tests"]["t::other"] = dict(data["tests"]["t::a"])
    extra.write_text(json.dumps(data))
    rep = _report(0.60, (0.55, 0.65))
    session = _session(tmp_path, baseline=str(extra), max_icc_drop=0.3, max_nmae_rise=0.4)
    assert apply_outputs(session, rep) == []  # a drop of 0.2 is within 0.3
    assert rep["gate"]["baseline"]["tolerances"] == {"max_icc_drop": 0.3, "max_nmae_rise": 0.4, "alpha": 0.05}
    rep = _report(0.60, (0.55, 0.65))
    assert apply_outputs(_session(tmp_path, baseline=str(extra), update_baseline=True), rep) == []
    saved = json.loads(extra.read_text())["tests"]
    assert saved["t::a"]["ICC(A,1)"]["value"] == 0.6 and "t::other" in saved  # the update kept the other test
