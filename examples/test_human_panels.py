"""Is the human reference itself reliable?  Panel reliability on real human data.

Before you measure a judge against humans, check that the humans agree with
each other: a judge cannot be more aligned with a panel than the panel is
reliable.  These gates run on the vendored data sets (no model needed).
Thresholds follow Koo & Li (2016): 0.5 moderate, 0.75 good, 0.9 excellent.
"""

import pytest

from pytest_judgerel import assert_icc_above, load_dataset

SUMMEVAL_DIMENSIONS = ["fluency", "coherence", "relevance", "faithfulness", "aspect_coverage",
                       "sentiment_consistency", "specificity"]


@pytest.mark.parametrize("criterion", SUMMEVAL_DIMENSIONS)
def test_summeval_op_panel_mean_is_at_least_moderately_reliable(criterion):
    """416 opinion summaries x 3 annotators (1-5): the panel mean, ICC(A,k), must be >= 0.6."""
    panel = load_dataset("summeval_op", criterion=criterion).ratings()
    assert_icc_above(panel, 0.6, form="A,k", label=f"SummEval-OP {criterion}")


@pytest.mark.parametrize("criterion, threshold", [("overall", 0.75), ("selection", 0.75), ("correctness", 0.5)])
def test_squality_reviewer_panel(criterion, threshold):
    """300 story summaries, each rated 0-100 by 3 of 4 reviewers.

    Reviewers are not crossed with items, so the one-way form ICC(1,k) applies
    (ratings packed per item).  The lower 95% confidence bound must reach the
    threshold: correctness is known to be the hardest criterion to agree on.
    """
    panel = load_dataset("squality", criterion=criterion, layout="slots").ratings()
    assert_icc_above(panel, threshold, form="1,k", use="ci_low", label=f"SQuALITY {criterion}")


def test_squality_blocks_have_no_weak_reviewer_set():
    """Within each block of 75 responses the same 3 reviewers rated everything:
    the two-way ICC(A,k) per block must be good (no block hides a weak panel)."""
    ratings = load_dataset("squality", criterion="overall").ratings()
    for block in ratings.item_group_labels("reviewer_set"):
        sub = ratings.select_items(reviewer_set=block)
        raters = [r for r, col in zip(sub.rater_ids, sub.values.T) if not (col != col).all()]
        assert_icc_above(sub.select_raters(raters), 0.75, form="A,k", label=f"SQuALITY block {block}")
