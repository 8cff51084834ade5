"""Intraclass correlation: the six Shrout & Fleiss / McGraw & Wong forms with F test and CI.

Formulas: Shrout & Fleiss (1979); McGraw & Wong (1996); seed 001 (Li et al. 2026)
eqs. (2)-(3) for ICC(A,1) and ICC(A,k).  Conventions follow pingouin 0.7 and
psych >= 2.2.3: df2 = (n-1)(k-1) for the A and C rows, the Satterthwaite df is used
only inside the ICC(A,1) interval, and the ICC(A,k) interval is the Spearman-Brown
step-up of the ICC(A,1) limits.  The F test reported with each form tests
"items differ" (H0: ICC = 0); the rater-bias test MS_raters / MS_error is reported
separately as ``f_raters``/``p_raters``.

Sums of squares come from the residuals ``x - row - col + grand`` of centred data,
not by subtraction, so a constant offset (e.g. 1e9) does not cost digits.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from types import MappingProxyType
from typing import Any, Iterator, Mapping

import numpy as np

from ..errors import ReliabilityError
from .interval import HasInterval, check_confidence
from ._input import as_matrix, check_min_shape, drop_missing, ids_of

FORMS = ("1,1", "A,1", "C,1", "1,k", "A,k", "C,k")

_FORM_RE = re.compile(r"^(?:ICC)?\(?([123AC]),?(1|[A-Z])?\)?$")
_MODEL = {"1": "1", "2": "A", "A": "A", "3": "C", "C": "C"}
# Relative size below which a sum of squares is rounding noise (residual ~1e-12 of the spread).
_SS_NOISE = 1e-24


def canonical_form(form: str) -> str:
    """Map ``"A,1"``, ``"ICC(A,1)"``, ``"ICC(2,1)"``, ``"ICC2"``, ``"ICC2k"``, ``"A,L"`` ... to a name in FORMS."""
    if isinstance(form, str):
        m = _FORM_RE.match(form.strip().upper().replace(" ", ""))
        if m:
            unit = m.group(2) or "1"
            return f"{_MODEL[m.group(1)]},{'1' if unit == '1' else 'k'}"
    raise ReliabilityError(
        f"unknown ICC form {form!r}; use one of {', '.join(FORMS)} "
        "(also accepted: 'ICC(A,1)', 'ICC(2,1)', pingouin-style 'ICC1'..'ICC3k')"
    )


def koo_li_band(value: float) -> str:
    """Koo & Li (2016) reading of an ICC: <0.5 poor, 0.5-0.75 moderate, 0.75-0.9 good, >0.9 excellent."""
    if not isinstance(value, (int, float, np.floating)) or isinstance(value, bool) or math.isnan(value):
        raise ReliabilityError(f"koo_li_band needs a number, got {value!r}")
    if value < 0.5:
        return "poor"
    if value < 0.75:
        return "moderate"
    if value <= 0.9:
        return "good"
    return "excellent"


@dataclass(frozen=True)
class _ICCEstimate(HasInterval):
    """What every ICC result holds and shows alike: the estimate with its interval and F test
    (H0: ICC = 0), its label and Koo & Li band."""

    form: str
    value: float
    ci_low: float
    ci_high: float
    confidence: float
    f: float
    df1: int
    df2: int
    p: float
    n: int

    @property
    def label(self) -> str:
        return f"ICC({self.form})"

    @property
    def band(self) -> str:
        """Koo & Li (2016) band of the point estimate."""
        return koo_li_band(self.value)


@dataclass(frozen=True)
class ICCResult(_ICCEstimate):
    """One ICC form with its F test, confidence interval and ANOVA mean squares.

    ``f``/``df1``/``df2``/``p`` test H0: ICC = 0 (items differ).  ``f_raters`` =
    MS_raters / MS_error on (``df1_raters``, ``df2_raters``) df is the test of
    systematic rater bias (H0: all raters have the same mean).  Mean squares:
    ``ms_items`` (MSR, "MS_I" in seed 001), ``ms_raters`` (MSC, "MS_R"),
    ``ms_error`` (MSE), ``ms_within`` (MSW, one-way).  ``satterthwaite_df`` is the
    df used for the ICC(A,1)/ICC(A,k) interval (None for other forms).
    """

    k: int
    f_raters: float
    df1_raters: int
    df2_raters: int
    p_raters: float
    ms_items: float
    ms_raters: float
    ms_error: float
    ms_within: float
    n_omitted: int = 0
    satterthwaite_df: float | None = None

    @property
    def ci_bands(self) -> tuple[str, str]:
        """Koo & Li bands of the CI limits (Koo & Li recommend reading the interval)."""
        return (koo_li_band(self.ci_low), koo_li_band(self.ci_high))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(label=self.label, band=self.band)
        return d

    def __str__(self) -> str:
        lo_band, hi_band = self.ci_bands
        spans = lo_band if lo_band == hi_band else f"{lo_band} to {hi_band}"
        omitted = f", {self.n_omitted} omitted" if self.n_omitted else ""
        return (
            f"{self.label} = {self.formatted(3)} {self.band} (Koo & Li; CI: {spans}); F({self.df1}, {self.df2}) = {self.f:.4g}, p = {self.p:.3g}; "
            f"n = {self.n} items{omitted}, k = {self.k} raters; rater bias F({self.df1_raters}, "
            f"{self.df2_raters}) = {self.f_raters:.4g}, p = {self.p_raters:.3g}"
        )


@dataclass(frozen=True)
class ICCTable:
    """All six ICC forms of one matrix; index by form name or alias (``table["ICC2k"]``)."""

    results: Mapping[str, ICCResult] = field(repr=False)
    n: int
    k: int
    n_omitted: int
    confidence: float

    def __getitem__(self, form: str) -> ICCResult:
        return self.results[canonical_form(form)]

    def __iter__(self) -> Iterator[str]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n, "k": self.k, "n_omitted": self.n_omitted, "confidence": self.confidence,
            "forms": {f: r.to_dict() for f, r in self.results.items()},
        }

    def __str__(self) -> str:
        lines = [f"ICC table: n = {self.n} items, k = {self.k} raters"
                 + (f", {self.n_omitted} items omitted" if self.n_omitted else "")]
        lines.append(f"{'form':<9} {'ICC':>7}  {f'{self.confidence:.0%} CI':<18} {'F':>9} {'df1':>5} {'df2':>6} "
                     f"{'p':>9}  band")
        for r in self.results.values():
            lines.append(f"{r.label:<9} {r.value:7.3f}  [{r.ci_low:6.3f}, {r.ci_high:6.3f}]  {r.f:9.4g} {r.df1:5d} "
                         f"{r.df2:6d} {r.p:9.3g}  {r.band}")
        any_r = next(iter(self.results.values()))
        lines.append(f"rater bias (MS_raters/MS_error): F({any_r.df1_raters}, {any_r.df2_raters}) = "
                     f"{any_r.f_raters:.4g}, p = {any_r.p_raters:.3g}")
        return "\n".join(lines)


def icc(
    data: Any,
    form: str = "A,1",
    *,
    confidence: float = 0.95,
    nan_policy: str = "raise",
    duplicates: str = "raise",
) -> ICCResult:
    """ICC of ``data`` (items x raters, or an object with ``to_matrix()``) in one form.

    ``form``: one of FORMS or an alias.  ``nan_policy``: ``"raise"`` or ``"omit"``
    (listwise deletion of items).  ``duplicates`` collapses 3-D items x raters x
    repeats input (see :func:`pytest_judgerel.stats._input.as_matrix`).
    Raises :class:`~pytest_judgerel.errors.ReliabilityError` naming the cause
    when the ICC is undefined; never returns NaN.
    """
    canon = canonical_form(form)
    x, n_omitted = _prepare(data, nan_policy, duplicates)
    return _compute(_anova(x), (canon,), check_confidence(confidence), n_omitted)[canon]


def icc_table(
    data: Any, *, confidence: float = 0.95, nan_policy: str = "raise", duplicates: str = "raise"
) -> ICCTable:
    """All six forms of :func:`icc` from one ANOVA (raises if any form is undefined)."""
    x, n_omitted = _prepare(data, nan_policy, duplicates)
    conf = check_confidence(confidence)
    results = _compute(_anova(x), FORMS, conf, n_omitted)
    n, k = x.shape
    return ICCTable(results=MappingProxyType(results), n=n, k=k, n_omitted=n_omitted, confidence=conf)


# ---------------------------------------------------------------------------- internals
def _prepare(data: Any, nan_policy: str, duplicates: str) -> tuple[np.ndarray, int]:
    item_ids, rater_ids = ids_of(data, "item_ids"), ids_of(data, "rater_ids")
    x = as_matrix(data, duplicates=duplicates)
    check_min_shape(x)
    x, n_omitted = drop_missing(x, nan_policy, item_ids=item_ids, rater_ids=rater_ids)
    return x, n_omitted


@dataclass(frozen=True)
class _Anova:
    n: int
    k: int
    ss_items: float
    ss_raters: float
    ss_error: float

    @property
    def msr(self) -> float:
        return self.ss_items / (self.n - 1)

    @property
    def msc(self) -> float:
        return self.ss_raters / (self.k - 1)

    @property
    def mse(self) -> float:
        return self.ss_error / ((self.n - 1) * (self.k - 1))

    @property
    def msw(self) -> float:
        return (self.ss_raters + self.ss_error) / (self.n * (self.k - 1))


def _anova(x: np.ndarray) -> _Anova:
    """Two-way ANOVA sums of squares from centred data and directly computed residuals."""
    n, k = x.shape
    c = x - x.mean()
    # Reductions by einsum, not BLAS (dot/matmul): these are small, and a multithreaded BLAS beside
    # other BLAS users on few cores makes its threads wait for each other (14-19 ms instead of 0.3).
    row = np.einsum("ij->i", c) / k
    col = np.einsum("ij->j", c) / n
    g = float(row.mean())
    dr, dc = row - g, col - g
    ssr = k * float(np.einsum("i,i->", dr, dr))
    ssc = n * float(np.einsum("j,j->", dc, dc))
    c -= row[:, None]  # residuals x - row - col + grand, in place
    c -= dc
    resid = c.ravel()
    sse = float(np.einsum("i,i->", resid, resid))
    total = ssr + ssc + sse
    if not math.isfinite(total):
        raise ReliabilityError(
            "ratings are too large: the sums of squares overflow float64 (|x| around 1e150 or more); "
            "rescale the ratings"
        )
    if total == 0.0:
        raise ReliabilityError(
            "all ratings are identical (zero variance): every ICC form is 0/0 and undefined"
        )
    ssr, ssc, sse = (0.0 if s <= _SS_NOISE * total else s for s in (ssr, ssc, sse))
    return _Anova(n, k, ssr, ssc, sse)


def _ratio(num: float, den: float) -> float:
    """F ratio with x/0 = inf for x > 0 and 0/0 = NaN (flagged by _check_defined)."""
    if den == 0.0:
        return math.inf if num > 0 else math.nan
    return num / den


def _div(num: float, den: float) -> float:
    """An ICC quotient; a zero denominator makes the form undefined (NaN, flagged later)."""
    return num / den if den != 0.0 else math.nan


def _compute(a: _Anova, forms: tuple[str, ...], conf: float, n_omitted: int) -> dict[str, ICCResult]:
    from scipy import special

    n, k = a.n, a.k
    msr, msc, mse, msw = a.msr, a.msc, a.mse, a.msw
    q = 1 - (1 - conf) / 2
    df_n, df_w, df_e, df_c = n - 1, n * (k - 1), (n - 1) * (k - 1), k - 1
    f1, f2 = _ratio(msr, msw), _ratio(msr, mse)
    f_raters = 0.0 if msc == 0 else _ratio(msc, mse)

    need_a = any(f[0] == "A" for f in forms)
    rho_a = _div(msr - mse, msr + (k - 1) * mse + k * (msc - mse) / n)  # seed 001 eq. (2)
    v = _satterthwaite(rho_a, a) if need_a else math.nan

    # One call each for all quantiles and all tail probabilities.
    quant = [float(x) for x in special.fdtri([df_n, df_w, df_n, df_e, df_n, v], [df_w, df_n, df_e, df_n, v, df_n], q)]
    p1, p2, p_raters = special.fdtrc([df_n, df_n, df_c], [df_w, df_e, df_e], [f1, f2, f_raters])
    ci_1 = _f_ci(f1, quant[0], quant[1])
    ci_2 = _f_ci(f2, quant[2], quant[3])
    ci_a1 = _agreement_ci(a, quant[4], quant[5]) if need_a else (math.nan, math.nan)

    values = {
        "1,1": _div(msr - msw, msr + (k - 1) * msw),
        "A,1": rho_a,
        "C,1": _div(msr - mse, msr + (k - 1) * mse),
        "1,k": _div(msr - msw, msr),
        "A,k": _div(msr - mse, msr + (msc - mse) / n) if rho_a > _pole(k) else math.nan,  # seed 001 eq. (3)
        "C,k": _div(msr - mse, msr),
    }
    common: dict[str, Any] = dict(
        confidence=conf, n=n, k=k, f_raters=float(f_raters), df1_raters=df_c, df2_raters=df_e,
        p_raters=float(p_raters), ms_items=msr, ms_raters=msc, ms_error=mse, ms_within=msw, n_omitted=n_omitted,
    )
    out: dict[str, ICCResult] = {}
    for form in forms:
        model, unit = form.split(",")
        if model == "1":
            f, df2, p, (fl, fu) = f1, df_w, p1, ci_1
        else:
            f, df2, p, (fl, fu) = f2, df_e, p2, ci_2
        if model == "A":
            lo, hi = ci_a1 if unit == "1" else _agreement_average_ci(rho_a, ci_a1, k)
        elif unit == "1":
            lo, hi = _single_from_f(fl, k), _single_from_f(fu, k)
        else:
            lo, hi = _average_from_f(fl), _average_from_f(fu)
        lo, hi = _bracket(values[form], lo, hi)
        res = ICCResult(
            form=form, value=float(values[form]), ci_low=float(lo), ci_high=float(hi), f=float(f),
            df1=df_n, df2=df2, p=float(p), satterthwaite_df=float(v) if model == "A" else None, **common,
        )
        out[form] = res
    _check_defined(list(out.values()), a, rho_a)
    return out


def _bracket(value: float, lo: float, hi: float) -> tuple[float, float]:
    """The limits widened to contain the estimate, so that always lo <= value <= hi.

    The McGraw & Wong (1996) ICC(A,1) limits (Satterthwaite df evaluated at the estimate) can
    exclude a strongly negative estimate (-0.90 with limits -1.00, -0.99 for [[1, 1], [9, -4]]),
    and rounding can put a limit a few ulps past it; the interval is then extended to the
    estimate, never narrowed.  A NaN limit stays NaN (``min``/``max`` keep their first
    argument when a comparison with NaN is false) for :func:`_check_defined` to report.
    """
    return min(lo, value), max(hi, value)


def _f_ci(f: float, q_lower: float, q_upper: float) -> tuple[float, float]:
    """F limits FL = F / q(df1, df2) and FU = F * q(df2, df1) (Shrout & Fleiss 1979)."""
    return f / q_lower, f * q_upper


def _single_from_f(f_limit: float, k: int) -> float:
    return 1.0 if math.isinf(f_limit) else (f_limit - 1) / (f_limit + k - 1)


def _agreement_average_ci(rho: float, ci: tuple[float, float], k: int) -> tuple[float, float]:
    """Spearman-Brown step-up of the ICC(A,1) limits (pingouin / psych).

    The step-up has a pole at -1/(k-1): a lower ICC(A,1) limit at or below it maps
    to an ICC(A,k) interval unbounded below (-inf) instead of pingouin's inverted one.
    """
    pole = _pole(k)
    if rho <= pole:
        return math.nan, math.nan
    lo = -math.inf if ci[0] <= pole else _step_up(ci[0], k)
    hi = math.nan if ci[1] <= pole else _step_up(ci[1], k)
    return lo, hi


def _pole(k: int) -> float:
    """-1/(k-1), nudged by 1e-12 (relative) so values equal to it up to rounding count as on it."""
    return -1.0 / (k - 1) * (1 - 1e-12)


def _average_from_f(f_limit: float) -> float:
    return 1 - 1 / f_limit if f_limit != 0 else -math.inf


def _step_up(rho: float, k: int) -> float:
    """Spearman-Brown: reliability of the mean of k raters from a single-rater value."""
    den = 1 + (k - 1) * rho
    return k * rho / den if den != 0 else -math.inf


def _satterthwaite(rho: float, a: _Anova) -> float:
    """McGraw & Wong (1996) df for the ICC(A,1) interval, evaluated at the estimate.

    v = (a MSC + b MSE)^2 / ((a MSC)^2 / (k-1) + (b MSE)^2 / ((n-1)(k-1))) with
    a = k rho / (n (1 - rho)) and b = 1 + k rho (n - 1) / (n (1 - rho)).  Both terms are
    multiplied by n (1 - rho), which leaves the ratio unchanged and keeps it finite when rho
    rounds to 1 (near-perfect agreement), where v tends to
    (k-1)(MSC + (n-1) MSE)^2 / (MSC^2 + (n-1) MSE^2).  A NaN rho gives a NaN df.
    """
    n, k, msc, mse = a.n, a.k, a.msc, a.mse
    if msc == 0 and mse == 0:  # perfect agreement: the interval is [1, 1] whatever the df
        return float((n - 1) * (k - 1))
    a_msc = k * rho * msc  # a MSC, times n (1 - rho)
    b_mse = (n * (1 - rho) + k * rho * (n - 1)) * mse  # b MSE, times n (1 - rho)
    den = a_msc ** 2 / (k - 1) + b_mse ** 2 / ((n - 1) * (k - 1))
    return (a_msc + b_mse) ** 2 / den if den else math.nan


def _agreement_ci(a: _Anova, f_star: float, f_star_rev: float) -> tuple[float, float]:
    """ICC(A,1) limits of McGraw & Wong (1996) / Shrout & Fleiss (1979)."""
    n, k, msr, msc, mse = a.n, a.k, a.msr, a.msc, a.mse
    if msc == 0 and mse == 0:  # perfect agreement: every limit is exactly 1
        return 1.0, 1.0
    common = k * msc + (k * n - k - n) * mse
    # L = n(MSR - F* MSE) / (F* common + n MSR), divided through by F* (and U by F_*) so that the
    # huge quantiles of a tiny Satterthwaite df (~1e305 for v ~ 0.01) do not overflow.
    if f_star <= 1:
        lo = _div(n * (msr - f_star * mse), f_star * common + n * msr)
    else:
        lo = _div(n * (msr / f_star - mse), common + n * msr / f_star)
    if f_star_rev <= 1:
        hi = _div(n * (f_star_rev * msr - mse), common + n * f_star_rev * msr)
    else:
        hi = _div(n * (msr - mse / f_star_rev), common / f_star_rev + n * msr)
    return lo, hi


def _check_defined(results: list[ICCResult], a: _Anova, rho_a: float) -> None:
    """Raise (never return NaN/inf) when a requested form is undefined, naming forms and cause."""
    bad = [r.label for r in results
           if not all(math.isfinite(x) for x in (r.value, r.ci_high, r.p)) or math.isnan(r.f) or math.isnan(r.ci_low)
           or (math.isinf(r.ci_low) and r.form != "A,k")]
    if not bad:
        return
    if a.ss_items == 0 and a.ss_error == 0:
        cause = ("items do not differ: every rater gave one constant score to all items "
                 "(zero between-item and residual variance)")
    elif a.ss_items == 0:
        cause = "all item means are equal (zero between-item variance, MS_items = 0)"
    elif "ICC(A,k)" in bad and rho_a <= _pole(a.k):
        cause = (f"ICC(A,1) = {rho_a:.4g} is at or below -1/(k-1) = {-1 / (a.k - 1):.4g}, the pole of the "
                 "Spearman-Brown step-up to ICC(A,k) (raters disagree more than chance allows)")
    else:
        cause = (f"degenerate variance structure (MS_items={a.msr:.3g}, MS_raters={a.msc:.3g}, "
                 f"MS_error={a.mse:.3g})")
    raise ReliabilityError(f"{', '.join(bad)} {'is' if len(bad) == 1 else 'are'} undefined for these ratings: {cause}")
