"""Benchmark: sequential gates keep the fixed gate's verdicts on designs drawn at random.

Run: python benchmarks/bench_sequential.py [--seed S] [--icc-designs D] [--rate-designs D]
     [--icc-datasets R] [--rate-datasets R] [--fresh-icc R] [--fresh-rate R] [--icc-only | --rate-only]
     [--quick] [--no-plan]

Designs come from the domain stated in ``benchmarks/harness/sequential_designs.py``, each at truths
on and around its threshold.  Every data set is drawn in full (the cap's answers), the fixed
verdict computed on it, and the sequential rule (the defaults of
:mod:`pytest_judgerel.stats.sequential`) sees prefixes of the same answers at its looks.  A design
and truth is *clear* where ``P(fixed passes)`` (exact for the pass rate, 2,000 more data sets for
the ICC) is >= 0.95 or <= 0.05.  Goals, per family (noise kind; judge and rule) and pooled:

* |P(seq pass) - P(fixed pass)| <= 0.03 at every truth (per family and offset from the threshold;
  per design within 2 SE); runs whose pass stop before the cap the cap reverses <= eps_pass at
  every truth (the share of pass stops reversed, a Bayesian bound, as INFO);
* calls where clear: ICC caps >= 6 at most 0.35 on average and 0.50 in any design and truth; pass
  rate on >= 150 items 0.35 / 0.45, on 40-149 items 0.75 in any; "any" also where 99%
  predictable, each with an oracle's calls (``oracle_share``: a rule that knows the truth) and
  the least calls a rule keeping the promises can spend there: for the pass rate an exact bound
  (``benchmarks/harness/pass_rate_bound.py``: no rule, with any looks, spends less), for the ICC
  the estimating floor (a rule that must estimate the truth at the same looks and levels, an
  approximation).  "Any design" is graded on the designs where that bound is within the goal at
  every clear truth (for the pass rate also the least worst over them of one rule that does not
  know the truth, with a look after every item: ``agnostic_bounds``); for the ICC on fresh data
  sets: the few worst picked on the benchmark's data sets are measured again on independent ones
  and the largest fresh mean graded (``fresh_worst``: no winner's curse); for the pass rate on the
  rule's exact calls (checked against the gate run on the data sets: ``simulated_vs_exact_lines``).
  The truths where the bound is over the goal get an INFO line with it (the goal cannot hold
  there), and the other truths of those designs one with the rule's worst (at most the goal in
  that design cannot hold, whatever the rule);
* agreement >= 0.98 where clear, >= 0.95 on the threshold;
* for the pass rate, the bounds computed exactly on every design at 999 rates (``exact_rate_lines``:
  reversed pass stops <= eps_pass, fail stops <= eps_fail, |OC| <= 0.03 at every rate), and as INFO
  the least calls of any rule that keeps the promises without knowing the truth: worst, for the graded
  designs with the most calls (``agnostic_lines``), and the mean on >= 150 items (``agnostic_mean_lines``),
  at the gate's looks, more and a look after every item (``harness/pass_rate_agnostic_dual.py``);
* the dry run's expected calls (``stats.sequential_plan``, its stated prior) within 0.10 of the
  measured ones per design, over its truths.

The human-mean (PPI++) rule is measured by ``bench_sequential_human.py``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # a script: the project root, for benchmarks.harness

from benchmarks.harness.fresh import remeasure_worst  # noqa: E402
from benchmarks.harness.sequential_designs import (  # noqa: E402
    Cell,
    IccDesign,
    RateDesign,
    draw_icc_designs,
    draw_rate_designs,
    exact_bound,
    fresh_shares,
    icc_cells,
    rate_cells,
)
from pytest_judgerel.stats.sequential import ICC_EPS_FAIL, ICC_EPS_PASS, PASS_RATE_EPS_FAIL, \
    PASS_RATE_EPS_PASS  # noqa: E402

GOAL_OC, GOAL_AGREE_CLEAR, GOAL_AGREE_AT = 0.03, 0.98, 0.95
FRESH_TOP = 3
"""Candidates per "any design" line re-measured on fresh data sets (:func:`fresh_worst`)."""
Line = tuple[str, str, str, "bool | None"]
Refresh = Callable[[Cell], "list[float]"]


def verdict(ok: bool | None) -> str:
    return "INFO" if ok is None else "PASS" if ok else "FAIL"


def paired(cells: list[Cell]) -> tuple[float, float, int]:
    """(P(seq pass) - P(fixed pass), its paired SE, data sets) over the cells' data sets together."""
    seq = np.concatenate([c.seq_pass for c in cells]).astype(bool)
    fix = np.concatenate([c.fixed_pass for c in cells]).astype(bool)
    n = seq.size
    b, c = int((seq & ~fix).sum()), int((fix & ~seq).sum())
    return (b - c) / n, float(np.sqrt(max(0.0, b + c - (b - c) ** 2 / n)) / n), n


