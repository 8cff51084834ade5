"""Benchmark: is p_pass a calibrated probability that a rerun of the gate passes?

Run: python benchmarks/bench_calibration.py [--datasets N] [--boot B]

Simulation with known truth (seeded).  Each data set draws its true value spread around the
gate's threshold, then the data, then two reruns from the same truth:

* **ICC over repeats** (``assert_icc_above`` on ``judge.rate(..., repeats=k)``): n items x k
  judge samples, ``x_ij = mu_i + e_ij`` with true ICC(A,1) uniform on threshold +- 0.25
  (n = 30 or 40, k = 3 or 5, threshold 0.6).  ``p_pass`` (the gates' default on such data)
  predicts a rerun on the *same items* with new judge samples (a cache refresh);
  ``p_pass_new_items`` a rerun on new items and new samples.
* **Mean of per-item values** (a probe or MindEval gate, no repeats): n = 30 item values with a
  true mean uniform on threshold +- 0.5 sd; ``p_pass`` predicts a rerun on new items.

Both use :func:`pytest_judgerel.stats.verdict_stability` with ``predictive=True`` exactly as
:mod:`pytest_judgerel.gates.stability` calls it.  For each number the reliability table bins data sets
by predicted probability (deciles 0-0.1, ..., 0.9-1) and compares the mean prediction with the
observed rerun pass rate; the Brier score is compared with that of the best constant (the
observed pass rate itself, r(1 - r)).  For contrast the bootstrap share of resamples that pass
(``predictive=False``: a resampling share, not a prediction) is scored against the new-items rerun.

Goals (each number): every bin with 30+ data sets within 0.08 of its observed rerun pass rate,
Brier <= 0.9 x the best constant's.

**Named designs** (``--designs N``, default 1000 data sets each, 0 to skip): ICC(A,1) >= t, true
ICC uniform on t +- 0.15 (0.60-0.90 at t = 0.75), through
:func:`pytest_judgerel.gates.stability.icc_gate_stability` exactly as the gate calls it (1000 simulated
reruns of the one-way model); each data set's rerun pass probability is the share of 20 reruns
that pass (same items with new samples, and new items).  Designs: 40 x 4 at t = 0.75, 0.6 and 0.9;
20 x 3; 30 x 4; 60 x 3; 80 x 4 at t = 0.6; 30 x 4 and 40 x 4 with item-dependent noise (sd uniform
0.4-1.6 relative); 40 x 4 ratings on 1-5 (rounded, clipped); 20 x 4 at t = 0.9.  Goal: every
decile with 30+ data sets within 0.08, for every number the gate does not mark ``rough``; a
design the gate marks rough must be marked on every data set (printed, not graded on its gaps).
Each decile's gap is printed with its standard error (the spread of prediction minus rerun
share over the decile's data sets): with 1000 data sets it is about 0.02-0.03, so a gap near
0.08 is not told apart from 0.05.  ``--wide`` adds the rough designs again with true ICCs on
t +- 0.3 (informational): their misses sit in the outer deciles, where the truths' window
(not the data) decides the rerun.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Sequence

import numpy as np

from pytest_judgerel.stats import icc_statistic, verdict_stability
from pytest_judgerel.stats.icc_batch import icc_values

THRESHOLD = 0.6
MIN_BIN = 30
MAX_GAP = 0.08
MAX_BRIER_RATIO = 0.9


def _icc(x: np.ndarray) -> float:
    return float(icc_values(x[None], "A,1")[0])


def simulate_icc(rng: np.random.Generator, datasets: int, boot: int) -> dict[str, tuple[list, list]]:
    stat = icc_statistic("A,1")
    out: dict[str, tuple[list, list]] = {"p_pass (same items)": ([], []), "p_pass_new_items": ([], []),
                                         "bootstrap share vs new items": ([], [])}
    for d in range(datasets):
        n, k = (30, 40)[d % 2], (3, 5)[(d // 2) % 2]
        rho = rng.uniform(THRESHOLD - 0.25, THRESHOLD + 0.25)
        sd_item = np.sqrt(rho / (1 - rho))
        mu = rng.normal(0, sd_item, n)
        x = mu[:, None] + rng.normal(size=(n, k))
        same = verdict_stability(stat, x, THRESHOLD, resample="repeats", n_boot=boot, seed=d, predictive=True,
                                 model="one-way")
        new = verdict_stability(stat, x, THRESHOLD, resample="items+repeats", n_boot=boot, seed=d, predictive=True,
                                model="one-way")
        share = verdict_stability(stat, x, THRESHOLD, resample="items+repeats", n_boot=boot, seed=d)
        rerun_same = _icc(mu[:, None] + rng.normal(size=(n, k))) >= THRESHOLD
        rerun_new = _icc(rng.normal(0, sd_item, n)[:, None] + rng.normal(size=(n, k))) >= THRESHOLD
        for key, p, hit in (("p_pass (same items)", same.p_pass, rerun_same),
                            ("p_pass_new_items", new.p_pass, rerun_new),
                            ("bootstrap share vs new items", share.p_pass, rerun_new)):
            out[key][0].append(p)
            out[key][1].append(hit)
    return out


def simulate_mean(rng: np.random.Generator, datasets: int, boot: int) -> dict[str, tuple[list, list]]:
    def mean(x: np.ndarray) -> np.ndarray:
        return x.mean(axis=-2)[..., 0]

    mean.vectorized = True  # type: ignore[attr-defined]
    out: dict[str, tuple[list, list]] = {"mean gate p_pass (new items)": ([], []),
                                         "mean gate bootstrap share": ([], [])}
    n = 30
    for d in range(datasets):
        mu = rng.uniform(-0.5, 0.5)
        x = rng.normal(mu, 1.0, n)
        new = verdict_stability(mean, x, 0.0, resample="items", n_boot=boot, seed=d, predictive=True)
        share = verdict_stability(mean, x, 0.0, resample="items", n_boot=boot, seed=d)
        hit = rng.normal(mu, 1.0, n).mean() >= 0.0
        for key, p in (("mean gate p_pass (new items)", new.p_pass), ("mean gate bootstrap share", share.p_pass)):
            out[key][0].append(p)
            out[key][1].append(hit)
    return out


DESIGNS = [  # name, n, k, item-dependent noise, ordinal, threshold
    ("40x4", 40, 4, False, False, 0.75), ("40x4 ICC>=0.6", 40, 4, False, False, 0.6),
    ("40x4 ICC>=0.9", 40, 4, False, False, 0.9), ("20x3", 20, 3, False, False, 0.75),
    ("30x4", 30, 4, False, False, 0.75), ("60x3", 60, 3, False, False, 0.75),
    ("80x4 ICC>=0.6", 80, 4, False, False, 0.6), ("20x4 ICC>=0.9", 20, 4, False, False, 0.9),
    ("30x4 item-dependent noise", 30, 4, True, False, 0.75), ("40x4 item-dependent noise", 40, 4, True, False, 0.75),
    ("40x4 ratings 1-5", 40, 4, False, True, 0.75),
]
WINDOW = 0.15  # true ICC uniform on threshold +- WINDOW (0.60-0.90 around 0.75)


def simulate_designs(rng: np.random.Generator, datasets: int, reruns: int = 20, window: float = WINDOW,
                     only: Sequence[str] | None = None) -> dict[str, tuple[list, list, bool]]:
    """The named designs (module docstring): per data set the gate's p_pass / p_pass_new_items and
    the share of ``reruns`` reruns that pass; the flag says whether every data set was rough."""
    from pytest_judgerel.gates.stability import icc_gate_stability

    out: dict[str, tuple[list, list, bool]] = {}
    for name, n, k, hetero, ordinal, thr in DESIGNS:
        if only is not None and name not in only:
            continue

        def draw(mu: np.ndarray, sd: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
            y = mu[..., :, None] + sd[..., :, None] * rng.normal(size=shape)
            return np.clip(np.round(y + 3), 1, 5) if ordinal else y

        def truth(rho: float, size: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
            mu = rng.normal(0, np.sqrt(rho / (1 - rho)), size)
            sd = rng.uniform(0.4, 1.6, size) if hetero else np.ones(size)
            return mu, sd / np.sqrt((sd ** 2).mean(axis=-1, keepdims=True))

        rows: dict[str, list] = {"same": [[], [], True], "new": [[], [], True]}
        for _ in range(datasets):
            rho = rng.uniform(thr - window, min(thr + window, 0.97))
            mu, sd = truth(rho, (n,))
            x = draw(mu, sd, (n, k))
            st = icc_gate_stability(x, "A,1", "estimate", 0.95, thr, True)
            if st is None:
                continue
            same_hits = icc_values(draw(mu, sd, (reruns, n, k)), "A,1") >= thr
            mu2, sd2 = truth(rho, (reruns, n))
            new_hits = icc_values(draw(mu2, sd2, (reruns, n, k)), "A,1") >= thr
            for key, res, hits in (("same", st.same_items, same_hits), ("new", st.new_items, new_hits)):
                rows[key][0].append(res.p_pass)
                rows[key][1].append(float(np.mean(hits)))
                rows[key][2] &= res.rough
        wide = "" if window == WINDOW else f" (true ICC on threshold +- {window:g})"
        out[f"p_pass (same items) {name}{wide}"] = tuple(rows["same"])  # type: ignore[assignment]
        out[f"p_pass_new_items {name}{wide}"] = tuple(rows["new"])  # type: ignore[assignment]
    return out


def score(name: str, p: list, hit: list, graded: bool) -> bool:
    p_arr, y = np.asarray(p, dtype=float), np.asarray(hit, dtype=float)
    bins = np.minimum((p_arr * 10).astype(int), 9)
    rate = y.mean()
    brier, const = float(((p_arr - y) ** 2).mean()), float(rate * (1 - rate))
    print(f"\n{name}: {len(y)} data sets, rerun pass rate {rate:.3f}")
    print(f"  {'bin':>9} {'n':>5} {'mean p':>7} {'observed':>8} {'gap':>6} {'se':>6}")
    worst = 0.0
    for b in range(10):
        sel = bins == b
        if not sel.any():
            continue
        gap = abs(p_arr[sel].mean() - y[sel].mean())
        se = float((p_arr[sel] - y[sel]).std(ddof=1) / np.sqrt(sel.sum())) if sel.sum() > 1 else float("nan")
        counted = sel.sum() >= MIN_BIN
        worst = max(worst, gap) if counted else worst
        print(f"  {b / 10:.1f}-{(b + 1) / 10:.1f} {int(sel.sum()):5d} {p_arr[sel].mean():7.3f} {y[sel].mean():8.3f} "
              f"{gap:6.3f} {se:6.3f}{'' if counted else ' (fewer than 30)'}")
    ratio = brier / const if const > 0 else float("inf")
    print(f"  Brier {brier:.4f}, best constant {const:.4f} (ratio {ratio:.3f}); worst bin gap {worst:.3f}")
    if not graded:
        return True
    key = name.replace(" (same items)", "").replace(" ", "_")
    ok_bins, ok_brier = worst <= MAX_GAP, ratio <= MAX_BRIER_RATIO
    print(f"calibration_{key}_bins: worst gap {worst:.3f} goal<={MAX_GAP} {'PASS' if ok_bins else 'FAIL'}")
    print(f"calibration_{key}_brier: ratio {ratio:.3f} goal<={MAX_BRIER_RATIO} {'PASS' if ok_brier else 'FAIL'}")
    return ok_bins and ok_brier


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", type=int, default=4000)
    ap.add_argument("--boot", type=int, default=200)
    ap.add_argument("--designs", type=int, default=1000, help="data sets per named design (0: skip)")
    ap.add_argument("--wide", action="store_true", help="also the rough designs with true ICC on threshold +- 0.3")
    ap.add_argument("--quick", action="store_true", help="400 data sets per setting, 60 per design")
    ap.add_argument("--design", action="append", choices=[d[0] for d in DESIGNS],
                    help="only this named design (repeatable; skips the settings above them)")
    ap.add_argument("--design-seed", type=int, default=31, help="the designs' seed (default 31)")
    args = ap.parse_args(argv)
    if args.quick:
        args.datasets, args.designs = 400, 60
    t0 = time.perf_counter()
    rng = np.random.default_rng(2026)
    results = {} if args.design else {**simulate_icc(rng, args.datasets, args.boot),
                                      **simulate_mean(rng, args.datasets, args.boot)}
    ok = True
    for name, (p, hit) in results.items():
        ok &= score(name, p, hit, graded="bootstrap share" not in name)
    if args.designs:
        rough_designs = []
        for name, (p, hit, rough) in simulate_designs(np.random.default_rng(args.design_seed), args.designs,
                                                      only=args.design).items():
            ok &= score(name + (" [rough on every data set]" if rough else ""), p, hit, graded=not rough)
            if rough:
                rough_designs.append(name)
        if args.wide:
            only = {d[0] for d in DESIGNS if any(r.endswith(" " + d[0]) for r in rough_designs)}
            for name, (p, hit, rough) in simulate_designs(np.random.default_rng(32), args.designs, window=0.3,
                                                          only=sorted(only)).items():
                score(name + " [informational]", p, hit, graded=False)
        print("\nflagged rough by the gate (not graded): " + ("; ".join(rough_designs) or "none"))
    print(f"\n({args.datasets} data sets per setting, {args.boot} resamples each, {time.perf_counter() - t0:.1f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
