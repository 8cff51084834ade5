"""The cache backend interface and entry format (shared by every backend; stdlib only).

Modes (``LLMSettings.cache_mode``):

* ``record``  (default) use hits, call the model on misses and store the answer;
* ``replay``  use hits, a miss raises :class:`~pytest_judgerel.errors.CacheMissError`;
* ``refresh`` call the model again and overwrite (once per key per session: an entry
  written after the client started is reused, so xdist workers refresh a key once);
* ``off``     never read or write the cache.

An entry is a dict ``{"format", "key", "request", "response"}`` where ``request`` holds the keyed
fields (:func:`~pytest_judgerel.llm.keys.key_fields`) and ``response`` the text, provider-reported
model and ``system_fingerprint`` (when the server sent one), usage, cost, latency and timestamp.
Stored (:func:`encode_entry`, format 2), it is zlib-compressed JSON without the key (the row's own
name) and without the keyed fields that are unset (restored on reading), about half of format 1,
the plain JSON text of the whole dict, which :func:`decode_entry` still reads.  Errors and secrets
(API keys, headers) are never stored.
"""

from __future__ import annotations

import json
import zlib
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any, Iterator, Mapping

from pytest_judgerel.errors import ConfigError
from pytest_judgerel.llm.keys import KeyedFields, sorted_json

__all__ = ["CACHE_MODES", "ENTRY_FORMAT", "STATS_PREFIX", "check_mode", "KeyLock", "CacheBackend",
           "decode_answer", "decode_entry", "encode_entry", "make_entry"]

CACHE_MODES = ("record", "replay", "refresh", "off")
ENTRY_FORMAT = 2
# the keyed fields a stored entry leaves out when unset, with the value they are restored to
_UNSET: dict[str, Any] = {"api_base": None, "temperature": None, "top_p": None, "max_tokens": None, "seed": None, "stop": None,
          "response_format": None, "tools": None, "grammar": None, "extra": {}, "namespace": "", "sample_index": 0}
STATS_PREFIX = "__judgerel_stats__:"


def check_mode(mode: str) -> str:
    if mode not in CACHE_MODES:
        raise ConfigError(f"cache mode must be one of {CACHE_MODES}, got {mode!r}")
    return mode


class KeyLock:
    """A cross-process lock for one key (single-flight).  ``acquire(0)`` never blocks."""

    def acquire(self, timeout: float) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def release(self) -> None:  # pragma: no cover - interface
        raise NotImplementedError


class CacheBackend:
    """What the client needs from a cache store.  Values are JSON-able dicts.

    Implement ``get``, ``set``, ``delete``, ``iter_entries``, ``key_lock`` and
    ``close``; ``get_many``/``set_many``/``incr_stats``/``read_stats``/``size_bytes`` and
    ``store_mark``/``stored_since`` are optional.
    """

    def get(self, key: str) -> dict | None:  # pragma: no cover - interface
        raise NotImplementedError

    def set(self, key: str, entry: Mapping[str, Any]) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def delete(self, key: str) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def iter_entries(self) -> Iterator[tuple[str, dict]]:  # pragma: no cover - interface
        raise NotImplementedError

    def key_lock(self, key: str) -> KeyLock:  # pragma: no cover - interface
        raise NotImplementedError

    def close(self) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def get_many(self, keys: list[str], request: bool = True) -> dict[str, dict]:
        """The entries of those ``keys`` that are stored (a backend that can reads them in one go);
        ``request=False`` may leave out their requests (serving a hit needs the response only)."""
        return {key: entry for key in keys if (entry := self.get(key)) is not None}

    def set_many(self, entries: Mapping[str, Mapping[str, Any]]) -> None:
        """Store several entries (a backend that can groups them in one transaction or round trip)."""
        for key, entry in entries.items():
            self.set(key, entry)

    def store_mark(self) -> Any:
        """A mark of what is stored now, for :meth:`stored_since`; None where the backend keeps none."""
        return None

    def stored_since(self, mark: Any, key: str) -> bool:
        """Whether ``key`` can have been stored since ``mark`` (:meth:`store_mark`'s value).  False only
        when it cannot: then a read made after the mark that missed ``key`` still stands, and single
        flight need not read it again under its lock.  The default: always True."""
        return True

    def incr_stats(self, hits: int, misses: int) -> None:
        return None

    def read_stats(self) -> dict[str, int]:
        return {}

    def size_bytes(self) -> int:
        return 0

    #: entries found unreadable since the backend was opened (each was served as a miss)
    corrupt: int = 0


