"""The current session context: the one place every object that makes calls finds its endpoint,
client and request settings when it is given none.

Inside a pytest session the plugin activates the session's :class:`SessionContext` (its
:class:`~pytest_judgerel.session.settings.Settings`, its :class:`~pytest_judgerel.llm.Endpoint` and its
:class:`~pytest_judgerel.llm.LLMClient`: cache mode, cache folder, concurrency, retries) from
``pytest_configure`` to ``pytest_unconfigure``.  A :class:`~pytest_judgerel.judging.judge.Judge`,
``JudgePanel``, probe, MindEval role or study run built without an explicit endpoint or client
(in a fixture, a test body or at import time of a test module) then uses the session's, and
takes the settings that shape a request (constrain, temperature, max tokens, re-ask, repeats)
from it unless given them.  Outside pytest, :func:`current_context` resolves the same way from
the environment and the defaults (:func:`pytest_judgerel.session.settings.settings_from_env`).

Explicit always wins: ``Judge(model="openai/x")`` keeps the session's server and key (a model
named in a test is served where the session's model is) unless ``api_base`` says otherwise; an
explicitly named in-process model (``scripted/...``, ``local/...``) never inherits a server
(:func:`pytest_judgerel.llm.endpoint.resolve_endpoint`).

The active context is a :class:`contextvars.ContextVar` (like the recorder of
:mod:`pytest_judgerel.session.recording`): it follows the session's thread and its asyncio tasks; a
thread you start yourself sees it when run with ``contextvars.copy_context().run``.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from typing import TYPE_CHECKING, Any, Iterator

from ..llm.endpoint import ACTIVE_SESSION as _CURRENT  # the clients' wrong-endpoint guard reads it too

if TYPE_CHECKING:  # pragma: no cover
    from ..llm.client import LLMClient
    from ..llm.endpoint import Endpoint
    from .settings import Settings

__all__ = ["SessionContext", "current_context", "activate", "session_endpoint"]


class SessionContext:
    """The settings of one session, and the endpoint and client built from them (each once, on
    first use: building a context imports nothing heavy)."""

    def __init__(self, settings: "Settings", *, run_id: str | None = None, origin: str = "pytest session") -> None:
        self.settings = settings
        self.run_id = run_id
        self.origin = origin
        self.progress: Any = None  # the terminal's progress reporter, handed to the client (pytest only)
        self._endpoint: "Endpoint | None" = None
        self._endpoint_error: Exception | None = None
        self._client: "LLMClient | None" = None
        self._lock = threading.RLock()

    # ------------------------------------------------------------ endpoint
    @property
    def endpoint(self) -> "Endpoint":
        """The session's endpoint (option > ini > environment > provider variable > embedded model),
        resolved once; a ConfigError says how to configure one when there is none."""
        with self._lock:
            if self._endpoint is None:
                from ..errors import ConfigError

                if self._endpoint_error is not None:  # resolved once, failure included
                    raise ConfigError(str(self._endpoint_error))
                from ..llm.endpoint import resolve_endpoint

                try:
                    self._endpoint = resolve_endpoint(settings=self.settings)
                except ConfigError as exc:
                    self._endpoint_error = exc
                    raise
            return self._endpoint

    def endpoint_or_none(self) -> "Endpoint | None":
        """The endpoint, or None when no model is configured and the embedded one is not installed."""
        from ..errors import ConfigError

        try:
            return self.endpoint
        except ConfigError:
            return None

    def resolve(self, model: str | None = None, api_base: str | None = None,
                api_key: str | None = None) -> "Endpoint":
        """An endpoint for explicit ``model``/``api_base``/``api_key`` refined from the session's
        (all None: the session's own)."""
        from ..llm.endpoint import resolve_endpoint

        if model is None and api_base is None and api_key is None:
            return self.endpoint
        default = self.endpoint_or_none()
        if default is None:
            return resolve_endpoint(model, api_base, api_key, settings=self.settings)
        return resolve_endpoint(model, api_base, api_key, default=default)

    # ------------------------------------------------------------ client
    @property
    def client(self) -> "LLMClient":
        """The session's LLM client (created on first use; litellm stays unimported until a miss).
        Its wrong-endpoint guard knows the session's endpoint."""
        with self._lock:
            if self._client is None:
                from dataclasses import replace

                from ..llm.client import LLMClient

                # the session's settings are the client's (Settings extends LLMSettings): nothing copied
                settings = self.settings
                if self.run_id is not None and settings.run_id != self.run_id:
                    settings = replace(settings, run_id=self.run_id)
                self._client = LLMClient(settings, endpoint=self.endpoint_or_none())
                self._client.progress = self.progress
            return self._client

    @property
    def has_client(self) -> bool:
        """Whether the client was created (no call was made otherwise)."""
        return self._client is not None

    def close(self) -> None:
        """Close the client (flushes its counters and used keys into the cache)."""
        with self._lock:
            if self._client is not None:
                self._client.close()

    # ------------------------------------------------------------ request settings
    def chosen(self, name: str) -> Any:
        """The value of setting ``name`` when the user set it (flag, ini or environment), else
        None: for callers whose own default differs from the session's (the study runs at the
        paper's temperature 1 unless ``--judge-temperature`` says otherwise)."""
        if self.settings.sources.get(name, "default") == "default":
            return None
        return getattr(self.settings, name)

    def __repr__(self) -> str:
        return f"SessionContext(origin={self.origin!r}, model={self.settings.model!r})"


_env_lock = threading.Lock()
_env_contexts: dict[tuple[Any, ...], SessionContext] = {}


def _env_state() -> tuple[Any, ...]:
    """What the environment context depends on: the working directory and the variables read."""
    from ..llm.endpoint import PROVIDER_BASE_VARS

    names = {n for names in PROVIDER_BASE_VARS.values() for n in names}
    return (os.getcwd(),) + tuple(sorted((k, v) for k, v in os.environ.items()
                                         if k.startswith("JUDGEREL_") or k in names))


def current_context() -> SessionContext:
    """The active session's context; outside pytest, one built from the environment and the
    defaults (one per distinct environment, so its client and cache are shared by every judge)."""
    ctx = _CURRENT.get()
    if ctx is not None:
        return ctx
    state = _env_state()
    with _env_lock:
        ctx = _env_contexts.get(state)
        if ctx is None:
            from ..errors import ConfigError
            from .settings import settings_from_env

            try:
                settings = settings_from_env()
            except ConfigError as exc:
                raise ConfigError(f"judgerel settings from the environment: {exc}") from None
            ctx = _env_contexts[state] = SessionContext(settings, origin="environment")
        return ctx


@contextlib.contextmanager
def activate(context: SessionContext) -> Iterator[SessionContext]:
    """Make ``context`` the current one for the block (the plugin uses :func:`enter`/:func:`leave`)."""
    token = _CURRENT.set(context)
    try:
        yield context
    finally:
        _CURRENT.reset(token)


def enter(context: SessionContext) -> contextvars.Token:
    """Make ``context`` current until :func:`leave` with the returned token (pytest_configure)."""
    return _CURRENT.set(context)


def leave(token: contextvars.Token) -> None:
    """Restore the context that was current before :func:`enter` (pytest_unconfigure)."""
    try:
        _CURRENT.reset(token)
    except ValueError:  # entered in another context (a thread): nothing of ours to restore here
        pass


def session_endpoint(spec: Any = None, api_base: str | None = None, api_key: str | None = None) -> "Endpoint":
    """An :class:`~pytest_judgerel.llm.Endpoint` for ``spec``: an Endpoint as given (``api_base``/
    ``api_key`` override it), a model name refined from the current session's endpoint, or None
    for the session's own."""
    from ..llm.endpoint import Endpoint, as_endpoint

    if isinstance(spec, Endpoint):
        return as_endpoint(spec, api_base, api_key)
    if spec is not None and not isinstance(spec, str):
        from ..errors import ConfigError

        raise ConfigError(f"a model must be a litellm model name or an Endpoint, got {type(spec).__name__}")
    return current_context().resolve(spec or None, api_base, api_key)
