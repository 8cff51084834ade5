"""The record mode's floor: raw aiohttp calls plus only the work a recording client cannot skip.

:func:`record_floor_run` is :func:`~benchmarks.harness.servers.raw_aiohttp_run` (the wire's anchor)
with, per call, what record mode must do with the cache this project keeps, and nothing else (no
retries, budget, stats, progress, request building or reply parsing beyond reading the text):

* the cache key, unchanged so cassettes replay (:func:`pytest_judgerel.llm.keys.key_fields` and
  :func:`~pytest_judgerel.llm.keys.key_from_fields`: canonical JSON and sha256);
* the batch's lookup (one read of every key, after the cache's store mark) and single flight across
  processes: the key's lock taken, and the cache read again under it where something can have been
  stored since the mark (:meth:`~pytest_judgerel.llm.disk_backend.DiskCacheBackend.stored_since`);
* the answer stored: ``store="entry"`` the entry as the cache keeps it
  (:func:`~pytest_judgerel.llm.backend.make_entry`), ``"answer"`` an entry without its request (the
  least any entry layout holds), ``"none"`` nothing; written 64 per transaction
  (:meth:`~pytest_judgerel.llm.disk_backend.DiskCacheBackend.set_many`), then the locks released.

Measured like the anchor (process CPU per call, after ``concurrency`` warm-up calls), in the same
run, it bounds what any client on this cache design can reach: when the floor alone costs more
than a goal allows, the goal cannot hold for that design.
"""

from __future__ import annotations

import json
import time
from typing import Any, Sequence

__all__ = ["STORES", "record_floor_run"]

STORES = ("entry", "answer", "none")
_GROUP = 64


def record_floor_run(url: str, requests: Sequence[Any], concurrency: int, cache_dir: str, store: str = "entry",
                     api_key: str = "sk-bench") -> tuple[float, float]:
    """(CPU seconds per call, wall seconds) of ``requests`` (:class:`~pytest_judgerel.llm.request.LLMRequest`)
    sent with raw aiohttp plus record mode's unavoidable work (module docstring) into a fresh
    :class:`~pytest_judgerel.llm.disk_backend.DiskCacheBackend` in ``cache_dir``."""
    import asyncio

    import aiohttp

    from pytest_judgerel.llm.backend import make_entry
    from pytest_judgerel.llm.disk_backend import DiskCacheBackend
    from pytest_judgerel.llm.keys import key_fields, key_from_fields
    from pytest_judgerel.llm.wire import chat_body

    if store not in STORES:
        raise ValueError(f"store must be one of {STORES}, got {store!r}")
    endpoint = url.rstrip("/") + "/chat/completions"
    headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}
    bodies = [chat_body(request) for request in requests]  # built beforehand, as the anchor's are
    backend = DiskCacheBackend(cache_dir)
    waiting: dict[str, Any] = {}
    locks: list[Any] = []

    def flush() -> None:
        nonlocal waiting, locks
        if waiting and store != "none":
            backend.set_many(waiting)
        for lock in locks:
            lock.release()
        waiting, locks = {}, []

    async def run() -> tuple[float, float]:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0),
                                         timeout=aiohttp.ClientTimeout(total=60)) as client:
            sem = asyncio.Semaphore(concurrency)

            def look(indices: range) -> tuple[Any, list[tuple[Any, str]]]:
                mark = backend.store_mark()
                keyed = [(fields, key_from_fields(fields)) for fields in (key_fields(requests[i]) for i in indices)]
                if backend.get_many([key for _, key in keyed], request=False):
                    raise AssertionError("a request was answered before: the floor measures misses only")
                return mark, keyed

            async def one(i: int, mark: Any, fields: Any, key: str) -> None:
                async with sem:
                    lock = backend.key_lock(key)
                    lock.acquire(0)
                    if backend.stored_since(mark, key) and backend.get(key) is not None:
                        lock.release()
                        raise AssertionError(f"request {i} was answered before: the floor measures misses only")
                    async with client.post(endpoint, data=json.dumps(bodies[i], ensure_ascii=False).encode(),
                                           headers=headers) as reply:
                        content = await reply.read()
                        reply.raise_for_status()
                    answer = json.loads(content)
                    response = {"text": answer["choices"][0]["message"]["content"], "model": answer.get("model", ""),
                                "usage": answer.get("usage") or {}, "cost": 0.0, "latency": 0.0,
                                "timestamp": time.time(), "attempts": 1}
                    waiting[key] = make_entry(key, fields if store == "entry" else {}, response)
                    locks.append(lock)
                    if len(waiting) >= _GROUP:
                        flush()

            warm = min(concurrency, len(requests))
            mark, keyed = look(range(warm))
            await asyncio.gather(*(one(i, mark, *keyed[i]) for i in range(warm)))
            flush()
            t0, c0 = time.perf_counter(), time.process_time()
            mark, keyed = look(range(warm, len(requests)))
            await asyncio.gather(*(one(warm + j, mark, *kf) for j, kf in enumerate(keyed)))
            flush()
            calls = len(requests) - warm
            return (time.process_time() - c0) / calls, time.perf_counter() - t0

    try:
        return asyncio.run(run())
    finally:
        backend.close()
