"""Grouped cache writes (pytest_judgerel/llm/write_behind.py): answers stored in one transaction per
flush, key locks released only once stored, nothing lost at the end of a batch or on an error."""

from __future__ import annotations

import asyncio

import pytest

from pytest_judgerel.errors import CacheCorruptError
from pytest_judgerel.llm import FakeLLMServer, LLMClient, LLMRequest, LLMSettings
from pytest_judgerel.llm.cache import open_backend
from pytest_judgerel.llm.write_behind import WriteBehind


class _Backend:
    def __init__(self, events, fail=False):
        self.events, self.fail = events, fail

    def set_many(self, entries):
        self.events.append(("set_many", sorted(entries)))
        if self.fail:
            raise CacheCorruptError("disk full")


class _Lock:
    def __init__(self, events, name):
        self.events, self.name = events, name

    def release(self):
        self.events.append(("release", self.name))


def _run(coro):
    return asyncio.run(coro)


def test_entries_wait_then_go_in_one_group_before_their_locks_are_released():
    events: list = []

    async def scenario():
        writes = WriteBehind(_Backend(events), delay=10.0)
        for key in ("a", "b", "c"):
            writes.put(key, {"k": key}, _Lock(events, key))
        assert events == [] and writes.get("b") == {"k": "b"} and len(writes) == 3
        writes.flush()
        assert writes.get("b") is None and writes.flushes == 1

    _run(scenario())
    assert events == [("set_many", ["a", "b", "c"]), ("release", "a"), ("release", "b"), ("release", "c")]


def test_timer_flushes_after_the_delay_and_limit_flushes_at_once():
    events: list = []

    async def scenario():
        writes = WriteBehind(_Backend(events), delay=0.02, limit=3)
        writes.put("a", {}, None)
        await asyncio.sleep(0.1)
        assert events == [("set_many", ["a"])]
        for key in ("x", "y", "z"):
            writes.put(key, {}, None)
        assert events[-1] == ("set_many", ["x", "y", "z"])  # the limit, without waiting

    _run(scenario())


def test_a_failed_store_releases_the_locks_and_raises():
    events: list = []

    async def scenario():
        writes = WriteBehind(_Backend(events, fail=True), delay=10.0)
        writes.put("a", {}, _Lock(events, "a"))
        with pytest.raises(CacheCorruptError, match="disk full"):
            writes.flush()

    _run(scenario())
    assert events == [("set_many", ["a"]), ("release", "a")]


def test_an_error_met_by_the_timer_is_raised_by_the_next_flush():
    events: list = []

    async def scenario():
        writes = WriteBehind(_Backend(events, fail=True), delay=0.01)
        writes.put("a", {}, None)
        await asyncio.sleep(0.1)  # the timer's flush failed quietly
        with pytest.raises(CacheCorruptError):
            writes.flush()
        writes.flush()  # raised once, not forever

    _run(scenario())


def test_record_mode_groups_writes_and_every_answer_is_stored_when_the_batch_returns(tmp_path):
    with FakeLLMServer(latency=0.03) as srv:
        client = LLMClient(LLMSettings(cache_dir=tmp_path / "c", max_concurrency=8))
        reqs = [LLMRequest(model="openai/j", api_base=srv.url, api_key="k",
                           messages=[{"role": "user", "content": f"item {i} from 0 to 5"}]) for i in range(40)]
        texts = [r.text for r in client.complete_many(reqs)]
        # before close: another reader (another process would be the same) sees all 40
        backend = open_backend(tmp_path / "c")
        stored = {k: e["response"]["text"] for k, e in backend.iter_entries()}
        backend.close()
        assert sorted(stored.values()) == sorted(texts) and len(stored) == 40
        assert 1 <= client._writes.flushes < 40  # grouped: fewer transactions than answers
        # the same requests again are hits, none reaches the server
        before = srv.requests
        assert all(r.cached for r in client.complete_many(reqs)) and srv.requests == before
        client.close()


def test_identical_request_waiting_to_be_stored_is_served_from_memory(tmp_path):
    """An answer queued for storage (not yet flushed) serves an identical request of this process,
    and closing the client stores it."""
    from pytest_judgerel.llm.backend import make_entry
    from pytest_judgerel.llm.keys import cache_key, key_fields
    from pytest_judgerel.llm.runtime import runtime

    with FakeLLMServer(latency=0) as srv:
        client = LLMClient(LLMSettings(cache_dir=tmp_path / "c"))
        warm = LLMRequest(model="openai/j", api_base=srv.url, api_key="k", messages=[{"role": "user", "content": "w"}])
        req = LLMRequest(model="openai/j", api_base=srv.url, api_key="k", messages=[{"role": "user", "content": "q"}])
        key = cache_key(req)

        async def scenario():
            await client.acomplete(warm)  # opens the cache and its write queue
            client._writes.delay = 60.0  # nothing flushes on its own from here
            client._writes.put(key, make_entry(key, key_fields(req), {"text": "queued", "model": "j"}))
            return await client._serve(req)  # no batch end, so no flush

        served = runtime().submit(scenario()).result(30)
        assert served.cached and served.text == "queued" and srv.requests == 1
        client.close()
    reopened = open_backend(tmp_path / "c")
    try:
        assert reopened.get(key)["response"]["text"] == "queued"  # close stored what was waiting
    finally:
        reopened.close()
