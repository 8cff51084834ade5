"""Failures a scripted model can raise, to test how a suite copes with a provider's errors.

A scripted model (``pytest_judgerel.llm.register_scripted("scripted/x", fn)``) is a product
feature: a Python function answering as a model (MindEval's Python clinicians are served that
way).  What lives here is test support: :class:`ScriptedHTTPError`, raised by ``fn`` to make
its call fail like an HTTP error (429 with ``retry_after``, 500, 503, 401, ...), so the client's
retries, error classification and reporting can be exercised without a server.

The product never imports this module: :mod:`pytest_judgerel.llm.scripted` treats any exception
with an integer ``status_code`` attribute as that HTTP status (duck typing), and reads its
``message`` and ``retry_after`` when present.
"""

from __future__ import annotations

__all__ = ["ScriptedHTTPError"]


class ScriptedHTTPError(Exception):
    """Raised by a scripted callable to make the call fail like an HTTP error with ``status_code``
    (``retry_after``: the seconds a 429 asks the client to wait)."""

    def __init__(self, status_code: int, message: str = "scripted failure", retry_after: float | None = None):
        super().__init__(message)
        self.status_code = int(status_code)
        self.message = message
        self.retry_after = retry_after
