"""A Judge with a number template on the fake OpenAI-compatible server, and the cache it writes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

JUDGE_MODEL = "openai/robust-judge"
NUMBER_TEMPLATE = ("=== system\nYou rate sentence similarity.\n=== user\n"
                   "Rate the similarity of “{sentence1}” and “{sentence2}” on a scale from {min} to {max}. "
                   "Reply with a single number.\n")


def robust_items(n: int, offset: int = 0) -> list[dict]:
    """Distinct STS-like items (every item has its own prompt, hence its own request body)."""
    return [{"id": f"it{i}", "sentence1": f"Sentence number {i} about topic {i % 7}.",
             "sentence2": f"Another sentence {i * 3 % 11} on topic {i % 5}."} for i in range(offset, offset + n)]


def make_judge(url: str, cache_dir: str | os.PathLike, *, api_key: str = "sk-robust", max_attempts: int = 4,
               timeout: float = 10.0, max_concurrency: int = 16, cache_mode: str = "record", **judge_kw: Any):
    """A Judge (single-number template, scale 0-10 integer) on the fake server with its own client."""
    from pytest_judgerel import Judge
    from pytest_judgerel.llm import LLMClient, LLMSettings

    client = LLMClient(LLMSettings(cache_dir=str(cache_dir), cache_mode=cache_mode, max_concurrency=max_concurrency,
                                   max_attempts=max_attempts, timeout=timeout, backoff_base=0.01, backoff_max=0.2))
    judge_kw.setdefault("template", NUMBER_TEMPLATE)
    judge_kw.setdefault("scale", "0-10")
    judge_kw.setdefault("reask", False)
    return Judge(model=JUDGE_MODEL, api_base=url, api_key=api_key, client=client, **judge_kw)


def cache_texts(cache_dir: str | os.PathLike) -> dict[str, Any]:
    from pytest_judgerel.llm.cache import open_backend

    backend = open_backend(Path(cache_dir))
    try:
        return {k: e.get("response", {}).get("text") for k, e in backend.iter_entries()}
    finally:
        backend.close()
