"""The LLM layer through its public behaviour only: tests that fail on the held-out
planted bugs (docs/benchmarks.md, "Planted bugs and the held-out measurement" maps each mutant to its test).

Every test goes through :class:`LLMClient` over real HTTP to a loopback server (the project's
:class:`FakeLLMServer`, or the small scripted server below when a test needs a status, a header
or TLS that the fake does not serve), a public cache backend, ``call_cost`` or
``classify_failure``; none reaches into the client's private state, so the tests hold across a
restructuring of the client's internals.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable

import pytest

from pytest_judgerel.errors import LLMCallError
from pytest_judgerel.llm import DiskCacheBackend, LLMClient, LLMRequest, LLMSettings
from pytest_judgerel.llm.prices import call_cost
from pytest_judgerel.llm.retry import classify_failure
from pytest_judgerel.testing import FakeLLMServer, FaultPlan


def _messages(text: str) -> tuple[dict[str, str], ...]:
    return ({"role": "user", "content": text},)


def _completion(text: str = "3", model: str = "x") -> bytes:
    return json.dumps({"id": "c", "object": "chat.completion", "model": model,
                       "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant",
                                                                                     "content": text}}],
                       "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}).encode()


# ---------------------------------------------------------------- a scripted loopback server
class Scripted:
    """A threaded HTTP server on 127.0.0.1 that answers each chat request with the next scripted
    ``(status, body, headers)`` (then 200 with a chat completion), optionally after a delay chosen
    from the prompt, and logs the path, headers and JSON body of every request."""

    def __init__(self, script: list[tuple[int, bytes, dict[str, str]]] | None = None,
                 delay: Callable[[str], float] | None = None, tls: ssl.SSLContext | None = None):
        self.script = list(script or [])
        self.delay = delay or (lambda prompt: 0.0)
        self.log: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                sent = json.loads(body or b"{}")
                prompt = sent.get("messages", [{}])[-1].get("content", "")
                with owner.lock:
                    owner.log.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                                      "prompt": prompt, "body": sent})
                    status, content, headers = owner.script.pop(0) if owner.script else (200, _completion(), {})
                pause = owner.delay(prompt)
                if pause:
                    time.sleep(pause)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(content)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(content)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.scheme = "https" if tls is not None else "http"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def scripted_server():
    servers: list[Scripted] = []

    def start(*args: Any, **kwargs: Any) -> Scripted:
        servers.append(Scripted(*args, **kwargs))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    """A self-signed certificate (no CA trusts it), made with the openssl command."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is needed to make a self-signed certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                    "/CN=localhost", "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    return context


def _client(tmp_path: Path, **settings: Any) -> LLMClient:
    options: dict[str, Any] = {"cache_mode": "off", "backend": "http", "max_attempts": 1, "backoff_base": 0.001,
                               "backoff_max": 0.01, "timeout": 20.0, "cache_dir": str(tmp_path / "cache")}
    options.update(settings)
    return LLMClient(LLMSettings(**options))


def _request(url: str | None, text: str = "rate this", **fields: Any) -> LLMRequest:
    fields.setdefault("api_key", "sk-test-0000")
    return LLMRequest(model=fields.pop("model", "openai/judge"), api_base=url, messages=_messages(text), **fields)


# ---------------------------------------------------------------- the fast path's wire
@pytest.mark.parametrize("status,headers", [(300, {}), (302, {}), (399, {})])
def test_a_3xx_status_is_never_a_reply(scripted_server, tmp_path, status, headers):
    """Mutant: 300-399 treated as success (the body would be read as a chat completion)."""
    server = scripted_server([(status, _completion("4"), headers)])
    with _client(tmp_path) as client:
        with pytest.raises(LLMCallError, match=f"HTTP {status}"):
            client.complete(_request(server.url))
    assert len(server.log) == 1


def test_a_followed_redirect_gives_the_reply_of_its_target(scripted_server, tmp_path):
    target = scripted_server([(200, _completion("5"), {})])
    server = scripted_server([(307, b"", {"Location": target.url + "/chat/completions"})])
    with _client(tmp_path) as client:
        assert client.complete(_request(server.url)).text == "5"
    assert [e["path"] for e in target.log] == ["/v1/chat/completions"]