def agreement(cells: list[Cell]) -> tuple[float, int]:
    seq = np.concatenate([c.seq_pass for c in cells])
    fix = np.concatenate([c.fixed_pass for c in cells])
    return float(np.mean(seq == fix)), int(seq.size)


def oc_lines(family: str, cells: list[Cell]) -> list[Line]:
    lines: list[Line] = []
    for off in sorted({c.offset for c in cells}):
        diff, se, n = paired([c for c in cells if c.offset == off])
        lines.append((f"sequential_oc[{family}, truth {off:+.2f} from the threshold]",
                      f"P(seq pass) - P(fixed pass) = {diff:+.4f} (SE {se:.4f}, {n} data sets)",
                      f"|.| <= {GOAL_OC}", abs(diff) <= GOAL_OC))
    worst = max(cells, key=lambda c: (abs(paired([c])[0]) - 2 * paired([c])[1], abs(paired([c])[0])))
    diff, se, n = paired([worst])
    lines.append((f"sequential_oc_per_design[{family}]", f"worst {diff:+.4f} (SE {se:.4f}, {n} data sets) at "
                  f"{worst.design.label()}, truth {worst.truth:.3f}", f"|.| <= {GOAL_OC} within 2 SE",
                  abs(diff) - 2 * se <= GOAL_OC))
    return lines


def reversal_lines(family: str, cells: list[Cell], eps_pass: float) -> list[Line]:
    """The documented bound: at every truth, P(a pass stop before the cap that the cap reverses) <=
    eps_pass (graded, worst offset); the share of pass stops reversed (Bayesian: INFO)."""
    def counts(sub: list[Cell]) -> tuple[int, int, int]:
        early = np.concatenate([c.early_pass for c in sub]).astype(bool)
        fix = np.concatenate([c.fixed_pass for c in sub]).astype(bool)
        return int((early & ~fix).sum()), int(early.sum()), int(early.size)

    rows = [(off, *counts([c for c in cells if c.offset == off])) for off in sorted({c.offset for c in cells})]
    off, rev, _, n = max(rows, key=lambda row: row[1] / row[3])
    total_rev, stops, _ = counts(cells)
    return [(f"sequential_pass_stop_reversed[{family}]", f"{rev} of {n} runs ({rev / n:.4f}) at the worst truth "
             f"({off:+.2f} from the threshold)", f"<= eps_pass {eps_pass:g}", rev / n <= eps_pass),
            (f"sequential_pass_stop_reversed_given_stop[{family}]", f"{total_rev} of {stops} pass stops before the "
             f"cap ({total_rev / max(stops, 1):.4f}); the model's bound is Bayesian", f"<= {eps_pass:g}", None)]


def calls_lines(name: str, cells: list[Cell], mean_goal: float | None, any_goal: float | None,
                refresh: Refresh | None = None) -> list[Line]:
    """Mean and worst (per design and truth) share of the calls where the fixed verdict is clear
    (95% predictable), and the worst where it is 99% predictable; each with the calls of an oracle
    that knows the truth and the estimating floor (``oracle_share``).  An "any design" goal is graded
    on the designs whose bound is within it at every clear truth, on fresh data sets (:func:`worst_lines`)."""
    lines: list[Line] = []
    for level in (0.95, 0.99):
        clear = [c for c in cells if c.p_fixed >= level or c.p_fixed <= 1 - level]
        if not clear:
            lines.append((f"sequential_calls[{name}, {level:.0%} predictable]", "no such design and truth drawn",
                          "-", None))
            continue
        if mean_goal is not None and level == 0.95:
            mean = float(np.mean([np.mean(c.shares) for c in clear]))
            lines.append((f"sequential_calls_mean[{name}]", f"{mean:.3f} of the fixed calls over "
                          f"{len(clear)} clear designs and truths (oracle {np.mean([c.oracle for c in clear]):.3f}, "
                          f"estimating floor {np.mean([c.floor for c in clear]):.3f})",
                          f"<= {mean_goal}", mean <= mean_goal))
        lines += worst_lines(f"{name}, {level:.0%} predictable", clear, any_goal, refresh, level)
    return lines


def _where(c: Cell) -> str:
    return (f"{c.design.label()}, truth {c.truth:.3f}, P(fixed pass) {c.p_fixed:.3f}, oracle {c.oracle:.3f}, "
            f"estimating floor {c.floor:.3f}" + (f", exact bound {c.exact:.3f}" if c.exact is not None else ""))


