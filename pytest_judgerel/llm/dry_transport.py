"""The dry run's transport: answers every cache miss without sending anything, and counts it as
a planned call with its estimated tokens and cost.

The answer is ``request.metadata["dry_reply"]`` when the caller put one there (the
:class:`~pytest_judgerel.judging.judge.Judge` puts a valid reply for its template and scale, the
MindEval roles one that passes their own checks; metadata is never in the cache key), else
:data:`GENERIC_REPLY`.  Tokens are estimates: the prompt at :data:`CHARS_PER_TOKEN` characters
per token of the request's messages, the completion the same of the expected reply (the
placeholder), at most the request's ``max_tokens``, which is also counted as the completion's
bound (:data:`DEFAULT_COMPLETION_TOKENS` when unset).  The cost is priced from litellm's price
table (:mod:`pytest_judgerel.llm.prices`) or the ``--judgerel-price-per-mtok`` price; a call of a
model with neither is counted as unpriced (its cost unknown, not 0).  A request's
``metadata["reasks"]`` says how many more requests an unusable reply may cost (a re-ask with a
format reminder, a new sample): they are counted as the plan's bound, not as planned calls.  An
in-process model (``local/``) is counted apart (``planned_inprocess``), never as upstream.
Dry answers are never stored in the cache.
"""

from __future__ import annotations

import time
from typing import Any

from pytest_judgerel.llm.request import LLMResponse

__all__ = ["DryTransport", "GENERIC_REPLY", "CHARS_PER_TOKEN", "DEFAULT_COMPLETION_TOKENS", "estimate_prompt_tokens",
           "estimate_tokens"]

#: the reply of a request that carries no ``dry_reply`` (parses as a score on most scales)
GENERIC_REPLY = "1"
#: characters per prompt token of the estimate (English text; about right for GPT and Llama tokenizers)
CHARS_PER_TOKEN = 4.0
#: completion tokens bounded for a request without ``max_tokens``
DEFAULT_COMPLETION_TOKENS = 512


def estimate_tokens(text: str) -> int:
    """Tokens of ``text``, estimated as its characters / :data:`CHARS_PER_TOKEN` (at least 1)."""
    return max(1, round(len(text) / CHARS_PER_TOKEN))


def estimate_prompt_tokens(request: Any) -> int:
    """Prompt tokens of ``request``, estimated as its messages' characters / :data:`CHARS_PER_TOKEN`."""
    return estimate_tokens("".join(m["content"] if isinstance(m.get("content"), str) else str(m.get("content"))
                                   for m in request.messages))


class DryTransport:
    """Plans calls instead of sending them (module docstring)."""

    name = "dry"

    def answer(self, request: Any, key: str, stats: Any, fallback_price: Any = None) -> LLMResponse:
        """The placeholder answer of ``request``, counted in ``stats`` as planned."""
        from pytest_judgerel.llm.endpoint import is_in_process
        from pytest_judgerel.llm.prices import price_of

        reply = str(request.metadata.get("dry_reply") or GENERIC_REPLY)
        bound = int(request.max_tokens or DEFAULT_COMPLETION_TOKENS)
        prompt, completion = estimate_prompt_tokens(request), min(bound, estimate_tokens(reply))
        usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
        if is_in_process(request.model):
            stats.planned_inprocess += 1
        else:
            stats.planned += 1
            stats.planned_prompt_tokens += prompt
            stats.planned_completion_tokens += completion
            stats.planned_completion_max += bound
            stats.planned_reasks += int(request.metadata.get("reasks") or 0)
            price = price_of(request.model, fallback_price)
            if price is None:
                stats.planned_unpriced += 1
            else:
                stats.planned_cost += prompt * price[0] + completion * price[1]
                stats.planned_cost_max += prompt * price[0] + bound * price[1]
        return LLMResponse(text=reply, model=request.model, usage=usage, cost=0.0,
                           latency=0.0, cached=False, key=key, timestamp=time.time(), attempts=0)

    def close(self) -> None:
        pass

    def forget(self) -> None:
        pass
