"""The cache writer (llm/write_behind.py, the client's single flight) through public behaviour:
tests written for the bugs of ``benchmarks/held_out_mutants.py`` that the earlier tests let
through.  A recording ``DiskCacheBackend`` (tests/test_llm_mutants.py) logs every group stored;
requests go over real HTTP to a loopback server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pytest_judgerel.llm import LLMClient, LLMRequest, LLMSettings
from pytest_judgerel.llm.write_behind import WriteBehind

from test_llm_mutants import Scripted, _events, _RecordingBackend


@pytest.fixture
def serve():
    servers: list[Scripted] = []

    def start(*args: Any, **kwargs: Any) -> Scripted:
        servers.append(Scripted(*args, **kwargs))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def _request(url: str, text: str) -> LLMRequest:
    return LLMRequest(model="openai/judge", api_base=url, api_key="sk-test-0000",
                      messages=({"role": "user", "content": text},))


def test_a_steady_stream_of_answers_is_stored_while_it_lasts():
    """C01: the flush timer restarted by every answer (a debounce): while answers keep arriving
    closer together than the delay, none is stored until they stop, and a SIGKILL loses them
    all.  Answers arrive every 0.1 s for 1.2 s with a 0.5 s delay: the first must be stored by
    the timer its arrival started, in a group without the last."""
    groups: list[list[str]] = []

    class Backend:
        def set_many(self, entries: Any) -> None:
            groups.append(sorted(entries))

    async def stream() -> None:
        writes = WriteBehind(Backend(), delay=0.5, limit=1000)
        for i in range(13):
            writes.put(f"answer {i:02d}", {"i": i}, None)
            await asyncio.sleep(0.1)
        writes.flush()  # the end of the batch

    asyncio.run(stream())
    assert sorted(k for g in groups for k in g) == [f"answer {i:02d}" for i in range(13)]
    assert len(groups) >= 2 and "answer 00" in groups[0] and "answer 12" not in groups[0], groups


class _AnsweredWhileWaiting:
    """A key lock that behaves as if another process held it and stored the key's answer before
    handing it over (what an xdist worker sees when a sibling answered the same request)."""

    def __init__(self, lock: Any, store: Any):
        self.lock, self.store = lock, store

    def acquire(self, timeout: float) -> bool:
        self.store()
        return self.lock.acquire(timeout)

    def release(self) -> None:
        self.lock.release()


def test_an_answer_stored_by_another_process_while_we_waited_for_the_lock_is_used(serve, tmp_path):
    """C05: no second look at the cache once the key lock is taken: an answer another process
    stored while this one waited is asked upstream again (single flight across workers lost)."""
    from pytest_judgerel.llm import DiskCacheBackend

    server = serve()
    request = _request(server.url, "asked by two workers")
    with LLMClient(LLMSettings(cache_mode="record", backend="http", cache_dir=str(tmp_path / "a"))) as first:
        key = first.complete(request).key
    source = DiskCacheBackend(str(tmp_path / "a"))
    entry = source.get(key)
    source.close()
    assert entry is not None and len(server.log) == 1

    class Sibling(DiskCacheBackend):
        def key_lock(self, k: str) -> Any:
            return _AnsweredWhileWaiting(super().key_lock(k), lambda: self.set_many({k: entry}))

    backend = Sibling(str(tmp_path / "b"))
    try:
        with LLMClient(LLMSettings(cache_mode="record", backend="http", cache_dir=str(tmp_path / "b")),
                       backend=backend) as second:
            reply = second.complete(request)
            assert reply.cached and second.stats.hits == 1 and second.stats.misses == 0
    finally:
        backend.close()
    assert len(server.log) == 1  # the sibling's answer, never asked again
