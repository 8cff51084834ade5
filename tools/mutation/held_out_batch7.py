"""Held-out bugs, batch 7: 10 plausible bugs in the sequential ICC rule's offsets posterior given the
probe and the observed repeats together (``stats/sequential.py``: the probe's evidence, its
likelihood weights and the resampling), written from the package code only (no file under ``tests/``
opened or searched while writing them) and committed before they were measured.

Measured 7 of 10 killed; the survivors SQ01, SQ06 and SQ08 now fail tests/test_mutants_sequential.py.

Each entry of :data:`BATCH7` is ``(id, kind, file, old, new, what)`` like :mod:`held_out_batch4`.
"""

from __future__ import annotations

BATCH7: list[tuple[str, str, str, str, str, str]] = [
    ("SQ01", "sequential", "stats/sequential.py",
     "m * contrast ** 2 / (1 / r + 1 / (k - r))",
     "m * contrast ** 2 * (1 / r + 1 / (k - r))",
     "the contrast of the probe's new columns with its first ones is scaled by its variance instead of "
     "divided by it: the evidence on the offsets is misstated"),
    ("SQ02", "sequential", "stats/sequential.py",
     "    return ss, k - r\n",
     "    return ss, k - 1\n",
     "the probe's evidence claims k - 1 degrees of freedom for k - r independent contrasts (too sure of "
     "small offsets)"),
    ("SQ03", "sequential", "stats/sequential.py",
     "logw = -0.5 * df * np.log(var) - ss / (2 * var)",
     "logw = -0.5 * df * np.log(var) + ss / (2 * var)",
     "the likelihood's exponent has the wrong sign: large offsets are favoured the more the probe shows none"),
    ("SQ04", "sequential", "stats/sequential.py",
     "    pick = np.minimum((w.cumsum(axis=1) < rng.random((w.shape[0], 1))).sum(axis=1), w.shape[1] - 1)",
     "    pick = np.argmax(w, axis=1)",
     "the draw is the most likely candidate instead of a resample: the posterior's spread is lost"),
    ("SQ05", "sequential", "stats/sequential.py",
     "s_b = _probe_reweighted(ems.reshape(s_e.size, PROBE_CANDIDATES), s_e, n, k, ss, df, rng)",
     "s_b = _probe_reweighted(ems.reshape(s_e.size, PROBE_CANDIDATES), s_e, k, k, ss, df, rng)",
     "the all-items mean square is turned into an offsets variance with the probe's item count instead of "
     "all the items' (offsets inflated n/m times)"),
    ("SQ06", "sequential", "stats/sequential.py",
     "ems = _offsets_mean_square(ssc, r - 1, np.repeat(s_e, PROBE_CANDIDATES), prior_df, rng)",
     "ems = _offsets_mean_square(ssc, cap - 1, np.repeat(s_e, PROBE_CANDIDATES), prior_df, rng)",
     "the all-items repeats' sum of squares is given the cap's degrees of freedom instead of the r - 1 it has"),
    ("SQ07", "sequential", "stats/sequential.py",
     "    new = cp[r:]\n",
     "    new = cp[r - 1:]\n",
     "the probe's last observed column is counted among the new ones"),
    ("SQ08", "sequential", "stats/sequential.py",
     "ss = m * float(((new - new.mean()) ** 2).sum()) + m",
     "ss = float(((new - new.mean()) ** 2).sum()) + m",
     "the new columns' deviations are not scaled by the probe's item count (column means have variance "
     "s_e / m + s_b, not s_e + m s_b)"),
    ("SQ09", "sequential", "stats/sequential.py",
     "    w = np.where(total > 0, w / np.where(total > 0, total, 1.0), 1.0 / w.shape[1])",
     "    w = np.where(total > 0, w, 1.0 / w.shape[1])",
     "the weights are not normalised before the cumulative pick: candidates after the first few are "
     "rarely drawn"),
    ("SQ10", "sequential", "stats/sequential.py",
     "    s_b = np.maximum(0.0, (ems - s_e[:, None]) / n)\n",
     "    s_b = (ems - s_e[:, None]) / n\n",
     "a draw of the mean square below the error's gives a negative offsets variance instead of none"),
]
