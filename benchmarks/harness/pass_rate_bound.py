"""The least calls any sequential pass-rate rule can spend on a design: an exact bound.

A pass-rate gate over ``n_cap`` items passes at the cap when the judge's pass count reaches
``cutoff`` (:func:`pytest_judgerel.stats.pass_rate_cutoff`); each item passes with probability
``q`` (the judge's raw pass rate, the truth seen through its calibration).  A sequential rule
judges items one by one and may stop after any of them with a verdict; it must keep, at every
raw rate ``q`` where the fixed verdict is not certain, the promises of the sequential gates
(``benchmarks/bench_sequential.py``): a pass stop before the cap that the cap reverses in at most
``eps_pass`` of the runs, ``|P(sequential passes) - P(fixed passes)| <= oc``, and verdict
agreement with the fixed gate of at least ``agree_clear`` where the fixed verdict is 95%
predictable and ``agree_at`` on the threshold.

The count seen after ``n`` items is sufficient for every ``q`` (given it, the order of passes
carries no information), so the best rule stops with a probability that depends on ``(n, count)``
alone, and every promise and the expected calls are linear in the probability mass that stops
at each ``(n, count)``: a linear program whose optimum, the least expected calls at one raw rate,
no rule with any looks, prior or randomisation that keeps the promises on this design can beat.
:func:`least_calls_share` bounds it from below by Lagrangian duality (the default): for any
non-negative weights on the promises, the least expected calls plus the weighted excess over all
rules (backward induction over the counts) is at most the optimum (weak duality); the weights are
raised by Kelley's cutting planes until the best value is within ``gap`` (2e-4) of the planes'
maximum.  ``method="lp"`` solves the program itself (HiGHS) and returns its rule too, for designs
of a few thousand counts.  Three relaxations keep the program small, each of which can only lower
its optimum (so it stays a bound): the promises are imposed on a grid of rates (``grid`` points
where the fixed verdict is uncertain, plus ``raw`` and the threshold); a count whose probability
at ``raw`` is below ``mass_floor`` hands the rule the fixed verdict for free; and (``"lp"``)
terms of a promise too small to matter are dropped with their largest possible sum added to its
allowance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pytest_judgerel.stats.sequential import PASS_RATE_EPS_PASS

__all__ = ["CallsBound", "least_calls_share", "simulate_rule"]


@dataclass(frozen=True)
class CallsBound:
    """A bound on the expected calls share at ``raw``: ``share``; with ``method="lp"`` the optimum, and
    the rule that reaches it (the stop probabilities at each live ``(items, count)``, given it is
    reached); with ``method="dual"`` the best Lagrangian bound found (``gap``: how far the optimum
    can lie above it) and no rule."""

    share: float
    n_cap: int
    cutoff: int
    raw: float
    states: np.ndarray  # (S, 2): items judged, pass count
    stop_pass: np.ndarray | None
    stop_fail: np.ndarray | None
    rates: int  # raw rates the promises were imposed at
    gap: float = 0.0


@dataclass(frozen=True)
class _Program:
    """The linear program of a design: the live states in item order, their successors after a pass
    and after a fail (-1: a path that goes there ends with the fixed verdict, one item later), and
    the promises as rows over the mass stopping with a pass (``on_pass``) and with a fail
    (``on_fail``), each ``<= allowance``."""

    n_cap: int
    cutoff: int
    raw: float
    states: np.ndarray
    after_pass: np.ndarray
    after_fail: np.ndarray
    on_pass: np.ndarray  # (rows, S)
    on_fail: np.ndarray
    allowance: np.ndarray
    rates: int


def _fixed_fails(cutoff: int, n_cap: int, n: np.ndarray, s: np.ndarray, q: float) -> np.ndarray:
    """P(the cap's count stays under ``cutoff`` | ``s`` passes in ``n`` items), at rate ``q``."""
    from scipy.stats import binom

    return binom.cdf(cutoff - s - 1, n_cap - n, q)


def _rates(n_cap: int, cutoff: int, grid: int, extra: tuple[float, ...]) -> list[float]:
    """``grid`` raw rates evenly spread where the fixed verdict is uncertain, plus ``extra``."""
    from scipy.optimize import brentq
    from scipy.stats import binom

    def rate_where(p: float) -> float:  # P(fixed passes) rises with q; an end of (0, 1) when it stays on one side
        def gap(q: float) -> float:
            return float(binom.sf(cutoff - 1, n_cap, q)) - p

        ends = (1e-9, 1 - 1e-9)
        if gap(ends[0]) >= 0:
            return ends[0]
        return ends[1] if gap(ends[1]) <= 0 else float(brentq(gap, *ends))

    lo, hi = rate_where(1e-7), rate_where(1 - 1e-7)
    return sorted(set(np.linspace(lo, hi, grid).tolist()) | {q for q in extra if 0 < q < 1})


def _program(n_cap: int, cutoff: int, raw: float, threshold_raw: float, eps_pass: float, oc: float,
             agree_clear: float, agree_at: float, grid: int, mass_floor: float) -> _Program:
    from scipy.stats import binom

    if not 0 < raw < 1 or not 0 < cutoff <= n_cap:
        raise ValueError(f"need 0 < raw < 1 and 0 < cutoff <= n_cap, got raw={raw}, cutoff={cutoff}, n_cap={n_cap}")
    states: list[tuple[int, int]] = []
    for n in range(n_cap):  # live: the fixed verdict still open, and likely enough at ``raw``
        for s in range(max(0, cutoff - (n_cap - n)), min(n, cutoff - 1) + 1):
            if binom.pmf(s, n, raw) >= mass_floor:
                states.append((n, s))
    index = {state: i for i, state in enumerate(states)}
    st = np.array(states, dtype=int).reshape(-1, 2)
    n_arr, s_arr = st[:, 0].astype(float), st[:, 1].astype(float)
    after_pass = np.array([index.get((n + 1, s + 1), -1) for n, s in states], dtype=int)
    after_fail = np.array([index.get((n + 1, s), -1) for n, s in states], dtype=int)
    on_pass: list[np.ndarray] = []
    on_fail: list[np.ndarray] = []
    allowance: list[float] = []
    rates = _rates(n_cap, cutoff, grid, (raw, threshold_raw))
    for q in rates:
        ratio = np.exp(s_arr * math.log(q / raw) + (n_arr - s_arr) * math.log((1 - q) / (1 - raw)))
        fails = _fixed_fails(cutoff, n_cap, n_arr, s_arr, q)
        wrong_pass, wrong_fail = ratio * fails, ratio * (1 - fails)  # a stop the cap would reverse, at q
        none = np.zeros_like(wrong_pass)
        rows = [(wrong_pass, none, eps_pass),  # P(early pass, the cap fails)
                (wrong_pass, -wrong_fail, oc), (-wrong_pass, wrong_fail, oc)]  # P(seq pass) - P(fixed pass)
        p_fixed = float(binom.sf(cutoff - 1, n_cap, q))
        if q == threshold_raw:
            rows.append((wrong_pass, wrong_fail, 1 - agree_at))
        elif min(p_fixed, 1 - p_fixed) <= 0.05:
            rows.append((wrong_pass, wrong_fail, 1 - agree_clear))
        for a, b, c in rows:
            on_pass.append(a)
            on_fail.append(b)
            allowance.append(c)
    return _Program(n_cap, cutoff, raw, st, after_pass, after_fail, np.array(on_pass), np.array(on_fail),
                    np.array(allowance), len(rates))


def _solve_lp(prog: _Program) -> CallsBound:
    """The linear program itself (HiGHS): the optimum and its rule.  Exact, but slow past a few
    thousand states."""
    from scipy import sparse
    from scipy.optimize import linprog
    from scipy.stats import binom

    size, raw, n_cap = len(prog.states), prog.raw, prog.n_cap
    n_arr = prog.states[:, 0].astype(float)
    rows, cols, vals = [], [], []
    for i in range(size):  # continue + stop with a pass + stop with a fail = the mass arriving
        rows += [i, i, i]
        cols += [i, size + i, 2 * size + i]
        vals += [1.0, 1.0, 1.0]
    for nxt, step in ((prog.after_pass, raw), (prog.after_fail, 1 - raw)):
        src = np.flatnonzero(nxt >= 0)
        rows += nxt[src].tolist()
        cols += src.tolist()
        vals += [-step] * src.size
    b_eq = np.zeros(size)
    b_eq[0] = 1.0  # (0, 0)
    a_eq = sparse.csr_matrix((vals, (rows, cols)), shape=(size, 3 * size))
    ends = raw * (prog.after_pass < 0) + (1 - raw) * (prog.after_fail < 0)
    cost = np.concatenate([(n_arr + 1) * ends, n_arr, n_arr]) / n_cap
    # terms too small to matter are dropped, their largest sum added to the promise's allowance
    # (a relaxation: the optimum can only fall); kept, they upset HiGHS's tolerances
    reach = binom.pmf(prog.states[:, 1], prog.states[:, 0], raw)  # the most mass a live state can hold
    on_pass, on_fail = prog.on_pass.copy(), prog.on_fail.copy()
    allowance = prog.allowance.copy()
    for coef in (on_pass, on_fail):
        tiny = np.abs(coef) * reach < 1e-13
        allowance += (np.abs(coef) * reach * tiny).sum(axis=1)
        coef[tiny] = 0.0
    a_ub = sparse.hstack([sparse.csr_matrix(on_pass.shape), sparse.csr_matrix(on_pass), sparse.csr_matrix(on_fail)])
    res = linprog(cost, A_ub=a_ub.tocsr(), b_ub=allowance, A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs-ds")
    if res.status != 0:
        raise RuntimeError(f"the calls bound's linear program failed: {res.message}")
    mass = res.x.reshape(3, size)
    total = mass.sum(axis=0)
    safe = np.where(total > 0, total, 1.0)
    return CallsBound(float(res.fun), n_cap, prog.cutoff, raw, prog.states, np.where(total > 0, mass[1] / safe, 0.0),
                      np.where(total > 0, mass[2] / safe, 0.0), prog.rates)


def _lagrangian(prog: _Program, weights: np.ndarray) -> tuple[float, np.ndarray]:
    """``min over rules`` of the expected calls share plus ``weights`` times the promises' excess (a
    lower bound on the program's optimum for any ``weights >= 0``: weak duality), by backward
    induction over the items; and the excess of each promise under the rule that attains it."""
    raw, n_cap = prog.raw, prog.n_cap
    n_arr = prog.states[:, 0]
    stop_pass = n_arr / n_cap + weights @ prog.on_pass
    stop_fail = n_arr / n_cap + weights @ prog.on_fail
    layers = np.flatnonzero(np.diff(n_arr, prepend=-1, append=n_cap + 1))  # where each item count starts
    value = np.empty(len(n_arr))
    choice = np.zeros(len(n_arr), dtype=np.int8)  # 0 continue, 1 stop with a pass, 2 with a fail
    for start, stop in zip(layers[-2::-1], layers[:0:-1]):  # the last item count first
        ends = (n_arr[start] + 1) / n_cap  # a path leaving the live states ends at the next item
        ap, af = prog.after_pass[start:stop], prog.after_fail[start:stop]
        cont = raw * np.where(ap >= 0, value[ap], ends) + (1 - raw) * np.where(af >= 0, value[af], ends)
        options = np.stack([cont, stop_pass[start:stop], stop_fail[start:stop]])
        choice[start:stop] = options.argmin(axis=0)
        value[start:stop] = options.min(axis=0)
    mass = np.zeros(len(n_arr))
    mass[0] = 1.0
    for start, stop in zip(layers[:-1], layers[1:]):  # the rule's mass, first item count first
        going = mass[start:stop] * (choice[start:stop] == 0)
        for nxt, step in ((prog.after_pass[start:stop], raw), (prog.after_fail[start:stop], 1 - raw)):
            live = nxt >= 0
            np.add.at(mass, nxt[live], step * going[live])
    excess = prog.on_pass @ (mass * (choice == 1)) + prog.on_fail @ (mass * (choice == 2)) - prog.allowance
    return float(value[0] - weights @ prog.allowance), excess


def _solve_dual(prog: _Program, tol: float = 2e-4, limit: float = 200.0, iterations: int = 400) -> CallsBound:
    """The best Lagrangian bound (:func:`_lagrangian`) by Kelley's cutting planes on the weights in
    ``[0, limit]``: every value found is a valid bound; the search stops once the planes' maximum
    is within ``tol`` of the best (then the optimum lies within ``tol`` above it)."""
    from scipy.optimize import linprog

    rows = len(prog.allowance)
    weights = np.zeros(rows)
    cuts_a: list[np.ndarray] = []
    cuts_b: list[float] = []
    best, ceiling = -math.inf, math.inf
    for _ in range(iterations):
        value, excess = _lagrangian(prog, weights)
        best = max(best, value)
        # the dual function lies under value + excess . (w - weights): t - excess . w <= value - excess . weights
        cuts_a.append(np.concatenate([-excess, [1.0]]))
        cuts_b.append(value - float(excess @ weights))
        master = linprog(np.concatenate([np.zeros(rows), [-1.0]]), A_ub=np.array(cuts_a), b_ub=cuts_b,
                         bounds=[(0.0, limit)] * rows + [(None, 2.0)], method="highs")
        if master.status != 0:
            raise RuntimeError(f"the calls bound's cutting planes failed: {master.message}")
        ceiling = -float(master.fun)
        if ceiling - best <= tol:
            break
        weights = master.x[:rows]
    return CallsBound(max(best, 0.0), prog.n_cap, prog.cutoff, prog.raw, prog.states, None, None, prog.rates,
                      gap=max(ceiling - best, 0.0))


def least_calls_share(n_cap: int, cutoff: int, raw: float, *, threshold_raw: float,
                      eps_pass: float = PASS_RATE_EPS_PASS, oc: float = 0.03, agree_clear: float = 0.98,
                      agree_at: float = 0.95, grid: int = 24, mass_floor: float = 1e-10,
                      method: str = "dual") -> CallsBound:
    """A lower bound on the expected share of the cap's calls at raw pass rate ``raw`` of any
    sequential rule that keeps the promises (module docstring) on the design ``(n_cap, cutoff)``;
    ``threshold_raw``: the raw rate at ``min_rate`` (where agreement must be ``agree_at``).
    ``method="dual"``: the best Lagrangian bound (fast; within ``gap`` of the optimum); ``"lp"``: the
    linear program's optimum and its rule (slow past a few thousand states)."""
    if method not in ("dual", "lp"):
        raise ValueError(f"method must be 'dual' or 'lp', got {method!r}")
    prog = _program(n_cap, cutoff, raw, threshold_raw, eps_pass, oc, agree_clear, agree_at, grid, mass_floor)
    return _solve_dual(prog) if method == "dual" else _solve_lp(prog)


def simulate_rule(bound: CallsBound, q: float, runs: int, rng: np.random.Generator) -> dict[str, float]:
    """The bound's rule run on ``runs`` data sets at raw rate ``q`` (a count that is not live ends with
    the fixed verdict): its mean calls share, the share of runs whose pass stop before the cap the cap
    reverses, ``P(seq pass) - P(fixed pass)`` and the verdict agreement (``method="lp"`` bounds only)."""
    if bound.stop_pass is None or bound.stop_fail is None:
        raise ValueError("only a bound of method='lp' carries its rule")
    stop_pass, stop_fail = bound.stop_pass, bound.stop_fail
    n_cap, cutoff = bound.n_cap, bound.cutoff
    where = np.full((n_cap + 1, n_cap + 1), -1)
    where[bound.states[:, 0], bound.states[:, 1]] = np.arange(len(bound.states))
    verdicts = rng.random((runs, n_cap)) < q
    fixed = verdicts.sum(axis=1) >= cutoff
    count = np.zeros(runs, dtype=int)
    calls = np.full(runs, n_cap)
    decision = fixed.copy()
    early_pass = np.zeros(runs, dtype=bool)
    alive = np.ones(runs, dtype=bool)
    for n in range(n_cap):
        live = where[n, count]
        ends = alive & (live < 0)  # the fixed verdict is settled (or handed over): stop with it
        calls[ends] = n
        alive &= ~ends
        u = rng.random(runs)
        at = np.where(alive, live, 0)
        passes = alive & (u < stop_pass[at])
        fails = alive & ~passes & (u < stop_pass[at] + stop_fail[at])
        calls[passes | fails] = n
        decision[passes], decision[fails] = True, False
        early_pass |= passes
        alive &= ~(passes | fails)
        count += verdicts[:, n]
    return {"share": float(calls.mean() / n_cap), "reversed": float((early_pass & ~fixed).mean()),
            "oc": float(decision.mean() - fixed.mean()), "agreement": float((decision == fixed).mean())}
