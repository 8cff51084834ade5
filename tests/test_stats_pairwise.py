"""The statistics of pairwise comparisons, juries and pass/fail verdict agreement.

Cohen's kappa and its interval are checked against statsmodels (and the estimate against
scikit-learn), Gwet's AC1 against the ``agreement`` package's estimate and its variance against the
delta method computed here by complex-step differentiation under multinomial sampling, all on
tables drawn at random with a fixed seed (not tuned), to 1e-12.
"""

import math

import numpy as np
import pytest

from pytest_judgerel.errors import ReliabilityError
from pytest_judgerel.stats.bradley_terry import bradley_terry
from pytest_judgerel.stats.jury import combine_verdicts
from pytest_judgerel.stats.pairwise import consistent_verdict, ppi_win_rate, win_rate
from pytest_judgerel.stats.proportion import clopper_pearson
from pytest_judgerel.stats.verdict_agreement import cohens_kappa, gwet_ac1, verdict_agreement

RNG = np.random.default_rng(20261128)
TABLES = [RNG.integers(0, 40, size=(q, q)) + np.eye(q, dtype=int) * RNG.integers(1, 60) for q in (2, 2, 2, 3, 3, 4, 5)
          for _ in range(3)]


@pytest.mark.parametrize("table", TABLES, ids=lambda t: f"{t.shape[0]}x{t.shape[0]}-n{int(t.sum())}")
def test_kappa_and_its_interval_equal_statsmodels(table):
    sm = pytest.importorskip("statsmodels.stats.inter_rater")
    ref = sm.cohens_kappa(table)
    ours = cohens_kappa(table, 0.95)
    assert abs(ours.value - ref.kappa) < 1e-12
    assert abs(ours.se - ref.std_kappa) < 1e-12
    assert abs(ours.ci_low - ref.kappa_low) < 1e-12 and abs(ours.ci_high - ref.kappa_upp) < 1e-12


@pytest.mark.parametrize("table", TABLES[:9], ids=lambda t: f"n{int(t.sum())}")
def test_kappa_equals_scikit_learn_on_the_labels_behind_the_table(table):
    metrics = pytest.importorskip("sklearn.metrics")
    a = np.repeat(np.arange(table.shape[0]), table.sum(axis=1))
    b = np.concatenate([np.repeat(np.arange(table.shape[1]), table[i]) for i in range(table.shape[0])])
    assert abs(cohens_kappa(table).value - metrics.cohen_kappa_score(a, b)) < 1e-12


def _ac1(p):
    q = p.shape[0]
    pi = (p.sum(axis=1) + p.sum(axis=0)) / 2
    pe = (pi * (1 - pi)).sum() / (q - 1)
    return (np.trace(p) - pe) / (1 - pe)


@pytest.mark.parametrize("table", TABLES, ids=lambda t: f"{t.shape[0]}x{t.shape[0]}-n{int(t.sum())}")
def test_ac1_equals_the_reference_estimate_and_the_delta_method_variance(table):
    ours = gwet_ac1(table, 0.95)
    n = table.sum()
    p = table / n
    q = p.shape[0]
    grad = np.empty(q * q)
    for i in range(q * q):  # complex step: exact to rounding, no truncation error
        step = np.zeros(q * q, complex)
        step[i] = 1e-30j
        grad[i] = _ac1(p.astype(complex) + step.reshape(q, q)).imag / 1e-30
    flat = p.ravel()
    var = grad @ (np.diag(flat) - np.outer(flat, flat)) @ grad / n
    assert abs(ours.se - math.sqrt(var)) < 1e-12
    from scipy.stats import t

    half = t.isf(0.025, int(n) - 1) * ours.se
    assert abs(ours.ci_low - (ours.value - half)) < 1e-12
    agreement = pytest.importorskip("agreement.metrics")
    rows = []
    for i in range(q):
        for j in range(q):
            rows += [np.bincount([i, j], minlength=q)] * int(table[i, j])
    assert abs(ours.value - agreement.gwets_gamma(np.array(rows))) < 1e-12


def test_ac1_does_not_collapse_at_an_extreme_base_rate_where_kappa_does():
    table = [[90, 4], [5, 1]]  # 91% agreement, humans pass 95%
    assert cohens_kappa(table).value < 0.2
    assert gwet_ac1(table).value > 0.85


def test_verdict_agreement_counts_rates_and_names_the_disagreeing_items():
    judge = {f"i{k}": k % 3 != 0 for k in range(30)}
    human = {f"i{k}": k % 5 != 0 for k in range(30)}
    res = verdict_agreement(judge, human)
    c = res.confusion
    assert c == {"tp": sum(judge[i] and human[i] for i in judge), "fp": sum(judge[i] and not human[i] for i in judge),
                 "fn": sum(human[i] and not judge[i] for i in judge), "tn": sum(not judge[i] and not human[i] for i in judge)}
    assert set(res.false_pass) == {i for i in judge if judge[i] and not human[i]}
    assert set(res.false_fail) == {i for i in judge if human[i] and not judge[i]}
    exact = clopper_pearson(c["tp"], c["tp"] + c["fn"])
    assert (res.tpr.value, res.tpr.ci_low, res.tpr.ci_high) == (exact.value, exact.ci_low, exact.ci_high)
    assert res.base_rate.value == pytest.approx(sum(human.values()) / 30)


