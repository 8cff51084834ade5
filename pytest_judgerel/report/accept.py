"""``judgerel baseline accept REPORT.json``: accept a reviewed change into the committed baseline.

The report's metrics replace the baseline entries of the tests it ran (all of them, or those
``--tests`` names: a node id, a prefix of one such as a file, or a glob); other entries are
kept.  Nothing is re-run.  The metrics that changed are printed first.  A report is refused
(exit 2, nothing written) when it holds placeholders (a dry run), calls that failed after their
retries, or drifted judge anchors; ``--allow-drift`` accepts the last two after a reviewer has
looked.  ``--check`` prints what would change and writes nothing.
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
from typing import Any, Mapping, Sequence

from .baseline import compare_report, load_baseline, status_word, updated_baseline
from .fmt import fmt_number
from .io import read_json, write_json_atomic
from .judge_drift import drifted_configurations
from .schema import ReportFormatError, validate_report

__all__ = ["refusals", "select_tests", "accept_report", "register"]


def refusals(report: Mapping[str, Any], allow_drift: bool = False) -> list[str]:
    """Why the report may not become the baseline (empty: it may)."""
    out = []
    if (report.get("session") or {}).get("dry_run") or (report.get("settings") or {}).get("dry_run"):
        out.append("the report is a dry run: its judge replies are placeholders")
    if allow_drift:
        return out
    errors = int((report.get("totals") or {}).get("errors") or 0)
    if errors:
        out.append(f"{errors} judge call(s) failed after their retries (--allow-drift accepts anyway)")
    for cid, entry in drifted_configurations(report).items():
        model = (entry.get("judge") or {}).get("model")
        out.append(f"the anchors of judge {model} ({cid[:8]}) drifted (--allow-drift accepts anyway)")
    return out


def _matches(nodeid: str, patterns: Sequence[str]) -> bool:
    return any(nodeid == p or nodeid.startswith(p.rstrip(":") + "::") or nodeid.startswith(p + "[")
               or fnmatch.fnmatchcase(nodeid, p) for p in patterns)


def select_tests(report: Mapping[str, Any], patterns: Sequence[str] | None) -> dict[str, Any]:
    """The report restricted to the tests ``patterns`` name (all without patterns)."""
    if not patterns:
        return dict(report)
    tests = [t for t in report.get("tests") or [] if _matches(str(t.get("nodeid")), patterns)]
    if not tests:
        raise ReportFormatError(f"--tests {' '.join(patterns)} names no test of the report")
    return {**report, "tests": tests}


def _change_lines(report: Mapping[str, Any], previous: Mapping[str, Any] | None) -> list[str]:
    comp = compare_report(report, previous)
    lines = []
    for e in comp.entries:
        if e.status == "pass" and not e.delta:
            continue
        delta = f" ({e.delta:+.4f})" if e.delta is not None else ""
        lines.append(f"  {e.nodeid} {e.metric}: {fmt_number(e.baseline)} -> {fmt_number(e.current)}{delta} "
                     f"{status_word(e.status)}" + (" [judge changed]" if e.fingerprint_changed else ""))
    return lines


def accept_report(report_path: str, baseline_path: str | None, tests: Sequence[str] | None = None, *,
                  allow_drift: bool = False, check: bool = False, out: Any = None) -> int:
    """Accept ``report_path`` into ``baseline_path`` (default: the baseline the report was compared
    with); 0 written (or would be, with ``check``), 2 refused."""
    out = out or sys.stdout
    report = read_json(report_path, "report")
    validate_report(report, f"report {report_path!r}")
    baseline_path = baseline_path or (report.get("settings") or {}).get("baseline")
    if not baseline_path:
        raise ReportFormatError("the report names no baseline: pass --baseline PATH")
    why = refusals(report, allow_drift)
    if why:
        for reason in why:
            print(f"judgerel: refused: {reason}", file=sys.stderr)
        return 2
    chosen = select_tests(report, tests)
    previous = load_baseline(baseline_path)
    lines = _change_lines(chosen, previous)
    print(f"{'would change' if check else 'accepted'} {len(lines)} metric(s) of "
          f"{len(chosen.get('tests') or [])} test(s) into {baseline_path}:", file=out)
    for line in lines:
        print(line, file=out)
    if not check:
        write_json_atomic(baseline_path, updated_baseline(previous, chosen))
    return 0


def cmd_baseline_accept(args: argparse.Namespace) -> int:
    try:
        return accept_report(args.report, args.baseline, args.tests, allow_drift=args.allow_drift, check=args.check)
    except (ReportFormatError, ValueError, OSError) as exc:
        print(f"judgerel: error: {exc}", file=sys.stderr)
        return 2


def register(subparsers: Any) -> None:
    """Add the ``baseline`` command group (``baseline accept``)."""
    base = subparsers.add_parser("baseline", help="the committed baseline: accept a reviewed report into it")
    bsub = base.add_subparsers(dest="baseline_command", required=True)
    a = bsub.add_parser("accept", help="update the baseline from a JSON report (no re-run); prints what changed")
    a.add_argument("report", help="a JSON report written with --judgerel-json")
    a.add_argument("--baseline", help="baseline file (default: the one the report was compared with)")
    a.add_argument("--tests", nargs="+", metavar="TEST",
                   help="accept only these tests (node id, file or node-id prefix, or glob)")
    a.add_argument("--allow-drift", action="store_true",
                   help="accept a report with failed calls or drifted judge anchors")
    a.add_argument("--check", action="store_true", help="print what would change, write nothing")
    a.set_defaults(func=cmd_baseline_accept)
