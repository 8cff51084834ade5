"""Pairwise comparison gates end to end: real HTTP to a loopback chat server whose replies come
from a per-request script reading the two answers in the prompt (and, on some items, preferring
whatever is shown first), through the judge's client with its disk cache."""

import json
import re

import pytest

from pytest_judgerel import (Judge, JudgePanel, JudgeReliabilityFailure, assert_better, assert_not_worse,
                             assert_ranking, assert_verdict_agreement)
from pytest_judgerel.llm import LLMClient, LLMSettings

N = 40


def _answers(share_better: float, n: int = N) -> tuple[list[dict], dict, dict]:
    """Items whose candidate answer is right on the first ``share_better`` of them (the baseline's
    wrong there) and wrong on the rest (the baseline's right)."""
    items, cand, base = [], {}, {}
    for k in range(n):
        iid = f"q{k:02d}"
        a, b = k + 3, 2 * k + 1
        items.append({"id": iid, "question": f"What is {a} + {b}?"})
        right, wrong = f"{a} + {b} = {a + b}.", f"{a} + {b} = {a + b + 2}."
        better = k < round(share_better * n)
        cand[iid], base[iid] = (right, wrong) if better else (wrong, right)
    return items, cand, base


def _right(question: str, answer: str) -> bool:
    a, b = map(int, re.findall(r"\d+", question)[:2])
    return answer.strip().endswith(f"= {a + b}.")


def shown(request) -> tuple[str, str, str]:
    """The question and the answers shown as A and B in a pairwise prompt."""
    text = request.messages[-1]["content"]
    question = re.search(r"\[Question\]\n(.*?)\n", text).group(1)
    first = re.search(r"\[Assistant A's answer begins\]\n(.*?)\n\[", text, re.S).group(1)
    second = re.search(r"\[Assistant B's answer begins\]\n(.*?)\n\[", text, re.S).group(1)
    return question, first, second


def script(request) -> str:
    """The judge: checks both sums; on questions about 7 it prefers the first answer (position bias)."""
    question, first, second = shown(request)
    if " 7 " in question:
        return "Assistant A answers first and well.\n[[A]]"
    ok_a, ok_b = _right(question, first), _right(question, second)
    if ok_a == ok_b:
        return "Both answers are equally correct.\n[[C]]"
    winner = "A" if ok_a else "B"
    loser = "B" if ok_a else "A"
    return f"Assistant {winner}'s sum is right; assistant {loser}'s sum is off by two.\n[[{winner}]]"


@pytest.fixture
def judge_server(fake_llm_server):
    fake_llm_server.responder = script
    return fake_llm_server


def _judge(server, client, **kw):
    return Judge(model="openai/fake", api_base=server.url, api_key="sk-test", client=client, **kw)


def test_a_candidate_better_on_70_percent_passes_and_its_calls_replay_from_the_cache(tmp_path, judge_server):
    items, cand, base = _answers(0.7)
    settings = LLMSettings(cache_dir=str(tmp_path / "cache"))
    with LLMClient(settings) as c1:
        first = _judge(judge_server, c1).compare(items, candidate=cand, baseline=base, repeats=2)
    assert judge_server.requests == N * 2 * 2
    assert first.n_items == N and first.n_unreadable == 0
    inc = first.position_inconsistency()
    assert inc.count == 2 and inc.n == N * 2  # q04 (4 + 7) at both repeats: the first-shown answer always wins
    result = assert_better(first, alpha=0.05)
    assert result is first
    with LLMClient(settings) as c2:
        second = _judge(judge_server, c2).compare(items, candidate=cand, baseline=base, repeats=2)
        assert c2.stats.hits == N * 4 and c2.stats.misses == 0
    assert judge_server.requests == N * 4  # nothing new reached the server
    assert second.outcomes() == first.outcomes()


def test_a_worse_candidate_fails_not_worse_naming_its_worst_items_and_quoting_the_judge(tmp_path, judge_server,
                                                                                         _private_metric_sink):
    items, cand, base = _answers(0.3)
    with LLMClient(LLMSettings(cache_mode="off")) as c:
        comparison = _judge(judge_server, c).compare(items, candidate=cand, baseline=base, repeats=1,
                                                     names=("v2", "v1"))
    with pytest.raises(JudgeReliabilityFailure) as info:
        assert_not_worse(comparison, margin=0.1, alpha=0.05)
    msg = str(info.value)
    assert "v2 is not shown no worse than v1" in msg and "one-sided 95% lower bound" in msg
    assert "items the candidate lost most clearly" in msg
    assert re.search(r"q12: candidate score 0\.00; judge: \"Assistant [AB]'s sum is right; assistant [AB]'s sum is "
                     r"off by two\. \[\[[AB]\]\]\"", msg), msg
    rec = [r for r in _private_metric_sink if r.get("kind") == "pairwise"][-1]
    assert rec["passed"] is False and rec["hypothesis"] == "not_worse" and rec["threshold"] == pytest.approx(0.4)
    assert rec["losses"] > rec["wins"] and len(rec["worst_items"]) == 5
    assert all(w["item"] >= "q12" for w in rec["worst_items"])  # items 0-11 the candidate won
    json.dumps(rec)


