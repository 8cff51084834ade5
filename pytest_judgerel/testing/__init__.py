"""Test support for users' own suites: test doubles of a model provider, and their fixtures.

* :mod:`.fake_server`: :class:`FakeLLMServer`, a loopback OpenAI-compatible chat server that
  answers on the prompt's scale, with fault injection (:class:`FaultPlan`: 429, 500, 503,
  timeouts, disconnects, malformed and empty replies);
* :mod:`.scripted`: :class:`ScriptedHTTPError`, raised by a scripted model
  (``pytest_judgerel.llm.register_scripted``) to fail like an HTTP error;
* :mod:`.plugin`: the pytest plugin of this room (entry point ``pytest11: judgerel-testing``),
  with the ``fake_llm_server`` fixture.

Scripted models themselves are a product feature and stay in :mod:`pytest_judgerel.llm.scripted`.
The product never imports this package (tests/test_architecture.py checks it): the main plugin
does not register these fixtures, the second entry point does.  It installs with the package, as
the documented test doubles are part of what users get.  Names are imported lazily (PEP 562).
"""

from __future__ import annotations

from .._lazy import lazy_exports

_EXPORTS = {
    "FakeLLMServer": "pytest_judgerel.testing.fake_server",
    "FaultPlan": "pytest_judgerel.testing.fake_server",
    "ScriptedHTTPError": "pytest_judgerel.testing.scripted",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
