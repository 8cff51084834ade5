"""Held-out bugs, batch 6: 10 plausible bugs (8 kept below) in the call path's new code (a batch served by
workers, the chunk sent ahead and its cancel, single flight on a future, the key's and the cache
entry's spliced JSON, the bare-number reply), written from the package code only (no file under
``tests/`` opened or searched while writing them) and committed before they were measured.

Measured 7 of 10 killed; two of the three survivors are no longer listed here: K06 (``Submitted.cancel``
not setting the batch's ``started`` event) removed a line no input reaches (the batch's own ``finally``
sets it: ``run_coroutine_threadsafe`` always runs a task's first step before a cancel from another
thread), and the line is gone; K09 (the entry's spliced path without its ``isinstance(model, str)``
guard) is equivalent (``LLMRequest`` refuses a model that is not a string, and only a request's keyed
fields carry the messages' JSON).  Both are in ``held_out_mutants.DROPPED_EQUIVALENT``.

Each entry of :data:`BATCH6` is ``(id, kind, file, old, new, what)`` like :mod:`held_out_batch4`.
"""

from __future__ import annotations

BATCH6: list[tuple[str, str, str, str, str, str]] = [
    ("K01", "cache", "llm/client.py",
     "workers = min(len(waiting), client.settings.max_concurrency)",
     "workers = min(len(waiting), 1)",
     "a batch is served one call at a time whatever max_concurrency says"),
    ("K02", "cache", "llm/client.py",
     "            if halt.is_set():\n                return",
     "            if halt.is_set():\n                pass",
     "a cancelled batch keeps starting its remaining calls"),
    ("K03", "cache", "llm/client.py",
     "finally:\n            if self._inflight.get(key) is flight:",
     "finally:\n            if self._inflight.get(key) is not flight:",
     "a finished call's future is never forgotten: later identical requests in the process get its answer "
     "or its error without a call (a failure kept in memory, a fresh request answered from it)"),
    ("K04", "cache", "llm/client.py",
     "            if isinstance(exc, asyncio.CancelledError):\n                flight.cancel()",
     "            if isinstance(exc, BaseException):\n                flight.cancel()",
     "identical requests waiting on a call that failed are cancelled instead of getting its error"),
    ("K05", "cache", "llm/client.py",
     "prior = after.started if after is not None else None",
     "prior = None",
     "the chunk sent ahead starts at once and shares the slots with the current one"),
    ("K07", "cache", "llm/keys.py",
     "if rest.count(marker) == 1:",
     "if rest.count(marker) >= 1:",
     "a request whose extra params nest a model and a namespace splices its messages at the wrong place: "
     "its key is not the canonical JSON's, so its cassette entry no longer replays"),
    ("K08", "cache", "llm/keys.py",
     '"messages": [m if len(m) == 2 and "role" in m and "content" in m else',
     '"messages": [m if len(m) >= 2 and "role" in m and "content" in m else',
     "a message with more than role and content (a name, tool calls) is keyed with them: its key changes"),
    ("K10", "parsing", "judging/parsing.py",
     'return _check_on_scale(float(plain.group(1)), sc, reply, "")',
     "return float(plain.group(1))",
     "a bare number off the scale (7 on 0-5) is read as a score instead of an out-of-range failure"),
]
