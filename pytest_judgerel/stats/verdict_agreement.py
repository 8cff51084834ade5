"""Agreement of a judge's pass/fail verdicts with humans': kappa, AC1, TPR/TNR, the confusion table.

* Cohen's kappa (1960) ``(p_a - p_e) / (1 - p_e)`` with the large-sample variance of Fleiss,
  Cohen & Everitt (1969, Psychological Bulletin 72, eq. 13; as ``statsmodels.stats.inter_rater.
  cohens_kappa``) and a normal interval.  Kappa collapses when one verdict is rare (the kappa
  paradoxes, Feinstein & Cicchetti 1990): at a 95% base rate, 95% agreement can give kappa near 0.
* Gwet's AC1 (Gwet 2008, "Computing inter-rater reliability and its variance in the presence of
  high agreement", BJMSP 61, eqs. 14 and 21 for two raters): chance agreement
  ``p_e = sum_k pi_k (1 - pi_k) / (q - 1)``, ``pi_k`` the mean of both raters' shares of category k,
  which stays meaningful at extreme base rates; its variance is Gwet's linearisation (the delta
  method under multinomial sampling), its interval Student t with n - 1 degrees of freedom, as in
  Gwet's own software.
* TPR (the judge passes what humans pass) and TNR (fails what humans fail) with exact
  Clopper-Pearson intervals; the human base rate with its Wilson interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from ..errors import ReliabilityError
from .interval import HasInterval, check_confidence

__all__ = ["Coefficient", "cohens_kappa", "gwet_ac1", "VerdictAgreement", "verdict_agreement", "as_verdict"]


@dataclass(frozen=True)
class Coefficient(HasInterval):
    """An agreement coefficient ``value`` with its standard error ``se`` and interval."""

    name: str
    value: float
    se: float
    ci_low: float
    ci_high: float
    confidence: float
    n: int

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "se": self.se, "ci": [self.ci_low, self.ci_high], "confidence": self.confidence,
                "n": self.n}

    def __str__(self) -> str:
        return f"{self.name} {self.formatted(3)}"


def _table(table: Any) -> np.ndarray:
    t = np.asarray(table, dtype=float)
    if t.ndim != 2 or t.shape[0] != t.shape[1] or t.shape[0] < 2:
        raise ReliabilityError(f"an agreement table must be square with at least 2 categories, got shape {t.shape}")
    if not np.isfinite(t).all() or (t < 0).any() or t.sum() <= 0:
        raise ReliabilityError("an agreement table holds non-negative counts with a positive total")
    return t


def cohens_kappa(table: Any, confidence: float = 0.95) -> Coefficient:
    """Cohen's kappa of a q x q table of counts (rows: one rater, columns: the other) with the
    Fleiss-Cohen-Everitt variance and a normal interval."""
    from scipy.stats import norm

    conf = check_confidence(confidence)
    t = _table(table)
    n = float(t.sum())
    p = t / n
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    pa, pe = float(np.trace(p)), float((rows * cols).sum())
    if pe >= 1.0:
        raise ReliabilityError("kappa is undefined: both raters used one category only (chance agreement is 1)")
    kappa = (pa - pe) / (1 - pe)
    term_a = float((np.diag(p) * (1 - (rows + cols) * (1 - kappa)) ** 2).sum())
    off = p * (cols[:, None] + rows[None, :]) ** 2
    np.fill_diagonal(off, 0.0)
    term_b = (1 - kappa) ** 2 * float(off.sum())
    term_c = (kappa - pe * (1 - kappa)) ** 2
    se = math.sqrt(max((term_a + term_b - term_c) / (1 - pe) ** 2 / n, 0.0))
    z = float(norm.isf((1 - conf) / 2))
    return Coefficient("Cohen's kappa", kappa, se, kappa - z * se, kappa + z * se, conf, int(round(n)))


def gwet_ac1(table: Any, confidence: float = 0.95) -> Coefficient:
    """Gwet's AC1 of a q x q table of counts with Gwet's (2008) variance and a t interval."""
    from scipy.stats import t as student

    conf = check_confidence(confidence)
    t = _table(table)
    q = t.shape[0]
    n = float(t.sum())
    p = t / n
    pi = (p.sum(axis=1) + p.sum(axis=0)) / 2
    pa = float(np.trace(p))
    pe = float((pi * (1 - pi)).sum()) / (q - 1)
    ac1 = (pa - pe) / (1 - pe)
    mid = 1 - (pi[:, None] + pi[None, :]) / 2
    cross = float((np.diag(p) * (1 - pi)).sum()) / (q - 1)
    spread = float((p * mid ** 2).sum()) / (q - 1) ** 2
    var = (pa * (1 - pa) - 4 * (1 - ac1) * (cross - pa * pe) + 4 * (1 - ac1) ** 2 * (spread - pe ** 2)) \
        / (n * (1 - pe) ** 2)
    se = math.sqrt(max(var, 0.0))
    n_int = int(round(n))
    if n_int < 2:
        raise ReliabilityError("AC1's interval needs at least 2 items")
    crit = float(student.isf((1 - conf) / 2, n_int - 1))
    return Coefficient("Gwet's AC1", ac1, se, ac1 - crit * se, ac1 + crit * se, conf, n_int)


_PASS = {"pass", "passed", "yes", "true", "1", "good"}
_FAIL = {"fail", "failed", "no", "false", "0", "bad"}


def as_verdict(value: Any, item: Any = "") -> bool | None:
    """A pass/fail verdict as True/False (None: missing): bools, 1/0, ``"pass"``/``"fail"``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, float, np.integer, np.floating)) and float(value) in (0.0, 1.0):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _PASS | _FAIL:
        return value.strip().lower() in _PASS
    raise ReliabilityError(f"verdict {value!r} of item {item!r} is not pass/fail (True/False, 1/0, 'pass'/'fail')")


