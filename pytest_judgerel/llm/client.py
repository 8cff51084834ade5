"""LLMClient: cache first, litellm on a miss, with concurrency, rate limit and retries.

All model work of a process runs on the one background event loop of
:mod:`pytest_judgerel.llm.runtime`; sync callers block on it, async callers await it.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
import time
import weakref
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Iterable, Sequence, TypeGuard

from pytest_judgerel.errors import CacheMissError, ConfigError, LLMCallError
from pytest_judgerel.llm.endpoint import is_in_process
from pytest_judgerel.llm.keys import key_fields, key_from_fields
from pytest_judgerel.llm.request import LLMRequest, LLMResponse
from pytest_judgerel.llm.runtime import deadline as _deadline
from pytest_judgerel.llm.runtime import runtime as _runtime

__all__ = ["LLMClient", "LLMSettings", "CallStats"]


def _env_backend() -> str:
    """``JUDGEREL_BACKEND`` (checked by LLMSettings), else ``auto``."""
    return os.environ.get("JUDGEREL_BACKEND", "").strip() or "auto"


@dataclass(frozen=True)
class LLMSettings:
    """Client configuration.  ``timeout`` is per attempt (seconds); ``rpm`` = requests per minute (None = no limit).

    ``cache_backend`` is a shared store's URL (``redis://``, ``rediss://``, ``unix://``);
    when set (not None or "") it replaces the diskcache directory ``cache_dir``.
    ``backend`` is the path to the wire (:mod:`pytest_judgerel.llm.wire`): ``auto`` (the HTTP fast
    path for OpenAI-compatible endpoints, litellm otherwise), ``litellm`` or ``http``; its default
    is the environment variable ``JUDGEREL_BACKEND`` (the session's ``--judgerel-backend`` reads the
    same variable), else ``auto``.
    """

    cache_dir: str | os.PathLike[str] = ".judgerel_cache"
    cache_mode: str = "record"
    max_concurrency: int = 16
    rpm: float | None = None
    timeout: float = 120.0
    max_attempts: int = 4
    backoff_base: float = 0.5
    backoff_max: float = 20.0
    retry_after_cap: float = 30.0
    cache_backend: str | None = None
    run_id: str | None = None  # when set, the keys this client served are listed under it (see finish_run)
    backend: str = field(default_factory=_env_backend)

    def __post_init__(self) -> None:
        from pytest_judgerel.llm.backend import check_mode
        from pytest_judgerel.llm.wire import check_backend

        check_mode(self.cache_mode)
        check_backend(self.backend)
        if self.cache_backend and (not isinstance(self.cache_backend, str) or "://" not in self.cache_backend):
            raise ConfigError("cache_backend must be a URL such as redis://host:6379/0 (or None for the "
                              f"diskcache directory), got a {type(self.cache_backend).__name__} without '://'")
        if isinstance(self.max_concurrency, bool) or not isinstance(self.max_concurrency, int) \
                or self.max_concurrency < 1:
            raise ConfigError(f"max_concurrency must be an int >= 1, got {self.max_concurrency!r}")
        if self.rpm is not None and not self.rpm > 0:
            raise ConfigError(f"rpm must be > 0 or None, got {self.rpm!r}")
        if not self.timeout > 0:
            raise ConfigError(f"timeout must be > 0 seconds, got {self.timeout!r}")
        if isinstance(self.max_attempts, bool) or not isinstance(self.max_attempts, int) or self.max_attempts < 1:
            raise ConfigError(f"max_attempts must be an int >= 1, got {self.max_attempts!r}")


@dataclass
class CallStats:
    """Counters of one client.  Tokens and cost count upstream calls only (what this run spent).

    ``calls`` = requests served; ``hits`` from the cache (or an identical request in
    flight); ``misses`` needed the model; ``retries`` = extra attempts; ``errors`` =
    requests that ended in an error (a missing key, with which nothing is sent, is not counted); ``corrupt`` = cache entries found unreadable (each
    answered again as a miss); ``http_calls`` / ``litellm_calls`` = upstream calls sent through
    the HTTP fast path / through litellm (in-process models count in neither); ``wall_time`` =
    seconds spent in client calls.
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
    except OSError:
        pass


