"""Endpoint: which server answers a call (model, base URL, key), resolved in one place.

Every request the plugin builds for the session's model takes its model, ``api_base``
and ``api_key`` from one :class:`Endpoint`, so no call path can forget the server the
user configured (the README's ``--judge-api-base`` promise).  Precedence, first set wins:

1. explicit arguments (a ``judge`` marker's ``model``/``api_base``, ``Judge(model=...)``);
2. the session settings: command line > ini > environment (``JUDGEREL_MODEL``,
   ``JUDGEREL_API_BASE``; the key only from ``JUDGEREL_API_KEY``, never a flag);
3. the embedded default ``local/smollm2`` when the ``local`` extra is installed.

Stdlib only: imported by the plugin at configure time.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

from pytest_judgerel.errors import ConfigError

__all__ = ["Endpoint", "resolve_endpoint", "as_endpoint", "default_model", "check_constrain", "is_constrained",
           "CONSTRAIN_MODES",
           "EMBEDDED_LABEL"]

EMBEDDED_LABEL = "embedded SmolLM2-135M-Instruct via llama.cpp: a weak judge, for offline runs only"
_IN_PROCESS = ("local/", "scripted/")

#: When replies are grammar-constrained: ``auto`` only on the embedded model (it needs it to
#: answer in format), ``always`` on any llama.cpp-compatible server too, ``never``.
CONSTRAIN_MODES = ("auto", "always", "never")


def is_constrained(mode: str, model: str) -> bool:
    """Whether replies of ``model`` get a grammar under constrain ``mode`` (the one rule)."""
    return check_constrain(mode) == "always" or (mode == "auto" and model.startswith("local/"))


def check_constrain(mode: Any) -> str:
    """``mode`` if it is one of :data:`CONSTRAIN_MODES`, else a ConfigError naming them."""
    if mode not in CONSTRAIN_MODES:
        raise ConfigError(f"constrain must be one of {', '.join(CONSTRAIN_MODES)}, got {mode!r}")
    return mode


@dataclass(frozen=True)
class Endpoint:
    """A litellm model name and the server that answers it.

    ``api_base`` is the base URL of an OpenAI-compatible server (``None``: the provider's
    own endpoint); ``api_key`` is sent with each call and never stored, printed or keyed.
    ``source`` says where the model came from (for the report header).
    """

    model: str
    api_base: str | None = None
    api_key: str | None = field(default=None, repr=False, compare=False)
    source: str = "explicit"

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model.strip():
            raise ConfigError(f"judge model must be a non-empty litellm model name, got {self.model!r}")
        if self.api_base is not None:
            if not isinstance(self.api_base, str) or not self.api_base.startswith(("http://", "https://")):
                raise ConfigError(f"api_base must be an http(s) URL such as http://127.0.0.1:8000/v1, "
                                  f"got {self.api_base!r}")
            if self.in_process:
                raise ConfigError(f"model {self.model!r} runs in this process and takes no api_base "
                                  f"(got {self.api_base!r}): name the model your server serves, "
                                  "e.g. --judge-model=openai/<name>")
            if "/" not in self.model:
                raise ConfigError(f"model {self.model!r} with api_base {self.api_base!r} needs a litellm provider "
                                  f"prefix; for an OpenAI-compatible server use 'openai/{self.model}'")
        if self.api_key is not None and not isinstance(self.api_key, str):
            raise ConfigError("api_key must be a string")

    @property
    def embedded(self) -> bool:
        """True for the embedded local model (``local/...``)."""
        return self.model.startswith("local/")

    @property
    def in_process(self) -> bool:
        """True for models answered inside this process (embedded or scripted)."""
        return self.model.startswith(_IN_PROCESS)

    def constrained(self, mode: str) -> bool:
        """Whether this endpoint's replies get a grammar under constrain ``mode``."""
        return is_constrained(mode, self.model)

    def request_fields(self) -> dict[str, Any]:
        """``model``, ``api_base`` and ``api_key`` for an :class:`~pytest_judgerel.llm.LLMRequest`."""
        return {"model": self.model, "api_base": self.api_base, "api_key": self.api_key}

    def with_model(self, model: str) -> "Endpoint":
        """The same server and key for another model (e.g. a judge panel on one vLLM)."""
        return replace(self, model=model, source="explicit")

    def describe(self) -> dict[str, Any]:
        """What the report shows: model, endpoint and source; never the key."""
        return {"model": self.model, "api_base": self.api_base, "source": self.source,
                "embedded": self.embedded, "api_key_set": self.api_key is not None}

    def label(self) -> str:
        """One line for headers and failure messages."""
        if self.embedded:
            return f"{self.model} ({EMBEDDED_LABEL})"
        where = self.api_base or "provider default endpoint"
        return f"{self.model} at {where}"


