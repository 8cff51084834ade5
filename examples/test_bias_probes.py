"""Bias probes and a judge-error-corrected pass rate, offline on scripted judges.

A judge can be reliable (it gives the same score twice) and still be biased.  These gates
check four things a team gating CI on a judge should know, each against a scripted judge
with a known flaw and one without it:

1. position: does the verdict change when the two answers swap places?
   (Zheng et al. 2023 found GPT-4 consistent on only 65% of MT-Bench pairs);
2. length: does padding an answer with content-free sentences raise its score?
3. self-preference: does the judge favour outputs of its own model?
4. the system's pass rate, corrected for the judge's measured specificity and sensitivity
   (Lee et al. 2025): a lenient judge's raw 80% is not the system's 80%.

Scripted judges (Python functions registered as models) stand in for real ones, so the file
runs without a network; point a probe at your own judge to measure it.
"""

import random
import re

import pytest

from pytest_judgerel import (
    Judge,
    JudgeReliabilityFailure,
    assert_no_length_bias,
    assert_no_self_preference,
    assert_pass_rate,
    assert_position_consistent,
    probes,
)
from pytest_judgerel.llm import register_scripted

# 24 arithmetic questions, each with a right and a wrong answer (the truth is known).
QUESTIONS = [(f"What is {a} + {b}?", str(a + b), str(a + b + 1 + (a % 3)))
             for a, b in [(3 * i + 2, 7 * i % 11 + 4) for i in range(24)]]
PAIRS = [{"id": f"q{i}", "question": q, "answer_a": right if i % 2 else wrong, "answer_b": wrong if i % 2 else right}
         for i, (q, right, wrong) in enumerate(QUESTIONS)]
ANSWERS = [{"id": f"q{i}", "question": q, "answer": right if i % 3 else wrong} for i, (q, right, wrong) in enumerate(QUESTIONS)]


def _between(text, start, end):
    return re.search(re.escape(start) + r"\n?(.*?)\n?" + re.escape(end), text, re.S).group(1)


def _correct(question, answer):
    a, b = map(int, re.findall(r"\d+", question)[:2])
    numbers = re.findall(r"\d+", answer)
    return bool(numbers) and int(numbers[0]) == a + b


# ------------------------------------------------------------------ scripted judges
def first_wins(messages, **params):
    """A pairwise judge that always prefers the answer it sees first."""
    return "Assistant A gives the better answer.\n[[A]]"


def order_blind(messages, **params):
    """A pairwise judge that checks the arithmetic: the order cannot matter."""
    text = messages[-1]["content"]
    question = _between(text, "[Question]", "\n\n")
    a_ok = _correct(question, _between(text, "[Assistant A's answer begins]", "[Assistant A's answer ends]"))
    b_ok = _correct(question, _between(text, "[Assistant B's answer begins]", "[Assistant B's answer ends]"))
    return "[[C]]" if a_ok == b_ok else "[[A]]" if a_ok else "[[B]]"


def _pointwise(messages):
    text = messages[-1]["content"]
    return _between(text, "Question: “", "”"), _between(text, "Answer to evaluate: “", "”")


def fair_grader(messages, **params):
    """0-5: 5 for a right answer, 1 for a wrong one, whatever the length."""
    question, answer = _pointwise(messages)
    return "5" if _correct(question, answer) else "1"


def length_lover(messages, **params):
    """Like fair_grader, but one point more for an answer longer than 100 characters."""
    question, answer = _pointwise(messages)
    base = 4 if _correct(question, answer) else 1
    return str(base + (len(answer) > 100))


def self_promoter(messages, **params):
    """Grades fairly but recognises its own style ('Result:') and adds a point to it."""
    question, answer = _pointwise(messages)
    base = 4 if _correct(question, answer) else 1
    return str(base + answer.startswith("Result:"))


def lenient_checker(messages, sample_seed=0, **params):
    """A 0-1 pass/fail judge: passes every right answer and, by mistake, 30% of wrong ones."""
    question, answer = _pointwise(messages)
    return "1" if _correct(question, answer) or random.Random(answer).random() < 0.3 else "0"


for name, fn in [("first-wins", first_wins), ("order-blind", order_blind), ("fair-grader", fair_grader),
                 ("length-lover", length_lover), ("self-promoter", self_promoter),
                 ("lenient-checker", lenient_checker)]:
    register_scripted(f"scripted/{name}", fn)


