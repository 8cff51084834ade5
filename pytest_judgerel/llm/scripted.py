"""Scripted models: a Python callable answers as if it were an LLM (in process, no server).

``register_scripted("scripted/echo", fn)`` makes model ``"scripted/echo"`` usable
through litellm (a ``litellm.CustomLLM`` in ``litellm.custom_provider_map``, sync
and async).  ``fn(messages, **params) -> str`` receives the chat messages and the
sampling parameters (temperature, max_tokens, seed, top_p, stop, grammar, ...) and
``sample_seed``: an integer derived from the cache key (so it differs between repeated
samples of one prompt), for scripts that simulate sampling reproducibly.

This is a product feature (MindEval registers a Python clinician as ``scripted/clinician-...``),
so it stays in the LLM layer; the test doubles built on it live in :mod:`pytest_judgerel.testing`.
An exception from ``fn`` with an integer ``status_code`` attribute (such as
``pytest_judgerel.testing.ScriptedHTTPError``) fails the call like that HTTP status, with its
``message`` and, for a 429, its ``retry_after``: recognised by duck typing, so this module never
imports the test support.  Any other exception is reported as a 400 (a bug in the script is not
worth retrying).
"""

from __future__ import annotations

import threading
from typing import Any, Callable

__all__ = ["register_scripted", "unregister_scripted", "scripted_models", "PROVIDER"]

PROVIDER = "scripted"
_lock = threading.Lock()
_scripts: dict[str, Callable[..., str]] = {}
_provider_registered = False


def _short_name(model: str) -> str:
    return model.split("/", 1)[1] if model.startswith(PROVIDER + "/") else model


def register_scripted(model: str, fn: Callable[..., str]) -> str:
    """Register ``fn`` as model ``model`` (must start with ``"scripted/"``); returns the model name."""
    from pytest_judgerel.errors import ConfigError

    if not isinstance(model, str) or not model.startswith(PROVIDER + "/") or len(model) <= len(PROVIDER) + 1:
        raise ConfigError(f"scripted model names look like 'scripted/<name>', got {model!r}")
    if not callable(fn):
        raise ConfigError(f"register_scripted needs a callable, got {type(fn).__name__}")
    global _provider_registered
    with _lock:
        _scripts[_short_name(model)] = fn
        if not _provider_registered:
            from pytest_judgerel.llm.litellm_setup import register_provider

            register_provider(PROVIDER, _make_handler)
            _provider_registered = True
    return model


def unregister_scripted(model: str) -> None:
    with _lock:
        _scripts.pop(_short_name(model), None)


def scripted_models() -> list[str]:
    with _lock:
        return sorted(f"{PROVIDER}/{name}" for name in _scripts)


_PASSED_PARAMS = ("temperature", "max_tokens", "seed", "top_p", "stop", "grammar", "response_format", "tools",
                  "sample_seed")


def _http_status(exc: BaseException) -> int | None:
    """The HTTP status a script's exception asks for: its integer ``status_code`` attribute."""
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) and not isinstance(status, bool) else None


def _to_litellm_error(litellm: Any, exc: Exception, status: int, model: str) -> Exception:
    """The litellm exception for an HTTP ``status`` raised by a script (see the module docstring)."""
    import httpx

    message = str(getattr(exc, "message", exc))
    retry_after = getattr(exc, "retry_after", None)
    headers = {}
    if isinstance(retry_after, (int, float)):
        headers["retry-after"] = f"{retry_after:g}"
    response = httpx.Response(status, headers=headers,
                              request=httpx.Request("POST", f"http://{PROVIDER}.invalid/{model}"))
    common = {"llm_provider": PROVIDER, "model": model}
    if status == 429:
        return litellm.RateLimitError(message, response=response, **common)
    if status == 408:
        return litellm.Timeout(message, **common)
    if status == 503:
        return litellm.ServiceUnavailableError(message, response=response, **common)
    if status >= 500:
        return litellm.InternalServerError(message, response=response, **common)
    if status == 401:
        return litellm.AuthenticationError(message, response=response, **common)
    if status == 404:
        return litellm.NotFoundError(message, response=response, **common)
    return litellm.BadRequestError(message, response=response, **common)


def _script_failure(name: str, exc: BaseException, messages: list) -> str:
    """Why a script failed: the exception, where in the script, and the message it was answering
    (a bare ``StopIteration`` from ``next(...)`` otherwise says nothing)."""
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {frames[-1].filename}:{frames[-1].lineno} ({frames[-1].line})" if frames else ""
    what = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    last = str(messages[-1].get("content", "")) if messages else ""
    last = " ".join(last.split())
    hint = ""
    if len(messages) > 2 and messages[-2].get("role") == "assistant":
        hint = (" (this call is a re-ask after an unparseable reply: the last message is the format reminder, "
                "not the item; look the item up in messages[1] or in all messages)")
    return (f"scripted model {name} raised {what}{where} while answering "
            f"{last[:120]!r}{'...' if len(last) > 120 else ''}{hint}")


def _make_handler() -> Any:
    from pytest_judgerel.llm.litellm_setup import get_litellm

    litellm = get_litellm()

    class ScriptedLLM(litellm.CustomLLM):  # type: ignore[name-defined]
        """Dispatches ``scripted/<name>`` to the registered callable."""

        def _respond(self, model: str, messages: list, optional_params: dict) -> Any:
            name = _short_name(model)
            with _lock:
                fn = _scripts.get(name)
            if fn is None:
                raise litellm.NotFoundError(
                    f"no scripted model {PROVIDER}/{name!s} registered (known: {scripted_models()})",
                    llm_provider=PROVIDER, model=model)
            params = {k: optional_params[k] for k in _PASSED_PARAMS if k in optional_params}
            try:
                text = fn([dict(m) for m in messages], **params)
            except Exception as exc:
                status = _http_status(exc)
                if status is not None:
                    raise _to_litellm_error(litellm, exc, status, model) from exc
                raise litellm.BadRequestError(_script_failure(name, exc, messages),
                                              llm_provider=PROVIDER, model=model) from exc
            if not isinstance(text, str):
                raise litellm.BadRequestError(
                    f"scripted model {name} returned {type(text).__name__}, expected str",
                    llm_provider=PROVIDER, model=model)
            prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in messages)
            completion_tokens = len(text.split())
            return litellm.ModelResponse(
                model=f"{PROVIDER}/{name}",
                choices=[{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                usage={"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                       "total_tokens": prompt_tokens + completion_tokens},
            )

        def completion(self, model, messages, api_base, custom_prompt_dict, model_response, print_verbose,
                       encoding, api_key, logging_obj, optional_params, *args, **kwargs):
            return self._respond(model, messages, optional_params)

        async def acompletion(self, model, messages, api_base, custom_prompt_dict, model_response, print_verbose,
                              encoding, api_key, logging_obj, optional_params, *args, **kwargs):
            return self._respond(model, messages, optional_params)

    return ScriptedLLM()
