"""Stop levels of the sequential pass-rate gate, calibrated exactly at every judge pass rate.

The fixed gate on ``N`` items passes when the judge passes at least ``cutoff`` of them
(:func:`~pytest_judgerel.stats.sequential.pass_rate_cutoff`).  The sequential gate looks after the
items of its schedule and compares the beta-binomial predictive ``p_cap`` with two levels: "pass"
at ``p_cap >= pass_level``, "fail" at ``p_cap <= fail_level``.  At each look ``p_cap`` rises with the
pass count, so the levels are a pair of count boundaries per look, and the rule's operating
characteristic at a raw pass probability ``q`` is exact: the count's distribution is carried from
look to look in binomial steps, the runs a look stops leaving it (curtailed binomial designs:
Armitage, McPherson & Rowe 1969; Jennison & Turnbull 2000, exact calculations for binary data).

:func:`pass_rate_stops` chooses the loosest levels for which, at every ``q`` in ``(0, 1)``,

    P(a pass stop before the cap, the cap's verdict fail) <= eps_pass
    P(a fail stop before the cap, the cap's verdict pass) <= eps_fail

each side with the other's stops off (which can only raise it).  Both errors fall as a level
tightens, so the level is found by bisection over the predictive values the looks can take (the
worst ``q`` lies near the cutoff rate: a dense grid of +-10 standard errors of the final proportion
around it, a coarse one over (0, 1), a finer one around the grid's worst point).  Before
``pass_from`` items (:func:`pass_rate_pass_from`) a look passes only where the count has reached
the cutoff; the pass level is calibrated with that restriction.

The predictive is Bayesian (a Jeffreys prior); these bounds are not: they hold for any judge
whose verdicts are independent with a common pass probability, whatever that probability is.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["PassRateStops", "PassRateOperating", "pass_rate_stops", "pass_rate_operating", "boundaries_operating",
           "PASS_RATE_PASS_FROM", "pass_rate_pass_from"]

PASS_RATE_PASS_FROM = 0.1
"""Share of the cap's items the pass-rate gate judges before a look may stop with "pass" (fail stops,
and a pass the count has already secured, come at any look): on a gate of a few hundred items the
first looks see a few dozen, where a pass stop spends the reversal budget on lucky streaks that
later looks use better (docs/concepts.md).  Gates on up to 200 items are unaffected: their first
look is at 20 items."""

_DENSE = 121  # rates within +-10 standard errors of the cutoff rate
_COARSE = 41  # rates over (0, 1)
_REFINE = 16  # rates between the worst grid point's neighbours


@dataclass(frozen=True)
class PassRateStops:
    """The calibrated rule: ``pass_level`` / ``fail_level`` on ``p_cap``, a pass stop only from
    ``pass_from`` items judged on (before that, only where the count has reached the cutoff); per look of
    ``looks`` (before the cap) the fewest passes that stop with "pass" (``pass_counts``, look + 1: none) and
    the most that stop with "fail" (``fail_counts``, -1: none); ``worst_reversed`` /
    ``worst_lost`` the largest P(pass stop, cap fails) / P(fail stop, cap passes) over the rates,
    and the rates where they occur."""

    n_cap: int
    cutoff: int
    looks: tuple[int, ...]
    eps_pass: float
    eps_fail: float
    pass_from: int
    pass_level: float
    fail_level: float
    pass_counts: tuple[int, ...]
    fail_counts: tuple[int, ...]
    worst_reversed: float
    worst_reversed_rate: float
    worst_lost: float
    worst_lost_rate: float


@dataclass(frozen=True)
class PassRateOperating:
    """The rule's exact behaviour at each raw pass probability of ``rates`` (arrays): runs with a pass
    stop before the cap that the cap reverses (``reversed``), with a fail stop it reverses
    (``lost``), the mean share of the cap judged (``calls_share``), P(sequential pass) and P(fixed pass)."""

    rates: np.ndarray
    reversed: np.ndarray
    lost: np.ndarray
    calls_share: np.ndarray
    p_seq_pass: np.ndarray
    p_fixed_pass: np.ndarray


_TAIL = 1e-12
"""Counts whose ``p_cap`` lies within this of 0 or 1 read as 0 or 1 in the calibration (:func:`_predictive`)."""


def pass_rate_pass_from(n_cap: int) -> int:
    """Items judged before a pass-rate look may stop with "pass": :data:`PASS_RATE_PASS_FROM` of the cap."""
    return math.ceil(PASS_RATE_PASS_FROM * n_cap)


def _predictive_rows(counts: np.ndarray, n: int, n_cap: int, cutoff: int, a: float, b: float) -> np.ndarray:
    """``p_cap`` after ``n`` items at each count of ``counts`` (each with ``0 < cutoff - c <= N - n``):
    P(BetaBinomial(N - n, a + c, b + n - c) >= cutoff - c), the same pmf as ``sequential._beta_binomial_sf``."""
    from scipy.special import betaln, gammaln

    rem = n_cap - n
    c = counts.astype(float)[:, None]
    j = np.arange(rem + 1, dtype=float)[None, :]
    log_pmf = (gammaln(rem + 1) - gammaln(j + 1) - gammaln(rem - j + 1)
               + betaln(j + a + c, rem - j + b + n - c) - betaln(a + c, b + n - c))
    pmf = np.exp(log_pmf)
    upper = np.where(j >= cutoff - c, pmf, 0.0).sum(axis=1)
    return np.clip(upper / pmf.sum(axis=1), 0.0, 1.0)


def _first(lo: int, hi: int, holds: Callable[[int], bool]) -> int:
    """The first integer in ``[lo, hi]`` where the monotone ``holds`` is true (``hi + 1``: none)."""
    while lo <= hi:
        mid = (lo + hi) // 2
        if holds(mid):
            hi = mid - 1
        else:
            lo = mid + 1
    return lo


def _predictive(n: int, n_cap: int, cutoff: int, a: float, b: float, tail: float = _TAIL) -> np.ndarray:
    """``p_cap`` after ``n`` items for every count 0..n: 1 where the cutoff is reached, 0 where it cannot be,
    else :func:`_predictive_rows`.  ``p_cap`` rises with the count, so the counts where it lies within
    ``tail`` of 0 or 1 are found by bisection and read as 0 or 1 (0: every count computed); only the
    others are summed, which keeps a gate on thousands of items from summing a square of its size."""
    counts = np.arange(n + 1)
    need = cutoff - counts
    p = np.where(need <= 0, 1.0, 0.0)
    open_ = np.flatnonzero((need > 0) & (need <= n_cap - n))
    if open_.size == 0:
        return p
    lo, hi = int(open_[0]), int(open_[-1])
    if tail > 0:
        def at(c: int) -> float:
            return float(_predictive_rows(np.array([c]), n, n_cap, cutoff, a, b)[0])

        first = _first(lo, hi, lambda c: at(c) > tail)
        last = _first(lo, hi, lambda c: at(c) >= 1.0 - tail) - 1
        p[first:hi + 1] = 1.0
        lo, hi = first, last
    if lo <= hi:
        p[lo:hi + 1] = _predictive_rows(np.arange(lo, hi + 1), n, n_cap, cutoff, a, b)
    return p


def _boundaries(predictive: list[np.ndarray], level: float, side: str) -> tuple[int, ...]:
    """Per look, the fewest passes with ``p_cap >= level`` (side "pass") or the most with ``p_cap <= level``."""
    out = []
    for p in predictive:
        if side == "pass":
            hit = np.nonzero(p >= level)[0]
            out.append(int(hit[0]) if hit.size else p.size)
        else:
            hit = np.nonzero(p <= level)[0]
            out.append(int(hit[-1]) if hit.size else -1)
    return tuple(out)


def _kernel(n_cap: int, cutoff: int, looks: tuple[int, ...], rates: np.ndarray) -> list[tuple[np.ndarray, Any]]:
    """Per look at ``rates``: the binomial step's pmf and P(the cap's count < cutoff | the count now)."""
    from scipy.stats import binom

    q = rates[:, None]
    out, seen = [], 0
    for n in looks:
        step_pmf = binom.pmf(np.arange(n - seen + 1)[None, :], n - seen, q)
        cap_fails = binom.cdf(cutoff - np.arange(n + 1)[None, :] - 1, n_cap - n, q) if n < n_cap else None
        out.append((step_pmf, cap_fails))
        seen = n
    return out


def _convolve_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise full convolution of ``a`` (R, m) and ``b`` (R, k), by FFT (numpy's; exact to rounding)."""
    size = a.shape[1] + b.shape[1] - 1
    if min(a.shape[1], b.shape[1]) <= 8:
        out = np.zeros((a.shape[0], size))
        for j in range(b.shape[1]):
            out[:, j:j + a.shape[1]] += a * b[:, j:j + 1]
        return out
    nfft = 1 << (size - 1).bit_length()
    out = np.fft.irfft(np.fft.rfft(a, nfft) * np.fft.rfft(b, nfft), nfft)[:, :size]
    return np.clip(out, 0.0, None)


