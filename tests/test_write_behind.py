"""Grouped cache writes (pytest_judgerel/llm/write_behind.py): answers stored in one transaction per
flush, key locks released only once stored, nothing lost at the end of a batch or on an error."""

from __future__ import annotations

import asyncio

import pytest

from pytest_judgerel.errors import CacheCorruptError
from pytest_judgerel.llm import LLMClient, LLMRequest, LLMSettings
from pytest_judgerel.testing import FakeLLMServer
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


def test_a_failed_store_releases_the_locks_and_keeps_the_error_per_key():
    events: list = []

    async def scenario():
        writes = WriteBehind(_Backend(events, fail=True), delay=10.0)
        writes.put("a", {}, _Lock(events, "a"))
        writes.put("b", {}, None)
        writes.flush()  # never raises: whoever flushes is not whoever owns the answers
        assert isinstance(writes.failure("a"), CacheCorruptError)
        assert writes.failure("a") is None  # reported once
        assert list(writes.unclaimed()) == ["b"] and writes.unclaimed() == {}

    _run(scenario())
    assert events == [("set_many", ["a", "b"]), ("release", "a")]


def test_an_error_met_by_the_timer_is_kept_for_the_owner():
    events: list = []

    async def scenario():
        writes = WriteBehind(_Backend(events, fail=True), delay=0.01)
        writes.put("a", {}, None)
        await asyncio.sleep(0.1)  # the timer's flush failed
        assert isinstance(writes.failure("a"), CacheCorruptError)

    _run(scenario())


class _FailingStore:
    """A cache backend whose writes fail (a full disk), wrapped around a real one for reads and locks."""

    def __init__(self, real):
        self.real = real

    def __getattr__(self, name):
        return getattr(self.real, name)

    def set_many(self, entries):
        raise CacheCorruptError("the judge cache database is full")


def test_an_answer_that_was_not_stored_is_an_error_of_its_own_batch(tmp_path):
    """Each batch hears of its own answers only: raised, or in place with return_exceptions."""
    from pytest_judgerel.llm.disk_backend import DiskCacheBackend

    with FakeLLMServer(latency=0) as srv:
        real = DiskCacheBackend(tmp_path / "c")
        client = LLMClient(LLMSettings(cache_dir=tmp_path / "c"), backend=_FailingStore(real))
        reqs = [LLMRequest(model="openai/j", api_base=srv.url, api_key="k",
                           messages=[{"role": "user", "content": f"q{i}"}]) for i in range(3)]
        with pytest.raises(CacheCorruptError, match="full"):
            client.complete_many(reqs[:2])
        out = client.complete_many(reqs[2:], return_exceptions=True)
        assert isinstance(out[0], CacheCorruptError)
        assert client.stats.errors == 3
        client.close()
        assert list(real.iter_entries()) == []
        real.close()


def test_an_unclaimed_failure_is_reported_at_close(tmp_path, recwarn):
    from pytest_judgerel.llm.backend import make_entry
    from pytest_judgerel.llm.disk_backend import DiskCacheBackend
    from pytest_judgerel.llm.runtime import runtime

    real = DiskCacheBackend(tmp_path / "c")
    client = LLMClient(LLMSettings(cache_dir=tmp_path / "c"), backend=_FailingStore(real))

    async def orphan():  # an answer whose caller was cancelled: no batch will claim it
        client._writes = WriteBehind(client.backend, delay=60.0)
        client._writes.put("k" * 64, make_entry("k" * 64, {}, {"text": "t"}))

    runtime().submit(orphan()).result(10)
    with pytest.warns(RuntimeWarning, match=r"1 answer\(s\) could not be stored .* full"):
        client.close()
    real.close()


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
