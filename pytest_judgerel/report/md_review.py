"""The Markdown summary's review blocks: the verdict line, what needs a reviewer's eye first, the
bill, and one collapsible block per test (:mod:`.md_sections` orders them).  Stdlib only."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .fmt import fmt_number
from .judge_drift import anchor_lines, drifted_configurations
from .md_blocks import Block, cell, code
from .metrics import is_metric_record
from .verdict import failed_checks, record_verdict
from .terminal import sequential_line, sequential_rows, sequential_totals

__all__ = ["headline", "attention_block", "bill_block", "detail_blocks"]

_LISTED = 10
_QUOTED = 3
_STATUS = {"passed": "✅ passed", "failed": "❌ failed",
           "report_only": "⚠️ report-only (regressions not failing)",
           "interrupted": "⏹️ interrupted (partial results)"}


def anchor_texts(report: Mapping[str, Any]) -> list[str]:
    """The anchors' lines (:func:`~.judge_drift.anchor_lines`) as plain text."""
    return [text for text, _ in anchor_lines(report)]


def headline(report: Mapping[str, Any], rows: Sequence[Any]) -> str:
    """``## judgerel: <status>`` and one line of counts."""
    gate = report.get("gate") or {}
    status = str(gate.get("status") or "passed")
    totals = report.get("totals") or {}
    failing = sum(1 for r in rows if "FAIL" in r.cells[4])
    parts = [f"**{len(rows)}** gate check(s) in **{totals.get('tests', 0)}** test(s)", f"{failing} failing"]
    comp = gate.get("baseline") or {}
    counts = comp.get("counts") or {}
    if comp.get("found"):
        parts.append(f"baseline: {counts.get('regression', 0)} regressed, {counts.get('within_noise', 0)} within "
                     f"noise, {counts.get('improved', 0)} improved, {counts.get('new', 0)} new")
    anchors = report.get("anchors") or {}
    if anchors.get("status"):
        parts.append(f"judge anchors: {anchors['status']}")
    model = (report.get("settings") or {}).get("model")
    if model:
        parts.append(f"judge {code(model)}")
    return f"## judgerel: {_STATUS.get(status, status)}\n\n" + " · ".join(parts)


def _items(title: str, lines: Sequence[str]) -> list[str]:
    """A bolded list title and its first lines (the rest counted)."""
    if not lines:
        return []
    out = [f"- **{title}** ({len(lines)})"] + [f"  - {x}" for x in lines[:_LISTED]]
    if len(lines) > _LISTED:
        out.append(f"  - … and {len(lines) - _LISTED} more (see the gate table and the JSON report)")
    return out


def _parse_failures(report: Mapping[str, Any]) -> list[str]:
    """One line per test with unparsed judge replies, its first replies quoted."""
    out = []
    for t in report.get("tests") or []:
        failures = [f for rec in t.get("records") or [] if rec.get("kind") == "judge_run"
                    for f in rec.get("failures") or [] if isinstance(f, Mapping)]
        n = sum(int(rec.get("parse_failures") or 0) for rec in t.get("records") or []
                if not is_metric_record(rec))
        if not n and not failures:
            continue
        replies = list(dict.fromkeys((str(f.get("reply") or "")[:120], str(f.get("cause") or "?"))
                                     for f in failures))
        quoted = "; ".join(f"{code(reply)} ({cell(cause)})" for reply, cause in replies[:_QUOTED])
        out.append(f"{code(t.get('nodeid'))}: {max(n, len(failures))} unparsed" + (f": {quoted}" if quoted else ""))
    return out


def _injection(report: Mapping[str, Any]) -> list[str]:
    out = []
    for t in report.get("tests") or []:
        for rec in t.get("records") or []:
            if rec.get("kind") != "injection" or rec.get("passed"):
                continue
            bad = [f"{cell(name)} {fmt_number(f.get('rate'), 3)} ({f.get('flips')}/{f.get('n')})"
                   for name, f in (rec.get("families") or {}).items()
                   if isinstance(f, Mapping) and f.get("passed") is False]
            out.append(f"{code(t.get('nodeid'))}: flip rate above {rec.get('threshold')}: "
                       + (", ".join(bad) or f"worst family {cell(rec.get('worst_family'))}"))
    return out


def _failed_lines(test: Mapping[str, Any], report_only: bool) -> list[str]:
    """The failed (or report-only failed) gates of a test; a gate that computed nothing says why."""
    out = []
    for rec in test.get("records") or []:
        verdict = record_verdict(rec, test.get("outcome"), report_only) if is_metric_record(rec) else "PASS"
        if verdict not in ("FAIL", "FAIL*"):
            continue
        name = code(test.get("nodeid"))
        if rec.get("value") is None:
            why = rec.get("error") or (f"{rec['parse_failures']} judge replies did not parse (over "
                                       "--judgerel-max-parse-failures)" if rec.get("parse_failures") else "undefined")
            out.append(f"{name} {cell(rec.get('statistic'))}: not computed: {cell(why)}")
        else:
            out += [f"{name}: {cell(line)}" for line in failed_checks({"records": [rec]})]
    return out


def _drift_text(cid: str, entry: Mapping[str, Any]) -> str:
    """One drifted judge configuration: its model, prompt and scale, the shift and its interval."""
    judge = entry.get("judge") or {}
    comp = entry.get("comparison") or {}
    text = (f"{code(judge.get('model'))} {cell(judge.get('template') or '')} {cell(judge.get('scale') or '')}"
            f" ({cid[:8]})")
    shift, ci = comp.get("shift"), comp.get("shift_ci")
    if isinstance(shift, (int, float)):
        text += f": scores shifted {shift:+.3g}"
        if isinstance(ci, (list, tuple)) and len(ci) == 2 and None not in ci:
            text += f" [{ci[0]:+.3g}, {ci[1]:+.3g}]"
    agreement = (comp.get("agreement") or {}).get("value")
    if isinstance(agreement, (int, float)):
        text += f", agreement with its recorded answers ICC {agreement:.3f}"
    return text + f" on {entry.get('anchors', '?')} anchors"


