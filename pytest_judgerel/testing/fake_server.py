"""A fake OpenAI-compatible chat server for tests and benchmarks (stdlib only).

A minimal asyncio HTTP/1.1 server with keep-alive runs on 127.0.0.1 (random port)
in a daemon thread; waiting requests cost no CPU, so 50+ concurrent connections
with latency are cheap.  It serves ``POST /v1/chat/completions`` and
``POST /chat/completions``.

Default reply (:func:`default_responder`): an integer on the request's scale as text,
derived from sha256 of the request's messages, model, temperature, top_p and seed.  The
scale is the server's ``scale`` when given, else the last "X–Y" / "X to Y" range stated in
the last user message (every built-in template ends with one), else 0-10.  At
temperature > 0 without a seed the *occurrence number* of that exact request is
also hashed in, so repeated samples differ like real sampling, while the set of
replies of a run stays deterministic; at temperature 0 (or with a seed) the same
request always gets the same reply.

With ``api_key`` set, a chat request without ``Authorization: Bearer <api_key>`` is refused
with HTTP 401 (logged with fault ``"unauthorized"``), as a real server with a key does: a
key that is never sent fails the test that configured it.

Faults (:class:`FaultPlan`) are chosen per request, either from an explicit
``schedule`` (request number -> fault kind) or at ``rate`` with a seeded RNG:
``"429"`` (with ``Retry-After``), ``"500"``, ``"503"``, ``"timeout"`` (sleep
longer than the client's timeout), ``"disconnect"`` (close without answering),
``"malformed"`` (200 with broken JSON) and ``"empty"`` (200 with empty content).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

__all__ = ["FakeLLMServer", "FaultPlan", "FakeRequest", "default_responder", "scale_in_prompt", "stable_port",
           "FAULT_KINDS"]

FAULT_KINDS = ("429", "500", "503", "timeout", "disconnect", "malformed", "empty")


@dataclass(frozen=True)
class FaultPlan:
    """Which requests fail and how.

    ``schedule`` maps a 0-based request number (order of arrival) to a fault kind;
    otherwise each request fails with probability ``rate``, its kind drawn from
    ``kinds``, with ``random.Random(seed)``.  ``retry_after`` is sent with 429s;
    ``timeout_sleep`` is how long a ``"timeout"`` fault stalls.
    """

    rate: float = 0.0
    kinds: Sequence[str] = ("429", "500")
    seed: int = 0
    schedule: Mapping[int, str] | None = None
    retry_after: float = 0.0
    timeout_sleep: float = 5.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"FaultPlan.rate must be in [0, 1], got {self.rate}")
        unknown = set(self.kinds) | set((self.schedule or {}).values())
        unknown -= set(FAULT_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}; known: {FAULT_KINDS}")


@dataclass(frozen=True)
class FakeRequest:
    """What the responder sees: the parsed JSON body and bookkeeping."""

    body: dict
    index: int  # 0-based arrival number
    occurrence: int  # how many identical bodies arrived before this one
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def messages(self) -> list:
        return self.body.get("messages", [])


def _request_digest(body: Mapping[str, Any], occurrence: int) -> bytes:
    temperature = body.get("temperature") or 0.0
    seed = body.get("seed")
    material = {
        "model": body.get("model"),
        "messages": body.get("messages"),
        "temperature": temperature,
        "top_p": body.get("top_p"),
        "seed": seed,
        # sampling without a seed: every repeat of the same request is a new draw
        "draw": occurrence if (temperature > 0 and seed is None) else 0,
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).digest()


_RANGE = re.compile(r"[“\"']?(\d{1,4})[”\"']?\s*(?:[–—-]|to)\s*[“\"']?(\d{1,4})(?![\d.])")


def scale_in_prompt(messages: Sequence[Mapping[str, Any]]) -> tuple[int, int] | None:
    """The last integer range ("0–5", "from 0 to 100") stated in the last user message."""
    text = next((str(m.get("content", "")) for m in reversed(messages) if m.get("role") == "user"), "")
    found = [(int(a), int(b)) for a, b in _RANGE.findall(text) if int(a) < int(b)]
    return found[-1] if found else None


def default_responder(request: FakeRequest, scale: tuple[int, int] | None = None, shift: int = 0) -> str:
    """An integer on the scale as text, derived from the request (see module docstring), moved by
    ``shift`` points and clamped to the scale (a judge whose answers drifted)."""
    digest = _request_digest(request.body, request.occurrence)
    low, high = scale or scale_in_prompt(request.messages) or (0, 10)
    score = low + int.from_bytes(digest[:4], "big") % (high - low + 1)
    return str(min(high, max(low, score + int(shift))))


def stable_port(name: str) -> int:
    """A port derived from ``name`` (e.g. a test's node id), in 20000-31999: below Linux's
    ephemeral range, so a server that prefers it gets the same URL, hence the same cache keys,
    run after run."""
    return 20000 + int(hashlib.sha256(name.encode("utf-8")).hexdigest()[:8], 16) % 12000


_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests",
            500: "Internal Server Error", 503: "Service Unavailable"}


class FakeLLMServer:
    """Fake OpenAI-compatible server; use as a context manager or call start()/stop().

    ``url`` is the api_base (``http://127.0.0.1:PORT/v1``); ``requests`` counts
    chat requests received (faulty ones included); ``log`` keeps each request's
    body and the fault served (``None`` for a normal answer).

    ``latency``: seconds each answer takes; ``faults``: a :class:`FaultPlan`;
    ``responder``: ``fn(FakeRequest) -> str`` giving the reply text (replaceable at any
    time through ``server.responder``); ``scale``: ``(low, high)`` or ``"0-5"`` for the
    default responder (default: the range stated in the prompt); ``port``: the port to prefer
    (0: any free one; a taken port falls back to any); ``api_key``: the key every chat request
    must carry (None: none checked).

    What the server reports, replaceable at any time like ``responder`` (e.g. to stage a silent
    model update between two runs): ``reported_model``, the ``model`` of every reply (None: the
    model the request named); ``system_fingerprint``, sent with every reply when set (OpenAI's
    backend-configuration id); ``shift``, points added to the default responder's score, clamped
    to the scale (a judge whose answers drifted).
    """

    def __init__(
        self,
        latency: float = 0.05,
        faults: FaultPlan | None = None,
        responder: Callable[[FakeRequest], str] | None = None,
        scale: Any = None,
        port: int = 0,
        api_key: str | None = None,
        reported_model: str | None = None,
        system_fingerprint: str | None = None,
        shift: int = 0,
    ):
        self.api_key = api_key
        self.reported_model = reported_model
        self.system_fingerprint = system_fingerprint
        self.shift = int(shift)
        self.latency = float(latency)
        self.faults = faults or FaultPlan()
        if isinstance(scale, str):
            low, _, high = scale.partition("-")
            scale = (int(low), int(high))
        self.scale = tuple(scale) if scale is not None else None
        self.responder = responder or (lambda req: default_responder(req, self.scale, self.shift))
        self.log: list[dict] = []
        self._lock = threading.Lock()
        self._occurrences: dict[str, int] = {}
        self._rng = random.Random(self.faults.seed)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None
        self._writers: set = set()
        self.preferred_port = int(port)
        self.port = 0
        self.in_flight = 0
        self.max_in_flight = 0  # the most chat requests being answered at once

    # lifecycle ----------------------------------------------------------------
    def start(self) -> "FakeLLMServer":
        if self._thread is not None:
            return self
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                try:  # the preferred port when free (stable URL, stable cache keys), else any
                    self._server = loop.run_until_complete(
                        asyncio.start_server(self._handle, "127.0.0.1", self.preferred_port, backlog=512))
                except OSError:
                    if not self.preferred_port:
                        raise
                    self._server = loop.run_until_complete(
                        asyncio.start_server(self._handle, "127.0.0.1", 0, backlog=512))
                self.port = self._server.sockets[0].getsockname()[1]
            except BaseException as exc:  # pragma: no cover - bind failure
                failure.append(exc)
                ready.set()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

        self._thread = threading.Thread(target=run, name="judgerel-fake-llm", daemon=True)
        self._thread.start()
        ready.wait(10)
        if failure:
            raise failure[0]
        return self

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return

        async def shutdown() -> None:
            assert self._server is not None
            self._server.close()
            for writer in list(self._writers):
                writer.close()
            await asyncio.sleep(0)
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(shutdown(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        self._thread = None
        self._loop = None

    def __enter__(self) -> "FakeLLMServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # inspection ---------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> int:
        with self._lock:
            return len(self.log)

    def fault_count(self) -> int:
        with self._lock:
            return sum(1 for entry in self.log if entry["fault"] is not None)

    def reset(self) -> None:
        """Forget the request log and occurrence counts; reseed the fault RNG."""
        with self._lock:
            self.log.clear()
            self._occurrences.clear()
            self.max_in_flight = self.in_flight
            self._rng = random.Random(self.faults.seed)

    # request handling -----------------------------------------------------------
    def _admit(self, body: dict, headers: Mapping[str, str]) -> tuple[FakeRequest, str | None]:
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        with self._lock:
            index = len(self.log)
            plan = self.faults
            fault: str | None = None
            if plan.schedule is not None:
                fault = plan.schedule.get(index)
            elif plan.rate > 0 and self._rng.random() < plan.rate:
                fault = self._rng.choice(list(plan.kinds))
            occurrence = 0
            if fault is None:
                occurrence = self._occurrences.get(digest, 0)
                self._occurrences[digest] = occurrence + 1
            self.log.append({"index": index, "body": body, "fault": fault, "time": time.time()})
        return FakeRequest(body=body, index=index, occurrence=occurrence, headers=dict(headers)), fault

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while True:
                request_line = await reader.readline()
                if not request_line:
                    return
                try:
                    method, path, _ = request_line.decode("latin-1").split(" ", 2)
                except ValueError:
                    return
                headers: dict[str, str] = {}
                while True:
                    line = await reader.readline()
                    if line in (b"\r\n", b"\n", b""):
                        break
                    name, _, value = line.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length", "0") or 0)
                raw = await reader.readexactly(length) if length else b""
                keep_alive = headers.get("connection", "").lower() != "close"
                path = path.split("?", 1)[0]
                if method == "GET" and path in ("/health", "/v1/models", "/models"):
                    await self._send(writer, 200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
                    continue
                if method != "POST" or path not in ("/v1/chat/completions", "/chat/completions"):
                    await self._send(writer, 404, {"error": {"message": f"no route {method} {path}", "type": "not_found"}})
                    continue
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    await self._send(writer, 400, {"error": {"message": "request body is not JSON", "type": "invalid_request_error"}})
                    continue
                if not await self._chat(writer, body, headers):
                    return
                if not keep_alive:
                    return
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            return
        finally:
            self._writers.discard(writer)
            try:
                writer.close()
            except Exception:  # pragma: no cover
                pass

    async def _chat(self, writer: asyncio.StreamWriter, body: dict, headers: Mapping[str, str]) -> bool:
        """Answer one chat request; False when the connection must be dropped."""
        self.in_flight += 1  # only touched on the server loop thread
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self._chat_inner(writer, body, headers)
        finally:
            self.in_flight -= 1

    async def _chat_inner(self, writer: asyncio.StreamWriter, body: dict, headers: Mapping[str, str]) -> bool:
        if self.api_key is not None and headers.get("authorization", "") != f"Bearer {self.api_key}":
            with self._lock:
                self.log.append({"index": len(self.log), "body": body, "fault": "unauthorized", "time": time.time()})
            await self._send(writer, 401, {"error": {"message": "Incorrect API key provided to the fake server",
                                                     "type": "invalid_request_error", "code": "invalid_api_key"}})
            return True
        fake_request, fault = self._admit(body, headers)
        if self.latency > 0:
            await asyncio.sleep(self.latency)
        plan = self.faults
        if fault == "timeout":
            await asyncio.sleep(plan.timeout_sleep)
            return False
        if fault == "disconnect":
            return False
        if fault == "429":
            await self._send(writer, 429, {"error": {"message": "rate limited by fake server", "type": "rate_limit_error"}},
                             extra_headers={"Retry-After": f"{plan.retry_after:g}"})
            return True
        if fault in ("500", "503"):
            await self._send(writer, int(fault), {"error": {"message": f"fake server error {fault}", "type": "server_error"}})
            return True
        if fault == "malformed":
            await self._send_raw(writer, 200, b'{"id": "chatcmpl-broken", "choices": [{"index": 0, "mess')
            return True
        text = "" if fault == "empty" else self.responder(fake_request)
        prompt_words = sum(len(str(m.get("content", "")).split()) for m in fake_request.messages)
        completion_words = max(1, len(text.split()))
        payload = {
            "id": f"chatcmpl-fake-{fake_request.index}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.reported_model or body.get("model", "fake"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": prompt_words, "completion_tokens": completion_words,
                      "total_tokens": prompt_words + completion_words},
        }
        if self.system_fingerprint is not None:
            payload["system_fingerprint"] = self.system_fingerprint
        await self._send(writer, 200, payload)
        return True

    async def _send(self, writer: asyncio.StreamWriter, status: int, payload: Any,
                    extra_headers: Mapping[str, str] | None = None) -> None:
        await self._send_raw(writer, status, json.dumps(payload).encode(), extra_headers)

    async def _send_raw(self, writer: asyncio.StreamWriter, status: int, data: bytes,
                        extra_headers: Mapping[str, str] | None = None) -> None:
        head = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}",
                "Content-Type: application/json",
                f"Content-Length: {len(data)}",
                "Connection: keep-alive"]
        for name, value in (extra_headers or {}).items():
            head.append(f"{name}: {value}")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + data)
        await writer.drain()
