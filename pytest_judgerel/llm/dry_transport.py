"""The dry run's transport: answers every cache miss without sending anything, and counts it as
a planned call with its estimated tokens and cost.

The answer is ``request.metadata["dry_reply"]`` when the caller put one there (the
:class:`~pytest_judgerel.judging.judge.Judge` puts a valid reply for its template and scale;
metadata is never in the cache key), else :data:`GENERIC_REPLY`.  Tokens are estimates: the prompt
at :data:`CHARS_PER_TOKEN` characters per token of the request body's text, the completion at the
request's ``max_tokens`` (an upper bound; :data:`DEFAULT_COMPLETION_TOKENS` when unset).  The cost
is priced from litellm's price table (:mod:`pytest_judgerel.llm.prices`), 0 for an unpriced model.
Dry answers are never stored in the cache.
"""

from __future__ import annotations

import time
from typing import Any

from pytest_judgerel.llm.request import LLMResponse

__all__ = ["DryTransport", "GENERIC_REPLY", "CHARS_PER_TOKEN", "DEFAULT_COMPLETION_TOKENS", "estimate_prompt_tokens"]

#: the reply of a request that carries no ``dry_reply`` (parses as a score on most scales)
GENERIC_REPLY = "1"
#: characters per prompt token of the estimate (English text; about right for GPT and Llama tokenizers)
CHARS_PER_TOKEN = 4.0
#: completion tokens assumed for a request without ``max_tokens``
DEFAULT_COMPLETION_TOKENS = 512


def estimate_prompt_tokens(request: Any) -> int:
    """Prompt tokens of ``request``, estimated as its messages' characters / :data:`CHARS_PER_TOKEN`."""
    chars = sum(len(m["content"]) if isinstance(m.get("content"), str) else len(str(m.get("content")))
                for m in request.messages)
    return max(1, round(chars / CHARS_PER_TOKEN))


class DryTransport:
    """Plans calls instead of sending them (module docstring)."""

    name = "dry"

    def answer(self, request: Any, key: str, stats: Any) -> LLMResponse:
        """The placeholder answer of ``request``, counted in ``stats`` as planned."""
        from pytest_judgerel.llm.prices import call_cost

        prompt = estimate_prompt_tokens(request)
        completion = int(request.max_tokens or DEFAULT_COMPLETION_TOKENS)
        usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
        cost = call_cost(request.model, usage)
        stats.planned += 1
        stats.planned_prompt_tokens += prompt
        stats.planned_completion_tokens += completion
        stats.planned_cost += cost
        reply = request.metadata.get("dry_reply")
        return LLMResponse(text=str(reply) if reply else GENERIC_REPLY, model=request.model, usage=usage, cost=0.0,
                           latency=0.0, cached=False, key=key, timestamp=time.time(), attempts=0)

    def close(self) -> None:
        pass

    def forget(self) -> None:
        pass