def boundaries_operating(n_cap: int, cutoff: int, looks: tuple[int, ...], pass_counts: tuple[int, ...],
           fail_counts: tuple[int, ...], rates: np.ndarray,
           kernel: list[tuple[np.ndarray, Any]] | None = None) -> PassRateOperating:
    """The exact operating characteristic at ``rates`` (an array) of any rule given by count boundaries
    per look before the cap (``pass_counts``: the fewest passes that stop with "pass", look + 1: none;
    ``fail_counts``: the most that stop with "fail", -1: none); ``kernel``: :func:`_kernel` of the same
    rates, when already computed."""
    from scipy.stats import binom

    kernel = _kernel(n_cap, cutoff, looks, rates) if kernel is None else kernel
    alive = np.ones((rates.size, 1))
    reversed_ = np.zeros(rates.size)
    lost = np.zeros(rates.size)
    calls = np.zeros(rates.size)
    seq_pass = np.zeros(rates.size)
    for i, n in enumerate(looks):
        step_pmf, cap_fails = kernel[i]
        alive = _convolve_rows(alive, step_pmf)
        if cap_fails is None:  # the cap: every run still alive ends with the fixed verdict
            calls += alive.sum(axis=1)
            seq_pass += alive[:, cutoff:].sum(axis=1)
            break
        counts = np.arange(n + 1)
        stop_pass = counts >= pass_counts[i]
        stop_fail = counts <= fail_counts[i]
        reversed_ += (alive[:, stop_pass] * cap_fails[:, stop_pass]).sum(axis=1)
        lost += (alive[:, stop_fail] * (1.0 - cap_fails[:, stop_fail])).sum(axis=1)
        passing = alive[:, stop_pass].sum(axis=1)
        seq_pass += passing
        calls += (passing + alive[:, stop_fail].sum(axis=1)) * n / n_cap
        alive = np.where(stop_pass | stop_fail, 0.0, alive)
    p_fixed = binom.sf(cutoff - 1, n_cap, rates)
    return PassRateOperating(rates, reversed_, lost, calls, seq_pass, p_fixed)


