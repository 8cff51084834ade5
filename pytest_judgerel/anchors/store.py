"""The anchor file: per judge configuration, a fixed sample of its requests and their reference scores.

A JSON document (schema ``pytest-judgerel/anchors``, version 1; documented in docs/reports.md,
"Silent judge drift")::

    {"schema": "pytest-judgerel/anchors", "version": 1,
     "configurations": {"<configuration id>": {
        "judge": {model, template, template_hash, system_hash, scale, axis, temperature, top_p,
                  max_tokens, seed, grammar_hash, api_base},
        "parser": {"output": "number", "axes": null, "axis": null, "scale": {low, high, step, fractional, name}},
        "recorded": "2026-...", "reference_samples": 2,
        "server": {"models": {name: count}, "system_fingerprints": {id: count}},
        "anchors": [{"id": "...", "item": "...", "request": {"model", "messages", "sampling", "grammar",
                     "namespace"}, "reference": [score, score], "human": null}]}}}

The configuration id is :func:`~pytest_judgerel.judging.identity.configuration_id` of ``judge``
(recomputed on reading; the key is only a label).  An anchor without ``reference`` scores (a
hand-written set) is recorded on the next run; ``human`` labels, when present, add the judge's
agreement with them to the report.  Writing (:func:`record_anchor_sets`) holds a lock file beside
the anchor file (``filelock``) and re-reads it, so two sessions recording at once keep one valid
file with both their configurations.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..errors import ConfigError
from ..judging.identity import configuration_id

__all__ = ["ANCHORS_SCHEMA_ID", "ANCHORS_VERSION", "Anchor", "AnchorSet", "AnchorFile", "anchor_id",
           "read_anchor_file", "write_anchor_file", "record_anchor_sets"]

ANCHORS_SCHEMA_ID = "pytest-judgerel/anchors"
ANCHORS_VERSION = 1


def anchor_id(config: str, messages: Any) -> str:
    """16 hex digits of a configuration and an exact prompt: the identity of an anchor and its rank
    in the deterministic sample (the ``sample_size`` smallest ids are recorded)."""
    blob = json.dumps([config, messages], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def _score(v: Any, where: str) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ConfigError(f"{where}: a score must be a finite number or null, got {v!r}")
    return float(v)


@dataclass(frozen=True)
class Anchor:
    """One anchor: the exact request (messages and sampling parameters), its reference scores and an
    optional human label."""

    id: str
    item: str
    request: Mapping[str, Any]
    reference: tuple[float | None, ...] = ()
    human: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "item": self.item, "request": dict(self.request), "reference": list(self.reference),
                "human": self.human}


@dataclass(frozen=True)
class AnchorSet:
    """The anchors of one judge configuration, with the parser its replies are read with and the
    server's reported models and ``system_fingerprint`` s when the references were recorded."""

    judge: Mapping[str, Any]
    parser: Mapping[str, Any]
    anchors: tuple[Anchor, ...]
    recorded: str | None = None
    reference_samples: int = 0
    server: Mapping[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        found = configuration_id(self.judge)
        if found is None:
            raise ConfigError(f"anchor set without a judge model: {dict(self.judge)!r}")
        return found

    @property
    def has_reference(self) -> bool:
        return bool(self.anchors) and all(len(a.reference) > 0 for a in self.anchors)

    def to_dict(self) -> dict[str, Any]:
        return {"judge": dict(self.judge), "parser": dict(self.parser), "recorded": self.recorded,
                "reference_samples": self.reference_samples, "server": dict(self.server),
                "anchors": [a.to_dict() for a in self.anchors]}


@dataclass
class AnchorFile:
    """Every configuration's anchor set, keyed by configuration id."""

    configurations: dict[str, AnchorSet] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"schema": ANCHORS_SCHEMA_ID, "version": ANCHORS_VERSION,
                "configurations": {k: v.to_dict() for k, v in sorted(self.configurations.items())}}


