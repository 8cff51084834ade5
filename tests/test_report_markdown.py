"""The Markdown summary: a pytest session with ``GITHUB_STEP_SUMMARY`` set appends it, rendered by a
CommonMark/GFM renderer (markdown-it-py with its table rule) to HTML; a regression and a drifted
judge come first; 200 tests stay within GitHub's limits, the tail collapsed; a cut never splits a
table; the accept command updates the baseline from the report."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from pytest_judgerel.report.accept import accept_report, refusals
from pytest_judgerel.report.markdown import COMMENT_LIMIT, STEP_SUMMARY_LIMIT, render_markdown
from pytest_judgerel.report.md_blocks import Block, fit_blocks, utf8_size

markdown_it = pytest.importorskip("markdown_it", reason="markdown-it-py is in the dev extra")

# load the statistics now: pytester restores sys.modules after each test, and numpy/scipy cannot load twice
import pytest_judgerel.stats.drift  # noqa: E402,F401
import scipy.stats  # noqa: E402,F401


def to_html(text: str) -> str:
    """What GitHub shows: CommonMark with GFM tables and inline HTML (``<details>``)."""
    return markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table").render(text)


SUITE = '''
import hashlib, os, random
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

def test_data_only():
    import numpy as np
    assert_icc_above(np.array([[1, 1.1], [2, 2.2], [3, 2.9], [4, 4.1], [5, 5.2]]), 0.5)
'''


def _run(pytester: pytest.Pytester, tmp: Path, *args: str, env: dict[str, str]) -> pytest.RunResult:
    for k, v in env.items():
        pytester._monkeypatch.setenv(k, v)
    return pytester.runpytest("-p", "no:xdist", "-p", "no:cacheprovider", "--judgerel-cache-mode=off",
                              f"--judgerel-anchors={tmp / 'anchors.json'}",
                              f"--judgerel-baseline={tmp / 'baseline.json'}", f"--judgerel-json={tmp / 'r.json'}",
                              *args)


def test_a_session_with_github_step_summary_writes_the_summary(pytester: pytest.Pytester, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_suite=SUITE)
    first = _run(pytester, tmp_path, "--judgerel-update-baseline", env={"JR_SHIFT": "0", "JR_NOISE": "0.3"})
    assert first.ret == 0, first.stdout.str()[-3000:]
    summary = tmp_path / "step_summary.md"
    summary.write_text("earlier step output\n")
    second = _run(pytester, tmp_path, env={"JR_SHIFT": "2", "JR_NOISE": "2.5",
                                           "GITHUB_STEP_SUMMARY": str(summary)})
    assert second.ret == 1
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step output\n")  # appended, never overwritten
    html = to_html(text)
    assert "<table>" in html and "<th>vs baseline (noise band)</th>" in html
    attention = html.index("Needs a reviewer")
    assert attention < html.index("<th>test</th>")
    assert html.index("Regressions against the baseline") < html.index("Drifted judges")
    assert "regressed" in html and "DRIFTED" in html and "judge drifted" in html
    assert "judgerel baseline accept" in html and "--allow-drift" in html
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["outputs"]["step_summary"] == str(summary)
    import os, shutil
    if os.environ.get("JR_KEEP"):
        shutil.copy(tmp_path / "r.json", os.environ["JR_KEEP"])


def test_plain_pytest_run_leaves_the_step_summary_alone(pytester: pytest.Pytester, tmp_path: Path) -> None:
    pytester.makepyfile(test_plain="def test_x():\n    assert True\n")
    summary = tmp_path / "s.md"
    pytester._monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert pytester.runpytest("-p", "no:xdist").ret == 0
    assert not summary.exists()
