"""Validation of judgerel markers at collection, and parametrization by marker.

How several scales work (a decision, documented in docs/pytest.md):

* a test that requests the ``scale`` fixture runs once per scale named in
  ``@pytest.mark.scale(...)`` (ids ``[0-5]``, ``[0-10]``...): per-scale gates;
* a test that does not request ``scale`` runs once and receives every scale as
  ``judge.scales``; ``judge.rate_scales(items)`` rates on all of them, which is
  what a cross-scale consistency test needs.

``@pytest.mark.patients(n=..., seed=..., severity=...)`` parametrizes a test that
requests ``patient`` over sampled MindEval profiles.
"""

from __future__ import annotations

import difflib
import math
from typing import Any, Iterator

import pytest

from .options import CONSTRAIN_MODES

JUDGE_KWARGS = {
    "model": str,
    "template": str,
    "temperature": (int, float),
    "max_tokens": int,
    "seed": int,
    "system": str,
    "axes": (list, tuple),
    "api_base": str,
    "namespace": str,
    "reask": bool,
    "top_p": (int, float),
    "constrain": str,
}
PATIENT_KWARGS = {"n": int, "seed": int, "severity": (str, type(None)), "turns": int, "variant": (str, type(None))}
PATIENT_VARIANTS = ("default", "no_format", "role_only")  # seed 004 Figures 7, 8, 9
SEVERITIES = ("severe", "non_severe", "not_severe")  # "not_severe": accepted alias


def _where(item: pytest.Item, mark: Any) -> str:
    return f"{item.nodeid}: @pytest.mark.{mark.name}"


