"""The anchors room in-process: the file format, the deterministic sample, recording and re-judging
through a client (fresh calls only), the report block and the 'judge changed' marks."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_judgerel.anchors.check import AnchorRun, check_anchors, served_block
from pytest_judgerel.anchors.sample import CandidatePool, served_by_configuration
from pytest_judgerel.anchors.store import AnchorFile, read_anchor_file, write_anchor_file
from pytest_judgerel.errors import ConfigError
from pytest_judgerel.judging.identity import configuration_id
from pytest_judgerel.report.judge_drift import anchor_lines, mark_judge_changes
from pytest_judgerel.report.schema import validate_report


JUDGE = {"model": "openai/j", "template": "stsb", "template_hash": "abc", "system_hash": None, "scale": "0-10",
         "axis": None, "temperature": 0.7, "top_p": None, "max_tokens": 512, "seed": None, "api_base": "http://x/v1"}
PARSER = {"output": "number", "axes": None, "axis": None,
          "scale": {"low": 0, "high": 10, "step": 1, "fractional": True, "name": "0-10"}}


def _calls(n: int, cached: bool = False, rng_seed: int = 0) -> list[dict[str, Any]]:
    rng = random.Random(rng_seed)
    out = []
    for i in range(n):
        for r in range(2):
            out.append({"judge": JUDGE, "parser": PARSER, "item": f"i{i}", "score": float(rng.randint(0, 10)),
                        "cached": cached, "server_model": "j-0613", "system_fingerprint": "fp1",
                        "request": {"model": "openai/j", "messages": [{"role": "user", "content": f"rate item {i}"}],
                                    "sampling": {"temperature": 0.7, "max_tokens": 512}, "grammar": None,
                                    "namespace": "", "sample_index": r}})
    return out


@dataclass
class _Resp:
    text: str
    model: str = "j-0613"
    system_fingerprint: str | None = "fp1"


class FakeClient:
    """Answers each prompt with its item's true score plus noise (+ ``shift``); counts fresh calls."""

    def __init__(self, shift: float = 0.0) -> None:
        self.shift = shift
        self.sent: list[Any] = []
        self.rng = random.Random(5)

    def complete_many(self, requests: list[Any], *, return_exceptions: bool = False, fresh: bool = False) -> list[Any]:
        assert fresh, "anchors must never be served from the cache"
        self.sent += requests
        out = []
        for req in requests:
            item = int(req.messages[0]["content"].rsplit(" ", 1)[1])
            base = 1 + item % 8
            out.append(_Resp(str(round(min(10, max(0, base + self.shift + self.rng.gauss(0, 0.5)))))))
        return out


class _Endpoint:
    def request_fields(self) -> dict[str, Any]:
        return {"model": "openai/j", "api_base": "http://x/v1", "api_key": None}


def _run(client: FakeClient) -> AnchorRun:
    return AnchorRun(client, lambda judge: _Endpoint(), sample_size=30, reference_samples=2)


def _true_calls(n: int) -> list[dict[str, Any]]:
    """Session calls whose scores follow the same truth as :class:`FakeClient`."""
    calls = _calls(n)
    rng = random.Random(9)
    for c in calls:
        item = int(c["item"][1:])
        c["score"] = float(round(min(10, max(0, 1 + item % 8 + rng.gauss(0, 0.5)))))
    return calls


def test_configuration_id_maps_metric_provenance_to_the_judge_configuration() -> None:
    provenance = {**JUDGE, "design": "repeats", "repeats": 2, "provider_models": ["j-0613"]}
    assert configuration_id(provenance) == configuration_id(JUDGE) is not None
    assert configuration_id({**JUDGE, "temperature": 0.0}) != configuration_id(JUDGE)
    assert configuration_id({**JUDGE, "model": ["a", "b"]}) is None and configuration_id(None) is None


def test_the_sample_is_the_same_whatever_the_order_and_the_split() -> None:
    calls = _calls(100)
    one = CandidatePool(size=30)
    one.add_calls(calls)
    shuffled = list(calls)
    random.Random(1).shuffle(shuffled)
    merged = CandidatePool(size=30)
    for k in range(4):  # four "workers" (or tests), each keeping its own bottom-k
        part = CandidatePool(size=30)
        part.add_calls(shuffled[k::4])
        merged.add_selected(json.loads(json.dumps(part.selected())))  # what travels is plain JSON
    ids = [c["id"] for c in one.selected()]
    assert len(ids) == 30 and ids == [c["id"] for c in merged.selected()]
    # both repeats of a prompt answered by the model this session are reference samples
    assert all(len(c["fresh_scores"]) == 2 for c in one.selected())
    cached = CandidatePool(size=30)
    cached.add_calls(_calls(100, cached=True))
    assert all(c["fresh_scores"] == [] for c in cached.selected())


