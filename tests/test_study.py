"""The seed-001 grading-scale study on vendored human data with scripted judges."""

import re

import numpy as np
import pytest

from pytest_judgerel import Ratings, load_dataset
from pytest_judgerel.llm import LLMClient, LLMSettings, register_scripted, unregister_scripted
from pytest_judgerel.study.analysis import analyse, human_panel_reliability, run_study


@pytest.fixture
def client(tmp_path):
    with LLMClient(LLMSettings(cache_dir=str(tmp_path / "cache"))) as c:
        yield c


def test_human_panel_complete_and_uncrossed():
    summ = load_dataset("summeval_op", criterion="fluency").ratings()
    p = human_panel_reliability(summ, "summeval_op")
    assert p.forms == ("A,1", "A,k") and p.average.value > p.single.value
    sq = load_dataset("squality", criterion="overall").ratings()  # 3 of 4 reviewers per item
    q = human_panel_reliability(sq, "squality")
    assert q.forms == ("1,1", "1,k") and "not crossed" in q.note
    assert q.average.n == 300 and q.average.n0 == 3 and q.average.n_ratings == 900


def _gold_oracle(gold):
    """A scripted judge that answers the human consensus, mapped to the scale in the prompt."""

    def answer(messages, **params):
        user = messages[-1]["content"]
        lo, hi = map(float, re.search(r"scale from “(\d+)” to “(\d+)”", user).groups())
        key = re.search(r"Sentence 1: “(.*?)”", user).group(1)
        return str(round(lo + gold[key] / 5.0 * (hi - lo), 1))

    return answer


def test_run_study_end_to_end_on_stsb(client):
    ds = load_dataset("stsb", subset=20)
    gold = {it["sentence1"]: v for it, v in zip(ds.items, ds.consensus())}
    good = register_scripted("scripted/gold", _gold_oracle(gold))
    rng = np.random.default_rng(0)
    noise = {k: float(rng.uniform(0, 5)) for k in gold}
    bad = register_scripted("scripted/random", _gold_oracle(noise))
    try:
        res = run_study({"stsb": ds}, [good, bad], scales=("0-5", "0-10", "0-100"), client=client)
    finally:
        unregister_scripted(good)
        unregister_scripted(bad)
    row = res.agreement_for(good, "0-5", "stsb")
    assert row.icc > 0.99 and row.nmae < 0.02
    assert res.agreement_for(bad, "0-5", "stsb").icc < 0.6
    assert res.consistency[(good, "stsb")].joint.value > 0.99
    assert ("stsb", "0-10") in res.llm_panels
    assert any(e["model"] == bad for e in res.errors)
    assert not any(e["model"] == good for e in res.errors)
    assert "Human-LLM agreement" in res.summary()


def test_hidden_weak_agreement_is_flagged():
    rng = np.random.default_rng(1)
    truth_a, truth_b = rng.uniform(0, 5, 40), rng.uniform(2, 3, 40)
    human = {
        "a": Ratings.from_array(np.clip(truth_a[:, None] + rng.normal(0, .2, (40, 3)), 0, 5), scale="0-5"),
        "b": Ratings.from_array(np.clip(truth_b[:, None] + rng.normal(0, .2, (40, 3)), 0, 5), scale="0-5",
                                item_ids=[f"b{i}" for i in range(40)]),
    }
    judged = {
        ("m", "0-5", "a"): Ratings.from_array(np.clip(truth_a + rng.normal(0, .2, 40), 0, 5)[:, None], scale="0-5"),
        ("m", "0-5", "b"): Ratings.from_array(rng.uniform(2, 3, 40)[:, None], scale="0-5",
                                              item_ids=[f"b{i}" for i in range(40)]),
    }
    res = analyse(human, judged, illusion_threshold=0.6)
    pooled = res.agreement_for("m", "0-5")
    assert pooled.icc > 0.6
    assert [i.group for i in res.agreement_illusions] == ["benchmark b"]
    assert "hidden weak agreement: m on 0-5" in str(res.agreement_illusions[0])
    assert not res.reliability_illusions  # one model: no LLM panel, no reliability illusion
