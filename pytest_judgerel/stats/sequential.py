"""Sequential gates: draw repeats (or items) in steps and stop once the cap's verdict is settled.

A fixed gate spends its whole budget: k repeats of n items, or all N items.  A sequential gate
takes the same budget as a **cap** and looks at the data at the points of a :class:`LookSchedule`.
At every look before the cap it computes the **predictive probability** that the fixed gate, run
on the cap's full data, will pass (stochastic curtailment: Lan, Simon & Halperin 1982; the
predictive form of Spiegelhalter, Freedman & Blackburn 1986 and Lee & Liu 2008), ``p_cap = P(fixed
rule on (observed + the not yet drawn data) passes | observed)``, and stops with ``"pass"`` when
``p_cap >= 1 - eps_pass``, with ``"fail"`` when ``p_cap <= eps_fail``.  At the cap the verdict
*is* the fixed gate's rule on the cap's data (the same function, the same arguments).

**Guarantees.**  Never more than the cap; at the cap, the fixed verdict; where the predictive model
is right, ``P(seq pass, fixed fail) <= eps_pass`` and ``P(seq fail, fixed pass) <= eps_fail``
over all looks (the per-look disagreement events are disjoint); for the pass-rate rule exactly, at
every pass rate of the judge.

The rules: :func:`icc_sequential_look` (ICC over repeats: 2 repeats on a first share of the items,
then every repeat of a few items, the rest simulated from the two-way model with each item's own
noise), :func:`pass_rate_sequential_look` (the beta-binomial predictive of the judge's pass count
against :func:`pass_rate_cutoff`, at levels calibrated at every pass rate: :mod:`.sequential_pass_rate`)
and :func:`human_mean_sequential_look` (PPI++; Bayesian-bootstrap completions, Rubin 1981).
Default ``eps_pass`` / ``eps_fail``: :data:`ICC_EPS_PASS` / :data:`ICC_EPS_FAIL` and their pass-rate
and human-mean twins (bench_sequential.py).  Seeded; a completed data
set whose statistic is undefined counts as a fail, as in the fixed gate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ReliabilityError
from .interval import check_confidence, check_use

__all__ = [
    "LookSchedule", "SequentialLook", "PassRateCutoff",
    "repeats_schedule", "items_schedule", "pass_rate_schedule",
    "FixedVerdict", "icc_fixed_verdict", "icc_sequential_look",
    "pass_rate_cutoff", "pass_rate_sequential_look",
    "human_mean_sequential_look",
    "ICC_EPS_PASS", "ICC_EPS_FAIL", "PASS_RATE_EPS_PASS", "PASS_RATE_EPS_FAIL",
    "HUMAN_MEAN_EPS_PASS", "HUMAN_MEAN_EPS_FAIL", "N_SIM", "OFFSET_PRIOR_DF", "ITEM_LOOK_MIN", "PASS_RATE_FIRST",
    "PASS_RATE_STEP_MAX", "NOISE_PRIOR_DF",
    "PROBE_SHARE", "PROBE_MIN", "PROBE_CANDIDATES",
]

_USES = ("estimate", "ci_low")
"""What a sequential gate may test: its estimate or the lower bound of its interval."""

ICC_EPS_PASS = 0.01
"""Stop with "pass" when the predictive probability that the cap passes is >= 1 - eps_pass (ICC
rule); it bounds the extra false passes over the fixed design (module docstring)."""
ICC_EPS_FAIL = 0.02
"""Stop with "fail" when that probability is <= eps_fail (ICC rule).  With the pass side it keeps the
sequential gate's pass probability within 0.03 of the fixed gate's at every truth, both ways
(``benchmarks/bench_sequential.py``, designs drawn at random; ``docs/concepts.md``, "Sequential gates")."""
PASS_RATE_EPS_PASS = 0.02
"""The pass-rate rule's bound on runs with a pass stop the cap reverses, exact at every pass rate of the
judge (its levels are calibrated to it: :mod:`.sequential_pass_rate`).  Near eps_fail, so that the two
errors offset in P(sequential pass) instead of failing good judges more often than the fixed gate
(docs/concepts.md, "The pass-rate gate's pass side")."""
PASS_RATE_EPS_FAIL = 0.03
"""The same for its fail stops."""
HUMAN_MEAN_EPS_PASS = 0.01
"""The pass side of the PPI++ human-mean rule (measured with ``benchmarks/bench_sequential.py --human-only``)."""
HUMAN_MEAN_EPS_FAIL = 0.03
"""The fail side of the PPI++ human-mean rule."""
OFFSET_PRIOR_DF = 1.0
"""Pseudo-degrees of freedom of the ICC rule's prior on the repeats' expected mean square, centred
at "no offsets" (``_offsets_mean_square``; chosen with ``benchmarks/bench_sequential.py``)."""
NOISE_PRIOR_DF = 4.0
"""Pseudo-df that shrink each item's noise variance toward the pooled one in the ICC rule's
completions (``_item_noise``; 0: homoscedastic completions)."""
ITEM_LOOK_MIN = 10
"""The fewest items an ICC look on a first share of the items uses (``repeats_schedule(n_items=)``)."""
PROBE_SHARE = 0.05
"""The ICC schedule's offsets probe: every repeat of the cap on this share of the items (at least
:data:`PROBE_MIN`), drawn after the first all-items look, so the repeats' offsets are seen on
``cap - 1`` df instead of ``first - 1`` (``repeats_schedule``; ``docs/concepts.md``)."""
PROBE_MIN = 3
"""The fewest items of the offsets probe."""
PROBE_CANDIDATES = 64
"""Draws of the offsets' variance from the observed repeats per simulated completion, reweighted by
the offsets probe's likelihood (``_offsets_posterior``)."""
PASS_RATE_FIRST = 20
"""Items judged before the pass-rate gate's first look (``pass_rate_schedule``)."""
PASS_RATE_STEP_MAX = 10
"""Items between two pass-rate looks on gates of 200 to 400 items; larger gates look every fortieth of their
items (``pass_rate_schedule``; why: docs/concepts.md, "Closer looks on large gates")."""
N_SIM = 400
"""Simulated completions per look (ICC and human-mean rules); Monte Carlo sd at p = 0.98: 0.007."""

_DECISIONS = ("continue", "pass", "fail")


