"""Build the versioned session report (a plain JSON-able dict) from collected records."""

from __future__ import annotations

import datetime as _dt
from typing import Any

SCHEMA = "pytest-judgerel/report"
VERSION = 1
_SAFE_SETTINGS = ("model", "api_base", "temperature", "max_tokens", "repeats", "cache_mode",
                  "max_concurrency", "rpm", "timeout", "max_attempts", "max_parse_failures", "report_only")
_CALL_KEYS = ("calls", "hits", "misses", "retries", "errors", "prompt_tokens", "completion_tokens", "cost")


def build_report(session: Any) -> dict[str, Any]:
    """The report of one session: every test with metric records, plus totals."""
    tests = [dict(r) for r in session.results.values()]
    tests.sort(key=lambda t: t["nodeid"])
    totals: dict[str, Any] = {k: 0 for k in _CALL_KEYS}
    metrics = failed = parse_failures = 0
    for t in tests:
        for k in _CALL_KEYS:
            totals[k] += t.get("calls", {}).get(k, 0)
        for rec in t["records"]:
            if rec.get("kind") == "judge_run":
                parse_failures += int(rec.get("parse_failures") or 0)
                continue
            metrics += 1
            failed += 0 if rec.get("passed") else 1
    lookups = totals["hits"] + totals["misses"]
    totals.update(
        tests=len(tests),
        metrics=metrics,
        failed_metrics=failed,
        parse_failures=parse_failures,
        hit_rate=(totals["hits"] / lookups) if lookups else None,
    )
    settings = session.settings.values
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "settings": {k: settings.get(k) for k in _SAFE_SETTINGS},
        "report_only": bool(settings.get("report_only")),
        "tests": tests,
        "totals": totals,
        "crashed": list(session.crashed),
    }
