"""pytest fixtures of the LLM layer (the plugin re-exports them; nothing is registered here)."""

from __future__ import annotations

from typing import Iterator

import pytest

from pytest_judgerel.llm.fake_server import FakeLLMServer


@pytest.fixture
def fake_llm_server() -> Iterator[FakeLLMServer]:
    """A running :class:`~pytest_judgerel.llm.fake_server.FakeLLMServer` (10 ms latency, no faults).

    Point requests at it with ``api_base=fake_llm_server.url`` and a model such as
    ``"openai/fake"``; ``fake_llm_server.requests`` counts what reached it.
    """
    with FakeLLMServer(latency=0.01) as server:
        yield server
