"""The CI gate at session end (report/gate.py), called directly: verdicts, errors, outputs.

The end-to-end runs (exit status of a real pytest session) are in test_report_baseline.py and
test_report_terminal.py; here every branch is driven in-process with a hand-built report.
"""

from __future__ import annotations

import json
import os

import pytest

from pytest_judgerel.report.baseline import updated_baseline
from pytest_judgerel.report.build import assemble_report
from pytest_judgerel.report.build import SessionRun
from pytest_judgerel.report.gate import _probe_writable, apply_outputs, evaluate_gate, finalize_status, pytest_reasons
from pytest_judgerel.session.settings import Settings


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
    return SessionRun(rootpath=str(tmp_path), settings=Settings(**base))  # the real settings: gates_report_only


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
    # without a rootpath, the working directory is the root
    monkeypatch.chdir(tmp_path / "repo")
    rep = _report()
    no_root = SessionRun(rootpath="", settings=_session(tmp_path, history_dir=str(tmp_path / "hist")).settings)
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


# ---------------------------------------------------------------- pytest's outcomes in the gate
def _failing_icc(value=0.41, threshold=0.7, **extra):
    return {"kind": "icc", "statistic": "ICC(A,1)", "value": value, "ci": [0.2, 0.6], "direction": "min",
            "passed": False, "n": 20, "threshold": threshold, "judge": None, **extra}


def _with_session(tests, *, outcomes=None, interrupted=False, crashed=(), report_only=False):
    return assemble_report(tests, settings={}, crashed=crashed, report_only=report_only,
                           session={"exitstatus": 1, "interrupted": interrupted, "outcomes": outcomes or {}})


def test_pytest_reasons_name_every_failed_outcome_in_a_fixed_order():
    rep = _with_session([], outcomes={"passed": 3, "failed": 2, "error": 1, "skipped": 4})
    assert pytest_reasons(rep) == ["2 test(s) failed", "1 test(s) errored"]
    assert pytest_reasons(_with_session([], outcomes={"passed": 3, "failed": 0, "error": 0})) == []
    assert pytest_reasons({}) == []


def test_an_interruption_counts_the_tests_that_finished():
    rep = _with_session([], outcomes={"passed": 3, "failed": 1, "interrupted": 5}, interrupted=True)
    assert pytest_reasons(rep) == ["the session was interrupted: partial results of 4 finished test(s)",
                                   "1 test(s) failed"]


def test_crashed_workers_are_counted_from_the_crash_list():
    rep = _with_session([{"nodeid": "t::a"}, {"nodeid": "t::b"}], crashed=["t::a", "t::b"])
    assert pytest_reasons(rep) == ["2 test(s) crashed their worker"]


@pytest.mark.parametrize("outcome", ["failed", "error", "interrupted", "crashed"])
def test_failed_checks_of_a_failed_test_are_reasons_with_statistic_value_and_threshold(outcome):
    rec = _failing_icc(label="math")
    rep = _with_session([{"nodeid": "t::a", "outcome": outcome, "records": [rec]}])
    # ICC(A,1) 0.4100 < 0.7, written out by hand (min direction: below its threshold)
    assert pytest_reasons(rep)[-1] == "t::a: ICC(A,1) [math] 0.4100 < threshold 0.7"


def test_a_passed_test_and_report_only_add_no_check_reasons():
    rec = _failing_icc()
    assert pytest_reasons(_with_session([{"nodeid": "t::a", "outcome": "passed", "records": [rec]}])) == []
    rep = _with_session([{"nodeid": "t::a", "outcome": "failed", "records": [rec]}], report_only=True)
    assert pytest_reasons(rep) == []


def test_a_max_check_an_uncomputed_statistic_and_a_failed_group_are_each_named():
    nmae = {"kind": "nmae", "statistic": "nMAE", "value": 0.25, "threshold": 0.15, "direction": "max",
            "passed": False, "judge": None}
    undefined = {"kind": "icc", "statistic": "ICC(A,1)", "value": None, "error": "all ratings are equal",
                 "passed": False, "judge": None}
    grouped = {**_failing_icc(value=0.9, threshold=0.7), "checks": [
        {"statistic": "ICC(A,1)", "value": 0.9, "threshold": 0.7, "direction": "min", "passed": True}],
        "groups": {"easy": {"passed": True}, "hard": {"passed": False}}}
    rep = _with_session([{"nodeid": "t::a", "outcome": "failed", "records": [nmae, undefined, grouped]}])
    assert pytest_reasons(rep) == ["t::a: nMAE 0.2500 > threshold 0.15",
                                   "t::a: ICC(A,1) not computed: all ratings are equal",
                                   "t::a: ICC(A,1): group(s) hard failed"]


def test_finalize_status_puts_pytest_reasons_first_without_repeats():
    rep = _with_session([], outcomes={"failed": 1})
    rep["gate"] = {"status": "passed", "reasons": ["1 test(s) failed", "baseline: x"], "errors": []}
    finalize_status(rep)
    assert rep["gate"]["status"] == "failed" and rep["gate"]["pytest"] == ["1 test(s) failed"]
    assert rep["gate"]["reasons"] == ["1 test(s) failed", "baseline: x"]


