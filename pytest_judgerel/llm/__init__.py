"""The LLM call layer: requests, cache, retries, concurrency, providers.

Importing this package is cheap: names are resolved lazily (PEP 562), and
litellm / diskcache are imported only when a call needs them.  The test doubles of a provider
(the fake server, scripted failures) live in :mod:`pytest_judgerel.testing`.
"""

from __future__ import annotations

from .._lazy import lazy_exports

_EXPORTS = {
    "LLMRequest": "pytest_judgerel.llm.request",
    "LLMResponse": "pytest_judgerel.llm.request",
    "LLMClient": "pytest_judgerel.llm.client",
    "LLMSettings": "pytest_judgerel.llm.settings",
    "CallStats": "pytest_judgerel.llm.client",
    "default_model": "pytest_judgerel.llm.endpoint",
    "Endpoint": "pytest_judgerel.llm.endpoint",
    "resolve_endpoint": "pytest_judgerel.llm.endpoint",
    "cache_key": "pytest_judgerel.llm.keys",
    "key_fields": "pytest_judgerel.llm.keys",
    "CACHE_MODES": "pytest_judgerel.llm.backend",
    "CacheBackend": "pytest_judgerel.llm.backend",
    "DiskCacheBackend": "pytest_judgerel.llm.disk_backend",
    "RetryPolicy": "pytest_judgerel.llm.retry",
    "register_scripted": "pytest_judgerel.llm.scripted",
    "unregister_scripted": "pytest_judgerel.llm.scripted",
    "local_model_available": "pytest_judgerel.llm.local",
    "LOCAL_MODEL": "pytest_judgerel.llm.local",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
