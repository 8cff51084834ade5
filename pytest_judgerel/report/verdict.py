"""Verdicts of metric records, read the same way by the terminal, HTML and JSON gate.

A record holds one or more *checks* (a statistic, its value, threshold and direction):
``assert_agreement(min_icc=..., max_nmae=...)`` records two, so a failure on nMAE is shown
as an nMAE failure.  A record's verdict also depends on the test that recorded it:

* ``PASS``: every check passed;
* ``FAIL``: a check failed and the test failed (what pytest reports);
* ``FAIL*``: a check failed in report-only mode (nothing fails);
* ``CAUGHT``: a check failed inside a test that passed: the test expected it (e.g. a
  negative example under ``pytest.raises``), so it is not a failure of the session.
"""

from __future__ import annotations

from typing import Any, Mapping

from .fmt import fmt_number

__all__ = ["checks", "record_verdict", "failed_checks", "FAILED_OUTCOMES"]

FAILED_OUTCOMES = frozenset({"failed", "error", "interrupted", "crashed"})


def checks(rec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The record's checks: its ``checks`` list, else one check from its main statistic."""
    listed = rec.get("checks")
    if isinstance(listed, list) and listed:
        return [dict(c) for c in listed if isinstance(c, Mapping)]
    return [{"statistic": str(rec.get("statistic", rec.get("kind", "?"))), "value": rec.get("value"),
             "threshold": rec.get("threshold"), "direction": rec.get("direction", "min"),
             "passed": rec.get("passed")}]


def record_verdict(rec: Mapping[str, Any], test_outcome: str | None, report_only: bool = False) -> str:
    """``PASS``, ``FAIL``, ``FAIL*`` or ``CAUGHT`` (see the module docstring)."""
    if rec.get("passed"):
        return "PASS"
    if rec.get("report_only") or report_only:
        return "FAIL*"
    if test_outcome == "passed":
        return "CAUGHT"
    return "FAIL"


def failed_checks(test: Mapping[str, Any]) -> list[str]:
    """One line per failed check of the test's metric records (for the gate's reasons)."""
    from .metrics import is_metric_record

    lines = []
    for rec in test.get("records") or []:
        if not is_metric_record(rec) or rec.get("passed"):
            continue
        label = f" [{rec['label']}]" if rec.get("label") else ""
        if rec.get("value") is None and rec.get("error"):
            lines.append(f"{rec.get('statistic', rec.get('kind'))}{label} not computed: {rec['error']}")
            continue
        bad = [c for c in checks(rec) if c.get("passed") is False]
        for c in bad:
            op = "<" if c.get("direction") != "max" else ">"
            lines.append(f"{c['statistic']}{label} {fmt_number(c.get('value'))} {op} threshold {c.get('threshold')}")
        if not bad:  # every pooled check passed: a group (or the parse-failure gate) failed
            groups = [g for g, info in (rec.get("groups") or {}).items()
                      if isinstance(info, Mapping) and info.get("passed") is False]
            what = f"group(s) {', '.join(groups)} failed" if groups else "failed"
            lines.append(f"{rec.get('statistic', rec.get('kind'))}{label}: {what}")
    return lines
