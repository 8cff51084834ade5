"""Merge JSON reports of several CI shards into one report.

Tests are united; a test id present in more than one shard is a *duplicate*
(the sharding ran it twice): by default that is an error naming the test and the
shards, or one copy is kept with ``on_duplicate="first"``/``"last"`` and the id
is listed under ``duplicates``.  Totals are recomputed from the merged tests (so
they are the shard sums when there are no duplicates), crashed tests united,
``report_only`` is true when any shard ran report-only.
"""

from __future__ import annotations

import os
from typing import Any, Mapping, Sequence

from .build import assemble_report
from .io import read_json
from .schema import ReportFormatError, validate_report

ON_DUPLICATE = ("error", "first", "last")


class MergeError(ReportFormatError):
    """Shard reports cannot be merged (duplicate tests, incompatible settings)."""


def merge_reports(reports: Sequence[Mapping[str, Any]], sources: Sequence[str] | None = None, *,
                  on_duplicate: str = "error") -> dict[str, Any]:
    """One report from shard reports (each validated against the report schema first)."""
    if on_duplicate not in ON_DUPLICATE:
        raise ValueError(f"on_duplicate must be one of {ON_DUPLICATE}, got {on_duplicate!r}")
    if not reports:
        raise MergeError("nothing to merge: no reports given")
    sources = list(sources) if sources is not None else [f"shard{i + 1}" for i in range(len(reports))]
    if len(sources) != len(reports):
        raise ValueError("sources must name every report")
    for rep, src in zip(reports, sources):
        validate_report(rep, f"report {src!r}")
    merged: dict[str, dict[str, Any]] = {}
    seen_in: dict[str, list[str]] = {}
    for rep, src in zip(reports, sources):
        for t in rep["tests"]:
            nodeid = t["nodeid"]
            seen_in.setdefault(nodeid, []).append(src)
            if nodeid in merged and on_duplicate != "last":
                continue
            merged[nodeid] = dict(t)
    duplicates = {k: v for k, v in seen_in.items() if len(v) > 1}
    if duplicates and on_duplicate == "error":
        lines = [f"{k} (in {', '.join(v)})" for k, v in sorted(duplicates.items())]
        raise MergeError(f"{len(duplicates)} test(s) appear in more than one shard: " + "; ".join(lines[:10])
                         + (" ..." if len(lines) > 10 else "")
                         + " (pass --on-duplicate first|last to keep one copy)")
    first = reports[0]
    crashed = sorted({c for rep in reports for c in rep.get("crashed", [])})
    out = assemble_report(list(merged.values()), settings=first.get("settings", {}), crashed=crashed,
                          report_only=any(rep.get("report_only") for rep in reports))
    out["settings"] = dict(first.get("settings", {}))
    conflicts = sorted({k for rep in reports[1:] for k, v in rep.get("settings", {}).items()
                        if first.get("settings", {}).get(k) != v})
    if conflicts:
        out["settings_conflicts"] = conflicts
    out["shards"] = [{"source": src, "created": rep.get("created"), "tests": len(rep["tests"]),
                      "crashed": len(rep.get("crashed", []))} for rep, src in zip(reports, sources)]
    out["duplicates"] = sorted(duplicates)
    return out


def merge_files(paths: Sequence[str | os.PathLike[str]], *, on_duplicate: str = "error") -> dict[str, Any]:
    """Read and merge shard report files (names are used as shard sources)."""
    reports = [read_json(p, "report") for p in paths]
    return merge_reports(reports, [os.fspath(p) for p in paths], on_duplicate=on_duplicate)
