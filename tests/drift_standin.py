"""TEST-ONLY stand-in for ``pytest_judgerel.stats.drift`` (built by another branch, issue 29).

Used only while that module is absent: :func:`install` puts this module in its place in
``sys.modules``; once the real module exists, :func:`install` does nothing and the tests run
against it.  The interface mirrors the real one (``anchor_comparison``, ``drift_monitor``,
``attribute_change`` and their ``to_dict()`` keys); the statistics are deliberately plain: a
paired t interval of the mean per-anchor difference, "steady" when it lies inside +/- a tenth of
the scale's range, a two-sided CUSUM (r = 0.5, h = 4) over the runs' standardised shifts.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np


def install() -> None:
    """Register this module as ``pytest_judgerel.stats.drift`` when the real one is missing."""
    name = "pytest_judgerel.stats.drift"
    if name in sys.modules:
        return
    try:
        found = importlib.util.find_spec(name)
    except ModuleNotFoundError:
        found = None
    if found is None:
        import types

        module = types.ModuleType(name, __doc__)
        module.__dict__.update({k: v for k, v in globals().items() if not k.startswith("__")})
        sys.modules[name] = module


@dataclass(frozen=True)
class _Comparison:
    status: str
    reasons: tuple[str, ...]
    n: int
    reference_samples: int
    fresh_samples: int
    scale: str
    shift: float | None
    shift_ci: tuple[float, float] | None
    shift_se: float | None
    margin: float
    agreement: float | None

    @property
    def calls(self) -> int:
        return self.n * self.fresh_samples

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "reasons": list(self.reasons), "n": self.n, "n_omitted": 0,
                "reference_samples": self.reference_samples, "fresh_samples": self.fresh_samples,
                "calls": self.calls, "scale": self.scale, "margin": self.margin, "shift": self.shift,
                "shift_ci": list(self.shift_ci) if self.shift_ci else None, "shift_se": self.shift_se,
                "agreement": None if self.agreement is None else {"statistic": "ICC(A,1)", "value": self.agreement,
                                                                   "ci": None},
                "noise": None, "noise_tested": False}


def anchor_comparison(reference: Mapping[str, Sequence[float]], fresh: Mapping[str, Sequence[float]], scale: Any,
                      *, nan_policy: str = "raise", **_: Any) -> _Comparison:
    from scipy import stats

    from pytest_judgerel.scales import Scale

    sc = Scale.parse(scale)
    ids = list(reference)
    ref = np.array([reference[i] for i in ids], float)
    new = np.array([fresh[i] for i in ids], float)
    keep = ~(np.isnan(ref).any(axis=1) | np.isnan(new).any(axis=1))
    ref, new = ref[keep], new[keep]
    n = int(ref.shape[0])
    margin = 0.1 * sc.range
    base = dict(n=n, reference_samples=ref.shape[1], fresh_samples=new.shape[1], scale=sc.name, margin=margin,
                agreement=None)
    if n < 10:
        return _Comparison("inconclusive", ("too few anchors",), shift=None, shift_ci=None, shift_se=None, **base)
    d = new.mean(axis=1) - ref.mean(axis=1)
    shift, se = float(d.mean()), float(d.std(ddof=1) / math.sqrt(n))
    half = float(stats.t.ppf(0.975, n - 1)) * se
    ci = (shift - half, shift + half)
    if (ci[0] > 0 or ci[1] < 0) and abs(shift) >= 0.5 * margin:
        status, why = "drifted", f"shift {shift:+.3g} excludes 0"
    elif -margin < ci[0] and ci[1] < margin:
        status, why = "steady", f"interval inside +/-{margin:g}"
    else:
        status, why = "inconclusive", "interval not inside the margin"
    return _Comparison(status, (why,), shift=shift, shift_ci=ci, shift_se=se, **base)


@dataclass(frozen=True)
class _Step:
    run: int
    shift: float
    z: float
    alarm: bool

    def to_dict(self) -> dict[str, Any]:
        return {"run": self.run, "shift": self.shift, "z": self.z, "alarm": self.alarm}


@dataclass(frozen=True)
class _Monitor:
    steps: tuple[_Step, ...]
    first_alarm: int | None

    @property
    def alarmed(self) -> bool:
        return self.first_alarm is not None

    def to_dict(self) -> dict[str, Any]:
        return {"steps": [s.to_dict() for s in self.steps], "alarmed": self.alarmed, "first_alarm": self.first_alarm,
                "decision_limit": 4.0}


def drift_monitor(comparisons: Sequence[Any], **_: Any) -> _Monitor:
    up = down = 0.0
    steps, first = [], None
    for i, c in enumerate(comparisons):
        shift, se = float(c["shift"]), float(c["shift_se"])
        z = shift / se if se > 0 else (0.0 if shift == 0 else math.copysign(math.inf, shift))
        up, down = max(0.0, up + z - 0.5), max(0.0, down - z - 0.5)
        alarm = up > 4 or down > 4
        if alarm and first is None:
            first = i + 1
        steps.append(_Step(i + 1, shift, z, alarm))
    return _Monitor(tuple(steps), first)


@dataclass(frozen=True)
class _Attribution:
    verdict: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "reason": self.reason}


def attribute_change(anchors: Any, system: Any, system_se: float | None = None, **_: Any) -> _Attribution:
    status = anchors if isinstance(anchors, str) else anchors.get("status")
    changed = bool(system)
    if status == "drifted":
        return _Attribution("both" if changed and not isinstance(system, bool) else "judge drifted", "anchors drifted")
    if changed:
        return _Attribution("system changed" if status == "steady" else "undetermined", "system moved")
    return _Attribution("none", "nothing moved")
