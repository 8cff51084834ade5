"""Judge drift across a run history: the sequential monitor, the attribution of a change, and the
trend page (``judgerel history html``), drawn in headless Chromium."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_judgerel.report import cli
from pytest_judgerel.report.history import attribute_runs, compare_runs, judge_status, monitor_anchors
from pytest_judgerel.report.schema import validate_report
from pytest_judgerel.report.trend_html import render_trend_html, svg_trend


JUDGE = {"model": "openai/j", "template": "stsb", "template_hash": "abc", "scale": "0-10", "temperature": 0.7}
CID = "0123456789abcdef"


def _run(number: int, value: float, status: str, shift: float, fp: str = "fp1") -> dict[str, Any]:
    comparison = None if status == "recorded" else {
        "status": status, "shift": shift, "shift_ci": [shift - 0.3, shift + 0.3], "shift_se": 0.15, "n": 30,
        "n_omitted": 0, "reference_samples": 2, "fresh_samples": 1, "margin": 1.0, "scale": "0-10"}
    rec = {"kind": "icc", "statistic": "ICC(A,1)", "value": value, "ci": [value - 0.05, value + 0.05], "n": 30,
           "k": 2, "threshold": 0.5, "direction": "min", "passed": True, "judge": {**JUDGE, "repeats": 2}}
    totals = {k: 0 for k in ("tests", "metrics", "failed_metrics", "parse_failures", "calls", "hits", "misses",
                             "retries", "errors", "prompt_tokens", "completion_tokens", "cost")}
    return {"schema": "pytest-judgerel/report", "version": 1, "created": f"run {number}", "settings": {},
            "report_only": False, "tests": [{"nodeid": "t.py::a", "outcome": "passed", "records": [rec], "calls": {}}],
            "totals": {**totals, "hit_rate": None}, "crashed": [], "judges": {"f" * 16: JUDGE},
            "gate": {"status": "passed", "reasons": [], "baseline": None},
            "run": {"number": number, "fingerprint": "aa", "file": f"{number:04d}_aa.json", "git_commit": None},
            "anchors": {"file": "anchors.json", "status": status, "calls": 30, "configurations": {CID: {
                "judge": JUDGE, "status": status, "comparison": comparison,
                "served": {"models": {"j": 60}, "system_fingerprints": {fp: 60}}}}}}


def _history(tmp_path: Path, runs: list[dict[str, Any]]) -> Path:
    folder = tmp_path / "history"
    folder.mkdir()
    for r in runs:
        validate_report(r)
        (folder / r["run"]["file"]).write_text(json.dumps(r))
    return folder


def _drifting() -> list[dict[str, Any]]:
    return ([_run(1, 0.80, "recorded", 0.0)]
            + [_run(n, 0.80, "steady", s) for n, s in zip(range(2, 6), (0.05, -0.1, 0.02, 0.08))]
            + [_run(6, 0.80, "drifted", 2.0)])


def test_the_monitor_alarms_where_the_judge_drifted() -> None:
    reports = _drifting()
    monitors = monitor_anchors(reports)
    info = monitors[CID]
    assert info["runs"] == [1, 2, 3, 4, 5] and info["monitor"] is not None
    assert info["alarms"] and min(info["alarms"]) == 5 and info["drifted"] == [5]
    assert [judge_status(reports, i) for i in range(1, 6)] == ["steady"] * 4 + ["drifted"]
    same = compare_runs(reports[4], reports[5])
    assert attribute_runs(reports, 4, 5, same)["verdict"] == "judge drifted"
    assert attribute_runs(reports, 3, 4, compare_runs(reports[3], reports[4]))["verdict"] == "none"
    moved = _drifting()[:5] + [_run(6, 0.55, "steady", 0.01)]
    comp = compare_runs(moved[4], moved[5])
    assert comp.regressions and attribute_runs(moved, 4, 5, comp)["verdict"] == "system changed"


def test_a_new_reference_starts_a_new_series() -> None:
    reports = _drifting() + [_run(7, 0.8, "recorded", 0.0), _run(8, 0.8, "steady", 0.0)]
    assert monitor_anchors(reports)[CID]["runs"] == [7]


def test_history_compare_names_the_judge_and_the_fingerprint(tmp_path: Path, capsys: Any) -> None:
    runs = _drifting()
    runs[-1] = _run(6, 0.80, "drifted", 2.0, fp="fp2")
    folder = _history(tmp_path, runs)
    assert cli.main(["history", "compare", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "attribution: judge drifted" in out
    assert "system_fingerprint fp1 -> fp2" in out and "sequential monitor over 5 run(s): alarms #6" in out


def test_svg_trend_draws_band_threshold_and_drift_line() -> None:
    svg = svg_trend([1, 2, 3], [0.8, 0.7, None], [[0.7, 0.9], [0.6, 0.8], None], "ICC", threshold=0.5,
                    drift_runs=[2])
    assert svg.startswith("<svg") and "<polygon" in svg and "stroke-dasharray" in svg and "judge drifted" in svg
    assert "nan" not in svg.lower()
    single = svg_trend([4], [0.8], [[0.7, 0.9]], "one run")
    assert "<polygon" not in single and "<circle" in single


def test_trend_page_renders_in_headless_chromium(tmp_path: Path) -> None:
    page = tmp_path / "trend.html"
    folder = _history(tmp_path, _drifting())
    assert cli.main(["history", "html", str(folder), "-o", str(page)]) == 0
    html = page.read_text()
    assert html.count("<svg") == 2 and "judge drifted at run(s) #6" in html and "<script" not in html
    assert render_trend_html(_drifting(), [1, 2, 3, 4, 5, 6]) == html
    from tests.test_report_html import _chromium, _png_pixels

    chromium = _chromium()
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install chromium chromium-driver); .ci/run installs it")
    shot = tmp_path / "shot.png"
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--no-first-run", "--hide-scrollbars",
           f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}", "--window-size=1400,900", page.as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(tmp_path)})
    assert shot.exists(), f"no screenshot; chromium said: {proc.stderr[-2000:]}"
    width, height, rows = _png_pixels(shot)
    assert (width, height) == (1400, 900)
    pixels = [row[i:i + 3] for row in rows for i in range(0, len(row), 3)]

    def near(target: tuple[int, int, int], tol: int = 40) -> int:
        return sum(1 for p in pixels if all(abs(p[i] - target[i]) <= tol for i in range(3)))

    assert near((198, 40, 40)) > 20        # the red "judge drifted" line and point
    assert near((182, 215, 240), 30) > 50  # the interval band (#90caf9 at 45% over white)
    assert sum(1 for p in pixels if p[2] - p[0] > 100 and p[2] > 150) > 20  # the dashed blue threshold
