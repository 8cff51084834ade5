"""A sequential gate that ends on a failure path (too many unparsed replies, a statistic that
cannot be computed) still records what it drew: its record carries the ``sequential`` block."""

from __future__ import annotations

import json
import re

import pytest

from pytest_judgerel import Judge, JudgeReliabilityFailure, ReliabilityError, assert_human_mean_above, \
    assert_icc_above
from pytest_judgerel.session.recording import check_record, recording


def _judge(scripted, name, fn, **kw):
    """A sequential judge on its own scripted model (a model of its own: no cached answer of another test)."""
    scripted(f"scripted/{name}", fn)
    return Judge(model=f"scripted/{name}", template="stsb", sequential=True, **kw)


def _items(n, tag="a"):
    return [{"id": f"{tag}{i}", "sentence1": f"sentence-{i}-{tag}", "sentence2": "b"} for i in range(n)]


def _item(messages) -> int:
    return int(re.search(r"sentence-(\d+)-", json.dumps(messages)).group(1))


def _only(rec, kind):
    (found,) = [r for r in rec.records if r["kind"] == kind]
    check_record(found)
    return found


def test_icc_with_too_many_unparsed_replies_records_the_drawing(scripted):
    judge = _judge(scripted, "seq-unparsed", lambda messages, **p: "no score" if _item(messages) < 3 else str(_item(messages) % 6),
                   repeats=10)
    with recording() as rec, pytest.raises(JudgeReliabilityFailure, match="could not be parsed"):
        assert_icc_above(judge.rate(_items(20)), 0.7, max_parse_failures=2)
    icc_rec = _only(rec, "icc")
    block = icc_rec["sequential"]
    assert icc_rec["value"] is None and icc_rec["passed"] is False
    assert block["stop"] == "parse failures" and block["used"] == 2 and block["cap"] == 10
    # the first look: 2 repeats of the first 10 of the 20 items in the judging order (items 0-2 among them)
    assert block["calls"] == 20 and block["cap_calls"] == 200 and block["saved_calls"] == 180
    assert "max_parse_failures=2" in block["reason"] and block["looks"] == []


def test_icc_that_cannot_be_computed_records_the_drawing(scripted):
    judge = _judge(scripted, "seq-constant", lambda messages, **p: "3", repeats=6)  # a constant judge: no ICC
    with recording() as rec, pytest.raises(ReliabilityError):
        assert_icc_above(judge.rate(_items(12)), 0.7)
    icc_rec = _only(rec, "icc")
    block = icc_rec["sequential"]
    assert icc_rec["value"] is None and icc_rec["error"] and icc_rec["passed"] is False
    assert block["unit"] == "repeats" and block["cap"] == 6 and block["decision"] == "fail"
    last = block["looks"][-1]  # the look that stopped: its items (a first share of them, or all 12) x repeats
    assert block["calls"] == (last["items"] or 12) * block["used"] and len(block["looks"]) >= 1


def test_human_mean_with_too_many_unparsed_replies_records_the_drawing(scripted):
    def reply(messages, **params):
        item = _item(messages)
        return "??" if re.search(r"sentence-\d+-u", json.dumps(messages)) and item < 60 else str(4 if item % 5 else 3)

    judge = _judge(scripted, "seq-hm-unparsed", reply, repeats=1)
    unlabeled = [{"id": f"u{i}", "sentence1": f"sentence-{i}-u", "sentence2": "c"} for i in range(500)]
    human = [4 if i % 5 else 3 for i in range(40)]
    with recording() as rec, pytest.raises(JudgeReliabilityFailure, match="could not be parsed"):
        assert_human_mean_above(judge.rate(_items(40)), human, judge.rate(unlabeled), min_mean=3.0,
                                max_parse_failures=0)
    hm = _only(rec, "human_mean")
    block = hm["sequential"]
    assert hm["value"] is None and block["stop"] == "parse failures" and block["unit"] == "items"
    assert block["used"] < 500 and block["calls"] == block["used"] and block["cap_calls"] == 500
