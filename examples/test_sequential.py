"""Sequential gates: the same tests, fewer judge calls (docs/recipes/sequential-gates.md).

``@pytest.mark.judge(sequential=True)`` (or ``--judgerel-sequential`` for the whole session) makes
``repeats(k)`` a cap: the gate draws repeats 2, 3, ... and stops as soon as the verdict at k
repeats is settled (at the cap it is exactly the fixed gate's verdict).  The tests are written as
for a fixed gate.  The terminal summary ends with a ``sequential gates:`` line: calls drawn, calls
saved.

1. The embedded 135M model is not a reliable judge: its sequential ICC gate fails after a few
   of its 8 repeats (the test expects the failure there; a real model must pass the gate).
2. A consistent judge (a scripted one, so this runs anywhere) passes after a few of its 10.
"""

import random
import re

import pytest

from pytest_judgerel import JudgeReliabilityFailure, assert_icc_above, load_dataset
from pytest_judgerel.llm import register_scripted

STSB = load_dataset("stsb", subset=20, stratify="genre")  # 20 pairs across the 3 genres
SMALL = load_dataset("stsb", subset=12, stratify="genre")  # for the embedded model: a few seconds per call


@pytest.mark.judge(template="stsb", temperature=0.7, max_tokens=16, sequential=True)
@pytest.mark.scale("0-5")
@pytest.mark.repeats(8)  # the cap: 96 calls at most
def test_an_unreliable_judge_fails_after_a_few_repeats(judge, is_embedded_model):
    ratings = judge.rate(SMALL)  # pending: drawn by the gate, repeat by repeat
    if not is_embedded_model:
        assert_icc_above(ratings, 0.7)  # a real judge has to pass (its calls saved show in the summary)
        return
    with pytest.raises(JudgeReliabilityFailure, match=r"sequential: [2-7] of 8 repeats drawn"):
        assert_icc_above(ratings, 0.7)


GOLD = dict(zip((it.fields["sentence1"] for it in STSB.items), STSB.ratings().item_means()))


def _consistent(messages, **params):
    """Scores each pair by its human gold, now and then one point off."""
    sentence = re.search(r"Sentence 1: “(.*?)”", messages[-1]["content"], re.S).group(1)
    rng = random.Random(f"{sentence} {params['sample_seed']}")
    return str(min(5, max(0, round(GOLD[sentence]) + (rng.choice((-1, 1)) if rng.random() < 0.15 else 0))))


register_scripted("scripted/consistent-judge", _consistent)


@pytest.mark.judge(model="scripted/consistent-judge", template="stsb", sequential=True)
@pytest.mark.scale("0-5")
@pytest.mark.repeats(10)  # the cap: 200 calls at most
def test_a_consistent_judge_passes_after_a_few_repeats(judge):
    ratings = judge.rate(STSB)
    result = assert_icc_above(ratings, 0.7)
    assert result.k < 10  # settled before the cap: the record's sequential block says how many calls it saved
