"""The Markdown summary: a pytest session with ``GITHUB_STEP_SUMMARY`` set appends it, rendered by a
CommonMark/GFM renderer (markdown-it-py with its table rule) to HTML; a regression and a drifted
judge come first; 200 tests stay within GitHub's limits, the tail collapsed; a cut never splits a
table; the accept command updates the baseline from the report."""

from __future__ import annotations

import copy
import json
import os
import shutil
from pathlib import Path

import pytest

from pytest_judgerel.report.accept import accept_report, refusals
from pytest_judgerel.report.markdown import COMMENT_LIMIT, STEP_SUMMARY_LIMIT, render_markdown
from pytest_judgerel.report.md_blocks import Block, fit_blocks, utf8_size

markdown_it = pytest.importorskip("markdown_it", reason="markdown-it-py is in the dev extra")

# load the statistics now: pytester restores sys.modules after each test, and numpy/scipy cannot load twice
import pytest_judgerel.stats.anchor_drift  # noqa: E402,F401
import scipy.stats  # noqa: E402,F401


def to_html(text: str) -> str:
    """What GitHub shows: CommonMark with GFM tables and inline HTML (``<details>``)."""
    return markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table").render(text)


SUITE = '''
import hashlib, os, random, re
import pytest
from pytest_judgerel import assert_icc_above
from pytest_judgerel.llm import register_scripted

SHIFT = float(os.environ.get("JR_SHIFT", "0"))
NOISE = float(os.environ.get("JR_NOISE", "0.3"))
_calls = {}

def reply(messages, **params):
    prompt = messages[-1]["content"]
    base = 1 + int(hashlib.sha256(prompt.encode()).hexdigest()[:8], 16) % 8
    _calls[prompt] = _calls.get(prompt, 0) + 1
    noise = random.Random(f"{prompt}{_calls[prompt]}").gauss(0, NOISE)
    return str(round(min(10.0, max(0.0, base + SHIFT + noise))))

register_scripted("scripted/judge", reply)
ITEMS = [{"id": f"i{i}", "sentence1": f"A sentence {i} about {i % 17}.", "sentence2": f"Another {(i * 7) % 23}."}
         for i in range(60)]

@pytest.mark.judge(model="scripted/judge", template="stsb", temperature=0.7)
@pytest.mark.scale("0-10")
@pytest.mark.repeats(2)
def test_judge_is_reliable(judge):
    assert_icc_above(judge.rate(ITEMS), 0.3)

def sloppy(messages, **params):
    i = int(re.search(r"A sentence (\\d+) ", " ".join(m["content"] for m in messages)).group(1))
    return "hmm, maybe seven?" if i % 4 == 0 else str(i % 10)

register_scripted("scripted/sloppy", sloppy)

@pytest.mark.judge(model="scripted/sloppy", template="stsb")
@pytest.mark.scale("0-10")
@pytest.mark.repeats(2)
def test_sloppy_judge(judge):
    assert_icc_above(judge.rate(ITEMS[:20]), 0.5)

def test_data_only():
    import numpy as np
    assert_icc_above(np.array([[1, 1.1], [2, 2.2], [3, 2.9], [4, 4.1], [5, 5.2]]), 0.5)
'''


def _run(pytester: pytest.Pytester, tmp: Path, *args: str, env: dict[str, str],
         monkeypatch: pytest.MonkeyPatch) -> pytest.RunResult:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return pytester.runpytest("-p", "no:xdist", "-p", "no:cacheprovider", "--judgerel-cache-mode=off",
                              f"--judgerel-anchors={tmp / 'anchors.json'}",
                              f"--judgerel-baseline={tmp / 'baseline.json'}", f"--judgerel-json={tmp / 'r.json'}",
                              *args)


