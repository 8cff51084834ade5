"""Request and response value objects of the LLM layer.

An :class:`LLMRequest` describes one chat completion; everything that changes the
model's output is part of its cache key (see :mod:`pytest_judgerel.llm.keys`),
everything else (API key, timeout, metadata) is carried along but never keyed
and never stored.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from collections.abc import Mapping
from typing import Any

from pytest_judgerel.errors import ConfigError

__all__ = ["LLMRequest", "LLMResponse"]

_VALID_ROLES = frozenset({"system", "user", "assistant", "tool", "developer", "function"})
# LLMRequest fields (and streaming options) that extra_params may not set
_RESERVED = frozenset({"model", "messages", "api_key", "api_base", "timeout", "metadata", "stream", "n"})


def _freeze_messages(messages: Any) -> tuple[dict[str, Any], ...]:
    if isinstance(messages, (str, bytes)) or not hasattr(messages, "__iter__"):
        raise ConfigError(
            f"LLMRequest.messages must be a sequence of {{'role', 'content'}} dicts, got {type(messages).__name__}"
        )
    frozen = []
    for i, message in enumerate(messages):
        if type(message) is not dict and not isinstance(message, Mapping):  # (a dict skips the ABC check)
            raise ConfigError(f"LLMRequest.messages[{i}] must be a dict, got {type(message).__name__}")
        role = message.get("role")
        if role not in _VALID_ROLES:
            raise ConfigError(f"LLMRequest.messages[{i}] has invalid role {role!r}")
        content = message.get("content")
        if not isinstance(content, (str, list)):
            raise ConfigError(
                f"LLMRequest.messages[{i}] content must be a str (or a list of content parts), "
                f"got {type(content).__name__}"
            )
        frozen.append(dict(message))
    if not frozen:
        raise ConfigError("LLMRequest.messages is empty")
    return tuple(frozen)


def _check_number(name: str, value: Any, *, low: float | None = None) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"LLMRequest.{name} must be a finite number or None, got {value!r}")
    if low is not None and value < low:
        raise ConfigError(f"LLMRequest.{name} must be >= {low}, got {value!r}")


@dataclass(frozen=True, eq=True)
class LLMRequest:
    """One chat-completion request.

    Keyed fields: ``model``, ``api_base``, ``messages`` (role and content only),
    ``temperature``, ``top_p``, ``max_tokens``, ``seed``, ``stop``,
    ``response_format``, ``tools``, ``grammar``, ``extra_params`` (other sampling
    parameters passed through to litellm), ``namespace`` and ``sample_index``.
    ``sample_index`` numbers repeated samples of the same prompt so that repeats
    at temperature > 0 are distinct cache entries.

    Not keyed and never stored: ``api_key``, ``timeout``, ``metadata`` (the
    ``"test"`` entry names the calling test in replay-miss errors).
    """

    model: str
    messages: tuple[dict[str, Any], ...]
    temperature: float | None = 0.0
    max_tokens: int | None = None
    seed: int | None = None
    top_p: float | None = None
    stop: tuple[str, ...] | None = None
    response_format: Mapping[str, Any] | None = None
    tools: tuple[Mapping[str, Any], ...] | None = None
    grammar: str | None = None
    extra_params: Mapping[str, Any] = field(default_factory=dict)
    api_base: str | None = None
    sample_index: int = 0
    namespace: str = ""
    api_key: str | None = field(default=None, repr=False, compare=False)
    timeout: float | None = field(default=None, compare=False)
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model.strip():
            raise ConfigError(f"LLMRequest.model must be a non-empty string, got {self.model!r}")
        object.__setattr__(self, "messages", _freeze_messages(self.messages))
        _check_number("temperature", self.temperature, low=0.0)
        _check_number("top_p", self.top_p, low=0.0)
        _check_number("timeout", self.timeout, low=0.0)
        for name in ("max_tokens", "seed"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise ConfigError(f"LLMRequest.{name} must be an int or None, got {value!r}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ConfigError(f"LLMRequest.max_tokens must be >= 1, got {self.max_tokens}")
        if isinstance(self.sample_index, bool) or not isinstance(self.sample_index, int) or self.sample_index < 0:
            raise ConfigError(f"LLMRequest.sample_index must be an int >= 0, got {self.sample_index!r}")
        if not isinstance(self.namespace, str):
            raise ConfigError(f"LLMRequest.namespace must be a string, got {self.namespace!r}")
        if self.stop is not None:
            stop = (self.stop,) if isinstance(self.stop, str) else tuple(self.stop)
            if not all(isinstance(s, str) for s in stop):
                raise ConfigError(f"LLMRequest.stop must be a string or a sequence of strings, got {self.stop!r}")
            object.__setattr__(self, "stop", stop)
        if self.tools is not None:
            object.__setattr__(self, "tools", tuple(self.tools))
        if self.grammar is not None and not isinstance(self.grammar, str):
            raise ConfigError(f"LLMRequest.grammar must be GBNF text (str), got {type(self.grammar).__name__}")
        if type(self.extra_params) is not dict and not isinstance(self.extra_params, Mapping):
            raise ConfigError("LLMRequest.extra_params must be a dict of extra sampling parameters")
        bad = _RESERVED.intersection(self.extra_params) if self.extra_params else None
        if bad:
            raise ConfigError(f"LLMRequest.extra_params may not set {sorted(bad)}: use the dedicated fields")
        if type(self.metadata) is not dict and not isinstance(self.metadata, Mapping):
            raise ConfigError("LLMRequest.metadata must be a dict")

    def sampling(self) -> dict[str, Any]:
        """The sampling parameters that are set, as JSON-ready values (what both paths to the wire
        send): ``temperature``, ``top_p``, ``max_tokens``, ``seed``, ``stop`` (a list),
        ``response_format`` and ``tools``."""
        out: dict[str, Any] = {}
        for name in ("temperature", "top_p", "max_tokens", "seed"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.stop is not None:
            out["stop"] = list(self.stop)
        if self.response_format is not None:
            out["response_format"] = dict(self.response_format)
        if self.tools is not None:
            out["tools"] = [dict(t) for t in self.tools]
        return out

    def with_sample(self, sample_index: int) -> "LLMRequest":
        """The same request for repeated sample number ``sample_index``."""
        return replace(self, sample_index=sample_index)

    @property
    def test_name(self) -> str:
        """``metadata["test"]``, else the test pytest is running now (``PYTEST_CURRENT_TEST``)."""
        name = self.metadata.get("test")
        if name:
            return str(name)
        import os

        current = os.environ.get("PYTEST_CURRENT_TEST", "")
        return current.rsplit(" (", 1)[0] if current else "<unknown test>"

    def prompt_excerpt(self, limit: int = 160) -> str:
        """The last user message (or last message), shortened to ``limit`` characters."""
        chosen = self.messages[-1]
        for message in reversed(self.messages):
            if message.get("role") == "user":
                chosen = message
                break
        content = chosen.get("content")
        text = content if isinstance(content, str) else str(content)
        text = " ".join(text.split())
        return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class LLMResponse:
    """The answer to one :class:`LLMRequest`.

    ``model`` is the model the provider reported; ``usage`` holds
    ``prompt_tokens``/``completion_tokens``/``total_tokens``; ``cost`` is in USD
    (0.0 when litellm has no price for the model); ``latency`` is the upstream
    call time in seconds (as recorded when the answer was first obtained);
    ``cached`` tells whether it came from the cache; ``key`` is the cache key;
    ``system_fingerprint`` is the backend configuration the server reported with the answer
    (OpenAI's ``system_fingerprint``; None when it sent none), stored in the cache and replayed.
    """

    text: str
    model: str
    usage: Mapping[str, int]
    cost: float
    latency: float
    cached: bool
    key: str
    timestamp: float = 0.0
    attempts: int = 1
    system_fingerprint: str | None = None

    @property
    def prompt_tokens(self) -> int:
        return int(self.usage.get("prompt_tokens", 0) or 0)

    @property
    def completion_tokens(self) -> int:
        return int(self.usage.get("completion_tokens", 0) or 0)
