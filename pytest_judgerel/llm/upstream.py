"""One upstream call with the shared retries: the attempts of a prepared call
(:class:`~pytest_judgerel.llm.transport.PreparedCall`) under the process's rate limit and
concurrency bound, each failure classified (:func:`~pytest_judgerel.llm.retry.classify_failure`),
retried with the policy's backoff, and the answer accounted in the client's counters.  Under a
budget (:class:`Bill`) every attempt is a request that reserves its place before it is sent and
is settled with its cost once answered (:mod:`pytest_judgerel.llm.budget`)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from pytest_judgerel.errors import LLMCallError
from pytest_judgerel.llm.request import LLMResponse
from pytest_judgerel.llm.runtime import runtime

__all__ = ["send_with_retries", "Bill"]


class Bill:
    """How one call is billed: the session's ``budget`` (or None), the worst-case cost of one
    attempt (``worst``), and the price of a model litellm's table does not price (``price``, USD
    per prompt and completion token, or None); ``sent`` counts the attempts that were sent."""

    def __init__(self, budget: Any = None, worst: float = 0.0, price: tuple[float, float] | None = None) -> None:
        self.budget, self.worst, self.price = budget, worst, price
        self.sent = 0

    async def reserve(self, request: Any, stats: Any) -> None:
        """Reserve an attempt's place in the ``budget`` (set); a refusal ends the call (counted as
        refused, nothing sent)."""
        from pytest_judgerel.errors import BudgetExceededError

        try:
            await self.budget.reserve(request, self.worst)
        except BudgetExceededError:
            stats.errors += 1
            stats.refused += 1
            raise

    def settle(self, cost: float) -> None:
        if self.budget is not None:
            self.budget.settle(self.worst, cost)

    def cost(self, model: str, reply: Any) -> float:
        """The attempt's cost: the transport's, else at ``price`` for a model without a table price."""
        if reply.cost or self.price is None:
            return float(reply.cost)
        from pytest_judgerel.llm.prices import token_prices

        if token_prices(model) is not None:
            return float(reply.cost)
        usage = reply.usage
        return usage.get("prompt_tokens", 0) * self.price[0] + usage.get("completion_tokens", 0) * self.price[1]


async def send_with_retries(call: Any, request: Any, key: str, settings: Any, policy: Any, stats: Any,
                            bill: Bill | None = None) -> LLMResponse:
    """The answer of ``call`` (attempts up to ``settings.max_attempts``); an :class:`LLMCallError`
    naming the status, the attempts and the test when it gives up (the key hint on an auth failure).
    ``bill``: the budget each attempt is reserved in (within the concurrency bound) and settled with."""
    bill = bill or Bill()
    loop_runtime = runtime()
    attempt = 0
    while True:
        attempt += 1
        if settings.rpm is not None:
            await loop_runtime.rate_limit(settings.rpm)
        async with loop_runtime.semaphore(settings.max_concurrency):
            if bill.budget is not None:
                await bill.reserve(request, stats)  # the request past the cap raises here, nothing sent
            bill.sent += 1
            cost = 0.0
            started = time.perf_counter()
            try:
                reply = await call.send(attempt)
                latency = time.perf_counter() - started
                failure = None
                cost = bill.cost(request.model, reply)
            except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:  # noqa: BLE001 - classified below
                from pytest_judgerel.llm.retry import classify_failure

                failure = classify_failure(exc)
                error = exc
            finally:
                bill.settle(cost)
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
    usage = reply.usage
    stats.prompt_tokens += usage["prompt_tokens"]
    stats.completion_tokens += usage["completion_tokens"]
    stats.cost += cost
    return LLMResponse(text=str(reply.text), model=reply.model, usage=usage, cost=cost, latency=latency,
                       cached=False, key=key, timestamp=time.time(), attempts=attempt,
                       system_fingerprint=reply.system_fingerprint)
