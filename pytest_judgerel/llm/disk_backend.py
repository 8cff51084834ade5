"""The default cache backend: ``diskcache`` (SQLite, WAL) in a directory.

A corrupt entry (bytes that no longer decode) is a miss that is counted (``corrupt``)
and answered again; a corrupt database (``file is not a database``, ``malformed``)
raises :class:`~pytest_judgerel.errors.CacheCorruptError` naming the folder and the fix
(``judgerel cache salvage DIR``, see :mod:`pytest_judgerel.llm.cache_admin`).
"""

from __future__ import annotations

import os
import weakref
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from pytest_judgerel.errors import CacheCorruptError
from pytest_judgerel.llm.backend import (STATS_PREFIX, CacheBackend, KeyLock, decode_answer, decode_entry,
                                         encode_entry)

__all__ = ["DiskCacheBackend", "corrupt_database_error"]

#: diskcache's mode of a value kept in its row as bytes (``diskcache.core.MODE_RAW``)
_MODE_RAW = 1
#: sqlite messages that mean the whole database is unusable (not one bad row)
_FATAL = ("not a database", "malformed", "encrypted", "disk i/o error", "no such table")


def corrupt_database_error(directory: str | os.PathLike[str], exc: BaseException) -> CacheCorruptError:
    """The one error for an unusable cache database: names the folder, the cause and the fix."""
    folder = str(directory)
    return CacheCorruptError(
        f"the judge cache database in {folder} is corrupt ({type(exc).__name__}: {exc}). Save what is "
        f"readable and start a fresh cache with: judgerel cache salvage --dir {folder} (the damaged files "
        f"move to {folder}.corrupt-<time>), or move the folder away and re-record."
    )


def _fatal(exc: BaseException) -> bool:
    return any(word in str(exc).lower() for word in _FATAL)


class _FileKeyLock(KeyLock):
    def __init__(self, path: str):
        from filelock import FileLock

        self._lock = FileLock(path, thread_local=False)

    def acquire(self, timeout: float) -> bool:
        from filelock import Timeout

        try:
            self._lock.acquire(timeout=timeout)
            return True
        except Timeout:
            return False

    def release(self) -> None:
        self._lock.release()


class _StripedLocks:
    """Cross-process key locks as POSIX byte-range locks on one file (``<dir>/locks/stripes``).

    A key maps to one of ``STRIPES`` byte offsets; taking it is one ``fcntl`` call on a
    file opened once, instead of creating a lock file per key on every miss.  POSIX record locks belong to the process, so an
    in-process count keeps a stripe locked while any task of this process holds it
    (identical keys in one process are already joined by the client's in-flight map).
    """

    STRIPES = 4096

    def __init__(self, path: Path):
        import fcntl
        import threading

        self._fcntl = fcntl
        self._fd = os.open(str(path), os.O_RDWR | os.O_CREAT, 0o644)
        self._held: dict[int, int] = {}
        self._mutex = threading.Lock()
        _fork_aware.add(self)

    def forget_parent_holds(self) -> None:
        """After ``fork()``: POSIX record locks are not inherited, so the child holds no stripe
        (its copied counts would let it skip the lock its parent still holds)."""
        import threading

        self._held = {}
        self._mutex = threading.Lock()

    def stripe(self, key: str) -> int:
        return int(key[:8], 16) % self.STRIPES

    def try_acquire(self, stripe: int) -> bool:
        with self._mutex:
            count = self._held.get(stripe, 0)
            if count == 0:
                try:
                    self._fcntl.lockf(self._fd, self._fcntl.LOCK_EX | self._fcntl.LOCK_NB, 1, stripe)
                except OSError:
                    return False
            self._held[stripe] = count + 1
            return True

    def release(self, stripe: int) -> None:
        with self._mutex:
            count = self._held.get(stripe, 0) - 1
            if count <= 0:
                self._held.pop(stripe, None)
                self._fcntl.lockf(self._fd, self._fcntl.LOCK_UN, 1, stripe)
            else:
                self._held[stripe] = count

    def close(self) -> None:
        try:
            os.close(self._fd)
        except OSError:
            pass


#: entries of this process's own stores a :class:`_StoredCount` lists (beyond, older marks read again)
_OWN_KEYS = 50_000