def _share(c: Cell) -> float:
    """The rule's mean calls share at ``c``: exact where computed (the pass rate), else over its data sets."""
    return c.exact_share if c.exact_share is not None else float(np.mean(c.shares))


def _worst(cells: list[Cell]) -> str:
    m, c = max(((_share(c), c) for c in cells), key=lambda row: row[0])
    return f"{m:.3f} of the fixed calls{' (exact)' if c.exact_share is not None else ''} at {_where(c)}"


def fresh_worst(within: list[Cell], refresh: Refresh) -> tuple[float, str]:
    """The worst calls share re-estimated on fresh data sets: the :data:`FRESH_TOP` worst designs and
    truths on the benchmark's data sets are the candidates, each measured again on data sets drawn
    independently of the ones that picked it (``refresh``), and the largest fresh mean is graded.
    (:mod:`benchmarks.harness.fresh`: the maximum of many noisy means is biased upward)."""
    pairs = remeasure_worst(within, lambda c: float(np.mean(c.shares)), lambda _, c: refresh(c), FRESH_TOP)
    fresh = [(float(np.mean(shares)), len(shares), c) for c, shares in pairs]
    worst, n, cell = max(fresh, key=lambda row: row[0])
    picked = " / ".join(f"{c.design.label().split()[0]} truth {c.truth:.3f} {float(np.mean(c.shares)):.3f} -> {m:.3f}"
                        for m, _, c in fresh)
    return worst, (f"{worst:.3f} of the fixed calls on fresh data sets ({n} per truth) at {_where(cell)}; "
                   f"picked as the {len(fresh)} worst on the benchmark's data sets (there -> fresh: {picked})")


def _graded_worst(cells: list[Cell], refresh: Refresh | None) -> tuple[float, str]:
    """The worst calls share of ``cells`` and its text: exact where every cell's is computed (the pass rate),
    else on fresh data sets of the worst few (``refresh``: :func:`fresh_worst`), else on the benchmark's."""
    if refresh is None or all(c.exact_share is not None for c in cells):
        return max(_share(c) for c in cells), _worst(cells)
    return fresh_worst(cells, refresh)


def least_calls(c: Cell) -> float | None:
    """The least calls a rule keeping the promises can spend at ``c``: the exact bound where one was
    computed (``Cell.exact``: the pass rate), else the estimating floor (an approximation)."""
    return c.exact if c.exact is not None else c.floor


def _reachable(c: Cell, goal: float) -> bool:
    """Whether a rule keeping the promises can spend at most ``goal`` at ``c`` (:func:`least_calls`)."""
    least = least_calls(c)
    return least is not None and least <= goal


def _by_design(cells: list[Cell]) -> dict[str, list[Cell]]:
    groups: dict[str, list[Cell]] = {}
    for c in cells:
        groups.setdefault(c.design.label(), []).append(c)
    return groups


