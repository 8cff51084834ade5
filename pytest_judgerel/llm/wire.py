"""The HTTP fast path: OpenAI-compatible chat completions without litellm.

Against a user's own server (vLLM, llama.cpp, Ollama's ``/v1``, LM Studio) at low latency and high
concurrency, litellm's per-call CPU work (more than the HTTP exchange itself takes) sets the
pace.  This path sends the same request body litellm would send,
``POST {api_base}/chat/completions``, with one pooled ``aiohttp.ClientSession`` per client, and reads
the JSON reply itself.  Everything around the wire stays shared with the litellm path: cache keys
(computed from the :class:`~pytest_judgerel.llm.request.LLMRequest`, so a cassette recorded through
one path replays through the other), retries and their classification
(:func:`~pytest_judgerel.llm.retry.classify_failure`), the key rules, and cost accounting (litellm's
own price table, read as data: :mod:`pytest_judgerel.llm.prices`).

Which path a call takes (``--judgerel-backend``, :data:`BACKENDS`):

* ``auto`` (default): this path for the OpenAI-compatible providers :data:`WIRE_PROVIDERS`
  (``openai/...``, ``hosted_vllm/...``), except OpenAI's own endpoint for the reasoning models
  whose parameters litellm rewrites (``o1``..., ``gpt-5``...); litellm for every other provider;
* ``litellm``: litellm for every call (the reference path);
* ``http``: this path for every remote call; a provider it does not speak is a configuration
  error before anything is sent.

In-process models (``local/...``, ``scripted/...``) have no wire and always run in this process.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from pytest_judgerel.errors import ConfigError
from pytest_judgerel.llm.settings import BACKENDS

__all__ = ["BACKENDS", "WIRE_PROVIDERS", "OPENAI_BASE", "check_backend", "route", "chat_body", "WireReply",
           "WireHTTPError", "MalformedResponseError", "WireCall", "WireTransport"]

#: providers whose endpoint speaks OpenAI's ``/chat/completions`` (litellm's names), with the
#: environment variable each reads a key from when the request carries none
WIRE_PROVIDERS: dict[str, str] = {"openai": "OPENAI_API_KEY", "hosted_vllm": "HOSTED_VLLM_API_KEY"}
#: the ``openai`` provider's endpoint when the request names no server
OPENAI_BASE = "https://api.openai.com/v1"
# OpenAI's reasoning models: litellm maps max_tokens to max_completion_tokens and drops
# temperature for them (by name, whatever the server), so auto leaves them to litellm
_REWRITTEN = re.compile(r"^(o\d|gpt-5)")
#: ``extra_params`` that litellm reads itself instead of sending: a call carrying one goes through
#: litellm under ``auto``; under ``http`` the header ones become HTTP headers, the others are refused
LITELLM_ONLY_PARAMS = frozenset({"extra_headers", "headers", "drop_params", "num_retries", "max_retries",
                                 "api_version", "custom_llm_provider", "mock_response", "fallbacks", "caching",
                                 "ssl_verify", "organization", "base_url"})
_HEADER_PARAMS = ("headers", "extra_headers")


def check_backend(value: Any) -> str:
    """``value`` if it is one of :data:`BACKENDS`, else a ConfigError naming them."""
    if value not in BACKENDS:
        raise ConfigError(f"backend must be one of {', '.join(BACKENDS)}, got {value!r}")
    return value


def route(backend: str, model: str, api_base: str | None, extra_params: Any = ()) -> str:
    """``"http"`` or ``"litellm"``: the path a call to ``model`` at ``api_base`` takes under ``backend``
    (module docstring), given the names of its ``extra_params``.  In-process models answer through
    litellm's custom-provider hook."""
    from pytest_judgerel.llm.endpoint import is_in_process

    if backend == "litellm" or is_in_process(model):
        return "litellm"
    provider, _, name = model.partition("/")
    speaks = bool(name) and provider in WIRE_PROVIDERS
    litellm_only = LITELLM_ONLY_PARAMS.intersection(extra_params)
    if backend == "http":
        refused = sorted(litellm_only.difference(_HEADER_PARAMS))
        if refused:
            raise ConfigError(f"extra_params {refused} are litellm's own settings, which backend 'http' does not "
                              "read: use --judgerel-backend=auto or litellm for these calls")
        if not speaks:
            raise ConfigError(
                f"backend 'http' speaks OpenAI-compatible endpoints only (model prefixes "
                f"{', '.join(p + '/' for p in WIRE_PROVIDERS)}), not model {model!r}: use --judgerel-backend=auto "
                "(this model then goes through litellm) or name it as openai/<name> if its server is "
                "OpenAI-compatible")
        if provider == "hosted_vllm" and not api_base:
            raise ConfigError(f"model {model!r} needs an api_base (the vLLM server's URL)")
        return "http"
    if not speaks or (provider == "hosted_vllm" and not api_base) or litellm_only or _REWRITTEN.match(name):
        return "litellm"
    return "http"


