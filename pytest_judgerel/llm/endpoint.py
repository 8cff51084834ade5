"""Endpoint: which server answers a call (model, base URL, key), resolved in one place.

Every request the plugin builds for the session's model takes its model, ``api_base``
and ``api_key`` from one :class:`Endpoint`, so no call path can forget the server the
user configured (the README's ``--judge-api-base`` promise).  Precedence, first set wins:

1. explicit arguments (a ``judge`` marker's ``model``/``api_base``, ``Judge(model=...)``);
   an explicit model keeps the session's server and key unless an explicit ``api_base`` says
   otherwise, and an explicitly named in-process model (``local/...``, ``scripted/...``)
   never inherits a server;
2. the session settings: command line > ini > environment (``JUDGEREL_MODEL``,
   ``JUDGEREL_API_BASE``; the key only from ``JUDGEREL_API_KEY``, never a flag);
3. for the server only: the provider's own base-URL variable (``OPENAI_BASE_URL``, then
   ``OPENAI_API_BASE``, and their kin in :data:`PROVIDER_BASE_VARS`), which litellm would read
   anyway; resolved here so that the report header, the JSON and the cache key name the server
   that answers (``source`` of the base: ``env OPENAI_BASE_URL``);
4. the embedded default ``local/smollm2`` when the ``local`` extra is installed.

Stdlib only: imported by the plugin at configure time.
"""

from __future__ import annotations

import contextvars
import os
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

from pytest_judgerel.errors import ConfigError
from pytest_judgerel.llm.settings import check_api_base

#: the active session context (anything with ``endpoint_or_none()``), or None outside a session.
#: :mod:`pytest_judgerel.session.context` sets it; every client's wrong-endpoint guard reads it, so
#: the LLM layer needs nothing of the session but this variable.
ACTIVE_SESSION: contextvars.ContextVar[Any] = contextvars.ContextVar("judgerel_context", default=None)

__all__ = ["ACTIVE_SESSION", "guarded_endpoint", "Endpoint", "resolve_endpoint", "as_endpoint", "default_model",
           "check_constrain", "is_constrained", "check_api_base", "provider_of", "provider_base_url", "is_in_process", "CONSTRAIN_MODES",
           "PROVIDER_BASE_VARS", "EMBEDDED_LABEL"]

EMBEDDED_LABEL = "embedded SmolLM2-135M-Instruct via llama.cpp: a weak judge, for offline runs only"
_IN_PROCESS = ("local/", "scripted/")

#: The base-URL variables litellm reads for a provider when a call names no ``api_base``, in
#: litellm's order (first set wins).  A model without a provider prefix is litellm's guess:
#: :data:`_BARE_PROVIDERS`.
PROVIDER_BASE_VARS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_BASE_URL", "OPENAI_API_BASE"),
    "text-completion-openai": ("OPENAI_BASE_URL", "OPENAI_API_BASE"),
    "anthropic": ("ANTHROPIC_API_BASE", "ANTHROPIC_BASE_URL"),
    "azure": ("AZURE_API_BASE",),
    "ollama": ("OLLAMA_API_BASE",),
    "ollama_chat": ("OLLAMA_API_BASE",),
    "hosted_vllm": ("HOSTED_VLLM_API_BASE",),
    "mistral": ("MISTRAL_API_BASE",),
    "groq": ("GROQ_API_BASE",),
    "deepseek": ("DEEPSEEK_API_BASE",),
    "openrouter": ("OPENROUTER_API_BASE",),
    "together_ai": ("TOGETHERAI_API_BASE",),
    "gemini": ("GEMINI_API_BASE",),
}
_BARE_PROVIDERS = (("gpt-", "openai"), ("o1", "openai"), ("o3", "openai"), ("o4", "openai"),
                   ("chatgpt-", "openai"), ("claude-", "anthropic"))


def is_in_process(model: str) -> bool:
    """True for models answered inside this process (``local/...``, ``scripted/...``)."""
    return isinstance(model, str) and model.startswith(_IN_PROCESS)


def provider_of(model: str) -> str | None:
    """The litellm provider of ``model``: its prefix, or litellm's guess for a bare OpenAI or
    Anthropic model name (``gpt-4o-mini`` -> ``openai``); None when unknown."""
    if "/" in model:
        return model.split("/", 1)[0]
    for prefix, provider in _BARE_PROVIDERS:
        if model.startswith(prefix):
            return provider
    return None


