"""Per-test sink for metric records.

Assertion helpers and judges call :func:`record`; the plugin points the sink at
the running test's list before the test runs and attaches that list to the test
report afterwards (see ``plugin.pytest_runtest_makereport``).  Outside pytest
records go to :data:`_orphans` so library users can still read them.  A plain
module global (not a ContextVar) because judge calls may record from worker
threads of the same test.
"""

from __future__ import annotations

import math
import threading
from typing import Any

_lock = threading.Lock()
_sink: list[dict[str, Any]] | None = None
_orphans: list[dict[str, Any]] = []
_report_only = False


def record(rec: dict[str, Any]) -> None:
    """Store one JSON-able metric record for the running test."""
    clean = _jsonable(rec)
    with _lock:
        (_sink if _sink is not None else _orphans).append(clean)


def set_sink(sink: list[dict[str, Any]] | None) -> None:
    global _sink
    with _lock:
        _sink = sink


def current_sink() -> list[dict[str, Any]] | None:
    """The list records currently go to (None outside a test)."""
    return _sink


def current() -> list[dict[str, Any]]:
    """Records of the running test so far (a copy)."""
    with _lock:
        return list(_sink if _sink is not None else _orphans)


_defaults: dict[str, Any] = {}


def set_defaults(**values: Any) -> None:
    """Session-wide defaults of assertion parameters (set by the plugin from options)."""
    _defaults.update(values)


def default(name: str, fallback: Any) -> Any:
    return _defaults.get(name, fallback)


def set_report_only(flag: bool) -> None:
    """In report-only mode assertion helpers record but never fail."""
    global _report_only
    _report_only = bool(flag)


def report_only() -> bool:
    return _report_only


def _jsonable(value: Any) -> Any:
    """Plain JSON types only; non-finite floats become None (never a comparable NaN)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return int(value)
    try:
        f = float(value)
    except (TypeError, ValueError):
        return str(value)
    return f if math.isfinite(f) else None