def worst_lines(name: str, clear: list[Cell], goal: float | None, refresh: Refresh | None = None,
                level: float = 0.95) -> list[Line]:
    """The worst calls share in any design and truth of ``clear``.  With a ``goal``: graded on the designs
    where a rule can meet it at every one of their clear truths (:func:`least_calls` within the goal at
    each, and for the pass rate one rule at all of them: ``Cell.agnostic`` at ``level``, :func:`agnostic_bounds`), on
    the exact shares where computed (the pass rate), else with ``refresh`` on fresh data sets
    (:func:`fresh_worst`).  A design with a clear truth where no rule can meet the goal is one where "at most
    ``goal`` in any design" cannot hold, whatever the rule: its other truths get an INFO line (the rule's
    worst there, for the record), the truths over the goal an INFO line with their bound (an exact one,
    the pass rate: no rule that keeps the promises on the design spends less; or the estimating floor,
    the ICC: an approximation, the rule may come in under it), and the designs where no one rule that does
    not know the truth meets it at all their clear truths, even with a look after every item, one more."""
    if goal is None:
        return [(f"sequential_calls_worst[{name}]", f"{_worst(clear)} ({len(clear)} designs and truths)", "-", None)]
    exact = any(isinstance(c.design, RateDesign) for c in clear)  # the pass rate's bound is exact where it decides
    kind = "exact bound" if exact else "estimating floor"

    def reachable(c: Cell) -> bool:
        return _reachable(c, goal)

    designs = _by_design(clear)
    agnostic_over = {label for label, cs in designs.items()
                     if all(reachable(c) for c in cs) and any(c.agnostic.get(level, 0.0) > goal for c in cs)}
    graded = {label for label, cs in designs.items() if all(reachable(c) for c in cs) and label not in agnostic_over}
    within = [c for c in clear if c.design.label() in graded]
    beyond = [c for c in clear if not reachable(c)]
    elsewhere = [c for c in clear if reachable(c) and c.design.label() not in graded]  # of a design that cannot
    lines: list[Line] = []
    if within:
        worst, text = _graded_worst(within, refresh)
        lines.append((f"sequential_calls_worst[{name}, designs with {kind} <= {goal} at every clear truth]",
                      f"{text} ({len(graded)} of {len(designs)} designs, {len(within)} of {len(clear)} designs and "
                      f"truths)", f"<= {goal}", worst <= goal))
    if elsewhere:
        worst, text = _graded_worst(elsewhere, refresh)
        lines.append((f"sequential_calls_worst[{name}, other truths of designs with a {kind} over {goal}]",
                      f"{text} ({len(elsewhere)} designs and truths; each design has another clear truth where "
                      f"the goal cannot hold, or no one rule meets it at all of them)",
                      f"<= {goal}, not graded: no rule meets it in these designs", None))
    if agnostic_over:
        bounds = sorted({c.agnostic[level] for c in clear if c.design.label() in agnostic_over})
        rule = max(_share(c) for c in clear if c.design.label() in agnostic_over)
        lines.append((f"sequential_calls_agnostic_over[{name}, {goal}]",
                      f"{len(agnostic_over)} design(s) ({', '.join(sorted(agnostic_over))}) where no rule that keeps "
                      f"the promises without knowing the truth spends at most {goal} at every clear truth, even with "
                      f"a look after every item (its least worst {bounds[0]:.4f}-{bounds[-1]:.4f}); the rule's worst "
                      f"there {rule:.4f}", f"<= {goal}, not graded: no rule meets it there", None))
    if beyond:
        bounds = [float(least_calls(c)) for c in beyond]  # type: ignore[arg-type]
        oracles = [float(c.oracle) for c in beyond]  # type: ignore[arg-type]
        excess = max(_share(c) - float(least_calls(c)) for c in beyond)  # type: ignore[arg-type]
        why = ("no rule that keeps the promises on the design, with any looks, can meet the goal there" if exact
               else "a rule that must estimate the truth is not expected to meet the goal at these looks and levels")
        lines.append((f"sequential_calls_bound[{name}, {kind} > {goal}]",
                      f"{len(beyond)} of {len(clear)} designs and truths where the {kind} is {min(bounds):.3f}-"
                      f"{max(bounds):.3f} (oracle {min(oracles):.3f}-{max(oracles):.3f}): {why}; worst "
                      f"{_worst(beyond)}; the rule at most {excess:+.3f} against its {kind} there",
                      f"<= {goal}, {kind} over it", None))
    return lines


def agnostic_bounds(cells: list[Cell], goal: float, margin: float = 0.02,
                    levels: tuple[float, ...] = (0.95, 0.99)) -> None:
    """``Cell.agnostic[level]`` on the cells clear at each ``level`` of the pass-rate designs whose rule spends more
    than ``goal - margin`` at such a truth (exactly): the least worst calls over those truths of any rule that
    keeps the benchmark's promises without knowing the truth, with a look after every item
    (``harness/pass_rate_agnostic_dual.py``).  Over ``goal``, no one rule meets the goal on that design."""
    for level in levels:
        for a, cs in _agnostic_designs(cells, level):
            if max(_share(c) for c in cs) <= goal - margin or level in cs[0].agnostic:
                continue
            t0 = time.perf_counter()
            bound = a.bound(a.every())
            for c in cs:
                c.agnostic[level] = bound
            print(f"  truth-agnostic bound {bound:.4f} at {a.label}, its {level:.0%} predictable truths, a look after "
                  f"every item ({time.perf_counter() - t0:.1f} s)", flush=True)


def simulated_vs_exact_lines(name: str, cells: list[Cell], z_max: float = 4.5) -> list[Line]:
    """The gate run on the data sets (its look function at its looks) against its exact calls share
    (:func:`~pytest_judgerel.stats.sequential_pass_rate.pass_rate_operating`) at every design and truth:
    the exact figures the "any design" lines grade are what the gate spends.  Graded on the largest
    ``|mean - exact| / SE`` (at most ``z_max``), the SE at least ``1 / n`` (one of ``n`` runs moving by the
    whole cap: where every data set stopped at one look, a rarer stop elsewhere is not yet seen)."""
    rows = []
    for c in cells:
        if c.exact_share is None or not c.shares:
            continue
        shares = np.asarray(c.shares)
        diff = float(shares.mean()) - c.exact_share
        se = max(float(shares.std(ddof=1)) / np.sqrt(shares.size) if shares.size > 1 else 0.0, 1.0 / shares.size)
        z = abs(diff) / se
        rows.append((z, diff, c))
    if not rows:
        return []
    z, diff, c = max(rows, key=lambda row: row[0])
    return [(f"sequential_calls_simulated_vs_exact[{name}]",
             f"largest |simulated - exact| {abs(diff):.4f} ({z:.2f} SE) over {len(rows)} designs and truths, at "
             f"{c.design.label()}, truth {c.truth:.3f}", f"<= {z_max} SE", bool(z <= z_max))]


