"""Pairwise gates: tests written for the bugs of ``tools/mutation/held_out_batch5.py`` that the
earlier tests let through (PW07, PW10, PW11, PW15), over HTTP to the loopback server with the
judge script of tests/test_pairwise_gates.py (it checks both sums in the prompt)."""

from __future__ import annotations

import pytest

from pytest_judgerel import JudgeReliabilityFailure, assert_better, assert_not_worse, assert_ranking
from pytest_judgerel.llm import LLMClient, LLMSettings
from test_pairwise_gates import _answers, _judge, script


@pytest.fixture
def judge_server(fake_llm_server):
    fake_llm_server.responder = script
    return fake_llm_server


def _compare(server, items, cand, base, **kw):
    with LLMClient(LLMSettings(cache_mode="off")) as client:
        return _judge(server, client).compare(items, candidate=cand, baseline=base, **kw)


def test_assert_better_holds_the_candidate_to_half_plus_its_margin(judge_server, _private_metric_sink):
    """PW07: a candidate right on 80% of 40 items is better (margin 0) but not by 0.3."""
    comparison = _compare(judge_server, *_answers(0.8))
    assert_better(comparison)
    with pytest.raises(JudgeReliabilityFailure, match=r"does not exceed 0\.800 \(0\.5 \+ margin 0\.3\)"):
        assert_better(comparison, margin=0.3)
    rec = [r for r in _private_metric_sink if r.get("kind") == "pairwise"][-1]
    assert rec["threshold"] == pytest.approx(0.8) and rec["passed"] is False


def test_tied_items_are_not_listed_among_the_items_the_candidate_lost(judge_server, _private_metric_sink):
    """PW10: 17 items both answers right (ties), 3 the candidate wrong: the failure names those 3 only."""
    items, cand, base = _answers(1.0, 20)
    for k in range(17):
        cand[f"q{k:02d}"] = base[f"q{k:02d}"] = cand[f"q{k:02d}"]  # both right: a tie
    for k in range(17, 20):
        cand[f"q{k:02d}"], base[f"q{k:02d}"] = base[f"q{k:02d}"], cand[f"q{k:02d}"]  # the candidate wrong
    comparison = _compare(judge_server, items, cand, base)
    assert comparison.win_rate().ties >= 32
    with pytest.raises(JudgeReliabilityFailure):
        assert_not_worse(comparison, margin=0.05)
    rec = [r for r in _private_metric_sink if r.get("kind") == "pairwise"][-1]
    assert [w["item"] for w in rec["worst_items"]] == ["q17", "q18", "q19"]


def test_a_ranking_is_shown_only_when_the_lower_bound_clears_the_threshold(judge_server):
    """PW11: system a beats b on 22 of 40 items: fitted P(a beats b) is above 0.5, its one-sided 95%
    lower bound is not, so the order a > b is not shown."""
    items, cand, base = _answers(0.55)
    comparison = _compare(judge_server, items, cand, base, names=("a", "b"))
    with pytest.raises(JudgeReliabilityFailure, match="the ranking a > b is not shown") as info:
        assert_ranking([comparison], ["a", "b"], n_boot=300)
    assert "P(a beats b) = 0.5" in str(info.value)


def test_every_repeat_of_an_item_is_filed_under_that_item(judge_server):
    """PW15: with 2 repeats, the candidate wins every verdict of the first 5 items and loses every
    verdict of the last 5 (no item about 7, so no position bias)."""
    items, cand, base = _answers(0.5, 10)
    keep = [i for i in items if " 7 " not in i["question"]]
    comparison = _compare(judge_server, keep, cand, base, repeats=2)
    outcomes = comparison.outcomes()
    for item in keep:
        k = int(item["id"][1:])
        assert outcomes[item["id"]] == [1.0 if k < 5 else 0.0] * 4, (item["id"], outcomes[item["id"]])
    assert sorted((v.item, v.repeat) for v in comparison.verdicts) == sorted(
        (i["id"], r) for i in keep for r in range(2))
