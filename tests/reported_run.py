"""Run a pytester project in a subprocess with a JSON report and count what reached a fake server:
the shared harness of the gate tests that compare fixed, sequential, dry and budget-stopped runs."""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from pytest_judgerel.report.schema import validate_report


class ReportedRun(NamedTuple):
    result: Any
    """pytester's RunResult."""
    upstream: int
    """Requests the fake server received during the run."""
    records: dict[str, list[dict[str, Any]]]
    """Each test's records of the asked kinds, by test name."""
    report: dict[str, Any]
    """The whole JSON report (validated against its schema)."""


def run_reported(pytester: Any, server: Any, *args: str, name: str, kinds: tuple[str, ...],
                 html: bool = False) -> ReportedRun:
    """``pytest -p no:cacheprovider --judgerel-json=<name>.json [--judgerel-html=<name>.html] *args``."""
    before = server.requests
    extra = (f"--judgerel-html={name}.html",) if html else ()
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", f"--judgerel-json={name}.json", *extra, *args)
    report = json.loads((pytester.path / f"{name}.json").read_text())
    validate_report(report)
    records = {t["nodeid"].split("::")[-1]: [r for r in t["records"] if r.get("kind") in kinds]
               for t in report["tests"]}
    return ReportedRun(result, server.requests - before, records, report)