def test_unreadable_verdicts_are_counted_never_guessed(tmp_path, judge_server):
    items, cand, base = _answers(0.7, 10)
    judge_server.responder = lambda req: "I think both are fine, maybe A?" if "What is 3 +" in req.messages[-1]["content"] \
        else script(req)
    with LLMClient(LLMSettings(cache_mode="off")) as c:
        comparison = _judge(judge_server, c, reask=False).compare(items, candidate=cand, baseline=base, repeats=1)
    assert comparison.n_unreadable == 2 and len(comparison.parse_failures) == 2
    assert comparison.outcomes()["q00"] == [None, None] and comparison.win_rate().n_omitted == 1
    with pytest.raises(JudgeReliabilityFailure, match="could not be parsed"):
        assert_not_worse(comparison, max_parse_failures=0)
    with pytest.raises(JudgeReliabilityFailure, match=r"9 items, 18 verdicts .* 2 unreadable"):
        assert_not_worse(comparison, margin=0.2, max_parse_failures=2)  # within the limit: computed on 9 items


def test_a_jury_keeps_each_judges_verdicts_and_names_its_rule(judge_server, _private_metric_sink):
    items, cand, base = _answers(0.7, 30)
    with LLMClient(LLMSettings(cache_mode="off")) as c:
        panel = JudgePanel(_judge(judge_server, c), ["openai/m1", "openai/m2", "openai/m3"], rule="majority",
                           tie_rule="loss")
        comparison = panel.compare(items, candidate=cand, baseline=base)
    assert set(comparison.per_judge) == {"openai/m1", "openai/m2", "openai/m3"}
    assert comparison.jury.rule == "majority" and comparison.jury.tie_rule == "loss"
    assert_better(comparison)
    rec = [r for r in _private_metric_sink if r.get("kind") == "pairwise"][-1]
    assert rec["jury"]["rule"] == "majority" and set(rec["jury"]["per_judge"]) == set(comparison.per_judge)
    assert "effective_judges" in rec["jury"]


def test_ranking_of_three_systems(judge_server):
    items, good, bad = _answers(1.0, 30)
    mid = {k: (good[k] if n % 2 else bad[k]) for n, k in enumerate(good)}
    with LLMClient(LLMSettings(cache_mode="off")) as c:
        j = _judge(judge_server, c)
        comps = [j.compare(items, candidate=good, baseline=mid, repeats=1, names=("good", "mid")),
                 j.compare(items, candidate=mid, baseline=bad, repeats=1, names=("mid", "bad"))]
    fit = assert_ranking(comps, ["good", "mid", "bad"], n_boot=200)
    assert fit.ranking() == ["good", "mid", "bad"]
    with pytest.raises(JudgeReliabilityFailure, match="the ranking bad > mid > good is not shown"):
        assert_ranking(comps, ["bad", "mid", "good"], n_boot=200)


def test_verdict_agreement_gate_names_the_disagreeing_items():
    human = {f"c{k}": k % 4 != 0 for k in range(40)}
    judge = dict(human, c1=False, c2=False, c0=True)
    assert_verdict_agreement(judge, human, min_ac1=0.6, min_tpr=0.8)
    with pytest.raises(JudgeReliabilityFailure) as info:
        assert_verdict_agreement(judge, human, min_kappa=0.95, min_tnr=0.95)
    msg = str(info.value)
    assert "judge passed, humans failed: c0" in msg and "judge failed, humans passed: c1, c2" in msg
    assert "Cohen's kappa" in msg and "TNR 0.900" in msg and "base rate" in msg


INNER = r'''
import re
import pytest
from pytest_judgerel import Judge, JudgePanel, assert_better, assert_not_worse

def script(request):
    text = request.messages[-1]["content"]
    q = re.search(r"\[Question\]\n(.*?)\n", text).group(1)
    total = sum(map(int, re.findall(r"\d+", q)[:2]))
    a = re.search(r"A's answer begins\]\n(.*?)\n\[", text, re.S).group(1).endswith(f"= {total}.")
    b = re.search(r"B's answer begins\]\n(.*?)\n\[", text, re.S).group(1).endswith(f"= {total}.")
    return "[[C]]" if a == b else "A is right.\n[[A]]" if a else "B is right.\n[[B]]"

ITEMS = [{"id": f"q{k:02d}", "question": f"What is {k + 3} + {2 * k + 1}?"} for k in range(40)]
RIGHT = {f"q{k:02d}": f"{k + 3} + {2 * k + 1} = {3 * k + 4}." for k in range(40)}
WRONG = {f"q{k:02d}": f"{k + 3} + {2 * k + 1} = {3 * k + 6}." for k in range(40)}
NEW = {i: (RIGHT[i] if n < 28 else WRONG[i]) for n, i in enumerate(RIGHT)}
OLD = {i: (WRONG[i] if n < 28 else RIGHT[i]) for n, i in enumerate(RIGHT)}

@pytest.fixture
def judge(fake_llm_server, judgerel_client):
    fake_llm_server.responder = script
    yield Judge(model="openai/fake", api_base=fake_llm_server.url, client=judgerel_client, repeats=2)
    print("REQUESTS", fake_llm_server.requests)

def test_prompt_change(judge):
    assert_better(judge.compare(ITEMS, candidate=NEW, baseline=OLD), label="v2 vs v1")

def test_jury(judge):
    panel = JudgePanel(judge, ["openai/a", "openai/b", "openai/c"], rule="majority", tie_rule="loss")
    assert_not_worse(panel.compare(ITEMS, candidate=NEW, baseline=OLD), margin=0.1)
'''