def test_a_session_with_github_step_summary_writes_the_summary(pytester: pytest.Pytester, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_suite=SUITE)
    first = _run(pytester, tmp_path, "--judgerel-update-baseline", env={"JR_SHIFT": "0", "JR_NOISE": "0.3"},
                 monkeypatch=monkeypatch)
    assert first.ret == 1, first.stdout.str()[-3000:]
    first.assert_outcomes(passed=2, failed=1)  # the sloppy judge fails in both sessions
    summary = tmp_path / "step_summary.md"
    summary.write_text("earlier step output\n")
    second = _run(pytester, tmp_path, env={"JR_SHIFT": "2", "JR_NOISE": "2.5",
                                           "GITHUB_STEP_SUMMARY": str(summary)}, monkeypatch=monkeypatch)
    assert second.ret == 1
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step output\n")  # appended, never overwritten
    html = to_html(text)
    assert "<table>" in html and "<th>vs baseline (noise band)</th>" in html
    attention = html.index("Needs a reviewer")
    assert attention < html.index("<th>test</th>")
    assert html.index("Regressions against the baseline") < html.index("Drifted judges")
    assert "regressed" in html and "scores shifted" in html and "judge drifted" in html
    assert html.index("Drifted judges") < html.index("Failed gates") < html.index("Parse failures")
    assert "hmm, maybe seven?" in html  # the unparsed replies are quoted
    assert "judgerel baseline accept" in html and "--allow-drift" in html
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["outputs"]["step_summary"] == str(summary)
    if os.environ.get("JUDGEREL_KEEP_REPORT"):  # refreshes tests/data/markdown/report_3.json
        shutil.copy(tmp_path / "r.json", os.environ["JUDGEREL_KEEP_REPORT"])


def test_plain_pytest_run_leaves_the_step_summary_alone(pytester: pytest.Pytester, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_plain="def test_x():\n    assert True\n")
    summary = tmp_path / "s.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert pytester.runpytest("-p", "no:xdist").ret == 0
    assert not summary.exists()


# ---------------------------------------------------------------------- 200 tests, limits, cuts
DATA = Path(__file__).parent / "data" / "markdown" / "report_3.json"


def many(n: int) -> dict:
    """The three-test session report with ``n - 3`` more passing tests (the long tail)."""
    report = json.loads(DATA.read_text())
    model = next(t for t in report["tests"] if t["nodeid"].endswith("test_data_only"))
    entry = next(e for e in report["gate"]["baseline"]["entries"] if e["nodeid"] == model["nodeid"])
    for i in range(n - len(report["tests"])):
        t = copy.deepcopy(model)
        t["nodeid"] = f"tests/judge/test_prompts.py::test_prompt_variant[case-{i:03d}]"
        report["tests"].append(t)
        report["gate"]["baseline"]["entries"].append({**entry, "nodeid": t["nodeid"]})
    report["totals"]["tests"] = len(report["tests"])
    return report


def _table_rows(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.startswith("|") and not line.startswith("|---"))


def test_200_tests_stay_readable_and_within_githubs_limits() -> None:
    report = many(200)
    comment = render_markdown(report)
    assert len(comment) <= COMMENT_LIMIT
    summary = render_markdown(report, limit=STEP_SUMMARY_LIMIT, size=utf8_size)
    assert utf8_size(summary) <= STEP_SUMMARY_LIMIT
    html = to_html(summary)
    open_table = html.split("<details>", 1)[0]
    assert open_table.count("<tr>") <= 11 + 7  # the gate table's head rows and the bill, the tail collapsed
    assert "190 more gate row(s), none needing attention" in html
    # the tests needing attention are in the open table, before the tail
    assert html.index("test_judge_is_reliable") < html.index("more gate row(s)")
    assert html.index("test_sloppy_judge") < html.index("more gate row(s)")


@pytest.mark.parametrize("limit", [1_500, 3_000, 6_000, 20_000])
def test_a_cut_keeps_every_table_whole_and_says_so(limit: int) -> None:
    text = render_markdown(many(200), limit=limit)
    assert len(text) <= limit
    assert "Cut to stay within GitHub's comment limit" in text
    html = to_html(text)
    # every table line that was kept is a row of a rendered table (a cut table keeps its header)
    assert html.count("<tr>") == _table_rows(text)
    assert html.count("<details>") == html.count("</details>")


