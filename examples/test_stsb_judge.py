"""Judge-regression tests for a semantic-similarity judge (seed 001's STS-B template).

Three questions a team asks before trusting the judge, as gates:

1. Does it agree with itself when asked again (test-retest reliability, per scale)?
2. Does it grade the same way on 0-5, 0-10 and 0-100 (inter-scale consistency)?
3. Does it agree with the human gold (ICC(A,1) and nMAE, seed 001 section 3.2)?

Run with any litellm model: ``pytest examples --judge-model=openai/gpt-4o-mini``.
"""

import numpy as np
import pytest

from pytest_judgerel import (
    JudgeReliabilityFailure,
    assert_agreement,
    assert_icc_above,
    assert_scale_consistent,
    load_dataset,
)

STSB = load_dataset("stsb", subset=20, stratify="genre")  # 20 pairs across the 3 genres, human gold 0-5


@pytest.mark.judge(template="stsb", temperature=0.0, max_tokens=16)
@pytest.mark.scale("0-5", "0-10", "0-100")
@pytest.mark.repeats(2)
def test_judge_is_stable_at_temperature_zero(judge, scale, is_embedded_model):
    """At temperature 0 a judge should give the same scores when asked again:
    ICC(A,1) across the repeated runs >= 0.9 (Koo & Li: excellent).  Hosted APIs
    are often not deterministic at temperature 0; this gate notices.

    This gate checks determinism, not quality: the embedded 135M model passes it with
    ICC 1.0 on every scale, because llama.cpp at temperature 0 decodes greedily and
    gives the same reply every time (it fails the gates of quality below)."""
    ratings = judge.rate(STSB)
    assert ratings.shape == (20, 2)
    if is_embedded_model:  # what the pass means here: the two repeats are the same replies
        assert np.array_equal(ratings.values[:, 0], ratings.values[:, 1], equal_nan=True)
    assert_icc_above(ratings, 0.9, form="A,1")


@pytest.mark.judge(template="stsb", temperature=0.0, max_tokens=16)
@pytest.mark.scale("0-5", "0-10", "0-100")
def test_judge_grades_consistently_across_scales(judge, real_judge):
    """Scores mapped to [0, 1] must agree across scales, jointly and pairwise (seed 001 Table 1)."""
    assert_scale_consistent(judge.rate_scales(STSB, repeats=2), min_icc=0.75)


@pytest.mark.judge(template="stsb", temperature=0.0, max_tokens=16)
@pytest.mark.scale("0-5")
def test_judge_agrees_with_human_gold(judge, real_judge):
    """Human-judge agreement on the 0-5 scale: ICC(A,1) >= 0.6 and nMAE <= 0.15, overall
    and within every STS-B genre (a pooled pass must not hide a weak genre)."""
    assert_agreement(judge.rate(STSB, repeats=2), STSB.ratings(), min_icc=0.6, max_nmae=0.15, by="genre")


@pytest.mark.judge(template="stsb", temperature=0.0, max_tokens=16)
@pytest.mark.scale("0-5")
def test_the_agreement_gate_rejects_a_judge_that_is_not_one(judge, is_embedded_model):
    """On the embedded 135M model the agreement gate must fail: this checks the gate
    itself, offline.  (For a real model this example has nothing to show and skips.)"""
    if not is_embedded_model:
        pytest.skip("only meaningful for the embedded weak model")
    with pytest.raises(JudgeReliabilityFailure, match="judge-human agreement"):
        assert_agreement(judge.rate(STSB, repeats=2), STSB.ratings(), min_icc=0.6, max_nmae=0.15,
                         label="expected to fail: embedded model vs STS-B gold")
