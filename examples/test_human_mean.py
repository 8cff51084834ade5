"""What would humans say? A small human set plus a judge on the rest (prediction-powered inference).

Human labels are scarce: here 50 answers of the system carry a human label (1-5), 300 more
only the judge's score (0-5).  The judge is lenient (it scores 0.7 above the humans on
average) and noisy, but it tracks them.  PPI++ (Angelopoulos et al. 2023, 2024) estimates
the mean *human* label of all 350 answers: unbiased whatever the judge's bias, and with an
interval narrower than the 50 human labels give alone when the judge tracks them.

1. the system's human-scale mean must reach 2.8 (lower 95% bound, ``use="ci_low"``);
2. the judge's own mean would pass a bar of 3.6 that the humans do not: the gate does not;
3. a prompt change must not lose more than 0.25 on the human scale (humans labelled the
   same 50 inputs for both prompts: the paired difference);
4. a panel of three judges, two of one model family: how many independent judges is it
   worth?  Every ``judge_panel`` run records it (against the rest of the panel); with the
   human set it can be measured against gold too.

Scripted judges (Python functions registered as models) stand in for real ones, so the file
runs offline; in a real suite the human labels are a file in the repository and the judge
is your model.  The human labels are generated here (seeded) to keep the file self-contained.
"""

import random
import re

import numpy as np
import pytest

from pytest_judgerel import (
    JudgeReliabilityFailure,
    assert_human_mean_above,
    assert_human_mean_difference,
)
from pytest_judgerel.llm import register_scripted
from pytest_judgerel.stats import effective_judges

N_LABELED, N_UNLABELED = 50, 300


def _quality(i: int, prompt: str) -> float:
    """The true quality (1-5) of the answer the system gave to input i with the given prompt."""
    base = 3.3 + 0.9 * random.Random(f"input {i}").gauss(0, 1)
    lift = 0.15 if prompt == "new" else 0.0
    return min(5.0, max(1.0, base + lift + 0.3 * random.Random(f"{prompt} {i}").gauss(0, 1)))


def _answers(prompt: str) -> list[dict]:
    return [{"id": f"q{i}", "question": f"Question {i}?", "answer": f"{prompt} prompt, answer {i}"}
            for i in range(N_LABELED + N_UNLABELED)]


QUALITY = {a["answer"]: _quality(i, p) for p in ("old", "new") for i, a in enumerate(_answers(p))}


def _human_label(answer: str) -> float:
    """One human's label on 1-5 (the human set committed with the tests)."""
    return float(min(5, max(1, round(QUALITY[answer] + random.Random("human " + answer).gauss(0, 0.5)))))


def _split(prompt: str):
    items = _answers(prompt)
    labeled, unlabeled = items[:N_LABELED], items[N_LABELED:]
    return labeled, [_human_label(a["answer"]) for a in labeled], unlabeled


def _answer_of(messages) -> str:
    return re.search(r"Answer to evaluate: “(.*?)”", messages[-1]["content"], re.S).group(1)


def _grader(bias: float, noise: float, family: str):
    def grade(messages, **params):
        answer = _answer_of(messages)
        shared = random.Random(f"{family} {answer}").gauss(0, noise)  # what the family gets wrong
        score = QUALITY[answer] + bias + shared + random.Random(f"own {bias} {answer}").gauss(0, 0.2)
        return f"{min(5.0, max(0.0, score)):.1f}"
    return grade


for name, fn in [("lenient-grader", _grader(0.7, 0.3, "lenient")), ("family-a-1", _grader(0.5, 0.6, "a")),
                 ("family-a-2", _grader(0.6, 0.6, "a")), ("family-b", _grader(0.4, 0.6, "b"))]:
    register_scripted(f"scripted/{name}", fn)


# ------------------------------------------------------------------ 1. the human-scale mean
@pytest.mark.judge(model="scripted/lenient-grader", template="truthfulqa")
def test_human_scale_mean_reaches_the_bar(judge):
    labeled, human, unlabeled = _split("old")
    res = assert_human_mean_above(judge.rate(labeled, repeats=1), human, judge.rate(unlabeled, repeats=1),
                                  min_mean=2.8, use="ci_low", label="old prompt")
    assert res.width_ratio < 0.8  # the judge is worth more labels than the 50 we have
    assert res.effective_n > N_LABELED


# ------------------------------------------------------------------ 2. the judge alone misleads
@pytest.mark.judge(model="scripted/lenient-grader", template="truthfulqa")
def test_a_lenient_judge_does_not_lift_the_human_scale_mean(judge):
    labeled, human, unlabeled = _split("old")
    scored, rest = judge.rate(labeled, repeats=1), judge.rate(unlabeled, repeats=1)
    judge_mean = float(np.nanmean(np.concatenate([scored.item_means(), rest.item_means()])))
    assert judge_mean > 3.6  # the judge's own mean clears the bar ...
    with pytest.raises(JudgeReliabilityFailure, match="is below min_mean 3.6"):
        assert_human_mean_above(scored, human, rest, min_mean=3.6)  # ... the humans' does not


# ------------------------------------------------------------------ 3. a prompt change
@pytest.mark.judge(model="scripted/lenient-grader", template="truthfulqa")
def test_prompt_change_loses_at_most_a_quarter_point(judge):
    systems = {}
    for prompt in ("new", "old"):
        labeled, human, unlabeled = _split(prompt)
        systems[prompt] = (judge.rate(labeled, repeats=1), human, judge.rate(unlabeled, repeats=1))
    res = assert_human_mean_difference(systems["new"], systems["old"], min_difference=-0.25, use="ci_low",
                                       label="new vs old prompt")
    assert res.paired and res.ci_low > -0.25


# ------------------------------------------------------------------ 4. how many judges is a panel worth?
@pytest.mark.judge(template="truthfulqa")
@pytest.mark.judge_panel("scripted/family-a-1", "scripted/family-a-2", "scripted/family-b")
def test_a_panel_of_one_family_is_worth_fewer_judges(judge_panel):
    labeled, human, _ = _split("old")
    scores = judge_panel.rate(labeled)  # records a judge_panel record with the effective number
    panel = effective_judges(scores)  # errors against the other judges, as the record measures them
    # two of the three judges share their errors: the panel is worth about two judges, not three
    assert 1.2 < panel.value < 2.6, panel
    # against the human labels: a single human's noise is an error every judge seems to share,
    # so the number drops further (give several raters per item to have that noise removed);
    # without gold, an error all three shared would not show at all: the panel number can only overstate
    gold = effective_judges(scores, human)
    assert gold.value <= panel.value
