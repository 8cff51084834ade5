"""Repeats planning: how many judge samples per item the mean needs to reach a reliability target.

The Spearman-Brown prophecy formula (Spearman 1910; Brown 1910) gives the reliability of the
mean of m exchangeable samples whose single-sample reliability is rho:
``rho_m = m rho / (1 + (m - 1) rho)`` (:func:`~pytest_judgerel.stats.agreement.spearman_brown`;
McGraw & Wong 1996 step ICC(A,1) up to ICC(A,k) the same way).  Solving ``rho_m >= target``
for m gives ``m >= target (1 - rho) / (rho (1 - target))``, rounded up.  Because rho_m rises
with rho, the CI of rho maps to a CI of m with the bounds swapped: the upper rho limit needs
the fewest samples, the lower limit the most.

Items for a "no effect" claim: the power of the two one-sided t tests (TOST, Schuirmann 1987;
:func:`~pytest_judgerel.stats.bias.equivalence_test`) on n paired differences with standard
deviation sd, true mean mu and margin delta, from the noncentral t distribution
(Chow & Liu 2008, section 5.3; Julious 2004):

    power = F_t(-t_c; n-1, (mu - delta) sqrt(n) / sd) - F_t(t_c; n-1, (mu + delta) sqrt(n) / sd)

with ``t_c`` the 1 - alpha quantile of t on n - 1 df (one-sided: the first term alone), and the
smallest n whose power reaches the target.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..errors import ReliabilityError
from .agreement import spearman_brown

__all__ = ["RepeatsNeeded", "repeats_needed", "EquivalencePlan", "equivalence_power", "equivalence_sample_size"]

# Relative slack below which the continuous m is taken as an integer (0.4 / 0.1 = 4.000000000000001).
_CEIL_TOLERANCE = 1e-9


@dataclass(frozen=True, eq=False)
class RepeatsNeeded:
    """Samples per item whose mean reaches ``target`` reliability, with the CI of that number.

    ``repeats`` is None when no number of samples reaches the target (rho <= 0: averaging
    noise with no item signal never becomes reliable); ``reason`` then says why.  With a CI of
    rho (``rho_ci``), ``ci_low`` is the number needed at the upper rho limit and ``ci_high``
    at the lower one; ``ci_high`` is None when the lower limit cannot reach the target.
    ``reliability`` is the Spearman-Brown reliability of the mean of ``repeats`` samples.

    The object compares equal to its integer (``repeats_needed(0.5, 0.8) == 4``) and converts
    with ``int()`` (which raises when the target is not reachable).
    """

    target: float
    rho: float
    repeats: int | None
    reliability: float | None
    rho_ci: tuple[float, float] | None = None
    ci_low: int | None = None
    ci_high: int | None = None
    reason: str = ""

    @property
    def reachable(self) -> bool:
        return self.repeats is not None

    @property
    def ci(self) -> tuple[int | None, int | None] | None:
        return None if self.rho_ci is None else (self.ci_low, self.ci_high)

    def __int__(self) -> int:
        if self.repeats is None:
            raise ReliabilityError(f"no number of repeats reaches {self.target}: {self.reason}")
        return self.repeats

    __index__ = __int__

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RepeatsNeeded):
            return self._key() == other._key()
        if isinstance(other, int) and not isinstance(other, bool):
            return self.repeats == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.repeats)  # objects equal to the same int hash alike

    def _key(self) -> tuple:
        return (self.target, self.rho, self.repeats, self.rho_ci, self.ci_low, self.ci_high)

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target, "rho": self.rho, "repeats": self.repeats, "reachable": self.reachable,
            "reliability": self.reliability, "rho_ci": None if self.rho_ci is None else list(self.rho_ci),
            "ci": None if self.rho_ci is None else [self.ci_low, self.ci_high], "reason": self.reason,
        }

    def __str__(self) -> str:
        def show(m: int | None) -> str:
            return "not reachable" if m is None else str(m)

        if self.repeats is None:
            head = f"no number of samples per item reaches {self.target:g} ({self.reason})"
        else:
            head = (f"averaging {self.repeats} sample{'s' if self.repeats != 1 else ''} per item reaches "
                    f"{self.target:g} (reliability of the mean {self.reliability:.3f})")
        if self.rho_ci is not None:
            head += f" [CI {show(self.ci_low)}, {show(self.ci_high)}]"
        return head


def repeats_needed(rho: Any, target: float, *, ci: tuple[float, float] | None = None) -> RepeatsNeeded:
    """Samples per item whose mean reaches reliability ``target`` (inverse Spearman-Brown).

    ``rho`` is the single-sample reliability (e.g. ICC(A,1) across repeats): a number, or an
    ICC result of a single-rater form, whose CI is then used.  ``ci`` is the CI of rho when
    ``rho`` is a number.  ``target`` must lie strictly between 0 and 1.  ``rho >= target``
    needs 1 sample; ``rho <= 0`` reaches no target (``repeats`` None, never inf or NaN).
    """
    value, rho_ci = _rho_and_ci(rho, ci)
    _check_target(target)
    repeats, reason = _solve(value, target)
    ci_low = ci_high = None
    if rho_ci is not None:
        ci_low, _ = _solve(rho_ci[1], target)  # the most reliable bound needs the fewest samples
        ci_high, _ = _solve(rho_ci[0], target)
    reliability = None if repeats is None else spearman_brown(value, repeats)
    return RepeatsNeeded(float(target), value, repeats, reliability, rho_ci, ci_low, ci_high, reason)


def _solve(rho: float, target: float) -> tuple[int | None, str]:
    if rho >= target:
        return 1, ""
    if rho <= 0:
        return None, f"single-sample reliability {rho:.4g} <= 0: the mean of any number of samples stays at or below 0"
    exact = target * (1 - rho) / (rho * (1 - target))
    m = max(1, math.ceil(exact - _CEIL_TOLERANCE * exact))
    # the closed form and the forward formula agree up to rounding; step to the smallest m that reaches it
    while spearman_brown(rho, m) < target - 1e-12:
        m += 1
    while m > 1 and spearman_brown(rho, m - 1) >= target - 1e-12:
        m -= 1
    return m, ""


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        raise ReliabilityError(f"repeats_needed: {name} must be a number, got {value!r}")
    out = float(value)
    if math.isnan(out):
        raise ReliabilityError(f"repeats_needed: {name} is NaN")
    return out


def _rho_and_ci(rho: Any, ci: tuple[float, float] | None) -> tuple[float, tuple[float, float] | None]:
    if hasattr(rho, "value") and hasattr(rho, "ci_low"):
        form = str(getattr(rho, "form", ""))
        if form.endswith(",k"):
            raise ReliabilityError(
                f"repeats_needed needs a single-sample reliability, got ICC({form}) (the reliability of a mean "
                "already); pass the matching single form, e.g. ICC(A,1)")
        if ci is not None:
            raise ReliabilityError("repeats_needed: pass ci= only with a plain number; an ICC result carries its CI")
        ci = (rho.ci_low, rho.ci_high)
        rho = rho.value
    value = _number(rho, "rho")
    if not math.isfinite(value) or value > 1:
        raise ReliabilityError(f"repeats_needed: rho must be a reliability <= 1, got {value!r}")
    if ci is None:
        return value, None
    try:
        lo, hi = ci
    except (TypeError, ValueError):
        raise ReliabilityError(f"repeats_needed: ci must be a (low, high) pair, got {ci!r}") from None
    lo, hi = _number(lo, "ci low"), _number(hi, "ci high")
    if hi > 1 or lo > hi or not (lo <= value <= hi or math.isclose(lo, value) or math.isclose(hi, value)):
        raise ReliabilityError(f"repeats_needed: ci ({lo:g}, {hi:g}) must satisfy low <= rho = {value:g} <= high <= 1")
    return value, (lo, hi)


def _check_target(target: Any) -> None:
    t = _number(target, "target")
    if not 0 < t < 1:
        raise ReliabilityError(
            f"repeats_needed: target must lie strictly between 0 and 1, got {target!r} "
            "(a reliability of 1 needs infinitely many samples)")


@dataclass(frozen=True)
class EquivalencePlan:
    """Items a TOST "no effect" claim needs: the smallest ``n`` with ``power`` >= ``target_power``
    (``power`` is the power at that n), for ``margin``, the differences' ``sd``, a true shift
    ``true_shift``, level ``alpha``, two-sided or one-sided (``two_sided``).  ``n`` is None when
    ``|true_shift| >= margin``: no sample size shows equivalence that does not hold."""

    n: int | None
    power: float | None
    target_power: float
    margin: float
    sd: float
    true_shift: float
    alpha: float
    two_sided: bool

    def __int__(self) -> int:
        if self.n is None:
            raise ReliabilityError(f"no number of items shows |shift| < {self.margin:g} when the true shift is "
                               f"{self.true_shift:g}")
        return self.n

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "power": self.power, "target_power": self.target_power, "margin": self.margin,
                "sd": self.sd, "true_shift": self.true_shift, "alpha": self.alpha, "two_sided": self.two_sided}

    def __str__(self) -> str:
        if self.n is None:
            return (f"no number of items shows a shift within {self.margin:g} when the true shift is "
                    f"{self.true_shift:g}")
        return (f"{self.n} items give power {self.power:.2f} (target {self.target_power:g}) to show "
                f"{'|shift|' if self.two_sided else 'shift'} < {self.margin:g} at alpha {self.alpha:g} "
                f"(sd {self.sd:.3g}, true shift {self.true_shift:g})")


def _check_plan_args(margin: Any, sd: Any, true_shift: Any, alpha: Any) -> None:
    if _number(margin, "margin") <= 0 or math.isinf(margin):
        raise ReliabilityError(f"margin must be a finite number > 0, got {margin!r}")
    if not math.isfinite(_number(sd, "sd")) or sd <= 0:
        raise ReliabilityError(f"sd must be a finite number > 0, got {sd!r}")
    if not math.isfinite(_number(true_shift, "true_shift")):
        raise ReliabilityError(f"true_shift must be finite, got {true_shift!r}")
    if not 0 < _number(alpha, "alpha") < 0.5:
        raise ReliabilityError(f"alpha must lie strictly between 0 and 0.5, got {alpha!r}")


def equivalence_power(n: int, margin: float, sd: float, *, true_shift: float = 0.0, alpha: float = 0.05,
                      two_sided: bool = True) -> float:
    """Power of TOST with ``n`` paired differences (module docstring)."""
    from scipy import stats

    _check_plan_args(margin, sd, true_shift, alpha)
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise ReliabilityError(f"n must be an integer >= 2, got {n!r}")
    df = n - 1
    tc = float(stats.t.ppf(1 - alpha, df))
    root = math.sqrt(n) / sd
    upper = float(stats.nct.cdf(-tc, df, (true_shift - margin) * root))
    if not two_sided:
        return upper
    return max(0.0, upper - float(stats.nct.cdf(tc, df, (true_shift + margin) * root)))


def equivalence_sample_size(margin: float, sd: float, *, true_shift: float = 0.0, alpha: float = 0.05,
                            power: float = 0.8, two_sided: bool = True, max_n: int = 10_000_000) -> EquivalencePlan:
    """Smallest number of items whose TOST reaches ``power`` (module docstring).

    ``sd``: the standard deviation of the per-item differences (e.g. ``PairedShift.sd`` of a
    pilot run); ``true_shift``: the shift you expect (0 = no bias at all).
    """
    _check_plan_args(margin, sd, true_shift, alpha)
    if not 0 < _number(power, "power") < 1:
        raise ReliabilityError(f"power must lie strictly between 0 and 1, got {power!r}")
    reachable = abs(true_shift) < margin if two_sided else true_shift < margin
    args = (float(power), float(margin), float(sd), float(true_shift), float(alpha), bool(two_sided))
    if not reachable:
        return EquivalencePlan(None, None, *args)

    def pw(m: int) -> float:
        return equivalence_power(m, margin, sd, true_shift=true_shift, alpha=alpha, two_sided=two_sided)

    hi = 2
    while pw(hi) < power:
        if hi >= max_n:
            raise ReliabilityError(f"more than max_n={max_n} items would be needed")
        hi = min(max_n, hi * 2)
    lo = max(2, hi // 2)
    if pw(lo) >= power:
        return EquivalencePlan(lo, pw(lo), *args)
    while hi - lo > 1:  # pw(lo) < power <= pw(hi)
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if pw(mid) >= power else (mid, hi)
    return EquivalencePlan(hi, pw(hi), *args)