def encode_entry(entry: Mapping[str, Any], compress: bool = True) -> bytes | str:
    """The stored form of ``entry`` (format 2): JSON of ``request`` without its unset fields and of
    ``response``, the key left out (it is the row's name); zlib-compressed bytes, or the JSON text
    with ``compress=False`` (a store that holds text, such as Redis with decoded responses)."""
    fields = entry.get("request", {})
    request = {name: value for name, value in fields.items() if name not in _UNSET or value != _UNSET[name]}
    text = None
    messages = getattr(fields, "messages_json", None)  # the messages' JSON the key was made of
    if messages is not None and isinstance(request.get("model"), str) and "messages" in request:
        # the same text as below: "messages" sorts right before "model", whose member is found once
        listed = request.pop("messages")
        rest = sorted_json(request, True)
        marker = '"model":' + encode_basestring(request["model"]) + ","
        if rest.count(marker) == 1:
            at = rest.index(marker)
            text = ('{"f":2,"q":' + rest[:at] + '"messages":' + messages + "," + rest[at:] + ',"r":'
                    + sorted_json(entry.get("response", {}), True) + "}")
        request["messages"] = listed
    if text is None:
        text = sorted_json({"f": 2, "q": request, "r": entry.get("response", {})}, True)
    if not compress:
        return text
    # a 4 KiB window and a small hash table: an entry is a few KiB at most, and zlib's default state
    # (32 KiB window, 128 KiB of tables) costs more to set up than compressing the entry does; level 1:
    # about 2% larger than level 6 on judge entries, 13% fewer instructions
    packer = zlib.compressobj(1, zlib.DEFLATED, 12, 4)
    return packer.compress(text.encode("utf-8")) + packer.flush()


def decode_entry(raw: Any, key: str | None = None) -> dict | None:
    """A stored entry as a dict (format 2 compressed or text, format 1 JSON text); None when absent
    or unreadable (then it is a miss).  ``key``: the row's name, restored as ``entry["key"]``."""
    if raw is None:
        return None
    try:
        if isinstance(raw, (bytes, bytearray, memoryview)) and bytes(raw[:1]) != b"{":
            raw = zlib.decompress(raw)
        entry = json.loads(raw)
        if isinstance(entry, dict) and entry.get("f") == 2:
            request = {**_UNSET, **entry["q"]}
            request["extra"] = dict(request["extra"])
            return {"format": 2, "key": key, "request": request, "response": entry["r"]}
    except (TypeError, ValueError, KeyError, zlib.error):
        return None
    return entry if isinstance(entry, dict) else None


def decode_answer(raw: Any, key: str | None = None) -> dict | None:
    """:func:`decode_entry` without the request of a format 2 entry (``{"format", "key", "response"}``):
    what serving a cache hit needs.  The response is the last member of the sorted JSON, and
    ``,"r":{`` cannot occur inside its strings (their quotes are escaped), so it is parsed alone."""
    if not isinstance(raw, (bytes, bytearray, memoryview)) or bytes(raw[:1]) == b"{":
        return decode_entry(raw, key)
    try:
        text = zlib.decompress(raw).decode("utf-8")
        at = text.rfind(',"r":{')
        if not text.startswith('{"f":2,') or at < 0:
            return decode_entry(raw, key)
        response = json.loads(text[at + 5:-1])
    except (ValueError, zlib.error):
        return None
    return {"format": 2, "key": key, "response": response} if isinstance(response, dict) else None


def make_entry(key: str, request_fields: Mapping[str, Any], response: Mapping[str, Any]) -> dict:
    """A storable entry; ``response`` keeps only text/model/usage/cost/latency/timestamp/attempts and
    the server's ``system_fingerprint``."""
    allowed = ("text", "model", "usage", "cost", "latency", "timestamp", "attempts", "system_fingerprint")
    # the client's own fields are kept as they are (with the messages' JSON their key was made of)
    request = request_fields if isinstance(request_fields, KeyedFields) else dict(request_fields)
    return {"format": ENTRY_FORMAT, "key": key, "request": request,
            "response": {name: response[name] for name in allowed if name in response}}
