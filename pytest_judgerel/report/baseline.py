"""Committed baselines: save the accepted metrics, compare a run against them.

File layout (schema :data:`~pytest_judgerel.report.schema.BASELINE_SCHEMA`)::

    {"schema": "pytest-judgerel/baseline", "version": 1, "updated": "...",
     "judges": {"<fingerprint>": {model, template_hash, temperature, scale, ...}},
     "tests": {"<test id>": {"<metric name>": {"statistic", "value", "ci", "direction",
                                               "n", "fingerprint", ["item_scores"]}}}}

Comparison rule (documented in docs/reports.md): a metric *regresses* when it
got worse by more than its tolerance (``max_icc_drop`` for "min" statistics such
as ICC, ``max_nmae_rise`` for "max" statistics such as nMAE) **and** the change
is not explained by sampling noise: with per-item scores on both sides the
one-sided paired signed-rank test must give p < ``alpha``; otherwise, with
confidence intervals on both sides, the intervals must not overlap; with neither,
the tolerance alone decides.  A change beyond tolerance that noise explains is
``within_noise`` and passes (with a warning).  New, missing and stale
(judge-fingerprint changed) entries are reported and never fail.
"""

from __future__ import annotations

import datetime as _dt
import os
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Mapping

from ..judging.identity import judge_fields
from .fmt import fmt_number
from .io import read_json
from .metrics import MetricPoint, judge_changes, metric_points
from .paired import paired_worse
from .schema import BASELINE_SCHEMA_ID, BASELINE_VERSION, ReportFormatError, validate_baseline

DEFAULT_MAX_ICC_DROP = 0.05
DEFAULT_MAX_NMAE_RISE = 0.02
DEFAULT_ALPHA = 0.05
MIN_PAIRED_ITEMS = 5
_EPS = 1e-9


def _round(v: float | None) -> float | None:
    return None if v is None else round(float(v), 6)


@dataclass(frozen=True)
class Tolerances:
    """How much a metric may get worse before it can be a regression."""

    max_icc_drop: float = DEFAULT_MAX_ICC_DROP
    max_nmae_rise: float = DEFAULT_MAX_NMAE_RISE
    alpha: float = DEFAULT_ALPHA

    def __post_init__(self) -> None:
        for name in ("max_icc_drop", "max_nmae_rise"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not v >= 0:
                raise ValueError(f"{name} must be a number >= 0, got {v!r}")
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {self.alpha!r}")

    def for_direction(self, direction: str) -> float:
        return self.max_icc_drop if direction == "min" else self.max_nmae_rise


@dataclass
class MetricComparison:
    """One metric of one test against its baseline entry."""

    nodeid: str
    metric: str
    status: str  # pass | improved | within_noise | regression | new | missing | undefined
    direction: str = "min"
    baseline: float | None = None
    current: float | None = None
    delta: float | None = None
    tolerance: float | None = None
    ci_overlap: bool | None = None
    p_value: float | None = None
    fingerprint_changed: bool = False
    judge_changes: dict[str, list[Any]] = field(default_factory=dict)
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for k in ("baseline", "current", "delta", "p_value"):
            d[k] = _round(d[k])
        return d


@dataclass
class BaselineComparison:
    """A whole run against a baseline file."""

    path: str | None
    found: bool
    entries: list[MetricComparison] = field(default_factory=list)
    not_run: int = 0
    error: str | None = None
    updated: bool = False
    tolerances: Tolerances = field(default_factory=Tolerances)

    @property
    def regressions(self) -> list[MetricComparison]:
        return [e for e in self.entries if e.status == "regression"]

    def by_status(self, status: str) -> list[MetricComparison]:
        return [e for e in self.entries if e.status == status]

    @property
    def stale(self) -> list[MetricComparison]:
        return [e for e in self.entries if e.fingerprint_changed]

    def counts(self) -> dict[str, int]:
        out = {s: 0 for s in ("pass", "improved", "within_noise", "regression", "new", "missing", "undefined")}
        for e in self.entries:
            out[e.status] += 1
        out["stale"] = len(self.stale)
        out["not_run"] = self.not_run
        return out

    def reasons(self) -> list[str]:
        """The gate's failure reasons: an unreadable baseline and every regression."""
        out = [self.error] if self.error else []
        out += [f"{e.nodeid} {e.metric}: {e.reason}" for e in self.regressions]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "found": self.found,
            "error": self.error,
            "updated": self.updated,
            "tolerances": asdict(self.tolerances),
            "counts": self.counts(),
            "entries": [e.to_dict() for e in self.entries],
            "not_run": self.not_run,
        }


