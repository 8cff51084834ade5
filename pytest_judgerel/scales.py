"""Grading scales: bounds, step, linear normalisation to [0, 1].

A scale is what a judge is told to grade on ("0-5", "0-10", "0-100", "1-6" or a
custom range).  Seed 001 (Li et al. 2026, section 4.3) compares judges across
such scales after mapping each linearly to [0, 1].
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Union

from .errors import ScaleError

_NAME = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(?:-|to|–)\s*(-?\d+(?:\.\d+)?)\s*$")


@dataclass(frozen=True)
class Scale:
    """A closed grading range ``[low, high]``.

    ``step`` is the grid of allowed values (1 for integer scales); ``fractional``
    allows any real value inside the range (MindEval's few-shot targets use
    3.75 on a 1-6 scale).
    """

    low: float
    high: float
    step: float = 1.0
    fractional: bool = False
    name: str = ""

    def __post_init__(self) -> None:
        for attr in ("low", "high", "step"):
            v = getattr(self, attr)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ScaleError(f"scale {attr} must be a finite number, got {v!r}")
        if not self.high > self.low:
            raise ScaleError(f"scale high ({self.high}) must be greater than low ({self.low})")
        if self.step <= 0:
            raise ScaleError(f"scale step must be positive, got {self.step}")
        if not self.fractional:
            n = (self.high - self.low) / self.step
            if abs(n - round(n)) > 1e-9:
                raise ScaleError(
                    f"scale step {self.step} does not divide the range {self.low}-{self.high}"
                )
        if not self.name:
            object.__setattr__(self, "name", f"{number_text(self.low)}-{number_text(self.high)}")

    # -- construction -------------------------------------------------
    @classmethod
    def parse(cls, spec: "ScaleLike") -> "Scale":
        """Build a scale from ``"0-10"``, ``(0, 10)``, ``{"low":0,"high":10}`` or a Scale."""
        if isinstance(spec, Scale):
            return spec
        if isinstance(spec, str):
            if spec in NAMED_SCALES:
                return NAMED_SCALES[spec]
            m = _NAME.match(spec)
            if not m:
                raise ScaleError(
                    f"cannot read scale {spec!r}: use 'LOW-HIGH' such as '0-10', "
                    f"or one of {sorted(NAMED_SCALES)}"
                )
            return cls(_num(m.group(1)), _num(m.group(2)))
        if isinstance(spec, (tuple, list)) and len(spec) in (2, 3):
            return cls(*spec)
        if isinstance(spec, dict):
            return cls(**spec)
        raise ScaleError(f"cannot read scale {spec!r}: expected a name, (low, high) or Scale")

    # -- use ----------------------------------------------------------
    @property
    def range(self) -> float:
        return self.high - self.low

    @property
    def points(self) -> list[float] | None:
        """Allowed values of a discrete scale, or None when fractional."""
        if self.fractional:
            return None
        n = int(round((self.high - self.low) / self.step))
        return [_num(self.low + i * self.step) for i in range(n + 1)]

    def contains(self, value: float) -> bool:
        if not math.isfinite(value) or value < self.low - 1e-9 or value > self.high + 1e-9:
            return False
        if self.fractional:
            return True
        q = (value - self.low) / self.step
        return abs(q - round(q)) < 1e-9

    def validate(self, value: float) -> float:
        """Return ``value`` if it lies on the scale, else raise :class:`ScaleError`."""
        if not self.contains(value):
            grid = "" if self.fractional else f" in steps of {number_text(self.step)}"
            raise ScaleError(f"{value!r} is not on scale {self.name} ({number_text(self.low)}..{number_text(self.high)}{grid})")
        return value

    def normalize(self, value):
        """Map linearly to [0, 1]: ``(x - low) / (high - low)`` (seed 001, section 4.3)."""
        if isinstance(value, (int, float)):
            return (value - self.low) / self.range
        import numpy as np

        return (np.asarray(value, dtype=float) - self.low) / self.range

    def denormalize(self, unit):
        """Inverse of :meth:`normalize`."""
        if isinstance(unit, (int, float)):
            return self.low + unit * self.range
        import numpy as np

        return self.low + np.asarray(unit, dtype=float) * self.range

    def __str__(self) -> str:
        return self.name


def _num(text) -> float | int:
    f = float(text)
    return int(f) if f.is_integer() else f


def number_text(v: float) -> str:
    """A scale number as prompts, grammars and names write it: ``5``, ``2.5`` (never ``5.0``)."""
    return str(int(v)) if float(v).is_integer() else repr(float(v))


ScaleLike = Union[Scale, str, tuple, list, dict]

NAMED_SCALES: dict[str, Scale] = {
    s.name: s
    for s in (
        Scale(0, 5),
        Scale(0, 10),
        Scale(0, 100),
        Scale(1, 5),
        Scale(1, 6),
        Scale(1, 10),
    )
}