def test_in_a_pytest_session_the_comparison_is_reported_and_replays_from_the_cache(pytester, tmp_path, monkeypatch):
    from pytest_judgerel.report.schema import validate_report

    monkeypatch.setenv("JUDGEREL_API_KEY", "k")
    pytester.makepyfile(test_compare=INNER)
    cache = f"--judgerel-cache-dir={tmp_path / 'c'}"
    first = pytester.runpytest("-s", "-p", "no:xdist", cache, "--judgerel-json=out.json", "--judgerel-html=out.html")
    first.assert_outcomes(passed=2)
    assert "REQUESTS 160" in first.stdout.str() and "REQUESTS 240" in first.stdout.str()
    report = json.loads((pytester.path / "out.json").read_text())
    validate_report(report)
    recs = sorted((r for t in report["tests"] for r in t["records"] if r["kind"] == "pairwise"),
                  key=lambda r: r["label"] is None)
    assert [r["label"] for r in recs] == ["v2 vs v1", None]
    assert recs[0]["value"] == pytest.approx(0.7) and recs[0]["hypothesis"] == "better"
    assert recs[1]["jury"]["rule"] == "majority" and recs[1]["jury"]["tie_rule"] == "loss"
    assert "win rate" in first.stdout.str()
    assert re.search(r"jury: test_compare.py::test_jury: PASS by a jury of 3 \(openai/a, openai/b, openai/c\), "
                     r"rule majority \(tie rule: loss\); (worth \d\.\d independent judges|effective number of judges n/a)",
                     first.stdout.str()), first.stdout.str()
    html = (pytester.path / "out.html").read_text()
    assert "Verdicts of juries" in html and "rule majority (tie rule: loss)" in html
    second = pytester.runpytest("-s", "-p", "no:xdist", cache, "--judgerel-cache-mode=replay")
    second.assert_outcomes(passed=2)
    assert "REQUESTS 0" in second.stdout.str()


def test_a_dry_run_plans_the_comparison_without_calling_and_the_budget_caps_it(tmp_path, judge_server):
    from pytest_judgerel.errors import BudgetExceededError

    items, cand, base = _answers(0.7, 12)
    with LLMClient(LLMSettings(cache_dir=str(tmp_path / "c"), dry_run=True)) as c:
        planned = _judge(judge_server, c).compare(items, candidate=cand, baseline=base, repeats=2)
    assert judge_server.requests == 0
    assert planned.n_unreadable == 0 and len(planned.verdicts) == 24  # placeholders that parse
    with LLMClient(LLMSettings(cache_dir=str(tmp_path / "c"), max_calls=10)) as c:
        with pytest.raises(BudgetExceededError):
            _judge(judge_server, c).compare(items, candidate=cand, baseline=base, repeats=2)
    assert judge_server.requests <= 10


def test_a_comparison_is_a_baseline_metric_with_item_scores(judge_server, _private_metric_sink):
    from pytest_judgerel.report.metrics import metric_points

    items, cand, base = _answers(0.7, 20)
    with LLMClient(LLMSettings(cache_mode="off")) as c:
        assert_not_worse(_judge(judge_server, c).compare(items, candidate=cand, baseline=base, repeats=1),
                         label="v2 vs v1")
    [point] = metric_points([r for r in _private_metric_sink if r.get("kind") == "pairwise"])
    assert point.name == "win rate [v2 vs v1]" and point.direction == "min" and point.value == pytest.approx(13.5 / 20)  # q04 is a position-biased draw
    assert point.item_scores["q00"] == 0.0 and point.item_scores["q19"] == 1.0  # loss per item, for the paired test


def test_human_labels_on_a_subset_make_the_gate_test_the_ppi_human_win_rate(judge_server, _private_metric_sink):
    items, cand, base = _answers(0.7, 40)
    with LLMClient(LLMSettings(cache_mode="off")) as c:
        comparison = _judge(judge_server, c).compare(items, candidate=cand, baseline=base, repeats=1)
    # humans label 20 items and side with the candidate on fewer than the judge does
    human = {f"q{k:02d}": ("candidate" if k < 14 and k % 3 else "baseline") for k in range(0, 40, 2)}
    with pytest.raises(JudgeReliabilityFailure, match=r"human win rate \(PPI\+\+\) = [0-9.]+ \[90% PPI\+\+ CI"):
        assert_better(comparison, human=human)
    rec = [r for r in _private_metric_sink if r.get("kind") == "pairwise"][-1]
    assert rec["statistic"] == "human win rate (PPI++)" and rec["human"]["n_labeled"] == 20
    assert rec["value"] < rec["judge_win_rate"]["value"]
