"""A session report tells the truth under pytest-xdist and lists every test pytest ran.

* A module-scoped fixture that judges is set up once per xdist worker; its calls and records reach
  the controller from each worker.  The totals count that work once (as without xdist), and what the
  workers repeated is reported apart (``totals.repeated``), never added twice.
* The JSON ``tests`` list holds every test pytest ran, with or without records, with the outcome
  pytest gave it; the outcome counts equal pytest's own.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("xdist")

SHARED = """
import pytest
from pytest_judgerel import Judge, assert_icc_above
from pytest_judgerel.llm import register_scripted


def reply(messages, **params):
    text = " ".join(m["content"] for m in messages)
    if "unreadable" in text:
        return "I would rather not give a number."    # a parse failure (and again when re-asked)
    return str((len(text) + params["sample_seed"]) % 6)


register_scripted("scripted/xdist-judge", reply)
ITEMS = [{"id": f"i{i}", "sentence1": f"a {'x' * i}", "sentence2": "unreadable" if i % 4 == 0 else f"b {i}"}
         for i in range(12)]
CLEAN = [{"id": f"c{i}", "sentence1": f"c {'y' * i}", "sentence2": f"d {i * i}"} for i in range(10)]


@pytest.fixture(scope="module")
def ratings(judgerel_client):
    return Judge(model="scripted/xdist-judge", template="stsb", client=judgerel_client).rate(ITEMS, 2)


@pytest.mark.parametrize("i", range(8))
def test_reads_the_shared_ratings(ratings, i):
    assert ratings.shape == (12, 2) and len(ratings.parse_failures) == 3 * 2


def test_own_judging(judgerel_client):
    ratings = Judge(model="scripted/xdist-judge", template="stsb", client=judgerel_client).rate(CLEAN, 2)
    assert_icc_above(ratings, -1.0)


def test_plain_pass():
    pass


@pytest.mark.skip(reason="not today")
def test_skipped():
    pass


@pytest.mark.xfail(reason="known")
def test_xfailed():
    assert False


@pytest.fixture
def broken():
    raise RuntimeError("setup breaks")


def test_errors_in_setup(broken):
    pass


def test_fails():
    assert 1 == 2
"""


def _run(pytester: pytest.Pytester, tmp_path: Path, name: str, *args: str):
    out = tmp_path / f"{name}.json"
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", f"--judgerel-cache-dir={tmp_path / 'cache'}",
                                           f"--judgerel-json={out}", *args)
    return result, json.loads(out.read_text())


def _pytest_counts(result) -> dict[str, int]:
    """pytest's own outcome counts, from its last summary line."""
    last = [line for line in result.outlines if re.search(r"\d+ (passed|failed)", line)][-1]
    words = {"error": "error", "errors": "error", "passed": "passed", "failed": "failed", "skipped": "skipped",
             "xfailed": "xfailed", "xpassed": "xpassed"}
    return {words[w]: int(n) for n, w in re.findall(r"(\d+) (\w+)", last) if w in words}


_COUNTED = ("tests", "metrics", "failed_metrics", "parse_failures", "calls", "hits", "misses", "errors",
            "prompt_tokens", "completion_tokens", "cost")


def test_totals_under_two_workers_equal_one_process_on_the_same_cached_run(pytester, tmp_path):
    pytester.makepyfile(test_shared=SHARED)
    _run(pytester, tmp_path, "record", "-n", "0")  # fills the cache
    serial, rep0 = _run(pytester, tmp_path, "serial", "-n", "0")
    parallel, rep2 = _run(pytester, tmp_path, "parallel", "-n", "2")
    workers = {t["worker"] for t in rep2["tests"] if "shared_ratings" in t["nodeid"]}
    assert len(workers) == 2, workers  # the module fixture was set up on both workers
    t0, t2 = rep0["totals"], rep2["totals"]
    assert {k: t2[k] for k in _COUNTED} == {k: t0[k] for k in _COUNTED}
    # the fixture's judge run: 12 items x 2 repeats, 3 unreadable items -> 6 failures, once
    assert t0["parse_failures"] == 6 and t0["misses"] == 0 and t0["hits"] == t0["calls"] > 0
    runs0 = [r for t in rep0["tests"] for r in t["records"] if r["kind"] == "judge_run"]
    runs2 = [r for t in rep2["tests"] for r in t["records"] if r["kind"] == "judge_run"]
    assert len(runs2) == len(runs0) == 2
    assert [r.get("fixture") for r in runs2 if r.get("fixture")] == ["module:test_shared.py::ratings"]
    # what the second worker repeated is reported apart, not hidden and not added
    assert t0["repeated"]["fixtures"] == 0 and t0["repeated"]["calls"] == 0
    assert t2["repeated"]["fixtures"] == 1 and t2["repeated"]["parse_failures"] == 6
    assert t2["repeated"]["calls"] == t2["repeated"]["hits"] == 12 * 2 + 3 * 2  # re-asks included
    assert "xdist workers repeated 1 shared fixture setup(s)" in parallel.stdout.str()
    assert "xdist workers repeated" not in serial.stdout.str()
    assert f"parse failures {t0['parse_failures']};" in parallel.stdout.str()