# ---------------------------------------------------------------------------- schedules
@dataclass(frozen=True)
class LookSchedule:
    """The sizes (repeats, or items, drawn so far) at which a sequential gate looks; the last is the cap."""

    looks: tuple[int, ...]
    unit: str
    item_looks: tuple[int, ...] = ()
    """Looks before ``looks``' first: ``first`` repeats on a first share of the items (these counts, in the
    judging order), for ICC gates whose first all-items look would already cost a large share of the cap."""
    n_items: int | None = None
    """The cap's items (set with ``item_looks`` or ``probe``)."""
    probe: int = 0
    """Items of the offsets probe (0: none): every repeat of the cap on the first ``probe`` items (judging
    order), drawn after the first all-items look; every later look sees it too."""

    @property
    def cap(self) -> int:
        return self.looks[-1]

    @property
    def stages(self) -> tuple[tuple[int | None, int, int], ...]:
        """Every look in order as (items, size, probe items): ``item_looks`` at the first size, then all
        items (None) at the first size, then with the probe (if any) at the first size and every later one."""
        head = tuple((m, self.first, 0) for m in self.item_looks) + ((None, self.first, 0),)
        return head + tuple((None, s, self.probe) for s in (self.looks if self.probe else self.looks[1:]))

    def stage_number(self, items: int | None, used: int, probed: bool = False) -> int:
        """1-based number of the look at ``used`` on ``items`` (None or the cap's items: all of them);
        ``probed``: the look saw the offsets probe."""
        if items is None or self.n_items is None or items >= self.n_items:
            return len(self.item_looks) + self.look_number(used) + int(bool(self.probe) and (probed or used > self.first))
        return sum(1 for m in self.item_looks if m <= items)

    @property
    def first(self) -> int:
        return self.looks[0]

    def look_number(self, used: int) -> int:
        """1-based number of the look at ``used`` (looks off the schedule count the scheduled ones passed)."""
        return sum(1 for s in self.looks if s <= used)

    def next_size(self, used: int) -> int | None:
        """The size of the next look after ``used`` (None at or past the cap)."""
        return next((s for s in self.looks if s > used), None)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"looks": list(self.looks), "unit": self.unit, "cap": self.cap}
        if self.item_looks or self.probe:
            out.update(item_looks=list(self.item_looks), n_items=self.n_items)
        if self.probe:
            out["probe"] = self.probe
        return out


