"""Metric records are typed for real: one TypedDict per kind, checked at run time
by the one path every record takes, and the report schema declares exactly their keys."""

from __future__ import annotations

import math
from typing import Any, Literal, Union, get_args, get_origin, is_typeddict

import numpy as np
import pytest

from pytest_judgerel import (
    Ratings,
    assert_agreement,
    assert_icc_above,
    assert_pass_rate,
    assert_scale_consistent,
)
from pytest_judgerel.gates.conclusion import JudgeReliabilityFailure
from pytest_judgerel.gates.human_mean import assert_human_mean_above, assert_human_mean_difference
from pytest_judgerel.gates.mindeval import assert_judge_agrees_with_humans, assert_mindeval_score
from pytest_judgerel.report.schema import REPORT_SCHEMA, schema_errors
from pytest_judgerel.session.recording import (
    RECORD_TYPES,
    Recorder,
    RecordError,
    check_record,
    new_record,
    record_keys,
    recording,
)

RECORD_SCHEMA = REPORT_SCHEMA["$defs"]["record"]


def _json_types(tp: Any) -> set[str]:
    """The JSON Schema type names a value of annotation ``tp`` can take."""
    origin = get_origin(tp)
    if origin is Union or (origin is not None and origin.__name__ == "UnionType"):
        return set().union(*(_json_types(a) for a in get_args(tp)))
    if origin is Literal:
        return {"string"}
    if tp is type(None):
        return {"null"}
    if tp is Any:
        return {"any"}
    if origin is list:
        return {"array"}
    if origin is dict or is_typeddict(tp):
        return {"object"}
    return {{bool: "boolean", int: "integer", float: "number", str: "string"}[tp]}


def _schema_types(prop: dict[str, Any]) -> set[str]:
    if "enum" in prop:
        return {"string"}
    types = prop.get("type", "any")
    return {types} if isinstance(types, str) else set(types)


def test_every_declared_key_is_in_the_schema_and_every_schema_key_is_declared():
    declared = set().union(*(record_keys(cls) for cls in RECORD_TYPES.values()))
    in_schema = set(RECORD_SCHEMA["properties"])
    assert declared - in_schema == set(), "declared by a record type, missing in report/schema.py"
    assert in_schema - declared == set(), "in report/schema.py, declared by no record type"


@pytest.mark.parametrize("kind", sorted(RECORD_TYPES))
def test_the_schema_allows_every_json_type_a_record_type_declares(kind: str):
    for key, tp in record_keys(RECORD_TYPES[kind]).items():
        prop = RECORD_SCHEMA["properties"][key]
        allowed = _schema_types(prop)
        if "any" in allowed:
            continue
        # an int is a JSON number as well
        wanted = _json_types(tp) - ({"integer"} if "number" in allowed else set())
        assert wanted <= allowed, f"{kind}.{key}: declared {tp}, schema allows {sorted(allowed)}"
        if get_origin(tp) is Literal or any(get_origin(a) is Literal for a in get_args(tp)):
            values = set(get_args(tp)) if get_origin(tp) is Literal else \
                {v for a in get_args(tp) if get_origin(a) is Literal for v in get_args(a)}
            assert values <= set(prop["enum"]), f"{kind}.{key}: {values} vs the schema's {prop['enum']}"


def test_an_undeclared_key_is_refused_naming_kind_key_and_type():
    with pytest.raises(RecordError, match=r"'icc' record: key 'icc_value' is not declared by IccRecord"):
        new_record("icc", statistic="ICC(A,1)", icc_value=0.8)


@pytest.mark.parametrize("fields, message", [
    ({"n": 2.5}, r"'icc' record\['n'\] must be int \| None, got float 2.5"),
    ({"passed": "yes"}, r"'icc' record\['passed'\] must be bool \| None, got str 'yes'"),
    ({"direction": "up"}, r"'icc' record\['direction'\] must be one of \['min', 'max'\], got 'up'"),
    ({"groups": {"a": {"value": "high"}}}, r"'icc' record\['groups'\]\['a'\]\['value'\] must be float \| None"),
    ({"checks": [{"statistic": "nMAE", "bound": 1}]}, r"\['checks'\]\[0\]: key 'bound' is not declared by Check"),
    ({"worst_items": {"item": "a"}}, r"\['worst_items'\] must be list\[.*WorstItem\], got dict"),
])
def test_a_value_of_the_wrong_type_is_refused(fields: dict[str, Any], message: str):
    with pytest.raises(RecordError, match=message):
        new_record("icc", **fields)


def test_an_unknown_kind_is_refused():
    with pytest.raises(RecordError, match=r"record kind 'icc_v2' is not declared: one of \['agreement'"):
        new_record("icc_v2", value=1.0)
    with pytest.raises(RecordError, match="record kind None"):
        check_record({"value": 1.0})  # type: ignore[typeddict-item]