def exact_bounds(cells: list[Cell], goal: float, margin: float = 0.05) -> None:
    """``Cell.exact`` (:func:`~benchmarks.harness.sequential_designs.exact_bound`) at every clear truth of
    the pass-rate designs that can decide an "any design" line: those with a clear truth whose calls on
    the benchmark's data sets come within ``margin`` of ``goal``, or whose estimating floor is over it
    (the others are graded either way: the line grades a design unless a bound is over the goal)."""
    deciding = {c.design.label() for c in cells
                if c.clear and (_share(c) > goal - margin or (c.floor or 0.0) > goal)}
    for c in cells:
        if c.clear and c.exact is None and c.design.label() in deciding:
            t0 = time.perf_counter()
            c.exact = exact_bound(c, GOAL_OC, GOAL_AGREE_CLEAR, GOAL_AGREE_AT)
            print(f"  exact bound {c.exact:.3f} at {c.design.label()}, truth {c.truth:.3f} "
                  f"({time.perf_counter() - t0:.1f} s)", flush=True)


def exact_rate_lines(designs: list[RateDesign]) -> list[Line]:
    """The pass-rate rule's bounds computed exactly on every design, at 999 rates over (0, 1) (not the
    calibration's grid): P(pass stop before the cap, cap fails) <= eps_pass and P(fail stop, cap passes)
    <= eps_fail at every rate, so |P(seq pass) - P(fixed pass)| <= 0.03 everywhere, not only at the
    benchmark's truths and on average over its data sets."""
    from pytest_judgerel.stats.sequential_pass_rate import pass_rate_operating, pass_rate_stops
    from pytest_judgerel.stats.sequential import pass_rate_cutoff, pass_rate_schedule

    rates = np.linspace(0.001, 0.999, 999)
    worst = {"reversed": (0.0, ""), "lost": (0.0, ""), "oc": (0.0, "")}
    for d in designs:
        cutoff = pass_rate_cutoff(d.n, min_rate=d.min_rate, calibration=d.calibration, use=d.use)
        if not 0 < cutoff.count <= d.n:
            continue
        stops = pass_rate_stops(d.n, cutoff.count, pass_rate_schedule(d.n).looks, PASS_RATE_EPS_PASS,
                                PASS_RATE_EPS_FAIL)
        op = pass_rate_operating(stops, rates)
        for name, values in (("reversed", op.reversed), ("lost", op.lost),
                             ("oc", np.abs(op.p_seq_pass - op.p_fixed_pass))):
            values = np.where(np.isfinite(values), values, np.inf)  # an undefined figure fails its line
            i = int(np.argmax(values))
            if values[i] > worst[name][0]:
                worst[name] = (float(values[i]), f"{d.label()}, raw pass rate {rates[i]:.3f}")
    return [("sequential_exact_pass_stop_reversed[pass rate, every design and rate]",
             f"{worst['reversed'][0]:.4f} at {worst['reversed'][1]}", f"<= eps_pass {PASS_RATE_EPS_PASS:g}",
             worst["reversed"][0] <= PASS_RATE_EPS_PASS + 1e-4),
            ("sequential_exact_fail_stop_reversed[pass rate, every design and rate]",
             f"{worst['lost'][0]:.4f} at {worst['lost'][1]}", f"<= eps_fail {PASS_RATE_EPS_FAIL:g}",
             worst["lost"][0] <= PASS_RATE_EPS_FAIL + 1e-4),
            ("sequential_exact_oc[pass rate, every design and rate]",
             f"max |P(seq pass) - P(fixed pass)| {worst['oc'][0]:.4f} at {worst['oc'][1]}", f"<= {GOAL_OC}",
             worst["oc"][0] <= GOAL_OC + 1e-4)]