def test_fit_blocks_cuts_between_rows_only() -> None:
    blocks = [Block("# title"), Block("| a |\n|---|", [f"| {i} |" for i in range(100)]), Block("tail text")]
    text = fit_blocks(blocks, 700)
    assert len(text) <= 700 and "| a |\n|---|\n| 0 |" in text and "tail text" not in text
    assert text.count("| ") == _table_rows(text)
    assert "59 more row(s) of a table or list and 1 more section(s) left out" in text


# ---------------------------------------------------------------------- judgerel baseline accept
def _baseline_from(report: dict, path: Path) -> None:
    from pytest_judgerel.report.baseline import updated_baseline
    from pytest_judgerel.report.io import write_json_atomic

    old = copy.deepcopy(report)
    for t in old["tests"]:
        for rec in t["records"]:
            if isinstance(rec.get("value"), float):  # a clearly better baseline: the report regressed
                rec["value"] = rec["value"] + 0.3
                rec["ci"] = [rec["value"] - 0.01, rec["value"] + 0.01]
                rec.pop("item_scores", None)
    write_json_atomic(path, updated_baseline(None, old))


def test_accept_refuses_drift_then_accepts_the_named_tests(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    report = json.loads(DATA.read_text())
    assert any("drifted" in r for r in refusals(report))
    path, baseline = tmp_path / "r.json", tmp_path / "b.json"
    path.write_text(json.dumps(report))
    _baseline_from(report, baseline)
    before = baseline.read_text()
    assert accept_report(str(path), str(baseline)) == 2  # drifted anchors: refused, nothing written
    assert baseline.read_text() == before and "refused" in capsys.readouterr().err
    assert accept_report(str(path), str(baseline), ["test_suite.py::test_data_only"], allow_drift=True) == 0
    out = capsys.readouterr().out
    assert "accepted 1 metric(s) of 1 test(s)" in out and "test_suite.py::test_data_only ICC(A,1)" in out
    accepted = json.loads(baseline.read_text())["tests"]
    assert accepted["test_suite.py::test_data_only"]["ICC(A,1)"]["value"] == pytest.approx(
        next(r["value"] for t in report["tests"] if t["nodeid"].endswith("data_only") for r in t["records"]
             if r.get("statistic")), abs=1e-6)
    old = json.loads(before)["tests"]["test_suite.py::test_judge_is_reliable"]
    assert accepted["test_suite.py::test_judge_is_reliable"] == old  # not named: kept


def test_accept_refuses_a_dry_run_even_with_allow_drift() -> None:
    report = json.loads(DATA.read_text())
    report["session"]["dry_run"] = {"planned_calls": 3}
    assert refusals(report, allow_drift=True) == ["the report is a dry run: its judge replies are placeholders"]


# ---------------------------------------------------------------------- headless Chromium
_PAGE = """<!doctype html><html><head><meta charset="utf-8"><style>
body {{ font: 14px/1.5 -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; color: #1f2328;
       max-width: 1180px; margin: 16px auto; padding: 0 16px; }}
table {{ border-collapse: collapse; margin: 8px 0; }} th, td {{ border: 1px solid #d0d7de; padding: 4px 10px; }}
th {{ background: #f6f8fa; }} tr:nth-child(2n) {{ background: #f6f8fa; }}
code {{ background: rgba(175,184,193,.2); padding: .1em .3em; border-radius: 6px; font-size: 85%; }}
blockquote {{ border-left: .25em solid #0969da; margin: 0; padding: 0 1em; color: #1f2328; }}
h2 {{ border-bottom: 1px solid #d8dee4; padding-bottom: .3em; }} summary {{ cursor: pointer; }}
</style></head><body>{body}</body></html>"""


@pytest.mark.parametrize("n", [3, 200])
def test_the_summary_renders_in_headless_chromium(tmp_path: Path, n: int) -> None:
    """GitHub's view of the summary (GFM rendered, a GitHub-like stylesheet) at 3 and 200 tests;
    ``JUDGEREL_UPDATE_SCREENSHOTS=1`` refreshes docs/images/markdown-summary-<n>.png."""
    import subprocess

    from tests.test_report_html import _chromium, _png_pixels

    chromium = _chromium()
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install chromium chromium-driver); .ci/run installs it")
    report = json.loads(DATA.read_text()) if n == 3 else many(n)
    text = render_markdown(report, report_path="judgerel-report.json", baseline_path="judgerel-baseline.json")
    page = tmp_path / "summary.html"
    page.write_text(_PAGE.format(body=to_html(text)), encoding="utf-8")
    shot = tmp_path / "shot.png"
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--no-first-run", "--hide-scrollbars",
           f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}", "--window-size=1200,1400",
           page.as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(tmp_path)})
    assert shot.exists(), f"no screenshot; chromium said: {proc.stderr[-2000:]}"
    width, height, rows = _png_pixels(shot)
    assert (width, height) == (1200, 1400)
    pixels = [row[i:i + 3] for row in rows[::4] for i in range(0, len(row), 12)]
    assert len(set(pixels)) > 30, "screenshot is nearly blank"
    dark = sum(1 for p in pixels if max(p) < 100)  # text
    assert dark > 0.01 * len(pixels)
    if os.environ.get("JUDGEREL_UPDATE_SCREENSHOTS"):
        target = Path(__file__).resolve().parents[1] / "docs" / "images" / f"markdown-summary-{n}.png"
        target.parent.mkdir(exist_ok=True)
        target.write_bytes(shot.read_bytes())