def chat_body(request: Any) -> dict[str, Any]:
    """The JSON body of ``POST /chat/completions`` for ``request``: what litellm's OpenAI provider
    sends for the same call (the model without its provider prefix, role and content of each
    message, the sampling parameters that are set, the grammar at top level as llama.cpp reads it,
    ``extra_params`` merged, an ``extra_body`` among them merged into the body)."""
    body: dict[str, Any] = {
        "model": request.model.partition("/")[2],
        "messages": [{"role": m["role"], "content": m["content"]} for m in request.messages],
    }
    body.update(request.sampling())
    if request.grammar is not None:
        body["grammar"] = request.grammar
    if request.extra_params:
        extra = {k: v for k, v in request.extra_params.items() if k not in _HEADER_PARAMS}
        extra_body = extra.pop("extra_body", None)
        body.update(extra)
        if isinstance(extra_body, Mapping):
            body.update(extra_body)
    return body


class WireHTTPError(Exception):
    """The server answered with an HTTP error status (``status_code``, ``headers`` for Retry-After)."""

    def __init__(self, status_code: int, message: str, headers: Mapping[str, str] | None = None):
        super().__init__(message)
        self.status_code = status_code
        self.headers = dict(headers or {})


class MalformedResponseError(Exception):
    """A 200 reply that is not a chat completion (retryable, like a truncated JSON body)."""


@dataclass(frozen=True)
class WireCall:
    """One call ready to send: URL, headers, the encoded body and the model name it carries."""

    url: str
    headers: dict[str, str] = field(repr=False)  # Authorization holds the key
    content: bytes = field(repr=False)
    model: str = ""
    api_key: str = field(default="", repr=False)


@dataclass(frozen=True)
class WireReply:
    """What one successful exchange returned: the reply text, the model the server reported, its
    token usage (``prompt_tokens``, ``completion_tokens``, ``total_tokens``) and the
    ``system_fingerprint`` it reported (None when it sent none)."""

    text: Any
    model: str
    usage: dict[str, int]
    system_fingerprint: str | None = None


def _error_message(status: int, content: bytes) -> str:
    """The server's own error text (OpenAI's ``{"error": {"message": ...}}`` or the body's start)."""
    try:
        data = json.loads(content)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict) and error.get("message"):
            return f"HTTP {status}: {str(error['message'])[:500]}"
        if isinstance(error, str):
            return f"HTTP {status}: {error[:500]}"
    text = content[:300].decode("utf-8", "replace").strip()
    return f"HTTP {status}: {text or 'no body'}"


def parse_reply(content: bytes, fallback_model: str) -> WireReply:
    """A :class:`WireReply` from a 200 body; a body that is not a chat completion raises
    :class:`MalformedResponseError` (a JSON error raises ``json.JSONDecodeError``)."""
    data = json.loads(content)
    try:
        choice = data["choices"][0]
        text = choice["message"].get("content")
    except (KeyError, IndexError, TypeError, AttributeError):
        raise MalformedResponseError(f"the reply is not a chat completion: {content[:200]!r}") from None
    usage_in = data.get("usage") or {}
    usage = {name: int(usage_in.get(name) or 0) if isinstance(usage_in, dict) else 0
             for name in ("prompt_tokens", "completion_tokens", "total_tokens")}
    fingerprint = data.get("system_fingerprint")
    return WireReply(text=text, model=str(data.get("model") or fallback_model), usage=usage,
                     system_fingerprint=str(fingerprint) if fingerprint else None)


