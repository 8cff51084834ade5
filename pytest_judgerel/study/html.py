"""The seed-001 reproduction as one self-contained HTML page: the paper's tables with paper /
ours / difference in every cell, beside a plot of paper vs ours (inline SVG, no network)."""

from __future__ import annotations

from html import escape
from typing import Any

from ..report.html import CSS, svg_scatter
from .reproduce import TABLE_ORDER, TOLERANCE, _fixed, paper_tables


def reproduction_html(rep: Any) -> str:
    """HTML of a :class:`~pytest_judgerel.study.reproduce.Reproduction`."""
    tabs = paper_tables()["tables"]
    main = ("2", "3", "4a", "4b", "6", "14", "15")
    ok, n = rep.count(main)
    ok5, n5 = rep.count(("5",))
    ok1, n1 = rep.count(("1",))
    cls = "ok" if ok == n else "fail"
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>seed 001 reproduced from its data release</title>",
        f"<style>{CSS} td.num{{text-align:right;font-family:ui-monospace,monospace}} td.miss{{background:#ffebee}}"
        " td.num small{color:#607d8b} .wide{overflow-x:auto}</style></head><body>",
        "<h1>Seed 001 reproduced from the authors' data release</h1>",
        f"<div class='meta'>{escape(paper_tables()['source'].rstrip('.'))}; SummEval reading {escape(rep.summeval_reading)!s}; "
        f"a cell reproduces when |ours - paper| &le; {TOLERANCE}</div>",
        f"<div class='banner {cls}'>Tables 2, 3, 4a, 4b, 6, 14, 15: {ok}/{n} cells reproduce; Table 5: {ok5}/{n5}; "
        f"Table 1: {ok1}/{n1} (the paper used every benchmark item, the release 25 per benchmark)</div>",
        "<div class='plots'>",
        svg_scatter([[c.paper, c.ours] for c in rep.cells if c.table != "1"],
                    "Tables 2-6, 14, 15: paper vs ours (identity dashed)", x_label="paper", y_label="ours"),
        svg_scatter([[c.paper, c.ours] for c in rep.cells if c.table == "1"],
                    "Table 1 (release subset): paper vs ours", x_label="paper", y_label="ours"),
        "</div>",
    ]
    for name in TABLE_ORDER:
        cells = {(c.row, c.column): c for c in rep.table(name)}
        if not cells:
            continue
        spec = tabs[name]
        good, total = rep.count((name,))
        # two cells per column (paper; ours over its difference): Table 1's 7 columns fit a 1400 px window
        parts.append(f"<h2>Table {escape(name)}: {escape(spec['title'])} ({good}/{total})</h2>"
                     "<div class='wide'><table><tr><th></th>")
        parts += [f"<th colspan='2'>{escape(col)}</th>" for col in spec["columns"]]
        parts.append("</tr><tr><th></th>" + "<th>paper</th><th>ours (diff)</th>" * len(spec["columns"]) + "</tr>")
        for row in spec["rows"]:
            parts.append(f"<tr><th>{escape(row)}</th>")
            for col in spec["columns"]:
                c = cells[(row, col)]
                miss = "" if c.reproduces() else " miss"
                ours = "n/a" if c.ours is None else _fixed(c.ours, 4)
                diff = "" if c.difference is None else f"<br><small>{_fixed(c.difference, 4, signed=True)}</small>"
                title = f" title='{escape(c.note)}'" if c.note else ""
                parts.append(f"<td class='num'>{c.paper:.3f}</td><td class='num{miss}'{title}>{ours}{diff}</td>")
            parts.append("</tr>")
        parts.append("</table></div>")
        notes = sorted({c.note for c in cells.values() if c.note and not c.reproduces()})
        parts += [f"<p class='meta'>{escape(note)}</p>" for note in notes]
    parts.append("<h2>The release's quirks and how they were handled</h2><ul>")
    parts += [f"<li>{escape(n)}</li>" for n in rep.release_notes]
    parts.append("</ul><h2>Items left out of some rows</h2><ul>")
    parts += [f"<li>{escape(d)}</li>" for d in rep.result.dropped]
    parts.append("</ul></body></html>")
    return "".join(parts) + "\n"