def as_endpoint(spec: Any, api_base: str | None = None, api_key: str | None = None) -> Endpoint:
    """An Endpoint from an Endpoint (explicit ``api_base``/``api_key`` override it) or a model name."""
    if isinstance(spec, Endpoint):
        if api_base is None and api_key is None:
            return spec
        return replace(spec, api_base=api_base if api_base is not None else spec.api_base,
                       api_key=api_key if api_key is not None else spec.api_key)
    return Endpoint(model=spec, api_base=api_base, api_key=api_key)


def default_model() -> str:
    """The embedded ``local/smollm2`` when the ``local`` extra is installed, else a ConfigError
    that says how to configure a model."""
    from pytest_judgerel.llm.local import LOCAL_MODEL, local_model_available

    if local_model_available():
        return LOCAL_MODEL
    raise ConfigError(
        "no judge model configured: pass --judge-model MODEL, set the ini option judgerel_model, "
        "set the environment variable JUDGEREL_MODEL (any litellm model string, e.g. openai/gpt-4o-mini), "
        "or install the embedded offline model with: pip install 'pytest-judgerel[local]'"
    )


def _env(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


def resolve_endpoint(model: str | None = None, api_base: str | None = None, api_key: str | None = None, *,
                     settings: Any = None, default: "Endpoint | None" = None) -> Endpoint:
    """The one resolution of model + api_base + api_key (module docstring for the order).

    ``settings`` are the session's resolved settings (``model``, ``api_base`` and their
    ``sources`` attributes); without them the environment is read.  ``default`` is an already
    resolved endpoint (e.g. the session's) that explicit arguments refine.
    """
    if default is not None and model is None and api_base is None and api_key is None:
        return default
    if model is not None and str(model).strip().startswith(_IN_PROCESS):
        # an in-process model (embedded, scripted) never inherits a server or a key
        return Endpoint(model=str(model).strip(), api_base=api_base, api_key=api_key, source="explicit")
    source = "explicit" if model else None
    if default is not None:  # explicit values refine the default: its server serves the named model too
        if model is None:
            model, source = default.model, default.source
        api_base = api_base if api_base is not None else default.api_base
        api_key = api_key if api_key is not None else default.api_key
    sources: Mapping[str, str] = getattr(settings, "sources", None) or {}
    if model is None:
        if getattr(settings, "model", None):
            model, source = settings.model, sources.get("model", "settings")
        elif settings is None and _env("JUDGEREL_MODEL"):
            model, source = _env("JUDGEREL_MODEL"), "env JUDGEREL_MODEL"
    if api_base is None and default is None:
        api_base = getattr(settings, "api_base", None) if settings is not None else _env("JUDGEREL_API_BASE")
    if api_key is None and default is None:
        api_key = _env("JUDGEREL_API_KEY")
    if model is None:
        if api_base:
            raise ConfigError(
                f"an api_base is set ({api_base}) but no judge model: name the model that server serves, "
                "e.g. --judge-model=openai/<name> (ini judgerel_model, env JUDGEREL_MODEL)"
            )
        model, source = default_model(), "embedded default"
    return Endpoint(model=str(model).strip(), api_base=api_base or None, api_key=api_key, source=source or "explicit")
