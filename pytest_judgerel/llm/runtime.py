"""The process-wide event loop every model call runs on ("judgerel-llm" thread).

One loop per process holds the process's semaphore (``max_concurrency``) and optional
requests-per-minute limiter; sync callers block on it, async callers await it, and code
already inside an event loop can call the sync API safely (the work runs in this thread).
One loop also keeps litellm's per-loop HTTP clients valid across calls.  It is stopped at
exit (a daemon thread frozen mid-import deadlocks interpreter teardown).
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import os
import threading
import time
from typing import Any

__all__ = ["runtime", "deadline"]


class _Runtime:
    """One background event loop per process, with its semaphore and rate limiter."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.loop = asyncio.new_event_loop()
        self._semaphore: asyncio.Semaphore | None = None
        self._semaphore_size = 0
        self._next_slot = 0.0
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self.loop)
            self.loop.call_soon(ready.set)
            self.loop.run_forever()

        self.thread = threading.Thread(target=run, name="judgerel-llm", daemon=True)
        self.thread.start()
        ready.wait()

    def semaphore(self, size: int) -> asyncio.Semaphore:
        """The process semaphore (loop thread only); a client asking another size resizes it."""
        if self._semaphore is None or self._semaphore_size != size:
            self._semaphore = asyncio.Semaphore(size)
            self._semaphore_size = size
        return self._semaphore

    async def rate_limit(self, rpm: float | None) -> None:
        """Space call starts 60/rpm seconds apart (loop thread only, so no lock needed)."""
        if rpm is None:
            return
        now = time.monotonic()
        slot = max(now, self._next_slot)
        self._next_slot = slot + 60.0 / rpm
        if slot > now:
            await asyncio.sleep(slot - now)

    def submit(self, coro: Any) -> concurrent.futures.Future:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def shutdown(self, timeout: float = 5.0) -> None:
        """Cancel what still runs on the loop (e.g. litellm's logging tasks) and stop it.

        Called at exit: a daemon thread frozen in the middle of an import during interpreter
        finalization deadlocks the next import (seen with litellm's HTTP-client ``__del__``).
        """
        if self.pid != os.getpid() or not self.thread.is_alive():
            return

        async def cancel_rest() -> None:
            current = asyncio.current_task()
            rest = [task for task in asyncio.all_tasks() if task is not current]
            for task in rest:
                task.cancel()
            if rest:
                await asyncio.wait(rest, timeout=timeout / 2)

        try:
            self.submit(cancel_rest()).result(timeout)
        except Exception:
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout)


_runtime_lock = threading.Lock()
_runtime_obj: _Runtime | None = None


def runtime() -> _Runtime:
    """The process's runtime (created on first use, and anew in a forked child)."""
    global _runtime_obj
    runtime = _runtime_obj
    if runtime is not None and runtime.pid == os.getpid():
        return runtime
    with _runtime_lock:
        if _runtime_obj is None or _runtime_obj.pid != os.getpid():  # first use, or a forked child
            _runtime_obj = _Runtime()
            atexit.register(_runtime_obj.shutdown)
        return _runtime_obj


if hasattr(asyncio, "timeout"):  # Python >= 3.11: no extra task per call
    deadline: Any = asyncio.timeout
else:  # pragma: no cover - Python 3.10
    import contextlib

    @contextlib.asynccontextmanager
    async def _deadline(seconds: float):  # type: ignore[no-untyped-def]
        task = asyncio.current_task()
        assert task is not None  # called inside a task
        handle = asyncio.get_running_loop().call_later(seconds, task.cancel)
        try:
            yield
        except asyncio.CancelledError as exc:
            raise TimeoutError(f"no answer within {seconds:.0f} s") from exc
        finally:
            handle.cancel()

    deadline = _deadline
