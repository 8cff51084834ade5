"""Run history for drift tracking: numbered run files ``NNNN_<judge-fingerprint>.json``.

Each file is a full session report (same schema) plus a ``run`` block (number,
run fingerprint, git commit when available).  The run fingerprint is a short hash
of the sorted judge fingerprints of the run, so runs of one judge configuration
share a suffix and a new model version or prompt shows up as a new suffix.
Only the controller writes, once per session; the number is reserved with an
exclusive create, so two sessions sharing a directory never overwrite each other.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from .._io import write_text_atomic
from .baseline import BaselineComparison, Tolerances, compare_report, updated_baseline
from .io import dumps, read_json
from .metrics import metric_points
from .schema import ReportFormatError, validate_report

RUN_FILE_RE = re.compile(r"^(\d{4,})_([0-9A-Za-z-]+)\.json$")


def run_fingerprint(report: Mapping[str, Any]) -> str:
    """8 hex digits over the run's sorted judge fingerprints; ``"data"`` when no judge was involved."""
    fps = sorted(report.get("judges") or {})
    if not fps:
        return "data"
    return hashlib.sha256(",".join(fps).encode()).hexdigest()[:8]


def _git_commit(cwd: str | None) -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=3)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


@dataclass(frozen=True)
class RunInfo:
    """One run file of a history directory."""

    number: int
    fingerprint: str
    path: str
    created: str | None = None
    models: tuple[str, ...] = ()
    tests: int = 0
    metrics: int = 0
    failed_metrics: int = 0

    @property
    def name(self) -> str:
        return os.path.basename(self.path)


def _scan(directory: str) -> list[tuple[int, str, str]]:
    if not os.path.isdir(directory):
        return []
    out = []
    for name in os.listdir(directory):
        m = RUN_FILE_RE.match(name)
        if m:
            out.append((int(m.group(1)), m.group(2), os.path.join(directory, name)))
    return sorted(out)


def write_run(directory: str | os.PathLike[str], report: dict[str, Any], *, cwd: str | None = None) -> str:
    """Write ``report`` as the next numbered run of ``directory``; set ``report["run"]``; return the path."""
    directory = os.path.abspath(os.fspath(directory))
    os.makedirs(directory, exist_ok=True)
    fp = run_fingerprint(report)
    number = (_scan(directory)[-1][0] + 1) if _scan(directory) else 1
    while True:
        path = os.path.join(directory, f"{number:04d}_{fp}.json")
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)  # the umask applies
        except FileExistsError:
            number += 1
            continue
        os.close(fd)
        break
    report["run"] = {"number": number, "fingerprint": fp, "file": os.path.basename(path),
                     "git_commit": _git_commit(cwd)}
    write_text_atomic(path, dumps(report))
    return path


def _models(report: Mapping[str, Any]) -> tuple[str, ...]:
    out: list[str] = []
    for j in (report.get("judges") or {}).values():
        m = j.get("model")
        for name in (m if isinstance(m, list) else [m]):
            if name and str(name) not in out:
                out.append(str(name))
    return tuple(out)


def load_run(path: str) -> dict[str, Any]:
    data = read_json(path, "history run")
    validate_report(data, f"history run {path!r}")
    return data


def list_runs(directory: str | os.PathLike[str]) -> list[RunInfo]:
    """Every run of ``directory``, oldest first (raises :class:`ReportFormatError` on a corrupt run)."""
    directory = os.fspath(directory)
    if not os.path.isdir(directory):
        raise ReportFormatError(f"history directory {directory!r} does not exist")
    out = []
    for number, fp, path in _scan(directory):
        data = load_run(path)
        t = data.get("totals", {})
        out.append(RunInfo(number, fp, path, data.get("created"), _models(data), int(t.get("tests", 0)),
                           int(t.get("metrics", 0)), int(t.get("failed_metrics", 0))))
    return out


def find_run(runs: list[RunInfo], ident: str) -> RunInfo:
    """A run by number (``3``, ``0003``), file name, or ``last``/``-2`` (from the end)."""
    if not runs:
        raise ReportFormatError("the history directory holds no runs")
    text = str(ident).strip()
    if text == "last":
        return runs[-1]
    if re.fullmatch(r"-\d+", text):
        k = int(text)
        if -len(runs) <= k:
            return runs[k]
    elif text.isdigit():
        for r in runs:
            if r.number == int(text):
                return r
    for r in runs:
        if r.name == text or os.path.abspath(r.path) == os.path.abspath(text):
            return r
    raise ReportFormatError(f"no run {ident!r}; runs: {', '.join(r.name for r in runs)}")


def compare_runs(old: Mapping[str, Any], new: Mapping[str, Any],
                 tolerances: Tolerances | None = None) -> BaselineComparison:
    """Compare run ``new`` with run ``old`` using the baseline rule (old run = baseline)."""
    return compare_report(new, updated_baseline(None, old), tolerances=tolerances, path=None)


def metric_table(reports: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], list[float | None]]:
    """``{(test id, metric): [value in run 1, run 2, ...]}`` across several runs (None where absent)."""
    table: dict[tuple[str, str], list[float | None]] = {}
    for i, rep in enumerate(reports):
        for t in rep.get("tests", []):
            for p in metric_points(t.get("records") or []):
                row = table.setdefault((t["nodeid"], p.name), [None] * len(reports))
                row[i] = p.value
    return dict(sorted(table.items()))