class WireTransport:
    """One pooled ``aiohttp.ClientSession`` (opened on first use, on the loop that uses it) and the
    per-server URLs and per-key headers, built once.

    aiohttp, not httpx: httpcore's pool re-scans every connection and every waiting request on each
    request and response, so its CPU per call grows with the number of connections; aiohttp's
    connector hands a connection out in constant time (docs/benchmarks.md, ``bench_wire.py``)."""

    def __init__(self) -> None:
        self._client: Any = None
        self._loop: Any = None
        self._urls: dict[str, str] = {}
        self._headers: dict[str, dict[str, str]] = {}
        self._targets: dict[str, tuple[Any, Any, Any]] = {}  # url -> (yarl URL, proxy, proxy auth)
        self._timeouts: dict[float, Any] = {}
        self._timeout_type: Any = None  # aiohttp.ClientTimeout, once aiohttp is imported

    def _http(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            import aiohttp

            # the process semaphore bounds the calls in flight (limit=0: no second bound in the pool).
            # Redirects followed and SSL_VERIFY=false honoured, as the openai SDK under litellm does;
            # proxies from the environment are looked up once per URL (:meth:`target`), not by
            # aiohttp's trust_env, which reads the environment and ~/.netrc in a worker thread on
            # every request.
            verify = os.environ.get("SSL_VERIFY", "").strip().lower() not in ("false", "0", "no", "off")
            connector = aiohttp.TCPConnector(limit=0, ssl=verify)
            self._client = aiohttp.ClientSession(connector=connector)
            self._timeout_type = aiohttp.ClientTimeout
            self._loop = loop
            self._targets = {}
        return self._client

    def target(self, url: str) -> tuple[Any, Any, Any]:
        """``url`` parsed once, with the proxy and proxy credentials the environment names for it
        (``HTTP(S)_PROXY``, ``NO_PROXY``, ``~/.netrc`` for the proxy's login: aiohttp's own rules), or
        None, None."""
        found = self._targets.get(url)
        if found is None:
            from aiohttp.helpers import get_env_proxy_for_url
            from yarl import URL

            parsed = URL(url)
            try:
                proxy, auth = get_env_proxy_for_url(parsed)
            except LookupError:  # no proxy for this URL, or NO_PROXY exempts its host
                proxy, auth = None, None
            found = self._targets[url] = (parsed, proxy, auth)
        return found

    def url(self, api_base: str | None) -> str:
        base = api_base or OPENAI_BASE
        url = self._urls.get(base)
        if url is None:
            url = self._urls[base] = base.rstrip("/") + "/chat/completions"
        return url

    def headers(self, api_key: str) -> dict[str, str]:
        headers = self._headers.get(api_key)
        if headers is None:
            headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json",
                       "Accept": "application/json"}
            organization = os.environ.get("OPENAI_ORGANIZATION")
            if organization:
                headers["OpenAI-Organization"] = organization
            self._headers[api_key] = headers
        return headers

    def prepare(self, request: Any, api_key: str) -> "WireCall":
        """The call's URL, headers and encoded body, built once for all its attempts."""
        headers = self.headers(api_key)
        for name in _HEADER_PARAMS:  # litellm sends these extra_params as HTTP headers
            extra = request.extra_params.get(name)
            if isinstance(extra, Mapping):
                headers = {**headers, **{str(k): str(v) for k, v in extra.items()}}
        return WireCall(self.url(request.api_base), headers,
                        json.dumps(chat_body(request), ensure_ascii=False).encode("utf-8"),
                        request.model.partition("/")[2], api_key)

    async def send(self, call: "WireCall", timeout: float) -> WireReply:
        """One exchange: POST the body, raise :class:`WireHTTPError` on an error status, parse the reply."""
        session = self._http()
        # per operation (connecting, each read of the socket); the caller bounds the whole call
        limits = self._timeouts.get(timeout)
        if limits is None:
            limits = self._timeouts[timeout] = self._timeout_type(total=None, connect=timeout, sock_read=timeout)
        url, proxy, proxy_auth = self.target(call.url)
        async with session.post(url, data=call.content, headers=call.headers, timeout=limits, proxy=proxy,
                                proxy_auth=proxy_auth) as response:
            body = await response.read()
            status = response.status
            headers = {k.lower(): v for k, v in response.headers.items()} if status >= 300 else None
        if headers is not None:  # a redirect left unfollowed (no Location) is an error too
            message = _error_message(status, body)
            if len(call.api_key) >= 8:  # a server that echoes the key it refused never prints it through us
                message = message.replace(call.api_key, "***")
            raise WireHTTPError(status, message, headers)
        return parse_reply(body, call.model)

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    def close(self) -> None:
        """Close the pool on its loop when that loop still runs; else drop its sockets at once."""
        client, loop = self._client, self._loop
        self._client = None
        if client is None or loop is None:
            return
        if loop.is_closed() or not loop.is_running():
            _drop(client)
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not None and running is loop:  # called on the loop itself: close in the background, never block it
            loop.create_task(client.close())
            return
        try:
            asyncio.run_coroutine_threadsafe(client.close(), loop).result(5)
        except Exception:
            _drop(client)

    def forget(self) -> None:
        """After ``fork()``: the child leaves the parent's connections alone and opens its own."""
        client, self._client = self._client, None
        if client is not None:
            client.detach()  # marks the session closed without touching the sockets it shares


def _drop(client: Any) -> None:
    """Close a session whose loop no longer runs: its transports close synchronously, no warning."""
    connector = client.connector
    client.detach()
    if connector is not None and not connector.closed:
        try:
            connector._close()  # aiohttp's synchronous close of every transport (close() needs the loop)
        except Exception:
            pass
