"""Held-out bugs, batch 9: 14 plausible bugs in the aiohttp fast path (``llm/wire.py``: the body, the
route, the reply and error parsing, the per-call headers and the key's masking) and in the disk cache's
cross-process machinery (``llm/disk_backend.py``: the striped key locks and the shared count of stored
entries), written from the package code only (no file under ``tests/`` opened or searched while writing
them) and committed before they were measured.

Measured 14 of 14 killed (the wire and cache kinds' test sets broadened by grep after the commit).

Each entry of :data:`BATCH9` is ``(id, kind, file, old, new, what)`` like :mod:`held_out_batch4`.
"""

from __future__ import annotations

BATCH9: list[tuple[str, str, str, str, str, str]] = [
    # ------------------------------------------------------------ the fast path
    ("WA01", "wire", "llm/wire.py",
     "if status >= 300 else None",
     "if status >= 400 else None",
     "a redirect left unfollowed (3xx without Location) is parsed as a reply instead of an HTTP error"),
    ("WA02", "wire", "llm/wire.py",
     "message = message.replace(call.api_key, \"***\")",
     "message = message.replace(call.api_key[:8], \"***\")",
     "only the key's first 8 characters are masked in an error that echoes it: the rest is printed"),
    ("WA03", "wire", "llm/wire.py",
     "headers = {**headers, **{str(k): str(v) for k, v in extra.items()}}",
     "headers.update({str(k): str(v) for k, v in extra.items()})",
     "a call's extra headers are written into the memo shared by every call with the same key: they "
     "leak into later calls"),
    ("WA04", "wire", "llm/wire.py",
     "                        request.model.partition(\"/\")[2], api_key)",
     "                        request.model, api_key)",
     "a reply that names no model is reported under the model with its provider prefix"),
    ("WA05", "wire", "llm/wire.py",
     "model=str(data.get(\"model\") or fallback_model)",
     "model=str(data.get(\"model\"))",
     "a reply without a model field reports the model 'None'"),
    ("WA06", "wire", "llm/wire.py",
     "system_fingerprint=str(fingerprint) if fingerprint else None)",
     "system_fingerprint=str(fingerprint))",
     "a reply without a fingerprint records the fingerprint 'None' (drift then compares a string)"),
    ("WA07", "wire", "llm/wire.py",
     "        error = data.get(\"error\", data)",
     "        error = data.get(\"error\")",
     "an error body with its message at top level (vLLM's {\"object\": \"error\", \"message\": ...}) is shown raw"),
    ("WA08", "wire", "llm/wire.py",
     "extra = {k: v for k, v in request.extra_params.items() if k not in _HEADER_PARAMS}",
     "extra = dict(request.extra_params)",
     "extra headers are also sent as fields of the JSON body"),
    ("WA09", "wire", "llm/wire.py",
     "        if isinstance(extra_body, Mapping):\n            body.update(extra_body)",
     "        if isinstance(extra_body, Mapping):\n            body[\"extra_body\"] = dict(extra_body)",
     "extra_body is sent nested under its own name instead of merged into the body (the server ignores it)"),
    ("WA10", "wire", "llm/wire.py",
     "or litellm_only or _REWRITTEN.match(name):",
     "or litellm_only:",
     "OpenAI's reasoning models go through the fast path under auto, without litellm's parameter rewrite"),
    # ------------------------------------------------------------ the disk cache's cross-process machinery
    ("DB01", "cache", "llm/disk_backend.py",
     "            if count <= 0:\n                self._held.pop(stripe, None)",
     "            if count < 0:\n                self._held.pop(stripe, None)",
     "the last holder of a stripe never unlocks it: other processes wait on that key's stripe until we exit"),
    ("DB02", "cache", "llm/disk_backend.py",
     "os.pwrite(self._fd, (self._read() + len(keys)).to_bytes(8, \"little\"), 0)",
     "os.pwrite(self._fd, (self._read() + 1).to_bytes(8, \"little\"), 0)",
     "the shared count grows by one per commit instead of per entry: another process's store can go unseen"),
    ("DB03", "cache", "llm/disk_backend.py",
     "        shared, own = mark",
     "        own, shared = mark",
     "the mark's two counts are read swapped"),
    ("DB04", "cache", "llm/disk_backend.py",
     "        self._held = {}\n        self._mutex = threading.Lock()",
     "        self._mutex = threading.Lock()",
     "a forked child keeps its parent's hold counts: it skips the lock its parent holds"),
]
