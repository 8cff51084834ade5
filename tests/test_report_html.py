"""The HTML report is one self-contained file whose SVG plots render in headless Chromium."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import pytest

from pytest_judgerel.report.build import assemble_report
from pytest_judgerel.report.html import render_html, svg_heatmap, svg_interval_bars, svg_scatter

SVG_NS = "{http://www.w3.org/2000/svg}"


def _report() -> dict:
    icc = {"kind": "icc", "statistic": "ICC(A,1)", "value": 0.82, "ci": [0.7, 0.9], "threshold": 0.7,
           "direction": "min", "passed": True, "n": 30, "k": 3,
           "groups": {"stsb": {"value": 0.9, "ci": [0.8, 0.95], "n": 15, "passed": True},
                      "toxigen": {"value": 0.41, "ci": [0.1, 0.6], "n": 15, "passed": False}},
           "worst_items": [{"item": "item<7>", "detail": "scores [1, 5, 3] spread 4"}],
           "judge": {"model": "m1", "template_hash": "abc"}}
    cons = {"kind": "scale_consistency", "statistic": "ICC(A,1) across scales", "value": 0.66,
            "ci": [0.5, 0.78], "threshold": 0.7, "direction": "min", "passed": False, "n": 30, "k": 3,
            "scales": ["0-5", "0-10", "0-100"], "matrix": [[1.0, 0.9, 0.4], [0.9, 1.0, None], [0.4, None, 1.0]],
            "groups": {"joint": {"value": 0.66, "ci": [0.5, 0.78], "n": 30, "passed": False}}}
    agree = {"kind": "agreement", "statistic": "ICC(A,1)", "value": 0.74, "ci": [0.6, 0.85], "threshold": 0.6,
             "direction": "min", "passed": True, "n": 20, "k": 2, "nmae": 0.12,
             "pairs": [[h / 4, h / 4 + (0.5 if h % 3 else -0.4)] for h in range(20)],
             "worst_items": [{"item": "q17", "detail": "|judge-human|/range = 0.31"}]}
    nmae = {"kind": "nmae", "statistic": "nMAE", "value": 0.3, "ci": None, "threshold": 0.2,
            "direction": "max", "passed": False, "n": 20, "k": 2}
    return assemble_report([
        {"nodeid": "tests/test_j.py::test_icc", "records": [icc]},
        {"nodeid": "tests/test_j.py::test_scales", "outcome": "failed", "records": [cons]},
        {"nodeid": "tests/test_j.py::test_agree", "records": [agree, nmae]},
    ], settings={"model": "m1"}, crashed=["tests/test_j.py::test_dead"])


def test_html_is_self_contained_and_escaped() -> None:
    html = render_html(_report())
    assert html.startswith("<!DOCTYPE html>")
    # no external resource of any kind (only the SVG namespace URI)
    urls = set(re.findall(r"(?:src|href)\s*=\s*['\"]([^'\"]+)", html)) | set(re.findall(r"url\(([^)]+)\)", html))
    assert urls == set()
    assert "<script" not in html and "@import" not in html
    assert set(re.findall(r"https?://[^\s\"'<>]+", html)) == {"http://www.w3.org/2000/svg"}
    assert "item&lt;7&gt;" in html and "item<7>" not in html
    assert "Crashed tests" in html and "test_dead" in html


def test_every_plot_kind_is_present_and_well_formed() -> None:
    html = render_html(_report())
    svgs = re.findall(r"<svg .*?</svg>", html, flags=re.S)
    titles = []
    for s in svgs:
        root = ET.fromstring(s)  # each SVG is well-formed XML
        titles.append(root.find(f"{SVG_NS}title").text)
    assert "Every metric: value, confidence interval, threshold" in titles
    assert "Inter-scale consistency" in titles
    assert "Human vs judge (identity line dashed)" in titles
    assert "Per group: ICC(A,1)" in titles
    assert "worst-aligned item" in html and "q17" in html


def test_interval_bars_geometry() -> None:
    svg = svg_interval_bars([{"label": "a", "value": 0.5, "ci": [0.25, 0.75], "threshold": 1.0, "color": "#111"},
                             {"label": "b", "value": None}], "t", label_width=100, plot_width=400)
    root = ET.fromstring(svg)
    bar = root.find(f"{SVG_NS}rect")
    # domain [0, 1] plus 2% padding on the right: x(0) = 100, x(0.5) = 100 + 0.5 / 1.02 * 400
    assert float(bar.get("x")) == pytest.approx(100, abs=0.1)
    assert float(bar.get("width")) == pytest.approx(0.5 / 1.02 * 400, abs=0.2)
    assert "undefined" in svg


def test_heatmap_colours_follow_values() -> None:
    root = ET.fromstring(svg_heatmap(["a", "b"], [[1.0, 0.0], [0.0, None]], "h"))
    fills = [r.get("fill") for r in root.iter(f"{SVG_NS}rect")]
    assert fills == ["#2e7d32", "#c62828", "#c62828", "#e0e0e0"]


def test_scatter_identity_line_spans_the_data() -> None:
    root = ET.fromstring(svg_scatter([[0, 0], [4, 4], [2, 3]], "s", size=300))
    circles = list(root.iter(f"{SVG_NS}circle"))
    assert len(circles) == 3
    # (0, 0) and (4, 4) lie on the identity line: same offset from the plot's lower-left corner
    (x0, y0), (x1, y1) = [(float(c.get("cx")), float(c.get("cy"))) for c in circles[:2]]
    assert x1 - x0 == pytest.approx(y0 - y1)


def test_html_written_by_pytest_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_h='''
import numpy as np
from pytest_judgerel import assert_icc_above
def test_a():
    rng = np.random.default_rng(1)
    t = np.linspace(0, 5, 12)
    assert_icc_above(np.column_stack([t + rng.normal(0, .3, 12) for _ in range(3)]), 0.5)
''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--judgerel-html=out/report.html")
    assert result.ret == 0
    html = (pytester.path / "out" / "report.html").read_text()
    assert "test_h.py::test_a" in html and "<svg" in html
    result.stdout.fnmatch_lines(["HTML report: *out/report.html"])


# ---------------------------------------------------------------------- headless Chromium
def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _png_pixels(path: Path) -> tuple[int, int, list[bytes]]:
    """Decode a non-interlaced 8-bit RGB/RGBA PNG (what Chromium writes) with the stdlib: (w, h, rows)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
            assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line) if bpp == 3 else bytes(v for j, v in enumerate(line) if j % 4 != 3))
        prev = line
    return width, height, rows