DATA_ONLY = '''
import numpy as np
from pytest_judgerel import assert_icc_above

def test_a():
    assert_icc_above(np.array([[1, 1.1], [2, 2.2], [3, 2.9], [4, 4.1], [5, 5.2]]), 0.5)
'''


def test_markdown_option_and_an_unwritable_step_summary(pytester: pytest.Pytester, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_d=DATA_ONLY)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path))  # a directory: cannot be appended to
    result = pytester.runpytest("-p", "no:xdist", "--judgerel-markdown=out/summary.md",
                                f"--judgerel-json={tmp_path / 'r.json'}")
    assert result.ret == 0  # the step summary is a view: failing to write it warns, never fails
    result.stdout.fnmatch_lines(["Markdown summary: *out/summary.md",
                                 "judgerel warning: could not append the Markdown summary to the step summary*"])
    text = (pytester.path / "out" / "summary.md").read_text(encoding="utf-8")
    assert "## judgerel: ✅ passed" in text and "| `test_d.py::test_a` | ICC(A,1) |" in text
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["gate"]["warnings"] and "step_summary" not in report["outputs"]


def test_step_summary_off(pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_d=DATA_ONLY)
    summary = tmp_path / "s.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert pytester.runpytest("-p", "no:xdist", "--judgerel-step-summary=off").ret == 0
    assert not summary.exists()
    assert pytester.runpytest("-p", "no:xdist").ret == 0
    assert summary.read_text(encoding="utf-8").startswith("<!-- judgerel-summary -->")


def test_injection_families_and_the_cli_with_a_baseline(tmp_path: Path) -> None:
    from pytest_judgerel.__main__ import main

    report = json.loads(DATA.read_text())
    report["tests"][0]["records"].append({
        "kind": "injection", "statistic": "flip rate", "value": 0.4, "threshold": 0.1, "direction": "max",
        "passed": False, "n": 10, "worst_family": "role_override",
        "families": {"role_override": {"flips": 4, "n": 10, "rate": 0.4, "passed": False},
                     "format_hijack": {"flips": 0, "n": 10, "rate": 0.0, "passed": True}}})
    report["gate"] = {"status": "passed", "reasons": [], "baseline": None}
    path, baseline = tmp_path / "r.json", tmp_path / "b.json"
    path.write_text(json.dumps(report))
    _baseline_from(report, baseline)
    assert main(["report", "markdown", str(path), "--baseline", str(baseline), "-o", str(tmp_path / "s.md")]) == 0
    html = to_html((tmp_path / "s.md").read_text(encoding="utf-8"))
    assert "Injection families that failed" in html and "role_override 0.400 (4/10)" in html
    assert "format_hijack" not in html.split("Injection families")[1].split("</li>\n</ul>")[0]
    assert "judgerel: ❌ failed" in html and "Regressions against the baseline" in html  # recompared