# ---------------------------------------------------------------------- load / build
#: the one word for each comparison status, in the terminal and in HTML (the JSON keeps the status keys)
STATUS_WORDS = {"pass": "unchanged", "improved": "improved", "within_noise": "within noise",
                "regression": "regressed", "new": "new", "missing": "missing", "undefined": "undefined",
                "stale": "stale (judge changed)", "not_run": "baseline test(s) not run"}


def status_word(status: str) -> str:
    """How a comparison status (``pass``, ``regression``, ...) is shown: :data:`STATUS_WORDS`."""
    return STATUS_WORDS.get(status, status)


def empty_baseline() -> dict[str, Any]:
    return {"schema": BASELINE_SCHEMA_ID, "version": BASELINE_VERSION, "judges": {}, "tests": {}}


def load_baseline(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The baseline at ``path``; ``None`` when the file does not exist.

    Raises :class:`ReportFormatError` when it exists but is not a valid baseline.
    """
    if not os.path.exists(path):
        return None
    data = read_json(path, "baseline")
    validate_baseline(data, f"baseline {os.fspath(path)!r}")
    return data


def _point_entry(p: MetricPoint) -> dict[str, Any]:
    entry: dict[str, Any] = {"statistic": p.statistic, "value": _round(p.value),
                             "ci": None if p.ci is None else [_round(p.ci[0]), _round(p.ci[1])],
                             "direction": p.direction, "n": p.n if isinstance(p.n, int) else None,
                             "fingerprint": p.fingerprint}
    if p.item_scores:
        entry["item_scores"] = {str(k): _round(v) if isinstance(v, (int, float)) else None
                                for k, v in sorted(p.item_scores.items())}
    return entry


def report_points(tests: Iterable[Mapping[str, Any]]) -> dict[str, list[MetricPoint]]:
    """``{test id: metric points}`` for every test of a report that recorded a metric."""
    out: dict[str, list[MetricPoint]] = {}
    for t in tests:
        pts = metric_points(t.get("records") or [])
        if pts:
            out[str(t["nodeid"])] = pts
    return out


def updated_baseline(previous: Mapping[str, Any] | None, report: Mapping[str, Any]) -> dict[str, Any]:
    """Accept the current run: tests that ran replace their entries; other tests are kept (shard-safe)."""
    base = empty_baseline()
    if previous:
        base["tests"] = {k: dict(v) for k, v in previous.get("tests", {}).items()}
        base["judges"] = dict(previous.get("judges", {}))
    for nodeid, pts in report_points(report.get("tests", [])).items():
        base["tests"][nodeid] = {p.name: _point_entry(p) for p in pts}
        for p in pts:
            if p.fingerprint != "data":
                base["judges"][p.fingerprint] = judge_fields(p.judge)
    used = {m["fingerprint"] for metrics in base["tests"].values() for m in metrics.values()}
    base["judges"] = {fp: j for fp, j in sorted(base["judges"].items()) if fp in used}
    base["tests"] = dict(sorted(base["tests"].items()))
    base["updated"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    return base


# ---------------------------------------------------------------------- compare
def compare_point(nodeid: str, name: str, entry: Mapping[str, Any], point: MetricPoint,
                  tol: Tolerances, judges: Mapping[str, Any]) -> MetricComparison:
    """Compare one current metric point with its baseline entry (rule in the module docstring)."""
    direction = point.direction
    tolerance = tol.for_direction(direction)
    base_v, cur_v = entry.get("value"), point.value
    mc = MetricComparison(nodeid, name, "pass", direction, base_v, cur_v, tolerance=tolerance)
    old_fingerprint = entry.get("fingerprint")
    if old_fingerprint != point.fingerprint:
        mc.fingerprint_changed = True
        old_judge = judges.get(old_fingerprint) if isinstance(old_fingerprint, str) else None
        mc.judge_changes = judge_changes(old_judge, point.judge)
    if cur_v is None:
        if base_v is None:
            mc.status, mc.reason = "undefined", "undefined in both runs"
        else:
            mc.status, mc.reason = "regression", f"now undefined (baseline {fmt_number(base_v)})"
        return mc
    if base_v is None:
        mc.status, mc.reason = "improved", f"baseline undefined, now {fmt_number(cur_v)}"
        return mc
    mc.delta = cur_v - base_v
    worse = -mc.delta if direction == "min" else mc.delta
    word = "drop" if direction == "min" else "rise"
    if worse <= tolerance + _EPS:
        mc.status = "improved" if -worse > tolerance + _EPS else "pass"
        mc.reason = f"{fmt_number(base_v)} -> {fmt_number(cur_v)} ({mc.delta:+.4f})"
        return mc
    base_ci, cur_ci = entry.get("ci"), point.ci
    if base_ci and cur_ci and None not in base_ci and None not in cur_ci:
        mc.ci_overlap = bool(cur_ci[1] >= base_ci[0] and base_ci[1] >= cur_ci[0])
    head = f"{fmt_number(base_v)} -> {fmt_number(cur_v)} ({mc.delta:+.4f}; allowed {word} {tolerance:g})"
    base_scores, cur_scores = entry.get("item_scores"), point.item_scores
    paired = None
    if base_scores and cur_scores:
        paired = paired_worse(base_scores, cur_scores)
        if paired.n_common < MIN_PAIRED_ITEMS:
            paired = None
    if paired is not None:
        mc.p_value = paired.p_value
        noisy = paired.p_value >= tol.alpha
        evidence = (f"paired signed-rank test on {paired.n_common} items p={paired.p_value:.3g}"
                    f" ({'not ' if noisy else ''}significant at {tol.alpha:g})")
    elif mc.ci_overlap is not None:
        noisy = mc.ci_overlap
        evidence = "confidence intervals overlap" if noisy else "confidence intervals do not overlap"
    else:
        noisy, evidence = False, "no confidence interval to judge noise"
    mc.status = "within_noise" if noisy else "regression"
    mc.reason = f"{head}; {evidence}" + ("" if not mc.fingerprint_changed else "; judge changed: " + ", ".join(
        f"{k} {v[0]!r}->{v[1]!r}" for k, v in mc.judge_changes.items()))
    return mc


def compare_report(report: Mapping[str, Any], baseline: Mapping[str, Any] | None, *,
                   tolerances: Tolerances | None = None, path: str | None = None) -> BaselineComparison:
    """Compare every metric of ``report`` with ``baseline`` (``None``: no baseline yet, all new)."""
    tol = tolerances or Tolerances()
    comp = BaselineComparison(path, baseline is not None, tolerances=tol)
    base_tests: Mapping[str, Mapping[str, Any]] = (baseline or {}).get("tests", {})
    judges = (baseline or {}).get("judges", {})
    current = report_points(report.get("tests", []))
    for nodeid, pts in current.items():
        entries = base_tests.get(nodeid, {})
        names = set()
        for p in pts:
            names.add(p.name)
            if p.name not in entries:
                comp.entries.append(MetricComparison(nodeid, p.name, "new", p.direction, None, p.value,
                                                     reason="not in the baseline"))
            else:
                comp.entries.append(compare_point(nodeid, p.name, entries[p.name], p, tol, judges))
        for name, e in entries.items():
            if name not in names:
                comp.entries.append(MetricComparison(nodeid, name, "missing", e.get("direction", "min"),
                                                     e.get("value"), None,
                                                     reason="in the baseline but not recorded by this run"))
    comp.not_run = sum(1 for nodeid in base_tests if nodeid not in current)
    return comp


def compare_with_file(report: Mapping[str, Any], path: str | os.PathLike[str], *,
                      tolerances: Tolerances | None = None) -> BaselineComparison:
    """Load the baseline at ``path`` and compare; an unreadable file becomes ``comparison.error``."""
    try:
        baseline = load_baseline(path)
    except ReportFormatError as exc:
        comp = BaselineComparison(os.fspath(path), True, tolerances=tolerances or Tolerances())
        comp.error = str(exc)
        return comp
    return compare_report(report, baseline, tolerances=tolerances, path=os.fspath(path))
