"""``judgerel report ...`` and ``judgerel history ...`` subcommands (argparse).

:func:`register` adds them to the ``subparsers`` of the ``judgerel`` command;
each subcommand stores its handler as ``func`` (``args.func(args) -> exit code``).
Exit codes: 0 fine, 1 a baseline regression (the CI gate), 2 bad input.

    judgerel report merge shard1.json shard2.json -o all.json [--baseline B] [--html all.html]
    judgerel report compare all.json --baseline B
    judgerel report html all.json -o all.html
    judgerel report validate all.json
    judgerel report markdown all.json -o summary.md      (and report comment: md_cli.py)
    judgerel history list DIR
    judgerel history compare DIR [RUN_A RUN_B] [--all]
    judgerel history html DIR -o trend.html
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Callable, Sequence, TextIO

from .._io import write_text_atomic
from .baseline import DEFAULT_MAX_ICC_DROP, DEFAULT_MAX_NMAE_RISE, Tolerances, compare_with_file
from .fmt import fmt_number
from .io import read_json, write_json_atomic
from .schema import BASELINE_SCHEMA_ID, ReportFormatError, validate_baseline, validate_report


class _Printer:
    """The two terminal-reporter methods the summary code uses, printing to a stream."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def write_line(self, line: str, **markup: Any) -> None:
        print(line, file=self.out)

    def write_sep(self, sep: str, title: str = "", **markup: Any) -> None:
        print(f"{sep * 8} {title} {sep * 8}", file=self.out)


def _tolerance_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-icc-drop", type=float, default=DEFAULT_MAX_ICC_DROP,
                   help=f"largest allowed drop of a 'min' statistic such as ICC (default {DEFAULT_MAX_ICC_DROP})")
    p.add_argument("--max-nmae-rise", type=float, default=DEFAULT_MAX_NMAE_RISE,
                   help=f"largest allowed rise of a 'max' statistic such as nMAE (default {DEFAULT_MAX_NMAE_RISE})")


def _gate(report: dict[str, Any], baseline: str, args: argparse.Namespace, out: TextIO) -> int:
    from .terminal import write_baseline_section

    comp = compare_with_file(report, baseline, tolerances=Tolerances(args.max_icc_drop, args.max_nmae_rise))
    reasons = comp.reasons()
    report["gate"] = {"status": "failed" if reasons else "passed", "reasons": reasons,
                      "errors": reasons[:1] if comp.error else [],
                      "baseline": comp.to_dict()}
    write_baseline_section(_Printer(out), comp.to_dict())
    for r in reasons:
        print(f"judgerel gate FAILED: {r}", file=out)
    return 1 if reasons else 0


# ---------------------------------------------------------------------- report
def cmd_report_merge(args: argparse.Namespace) -> int:
    from .merge import merge_files
    from .terminal import totals_line

    out = sys.stdout
    merged = merge_files(args.reports, on_duplicate=args.on_duplicate)
    code = 0
    if args.baseline:
        code = _gate(merged, args.baseline, args, out)
    write_json_atomic(args.output, merged)
    if args.html:
        from .html import render_html

        write_text_atomic(args.html, render_html(merged))
    print(f"merged {len(args.reports)} reports: {merged['totals']['tests']} tests -> {args.output}", file=out)
    if merged["duplicates"]:
        print(f"duplicates kept once ({args.on_duplicate}): {', '.join(merged['duplicates'])}", file=out)
    print(totals_line(merged["totals"]), file=out)
    return code


def cmd_report_compare(args: argparse.Namespace) -> int:
    report = read_json(args.report, "report")
    validate_report(report, f"report {args.report!r}")
    return _gate(report, args.baseline, args, sys.stdout)


def cmd_report_html(args: argparse.Namespace) -> int:
    from .html import render_html

    report = read_json(args.report, "report")
    validate_report(report, f"report {args.report!r}")
    path = write_text_atomic(args.output, render_html(report))
    print(f"HTML report: {path}")
    return 0