@dataclass(frozen=True)
class _Agnostic:
    """A pass-rate design's clear truths (raw rates) and what its agnostic bounds need."""

    label: str
    n: int
    cutoff: int
    raws: list[float]
    looks: tuple[int, ...]
    threshold_raw: float

    def bound(self, looks: tuple[int, ...] | None = None, objective: str = "worst", gate: bool = False) -> float:
        """The least worst / mean calls over the clear truths of any rule that keeps the benchmark's promises
        (``gate``: the gate's own, a fail stop reversed <= eps_fail) without knowing the truth, at ``looks``
        (default: the gate's)."""
        from benchmarks.harness.pass_rate_agnostic_dual import least_calls_dual

        return least_calls_dual(self.n, self.cutoff, self.looks if looks is None else looks, self.raws,
                                threshold_raw=self.threshold_raw, objective=objective, eps_pass=PASS_RATE_EPS_PASS,
                                eps_fail=PASS_RATE_EPS_FAIL if gate else None).worst

    def twice(self) -> tuple[int, ...]:
        """Twice as many looks, evenly spread."""
        return tuple(sorted(set(np.linspace(0, self.n, 2 * len(self.looks) + 1).round().astype(int)[1:].tolist())))

    def every(self) -> tuple[int, ...]:
        return tuple(range(1, self.n + 1))


def _agnostic_designs(cells: list[Cell], level: float = 0.95) -> list[tuple[_Agnostic, list[Cell]]]:
    """The pass-rate designs of ``cells`` with a truth where the fixed verdict is ``level`` predictable, each with
    those cells."""
    from pytest_judgerel.stats.sequential import pass_rate_cutoff, pass_rate_schedule

    out = []
    for label, cs in _by_design([c for c in cells if c.p_fixed >= level or c.p_fixed <= 1 - level]).items():
        d = cs[0].design
        assert isinstance(d, RateDesign)
        cal = d.calibration
        cutoff = pass_rate_cutoff(d.n, min_rate=d.min_rate, calibration=cal, use=d.use)
        if not 0 < cutoff.count <= d.n:
            continue
        raws = [cal.sensitivity * c.truth + (1 - cal.specificity) * (1 - c.truth) for c in cs]
        threshold = cal.sensitivity * d.min_rate + (1 - cal.specificity) * (1 - d.min_rate)
        out.append((_Agnostic(label, d.n, cutoff.count, raws, pass_rate_schedule(d.n).looks, threshold), cs))
    return out


def agnostic_lines(name: str, cells: list[Cell], goal: float, top: int = 3) -> list[Line]:
    """For the ``top`` designs of ``cells`` that the "any design" line grades (:func:`worst_lines`) with the
    most calls at a clear truth (exact, at the benchmark's truths): the rule's worst clear truth against
    the least worst any rule can spend that keeps the promises and does not know the truth, at the rule's
    own looks and with a look after every item
    (``harness/pass_rate_agnostic_dual.py``: the Lagrangian of the linear program of
    ``harness/pass_rate_agnostic_bound.py``, equal to its optimum to 1e-5 where that one solves)."""
    from pytest_judgerel.stats.sequential_pass_rate import pass_rate_operating, pass_rate_stops

    rows = []
    for a, cs in _agnostic_designs(cells):
        if not all(_reachable(c, goal) for c in cs):
            continue
        stops = pass_rate_stops(a.n, a.cutoff, a.looks, PASS_RATE_EPS_PASS, PASS_RATE_EPS_FAIL)
        rows.append((float(pass_rate_operating(stops, a.raws).calls_share.max()), a))
    lines: list[Line] = []
    for worst, a in sorted(rows, key=lambda r: -r[0])[:top]:
        at_looks, every = a.bound(), a.bound(a.every())
        text = (f"{a.label}: the rule's worst clear truth {worst:.3f} (exact); no rule that keeps the promises "
                f"without knowing the truth spends less than {at_looks:.3f} at its worst clear truth with these looks, "
                f"{every:.3f} with a look after every item")
        verdict = f"<= {goal}" + ("" if every <= goal else ": cannot hold here, whatever the looks")
        lines.append((f"sequential_calls_agnostic_bound[{name}]", text, verdict, None))
    return lines


def agnostic_mean_lines(name: str, cells: list[Cell], goal: float) -> list[Line]:
    """The least mean calls over the clear designs and truths of ``cells`` that any rule can spend which
    keeps the promises without knowing the truth (each design's least mean over its clear truths,
    weighted by their number): with the gate's own bounds and with the benchmark's, at the gate's looks,
    twice as many and a look after every item.  Over ``goal`` at the gate's looks: the mean goal cannot
    hold at those looks for a rule that keeps the gate's bounds, whatever the rule."""
    designs = _agnostic_designs(cells)
    if not designs:
        return []
    weights = np.array([len(cs) for _, cs in designs], dtype=float)

    def pooled(bound: Callable[[_Agnostic], float]) -> float:
        return float(np.average([bound(a) for a, _ in designs], weights=weights))

    gate = pooled(lambda a: a.bound(objective="mean", gate=True))
    bench = pooled(lambda a: a.bound(objective="mean"))
    twice = pooled(lambda a: a.bound(a.twice(), objective="mean", gate=True))
    every = pooled(lambda a: a.bound(a.every(), objective="mean", gate=True))
    verdict = (f"<= {goal}" + (": cannot hold at the gate's looks for a rule that keeps its bounds" if gate > goal
                               else ""))
    return [(f"sequential_calls_mean_agnostic_bound[{name}]",
             f"no rule that keeps the gate's bounds without knowing the truth spends less than {gate:.4f} on average "
             f"over these {int(weights.sum())} clear designs and truths at the gate's looks ({bench:.4f} with the "
             f"benchmark's weaker |OC| promise for fail stops); {twice:.4f} with twice as many looks, {every:.4f} with "
             f"a look after every item", verdict, None)]


