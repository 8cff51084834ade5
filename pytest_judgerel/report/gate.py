"""Session-end outputs and the CI gate (controller only, once, never raises).

The gate's status is derived from the same outcomes pytest reports: failed tests,
errors, crashed workers, an interruption, every failed check of a metric in a
failed test (nMAE included), baseline regressions and outputs that could not be
written.  It never says "passed" when pytest does not.

Order: baseline comparison (or update) -> status from pytest's outcomes -> a probe
that each requested output can be written -> history run (not for an interrupted
session) -> HTML -> Markdown and the step summary -> JSON (last, so it carries every earlier
write error).  Returned
reasons make the session fail (``session.exitstatus``); in report-only mode baseline
regressions are reported but not returned, while an output that cannot be written
always is.  A path is announced as written only after it was.
"""

from __future__ import annotations

import os
from typing import Any

from .._io import write_text_atomic
from .baseline import Tolerances, compare_with_file, load_baseline, updated_baseline
from .io import write_json_atomic
from .schema import ReportFormatError

__all__ = ["apply_outputs", "evaluate_gate"]


def evaluate_gate(report: dict[str, Any], *, baseline: str | None, update_baseline: bool = False,
                  max_icc_drop: float = 0.05, max_nmae_rise: float = 0.02,
                  report_only: bool = False) -> tuple[list[str], list[str]]:
    """Compare with (or update) the baseline; fill ``report["gate"]``.

    Returns ``(regressions, errors)``: regression reasons (suppressed from the exit
    status in report-only mode by the caller) and hard errors (always fail).
    """
    regressions: list[str] = []
    errors: list[str] = []
    comparison = None
    outputs = report.setdefault("outputs", {})
    try:
        tol = Tolerances(max_icc_drop, max_nmae_rise)
    except ValueError as exc:
        errors.append(f"invalid baseline tolerance: {exc}")
        tol = Tolerances()
    if update_baseline and not baseline:
        errors.append("--judgerel-update-baseline needs --judgerel-baseline PATH (nothing was written)")
    if baseline:
        comparison = compare_with_file(report, baseline, tolerances=tol)
        if update_baseline:
            if comparison.error:
                errors.append(f"baseline not updated: {comparison.error}")
            else:
                try:
                    previous = load_baseline(baseline)
                    outputs["baseline"] = write_json_atomic(baseline, updated_baseline(previous, report))
                    comparison.updated = True
                except (OSError, ReportFormatError) as exc:
                    errors.append(f"could not write the baseline {baseline}: {exc}")
        elif comparison.error:
            errors.append(comparison.error)
        else:
            regressions = comparison.reasons()
    all_reasons = errors + regressions
    status = "passed"
    if errors or (regressions and not report_only):
        status = "failed"
    elif regressions:
        status = "report_only"
    report["gate"] = {"status": status, "reasons": all_reasons, "errors": list(errors),
                      "baseline": comparison.to_dict() if comparison is not None else None}
    return regressions, errors


def pytest_reasons(report: dict[str, Any]) -> list[str]:
    """Why pytest's own outcome is not a pass: failed tests, errors, crashes, failed checks of
    metrics in failed tests (each statistic named, nMAE included), an interruption."""
    from .verdict import FAILED_OUTCOMES, failed_checks

    session = report.get("session") or {}
    outcomes = session.get("outcomes") or {}
    reasons = []
    if session.get("interrupted"):
        done = sum(v for k, v in outcomes.items() if k != "interrupted")
        reasons.append(f"the session was interrupted: partial results of {done} finished test(s)")
    for outcome, word in (("failed", "test(s) failed"), ("error", "test(s) errored")):
        if outcomes.get(outcome):
            reasons.append(f"{outcomes[outcome]} {word}")
    if report.get("crashed"):
        reasons.append(f"{len(report['crashed'])} test(s) crashed their worker")
    if not report.get("report_only"):
        for t in report.get("tests", []):
            if t.get("outcome") in FAILED_OUTCOMES:
                reasons += [f"{t['nodeid']}: {c}" for c in failed_checks(t)]
    return reasons


def finalize_status(report: dict[str, Any]) -> None:
    """Fold pytest's outcomes into ``report["gate"]`` (status and reasons)."""
    gate = report["gate"]
    extra = pytest_reasons(report)
    gate["pytest"] = extra
    gate["reasons"] = list(dict.fromkeys(extra + gate["reasons"]))
    if (report.get("session") or {}).get("interrupted"):
        gate["status"] = "interrupted"
    elif extra:
        gate["status"] = "failed"


def _probe_writable(path: str) -> None:
    """Raise OSError now if ``path`` cannot be written (its folder is created as a write would)."""
    import tempfile

    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    if os.path.isdir(path):
        raise IsADirectoryError(f"{path} is a directory")
    fd, tmp = tempfile.mkstemp(prefix=".judgerel-probe-", dir=folder)
    os.close(fd)
    os.unlink(tmp)


def apply_outputs(run: Any, report: dict[str, Any]) -> list[str]:
    """Evaluate the gate, write every configured output; return the reasons that fail the session.

    ``run`` is the plain :class:`~pytest_judgerel.report.build.SessionRun` (its ``settings`` and
    ``rootpath``), never the plugin's session."""
    s = run.settings
    report_only = bool(s.gates_report_only)  # a dry run's placeholder answers decide nothing either
    interrupted = bool((report.get("session") or {}).get("interrupted"))
    regressions, errors = evaluate_gate(report, baseline=s.baseline,
                                        update_baseline=bool(s.update_baseline) and not interrupted
                                        and not s.dry_run,
                                        max_icc_drop=s.max_icc_drop, max_nmae_rise=s.max_nmae_rise,
                                        report_only=report_only)
    finalize_status(report)
    from .judge_drift import mark_judge_changes

    mark_judge_changes(report)  # baseline entries of a judge whose anchors drifted: "judge changed"
    outputs = report["outputs"]  # evaluate_gate made it
    rootdir = str(run.rootpath or os.getcwd())

    def failed_write(what: str, path: str, exc: Exception) -> None:
        msg = f"could not write the {what} {path}: {exc}"
        errors.append(msg)
        report["gate"]["reasons"].append(msg)
        report["gate"]["errors"].append(msg)
        if report["gate"]["status"] != "interrupted":
            report["gate"]["status"] = "failed"

    unwritable = set()
    for what, path in (("JSON report", s.json), ("HTML report", s.html)):
        if path:
            try:
                _probe_writable(path)
            except OSError as exc:
                unwritable.add(path)
                failed_write(what, path, exc)
    if s.history_dir and not interrupted:  # a partial run is not a point of the drift history
        from .history import write_run

        try:
            outputs["history"] = write_run(s.history_dir, report, cwd=rootdir)
        except OSError as exc:
            failed_write("history run in", s.history_dir, exc)
    if s.html and s.html not in unwritable:
        from .html import render_html

        try:
            outputs["html"] = write_text_atomic(s.html, render_html(report))
        except (OSError, ValueError) as exc:
            failed_write("HTML report", s.html, exc)
    from .markdown import write_markdown_outputs

    write_markdown_outputs(s, report, failed_write)  # --judgerel-markdown, GITHUB_STEP_SUMMARY
    if s.json and s.json not in unwritable:
        try:
            path = os.path.abspath(s.json)
            outputs["json"] = path  # the JSON lists itself; removed below if the write fails
            write_json_atomic(s.json, report)
        except (OSError, ValueError) as exc:
            outputs.pop("json", None)
            failed_write("JSON report", s.json, exc)
    return errors + ([] if report_only else regressions)
