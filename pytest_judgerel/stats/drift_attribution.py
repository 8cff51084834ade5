"""Who moved between two runs: the judge, the system under test, both, or neither.

The anchors (:mod:`~pytest_judgerel.stats.anchor_drift`) say whether the judge moved; the
caller's paired comparison of the system's item scores between the two runs says whether the
scores moved.  A judge shift moves the system's scores too, so the system's shift is corrected
by the judge's (``system - judge``, variances added; exact for a shift common to all items).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ..errors import ReliabilityError
from ._input import check_alpha
from .anchor_drift import DEFAULT_MIN_DRIFT, STATUSES

__all__ = ["DEFAULT_SYSTEM_ALPHA", "VERDICTS", "DriftAttribution", "attribute_change"]

DEFAULT_SYSTEM_ALPHA = 0.01
"""Level of :func:`attribute_change`'s test of the system's scores.  With the judge drifted, the
corrected shift's error is mostly the anchors' (30-40 anchors against a suite of hundreds of
items), so a looser level calls judge-only changes "both" too often; a change of a tenth of the
range in a suite of a few hundred items is still found at this level (benchmarks/bench_drift.py)."""

VERDICTS = ("judge drifted", "system changed", "both", "none", "undetermined")


@dataclass(frozen=True)
class DriftAttribution:
    """Who moved between two runs: ``verdict`` ``"judge drifted"``, ``"system changed"``,
    ``"both"``, ``"none"`` or ``"undetermined"`` (the judge is neither shown steady nor drifted
    while the system's scores changed).  ``system_shift`` is the caller's shift of the system's
    scores, ``corrected_shift`` the same minus the judge's anchor shift (when the judge drifted
    and numbers were given), ``system_changed`` the decision on it."""

    verdict: str
    reason: str
    judge_status: str
    system_changed: bool
    system_shift: float | None
    system_se: float | None
    corrected_shift: float | None
    corrected_se: float | None
    p: float | None
    alpha: float
    min_change: float

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "reason": self.reason, "judge_status": self.judge_status,
                "system_changed": self.system_changed, "system_shift": self.system_shift,
                "system_se": self.system_se, "corrected_shift": self.corrected_shift,
                "corrected_se": self.corrected_se, "p": self.p, "alpha": self.alpha, "min_change": self.min_change}

    def __str__(self) -> str:
        return f"{self.verdict}: {self.reason}"


def attribute_change(
    anchors: Any,
    system: Any,
    system_se: float | None = None,
    *,
    alpha: float = DEFAULT_SYSTEM_ALPHA,
    min_change: float | None = None,
) -> DriftAttribution:
    """Attribute a change between two runs to the judge, the system under test, both, or neither.

    ``anchors``: the later run's :class:`~pytest_judgerel.stats.anchor_drift.AnchorComparison` (or
    its ``to_dict()``, or just its status string).  ``system``: the caller's paired comparison of
    the system's item scores between the two runs (judge scale units): an object with ``mean``,
    ``sd`` and ``n`` (such as :class:`~pytest_judgerel.stats.bias.PairedShift`), a shift with
    ``system_se``, or a bool (changed or not; then a judge drift cannot be separated from a system
    change).

    With numbers, the system's shift is tested two-sided with a normal quantile at ``alpha``; a
    move counts only when also ``|shift| >= min_change`` (scale units; default
    :data:`~pytest_judgerel.stats.anchor_drift.DEFAULT_MIN_DRIFT` x the anchors' margin, the same
    practical floor as a judge shift, 0 when the anchors carry no margin), so a large suite does
    not report a negligible move.  When the judge drifted with a significant shift, the system's
    shift is also corrected by it (``system - judge``, standard errors added in quadrature) and
    tested the same way.

    Each verdict needs its own evidence: "judge drifted" needs the anchors to have drifted;
    "system changed" needs the suite to move while the anchors hold (steady); "both" needs the
    anchors to have drifted and the suite's move to differ from the judge's shift.  When the
    suite did not move by itself, "both" says so in its reason (a system change cancelling the
    judge's, or a false alarm of the anchors).  "none": the suite did not move and the anchors did
    not drift; "undetermined": the suite moved and the anchors are inconclusive.
    """
    alpha = check_alpha(alpha)
    status, j_shift, j_se, margin = _judge_shift(anchors)
    if min_change is None:
        min_change = DEFAULT_MIN_DRIFT * float(margin) if isinstance(margin, (int, float)) else 0.0
    if isinstance(min_change, bool) or not isinstance(min_change, (int, float)) or not 0 <= min_change < math.inf:
        raise ReliabilityError(f"min_change must be a finite number >= 0 (scale units), got {min_change!r}")
    if status not in STATUSES:
        raise ReliabilityError(f"anchor status must be one of {STATUSES}, got {status!r}")
    flag_only = isinstance(system, (bool, np.bool_))
    if flag_only:
        move = _SystemMove(changed=bool(system))
    else:
        s_shift, s_se = _system_shift(system, system_se)
        judge = (float(j_shift), float(j_se)) if status == "drifted" and j_shift is not None and j_se is not None \
            else None
        move = _system_move(s_shift, s_se, judge, alpha, float(min_change))
    verdict, reason = _verdict(status, move, flag_only)
    return DriftAttribution(verdict=verdict, reason=reason, judge_status=status, system_changed=move.changed,
                            system_shift=move.shift, system_se=move.se, corrected_shift=move.corrected_shift,
                            corrected_se=move.corrected_se, p=move.p, alpha=alpha, min_change=float(min_change))


@dataclass(frozen=True)
class _SystemMove:
    """Whether the system's scores moved (``changed``), from its shift and standard error when
    given; ``corrected_*`` when the judge's shift was taken out and changed the shift, ``cancelled``
    when the system moved only once the judge's shift was taken out."""

    changed: bool
    shift: float | None = None
    se: float | None = None
    corrected_shift: float | None = None
    corrected_se: float | None = None
    p: float | None = None
    cancelled: bool = False


def _judge_shift(anchors: Any) -> tuple[Any, Any, Any, Any]:
    """(status, the judge's shift and its standard error, the anchors' margin) of an anchor
    comparison, its ``to_dict()`` or a status string; no shift when the judge drifted in its noise."""
    if isinstance(anchors, str):
        return anchors, None, None, None
    get = anchors.get if isinstance(anchors, Mapping) else (lambda key: getattr(anchors, key, None))
    status, j_shift, j_se, margin = get("status"), get("shift"), get("shift_se"), get("margin")
    j_p, j_conf = get("shift_p"), get("shift_confidence")
    if isinstance(j_p, (int, float)) and isinstance(j_conf, (int, float)) and not j_p < 1 - j_conf:
        j_shift = j_se = None  # the judge drifted in its noise, not its level: nothing to correct
    return status, j_shift, j_se, margin


def _system_shift(system: Any, system_se: Any) -> tuple[float, float]:
    """The system's shift and its standard error, from a number and ``system_se`` or a paired shift."""
    s_se: Any
    if isinstance(system, (int, float)) and not isinstance(system, bool):
        s_shift, s_se = float(system), system_se
    elif all(hasattr(system, a) for a in ("mean", "sd", "n")):
        s_shift, s_se = float(system.mean), float(system.sd) / math.sqrt(system.n)
    else:
        raise ReliabilityError("system must be a bool, a shift with system_se, or an object with mean, sd and n "
                               f"(a PairedShift); got {type(system).__name__}")
    if s_se is None or isinstance(s_se, bool) or not isinstance(s_se, (int, float)) or not s_se >= 0 \
            or not math.isfinite(s_se) or not math.isfinite(s_shift):
        raise ReliabilityError(f"the system's shift and standard error must be finite numbers (se >= 0), "
                               f"got {s_shift!r} and {s_se!r}")
    return s_shift, float(s_se)


def _system_move(s_shift: float, s_se: float, judge: tuple[float, float] | None, alpha: float,
                 min_change: float) -> _SystemMove:
    """Test the system's shift two-sided at ``alpha`` (normal quantile), a move counting from
    ``min_change``; with the drifted ``judge``'s (shift, se), test the shift corrected by it."""
    from scipy import stats

    def moved(shift: float, se: float) -> tuple[bool, float]:
        pv = (1.0 if shift == 0 else 0.0) if se == 0 else float(2 * stats.norm.sf(abs(shift) / se))
        return pv < alpha and abs(shift) >= min_change, pv

    raw_moved, p = moved(s_shift, s_se)
    if judge is None:
        return _SystemMove(raw_moved, s_shift, s_se, p=p)
    c_shift, c_se = s_shift - judge[0], math.hypot(s_se, judge[1])
    changed, p = moved(c_shift, c_se)
    corrected = c_shift != s_shift
    return _SystemMove(changed, s_shift, s_se, c_shift if corrected else None, c_se if corrected else None, p,
                       cancelled=changed and not raw_moved)


def _verdict(status: str, move: _SystemMove, flag_only: bool) -> tuple[str, str]:
    """The verdict and its reason from the anchors' status and the system's move (``flag_only``:
    the caller said only whether the system changed)."""
    corrected = move.corrected_shift is not None
    beyond = " beyond the judge's shift" if corrected else ""
    sys_words = ("the system's scores moved" if move.changed else "the system's scores did not move") + beyond
    if status == "drifted":
        if corrected and move.cancelled:
            return "both", ("the anchors show judge drift and the system's scores did not move by themselves, so the "
                            "system moved by about the opposite of the judge's shift; the only other reading is one "
                            "of the anchors' rare false alarms: re-run the anchors to tell")
        if move.changed and flag_only:
            return "judge drifted", ("the anchors show judge drift; the system's own change cannot be separated from "
                                     "it without the shifts (pass the system's shift and standard error)")
        return "both" if move.changed else "judge drifted", f"the anchors show judge drift and {sys_words}"
    if move.changed:
        if status == "steady":
            return "system changed", f"the anchors show a steady judge and {sys_words}"
        return "undetermined", (f"{sys_words}, but the anchors neither show the judge steady nor drifted: "
                                "the cause is open")
    return "none", f"{sys_words} and the anchors are {status}"
