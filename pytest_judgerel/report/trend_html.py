"""``judgerel history html``: one self-contained page of trend plots over a run history.

One plot per metric (test and metric name) over the runs: the value as a line with points, its
confidence interval as a band, the threshold dashed; one plot per judge configuration of its
anchors' shift with its interval and the +/- margin.  Runs where the judge drifted (its anchors'
comparison drifted or the sequential monitor alarmed, :func:`~.history.monitor_anchors`) are
marked with a red vertical line on every plot.  Inline SVG built here (the helpers of
:mod:`.html`), no script, no network, no plotting library.
"""

from __future__ import annotations

from html import escape
from typing import Any, Mapping, Sequence

from .html import CSS, FAIL, GRID, INK, MUTED, PASS, THRESHOLD, _nice_ticks, _svg, _text
from .metrics import _num, metric_points

__all__ = ["svg_trend", "render_trend_html"]

BAND = "#90caf9"


def svg_trend(runs: Sequence[int], values: Sequence[float | None], cis: Sequence[Sequence[float] | None],
              title: str, *, threshold: float | None = None, drift_runs: Sequence[int] = (),
              zero_band: float | None = None, width: int = 640, height: int = 220) -> str:
    """A trend plot: ``values`` over ``runs`` (run numbers) with their intervals as a band, an
    optional dashed ``threshold``, a shaded +/- ``zero_band`` around 0 (the anchors' margin) and a
    red vertical line at each run of ``drift_runs``."""
    left, right, top, bottom = 56, 16, 28, 34
    pw, ph = width - left - right, height - top - bottom
    ys = [v for v in values if v is not None]
    for ci in cis:
        if ci is not None:
            ys += [c for c in ci if c is not None]
    if threshold is not None:
        ys.append(threshold)
    if zero_band is not None:
        ys += [-zero_band, zero_band]
    lo, hi = (min(ys), max(ys)) if ys else (0.0, 1.0)
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    pad = (hi - lo) * 0.08
    lo, hi = lo - pad, hi + pad
    first, last = (min(runs), max(runs)) if runs else (0, 1)
    span = max(last - first, 1)

    def x(run: float) -> float:
        return left + (run - first) / span * pw if len(runs) > 1 else left + pw / 2

    def y(v: float) -> float:
        return top + (hi - v) / (hi - lo) * ph

    body = [_text(left, 16, title, 12, weight="bold")]
    for t in _nice_ticks(lo, hi):
        body.append(f'<line x1="{left}" y1="{y(t):.1f}" x2="{left + pw}" y2="{y(t):.1f}" stroke="{GRID}"/>')
        body.append(_text(left - 6, y(t) + 4, f"{t:g}", 10, "end", MUTED))
    for r in runs:
        body.append(_text(x(r), top + ph + 16, f"#{r}", 10, "middle", MUTED))
    if zero_band is not None:
        body.append(f'<rect x="{left}" y="{y(zero_band):.1f}" width="{pw}" height="{y(-zero_band) - y(zero_band):.1f}" '
                    f'fill="{PASS}" fill-opacity="0.08"/>')
    band = [(r, c) for r, c in zip(runs, cis) if c is not None and None not in c]
    if band:
        upper = " ".join(f"{x(r):.1f},{y(c[1]):.1f}" for r, c in band)
        lower = " ".join(f"{x(r):.1f},{y(c[0]):.1f}" for r, c in reversed(band))
        if len(band) == 1:  # one run: a whisker instead of a band
            r, c = band[0]
            body.append(f'<line x1="{x(r):.1f}" y1="{y(c[0]):.1f}" x2="{x(r):.1f}" y2="{y(c[1]):.1f}" '
                        f'stroke="{BAND}" stroke-width="6"/>')
        else:
            body.append(f'<polygon points="{upper} {lower}" fill="{BAND}" fill-opacity="0.45" stroke="none"/>')
    if threshold is not None:
        body.append(f'<line x1="{left}" y1="{y(threshold):.1f}" x2="{left + pw}" y2="{y(threshold):.1f}" '
                    f'stroke="{THRESHOLD}" stroke-dasharray="5,4" stroke-width="1.5"/>')
    for r in drift_runs:
        body.append(f'<line x1="{x(r):.1f}" y1="{top}" x2="{x(r):.1f}" y2="{top + ph}" stroke="{FAIL}" '
                    f'stroke-width="2"/>')
        body.append(_text(x(r) - 4, top + 10, "judge drifted", 10, "end", FAIL))
    pts = [(r, v) for r, v in zip(runs, values) if v is not None]
    if len(pts) > 1:
        body.append('<polyline fill="none" stroke="' + INK + '" stroke-width="1.5" points="'
                    + " ".join(f"{x(r):.1f},{y(v):.1f}" for r, v in pts) + '"/>')
    for r, v in pts:
        colour = FAIL if r in drift_runs else INK
        body.append(f'<circle cx="{x(r):.1f}" cy="{y(v):.1f}" r="3.5" fill="{colour}"/>')
    return _svg(width, height, body, title)


