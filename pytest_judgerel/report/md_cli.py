"""``judgerel report markdown`` and ``judgerel report comment``: the Markdown summary of a JSON
report, written to a file or posted as this workflow's one pull-request comment (:mod:`.comment`).

    judgerel report markdown all.json [--baseline B] -o summary.md [--limit comment|step-summary|none]
    judgerel report comment all.json [--baseline B] [--pr N] [--key NAME]
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from .baseline import Tolerances, compare_with_file
from .._io import write_text_atomic
from .io import read_json
from .markdown import COMMENT_LIMIT, STEP_SUMMARY_LIMIT, render_markdown
from .md_blocks import utf8_size
from .schema import ReportFormatError, validate_report

__all__ = ["recompare", "register_markdown_commands"]


def recompare(report: dict[str, Any], baseline: str, tolerances: Tolerances | None = None) -> None:
    """Compare ``report`` with ``baseline`` and put the comparison in its gate (a regression makes
    the gate's status ``failed``, as ``judgerel report compare`` would exit 1)."""
    comp = compare_with_file(report, baseline, tolerances=tolerances)
    gate = report.setdefault("gate", {"status": "passed", "reasons": []})
    gate["baseline"] = comp.to_dict()
    reasons = comp.reasons()
    gate["reasons"] = list(dict.fromkeys(list(gate.get("reasons") or []) + reasons))
    if reasons and gate.get("status") in (None, "passed"):
        gate["status"] = "report_only" if report.get("report_only") else "failed"
    report.setdefault("settings", {})["baseline"] = baseline
    from .judge_drift import mark_judge_changes

    mark_judge_changes(report)


def _load(path: str, baseline: str | None) -> dict[str, Any]:
    report = read_json(path, "report")
    validate_report(report, f"report {path!r}")
    if baseline:
        recompare(report, baseline)
    return report


def cmd_report_markdown(args: argparse.Namespace) -> int:
    report = _load(args.report, args.baseline)
    limit, size = {"comment": (COMMENT_LIMIT, len), "step-summary": (STEP_SUMMARY_LIMIT, utf8_size),
                   "none": (sys.maxsize, len)}[args.limit]
    text = render_markdown(report, limit=limit, size=size, report_path=args.report)
    path = write_text_atomic(args.output, text)
    print(f"Markdown summary: {path}")
    return 0


def cmd_report_comment(args: argparse.Namespace) -> int:
    from .comment import GitHub, comment_marker, post_or_update, pull_request_number

    env = os.environ
    report = _load(args.report, args.baseline)
    number = args.pr or pull_request_number(env)
    repo, token = env.get("GITHUB_REPOSITORY"), env.get("GITHUB_TOKEN")
    if number is None or not repo or not token:
        print("judgerel: no pull request, repository or token in the environment: no comment posted")
        return 0
    marker = comment_marker(args.key or env.get("GITHUB_WORKFLOW") or "judgerel")
    body = marker + "\n" + render_markdown(report, limit=COMMENT_LIMIT - len(marker) - 1, report_path=args.report)
    gh = GitHub(env.get("GITHUB_API_URL") or "https://api.github.com", repo, token)
    try:
        what, cid = post_or_update(gh, int(number), body, marker)
    except (OSError, ValueError) as exc:  # urllib's URLError and HTTPError are OSErrors
        print(f"::warning::judgerel could not comment on pull request #{number}: {exc}", file=sys.stderr)
        return 0
    print(f"judgerel: {what} comment {cid} on pull request #{number}")
    return 0


def _safe(func: Any) -> Any:
    def run(args: argparse.Namespace) -> int:
        try:
            return int(func(args))
        except (ReportFormatError, ValueError, OSError) as exc:
            print(f"judgerel: error: {exc}", file=sys.stderr)
            return 2

    return run


def register_markdown_commands(rsub: Any) -> None:
    """Add ``report markdown`` and ``report comment`` to the ``report`` command's subparsers."""
    m = rsub.add_parser("markdown", help="render a JSON report as a GitHub-flavoured Markdown summary")
    m.add_argument("report", help="a JSON report written with --judgerel-json")
    m.add_argument("--baseline", help="compare with this baseline first (default: the report's own comparison)")
    m.add_argument("-o", "--output", required=True, help="Markdown file to write")
    m.add_argument("--limit", choices=("comment", "step-summary", "none"), default="comment",
                   help="fit GitHub's comment (65,536 characters, default) or step-summary (1 MiB) limit")
    m.set_defaults(func=_safe(cmd_report_markdown))
    c = rsub.add_parser("comment", help="post or update this workflow's pull-request comment (GitHub Actions)")
    c.add_argument("report", help="a JSON report written with --judgerel-json")
    c.add_argument("--baseline", help="compare with this baseline first (default: the report's own comparison)")
    c.add_argument("--pr", type=int, help="pull request number (default: from GITHUB_EVENT_PATH)")
    c.add_argument("--key", help="the comment's identity (default: GITHUB_WORKFLOW): one comment per key")
    c.set_defaults(func=_safe(cmd_report_comment))
