"""A judge's identity: the fingerprint baselines and histories key on, and the configuration id
the drift anchors key on.

A judge describes itself with :meth:`~pytest_judgerel.judging.judge.Judge.fingerprint` (model,
prompt hashes, scale, sampling), and every metric record carries that description as its
``judge`` provenance.  :func:`judge_fingerprint` hashes the identifying fields of such a
description (:data:`FINGERPRINT_FIELDS`, which include the gate's ``repeats`` and ``design``);
:func:`configuration_id` hashes only :data:`CONFIG_FIELDS` (one model, prompt, scale and
sampling), so a metric record's provenance maps to the configuration that produced it.  Both
are 16 hex digits of the SHA-256 of canonical JSON.  Stdlib only.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

__all__ = ["FINGERPRINT_FIELDS", "VOLATILE_FIELDS", "CONFIG_FIELDS", "judge_fields", "judge_fingerprint",
           "configuration_fields", "configuration_id"]

#: Judge-provenance fields that identify a judge for baselines (when present).
FINGERPRINT_FIELDS = ("model", "template", "template_hash", "system_hash", "scale", "axis", "axes",
                      "temperature", "top_p", "max_tokens", "seed", "repeats", "design", "grammar_hash")
#: Fields never used for the fingerprint (they vary between identical judges).
VOLATILE_FIELDS = frozenset({"id", "api_base", "provider_models", "created", "timestamp", "cost", "latency",
                             "usage", "cached", "calls", "hits", "misses", "wall_time", "host"})
#: The fields of ``Judge.fingerprint`` that identify a judge configuration (``api_base`` is kept
#: alongside but, as everywhere, not hashed).
CONFIG_FIELDS = ("model", "template", "template_hash", "system_hash", "scale", "axis", "temperature", "top_p",
                 "max_tokens", "seed", "grammar_hash")


def judge_fields(judge: Mapping[str, Any] | None) -> dict[str, Any]:
    """The provenance fields that enter the fingerprint (curated list, else all non-volatile keys)."""
    if not judge:
        return {}
    picked = {k: judge[k] for k in FINGERPRINT_FIELDS if k in judge}
    if not picked:
        picked = {k: v for k, v in judge.items() if k not in VOLATILE_FIELDS}
    return picked


def judge_fingerprint(judge: Mapping[str, Any] | None) -> str:
    """Stable 16-hex-digit hash of the judge's identifying fields; ``"data"`` for pure-data records.

    Canonical JSON (sorted keys, no whitespace) of :func:`judge_fields`, SHA-256.
    """
    fields_ = judge_fields(judge)
    if not fields_:
        return "data"
    blob = json.dumps(fields_, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def configuration_fields(judge: Mapping[str, Any] | None) -> dict[str, Any]:
    """The identifying fields of a judge configuration, from a judge fingerprint or a metric
    record's ``judge`` provenance."""
    return {k: judge[k] for k in CONFIG_FIELDS if k in judge} if isinstance(judge, Mapping) else {}


def configuration_id(judge: Mapping[str, Any] | None) -> str | None:
    """16 hex digits of the configuration; None without one model (pure data, a panel)."""
    fields_ = configuration_fields(judge)
    if not isinstance(fields_.get("model"), str):
        return None
    return judge_fingerprint(fields_)