@dataclass(frozen=True)
class VerdictAgreement:
    """Judge vs human pass/fail verdicts on ``n`` items.  ``confusion``: ``tp`` (both pass), ``fp``
    (judge passes, humans fail), ``fn``, ``tn``; ``false_pass``/``false_fail`` the disagreeing ids."""

    kappa: Coefficient | None
    ac1: Coefficient
    tpr: Any  # ExactProportion, None without a human pass
    tnr: Any  # ExactProportion, None without a human fail
    base_rate: Any  # Proportion: the share humans pass
    judge_rate: float
    observed: float
    confusion: dict[str, int]
    false_pass: tuple[str, ...]
    false_fail: tuple[str, ...]
    n_omitted: int = 0
    kappa_error: str = ""
    items: tuple[str, ...] = field(default=(), repr=False)

    @property
    def n(self) -> int:
        return sum(self.confusion.values())

    def to_dict(self) -> dict[str, Any]:
        return {"kappa": None if self.kappa is None else self.kappa.to_dict(), "ac1": self.ac1.to_dict(),
                "tpr": None if self.tpr is None else self.tpr.to_dict(),
                "tnr": None if self.tnr is None else self.tnr.to_dict(), "base_rate": self.base_rate.to_dict(),
                "judge_rate": self.judge_rate, "observed": self.observed, "confusion": dict(self.confusion),
                "n_omitted": self.n_omitted}

    def __str__(self) -> str:
        c = self.confusion
        kappa = str(self.kappa) if self.kappa is not None else f"Cohen's kappa undefined ({self.kappa_error})"
        return (f"{kappa}, {self.ac1} on {self.n} items (human pass rate {self.base_rate.value:.3f}); "
                f"confusion judge/human pass-pass {c['tp']}, pass-fail {c['fp']}, fail-pass {c['fn']}, "
                f"fail-fail {c['tn']}")


def verdict_agreement(judge: Mapping[Any, Any], human: Mapping[Any, Any], *, confidence: float = 0.95
                      ) -> VerdictAgreement:
    """Agreement of ``judge`` with ``human`` pass/fail verdicts (``{item id: verdict}``) on the
    items both gave a verdict for (the others are counted in ``n_omitted``)."""
    from .proportion import clopper_pearson, wilson_interval

    conf = check_confidence(confidence)
    ids = [k for k in human if k in judge]
    pairs = [(str(k), as_verdict(judge[k], k), as_verdict(human[k], k)) for k in ids]
    both = [(k, j, h) for k, j, h in pairs if j is not None and h is not None]
    omitted = len(set(map(str, judge)) | set(map(str, human))) - len(both)
    if len(both) < 2:
        raise ReliabilityError(f"{len(both)} item(s) have both a judge and a human verdict; agreement needs 2 or more")
    tp = sum(j and h for _, j, h in both)
    fp = sum(j and not h for _, j, h in both)
    fn = sum(h and not j for _, j, h in both)
    tn = len(both) - tp - fp - fn
    table = np.array([[tp, fp], [fn, tn]], dtype=float)  # rows: judge pass/fail; columns: human pass/fail
    try:
        kappa, error = cohens_kappa(table, conf), ""
    except ReliabilityError as exc:
        kappa, error = None, str(exc)
    n = len(both)
    return VerdictAgreement(
        kappa, gwet_ac1(table, conf), clopper_pearson(tp, tp + fn, conf) if tp + fn else None,
        clopper_pearson(tn, tn + fp, conf) if tn + fp else None, wilson_interval(tp + fn, n, conf),
        (tp + fp) / n, (tp + tn) / n, {"tp": tp, "fp": fp, "fn": fn, "tn": tn},
        tuple(k for k, j, h in both if j and not h), tuple(k for k, j, h in both if h and not j), omitted, error,
        tuple(k for k, _, _ in both))
