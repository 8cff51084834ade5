"""One upstream call with the shared retries: the attempts of a prepared call
(:class:`~pytest_judgerel.llm.transport.PreparedCall`) under the process's rate limit and
concurrency bound, each failure classified (:func:`~pytest_judgerel.llm.retry.classify_failure`),
retried with the policy's backoff, and the answer accounted in the client's counters."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from pytest_judgerel.errors import LLMCallError
from pytest_judgerel.llm.request import LLMResponse

__all__ = ["send_with_retries"]


async def send_with_retries(call: Any, request: Any, key: str, settings: Any, policy: Any, stats: Any) -> LLMResponse:
    """The answer of ``call`` (attempts up to ``settings.max_attempts``); an :class:`LLMCallError`
    naming the status, the attempts and the test when it gives up (the key hint on an auth failure)."""
    from pytest_judgerel.llm.runtime import runtime

    loop_runtime = runtime()
    attempt = 0
    while True:
        attempt += 1
        await loop_runtime.rate_limit(settings.rpm)
        async with loop_runtime.semaphore(settings.max_concurrency):
            started = time.perf_counter()
            try:
                reply = await call.send(attempt)
                latency = time.perf_counter() - started
                failure = None
            except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:  # noqa: BLE001 - classified below
                from pytest_judgerel.llm.retry import classify_failure

                failure = classify_failure(exc)
                error = exc
        if failure is None:
            break
        if not failure.retryable or attempt >= settings.max_attempts:
            stats.errors += 1
            status = f"HTTP {failure.status}" if failure.status else failure.kind
            why = "not retryable" if not failure.retryable else f"gave up after {attempt} attempts"
            if failure.kind == "auth":
                why += f"; missing or rejected key: {call.key_hint()}"
            # ``from None``: the provider's traceback would show litellm's frame arguments
            # (api_key=...) in pytest's long tracebacks and JUnit XML; its message is kept.
            where = f" at {request.api_base}" if request.api_base else ""  # which server did not answer
            raise LLMCallError(
                f"model {request.model!r}{where} call failed ({status}, {why}) for test {request.test_name}: "
                f"{type(error).__name__}: {failure.message}"
            ) from None
        stats.retries += 1
        await asyncio.sleep(policy.delay(attempt, failure.retry_after))
    usage, cost = reply.usage, reply.cost
    stats.prompt_tokens += usage["prompt_tokens"]
    stats.completion_tokens += usage["completion_tokens"]
    stats.cost += cost
    return LLMResponse(text=str(reply.text), model=reply.model, usage=usage, cost=cost, latency=latency,
                       cached=False, key=key, timestamp=time.time(), attempts=attempt,
                       system_fingerprint=reply.system_fingerprint)
