"""The anchors room at its edges, in-process: a partly referenced anchor set, the sample index each
anchor is asked with, failed calls counted (retries too) and shown, inconclusive configurations not
marked "judge changed", two processes writing one anchor file, and a drifted run without a monitor
alarm on the trend page."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from test_anchors import JUDGE, FakeClient, _Endpoint, _report_with, _true_calls

from pytest_judgerel.anchors.check import AnchorRun, check_anchors
from pytest_judgerel.anchors.sample import CandidatePool, served_by_configuration
from pytest_judgerel.anchors.store import read_anchor_file, record_anchor_sets
from pytest_judgerel.judging.identity import configuration_id
from pytest_judgerel.report.judge_drift import anchor_lines, mark_judge_changes
from pytest_judgerel.report.trend_html import render_trend_html

SERVED = served_by_configuration([{"kind": "judge_run", "served": [
    {"judge": JUDGE, "models": {"j-0613": 200}, "system_fingerprints": {"fp1": 200}}]}])


def _recorded(tmp_path: Path, m: int = 2) -> tuple[str, CandidatePool]:
    path = str(tmp_path / "anchors.json")
    pool = CandidatePool(size=40)
    pool.add_calls(_true_calls(100))
    check_anchors(path, pool, SERVED, AnchorRun(FakeClient(), lambda judge: _Endpoint(), reference_samples=m))
    return path, pool


def test_a_partly_referenced_set_is_completed_with_the_next_sample_indices(tmp_path: Path) -> None:
    path, pool = _recorded(tmp_path)
    data = json.loads(Path(path).read_text())
    stored = next(iter(data["configurations"].values()))
    for i, a in enumerate(stored["anchors"]):  # a hand-edited file: some anchors keep 1 reference, some none
        a["reference"] = a["reference"][:1] if i % 2 else []
    Path(path).write_text(json.dumps(data))
    client = FakeClient()
    block = check_anchors(path, pool, SERVED, AnchorRun(client, lambda judge: _Endpoint(), reference_samples=3))
    entry = next(iter(block["configurations"].values()))
    assert entry["status"] == "recorded" and entry["reference_samples"] == 3
    assert entry["calls"] == len(client.sent) == 20 * 2 + 20 * 3  # only the missing references are asked
    by_prompt: dict[str, list[int]] = {}
    for r in client.sent:
        by_prompt.setdefault(r.messages[0]["content"], []).append(r.sample_index)
    assert sorted(sorted(v) for v in by_prompt.values()) == sorted([[1, 2]] * 20 + [[0, 1, 2]] * 20)
    assert all(len(a.reference) == 3 for a in read_anchor_file(path).configurations[configuration_id(JUDGE)].anchors)


def test_fresh_samples_are_asked_with_their_own_sample_index(tmp_path: Path) -> None:
    path, pool = _recorded(tmp_path)
    client = FakeClient()
    check_anchors(path, pool, SERVED, AnchorRun(client, lambda judge: _Endpoint(), fresh_samples=2))
    per_prompt: dict[str, list[int]] = {}
    for r in client.sent:
        per_prompt.setdefault(r.messages[0]["content"], []).append(r.sample_index)
    assert per_prompt and all(sorted(v) == [0, 1] for v in per_prompt.values())


class FailingClient(FakeClient):
    """Fails the calls of chosen prompts after ``attempts`` tries each, and counts what it sent
    (first attempts and retries) as a real client does (``stats.misses``, ``stats.retries``)."""

    def __init__(self, failing: set[str], attempts: int = 2) -> None:
        super().__init__()
        self.failing, self.attempts = failing, attempts

        class _Stats:
            misses = 0
            retries = 0

        self.stats = _Stats()

    def complete_many(self, requests: list[Any], *, return_exceptions: bool = False, fresh: bool = False) -> list[Any]:
        ok = [r for r in requests if r.messages[0]["content"] not in self.failing]
        answers = iter(super().complete_many(ok, return_exceptions=return_exceptions, fresh=fresh))
        out: list[Any] = []
        for r in requests:
            self.stats.misses += 1
            if r.messages[0]["content"] in self.failing:
                self.stats.retries += self.attempts - 1
                out.append(RuntimeError("fake server error 500"))
            else:
                out.append(next(answers))
        return out


def test_failed_anchor_calls_are_counted_replaced_and_shown(tmp_path: Path) -> None:
    path, pool = _recorded(tmp_path)
    anchors = read_anchor_file(path).configurations[configuration_id(JUDGE)].anchors
    failing = {a.request["messages"][0]["content"] for a in anchors[:10]}
    client = FailingClient(failing)
    block = check_anchors(path, pool, SERVED, AnchorRun(client, lambda judge: _Endpoint()))
    entry = next(iter(block["configurations"].values()))
    assert entry["failed_calls"] == block["failed_calls"] == 10 and entry["n_errors"] == 10
    assert entry["calls"] == block["calls"] == client.stats.misses + client.stats.retries == 40 + 10
    asked = {r.messages[0]["content"] for r in client.sent}  # the 10 reserve anchors replaced the failures
    assert asked == {a.request["messages"][0]["content"] for a in anchors[10:]}
    comp = entry["comparison"]
    assert comp["n"] == 30 and comp["n_omitted"] == 10
    text = " ".join(t for t, _ in anchor_lines({"anchors": block}))
    assert "50 calls, 10 failed" in text and "10 anchor call(s) failed (RuntimeError: fake server error 500)" in text

    every = FailingClient({a.request["messages"][0]["content"] for a in anchors})
    block = check_anchors(path, pool, SERVED, AnchorRun(every, lambda judge: _Endpoint()))
    entry = next(iter(block["configurations"].values()))
    assert entry["status"] == "inconclusive" and "none of the 40 anchors asked was answered" in entry["reasons"][0]
    assert block["failed_calls"] == 40 and block["calls"] == 80
    line = anchor_lines({"anchors": block})[0]
    assert "80 calls, 40 failed" in line[0] and "none of the 40 anchors" in line[0] and line[1] == {"yellow": True}


def test_an_inconclusive_configuration_is_not_marked_judge_changed(tmp_path: Path) -> None:
    cid = configuration_id(JUDGE)
    block = {"file": "a.json", "status": "inconclusive", "calls": 40, "configurations": {cid: {
        "judge": JUDGE, "status": "inconclusive", "comparison": {"shift": 0.6, "shift_ci": [-0.1, 1.3], "scale": "0-10"},
        "reasons": ["the shift's 90% interval is not inside +/-1"]}}}
    report = _report_with(block, cid)
    assert mark_judge_changes(report) == 0
    assert "judge_changed" not in report["tests"][0]["records"][0]
    assert "judge_changed" not in report["gate"]["baseline"]["entries"][0]
    text, markup = anchor_lines(report)[0]
    assert "judge anchors inconclusive" in text and "not inside" in text and markup == {"yellow": True}


def test_two_processes_recording_one_anchor_file_keep_one_valid_file(tmp_path: Path) -> None:
    """Two processes record different configurations into one file 25 times each, at once: the file
    always parses and ends with both configurations (the lock re-reads before writing)."""
    path = tmp_path / "anchors.json"
    source = tmp_path / "source.json"
    pool = CandidatePool(size=30)
    pool.add_calls(_true_calls(40))
    check_anchors(str(source), pool, SERVED, AnchorRun(FakeClient(), lambda judge: _Endpoint(), reference_samples=2))
    script = textwrap.dedent(f"""
        import sys, dataclasses
        from pytest_judgerel.anchors.store import read_anchor_file, record_anchor_sets
        base = next(iter(read_anchor_file({str(source)!r}).configurations.values()))
        me = int(sys.argv[1])
        for i in range(25):
            judge = dict(base.judge, temperature=round(0.1 * me + 0.001 * i, 4))
            aset = dataclasses.replace(base, judge=judge)
            record_anchor_sets({str(path)!r}, {{aset.id: aset}})
            read_anchor_file({str(path)!r})  # never half-written
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [subprocess.Popen([sys.executable, "-c", script, str(me)], env=env, stderr=subprocess.PIPE, text=True)
             for me in (1, 2)]
    errors = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errors
    stored = read_anchor_file(path)
    temps = sorted(a.judge["temperature"] for a in stored.configurations.values())
    assert len(stored.configurations) == 50 and temps[0] == 0.1 and temps[-1] == round(0.2 + 0.024, 4)


