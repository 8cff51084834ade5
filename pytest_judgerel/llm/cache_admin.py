"""Cache maintenance behind ``judgerel cache``: stats, export, import, prune, salvage."""

from __future__ import annotations

import json
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from pytest_judgerel.errors import ConfigError
from pytest_judgerel.llm.backend import CacheBackend, make_entry
from pytest_judgerel.llm.cache import display_location, open_backend

__all__ = ["CacheStatsResult", "SalvageResult", "cache_stats", "damage_of", "export_cache", "import_cache", "prune_cache",
           "salvage_cache", "read_readable_entries", "last_run_keys", "RUNS_DIR"]

#: ``<cache dir>/runs/<run id>/<pid>.keys``: the keys each process of a run served;
#: ``runs/LAST`` names the newest finished run (see ``export --last-run``)
RUNS_DIR = "runs"


@dataclass(frozen=True)
class CacheStatsResult:
    """Summary of a cache directory (or Redis URL, without credentials, in ``directory``)."""

    directory: str
    entries: int
    size_bytes: int
    namespaces: dict[str, int]
    models: dict[str, int]
    recorded_hits: int
    recorded_misses: int
    unreadable: int | None = 0  # None: the damaged table could not be read at all, the number is unknown
    damaged: bool = False  # the database itself is corrupt: counts come from a row-by-row salvage read
    damage: str | None = None  # what is wrong with a damaged database file, when it can be told

    @property
    def hit_rate(self) -> float | None:
        total = self.recorded_hits + self.recorded_misses
        return self.recorded_hits / total if total else None

    def to_dict(self) -> dict[str, Any]:
        return {"directory": self.directory, "entries": self.entries, "size_bytes": self.size_bytes,
                "namespaces": self.namespaces, "models": self.models, "recorded_hits": self.recorded_hits,
                "recorded_misses": self.recorded_misses, "hit_rate": self.hit_rate,
                "unreadable": self.unreadable, "damaged": self.damaged, "damage": self.damage}


@contextmanager
def _opened(directory: str | os.PathLike[str], *, must_exist: bool = True) -> Iterator[CacheBackend]:
    if must_exist and "://" not in str(directory) and not Path(directory).is_dir():
        raise ConfigError(f"cache directory {str(directory)!r} does not exist")
    backend = open_backend(directory)
    try:
        yield backend
    finally:
        backend.close()


def read_readable_entries(directory: str | os.PathLike[str]) -> tuple[list[tuple[str, dict]], int | None, bool]:
    """Every readable entry: ``(entries, unreadable, damaged)``.

    Through the backend when it opens; when a diskcache database is corrupt, row by row
    straight from its SQLite file (``damaged=True``), skipping rows that fail to read or
    whose key does not match its request fields.  ``unreadable`` is None when the damaged
    table cannot be read at all (e.g. a truncated file): how many entries it held is unknown.
    """
    from pytest_judgerel.errors import CacheCorruptError

    try:
        with _opened(directory) as backend:
            entries = list(backend.iter_entries())
            return entries, int(getattr(backend, "corrupt", 0)), False
    except CacheCorruptError:
        entries, unreadable = _salvage_rows(Path(directory))
        return entries, unreadable, True


def damage_of(directory: str | os.PathLike[str]) -> str | None:
    """What is visibly wrong with a cache directory's SQLite file (missing, not a database,
    truncated), from its 100-byte header (SQLite file format, section 1.3); None when nothing shows."""
    db = Path(directory) / "cache.db"
    if not db.is_file():
        return f"{db} is missing"
    size = db.stat().st_size
    with db.open("rb") as fh:
        header = fh.read(100)
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        return f"{db} is not an SQLite database (its header is damaged)"
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    if pages and size < pages * page_size:
        return f"{db} is truncated: {size:,} of its {pages * page_size:,} bytes remain"
    return None