# the client -----------------------------------------------------------------------------------
#: sent to an ``api_base`` server when no key is configured (local servers need none)
PLACEHOLDER_KEY = "judgerel-no-key"


class _SecretStr(str):
    """An API key whose repr is masked, so ``pytest -l`` (showlocals) never prints it."""

    def __repr__(self) -> str:
        return "'***'"


class LLMClient:
    """Serve :class:`LLMRequest` s from the cache or through ``litellm.acompletion``."""

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
        self._known_cost_models: dict[str, bool] = {}
        self._missing_keys: dict[tuple[str, str | None], tuple[str, ...]] = {}
        self._used_keys: set[str] = set()
        self._routes: dict[tuple[str, str | None, tuple[str, ...]], str] = {}
        self._wire: Any = None  # the fast path's pooled HTTP client (pytest_judgerel.llm.wire), on first use
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
                    self._backend = open_backend(backend_url if backend_url else Path(self.settings.cache_dir))
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

    def _write_used_keys(self) -> None:
        """List the keys this process served under ``runs/<run_id>/`` of the cache directory."""
        if not self.settings.run_id or not self._used_keys:
            return
        folder = Path(self.settings.cache_dir) / "runs" / self.settings.run_id
        try:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{os.getpid()}.keys").write_text("\n".join(sorted(self._used_keys)) + "\n", encoding="utf-8")
        except OSError:
            pass  # bookkeeping for `cache export --last-run` only; never fails a run

    def _flush_writes(self) -> None:
        """Store the answers still waiting, on the loop thread while it runs (at close); warn about
        answers that could not be stored and that no batch reported."""
        writes = self._writes
        if writes is None:
            return
        if len(writes):
            runtime = _runtime()
            if runtime.loop.is_running() and threading.current_thread() is not runtime.thread:
                async def flush() -> None:
                    writes.flush()

                runtime.submit(flush()).result(60)
            else:
                writes.flush()
        lost = writes.unclaimed()
        if lost:
            import warnings

            first = next(iter(lost.values()))
            warnings.warn(f"pytest-judgerel: {len(lost)} answer(s) could not be stored in the cache and will be "
                          f"asked again next run: {type(first).__name__}: {first}", RuntimeWarning, stacklevel=3)

    def _forget_parent_state(self) -> None:
        """After ``fork()``: the parent stores and releases what waits; the child starts clean."""
        self._wire = None
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
            self._flush_writes()
            self.flush_stats()
            self._write_used_keys()
        finally:
            if self._wire is not None:
                self._wire.close()
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
        ``return_exceptions=True`` errors are returned in place instead.  ``fresh=True`` asks
        the model every time and never reads or writes the cache (re-judging drift anchors).
        """
        batch = self._check(requests)
        if not batch:
            return []
        runtime = _runtime()
        if threading.current_thread() is runtime.thread:
            raise ConfigError("LLMClient.complete_many was called from inside the LLM loop thread "
                              "(e.g. from a scripted model); use 'await client.acomplete_many(...)'")
        start = time.perf_counter()
        future = runtime.submit(self._run_batch(batch, fresh))
        try:
            results = future.result()
        except BaseException:
            future.cancel()
            raise
        finally:
            self.stats.wall_time += time.perf_counter() - start
        return self._finish(results, return_exceptions)

    async def acomplete_many(self, requests: Iterable[LLMRequest], *, return_exceptions: bool = False) -> list[Any]:
        batch = self._check(requests)
        if not batch:
            return []
        runtime = _runtime()
        start = time.perf_counter()
        try:
            if asyncio.get_running_loop() is runtime.loop:
                results = await self._run_batch(batch)
            else:
                results = await asyncio.wrap_future(runtime.submit(self._run_batch(batch)))
        finally:
            self.stats.wall_time += time.perf_counter() - start
        return self._finish(results, return_exceptions)

    # internals ---------------------------------------------------------------------------
    def _guard(self) -> Any:
        """The endpoint whose model must not leave its server: this client's, else the current
        session's (:mod:`pytest_judgerel.session.context`), so a client built by hand is covered too."""
        if self.endpoint is not None:
            return self.endpoint
        from pytest_judgerel.llm.endpoint import ACTIVE_SESSION, resolve_endpoint

        context = ACTIVE_SESSION.get()
        if context is not None:
            return context.endpoint_or_none()
        try:  # outside a session: the endpoint the environment names (the same resolution)
            return resolve_endpoint()
        except ConfigError:
            return None

    def _check(self, requests: Iterable[LLMRequest]) -> list[LLMRequest]:
        from pytest_judgerel.llm.endpoint import provider_base_url

        if self._closed:
            raise ConfigError("this LLMClient is closed")
        batch = list(requests)
        guard = self._guard()
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

    async def _run_batch(self, batch: Sequence[LLMRequest], fresh: bool = False) -> list[Any]:
        """Serve a batch; its answers are stored before it returns.  An answer that could not be
        stored becomes that request's error (raised by ``_finish`` unless ``return_exceptions``)."""
        results = await self._gather(batch, fresh)
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

    async def _gather(self, batch: Sequence[LLMRequest], fresh: bool = False) -> list[Any]:
        progress = self.progress
        if progress is None:
            if len(batch) == 1:
                try:
                    return [await self._serve(batch[0], fresh)]
                except Exception as exc:
                    return [exc]
            return await asyncio.gather(*(self._serve(r, fresh) for r in batch), return_exceptions=True)
        progress.add_total(len(batch))
        return await asyncio.gather(*(self._serve_reporting(r, progress, fresh) for r in batch),
                                    return_exceptions=True)

    async def _serve_reporting(self, request: LLMRequest, progress: Any, fresh: bool = False) -> LLMResponse:
        """``_serve`` plus a progress tick (calls done, hit rate) for the terminal."""
        try:
            response = await self._serve(request, fresh)
        except BaseException:
            progress.on_call_done(False)
            raise
        progress.on_call_done(response.cached)
        return response

    def _from_entry(self, entry: dict, key: str) -> LLMResponse:
        response = entry["response"]
        return LLMResponse(text=response["text"], model=response.get("model", ""),
                           usage=dict(response.get("usage") or {}), cost=float(response.get("cost", 0.0)),
                           latency=float(response.get("latency", 0.0)), cached=True, key=key,
                           timestamp=float(response.get("timestamp", 0.0)), attempts=int(response.get("attempts", 1)),
                           system_fingerprint=response.get("system_fingerprint") or None)

    def _usable(self, entry: dict | None) -> "TypeGuard[dict]":
        if entry is None:
            return False
        if self.settings.cache_mode == "refresh":
            return float(entry.get("response", {}).get("timestamp", 0.0)) >= self._session_start
        return True

    async def _serve(self, request: LLMRequest, fresh: bool = False) -> LLMResponse:
        stats = self.stats
        stats.calls += 1
        mode = self.settings.cache_mode
        fields = key_fields(request)  # computed once: long MindEval histories make it cost
        key = key_from_fields(fields)
        if mode == "off" or fresh:
            stats.misses += 1
            return await self._call_upstream(request, key)
        self._used_keys.add(key)
        backend = self.backend
        entry = self._lookup(backend, key)
        if self._usable(entry):
            stats.hits += 1
            return self._from_entry(entry, key)
        if mode == "replay":
            stats.errors += 1
            raise CacheMissError(
                f"replay mode: no cached answer for test {request.test_name}, model {request.model!r}, "
                f"sample {request.sample_index}, prompt {request.prompt_excerpt()!r} (key {key[:12]}); "
                f"record it first with cache mode 'record'"
            )
        pending = self._inflight.get(key)
        if pending is not None:  # an identical request is being answered right now
            response = await asyncio.shield(pending)
            stats.hits += 1
            return replace(response, cached=True)
        # The fill runs as its own task: if this caller is cancelled, the paid-for answer is
        # still stored and the key lock released; later identical requests join it.
        task = asyncio.get_running_loop().create_task(self._fill(request, key, backend, fields))
        self._inflight[key] = task

        def forget(done: asyncio.Task, key: str = key) -> None:
            if self._inflight.get(key) is done:
                del self._inflight[key]
            if not done.cancelled():
                done.exception()  # mark retrieved: the error is re-raised to the waiting callers

        task.add_done_callback(forget)
        return await asyncio.shield(task)

    def _lookup(self, backend: Any, key: str) -> dict | None:
        """The entry for ``key``: an answer waiting to be stored, else the backend's (a corrupt
        one counted)."""
        writes = self._writes
        if writes is not None:
            waiting = writes.get(key)
            if waiting is not None:
                return dict(waiting)
        corrupt_before = getattr(backend, "corrupt", 0)
        entry = backend.get(key)
        if getattr(backend, "corrupt", 0) != corrupt_before:
            self.stats.corrupt += 1
        return entry

    async def _fill(self, request: LLMRequest, key: str, backend: Any, fields: dict) -> LLMResponse:
        """Single-flight miss: take the key lock, re-check the cache, call upstream, queue the answer
        for storage (the lock is released once it is stored)."""
        stats = self.stats
        lock = backend.key_lock(key)
        locked = await self._acquire(lock)
        handed_over = False
        try:
            entry = self._lookup(backend, key)  # another process may have answered while we waited
            if self._usable(entry):
                stats.hits += 1
                return self._from_entry(entry, key)
            stats.misses += 1
            response = await self._call_upstream(request, key)
            from pytest_judgerel.llm.backend import make_entry

            if self._writes is None:
                from pytest_judgerel.llm.write_behind import WriteBehind

                self._writes = WriteBehind(backend)
            self._writes.put(key, make_entry(key, fields, {
                "text": response.text, "model": response.model, "usage": dict(response.usage),
                "cost": response.cost, "latency": response.latency, "timestamp": response.timestamp,
                "attempts": response.attempts, "system_fingerprint": response.system_fingerprint}),
                lock if locked else None)
            handed_over = True
            return response
        finally:
            if locked and not handed_over:
                lock.release()

    async def _acquire(self, lock: Any) -> bool:
        """Poll the cross-process key lock without blocking the loop."""
        if lock.acquire(0):
            return True
        give_up = time.monotonic() + self.settings.timeout * self.settings.max_attempts + 60.0
        delay = 0.005
        while time.monotonic() < give_up:
            await asyncio.sleep(delay)
            if lock.acquire(0):
                return True
            delay = min(delay * 1.5, 0.1)
        return False  # the holder is stuck: answer without single-flight rather than hang

    def _litellm_kwargs(self, request: LLMRequest, key: str | None = None) -> dict[str, Any]:
        timeout = request.timeout if request.timeout is not None else self.settings.timeout
        kwargs: dict[str, Any] = {
            "model": request.model,
            "messages": [{"role": m["role"], "content": m["content"]} for m in request.messages],
            "timeout": timeout,
            "max_retries": 0,
            "num_retries": 0,
        }
        kwargs.update(request.sampling())
        if request.api_base is not None:
            kwargs["api_base"] = request.api_base
        if request.api_key is not None:
            kwargs["api_key"] = _SecretStr(request.api_key)
        from pytest_judgerel.llm.litellm_setup import is_custom_provider

        custom = is_custom_provider(request.model)
        if request.grammar is not None:
            if custom:
                kwargs["grammar"] = request.grammar
            else:  # llama.cpp-compatible servers read "grammar" from the JSON body
                kwargs["extra_body"] = {"grammar": request.grammar}
        if custom and key is not None and request.seed is None:
            # In-process providers (local model, scripted) draw from a seed derived from the cache
            # key: repeated samples (different sample_index) are distinct draws, yet each one is
            # reproducible.  Remote APIs sample on their own; the key still keeps repeats apart.
            kwargs["sample_seed"] = int(key[:8], 16)
        extra = dict(request.extra_params)
        if isinstance(extra.get("extra_body"), dict) and isinstance(kwargs.get("extra_body"), dict):
            extra["extra_body"] = {**kwargs["extra_body"], **extra["extra_body"]}  # keep the grammar
        kwargs.update(extra)
        return kwargs

    def _missing_env_keys(self, litellm: Any, request: LLMRequest) -> tuple[str, ...]:
        """Environment variables litellm would read for this model's key and finds unset."""
        slot = (request.model, request.api_base)
        if slot not in self._missing_keys:
            try:
                found = litellm.validate_environment(model=request.model, api_base=request.api_base)
                missing = tuple(found.get("missing_keys") or ()) if not found.get("keys_in_environment") else ()
            except Exception:
                missing = ()
            self._missing_keys[slot] = missing
        return self._missing_keys[slot]

    def _key_hint(self, litellm: Any, request: LLMRequest) -> str:
        """What to set when a call failed for want of a key."""
        if request.api_base:
            return f"set JUDGEREL_API_KEY to the key of {request.api_base}"
        missing = self._missing_env_keys(litellm, request)
        if missing:
            return f"set the environment variable {' or '.join(missing)} (not set in this process)"
        return "check the key in the provider's environment variable"

    def _cost(self, litellm: Any, raw: Any, model: str) -> float:
        hidden = getattr(raw, "_hidden_params", None) or {}
        cost = hidden.get("response_cost")
        if cost is not None:
            return float(cost)
        known = self._known_cost_models.get(model)
        if known is None:
            bare = model.split("/", 1)[-1]
            known = model in litellm.model_cost or bare in litellm.model_cost
            self._known_cost_models[model] = known
        if not known:
            return 0.0
        try:
            return float(litellm.completion_cost(completion_response=raw) or 0.0)
        except Exception:
            return 0.0

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
        """One call upstream through the request's path, with the shared retries and accounting."""
        if self._route(request) == "http":
            send, hint = self._http_sender(request)
            self.stats.http_calls += 1
        else:
            send, hint = self._litellm_sender(request, key)
            if not is_in_process(request.model):  # an in-process model is answered here, not upstream
                self.stats.litellm_calls += 1
        runtime = _runtime()
        settings = self.settings
        attempt = 0
        while True:
            attempt += 1
            await runtime.rate_limit(settings.rpm)
            async with runtime.semaphore(settings.max_concurrency):
                started = time.perf_counter()
                try:
                    reply = await send()
                    latency = time.perf_counter() - started
                    failure = None
                except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
                    raise
                except BaseException as exc:  # noqa: BLE001 - classified below
                    from pytest_judgerel.llm.retry import classify_failure

                    failure = classify_failure(exc)
                    error = exc
            if failure is None:
                break
            if not failure.retryable or attempt >= settings.max_attempts:
                self.stats.errors += 1
                status = f"HTTP {failure.status}" if failure.status else failure.kind
                why = "not retryable" if not failure.retryable else f"gave up after {attempt} attempts"
                if failure.kind == "auth":
                    why += f"; missing or rejected key: {hint()}"
                # ``from None``: the provider's traceback would show litellm's frame arguments
                # (api_key=...) in pytest's long tracebacks and JUnit XML; its message is kept.
                where = f" at {request.api_base}" if request.api_base else ""  # which server did not answer
                raise LLMCallError(
                    f"model {request.model!r}{where} call failed ({status}, {why}) for test {request.test_name}: "
                    f"{type(error).__name__}: {failure.message}"
                ) from None
            self.stats.retries += 1
            await asyncio.sleep(self._retry.delay(attempt, failure.retry_after))
        usage, cost = reply.usage, reply.cost
        self.stats.prompt_tokens += usage["prompt_tokens"]
        self.stats.completion_tokens += usage["completion_tokens"]
        self.stats.cost += cost
        return LLMResponse(text=str(reply.text), model=reply.model, usage=usage, cost=cost, latency=latency,
                           cached=False, key=key, timestamp=time.time(), attempts=attempt,
                           system_fingerprint=reply.system_fingerprint)

    def _missing_key_error(self, request: LLMRequest, hint: str) -> Exception:
        from pytest_judgerel.errors import MissingKeyError

        # not counted in ``errors``: no request was sent (the session stops on it with its message)
        return MissingKeyError(
            f"model {request.model!r} needs an API key and none is configured (not retryable): "
            f"{hint}; no request was sent (test {request.test_name})")

    def _http_sender(self, request: LLMRequest) -> tuple[Any, Any]:
        """The fast path's attempt (:mod:`pytest_judgerel.llm.wire`) and its key hint."""
        from pytest_judgerel.llm.retry import EmptyResponseError
        from pytest_judgerel.llm.wire import WIRE_PROVIDERS, WireTransport

        variable = WIRE_PROVIDERS[request.model.partition("/")[0]]

        def hint() -> str:
            if request.api_base:
                return f"set JUDGEREL_API_KEY to the key of {request.api_base}"
            return f"set the environment variable {variable}" + ("" if os.environ.get(variable) else
                                                                 " (not set in this process)")

        api_key = request.api_key or os.environ.get(variable) or None
        if api_key is not None and (api_key != api_key.strip() or not api_key.isprintable()):
            # httpx would refuse the header with the key in its message (a trailing newline from a
            # .env file is the usual cause): say so without the key, and send nothing
            self.stats.errors += 1
            where = "the request's api_key" if request.api_key else f"the environment variable {variable}"
            raise LLMCallError(f"model {request.model!r}: {where} contains whitespace or a control character "
                               f"(a trailing newline?); strip it. No request was sent (test {request.test_name})")
        if api_key is None:
            if not request.api_base:  # the provider's own endpoint without a key: say so, send nothing
                raise self._missing_key_error(request, hint())
            api_key = PLACEHOLDER_KEY  # a local server usually needs none (the litellm path does the same)
        if self._wire is None:
            self._wire = WireTransport()
        wire = self._wire
        call = wire.prepare(request, api_key)
        timeout = request.timeout if request.timeout is not None else self.settings.timeout
        from pytest_judgerel.llm.prices import call_cost

        async def send() -> _Reply:
            async with _deadline(timeout * 1.5 + 5.0):  # httpx's timeout is per read, this one per call
                reply = await wire.send(call, timeout)
            if not isinstance(reply.text, str) or not reply.text.strip():
                raise EmptyResponseError(f"model {request.model} returned empty content")
            return _Reply(reply.text, reply.model, reply.usage, call_cost(request.model, reply.usage),
                          reply.system_fingerprint)

        return send, hint

    def _litellm_sender(self, request: LLMRequest, key: str) -> tuple[Any, Any]:
        """litellm's attempt and its key hint (the reference path: every provider litellm knows)."""
        from pytest_judgerel.llm.litellm_setup import get_litellm, is_custom_provider
        from pytest_judgerel.llm.retry import EmptyResponseError

        if request.model.startswith("local/"):
            from pytest_judgerel.llm.local import ensure_local_provider

            ensure_local_provider()
        litellm = get_litellm()
        kwargs = self._litellm_kwargs(request, key)
        if request.api_key is None and not is_custom_provider(request.model) \
                and self._missing_env_keys(litellm, request):
            if request.api_base:
                # a local server (llama.cpp, vLLM, Ollama) usually needs no key, but litellm's
                # OpenAI client refuses to call without one: send a placeholder (never a real key)
                kwargs["api_key"] = _SecretStr(PLACEHOLDER_KEY)
            else:  # the provider's own endpoint without a key: say so, send nothing
                raise self._missing_key_error(request, self._key_hint(litellm, request))

        async def send() -> _Reply:
            # litellm enforces `timeout` per request; this outer bound only guards providers that ignore it
            async with _deadline(kwargs["timeout"] * 1.5 + 5.0):
                raw = await litellm.acompletion(**kwargs)
            choice = raw.choices[0] if raw.choices else None
            text = getattr(getattr(choice, "message", None), "content", None)
            if not isinstance(text, str) or not text.strip():
                raise EmptyResponseError(f"model {request.model} returned empty content")
            usage_obj = getattr(raw, "usage", None)
            usage = {name: int(getattr(usage_obj, name, 0) or 0)
                     for name in ("prompt_tokens", "completion_tokens", "total_tokens")}
            fingerprint = getattr(raw, "system_fingerprint", None)
            return _Reply(text, str(getattr(raw, "model", "") or request.model), usage,
                          self._cost(litellm, raw, request.model), str(fingerprint) if fingerprint else None)

        return send, lambda: self._key_hint(litellm, request)


@dataclass(frozen=True)
class _Reply:
    """One successful attempt, whichever path sent it."""

    text: str
    model: str
    usage: dict[str, int]
    cost: float
    system_fingerprint: str | None = None