def agreement_lines(family: str, cells: list[Cell]) -> list[Line]:
    lines: list[Line] = []
    for what, sub, goal in (("clear", [c for c in cells if c.clear], GOAL_AGREE_CLEAR),
                            ("at the threshold", [c for c in cells if c.offset == 0], GOAL_AGREE_AT)):
        if sub:
            agree, n = agreement(sub)
            lines.append((f"sequential_agreement[{family}, {what}]", f"{agree:.4f} of {n} data sets",
                          f">= {goal}", agree >= goal))
    return lines


def plan_lines(family: str, cells: list[Cell]) -> list[Line]:
    """The dry run's expected calls against the measured ones: per design over its truths (the
    stated prior of ``stats.sequential_plan``: what a dry run prints), graded; per truth, INFO."""
    rows = [c for c in cells if c.expected is not None]
    if not rows:
        return []
    per_design = [(abs(float(np.mean([c.expected for c in cs])) - float(np.mean([np.mean(c.shares) for c in cs]))),
                   label, cs) for label, cs in _by_design(rows).items()]
    err, label, cs = max(per_design, key=lambda row: row[0])
    cell_err = [abs(c.expected - float(np.mean(c.shares))) for c in rows]  # type: ignore[operator]
    return [(f"sequential_planned_calls[{family}]", f"worst |expected - measured| {err:.3f} over a design's truths "
             f"(expected {np.mean([c.expected for c in cs]):.3f}, measured "
             f"{np.mean([np.mean(c.shares) for c in cs]):.3f} at {label}; "
             f"mean {np.mean([r[0] for r in per_design]):.3f})",
             "<= 0.10", err <= 0.10),
            (f"sequential_planned_calls_per_truth[{family}]", f"mean |expected - measured| {np.mean(cell_err):.3f}, "
             f"worst {max(cell_err):.3f} (a truth's {len(cs[0].shares)} data sets)", "-", None)]


def design_table(cells: list[Cell]) -> None:
    """One line per design; the worst design of each family (most calls where clear, worst OC) marked."""
    rows = []
    for label, cs in _by_design(cells).items():
        clear = [float(np.mean(c.shares)) for c in cs if c.clear]
        oc = max(abs(paired([c])[0]) for c in cs)
        rows.append((cs[0].design.family, label, max(clear) if clear else float("nan"), oc, agreement(cs)[0]))
    print(f"  {'design':<62} {'calls (worst clear)':>19} {'|OC diff|':>9} {'agree':>6}")
    for family in sorted({r[0] for r in rows}):
        fam = [r for r in rows if r[0] == family]
        worst_calls = max(fam, key=lambda r: -1 if np.isnan(r[2]) else r[2])
        worst_oc = max(fam, key=lambda r: r[3])
        for r in fam:
            mark = " <- worst calls" if r is worst_calls else ""
            mark += " <- worst OC" if r is worst_oc else ""
            print(f"  {r[1]:<62} {r[2]:19.3f} {r[3]:9.3f} {r[4]:6.3f}{mark}")


