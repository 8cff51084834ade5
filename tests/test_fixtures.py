"""The judge fixtures configured from markers, options and ini, in real pytest runs
(with and without xdist), against a scripted model."""

import json

import pytest

pytest_plugins = ["pytester"]

CONFTEST = """
import re
import pytest
from pytest_judgerel.llm import register_scripted

def oracle(messages, **params):
    user = messages[-1]["content"]
    lo, hi = map(float, re.search(r"scale from “(\\d+)” to “(\\d+)”", user).groups())
    n = int(re.search(r"pair (\\d+)", user).group(1))
    return str(round(lo + (n % 6) / 5 * (hi - lo)))

register_scripted("scripted/oracle", oracle)
register_scripted("scripted/oracle2", oracle)

@pytest.fixture
def items():
    return [{"id": f"p{i}", "sentence1": f"pair {i}", "sentence2": "x"} for i in range(12)]
"""

TESTS = """
import pytest
from pytest_judgerel import assert_icc_above, assert_scale_consistent

@pytest.mark.judge(model="scripted/oracle", template="stsb", temperature=0.3)
@pytest.mark.scale("0-5", "0-10", "0-100")
@pytest.mark.repeats(2)
def test_per_scale(judge, scale, items):
    assert judge.scale.name == scale.name and judge.temperature == 0.3 and judge.repeats == 2
    r = judge.rate(items)
    assert r.shape == (12, 2)
    assert_icc_above(r, 0.9)

@pytest.mark.judge(model="scripted/oracle", template="stsb")
@pytest.mark.scale("0-5", "0-10", "0-100")
def test_cross_scale(judge, items):
    assert [s.name for s in judge.scales] == ["0-5", "0-10", "0-100"]
    assert_scale_consistent(judge.rate_scales(items), 0.9)

def test_defaults_from_options(judge):
    assert judge.model == "scripted/oracle" and judge.repeats == 4 and judge.scale.name == "0-5"

@pytest.mark.judge(template="stsb")
@pytest.mark.judge_panel("scripted/oracle", "scripted/oracle2")
def test_panel(judge_panel, items):
    r = judge_panel.rate(items)
    assert r.n_raters == 2
"""


@pytest.mark.parametrize("xdist", [[], ["-n", "0"], ["-n", "2"], ["-p", "no:xdist"]],
                         ids=["plain", "n0", "n2", "no-xdist"])
def test_judge_fixture_from_markers(pytester, xdist):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_judging=TESTS)
    result = pytester.runpytest_subprocess(
        "--judge-model=scripted/oracle", "--judge-repeats=4", "--judgerel-json=out.json",
        f"--judgerel-cache-dir={pytester.path / 'cache'}", *xdist)
    result.assert_outcomes(passed=6)
    data = json.loads((pytester.path / "out.json").read_text())
    metrics = [r for t in data["tests"] for r in t["records"] if r["kind"] not in ("judge_run", "judge_panel")]
    assert len(metrics) == 4 and all(r["passed"] for r in metrics)
    runs = [r for t in data["tests"] for r in t["records"] if r["kind"] == "judge_run"]
    assert runs and all(r["judge"]["model"] == "scripted/oracle" for r in runs)
    panels = [r for t in data["tests"] for r in t["records"] if r["kind"] == "judge_panel"]
    assert [p["k"] for p in panels] == [2]  # the panel test records what its panel is worth
    # the second run is served from the cache shared by all workers
    again = pytester.runpytest_subprocess(
        "--judge-model=scripted/oracle", "--judge-repeats=4", "--judgerel-cache-mode=replay",
        f"--judgerel-cache-dir={pytester.path / 'cache'}", *xdist)
    again.assert_outcomes(passed=6)


def test_replay_miss_names_the_test(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_judging=TESTS)
    result = pytester.runpytest_subprocess(
        "--judge-model=scripted/oracle", "--judgerel-cache-mode=replay", "-k", "per_scale and 0-5",
        f"--judgerel-cache-dir={pytester.path / 'empty'}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*test_per_scale*0-5*", "*scripted/oracle*"])
