"""Terminal summary: one line per metric, then session totals."""

from __future__ import annotations

from typing import Any


def _fmt(v: Any, digits: int = 4) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def write_summary(tr: Any, report: dict[str, Any], reasons: list[str], settings: Any) -> None:
    rows = []
    for t in report["tests"]:
        for rec in t["records"]:
            if rec.get("kind") == "judge_run":
                continue
            ci = rec.get("ci")
            ci_txt = f"[{_fmt(ci[0], 3)}, {_fmt(ci[1], 3)}]" if ci and None not in ci else "-"
            op = ">=" if rec.get("direction") == "min" else "<="
            verdict = "PASS" if rec.get("passed") else ("FAIL*" if rec.get("report_only") else "FAIL")
            name = t["nodeid"] + (f" [{rec['label']}]" if rec.get("label") else "")
            rows.append((name, rec.get("statistic", rec.get("kind", "?")), _fmt(rec.get("value")), ci_txt,
                         f"{op} {_fmt(rec.get('threshold'))}", verdict))
    totals = report["totals"]
    if not rows and not totals.get("calls") and not reasons:
        return
    tr.write_sep("=", "judgerel summary")
    if rows:
        headers = ("test", "statistic", "value", "CI", "threshold", "verdict")
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
        widths[0] = min(widths[0], 70)
        line = "  ".join(h.ljust(w) for h, w in zip(headers, widths))
        tr.write_line(line)
        for r in rows:
            cells = [r[0] if len(r[0]) <= widths[0] else "..." + r[0][-(widths[0] - 3):]] + list(r[1:])
            tr.write_line("  ".join(c.ljust(w) for c, w in zip(cells, widths)))
    hit = totals.get("hit_rate")
    tr.write_line(
        f"calls: {totals.get('calls', 0)} (cache hits {totals.get('hits', 0)}, misses {totals.get('misses', 0)}"
        f"{', hit rate ' + format(hit, '.0%') if hit is not None else ''}), retries {totals.get('retries', 0)}, "
        f"cost ${totals.get('cost', 0):.4f}, parse failures {totals.get('parse_failures', 0)}"
    )
    if report.get("report_only"):
        tr.write_line("REPORT-ONLY MODE: reliability assertions were recorded but did not fail any test "
                      "(FAIL* marks what would have failed).", yellow=True, bold=True)
    if report.get("crashed"):
        tr.write_line(f"crashed tests (worker died): {', '.join(report['crashed'])}", red=True)
    for reason in reasons:
        tr.write_line(f"judgerel gate: {reason}", red=True, bold=True)
