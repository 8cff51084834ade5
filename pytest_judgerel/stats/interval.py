"""One interval convention for every result and message.

Every statistic with a confidence interval holds ``ci_low``, ``ci_high`` and ``confidence``;
:class:`HasInterval` gives it the shared ``ci`` pair and the :class:`Interval` value, and
:func:`format_estimate` is the one way a number and its interval are written
(``0.612 [95% CI 0.512, 0.733]``) in results, gate messages and reports.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Iterator

from pytest_judgerel.errors import ReliabilityError

__all__ = ["Interval", "HasInterval", "format_estimate", "format_interval", "check_confidence", "check_use"]


def check_use(use: Any, allowed: tuple[str, ...]) -> str:
    """``use`` (what a rule tests: the estimate or a bound of its interval) when it is one of ``allowed``."""
    if use not in allowed:
        raise ReliabilityError(f"use must be one of {allowed}, got {use!r}")
    return str(use)


def check_confidence(confidence: Any) -> float:
    """``confidence`` as a float strictly between 0 and 1, else a :class:`ReliabilityError`."""
    value = float(confidence) if isinstance(confidence, numbers.Real) else math.nan
    if isinstance(confidence, bool) or not 0.0 < value < 1.0:
        raise ReliabilityError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    return value


def _number(x: float | None, digits: int, signed: bool, fmt: str = "f") -> str:
    """``x`` with ``digits`` decimals (``fmt="f"``) or significant digits (``"g"``); never "-0.000"."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if float(f"{x:.{digits}{fmt}}") == 0.0:
        x = 0.0  # a sign the digits do not show
    return f"{x:+.{digits}{fmt}}" if signed else f"{x:.{digits}{fmt}}"


def _percent(confidence: float) -> str:
    """``95%``; one decimal when a whole percent would round the level (``97.5%``)."""
    whole = round(confidence * 100, 6).is_integer()
    return f"{confidence:.0%}" if whole else f"{confidence:.1%}"


def format_interval(low: float | None, high: float | None, confidence: float | None = None, *,
                    digits: int = 4, signed: bool = False, method: str = "", fmt: str = "f") -> str:
    """``[95% CI 0.512, 0.733]``; ``method`` names it (``Wilson``, ``percentile bootstrap``)."""
    head = " ".join(p for p in (_percent(confidence) if confidence is not None else "", method, "CI") if p)
    return f"[{head} {_number(low, digits, signed, fmt)}, {_number(high, digits, signed, fmt)}]"


def format_estimate(value: float | None, low: float | None, high: float | None, confidence: float | None = None,
                    *, digits: int = 4, signed: bool = False, method: str = "", fmt: str = "f") -> str:
    """``0.612 [95% CI 0.512, 0.733]``: a value and its interval, written the one way."""
    text = _number(value, digits, signed, fmt)
    if low is None or high is None:
        return text
    return f"{text} {format_interval(low, high, confidence, digits=digits, signed=signed, method=method, fmt=fmt)}"


@dataclass(frozen=True)
class Interval:
    """A confidence interval: ``low``, ``high`` at level ``confidence``; unpacks as ``(low, high)``."""

    low: float
    high: float
    confidence: float = 0.95
    method: str = ""

    def __iter__(self) -> Iterator[float]:
        return iter((self.low, self.high))

    @property
    def width(self) -> float:
        return self.high - self.low

    def contains(self, x: float) -> bool:
        return self.low <= x <= self.high

    def format(self, digits: int = 4, signed: bool = False) -> str:
        return format_interval(self.low, self.high, self.confidence, digits=digits, signed=signed,
                               method=self.method)

    def __str__(self) -> str:
        return self.format()


class HasInterval:
    """Mixin of a result with ``ci_low``, ``ci_high`` and ``confidence`` fields: the ``ci`` pair,
    the :class:`Interval` and the formatted estimate, written once for every result type.
    The estimate is the attribute named by ``_estimate_name`` (``value`` unless a class says
    otherwise: ``estimate``, ``mean``)."""

    _estimate_name = "value"
    _interval_method = ""

    ci_low: Any
    ci_high: Any
    confidence: Any

    @property
    def ci(self) -> tuple[float, float]:
        return (self.ci_low, self.ci_high)

    @property
    def interval(self) -> Interval:
        return Interval(self.ci_low, self.ci_high, self.confidence, self._interval_method)

    def formatted(self, digits: int = 4, signed: bool = False, fmt: str = "f") -> str:
        """The estimate and its interval: ``0.612 [95% CI 0.512, 0.733]``."""
        return format_estimate(getattr(self, self._estimate_name), self.ci_low, self.ci_high, self.confidence,
                               digits=digits, signed=signed, method=self._interval_method, fmt=fmt)
