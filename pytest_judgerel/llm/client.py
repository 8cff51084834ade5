"""LLMClient: cache first, a transport on a miss, with single flight, concurrency, rate limit,
retries and accounting.

What every call shares lives here; what differs per path to the wire (key rules, the attempt,
key hints, cost) lives in the transports (:mod:`pytest_judgerel.llm.transport`), chosen per call
by :func:`pytest_judgerel.llm.wire.route`.  All model work of a process runs on the one background
event loop of :mod:`pytest_judgerel.llm.runtime`; sync callers block on it, async callers await it.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
import time
import weakref
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any, Iterable, Sequence, TypeGuard

from pytest_judgerel.errors import CacheMissError, ConfigError, LLMCallError
from pytest_judgerel.llm.backend import make_entry
from pytest_judgerel.llm.endpoint import is_in_process
from pytest_judgerel.llm.keys import key_fields, key_from_fields
from pytest_judgerel.llm.request import LLMRequest, LLMResponse
from pytest_judgerel.llm.runtime import runtime as _runtime
from pytest_judgerel.llm.settings import LLMSettings
from pytest_judgerel.llm.upstream import Bill, send_with_retries

__all__ = ["LLMClient", "LLMSettings", "CallStats"]


@dataclass
class CallStats:
    """Counters of one client.  Tokens and cost count upstream calls only (what this run spent).

    ``calls`` = requests served; ``hits`` from the cache (or an identical request in
    flight); ``misses`` needed the model; ``retries`` = extra attempts; ``errors`` =
    requests that ended in an error; ``corrupt`` = cache entries found unreadable (each
    answered again as a miss); ``http_calls`` / ``litellm_calls`` = upstream calls sent through
    the HTTP fast path / through litellm; ``inprocess_calls`` = calls answered by an in-process
    model (``scripted/``, ``local/``: never upstream, never in the budget); ``fresh`` =
    upstream calls that bypassed the cache (``complete_many(..., fresh=True)``, also counted in
    ``misses``); ``refused`` = calls the budget refused (also counted in ``errors``);
    ``planned`` = upstream calls a dry run would have sent, with their estimated
    ``planned_prompt_tokens``, ``planned_completion_tokens`` (the expected reply's) and
    ``planned_cost``, the bounds ``planned_completion_max`` (``max_tokens``) and
    ``planned_cost_max``, ``planned_unpriced`` (those of models without a price) and
    ``planned_reasks`` (the requests their re-asks could add); ``planned_inprocess`` = in-process
    calls a dry run answered with a placeholder; ``hit_latency`` = the recorded
    upstream latencies of the hits, summed (seconds); ``wall_time`` = seconds spent in client calls.
    """

    calls: int = 0
    hits: int = 0
    misses: int = 0
    retries: int = 0
    errors: int = 0
    corrupt: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    http_calls: int = 0
    litellm_calls: int = 0
    inprocess_calls: int = 0
    fresh: int = 0
    refused: int = 0
    planned: int = 0
    planned_prompt_tokens: int = 0
    planned_completion_tokens: int = 0
    planned_completion_max: int = 0
    planned_cost: float = 0.0
    planned_cost_max: float = 0.0
    planned_unpriced: int = 0
    planned_reasks: int = 0
    planned_inprocess: int = 0
    hit_latency: float = 0.0
    wall_time: float = 0.0

    def snapshot(self) -> "CallStats":
        return replace(self)

    def __sub__(self, other: "CallStats") -> "CallStats":
        return CallStats(**{f.name: getattr(self, f.name) - getattr(other, f.name) for f in fields(self)})

    def since(self, snapshot: "CallStats") -> "CallStats":
        """The share accumulated after ``snapshot`` was taken (e.g. one test's calls)."""
        return self - snapshot

    @property
    def hit_rate(self) -> float | None:
        return self.hits / self.calls if self.calls else None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["hit_rate"] = self.hit_rate
        return data


_open_clients: "weakref.WeakSet[LLMClient]" = weakref.WeakSet()


@atexit.register
def _flush_open_clients() -> None:
    for client in list(_open_clients):
        try:
            client.close()
        except Exception:
            pass


def _forget_after_fork() -> None:
    """In a forked child: each client drops what belongs to the parent's event loop (its HTTP pool,
    its in-flight calls and its answers waiting to be stored, whose locks the parent releases)."""
    for client in list(_open_clients):
        client._forget_parent_state()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def finish_run(cache_dir: str | os.PathLike[str], run_id: str, keep: int = 5) -> None:
    """Mark ``run_id`` as the last finished run of ``cache_dir`` and drop the key lists of older
    runs but the newest ``keep`` (called once per pytest session, by the controller)."""
    import shutil

    runs = Path(cache_dir) / "runs"
    if not (runs / run_id).is_dir():
        return
    try:
        (runs / "LAST").write_text(run_id + "\n", encoding="utf-8")
        old = sorted((p for p in runs.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime)[:-keep]
        for path in old:
            shutil.rmtree(path, ignore_errors=True)
            for budget in (Path(cache_dir) / "budget").glob(f"{path.name}.json*"):  # its budget counters
                budget.unlink(missing_ok=True)
    except OSError:
        pass


def response_from_entry(entry: dict, key: str) -> LLMResponse:
    """The cached answer of a cache entry (:func:`pytest_judgerel.llm.backend.make_entry`)."""
    response = entry["response"]
    return LLMResponse(text=response["text"], model=response.get("model", ""),
                       usage=dict(response.get("usage") or {}), cost=float(response.get("cost", 0.0)),
                       latency=float(response.get("latency", 0.0)), cached=True, key=key,
                       timestamp=float(response.get("timestamp", 0.0)), attempts=int(response.get("attempts", 1)),
                       system_fingerprint=response.get("system_fingerprint"))


def stored_response(response: LLMResponse) -> dict[str, Any]:
    """What a cache entry keeps of an answer (never the key or anything secret)."""
    out = {"text": response.text, "model": response.model, "usage": dict(response.usage), "cost": response.cost,
           "latency": response.latency, "timestamp": response.timestamp, "attempts": response.attempts}
    if response.system_fingerprint is not None:
        out["system_fingerprint"] = response.system_fingerprint
    return out


async def acquire_polling(lock: Any, give_up_after: float) -> bool:
    """Poll a cross-process key lock without blocking the loop; False when its holder seems stuck
    (``give_up_after`` seconds): the caller then answers without single flight rather than hang."""
    if lock.acquire(0):
        return True
    give_up = time.monotonic() + give_up_after
    delay = 0.005
    while time.monotonic() < give_up:
        await asyncio.sleep(delay)
        if lock.acquire(0):
            return True
        delay = min(delay * 1.5, 0.1)
    return False


def write_used_keys(cache_dir: str | os.PathLike[str], run_id: str | None, keys: set[str]) -> None:
    """List the keys this process served under ``runs/<run_id>/`` of the cache directory
    (bookkeeping for ``cache export --last-run`` only; never fails a run)."""
    if not run_id or not keys:
        return
    folder = Path(cache_dir) / "runs" / run_id
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{os.getpid()}.keys").write_text("\n".join(sorted(keys)) + "\n", encoding="utf-8")
    except OSError:
        pass


class LLMClient:
    """Serve :class:`LLMRequest` s from the cache or through their transport (module docstring)."""

    def __init__(self, settings: LLMSettings | None = None, *, backend: Any = None, endpoint: Any = None):
        from pytest_judgerel.llm.retry import RetryPolicy

        self.settings = settings or LLMSettings()
        # The session's endpoint: a request for its model that names no server would go to the
        # provider's default endpoint (wrong judge, real money); such a request is refused.
        self.endpoint = endpoint
        self.stats = CallStats()
        self._backend = backend
        self._owns_backend = backend is None
        self._backend_lock = threading.Lock()
        self._retry = RetryPolicy(self.settings.max_attempts, self.settings.backoff_base,
                                  self.settings.backoff_max, self.settings.retry_after_cap)
        self._inflight: dict[str, asyncio.Future] = {}
        self._session_start = time.time()
        self._flushed_hits = 0
        self._flushed_misses = 0
        self._used_keys: set[str] = set()
        self._routes: dict[tuple[str, str | None, tuple[str, ...]], str] = {}
        self._transports: dict[str, Any] = {}  # the paths to the wire, by name, built on first use
        self._planned: dict[str, LLMResponse] = {}  # dry run: the keys planned so far
        self.budget: Any = None  # the session's call and cost caps (pytest_judgerel.llm.budget)
        from pytest_judgerel.llm.prices import parse_price

        self._price = parse_price(self.settings.price_per_mtok)  # USD per token of unpriced models, or None
        if self.settings.max_calls is not None or self.settings.max_cost is not None:
            from pytest_judgerel.llm.budget import Budget

            self.budget = Budget(self.settings.max_calls, self.settings.max_cost, self.settings.cache_path,
                                 self.settings.run_id, self._price)
        self._writes: Any = None  # answers waiting to be stored (pytest_judgerel.llm.write_behind)
        self._closed = False
        self.progress: Any = None  # optional progress reporter (on_call_done/add_total), set by the plugin
        _open_clients.add(self)

    # lifecycle ---------------------------------------------------------------------------
    @property
    def backend(self) -> Any:
        """The cache backend, opened on first use (None when the cache is off)."""
        if self.settings.cache_mode == "off":
            return None
        if self._backend is None:
            with self._backend_lock:
                if self._backend is None:
                    from pytest_judgerel.llm.cache import open_backend

                    backend_url = self.settings.cache_backend
                    self._backend = open_backend(backend_url if backend_url else Path(self.settings.cache_path))
        return self._backend

    def flush_stats(self) -> None:
        """Add this client's new hits/misses to the counters stored in the cache (for ``cache stats``)."""
        backend = self._backend
        if backend is None:
            return
        hits, misses = self.stats.hits - self._flushed_hits, self.stats.misses - self._flushed_misses
        if hits or misses:
            backend.incr_stats(hits, misses)
            self._flushed_hits += hits
            self._flushed_misses += misses

    def _forget_parent_state(self) -> None:
        """After ``fork()``: the parent stores and releases what waits; the child starts clean."""
        for transport in self._transports.values():
            transport.forget()
        if self._writes is not None:
            self._writes.forget()
            self._writes = None
        self._inflight = {}

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        _open_clients.discard(self)
        try:
            if self._writes is not None:
                from pytest_judgerel.llm.write_behind import flush_at_close

                flush_at_close(self._writes)
            self.flush_stats()
            write_used_keys(self.settings.cache_path, self.settings.run_id, self._used_keys)
        finally:
            for transport in self._transports.values():
                transport.close()
            if self._owns_backend and self._backend is not None:
                self._backend.close()
                self._backend = None

    def __enter__(self) -> "LLMClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # public API --------------------------------------------------------------------------
    def complete(self, request: LLMRequest) -> LLMResponse:
        return self.complete_many([request])[0]

    async def acomplete(self, request: LLMRequest) -> LLMResponse:
        return (await self.acomplete_many([request]))[0]

    def complete_many(self, requests: Iterable[LLMRequest], *, return_exceptions: bool = False,
                      fresh: bool = False) -> list[Any]:
        """Serve all requests concurrently; results in input order.

        On failure the first error (in input order) is raised after every other
        request finished (successful answers are cached); with
        ``return_exceptions=True`` errors are returned in place instead.  ``fresh=True``
        neither reads nor writes the cache: every request goes upstream (e.g. to re-judge drift
        anchors), counted in ``stats.misses`` and ``stats.fresh``.
        """
        return self.submit_many(requests, fresh=fresh).result(return_exceptions)

    def submit_many(self, requests: Iterable[LLMRequest], *, fresh: bool = False,
                    after: "Submitted | None" = None) -> "Submitted":
        """:meth:`complete_many` started on the loop thread without waiting (:meth:`Submitted.result`
        waits); ``after``: a batch submitted before, whose calls all start before this one's."""
        batch = self._check(requests)
        if not batch:
            return Submitted(self, None)
        runtime = _runtime()
        if threading.current_thread() is runtime.thread:
            raise ConfigError("LLMClient.complete_many was called from inside the LLM loop thread "
                              "(e.g. from a scripted model); use 'await client.acomplete_many(...)'")
        started = asyncio.Event()  # bound to the loop thread's loop when first waited for
        halt = threading.Event()  # set by Submitted.cancel: no call of the batch starts after it
        prior = after.started if after is not None else None
        return Submitted(self, runtime.submit(self._run_batch(batch, fresh, started, prior, halt)), started, halt)

    async def acomplete_many(self, requests: Iterable[LLMRequest], *, return_exceptions: bool = False,
                             fresh: bool = False) -> list[Any]:
        """:meth:`complete_many` for async callers."""
        batch = self._check(requests)
        if not batch:
            return []
        runtime = _runtime()
        start = time.perf_counter()
        try:
            if asyncio.get_running_loop() is runtime.loop:
                results = await self._run_batch(batch, fresh)
            else:
                results = await asyncio.wrap_future(runtime.submit(self._run_batch(batch, fresh)))
        finally:
            self.stats.wall_time += time.perf_counter() - start
        return self._finish(results, return_exceptions)

    # internals ---------------------------------------------------------------------------
    def _check(self, requests: Iterable[LLMRequest]) -> list[LLMRequest]:
        from pytest_judgerel.llm.endpoint import provider_base_url

        if self._closed:
            raise ConfigError("this LLMClient is closed")
        batch = list(requests)
        from pytest_judgerel.llm.endpoint import guarded_endpoint

        guard = self.endpoint if self.endpoint is not None else guarded_endpoint()
        guard = guard if guard is not None and guard.api_base else None
        for i, request in enumerate(batch):
            if not isinstance(request, LLMRequest):
                raise ConfigError(f"request {i} is a {type(request).__name__}, expected LLMRequest")
            if guard is not None and request.api_base is None and request.model == guard.model:
                raise ConfigError(
                    f"a request for the session's model {guard.model!r} names no api_base, so it would go to "
                    f"the provider's default endpoint instead of {guard.api_base} (test {request.test_name}); "
                    "build it from the session endpoint (Judge(endpoint=judgerel_endpoint, ...), "
                    "LLMRequest(**judgerel_endpoint.request_fields(), ...))"
                )
            if request.api_base is None:
                # the server litellm would take from a provider variable (OPENAI_BASE_URL...) is named
                # in the request, so the cache key says which server answered
                found = provider_base_url(request.model)
                if found is not None:
                    batch[i] = replace(request, api_base=found[0])
            if self.settings.backend == "http":
                self._route(batch[i])  # a model the fast path cannot send is an error before any call
        return batch

    @staticmethod
    def _finish(results: Sequence[Any], return_exceptions: bool) -> list[Any]:
        if not return_exceptions:
            for result in results:
                if isinstance(result, BaseException):
                    raise result
        return list(results)

    async def _run_batch(self, batch: Sequence[LLMRequest], fresh: bool = False, started: Any = None,
                         prior: Any = None, halt: threading.Event | None = None) -> list[Any]:
        """Serve a batch; its answers are stored before it returns.  An answer that could not be
        stored becomes that request's error (raised by ``_finish`` unless ``return_exceptions``).
        ``started`` is set once every call of the batch has started, or the batch ended; ``prior``: the
        event of the batch to wait for first; ``halt``: once set, no further call of the batch starts."""
        try:
            results = await self._gather(batch, fresh, started, prior, halt)
        finally:
            if started is not None:
                started.set()
        writes = self._writes
        if writes is not None:
            writes.flush()
            for i, result in enumerate(results):
                if isinstance(result, LLMResponse) and not result.cached:
                    failed = writes.failure(result.key)
                    if failed is not None:
                        self.stats.errors += 1
                        results[i] = failed
        return results

    async def _gather(self, batch: Sequence[LLMRequest], fresh: bool, started: Any = None,
                      prior: Any = None, halt: threading.Event | None = None) -> list[Any]:
        """Every request's answer or error, in order: with the cache on, the batch's stored answers are
        read in one go and served here; only the others become tasks (:meth:`_serve`)."""
        progress = self.progress
        if progress is not None:
            progress.add_total(len(batch))
        settings = self.settings
        if fresh or settings.cache_mode == "off" or settings.dry_run:
            keyed: list[Any] = [None] * len(batch)
            results: list[Any] = [None] * len(batch)
            waiting: Sequence[int] = range(len(batch))
        else:
            keyed, results, waiting = _answer_hits(self, batch)
        if waiting:
            if prior is not None:
                await prior.wait()
            await _serve_all(self, batch, fresh, keyed, results, waiting, started, halt)
        return results

    async def _serve_reporting(self, request: LLMRequest, progress: Any, fresh: bool,
                               keyed: tuple[dict, str, Any] | None = None) -> LLMResponse:
        """``_serve`` plus a progress tick (calls done, hit rate) for the terminal."""
        try:
            response = await self._serve(request, fresh, keyed)
        except BaseException:
            progress.on_call_done(False)
            raise
        progress.on_call_done(response.cached)
        return response

    def _usable(self, entry: dict | None) -> "TypeGuard[dict]":
        if entry is None:
            return False
        if self.settings.cache_mode == "refresh":
            return float(entry.get("response", {}).get("timestamp", 0.0)) >= self._session_start
        return True

    async def _serve(self, request: LLMRequest, fresh: bool = False,
                     keyed: tuple[dict, str, Any] | None = None) -> LLMResponse:
        """One request's answer.  ``keyed``: its keyed fields, key and the cache's store mark, when the
        batch already found nothing stored for it (:func:`_answer_hits`)."""
        stats = self.stats
        stats.calls += 1
        mode = self.settings.cache_mode
        fields, key, mark = keyed if keyed is not None else _keyed(request)
        if mode == "off" or fresh:  # past the cache both ways
            stats.misses += 1
            stats.fresh += int(fresh)
            return await self._plan(request, key, False) if self.settings.dry_run \
                else await self._call_upstream(request, key)
        self._used_keys.add(key)
        backend = self.backend
        entry = None if keyed is not None else _lookup(self, backend, key)
        if self._usable(entry):
            stats.hits += 1
            stats.hit_latency += float(entry["response"].get("latency", 0.0) or 0.0)
            return response_from_entry(entry, key)
        if mode == "replay":
            stats.errors += 1
            raise CacheMissError(
                f"replay mode: no cached answer for test {request.test_name}, model {request.model!r}, "
                f"sample {request.sample_index}, prompt {request.prompt_excerpt()!r} (key {key[:12]}); "
                f"record it first with cache mode 'record'"
            )
        if self.settings.dry_run:  # nothing sent, nothing stored
            return await self._plan(request, key, True)
        pending = self._inflight.get(key)
        if pending is not None:  # an identical request is being answered right now
            response = await asyncio.shield(pending)
            stats.hits += 1
            return replace(response, cached=True)
        # identical requests arriving meanwhile wait for this future (single flight in this process)
        flight = self._inflight[key] = asyncio.get_running_loop().create_future()
        try:
            response = await self._fill(request, key, backend, fields, mark)
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                flight.cancel()
            else:
                flight.set_exception(exc)
                flight.exception()  # mark retrieved: those who wait get it raised
            raise
        else:
            flight.set_result(response)
        finally:
            if self._inflight.get(key) is flight:
                del self._inflight[key]
        return response

    async def _fill(self, request: LLMRequest, key: str, backend: Any, fields: dict, mark: Any = None) -> LLMResponse:
        """Single-flight miss: take the key lock, re-check the cache (where something may have been
        stored since ``mark``), call upstream, queue the answer for storage (the lock is released once
        it is stored)."""
        stats = self.stats
        lock = backend.key_lock(key)
        locked = await acquire_polling(lock, self.settings.timeout * self.settings.max_attempts + 60.0)
        handed_over = False
        try:
            entry = _lookup(self, backend, key, mark)  # another process may have answered while we waited
            if self._usable(entry):
                stats.hits += 1
                return response_from_entry(entry, key)
            stats.misses += 1
            response = await self._call_upstream(request, key)
            if self._writes is None:
                from pytest_judgerel.llm.write_behind import WriteBehind

                self._writes = WriteBehind(backend)
            self._writes.put(key, make_entry(key, fields, stored_response(response)), lock if locked else None)
            handed_over = True
            return response
        finally:
            if locked and not handed_over:
                lock.release()

    async def _plan(self, request: LLMRequest, key: str, miss: bool) -> LLMResponse:
        """Dry run: the placeholder answer of a call that would go upstream (planned); a key
        planned before in this session is a hit, as its stored answer would be in a real run.  A
        scripted model (your own function, in this process) answers for real: it costs nothing,
        and the test then goes on as it would (counted in ``inprocess_calls``, never stored)."""
        planned = self._planned.get(key) if miss else None
        if planned is not None:
            self.stats.hits += 1
            return replace(planned, cached=True)
        if miss:
            self.stats.misses += 1
        if request.model.startswith("scripted/"):
            response = await self._call_upstream(request, key)
        else:
            response = self.transport("dry").answer(request, key, self.stats, self._price)
        if miss:
            self._planned[key] = response
        return response

    def transport(self, name: str) -> Any:
        """The transport ``name`` (``"http"``, ``"litellm"``) of this client, built on first use."""
        transport = self._transports.get(name)
        if transport is None:
            transport = self._transports[name] = _new_transport(name)
        return transport

    def _route(self, request: LLMRequest) -> str:
        """``"http"`` or ``"litellm"`` for this request (:func:`pytest_judgerel.llm.wire.route`), remembered
        per model and server."""
        extra = tuple(sorted(request.extra_params)) if request.extra_params else ()
        slot = (request.model, request.api_base, extra)
        chosen = self._routes.get(slot)
        if chosen is None:
            from pytest_judgerel.llm.wire import route

            chosen = self._routes[slot] = route(self.settings.backend, request.model, request.api_base, extra)
        return chosen

    async def _call_upstream(self, request: LLMRequest, key: str) -> LLMResponse:
        """One call upstream through the request's transport, with the shared retries and accounting;
        under a budget every attempt is reserved first (an in-process model's never is)."""
        name = self._route(request)
        timeout = request.timeout if request.timeout is not None else self.settings.timeout
        in_process = is_in_process(request.model)
        budget = self.budget if not in_process else None
        try:
            call = self.transport(name).prepare(request, key, timeout)
            bill = Bill(budget, budget.worst_cost(request) if budget is not None else 0.0, self._price)
        except (LLMCallError, ConfigError) as exc:  # a missing or malformed key, an unpriced model: nothing sent
            from pytest_judgerel.errors import MissingKeyError

            # a missing key stops the session with its own message: no request, no error counted
            self.stats.errors += int(not isinstance(exc, MissingKeyError))
            raise
        try:
            return await send_with_retries(call, request, key, self.settings, self._retry, self.stats, bill)
        finally:
            if bill.sent:  # an in-process model is answered here, not upstream: counted apart
                counter = "inprocess_calls" if in_process else f"{name}_calls"
                setattr(self.stats, counter, getattr(self.stats, counter) + 1)


@dataclass
class Submitted:
    """A batch :meth:`LLMClient.submit_many` started: ``future`` is None for an empty batch."""

    client: LLMClient
    future: Any
    started: Any = None  # set on the loop thread once all its calls have started (or it ended)
    halt: Any = None  # a threading.Event: once set, no further call of the batch starts

    def result(self, return_exceptions: bool = False) -> list[Any]:
        """The batch's results in input order (waiting for them; the wait counts in
        ``stats.wall_time``); errors as in :meth:`LLMClient.complete_many`."""
        if self.future is None:
            return []
        start = time.perf_counter()
        try:
            results = self.future.result()
        except BaseException:
            self.cancel()
            raise
        finally:
            self.client.stats.wall_time += time.perf_counter() - start
        return self.client._finish(results, return_exceptions)

    def cancel(self) -> None:
        """Stop what is still waiting: no call of the batch starts after this (the calls in flight
        finish, and their answers, already paid for, are stored)."""
        if self.future is not None:
            if self.halt is not None:  # before the cancel reaches the loop: workers already running stop taking
                self.halt.set()
            self.future.cancel()  # the batch's own ``finally`` sets ``started`` (its first step always runs)


async def _serve_all(client: "LLMClient", batch: Sequence[LLMRequest], fresh: bool, keyed: list[Any],
                     results: list[Any], waiting: Sequence[int], started: Any = None,
                     halt: threading.Event | None = None) -> None:
    """:meth:`LLMClient._gather`'s second step: the requests at ``waiting`` served by as many workers
    as calls may be in flight (``max_concurrency``), each taking the next request when it is done,
    their answers or errors put in ``results``; ``started`` is set once no request is left to take.
    The workers are shielded: once ``halt`` is set or the batch is cancelled no worker takes another
    request, and the calls already started finish and are stored (paid for)."""
    todo = iter(waiting)
    halt = threading.Event() if halt is None else halt
    progress = client.progress

    async def worker() -> None:
        for i in todo:
            if halt.is_set():
                return
            try:
                results[i] = await (client._serve(batch[i], fresh, keyed[i]) if progress is None
                                    else client._serve_reporting(batch[i], progress, fresh, keyed[i]))
            except Exception as exc:
                results[i] = exc
        if started is not None:
            started.set()

    workers = min(len(waiting), client.settings.max_concurrency)
    job = asyncio.ensure_future(worker()) if workers == 1 else asyncio.gather(*(worker() for _ in range(workers)))
    try:
        await asyncio.shield(job)
    except asyncio.CancelledError:
        halt.set()
        raise


def _keyed(request: LLMRequest, mark: Any = None) -> tuple[dict, str, Any]:
    """The request's keyed fields, its key (computed once: long MindEval histories make it cost) and
    ``mark``, the cache's store mark taken before the batch looked its key up."""
    fields = key_fields(request)
    return fields, key_from_fields(fields), mark


def _answer_hits(client: "LLMClient", batch: Sequence[LLMRequest]
                 ) -> tuple[list[tuple[dict, str, Any]], list[Any], list[int]]:
    """:meth:`LLMClient._gather`'s first step: each request's keyed fields, key and the cache's store
    mark (taken before the lookup), the answers of those stored (read in one go), and the positions
    of the others, still to serve."""
    stats, progress, used = client.stats, client.progress, client._used_keys
    backend = client.backend
    store_mark = getattr(backend, "store_mark", None)
    mark = store_mark() if store_mark is not None else None  # before the lookup: what it cannot have seen
    keyed = [_keyed(request, mark) for request in batch]
    found = _lookup_many(client, backend, [key for _, key, _ in keyed])
    results: list[Any] = [None] * len(batch)
    waiting = []
    for i, (_fields, key, _mark) in enumerate(keyed):
        entry = found.get(key)
        if client._usable(entry):
            stats.calls += 1
            stats.hits += 1
            stats.hit_latency += float(entry["response"].get("latency", 0.0) or 0.0)
            used.add(key)
            results[i] = response_from_entry(entry, key)
            if progress is not None:
                progress.on_call_done(True)
        else:
            waiting.append(i)
    return keyed, results, waiting


def _lookup(client: "LLMClient", backend: Any, key: str, mark: Any = None) -> dict | None:
    """The entry for ``key``: an answer waiting to be stored, else the backend's (a corrupt one
    counted); None without reading the backend when nothing can have stored ``key`` since ``mark``
    (``backend.stored_since``: the batch's lookup after the mark missed it)."""
    writes = client._writes
    if writes is not None:
        waiting = writes.get(key)
        if waiting is not None:
            return dict(waiting)
    if mark is not None and not backend.stored_since(mark, key):
        return None
    corrupt_before = getattr(backend, "corrupt", 0)
    entry = backend.get(key)
    if getattr(backend, "corrupt", 0) != corrupt_before:
        client.stats.corrupt += 1
    return entry


def _lookup_many(client: "LLMClient", backend: Any, keys: list[str]) -> dict[str, dict]:
    """:meth:`LLMClient._lookup` of many keys: the answers waiting to be stored, the rest in one read."""
    writes = client._writes
    found: dict[str, dict] = {}
    if writes is not None and len(writes):
        for key in keys:
            waiting = writes.get(key)
            if waiting is not None:
                found[key] = dict(waiting)
    rest = [key for key in keys if key not in found] if found else keys
    corrupt_before = getattr(backend, "corrupt", 0)
    found.update(backend.get_many(rest, request=False) if hasattr(backend, "get_many") else
                 {key: entry for key in rest if (entry := backend.get(key)) is not None})
    client.stats.corrupt += getattr(backend, "corrupt", 0) - corrupt_before
    return found


def _new_transport(name: str) -> Any:
    """The transport ``name`` (``"http"``, ``"litellm"``, ``"dry"``)."""
    if name == "http":
        from pytest_judgerel.llm.http_transport import HTTPTransport

        return HTTPTransport()
    if name == "litellm":
        from pytest_judgerel.llm.litellm_transport import LiteLLMTransport

        return LiteLLMTransport()
    if name == "dry":
        from pytest_judgerel.llm.dry_transport import DryTransport

        return DryTransport()
    raise ConfigError(f"no transport {name!r}")
