"""Single flight without a second read when nothing can have been stored: the disk cache counts the
entries every process stores (``locks/stored``), a batch takes a mark before it looks its keys up, and
a miss is read again under its key lock only when the count grew by more than this backend's own
stores or this backend stored that very key since the mark.  Real cache folders; requests over HTTP to
the loopback server."""

from __future__ import annotations

import os
from typing import Any

import pytest

from pytest_judgerel.llm import DiskCacheBackend, LLMClient, LLMRequest, LLMSettings
from pytest_judgerel.llm import disk_backend
from pytest_judgerel.llm.backend import make_entry
from pytest_judgerel.llm.keys import cache_key, key_fields
from pytest_judgerel.llm.write_behind import WriteBehind
from pytest_judgerel.testing import FakeLLMServer

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the count lives in a byte-range-locked file (POSIX)")


def _request(url: str, text: str) -> LLMRequest:
    return LLMRequest(model="openai/judge", api_base=url, api_key="sk-test-0000",
                      messages=({"role": "user", "content": text},))


def _entry(request: LLMRequest, text: str) -> dict:
    return make_entry(cache_key(request), key_fields(request),
                      {"text": text, "model": "judge", "usage": {}, "cost": 0.0, "latency": 0.0, "timestamp": 1.0})


def test_a_mark_sees_another_backends_stores_and_its_own_keys(tmp_path):
    one, other = DiskCacheBackend(tmp_path), DiskCacheBackend(tmp_path)
    try:
        a, b, c = (_request("http://127.0.0.1:9/v1", t) for t in "abc")
        mark = one.store_mark()
        assert not one.stored_since(mark, cache_key(a))  # nothing stored by anyone
        one.set_many({cache_key(a): _entry(a, "1")})
        assert one.stored_since(mark, cache_key(a))  # this backend stored that key
        assert not one.stored_since(mark, cache_key(b))  # ... and only that one
        other.set(cache_key(c), _entry(c, "2"))
        assert one.stored_since(mark, cache_key(b))  # someone else stored something: any key may be it
        later = one.store_mark()
        assert not one.stored_since(later, cache_key(b)) and not other.stored_since(other.store_mark(), "k")
        assert later[0] == mark[0] + 2 and other.store_mark()[0] == later[0]  # one count for the folder
    finally:
        one.close()
        other.close()


def test_a_mark_older_than_the_listed_own_keys_reads_again(tmp_path, monkeypatch):
    monkeypatch.setattr(disk_backend, "_OWN_KEYS", 2)
    backend = DiskCacheBackend(tmp_path)
    try:
        reqs = [_request("http://127.0.0.1:9/v1", str(i)) for i in range(4)]
        mark = backend.store_mark()
        backend.set_many({cache_key(r): _entry(r, "x") for r in reqs[:2]})
        assert not backend.stored_since(mark, cache_key(reqs[3]))
        backend.set_many({cache_key(reqs[2]): _entry(reqs[2], "x")})  # the list is full: forgotten
        assert backend.stored_since(mark, cache_key(reqs[3]))  # the mark predates what is still listed
        assert not backend.stored_since(backend.store_mark(), cache_key(reqs[3]))
    finally:
        backend.close()


class _CountingReads(DiskCacheBackend):
    reads = 0

    def get(self, key: str) -> dict | None:
        self.reads += 1
        return super().get(key)


def test_a_batch_alone_on_its_cache_reads_no_miss_twice_and_stores_every_answer(tmp_path):
    with FakeLLMServer(latency=0.0) as srv:
        backend = _CountingReads(tmp_path)
        with LLMClient(LLMSettings(cache_dir=str(tmp_path), max_concurrency=4), backend=backend) as client:
            replies = client.complete_many([_request(srv.url, f"item {i}") for i in range(40)])
        assert backend.reads == 0 and srv.requests == 40
        assert all(backend.get(r.key) is not None for r in replies)
        backend.close()


def test_an_answer_another_process_stored_after_the_batch_looked_is_used(tmp_path):
    """The third request's answer is stored by another backend on the folder while the first is
    answered (one call at a time): the third is read again under its lock and served from it."""
    first, second, third = (_request("", t) for t in ("one", "two", "three"))
    stored = []

    def responder(request: Any) -> str:
        if not stored:
            sibling = DiskCacheBackend(tmp_path)
            sibling.set_many({cache_key(third_at): _entry(third_at, "4")})
            sibling.close()
            stored.append(True)
        return "1"

    with FakeLLMServer(latency=0.0, responder=responder) as srv:
        batch = [_request(srv.url, r.messages[0]["content"]) for r in (first, second, third)]
        third_at = batch[2]
        with LLMClient(LLMSettings(cache_dir=str(tmp_path), max_concurrency=1)) as client:
            replies = client.complete_many(batch)
        assert srv.requests == 2 and replies[2].cached and replies[2].text == "4"
        assert [r.cached for r in replies[:2]] == [False, False]


def test_a_key_this_process_stored_after_the_batch_looked_is_read_again(tmp_path):
    """The same request twice in one batch, one call at a time, stored between the two (a write group
    of one): the second finds it in the cache instead of asking again."""
    with FakeLLMServer(latency=0.0) as srv:
        request = _request(srv.url, "asked twice")
        with LLMClient(LLMSettings(cache_dir=str(tmp_path), max_concurrency=1)) as client:
            client._writes = WriteBehind(client.backend, limit=1)
            replies = client.complete_many([request, request])
        assert srv.requests == 1 and replies[1].cached and replies[1].text == replies[0].text


def test_an_answer_stored_while_the_batch_looked_is_read_again(tmp_path):
    """Another process stores one of the batch's answers right after the batch's lookup read the cache
    (so the lookup missed it): the mark was taken before the lookup, so the store shows and the key is
    read again under its lock instead of being asked."""
    with FakeLLMServer(latency=0.0) as srv:
        batch = [_request(srv.url, f"looked up {i}") for i in range(3)]

        class Sibling(DiskCacheBackend):
            def get_many(self, keys: list[str], request: bool = True) -> dict[str, dict]:
                found = super().get_many(keys, request)
                other = DiskCacheBackend(tmp_path)
                other.set(cache_key(batch[1]), _entry(batch[1], "5"))
                other.close()
                return found

        backend = Sibling(tmp_path)
        with LLMClient(LLMSettings(cache_dir=str(tmp_path), max_concurrency=1), backend=backend) as client:
            replies = client.complete_many(batch)
        backend.close()
        assert srv.requests == 2 and replies[1].cached and replies[1].text == "5"