def _salvage_rows(directory: Path) -> tuple[list[tuple[str, dict]], int | None]:
    """Read diskcache's ``Cache`` table one row at a time (a bad page loses its rows only);
    ``(entries, None)`` when the table itself cannot be read (nothing tells how many rows it had)."""
    import sqlite3

    from pytest_judgerel.llm.backend import STATS_PREFIX, decode_entry
    from pytest_judgerel.llm.keys import key_from_fields

    db = directory / "cache.db"
    if not db.is_file():
        return [], 0
    entries: list[tuple[str, dict]] = []
    unreadable = 0
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    except sqlite3.Error:
        return [], None
    con.text_factory = bytes
    try:
        try:
            top = con.execute("SELECT max(rowid) FROM Cache").fetchone()[0] or 0
        except sqlite3.DatabaseError:
            return [], None
        for rowid in range(1, int(top) + 1):
            try:
                row = con.execute("SELECT key, mode, filename, value FROM Cache WHERE rowid = ?", (rowid,)).fetchone()
            except sqlite3.DatabaseError:
                unreadable += 1
                continue
            if row is None:
                continue
            key, mode, filename, value = row
            try:
                key = key.decode("utf-8") if isinstance(key, bytes) else key
                if not isinstance(key, str) or key.startswith(STATS_PREFIX):
                    continue
                if mode == 1:  # diskcache MODE_RAW: the text is in the row
                    text = value.decode("utf-8") if isinstance(value, bytes) else value
                elif mode == 3 and filename:  # MODE_TEXT: the text is in a file beside the database
                    name = filename.decode("utf-8") if isinstance(filename, bytes) else filename
                    text = (directory / name).read_text(encoding="utf-8")
                else:
                    raise ValueError("not a judgerel entry")
                entry = decode_entry(text)
                if entry is None or key_from_fields(entry.get("request", {})) != key:
                    raise ValueError("entry does not match its key")
            except (ValueError, OSError, TypeError, AttributeError):
                unreadable += 1
                continue
            entries.append((key, entry))
    finally:
        con.close()
    return entries, unreadable


def cache_stats(directory: str | os.PathLike[str]) -> CacheStatsResult:
    """Entries, size, namespaces, models and recorded hit rate; readable entries only on a
    damaged database (``damaged``, ``unreadable`` say so)."""
    entries, unreadable, damaged = read_readable_entries(directory)
    namespaces: dict[str, int] = {}
    models: dict[str, int] = {}
    for _, entry in entries:
        request = entry.get("request", {})
        ns = request.get("namespace", "")
        namespaces[ns] = namespaces.get(ns, 0) + 1
        model = request.get("model", "?")
        models[model] = models.get(model, 0) + 1
    recorded: dict[str, int] = {}
    size = 0
    if damaged:
        size = sum(p.stat().st_size for p in Path(directory).rglob("*") if p.is_file())
    else:
        with _opened(directory) as backend:
            recorded = backend.read_stats()
            size = backend.size_bytes()
    return CacheStatsResult(display_location(directory), len(entries), size, dict(sorted(namespaces.items())),
                            dict(sorted(models.items())), recorded.get("hits", 0), recorded.get("misses", 0),
                            unreadable, damaged, damage_of(directory) if damaged else None)


@dataclass(frozen=True)
class SalvageResult:
    """What ``salvage`` kept: entries saved into the fresh cache, rows lost (None: the damaged table
    could not be read, the number lost is unknown), where the damaged files went, what was wrong."""

    saved: int
    unreadable: int | None
    moved_to: str | None
    damage: str | None = None

    @property
    def complete(self) -> bool:
        """Whether every entry of the old cache was kept (nothing lost, or nothing to lose)."""
        return self.unreadable == 0


