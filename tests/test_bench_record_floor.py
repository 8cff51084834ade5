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
