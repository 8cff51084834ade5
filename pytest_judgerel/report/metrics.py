"""Turn metric records into named, comparable metric points.

A *metric point* is one number a baseline can track: the main statistic of a
record, its secondary nMAE (agreement records), and each group's value.  Points
are named stably inside a test (``"ICC(A,1)"``, ``"ICC(A,1) [label]"``,
``"ICC(A,1) / group=x"``, ``"... #2"`` for a repeated name) so a committed
baseline keeps matching while the test keeps its assertions in the same order.  Each point
carries its judge's fingerprint (:mod:`pytest_judgerel.judging.identity`).  Stdlib only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ..judging.identity import judge_fields, judge_fingerprint

#: Record kinds that describe judge runs, not metrics (``judge_run`` carries parse failures,
#: ``judge_panel`` the effective number of independent judges of a panel).
NON_METRIC_KINDS = frozenset({"judge_run", "judge_panel"})


def is_metric_record(rec: Mapping[str, Any]) -> bool:
    """A record that carries a statistic (not a ``judge_run`` bookkeeping record)."""
    return rec.get("kind") not in NON_METRIC_KINDS and "value" in rec


def judge_changes(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> dict[str, list[Any]]:
    """Fields whose value differs between two judges: ``{field: [old, new]}``."""
    a, b = judge_fields(old), judge_fields(new)
    return {k: [a.get(k), b.get(k)] for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)}


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _ci(v: Any) -> list[float] | None:
    if isinstance(v, (list, tuple)) and len(v) == 2:
        lo, hi = _num(v[0]), _num(v[1])
        if lo is not None and hi is not None:
            return [lo, hi]
    return None


@dataclass(frozen=True)
class MetricPoint:
    """One tracked number of one test."""

    name: str
    statistic: str
    value: float | None
    direction: str
    ci: list[float] | None = None
    n: int | None = None
    fingerprint: str = "data"
    judge: Mapping[str, Any] | None = None
    item_scores: Mapping[str, float] | None = field(default=None, compare=False)
    passed: bool | None = None
    role: str = "main"  # "main" statistic of a record, "secondary" (nMAE of an agreement), or "group"
    threshold: float | None = None
    p_pass: float | None = None  # verdict stability of the record (main points only)


def metric_points(records: Iterable[Mapping[str, Any]]) -> list[MetricPoint]:
    """Every metric point of one test's records, in record order, with unique names."""
    points: list[MetricPoint] = []
    seen: dict[str, int] = {}

    def unique(name: str) -> str:
        seen[name] = seen.get(name, 0) + 1
        return name if seen[name] == 1 else f"{name} #{seen[name]}"

    for rec in records:
        if not is_metric_record(rec):
            continue
        stat = str(rec.get("statistic") or rec.get("kind") or "metric")
        label = rec.get("label")
        base = unique(f"{stat} [{label}]" if label else stat)
        direction = "max" if rec.get("direction") == "max" else "min"
        judge = rec.get("judge") if isinstance(rec.get("judge"), Mapping) else None
        fp = judge_fingerprint(judge)
        scores = rec.get("item_scores") if isinstance(rec.get("item_scores"), Mapping) else None
        points.append(MetricPoint(base, stat, _num(rec.get("value")), direction, _ci(rec.get("ci")),
                                  rec.get("n"), fp, judge, scores, rec.get("passed"), "main",
                                  _num(rec.get("threshold")), _num(rec.get("p_pass"))))
        secondary_nmae = stat != "nMAE" and _num(rec.get("nmae")) is not None
        if secondary_nmae:
            nm = unique(f"nMAE [{label}]" if label else "nMAE")
            max_nmae = (rec.get("thresholds") or {}).get("max_nmae") if isinstance(rec.get("thresholds"),
                                                                                    Mapping) else None
            points.append(MetricPoint(nm, "nMAE", _num(rec.get("nmae")), "max", None, rec.get("n"), fp, judge,
                                      scores, None, "secondary", _num(max_nmae)))
        for gname, g in (rec.get("groups") or {}).items():
            if not isinstance(g, Mapping):
                continue
            if stat == "nMAE":
                gval, gci = _num(g.get("nmae")), None
            else:
                gval, gci = _num(g.get("value")), _ci(g.get("ci"))
            points.append(MetricPoint(f"{base} / {gname}", stat, gval, direction, gci, g.get("n"), fp, judge,
                                      None, g.get("passed"), "group"))
            if secondary_nmae and _num(g.get("nmae")) is not None:
                points.append(MetricPoint(f"{nm} / {gname}", "nMAE", _num(g.get("nmae")), "max", None,
                                          g.get("n"), fp, judge, None, None, "group"))
    return points


def panel_warnings(report: Mapping[str, Any]) -> list[str]:
    """One line per ``judge_panel`` record whose panel is worth fewer than half its members
    (effective number of independent judges < k / 2; :mod:`pytest_judgerel.stats.effective`)."""
    out = []
    for t in report.get("tests") or []:
        for rec in t.get("records") or []:
            if rec.get("kind") != "judge_panel":
                continue
            eff, k, r = _num(rec.get("effective_judges")), rec.get("k"), _num(rec.get("mean_error_correlation"))
            if eff is None or not isinstance(k, int) or isinstance(k, bool) or not eff < k / 2:
                continue
            against = "human gold" if rec.get("reference") == "human" else "the rest of the panel"
            models = ", ".join(str(m) for m in rec.get("models") or [])
            out.append(f"{t.get('nodeid')}: the panel of {k} judges ({models}) is worth {eff:.1f} independent "
                       f"judges (mean error correlation {r if r is not None else float('nan'):.2f} against "
                       f"{against}): fewer than half its members")
    return out


def jury_lines(report: Mapping[str, Any]) -> list[str]:
    """One line per comparison a jury decided: its judges, its rule (and tie rule) and the effective
    number of independent judges beside the verdict (:mod:`pytest_judgerel.stats.jury`)."""
    out = []
    for t in report.get("tests") or []:
        for rec in t.get("records") or []:
            jury = rec.get("jury")
            if not isinstance(jury, Mapping):
                continue
            judges = [str(j) for j in jury.get("judges") or []]
            rule = str(jury.get("rule")) + (f" (tie rule: {jury.get('tie_rule')})" if jury.get("tie_rule") else "")
            eff = _num(jury.get("effective_judges"))
            worth = (f"worth {eff:.1f} independent judges" if eff is not None
                     else f"effective number of judges n/a ({jury.get('effective_note') or 'not computed'})")
            label = f" [{rec.get('label')}]" if rec.get("label") else ""
            verdict = "PASS" if rec.get("passed") else "FAIL"
            out.append(f"{t.get('nodeid')}{label}: {verdict} by a jury of {len(judges)} ({', '.join(judges)}), "
                       f"rule {rule}; {worth}")
    return out
