"""What a path to the wire provides the client: the :class:`Transport` interface and its values.

The client (:mod:`pytest_judgerel.llm.client`) does what every call shares: cache, single flight,
retries, rate limit, concurrency and accounting.  A transport does what differs per path: its key
rules (checked before anything is sent), the attempt itself, the hint when a key is missing or
rejected, and the cost of an answer.  The transports: :mod:`~pytest_judgerel.llm.http_transport`
(the HTTP fast path), :mod:`~pytest_judgerel.llm.litellm_transport` (litellm, and the in-process
models through its custom-provider hook) and :mod:`~pytest_judgerel.llm.dry_transport` (the dry
run: sends nothing).  Which one serves a call: :func:`pytest_judgerel.llm.wire.route`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Protocol

__all__ = ["Transport", "PreparedCall", "Reply", "SecretStr", "PLACEHOLDER_KEY", "missing_key_error"]

#: sent to an ``api_base`` server when no key is configured (local servers need none)
PLACEHOLDER_KEY = "judgerel-no-key"


class SecretStr(str):
    """An API key whose repr is masked, so ``pytest -l`` (showlocals) never prints it."""

    def __repr__(self) -> str:
        return "'***'"


@dataclass(frozen=True)
class Reply:
    """One successful attempt, whichever path sent it: the text, the model and the
    ``system_fingerprint`` the server reported (None when it sent none), token usage and cost."""

    text: str
    model: str
    usage: dict[str, int]
    cost: float
    system_fingerprint: str | None = None


@dataclass(frozen=True)
class PreparedCall:
    """A call that passed its transport's key rules: ``send(attempt)`` makes one attempt (attempt
    1, 2, ...); ``key_hint()`` says what to set when the key was missing or rejected."""

    send: Callable[[int], Awaitable[Reply]]
    key_hint: Callable[[], str]


class Transport(Protocol):
    """One path to the wire.  ``name`` is the path's counter in
    :class:`~pytest_judgerel.llm.client.CallStats` (``<name>_calls``)."""

    name: str

    def prepare(self, request: Any, key: str, timeout: float) -> PreparedCall:
        """The call for ``request`` (cache key ``key``, ``timeout`` seconds per attempt); raises an
        :class:`~pytest_judgerel.errors.LLMCallError` (a missing or malformed key) having sent nothing."""

    def close(self) -> None:
        """Release what the transport holds (its connection pool)."""

    def forget(self) -> None:
        """After ``fork()``: drop what belongs to the parent's event loop."""


def missing_key_error(request: Any, hint: str) -> Exception:
    """The error of a provider's call that needs a key none is configured for (nothing is sent)."""
    from pytest_judgerel.errors import MissingKeyError

    return MissingKeyError(
        f"model {request.model!r} needs an API key and none is configured (not retryable): "
        f"{hint}; no request was sent (test {request.test_name})")