def test_record_then_steady_then_drifted(tmp_path: Path) -> None:
    path = str(tmp_path / "anchors.json")
    pool = CandidatePool(size=30)
    pool.add_calls(_true_calls(80))
    served = served_by_configuration([{"kind": "judge_run", "served": [
        {"judge": JUDGE, "models": {"j-0613": 160}, "system_fingerprints": {"fp1": 160}}]}])
    client = FakeClient()
    block = check_anchors(path, pool, served, _run(client))
    cid = configuration_id(JUDGE)
    assert block["status"] == "recorded" and block["written"] and block["calls"] == 0 and not client.sent
    stored = read_anchor_file(path).configurations[cid]
    assert len(stored.anchors) == 30 and stored.reference_samples == 2
    assert stored.server["system_fingerprints"] == {"fp1": 60}

    block = check_anchors(path, pool, served, _run(client))
    entry = block["configurations"][cid]
    assert entry["status"] == "steady", entry
    assert block["calls"] == 30 == len(client.sent) and not block["written"]
    assert entry["fresh_server"] == {"models": {"j-0613": 30}, "system_fingerprints": {"fp1": 30}}
    assert entry["server_changes"] == []

    moved = FakeClient(shift=2.5)
    block = check_anchors(path, pool, served, _run(moved))
    entry = block["configurations"][cid]
    assert block["status"] == entry["status"] == "drifted"
    assert entry["comparison"]["shift"] > 1.5
    report = _report_with(block, cid)
    validate_report(report)
    assert mark_judge_changes(report) == 1
    assert report["tests"][0]["records"][0]["judge_changed"].startswith("judge changed")
    assert report["gate"]["baseline"]["entries"][0]["judge_changed"].startswith("judge changed")
    text = " ".join(t for t, _ in anchor_lines(report))
    assert "judge anchors drifted" in text and "DRIFTED" in text and "1 verdict(s) marked" in text



def test_the_reserve_is_asked_only_when_the_first_stage_is_not_clearly_steady(tmp_path: Path) -> None:
    """40 anchors: 30 re-judged each session, the 10 in reserve only when those 30 are not clearly steady."""
    path = str(tmp_path / "anchors.json")
    pool = CandidatePool(size=40)
    pool.add_calls(_true_calls(100))
    served = served_by_configuration([{"kind": "judge_run", "served": [
        {"judge": JUDGE, "models": {"j-0613": 200}, "system_fingerprints": {"fp1": 200}}]}])
    check_anchors(path, pool, served, AnchorRun(FakeClient(), lambda judge: _Endpoint()))
    cid = configuration_id(JUDGE)
    stored = read_anchor_file(path).configurations[cid]
    assert len(stored.anchors) == 40
    first_30 = {a.request["messages"][0]["content"] for a in stored.anchors[:30]}

    seen_calls = set()
    for seed in range(8):
        client = FakeClient()
        client.rng = random.Random(seed)
        entry = check_anchors(path, pool, served, AnchorRun(client, lambda judge: _Endpoint()))["configurations"][cid]
        comp = entry["comparison"]
        assert entry["status"] == "steady" and comp["screened"] == 30
        assert entry["calls"] == len(client.sent) == 40 - comp["reserve_skipped"]
        assert {r.messages[0]["content"] for r in client.sent[:30]} == first_30  # the first stage is fixed
        if comp["reserve_skipped"]:
            assert comp["n"] == 30 and comp["first_stage"] is None and "not asked" in comp["reasons"][-1]
        else:
            assert comp["n"] == 40 and comp["first_stage"]["n"] == 30 and "decided on all 40" in comp["reasons"][-1]
        seen_calls.add(entry["calls"])
    assert 30 in seen_calls  # a clearly steady judge usually costs the first stage only

    moved = FakeClient(shift=2.5)
    entry = check_anchors(path, pool, served, AnchorRun(moved, lambda judge: _Endpoint()))["configurations"][cid]
    assert entry["status"] == "drifted" and entry["calls"] == len(moved.sent) == 40  # drift is decided on all 40
    assert entry["comparison"]["first_stage"]["status"] == "drifted"


def _report_with(block: dict[str, Any], cid: str | None) -> dict[str, Any]:
    rec = {"kind": "icc", "statistic": "ICC(A,1)", "value": 0.8, "ci": [0.7, 0.9], "n": 30, "k": 2,
           "threshold": 0.5, "direction": "min", "passed": True, "judge": {**JUDGE, "design": "repeats", "repeats": 2}}
    return {"schema": "pytest-judgerel/report", "version": 1, "created": "x", "settings": {}, "report_only": False,
            "tests": [{"nodeid": "t.py::a", "outcome": "passed", "records": [rec], "calls": {}}],
            "totals": {k: 0 for k in ("tests", "metrics", "failed_metrics", "parse_failures", "calls", "hits",
                                      "misses", "retries", "errors", "prompt_tokens", "completion_tokens", "cost")}
            | {"hit_rate": None},
            "crashed": [], "judges": {}, "gate": {"status": "passed", "reasons": [], "baseline": {
                "path": "b.json", "counts": {}, "entries": [{"nodeid": "t.py::a", "metric": "ICC(A,1)",
                                                              "status": "regression"}]}},
            "anchors": block}


