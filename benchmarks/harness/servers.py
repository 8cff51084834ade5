"""The fake server in its own process (responders on the prompt's scale, MindEval roles) and the
bare ``litellm.acompletion`` loop that measures the CPU floor of a benchmark's calls."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from pytest_judgerel.mindeval.judge import AXES as AX

ROOT = Path(__file__).resolve().parents[2]


def subprocess_env() -> dict[str, str]:
    """The server process's environment: offline litellm, the project root importable."""
    env = dict(os.environ)
    env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    env.setdefault("LITELLM_OFFLINE_MODE", "true")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env

# =============================================================================== fake server for benchmarks
def scale_responder(request: Any) -> str:
    """A deterministic integer on the scale named in the prompt ("from “L” to “H”" or "from L to H"),
    derived from sha256 of the request (the fake server's default digest)."""
    import hashlib
    import re

    text = " ".join(str(m.get("content", "")) for m in request.messages)
    m = re.search(r"from\s+“?(-?\d+)”?\s+to\s+“?(-?\d+)”?", text)
    lo, hi = (int(m.group(1)), int(m.group(2))) if m else (0, 10)
    body = json.dumps({"m": request.body.get("messages"), "model": request.body.get("model")}, sort_keys=True)
    h = int.from_bytes(hashlib.sha256(body.encode()).digest()[:4], "big")
    return str(lo + h % (hi - lo + 1))


def mindeval_responder(request: Any) -> str:
    """Five MindEval axis lines for a judge prompt; a short sentence for a patient/clinician turn."""
    import hashlib

    msgs = request.messages
    text = str(msgs[-1].get("content", "")) if msgs else ""
    h = hashlib.sha256(json.dumps(msgs, sort_keys=True).encode()).digest()
    if "<conversation>" in text and "AI-Specific Communication Quality" in text:
        return "\n".join(f"{a}: {1 + h[i] % 6}" for i, a in enumerate(AX))
    role = "patient" if msgs and msgs[0].get("role") == "system" and "backstory" in str(msgs[0].get("content", "")).lower() else "speaker"
    return f"I hear you ({role} {h[0]}). Let us talk about what happened this week."


RESPONDERS = {"default": None, "scale": scale_responder, "mindeval": mindeval_responder}


def start_server_process(latency: float, responder: str = "default") -> tuple[subprocess.Popen, str]:
    """A FakeLLMServer in its own process (so a benchmark's CPU figures are the client's alone)."""
    proc = subprocess.Popen([sys.executable, "-m", "benchmarks.harness.servers", "serve", str(latency), responder],
                            stdout=subprocess.PIPE, text=True, env=subprocess_env())
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        raise RuntimeError(f"fake server did not start: {url!r}")
    return proc, url


def process_cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds a process has used so far (``/proc/<pid>/stat``; 0.0 where absent)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def _serve(latency: float, responder: str) -> None:
    from pytest_judgerel.testing.fake_server import FakeLLMServer

    srv = FakeLLMServer(latency=latency, responder=RESPONDERS[responder]).start()
    print(srv.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        srv.stop()


def bare_litellm_cpu_per_call(url: str, n: int, concurrency: int, model: str = "openai/bench-judge",
                              api_key: str = "sk-bench", calls: Sequence[dict] | None = None) -> tuple[float, float]:
    """(CPU seconds per call, wall seconds) of a bare ``litellm.acompletion`` + semaphore + gather loop:
    the CPU floor of any litellm-based client on these calls (measured in a fresh event loop).

    ``calls``: the real calls as dicts of ``model``, ``messages`` and sampling parameters (the first
    ``n`` are replayed, cycling if fewer; a prefix is added to each prompt so the server sees new
    requests); default: ``n`` short prompts to ``model``."""
    import asyncio
    import warnings

    warnings.simplefilter("ignore")
    import litellm

    litellm.suppress_debug_info = True
    common = {"api_base": url, "api_key": api_key, "timeout": 60, "max_retries": 0, "num_retries": 0}
    if calls:
        specs = [dict(calls[i % len(calls)]) for i in range(n)]
    else:
        specs = [{"model": model, "messages": [{"role": "user", "content": f"bare loop prompt {i}: rate from 0 to 5"}]}
                 for i in range(n)]

    async def run() -> tuple[float, float]:
        sem = asyncio.Semaphore(concurrency)

        async def one(spec: dict) -> str:
            async with sem:
                r = await litellm.acompletion(**{k: v for k, v in spec.items() if v is not None}, **common)
                return r.choices[0].message.content

        await asyncio.gather(*(one(specs[i % len(specs)]) for i in range(concurrency)))  # warm-up
        t0, c0 = time.perf_counter(), time.process_time()
        out = await asyncio.gather(*(one(s) for s in specs))
        assert len(out) == n
        return (time.process_time() - c0) / n, time.perf_counter() - t0

    return asyncio.run(run())


async def _timed_calls(post: Any, bodies: Sequence[dict], concurrency: int, warmup: int | None) -> tuple[float, float]:
    """(CPU seconds per call, wall seconds) of ``post(encoded_body) -> reply bytes`` over ``bodies``
    under a semaphore of ``concurrency``, after ``warmup`` calls; every reply's content is read."""
    import asyncio

    sem = asyncio.Semaphore(concurrency)

    async def one(body: dict) -> str:
        async with sem:
            content = await post(json.dumps(body, ensure_ascii=False).encode())
        return json.loads(content)["choices"][0]["message"]["content"]

    await asyncio.gather(*(one(bodies[i % len(bodies)]) for i in range(warmup or concurrency)))
    t0, c0 = time.perf_counter(), time.process_time()
    out = await asyncio.gather(*(one(b) for b in bodies))
    assert len(out) == len(bodies) and all(out)
    return (time.process_time() - c0) / len(bodies), time.perf_counter() - t0


def raw_httpx_run(url: str, bodies: Sequence[dict], concurrency: int, api_key: str = "sk-bench",
                  warmup: int | None = None) -> tuple[float, float]:
    """(CPU seconds per call, wall seconds) of raw ``httpx.AsyncClient`` calls, shown beside the
    anchor (:func:`raw_aiohttp_run`): the same work, with httpx's pool."""
    import asyncio

    import httpx

    endpoint = url.rstrip("/") + "/chat/completions"
    headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}

    async def run() -> tuple[float, float]:
        async with httpx.AsyncClient(limits=httpx.Limits(max_connections=None, max_keepalive_connections=256),
                                     timeout=60) as client:
            async def post(content: bytes) -> bytes:
                r = await client.post(endpoint, content=content, headers=headers)
                r.raise_for_status()
                return r.content

            return await _timed_calls(post, bodies, concurrency, warmup)

    return asyncio.run(run())


