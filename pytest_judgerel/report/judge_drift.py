"""The report's ``anchors`` block read back: which judge configurations drifted, the verdicts and
baseline entries they touch ("judge changed"), and the one-line summaries of the terminal and HTML.

A configuration is keyed by its id (:func:`pytest_judgerel.judging.identity.configuration_id`), so a
metric record's ``judge`` provenance maps to the configuration that produced it.  The block itself
is made by :mod:`pytest_judgerel.anchors.check`.  Stdlib only.
"""

from __future__ import annotations

from html import escape
from typing import Any, Mapping

from ..judging.identity import configuration_id
from .fmt import fmt_number
from .metrics import is_metric_record, metric_points

__all__ = ["drifted_configurations", "mark_judge_changes", "anchor_lines", "write_anchor_lines", "anchors_html",
           "JUDGE_CHANGED"]

JUDGE_CHANGED = "judge changed"


def drifted_configurations(report: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """``{configuration id: its anchors entry}`` of the configurations whose anchors drifted."""
    configs = ((report.get("anchors") or {}).get("configurations") or {})
    return {cid: e for cid, e in configs.items() if isinstance(e, Mapping) and e.get("status") == "drifted"}


def _shift_text(entry: Mapping[str, Any]) -> str:
    comp = entry.get("comparison") or {}
    shift, ci = comp.get("shift"), comp.get("shift_ci")
    if not isinstance(shift, (int, float)):
        return ""
    text = f"shift {shift:+.3g}"
    if isinstance(ci, (list, tuple)) and len(ci) == 2 and None not in ci:
        text += f" [{ci[0]:+.3g}, {ci[1]:+.3g}]"
    return text + f" on {comp.get('scale') or entry.get('judge', {}).get('scale')}"


def mark_judge_changes(report: dict[str, Any]) -> int:
    """Mark every metric record of a drifted configuration, and every baseline-comparison entry of
    those metrics, with ``judge_changed`` (the reason in words), so a regression is attributed to
    the judge and not to the system under test.  Returns how many records were marked."""
    drifted = drifted_configurations(report)
    if not drifted:
        return 0
    marked_points: set[tuple[str, str]] = set()
    n = 0
    for t in report.get("tests") or []:
        records = t.get("records") or []
        for rec in records:
            cid = configuration_id(rec.get("judge")) if is_metric_record(rec) else None
            if cid in drifted:
                rec["judge_changed"] = f"{JUDGE_CHANGED}: the anchors of {cid} drifted ({_shift_text(drifted[cid])})"
                n += 1
        for p in metric_points(records):
            if configuration_id(p.judge) in drifted:
                marked_points.add((t.get("nodeid", ""), p.name))
    comparison = (report.get("gate") or {}).get("baseline") or {}
    for e in comparison.get("entries") or []:
        if (e.get("nodeid"), e.get("metric")) in marked_points:
            e["judge_changed"] = JUDGE_CHANGED + ": the judge's anchors drifted"
    anchors = report.get("anchors")
    if isinstance(anchors, dict):
        anchors["marked_records"] = n
    return n


def _model(entry: Mapping[str, Any]) -> str:
    judge = entry.get("judge") or {}
    return f"{judge.get('model')} {judge.get('template', '')} {judge.get('scale', '')}".strip()


def _entry_text(cid: str, e: Mapping[str, Any]) -> str:
    status = str(e.get("status"))
    words = {"recorded": f"recorded {e.get('anchors')} anchors",
             "steady": "steady", "drifted": "DRIFTED", "inconclusive": "inconclusive",
             "error": f"error: {e.get('error')}", "off": "no anchors", "unchecked": "no anchors"}.get(status, status)
    parts = [f"{_model(e)} ({cid[:8]}): {words}"]
    shift = _shift_text(e)
    if shift and status in ("steady", "drifted", "inconclusive"):
        parts.append(shift)
    agreement = ((e.get("comparison") or {}).get("agreement") or {})
    if agreement.get("value") is not None:
        parts.append(f"agreement with the reference ICC {fmt_number(agreement['value'], 3)}")
    human = e.get("human_agreement") or {}
    if human.get("value") is not None:
        parts.append(f"with humans ICC {fmt_number(human['value'], 3)} (n {human.get('n')})")
    fps = sorted(((e.get("fresh_server") or e.get("served") or {}).get("system_fingerprints") or {}))
    if fps:
        parts.append(f"fingerprint {', '.join(fps)}")
    failed = int(e.get("failed_calls") or 0)
    if failed:
        first = (e.get("errors") or ["?"])[0]
        parts.append(f"{failed} anchor call(s) failed ({first})")
    if status == "inconclusive" and e.get("reasons"):
        parts.append(str(e["reasons"][0]))
    return ", ".join(parts)


def anchor_lines(report: Mapping[str, Any]) -> list[tuple[str, dict[str, bool]]]:
    """The terminal's lines (text, markup): the anchors' status per configuration in one line, and
    each change of the server-reported model or ``system_fingerprint`` named."""
    block = report.get("anchors")
    if not isinstance(block, Mapping):
        return []
    configs = block.get("configurations") or {}
    changes = [(cid, c) for cid, e in configs.items() for c in (e.get("server_changes") or [])]
    if block.get("file") is None and not changes:
        return []
    out: list[tuple[str, dict[str, bool]]] = []
    status = str(block.get("status"))
    markup = {"red": True, "bold": True} if status in ("drifted", "error") else (
        {"yellow": True} if status == "inconclusive" else {})
    if block.get("file") is not None:
        body = "; ".join(_entry_text(cid, e) for cid, e in configs.items()) or "no judge configuration"
        failed = int(block.get("failed_calls") or 0)
        calls = f"{block.get('calls', 0)} calls" + (f", {failed} failed" if failed else "")
        if failed and status not in ("drifted", "error"):
            markup = {"yellow": True}
        out.append((f"judge anchors {status} ({calls}, {block.get('file')}): {body}"
                    + (f"; {block['error']}" if block.get("error") else "")
                    + (f"; {block['marked_records']} verdict(s) marked '{JUDGE_CHANGED}'"
                       if block.get("marked_records") else ""), markup))
    for cid, change in changes:
        out.append((f"judge server changed for {cid[:8]}: {change}", {"yellow": True}))
    return out


def write_anchor_lines(tr: Any, report: Mapping[str, Any]) -> None:
    """Write :func:`anchor_lines` through a terminal reporter (``write_line(text, **markup)``)."""
    for text, markup in anchor_lines(report):
        tr.write_line(text, **markup)


def anchors_html(report: Mapping[str, Any]) -> str:
    """The HTML report's anchors banner (empty without an anchor file or a server change)."""
    lines = anchor_lines(report)
    if not lines:
        return ""
    status = str((report.get("anchors") or {}).get("status"))
    cls = "fail" if status in ("drifted", "error") else ("soft" if status == "inconclusive" or len(lines) > 1
                                                         else "ok")
    return (f"<div class='banner {cls}'>" + "<br>".join(escape(text) for text, _ in lines) + "</div>")