def test_a_server_fingerprint_change_is_named(tmp_path: Path) -> None:
    path = str(tmp_path / "anchors.json")
    pool = CandidatePool(size=30)
    pool.add_calls(_true_calls(40))
    served = {configuration_id(JUDGE): {"judge": JUDGE, "models": {"j-0613": 80}, "system_fingerprints": {"fp1": 80}}}
    check_anchors(path, pool, served, _run(FakeClient()))
    client = FakeClient()
    block = check_anchors(path, pool, {next(iter(served)): {**served[next(iter(served))],
                                                             "system_fingerprints": {"fp1": 40, "fp2": 40}}},
                          _run(client))
    changes = next(iter(block["configurations"].values()))["server_changes"]
    assert any("2 system_fingerprints answered this session: fp1, fp2" in c for c in changes)
    assert any("system_fingerprint fp1 -> fp1, fp2" in c for c in changes)
    lines = anchor_lines({"anchors": block})
    assert any(t.startswith("judge server changed") for t, _ in lines)


def test_a_hand_written_set_with_human_labels(tmp_path: Path) -> None:
    path = tmp_path / "anchors.json"
    anchors = [{"item": f"h{i}", "human": float(1 + i % 8),
                "request": {"model": "openai/j", "messages": [{"role": "user", "content": f"rate item {i}"}],
                            "sampling": {"temperature": 0.7}}} for i in range(20)]
    path.write_text(json.dumps({"schema": "pytest-judgerel/anchors", "version": 1,
                                "configurations": {"mine": {"judge": JUDGE, "parser": PARSER, "anchors": anchors}}}))
    served = {configuration_id(JUDGE): {"judge": JUDGE, "models": {}, "system_fingerprints": {}}}
    client = FakeClient()
    block = check_anchors(str(path), CandidatePool(), served, _run(client))
    entry = block["configurations"][configuration_id(JUDGE)]
    assert entry["status"] == "recorded" and entry["calls"] == 40 == len(client.sent)  # 2 reference samples each
    assert entry["human_agreement"]["n"] == 20 and entry["human_agreement"]["value"] > 0.8
    block = check_anchors(str(path), CandidatePool(), served, _run(FakeClient()))
    entry = block["configurations"][configuration_id(JUDGE)]
    assert entry["status"] == "steady" and entry["human_agreement"]["value"] > 0.8
    data = json.loads(path.read_text())
    assert all(a["human"] is not None and len(a["reference"]) == 2
               for a in next(iter(data["configurations"].values()))["anchors"])


@pytest.mark.parametrize("content, message", [
    ("{", "cannot read the anchor file"),
    ('{"schema": "other"}', "is not an anchor file"),
    ('{"schema": "pytest-judgerel/anchors", "version": 9, "configurations": {}}', "upgrade pytest-judgerel"),
    ('{"schema": "pytest-judgerel/anchors", "version": 1, "configurations": {"x": {"judge": {}}}}', "'judge' must"),
])
def test_a_damaged_anchor_file_is_named_and_never_overwritten(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "anchors.json"
    path.write_text(content)
    with pytest.raises(ConfigError, match=message):
        read_anchor_file(path)
    pool = CandidatePool()
    pool.add_calls(_true_calls(40))
    block = check_anchors(str(path), pool, {}, _run(FakeClient()))
    assert block["status"] == "error" and message.strip("'") in block["error"]
    assert path.read_text() == content


def test_the_file_round_trips_and_the_block_without_a_file_validates(tmp_path: Path) -> None:
    pool = CandidatePool()
    pool.add_calls(_true_calls(40))
    path = tmp_path / "a.json"
    check_anchors(str(path), pool, {}, _run(FakeClient()))
    first = read_anchor_file(path)
    write_anchor_file(tmp_path / "b.json", first)
    assert (tmp_path / "b.json").read_text() == path.read_text()
    assert read_anchor_file(tmp_path / "missing.json").configurations == AnchorFile().configurations
    block = served_block({"c" * 16: {"judge": JUDGE, "models": {"a": 1, "b": 2}, "system_fingerprints": {}}})
    validate_report(_report_with(block, None))
    assert block["status"] == "off" and anchor_lines({"anchors": block})[0][0].startswith("judge server changed")
