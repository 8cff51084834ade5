"""Repeats planning: how many judge samples per item the mean needs to reach a reliability target.

The Spearman-Brown prophecy formula (Spearman 1910; Brown 1910) gives the reliability of the
mean of m exchangeable samples whose single-sample reliability is rho:
``rho_m = m rho / (1 + (m - 1) rho)`` (:func:`~pytest_judgerel.stats.agreement.spearman_brown`;
McGraw & Wong 1996 step ICC(A,1) up to ICC(A,k) the same way).  Solving ``rho_m >= target``
for m gives ``m >= target (1 - rho) / (rho (1 - target))``, rounded up.  Because rho_m rises
with rho, the CI of rho maps to a CI of m with the bounds swapped: the upper rho limit needs
the fewest samples, the lower limit the most.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..errors import ReliabilityError
from .agreement import spearman_brown

__all__ = ["RepeatsNeeded", "repeats_needed"]

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