def test_certificates_are_checked_unless_ssl_verify_is_false(scripted_server, certificate, tmp_path, monkeypatch):
    """Mutant: SSL_VERIFY inverted (a self-signed certificate accepted by default)."""
    server = scripted_server(tls=certificate)
    monkeypatch.delenv("SSL_VERIFY", raising=False)
    with _client(tmp_path) as client:
        with pytest.raises(LLMCallError, match="(?i)certificate"):
            client.complete(_request(server.url))
    assert server.log == []  # nothing was sent over the unverified connection
    # each word that turns it off, and "yes" / "true" keeping it on: test_mutants_wire.py


def test_a_trailing_slash_on_the_server_address_is_stripped(tmp_path):
    """Mutant: ``/v1/`` kept as it is (POST /v1//chat/completions: 404)."""
    with FakeLLMServer(latency=0) as server, _client(tmp_path) as client:
        for base in (server.url + "/", server.url + "//", server.url):
            assert client.complete(_request(base, f"slash {base}")).text.strip().isdigit()
    assert [e["fault"] for e in server.log] == [None, None, None]


def test_each_key_is_sent_with_its_own_headers(scripted_server, tmp_path):
    """Mutant: the per-key header cache not keyed by the key (the first key sent for every key)."""
    server = scripted_server()
    keys = ["sk-first-key-1111", "sk-second-key-2222", "sk-first-key-1111", "sk-third-key-3333"]
    with _client(tmp_path) as client:
        for i, key in enumerate(keys):
            client.complete(_request(server.url, f"prompt {i}", api_key=key))
    assert [e["headers"]["authorization"] for e in server.log] == [f"Bearer {k}" for k in keys]


def test_extra_headers_stay_with_their_request(scripted_server, tmp_path):
    """Mutant: a request's ``extra_headers`` written into the headers shared by every call of its key."""
    server = scripted_server()
    with _client(tmp_path) as client:
        client.complete(_request(server.url, "one", extra_params={"extra_headers": {"X-Trace": "one"}}))
        client.complete(_request(server.url, "two"))
        client.complete(_request(server.url, "three", extra_params={"headers": {"X-Other": "three"}}))
        client.complete(_request(server.url, "four"))
    sent = [e["headers"] for e in server.log]
    assert sent[0]["x-trace"] == "one" and "x-other" not in sent[0]
    assert "x-trace" not in sent[1] and "x-other" not in sent[1]
    assert sent[2]["x-other"] == "three" and "x-trace" not in sent[2]
    assert "x-trace" not in sent[3] and "x-other" not in sent[3]
    assert all(h["authorization"] == "Bearer sk-test-0000" for h in sent)


class _MitmProxy:
    """An HTTPS proxy on loopback that answers CONNECT itself: it ends TLS with a self-signed
    certificate and logs the request line it then reads (so a test sees the path a client sends to
    a provider's default endpoint without any network)."""

    def __init__(self, tls: ssl.SSLContext):
        self.tls = tls
        self.log: list[dict[str, str]] = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                head += chunk
            target = head.split(b" ")[1].decode()
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            with self.tls.wrap_socket(conn, server_side=True) as tls:
                reader = tls.makefile("rb")
                line = reader.readline().decode().strip()
                length = 0
                while True:
                    header = reader.readline().decode().strip()
                    if not header:
                        break
                    if header.lower().startswith("content-length:"):
                        length = int(header.split(":", 1)[1])
                reader.read(length)
                self.log.append({"connect": target, "request": line})
                body = _completion("2", "gpt-4o-mini")
                tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                            + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)

    def close(self) -> None:
        self.sock.close()