def test_win_rate_exact_when_each_item_has_one_untied_verdict():
    outcomes = {f"i{k}": [1.0 if k % 4 else 0.0] for k in range(40)}
    wr = win_rate(outcomes, confidence=0.9)
    cp = clopper_pearson(30, 40, 0.9)
    assert wr.method == "Clopper-Pearson" and (wr.ci_low, wr.ci_high) == (cp.ci_low, cp.ci_high)


def test_win_rate_is_clustered_by_item_repeating_verdicts_does_not_narrow_it():
    rng = np.random.default_rng(3)
    base = {f"i{k}": [float(rng.choice([0.0, 0.5, 1.0]))] for k in range(50)}
    tripled = {k: v * 6 for k, v in base.items()}  # 3 repeats x 2 orders of the same verdict
    a, b = win_rate(base), win_rate(tripled)
    assert a.value == b.value and (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)
    assert b.n_verdicts == 300 and b.n == 50
    verdict_level_se = np.std(np.concatenate(list(tripled.values())), ddof=1) / math.sqrt(300)
    assert (b.ci_high - b.ci_low) > 3 * 1.96 * verdict_level_se  # the naive interval would be ~2.4x narrower


def test_win_rate_splits_ties_and_skips_unreadable_verdicts():
    wr = win_rate({"a": [1, 0.5], "b": [None, 0], "c": [None, None]})
    assert wr.value == pytest.approx((0.75 + 0.0) / 2) and wr.n == 2 and wr.n_omitted == 1
    assert (wr.wins, wr.ties, wr.losses) == (1, 1, 1)
    with pytest.raises(ReliabilityError, match="not 0"):
        win_rate({"a": [0.7]})


def test_consistent_verdict():
    assert consistent_verdict("candidate", "candidate") == "candidate"
    assert consistent_verdict("candidate", "tie") == "inconsistent"
    assert consistent_verdict(None, "tie") == "missing"


def test_ppi_win_rate_moves_towards_the_humans_on_a_lenient_judge():
    rng = np.random.default_rng(5)
    truth = {f"i{k}": bool(rng.random() < 0.4) for k in range(300)}  # humans prefer the candidate on ~40%
    scores = {k: 1.0 if won else float(rng.choice([0.5, 1.0])) for k, won in truth.items()}  # lenient judge
    human = {k: ("candidate" if truth[k] else "baseline") for k in list(truth)[:100]}  # a third labelled
    est = ppi_win_rate(scores, human)
    true_rate = np.mean(list(truth.values()))
    assert np.mean(list(scores.values())) > 0.65
    assert est.ci_low < true_rate < est.ci_high and est.n_labeled == 100 and est.n_unlabeled == 200


def test_bradley_terry_recovers_the_order_of_three_systems():
    rng = np.random.default_rng(11)
    strength = {"a": 1.0, "b": 0.0, "c": -1.0}
    rows = []
    for item in range(120):
        for x, y in (("a", "b"), ("b", "c"), ("a", "c")):
            p = 1 / (1 + math.exp(-(strength[x] - strength[y])))
            rows.append((item, x, y, float(rng.random() < p)))
    fit = bradley_terry(rows, n_boot=200)
    assert fit.ranking() == ["a", "b", "c"]
    est, lo, hi = fit.win_probability[("a", "b")]
    assert lo < 1 / (1 + math.exp(-1)) < hi and lo > 0.5
    with pytest.raises(ReliabilityError, match="never compared"):
        bradley_terry([(0, "a", "b", 1.0), (0, "c", "d", 0.0)], n_boot=0)


def test_jury_rules_and_the_majority_tie_rule():
    per = {"j1": {"x": 1.0, "y": 1.0, "z": 0.0}, "j2": {"x": 1.0, "y": 0.0, "z": 0.0},
           "j3": {"x": 0.0, "y": 0.5, "z": 0.5}}
    assert combine_verdicts(per, "majority").combined == {"x": 1.0, "y": 0.5, "z": 0.0}
    loss = combine_verdicts(per, "majority", tie_rule="loss")
    assert loss.combined["y"] == 0.0 and loss.n_tie_broken == 1 and loss.tie_rule == "loss"
    assert combine_verdicts(per, "unanimity").combined == {"x": 0.5, "y": 0.5, "z": 0.5}
    assert combine_verdicts(per, "mean").combined["y"] == pytest.approx(0.5)
    assert combine_verdicts(per, "median").combined["x"] == 1.0
    w = combine_verdicts(per, "weighted", weights={"j1": 0.8, "j2": 0.0, "j3": -0.3})
    assert w.combined == {"x": 1.0, "y": 1.0, "z": 0.0} and w.weights == {"j1": 0.8, "j2": 0.0, "j3": 0.0}
    assert w.per_judge["j3"]["z"] == 0.5
    with pytest.raises(ReliabilityError, match="needs weights"):
        combine_verdicts(per, "weighted")