class _StoredCount:
    """How many entries every process has stored in one cache folder: 8 bytes (little-endian) in
    ``<dir>/locks/stored``, raised under an exclusive byte-range lock after each commit (before the
    commit's key locks are released), read without one (twice, until both reads agree).  With this
    backend's own stores (their number and keys) it tells whether a key can have been stored since a
    mark (:meth:`since`): when the count grew by exactly this backend's own stores and the key is not
    among them, nobody stored it."""

    def __init__(self, path: Path):
        import fcntl
        import threading

        self._fcntl = fcntl
        self._fd = os.open(str(path), os.O_RDWR | os.O_CREAT, 0o644)
        self._mutex = threading.Lock()
        self.own = 0  # entries this backend stored
        self._keys: dict[str, int] = {}  # key -> ``own`` right after the commit that stored it
        self._forgot = 0  # ``own`` before which the stored keys are no longer listed
        _fork_aware.add(self)

    def forget_parent_holds(self) -> None:
        """After ``fork()``: a fresh mutex (the parent's may have been held by another thread)."""
        import threading

        self._mutex = threading.Lock()

    def _read(self) -> int:
        while True:
            first, second = os.pread(self._fd, 8, 0), os.pread(self._fd, 8, 0)
            if first == second:
                return int.from_bytes(first, "little") if len(first) == 8 else 0

    def mark(self) -> tuple[int, int]:
        """(entries stored by every process, by this backend) now."""
        with self._mutex:
            return self._read(), self.own

    def add(self, keys: Iterable[str]) -> None:
        """Count ``keys`` as stored (call after their commit)."""
        keys = list(keys)
        if not keys:
            return
        fcntl = self._fcntl
        with self._mutex:
            fcntl.lockf(self._fd, fcntl.LOCK_EX, 8, 0)
            try:
                os.pwrite(self._fd, (self._read() + len(keys)).to_bytes(8, "little"), 0)
            finally:
                fcntl.lockf(self._fd, fcntl.LOCK_UN, 8, 0)
            if len(self._keys) + len(keys) > _OWN_KEYS:
                self._keys, self._forgot = {}, self.own
            self.own += len(keys)
            for key in keys:
                self._keys[key] = self.own

    def since(self, mark: tuple[int, int], key: str) -> bool:
        """Whether ``key`` can have been stored since ``mark`` (:meth:`mark`)."""
        shared, own = mark
        with self._mutex:
            if own < self._forgot or self._read() - shared != self.own - own:
                return True  # keys of ours no longer listed, or entries stored by someone else
            return self._keys.get(key, -1) > own

    def close(self) -> None:
        try:
            os.close(self._fd)
        except OSError:
            pass


_fork_aware: "weakref.WeakSet[_StripedLocks | _StoredCount]" = weakref.WeakSet()


def _forget_holds_after_fork() -> None:
    for stripes in list(_fork_aware):
        stripes.forget_parent_holds()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_holds_after_fork)


class _StripeKeyLock(KeyLock):
    def __init__(self, stripes: _StripedLocks, key: str):
        self._stripes = stripes
        self._stripe = stripes.stripe(key)

    def acquire(self, timeout: float) -> bool:
        import time

        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            if self._stripes.try_acquire(self._stripe):
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)

    def release(self) -> None:
        self._stripes.release(self._stripe)