def test_the_default_openai_endpoint_is_its_v1_chat_completions(certificate, tmp_path, monkeypatch):
    """Mutant: the default OpenAI base without ``/v1`` (POST https://api.openai.com/chat/completions)."""
    proxy = _MitmProxy(certificate)
    try:
        for name in ("NO_PROXY", "no_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy",
                     "OPENAI_BASE_URL", "OPENAI_API_BASE"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        monkeypatch.setenv("SSL_VERIFY", "false")  # the proxy's certificate is self-signed
        with _client(tmp_path) as client:
            reply = client.complete(_request(None, "default endpoint", model="openai/gpt-4o-mini"))
        assert reply.text == "2"
        assert proxy.log == [{"connect": "api.openai.com:443", "request": "POST /v1/chat/completions HTTP/1.1"}]
    finally:
        proxy.close()


# ---------------------------------------------------------------- retries
@pytest.mark.parametrize("status", [500, 501, 502, 503, 505, 507, 508, 599])
def test_every_5xx_is_retried(scripted_server, tmp_path, status):
    """Mutant: only the listed 5xx codes retried (501 and 507 failed at once)."""
    server = scripted_server([(status, b'{"error": {"message": "server trouble"}}', {})])
    with _client(tmp_path, max_attempts=3) as client:
        assert client.complete(_request(server.url)).text == "3"
        assert client.stats.retries == 1 and client.stats.errors == 0
    assert len(server.log) == 2

    class Failure(Exception):
        status_code = status

    assert classify_failure(Failure("server trouble")).retryable


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_a_4xx_outside_the_retryable_ones_fails_at_once(scripted_server, tmp_path, status):
    server = scripted_server([(status, b'{"error": {"message": "no"}}', {})])
    with _client(tmp_path, max_attempts=3) as client:
        with pytest.raises(LLMCallError, match=f"HTTP {status}"):
            client.complete(_request(server.url))
        assert client.stats.retries == 0
    assert len(server.log) == 1


@pytest.mark.parametrize("body", [b'{"id": "x", "choices": [{"index": 0, "mess', b"not json at all", b"",
                                  b'{"choices": []}', b'[1, 2]'])
def test_a_malformed_reply_is_retried(scripted_server, tmp_path, body):
    """Mutant: a 200 whose body is not a chat completion (broken JSON) failed at once."""
    server = scripted_server([(200, body, {})])
    with _client(tmp_path, max_attempts=3) as client:
        assert client.complete(_request(server.url)).text == "3"
        assert client.stats.retries == 1
    assert len(server.log) == 2


def test_the_fake_servers_malformed_fault_is_retried(tmp_path):
    with FakeLLMServer(latency=0, faults=FaultPlan(schedule={0: "malformed"})) as server:
        with _client(tmp_path, max_attempts=2) as client:
            assert client.complete(_request(server.url)).text.strip().isdigit()
            assert client.stats.retries == 1
    try:
        json.loads('{"id": "x", "choices": [{"index": 0, "mess')
    except ValueError as exc:
        assert classify_failure(exc).retryable and classify_failure(exc).kind == "malformed"


# ---------------------------------------------------------------- prices
def test_a_price_is_the_providers_own():
    """Mutant: the lookup ignores the provider (a vLLM server's ``gpt-4o-mini`` priced as OpenAI's)."""
    usage = {"prompt_tokens": 1000, "completion_tokens": 1000}
    assert call_cost("openai/gpt-4o-mini", usage) > 0
    assert call_cost("hosted_vllm/gpt-4o-mini", usage) == 0.0
    assert call_cost("openai/no-such-model-here", usage) == 0.0


@pytest.mark.parametrize("name,first", [("gpt-4o", "hosted_vllm"), ("gpt-3.5-turbo", "openai")])
def test_the_price_memo_is_keyed_by_provider_and_model(name, first):
    """Mutant: the memo keyed by the bare model name (whichever provider asked first sets the price
    of the other), in either order."""
    usage = {"prompt_tokens": 1000, "completion_tokens": 1000}
    second = "openai" if first == "hosted_vllm" else "hosted_vllm"
    order = [f"{first}/{name}", f"{second}/{name}"]
    costs = {m: call_cost(m, usage) for m in order}
    again = {m: call_cost(m, usage) for m in reversed(order)}  # asked again: from the memo
    assert costs == again
    assert costs[f"openai/{name}"] > 0 and costs[f"hosted_vllm/{name}"] == 0.0


# ---------------------------------------------------------------- cache writes and key locks
class _RecordingBackend(DiskCacheBackend):
    """The disk backend, logging each group stored and each key lock released (with the process id)
    to a file (lines of JSON), so a forked child's actions are seen too."""

    def __init__(self, path: str, events: Path):
        super().__init__(path)
        self.events = events

    def _note(self, **event: Any) -> None:
        with self.events.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"pid": os.getpid(), "t": time.monotonic(), **event}) + "\n")

    def set_many(self, entries):  # type: ignore[override]
        super().set_many(entries)
        self._note(kind="stored", keys=sorted(entries))

    def key_lock(self, key: str):  # type: ignore[override]
        lock, note = super().key_lock(key), self._note

        class Logged:
            def acquire(self, timeout: float) -> bool:
                return lock.acquire(timeout)

            def release(self) -> None:
                note(kind="released", key=key)
                lock.release()

        return Logged()


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def test_a_key_lock_is_released_only_after_its_answer_is_stored(tmp_path):
    """Mutant: the key lock released before the answer is stored (another process would take the
    lock, find no entry and call upstream again).  Deterministic: the order of the two events."""
    events = tmp_path / "events.jsonl"
    backend = _RecordingBackend(str(tmp_path / "cache"), events)
    try:
        with FakeLLMServer(latency=0.01) as server:
            with LLMClient(LLMSettings(cache_mode="record", backend="http", cache_dir=str(tmp_path / "cache")),
                           backend=backend) as client:
                responses = client.complete_many([_request(server.url, f"item {i}") for i in range(6)])
                keys = {r.key for r in responses}
                assert len(keys) == 6
    finally:
        backend.close()
    log = _events(events)
    for key in keys:
        stored = [i for i, e in enumerate(log) if e["kind"] == "stored" and key in e["keys"]]
        released = [i for i, e in enumerate(log) if e["kind"] == "released" and e["key"] == key]
        assert len(stored) == 1 and len(released) == 1, log
        assert stored[0] < released[0], log


