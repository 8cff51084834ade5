"""Silent judge drift, end to end: a 400-call suite against the fake OpenAI-compatible
server on loopback, its answers recorded once and then replayed from the cache; the anchors are
re-judged fresh every session.  Four drift-free sessions say ``steady``; a server whose answers
shift under the same model name and ``system_fingerprint`` makes the next session say ``drifted``
while the cached gates do not move; the fingerprint reaches the JSON; the history attributes the
change to the judge and draws the trend page."""

from __future__ import annotations

import hashlib
import json
import random

import pytest

from pytest_judgerel.testing.fake_server import FakeLLMServer, FakeRequest
from pytest_judgerel.report import cli

# load the statistics now: pytester restores sys.modules after each test, and numpy/scipy cannot load twice
import pytest_judgerel.stats.anchor_drift  # noqa: E402,F401
import pytest_judgerel.stats.cusum  # noqa: E402,F401
import pytest_judgerel.stats.drift_attribution  # noqa: E402,F401
import scipy.stats  # noqa: E402,F401

SUITE = '''
import pytest
from pytest_judgerel import assert_icc_above

ITEMS = [{"id": f"i{i}", "sentence1": f"A sentence number {i} about subject {i % 17}.",
          "sentence2": f"Another sentence {(i * 7) % 23} on matter {i % 5}."} for i in range(200)]

@pytest.mark.judge(template="stsb", temperature=0.7)
@pytest.mark.scale("0-10")
@pytest.mark.repeats(2)
def test_judge_is_reliable(judge):
    assert_icc_above(judge.rate(ITEMS), 0.5)
'''



class ShiftingJudge:
    """Replies like a judge: an item's true score plus sampling noise; ``shift`` moves every score
    (a silent model update behind the same name and fingerprint)."""

    def __init__(self) -> None:
        self.shift = 0.0

    def __call__(self, request: FakeRequest) -> str:
        prompt = request.messages[-1]["content"]
        base = 1 + int(hashlib.sha256(prompt.encode()).hexdigest()[:8], 16) % 8
        seed = int(hashlib.sha256(json.dumps(request.body, sort_keys=True).encode()).hexdigest()[:8], 16)
        noise = random.Random(seed + 7919 * request.occurrence).gauss(0, 0.6)
        return str(round(min(10.0, max(0.0, base + self.shift + noise))))


@pytest.fixture
def server():
    judge = ShiftingJudge()
    with FakeLLMServer(latency=0.0, responder=judge) as srv:
        srv.system_fingerprint = "fp_judge_v1"
        srv.judge = judge  # type: ignore[attr-defined]
        yield srv


def _session(pytester: pytest.Pytester, server: FakeLLMServer, n: int, mode: str) -> dict:
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:randomly", "-n", "0", "--judge-model=openai/judge-v1",
        f"--judge-api-base={server.url}", f"--judgerel-cache-mode={mode}", "--judgerel-anchors=anchors.json",
        "--judgerel-history=history", f"--judgerel-json=run{n}.json")
    assert result.ret == 0, result.stdout.str()[-3000:] + result.stderr.str()[-2000:]
    report = json.loads((pytester.path / f"run{n}.json").read_text())
    report["_stdout"] = result.stdout.str()
    return report


def _only(report: dict) -> dict:
    configs = report["anchors"]["configurations"]
    assert len(configs) == 1, configs
    return next(iter(configs.values()))


def test_drift_is_caught_under_the_same_name_and_fingerprint(pytester: pytest.Pytester, server) -> None:
    pytester.makepyfile(test_suite=SUITE)

    first = _session(pytester, server, 1, "record")  # records the suite's answers and the anchors
    # 4 reference samples per anchor on 0-10: the suite's own 2 repeats and 2 asked fresh (40 x 2 calls)
    assert first["totals"]["calls"] == 480 and first["totals"]["misses"] == 480
    entry = _only(first)
    assert entry["status"] == "recorded" and entry["anchors"] == 40  # 30 re-judged each session, 10 in reserve
    assert entry["calls"] == 80 and entry["reference_samples"] == 4
    assert entry["served"]["system_fingerprints"] == {"fp_judge_v1": 400}
    assert entry["reference_server"]["system_fingerprints"] == {"fp_judge_v1": 160}
    anchors = json.loads((pytester.path / "anchors.json").read_text())
    assert anchors["schema"] == "pytest-judgerel/anchors" and anchors["version"] == 1
    stored = next(iter(anchors["configurations"].values()))
    assert len(stored["anchors"]) == 40 and all(len(a["reference"]) == 4 for a in stored["anchors"])
    assert stored["anchors"][0]["request"]["sampling"]["temperature"] == 0.7
    assert "judge anchors recorded" in first["_stdout"]

    values = []
    for n in range(2, 6):  # four drift-free sessions: the suite replays from the cache, the anchors are fresh
        rep = _session(pytester, server, n, "replay")
        entry = _only(rep)
        assert entry["status"] == "steady", entry
        calls = entry["calls"]  # 30, or 40 when the first 30 were not clearly steady and the reserve was asked
        assert calls == 30 + 10 - entry["comparison"]["reserve_skipped"] and entry["comparison"]["screened"] == 30
        assert rep["totals"]["misses"] == calls and rep["totals"]["calls"] == 400 + calls  # only the anchors went out
        assert calls <= 0.10 * 400  # the anchors cost at most 10% of the suite
        assert entry["fresh_server"]["system_fingerprints"] == {"fp_judge_v1": calls}
        assert "judge anchors steady" in rep["_stdout"]
        values.append(next(r for r in rep["tests"][0]["records"] if r.get("statistic"))["value"])

    server.judge.shift = 2.0  # type: ignore[attr-defined]  # same name, same fingerprint
    drifted = _session(pytester, server, 6, "replay")
    entry = _only(drifted)
    assert entry["status"] == "drifted" and drifted["anchors"]["status"] == "drifted"
    assert entry["comparison"]["shift"] > 1.0 and entry["comparison"]["shift_ci"][0] > 0
    record = next(r for r in drifted["tests"][0]["records"] if r.get("statistic"))
    assert record["value"] == values[-1]  # the cached gate did not move ...
    assert record["judge_changed"].startswith("judge changed")  # ... but its judge is marked as changed
    assert drifted["anchors"]["marked_records"] == 1
    out = drifted["_stdout"]
    assert "judge anchors drifted" in out and "DRIFTED" in out and "fp_judge_v1" in out

    # the history: the monitor alarms at the last run and the change is the judge's
    history = str(pytester.path / "history")
    code = cli.main(["history", "compare", history])
    assert code == 0
    code = cli.main(["history", "html", history, "-o", str(pytester.path / "trend.html")])
    assert code == 0
    page = (pytester.path / "trend.html").read_text()
    assert page.count("<svg") >= 2 and "judge drifted" in page and "#6" in page


def test_history_compare_says_judge_drifted(pytester: pytest.Pytester, server, capsys) -> None:
    """Two recorded runs then a drifted one: ``history compare`` names the judge, not the system."""
    pytester.makepyfile(test_suite=SUITE.replace("range(200)", "range(60)"))
    _session(pytester, server, 1, "record")
    _session(pytester, server, 2, "replay")
    server.judge.shift = -2.0  # type: ignore[attr-defined]
    _session(pytester, server, 3, "replay")
    capsys.readouterr()
    assert cli.main(["history", "compare", str(pytester.path / "history")]) == 0
    out = capsys.readouterr().out
    assert "attribution: judge drifted" in out, out
