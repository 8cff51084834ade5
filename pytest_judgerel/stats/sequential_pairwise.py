"""The sequential rule of the pairwise gates: draw items in steps, stop once the cap's verdict is settled.

A pairwise gate (``assert_not_worse``/``assert_better``) passes when the one-sided ``1 - alpha``
lower bound of the candidate's win rate over the cap's ``n_cap`` items exceeds ``threshold``.
Drawn sequentially (every repeat and both orders of an item together, items in the judging order),
each look computes ``p_cap = P(the rule passes on observed + unseen items | observed)`` as the
other sequential rules do (:mod:`pytest_judgerel.stats.sequential`): the unseen items' scores come
from the Bayesian-bootstrap predictive of the observed item scores (Rubin 1981; item scores take
few distinct values, so the Dirichlet weights are pooled per value and the unseen items drawn as
one multinomial count per completion: the same distribution, sampled exactly; :data:`PRIOR_COUNT`
adds weight at 0 and 1), and each completion
is judged by a fast stand-in of the gate's rule: the Student-t lower bound ``mean - t(n-1, 1-alpha)
sd / sqrt(n)`` of the item scores (the bootstrap-t interval of
:func:`~pytest_judgerel.stats.pairwise.win_rate` is centred on the same studentized mean).  "pass"
at ``p_cap >= 1 - eps_pass``, "fail" at ``p_cap <= eps_fail``; at the cap the gate's exact rule
(``win_rate``) decides.  Looks: :func:`comparison_schedule`.
:func:`expected_comparison_share` is the dry run's expected share of the cap's calls.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np
from scipy import stats as _st

from ..errors import ReliabilityError
from .sequential import (LookSchedule, SequentialLook, _check_schedule, _decide, _stop_levels,  # noqa: PLC2701
                         items_schedule)

__all__ = ["comparison_sequential_look", "comparison_schedule", "COMPARISON_FIRST", "expected_comparison_share", "COMPARISON_EPS_PASS",
           "COMPARISON_EPS_FAIL", "COMPARISON_N_SIM", "COMPARISON_PRIOR_OFFSETS"]

COMPARISON_EPS_PASS = 0.005
"""Stop with "pass" at ``p_cap >= 1 - eps_pass`` (measured with ``benchmarks/bench_pairwise.py``)."""
COMPARISON_EPS_FAIL = 0.02
"""Stop with "fail" at ``p_cap <= eps_fail``."""
COMPARISON_N_SIM = 4000
"""Completions per look (cheap: one multinomial count each); Monte Carlo sd at p = 0.99: 0.0016."""
COMPARISON_FIRST = 30
"""Items drawn before the first look (earlier looks stopped on unrepresentative first items too often)."""
PRIOR_COUNT = 0.5
"""Dirichlet weight the predictive adds at a clear loss (0) and a clear win (1): unseen items may
score what no observed item did (without it, 20 items that all tie would predict only ties)."""
COMPARISON_PRIOR_OFFSETS = (-0.1, -0.05, 0.0, 0.05, 0.1)
"""True win rates the dry run's expectation weighs equally, as offsets from the threshold."""


def comparison_schedule(cap: int) -> LookSchedule:
    """The looks: from :data:`COMPARISON_FIRST` items in steps of ``max(10, ceil(cap / 20))``, and at the cap."""
    return items_schedule(cap, batch=max(10, math.ceil(cap / 20)), first=min(COMPARISON_FIRST, cap))