def attention_block(report: Mapping[str, Any]) -> Block | None:
    """What needs a reviewer's eye first, or None when nothing does."""
    gate = report.get("gate") or {}
    comp = gate.get("baseline") or {}
    regressions = [f"{code(e['nodeid'])} {cell(e['metric'])}: {cell(e.get('reason', ''))}"
                   + (" — 🧭 " + cell(e["judge_changed"]) if e.get("judge_changed") else "")
                   for e in comp.get("entries") or [] if e.get("status") == "regression"]
    drift_lines = [_drift_text(cid, e) for cid, e in drifted_configurations(report).items()]
    drift_lines += [cell(x) for x in anchor_texts(report) if x.startswith("judge server changed")]
    failed, unstable = [], []
    for t in report.get("tests") or []:
        failed += _failed_lines(t, bool(report.get("report_only")))
        for rec in t.get("records") or []:
            if not is_metric_record(rec):
                continue
            name = code(str(t.get("nodeid")) + (f" [{rec['label']}]" if rec.get("label") else ""))
            if rec.get("unstable") or (rec.get("stability") or {}).get("unstable"):
                unstable.append(f"{name} {cell(rec.get('statistic'))}: p_pass {fmt_number(rec.get('p_pass'), 3)}"
                                " (a rerun may flip it)")
    other = [cell(r) for r in gate.get("pytest") or [] if ": " not in r] + [cell(e) for e in gate.get("errors") or []]
    lines = (_items("Regressions against the baseline", regressions) + _items("Drifted judges (anchors)", drift_lines)
             + _items("Failed gates", failed) + _items("Unstable verdicts", unstable)
             + _items("Parse failures", _parse_failures(report))
             + _items("Injection families that failed", _injection(report)) + _items("Session", other))
    if not lines:
        return None
    return Block("### Needs a reviewer's eye first\n", lines)


def bill_block(report: Mapping[str, Any]) -> Block:
    """Calls, tokens, cost, and what the cache and sequential stops saved."""
    t = report.get("totals") or {}
    calls, hits, misses = int(t.get("calls") or 0), int(t.get("hits") or 0), int(t.get("misses") or 0)
    cost = float(t.get("cost") or 0.0)
    per_call = cost / misses if misses and cost else None
    saved_cost = f" (≈${hits * per_call:.4f} at this run's cost per call)" if per_call else ""
    seq = sequential_rows(report)
    seq_text = sequential_totals(seq) if seq else "no sequential gate"
    rows = [f"| judge calls | {calls} ({misses} sent, {hits} from the cache) |",
            f"| tokens | {t.get('prompt_tokens', 0)} prompt, {t.get('completion_tokens', 0)} completion |",
            f"| cost | ${cost:.4f} |",
            f"| saved by the cache | {hits} call(s){saved_cost} |",
            f"| saved by sequential stops | {cell(seq_text)} |",
            f"| retries / errors / parse failures | {t.get('retries', 0)} / {t.get('errors', 0)} / "
            f"{t.get('parse_failures', 0)} |"]
    budget = (report.get("session") or {}).get("budget") or {}
    if budget.get("exceeded"):
        rows.append(f"| budget | stopped the run: {cell(budget['exceeded'])} |")
    return Block("### The bill\n\n| what | amount |\n|---|---|", rows)


def _detail(t: Mapping[str, Any], report: Mapping[str, Any]) -> Block | None:
    recs = [r for r in t.get("records") or [] if is_metric_record(r)]
    if not recs:
        return None
    lines = []
    for rec in recs:
        label = f" [{rec['label']}]" if rec.get("label") else ""
        lines.append(f"- **{cell(rec.get('statistic'))}{cell(label)}** = {fmt_number(rec.get('value'), 4)}"
                     f", n {rec.get('n')}, k {rec.get('k')}"
                     + (f", error: {cell(rec['error'])}" if rec.get("error") else "")
                     + (f" — 🧭 {cell(rec['judge_changed'])}" if rec.get("judge_changed") else ""))
        for g, info in (rec.get("groups") or {}).items():
            if isinstance(info, Mapping):
                lines.append(f"  - group {cell(g)}: {fmt_number(info.get('value'), 3)} "
                             f"({'ok' if info.get('passed') else 'fail'})")
        for w in (rec.get("worst_items") or [])[:5]:
            if isinstance(w, Mapping):
                lines.append(f"  - worst item {code(w.get('item'))}: {cell(w.get('detail'))}")
        if isinstance(rec.get("sequential"), Mapping):
            lines.append(f"  - sequential: {cell(sequential_line(rec['sequential']))}")
    bad = any(r.get("passed") is False for r in recs)
    return Block(f"<details><summary>{'❌' if bad else '✅'} <code>{cell(t.get('nodeid'))}</code> "
                 f"({t.get('outcome')})</summary>\n", lines, "\n</details>")


def detail_blocks(report: Mapping[str, Any]) -> list[Block]:
    """``### Details per test`` and one collapsible block per test with metrics, failing tests first."""
    tests = sorted(report.get("tests") or [], key=lambda t: t.get("outcome") == "passed")
    blocks = [b for b in (_detail(t, report) for t in tests) if b is not None]
    return [Block("### Details per test"), *blocks] if blocks else []