# ------------------------------------------------------------------ 1. position
@pytest.mark.judge(model="scripted/order-blind")
def test_order_blind_judge_keeps_its_verdict_when_answers_swap(judge):
    result = probes.position_bias(judge, PAIRS)  # 24 pairs x 2 orders, MT-Bench pairwise prompt
    assert_position_consistent(result, min_consistency=0.9)


@pytest.mark.judge(model="scripted/first-wins")
def test_first_position_judge_fails_the_position_gate(judge):
    result = probes.position_bias(judge, PAIRS)
    with pytest.raises(JudgeReliabilityFailure, match="significantly prefers the answer shown first \\(24 first"):
        assert_position_consistent(result, min_consistency=0.9)


# ------------------------------------------------------------------ 2. length
@pytest.mark.judge(model="scripted/fair-grader", template="truthfulqa")
def test_padding_does_not_raise_a_fair_graders_scores(judge):
    result = probes.length_bias(judge, ANSWERS, field="answer")
    assert_no_length_bias(result, max_shift=0.05)


@pytest.mark.judge(model="scripted/length-lover", template="truthfulqa")
def test_length_loving_judge_fails_the_length_gate(judge):
    result = probes.length_bias(judge, ANSWERS, field="answer")
    assert result.shift.mean == pytest.approx(1 / 5)  # one point on 0-5 for every padded answer
    with pytest.raises(JudgeReliabilityFailure, match="length shift = \\+0.2000"):
        assert_no_length_bias(result, max_shift=0.05)


# ------------------------------------------------------------------ 3. self-preference
def _outputs():
    """Each question answered by three models; 'self-promoter' writes 'Result: N'.  The
    'human' field is the reference score (4 right, 1 wrong)."""
    out = []
    for i, (q, right, wrong) in enumerate(QUESTIONS[:12]):
        for j, model in enumerate(["scripted/self-promoter", "model-b", "model-c"]):
            answer = right if (i + j) % 3 else wrong
            text = f"Result: {answer}" if model == "scripted/self-promoter" else f"The sum is {answer}."
            out.append({"task": f"q{i}", "model": model, "question": q, "answer": text,
                        "human": 4 if answer == right else 1})
    return out


@pytest.mark.judge(model="scripted/fair-grader", template="truthfulqa")
def test_fair_grader_shows_no_self_preference(judge):
    result = probes.self_preference(judge, _outputs(), reference="human", own_model="scripted/self-promoter")
    assert_no_self_preference(result, max_rank_change=0.25)


@pytest.mark.judge(model="scripted/self-promoter", template="truthfulqa")
def test_self_promoting_judge_fails_the_self_preference_gate(judge):
    result = probes.self_preference(judge, _outputs(), reference="human")  # own model = judge.model
    with pytest.raises(JudgeReliabilityFailure, match="self-preference of scripted/self-promoter"):
        assert_no_self_preference(result, max_rank_change=0.25)


# ------------------------------------------------------------------ 4. corrected pass rate
def test_pass_rate_corrected_for_a_lenient_judge(judgerel_client):
    """The system answers 24 questions; a lenient 0-1 judge passes some wrong answers.  A
    human-labelled calibration set measures how lenient; the gate uses the corrected rate."""
    judge = Judge(model="scripted/lenient-checker", template="truthfulqa", scale="0-1", client=judgerel_client)
    system_answers = [{"id": f"s{i}", "question": q, "answer": right if i % 4 else wrong}
                      for i, (q, right, wrong) in enumerate(QUESTIONS)]  # truly 18 of 24 right
    verdicts = judge.rate(system_answers, repeats=1).values[:, 0] == 1
    calibration_items = [{"id": f"c{i}-{ok}", "question": q, "answer": right if ok else wrong}
                         for i, (q, right, wrong) in enumerate(QUESTIONS) for ok in (True, False)]
    judged = judge.rate(calibration_items, repeats=1).values[:, 0] == 1
    humans = [item["answer"] == QUESTIONS[i // 2][1] for i, item in enumerate(calibration_items)]
    result = assert_pass_rate(list(verdicts), min_rate=0.6, calibration=list(zip(judged, humans)))
    assert result.observed > result.value  # the lenient judge overstates the pass rate
    assert result.ci_low <= result.value <= result.ci_high
