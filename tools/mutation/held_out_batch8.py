"""Held-out bugs, batch 8: 24 plausible bugs in the sequential gates' pass-rate rule, its exact
calibration, the dry run's plan and the driver that draws and records a sequential gate
(``stats/sequential.py``'s pass-rate and shared parts, ``stats/sequential_pass_rate.py``,
``stats/sequential_plan.py``, ``gates/sequential.py``), written from the package code only (no file
under ``tests/`` opened or searched while writing them) and committed before they were measured.

Measured 22 of 24 killed.  The survivor PP02 (the plan's expected calls without the repeats per item)
now fails tests/test_sequential_rules.py; GS04 (the driver's pass-rate plan without the repeats) is
equivalent and left out here (:data:`held_out_mutants.DROPPED_EQUIVALENT`, with why).

Each entry of :data:`BATCH8` is ``(id, kind, file, old, new, what)`` like :mod:`held_out_batch4`.
"""

from __future__ import annotations

BATCH8: list[tuple[str, str, str, str, str, str]] = [
    # ------------------------------------------------------------ the exact calibration
    ("PR01", "sequential", "stats/sequential_pass_rate.py",
     "cap_fails = binom.cdf(cutoff - np.arange(n + 1)[None, :] - 1, n_cap - n, q)",
     "cap_fails = binom.cdf(cutoff - np.arange(n + 1)[None, :], n_cap - n, q)",
     "a run that ends exactly on the cutoff counts as a cap that fails: every reversal is overstated"),
    ("PR02", "sequential", "stats/sequential_pass_rate.py",
     "calls += (passing + alive[:, stop_fail].sum(axis=1)) * n / n_cap",
     "calls += passing * n / n_cap",
     "the calls of runs that stop with a fail are not counted: the calls share is understated"),
    ("PR03", "sequential", "stats/sequential_pass_rate.py",
     "seq_pass += alive[:, cutoff:].sum(axis=1)",
     "seq_pass += alive[:, cutoff + 1:].sum(axis=1)",
     "runs that reach the cap with exactly the cutoff count are not counted as passes"),
    ("PR04", "sequential", "stats/sequential_pass_rate.py",
     "    if fine_values[j] > values[i]:",
     "    if fine_values[j] < values[i]:",
     "the refinement around the grid's worst rate keeps the smaller error: the worst error is understated"),
    ("PR05", "sequential", "stats/sequential_pass_rate.py",
     "pass_level, pass_counts, rev, rev_rate = _calibrate(predictive, n_cap, cutoff, looks, grid, kernel, eps_pass,",
     "pass_level, pass_counts, rev, rev_rate = _calibrate(predictive, n_cap, cutoff, looks, grid, kernel, eps_fail,",
     "the pass side is calibrated to eps_fail: pass stops reversed up to 0.03 instead of 0.02"),
    ("PR06", "sequential", "stats/sequential_pass_rate.py",
     "+ betaln(j + a + c, rem - j + b + n - c) - betaln(a + c, b + n - c))",
     "+ betaln(j + a + c, rem - j + b + n) - betaln(a + c, b + n))",
     "the calibration's predictive counts every item seen as a fail: the boundaries it calibrates are not "
     "the ones the look uses"),
    ("PR07", "sequential", "stats/sequential_pass_rate.py",
     "        p[first:hi + 1] = 1.0\n",
     "        p[lo:hi + 1] = 1.0\n",
     "counts whose predictive is within the tail of 0 read as 1 in the calibration"),
    # ------------------------------------------------------------ the pass-rate look and the shared helpers
    ("PL01", "sequential", "stats/sequential.py",
     "p = _beta_binomial_sf(need, remaining, a + count, b + seen - count)",
     "p = _beta_binomial_sf(need, remaining, a + count, b + seen)",
     "the look's predictive counts every item seen as a fail too (the Beta posterior's second parameter)"),
    ("PL02", "sequential", "stats/sequential.py",
     "    elif need > remaining:\n        p = 0.0\n",
     "    elif need >= remaining:\n        p = 0.0\n",
     "a gate where every remaining item must pass is declared lost"),
    ("PL03", "sequential", "stats/sequential.py",
     "    upper = float(pmf[need:].sum())",
     "    upper = float(pmf[need + 1:].sum())",
     "the beta-binomial tail leaves out its first term (exactly the needed count)"),
    ("PL04", "sequential", "stats/sequential.py",
     "        if passes > eps_fail * n_sim and done - passes > eps_pass * n_sim:",
     "        if passes > eps_fail * n_sim or done - passes > eps_pass * n_sim:",
     "the simulation stops once one side is out of reach: a look that would fail (or pass) can read as "
     "'continue' on a partial count"),
    ("PL05", "sequential", "stats/sequential.py",
     "    if p >= 1 - eps_pass:\n        return \"pass\"",
     "    if p > 1 - eps_pass:\n        return \"pass\"",
     "a predictive exactly at 1 - eps_pass does not stop with a pass"),
    ("PL06", "sequential", "stats/sequential.py",
     "    base_fail = default_fail if eps is None else _check_eps(eps)",
     "    base_fail = default_fail",
     "eps= sets only the pass side; the fail side keeps its default"),
    ("PL07", "sequential", "stats/sequential.py",
     "    lo, hi = -1, n_cap  # ok(hi) holds; ok(lo) is taken as false",
     "    lo, hi = 0, n_cap  # ok(hi) holds; ok(lo) is taken as false",
     "a gate that passes on a count of 0 gets a cutoff of 1"),
    ("PL08", "sequential", "stats/sequential.py",
     "    if p <= eps_fail:\n        return \"fail\", f\"P({what}",
     "    if p < eps_fail:\n        return \"fail\", f\"P({what}",
     "a predictive exactly at eps_fail does not stop with a fail"),
    # ------------------------------------------------------------ the plan
    ("PP01", "sequential", "stats/sequential_plan.py",
     "    low = first_true(lambda c: rule(c, seen) != \"fail\") - 1",
     "    low = first_true(lambda c: rule(c, seen) != \"fail\")",
     "the plan's fail boundary is one count too high: runs that go on are planned as stopped"),
    ("PP02", "sequential", "stats/sequential_plan.py",
     "return PlannedCalls(n_cap * repeats, float(np.mean(shares)) * n_cap * repeats, basis)",
     "return PlannedCalls(n_cap * repeats, float(np.mean(shares)) * n_cap, basis)",
     "the expected calls leave out the repeats per item"),
    ("PP03", "sequential", "stats/sequential_plan.py",
     "op = boundaries_operating(n_cap, int(cutoff.count), looks, tuple(high for _, high in bounds),\n"
     "                              tuple(low for low, _ in bounds), np.array([float(truth_raw)]))",
     "op = boundaries_operating(n_cap, int(cutoff.count), looks, tuple(low + 1 for low, _ in bounds),\n"
     "                              tuple(high - 1 for _, high in bounds), np.array([float(truth_raw)]))",
     "the plan's pass and fail boundaries are swapped"),
    ("PP04", "sequential", "stats/sequential_plan.py",
     "shares = [expected_pass_rate_share(n_cap, cal.sensitivity * t + (1 - cal.specificity) * (1 - t), cutoff, rule=rule)",
     "shares = [expected_pass_rate_share(n_cap, cal.sensitivity * t + cal.specificity * (1 - t), cutoff, rule=rule)",
     "the judge's raw pass rate adds the specificity instead of the false-pass rate for the failing items"),
    # ------------------------------------------------------------ the driver
    ("GS01", "sequential", "gates/sequential.py",
     "        return max(0, self.cap_calls - self.calls)",
     "        return max(0, self.cap_calls - self.used)",
     "saved calls computed from the repeats (or items) drawn instead of the calls"),
    ("GS02", "sequential", "gates/sequential.py",
     "\"eps_fail\": None if last is None else last.eps_fail,",
     "\"eps_fail\": None if last is None else last.eps_pass,",
     "the record's eps_fail holds eps_pass"),
    ("GS03", "sequential", "gates/sequential.py",
     "    if unparsed <= limit:\n        return None",
     "    if unparsed < limit:\n        return None",
     "exactly max_parse_failures unparsed replies end the drawing (the gate allows that many)"),
    ("GS05", "sequential", "gates/sequential.py",
     "exc.sequential_run = _run(pending, unit, drawn[0], looks, \"budget\",",
     "exc.sequential_run = _run(pending, unit, size, looks, \"budget\",",
     "a budget stop records the refused look's size as drawn"),
]
