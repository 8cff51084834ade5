"""litellm as a :class:`~pytest_judgerel.llm.transport.Transport` (the reference path: every
provider litellm knows, and the in-process models ``local/...`` and ``scripted/...`` through its
custom-provider hook): the keyword arguments of ``litellm.acompletion``, its key rules (litellm's
``validate_environment``; a placeholder for a server of your own), its key hints and its cost
(litellm's own ``response_cost``, else ``completion_cost`` for a priced model)."""

from __future__ import annotations

from typing import Any

from pytest_judgerel.llm.transport import PLACEHOLDER_KEY, PreparedCall, Reply, SecretStr, missing_key_error

__all__ = ["LiteLLMTransport"]


class LiteLLMTransport:
    """``litellm.acompletion`` with litellm's own retries off (the client retries)."""

    name = "litellm"

    def __init__(self) -> None:
        self._known_cost_models: dict[str, bool] = {}
        self._missing_keys: dict[tuple[str, str | None], tuple[str, ...]] = {}

    def kwargs(self, request: Any, key: str | None, timeout: float) -> dict[str, Any]:
        """The keyword arguments of ``litellm.acompletion`` for ``request`` (never its metadata)."""
        kwargs: dict[str, Any] = {
            "model": request.model,
            "messages": [{"role": m["role"], "content": m["content"]} for m in request.messages],
            "timeout": timeout,
            "max_retries": 0,
            "num_retries": 0,
        }
        kwargs.update(request.sampling())
        if request.api_base is not None:
            kwargs["api_base"] = request.api_base
        if request.api_key is not None:
            kwargs["api_key"] = SecretStr(request.api_key)
        from pytest_judgerel.llm.litellm_setup import is_custom_provider

        custom = is_custom_provider(request.model)
        if request.grammar is not None:
            if custom:
                kwargs["grammar"] = request.grammar
            else:  # llama.cpp-compatible servers read "grammar" from the JSON body
                kwargs["extra_body"] = {"grammar": request.grammar}
        if custom and key is not None and request.seed is None:
            # In-process providers (local model, scripted) draw from a seed derived from the cache
            # key: repeated samples (different sample_index) are distinct draws, yet each one is
            # reproducible.  Remote APIs sample on their own; the key still keeps repeats apart.
            kwargs["sample_seed"] = int(key[:8], 16)
        extra = dict(request.extra_params)
        if isinstance(extra.get("extra_body"), dict) and isinstance(kwargs.get("extra_body"), dict):
            extra["extra_body"] = {**kwargs["extra_body"], **extra["extra_body"]}  # keep the grammar
        kwargs.update(extra)
        return kwargs

    def _missing_env_keys(self, litellm: Any, request: Any) -> tuple[str, ...]:
        """Environment variables litellm would read for this model's key and finds unset."""
        slot = (request.model, request.api_base)
        if slot not in self._missing_keys:
            try:
                found = litellm.validate_environment(model=request.model, api_base=request.api_base)
                missing = tuple(found.get("missing_keys") or ()) if not found.get("keys_in_environment") else ()
            except Exception:
                missing = ()
            self._missing_keys[slot] = missing
        return self._missing_keys[slot]

    def _key_hint(self, litellm: Any, request: Any) -> str:
        """What to set when a call failed for want of a key."""
        if request.api_base:
            return f"set JUDGEREL_API_KEY to the key of {request.api_base}"
        missing = self._missing_env_keys(litellm, request)
        if missing:
            return f"set the environment variable {' or '.join(missing)} (not set in this process)"
        return "check the key in the provider's environment variable"

    def _cost(self, litellm: Any, raw: Any, model: str) -> float:
        hidden = getattr(raw, "_hidden_params", None) or {}
        cost = hidden.get("response_cost")
        if cost is not None:
            return float(cost)
        known = self._known_cost_models.get(model)
        if known is None:
            bare = model.split("/", 1)[-1]
            known = model in litellm.model_cost or bare in litellm.model_cost
            self._known_cost_models[model] = known
        if not known:
            return 0.0
        try:
            return float(litellm.completion_cost(completion_response=raw) or 0.0)
        except Exception:
            return 0.0

    def prepare(self, request: Any, key: str, timeout: float) -> PreparedCall:
        from pytest_judgerel.llm.litellm_setup import get_litellm, is_custom_provider

        if request.model.startswith("local/"):
            from pytest_judgerel.llm.local import ensure_local_provider

            ensure_local_provider()
        litellm = get_litellm()
        kwargs = self.kwargs(request, key, timeout)
        if request.api_key is None and not is_custom_provider(request.model) \
                and self._missing_env_keys(litellm, request):
            if request.api_base:
                # a local server (llama.cpp, vLLM, Ollama) usually needs no key, but litellm's
                # OpenAI client refuses to call without one: send a placeholder (never a real key)
                kwargs["api_key"] = SecretStr(PLACEHOLDER_KEY)
            else:  # the provider's own endpoint without a key: say so, send nothing
                raise missing_key_error(request, self._key_hint(litellm, request))

        async def send(attempt: int) -> Reply:
            from pytest_judgerel.llm.retry import EmptyResponseError
            from pytest_judgerel.llm.runtime import deadline

            # litellm enforces `timeout` per request; this outer bound only guards providers that ignore it
            async with deadline(kwargs["timeout"] * 1.5 + 5.0):
                raw = await litellm.acompletion(**kwargs)
            choice = raw.choices[0] if raw.choices else None
            text = getattr(getattr(choice, "message", None), "content", None)
            if not isinstance(text, str) or not text.strip():
                raise EmptyResponseError(f"model {request.model} returned empty content")
            usage_obj = getattr(raw, "usage", None)
            usage = {name: int(getattr(usage_obj, name, 0) or 0)
                     for name in ("prompt_tokens", "completion_tokens", "total_tokens")}
            fingerprint = getattr(raw, "system_fingerprint", None)
            return Reply(text, str(getattr(raw, "model", "") or request.model), usage,
                         self._cost(litellm, raw, request.model),
                         str(fingerprint) if fingerprint else None)

        return PreparedCall(send, lambda: self._key_hint(litellm, request))

    def close(self) -> None:
        pass

    def forget(self) -> None:
        pass