def test_html_renders_in_headless_chromium(tmp_path: Path) -> None:
    chromium = _chromium()
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install chromium chromium-driver); .ci/run installs it")
    page = tmp_path / "report.html"
    page.write_text(render_html(_report()), encoding="utf-8")
    shot = tmp_path / "shot.png"
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--no-first-run", "--hide-scrollbars",
           f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}", "--window-size=1200,2000",
           page.as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "HOME": str(tmp_path)})
    assert shot.exists(), f"no screenshot; chromium said: {proc.stderr[-2000:]}"
    width, height, rows = _png_pixels(shot)
    assert (width, height) == (1200, 2000)
    pixels = [row[i:i + 3] for row in rows[::4] for i in range(0, len(row), 12)]
    colours = {p for p in pixels}
    assert len(colours) > 50, "screenshot is nearly blank"
    # the pass green, the fail red and the threshold blue of the plots are drawn (anti-aliasing aside)
    def near(target: tuple[int, int, int], tol: int = 40) -> int:
        return sum(1 for p in pixels if all(abs(p[i] - target[i]) <= tol for i in range(3)))

    assert near((46, 125, 50)) > 100   # green bars / heatmap cells
    assert near((198, 40, 40)) > 50    # red (failing metric, heatmap low cell)
    assert near((21, 101, 192), 30) > 5  # threshold / identity line
    background = sum(1 for p in pixels if p == b"\xfa\xfa\xfa" or p == b"\xff\xff\xff")
    assert background < 0.95 * len(pixels)
