"""Cache maintenance behind ``judgerel cache``: stats, export, import, prune, salvage, compact."""

from __future__ import annotations

import json
import os
import struct
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from pytest_judgerel.errors import ConfigError
from pytest_judgerel.llm.backend import ENTRY_FORMAT, CacheBackend, make_entry
from pytest_judgerel.llm.cache import display_location, open_backend

__all__ = ["CacheStatsResult", "SalvageResult", "CompactResult", "cache_stats", "compact_cache", "damage_of", "export_cache", "import_cache",
           "prune_cache",
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
    previous_layout: int = 0  # entries stored in the previous layout (format 1): ``compact`` rewrites them

    @property
    def hit_rate(self) -> float | None:
        total = self.recorded_hits + self.recorded_misses
        return self.recorded_hits / total if total else None

    def to_dict(self) -> dict[str, Any]:
        return {"directory": self.directory, "entries": self.entries, "size_bytes": self.size_bytes,
                "namespaces": self.namespaces, "models": self.models, "recorded_hits": self.recorded_hits,
                "recorded_misses": self.recorded_misses, "hit_rate": self.hit_rate,
                "unreadable": self.unreadable, "damaged": self.damaged, "damage": self.damage,
                "previous_layout": self.previous_layout}


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
    whose key does not match its request fields.  When SQLite cannot reach the table at all
    (a truncated file, a broken header), the entries are read from the file's pages one by one
    and ``unreadable`` is None: how many entries the lost pages held is unknown.
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
    ``(entries read page by page, None)`` when SQLite cannot reach the table (nothing tells how
    many rows it had)."""
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
        return _scan_pages(db), None
    con.text_factory = bytes
    try:
        try:
            top = con.execute("SELECT max(rowid) FROM Cache").fetchone()[0] or 0
        except sqlite3.DatabaseError:
            return _scan_pages(db), None
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
                if mode == 1:  # diskcache MODE_RAW: the entry (format 2 bytes, format 1 text) is in the row
                    stored = value
                elif mode in (3, 2) and filename:  # MODE_TEXT / MODE_BINARY: a large entry in a file beside it
                    name = filename.decode("utf-8") if isinstance(filename, bytes) else filename
                    stored = (directory / name).read_text(encoding="utf-8") if mode == 3 else (directory / name).read_bytes()
                else:
                    raise ValueError("not a judgerel entry")
                entry = decode_entry(stored, key)
                if entry is None or key_from_fields(entry.get("request", {})) != key:
                    raise ValueError("entry does not match its key")
            except (ValueError, OSError, TypeError, AttributeError):
                unreadable += 1
                continue
            entries.append((key, entry))
    finally:
        con.close()
    return entries, unreadable


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    """SQLite's big-endian variable-length integer at ``pos``: ``(value, next position)``."""
    value = 0
    for i in range(9):
        byte = buf[pos + i]
        if i == 8:
            return (value << 8) | byte, pos + 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, pos + i + 1
    raise ValueError("bad varint")  # pragma: no cover - the loop always returns


def _record_values(payload: bytes) -> list[Any]:
    """The column values of one SQLite record (file format section 2.1: header of serial types, then bodies)."""
    size, pos = _varint(payload, 0)
    types = []
    while pos < size:
        t, pos = _varint(payload, pos)
        types.append(t)
    body = size
    out: list[Any] = []
    for t in types:
        if t in (0, 8, 9):
            out.append(None if t == 0 else t - 8)
            continue
        n = {1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8, 7: 8}.get(t) if t < 12 else (t - 12) // 2
        if n is None:
            raise ValueError(f"serial type {t}")
        raw = payload[body:body + n]
        if len(raw) != n:
            raise ValueError("record cut short")
        body += n
        if t == 7:
            out.append(struct.unpack(">d", raw)[0])
        elif t < 12:
            out.append(int.from_bytes(raw, "big", signed=True))
        else:
            out.append(raw)  # text or blob, as bytes
    return out


def _scan_pages(db: Path) -> list[tuple[str, dict]]:
    """Entries read straight from the pages of a damaged SQLite file whose table SQLite can no
    longer reach (a truncated file loses the pages that lead to the rows; the rows that remain are
    in intact leaf pages).  Every table-leaf cell (SQLite file format, sections 1.6 and 2.1) with
    the 12 columns of diskcache's ``Cache`` table is decoded; an entry counts only when its key
    recomputes from its request fields, and a key found twice keeps the newest store time."""
    from pytest_judgerel.llm.backend import STATS_PREFIX, decode_entry
    from pytest_judgerel.llm.keys import key_from_fields

    try:
        data = db.read_bytes()
    except OSError:
        return []
    size = int.from_bytes(data[16:18], "big") if len(data) >= 100 else 0
    size = 65536 if size == 1 else size
    page_size = size if 512 <= size <= 65536 and size & (size - 1) == 0 else 4096
    usable = page_size - (data[20] if len(data) > 20 else 0)
    max_local = usable - 35
    min_local = ((usable - 12) * 32 // 255) - 23
    found: dict[str, tuple[float, dict]] = {}
    for start in range(0, len(data) - page_size + 1, page_size):
        head = start + (100 if start == 0 else 0)
        if data[head] != 0x0D:  # not a table b-tree leaf page
            continue
        cells = int.from_bytes(data[head + 3:head + 5], "big")
        for c in range(cells):
            try:
                ptr = start + int.from_bytes(data[head + 8 + 2 * c:head + 10 + 2 * c], "big")
                length, pos = _varint(data, ptr)
                _rowid, pos = _varint(data, pos)
                if length <= max_local:
                    payload = data[pos:pos + length]
                else:  # the rest is on overflow pages: follow the chain while the file has them
                    local = min_local + (length - min_local) % (usable - 4)
                    local = local if local <= max_local else min_local
                    payload = data[pos:pos + local]
                    nxt = int.from_bytes(data[pos + local:pos + local + 4], "big")
                    while nxt and len(payload) < length:
                        page = data[(nxt - 1) * page_size:nxt * page_size]
                        if len(page) < page_size:
                            raise ValueError("overflow page missing")
                        nxt = int.from_bytes(page[:4], "big")
                        payload += page[4:usable]
                    payload = payload[:length]
                values = _record_values(payload)
                if len(values) != 12:
                    continue  # another table (diskcache's Settings)
                key, mode, store_time, value = values[1], values[9], values[3], values[11]
                key = key.decode("utf-8") if isinstance(key, bytes) else key
                if not isinstance(key, str) or key.startswith(STATS_PREFIX) or mode != 1:
                    continue  # files beside the database (mode 3) are not read from a damaged one
                entry = decode_entry(value, key)
                if entry is None or key_from_fields(entry.get("request", {})) != key:
                    continue
            except (ValueError, IndexError, TypeError, AttributeError, UnicodeDecodeError):
                continue
            when = float(store_time) if isinstance(store_time, (int, float)) else 0.0
            if key not in found or when >= found[key][0]:
                found[key] = (when, entry)
    return [(key, entry) for key, (_, entry) in sorted(found.items())]


def cache_stats(directory: str | os.PathLike[str]) -> CacheStatsResult:
    """Entries, size, namespaces, models and recorded hit rate; readable entries only on a
    damaged database (``damaged``, ``unreadable`` say so)."""
    entries, unreadable, damaged = read_readable_entries(directory)
    namespaces: dict[str, int] = {}
    models: dict[str, int] = {}
    previous = 0
    for _, entry in entries:
        previous += entry.get("format") != ENTRY_FORMAT
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
                            unreadable, damaged, damage_of(directory) if damaged else None, previous)


@dataclass(frozen=True)
class CompactResult:
    """What ``compact`` did: entries rewritten from the previous layout, entries already compact,
    and the cache's size in bytes before and after."""

    rewritten: int
    already: int
    size_before: int
    size_after: int


def compact_cache(directory: str | os.PathLike[str], group: int = 500) -> CompactResult:
    """Rewrite every entry stored in the previous layout (format 1, the whole entry as JSON text) in
    the compact one (:func:`~pytest_judgerel.llm.backend.encode_entry`); keys and answers unchanged.
    A cache directory's database is then vacuumed so the freed pages leave the disk."""
    rewritten = already = 0
    with _opened(directory) as backend:
        before = backend.size_bytes()
        waiting: dict[str, dict] = {}
        for key, entry in backend.iter_entries():
            if entry.get("format") == ENTRY_FORMAT:
                already += 1
                continue
            waiting[key] = make_entry(key, entry.get("request", {}), entry.get("response", {}))
            if len(waiting) >= group:
                backend.set_many(waiting)
                rewritten, waiting = rewritten + len(waiting), {}
        if waiting:
            backend.set_many(waiting)
            rewritten += len(waiting)
    if "://" not in str(directory) and rewritten:
        import sqlite3

        con = sqlite3.connect(str(Path(directory) / "cache.db"), timeout=60)
        try:
            con.execute("VACUUM")
        finally:
            con.close()
    with _opened(directory) as backend:
        after = backend.size_bytes()
    return CompactResult(rewritten, already, before, after)


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