# ---------------------------------------------------------------------- judge drift across runs
def _drift_stats() -> Any:
    """:mod:`pytest_judgerel.stats` (the monitor and the attribution), imported when needed."""
    from .. import stats as drift

    return drift


_COMPARED = ("steady", "drifted", "inconclusive")


def anchor_entries(reports: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any] | None]]:
    """``{configuration id: [its anchors entry in run 1, run 2, ...]}`` (None where absent)."""
    out: dict[str, list[Mapping[str, Any] | None]] = {}
    for i, rep in enumerate(reports):
        for cid, entry in (((rep.get("anchors") or {}).get("configurations")) or {}).items():
            out.setdefault(cid, [None] * len(reports))[i] = entry
    return dict(sorted(out.items()))


def monitor_anchors(reports: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The sequential monitor (:func:`pytest_judgerel.stats.cusum.drift_monitor`, a self-starting
    CUSUM) over each configuration's anchor comparisons since its reference was last recorded.

    ``{configuration id: {"runs": [indices into reports], "monitor": monitor dict or None,
    "alarms": [indices of runs where it alarms], "drifted": [indices whose own comparison drifted],
    "error": reason or None}}``."""
    out: dict[str, dict[str, Any]] = {}
    for cid, entries in anchor_entries(reports).items():
        runs: list[int] = []
        comps: list[Mapping[str, Any]] = []
        for i, e in enumerate(entries):
            if e is None:
                continue
            if e.get("status") == "recorded":  # a new reference: a new series
                runs, comps = [], []
                continue
            comp = e.get("comparison")
            if e.get("status") in _COMPARED and isinstance(comp, Mapping) and comp.get("shift_se") is not None:
                runs.append(i)
                comps.append(comp)
        info: dict[str, Any] = {"runs": runs, "monitor": None, "alarms": [], "error": None,
                                "drifted": [i for i, e in enumerate(entries) if e and e.get("status") == "drifted"]}
        if comps:
            try:
                mon = _drift_stats().drift_monitor(comps)
            except (ValueError, ArithmeticError) as exc:  # ReliabilityError is a ValueError
                info["error"] = str(exc)
            else:
                info["monitor"] = mon.to_dict()
                info["alarms"] = [runs[k] for k, step in enumerate(info["monitor"]["steps"]) if step.get("alarm")]
        out[cid] = info
    return out


def judge_status(reports: Sequence[Mapping[str, Any]], index: int,
                 monitors: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    """The judge's anchors at run ``index``: ``drifted`` (a configuration's comparison drifted or
    the monitor alarms there), ``steady`` (every compared configuration steady), else
    ``inconclusive`` (no anchors compared included)."""
    monitors = monitor_anchors(reports[:index + 1]) if monitors is None else monitors
    entries = [e for row in anchor_entries(reports).values() if (e := row[index]) is not None]
    statuses = [str(e.get("status")) for e in entries if str(e.get("status")) in _COMPARED]
    if "drifted" in statuses or any(index in m.get("alarms", ()) for m in monitors.values()):
        return "drifted"
    if statuses and all(s == "steady" for s in statuses):
        return "steady"
    return "inconclusive"


def served_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Server-reported models and ``system_fingerprint`` s that differ between two runs, per
    configuration both judged, in words: those of the session's answers (``served``, which keep
    what the server said when a cached answer was first asked) and those of the anchors' fresh
    answers (``fresh_server``, the server as it is now)."""
    out = []
    a = ((old.get("anchors") or {}).get("configurations")) or {}
    b = ((new.get("anchors") or {}).get("configurations")) or {}
    for cid in sorted(set(a) & set(b)):
        for part, seen in (("served", ""), ("fresh_server", " (the anchors' fresh answers)")):
            for key, word in (("models", "model"), ("system_fingerprints", "system_fingerprint")):
                before = sorted(((a[cid].get(part) or {}).get(key)) or {})
                after = sorted(((b[cid].get(part) or {}).get(key)) or {})
                if before and after and before != after:
                    out.append(f"{cid[:8]} {word} {', '.join(before)} -> {', '.join(after)}{seen}")
    return out


def attribute_runs(reports: Sequence[Mapping[str, Any]], old: int, new: int, comparison: BaselineComparison
                   ) -> dict[str, Any]:
    """Who moved between runs ``old`` and ``new``: ``{"verdict": "judge drifted" | "system
    changed" | "both" | "none" | "undetermined", "reason", "judge": status at ``new``,
    "system_changed"}``.  The system changed when the comparison found a regression or an
    improvement beyond noise; the judge's status is :func:`judge_status` of the later run
    (:func:`pytest_judgerel.stats.drift_attribution.attribute_change`)."""
    status = judge_status(reports, new)
    system = any(e.status in ("regression", "improved") for e in comparison.entries)
    result = _drift_stats().attribute_change(status, bool(system))
    d = result.to_dict()
    return {"verdict": d["verdict"], "reason": d.get("reason", ""), "judge": status, "system_changed": bool(system)}