def _positive_int(value: Any, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ReliabilityError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def repeats_schedule(cap: int, first: int = 2, n_items: int | None = None, probe: bool = True) -> LookSchedule:
    """Looks after repeats ``first, first + 1, ..., cap`` (an ICC needs 2 repeats before it can look).

    With ``n_items`` (the cap's items) the looks at ``first`` repeats start on a first share of the
    items: every ``max(ITEM_LOOK_MIN, ceil(n_items / 3))`` items in the judging order, then all of
    them, so a gate whose first all-items look costs ``first / cap`` of its calls can stop sooner.
    Then (``probe``, when ``cap > first``) the offsets probe: every repeat on the first
    ``max(PROBE_MIN, ceil(PROBE_SHARE n_items))`` items (fewer than ``n_items``)."""
    cap = _positive_int(cap, "cap (the repeats of the fixed design)", 2)
    first = _positive_int(first, "first", 2)
    if first > cap:
        raise ReliabilityError(f"the first look ({first} repeats) lies past the cap ({cap} repeats)")
    if n_items is None:
        return LookSchedule(tuple(range(first, cap + 1)), "repeats")
    n_items = _positive_int(n_items, "n_items (the items of the fixed design)", 2)
    step = max(ITEM_LOOK_MIN, math.ceil(n_items / 3))
    size = max(PROBE_MIN, math.ceil(PROBE_SHARE * n_items))
    return LookSchedule(tuple(range(first, cap + 1)), "repeats", tuple(range(step, n_items, step)), n_items,
                        size if probe and cap > first and size < n_items else 0)


def items_schedule(cap: int, batch: int | None = None, first: int | None = None) -> LookSchedule:
    """Looks after ``first`` items (default ``batch``), then every ``batch`` items (default
    ``max(50, ceil(cap / 10))``) and at the cap."""
    cap = _positive_int(cap, "cap (the items of the fixed design)")
    batch = max(50, math.ceil(cap / 10)) if batch is None else _positive_int(batch, "batch")
    start = batch if first is None else _positive_int(first, "first")
    looks = list(range(start, cap, batch)) + [cap]
    return LookSchedule(tuple(looks), "items")


def pass_rate_schedule(cap: int) -> LookSchedule:
    """The pass-rate gate's looks: from :data:`PASS_RATE_FIRST` items in steps of ``ceil(cap / 20)`` items, at
    least 5 and at most :data:`PASS_RATE_STEP_MAX`, and of ``ceil(cap / 40)`` on gates of more than
    ``40 * PASS_RATE_STEP_MAX`` items (its look is exact and cheap, so small gates look too; the stop levels
    pay for every look: :mod:`.sequential_pass_rate`)."""
    cap = _positive_int(cap, "cap (the items of the fixed design)")
    step = max(5, min(PASS_RATE_STEP_MAX, math.ceil(cap / 20)), math.ceil(cap / 40))
    return items_schedule(cap, batch=step, first=min(PASS_RATE_FIRST, cap))


# ---------------------------------------------------------------------------- result
@dataclass(frozen=True)
class SequentialLook:
    """One look of a sequential gate.

    ``decision``: ``"continue"`` (draw the next step), ``"pass"`` or ``"fail"`` (stop: the
    verdict); ``look`` the 1-based look number on ``schedule``; ``used`` the repeats (or items)
    drawn so far, ``cap`` the fixed design's; ``p_pass_at_cap`` the predictive probability that
    the fixed gate passes on the cap's data (exactly 0 or 1 at the cap); ``observed`` the gate's
    statistic on the data so far (None where undefined); ``reason`` in words; ``n_sim`` the
    simulated completions run (fewer than asked once "continue" was certain, see
    ``_simulate_until_settled``; None for the exact pass-rate rule and at the cap).
    """

    decision: str
    look: int
    used: int
    cap: int
    unit: str
    p_pass_at_cap: float
    observed: float | None
    threshold: float
    eps_pass: float
    eps_fail: float
    rule: str
    reason: str
    n_sim: int | None = None
    seed: int | None = None
    schedule: LookSchedule | None = None
    items: int | None = None
    """Items seen, for a look on a first share of them (None: all of the cap's items)."""
    items_cap: int | None = None
    probe_items: int = 0
    """Items of the offsets probe the look saw on every repeat of the cap (0: none; ``items_cap`` then
    holds the cap's items)."""

    @property
    def stopped(self) -> bool:
        return self.decision != "continue"

    @property
    def partial(self) -> bool:
        """The look saw only a first share of the cap's items."""
        return self.items is not None and self.items_cap is not None and self.items < self.items_cap

    @property
    def at_cap(self) -> bool:
        return self.used >= self.cap and not self.partial

    @property
    def share_of_cap(self) -> float:
        """Judge answers used as a share of the fixed design's."""
        share = self.used / self.cap
        if self.partial:
            share *= self.items / self.items_cap  # type: ignore[operator]
        if self.probe_items and self.items_cap:  # the probe's items on the repeats past ``used``
            share += self.probe_items * (self.cap - self.used) / (self.cap * self.items_cap)
        return share

    @property
    def next_size(self) -> int | None:
        """Repeats (or items) to have at the next look (None once stopped); after a look on a first
        share of the items, the same repeats (on more items)."""
        if self.stopped or self.schedule is None:
            return None
        return self.used if self.partial else self.schedule.next_size(self.used)

    def to_dict(self) -> dict[str, Any]:
        return {"decision": self.decision, "look": self.look, "used": self.used, "cap": self.cap,
                "unit": self.unit, "p_pass_at_cap": self.p_pass_at_cap, "observed": self.observed,
                "threshold": self.threshold, "eps_pass": self.eps_pass, "eps_fail": self.eps_fail, "rule": self.rule, "reason": self.reason,
                "n_sim": self.n_sim, "seed": self.seed, "items": self.items, "items_cap": self.items_cap,
                "probe_items": self.probe_items,
                "schedule": None if self.schedule is None else self.schedule.to_dict()}

    def __str__(self) -> str:
        on = f" on {self.items}/{self.items_cap} items" if self.partial else \
            f" (+ every repeat on {self.probe_items} items)" if self.probe_items and not self.at_cap else ""
        return (f"sequential {self.rule}: look {self.look}, {self.used}/{self.cap} {self.unit}{on}: "
                f"{self.decision} (P(pass at cap) = {self.p_pass_at_cap:.3f}); {self.reason}")


def _check_eps(eps: Any, name: str = "eps") -> float:
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 < eps < 0.5:
        raise ReliabilityError(f"{name} must be a number strictly between 0 and 0.5, got {eps!r}")
    return float(eps)


def _stop_levels(eps: Any, eps_pass: Any, eps_fail: Any, default_pass: float,
                 default_fail: float) -> tuple[float, float]:
    """(eps_pass, eps_fail): ``eps`` sets both sides; ``eps_pass``/``eps_fail`` override one side."""
    base_pass = default_pass if eps is None else _check_eps(eps)
    base_fail = default_fail if eps is None else _check_eps(eps)
    return (base_pass if eps_pass is None else _check_eps(eps_pass, "eps_pass"),
            base_fail if eps_fail is None else _check_eps(eps_fail, "eps_fail"))


def _check_finite(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(value):
        raise ReliabilityError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def _check_schedule(schedule: LookSchedule | None, default: LookSchedule, cap: int) -> LookSchedule:
    if schedule is None:
        return default
    if not isinstance(schedule, LookSchedule):
        raise ReliabilityError(f"schedule must be a LookSchedule, got {type(schedule).__name__}")
    if schedule.unit != default.unit:
        raise ReliabilityError(f"the schedule counts {schedule.unit}, but this gate draws {default.unit}")
    if schedule.cap != cap:
        raise ReliabilityError(f"the schedule ends at {schedule.cap} {schedule.unit}, but the cap is {cap}")
    return schedule


def _decide(p: float, eps_pass: float, eps_fail: float, what: str) -> tuple[str, str]:
    if p >= 1 - eps_pass:
        return "pass", (f"P({what} passes at the cap) = {p:.3f} >= 1 - eps_pass = {1 - eps_pass:.3f}: "
                        "the verdict is settled")
    if p <= eps_fail:
        return "fail", f"P({what} passes at the cap) = {p:.3f} <= eps_fail = {eps_fail:.3f}: the verdict is settled"
    return "continue", (f"P({what} passes at the cap) = {p:.3f} lies within ({eps_fail:.3f}, "
                        f"{1 - eps_pass:.3f}): draw more")


def _decide_at_levels(p: float, pass_level: float, fail_level: float, seen: int = 0,
                      pass_from: int = 0) -> tuple[str, str]:
    """The pass-rate gate's decision at its calibrated levels (:mod:`.sequential_pass_rate`) after ``seen``
    items, a pass only from ``pass_from`` items on."""
    what = "P(the pass-rate gate passes at the cap)"
    if p >= pass_level and seen < pass_from:
        return "continue", (f"{what} = {p:.4f} >= the pass level {pass_level:.4f}, but no pass stop before "
                            f"{pass_from} items are judged: draw more")
    if p >= pass_level:
        return "pass", f"{what} = {p:.4f} >= the pass level {pass_level:.4f}: the verdict is settled"
    if p <= fail_level:
        return "fail", f"{what} = {p:.4f} <= the fail level {fail_level:.4f}: the verdict is settled"
    return "continue", f"{what} = {p:.4f} lies within ({fail_level:.4f}, {pass_level:.4f}): draw more"


_BLOCK = 100


def _simulate_until_settled(passes_in: Any, n_sim: int, eps_pass: float, eps_fail: float,
                            block: int) -> tuple[int, int]:
    """Run ``passes_in(b)`` (the passes among b new simulated completions) in blocks up to ``n_sim``.

    Stops early only when the decision at ``n_sim`` is already certain to be "continue": once more
    than ``eps_fail n_sim`` completions have passed (``p <= eps_fail`` is out of reach) *and* more
    than ``eps_pass n_sim`` have failed (``p >= 1 - eps_pass`` is out of reach), whatever the rest
    give.  The decision is therefore exactly the full run's; ``p`` is then the share of the
    completions run.
    """
    passes = done = 0
    while done < n_sim:
        b = min(block, n_sim - done)
        passes += passes_in(b)
        done += b
        if passes > eps_fail * n_sim and done - passes > eps_pass * n_sim:
            break
    return passes, done


# ---------------------------------------------------------------------------- ICC over repeats
def _icc_matrix(ratings: Any) -> np.ndarray:
    from ._input import as_matrix

    return as_matrix(ratings)


@dataclass(frozen=True)
class FixedVerdict:
    """The fixed gate's verdict on the cap's data: ``passed``, the ``tested`` number (the ICC or its
    lower bound; None when it could not be computed) and, then, the ``error`` that says why."""

    passed: bool
    tested: float | None
    error: str | None = None


def icc_fixed_verdict(ratings: Any, threshold: float, form: str = "A,1", use: str = "estimate", *,
                      confidence: float = 0.95, nan_policy: str = "raise") -> FixedVerdict:
    """The fixed ICC gate's verdict, as ``assert_icc_above`` decides it.

    ``icc(ratings, form, confidence, nan_policy)``; the gate tests its value (``use="estimate"``)
    or its lower CI bound (``"ci_low"``) against ``threshold`` (``>=`` passes); a statistic that
    cannot be computed (:class:`ReliabilityError`) fails.
    """
    from .icc import icc

    try:
        res = icc(ratings, form=form, confidence=confidence, nan_policy=nan_policy)
    except ReliabilityError as exc:
        return FixedVerdict(False, None, str(exc))
    tested = res.value if use == "estimate" else res.ci_low
    return FixedVerdict(bool(tested >= threshold), float(tested))


def _chi2_scale(ss: float, df: float, rng: np.random.Generator, size: int) -> np.ndarray:
    """Posterior draws of an expected mean square: ``SS / chi2(df)`` (Box & Tiao 1973, 5.2)."""
    if df <= 0 or ss <= 0:
        return np.zeros(size)
    return ss / rng.chisquare(df, size)


def _offsets_mean_square(ssc: float, df: int, ems_e: np.ndarray, prior_df: float,
                         rng: np.random.Generator) -> np.ndarray:
    """Posterior draws of the repeats' expected mean square ``EMS_c = s_e + n s_b``.

    Conjugate: a scaled-inverse-chi-square prior with ``prior_df`` pseudo-degrees of freedom
    centred at "no offsets" (``EMS_c = EMS_e``, the error mean square drawn with it) updated by
    the repeats' ``SS_c`` on ``r - 1`` df: ``(SS_c + prior_df EMS_e) / chi2(r - 1 + prior_df)``
    (Gelman et al. 2013, *Bayesian Data Analysis* 3rd ed., section 3.3).  With 2-3 repeats
    (1-2 df) the prior's few df keep the draw's tail finite; as repeats come in the data
    dominate.  ``prior_df = 0`` is the flat-prior ``SS_c / chi2(r - 1)`` (Box & Tiao 1973, 5.2).
    """
    if prior_df <= 0:
        return _chi2_scale(ssc, df, rng, ems_e.size)
    return (ssc + prior_df * ems_e) / rng.chisquare(df + prior_df, ems_e.size)


def _item_noise(resid: np.ndarray, prior_df: float) -> tuple[np.ndarray, float]:
    """(each item's noise variance relative to the pooled one, the error mean square's effective df).

    The items' residual variances are shrunk toward the pooled one with ``prior_df`` pseudo-df
    (0: every item the pooled variance), so judges whose noise differs by item get completions
    whose noise does too.  The df of ``SS_e / chi2(df)`` shrink with the residuals' kurtosis
    (``2 df / (kurtosis - 1)``, at most ``df``: the variance of a sum of squares of non-normal
    residuals, Box 1953, *Biometrika* 40), so heavy-tailed errors widen the posterior."""
    n, r = resid.shape
    df = (n - 1) * (r - 1)
    sq = resid ** 2
    sse = float(sq.sum())
    if sse <= 0:
        return np.ones(n), float(df)
    kurt = float((sq ** 2).mean()) / float(sq.mean()) ** 2
    df_e = float(min(df, 2 * df / max(kurt - 1, 1e-9)))
    if prior_df <= 0:
        return np.ones(n), df_e
    d_i = df / n  # each item's share of the residual df
    v = sq.sum(axis=1) * n / sse  # each item's residual variance over the pooled one (mean 1)
    return (d_i * v + prior_df) / (d_i + prior_df), df_e


def _new_items(x: np.ndarray, cap: int, n_new: int, s_a: np.ndarray, s_e: np.ndarray, offsets: np.ndarray,
               rng: np.random.Generator, h: np.ndarray | None = None) -> np.ndarray:
    """Completions (n_sim, n_new, cap) of items not drawn yet: their true means around the grand
    mean (drawn with its uncertainty, shared by the new items), the observed repeats' offsets
    (the observed column means' deviations) and ``offsets`` for the repeats to come, normal noise
    (each new item's variance factor drawn from the observed items' ``h``)."""
    n, r = x.shape
    n_sim = s_a.size
    g = float(x.mean())
    centre = g + np.sqrt(s_a / n + s_e / (n * r)) * rng.standard_normal(n_sim)
    theta = centre[:, None] + np.sqrt(s_a)[:, None] * rng.standard_normal((n_sim, n_new))
    shift = np.concatenate([np.broadcast_to(x.mean(axis=0) - g, (n_sim, r)), offsets], axis=1)
    scale = np.ones((n_sim, n_new)) if h is None else rng.choice(h, size=(n_sim, n_new))
    noise = np.sqrt(s_e)[:, None, None] * np.sqrt(scale)[:, :, None] * rng.standard_normal((n_sim, n_new, cap))
    return theta[:, :, None] + shift[:, None, :] + noise


@dataclass(frozen=True)
class _OffsetsPosterior:
    """The repeats to come's offsets, relative to the mean offset of the r observed ones, per
    simulation: ``centre + scale Z - common Z'`` (Z: one normal per repeat to come, Z': one shared)."""

    s_b: np.ndarray
    centre: np.ndarray | float
    scale: np.ndarray
    common: np.ndarray

    def draw(self, m: int, rng: np.random.Generator) -> np.ndarray:
        n_sim = self.s_b.size
        return (self.centre + self.scale[:, None] * rng.standard_normal((n_sim, m))
                - self.common[:, None] * rng.standard_normal((n_sim, 1)))


def _probe_evidence(probe: np.ndarray, r: int) -> tuple[float, int]:
    """(SS, df) of what the offsets probe adds on the repeats' offsets: the deviations of its columns
    ``r + 1..k`` (not drawn yet on the other items) among themselves, and the contrast of their mean
    with the mean of its first ``r`` columns; ``SS ~ (s_e + m s_b) chi2(k - r)`` (m probe items), and
    orthogonal to the observed items' column deviations (the data of the all-items posterior)."""
    m, k = probe.shape
    cp = probe.mean(axis=0)
    new = cp[r:]
    contrast = float(new.mean() - cp[:r].mean())
    ss = m * float(((new - new.mean()) ** 2).sum()) + m * contrast ** 2 / (1 / r + 1 / (k - r))
    return ss, k - r


def _probe_reweighted(ems: np.ndarray, s_e: np.ndarray, n: int, m: int, ss: float, df: int,
                      rng: np.random.Generator) -> np.ndarray:
    """One ``s_b`` per row of ``ems`` (rows: simulations, columns: draws of the all-items posterior of
    ``EMS_c``), resampled with weights ``w ~ (s_e + m s_b)^(-df/2) exp(-SS / (2 (s_e + m s_b)))``, the
    probe's likelihood (:func:`_probe_evidence`): sampling-importance-resampling from the posterior
    given the observed repeats and the probe together (Rubin 1988, *Bayesian Statistics 3*)."""
    s_b = np.maximum(0.0, (ems - s_e[:, None]) / n)
    var = s_e[:, None] + m * s_b
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        logw = -0.5 * df * np.log(var) - ss / (2 * var)
    logw = np.where(np.isfinite(logw), logw, -np.inf)
    top = logw.max(axis=1, keepdims=True)
    w = np.exp(logw - np.where(np.isfinite(top), top, 0.0))
    total = w.sum(axis=1, keepdims=True)
    w = np.where(total > 0, w / np.where(total > 0, total, 1.0), 1.0 / w.shape[1])
    pick = np.minimum((w.cumsum(axis=1) < rng.random((w.shape[0], 1))).sum(axis=1), w.shape[1] - 1)
    return s_b[np.arange(s_b.shape[0]), pick]


def _offsets_posterior(ssc: float, n: int, r: int, cap: int, s_e: np.ndarray, prior_df: float,
                       rng: np.random.Generator, probe: np.ndarray | None) -> _OffsetsPosterior:
    """``b_j ~ N(0, s_b)`` with ``s_b`` from :func:`_offsets_mean_square` on the repeats' ``SS_c``
    (``r - 1`` df).  With the offsets ``probe`` (complete items x every repeat of the cap) ``s_b``
    is drawn from the posterior given both: :data:`PROBE_CANDIDATES` draws of the all-items
    posterior per simulation, reweighted by the probe's likelihood (``cap - r`` df,
    :func:`_probe_reweighted`); each offset to come is its probe column's deviation ``d_j``, shrunk:
    ``N(B d_j, B (1 + 1/r) s_e / m)``, ``B = s_b / (s_b + s_e / m)`` (normal-normal, m probe items)."""
    if probe is None:
        s_b = np.maximum(0.0, (_offsets_mean_square(ssc, r - 1, s_e, prior_df, rng) - s_e) / n)
        return _OffsetsPosterior(s_b, 0.0, np.sqrt(s_b), np.sqrt(s_b / r))
    k = probe.shape[0]
    ss, df = _probe_evidence(probe, r)
    ems = _offsets_mean_square(ssc, r - 1, np.repeat(s_e, PROBE_CANDIDATES), prior_df, rng)
    s_b = _probe_reweighted(ems.reshape(s_e.size, PROBE_CANDIDATES), s_e, n, k, ss, df, rng)
    with np.errstate(divide="ignore", invalid="ignore"):
        shrink = np.where(s_b > 0, s_b / (s_b + s_e / k), 0.0)
    cp = probe.mean(axis=0)
    d = cp[r:] - cp[:r].mean()
    return _OffsetsPosterior(s_b, shrink[:, None] * d[None, :], np.sqrt(shrink * (1 + 1 / r) * s_e / k),
                             np.zeros(s_b.size))


def _simulate_completions(x: np.ndarray, cap: int, n_sim: int, rng: np.random.Generator,
                          offset_prior_df: float = OFFSET_PRIOR_DF, n_items: int | None = None,
                          probe: np.ndarray | None = None) -> np.ndarray:
    """``n_sim`` completions (n_sim, n_items, cap) of the observed items x repeats ``x``; ``n_items``
    (default: the observed items) adds items not drawn yet (:func:`_new_items`); ``probe``: the offsets
    probe (:func:`_offsets_posterior`).

    The two-way random model ``y_ij = theta_i + b_j + e_ij`` (McGraw & Wong 1996) with its variance
    components drawn from their approximate posteriors (the error and item mean squares over a
    chi-square draw, ``SS / chi2(df)``, Box & Tiao 1973 section 5.2, the error's df cut by the
    residuals' kurtosis, :func:`_item_noise`; the repeats' mean square from the conjugate posterior
    of :func:`_offsets_mean_square`, :func:`_offsets_posterior`; components by the ANOVA moment equations, truncated at 0), the
    items' true means drawn around their shrunken observed means (normal-normal posterior, ``B =
    s_a^2 / (s_a^2 + s_e^2 / r)``), new repeat offsets ``b_j`` relative to the mean offset of the
    observed repeats, and normal noise with each item's variance factor."""
    n, r = x.shape
    m = cap - r
    g = float(x.mean())
    rows = x.mean(axis=1)
    cols = x.mean(axis=0)
    resid = x - rows[:, None] - cols[None, :] + g
    ssr = r * float(((rows - g) ** 2).sum())
    ssc = n * float(((cols - g) ** 2).sum())
    sse = float((resid ** 2).sum())
    h, df_e = _item_noise(resid, NOISE_PRIOR_DF)
    s_e = _chi2_scale(sse * df_e / ((n - 1) * (r - 1)), df_e, rng, n_sim) if df_e > 0 else np.zeros(n_sim)
    post = _offsets_posterior(ssc, n, r, cap, s_e, offset_prior_df, rng, probe)
    s_a = np.maximum(0.0, (_chi2_scale(ssr, n - 1, rng, n_sim) - s_e) / r)
    den = s_a + s_e / r
    with np.errstate(divide="ignore", invalid="ignore"):
        shrink = np.where(den > 0, s_a / np.where(den > 0, den, 1.0), 0.0)
    theta = (g + shrink[:, None] * (rows - g)[None, :]
             + np.sqrt(shrink * s_e / r)[:, None] * rng.standard_normal((n_sim, n)))
    offsets = post.draw(m, rng)
    noise = np.sqrt(s_e)[:, None, None] * np.sqrt(h)[None, :, None] * rng.standard_normal((n_sim, n, m))
    future = theta[:, :, None] + offsets[:, None, :] + noise
    out = np.empty((n_sim, n if n_items is None else n_items, cap))
    out[:, :n, :r] = x[None]
    out[:, :n, r:] = future
    if n_items is not None and n_items > n:
        out[:, n:, :] = _new_items(x, cap, n_items - n, s_a, s_e, offsets, rng, h)
    return out


def _icc_passes_on(stack: np.ndarray, form: str, use: str, confidence: float, threshold: float) -> np.ndarray:
    """The fixed rule on every matrix of ``stack``; undefined counts as a fail."""
    if use == "estimate":
        from .icc_batch import icc_values

        values = np.atleast_1d(np.asarray(icc_values(stack, form), dtype=float))
        return np.isfinite(values) & (values >= threshold)
    return np.array([icc_fixed_verdict(s, threshold, form, use, confidence=confidence).passed for s in stack])


def _icc_at_cap(x: np.ndarray, threshold: float, canon: str, use: str, confidence: float, nan_policy: str,
                eps_pass: float, eps_fail: float, rule: str, look: int, seed: int | None,
                sched: LookSchedule) -> SequentialLook:
    """The look at the cap: the fixed rule itself (:func:`icc_fixed_verdict`)."""
    cap = x.shape[1]
    fixed = icc_fixed_verdict(x, threshold, canon, use, confidence=confidence, nan_policy=nan_policy)
    passed, tested = fixed.passed, fixed.tested
    if tested is None:
        why = f"not computed, which fails: {fixed.error}"
    else:
        why = f"{tested:.4f} {'>=' if passed else '<'} {threshold:g}"
    return SequentialLook("pass" if passed else "fail", look, cap, cap, "repeats", float(passed), tested,
                          threshold, eps_pass, eps_fail, rule,
                          f"at the cap: the fixed rule on all {cap} repeats ({why})",
                          None, seed, sched)


def _icc_items(x: np.ndarray, n_items: int | None, sched: LookSchedule | None) -> int:
    """The cap's items: ``n_items``, else the schedule's, else the observed ones (checked)."""
    total = n_items if n_items is not None else (sched.n_items if sched is not None else None)
    if total is None:
        return int(x.shape[0])
    total = _positive_int(total, "n_items (the items of the fixed design)", 2)
    if x.shape[0] > total:
        raise ReliabilityError(f"ratings have {x.shape[0]} items, more than the cap's {total}")
    return total


def _check_prior_df(value: Any) -> float:
    prior_df = _check_finite(value, "offset_prior_df")
    if prior_df < 0:
        raise ReliabilityError(f"offset_prior_df must be >= 0 (0: the flat prior), got {value!r}")
    return prior_df


def _probe_rows(probe: Any) -> int:
    return int(_icc_matrix(probe).shape[0])


def _icc_probe(probe: Any, cap: int, total: int) -> np.ndarray | None:
    """The offsets probe's complete items (items x the cap's repeats; an item with a missing rating
    is left out), None without one or with fewer than 2 complete items (the look then reads the
    offsets from the observed repeats alone)."""
    if probe is None:
        return None
    p = _icc_matrix(probe)
    if p.shape[1] != cap:
        raise ReliabilityError(f"the offsets probe has {p.shape[1]} repeats; it holds every repeat of the cap ({cap})")
    if p.shape[0] > total:
        raise ReliabilityError(f"the offsets probe has {p.shape[0]} items, more than the cap's {total}")
    p = p[~np.isnan(p).any(axis=1)]
    return p if p.shape[0] >= 2 else None


def icc_sequential_look(ratings: Any, *, threshold: float, cap: int, form: str = "A,1", use: str = "estimate",
                        confidence: float = 0.95, nan_policy: str = "raise", eps: float | None = None,
                        eps_pass: float | None = None, eps_fail: float | None = None, n_sim: int = N_SIM,
                        seed: int | None = 0, schedule: LookSchedule | None = None,
                        offset_prior_df: float = OFFSET_PRIOR_DF, n_items: int | None = None,
                        probe: Any = None) -> SequentialLook:
    """One look of a sequential ICC gate over repeats.

    ``ratings``: the items x repeats drawn so far (the first ``r`` of the cap's repeats, ``2 <= r
    <= cap``; an object with ``to_matrix()`` works too); ``threshold``/``form``/``use``/
    ``confidence``/``nan_policy``: the fixed gate's (``assert_icc_above``); ``cap``: the fixed
    design's repeats; ``n_items``: its items (default the schedule's, else the rows given), more
    than the rows for a look on a first share of them; ``probe``: the offsets probe (the schedule's
    first ``probe`` items in the judging order on every repeat of the cap, :class:`LookSchedule`).
    Before the cap the decision comes from ``n_sim`` simulated completions (module docstring;
    ``seed``; ``offset_prior_df``: the pseudo-df of the prior on the repeat offsets, 0 for the flat
    prior); it stops with "pass" at
    ``p_cap >= 1 - eps_pass`` (default :data:`ICC_EPS_PASS`) and "fail" at ``p_cap <= eps_fail``
    (:data:`ICC_EPS_FAIL`); ``eps`` sets both.  At the cap it is :func:`icc_fixed_verdict` on
    ``ratings``.  ``nan_policy="omit"`` drops items with a missing rating so far (the fixed gate drops them too).
    """
    from .icc import canonical_form

    threshold = _check_finite(threshold, "threshold")
    canon = canonical_form(form)
    use = check_use(use, _USES)
    confidence = check_confidence(confidence)
    eps_pass, eps_fail = _stop_levels(eps, eps_pass, eps_fail, ICC_EPS_PASS, ICC_EPS_FAIL)
    n_sim = _positive_int(n_sim, "n_sim")
    cap = _positive_int(cap, "cap (the repeats of the fixed design)", 2)
    if nan_policy not in ("raise", "omit"):
        raise ReliabilityError(f"nan_policy must be 'raise' or 'omit', got {nan_policy!r}")
    sched = _check_schedule(schedule, repeats_schedule(cap), cap)
    prior_df = _check_prior_df(offset_prior_df)
    x = _icc_matrix(ratings)
    n, r = x.shape
    total = _icc_items(x, n_items, schedule)
    if r > cap:
        raise ReliabilityError(f"ratings have {r} repeats, more than the cap of {cap}: a sequential gate never "
                               "draws past its cap")
    if r < 2:
        raise ReliabilityError(f"ratings have {r} repeat(s): a look needs at least 2 repeats per item")
    rule = f"ICC({canon}) {'lower CI bound' if use == 'ci_low' else 'estimate'} >= {threshold:g} at {cap} repeats"
    extra = _icc_probe(probe, cap, total)
    look = sched.stage_number(n, r, extra is not None)
    if r == cap and n == total:
        return _icc_at_cap(x, threshold, canon, use, confidence, nan_policy, eps_pass, eps_fail, rule, look, seed,
                           sched)
    missing = np.isnan(x).any(axis=1)
    if missing.any():
        if nan_policy == "raise":
            raise ReliabilityError(f"ratings have missing values in item(s) {np.flatnonzero(missing).tolist()[:10]}; "
                                   "fill them or pass nan_policy='omit' (the fixed gate drops those items too)")
        x = x[~missing]
    if x.shape[0] < 2:
        raise ReliabilityError(f"{x.shape[0]} complete item(s): an ICC needs at least 2 items")
    observed = icc_fixed_verdict(x, threshold, canon, use, confidence=confidence).tested
    rng = np.random.default_rng(seed)
    rows = total - int(missing.sum())
    block = max(1, min(_BLOCK, 2_000_000 // (rows * cap)))
    passes, done = _simulate_until_settled(
        lambda b: int(_icc_passes_on(_simulate_completions(x, cap, b, rng, prior_df, rows, extra), canon, use,
                                     confidence, threshold).sum()), n_sim, eps_pass, eps_fail, block)
    p = passes / done
    decision, reason = _decide(p, eps_pass, eps_fail, f"ICC({canon})")
    on = f", {total - n} items not drawn yet" if n < total else \
        f", offsets from every repeat of {extra.shape[0]} items" if extra is not None else ""
    return SequentialLook(decision, look, r, cap, "repeats", p, observed, threshold, eps_pass, eps_fail, rule,
                          f"{reason} ({done} simulated completions of the two-way model{on})", done, seed, sched,
                          n if n < total else None, total if n < total or extra is not None else None,
                          0 if extra is None else _probe_rows(probe))


# ---------------------------------------------------------------------------- pass rate over items
@dataclass(frozen=True)
class PassRateCutoff:
    """The fixed pass-rate gate on ``n_cap`` items passes exactly when the judge passes at least
    ``count`` of them (``count = n_cap + 1``: no count passes; 0: every count passes)."""

    count: int
    n_cap: int
    min_rate: float
    use: str


def _pass_rate_verdict(count: int, n_cap: int, min_rate: float, calibration: Any, use: str, confidence: float,
                       interval: str) -> bool:
    from .pass_rate import corrected_pass_rate

    res = corrected_pass_rate(count, n_cap, calibration=calibration, confidence=confidence, interval=interval)
    tested = res.value if use == "estimate" else res.ci_low
    return bool(tested >= min_rate)


def _beta_binomial_sf(need: int, trials: int, a: float, b: float) -> float:
    """P(S >= need) for S ~ BetaBinomial(trials, a, b): the sum of its pmf
    ``C(t, j) B(j + a, t - j + b) / B(a, b)`` over j >= need (Johnson, Kemp & Kotz 2005, 6.2.2),
    over the shorter tail."""
    from scipy.special import betaln, gammaln

    j = np.arange(trials + 1, dtype=float)
    log_pmf = (gammaln(trials + 1) - gammaln(j + 1) - gammaln(trials - j + 1)
               + betaln(j + a, trials - j + b) - betaln(a, b))
    pmf = np.exp(log_pmf)
    upper = float(pmf[need:].sum())
    lower = float(pmf[:need].sum())
    p = upper / (upper + lower)  # the pmf sums to 1 up to rounding
    return min(1.0, max(0.0, p))


def pass_rate_cutoff(n_cap: int, *, min_rate: float, calibration: Any, use: str = "estimate",
                     confidence: float = 0.95, interval: str = "score") -> PassRateCutoff:
    """The smallest judge pass count over ``n_cap`` items at which ``assert_pass_rate`` passes.

    The gate tests ``corrected_pass_rate(count, n_cap, ...)``'s value (or lower bound) against
    ``min_rate``; both rise with the count (theta = (p + q0 - 1)/(q0 + q1 - 1) with q0 + q1 > 1,
    and the score bound with it), so the verdict is a step in the count, found by bisection with
    the gate's own function.  Raises where the gate would (q0 + q1 <= 1).
    """
    from .pass_rate import JudgeCalibration

    n_cap = _positive_int(n_cap, "n_cap (the items of the fixed design)")
    min_rate = _check_finite(min_rate, "min_rate")
    use = check_use(use, _USES)
    confidence = check_confidence(confidence)
    cal = calibration if isinstance(calibration, JudgeCalibration) else JudgeCalibration.from_pairs(calibration)

    def ok(c: int) -> bool:
        return _pass_rate_verdict(c, n_cap, min_rate, cal, use, confidence, interval)

    if not ok(n_cap):
        return PassRateCutoff(n_cap + 1, n_cap, min_rate, use)
    lo, hi = -1, n_cap  # ok(hi) holds; ok(lo) is taken as false
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return PassRateCutoff(hi, n_cap, min_rate, use)


def _count_seen(passed: Any, n: int | None) -> tuple[int, int]:
    from .pass_rate import _counts  # noqa: PLC2701 - the gate's own reading of counts and verdicts

    return _counts(passed, n)


def pass_rate_sequential_look(passed: Any, n: int | None = None, *, n_cap: int, min_rate: float,
                              calibration: Any, use: str = "estimate", confidence: float = 0.95,
                              interval: str = "score", eps: float | None = None,
                              eps_pass: float | None = None, eps_fail: float | None = None,
                              prior: tuple[float, float] = (0.5, 0.5), cutoff: PassRateCutoff | None = None,
                              schedule: LookSchedule | None = None) -> SequentialLook:
    """One look of a sequential pass-rate gate over items.

    ``passed``/``n``: the judge's verdicts on the items judged so far (a count with ``n``, or the
    verdicts); ``n_cap``: the fixed design's items; ``min_rate``/``calibration``/``use``/
    ``confidence``/``interval``: the fixed gate's (``assert_pass_rate``).  ``p_pass_at_cap`` is
    the beta-binomial predictive probability (``prior`` Beta(a, b) on the judge's pass
    probability) that the count over all ``n_cap`` items reaches :func:`pass_rate_cutoff`
    (pass ``cutoff`` to skip recomputing it at every look).  "pass" at ``p_cap`` >= the pass level,
    "fail" at ``p_cap`` <= the fail level: the loosest levels for which, at every pass probability of
    the judge, a pass stop on ``schedule``'s looks is reversed by the cap in at most ``eps_pass``
    (default :data:`PASS_RATE_EPS_PASS`) of the runs and a fail stop in at most ``eps_fail``
    (:data:`PASS_RATE_EPS_FAIL`), computed exactly (:func:`~.sequential_pass_rate.pass_rate_stops`); ``eps``
    sets both.  Before :func:`~.sequential_pass_rate.pass_rate_pass_from` items a look stops with "pass"
    only where the count has reached the cutoff.  A look off the schedule uses the schedule's levels (the bound then does not cover it).
    At the cap: the fixed verdict.
    """
    count, seen = _count_seen(passed, n)
    n_cap = _positive_int(n_cap, "n_cap (the items of the fixed design)")
    eps_pass, eps_fail = _stop_levels(eps, eps_pass, eps_fail, PASS_RATE_EPS_PASS, PASS_RATE_EPS_FAIL)
    if seen > n_cap:
        raise ReliabilityError(f"{seen} items judged, more than the cap of {n_cap}: a sequential gate never "
                               "draws past its cap")
    a, b = (_check_finite(v, "prior") for v in prior) if len(prior) == 2 else (0.0, 0.0)
    if not (a > 0 and b > 0):
        raise ReliabilityError(f"prior must be two positive Beta parameters (a, b), got {prior!r}")
    if cutoff is None:
        cutoff = pass_rate_cutoff(n_cap, min_rate=min_rate, calibration=calibration, use=use,
                                  confidence=confidence, interval=interval)
    elif cutoff.n_cap != n_cap or cutoff.min_rate != min_rate or cutoff.use != use:
        raise ReliabilityError(f"cutoff was computed for n_cap={cutoff.n_cap}, min_rate={cutoff.min_rate}, "
                               f"use={cutoff.use!r}, not for this gate (n_cap={n_cap}, min_rate={min_rate}, "
                               f"use={use!r})")
    sched = _check_schedule(schedule, pass_rate_schedule(n_cap), n_cap)
    rule = (f"corrected pass rate {'lower CI bound' if use == 'ci_low' else 'estimate'} >= {min_rate:g} "
            f"at {n_cap} items (judge passes >= {cutoff.count} of {n_cap})")
    remaining = n_cap - seen
    need = cutoff.count - count
    observed = count / seen
    look = sched.look_number(seen)
    if need <= 0:
        p = 1.0
    elif need > remaining:
        p = 0.0
    else:
        p = _beta_binomial_sf(need, remaining, a + count, b + seen - count)
    if remaining == 0:
        decision = "pass" if need <= 0 else "fail"
        reason = f"at the cap: the judge passed {count} of {n_cap}, the fixed rule needs {cutoff.count}"
    elif p in (0.0, 1.0):
        decision = "pass" if p == 1.0 else "fail"
        reason = (f"settled whatever the {remaining} remaining items give: {count} passes so far, "
                  f"{cutoff.count} needed")
    else:
        from .sequential_pass_rate import pass_rate_stops

        stops = pass_rate_stops(n_cap, cutoff.count, sched.looks, eps_pass, eps_fail, (a, b))
        decision, reason = _decide_at_levels(p, stops.pass_level, stops.fail_level, seen, stops.pass_from)
        reason += (f" (beta-binomial predictive of the {remaining} remaining items; levels calibrated so that, at "
                   f"every pass rate of the judge, a pass stop is reversed by the cap in at most eps_pass = "
                   f"{eps_pass:g} of the runs and a fail stop in at most eps_fail = {eps_fail:g})")
    return SequentialLook(decision, look, seen, n_cap, "items", p, observed, float(min_rate), eps_pass, eps_fail, rule,
                          reason,
                          None, None, sched)


# ---------------------------------------------------------------------------- PPI++ human mean
def human_mean_sequential_look(judge_labeled: Any, human_labeled: Any, judge_unlabeled: Any, *,
                               n_unlabeled_cap: int, min_mean: float, use: str = "estimate",
                               confidence: float = 0.95, tuned: bool = True, lam: float | None = None,
                               eps: float | None = None, eps_pass: float | None = None,
                               eps_fail: float | None = None, n_sim: int = N_SIM, seed: int | None = 0,
                               schedule: LookSchedule | None = None) -> SequentialLook:
    """One look of a sequential human-mean (PPI++) gate whose unlabelled items are judged in batches.

    ``judge_labeled``/``human_labeled``: all labelled items (known up front); ``judge_unlabeled``:
    the judge's scores on the unlabelled items judged so far (``<= n_unlabeled_cap``);
    ``min_mean``/``use``/``confidence``/``tuned``/``lam``: the fixed gate's
    (``assert_human_mean_above``).  The remaining scores come from the Bayesian-bootstrap
    predictive of the judged ones (module docstring), ``n_sim`` times; "pass" at ``p_cap >= 1 -
    eps_pass`` (default :data:`HUMAN_MEAN_EPS_PASS`), "fail" at ``p_cap <= eps_fail``
    (:data:`HUMAN_MEAN_EPS_FAIL`), ``eps`` sets both; at the cap: the fixed rule.
    """
    from .ppi import _estimates_by_row, _inputs, _lam_arg, ppi_mean  # noqa: PLC2701 - its own room

    min_mean = _check_finite(min_mean, "min_mean")
    use = check_use(use, _USES)
    confidence = check_confidence(confidence)
    eps_pass, eps_fail = _stop_levels(eps, eps_pass, eps_fail, HUMAN_MEAN_EPS_PASS, HUMAN_MEAN_EPS_FAIL)
    n_sim = _positive_int(n_sim, "n_sim")
    cap = _positive_int(n_unlabeled_cap, "n_unlabeled_cap (the unlabelled items of the fixed design)", 2)
    f, y, fu = _inputs(judge_labeled, human_labeled, judge_unlabeled)
    seen = fu.size
    if seen > cap:
        raise ReliabilityError(f"{seen} unlabelled items judged, more than the cap of {cap}: a sequential gate "
                               "never draws past its cap")
    sched = _check_schedule(schedule, items_schedule(cap), cap)
    rule = (f"human-scale mean (PPI++) {'lower CI bound' if use == 'ci_low' else 'estimate'} >= {min_mean:g} "
            f"at {cap} unlabelled items")

    def verdict(scores: np.ndarray) -> tuple[bool, float | None]:
        try:
            res = ppi_mean(f, y, scores, confidence=confidence, tuned=tuned, lam=lam)
        except ReliabilityError:
            return False, None
        tested = res.value if use == "estimate" else res.ci_low
        return bool(tested >= min_mean), float(tested)

    passed, observed = verdict(fu)
    look = sched.look_number(seen)
    if seen == cap:
        return SequentialLook("pass" if passed else "fail", look, seen, cap, "items", float(passed), observed,
                              min_mean, eps_pass, eps_fail, rule,
                              f"at the cap: the fixed rule on all {cap} unlabelled items",
                              None, seed, sched)
    rng = np.random.default_rng(seed)
    remaining = cap - seen
    conf, fixed_lam = confidence, _lam_arg(lam)

    def passes_in(b: int) -> int:
        # Bayesian bootstrap (Rubin 1981): Dirichlet(1, ..., 1) weights on the judged scores, then
        # the remaining scores drawn from them (inverse CDF per row), b completions at once
        w = rng.dirichlet(np.ones(seen), size=b)
        cdf = np.cumsum(w, axis=1)
        cdf[:, -1] = 1.0
        rows = np.arange(b)[:, None]
        flat = np.searchsorted((cdf + rows).ravel(), (rng.random((b, remaining)) + rows).ravel(), side="right")
        idx = np.minimum(flat.reshape(b, remaining) - rows * seen, seen - 1)
        stack = np.concatenate([np.broadcast_to(fu, (b, seen)), fu[idx]], axis=1)
        values, lows, _ = _estimates_by_row(f[None, :], y[None, :], stack, conf, tuned, fixed_lam)
        tested = values if use == "estimate" else lows
        return int((np.isfinite(tested) & (tested >= min_mean)).sum())

    wins, done = _simulate_until_settled(passes_in, n_sim, eps_pass, eps_fail, _BLOCK)
    p = wins / done
    decision, reason = _decide(p, eps_pass, eps_fail, "the human-mean gate")
    return SequentialLook(decision, look, seen, cap, "items", p, observed, min_mean, eps_pass, eps_fail, rule,
                          f"{reason} ({done} Bayesian-bootstrap completions of the {remaining} remaining items)",
                          done, seed, sched)