def test_numpy_scalars_and_non_finite_floats_count_as_the_json_they_become():
    rec = new_record("icc", value=np.float64(0.5), n=np.int64(12), passed=np.bool_(True), ci=(0.1, math.nan))
    with recording() as recorder:
        recorder.record(rec)
    stored = recorder.records[0]
    assert stored == {"kind": "icc", "value": 0.5, "n": 12, "passed": True, "ci": [0.1, None]}
    assert type(stored["n"]) is int and type(stored["passed"]) is bool


def test_the_recorder_checks_even_when_it_keeps_nothing():
    with pytest.raises(RecordError, match="not declared"):
        Recorder(keep=False).record({"kind": "icc", "bogus": 1})  # type: ignore[typeddict-unknown-key]


def _records_of_every_gate() -> list[dict[str, Any]]:
    rng = np.random.default_rng(3)
    truth = np.linspace(0, 5, 20)
    ratings = Ratings.from_array(np.column_stack([truth + rng.normal(0, 0.4, 20) for _ in range(3)]),
                                 item_groups={"bench": ["a"] * 10 + ["b"] * 10})
    judge = Ratings.from_array(np.clip(truth + rng.normal(0, 0.5, 20), 0, 5)[:, None], scale="0-5")
    human = Ratings.from_array(np.column_stack([np.clip(truth + rng.normal(0, 0.4, 20), 0, 5) for _ in range(2)]),
                               scale="0-5")
    f, y = rng.normal(3, 1, 30), rng.normal(3, 1, 30)
    axes = ("CAC", "EPC", "AR", "TRA", "ASCQ")
    with recording(report_only=True) as rec:
        assert_icc_above(ratings, 0.99, by="bench")
        assert_icc_above(np.ones((5, 3)), 0.5)  # a constant judge: not computed
        assert_scale_consistent({"0-5": truth, "0-10": truth * 2 + rng.normal(0, 0.3, 20)}, 0.7)
        assert_agreement(judge, human, min_icc=0.5, max_nmae=0.05)
        assert_agreement(judge, human, max_nmae=0.3)
        assert_pass_rate(40, 50, min_rate=0.9, calibration=[(1, 1)] * 20 + [(0, 0)] * 18 + [(1, 0)] * 2)
        assert_human_mean_above(f[:10], y[:10], f[10:], min_mean=4.0)
        assert_human_mean_difference((f[:10], y[:10], f[10:]), (f[:10] - 0.2, y[:10], f[10:] - 0.2),
                                     min_difference=0.5)
        assert_mindeval_score([{a: 4.0 for a in axes}] * 4 + [None], min_mean=5.0)
        assert_judge_agrees_with_humans([4.0, 2.0, 5.0, 1.0, 3.0], [[4.0], [2.0], [5.0], [1.0], [3.0]],
                                        min_kendall=0.5)
    return rec.records


def test_every_gate_records_its_kind_and_the_schema_accepts_it():
    records = _records_of_every_gate()
    kinds = {r["kind"] for r in records}
    assert kinds == {"icc", "scale_consistency", "agreement", "nmae", "pass_rate", "human_mean",
                     "human_mean_difference", "mindeval_score"}
    for rec in records:
        check_record(rec)
        assert schema_errors(rec, {**RECORD_SCHEMA, "$defs": REPORT_SCHEMA["$defs"]}) == [], rec["kind"]
        assert set(rec) <= set(record_keys(RECORD_TYPES[rec["kind"]]))
    failed = [r for r in records if r["kind"] == "icc" and r.get("error")]
    assert failed and failed[0]["value"] is None and failed[0]["passed"] is False


def test_a_gate_that_records_a_wrong_value_fails_loudly(monkeypatch: pytest.MonkeyPatch):
    """finish() checks a gate's record before concluding: a typo in a gate cannot reach the report."""
    from pytest_judgerel.gates import common

    real = common.gate_fields

    def typo(*args: Any, **kwargs: Any) -> Any:
        return {**real(*args, **kwargs), "treshold": 0.5}

    monkeypatch.setattr(common, "gate_fields", typo)
    monkeypatch.setattr("pytest_judgerel.gates.reliability.gate_fields", typo)
    with recording() as rec, pytest.raises(RecordError, match="key 'treshold' is not declared by IccRecord"):
        assert_icc_above(np.column_stack([np.arange(8.0), np.arange(8.0) + 0.1]), 0.5)
    assert rec.records == []


def test_a_failing_gate_carries_its_typed_record():
    with recording(), pytest.raises(JudgeReliabilityFailure) as info:
        assert_pass_rate(10, 50, min_rate=0.9, calibration=[(1, 1)] * 20 + [(0, 0)] * 20)
    assert info.value.record["kind"] == "pass_rate" and info.value.record["passed"] is False
    check_record(info.value.record)
