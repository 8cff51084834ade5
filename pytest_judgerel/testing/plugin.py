"""The pytest plugin of the test support (entry point ``pytest11: judgerel-testing``).

Fixtures users take for their own tests, registered apart from the main plugin
(:mod:`pytest_judgerel.plugin`), which never imports this room.  Without plugin autoloading
(``PYTEST_DISABLE_PLUGIN_AUTOLOAD``), load it with ``-p pytest_judgerel.testing.plugin``.
A fixture imports what it needs when it runs, so a session that uses none imports nothing more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

import pytest

if TYPE_CHECKING:
    from .fake_server import FakeLLMServer

__all__ = ["fake_llm_server"]


@pytest.fixture
def fake_llm_server(request: pytest.FixtureRequest) -> Iterator[FakeLLMServer]:
    """A running loopback fake OpenAI-compatible server (:class:`~pytest_judgerel.testing.FakeLLMServer`,
    10 ms latency, no faults).  Call it with ``model="openai/<any name>"`` and
    ``api_base=fake_llm_server.url`` (or ``--judge-api-base``).  The default reply is an integer
    on the scale the prompt states; set ``.responder`` (``fn(FakeRequest) -> str``), ``.scale``,
    ``.latency`` or ``.faults`` (a ``FaultPlan``; then ``.reset()``) in the test.  ``.requests``,
    ``.log`` and ``.max_in_flight`` tell what reached it.  Its port is derived from the test's id
    when free, so the URL (part of every cache key) is the same run after run and a re-run replays.
    Set ``.api_key`` to make it require that key (HTTP 401 without), as a real server with a key does."""
    from .fake_server import FakeLLMServer, stable_port

    with FakeLLMServer(latency=0.01, port=stable_port(request.node.nodeid)) as server:
        yield server
