"""The least calls a pass-rate rule that does not know the truth can spend, at the gate's own looks.

``pass_rate_bound.least_calls_share`` bounds the calls at one truth by a rule tuned to that truth
with a stop after every item.  A gate's rule is one rule for every truth and looks only at its
schedule, so "at most the goal in any design" asks more: one rule whose calls are within the goal
at each of the design's clear truths at once.  :func:`least_worst_calls` computes the least such
worst (or mean) over a set of truths, for rules that stop only at ``looks``, keep the benchmark's
promises at every rate of a grid, and may randomise: a linear program.

Variables, per look ``i`` before the cap and count ``c``: the share of the binomial paths to
``(n_i, c)`` still running (``alive``), and the shares that stop there with "pass" and with "fail".
A path's probability at rate ``q`` is ``C(n, c) q^c (1 - q)^(n - c)`` whatever the rule, so each
quantity at rate ``q`` is the share times ``Binomial(c; n_i, q)``: every promise and every truth's
expected calls is linear in the shares, and the shares carry from look to look by the
hypergeometric weights of a count's prefix (``C(n_i, c) C(s, c' - c) / C(n_{i+1}, c')``).  The
promises (:mod:`benchmarks.bench_sequential`): a pass stop the cap reverses <= ``eps_pass``,
``P(fixed pass) - P(seq pass)`` <= ``oc`` (``P(seq pass) - P(fixed pass)`` <= ``eps_pass`` <= ``oc``
follows from the first), agreement >= ``agree_at`` at the threshold and >= ``agree_clear`` where the
fixed verdict is 95% predictable.  Imposed at a grid of rates only and with terms under 1e-13
dropped from the inequalities, the program is a relaxation, so its optimum is a lower bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from pytest_judgerel.stats.sequential import PASS_RATE_EPS_PASS

__all__ = ["AgnosticBound", "Promise", "least_worst_calls", "promises"]


@dataclass(frozen=True)
class AgnosticBound:
    """``worst``: the least (over rules) of the largest calls share over ``truths``; ``shares``: the
    optimal rule's calls share at each truth; ``status``: the solver's message."""

    worst: float
    shares: tuple[float, ...]
    truths: tuple[float, ...]
    looks: tuple[int, ...]
    status: str


def _grid(n_cap: int, cutoff: int, points: int = 61) -> np.ndarray:
    r = cutoff / n_cap
    se = math.sqrt(max(r * (1 - r), 1.0 / n_cap) / n_cap)
    grid = np.concatenate([np.linspace(r - 8 * se, r + 8 * se, points), np.linspace(0.02, 0.98, 25)])
    return np.unique(grid[(grid > 0) & (grid < 1)])


@dataclass(frozen=True)
class _Layout:
    """Where each look's shares sit in the variable vector: alive, pass, fail (``n + 1`` each) per look
    before the cap, then alive at the cap, then the worst calls ``t``."""

    n_cap: int
    looks: tuple[int, ...]
    offsets: tuple[int, ...]
    cap_at: int
    t_at: int

    @classmethod
    def of(cls, n_cap: int, looks: tuple[int, ...]) -> "_Layout":
        offsets, pos = [], 0
        for n in looks[:-1]:
            offsets.append(pos)
            pos += 3 * (n + 1)
        return cls(n_cap, looks, tuple(offsets), pos, pos + n_cap + 1)

    @property
    def size(self) -> int:
        return self.t_at + 1

    def at(self, i: int, part: int = 0) -> int:
        """The first variable of look ``i``'s part (0 alive, 1 pass, 2 fail); the cap's alive for the last look."""
        if i == len(self.offsets):
            return self.cap_at
        return self.offsets[i] + part * (self.looks[i] + 1)


class _Rows:
    """A sparse matrix built one entry at a time."""

    def __init__(self) -> None:
        self.rows: list[int] = []
        self.cols: list[int] = []
        self.vals: list[float] = []
        self.count = 0

    def add(self, col: int, val: float) -> None:
        self.rows.append(self.count)
        self.cols.append(col)
        self.vals.append(val)

    def matrix(self, size: int) -> Any:
        from scipy.sparse import coo_matrix

        return coo_matrix((self.vals, (self.rows, self.cols)), shape=(self.count, size)).tocsr()


_STOP_SIGNS = ((0, -1.0), (1, 1.0), (2, 1.0))  # alive, pass, fail: "- alive + pass + fail"


def _carry_rows(lay: _Layout) -> Any:
    """alive at the next look = the shares that went on, by the hypergeometric weights of a prefix."""
    from scipy.stats import hypergeom

    out = _Rows()
    for i, n in enumerate(lay.looks[:-1]):
        nxt = lay.looks[i + 1]
        for c2 in range(nxt + 1):
            out.add(lay.at(i + 1) + c2, 1.0)
            cs = np.arange(max(0, c2 - (nxt - n)), min(n, c2) + 1)
            for c, w in zip(cs, hypergeom.pmf(cs, nxt, c2, n)):
                for part, sign in _STOP_SIGNS:
                    out.add(lay.at(i, part) + int(c), sign * float(w))
            out.count += 1
    return out.matrix(lay.size)


def _stop_rows(lay: _Layout) -> Any:
    """pass + fail <= alive, one row per look and count."""
    out = _Rows()
    for i, n in enumerate(lay.looks[:-1]):
        for c in range(n + 1):
            for part, sign in _STOP_SIGNS:
                out.add(lay.at(i, part) + c, sign)
            out.count += 1
    return out.matrix(lay.size)


@dataclass(frozen=True)
class Promise:
    """One promise at raw rate ``rate``: ``on_reversed`` x P(pass stop, cap fails) + ``on_lost`` x P(fail
    stop, cap passes) <= ``allowance``."""

    rate: float
    on_reversed: float
    on_lost: float
    allowance: float


def promises(n_cap: int, cutoff: int, threshold_raw: float, *, eps_pass: float = PASS_RATE_EPS_PASS,
             oc: float = 0.03, eps_fail: float | None = None, agree_clear: float = 0.98, agree_at: float = 0.95,
             grid: np.ndarray | None = None) -> list[Promise]:
    """The promises at each rate of ``grid`` (default :func:`_grid`) and ``threshold_raw``: a reversed pass
    stop <= ``eps_pass``; ``P(fixed pass) - P(seq pass)`` (lost - reversed) <= ``oc`` (the benchmark's), or
    with ``eps_fail`` a reversed fail stop <= ``eps_fail`` (the gate's own bound); agreement (reversed + lost)
    >= ``agree_at`` at the threshold and >= ``agree_clear`` where the fixed verdict is 95% predictable."""
    from scipy.stats import binom

    rates = _grid(n_cap, cutoff) if grid is None else np.asarray(grid, dtype=float)
    out = []
    for q in np.unique(np.concatenate([rates, [threshold_raw]])):
        q = float(q)
        out.append(Promise(q, 1.0, 0.0, eps_pass))
        out.append(Promise(q, -1.0, 1.0, oc) if eps_fail is None else Promise(q, 0.0, 1.0, eps_fail))
        p_fixed = float(binom.sf(cutoff - 1, n_cap, q))
        if q == threshold_raw or p_fixed >= 0.95 or p_fixed <= 0.05:
            out.append(Promise(q, 1.0, 1.0, 1 - (agree_at if q == threshold_raw else agree_clear)))
    return out


def _error_rows(lay: _Layout, cutoff: int, q: float) -> tuple[np.ndarray, np.ndarray]:
    """Coefficients of P(pass stop, cap fails) and P(fail stop, cap passes) at rate ``q``."""
    from scipy.stats import binom

    rev, lost = np.zeros(lay.size), np.zeros(lay.size)
    for i, n in enumerate(lay.looks[:-1]):
        counts = np.arange(n + 1)
        mass = binom.pmf(counts, n, q)
        cap_fails = binom.cdf(cutoff - counts - 1, lay.n_cap - n, q)
        rev[lay.at(i, 1): lay.at(i, 1) + n + 1] = mass * cap_fails
        lost[lay.at(i, 2): lay.at(i, 2) + n + 1] = mass * (1 - cap_fails)
    rev[np.abs(rev) < 1e-13] = 0.0
    lost[np.abs(lost) < 1e-13] = 0.0
    return rev, lost


def _calls_row(lay: _Layout, q: float) -> np.ndarray:
    """Coefficients of the expected calls share at rate ``q``: each look's new items times the share alive."""
    from scipy.stats import binom

    out, seen = np.zeros(lay.size), 0
    for i, n in enumerate(lay.looks):
        out[lay.at(i): lay.at(i) + n + 1] = binom.pmf(np.arange(n + 1), n, q) * (n - seen) / lay.n_cap
        seen = n
    return out


def least_worst_calls(n_cap: int, cutoff: int, looks: tuple[int, ...], truths: list[float], *, threshold_raw: float,
                      eps_pass: float = PASS_RATE_EPS_PASS, oc: float = 0.03, eps_fail: float | None = None,
                      agree_clear: float = 0.98, agree_at: float = 0.95, objective: str = "worst") -> AgnosticBound:
    """The least worst (``objective="worst"``) or mean (``"mean"``) calls share over the raw rates
    ``truths`` of any rule that stops only at ``looks`` (the last is the cap) and keeps the promises
    (:func:`promises`), by the linear program itself (module docstring)."""
    from scipy.optimize import linprog
    from scipy.sparse import csr_matrix, vstack

    lay = _Layout.of(n_cap, tuple(int(n) for n in looks))
    dense: list[np.ndarray] = []
    limits: list[float] = []
    rows: dict[float, tuple[np.ndarray, np.ndarray]] = {}
    for pr in promises(n_cap, cutoff, threshold_raw, eps_pass=eps_pass, oc=oc, eps_fail=eps_fail,
                       agree_clear=agree_clear, agree_at=agree_at):
        if pr.rate not in rows:
            rows[pr.rate] = _error_rows(lay, cutoff, pr.rate)
        rev, lost = rows[pr.rate]
        dense.append(pr.on_reversed * rev + pr.on_lost * lost)
        limits.append(pr.allowance)
    calls = [_calls_row(lay, float(q)) for q in truths]
    cost = np.zeros(lay.size)
    if objective == "worst":
        for row in calls:
            dense.append(row - np.eye(1, lay.size, lay.t_at)[0])
            limits.append(0.0)
        cost[lay.t_at] = 1.0
    else:
        cost = np.mean(calls, axis=0)
    stops = _stop_rows(lay)
    a_ub = vstack([stops, csr_matrix(np.array(dense))]).tocsr()
    bounds = [(0.0, 1.0)] * lay.size
    for c in range(lay.looks[0] + 1 if len(lay.looks) > 1 else 0):  # every path runs to the first look
        bounds[lay.at(0) + c] = (1.0, 1.0)
    res = linprog(cost, A_ub=a_ub, b_ub=np.concatenate([np.zeros(stops.shape[0]), limits]), A_eq=_carry_rows(lay),
                  b_eq=np.zeros(len(lay.looks[:-1]) and sum(n + 1 for n in lay.looks[1:])), bounds=bounds,
                  method="highs-ipm")  # the interior point: minutes faster than the simplex on these programs
    if res.x is None:
        raise RuntimeError(f"the program did not solve: {res.message}")
    shares = tuple(float(row @ res.x) for row in calls)
    worst = float(res.fun) if objective == "worst" else float(np.mean(shares))
    return AgnosticBound(worst, shares, tuple(float(q) for q in truths), lay.looks, str(res.message))