CONFTEST_FIXTURE = """
import pytest
from pytest_judgerel import Judge
from pytest_judgerel.llm import register_scripted

register_scripted("scripted/per-module", lambda messages, **params: str(params["sample_seed"] % 6))


@pytest.fixture(scope="module")
def module_ratings(request, judgerel_client):
    items = [{"id": f"{request.module.__name__}-{i}", "sentence1": request.module.__name__, "sentence2": str(i)}
             for i in range(5)]
    return Judge(model="scripted/per-module", template="stsb", client=judgerel_client).rate(items, 2)
"""

MODULE_TESTS = """
def test_first(module_ratings):
    assert module_ratings.shape == (5, 2)

def test_second(module_ratings):
    assert module_ratings.shape == (5, 2)
"""


def test_a_conftest_fixture_set_up_once_per_module_is_not_taken_for_a_repeat(pytester, tmp_path):
    """A module-scoped fixture of a conftest has one instance per module: two modules on two
    workers are two pieces of work, both counted (only the same instance on two workers repeats)."""
    pytester.makeconftest(CONFTEST_FIXTURE)
    pytester.makepyfile(test_alpha=MODULE_TESTS, test_beta=MODULE_TESTS)
    _run(pytester, tmp_path, "record", "-n", "0")
    _, rep0 = _run(pytester, tmp_path, "serial", "-n", "0")
    _, rep2 = _run(pytester, tmp_path, "parallel", "-n", "2", "--dist=loadfile")
    assert len({t["worker"] for t in rep2["tests"]}) == 2  # one module per worker
    assert {k: rep2["totals"][k] for k in _COUNTED} == {k: rep0["totals"][k] for k in _COUNTED}
    assert rep0["totals"]["calls"] == 2 * 5 * 2 and rep2["totals"]["repeated"]["fixtures"] == 0
    tags = sorted(r["fixture"] for t in rep2["tests"] for r in t["records"] if r["kind"] == "judge_run")
    assert tags == ["module:test_alpha.py::module_ratings", "module:test_beta.py::module_ratings"]


@pytest.mark.parametrize("workers", ["0", "2"])
def test_the_json_lists_every_test_pytest_ran_with_its_outcome(pytester, tmp_path, workers):
    pytester.makepyfile(test_shared=SHARED)
    result, rep = _run(pytester, tmp_path, f"n{workers}", "-n", workers)
    counts = _pytest_counts(result)
    assert counts == {"passed": 10, "failed": 1, "skipped": 1, "xfailed": 1, "error": 1}, counts
    listed: dict[str, int] = {}
    for t in rep["tests"]:
        listed[t["outcome"]] = listed.get(t["outcome"], 0) + 1
    assert listed == counts and rep["session"]["outcomes"] == counts
    assert rep["totals"]["tests"] == sum(counts.values()) == len({t["nodeid"] for t in rep["tests"]})
    by_id = {t["nodeid"].split("::")[-1]: t for t in rep["tests"]}
    assert by_id["test_plain_pass"] == {**by_id["test_plain_pass"], "outcome": "passed", "records": [],
                                        "calls": {}}
    assert by_id["test_errors_in_setup"]["outcome"] == "error"
    assert by_id["test_skipped"]["outcome"] == "skipped" and by_id["test_xfailed"]["outcome"] == "xfailed"
    assert by_id["test_fails"]["outcome"] == "failed"
    assert rep["gate"]["status"] == "failed"
    assert "1 test(s) failed" in rep["gate"]["reasons"] and "1 test(s) errored" in rep["gate"]["reasons"]