def _rates(n_cap: int, cutoff: int) -> np.ndarray:
    r = cutoff / n_cap
    se = math.sqrt(max(r * (1 - r), 1.0 / n_cap) / n_cap)
    dense = np.linspace(r - 10 * se, r + 10 * se, _DENSE)
    coarse = np.linspace(0.0, 1.0, _COARSE)
    grid = np.unique(np.concatenate([dense, coarse]))
    return grid[(grid > 0.0) & (grid < 1.0)]


def _worst(n_cap: int, cutoff: int, looks: tuple[int, ...], pass_counts: tuple[int, ...],
           fail_counts: tuple[int, ...], grid: np.ndarray, side: str,
           kernel: list[tuple[np.ndarray, Any]]) -> tuple[float, float]:
    """The largest error of ``side`` ("reversed" or "lost") over ``grid`` and between the worst point's
    neighbours, and the rate where it occurs."""
    values = getattr(boundaries_operating(n_cap, cutoff, looks, pass_counts, fail_counts, grid, kernel), side)
    i = int(np.argmax(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    fine = np.linspace(lo, hi, _REFINE + 2)[1:-1]
    fine_values = getattr(boundaries_operating(n_cap, cutoff, looks, pass_counts, fail_counts, fine), side)
    j = int(np.argmax(fine_values))
    if fine_values[j] > values[i]:
        return float(fine_values[j]), float(fine[j])
    return float(values[i]), float(grid[i])


def _from_items(bounds: tuple[int, ...], before: tuple[int, ...], cutoff: int, pass_from: int) -> tuple[int, ...]:
    """Pass boundaries with no stop at a look before ``pass_from`` items, except where the count has
    reached the cutoff (that pass is certain)."""
    return tuple(b if n >= pass_from else min(cutoff, n + 1) for b, n in zip(bounds, before))


def _calibrate(predictive: list[np.ndarray], n_cap: int, cutoff: int, looks: tuple[int, ...], grid: np.ndarray,
               kernel: list[tuple[np.ndarray, Any]], eps: float, side: str,
               pass_from: int = 0) -> tuple[float, tuple[int, ...], float, float]:
    """The loosest level of one side whose worst error is at most ``eps`` (the other side off), found by
    bisection over the predictive values the looks take; (level, boundaries, worst error, its rate).
    The pass side stops only from ``pass_from`` items on (:func:`_from_items`)."""
    values = np.unique(np.concatenate(predictive)) if predictive else np.zeros(0)
    # candidate levels, loosest first; the last stops only where the cap cannot disagree
    if side == "pass":
        candidates = np.unique(np.concatenate([values[values >= 0.5], [1.0]]))
        none = (-1,) * len(predictive)
    else:
        candidates = np.unique(np.concatenate([values[values <= 0.5], [0.0]]))[::-1]
        none = tuple(p.size for p in predictive)

    def check(k: int) -> tuple[tuple[int, ...], float, float]:
        bounds = _boundaries(predictive, float(candidates[k]), side)
        if side == "pass":
            bounds = _from_items(bounds, looks[:len(predictive)], cutoff, pass_from)
        pair = (bounds, none) if side == "pass" else (none, bounds)
        worst, rate = _worst(n_cap, cutoff, looks, pair[0], pair[1], grid,
                             "reversed" if side == "pass" else "lost", kernel)
        return bounds, worst, rate

    lo, hi = -1, candidates.size - 1  # check(hi) holds (an exact stop is never reversed); find the first that holds
    best = check(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        found = check(mid)
        if found[1] <= eps:
            hi, best = mid, found
        else:
            lo = mid
    level = float(candidates[hi])
    if hi > 0:  # halfway to the next looser candidate: robust to rounding in p_cap, the same boundaries
        level = (level + float(candidates[hi - 1])) / 2
    return level, best[0], best[1], best[2]


@functools.lru_cache(maxsize=256)
def pass_rate_stops(n_cap: int, cutoff: int, looks: tuple[int, ...], eps_pass: float, eps_fail: float,
                    prior: tuple[float, float] = (0.5, 0.5), pass_from: int | None = None) -> PassRateStops:
    """The calibrated stop levels of a sequential pass-rate gate on ``n_cap`` items with cutoff count
    ``cutoff`` and looks after ``looks`` items (the last is the cap), a pass stop only from ``pass_from``
    items on (default the gate's, :func:`pass_rate_pass_from`): module docstring."""
    looks = tuple(int(n) for n in looks)
    pass_from = pass_rate_pass_from(n_cap) if pass_from is None else int(pass_from)
    before = tuple(n for n in looks if n < n_cap)
    a, b = prior
    grid = _rates(n_cap, cutoff)
    kernel = _kernel(n_cap, cutoff, looks, grid)
    for tail in (_TAIL, 0.0):  # a level within the tail of 0 or 1 is found again on every count's own value
        predictive = [_predictive(n, n_cap, cutoff, a, b, tail) for n in before]
        fail_level, fail_counts, lost, lost_rate = _calibrate(predictive, n_cap, cutoff, looks, grid, kernel,
                                                              eps_fail, "fail")
        pass_level, pass_counts, rev, rev_rate = _calibrate(predictive, n_cap, cutoff, looks, grid, kernel, eps_pass,
                                                            "pass", pass_from)
        if tail < fail_level and pass_level < 1.0 - tail:
            break
    return PassRateStops(n_cap, cutoff, looks, eps_pass, eps_fail, pass_from, pass_level, fail_level, pass_counts,
                         fail_counts, rev, rev_rate, lost, lost_rate)


def pass_rate_operating(stops: PassRateStops, rates: object) -> PassRateOperating:
    """The exact operating characteristic of ``stops`` (both sides on) at the raw pass probabilities ``rates``."""
    grid = np.atleast_1d(np.asarray(rates, dtype=float))
    return boundaries_operating(stops.n_cap, stops.cutoff, stops.looks, stops.pass_counts, stops.fail_counts, grid)
