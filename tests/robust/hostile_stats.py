"""NaN/inf/huge/constant/degenerate input through the assertion helpers."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

@dataclass
class HostileOutcome:
    helper: str
    case: str
    kind: str  # "error" (clear exception), "failed" (threshold failure, finite value), "passed", "unclear"
    detail: str
    values: list[float] = field(default_factory=list)  # the statistics the helper reported

    @property
    def passing_nan(self) -> bool:
        return self.kind == "passed" and not all(math.isfinite(v) for v in self.values)


@dataclass
class HostileReport:
    outcomes: list[HostileOutcome]

    @property
    def passing_nan(self) -> list[HostileOutcome]:
        return [o for o in self.outcomes if o.passing_nan or (o.kind == "failed" and not all(
            math.isfinite(v) for v in o.values))]

    @property
    def unclear(self) -> list[HostileOutcome]:
        return [o for o in self.outcomes if o.kind == "unclear"]


def _reported_values(result: Any) -> list[float]:
    """The point statistics a helper's result carries (ICC values, nMAE)."""
    vals: list[float] = []
    if result is None:
        return vals
    for name in ("value", "nmae"):
        v = getattr(result, name, None)
        if isinstance(v, (int, float)):
            vals.append(float(v))
    for name in ("icc", "joint"):
        sub = getattr(result, name, None)
        if sub is not None and isinstance(getattr(sub, "value", None), (int, float)):
            vals.append(float(sub.value))
    for sub in (getattr(result, "pairwise", None) or {}).values():
        vals.append(float(sub.value))
    return vals


def hostile_matrices(seed: int = 3) -> dict[str, Any]:
    """Items x raters matrices on a 0-5 scale, each broken in one hostile way."""
    import numpy as np

    rng = np.random.default_rng(seed)
    truth = rng.uniform(0.5, 4.5, size=(24, 1))
    base = np.clip(np.round(truth + rng.normal(scale=0.4, size=(24, 3)), 1), 0, 5)
    cases: dict[str, Any] = {"clean": base}
    a = base.copy(); a[5, 1] = np.nan; cases["nan"] = a
    a = base.copy(); a[5, 1] = np.inf; cases["inf"] = a
    a = base.copy(); a[7, 0] = -np.inf; cases["-inf"] = a
    cases["all_nan"] = np.full_like(base, np.nan)
    cases["huge_offset_1e9"] = base + 1e9
    cases["huge_offset_1e15"] = base + 1e15
    cases["overflow_1e300"] = base * 1e300
    cases["constant_all"] = np.full_like(base, 3.0)
    cases["one_item"] = base[:1]
    cases["one_rater"] = base[:, :1]
    cases["empty"] = base[:0]
    cases["strings"] = np.array([["3", "x", "4"]] * 4, dtype=object)
    return cases


def _classify(helper: str, case: str, fn: Callable[[], Any]) -> HostileOutcome:
    import warnings

    from pytest_judgerel.gates.reliability import JudgeReliabilityFailure
    from pytest_judgerel.errors import JudgerelError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            result = fn()
    except JudgeReliabilityFailure as exc:
        rec = exc.record or {}
        vals = [float(rec["value"])] if isinstance(rec.get("value"), (int, float)) else []
        return HostileOutcome(helper, case, "failed", str(exc).splitlines()[0][:160], vals)
    except (JudgerelError, ValueError) as exc:
        msg = str(exc)
        clear = bool(msg.strip()) and not msg.startswith("could not convert")
        return HostileOutcome(helper, case, "error" if clear else "unclear", f"{type(exc).__name__}: {msg[:160]}")
    except Exception as exc:  # noqa: BLE001 - anything else is an unclear failure
        return HostileOutcome(helper, case, "unclear", f"{type(exc).__name__}: {str(exc)[:160]}")
    return HostileOutcome(helper, case, "passed", "", _reported_values(result))


def hostile_stats_run() -> HostileReport:
    """Every hostile matrix through assert_icc_above, assert_scale_consistent, assert_agreement and
    assert_nmae_below (as the judge side, as the human side, and as one scale of three)."""
    from pytest_judgerel import assert_agreement, assert_icc_above, assert_nmae_below, assert_scale_consistent
    from pytest_judgerel.session.recording import recording

    cases = hostile_matrices()
    clean = cases["clean"]
    out: list[HostileOutcome] = []
    with recording():  # records go to a throwaway recorder
        for name, m in cases.items():
            out.append(_classify("assert_icc_above", name, lambda m=m: assert_icc_above(m, 0.0)))
            out.append(_classify("assert_icc_above(ci_low)", name,
                                 lambda m=m: assert_icc_above(m, -1.0, use="ci_low")))
            out.append(_classify("assert_scale_consistent", name, lambda m=m: assert_scale_consistent(
                {"0-5": m, "0-10": clean * 2, "0-100": clean * 20}, -1.0)))
            out.append(_classify("assert_agreement(judge)", name, lambda m=m: assert_agreement(
                m, clean[: len(m)] if len(m) else clean, min_icc=-1.0, max_nmae=1.0, scale="0-5")))
            out.append(_classify("assert_agreement(human)", name, lambda m=m: assert_agreement(
                clean[: len(m)] if len(m) else clean, m, min_icc=-1.0, max_nmae=1.0, scale="0-5")))
            out.append(_classify("assert_nmae_below", name, lambda m=m: assert_nmae_below(
                m, clean[: len(m)] if len(m) else clean, 1.0, scale="0-5")))
    return HostileReport(out)