def _metric_series(reports: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], list[Any]]:
    """``{(test, metric): [point or None per run]}``."""
    table: dict[tuple[str, str], list[Any]] = {}
    for i, rep in enumerate(reports):
        for t in rep.get("tests", []):
            for p in metric_points(t.get("records") or []):
                if p.role == "group":
                    continue
                table.setdefault((t["nodeid"], p.name), [None] * len(reports))[i] = p
    return dict(sorted(table.items()))


def render_trend_html(reports: Sequence[Mapping[str, Any]], run_numbers: Sequence[int],
                      title: str = "pytest-judgerel history") -> str:
    """The trend page of a run history (oldest first; ``run_numbers`` label the x axis)."""
    from .history import monitor_anchors

    reports = list(reports)
    monitors = monitor_anchors(reports)
    drift_idx = sorted({i for m in monitors.values() for i in list(m["alarms"]) + list(m["drifted"])})
    drift_runs = [run_numbers[i] for i in drift_idx]
    sections = []
    for (nodeid, metric), points in _metric_series(reports).items():
        runs = [n for n, p in zip(run_numbers, points) if p is not None]
        present = [p for p in points if p is not None]
        thr = next((p.threshold for p in reversed(present) if p.threshold is not None), None)
        sections.append(svg_trend(runs, [p.value for p in present], [p.ci for p in present],
                                  f"{nodeid} {metric}", threshold=thr, drift_runs=[r for r in drift_runs if r in runs]))
    anchor_plots = []
    for cid, info in monitors.items():
        rows = []
        for i, rep in enumerate(reports):
            e = (((rep.get("anchors") or {}).get("configurations")) or {}).get(cid) or {}
            comp = e.get("comparison") or {}
            if _num(comp.get("shift")) is not None:
                rows.append((run_numbers[i], _num(comp["shift"]), comp.get("shift_ci"), _num(comp.get("margin")),
                             e.get("judge") or {}))
        if not rows:
            continue
        judge = rows[-1][4]
        label = f"anchors {cid[:8]} ({judge.get('model')}, {judge.get('template')}, {judge.get('scale')}): shift"
        anchor_plots.append(svg_trend([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], label,
                                      zero_band=next((r[3] for r in rows if r[3] is not None), None),
                                      drift_runs=[r for r in drift_runs if r in [x[0] for x in rows]]))
    legend = ("line and points: the value per run; blue band: its confidence interval; dashed blue: the "
              "threshold; red line: a run where the judge drifted (its anchors drifted or the sequential "
              "monitor alarmed); green band on anchor plots: the +/- margin of a steady judge")
    drift_text = (f"judge drifted at run(s) {', '.join(f'#{r}' for r in drift_runs)}" if drift_runs
                  else "no judge drift in this history")
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
            f"<h1>{escape(title)}</h1><div class='meta'>{len(reports)} runs: "
            f"{escape(', '.join(f'#{n}' for n in run_numbers))} &middot; {escape(drift_text)}</div>"
            f"<p class='meta'>{escape(legend)}</p>"
            + (("<h2>Judge anchors</h2><div class='plots'>" + "".join(anchor_plots) + "</div>") if anchor_plots else "")
            + "<h2>Metrics</h2><div class='plots'>" + ("".join(sections) or "<p class='meta'>No metric.</p>")
            + "</div></body></html>\n")