def provider_base_url(model: str) -> tuple[str, str] | None:
    """``(url, "env NAME")`` of the provider base-URL variable that litellm would send ``model``'s
    calls to, or None (no variable set, an in-process model or an unknown provider)."""
    if is_in_process(model):
        return None
    for name in PROVIDER_BASE_VARS.get(provider_of(model) or "", ()):
        value = _env(name)
        if value:
            problem = check_api_base(value)
            if problem:
                raise ConfigError(f"env {name}: {value!r} {problem}")
            return value, f"env {name}"
    return None


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
    base_source: str | None = field(default=None, compare=False)  # where api_base came from

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model.strip():
            raise ConfigError(f"judge model must be a non-empty litellm model name, got {self.model!r}")
        if self.api_base is not None:
            problem = check_api_base(self.api_base)
            if problem:
                raise ConfigError(f"api_base {problem}, got {self.api_base!r}")
            if self.in_process:
                raise ConfigError(f"model {self.model!r} runs in this process and takes no api_base "
                                  f"(got {self.api_base!r}): name the model your server serves, "
                                  "e.g. --judge-model=openai/<name>")
            if provider_of(self.model) is None:
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
        return is_in_process(self.model)

    def constrained(self, mode: str) -> bool:
        """Whether this endpoint's replies get a grammar under constrain ``mode``."""
        return is_constrained(mode, self.model)

    def request_fields(self) -> dict[str, Any]:
        """``model``, ``api_base`` and ``api_key`` for an :class:`~pytest_judgerel.llm.LLMRequest`."""
        return {"model": self.model, "api_base": self.api_base, "api_key": self.api_key}

    def with_model(self, model: str) -> "Endpoint":
        """The same server and key for another model (e.g. a judge panel on one vLLM); an
        in-process model gets no server, and a server taken from a provider's base-URL variable
        is looked up again for the new model's provider."""
        if is_in_process(model):
            return Endpoint(model=model, source="explicit")
        if self.base_source is not None and self.base_source.startswith("env ") \
                and not self.base_source.startswith("env JUDGEREL_"):
            found = provider_base_url(model)
            return replace(self, model=model, source="explicit", api_base=found[0] if found else None,
                           base_source=found[1] if found else None)
        return replace(self, model=model, source="explicit")

    def describe(self) -> dict[str, Any]:
        """What the report shows: model, endpoint and where each came from; never the key."""
        return {"model": self.model, "api_base": self.api_base, "source": self.source,
                "api_base_source": self.base_source if self.api_base else None,
                "embedded": self.embedded, "api_key_set": self.api_key is not None}

    def label(self) -> str:
        """One line for headers and failure messages."""
        if self.embedded:
            return f"{self.model} ({EMBEDDED_LABEL})"
        if self.api_base is None:
            return f"{self.model} at the provider's default endpoint"
        via = f" ({self.base_source})" if self.base_source else ""
        return f"{self.model} at {self.api_base}{via}"


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


def guarded_endpoint() -> "Endpoint | None":
    """The endpoint whose model must not leave its server for a client without one of its own:
    the current session's (:data:`ACTIVE_SESSION`), else the one the environment names."""
    context = ACTIVE_SESSION.get()
    if context is not None:
        return context.endpoint_or_none()
    try:  # outside a session: the endpoint the environment names (the same resolution)
        return resolve_endpoint()
    except ConfigError:
        return None


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
    if model is not None and is_in_process(str(model)):
        # an in-process model (embedded, scripted) never inherits a server or a key
        return Endpoint(model=str(model).strip(), api_base=api_base, api_key=api_key, source="explicit",
                        base_source="explicit" if api_base else None)
    source = "explicit" if model else None
    base_source = "explicit" if api_base is not None else None
    if default is not None:  # explicit values refine the default: its server serves the named model too
        if model is None:
            model, source = default.model, default.source
        if api_base is None:
            if default.base_source is not None and default.base_source.startswith("env ") \
                    and not default.base_source.startswith("env JUDGEREL_"):
                found = provider_base_url(str(model))  # the provider's variable, for this model's provider
                api_base, base_source = found if found else (None, None)
            else:
                api_base, base_source = default.api_base, default.base_source
        api_key = api_key if api_key is not None else default.api_key
        return Endpoint(model=str(model).strip(), api_base=api_base or None, api_key=api_key,
                        source=source or "explicit", base_source=base_source if api_base else None)
    if settings is None:  # the environment, through the settings' one reader of variables
        from pytest_judgerel.llm.settings import LLMSettings, read_environment

        found_model = read_environment(LLMSettings, "model")
        found_base = read_environment(LLMSettings, "api_base")
        chosen_model, model_source = found_model if found_model else (None, "")
        chosen_base, chosen_base_source = found_base if found_base else (None, "")
    else:
        sources: Mapping[str, str] = getattr(settings, "sources", None) or {}
        chosen_model, model_source = getattr(settings, "model", None), sources.get("model", "settings")
        chosen_base, chosen_base_source = getattr(settings, "api_base", None), sources.get("api_base", "settings")
    if model is None and chosen_model:
        model, source = chosen_model, model_source
    if api_base is None and chosen_base:
        api_base, base_source = chosen_base, chosen_base_source
    if api_key is None:
        api_key = _env("JUDGEREL_API_KEY")
    if model is None:
        if api_base:
            raise ConfigError(
                f"an api_base is set ({api_base}) but no judge model: name the model that server serves, "
                "e.g. --judge-model=openai/<name> (ini judgerel_model, env JUDGEREL_MODEL)"
            )
        model, source = default_model(), "embedded default"
    model = str(model).strip()
    if not api_base and not is_in_process(model):
        found = provider_base_url(model)
        if found:
            api_base, base_source = found
    if is_in_process(model) and api_base and base_source != "explicit":
        raise ConfigError(f"model {model!r} runs in this process and takes no api_base, but {base_source} "
                          f"sets {api_base}: name the model that server serves (openai/<name>) or unset it")
    return Endpoint(model=model, api_base=api_base or None, api_key=api_key, source=source or "explicit",
                    base_source=base_source if api_base else None)
