"""Shared helpers of the LLM-layer tests (imported by tests/test_llm_*.py)."""

from __future__ import annotations

import asyncio
import itertools
from typing import Iterator

import pytest

from pytest_judgerel.llm.client import LLMClient, LLMSettings
from pytest_judgerel.llm.request import LLMRequest
from pytest_judgerel.testing.fake_server import FakeLLMServer

_names = itertools.count()


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(latency=0.01) as srv:
        yield srv


@pytest.fixture
def cache_dir(tmp_path):
    return tmp_path / "cache"


def make_client(cache_dir, **settings) -> LLMClient:
    settings.setdefault("backoff_base", 0.01)
    settings.setdefault("timeout", 5.0)
    return LLMClient(LLMSettings(cache_dir=str(cache_dir), **settings))


def fake_request(server: FakeLLMServer, prompt: str, **fields) -> LLMRequest:
    fields.setdefault("model", "openai/fake")
    fields.setdefault("api_key", "sk-fake")
    fields.setdefault("api_base", server.url)
    return LLMRequest(messages=({"role": "user", "content": prompt},), **fields)


def unique_model(prefix: str = "scripted/t") -> str:
    """A fresh scripted model name, so tests never share registrations."""
    return f"{prefix}{next(_names)}"


class GatedFakeServer(FakeLLMServer):
    """A fake server that holds chat requests until ``gate`` of them are in flight together for
    the first time (or ``patience`` seconds pass), then answers as usual.

    The peak concurrency it records then depends on the client's limit alone, not on how fast
    a loaded machine dispatches requests within one latency window (event-driven, no margin).
    """

    def __init__(self, gate: int | None, patience: float = 60.0, **kwargs):
        super().__init__(**kwargs)
        self.gate = gate  # None: no holding (e.g. for a warm-up call; set it afterwards)
        self.patience = patience

    async def _chat_inner(self, writer, body, headers):
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.patience
        while self.gate is not None and self.max_in_flight < self.gate and loop.time() < deadline:
            await asyncio.sleep(0.002)
        return await super()._chat_inner(writer, body, headers)