def raw_aiohttp_run(url: str, bodies: Sequence[dict], concurrency: int, api_key: str = "sk-bench",
                    warmup: int | None = None) -> tuple[float, float]:
    """(CPU seconds per call, wall seconds) of raw ``aiohttp.ClientSession`` calls, the wire's anchor:
    each body JSON-encoded, POSTed to ``{url}/chat/completions`` under a semaphore of ``concurrency``
    and its reply's ``choices[0].message.content`` read; no cache, no retries (the least any client
    must do per call).  Measured in a fresh event loop after ``warmup`` calls."""
    import asyncio

    import aiohttp

    endpoint = url.rstrip("/") + "/chat/completions"
    headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}

    async def run() -> tuple[float, float]:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0),
                                         timeout=aiohttp.ClientTimeout(total=60)) as client:
            async def post(content: bytes) -> bytes:
                async with client.post(endpoint, data=content, headers=headers) as r:
                    body = await r.read()
                    r.raise_for_status()
                return body

            return await _timed_calls(post, bodies, concurrency, warmup)

    return asyncio.run(run())


def bodies_of(calls: Sequence[dict], n: int | None = None) -> list[dict]:
    """Chat-completion bodies (what the fast path sends) of ``calls`` (dicts of ``model``, ``messages``
    and sampling parameters, as :func:`calls_from_cache` returns), the first ``n`` (cycling)."""
    from pytest_judgerel.llm.request import LLMRequest
    from pytest_judgerel.llm.wire import chat_body

    n = len(calls) if n is None else n
    out = []
    for i in range(n):
        c = calls[i % len(calls)]
        out.append(chat_body(LLMRequest(model=c["model"], messages=c["messages"], temperature=c.get("temperature"),
                                        top_p=c.get("top_p"), max_tokens=c.get("max_tokens"), seed=c.get("seed"))))
    return out


def calls_from_cache(cache_dir: str | os.PathLike, limit: int | None = None) -> list[dict]:
    """The calls recorded in a cache as ``litellm.acompletion`` keyword dicts (for the bare loop)."""
    from pytest_judgerel.llm.cache import open_backend

    backend = open_backend(Path(cache_dir))
    out = []
    try:
        for _k, e in backend.iter_entries():
            r = e["request"]
            out.append({"model": r["model"], "messages": r["messages"], "temperature": r.get("temperature"),
                        "top_p": r.get("top_p"), "max_tokens": r.get("max_tokens"), "seed": r.get("seed")})
            if limit is not None and len(out) >= limit:
                break
    finally:
        backend.close()
    return out


def calls_from_interactions(interactions: Sequence[Any], judge: Any) -> list[dict]:
    """The calls a MindEval run sent, rebuilt from its conversations (for the bare loop without a cache)."""
    from pytest_judgerel.mindeval.interaction import _mirror
    from pytest_judgerel.mindeval.prompts import render_clinician_prompt, render_patient_prompt

    out = []
    for inter in interactions:
        s = inter.settings
        psamp, csamp = s.get("patient_sampling", {}), s.get("clinician_sampling", {})
        patient_sys = render_patient_prompt(inter.profile, s.get("patient_variant", "default"))
        clinician_sys = render_clinician_prompt(inter.profile, s.get("short_turns", False))
        turns = list(inter.turns)
        for i in range(1, len(turns)):
            hist = turns[:i]
            if turns[i].role == "assistant":
                msgs = [{"role": "system", "content": clinician_sys}] + [{"role": t.role, "content": t.content} for t in hist]
                model, samp = inter.clinician, csamp
            else:
                msgs = [{"role": "system", "content": patient_sys}] + _mirror(hist)
                model, samp = inter.patient_model, psamp
            out.append({"model": model, "messages": msgs, **{k: samp.get(k) for k in ("temperature", "top_p", "seed", "max_tokens")}})
        out.append({"model": judge.model, "messages": [{"role": "user", "content": judge.prompt(inter)}],
                    **judge.settings})
    return out


if __name__ == "__main__" and len(sys.argv) >= 2 and sys.argv[1] == "serve":
    _serve(float(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "default")
