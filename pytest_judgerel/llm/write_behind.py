"""Cache writes grouped: answers are stored a few milliseconds after they arrive, many per transaction.

A commit per answer on the event loop would cost more of the plugin's own per-call CPU than
anything else it does in record mode.  So an answer waits in :class:`WriteBehind` until the next
flush, which stores every waiting answer with one
:meth:`~pytest_judgerel.llm.backend.CacheBackend.set_many` (one SQLite transaction, one Redis
round trip) and then releases their cross-process key locks.

What stays true:

* an identical request in this process is served from the waiting answers (:meth:`WriteBehind.get`),
  never sent again;
* another process waiting on the key lock takes it only after the answer is stored, so it reads a
  hit (single flight across xdist workers);
* a flush comes at most ``delay`` seconds after an answer arrives, when ``limit`` answers wait, at
  the end of every ``complete_many`` / ``acomplete_many`` and when the client closes: a caller that
  got its answers back finds them stored, and a SIGKILL loses at most ``delay`` seconds of answers;
* an answer that could not be stored is reported to the batch it belongs to (an error in place of
  its result, or raised), whichever flush met the error; one whose caller is gone is reported when
  the client closes (a ``RuntimeWarning``).

All methods run on the LLM loop thread (``close`` after the loop stopped).
"""

from __future__ import annotations

import asyncio
from typing import Any, Mapping

__all__ = ["WriteBehind"]


class WriteBehind:
    """Answers waiting to be stored in ``backend``, flushed in groups (module docstring).

    A group that fails to store is never raised at whoever happens to flush it: the error is kept
    per key (:meth:`failure`), so the batch that owns an answer learns that its answer was not
    stored, and an answer no batch claims (its caller was cancelled) is reported at close
    (:meth:`unclaimed`)."""

    def __init__(self, backend: Any, delay: float = 0.02, limit: int = 64):
        self.backend = backend
        self.delay = delay
        self.limit = limit
        self._entries: dict[str, Mapping[str, Any]] = {}
        self._locks: list[Any] = []
        self._timer: asyncio.TimerHandle | None = None
        self._failed: dict[str, BaseException] = {}
        self.flushes = 0  # transactions written (for tests and benchmarks)

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> Mapping[str, Any] | None:
        """The entry waiting for ``key``, or None."""
        return self._entries.get(key)

    def put(self, key: str, entry: Mapping[str, Any], lock: Any = None) -> None:
        """Queue ``entry``; ``lock`` (a held key lock, or None) is released once it is stored."""
        self._entries[key] = entry
        if lock is not None:
            self._locks.append(lock)
        if len(self._entries) >= self.limit:
            self.flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.delay, self.flush)

    def flush(self) -> None:
        """Store every waiting entry in one group, then release their key locks.  Never raises: a
        storage error is kept for each key of the group (:meth:`failure`)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        entries, self._entries = self._entries, {}
        locks, self._locks = self._locks, []
        try:
            if entries:
                self.backend.set_many(entries)
                self.flushes += 1
        except Exception as exc:  # noqa: BLE001 - kept per key, raised to the batch that owns it
            for key in entries:
                self._failed[key] = exc
        finally:
            for lock in locks:
                try:
                    lock.release()
                except Exception:  # noqa: BLE001 - a lock that expired (Redis TTL) is released already
                    pass

    def failure(self, key: str) -> BaseException | None:
        """The error that kept ``key``'s answer from being stored (reported once), or None."""
        return self._failed.pop(key, None) if self._failed else None

    def unclaimed(self) -> dict[str, BaseException]:
        """Every storage error no batch has claimed (then forgotten)."""
        failed, self._failed = self._failed, {}
        return failed

    def forget(self) -> None:
        """Drop what waits without storing it or releasing its locks (a forked child's inherited
        copy: the parent stores and releases them)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._entries, self._locks, self._failed = {}, [], {}


def flush_at_close(writes: WriteBehind) -> None:
    """Store the answers still waiting, on the loop thread while it runs (a client's close); warn
    about answers that could not be stored and that no batch reported."""
    import threading

    from pytest_judgerel.llm.runtime import runtime as loop_runtime

    if len(writes):
        runtime = loop_runtime()
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
                      f"asked again next run: {type(first).__name__}: {first}", RuntimeWarning, stacklevel=4)
