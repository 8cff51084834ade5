"""Benchmark by simulation (known truth): silent judge drift on a fixed anchor set.

Run: python benchmarks/bench_drift.py [--quick] [--series N] [--sessions N] [--histories N] [--seed S]

The simulated judge scores anchor i as ``clip(round(mu_i + b_i + e))`` on a discrete scale (1-5,
0-5, 0-10 and 0-100 in steps of 1), with item effects ``mu_i`` uniform on the middle 60% of the
range, a judge offset ``b_i`` and per-sample noise ``e ~ N(0, (s f R)^2)``, ``s`` = 0.05, 0.075 or
0.10 of the range R (realistic judge noise at temperature > 0) and ``f`` the noise factor.  A
*series* is one anchor set whose reference is recorded ONCE (``reference_samples_for(scale)``
samples per anchor: 8 on a coarse scale, 4 otherwise) and then re-judged in ``--sessions``
sessions with fresh draws, as a user's CI does: every session inherits the reference's own error.
Rates are over all sessions of all series (the worst series is printed beside).  Defaults under
test: 40 anchors (30 re-judged first, 10 reserve asked only when the first 30 are not clearly
steady: ``stats.staged_anchor_comparison``), 1 fresh sample per anchor per session, margin 0.1 R,
alpha 0.05 (noise test 0.025, shift test at the level designed for 95% power).

Goals, on every scale and noise level:

* detection: a silent shift of +0.1 R and of -0.1 R (each its own line), and a shift on 30% of
  the items (by 0.1 R / 0.3, a mean of 0.1 R), called "drifted" in >= 95% of sessions;
* noise: the judge's noise sd doubled at an unchanged mean, "drifted" in >= 80% of sessions;
* false alarms: an unchanged judge is called "drifted" in <= 5% of sessions, and its reported
  noise ratio is 0.9-1.1 on average; the history monitor alarms in <= 5% of 20-run drift-free
  histories (the repeated per-session test is printed beside it for contrast);
* the monitor catches slow drift (0.005 R per run, 0.1 R after 20 runs) in >= 95% of histories;
* attribution: the scripted scenarios (judge shift only, judge noise change only, system change
  only, neither; one fixed seed per scenario and noise level, the same whatever ``--seed``) are
  attributed right in 100%, and each case over many seeds in >= 95% (the "judge shift" case cannot
  beat the detection rate);
* cost: anchor calls per session <= 40 (10% of a 400-call suite), at most and on average.

Seeded; a full run takes about 10 minutes on one free core, ``--quick`` about 3.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from pytest_judgerel.scales import Scale
from pytest_judgerel.stats import (anchor_comparison, attribute_change, drift_monitor, paired_shift,
                                   reference_samples_for, staged_anchor_comparison)

N_ANCHORS, SCREEN, FRESH_SAMPLES = 40, 30, 1
SCALES = ("1-5", "0-5", "0-10", "0-100")
NOISES = (0.05, 0.075, 0.10)
SHIFT = 0.10
PARTIAL = 0.30  # the share of items a partial shift moves (by SHIFT / PARTIAL: a mean shift of SHIFT)
SCRIPTED_SEED = 29
"""The scripted attribution cases' seed, whatever ``--seed`` draws: they are a fixed list of scenarios
(a regression check), while ``--seed`` draws the data of every rate the goals grade."""
NOISE_FACTOR = 3.0  # the attribution's scripted noise change: per-sample sd x 3
NOISE_DOUBLING = 2.0
SUITE_CALLS = 400
SYSTEM_ITEMS = 200
SYSTEM_CHANGE = 0.10


def judge_scores(rng: np.random.Generator, mu: np.ndarray, scale: Scale, noise_sd: float, size: int,
                 offset: float | np.ndarray = 0.0) -> np.ndarray:
    raw = mu[:, None] + np.reshape(offset, (-1, 1)) + rng.normal(0.0, noise_sd, (mu.size, size))
    return np.clip(scale.low + np.round((raw - scale.low) / scale.step) * scale.step, scale.low, scale.high)


def item_effects(rng: np.random.Generator, scale: Scale, n: int) -> np.ndarray:
    return rng.uniform(scale.low + 0.2 * scale.range, scale.low + 0.8 * scale.range, n)


def series(rng: np.random.Generator, scale: Scale, noise: float, sessions: int, *, shift: float = 0.0,
           partial: float = 1.0, noise_factor: float = 1.0, seed: int = 0) -> list:
    """One anchor set, its reference recorded once, re-judged in ``sessions`` sessions (the judge is
    asked, fresh, only for the anchors the staged comparison requests).  ``shift`` (fraction of the
    range) moves ``partial`` of the items, drawn at random, by ``shift / partial``."""
    mu = item_effects(rng, scale, N_ANCHORS)
    sd = noise * scale.range
    ref = judge_scores(rng, mu, scale, sd, reference_samples_for(scale))
    reference = {i: list(ref[i]) for i in range(N_ANCHORS)}
    moved = np.zeros(N_ANCHORS, bool)
    moved[rng.permutation(N_ANCHORS)[:round(partial * N_ANCHORS)]] = True  # exactly that share of the items
    offset = np.where(moved, shift / partial * scale.range, 0.0)
    out = []
    for t in range(sessions):
        fresh = judge_scores(rng, mu, scale, sd * noise_factor, FRESH_SAMPLES, offset)
        out.append(staged_anchor_comparison(reference, lambda ids: {i: list(fresh[i]) for i in ids}, scale,
                                            screen=SCREEN, seed=seed * 1000 + t))
    return out


def rates(rng: np.random.Generator, scale: Scale, noise: float, n_series: int, sessions: int, **kw) -> dict:
    """Share drifted (all sessions, and the worst series'), share steady, mean calls and mean noise ratio."""
    drifted, steady, calls, ratios, worst = [], [], [], [], 1.0
    for s in range(n_series):
        comps = series(rng, scale, noise, sessions, seed=s, **kw)
        st = [c.status for c in comps]
        drifted += [x == "drifted" for x in st]
        steady += [x == "steady" for x in st]
        calls += [c.calls for c in comps]
        ratios += [c.noise.value for c in comps if c.noise is not None and c.noise.value is not None]
        worst = min(worst, float(np.mean([x == "drifted" for x in st])))
    return {"drifted": float(np.mean(drifted)), "steady": float(np.mean(steady)), "calls": float(np.mean(calls)),
            "ratio": float(np.mean(ratios)) if ratios else float("nan"), "worst": worst,
            "max_calls": int(max(calls)), "n": len(drifted)}


def histories(rng: np.random.Generator, scale: Scale, noise: float, reps: int, slope: float, runs: int = 20):
    """Shift and standard error of each run against one reference per history (vectorised: the
    same mean and paired t standard error as anchor_comparison, checked on the first history).
    The monitor follows the first stage's ``SCREEN`` anchors, which every run re-judges."""
    n_anchors = SCREEN
    m = reference_samples_for(scale)
    mu = item_effects(rng, scale, n_anchors * reps).reshape(reps, n_anchors)
    sd = noise * scale.range
    ref = judge_scores(rng, mu.ravel(), scale, sd, m).reshape(reps, n_anchors, m)
    drift = slope * scale.range * np.arange(1, runs + 1)
    fresh = np.stack([judge_scores(rng, mu.ravel(), scale, sd, 1, drift[t]).reshape(reps, n_anchors)
                      for t in range(runs)], axis=1)  # reps x runs x anchors
    d = fresh - ref.mean(axis=-1)[:, None, :]
    shift = d.mean(axis=-1)
    se = d.std(axis=-1, ddof=1) / np.sqrt(n_anchors)
    ref_sd = np.sqrt(((ref - ref.mean(axis=-1, keepdims=True)) ** 2).sum(axis=(1, 2))
                     / (n_anchors * (m - 1)))
    check = anchor_comparison(ref[0], fresh[0, 0], scale)
    assert abs(check.shift - shift[0, 0]) < 1e-12 and abs(check.shift_se - se[0, 0]) < 1e-12
    assert check.noise is not None and abs(check.noise.reference_sd - ref_sd[0]) < 1e-12
    return shift, se, ref_sd


def monitor_rates(shift: np.ndarray, se: np.ndarray, ref_sd: np.ndarray, margin: float, m: int):
    from scipy import stats

    alarms, firsts = [], []
    for h in range(shift.shape[0]):
        runs = [{"shift": float(shift[h, t]), "shift_se": float(se[h, t]), "n": SCREEN,
                 "reference_samples": m, "fresh_samples": FRESH_SAMPLES,
                 "noise": {"reference_sd": float(ref_sd[h])}} for t in range(shift.shape[1])]
        mon = drift_monitor(runs)
        alarms.append(mon.alarmed)
        firsts.append(mon.first_alarm or np.nan)
    # the repeated two-run shift test (at 0.025, |shift| >= 0.05 R) at every run, for contrast
    with np.errstate(divide="ignore", invalid="ignore"):
        p = 2 * stats.t.sf(np.abs(shift / se), SCREEN - 1)
    hit = (p < 0.025) & (np.abs(shift) >= 0.5 * margin)
    first_test = np.where(hit.any(axis=1), hit.argmax(axis=1) + 1, np.nan)
    return (float(np.mean(alarms)), float(np.nanmedian(firsts)) if any(alarms) else float("nan"),
            float(hit.any(axis=1).mean()), float(np.nanmedian(first_test)) if hit.any() else float("nan"))


def attribution_case(rng: np.random.Generator, scenario: str, noise: float, seed: int) -> str:
    scale = Scale(0, 10)
    sd = noise * scale.range
    judge_shift = SHIFT * scale.range * rng.choice((-1, 1)) if scenario == "judge shift" else 0.0
    factor = NOISE_FACTOR if scenario == "judge noise" else 1.0
    system = SYSTEM_CHANGE * scale.range * rng.choice((-1, 1)) if scenario == "system change" else 0.0
    mu = item_effects(rng, scale, N_ANCHORS)
    ref = judge_scores(rng, mu, scale, sd, reference_samples_for(scale))
    fresh = judge_scores(rng, mu, scale, sd * factor, FRESH_SAMPLES, judge_shift)
    anchors = staged_anchor_comparison({i: list(ref[i]) for i in range(N_ANCHORS)},
                                       lambda ids: {i: list(fresh[i]) for i in ids}, scale, screen=SCREEN, seed=seed)
    # the system under test: its items scored by the old judge in run A and by the current judge in run B
    quality = item_effects(rng, scale, SYSTEM_ITEMS)
    before = judge_scores(rng, quality, scale, sd, 1)[:, 0]
    after = judge_scores(rng, quality + system, scale, sd * factor, 1, judge_shift)[:, 0]
    return attribute_change(anchors, paired_shift(before, after)).verdict


EXPECTED = {"judge shift": "judge drifted", "judge noise": "judge drifted", "system change": "system changed",
            "neither": "none"}


def line(name: str, measured: str, goal: str, ok: bool) -> bool:
    print(f"{name}: {measured} goal {goal} {'PASS' if ok else 'FAIL'}", flush=True)
    return ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer replications (about 3 minutes)")
    ap.add_argument("--series", type=int, default=None, help="anchor sets per setting (default 40; quick 12)")
    ap.add_argument("--sessions", type=int, default=10, help="sessions per anchor set (default 10)")
    ap.add_argument("--histories", type=int, default=None, help="20-run histories per setting (default 2000; quick 400)")
    ap.add_argument("--seeds", type=int, default=None, help="seeds per attribution case and noise (default 300; quick 100)")
    ap.add_argument("--seed", type=int, default=29)
    args = ap.parse_args(argv)
    n_series = args.series or (12 if args.quick else 40)
    n_hist = args.histories or (400 if args.quick else 2000)
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    ok = True
    ten = Scale(0, 10)

    # per session, every anchor set's reference recorded once: detection, noise, false alarms
    null_calls, max_calls = [], 0
    cases = ((f"+{SHIFT:g}", dict(shift=SHIFT)), (f"-{SHIFT:g}", dict(shift=-SHIFT)),
             (f"{SHIFT:g}_on_{PARTIAL:.0%}_of_items", dict(shift=SHIFT, partial=PARTIAL)))
    for scale_name in SCALES:
        scale = Scale.parse(scale_name)
        for noise in NOISES:
            tag = f"{scale_name.replace('-', '_')}_noise_{noise:g}"
            null = rates(rng, scale, noise, n_series, args.sessions)
            null_calls.append(null["calls"])
            ok &= line(f"drift_false_alarm_{tag}", f"{null['drifted']:.1%} of {null['n']} sessions (steady "
                       f"{null['steady']:.1%}; mean {null['calls']:.1f} anchor calls)", "<= 5%", null["drifted"] <= 0.05)
            ok &= line(f"drift_noise_ratio_unchanged_{tag}", f"{null['ratio']:.3f} on average", "0.9-1.1",
                       0.9 <= null["ratio"] <= 1.1)
            for name, kw in cases:
                det = rates(rng, scale, noise, n_series, args.sessions, **kw)
                max_calls = max(max_calls, det["max_calls"])
                ok &= line(f"drift_detect_shift_{name}_{tag}", f"{det['drifted']:.1%} of {det['n']} sessions "
                           f"(worst anchor set {det['worst']:.0%}; mean {det['calls']:.1f} anchor calls)", ">= 95%",
                           det["drifted"] >= 0.95)
            noisy = rates(rng, scale, noise, n_series, args.sessions, noise_factor=NOISE_DOUBLING)
            ok &= line(f"drift_detect_noise_x{NOISE_DOUBLING:g}_{tag}", f"{noisy['drifted']:.1%} of {noisy['n']} "
                       f"sessions (worst anchor set {noisy['worst']:.0%}; mean noise ratio {noisy['ratio']:.2f})",
                       ">= 80%", noisy["drifted"] >= 0.80)
    ok &= _monitor_and_attribution(rng, ten, n_hist, args)
    mean_null = float(np.mean(null_calls))
    m = reference_samples_for(ten)
    ok &= line("drift_anchor_calls_per_session", f"at most {max_calls} calls ({max_calls / SUITE_CALLS:.1%} of a "
               f"{SUITE_CALLS}-call suite), {mean_null:.1f} on average over the drift-free sessions above (reference "
               f"recorded once: {N_ANCHORS * m} calls on 0-10, {N_ANCHORS * reference_samples_for(Scale(1, 5))} on "
               "1-5)", "<= 40", max_calls <= 40 and mean_null <= 40)
    print(f"({n_series} anchor sets x {args.sessions} sessions per setting, {n_hist} histories, seed {args.seed}, "
          f"{time.perf_counter() - t0:.1f} s)")
    return 0 if ok else 1


def _monitor_and_attribution(rng: np.random.Generator, ten: Scale, n_hist: int, args: argparse.Namespace) -> bool:
    ok = True
    margin = 0.1 * ten.range
    m = reference_samples_for(ten)
    for noise in (0.05, 0.10):
        shift, se, ref_sd = histories(rng, ten, noise, n_hist, 0.0)
        fa, _, fa_rep, _ = monitor_rates(shift, se, ref_sd, margin, m)
        ok &= line(f"drift_monitor_false_alarm_20_runs_noise_{noise:g}",
                   f"{fa:.1%} of {n_hist} histories (repeated per-session test {fa_rep:.1%})", "<= 5%", fa <= 0.05)
        shift, se, ref_sd = histories(rng, ten, noise, n_hist, 0.005)
        det, first, det_rep, first_rep = monitor_rates(shift, se, ref_sd, margin, m)
        ok &= line(f"drift_monitor_slow_drift_noise_{noise:g}",
                   f"{det:.1%} of {n_hist} histories alarmed by run 20 (median first alarm run {first:.0f}; "
                   f"repeated per-session test {det_rep:.1%}, median run {first_rep:.0f})", ">= 95%", det >= 0.95)

    scripted_right, scripted_total = 0, 0
    for noise in NOISES:
        for scenario, expected in EXPECTED.items():
            verdict = attribution_case(np.random.default_rng([SCRIPTED_SEED, int(noise * 1000), len(scenario)]),
                                       scenario, noise, seed=0)
            scripted_right += verdict == expected
            scripted_total += 1
            if verdict != expected:
                print(f"  scripted {scenario} at noise {noise:g}: got {verdict!r}, expected {expected!r}")
    ok &= line("drift_attribution_scripted", f"{scripted_right}/{scripted_total} right at their fixed seeds "
               f"({scripted_right / scripted_total:.0%})", ">= 100%", scripted_right == scripted_total)
    reps = args.seeds or (100 if args.quick else 300)
    for scenario, expected in EXPECTED.items():
        rates_: list[float] = []
        wrong: dict[str, int] = {}
        for noise in NOISES:
            verdicts = [attribution_case(rng, scenario, noise, seed=r) for r in range(reps)]
            rates_.append(sum(v == expected for v in verdicts) / reps)
            for v in verdicts:
                if v != expected:
                    wrong[v] = wrong.get(v, 0) + 1
        errors = ", ".join(f"{v!r} {c}" for v, c in sorted(wrong.items())) or "none"
        ok &= line(f"drift_attribution_{scenario.replace(' ', '_')}",
                   f"{min(rates_):.1%} right at the worst noise ({', '.join(f'{r:.1%}' for r in rates_)} at noise "
                   f"{', '.join(f'{n:g}' for n in NOISES)}; {reps} seeds each; wrong: {errors})", ">= 95%",
                   min(rates_) >= 0.95)
    return ok


if __name__ == "__main__":
    sys.exit(main())
