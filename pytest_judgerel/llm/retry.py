"""Retry policy: bounded attempts, exponential backoff with full jitter, Retry-After.

Full jitter (Brooker, "Exponential Backoff And Jitter", AWS Architecture Blog 2015):
``delay = uniform(0, min(max_delay, base_delay * 2**attempt))``.  A server's
``Retry-After`` (seconds) replaces the jittered delay when larger, capped at
``retry_after_cap``.  Retryable: HTTP 408/409/429/5xx, timeouts, connection
errors, malformed responses and empty content.  Everything else (400, 401, 403,
404, 422, ...) fails at once; 401 and 403 (and litellm's missing-key messages) are
classified ``auth``.  The same rules serve litellm's exceptions and the fast path's
(aiohttp's and httpx's timeouts and transport errors, :class:`~pytest_judgerel.llm.wire.WireHTTPError`).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from pytest_judgerel.errors import ConfigError

__all__ = ["RetryPolicy", "FailureInfo", "classify_failure", "EmptyResponseError"]

_RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
# litellm reports a missing key as a 500 (OpenAI: "Missing credentials") or as a connection
# error (Gemini: "Missing Gemini API key"); neither fixes itself on a retry
_MISSING_KEY = re.compile(r"missing (?:credentials|[\w -]{0,30}api[ _-]?key)|api[ _-]?key[\w .`'-]{0,40}must be set",
                          re.IGNORECASE)


class EmptyResponseError(Exception):
    """The provider answered without usable text (retryable)."""


@dataclass(frozen=True)
class FailureInfo:
    """What went wrong with one attempt."""

    retryable: bool
    status: int | None
    message: str
    kind: str
    retry_after: float | None = None


def _header(exc: BaseException, name: str) -> str | None:
    for attr in ("litellm_response_headers", "headers"):
        headers = getattr(exc, attr, None)
        if headers:
            try:
                value = headers.get(name)
            except Exception:
                value = None
            if value is not None:
                return value
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is not None:
        try:
            return headers.get(name)
        except Exception:
            return None
    return None


def _retry_after(exc: BaseException) -> float | None:
    raw = _header(exc, "retry-after-ms")
    if raw is not None:
        try:
            return max(0.0, float(raw) / 1000.0)
        except ValueError:
            pass
    raw = _header(exc, "retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        from email.utils import parsedate_to_datetime
        import time

        try:
            return max(0.0, parsedate_to_datetime(raw).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


def classify_failure(exc: BaseException) -> FailureInfo:
    """Decide whether an exception from one attempt is worth retrying."""
    # litellm appends its own traceback to some messages: keep what precedes it
    message = (str(exc) or type(exc).__name__).split("\nTraceback (most recent call last)", 1)[0].strip()
    if isinstance(exc, EmptyResponseError):
        return FailureInfo(True, None, message, "empty")
    name = type(exc).__name__
    names = {cls.__name__ for cls in type(exc).__mro__}
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int):
        status = getattr(getattr(exc, "response", None), "status_code", None)
        status = status if isinstance(status, int) else None
    if _MISSING_KEY.search(message) or names & {"AuthenticationError", "PermissionDeniedError"} \
            or status in (401, 403):
        # a missing or rejected key never fixes itself (litellm reports a missing key as a 500)
        return FailureInfo(False, status or 401, message, "auth")
    if names & {"Timeout", "APITimeoutError", "TimeoutError", "ReadTimeout", "ConnectTimeout", "TimeoutException",
                 "ServerTimeoutError"}:
        return FailureInfo(True, status or 408, message, "timeout")
    if names & {"APIConnectionError", "ConnectionError", "ConnectError", "RemoteProtocolError", "NetworkError",
                 "ProtocolError", "ClientConnectionError", "ClientPayloadError"}:
        return FailureInfo(True, status, message, "connection")
    if names & {"JSONDecodeError", "MalformedResponseError"} or "Unterminated string" in message \
            or "Expecting value" in message:
        return FailureInfo(True, status, message, "malformed")
    if status is not None:
        retryable = status in _RETRYABLE_STATUS or status >= 500
        return FailureInfo(retryable, status, message, f"http_{status}",
                           _retry_after(exc) if retryable else None)
    if isinstance(exc, (ValueError, TypeError, KeyError, AttributeError)):
        return FailureInfo(False, None, message, name)
    return FailureInfo(True, None, message, name)


@dataclass
class RetryPolicy:
    """Bounded retries with full-jitter exponential backoff."""

    max_attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 20.0
    retry_after_cap: float = 30.0
    rng: random.Random = field(default_factory=random.Random, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.max_attempts, bool) or not isinstance(self.max_attempts, int) or self.max_attempts < 1:
            raise ConfigError(f"max_attempts must be an int >= 1, got {self.max_attempts!r}")
        for name in ("base_delay", "max_delay", "retry_after_cap"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be >= 0, got {getattr(self, name)!r}")

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        ceiling = min(self.max_delay, self.base_delay * (2 ** (attempt - 1)))
        wait = self.rng.uniform(0.0, ceiling)
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.retry_after_cap))
        return wait
