"""Is the new prompt better? Pairwise A/B gates, a jury, and a pass/fail judge against humans, offline.

A system answers 30 arithmetic questions with its old prompt (v1) and a new one (v2); a judge sees
both answers side by side (the MT-Bench pairwise prompt, Zheng et al. 2023) in both orders, so a
judge that prefers whatever it sees first cannot decide the outcome.  The gates:

1. ``assert_better``: v2 wins more than half the comparisons (ties split), with an interval over
   items (every repeat and both orders of an item together);
2. ``assert_not_worse``: a refactored prompt (v3) is no worse than v2 by more than a margin;
3. a jury of three judges combined by majority, with its tie rule, per-judge verdicts kept;
4. ``assert_verdict_agreement``: a pass/fail judge against human verdicts (kappa, AC1, TPR, TNR).

Scripted judges (Python functions registered as models) stand in for real ones, so the file runs
without a network; point ``model=`` at your own judge to use it for real.
"""

import re

import pytest

from pytest_judgerel import (JudgePanel, JudgeReliabilityFailure, assert_better, assert_not_worse,
                             assert_verdict_agreement)
from pytest_judgerel.llm import register_scripted

QUESTIONS = {f"q{i:02d}": (3 * i + 2, 7 * i % 11 + 4) for i in range(30)}
ITEMS = [{"id": q, "question": f"What is {a} + {b}?"} for q, (a, b) in QUESTIONS.items()]


def _answers(right_share: float) -> dict:
    """The system's answers: right on the first ``right_share`` of the questions, off by one after."""
    cut = round(right_share * len(QUESTIONS))
    return {q: f"{a} + {b} = {a + b + (0 if n < cut else 1)}." for n, (q, (a, b)) in enumerate(QUESTIONS.items())}


V1, V2, V3 = _answers(0.4), _answers(0.8), _answers(0.77)  # v3 misses one sum v2 gets right


def _right(text: str, slot: str) -> bool:
    question = re.search(r"\[Question\]\n(.*?)\n", text).group(1)
    a, b = map(int, re.findall(r"\d+", question)[:2])
    answer = re.search(rf"\[Assistant {slot}'s answer begins\]\n(.*?)\n\[", text, re.S).group(1)
    return answer.strip().endswith(f"= {a + b}.")


def checker(messages, **params):
    """Checks both sums; between two right (or two wrong) answers it prefers the first shown."""
    text = messages[-1]["content"]
    ok_a, ok_b = _right(text, "A"), _right(text, "B")
    if ok_a == ok_b:
        return "Both sums are equally right; the first reads slightly better.\n[[A]]"
    return f"Assistant {'A' if ok_a else 'B'} adds correctly; the other is off by one.\n[[{'A' if ok_a else 'B'}]]"


def lenient(messages, **params):
    """Prefers the first answer shown, whatever it says (a strong position bias)."""
    return "Assistant A's answer is better.\n[[A]]"


def pass_fail(messages, **params):
    """A 0-1 judge that checks the sum of the answer it is shown."""
    text = messages[-1]["content"]
    a, b = map(int, re.findall(r"\d+", text.split("Question: “")[1])[:2])
    return "1" if f"= {a + b}." in text.split("Answer to evaluate: “")[1] else "0"


for name, fn in [("checker", checker), ("checker-2", checker), ("lenient", lenient), ("pass-fail", pass_fail)]:
    register_scripted(f"scripted/{name}", fn)


@pytest.mark.judge(model="scripted/checker")
def test_the_new_prompt_wins_more_comparisons(judge):
    comparison = judge.compare(ITEMS, candidate=V2, baseline=V1, repeats=1, names=("v2", "v1"))
    assert_better(comparison)  # one-sided 95% lower bound of the win rate above 0.5


@pytest.mark.judge(model="scripted/checker")
def test_a_refactored_prompt_is_no_worse(judge):
    comparison = judge.compare(ITEMS, candidate=V3, baseline=V2, repeats=1, names=("v3", "v2"))
    # where both sums are right (or both wrong) the judge picks whichever it sees first: shown both
    # ways, such an item is a draw, not a win for the side that happened to be first
    assert comparison.position_inconsistency().value > 0.9
    assert_not_worse(comparison, margin=0.1)


@pytest.mark.judge(model="scripted/checker")
def test_the_old_prompt_is_worse_and_the_failure_names_its_items(judge):
    comparison = judge.compare(ITEMS, candidate=V1, baseline=V2, repeats=1, names=("v1", "v2"))
    with pytest.raises(JudgeReliabilityFailure, match=r"v1 is not shown no worse than v2[\s\S]*q12: candidate score"):
        assert_not_worse(comparison, margin=0.05)


@pytest.mark.judge(model="scripted/checker")
@pytest.mark.judge_panel("scripted/checker", "scripted/checker-2", "scripted/lenient", rule="majority", tie_rule="loss")
def test_a_jury_outvotes_its_position_biased_member(judge_panel):
    comparison = judge_panel.compare(ITEMS, candidate=V2, baseline=V1)
    assert comparison.jury.rule == "majority" and set(comparison.per_judge) == set(judge_panel.models)
    assert_better(comparison)


@pytest.mark.judge(model="scripted/pass-fail", template="truthfulqa")
@pytest.mark.scale("0-1")
def test_a_pass_fail_judge_agrees_with_humans(judge):
    answers = [{"id": q, "question": f"What is {a} + {b}?", "answer": V2[q]} for q, (a, b) in QUESTIONS.items()]
    humans = {q: V2[q].endswith(f"= {a + b}.") for q, (a, b) in QUESTIONS.items()}
    verdicts = judge.rate(answers, repeats=1)
    assert_verdict_agreement(verdicts, humans, min_kappa=0.8, min_tpr=0.9, min_tnr=0.9)