class DiskCacheBackend(CacheBackend):
    """``diskcache.Cache`` (SQLite, WAL) in ``directory``.

    Opening is serialised with a file lock (``<dir>/.open.lock``) so many xdist
    workers opening the same directory at once do not hit "database is locked";
    per-key single-flight locks are byte-range locks on ``<dir>/locks/stripes``
    (``filelock`` files per key where ``fcntl`` is missing), and ``<dir>/locks/stored`` counts the
    entries every process stored (:class:`_StoredCount`: a miss is read again under its key lock only
    when something may have been stored since the batch looked).
    """

    def __init__(self, directory: str | os.PathLike[str]):
        import sqlite3

        from filelock import FileLock
        import diskcache

        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        (self.directory / "locks").mkdir(exist_ok=True)
        self.corrupt = 0
        self._sqlite_error = sqlite3.DatabaseError
        with FileLock(str(self.directory / ".open.lock"), thread_local=False):
            try:
                self._cache = diskcache.Cache(str(self.directory), timeout=60, size_limit=2**40,
                                              eviction_policy="none")
            except sqlite3.DatabaseError as exc:
                raise corrupt_database_error(self.directory, exc) from None
        try:
            self._stripes: _StripedLocks | None = _StripedLocks(self.directory / "locks" / "stripes")
            self._stored: _StoredCount | None = _StoredCount(self.directory / "locks" / "stored")
        except ImportError:  # no fcntl: one lock file per key, every miss read again under its lock
            self._stripes = self._stored = None

    def get(self, key: str) -> dict | None:
        try:
            raw = self._cache.get(key)
        except self._sqlite_error as exc:
            if _fatal(exc):
                raise corrupt_database_error(self.directory, exc) from None
            self.corrupt += 1  # one unreadable row: a miss, answered again and overwritten
            return None
        entry = decode_entry(raw, key)
        if entry is None and raw is not None:
            self.corrupt += 1
        return entry

    def set(self, key: str, entry: Mapping[str, Any]) -> None:
        try:
            self._cache.set(key, encode_entry(entry))
        except self._sqlite_error as exc:
            raise corrupt_database_error(self.directory, exc) from None
        if self._stored is not None:
            self._stored.add([key])

    def store_mark(self) -> tuple[int, int] | None:
        """(entries stored in this folder by every process, by this backend): :class:`_StoredCount`."""
        return self._stored.mark() if self._stored is not None else None

    def stored_since(self, mark: Any, key: str) -> bool:
        return True if self._stored is None or mark is None else self._stored.since(mark, key)

    def get_many(self, keys: list[str], request: bool = True) -> dict[str, dict]:
        """The entries of those ``keys`` that are stored, read with one query per 500 keys (rows
        diskcache keeps in a file beside the database through :meth:`get`); ``request=False``:
        without the requests of compact entries (:func:`~pytest_judgerel.llm.backend.decode_answer`)."""
        decode = decode_entry if request else decode_answer
        found: dict[str, dict] = {}
        try:
            con = self._cache._con  # diskcache's connection of this thread (its Cache table: see salvage)
            for start in range(0, len(keys), 500):
                chunk = keys[start:start + 500]
                marks = ",".join("?" * len(chunk))
                for key, mode, value in con.execute(
                        f"SELECT key, mode, value FROM Cache WHERE raw = 1 AND key IN ({marks})", chunk):
                    entry = decode(value, key) if mode == _MODE_RAW else self.get(key)
                    if entry is not None:
                        found[key] = entry
                    elif mode == _MODE_RAW:
                        self.corrupt += 1
        except self._sqlite_error as exc:
            if _fatal(exc):
                raise corrupt_database_error(self.directory, exc) from None
            return {key: entry for key in keys if (entry := self.get(key)) is not None}
        return found

    def set_many(self, entries: Mapping[str, Mapping[str, Any]]) -> None:
        """One SQLite transaction for all (a commit per entry would be record mode's largest cost): new
        keys are inserted in one statement, as diskcache inserts them; a key stored before, or an
        entry too large for a row, goes through diskcache's ``set``."""
        import time

        try:
            with self._cache.transact():
                con = self._cache._con
                encoded = {key: encode_entry(entry) for key, entry in entries.items()}
                keys = list(encoded)
                stored: set[str] = set()
                for start in range(0, len(keys), 500):
                    chunk = keys[start:start + 500]
                    marks = ",".join("?" * len(chunk))
                    stored.update(k for (k,) in con.execute(
                        f"SELECT key FROM Cache WHERE raw = 1 AND key IN ({marks})", chunk))
                now = time.time()
                rows = []
                for key, value in encoded.items():
                    if key in stored or len(value) >= self._cache.disk.min_file_size:
                        self._cache.set(key, value)
                    else:
                        rows.append((key, now, now, _MODE_RAW, value))
                con.executemany("INSERT INTO Cache(key, raw, store_time, expire_time, access_time, access_count, "
                                "tag, size, mode, filename, value) VALUES (?, 1, ?, NULL, ?, 0, NULL, 0, ?, NULL, ?)",
                                rows)
        except self._sqlite_error as exc:
            raise corrupt_database_error(self.directory, exc) from None
        if self._stored is not None:  # committed: counted before the caller releases the key locks
            self._stored.add(entries)

    def delete(self, key: str) -> bool:
        return bool(self._cache.delete(key))

    def iter_entries(self) -> Iterator[tuple[str, dict]]:
        try:
            keys = list(self._cache.iterkeys())
        except self._sqlite_error as exc:
            raise corrupt_database_error(self.directory, exc) from None
        for key in keys:
            if not isinstance(key, str) or key.startswith(STATS_PREFIX):
                continue
            entry = self.get(key)
            if entry is not None:
                yield key, entry

    def key_lock(self, key: str) -> KeyLock:
        if self._stripes is not None:
            return _StripeKeyLock(self._stripes, key)
        return _FileKeyLock(str(self.directory / "locks" / f"{key}.lock"))  # no fcntl (Windows)

    def remove_idle_lock_files(self) -> int:
        """Delete the lock files of keys no longer cached, skipping any lock held right now."""
        removed = 0
        for path in (self.directory / "locks").glob("*.lock"):
            key = path.name[: -len(".lock")]
            if key in self._cache:
                continue
            lock = _FileKeyLock(str(path))
            if lock.acquire(0):
                try:
                    path.unlink(missing_ok=True)
                    removed += 1
                finally:
                    lock.release()
        return removed

    def incr_stats(self, hits: int, misses: int) -> None:
        if hits:
            self._cache.incr(STATS_PREFIX + "hits", hits)
        if misses:
            self._cache.incr(STATS_PREFIX + "misses", misses)

    def read_stats(self) -> dict[str, int]:
        try:
            return {name: int(self._cache.get(STATS_PREFIX + name, 0)) for name in ("hits", "misses")}
        except self._sqlite_error:
            return {}

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.directory.rglob("*") if p.is_file())

    def close(self) -> None:
        self._cache.close()
        if self._stripes is not None:
            self._stripes.close()
        if self._stored is not None:
            self._stored.close()