def _kwargs_errors(item: pytest.Item, mark: Any, spec: dict[str, Any]) -> Iterator[str]:
    if mark.args:
        yield f"{_where(item, mark)} takes keyword arguments only, got positional {mark.args!r}"
    for key, value in mark.kwargs.items():
        if key not in spec:
            close = difflib.get_close_matches(key, spec, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else f"; allowed: {', '.join(sorted(spec))}"
            yield f"{_where(item, mark)} got unknown argument {key!r}{hint}"
            continue
        want = spec[key]
        if value is None and key not in ("severity", "variant"):
            continue
        if isinstance(value, bool) and want is not bool:
            yield f"{_where(item, mark)}: {key}={value!r} must be {_tname(want)}"
        elif not isinstance(value, want):
            yield f"{_where(item, mark)}: {key}={value!r} must be {_tname(want)}"


def _tname(t: Any) -> str:
    if isinstance(t, tuple):
        return " or ".join(x.__name__ for x in t if x is not type(None))
    return t.__name__


def validate_item(item: pytest.Item) -> list[str]:
    """Every problem with the judgerel markers of one test, as usage-error lines."""
    errors: list[str] = []
    for mark in item.iter_markers("judge"):
        errors += list(_kwargs_errors(item, mark, JUDGE_KWARGS))
        t = mark.kwargs.get("temperature")
        if isinstance(t, (int, float)) and not isinstance(t, bool) and not (0 <= t <= 2 and math.isfinite(t)):
            errors.append(f"{_where(item, mark)}: temperature={t!r} must be within [0, 2]")
        mt = mark.kwargs.get("max_tokens")
        if isinstance(mt, int) and not isinstance(mt, bool) and mt < 1:
            errors.append(f"{_where(item, mark)}: max_tokens={mt!r} must be >= 1")
        c = mark.kwargs.get("constrain")
        if isinstance(c, str) and c not in CONSTRAIN_MODES:
            errors.append(f"{_where(item, mark)}: constrain={c!r} must be one of {', '.join(CONSTRAIN_MODES)}")
    for mark in item.iter_markers("scale"):
        if mark.kwargs:
            errors.append(f"{_where(item, mark)} takes scale names only, got {sorted(mark.kwargs)}")
        if not mark.args:
            errors.append(f"{_where(item, mark)} needs at least one scale, e.g. scale('0-5', '0-10')")
        from .errors import ScaleError
        from .scales import Scale

        for arg in mark.args:
            try:
                Scale.parse(arg)
            except ScaleError as exc:
                errors.append(f"{_where(item, mark)}: {exc}")
        if len(set(map(str, mark.args))) != len(mark.args):
            errors.append(f"{_where(item, mark)}: duplicate scale in {mark.args!r}")
    for mark in item.iter_markers("axis"):
        if len(mark.args) != 1 or mark.kwargs or not isinstance(mark.args[0], str) or not mark.args[0].strip():
            errors.append(f"{_where(item, mark)} takes exactly one non-empty axis name, e.g. axis('coherence')")
    for mark in item.iter_markers("repeats"):
        ok = len(mark.args) == 1 and not mark.kwargs and isinstance(mark.args[0], int) \
            and not isinstance(mark.args[0], bool) and mark.args[0] >= 1
        if not ok:
            errors.append(f"{_where(item, mark)} takes one integer >= 1, got {mark.args!r} {mark.kwargs or ''}".rstrip())
    for mark in item.iter_markers("judge_panel"):
        if mark.kwargs or not mark.args or not all(isinstance(m, str) and m for m in mark.args):
            errors.append(f"{_where(item, mark)} takes one or more model names, e.g. judge_panel('a/m1', 'b/m2')")
    for mark in item.iter_markers("patients"):
        errors += list(_kwargs_errors(item, mark, PATIENT_KWARGS))
        for key, low in (("n", 1), ("seed", 0), ("turns", 1)):
            if key in mark.kwargs:
                v = mark.kwargs[key]
                if v is None or isinstance(v, bool) or not isinstance(v, int) or v < low:
                    errors.append(f"{_where(item, mark)}: {key}={v!r} must be an integer >= {low}")
        sev = mark.kwargs.get("severity")
        if isinstance(sev, str) and sev not in SEVERITIES:
            errors.append(f"{_where(item, mark)}: severity={sev!r} must be one of {SEVERITIES} or None")
        turns = mark.kwargs.get("turns")
        if isinstance(turns, int) and not isinstance(turns, bool) and turns >= 1 and (turns < 2 or turns % 2):
            errors.append(f"{_where(item, mark)}: turns={turns!r} must be an even number >= 2 "
                          "(clinician and patient alternate after the patient's opening)")
        variant = mark.kwargs.get("variant")
        if isinstance(variant, str) and variant not in PATIENT_VARIANTS:
            errors.append(f"{_where(item, mark)}: variant={variant!r} must be one of {PATIENT_VARIANTS} "
                          "or None (the full prompt of Figure 7)")
    return errors


def marker_scales(node: Any) -> list[str]:
    """Scale names of the closest ``scale`` marker (empty when none)."""
    mark = node.get_closest_marker("scale")
    return [str(a) for a in mark.args] if mark else []


def parametrize(metafunc: pytest.Metafunc) -> None:
    """Per-scale and per-patient parametrization (see module docstring)."""
    fixtures = metafunc.fixturenames
    if "scale" in fixtures:
        mark = metafunc.definition.get_closest_marker("scale")
        if mark and mark.args and not _already(metafunc, "scale"):
            from .errors import ScaleError
            from .scales import Scale

            try:
                scales = [Scale.parse(a) for a in mark.args]
            except ScaleError:
                return  # validate_item reports it as a usage error that names the test
            if len({s.name for s in scales}) != len(scales):
                return  # a duplicate scale: reported by validate_item too
            metafunc.parametrize("scale", scales, ids=[s.name for s in scales])
    if "patient" in fixtures:
        mark = metafunc.definition.get_closest_marker("patients")
        if mark is not None and not _already(metafunc, "patient"):
            bad = list(_kwargs_errors(metafunc.definition, mark, PATIENT_KWARGS))
            if bad:
                return  # reported as a usage error by validate_item
            from .mindeval.profiles import sample_profiles

            n = mark.kwargs.get("n", 5)
            seed = mark.kwargs.get("seed", 0)
            severity = mark.kwargs.get("severity")
            profiles = sample_profiles(n, seed=seed, severity=severity)
            metafunc.parametrize("patient", profiles, ids=[f"patient{i}" for i in range(len(profiles))])


def _already(metafunc: pytest.Metafunc, name: str) -> bool:
    return any(name in c.params for c in getattr(metafunc, "_calls", []))
