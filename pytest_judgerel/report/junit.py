"""Flat JUnit-XML properties for a test's metric records.

pytest's junitxml writes every ``(name, value)`` of ``TestReport.user_properties``
as ``<property name=... value=str(value)/>``.  A nested dict would become an
unreadable Python repr, so the plugin adds these flat string pairs instead:
``judgerel.<metric>`` = value for every metric point (see :mod:`.metrics` for the
names), plus ``.ci``, ``.threshold``, ``.verdict`` and ``.p_pass`` (verdict stability) for each
record's main statistic.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from .metrics import metric_points

PREFIX = "judgerel."


def _g(v: float | None) -> str:
    return "undefined" if v is None else f"{v:.6g}"


def junit_properties(records: Iterable[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """``[(name, text), ...]`` to append to ``TestReport.user_properties`` (strings only, stable order)."""
    out: list[tuple[str, str]] = []
    for p in metric_points(list(records)):
        name = PREFIX + p.name
        out.append((name, _g(p.value)))
        if p.role != "main":
            continue
        if p.ci is not None:
            out.append((name + ".ci", f"[{_g(p.ci[0])}, {_g(p.ci[1])}]"))
        if p.threshold is not None:
            out.append((name + ".threshold", _g(p.threshold)))
        if p.passed is not None:
            out.append((name + ".verdict", "pass" if p.passed else "fail"))
        if p.p_pass is not None:
            out.append((name + ".p_pass", _g(p.p_pass)))
    return out