def grade(icc: list[Cell], rate: list[Cell], refresh: Refresh | None = None) -> list[Line]:
    lines: list[Line] = []
    for cells, eps_pass in ((icc, ICC_EPS_PASS), (rate, PASS_RATE_EPS_PASS)):
        for family in sorted({c.design.family for c in cells}):
            fam = [c for c in cells if c.design.family == family]
            lines += oc_lines(family, fam) + reversal_lines(family, fam, eps_pass) + agreement_lines(family, fam)
            lines += plan_lines(family, fam)
    if icc:
        lines += agreement_lines("icc, all", icc)
        caps = [(c, c.design.cap if isinstance(c.design, IccDesign) else 0) for c in icc]
        lines += calls_lines("icc caps >= 6", [c for c, k in caps if k >= 6], 0.35, 0.50, refresh)
        lines += calls_lines("icc caps 3-5", [c for c, k in caps if k < 6], None, None)
    if rate:
        lines += agreement_lines("pass rate, all", rate)
        large, mid = [c for c in rate if c.design.n >= 150], [c for c in rate if 40 <= c.design.n < 150]
        exact_bounds(large, 0.45)
        exact_bounds(mid, 0.75)
        agnostic_bounds(large, 0.45)
        agnostic_bounds(mid, 0.75)
        lines += simulated_vs_exact_lines("pass rate", rate)
        lines += calls_lines("pass rate >= 150 items", large, 0.35, 0.45, refresh)
        lines += agnostic_mean_lines("pass rate >= 150 items", large, 0.35)
        lines += agnostic_lines("pass rate >= 150 items", large, 0.45)
        lines += calls_lines("pass rate 40-149 items", mid, None, 0.75, refresh)
        lines += agnostic_lines("pass rate 40-149 items", mid, 0.75)
        lines += calls_lines("pass rate 20-39 items", [c for c in rate if c.design.n < 40], None, None)
    most = max(max(c.shares) for c in icc + rate)
    lines.append(("sequential_max_calls", f"{most:.3f} of the cap at most", "<= 1.0", most <= 1.0))
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=2028, help="draws the designs and their data")
    ap.add_argument("--icc-designs", type=int, default=24)
    ap.add_argument("--rate-designs", type=int, default=60)
    ap.add_argument("--icc-datasets", type=int, default=30, help="data sets per ICC design and truth")
    ap.add_argument("--icc-at-threshold", type=int, default=90, help="data sets per ICC design on its threshold")
    ap.add_argument("--rate-datasets", type=int, default=300, help="data sets per pass-rate design and truth")
    ap.add_argument("--fresh-icc", type=int, default=150,
                    help="fresh data sets for each ICC candidate of an 'any design' line (fresh_worst)")
    ap.add_argument("--fresh-rate", type=int, default=1000, help="the same for a pass-rate candidate")
    ap.add_argument("--quick", action="store_true", help="9 ICC and 20 pass-rate designs, fewer data sets")
    ap.add_argument("--no-plan", action="store_true", help="skip the planned calls (stats.sequential_plan)")
    ap.add_argument("--icc-only", action="store_true")
    ap.add_argument("--rate-only", action="store_true")
    args = ap.parse_args(argv)
    if args.quick:
        args.icc_designs, args.rate_designs, args.icc_datasets, args.rate_datasets = 9, 20, 20, 100
        args.icc_at_threshold, args.fresh_icc, args.fresh_rate = 20, 40, 300
    t0 = time.perf_counter()
    icc: list[Cell] = []
    rate: list[Cell] = []
    if not args.rate_only:
        print(f"ICC(A,1) gates: {args.icc_designs} designs drawn (seed {args.seed}), {args.icc_datasets} data sets per "
              f"truth, {args.icc_at_threshold} on the threshold; eps_pass {ICC_EPS_PASS:g}, eps_fail {ICC_EPS_FAIL:g}")
        for icc_design in draw_icc_designs(args.icc_designs, args.seed):
            icc += icc_cells(icc_design, args.icc_datasets, args.seed, plan=not args.no_plan,
                             at_threshold=args.icc_at_threshold)
        design_table(icc)
    if not args.icc_only:
        print(f"pass-rate gates: {args.rate_designs} designs drawn (seed {args.seed}), {args.rate_datasets} data sets "
              f"per truth; eps_pass {PASS_RATE_EPS_PASS:g}, eps_fail {PASS_RATE_EPS_FAIL:g}")
        rate_designs = draw_rate_designs(args.rate_designs, args.seed)
        for design in rate_designs:
            rate += rate_cells(design, args.rate_datasets, args.seed, plan=not args.no_plan)
        design_table(rate)
    print(f"({sum(len(c.shares) for c in icc)} ICC and {sum(len(c.shares) for c in rate)} pass-rate data sets; "
          f"{time.perf_counter() - t0:.0f} s)")
    t1, fresh = time.perf_counter(), {}

    def refresh(cell: Cell) -> list[float]:  # each candidate once, whichever lines pick it
        key = (cell.design.label(), cell.truth)
        if key not in fresh:
            fresh[key] = fresh_shares(cell, args.fresh_icc, args.fresh_rate, args.seed)
        return fresh[key]

    lines = grade(icc, rate, refresh)
    if rate:
        lines += exact_rate_lines(rate_designs)
    print(f"(fresh data sets for {len(fresh)} candidate designs and truths of the 'any design' lines: "
          f"{sum(len(v) for v in fresh.values())} data sets, {time.perf_counter() - t1:.0f} s)")
    ok = True
    for name, measured, goal, good in lines:
        print(f"{name}: measured {measured} goal {goal} {verdict(good)}")
        ok &= good is not False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
