"""The variable that holds the current session context (:mod:`pytest_judgerel.context`).

A leaf module (stdlib only) so that the LLM client can read the current session's endpoint for
its wrong-endpoint guard without importing the context module that builds clients.
"""

from __future__ import annotations

import contextvars
from typing import Any

__all__ = ["CURRENT"]

#: the active :class:`~pytest_judgerel.context.SessionContext`, or None outside a session
CURRENT: contextvars.ContextVar[Any] = contextvars.ContextVar("judgerel_context", default=None)
