"""A Judge run against a server failing a share of requests; SIGKILL a judging subprocess
midway, run again and count repeated calls."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ._common import subprocess_env
from .judging import cache_texts, make_judge, robust_items

@dataclass
class FaultRunResult:
    """A Judge run on a server that fails ``fault_rate`` of requests, against a clean run."""

    calls: int  # distinct judge calls (cache keys)
    upstream_requests: int  # requests the faulty server received
    faults_injected: int
    fault_kinds: dict[str, int]
    retries: int  # client-side retry count
    max_attempts_used: int
    max_attempts_allowed: int
    identical: bool  # same ratings (values and NaN pattern) as the clean run
    parse_failures: int
    cache_entries: int
    erroneous_cache_entries: int  # entries whose text is empty, not the clean answer, or an unknown key
    wall_time: float

    @property
    def retries_within_bounds(self) -> bool:
        return (self.retries == self.faults_injected and self.max_attempts_used <= self.max_attempts_allowed
                and self.upstream_requests == self.calls + self.faults_injected)


def fault_injection_run(n_items: int = 40, repeats: int = 2, fault_rate: float = 0.2, seed: int = 7,
                        kinds: Sequence[str] = ("429", "500", "timeout", "malformed", "empty"),
                        max_attempts: int = 8, latency: float = 0.005, workdir: str | None = None) -> FaultRunResult:
    """Rate ``n_items`` x ``repeats`` on a clean server and on one injecting faults
    (429 with Retry-After, 500, timeouts, malformed JSON, empty content); compare."""
    import numpy as np

    from pytest_judgerel.testing.fake_server import FakeLLMServer, FaultPlan

    work = Path(workdir or tempfile.mkdtemp(prefix="judgerel-faults-"))
    items = robust_items(n_items)
    with FakeLLMServer(latency=latency) as clean_srv:
        judge = make_judge(clean_srv.url, work / "clean-cache")
        clean = judge.rate(items, repeats=repeats)
        judge.client.close()
    # a "timeout" stalls 3 s; the client gives up after 1 s (far above a normal answer, even on a busy machine)
    plan = FaultPlan(rate=fault_rate, kinds=tuple(kinds), seed=seed, retry_after=0.02, timeout_sleep=3.0)
    with FakeLLMServer(latency=latency, faults=plan) as srv:
        # same api_base text as the clean run is not needed: results are compared by value
        judge = make_judge(srv.url, work / "faulty-cache", max_attempts=max_attempts, timeout=1.0)
        t0 = time.perf_counter()
        faulty = judge.rate(items, repeats=repeats)
        wall = time.perf_counter() - t0
        stats = judge.client.stats
        judge.client.close()
        log = list(srv.log)
    kinds_seen = Counter(e["fault"] for e in log if e["fault"] is not None)
    clean_texts = cache_texts(work / "clean-cache")
    faulty_texts = cache_texts(work / "faulty-cache")
    # keys differ only by api_base (the two servers' ports): compare entries by their request minus api_base
    from pytest_judgerel.llm.keys import key_from_fields
    from pytest_judgerel.llm.cache import open_backend

    def by_request(cache_dir):
        backend = open_backend(cache_dir)
        try:
            out = {}
            for _k, e in backend.iter_entries():
                fields_ = dict(e["request"])
                fields_["api_base"] = None
                out[key_from_fields(fields_)] = (e["response"].get("text"), int(e["response"].get("attempts", 1)))
            return out
        finally:
            backend.close()

    clean_by = by_request(work / "clean-cache")
    faulty_by = by_request(work / "faulty-cache")
    erroneous = sum(1 for k, (text, _a) in faulty_by.items()
                    if not isinstance(text, str) or not text.strip() or clean_by.get(k, (None,))[0] != text)
    max_used = max((a for _t, a in faulty_by.values()), default=0)
    identical = bool(np.array_equal(clean.values, faulty.values, equal_nan=True)) and len(clean_texts) == len(faulty_texts)
    return FaultRunResult(
        calls=n_items * repeats, upstream_requests=len(log), faults_injected=sum(kinds_seen.values()),
        fault_kinds=dict(kinds_seen), retries=stats.retries, max_attempts_used=max_used,
        max_attempts_allowed=max_attempts, identical=identical,
        parse_failures=len(faulty.parse_failures), cache_entries=len(faulty_texts),
        erroneous_cache_entries=erroneous + abs(len(faulty_by) - len(clean_by)), wall_time=wall)


# =============================================================================== SIGKILL and resume
_JUDGE_SCRIPT = r"""
import sys
from robust import judging as R
url, cache_dir, n_items = sys.argv[1], sys.argv[2], int(sys.argv[3])
judge = R.make_judge(url, cache_dir, max_concurrency=int(sys.argv[4]))
ratings = judge.rate(R.robust_items(n_items), repeats=1)
judge.client.close()
print("RATED", int((~__import__("numpy").isnan(ratings.values)).sum()), flush=True)
"""


def _freezing_server_class():
    """A FakeLLMServer that stops answering (holds every later response) after ``freeze_after``
    successful responses, so the set of calls completed before a SIGKILL is known exactly."""
    import asyncio

    from pytest_judgerel.testing.fake_server import FakeLLMServer

    class FreezingServer(FakeLLMServer):
        def __init__(self, *args: Any, freeze_after: int | None = None, **kwargs: Any):
            super().__init__(*args, **kwargs)
            self.freeze_after = freeze_after
            self.answered: list[int] = []  # request indices whose 200 answer was fully sent
            self._thaw: asyncio.Event | None = None

        def thaw(self) -> None:
            self.freeze_after = None
            if self._loop is not None and self._thaw is not None:
                self._loop.call_soon_threadsafe(self._thaw.set)

        @property
        def frozen(self) -> bool:
            return self.freeze_after is not None and len(self.answered) >= self.freeze_after

        async def _send(self, writer, status, payload, extra_headers=None):
            if self.frozen:
                if self._thaw is None:
                    self._thaw = asyncio.Event()
                await self._thaw.wait()  # hold the answer until thawed (the client is dead by then)
            await super()._send(writer, status, payload, extra_headers)
            if status == 200 and isinstance(payload, dict) and str(payload.get("id", "")).startswith("chatcmpl-fake-"):
                self.answered.append(int(payload["id"].rsplit("-", 1)[1]))

    return FreezingServer


def _held_requests(server: Any) -> int:
    """Requests the frozen server has received but not answered: the kill must find some in flight,
    and on a loaded machine the client may not have sent its next request yet when the cache catches up."""
    with server._lock:
        received = len(server.log)
    return received - len(server.answered)


def _stored_entries(cache: Path) -> int:
    """Entries in the diskcache at ``cache`` (0 before the judging process created it)."""
    from pytest_judgerel.llm.cache_admin import cache_stats

    return cache_stats(cache).entries if cache.is_dir() else 0


@dataclass
class SigkillResult:
    """Run 1 killed with SIGKILL after ``completed_run1`` answers; run 2 resumes from the cache."""

    calls: int
    completed_run1: int  # successful answers sent to run 1 before the kill
    requests_run1: int
    killed: bool
    requests_run2: int
    duplicates: int  # bodies answered successfully in run 1 and requested again in run 2
    run2_rated: int  # non-missing cells of run 2
    run2_returncode: int

    @property
    def ok(self) -> bool:
        return (self.killed and self.duplicates == 0 and self.run2_rated == self.calls
                and self.requests_run2 == self.calls - self.completed_run1 and self.run2_returncode == 0)


def sigkill_resume_run(n_items: int = 120, kill_after: int = 40, concurrency: int = 8, latency: float = 0.02,
                       workdir: str | None = None, settle: float = 60.0) -> SigkillResult:
    """Judge ``n_items`` in a subprocess; after ``kill_after`` answers the server holds the rest,
    the subprocess gets SIGKILL as soon as its cache holds every answer it received (at most
    ``settle`` s later: no fixed pause a loaded machine could outrun), then a second run against
    the same server and cache must not ask for any answered call again."""
    work = Path(workdir or tempfile.mkdtemp(prefix="judgerel-kill-"))
    cache = work / "cache"
    server = _freezing_server_class()(latency=latency, freeze_after=kill_after).start()
    try:
        cmd = [sys.executable, "-c", _JUDGE_SCRIPT, server.url, str(cache), str(n_items),
               str(concurrency)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=subprocess_env())
        deadline = time.monotonic() + 120
        while not server.frozen and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        stored_by = time.monotonic() + settle
        while proc.poll() is None and time.monotonic() < stored_by and (
                _stored_entries(cache) < len(server.answered) or not _held_requests(server)):
            time.sleep(0.05)
        killed = proc.poll() is None
        if killed:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        with server._lock:
            log1 = list(server.log)
        answered = set(server.answered)
        completed_bodies = [json.dumps(log1[i]["body"], sort_keys=True) for i in answered]
        server.thaw()
        time.sleep(0.05)
        start = len(server.log)
        run2 = subprocess.run(cmd, capture_output=True, text=True, env=subprocess_env(), timeout=300)
        with server._lock:
            log2 = list(server.log)[start:]
    finally:
        server.stop()
    bodies2 = Counter(json.dumps(e["body"], sort_keys=True) for e in log2)
    duplicates = sum(bodies2[b] for b in set(completed_bodies))
    rated = 0
    for line in run2.stdout.splitlines():
        if line.startswith("RATED "):
            rated = int(line.split()[1])
    if run2.returncode != 0:
        sys.stderr.write(run2.stderr[-3000:])
    # completed_run1 may exceed kill_after by answers that were already being sent at the freeze
    return SigkillResult(calls=n_items, completed_run1=len(answered), requests_run1=len(log1), killed=killed,
                         requests_run2=len(log2), duplicates=duplicates, run2_rated=rated,
                         run2_returncode=run2.returncode)
