"""The calls a sequential gate is expected to spend: the plan a dry run prints next to its cap.

A sequential gate may spend its whole cap, so a dry run plans the cap; what it *expects* to spend
depends on how far the judge's truth lies from the threshold.  :func:`expected_icc_share` runs the
ICC rule itself (:func:`~pytest_judgerel.stats.sequential.icc_sequential_look`, its schedule and
levels) on simulated continuous scores of the two-way model at a given true ICC(A,1);
:func:`expected_pass_rate_share` follows the pass-rate rule exactly (binomial transitions between
its looks at a given true pass rate).  Without a recorded truth the expectation is averaged over
:data:`PRIOR_OFFSETS` around the threshold (a stated prior: judges on, near and far from it).
``benchmarks/bench_sequential.py`` compares these figures with the measured calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["PlannedCalls", "expected_icc_share", "expected_pass_rate_share", "plan_icc", "plan_pass_rate",
           "ICC_PRIOR_OFFSETS", "PASS_RATE_PRIOR_OFFSETS"]

ICC_PRIOR_OFFSETS = (-0.2, -0.1, 0.0, 0.1, 0.2)
"""True ICCs the stated prior weighs equally, as offsets from the threshold (kept within 0.05-0.97)."""
PASS_RATE_PRIOR_OFFSETS = (-0.1, -0.05, 0.0, 0.05, 0.1)
"""True pass rates the stated prior weighs equally, as offsets from ``min_rate`` (kept within 0-0.995)."""


@dataclass(frozen=True)
class PlannedCalls:
    """A sequential gate's plan: ``cap_calls`` (the most it can spend), ``expected_calls`` and the
    ``basis`` of the expectation (the truth it assumed, or the stated prior)."""

    cap_calls: int
    expected_calls: float
    basis: str

    @property
    def expected_share(self) -> float:
        return self.expected_calls / self.cap_calls if self.cap_calls else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"cap_calls": self.cap_calls, "expected_calls": round(self.expected_calls, 1),
                "expected_share": round(self.expected_share, 4), "basis": self.basis}


def expected_icc_share(n_items: int, cap: int, threshold: float, truth: float, *, form: str = "A,1",
                       use: str = "estimate", runs: int = 12, seed: int = 0) -> float:
    """Mean share of the cap's calls the ICC rule (``form``, ``use``) spends over ``runs`` simulated
    data sets of ``y = a_i + e_ij`` with ICC ``truth`` (n_items x cap, continuous scores)."""
    from .sequential import icc_sequential_look, repeats_schedule

    rng = np.random.default_rng([seed, n_items, cap])
    sched = repeats_schedule(cap, n_items=n_items)
    shares = []
    for d in range(runs):
        x = (np.sqrt(truth) * rng.standard_normal((n_items, 1))
             + np.sqrt(1 - truth) * rng.standard_normal((n_items, cap)))
        for items, r, probe in sched.stages:
            look = icc_sequential_look(x[:items or n_items, :r], threshold=threshold, cap=cap, form=form, use=use,
                                       schedule=sched, seed=d, probe=x[:probe] if probe else None)
            if look.stopped:
                shares.append(look.share_of_cap)
                break
    return float(np.mean(shares))


def expected_pass_rate_share(n_cap: int, truth_raw: float, cutoff: Any, *, rule: Any) -> float:
    """Exact mean share of ``n_cap`` items the pass-rate rule judges when the judge passes each item
    with probability ``truth_raw``: the rule's stop counts at each look (found with ``rule(count, seen)``,
    a decision) carried through the pass count's distribution
    (:func:`~pytest_judgerel.stats.sequential_pass_rate.boundaries_operating`)."""
    from .sequential import pass_rate_schedule
    from .sequential_pass_rate import boundaries_operating

    looks = pass_rate_schedule(n_cap).looks
    bounds = [_stop_bounds(n, rule) for n in looks[:-1]]
    op = boundaries_operating(n_cap, int(cutoff.count), looks, tuple(high for _, high in bounds),
                              tuple(low for low, _ in bounds), np.array([float(truth_raw)]))
    return float(op.calls_share[0])


def _stop_bounds(seen: int, rule: Any) -> tuple[int, int]:
    """(the most passes that stop with "fail", the fewest that stop with "pass") after ``seen`` items
    (-1 and ``seen + 1`` when none): the predictive rises with the count, so each is a bisection."""
    def first_true(pred: Any) -> int:  # the smallest count in 0..seen + 1 where pred holds (monotone)
        lo, hi = -1, seen + 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if pred(mid) else (mid, hi)
        return hi

    high = first_true(lambda c: rule(c, seen) == "pass")
    low = first_true(lambda c: rule(c, seen) != "fail") - 1
    return low, high


def plan_icc(n_items: int, cap: int, threshold: float, truth: float | None = None, *, form: str = "A,1",
             use: str = "estimate", runs: int = 12) -> PlannedCalls:
    """The plan of a sequential ICC gate: its cap and the calls expected at ``truth`` (or over the
    prior, ``runs`` data sets at each of its truths)."""
    truths = [truth] if truth is not None else \
        [threshold + o for o in ICC_PRIOR_OFFSETS if 0.05 <= threshold + o <= 0.97]
    share = float(np.mean([expected_icc_share(n_items, cap, threshold, t, form=form, use=use, runs=runs)
                           for t in truths]))
    basis = (f"true ICC {truth:g}" if truth is not None else
             "stated prior: true ICC equally likely at the threshold and 0.1, 0.2 either side") + \
        ", repeats without offsets"
    return PlannedCalls(n_items * cap, share * n_items * cap, basis)


def plan_pass_rate(n_cap: int, *, min_rate: float, calibration: Any, use: str = "estimate", confidence: float = 0.95,
                   interval: str = "score", truth: float | None = None, repeats: int = 1) -> PlannedCalls:
    """The plan of a sequential pass-rate gate: its cap and the calls expected at true rate ``truth``
    (or over the prior); ``repeats`` calls per item."""
    from .pass_rate import JudgeCalibration
    from .sequential import pass_rate_cutoff, pass_rate_sequential_look

    cal = calibration if isinstance(calibration, JudgeCalibration) else JudgeCalibration.from_pairs(calibration)
    cutoff = pass_rate_cutoff(n_cap, min_rate=min_rate, calibration=cal, use=use, confidence=confidence,
                              interval=interval)

    def rule(count: int, seen: int) -> str:
        return pass_rate_sequential_look(count, seen, n_cap=n_cap, min_rate=min_rate, calibration=cal, use=use,
                                         confidence=confidence, interval=interval, cutoff=cutoff).decision

    truths = [truth] if truth is not None else [min_rate + o for o in PASS_RATE_PRIOR_OFFSETS if min_rate + o <= 0.995]
    shares = [expected_pass_rate_share(n_cap, cal.sensitivity * t + (1 - cal.specificity) * (1 - t), cutoff, rule=rule)
              for t in truths]
    basis = f"true pass rate {truth:g}" if truth is not None else \
        "stated prior: true pass rate equally likely at min_rate and 0.05, 0.1 either side"
    return PlannedCalls(n_cap * repeats, float(np.mean(shares)) * n_cap * repeats, basis)