def test_answers_arriving_apart_are_stored_apart_while_the_batch_runs(scripted_server, tmp_path):
    """Mutant: the flush timer not reset after a flush (every later answer then waits for the end of
    the batch, and a SIGKILL loses them).  Three answers arrive about 0, 1 and 2.5 s into one batch:
    the second must be stored by a timer flush of its own, before the third arrives."""
    delays = {"first": 0.0, "second": 1.0, "third": 2.5}
    server = scripted_server(delay=lambda prompt: delays.get(prompt, 0.0))
    events = tmp_path / "events.jsonl"
    backend = _RecordingBackend(str(tmp_path / "cache"), events)
    try:
        with LLMClient(LLMSettings(cache_mode="record", backend="http", cache_dir=str(tmp_path / "cache")),
                       backend=backend) as client:
            responses = client.complete_many([_request(server.url, p) for p in delays])
    finally:
        backend.close()
    key = {p: r.key for p, r in zip(delays, responses)}
    groups = [e["keys"] for e in _events(events) if e["kind"] == "stored"]
    assert [key["first"]] in groups and [key["second"]] in groups and [key["third"]] in groups, groups


class _ForkOnFirstAnswer:
    """A progress reporter (``LLMClient.progress``) that forks at the first answer that came from
    the model, while that answer waits to be stored: the child closes its copy of the client and
    exits; the parent waits for it."""

    def __init__(self, client: LLMClient):
        self.client = client
        self.child: int | None = None
        self.status: int | None = None

    def add_total(self, n: int) -> None:
        pass

    def on_call_done(self, cached: bool) -> None:
        if self.child is not None or cached:
            return
        pid = os.fork()
        if pid == 0:  # the child: whatever its copy of the client still holds, it stores now
            code = 0
            try:
                self.client.close()
            except BaseException:  # noqa: BLE001 - reported through the exit status
                code = 3
            os._exit(code)
        self.child = pid
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                self.status = status
                return
            time.sleep(0.01)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        self.status = -1


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork() is POSIX only")
def test_a_forked_child_never_stores_or_releases_what_its_parent_was_storing(tmp_path):
    """Mutant: a forked child keeps the parent's write queue (at its close it would store the
    parent's answers and release the parent's key locks)."""
    events = tmp_path / "events.jsonl"
    backend = _RecordingBackend(str(tmp_path / "cache"), events)
    try:
        with FakeLLMServer(latency=0.01) as server:
            with LLMClient(LLMSettings(cache_mode="record", backend="http", cache_dir=str(tmp_path / "cache")),
                           backend=backend) as client:
                fork = client.progress = _ForkOnFirstAnswer(client)
                responses = client.complete_many([_request(server.url, f"fork {i}") for i in range(3)])
    finally:
        backend.close()
    assert fork.child is not None and fork.status == 0, fork.status
    log = _events(events)
    assert [e for e in log if e["pid"] == fork.child] == []
    stored = {k for e in log if e["kind"] == "stored" and e["pid"] == os.getpid() for k in e["keys"]}
    assert stored == {r.key for r in responses}  # the parent stored every answer itself
