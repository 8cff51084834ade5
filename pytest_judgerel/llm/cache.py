"""Opening a cache: a directory (diskcache) or a shared store's URL (Redis).

The backend interface and entry format live in :mod:`pytest_judgerel.llm.backend`, the
backends in :mod:`~pytest_judgerel.llm.disk_backend` and
:mod:`~pytest_judgerel.llm.redis_backend`, the maintenance commands (stats, export,
import, prune, salvage) in :mod:`~pytest_judgerel.llm.cache_admin`.
"""

from __future__ import annotations

import os

from pytest_judgerel.errors import ConfigError
from pytest_judgerel.llm.backend import CacheBackend

__all__ = ["open_backend", "display_location"]


def _is_url(location: str | os.PathLike[str]) -> bool:
    return isinstance(location, str) and "://" in location


def open_backend(location: str | os.PathLike[str]) -> CacheBackend:
    """The backend for ``location``: a ``redis://``, ``rediss://`` or ``unix://`` URL opens
    :class:`~pytest_judgerel.llm.redis_backend.RedisBackend`; anything else is a directory
    for :class:`DiskCacheBackend`.  Another ``scheme://`` is a :class:`ConfigError`, not a
    directory named after it."""
    if _is_url(location):
        from pytest_judgerel.llm.redis_backend import RedisBackend, is_redis_url, redact_url

        if not is_redis_url(location):
            raise ConfigError(f"unsupported cache backend URL {redact_url(str(location))!r}: "
                              f"use redis://, rediss:// or unix://, or a directory path")
        return RedisBackend(str(location))
    from pytest_judgerel.llm.disk_backend import DiskCacheBackend

    return DiskCacheBackend(location)


def display_location(location: str | os.PathLike[str]) -> str:
    """The location for messages and reports (a URL without its credentials)."""
    if _is_url(location):
        from pytest_judgerel.llm.redis_backend import redact_url

        return redact_url(str(location))
    return str(location)


