"""Session-end outputs and the CI gate (controller only, once, never raises).

Order: baseline comparison (or update) -> gate verdict stored in the report ->
history run -> JSON -> HTML.  Returned reasons make the session fail
(``session.exitstatus``); in report-only mode baseline regressions are reported
but not returned, while a requested output that cannot be written always is.
"""

from __future__ import annotations

import os
from typing import Any

from .baseline import Tolerances, compare_with_file, load_baseline, updated_baseline
from .io import write_json_atomic, write_text_atomic
from .schema import ReportFormatError

__all__ = ["apply_outputs", "evaluate_gate", "write_json_atomic"]


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


def apply_outputs(session: Any, report: dict[str, Any]) -> list[str]:
    """Evaluate the gate, write every configured output; return the reasons that fail the session."""
    s = session.settings
    report_only = bool(s.report_only)
    regressions, errors = evaluate_gate(report, baseline=s.baseline, update_baseline=bool(s.update_baseline),
                                        max_icc_drop=s.max_icc_drop, max_nmae_rise=s.max_nmae_rise,
                                        report_only=report_only)
    outputs = report.setdefault("outputs", {})
    rootdir = str(getattr(session.config, "rootpath", os.getcwd()))
    if s.json:
        outputs["json"] = os.path.abspath(s.json)
    if s.html:
        outputs["html"] = os.path.abspath(s.html)

    def failed_write(what: str, path: str, exc: Exception) -> None:
        msg = f"could not write the {what} {path}: {exc}"
        errors.append(msg)
        report["gate"]["reasons"].append(msg)
        report["gate"]["errors"].append(msg)
        report["gate"]["status"] = "failed"

    if s.history_dir:
        from .history import write_run

        try:
            outputs["history"] = write_run(s.history_dir, report, cwd=rootdir)
        except OSError as exc:
            failed_write("history run in", s.history_dir, exc)
    if s.json:
        try:
            write_json_atomic(s.json, report)
        except (OSError, ValueError) as exc:
            failed_write("JSON report", s.json, exc)
    if s.html:
        from .html import render_html

        try:
            write_text_atomic(s.html, render_html(report))
        except (OSError, ValueError) as exc:
            failed_write("HTML report", s.html, exc)
    return errors + ([] if report_only else regressions)
