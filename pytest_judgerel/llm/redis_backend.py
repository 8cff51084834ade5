"""Redis cache backend: one response cache shared by CI machines (``pip install 'pytest-judgerel[redis]'``).

Select it with a URL instead of a directory: ``redis://[[user]:password@]host[:port][/db]``,
``rediss://...`` (TLS) or ``unix:///path/to/redis.sock[?db=N]``.  A ``prefix=`` query
parameter (default ``judgerel:``) keeps several suites apart in one database.

Layout under the prefix (shown with the default ``judgerel:``):

* ``judgerel:e:<key>``      an entry, the same JSON text :class:`~pytest_judgerel.llm.disk_backend.DiskCacheBackend`
  stores (keyed request fields and the answer; never API keys, headers or errors);
* ``judgerel:stats:hits`` / ``judgerel:stats:misses``  counters added with ``INCRBY``;
* ``judgerel:lock:<key>``   the single-flight lock of a key: ``SET NX PX <ttl>`` with a random
  token, released by a compare-and-delete script so a holder never deletes a lock that
  expired and was taken by someone else (the pattern of the Redis ``SET`` documentation).

A holder that crashes leaves its lock behind until the TTL (``LOCK_TTL_SECONDS``, 10 minutes)
expires; until then other machines wait, up to the client's give-up time
(``timeout * max_attempts + 60`` s, 540 s with the defaults, below the TTL), then answer without
single flight.  A call that outlives the TTL can at worst be made twice; the answer is the same
entry either way.
"""

from __future__ import annotations

import secrets
import time
from typing import Any, Iterator, Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit

from pytest_judgerel.errors import ConfigError
from pytest_judgerel.llm.backend import CacheBackend, KeyLock

__all__ = ["REDIS_SCHEMES", "LOCK_TTL_SECONDS", "DEFAULT_PREFIX", "RedisBackend", "RedisKeyLock",
           "is_redis_url", "redact_url"]

REDIS_SCHEMES = ("redis", "rediss", "unix")
LOCK_TTL_SECONDS = 600.0
DEFAULT_PREFIX = "judgerel:"
_INSTALL_HINT = "pip install 'pytest-judgerel[redis]'"
_SECRET_QUERY = ("password", "username", "ssl_password")

# Delete the lock only if it still holds our token (atomic on the server).
_RELEASE_SCRIPT = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
"""


def is_redis_url(location: object) -> bool:
    """True for a ``redis://``, ``rediss://`` or ``unix://`` URL (a cache backend, not a directory)."""
    return isinstance(location, str) and location.split("://", 1)[0].lower() in REDIS_SCHEMES \
        and "://" in location


def redact_url(url: str) -> str:
    """``url`` without user name, password or credential query parameters, safe for messages."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if ":" in host:  # IPv6 literal
            host = f"[{host}]"
        netloc = host + (f":{parts.port}" if parts.port is not None else "")
    except ValueError:
        return "<unparseable redis URL>"
    if parts.username or parts.password:
        netloc = "***@" + netloc
    query = [(k, "***" if k.lower() in _SECRET_QUERY else v) for k, v in parse_qsl(parts.query)]
    return _join(parts.scheme, netloc, parts.path, urlencode(query, safe="*:/"))


def _join(scheme: str, netloc: str, path: str, query: str) -> str:
    """Like ``urlunsplit`` but keeps ``//`` for an empty host (``unix:///path``)."""
    return f"{scheme}://{netloc}{path}" + (f"?{query}" if query else "")


def _scrub(text: str, url: str) -> str:
    """``text`` with the URL's user name and password replaced by ``***``."""
    try:
        parts = urlsplit(url)
        secrets_in_url = [s for s in (parts.password, parts.username) if s]
    except ValueError:
        secrets_in_url = []
    for secret in secrets_in_url:
        text = text.replace(secret, "***")
    return text