def salvage_cache(directory: str | os.PathLike[str]) -> SalvageResult:
    """Keep every readable entry of a (possibly corrupt) diskcache directory: the old folder
    moves to ``<dir>.corrupt-<time>`` and a fresh cache at ``<dir>`` gets the readable entries."""
    from pytest_judgerel.llm.disk_backend import DiskCacheBackend

    folder = Path(directory)
    if "://" in str(directory):
        raise ConfigError("salvage works on a cache directory, not a shared store URL")
    if not folder.is_dir():
        raise ConfigError(f"cache directory {str(folder)!r} does not exist")
    entries, unreadable, damaged = read_readable_entries(folder)
    damage = damage_of(folder) if damaged else None
    moved = folder.with_name(f"{folder.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
    folder.rename(moved)
    fresh = DiskCacheBackend(folder)
    try:
        for key, entry in entries:
            fresh.set(key, entry)
    finally:
        fresh.close()
    return SalvageResult(len(entries), unreadable, str(moved), damage)


def last_run_keys(directory: str | os.PathLike[str]) -> set[str]:
    """The keys the newest finished run served (every process of it; see :data:`RUNS_DIR`)."""
    runs = Path(directory) / RUNS_DIR
    last = runs / "LAST"
    if not last.is_file():
        raise ConfigError(f"no finished run is recorded in {runs} (run pytest with this cache first)")
    run = runs / last.read_text(encoding="utf-8").strip()
    keys: set[str] = set()
    for path in run.glob("*.keys"):
        keys.update(line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return keys


def _export_order(item: tuple[str, dict]) -> tuple:
    key, entry = item
    request = entry.get("request", {})
    return (request.get("namespace", ""), request.get("model", ""),
            json.dumps(request.get("messages"), sort_keys=True), request.get("sample_index", 0), key)


def export_cache(directory: str | os.PathLike[str], out: str | os.PathLike[str],
                 namespace: str | None = None, keys: set[str] | None = None) -> int:
    """Write entries as JSON lines (``key``, ``request``, ``response``), sorted for review; returns the count.

    ``keys`` keeps only those entries (e.g. :func:`last_run_keys`: a cassette without the answers
    of prompts that no longer exist).  A damaged database exports what is readable.
    """
    entries, _unreadable, _damaged = read_readable_entries(directory)
    items = [(k, e) for k, e in entries
             if (namespace is None or e.get("request", {}).get("namespace", "") == namespace)
             and (keys is None or k in keys)]
    items.sort(key=_export_order)
    Path(out).parent.mkdir(parents=True, exist_ok=True)  # e.g. cassettes/ on a first export
    with open(out, "w", encoding="utf-8") as fh:
        for key, entry in items:
            line = {"key": key, "request": entry.get("request", {}), "response": entry.get("response", {})}
            fh.write(json.dumps(line, sort_keys=True, ensure_ascii=False) + "\n")
    return len(items)


def import_cache(directory: str | os.PathLike[str], path: str | os.PathLike[str]) -> int:
    """Load a JSON-lines export; each key must recompute from its request fields.  Returns the count."""
    from pytest_judgerel.llm.keys import key_from_fields

    loaded: list[tuple[str, dict]] = []
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                key, request, response = record["key"], record["request"], record["response"]
            except (ValueError, KeyError, TypeError) as exc:
                raise ConfigError(f"{path}:{number}: not a cache export line ({exc})") from exc
            expected = key_from_fields(request)
            if expected != key:
                raise ConfigError(f"{path}:{number}: key {key} does not match its request fields "
                                  f"(recomputed {expected}); the line was edited or comes from another version")
            if not isinstance(response, dict) or not isinstance(response.get("text"), str):
                raise ConfigError(f"{path}:{number}: response has no text")
            loaded.append((key, make_entry(key, request, response)))
    with _opened(directory, must_exist=False) as backend:
        for key, entry in loaded:
            backend.set(key, entry)
    return len(loaded)


def prune_cache(directory: str | os.PathLike[str], *, older_than_days: float | None = None,
                namespace: str | None = None) -> int:
    """Delete entries older than ``older_than_days`` and/or in ``namespace``; returns the count deleted."""
    if older_than_days is None and namespace is None:
        raise ConfigError("prune needs --older-than DAYS and/or --namespace N")
    cutoff = None if older_than_days is None else time.time() - float(older_than_days) * 86400.0
    deleted = 0
    with _opened(directory) as backend:
        for key, entry in list(backend.iter_entries()):
            if namespace is not None and entry.get("request", {}).get("namespace", "") != namespace:
                continue
            if cutoff is not None and float(entry.get("response", {}).get("timestamp", 0.0)) >= cutoff:
                continue
            deleted += backend.delete(key)
        if hasattr(backend, "remove_idle_lock_files"):
            backend.remove_idle_lock_files()
    return deleted
