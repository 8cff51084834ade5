"""The session report as GitHub-flavoured Markdown: the view of a run where a change is reviewed.

Sections, in order: the verdict line; what needs a reviewer's eye first (regressions, drifted
judges, failed and unstable gates, parse failures quoted, injection families that failed); one
table of the gates (attention rows first, the long tail collapsed in ``<details>``); the bill;
the exact ``judgerel baseline accept`` command; one collapsible block per test.

:func:`render_markdown` fits the text into a size limit (:mod:`.md_blocks`).
:func:`write_markdown_outputs` writes ``--judgerel-markdown`` and appends to the step summary
file (``GITHUB_STEP_SUMMARY``) within what is left of its 1 MiB.  Plain data in, text out.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Mapping

from .md_blocks import COMMENT_LIMIT, MARKER, STEP_SUMMARY_LIMIT, utf8_size

__all__ = ["MARKER", "COMMENT_LIMIT", "STEP_SUMMARY_LIMIT", "render_markdown", "write_markdown_outputs",
           "append_step_summary"]


def render_markdown(report: Mapping[str, Any], *, limit: int = COMMENT_LIMIT,
                    size: Callable[[str], int] = len, report_path: str | None = None,
                    baseline_path: str | None = None, head_rows: int | None = None) -> str:
    """The Markdown summary of ``report`` within ``limit`` as measured by ``size``.

    ``report_path`` and ``baseline_path`` name the files in the accept command (default: the
    report's own JSON output and baseline setting); ``head_rows`` gate rows are shown before the
    tail collapses (default :data:`.md_sections.HEAD_ROWS`)."""
    from .md_blocks import fit_blocks
    from .md_sections import summary_blocks

    what = "GitHub's comment limit" if size is len else "GitHub's step-summary limit"
    return fit_blocks(summary_blocks(report, report_path=report_path, baseline_path=baseline_path,
                                     head_rows=head_rows), limit, size, what)


def append_step_summary(path: str, report: Mapping[str, Any], report_path: str | None = None) -> str:
    """Append the summary to a step-summary file within the bytes its 1 MiB has left; return the
    absolute path."""
    used = os.path.getsize(path) if os.path.exists(path) else 0
    text = render_markdown(report, limit=max(STEP_SUMMARY_LIMIT - used - 2, 0), size=utf8_size,
                           report_path=report_path)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(("\n" if used else "") + text)
    return os.path.abspath(path)


def write_markdown_outputs(settings: Any, report: dict[str, Any],
                           failed_write: Callable[[str, str, Exception], None]) -> None:
    """Write ``settings.markdown`` (a failure fails the session, as any requested output) and
    append to ``settings.step_summary`` (a failure is a warning in ``report["gate"]["warnings"]``:
    the summary is a view, the gate is pytest's exit status)."""
    from .._io import write_text_atomic

    outputs = report.setdefault("outputs", {})
    if getattr(settings, "markdown", None):
        try:
            text = render_markdown(report, report_path=getattr(settings, "json", None))
            outputs["markdown"] = write_text_atomic(settings.markdown, text)
        except (OSError, ValueError) as exc:
            failed_write("Markdown summary", settings.markdown, exc)
    step = getattr(settings, "step_summary", None)
    if step and step != "off":
        try:
            outputs["step_summary"] = append_step_summary(step, report, getattr(settings, "json", None))
        except (OSError, ValueError) as exc:
            report["gate"].setdefault("warnings", []).append(
                f"could not append the Markdown summary to the step summary {step}: {exc}")
