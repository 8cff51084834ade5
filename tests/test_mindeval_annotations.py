"""Loader of MindEval-format human annotations, on small synthetic files written here."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from pytest_judgerel.errors import RatingsError
from pytest_judgerel.mindeval.annotations import (
    axis_scores_from_subcriteria,
    human_score_matrix,
    load_human_annotations,
)

MSGS = [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi, how are you?"}]
CRITS = (1, 2, 3, 4, 6, 7, 8, 9, 10, 11)


def _fields(values, spelling="underscore"):
    out = {}
    for c, v in zip(CRITS, values):
        # the release spells criterion11 without the underscore
        name = f"criterion_{c}" if (spelling == "underscore" and c != 11) else f"criterion{c}"
        out[name] = v
    return out


def write(tmp_path, records, name="ann.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


def test_list_of_annotators_layout(tmp_path):
    a1 = [4, 2, 5, 5, 3, 3, 4, 6, 2, 1]
    a2 = [0, 4, 6, 0, 2, 4, 4, 4, 3, 0]  # zeros are "not applicable"
    rec = {"id": "c1", "profile_id": "p1", "model": "gpt", "messages": MSGS,
           "annotations": [{"annotator": "P1", **_fields(a1)}, {"annotator": "P2", **_fields(a2, "plain")}]}
    (conv,) = load_human_annotations(write(tmp_path, [rec]))
    assert conv.conversation_id == "c1" and conv.patient_id == "p1" and conv.system == "gpt"
    assert conv.annotators == ("P1", "P2")
    assert conv.axis_scores[0] == {"CAC": 3.0, "EPC": 5.0, "AR": 3.0, "TRA": 5.0, "ASCQ": 2.0}
    # CAC = c2 only (c1 = 0 is missing); EPC = c3 only; AR = mean(2, 4); TRA = 4; ASCQ = 3
    assert conv.axis_scores[1] == {"CAC": 4.0, "EPC": 6.0, "AR": 3.0, "TRA": 4.0, "ASCQ": 3.0}
    assert math.isnan(conv.sub_scores[1][11])
    assert conv.annotator_mean("P1") == pytest.approx((3 + 5 + 3 + 5 + 2) / 5)
    assert conv.axis("ASCQ", "P2") == 3.0


def test_criterion_lists_layout_and_matrix(tmp_path):
    recs = []
    for k, model in enumerate(["a", "b"]):
        lists = {f"criterion_{c}" if c != 11 else "criterion11": [k + 2, k + 3, 0] for c in CRITS}
        recs.append({"conversation_id": f"c{k}", "member_id": "p1", "clinician_model": model, "messages": MSGS,
                     **lists})
    convs = load_human_annotations(write(tmp_path, recs))
    assert [c.annotators for c in convs] == [("0", "1", "2"), ("0", "1", "2")]
    mat = human_score_matrix(convs)
    assert mat.shape == (2, 3)
    assert mat[0, 0] == 2 and mat[1, 1] == 4 and np.isnan(mat[0, 2])  # all-zero annotator -> NaN
    assert human_score_matrix(convs, axis="CAC")[1, 0] == 3


def test_one_record_per_annotator_layout(tmp_path):
    recs = [
        {"id": "c1", "annotator": "A", "messages": MSGS, **_fields([5] * 10)},
        {"id": "c1", "annotator": "B", "messages": MSGS, **_fields([3] * 10)},
        {"id": "c2", "annotator": "A", "messages": MSGS, **_fields([1] * 10)},
    ]
    convs = load_human_annotations(write(tmp_path, recs))
    assert [c.annotators for c in convs] == [("A", "B"), ("A",)]
    mat = human_score_matrix(convs)
    assert mat.tolist()[0] == [5.0, 3.0] and mat[1, 0] == 1 and np.isnan(mat[1, 1])


def test_custom_axis_mapping_and_zero_policy(tmp_path):
    rec = {"id": "c", "annotations": [_fields([0, 2, 2, 2, 2, 2, 2, 2, 2, 2])]}
    (conv,) = load_human_annotations(write(tmp_path, [rec]), zero_is_missing=False)
    assert conv.axis_scores[0]["CAC"] == 1.0  # zero kept as a score
    (conv,) = load_human_annotations(write(tmp_path, [rec]), axis_subcriteria={"ALL": (1, 2, 11)})
    assert conv.axis_scores[0] == {"ALL": 2.0}
    assert math.isnan(axis_scores_from_subcriteria({1: math.nan}, {"X": (1,)})["X"])  # nothing available


@pytest.mark.parametrize("bad,msg", [
    ({"id": "c", "annotations": [{"criterion_1": 9}]}, "outside 0-6"),
    ({"id": "c", "annotations": [{"criterion_1": "good"}]}, "not a number"),
    ({"id": "c", "annotations": [{"note": 1}]}, "no criterion fields"),
    ({"id": "c", "messages": MSGS}, "no criterion"),
    ({"id": "c", "criterion_1": [1, 2], "criterion_2": [1]}, "different lengths"),
])
def test_bad_files_raise_with_location(tmp_path, bad, msg):
    with pytest.raises(RatingsError, match=msg) as info:
        load_human_annotations(write(tmp_path, [bad]))
    assert "ann.jsonl:1" in str(info.value)


def test_not_json(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text("{oops\n")
    with pytest.raises(RatingsError, match="x.jsonl:1: not valid JSON"):
        load_human_annotations(p)