def _anchor_set(label: str, data: Any, path: str) -> AnchorSet:
    where = f"anchor file {path!r}, configuration {label!r}"
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}: expected an object, got {type(data).__name__}")
    judge, parser = data.get("judge"), data.get("parser")
    if not isinstance(judge, Mapping) or not isinstance(judge.get("model"), str):
        raise ConfigError(f"{where}: 'judge' must be an object with the judge's 'model' (and its other fields)")
    if not isinstance(parser, Mapping) or parser.get("output") not in ("number", "json", "axes") \
            or not isinstance(parser.get("scale"), Mapping):
        raise ConfigError(f"{where}: 'parser' must name the reply 'output' (number, json or axes) and the 'scale'")
    anchors = []
    raw = data.get("anchors")
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f"{where}: 'anchors' must be a non-empty list")
    cid = configuration_id(judge)
    assert cid is not None
    for i, a in enumerate(raw):
        at = f"{where}, anchor {i}"
        if not isinstance(a, Mapping):
            raise ConfigError(f"{at}: expected an object")
        req = a.get("request")
        if not isinstance(req, Mapping) or not isinstance(req.get("messages"), list) or not req["messages"]:
            raise ConfigError(f"{at}: 'request' must hold the exact 'messages' sent (and 'sampling')")
        if "sampling" in req and not isinstance(req["sampling"], Mapping):
            raise ConfigError(f"{at}: 'request.sampling' must be an object of sampling parameters")
        ref = a.get("reference") or []
        if not isinstance(ref, list):
            raise ConfigError(f"{at}: 'reference' must be a list of scores")
        anchors.append(Anchor(id=str(a.get("id") or anchor_id(cid, req["messages"])),
                              item=str(a.get("item", a.get("id", i))), request=dict(req),
                              reference=tuple(_score(v, at) for v in ref), human=_score(a.get("human"), at)))
    if len({a.id for a in anchors}) != len(anchors):
        raise ConfigError(f"{where}: two anchors share an id")
    return AnchorSet(judge=dict(judge), parser=dict(parser), anchors=tuple(anchors), recorded=data.get("recorded"),
                     reference_samples=max((len(a.reference) for a in anchors), default=0),
                     server=dict(data.get("server") or {}))


def read_anchor_file(path: str | os.PathLike[str]) -> AnchorFile:
    """The anchor file at ``path`` (an empty one when it does not exist yet); a damaged file raises
    :class:`~pytest_judgerel.errors.ConfigError` naming the problem."""
    path = os.fspath(path)
    if not os.path.exists(path):
        return AnchorFile()
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the anchor file {path!r}: {exc}") from None
    if not isinstance(data, Mapping) or data.get("schema") != ANCHORS_SCHEMA_ID:
        raise ConfigError(f"{path!r} is not an anchor file (schema {ANCHORS_SCHEMA_ID!r} expected)")
    version = data.get("version")
    if not isinstance(version, int) or version > ANCHORS_VERSION:
        raise ConfigError(f"anchor file {path!r} has version {version!r}; this pytest-judgerel reads version "
                          f"{ANCHORS_VERSION} (upgrade pytest-judgerel)")
    configs = data.get("configurations")
    if not isinstance(configs, Mapping):
        raise ConfigError(f"anchor file {path!r}: 'configurations' must be an object")
    out = AnchorFile()
    for label, raw in configs.items():
        aset = _anchor_set(str(label), raw, path)
        out.configurations[aset.id] = aset  # the id is recomputed: a hand-edited key cannot mislead
    return out


def write_anchor_file(path: str | os.PathLike[str], anchors: AnchorFile) -> str:
    """Write ``anchors`` atomically (stable key order, reviewable diffs); returns the absolute path."""
    from .._io import write_text_atomic

    return write_text_atomic(path, json.dumps(anchors.to_dict(), indent=1, sort_keys=True) + "\n")


LOCK_TIMEOUT = 120.0
"""Seconds a session waits for another one writing the same anchor file."""


def record_anchor_sets(path: str | os.PathLike[str], recorded: Mapping[str, AnchorSet]) -> str:
    """Add the configurations ``recorded`` this session to the anchor file at ``path`` under its lock:
    the file is read again and a configuration another session recorded meanwhile is kept as it is
    (every later session compares with that one reference).  A damaged file raises
    :class:`~pytest_judgerel.errors.ConfigError` and is left untouched.  Returns the absolute path."""
    from filelock import FileLock, Timeout

    path = os.fspath(path)
    try:
        with FileLock(path + ".lock", timeout=LOCK_TIMEOUT):
            current = read_anchor_file(path)
            merged = AnchorFile(dict(current.configurations))
            for cid, aset in recorded.items():
                have = merged.configurations.get(cid)
                if have is None or not have.has_reference:
                    merged.configurations[cid] = aset
            return write_anchor_file(path, merged)
    except Timeout:
        raise OSError(f"the anchor file {path!r} stayed locked for {LOCK_TIMEOUT:g} s "
                      f"(another session writing it, or a stale {path + '.lock'})") from None
