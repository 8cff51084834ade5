"""Cache keys: sha256 of the canonical JSON of everything that changes a model's output.

Canonical JSON = ``json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)``.
The key covers model, api_base, messages (role and content only), every sampling
parameter, the grammar, a user namespace and the sample index (so repeated samples
at temperature > 0 stay distinct; cf. promptfoo#360 where repeats and caching
conflicted).  API keys, timeouts, retry settings and metadata are excluded, so a
key never carries a secret and a changed timeout never invalidates a cassette.

The whole ``api_base`` is keyed (a trailing slash aside): two servers are two judges, even on
one host.  Test servers therefore prefer a stable port (see
:func:`pytest_judgerel.testing.fake_server.stable_port`), so a re-run replays.
"""

from __future__ import annotations

import hashlib
import json
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any, Mapping

from pytest_judgerel.errors import ConfigError

__all__ = ["KEY_VERSION", "KeyedFields", "key_fields", "key_from_fields", "key_api_base", "cache_key",
           "canonical_json", "sorted_json"]

#: Bumped whenever the key layout changes, so old entries become misses instead of wrong hits.
KEY_VERSION = 1


def _refuse(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def sorted_json(value: Any, allow_nan: bool = False) -> str:
    """``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=...)``,
    through json's C encoder directly when it is there (the same text without building a
    ``JSONEncoder`` per call); TypeError or ValueError for what JSON cannot hold."""
    if c_make_encoder is None:  # pragma: no cover - an interpreter without json's C accelerator
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=allow_nan)
    return "".join(c_make_encoder({}, _refuse, encode_basestring, None, ":", ",", True, False, allow_nan)(value, 0))


def canonical_json(value: Any) -> str:
    """Deterministic JSON text (sorted keys, no whitespace, no NaN): :func:`sorted_json`."""
    try:
        return sorted_json(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"request field is not JSON-serialisable for the cache key: {exc}") from exc


class KeyedFields(dict):
    """:func:`key_fields`' dict; once :func:`key_from_fields` has keyed it, ``messages_json`` holds the
    canonical JSON of its messages, which the cache entry reuses instead of encoding them again."""

    __slots__ = ("messages_json",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.messages_json: str | None = None


def key_api_base(api_base: str | None) -> str | None:
    """The api_base as keyed: the whole URL, trailing slash dropped."""
    return api_base.rstrip("/") if api_base else None


def _float_or_none(value: Any) -> float | None:
    return None if value is None else float(value)


def key_fields(request: Any) -> dict[str, Any]:
    """The keyed fields of an :class:`~pytest_judgerel.llm.request.LLMRequest` as a JSON-able dict."""
    return KeyedFields({
        "v": KEY_VERSION,
        "model": request.model,
        "api_base": key_api_base(request.api_base),
        # a message of exactly role and content is keyed as it is (the request's own frozen copy)
        "messages": [m if len(m) == 2 and "role" in m and "content" in m else
                     {"role": m.get("role"), "content": m.get("content")} for m in request.messages],
        "temperature": _float_or_none(request.temperature),
        "top_p": _float_or_none(request.top_p),
        "max_tokens": request.max_tokens,
        "seed": request.seed,
        "stop": list(request.stop) if request.stop is not None else None,
        "response_format": dict(request.response_format) if request.response_format is not None else None,
        "tools": [dict(t) for t in request.tools] if request.tools is not None else None,
        "grammar": request.grammar,
        "extra": dict(request.extra_params),
        "namespace": request.namespace,
        "sample_index": request.sample_index,
    })


def key_from_fields(fields: Mapping[str, Any]) -> str:
    """sha256 hex digest of the canonical JSON of ``fields`` (as produced by :func:`key_fields`).

    For :class:`KeyedFields` the messages are encoded apart (kept as ``messages_json``) and the text
    is put together around them: ``"messages"`` sorts right before ``"model"``, and the rest's text
    has exactly one ``,"model":<model>,"namespace":`` (else the whole dict is encoded at once)."""
    if isinstance(fields, KeyedFields):
        messages = canonical_json(fields["messages"])
        rest = canonical_json({name: value for name, value in fields.items() if name != "messages"})
        marker = ',"model":' + canonical_json(fields["model"]) + ',"namespace":'
        if rest.count(marker) == 1:
            fields.messages_json = messages
            at = rest.index(marker)
            text = rest[:at] + ',"messages":' + messages + rest[at:]
            return hashlib.sha256(text.encode("utf-8")).hexdigest()
    return hashlib.sha256(canonical_json(dict(fields)).encode("utf-8")).hexdigest()


def cache_key(request: Any) -> str:
    """The cache key of a request."""
    return key_from_fields(key_fields(request))