def cmd_report_validate(args: argparse.Namespace) -> int:
    for path in args.files:
        data = read_json(path, "file")
        if isinstance(data, dict) and data.get("schema") == BASELINE_SCHEMA_ID:
            validate_baseline(data, f"baseline {path!r}")
            print(f"{path}: valid baseline v{data['version']}")
        else:
            validate_report(data, f"report {path!r}")
            print(f"{path}: valid report v{data['version']}")
    return 0


# ---------------------------------------------------------------------- history
def cmd_history_list(args: argparse.Namespace) -> int:
    from .history import list_runs

    runs = list_runs(args.directory)
    if not runs:
        print(f"no runs in {args.directory}")
        return 0
    print(f"{'run':>5}  {'judge':<9} {'created':<26} {'tests':>5} {'metrics':>7} {'failed':>6}  models")
    for r in runs:
        print(f"{r.number:>5}  {r.fingerprint:<9} {str(r.created):<26} {r.tests:>5} {r.metrics:>7} "
              f"{r.failed_metrics:>6}  {', '.join(r.models) or '-'}")
    return 0


def cmd_history_compare(args: argparse.Namespace) -> int:
    from .history import compare_runs, find_run, list_runs, load_run, metric_table
    from .terminal import write_baseline_section

    runs = list_runs(args.directory)
    if args.all:
        chosen = runs
        reports = [load_run(r.path) for r in chosen]
        table = metric_table(reports)
        # runs as columns #1, #2...; their models in a legend (full names, never cut)
        for r in chosen:
            print(f"#{r.number}: {', '.join(r.models) if r.models else '(no judge)'}")
        print("test / metric".ljust(60) + "".join(f"#{r.number}".rjust(10) for r in chosen))
        for (nodeid, metric), values in table.items():
            print(f"{nodeid} {metric}"[:60].ljust(60) + "".join(fmt_number(v).rjust(10) for v in values))
        return 0
    if args.runs and len(args.runs) != 2:
        raise ReportFormatError("history compare takes two runs (or none: the last two)")
    if args.runs:
        a, b = find_run(runs, args.runs[0]), find_run(runs, args.runs[1])
    else:
        if len(runs) < 2:
            raise ReportFormatError(f"history compare needs two runs; {args.directory} has {len(runs)}")
        a, b = runs[-2], runs[-1]
    old_report, new_report = load_run(a.path), load_run(b.path)
    comp = compare_runs(old_report, new_report, Tolerances(args.max_icc_drop, args.max_nmae_rise))
    models = f" ({', '.join(a.models) or '-'} -> {', '.join(b.models) or '-'})"
    print(f"run {a.name} -> {b.name}{models}")
    d = comp.to_dict()
    d["path"] = a.name
    write_baseline_section(_Printer(sys.stdout), d)
    for e in comp.entries:
        if e.status in ("pass", "improved", "within_noise", "regression"):
            print(f"  {e.nodeid} {e.metric}: {fmt_number(e.baseline)} -> {fmt_number(e.current)} "
                  f"({e.delta:+.4f}) {e.status}" if e.delta is not None else
                  f"  {e.nodeid} {e.metric}: {e.status} ({e.reason})")
    _attribution(runs, a, b, comp)
    return 1 if comp.regressions else 0


def _attribution(runs: list[Any], a: Any, b: Any, comp: Any) -> None:
    """Who moved between runs ``a`` and ``b`` (the judge's anchors and their monitor, the system's
    metrics), and the server-reported models or fingerprints that changed."""
    from .history import attribute_runs, load_run, monitor_anchors, served_changes

    chosen = [r for r in runs if r.number <= b.number]
    reports = [load_run(r.path) for r in chosen]
    old = next(i for i, r in enumerate(chosen) if r.number == a.number) if a.number <= b.number else 0
    new = len(chosen) - 1
    changes = served_changes(reports[old], reports[new])
    for change in changes:
        print(f"judge server changed: {change}")
    for cid, info in monitor_anchors(reports).items():
        mon = info.get("monitor")
        if mon is not None:
            alarms = ", ".join(f"#{chosen[i].number}" for i in info["alarms"]) or "none"
            print(f"anchors {cid[:8]}: sequential monitor over {len(info['runs'])} run(s): alarms {alarms}")
    result = attribute_runs(reports, old, new, comp)
    server = ""
    if changes and result["verdict"] in ("system changed", "both", "none", "undetermined"):
        server = (f"; the judge's server changed too ({len(changes)} change(s) above): the anchors, not the "
                  "suite's scores, say whether that moved the judge")
    print(f"attribution: {result['verdict']} ({result['reason']}; judge anchors {result['judge']}, "
          f"system {'changed' if result['system_changed'] else 'unchanged'}{server})")