@pytest.mark.parametrize("status", ["passed", "report_only", "failed"])
def test_finalize_status_keeps_the_baseline_status_when_pytest_passed(status):
    rep = _with_session([], outcomes={"passed": 2})
    rep["gate"] = {"status": status, "reasons": ["r"], "errors": []}
    finalize_status(rep)
    assert rep["gate"] == {"status": status, "reasons": ["r"], "errors": [], "pytest": []}


def test_an_interrupted_session_is_interrupted_not_failed():
    rep = _with_session([], outcomes={"failed": 1, "interrupted": 3}, interrupted=True)
    rep["gate"] = {"status": "failed", "reasons": [], "errors": []}
    finalize_status(rep)
    assert rep["gate"]["status"] == "interrupted"
    assert rep["gate"]["reasons"][0].startswith("the session was interrupted: partial results of 1 ")


def test_probe_writable_creates_the_folder_and_leaves_nothing_behind(tmp_path):
    target = tmp_path / "a" / "b" / "r.json"
    _probe_writable(str(target))
    assert (tmp_path / "a" / "b").is_dir() and list((tmp_path / "a" / "b").iterdir()) == []
    with pytest.raises(IsADirectoryError, match=rf"^{tmp_path / 'a'} is a directory$"):
        _probe_writable(str(tmp_path / "a"))
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(OSError):
        _probe_writable(str(blocker / "r.json"))
    assert blocker.read_text() == "x"


def test_probe_writable_tries_the_target_folder_itself():
    # /proc accepts no new files, even from root; a probe of any other folder (say /tmp) would pass
    with pytest.raises(OSError):
        _probe_writable("/proc/judgerel-report.json")


def test_an_interrupted_session_writes_no_history_and_never_updates_the_baseline(tmp_path, baseline, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = baseline.read_text()
    rep = _with_session([{"nodeid": "t::a", "records": [_rec(0.95, [0.9, 0.97])]}],
                        outcomes={"passed": 1, "interrupted": 2}, interrupted=True)
    session = _session(tmp_path, baseline=str(baseline), update_baseline=True, json="r.json", history_dir="hist")
    reasons = apply_outputs(session, rep)
    assert baseline.read_text() == before and "baseline" not in rep["outputs"]
    assert not (tmp_path / "hist").exists() and "history" not in rep["outputs"]
    assert rep["gate"]["status"] == "interrupted" and reasons == []
    assert json.loads((tmp_path / "r.json").read_text())["gate"]["status"] == "interrupted"


def test_a_failed_write_keeps_an_interrupted_status_and_unlists_the_json(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("x")
    rep = _with_session([], outcomes={"interrupted": 1}, interrupted=True)
    reasons = apply_outputs(_session(tmp_path, json=str(blocked / "r.json")), rep)
    assert rep["gate"]["status"] == "interrupted" and "json" not in rep["outputs"]
    assert len(reasons) == 1 and reasons[0].startswith(f"could not write the JSON report {blocked / 'r.json'}: ")


def test_a_json_write_that_fails_after_the_probe_is_reported_and_unlisted(tmp_path, monkeypatch):
    import pytest_judgerel.report.gate as gate_module

    def refuse(path, report):
        raise ValueError("Out of range float values are not JSON compliant")

    monkeypatch.setattr(gate_module, "write_json_atomic", refuse)
    rep = _report()
    reasons = apply_outputs(_session(tmp_path, json=str(tmp_path / "r.json")), rep)
    assert reasons == [f"could not write the JSON report {tmp_path / 'r.json'}: "
                       "Out of range float values are not JSON compliant"]
    assert "json" not in rep["outputs"] and rep["gate"]["status"] == "failed"
    assert rep["gate"]["errors"] == reasons and rep["gate"]["reasons"] == reasons


def test_the_update_reaches_the_baseline_when_the_session_finished(tmp_path, baseline):
    rep = _report(0.95, (0.9, 0.97))
    assert apply_outputs(_session(tmp_path, baseline=str(baseline), update_baseline=True), rep) == []
    assert rep["outputs"]["baseline"] == str(baseline)
    stored = json.loads(baseline.read_text())["tests"]["t::a"]
    assert stored["ICC(A,1)"]["value"] == 0.95


def test_an_html_write_that_fails_after_the_probe_is_reported_and_the_json_still_written(tmp_path, monkeypatch):
    import pytest_judgerel.report.html as html_module

    def refuse(report):
        raise ValueError("template broken")

    monkeypatch.setattr(html_module, "render_html", refuse)
    rep = _report()
    reasons = apply_outputs(_session(tmp_path, html=str(tmp_path / "r.html"), json=str(tmp_path / "r.json")), rep)
    assert reasons == [f"could not write the HTML report {tmp_path / 'r.html'}: template broken"]
    assert "html" not in rep["outputs"] and not (tmp_path / "r.html").exists()
    written = json.loads((tmp_path / "r.json").read_text())
    assert written["gate"]["status"] == "failed" and written["gate"]["errors"] == reasons
