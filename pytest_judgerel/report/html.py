"""One self-contained HTML report with inline SVG plots drawn by this module.

No network, no JavaScript, no plotting library: every chart is SVG text built
here from the report dict (stdlib only).  Plots: metric bars with confidence
intervals and thresholds, inter-scale consistency heatmaps (records with
``matrix``/``scales``), human-vs-judge scatter with the identity line (records
with ``pairs`` = [[human, judge], ...]), per-group bars (``groups``), and tables
of the worst-aligned items (``worst_items``) and of the baseline comparison.
"""

from __future__ import annotations

import math
from html import escape
from typing import Any, Iterable, Mapping, Sequence

from .baseline import status_word
from .judge_drift import anchors_html
from .metrics import is_metric_record, jury_lines, panel_warnings
from .terminal import sequential_line, sequential_rows, sequential_totals, totals_line
from .fmt import fmt_number
from .verdict import checks, record_verdict
from ..stats.interval import format_interval

PASS = "#2e7d32"
FAIL = "#c62828"
SOFT_FAIL = "#ef8f00"
THRESHOLD = "#1565c0"
INK = "#263238"
GRID = "#cfd8dc"
MUTED = "#90a4ae"

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#263238;background:#fafafa}
h1{font-size:22px;margin:0 0 4px} h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #cfd8dc}
h3{font-size:15px;margin:18px 0 6px;font-family:ui-monospace,monospace;word-break:break-all}
.meta{color:#607d8b;font-size:13px} .card{background:#fff;border:1px solid #e0e0e0;border-radius:6px;
padding:12px 16px;margin:10px 0} table{border-collapse:collapse;font-size:13px;margin:6px 0}
td,th{border:1px solid #e0e0e0;padding:3px 8px;text-align:left} th{background:#eceff1}
.pass{color:#2e7d32;font-weight:600} .fail{color:#c62828;font-weight:600} .soft{color:#ef8f00;font-weight:600}
.banner{padding:10px 14px;border-radius:6px;margin:10px 0;font-weight:600}
.banner.fail{background:#ffebee;border:1px solid #c62828} .banner.ok{background:#e8f5e9;border:1px solid #2e7d32}
.banner.soft{background:#fff3e0;border:1px solid #ef8f00} .plots{display:flex;flex-wrap:wrap;gap:16px}
svg{background:#fff;font-family:system-ui,sans-serif} code{font-size:12px}
"""


# ---------------------------------------------------------------------- helpers
from .metrics import _num  # noqa: E402  (one definition of 'a finite float or None')


def _f(v: Any, digits: int = 3) -> str:
    return fmt_number(_num(v), digits)


def _nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick positions covering [lo, hi] (steps of 1, 2 or 5 times a power of ten)."""
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / max(count, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    ticks = []
    t = start
    while t <= hi + step * 1e-9:
        if t >= lo - step * 1e-9:
            ticks.append(round(t, 10))
        t += step
    return ticks


def _svg(width: float, height: float, body: Iterable[str], label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="{escape(label)}">'
            f"<title>{escape(label)}</title>" + "".join(body) + "</svg>")


def _text(x: float, y: float, s: str, size: int = 11, anchor: str = "start", color: str = INK,
          weight: str = "normal", rotate: float | None = None) -> str:
    rot = f' transform="rotate({rotate} {x:.1f} {y:.1f})"' if rotate is not None else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" fill="{color}" '
            f'font-weight="{weight}"{rot}>{escape(s)}</text>')


def _short(s: str, n: int) -> str:
    return s if len(s) <= n else "\u2026" + s[-(n - 1):]


def _verdict_color(passed: Any, soft: bool) -> str:
    if passed:
        return PASS
    return SOFT_FAIL if soft else FAIL


# ---------------------------------------------------------------------- charts
def svg_interval_bars(rows: Sequence[Mapping[str, Any]], title: str, *, label_width: int = 300,
                      plot_width: int = 440) -> str:
    """Horizontal bars with CI whiskers and threshold ticks.

    Each row: ``label``, ``value``, optional ``ci`` [lo, hi], ``threshold``, ``color``.
    """
    row_h, top, bottom = 24, 30, 34
    numbers = [_num(v) for r in rows for v in [r.get("value"), r.get("threshold"), *(r.get("ci") or [])]]
    values = [v for v in numbers if v is not None]
    lo, hi = min([0.0] + values), max([1.0] + values)
    pad = (hi - lo) * 0.02
    lo, hi = lo - (pad if lo < 0 else 0), hi + pad
    width, height = label_width + plot_width + 20, top + row_h * max(len(rows), 1) + bottom

    def x(v: float) -> float:
        return label_width + (v - lo) / (hi - lo) * plot_width

    body = [_text(8, 18, title, 13, weight="600")]
    for t in _nice_ticks(lo, hi):
        body.append(f'<line x1="{x(t):.1f}" y1="{top - 4}" x2="{x(t):.1f}" y2="{height - bottom + 4}" '
                    f'stroke="{GRID}" stroke-width="1"/>')
        body.append(_text(x(t), height - bottom + 18, f"{t:g}", 10, "middle", MUTED))
    zero = x(0.0)
    for i, r in enumerate(rows):
        y = top + i * row_h
        v = _num(r.get("value"))
        color = r.get("color", INK)
        body.append(_text(label_width - 8, y + row_h * 0.65, _short(str(r.get("label", "")), 46), 11, "end"))
        if v is None:
            body.append(_text(zero + 4, y + row_h * 0.65, "undefined", 11, color=FAIL))
            continue
        x0, x1 = sorted((zero, x(v)))
        body.append(f'<rect x="{x0:.1f}" y="{y + 5}" width="{max(x1 - x0, 1):.1f}" height="{row_h - 10}" '
                    f'fill="{color}" fill-opacity="0.75" rx="2"/>')
        ci = r.get("ci")
        if ci and _num(ci[0]) is not None and _num(ci[1]) is not None:
            a, b, ym = x(_num(ci[0])), x(_num(ci[1])), y + row_h / 2  # type: ignore[arg-type]
            body.append(f'<line x1="{a:.1f}" y1="{ym:.1f}" x2="{b:.1f}" y2="{ym:.1f}" stroke="{INK}" '
                        f'stroke-width="1.6"/>')
            for e in (a, b):
                body.append(f'<line x1="{e:.1f}" y1="{ym - 5:.1f}" x2="{e:.1f}" y2="{ym + 5:.1f}" '
                            f'stroke="{INK}" stroke-width="1.6"/>')
        thr = _num(r.get("threshold"))
        if thr is not None:
            tx = x(thr)
            body.append(f'<line x1="{tx:.1f}" y1="{y + 2}" x2="{tx:.1f}" y2="{y + row_h - 2}" '
                        f'stroke="{THRESHOLD}" stroke-width="2.5" stroke-dasharray="3,2"/>')
        right = max(x1, x(_num(ci[1])) if ci and _num(ci[1]) is not None else x1)  # type: ignore[arg-type]
        if right + 40 > label_width + plot_width:
            body.append(_text(x1 - 4, y + row_h * 0.65, f"{v:.3f}", 10, "end", "#ffffff", "600"))
        else:
            body.append(_text(right + 4, y + row_h * 0.65, f"{v:.3f}", 10, color=INK))
    body.append(_text(label_width, height - 4, "bar = value, whisker = confidence interval, "
                      "dashed = threshold", 10, color=MUTED))
    return _svg(width, height, body, title)


def _heat_color(v: float | None) -> str:
    """Red (<=0) through amber (0.5) to green (1) for ICC-like values; grey when undefined."""
    if v is None:
        return "#e0e0e0"
    t = min(max(v, 0.0), 1.0)
    stops = [(0.0, (198, 40, 40)), (0.5, (249, 168, 37)), (1.0, (46, 125, 50))]
    for (a, ca), (b, cb) in zip(stops, stops[1:]):
        if t <= b:
            u = (t - a) / (b - a)
            rgb = [round(ca[i] + (cb[i] - ca[i]) * u) for i in range(3)]
            return "#%02x%02x%02x" % tuple(rgb)
    return "#2e7d32"


def svg_heatmap(scales: Sequence[str], matrix: Sequence[Sequence[Any]], title: str) -> str:
    """Inter-scale consistency heatmap: cell (i, j) = ICC between scale i and scale j."""
    n = len(scales)
    cell, left, top = 64, 90, 56
    width, height = max(left + cell * n + 20, 330), top + cell * n + 36
    body = [_text(8, 18, title, 13, weight="600")]
    for j, s in enumerate(scales):
        body.append(_text(left + cell * j + cell / 2, top - 8, _short(str(s), 10), 11, "middle"))
    for i, s in enumerate(scales):
        body.append(_text(left - 8, top + cell * i + cell / 2 + 4, _short(str(s), 12), 11, "end"))
        for j in range(n):
            v = _num(matrix[i][j]) if i < len(matrix) and j < len(matrix[i]) else None
            fill = _heat_color(v)
            body.append(f'<rect x="{left + cell * j}" y="{top + cell * i}" width="{cell - 2}" '
                        f'height="{cell - 2}" fill="{fill}"/>')
            body.append(_text(left + cell * j + cell / 2 - 1, top + cell * i + cell / 2 + 4,
                              "n/a" if v is None else f"{v:.2f}", 12, "middle",
                              "#ffffff" if v is not None else INK, "600"))
    body.append(_text(left, height - 10, "ICC between scales (1 = perfectly consistent)", 10, color=MUTED))
    return _svg(width, height, body, title)


def svg_scatter(pairs: Sequence[Sequence[Any]], title: str, *, size: int = 340,
                x_label: str = "human (panel mean)", y_label: str = "judge") -> str:
    """Human (x) vs judge (y) scatter with the identity line y = x (other axes: ``x_label``, ``y_label``)."""
    coords = [(_num(p[0]), _num(p[1])) for p in pairs if len(p) == 2]
    pts = [(a, b) for a, b in coords if a is not None and b is not None]
    left, top, pad = 52, 30, 36
    width, height = left + size + 16, top + size + pad + 10
    body = [_text(8, 18, title, 13, weight="600")]
    if not pts:
        body.append(_text(left, top + 20, "no pairs", 12, color=MUTED))
        return _svg(width, height, body, title)
    vals = [v for p in pts for v in p]
    lo, hi = min(vals), max(vals)
    if hi - lo < 1e-12:
        lo, hi = lo - 0.5, hi + 0.5
    margin = (hi - lo) * 0.05
    lo, hi = lo - margin, hi + margin

    def sx(v: float) -> float:
        return left + (v - lo) / (hi - lo) * size

    def sy(v: float) -> float:
        return top + size - (v - lo) / (hi - lo) * size

    body.append(f'<rect x="{left}" y="{top}" width="{size}" height="{size}" fill="none" stroke="{GRID}"/>')
    for t in _nice_ticks(lo, hi):
        body.append(f'<line x1="{sx(t):.1f}" y1="{top}" x2="{sx(t):.1f}" y2="{top + size}" stroke="{GRID}" '
                    f'stroke-width="0.6"/>')
        body.append(f'<line x1="{left}" y1="{sy(t):.1f}" x2="{left + size}" y2="{sy(t):.1f}" stroke="{GRID}" '
                    f'stroke-width="0.6"/>')
        body.append(_text(sx(t), top + size + 14, f"{t:g}", 10, "middle", MUTED))
        body.append(_text(left - 6, sy(t) + 3, f"{t:g}", 10, "end", MUTED))
    body.append(f'<line x1="{sx(lo):.1f}" y1="{sy(lo):.1f}" x2="{sx(hi):.1f}" y2="{sy(hi):.1f}" '
                f'stroke="{THRESHOLD}" stroke-width="1.5" stroke-dasharray="5,3"/>')
    for a, b in pts:
        body.append(f'<circle cx="{sx(a):.1f}" cy="{sy(b):.1f}" r="3.5" fill="{FAIL}" fill-opacity="0.55" '
                    f'stroke="{INK}" stroke-width="0.4"/>')
    body.append(_text(left + size / 2, top + size + 30, x_label, 11, "middle"))
    body.append(_text(14, top + size / 2, y_label, 11, "middle", rotate=-90))
    return _svg(width, height, body, title)


# ---------------------------------------------------------------------- sections
def _record_title(rec: Mapping[str, Any]) -> str:
    return f"{rec.get('statistic', rec.get('kind', 'metric'))}" + (f" [{rec['label']}]" if rec.get("label") else "")


def _overview(report: Mapping[str, Any]) -> str:
    rows = []
    for t in report["tests"]:
        for rec in t["records"]:
            if not is_metric_record(rec):
                continue
            soft = record_verdict(rec, t.get("outcome"), bool(report.get("report_only"))) in ("FAIL*", "CAUGHT")
            test = t["nodeid"].split("::", 1)[-1]
            rows.append({"label": f"{test} \u00b7 {_record_title(rec)}", "value": rec.get("value"),
                         "ci": rec.get("ci"), "threshold": rec.get("threshold"),
                         "color": _verdict_color(rec.get("passed"), soft)})
    if not rows:
        return "<p class='meta'>No metric was recorded.</p>"
    return svg_interval_bars(rows, "Every metric: value, confidence interval, threshold")


def _group_chart(rec: Mapping[str, Any], soft: bool) -> str:
    rows = []
    for g, info in (rec.get("groups") or {}).items():
        if not isinstance(info, Mapping):
            continue
        nmae = rec.get("statistic") == "nMAE"
        rows.append({"label": f"{g} (n={info.get('n', '?')})",
                     "value": info.get("nmae") if nmae else info.get("value"),
                     "ci": None if nmae else info.get("ci"),
                     "threshold": info.get("threshold", rec.get("threshold")),
                     "color": _verdict_color(info.get("passed"), soft)})
    return svg_interval_bars(rows, f"Per group: {rec.get('statistic', '')}", label_width=220,
                             plot_width=360) if rows else ""


def _worst_table(worst: Sequence[Mapping[str, Any]]) -> str:
    if not worst:
        return ""
    rows = "".join(f"<tr><td><code>{escape(str(w.get('item')))}</code></td><td>{escape(str(w.get('detail', '')))}"
                   f"</td></tr>" for w in worst)
    return f"<table><tr><th>worst-aligned item</th><th>detail</th></tr>{rows}</table>"


_VERDICT_HTML = {
    "PASS": "<span class='pass'>PASS</span>",
    "FAIL": "<span class='fail'>FAIL</span>",
    "FAIL*": "<span class='soft'>FAIL (report-only)</span>",
    "CAUGHT": "<span class='soft'>FAILED AS THE TEST EXPECTED (caught; the test passed)</span>",
}


def _record_card(nodeid: str, rec: Mapping[str, Any], report_only: bool, outcome: str | None = None) -> str:
    verdict_word = record_verdict(rec, outcome, report_only)
    soft = verdict_word in ("FAIL*", "CAUGHT")
    verdict = _VERDICT_HTML[verdict_word]
    lines = []
    for check in checks(rec):
        op = "\u2264" if check.get("direction") == "max" else "\u2265"
        own = check.get("statistic") == rec.get("statistic")
        ci = check.get("ci", rec.get("ci") if own else None)
        conf = rec.get("confidence") if own else None
        ci_txt = f" {format_interval(_num(ci[0]), _num(ci[1]), _num(conf), digits=3)}" if ci and None not in ci else ""
        value = "not computed" if check.get("value") is None and rec.get("error") else _f(check.get("value"), 4)
        ok = "" if check.get("passed") is None else (" &#10003;" if check.get("passed") else " &#10007;")
        lines.append(f"<b>{escape(str(check.get('statistic')))}</b> = {value}{escape(ci_txt)} "
                     f"&nbsp; threshold {op} {_f(check.get('threshold'))}{ok}")
    title = escape(_record_title(rec)) if len(lines) > 1 else ""
    error = f"<div class='meta'>{escape(str(rec['error']))}</div>" if rec.get("error") else ""
    if isinstance(rec.get("sequential"), Mapping):
        error += f"<div class='meta'>sequential: {escape(sequential_line(rec['sequential']))}</div>"
    stability = rec.get("stability") or {}
    p_pass = rec.get("p_pass")
    stab = "" if not isinstance(p_pass, (int, float)) else (
        f" &nbsp; p_pass={_f(p_pass)}" + (" <span class='soft'>(unstable: a rerun may flip it)</span>"
                                          if stability.get("unstable") else ""))
    head = (f"<div>{title + ': ' if title else ''}{' &nbsp;|&nbsp; '.join(lines)} &nbsp; "
            f"n={escape(str(rec.get('n', '-')))} k={escape(str(rec.get('k', '-')))} &nbsp; {verdict}{stab}</div>{error}")
    plots = []
    if rec.get("matrix") and rec.get("scales"):
        plots.append(svg_heatmap(rec["scales"], rec["matrix"], "Inter-scale consistency"))
    if rec.get("pairs"):
        plots.append(svg_scatter(rec["pairs"], "Human vs judge (identity line dashed)"))
    if rec.get("groups"):
        plots.append(_group_chart(rec, soft))
    body = head + (f"<div class='plots'>{''.join(plots)}</div>" if plots else "") + _worst_table(
        rec.get("worst_items") or [])
    judge = rec.get("judge")
    if isinstance(judge, Mapping) and judge:
        body += "<div class='meta'>judge: " + escape(", ".join(f"{k}={v}" for k, v in judge.items()
                                                              if v is not None)) + "</div>"
    return f"<div class='card'>{body}</div>"


def _sequential_section(report: Mapping[str, Any]) -> str:
    """Calls saved by sequential gates: the session's total and one row per gate."""
    rows = sequential_rows(report)
    if not rows:
        return ""
    body = "".join(f"<tr><td><code>{escape(name)}</code></td><td>{escape(str(b.get('calls')))}</td>"
                   f"<td>{escape(str(b.get('cap_calls')))}</td><td>{escape(str(b.get('saved_calls')))}</td>"
                   f"<td>{escape(sequential_line(b))}</td><td>{escape(str(b.get('reason', '')))}</td></tr>"
                   for name, b in rows)
    return (f"<h2>Sequential gates</h2><p class='meta'>{escape(sequential_totals(rows))}</p>"
            "<table><tr><th>test</th><th>calls drawn</th><th>cap's calls</th><th>saved</th><th>looks</th>"
            f"<th>why it stopped</th></tr>{body}</table>")


def _baseline_section(comp: Mapping[str, Any] | None) -> str:
    if not comp:
        return ""
    c = comp.get("counts", {})
    head = (f"<h2>Baseline</h2><p class='meta'>{escape(str(comp.get('path')))}: "
            + escape(", ".join(f"{v} {status_word(k)}" for k, v in c.items())) + "</p>")
    if comp.get("error"):
        return head + f"<div class='banner fail'>{escape(comp['error'])}</div>"
    rows = []
    for e in comp.get("entries", []):
        cls = {"regression": "fail", "within_noise": "soft", "improved": "pass"}.get(e["status"], "")
        rows.append(f"<tr><td><code>{escape(e['nodeid'])}</code></td><td>{escape(e['metric'])}</td>"
                    f"<td>{_f(e.get('baseline'), 4)}</td><td>{_f(e.get('current'), 4)}</td>"
                    f"<td>{_f(e.get('delta'), 4)}</td><td class='{cls}'>{escape(status_word(e['status']))}</td>"
                    f"<td>{escape(e.get('reason', ''))}</td></tr>")
    return head + ("<table><tr><th>test</th><th>metric</th><th>baseline</th><th>current</th><th>delta</th>"
                   "<th>status</th><th>why</th></tr>" + "".join(rows) + "</table>" if rows else "")


def render_html(report: Mapping[str, Any]) -> str:
    """The whole report as one HTML document (no external resources)."""
    gate = report.get("gate") or {}
    status = gate.get("status", "passed")
    banners = []
    if report.get("report_only"):
        banners.append("<div class='banner soft'>REPORT-ONLY MODE: assertions and the baseline gate were "
                       "evaluated and reported but did not fail the run.</div>")
    if status == "interrupted":
        banners.append("<div class='banner fail'>INTERRUPTED: partial results of the tests that ran:<ul>" + "".join(
            f"<li>{escape(r)}</li>" for r in gate.get("reasons", [])) + "</ul></div>")
    elif status == "failed":
        banners.append("<div class='banner fail'>Gate FAILED:<ul>" + "".join(
            f"<li>{escape(r)}</li>" for r in gate.get("reasons", [])) + "</ul></div>")
    elif gate.get("reasons"):
        banners.append("<div class='banner soft'>Gate (report-only, not failing):<ul>" + "".join(
            f"<li>{escape(r)}</li>" for r in gate.get("reasons", [])) + "</ul></div>")
    else:
        banners.append("<div class='banner ok'>Gate passed.</div>")
    banners.append(anchors_html(report))  # the drift anchors' status and server changes (judge_drift)
    panels = panel_warnings(report)
    if panels:
        banners.append("<div class='banner soft'>Judge panels worth fewer than half their members:<ul>" + "".join(
            f"<li>{escape(w)}</li>" for w in panels) + "</ul></div>")
    juries = jury_lines(report)
    if juries:
        banners.append("<div class='banner ok'>Verdicts of juries (rule, effective number of judges):<ul>" + "".join(
            f"<li>{escape(w)}</li>" for w in juries) + "</ul></div>")
    endpoint = (report.get("settings") or {}).get("endpoint") or {}
    if endpoint.get("embedded") and endpoint.get("used", True):
        banners.append(f"<div class='banner soft'>The judge model {escape(str(endpoint.get('model')))} is the "
                       "embedded SmolLM2-135M-Instruct via llama.cpp: a weak stand-in for offline runs only. Its "
                       "failing gates say little about your judge; configure a real one with "
                       "--judge-model=&lt;litellm model&gt;.</div>")
    if report.get("crashed"):
        banners.append("<div class='banner fail'>Crashed tests (worker died): " + escape(
            ", ".join(report["crashed"])) + "</div>")
    settings = report.get("settings") or {}
    meta = (f"created {escape(str(report.get('created')))} &middot; pytest-judgerel "
            f"{escape(str(report.get('plugin_version', '')))} &middot; model {escape(str(settings.get('model')))}"
            f" &middot; report schema v{escape(str(report.get('version')))}")
    sections = []
    for t in report["tests"]:
        cards = [_record_card(t["nodeid"], rec, bool(report.get("report_only")), t.get("outcome"))
                 for rec in t["records"] if is_metric_record(rec)]
        if cards:
            sections.append(f"<h3>{escape(t['nodeid'])} <span class='meta'>({escape(t.get('outcome', ''))})"
                            f"</span></h3>" + "".join(cards))
    plain = [t for t in report["tests"] if not any(is_metric_record(rec) for rec in t["records"])]
    plain_html = ""
    if plain:
        plain_html = ("<h3>Tests without metrics</h3><table><tr><th>test</th><th>outcome</th></tr>" + "".join(
            f"<tr><td><code>{escape(t['nodeid'])}</code></td><td>{escape(str(t.get('outcome', '')))}</td></tr>"
            for t in plain) + "</table>")
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            "<title>pytest-judgerel report</title>"
            f"<style>{CSS}</style></head><body>"
            f"<h1>pytest-judgerel report</h1><div class='meta'>{meta}</div>"
            + "".join(banners)
            + f"<div class='card'>{escape(totals_line(report.get('totals', {})))}</div>"
            + "<h2>Overview</h2>" + _overview(report)
            + _sequential_section(report)
            + _baseline_section(gate.get("baseline"))
            + "<h2>Tests</h2>" + ("".join(sections) or "<p class='meta'>No metric was recorded.</p>") + plain_html
            + "</body></html>\n")
