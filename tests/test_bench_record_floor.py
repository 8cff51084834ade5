"""benchmarks/harness/record_floor.py: the floor the wire benchmarks hold record mode's CPU goal
against does the work it claims (every call sent, keyed as the client keys it, locked, stored as the
store variant says), on a real loopback server and a real cache."""

from __future__ import annotations

import pytest

from benchmarks.harness.record_floor import record_floor_run
from pytest_judgerel.llm.disk_backend import DiskCacheBackend
from pytest_judgerel.llm.keys import cache_key
from pytest_judgerel.llm.request import LLMRequest
from pytest_judgerel.testing import FakeLLMServer


def _requests(url: str, n: int) -> list[LLMRequest]:
    return [LLMRequest(model="openai/floor", api_base=url, sample_index=i % 3,
                       messages=({"role": "user", "content": f"rate item {i // 3} from 0 to 5"},)) for i in range(n)]


@pytest.mark.parametrize("store", ["entry", "answer", "none"])
def test_every_call_is_sent_and_stored_as_the_variant_says(tmp_path, store):
    with FakeLLMServer(latency=0) as srv:
        requests = _requests(srv.url, 30)
        cpu, wall = record_floor_run(srv.url, requests, 4, str(tmp_path / "c"), store=store)
        sent = srv.requests
    assert sent == 30  # the warm-up calls (4) and the timed ones (26): each once
    assert cpu > 0 and wall > 0
    backend = DiskCacheBackend(tmp_path / "c")
    try:
        stored = dict(backend.iter_entries())
        if store == "none":
            assert stored == {}
            return
        assert set(stored) == {cache_key(r) for r in requests}  # the client's own keys
        entry = stored[cache_key(requests[4])]
        assert entry["response"]["text"].strip() != ""
        assert entry["request"]["sample_index"] == (requests[4].sample_index if store == "entry" else 0)
        assert ("messages" in entry["request"]) == (store == "entry")
    finally:
        backend.close()


def test_a_stored_answer_is_not_measured_as_a_miss(tmp_path):
    with FakeLLMServer(latency=0) as srv:
        requests = _requests(srv.url, 8)
        record_floor_run(srv.url, requests, 2, str(tmp_path / "c"))
        with pytest.raises(AssertionError, match="answered before"):
            record_floor_run(srv.url, requests, 2, str(tmp_path / "c"))


def test_an_unknown_store_is_refused(tmp_path):
    with pytest.raises(ValueError, match="store must be one of"):
        record_floor_run("http://127.0.0.1:9/v1", [], 1, str(tmp_path), store="all")


def test_the_bound_line_says_where_the_record_goal_can_hold_for_a_judge():
    """bench_wire's INFO line: the floor, the answer alone and a judge's own work added, against 1.5x raw."""
    from benchmarks.bench_wire import record_bound

    def line(floor: float, answer: float, own: float) -> str:
        raw = 0.2e-3
        row = {"aiohttp": (1.0, raw), "floor": (1.0, floor * raw), "floor_answer": (1.0, answer * raw),
               "record": (1.0, 2.0 * raw)}
        return record_bound(64, row, own * raw)

    assert "1.20x with a judge's own work (+0.10x)" in line(1.3, 1.1, 0.1)
    assert "whatever an entry holds" in line(1.7, 1.6, 0.0) and "for a judge" not in line(1.7, 1.6, 0.0)
    assert "cannot hold for a judge on this cache design" in line(1.6, 1.45, 0.1)
    assert "only with an entry smaller than today's" in line(1.45, 1.2, 0.1)  # 1.45 + 0.1 over, 1.2 + 0.1 under
    assert "leaves 0.10x of raw for the rest" in line(1.3, 1.1, 0.1) and "+0.70x over its floor" in line(1.3, 1.1, 0.1)


def test_a_judges_own_work_is_measured_per_call():
    from benchmarks.bench_scale_study import study_items
    from benchmarks.bench_wire import judge_own_cpu
    from pytest_judgerel import Judge
    from pytest_judgerel.llm import LLMClient, LLMSettings

    judge = Judge(model="openai/bench-judge", template="stsb", scale="0-5", api_base="http://127.0.0.1:9/v1",
                  api_key="sk-bench", client=LLMClient(LLMSettings(cache_mode="off")))
    own = judge_own_cpu(judge, study_items(20), judge._judge_scale("0-5"), 3, rounds=1)
    assert 0 < own < 0.01  # seconds per call: rendering, a request and a parse, no call sent
