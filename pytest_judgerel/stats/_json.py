"""JSON forms of the numbers a result's ``to_dict`` holds: JSON has no infinity."""

from __future__ import annotations

import math


def json_float(v: float | None) -> float | str | None:
    """inf as the strings "inf"/"-inf"; NaN never reaches here."""
    if v is None or math.isfinite(v):
        return v
    return "inf" if v > 0 else "-inf"
