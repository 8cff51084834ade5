"""A real OpenAI-compatible server on loopback: llama-cpp-python's ``llama_cpp.server``.

:class:`LlamaCppServer` starts ``python -m llama_cpp.server`` on ``127.0.0.1`` with a GGUF
file (default: the embedded SmolLM2-135M of the ``local`` extra), waits until
``/v1/models`` answers and stops it on exit.  Point a judge at it with
``--judge-model=<server.model> --judge-api-base=<server.url>``.  It is what the project's
own suite uses to test the whole call path against a server it did not write; it needs the
``server`` extra (``pip install 'pytest-judgerel[server]'``).

The server accepts llama.cpp's ``grammar`` field in the chat-completion body, so
``--judgerel-constrain=always`` reaches it.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Sequence

from pytest_judgerel.errors import ConfigError

__all__ = ["LlamaCppServer", "server_available"]


def server_available() -> bool:
    """Whether ``llama_cpp.server`` and its web stack are importable (the ``server`` extra)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None
               for m in ("llama_cpp", "fastapi", "uvicorn", "sse_starlette", "starlette_context",
                         "pydantic_settings"))


def _free_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaCppServer:
    """``with LlamaCppServer() as server:`` -> ``server.url``, ``server.model``.

    ``alias`` is the model name the server answers to (``server.model`` is
    ``"openai/<alias>"``, the litellm name); ``n_ctx`` the context size; ``n_threads``
    CPU threads (default 2); ``startup_timeout`` seconds to wait for readiness.
    """

    def __init__(self, model_path: str | os.PathLike[str] | None = None, *, alias: str = "smollm2",
                 n_ctx: int = 4096, n_threads: int = 2, startup_timeout: float = 180.0,
                 extra_args: Sequence[str] = (), api_key: str | None = None) -> None:
        if model_path is None:
            from pytest_judgerel.llm.local import local_model_path

            model_path = local_model_path()
            if model_path is None:
                raise ConfigError("no GGUF file given and the embedded model is not installed: "
                                  "pip install 'pytest-judgerel[server]'")
        self.model_path = Path(model_path)
        if not self.model_path.is_file():
            raise ConfigError(f"GGUF file {str(self.model_path)!r} does not exist")
        if not server_available():
            raise ConfigError("llama_cpp.server needs the 'server' extra: pip install 'pytest-judgerel[server]'")
        self.alias = alias
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.startup_timeout = startup_timeout
        self.extra_args = tuple(extra_args)
        self.api_key = api_key  # when set, the server refuses every request without this key
        self.port: int | None = None
        self._proc: subprocess.Popen | None = None
        self._log: Any = None

    @property
    def url(self) -> str:
        """The api_base: ``http://127.0.0.1:PORT/v1``."""
        if self.port is None:
            raise ConfigError("the server is not running")
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def model(self) -> str:
        """The litellm model name that reaches this server (with ``api_base=self.url``)."""
        return f"openai/{self.alias}"

    def log_tail(self, limit: int = 4000) -> str:
        """The end of the server's output (for error messages)."""
        if self._log is None:
            return ""
        self._log.flush()
        with open(self._log.name, encoding="utf-8", errors="replace") as fh:
            return fh.read()[-limit:]

    def start(self) -> "LlamaCppServer":
        last_error = ""
        for _attempt in range(3):  # a port taken between probe and bind: try another
            self.port = _free_port()
            self._log = tempfile.NamedTemporaryFile("w+", prefix="llama-server-", suffix=".log", delete=False)
            cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model_path),
                   "--model_alias", self.alias, "--host", "127.0.0.1", "--port", str(self.port),
                   "--n_ctx", str(self.n_ctx), "--n_threads", str(self.n_threads), "--verbose", "False",
                   *(["--api_key", self.api_key] if self.api_key else []), *self.extra_args]
            self._proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            if self._wait_ready():
                return self
            last_error = self.log_tail()
            self.stop()
        raise ConfigError(f"llama_cpp.server did not start on 127.0.0.1 within {self.startup_timeout:.0f} s:\n"
                          f"{last_error}")

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._proc is None or self._proc.poll() is not None:
                return False
            try:
                headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
                with urllib.request.urlopen(urllib.request.Request(f"{self.url}/models", headers=headers),
                                            timeout=2) as resp:
                    data = json.loads(resp.read().decode())
                if any(m.get("id") == self.alias for m in data.get("data", [])):
                    return True
            except (urllib.error.URLError, OSError, ValueError):
                pass
            time.sleep(0.2)
        return False

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        if self._log is not None:
            self._log.close()
            with contextlib.suppress(OSError):
                os.unlink(self._log.name)
            self._log = None

    def __enter__(self) -> "LlamaCppServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
