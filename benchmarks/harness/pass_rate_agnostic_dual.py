"""The truth-agnostic calls bound of :mod:`pass_rate_agnostic_bound`, by Lagrangian duality: fast at any size.

The linear program of ``least_worst_calls`` does not solve within 15 minutes at 442 items.  Its
Lagrangian does, in seconds: for weights ``lam`` on the truths (summing to one; for the mean, equal
and fixed) and ``mu >= 0`` on the promises (:func:`~pass_rate_agnostic_bound.promises`), the least
over rules of

    sum_t lam_t calls(t) + sum_k mu_k (promise_k - allowance_k)

is found by backward induction over the looks: a path's share at ``(n_i, c)`` still running costs
its calls at each truth, a stop costs the weighted wrong-stop mass at each promise's rate, and going
on costs the next look's values carried back by the hypergeometric weights of a count's prefix.
Every such value is at most the program's optimum (weak duality), so each is a lower bound on the
calls of any rule that keeps the promises at the rates imposed.  The weights are raised by Kelley's
cutting planes (the master is the restricted program over mixtures of the rules found, so this is
column generation) until the planes' maximum is within ``tol`` of the best value found.  On designs
where the program solves, the two agree to 1e-5 (``tests/test_bench_pass_rate_agnostic_bound.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchmarks.harness.pass_rate_agnostic_bound import AgnosticBound, promises
from pytest_judgerel.stats.sequential import PASS_RATE_EPS_PASS

__all__ = ["least_calls_dual"]


@dataclass
class _Design:
    """Per look before the cap and per promise rate: ``wrong_pass`` = P(count c at n_i) P(cap fails | c)
    and ``wrong_fail`` = P(count c at n_i) P(cap passes | c); per look: the calls of each truth."""

    looks: tuple[int, ...]
    wrong_pass: list[np.ndarray]
    wrong_fail: list[np.ndarray]
    calls: list[np.ndarray]
    carry: list[Any]  # P(prefix count c | c' at the next look), (c, c'): dense, or sparse for a step of one item


def _one_step(n: int) -> Any:
    """The prefix weights from ``n + 1`` items back to ``n``: c' = c with (n + 1 - c) / (n + 1), c' = c + 1 with
    (c + 1) / (n + 1); two diagonals (a look after every item would make the dense matrices cubic in size)."""
    from scipy.sparse import diags

    c = np.arange(n + 1)
    return diags([(n + 1 - c) / (n + 1), (c + 1) / (n + 1)], [0, 1], shape=(n + 1, n + 2), format="csr")


def _design(n_cap: int, cutoff: int, looks: tuple[int, ...], truths: np.ndarray, rates: np.ndarray) -> _Design:
    from scipy.stats import binom, hypergeom

    d = _Design(looks, [], [], [], [])
    seen = 0
    for i, n in enumerate(looks):
        c = np.arange(n + 1)
        d.calls.append(binom.pmf(c[None, :], n, truths[:, None]) * (n - seen) / n_cap)
        seen = n
        if i == len(looks) - 1:
            break
        mass = binom.pmf(c[None, :], n, rates[:, None])
        cap_fails = binom.cdf(cutoff - c[None, :] - 1, n_cap - n, rates[:, None])
        d.wrong_pass.append(mass * cap_fails)
        d.wrong_fail.append(mass * (1 - cap_fails))
        nxt = looks[i + 1]
        d.carry.append(_one_step(n) if nxt == n + 1 else hypergeom.pmf(c[:, None], nxt, np.arange(nxt + 1)[None, :], n))
    return d


def _best_rule(d: _Design, lam: np.ndarray, on_pass: np.ndarray, on_fail: np.ndarray
               ) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """The Lagrangian's least value (before the allowances), and at the rule attaining it: the calls at each
    truth and the wrong-stop mass at each rate (pass stops, fail stops).  ``on_pass`` / ``on_fail``: the
    weight of a wrong pass / fail stop at each rate."""
    last = len(d.looks) - 1
    value = lam @ d.calls[last]
    choice: list[np.ndarray] = [np.zeros(0, dtype=np.int8)] * last
    for i in range(last - 1, -1, -1):
        options = np.stack([d.carry[i] @ value, on_pass @ d.wrong_pass[i], on_fail @ d.wrong_fail[i]])
        choice[i] = options.argmin(axis=0)
        value = lam @ d.calls[i] + options.min(axis=0)
    alive = np.ones(d.looks[0] + 1)
    calls = np.zeros(lam.size)
    wrong_pass, wrong_fail = np.zeros(on_pass.size), np.zeros(on_fail.size)
    for i in range(last + 1):
        calls += d.calls[i] @ alive
        if i == last:
            break
        wrong_pass += d.wrong_pass[i] @ (alive * (choice[i] == 1))
        wrong_fail += d.wrong_fail[i] @ (alive * (choice[i] == 2))
        alive = d.carry[i].T @ (alive * (choice[i] == 0))
    return float(value.sum()), calls, wrong_pass, wrong_fail


def least_calls_dual(n_cap: int, cutoff: int, looks: tuple[int, ...], truths: list[float], *, threshold_raw: float,
                     eps_pass: float = PASS_RATE_EPS_PASS, oc: float = 0.03, eps_fail: float | None = None,
                     agree_clear: float = 0.98, agree_at: float = 0.95, objective: str = "worst",
                     tol: float = 1e-5, iterations: int = 500) -> AgnosticBound:
    """A lower bound on the least worst (``objective="worst"``) or mean (``"mean"``) calls share over the raw
    rates ``truths`` of any rule that stops only at ``looks`` and keeps the promises (module docstring);
    ``status`` says how far the program's optimum can lie above it.  ``shares`` is empty: no rule is returned."""
    from scipy.optimize import linprog

    if objective not in ("worst", "mean"):
        raise ValueError(f"objective must be 'worst' or 'mean', got {objective!r}")
    prs = promises(n_cap, cutoff, threshold_raw, eps_pass=eps_pass, oc=oc, eps_fail=eps_fail,
                   agree_clear=agree_clear, agree_at=agree_at)
    rates = np.unique([p.rate for p in prs])
    at = np.searchsorted(rates, [p.rate for p in prs])
    alpha, beta = np.array([p.on_reversed for p in prs]), np.array([p.on_lost for p in prs])
    allowance = np.array([p.allowance for p in prs])
    t_arr = np.asarray(truths, dtype=float)
    d = _design(n_cap, cutoff, tuple(int(n) for n in looks), t_arr, rates)
    free = objective == "worst"  # the truths' weights are the master's too
    lam, mu = np.full(t_arr.size, 1.0 / t_arr.size), np.zeros(len(prs))
    cuts: list[np.ndarray] = []
    fixed: list[float] = []
    best, ceiling = -math.inf, math.inf
    for _ in range(iterations):
        value, calls, wrong_pass, wrong_fail = _best_rule(d, lam, np.bincount(at, mu * alpha, rates.size),
                                                          np.bincount(at, mu * beta, rates.size))
        best = max(best, value - float(mu @ allowance))
        excess = alpha * wrong_pass[at] + beta * wrong_fail[at] - allowance
        cuts.append(np.concatenate([calls, excess]) if free else excess)
        fixed.append(0.0 if free else float(lam @ calls))
        size = cuts[-1].size
        eq = {"A_eq": np.concatenate([np.ones(t_arr.size), np.zeros(len(prs) + 1)])[None, :], "b_eq": [1.0]} if free \
            else {}
        planes = np.hstack([-np.array(cuts), np.ones((len(cuts), 1))])  # t - cut . (lam, mu) <= fixed
        master = linprog(np.concatenate([np.zeros(size), [-1.0]]), A_ub=planes, b_ub=np.array(fixed),
                         bounds=[(0.0, None)] * size + [(None, 2.0)], method="highs", **eq)
        if master.status != 0:
            raise RuntimeError(f"the bound's cutting planes failed: {master.message}")
        ceiling = -float(master.fun)
        if ceiling - best <= tol:
            break
        if free:
            lam, mu = master.x[:t_arr.size], master.x[t_arr.size:size]
        else:
            mu = master.x[:size]
    return AgnosticBound(max(best, 0.0), (), tuple(float(q) for q in truths), d.looks,
                         f"Lagrangian bound; the optimum lies at most {max(ceiling - best, 0.0):.1e} above it")
