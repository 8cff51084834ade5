"""Silent judge drift at its edges, end to end against the fake OpenAI-compatible server on loopback:
anchor calls that fail (counted with their retries, shown, replaced from the reserve; all failing:
inconclusive), a damaged anchor file (a usage error, the file kept as it is), and a fingerprint
change only the anchors' fresh answers see (in the history, named by ``history compare``)."""

from __future__ import annotations

import json
from typing import Any, Mapping

import pytest

from pytest_judgerel.report import cli
from pytest_judgerel.testing.fake_server import FakeLLMServer, FakeRequest

# load the statistics now: pytester restores sys.modules after each test, and numpy/scipy cannot load twice
import pytest_judgerel.stats.anchor_drift  # noqa: E402,F401
import pytest_judgerel.stats.cusum  # noqa: E402,F401
import pytest_judgerel.stats.drift_attribution  # noqa: E402,F401
import scipy.stats  # noqa: E402,F401

from test_anchors_session import SUITE, ShiftingJudge

SMALL_SUITE = SUITE.replace("range(200)", "range(60)")


class FailingServer(FakeLLMServer):
    """Answers 500 to every request whose last message is one of ``failing``."""

    failing: set[str] = set()

    def _admit(self, body: dict, headers: Mapping[str, str]) -> tuple[FakeRequest, str | None]:
        req, fault = super()._admit(body, headers)
        if str((req.messages or [{}])[-1].get("content")) in self.failing:
            with self._lock:
                self.log[req.index]["fault"] = "500"
            return req, "500"
        return req, fault


@pytest.fixture
def server():
    judge = ShiftingJudge()
    with FailingServer(latency=0.0, responder=judge) as srv:
        srv.failing = set()
        srv.system_fingerprint = "fp_judge_v1"
        yield srv


def _session(pytester: pytest.Pytester, server: FakeLLMServer, n: int, mode: str, ret: int = 0) -> dict[str, Any]:
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:randomly", "-n", "0", "--judge-model=openai/judge-v1",
        f"--judge-api-base={server.url}", f"--judgerel-cache-mode={mode}", "--judgerel-anchors=anchors.json",
        "--judgerel-history=history", f"--judgerel-json=run{n}.json", "--judgerel-max-attempts=2")
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == ret, out[-4000:]
    if ret:
        return {"_stdout": out}
    report = json.loads((pytester.path / f"run{n}.json").read_text())
    report["_stdout"] = out
    return report


def _only(report: dict[str, Any]) -> dict[str, Any]:
    configs = report["anchors"]["configurations"]
    assert len(configs) == 1, configs
    return next(iter(configs.values()))


def _prompts(pytester: pytest.Pytester) -> list[str]:
    stored = next(iter(json.loads((pytester.path / "anchors.json").read_text())["configurations"].values()))
    return [a["request"]["messages"][-1]["content"] for a in stored["anchors"]]


def test_failed_anchor_calls_are_counted_shown_and_replaced(pytester: pytest.Pytester, server) -> None:
    pytester.makepyfile(test_suite=SMALL_SUITE)
    _session(pytester, server, 1, "record")
    prompts = _prompts(pytester)
    server.failing = set(prompts[:10])  # ten of the first stage's anchors fail, every attempt
    before = len(server.log)
    rep = _session(pytester, server, 2, "replay")
    entry = _only(rep)
    sent = server.log[before:]
    assert entry["failed_calls"] == rep["anchors"]["failed_calls"] == 10
    assert entry["calls"] == rep["anchors"]["calls"] == len(sent) == 40 + 10  # each failure was tried twice
    assert sum(1 for e in sent if e["fault"] == "500") == 20
    asked = {e["body"]["messages"][-1]["content"] for e in sent}
    assert asked == set(prompts)  # the ten reserve anchors replaced the ten that failed
    assert entry["comparison"]["n"] == 30 and entry["status"] in ("steady", "drifted")
    assert "(50 calls, 10 failed," in rep["_stdout"] and "10 anchor call(s) failed" in rep["_stdout"]

    server.failing = set(prompts)  # every anchor call fails
    before = len(server.log)
    rep = _session(pytester, server, 3, "replay")
    entry = _only(rep)
    assert entry["status"] == "inconclusive" and rep["anchors"]["status"] == "inconclusive"
    assert "none of the 40 anchors asked was answered" in entry["reasons"][0]
    assert entry["calls"] == len(server.log) - before == 80 and entry["failed_calls"] == 40
    assert "judge anchors inconclusive (80 calls, 40 failed," in rep["_stdout"]


@pytest.mark.parametrize("damage", ["truncated", "empty", "bad score"])
def test_a_damaged_anchor_file_fails_the_session_and_is_kept(pytester: pytest.Pytester, server, damage: str) -> None:
    pytester.makepyfile(test_suite=SMALL_SUITE)
    _session(pytester, server, 1, "record")
    path = pytester.path / "anchors.json"
    text = path.read_text()
    damaged = {"truncated": text[: len(text) // 2], "empty": "",
               "bad score": text.replace('"reference": [', '"reference": ["seven", ', 1)}[damage]
    path.write_text(damaged)
    before = len(server.log)
    out = _session(pytester, server, 2, "replay", ret=pytest.ExitCode.USAGE_ERROR)["_stdout"]
    assert "pytest-judgerel:" in out and "anchor file" in out and "left as it is" in out
    assert ("a score must be a finite number" in out) if damage == "bad score" else ("cannot read the anchor file" in out)
    assert path.read_text() == damaged  # untouched
    assert len(server.log) == before  # nothing was asked


def test_a_fingerprint_only_the_anchors_see_reaches_history_compare(pytester: pytest.Pytester, server, capsys) -> None:
    pytester.makepyfile(test_suite=SMALL_SUITE)
    _session(pytester, server, 1, "record")
    _session(pytester, server, 2, "replay")
    server.system_fingerprint = "fp_judge_v2"  # the backend changed; the suite's answers come from the cache
    server.reported_model = "judge-v1-0925"
    rep = _session(pytester, server, 3, "replay")
    entry = _only(rep)
    assert entry["served"]["system_fingerprints"] == {"fp_judge_v1": 120}  # the cache keeps the old one
    assert set(entry["fresh_server"]["system_fingerprints"]) == {"fp_judge_v2"}
    assert set(entry["fresh_server"]["models"]) == {"judge-v1-0925"}
    runs = sorted((pytester.path / "history").glob("*.json"))
    stored = next(iter(json.loads(runs[-1].read_text())["anchors"]["configurations"].values()))
    assert set(stored["fresh_server"]["system_fingerprints"]) == {"fp_judge_v2"}  # in the history
    capsys.readouterr()
    assert cli.main(["history", "compare", str(pytester.path / "history")]) == 0
    out = capsys.readouterr().out
    assert "system_fingerprint fp_judge_v1 -> fp_judge_v2 (the anchors' fresh answers)" in out, out
    assert "model openai/judge-v1 -> judge-v1-0925 (the anchors' fresh answers)" in out or \
        "-> judge-v1-0925 (the anchors' fresh answers)" in out, out
    assert "the judge's server changed too" in out, out