def test_a_recorded_configuration_is_not_overwritten_by_a_later_writer(tmp_path: Path) -> None:
    """Two sessions recording the same configuration: the first reference stays, so every later
    session compares with one reference."""
    path, _ = _recorded(tmp_path)
    cid = configuration_id(JUDGE)
    first = read_anchor_file(path).configurations[cid]
    later = dataclasses.replace(first, recorded="2099-01-01T00:00:00+00:00")
    record_anchor_sets(path, {cid: later})
    assert read_anchor_file(path).configurations[cid].recorded == first.recorded


def _run_report(n: int, status: str, shift: float) -> dict[str, Any]:
    cid = configuration_id(JUDGE)
    entry: dict[str, Any] = {"judge": JUDGE, "status": status}
    if status != "recorded":
        entry["comparison"] = {"status": status, "shift": shift, "shift_se": 0.3, "shift_ci": [shift - 0.6, shift + 0.6],
                               "n": 30, "reference_samples": 4, "fresh_samples": 1, "margin": 1.0,
                               "noise": {"reference_sd": 0.8}}
    return {"tests": [], "anchors": {"file": "a.json", "status": status, "calls": 30, "configurations": {cid: entry}},
            "run": {"number": n}}


def test_a_drifted_run_without_a_monitor_alarm_is_shown_on_the_trend_page() -> None:
    """The last run's own comparison drifted (a noise change, no shift): the CUSUM over the shifts
    does not alarm, and the page still marks the run."""
    from pytest_judgerel.report.history import monitor_anchors

    reports = [_run_report(1, "recorded", 0.0)] + [_run_report(n, "steady", 0.05 * (-1) ** n) for n in range(2, 6)]
    reports.append(_run_report(6, "drifted", 0.0))
    info = next(iter(monitor_anchors(reports).values()))
    assert info["alarms"] == [] and info["drifted"] == [5]
    page = render_trend_html(reports, [1, 2, 3, 4, 5, 6])
    assert "judge drifted at run(s) #6" in page
