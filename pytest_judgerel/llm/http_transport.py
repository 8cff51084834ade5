"""The HTTP fast path as a :class:`~pytest_judgerel.llm.transport.Transport`: its key rules (the
request's key, else the provider's variable, else a placeholder for a server of your own; a key
with whitespace is refused before the HTTP client would print it), one pooled HTTP client
(:class:`~pytest_judgerel.llm.wire.WireTransport`) and the cost from litellm's price table read
as data (:mod:`pytest_judgerel.llm.prices`)."""

from __future__ import annotations

import os
from typing import Any

from pytest_judgerel.errors import LLMCallError
from pytest_judgerel.llm.prices import call_cost
from pytest_judgerel.llm.retry import EmptyResponseError
from pytest_judgerel.llm.runtime import deadline
from pytest_judgerel.llm.transport import PLACEHOLDER_KEY, PreparedCall, Reply, missing_key_error
from pytest_judgerel.llm.wire import WIRE_PROVIDERS, WireTransport

__all__ = ["HTTPTransport"]


class HTTPTransport:
    """OpenAI-compatible ``/chat/completions`` without litellm (:mod:`pytest_judgerel.llm.wire`)."""

    name = "http"

    def __init__(self) -> None:
        self._wire: Any = None  # the pooled HTTP client, on first use

    def prepare(self, request: Any, key: str, timeout: float) -> PreparedCall:
        variable = WIRE_PROVIDERS[request.model.partition("/")[0]]

        def hint() -> str:
            if request.api_base:
                return f"set JUDGEREL_API_KEY to the key of {request.api_base}"
            return f"set the environment variable {variable}" + ("" if os.environ.get(variable) else
                                                                 " (not set in this process)")

        api_key = request.api_key or os.environ.get(variable) or None
        if api_key is not None and (api_key != api_key.strip() or not api_key.isprintable()):
            # the HTTP client would refuse the header with the key in its message (a trailing newline from a
            # .env file is the usual cause): say so without the key, and send nothing
            where = "the request's api_key" if request.api_key else f"the environment variable {variable}"
            raise LLMCallError(f"model {request.model!r}: {where} contains whitespace or a control character "
                               f"(a trailing newline?); strip it. No request was sent (test {request.test_name})")
        if api_key is None:
            if not request.api_base:  # the provider's own endpoint without a key: say so, send nothing
                raise missing_key_error(request, hint())
            api_key = PLACEHOLDER_KEY  # a local server usually needs none (the litellm path does the same)
        if self._wire is None:
            self._wire = WireTransport()
        wire = self._wire
        call = wire.prepare(request, api_key)

        async def send(attempt: int) -> Reply:
            async with deadline(timeout * 1.5 + 5.0):  # the wire's timeout is per read, this one per call
                reply = await wire.send(call, timeout)
            if not isinstance(reply.text, str) or not reply.text.strip():
                raise EmptyResponseError(f"model {request.model} returned empty content")
            return Reply(reply.text, reply.model, reply.usage, call_cost(request.model, reply.usage),
                         reply.system_fingerprint)

        return PreparedCall(send, hint)

    def close(self) -> None:
        if self._wire is not None:
            self._wire.close()

    def forget(self) -> None:
        if self._wire is not None:
            self._wire.forget()
        self._wire = None
