"""Versioned JSON schemas of the session report, the baseline and history runs,
plus a small stdlib validator for the subset of JSON Schema they use.

The schemas are JSON Schema (draft 2020-12) documents, so any validator
(``jsonschema``) can check a report; :func:`validate` needs no dependency.
Field meanings are documented in ``docs/reports.md``.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from ..errors import JudgerelError

REPORT_SCHEMA_ID = "pytest-judgerel/report"
REPORT_VERSION = 1
BASELINE_SCHEMA_ID = "pytest-judgerel/baseline"
BASELINE_VERSION = 1


class ReportFormatError(JudgerelError, ValueError):
    """A report, baseline or history file does not match its schema (the message names the path)."""


_NUM = {"type": "number"}
_NUM_OR_NULL = {"type": ["number", "null"]}
_INT_OR_NULL = {"type": ["integer", "null"]}
_STR_OR_NULL = {"type": ["string", "null"]}
_CI = {"type": ["array", "null"], "items": _NUM_OR_NULL, "minItems": 2, "maxItems": 2}
_INT = {"type": "integer", "minimum": 0}
_BOOL = {"type": "boolean"}
_STR = {"type": "string"}
_OBJ = {"type": "object"}

# One record: the keys every record type of session/recording.py declares (RECORD_TYPES), and
# only those (tests/test_report_schema.py checks both ways and that the JSON types agree).
_DECISION = {"enum": ["continue", "pass", "fail"]}
_SEQUENTIAL = {
    "type": "object",
    "required": ["unit", "used", "cap", "calls", "cap_calls", "stop"],
    "properties": {
        "unit": {"enum": ["repeats", "items"]}, "used": _INT, "cap": _INT, "calls": _INT, "cap_calls": _INT,
        "saved_calls": _INT, "stop": {"enum": ["settled", "cap", "fixed", "parse failures", "budget"]},
        "decision": {"enum": ["continue", "pass", "fail", None]}, "early": _BOOL, "reason": _STR,
        "p_pass_at_cap": {"type": ["number", "null"], "minimum": 0, "maximum": 1}, "rule": _STR_OR_NULL,
        "eps_pass": _NUM_OR_NULL, "eps_fail": _NUM_OR_NULL,
        "plan": {"type": "object", "properties": {"cap_calls": _INT, "expected_calls": {"type": "number"},
                                                  "expected_share": {"type": "number"}, "basis": _STR}},
        "looks": {"type": "array", "items": {"type": "object", "properties": {
            "look": _INT, "used": _INT, "decision": _DECISION,
            "p_pass_at_cap": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
            "observed": _NUM_OR_NULL, "n_sim": _INT_OR_NULL, "items": _INT_OR_NULL,
            "probe_items": _INT}}},
    },
}

_RECORD = {
    "type": "object",
    "required": ["kind"],
    "properties": {
        "kind": {"type": "string"},
        "statistic": {"type": "string"},
        "label": _STR_OR_NULL,
        "value": _NUM_OR_NULL,
        "ci": _CI,
        "n": _INT_OR_NULL,
        "k": _INT_OR_NULL,
        "threshold": _NUM_OR_NULL,
        "direction": {"enum": ["min", "max"]},
        "passed": {"type": ["boolean", "null"]},
        "report_only": {"type": "boolean"},
        "groups": {"type": "object", "additionalProperties": {"type": "object"}},
        "worst_items": {"type": "array", "items": {"type": "object", "required": ["item"]}},
        "judge": {"type": ["object", "null"]},
        "parse_failures": {"type": "integer", "minimum": 0},
        "pairs": {"type": ["array", "null"], "items": {"type": "array", "items": _NUM_OR_NULL,
                                                        "minItems": 2, "maxItems": 2}},
        "scales": {"type": "array", "items": {"type": "string"}},
        "matrix": {"type": "array", "items": {"type": "array", "items": _NUM_OR_NULL}},
        "item_scores": {"type": "object", "additionalProperties": _NUM_OR_NULL},
        "error": {"type": "string"},
        "checks": {"type": "array", "items": {
            "type": "object", "required": ["statistic", "value", "threshold", "direction", "passed"],
            "properties": {"statistic": {"type": "string"}, "value": _NUM_OR_NULL, "ci": _CI,
                           "threshold": _NUM_OR_NULL, "direction": {"enum": ["min", "max"]},
                           "passed": {"type": ["boolean", "null"]}},
            "additionalProperties": False}},
        "use": {"enum": ["estimate", "ci_low", "ci_high", "equivalence"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "n_omitted": {"type": "integer", "minimum": 0},
        "p_pass": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
        "p_pass_new_items": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
        "stability": _OBJ,
        "unstable": _BOOL,
        # icc
        "repeats_needed": _OBJ,
        # icc, pass_rate, human_mean drawn sequentially (session/recording.py's SequentialInfo)
        "sequential": _SEQUENTIAL,
        # agreement, nmae
        "icc": _NUM_OR_NULL,
        "nmae": _NUM_OR_NULL,
        "thresholds": {"type": "object", "additionalProperties": _NUM_OR_NULL},
        # position_bias
        "first_preference": _OBJ,
        "second_preference": _OBJ,
        "n_first": _INT,
        "n_second": _INT,
        "p_position": _NUM_OR_NULL,
        "alpha": _NUM_OR_NULL,
        "position_preference": _BOOL,
        "low_consistency": _BOOL,
        "n_missing": _INT,
        "n_tie_mismatch": _INT,
        "max_first_preference": _NUM_OR_NULL,
        # length_bias
        "two_sided": _BOOL,
        "p": _NUM_OR_NULL,
        "p_greater": _NUM_OR_NULL,
        "test": _STR,
        "scale": _STR,
        "field": _STR,
        "length_ratio": _NUM_OR_NULL,
        "equivalence": _OBJ,
        "items_needed": _OBJ,
        # self_preference
        "own_model": _STR,
        "models": {"type": "array", "items": _STR},
        "reference_rank": {"type": "integer"},
        "judge_rank": {"type": "integer"},
        "rank_change": {"type": "integer"},
        "share_higher": _NUM_OR_NULL,
        "share_lower": _NUM_OR_NULL,
        "share_equal": _NUM_OR_NULL,
        "p_sign": _NUM_OR_NULL,
        "n_dropped": _INT,
        # pass_rate
        "observed": _NUM_OR_NULL,
        "n_attacks": _INT,
        "margin": _NUM_OR_NULL,
        "pass_line": _NUM_OR_NULL,
        "goal": _STR,
        "attacked_field": _STR_OR_NULL,
        "excluded_items": {"type": "array", "items": _STR},
        "worst_family": _STR,
        "families": _OBJ,
        "pooled": _OBJ,
        "pooled_rate": _NUM_OR_NULL,
        "positions": _OBJ,
        "fields": _OBJ,
        "noise": {"type": ["object", "null"]},
        "passed_count": _INT,
        "specificity": _NUM_OR_NULL,
        "sensitivity": _NUM_OR_NULL,
        "n_negative": _INT,
        "n_positive": _INT,
        "unclipped": _NUM_OR_NULL,
        "interval_method": _STR,
        # human_mean, human_mean_difference (lam: one number, or one per system)
        "lam": {"type": ["number", "null", "array"], "items": _NUM_OR_NULL},
        "tuned": _BOOL,
        "n_unlabeled": _INT,
        "effective_n": _NUM_OR_NULL,
        "classical": _OBJ,
        "judge_mean": _NUM_OR_NULL,
        "judge_bias": _NUM_OR_NULL,
        "paired": _BOOL,
        "paired_unlabeled": {"type": ["boolean", "null"]},
        "new_mean": _NUM_OR_NULL,
        "old_mean": _NUM_OR_NULL,
        "new_ci": _CI,
        "old_ci": _CI,
        # pairwise (assert_not_worse, assert_better), ranking, verdict_agreement
        "hypothesis": {"enum": ["not_worse", "better"]},
        "candidate": _STR,
        "baseline": _STR,
        "wins": _INT,
        "ties": _INT,
        "losses": _INT,
        "n_verdicts": _INT,
        "n_unreadable": _INT,
        "repeats": _INT,
        "position_inconsistency": {"type": ["object", "null"]},
        "judge_win_rate": _OBJ,
        "human": _OBJ,
        "jury": _OBJ,
        "expected": {"type": "array", "items": _STR},
        "ranking": {"type": "array", "items": _STR},
        "strength": {"type": "object", "additionalProperties": _NUM_OR_NULL},
        "adjacent": {"type": "array", "items": _OBJ},
        "kappa": {"type": ["object", "null"]},
        "ac1": _OBJ,
        "tpr": {"type": ["object", "null"]},
        "tnr": {"type": ["object", "null"]},
        "base_rate": _OBJ,
        "confusion": {"type": "object", "additionalProperties": _INT},
        "false_pass": {"type": "array", "items": _STR},
        "false_fail": {"type": "array", "items": _STR},
        # judge_panel, judge_run (not metrics)
        "effective_judges": _NUM_OR_NULL,
        "mean_error_correlation": _NUM_OR_NULL,
        "reference": _STR,
        "items": _INT,
        "calls": _INT,
        "reasked": _INT,
        "failures": {"type": "array", "items": _OBJ},
        "served": {"type": "array", "items": _OBJ},
        "anchor_calls": {"type": "array", "items": _OBJ},
    },
    "additionalProperties": True,  # reports written by a later minor version may carry new keys
}

_TEST = {
    "type": "object",
    "required": ["nodeid", "outcome", "records", "calls"],
    "properties": {
        "nodeid": {"type": "string"},
        "outcome": {"enum": ["passed", "failed", "error", "skipped", "xfailed", "xpassed", "crashed",
                             "interrupted"]},
        "worker": _STR_OR_NULL,
        "records": {"type": "array", "items": {"$ref": "#/$defs/record"}},
        "calls": {"type": "object", "additionalProperties": _NUM},
        "repeated": {"type": "object", "properties": {
            "fixtures": {"type": "array", "items": {"type": "string"}},
            "records": {"type": "integer", "minimum": 0},
            "parse_failures": {"type": "integer", "minimum": 0},
            "calls": {"type": "object", "additionalProperties": _NUM}}},
    },
    "additionalProperties": True,
}

_TOTAL_KEYS = ("tests", "metrics", "failed_metrics", "parse_failures", "calls", "hits", "misses", "retries",
               "errors", "prompt_tokens", "completion_tokens", "cost")
_TOTALS = {
    "type": "object",
    "required": list(_TOTAL_KEYS) + ["hit_rate"],
    "properties": {**{k: {"type": "number", "minimum": 0} for k in _TOTAL_KEYS},
                   "hit_rate": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
                   "repeated": {"type": "object", "additionalProperties": {"type": "number", "minimum": 0}}},
    "additionalProperties": True,
}

_COMPARISON_ENTRY = {
    "type": "object",
    "required": ["nodeid", "metric", "status"],
    "properties": {
        "nodeid": {"type": "string"},
        "metric": {"type": "string"},
        "status": {"enum": ["pass", "improved", "within_noise", "regression", "new", "missing", "undefined"]},
        "baseline": _NUM_OR_NULL,
        "current": _NUM_OR_NULL,
        "delta": _NUM_OR_NULL,
        "tolerance": _NUM_OR_NULL,
        "direction": {"enum": ["min", "max"]},
        "ci_overlap": {"type": ["boolean", "null"]},
        "p_value": _NUM_OR_NULL,
        "fingerprint_changed": {"type": "boolean"},
        "judge_changes": {"type": "object"},
        "reason": {"type": "string"},
    },
    "additionalProperties": True,
}

_COMPARISON = {
    "type": "object",
    "required": ["path", "entries", "counts"],
    "properties": {
        "path": _STR_OR_NULL,
        "found": {"type": "boolean"},
        "error": _STR_OR_NULL,
        "updated": {"type": "boolean"},
        "tolerances": {"type": "object"},
        "counts": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
        "entries": {"type": "array", "items": _COMPARISON_ENTRY},
        "not_run": {"type": "integer", "minimum": 0},
    },
    "additionalProperties": True,
}

_ANCHOR_STATUS = ["recorded", "steady", "drifted", "inconclusive", "error", "off", "unchecked"]
_SERVER = {"type": "object", "properties": {
    "models": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
    "system_fingerprints": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}}}}
_ANCHORS = {  # the silent-drift anchors of the session (pytest_judgerel.anchors; docs/reports.md)
    "type": "object",
    "required": ["file", "status", "calls", "configurations"],
    "properties": {
        "file": _STR_OR_NULL,
        "status": {"enum": _ANCHOR_STATUS},
        "calls": {"type": "integer", "minimum": 0},
        "failed_calls": {"type": "integer", "minimum": 0},
        "unreadable": {"type": "boolean"},
        "written": {"type": "boolean"},
        "error": _STR_OR_NULL,
        "unused": {"type": "array", "items": {"type": "string"}},
        "marked_records": {"type": "integer", "minimum": 0},
        "configurations": {"type": "object", "additionalProperties": {
            "type": "object",
            "required": ["judge", "status"],
            "properties": {
                "judge": {"type": "object"},
                "status": {"enum": _ANCHOR_STATUS},
                "anchors": {"type": "integer", "minimum": 0},
                "calls": {"type": "integer", "minimum": 0},
                "failed_calls": {"type": "integer", "minimum": 0},
                "comparison": {"type": ["object", "null"]},
                "human_agreement": {"type": ["object", "null"]},
                "reference_server": _SERVER,
                "fresh_server": _SERVER,
                "served": _SERVER,
                "server_changes": {"type": "array", "items": {"type": "string"}},
                "reasons": {"type": "array", "items": {"type": "string"}},
            },
            "additionalProperties": True}},
    },
    "additionalProperties": True,
}

REPORT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://pytest-judgerel.invalid/schemas/report-v1.json",
    "title": "pytest-judgerel session report, version 1",
    "type": "object",
    "required": ["schema", "version", "created", "settings", "report_only", "tests", "totals", "crashed",
                 "judges", "gate"],
    "properties": {
        "schema": {"const": REPORT_SCHEMA_ID},
        "version": {"const": REPORT_VERSION},
        "created": {"type": "string"},
        "plugin_version": {"type": "string"},
        "settings": {"type": "object"},
        "report_only": {"type": "boolean"},
        "tests": {"type": "array", "items": _TEST},
        "totals": _TOTALS,
        "crashed": {"type": "array", "items": {"type": "string"}},
        "judges": {"type": "object", "additionalProperties": {"type": "object"}},
        "gate": {
            "type": "object",
            "required": ["status", "reasons"],
            "properties": {
                "status": {"enum": ["passed", "failed", "report_only", "interrupted"]},
                "reasons": {"type": "array", "items": {"type": "string"}},
                "errors": {"type": "array", "items": {"type": "string"}},
                "baseline": {"anyOf": [{"type": "null"}, _COMPARISON]},
            },
            "additionalProperties": True,
        },
        "run": {"type": "object"},
        "session": {
            "type": "object",
            "required": ["exitstatus", "interrupted", "outcomes"],
            "properties": {
                "exitstatus": {"type": ["integer", "null"]},
                "interrupted": {"type": "boolean"},
                "outcomes": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
            },
            "additionalProperties": True,
        },
        "shards": {"type": "array", "items": {"type": "object", "required": ["source", "tests"]}},
        "duplicates": {"type": "array", "items": {"type": "string"}},
        "outputs": {"type": "object", "additionalProperties": {"type": "string"}},
        "anchors": _ANCHORS,
    },
    "additionalProperties": True,
    "$defs": {"record": _RECORD},
}

_BASELINE_METRIC = {
    "type": "object",
    "required": ["statistic", "value", "direction", "fingerprint"],
    "properties": {
        "statistic": {"type": "string"},
        "value": _NUM_OR_NULL,
        "ci": _CI,
        "direction": {"enum": ["min", "max"]},
        "n": _INT_OR_NULL,
        "fingerprint": {"type": "string"},
        "item_scores": {"type": "object", "additionalProperties": _NUM_OR_NULL},
    },
    "additionalProperties": False,
}

BASELINE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://pytest-judgerel.invalid/schemas/baseline-v1.json",
    "title": "pytest-judgerel baseline, version 1",
    "type": "object",
    "required": ["schema", "version", "judges", "tests"],
    "properties": {
        "schema": {"const": BASELINE_SCHEMA_ID},
        "version": {"const": BASELINE_VERSION},
        "updated": {"type": "string"},
        "judges": {"type": "object", "additionalProperties": {"type": "object"}},
        "tests": {"type": "object", "additionalProperties": {
            "type": "object", "additionalProperties": _BASELINE_METRIC}},
    },
    "additionalProperties": False,
}


# ---------------------------------------------------------------------- validator
def _type_ok(value: Any, name: str) -> bool:
    if name == "null":
        return value is None
    if name == "boolean":
        return isinstance(value, bool)
    if name == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer())
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if name == "string":
        return isinstance(value, str)
    if name == "array":
        return isinstance(value, (list, tuple))
    if name == "object":
        return isinstance(value, Mapping)
    raise ValueError(f"unsupported schema type {name!r}")


def _errors(value: Any, schema: Mapping[str, Any], root: Mapping[str, Any], path: str, out: list[str]) -> None:
    if "$ref" in schema:
        ref = schema["$ref"]
        if not ref.startswith("#/$defs/"):
            raise ValueError(f"unsupported $ref {ref!r}")
        schema = root["$defs"][ref[len("#/$defs/"):]]
    if "anyOf" in schema:
        if not any(not _collect(value, s, root, path) for s in schema["anyOf"]):
            out.append(f"{path}: matches none of the allowed forms")
        return
    if "const" in schema and value != schema["const"]:
        out.append(f"{path}: expected {schema['const']!r}, got {value!r}")
        return
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{path}: {value!r} is not one of {schema['enum']}")
        return
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_type_ok(value, t) for t in names):
            out.append(f"{path}: expected {' or '.join(names)}, got {type(value).__name__} {value!r:.60}")
            return
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            out.append(f"{path}: {value} < minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            out.append(f"{path}: {value} > maximum {schema['maximum']}")
    if isinstance(value, (list, tuple)):
        if "minItems" in schema and len(value) < schema["minItems"]:
            out.append(f"{path}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            out.append(f"{path}: more than {schema['maxItems']} items")
        if "items" in schema:
            for i, v in enumerate(value):
                _errors(v, schema["items"], root, f"{path}[{i}]", out)
    if isinstance(value, Mapping):
        for key in schema.get("required", ()):
            if key not in value:
                out.append(f"{path}: missing required key {key!r}")
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, v in value.items():
            sub = f"{path}.{key}"
            if key in props:
                _errors(v, props[key], root, sub, out)
            elif extra is False:
                out.append(f"{sub}: unexpected key")
            elif isinstance(extra, Mapping):
                _errors(v, extra, root, sub, out)


def _collect(value: Any, schema: Mapping[str, Any], root: Mapping[str, Any], path: str) -> list[str]:
    out: list[str] = []
    _errors(value, schema, root, path, out)
    return out


def schema_errors(data: Any, schema: Mapping[str, Any]) -> list[str]:
    """Every violation of ``schema`` in ``data`` as ``"$.path: problem"`` strings (empty when valid)."""
    return _collect(data, schema, schema, "$")


def validate(data: Any, schema: Mapping[str, Any] = REPORT_SCHEMA, what: str = "report") -> None:
    """Raise :class:`ReportFormatError` listing the first violations when ``data`` does not match."""
    errs = schema_errors(data, schema)
    if errs:
        more = f" (and {len(errs) - 10} more)" if len(errs) > 10 else ""
        raise ReportFormatError(f"invalid {what}: " + "; ".join(errs[:10]) + more)


def validate_report(data: Any, what: str = "report") -> None:
    """Check a session report (also a history run or a merged report) against :data:`REPORT_SCHEMA`.

    A report from a newer major version is refused with a message naming both versions.
    """
    if isinstance(data, Mapping) and data.get("schema") == REPORT_SCHEMA_ID:
        v = data.get("version")
        if isinstance(v, int) and v > REPORT_VERSION:
            raise ReportFormatError(f"{what} has report version {v}; this pytest-judgerel reads version "
                                    f"{REPORT_VERSION} (upgrade pytest-judgerel)")
    validate(data, REPORT_SCHEMA, what)


def validate_baseline(data: Any, what: str = "baseline") -> None:
    """Check a baseline file against :data:`BASELINE_SCHEMA`."""
    if isinstance(data, Mapping) and data.get("schema") == BASELINE_SCHEMA_ID:
        v = data.get("version")
        if isinstance(v, int) and v > BASELINE_VERSION:
            raise ReportFormatError(f"{what} has baseline version {v}; this pytest-judgerel reads version "
                                    f"{BASELINE_VERSION} (upgrade pytest-judgerel)")
    validate(data, BASELINE_SCHEMA, what)