def cmd_history_html(args: argparse.Namespace) -> int:
    from .history import list_runs, load_run
    from .trend_html import render_trend_html

    runs = list_runs(args.directory)
    if not runs:
        raise ReportFormatError(f"the history directory {args.directory} holds no runs")
    page = render_trend_html([load_run(r.path) for r in runs], [r.number for r in runs])
    path = write_text_atomic(args.output, page)
    print(f"trend page: {path} ({len(runs)} runs)")
    return 0


# ---------------------------------------------------------------------- wiring
def _safe(func: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return func(args)
        except (ReportFormatError, ValueError, OSError) as exc:
            print(f"judgerel: error: {exc}", file=sys.stderr)
            return 2

    run.__name__ = func.__name__
    run.__doc__ = func.__doc__
    return run


def register(subparsers: Any) -> None:
    """Add the ``report`` and ``history`` command groups to an argparse ``subparsers`` object."""
    rep = subparsers.add_parser("report", help="merge, compare, render and validate JSON reports")
    rsub = rep.add_subparsers(dest="report_command", required=True)

    m = rsub.add_parser("merge", help="merge shard reports into one (optionally gate on a baseline)")
    m.add_argument("reports", nargs="+", help="JSON reports written with --judgerel-json")
    m.add_argument("-o", "--output", required=True, help="merged report path")
    m.add_argument("--baseline", help="compare the merged report with this baseline (exit 1 on regression)")
    m.add_argument("--html", help="also write an HTML report of the merged run")
    m.add_argument("--on-duplicate", choices=("error", "first", "last"), default="error",
                   help="a test present in several shards: fail (default) or keep the first/last copy")
    _tolerance_args(m)
    m.set_defaults(func=_safe(cmd_report_merge))

    c = rsub.add_parser("compare", help="compare a report with a baseline (the CI gate outside pytest)")
    c.add_argument("report")
    c.add_argument("--baseline", required=True)
    _tolerance_args(c)
    c.set_defaults(func=_safe(cmd_report_compare))

    h = rsub.add_parser("html", help="render a JSON report as a self-contained HTML file")
    h.add_argument("report")
    h.add_argument("-o", "--output", required=True)
    h.set_defaults(func=_safe(cmd_report_html))

    v = rsub.add_parser("validate", help="check reports or baselines against their JSON schema")
    v.add_argument("files", nargs="+")
    v.set_defaults(func=_safe(cmd_report_validate))
    from .md_cli import register_markdown_commands

    register_markdown_commands(rsub)  # report markdown, report comment

    his = subparsers.add_parser("history", help="numbered run files written with --judgerel-history")
    hsub = his.add_subparsers(dest="history_command", required=True)
    hl = hsub.add_parser("list", help="list the runs of a history directory")
    hl.add_argument("directory")
    hl.set_defaults(func=_safe(cmd_history_list))
    hc = hsub.add_parser("compare", help="metric changes between two runs (default: the last two)")
    hc.add_argument("directory")
    hc.add_argument("runs", nargs="*", metavar="RUN", help="run number, file name, 'last' or -N")
    hc.add_argument("--all", action="store_true", help="one column per run: every metric across all runs")
    _tolerance_args(hc)
    hc.set_defaults(func=_safe(cmd_history_compare))
    hh = hsub.add_parser("html", help="trend plots of every metric over the runs (judge drift marked)")
    hh.add_argument("directory")
    hh.add_argument("-o", "--output", required=True, help="HTML file to write")
    hh.set_defaults(func=_safe(cmd_history_html))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the report/history commands standalone (``python -m pytest_judgerel.report.cli``)."""
    parser = argparse.ArgumentParser(prog="judgerel")
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
