"""Numbers as the reports print them (terminal, HTML, CLI, baseline reasons): one home."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["fmt_number"]


def fmt_number(v: Any, digits: int = 4, missing: str = "-") -> str:
    """``v`` with ``digits`` decimals; ``missing`` for None or a non-finite float; other values as text."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return missing
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)
