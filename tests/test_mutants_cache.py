"""The cache writer (llm/write_behind.py, the client's single flight) through public behaviour:
tests written for the bugs of ``tools/mutation/held_out_mutants.py`` that the earlier tests let
through.  A recording ``DiskCacheBackend`` (tests/test_llm_mutants.py) logs every group stored;
requests go over real HTTP to a loopback server."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

from pytest_judgerel.errors import LLMCallError
from pytest_judgerel.llm import LLMClient, LLMRequest, LLMSettings
from pytest_judgerel.llm.write_behind import WriteBehind

from test_llm_mutants import Scripted, _events, _RecordingBackend, scripted_server  # noqa: F401 (the fixture)


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


def test_an_answer_stored_by_another_process_while_we_waited_for_the_lock_is_used(scripted_server, tmp_path):
    """C05: no second look at the cache once the key lock is taken: an answer another process
    stored while this one waited is asked upstream again (single flight across workers lost)."""
    from pytest_judgerel.llm import DiskCacheBackend

    server = scripted_server()
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


# ---------------------------------------------------------------- batch 2's survivors
@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork() is POSIX only")
def test_a_forked_child_asks_for_itself_what_its_parent_was_asking(scripted_server, tmp_path):
    """C08: a forked child keeps the parent's in-flight calls: an identical request in the child
    joins a call that runs on the parent's event loop, which the child does not have (it fails or
    waits for ever).  The parent's call is in flight (the server holds it 2 s) when the process
    forks; the child asks the same request and must get the answer.  It does so without a second
    upstream call: the key's lock belongs to the parent (POSIX record locks are not inherited),
    so the child waits for it and reads the answer the parent stored."""
    server = scripted_server(delay=lambda prompt: 2.0)
    request = _request(server.url, "asked before and after the fork")
    with LLMClient(LLMSettings(cache_mode="record", backend="http", cache_dir=str(tmp_path / "cache"),
                               max_attempts=1, timeout=20.0)) as client:
        parent: dict[str, Any] = {}
        caller = threading.Thread(target=lambda: parent.setdefault("reply", client.complete(request)))
        caller.start()
        deadline = time.monotonic() + 20
        while not server.log and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server.log, "the parent's call never reached the server"
        pid = os.fork()
        if pid == 0:  # the child: the same request, answered within the deadline or not at all
            code = 3
            try:
                code = 0 if client.complete(request).text == "3" else 4
            finally:
                os._exit(code)
        status = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            done, raw = os.waitpid(pid, os.WNOHANG)
            if done:
                status = os.waitstatus_to_exitcode(raw)
                break
            time.sleep(0.02)
        else:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        caller.join(30)
    assert status == 0, f"the child's call: exit status {status} (None: no answer within 30 s)"
    assert parent["reply"].text == "3"
    assert len(server.log) == 1  # the parent's call only: no duplicate paid call from the child


def test_a_failed_call_releases_its_key_lock_for_other_processes(scripted_server, tmp_path):
    """C09: a call that failed keeps its key lock: another worker asking the same request then
    waits a minute or more for a lock nobody will release.  A second process must find the key's
    lock free right after the failure (while this process, and its cache, are still open)."""
    server = scripted_server([(400, b'{"error": {"message": "bad request"}}', {})])
    request = _request(server.url, "fails once")
    cache = tmp_path / "cache"
    with LLMClient(LLMSettings(cache_mode="record", backend="http", cache_dir=str(cache), max_attempts=1)) as client:
        with pytest.raises(LLMCallError, match="HTTP 400"):
            client.complete(request)
        assert len(server.log) == 1
        key = client.complete(request).key  # the same key, now answered (this process may take its lock again)
        other = subprocess.run(
            [sys.executable, "-c",
             "import sys\nfrom pytest_judgerel.llm import DiskCacheBackend\n"
             "b = DiskCacheBackend(sys.argv[1])\nprint(b.key_lock(sys.argv[2]).acquire(0))\nb.close()",
             str(cache), key],
            capture_output=True, text=True, timeout=120, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
        assert other.returncode == 0, other.stderr
        assert other.stdout.strip() == "True", "the failed call's key lock is still held by this process"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_a_forked_child_does_not_inherit_its_parents_key_locks(tmp_path: Any) -> None:
    """POSIX record locks are not inherited by fork(): a child that copied the parent's hold counts
    would take a key its parent still holds without locking it, and pay for a duplicate call."""
    from pytest_judgerel.llm.disk_backend import DiskCacheBackend

    backend = DiskCacheBackend(str(tmp_path / "cache"))
    key = "ab" * 32
    lock = backend.key_lock(key)
    assert lock.acquire(timeout=1.0)
    try:
        pid = os.fork()
        if pid == 0:  # the child: the parent holds the key, so the child must not get it
            code = 3
            try:
                code = 3 if backend.key_lock(key).acquire(timeout=0.2) else 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, (
            "the forked child took a key lock its parent holds")
    finally:
        lock.release()
    assert backend.key_lock(key).acquire(timeout=1.0), "the parent's release frees the key"


# ---------------------------------------------------------------- the writer's edges (broadened)
class _Log:
    """A backend and key locks that log what happens to them."""

    def __init__(self, fail_release: tuple[str, ...] = ()):
        self.events: list[tuple[str, Any]] = []
        self.fail_release = fail_release

    def set_many(self, entries: dict) -> None:
        self.events.append(("stored", dict(entries)))

    def lock(self, name: str) -> Any:
        log = self

        class Lock:
            def release(self) -> None:
                log.events.append(("released", name))
                if name in log.fail_release:
                    raise RuntimeError(f"lock {name} expired")
        return Lock()


def test_one_lock_that_fails_to_release_does_not_keep_the_others():
    log = _Log(fail_release=("a",))

    async def scenario() -> None:
        writes = WriteBehind(log, delay=10.0)
        for key in "abc":
            writes.put(key, {"v": key}, log.lock(key))
        writes.flush()

    asyncio.run(scenario())
    assert log.events == [("stored", {"a": {"v": "a"}, "b": {"v": "b"}, "c": {"v": "c"}}),
                          ("released", "a"), ("released", "b"), ("released", "c")]


def test_the_size_trigger_waits_for_exactly_limit_answers_and_a_key_put_twice_is_stored_once():
    log = _Log()

    async def scenario() -> None:
        writes = WriteBehind(log, delay=10.0, limit=3)
        writes.put("a", {"v": 1})
        writes.put("a", {"v": 2})  # the same key again: still one answer waiting
        writes.put("b", {"v": 3})
        assert log.events == [] and len(writes) == 2 and writes.get("a") == {"v": 2}
        writes.put("c", {"v": 4})
        assert log.events == [("stored", {"a": {"v": 2}, "b": {"v": 3}, "c": {"v": 4}})] and writes.flushes == 1
        writes.flush()  # nothing waits: nothing is written, no transaction counted
        assert len(log.events) == 1 and writes.flushes == 1

    asyncio.run(scenario())


def test_forget_drops_what_waits_without_storing_or_releasing_and_stops_the_timer():
    log = _Log()

    async def scenario() -> None:
        writes = WriteBehind(log, delay=0.01)
        writes.put("a", {"v": 1}, log.lock("a"))
        writes.forget()
        await asyncio.sleep(0.05)  # the timer would have flushed by now
        assert len(writes) == 0 and writes.get("a") is None and writes.unclaimed() == {}
        writes.put("b", {"v": 2}, log.lock("b"))  # a new answer starts a new timer
        await asyncio.sleep(0.05)

    asyncio.run(scenario())
    assert log.events == [("stored", {"b": {"v": 2}}), ("released", "b")]


def test_a_dry_run_plans_a_repeated_request_once_and_counts_the_repeat_as_a_hit(scripted_server, tmp_path):
    """A dry run mirrors the cache of a real run: the second identical request would be answered
    from the answer the first one stored, so it is planned once and the repeat is a hit."""
    server = scripted_server()
    settings = LLMSettings(cache_mode="record", backend="http", dry_run=True, cache_dir=str(tmp_path / "cache"))
    with LLMClient(settings) as client:
        first = client.complete(_request(server.url, "same"))
        again = client.complete(_request(server.url, "same"))
        other = client.complete(_request(server.url, "other"))
        stats = client.stats
    assert server.log == []  # nothing sent
    assert (first.cached, again.cached, other.cached) == (False, True, False)
    assert (stats.planned, stats.misses, stats.hits) == (2, 2, 1)


# ---------------------------------------------------------------- batch 6 (tools/mutation/held_out_batch6.py)
def test_identical_requests_waiting_on_a_failed_call_each_get_its_error(tmp_path):
    """K04: two identical requests in one batch make one call (single flight); it fails for good
    (HTTP 500, one attempt), and both get that error, not a cancellation."""
    from pytest_judgerel.testing import FakeLLMServer, FaultPlan

    with FakeLLMServer(latency=0.2, faults=FaultPlan(schedule={0: "500"})) as srv:
        with LLMClient(LLMSettings(cache_dir=str(tmp_path / "c"), max_attempts=1, max_concurrency=4)) as client:
            request = _request(srv.url, "rate this: 3")
            results = client.complete_many([request, request], return_exceptions=True)
        assert srv.requests == 1
    assert all(isinstance(r, LLMCallError) and "500" in str(r) for r in results), results


def test_a_batch_cancelled_before_it_ran_starts_no_call_and_does_not_hold_back_the_next(tmp_path):
    """With the loop busy, batch 1 is submitted and cancelled before it starts, and batch 2 was
    submitted to start after it: batch 1 sends nothing (its workers see the cancel before taking a
    request), and batch 2 still runs."""
    from pytest_judgerel.llm.runtime import runtime
    from pytest_judgerel.testing import FakeLLMServer

    with FakeLLMServer(latency=0.0) as srv:
        with LLMClient(LLMSettings(cache_mode="off", max_concurrency=4)) as client:
            client.complete(_request(srv.url, "warm the loop up"))
            runtime().loop.call_soon_threadsafe(time.sleep, 0.5)  # the loop thread is busy meanwhile
            first = client.submit_many([_request(srv.url, f"first {k}") for k in range(6)])
            second = client.submit_many([_request(srv.url, "second")], after=first)
            first.cancel()
            answers = second.future.result(timeout=10)
            assert len(answers) == 1 and answers[0].text
            time.sleep(0.2)
        assert srv.requests == 2  # the warm-up and the second batch: the first started no call
