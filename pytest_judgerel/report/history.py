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

from .baseline import BaselineComparison, Tolerances, compare_report, updated_baseline
from .io import dumps, read_json, write_text_atomic
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