def _item_scores(outcomes: Mapping[str, Sequence[float | None]]) -> np.ndarray:
    out = []
    for xs in outcomes.values():
        read = [float(x) for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
        if read:
            out.append(sum(read) / len(read))
    return np.asarray(out, dtype=float)


def _fixed_passes(outcomes: Mapping[str, Sequence[float | None]], threshold: float, alpha: float) -> tuple[bool, float | None]:
    from .pairwise import win_rate

    try:
        wr = win_rate(dict(outcomes), confidence=1 - 2 * alpha)
    except ReliabilityError:
        return False, None
    return bool(wr.ci_low > threshold), float(wr.ci_low)


def _t_passes(values: np.ndarray, counts: np.ndarray, threshold: float, alpha: float) -> np.ndarray:
    """Per completion (rows of ``counts`` over the distinct ``values``): t lower bound > threshold."""
    n = counts.sum(axis=1)
    mean = counts @ values / n
    var = (counts @ values ** 2 - n * mean ** 2) / np.maximum(n - 1, 1)
    low = mean - _st.t.ppf(1 - alpha, np.maximum(n - 1, 1)) * np.sqrt(np.maximum(var, 0.0) / n)
    return low > threshold


def comparison_sequential_look(outcomes: Mapping[str, Sequence[float | None]], *, n_cap: int, threshold: float,
                               alpha: float, eps: float | None = None, eps_pass: float | None = None,
                               eps_fail: float | None = None, n_sim: int = COMPARISON_N_SIM, seed: int | None = 0,
                               schedule: LookSchedule | None = None) -> SequentialLook:
    """One look of a sequential pairwise gate over items (module docstring).

    ``outcomes``: per item drawn so far, the candidate's verdict scores (1, 0.5, 0; None when
    unreadable), as ``Comparison.outcomes()``; ``n_cap``: the cap's items; ``threshold``/``alpha``:
    the gate's (``0.5 -/+ margin``, one-sided level).  Items without a readable verdict count as
    drawn and are left out of the scores, as the gate leaves them out.
    """
    eps_pass, eps_fail = _stop_levels(eps, eps_pass, eps_fail, COMPARISON_EPS_PASS, COMPARISON_EPS_FAIL)
    seen = len(outcomes)
    if seen > n_cap:
        raise ReliabilityError(f"{seen} items drawn, more than the cap of {n_cap}: a sequential gate never draws "
                               "past its cap")
    sched = _check_schedule(schedule, comparison_schedule(n_cap), n_cap)
    rule = f"win rate one-sided {1 - alpha:.0%} lower bound > {threshold:g} at {n_cap} items"
    scores = _item_scores(outcomes)
    observed = float(scores.mean()) if scores.size else None
    look = sched.look_number(seen)
    if seen == n_cap:
        passed, low = _fixed_passes(outcomes, threshold, alpha)
        return SequentialLook("pass" if passed else "fail", look, seen, n_cap, "items", float(passed), observed,
                              threshold, eps_pass, eps_fail, rule,
                              f"at the cap: the gate's rule on all {n_cap} items (lower bound "
                              f"{'undefined' if low is None else f'{low:.3f}'})", None, seed, sched)
    if scores.size < 2:
        return SequentialLook("continue", look, seen, n_cap, "items", 0.5, observed, threshold, eps_pass, eps_fail,
                              rule, "fewer than 2 items with a readable verdict: draw more", None, seed, sched)
    remaining = int(round((n_cap - seen) * scores.size / seen))  # unseen items with a readable verdict (expected)
    values, counts = np.unique(np.concatenate([scores, [0.0, 1.0]]), return_counts=True)
    weights = counts - np.where(np.isin(values, (0.0, 1.0)), 1 - PRIOR_COUNT, 0.0)  # observed + the prior's halves
    observed_counts = counts - np.isin(values, (0.0, 1.0))
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(weights, size=n_sim)  # the Bayesian bootstrap, pooled per distinct value
    drawn = rng.multinomial(remaining, probs) if remaining else np.zeros_like(probs, dtype=int)
    p = float(_t_passes(values, drawn + observed_counts, threshold, alpha).mean())
    decision, reason = _decide(p, eps_pass, eps_fail, "the pairwise gate")
    return SequentialLook(decision, look, seen, n_cap, "items", p, observed, threshold, eps_pass, eps_fail, rule,
                          f"{reason} ({n_sim} Bayesian-bootstrap completions of the {n_cap - seen} remaining items, "
                          "t lower bound)", n_sim, seed, sched)


def _simulated_outcomes(rng: np.random.Generator, n: int, repeats: int, truth: float, tie: float) -> dict[str, list]:
    """Items with heterogeneous win probabilities (Beta around ``truth``), each verdict a win, tie
    or loss: ``2 * repeats`` verdicts per item (the dry run's stated model)."""
    m = float(np.clip((truth - tie / 2) / (1 - tie), 0.01, 0.99))  # P(win) / P(not tie) so that the mean is truth
    pw = rng.beta(4 * m, 4 * (1 - m), size=n) * (1 - tie)
    u = rng.random((n, 2 * repeats))
    scores = np.where(u < pw[:, None], 1.0, np.where(u < pw[:, None] + tie, 0.5, 0.0))
    return {f"i{i}": list(row) for i, row in enumerate(scores)}


def expected_comparison_share(n_cap: int, repeats: int, threshold: float, alpha: float, *,
                              truths: Sequence[float] | None = None, tie: float = 0.2, runs: int = 8,
                              seed: int = 0) -> tuple[float, str]:
    """Mean share of the cap's items the rule draws over ``runs`` simulated comparisons at each
    true win rate of ``truths`` (default: ``threshold`` + :data:`COMPARISON_PRIOR_OFFSETS`, kept in
    0.02-0.98; heterogeneous items, ``tie`` tie rate).  Returns (share, the basis in words)."""
    truths = [min(0.98, max(0.02, threshold + d)) for d in COMPARISON_PRIOR_OFFSETS] if truths is None else list(truths)
    rng = np.random.default_rng([seed, n_cap, repeats])
    sched = comparison_schedule(n_cap)
    shares = []
    for truth in truths:
        for _ in range(runs):
            data = _simulated_outcomes(rng, n_cap, repeats, truth, tie)
            keys = list(data)
            for size in sched.looks:
                look = comparison_sequential_look({k: data[k] for k in keys[:size]}, n_cap=n_cap,
                                                  threshold=threshold, alpha=alpha, n_sim=1000, schedule=sched)
                if look.stopped:
                    shares.append(size / n_cap)
                    break
    basis = (f"the mean over true win rates {', '.join(f'{t:.2f}' for t in truths)} ({runs} simulated comparisons "
             f"each, tie rate {tie:g})")
    return float(np.mean(shares)), basis