def _split_prefix(url: str, prefix: str | None) -> tuple[str, str]:
    """Remove our own ``prefix=`` query parameter (redis-py would reject it); the explicit argument wins."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    from_url = [v for k, v in query if k == "prefix"]
    rest = [(k, v) for k, v in query if k != "prefix"]
    chosen = prefix if prefix is not None else (from_url[-1] if from_url else DEFAULT_PREFIX)
    return _join(parts.scheme, parts.netloc, parts.path, urlencode(rest)), chosen


def _glob_escape(text: str) -> str:
    return "".join("\\" + ch if ch in "*?[]\\" else ch for ch in text)


class RedisKeyLock(KeyLock):
    """Single-flight lock of one key across machines: ``SET lock token NX PX ttl``.

    ``acquire(0)`` is one round trip and never blocks.  ``release`` deletes the lock only
    while it still holds this holder's token.
    """

    def __init__(self, backend: "RedisBackend", lock_name: str, ttl_ms: int):
        self._backend = backend
        self._name = lock_name
        self._ttl_ms = ttl_ms
        self._token: str | None = None

    def acquire(self, timeout: float) -> bool:
        deadline = time.monotonic() + max(0.0, float(timeout))
        token = secrets.token_hex(16)
        delay = 0.005
        while True:
            if self._backend._redis.set(self._name, token, nx=True, px=self._ttl_ms):
                self._token = token
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            time.sleep(min(delay, remaining))
            delay = min(delay * 1.5, 0.1)

    def release(self) -> None:
        if self._token is None:
            return
        token, self._token = self._token, None
        self._backend._release(keys=[self._name], args=[token])


class RedisBackend(CacheBackend):
    """Cache entries in Redis under ``prefix`` (see the module docstring for the layout).

    ``url`` may hold a password; it is used to connect and never appears in messages,
    ``repr`` or stored values (:func:`redact_url`).  Raises :class:`ConfigError` when the
    ``redis`` package is missing or the server does not answer ``PING``.
    """

    def __init__(self, url: str, prefix: str | None = None, *, lock_ttl: float = LOCK_TTL_SECONDS,
                 connect_timeout: float = 5.0, socket_timeout: float = 30.0):
        if not is_redis_url(url):
            raise ConfigError(f"not a Redis URL (redis://, rediss:// or unix://): {redact_url(str(url))!r}")
        if not lock_ttl > 0:
            raise ConfigError(f"lock_ttl must be > 0 seconds, got {lock_ttl!r}")
        try:
            import redis
        except ImportError:
            raise ConfigError(f"the Redis cache backend needs the redis package: {_INSTALL_HINT}") from None
        connect_url, self.prefix = _split_prefix(url, prefix)
        if not self.prefix:
            raise ConfigError("the Redis key prefix must not be empty (it keeps judgerel's keys apart)")
        self.url = redact_url(url)
        self.lock_ttl = float(lock_ttl)
        try:
            self._redis = redis.Redis.from_url(connect_url, decode_responses=True,
                                               socket_connect_timeout=connect_timeout,
                                               socket_timeout=socket_timeout)
            self._redis.ping()
        except redis.exceptions.AuthenticationError:
            raise ConfigError(f"Redis cache backend {self.url}: authentication failed "
                              f"(check the user name and password in the URL)") from None
        except (redis.exceptions.RedisError, OSError, ValueError) as exc:
            reason = _scrub(str(exc) or type(exc).__name__, url)
            raise ConfigError(f"Redis cache backend {self.url} is unreachable ({reason}); "
                              f"is redis-server running there?") from None
        self._release = self._redis.register_script(_RELEASE_SCRIPT)
        self._entry_prefix = self.prefix + "e:"

    def __repr__(self) -> str:
        return f"RedisBackend({self.url!r}, prefix={self.prefix!r})"

    # entries -----------------------------------------------------------------------------
    @staticmethod
    def _decode(raw: Any, key: str | None = None) -> dict | None:
        from pytest_judgerel.llm.backend import decode_entry

        return decode_entry(raw, key)

    def get(self, key: str) -> dict | None:
        return self._decode(self._redis.get(self._entry_prefix + key), key)

    def get_many(self, keys: list[str], request: bool = True) -> dict[str, dict]:
        """One ``MGET`` per 500 keys."""
        found: dict[str, dict] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start:start + 500]
            for key, raw in zip(chunk, self._redis.mget([self._entry_prefix + k for k in chunk])):
                entry = self._decode(raw, key)
                if entry is not None:
                    found[key] = entry
        return found

    def set(self, key: str, entry: Mapping[str, Any]) -> None:
        from pytest_judgerel.llm.backend import encode_entry

        self._redis.set(self._entry_prefix + key, encode_entry(entry, compress=False))

    def set_many(self, entries: Mapping[str, Mapping[str, Any]]) -> None:
        """One round trip (a non-transactional pipeline) for all entries."""
        from pytest_judgerel.llm.backend import encode_entry

        pipe = self._redis.pipeline(transaction=False)
        for key, entry in entries.items():
            pipe.set(self._entry_prefix + key, encode_entry(entry, compress=False))
        pipe.execute()

    def delete(self, key: str) -> bool:
        return bool(self._redis.delete(self._entry_prefix + key))

    def _scan(self, match_prefix: str) -> Iterator[list[str]]:
        """Batches of names starting with ``match_prefix`` (``SCAN``: never blocks the server)."""
        batch: list[str] = []
        for name in self._redis.scan_iter(match=_glob_escape(match_prefix) + "*", count=1000):
            batch.append(name)
            if len(batch) >= 500:
                yield batch
                batch = []
        if batch:
            yield batch

    def iter_entries(self) -> Iterator[tuple[str, dict]]:
        start = len(self._entry_prefix)
        seen: set[str] = set()  # SCAN may return a name twice
        for names in self._scan(self._entry_prefix):
            names = [n for n in names if n not in seen]
            seen.update(names)
            for name, raw in zip(names, self._redis.mget(names)):
                entry = self._decode(raw, name[start:])
                if entry is not None:
                    yield name[start:], entry

    def key_lock(self, key: str) -> KeyLock:
        return RedisKeyLock(self, self.prefix + "lock:" + key, max(1, int(self.lock_ttl * 1000)))

    # counters and size -------------------------------------------------------------------
    def incr_stats(self, hits: int, misses: int) -> None:
        if hits:
            self._redis.incrby(self.prefix + "stats:hits", int(hits))
        if misses:
            self._redis.incrby(self.prefix + "stats:misses", int(misses))

    def read_stats(self) -> dict[str, int]:
        names = ("hits", "misses")
        values = self._redis.mget([self.prefix + "stats:" + n for n in names])
        return {n: int(v or 0) for n, v in zip(names, values)}

    def size_bytes(self) -> int:
        """Server memory used by this prefix (``MEMORY USAGE``; value lengths where that is disabled)."""
        import redis

        total = 0
        for names in self._scan(self.prefix):
            pipe = self._redis.pipeline(transaction=False)
            for name in names:
                pipe.memory_usage(name)
            try:
                sizes = pipe.execute()
            except redis.exceptions.ResponseError:  # MEMORY disabled or renamed (some managed services)
                pipe = self._redis.pipeline(transaction=False)
                for name in names:
                    pipe.strlen(name)
                sizes = pipe.execute(raise_on_error=False)
            total += sum(s for s in sizes if isinstance(s, int))
        return total

    def close(self) -> None:
        self._redis.close()
        try:
            self._redis.connection_pool.disconnect()
        except Exception:  # pragma: no cover - best effort on shutdown
            pass
