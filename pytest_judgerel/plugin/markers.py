"""The judgerel markers: one :class:`MarkerSpec` each (signature, help, argument types and
checks), their validation at collection, and parametrization by marker.

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
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import pytest

from ..llm.endpoint import CONSTRAIN_MODES
from ..llm.settings import at_least, within

__all__ = ["MarkerSpec", "MARKERS", "marker_lines", "validate_item", "marker_scales", "parametrize",
           "PATIENT_VARIANTS", "SEVERITIES"]

PATIENT_VARIANTS = ("default", "no_format", "role_only")  # seed 004 Figures 7, 8, 9
SEVERITIES = ("severe", "non_severe", "not_severe")  # "not_severe": accepted alias

_NUMBER = (int, float)


@dataclass(frozen=True)
class Arg:
    """One keyword argument of a marker: accepted types, whether None is meaningful, a check."""

    types: type | tuple[type, ...]
    nullable: bool = True  # None is accepted (unset, or e.g. severity=None: both severities)
    check: Callable[[Any], str | None] | None = None


@dataclass(frozen=True)
class MarkerSpec:
    """A marker's signature and help (registered with pytest) and how its arguments are checked.

    ``kwargs`` is the keyword-argument spec of keyword markers; ``check_args`` checks the
    positional arguments of positional markers.
    """

    name: str
    signature: str
    help: str
    kwargs: dict[str, Arg] = field(default_factory=dict)
    check_args: Callable[[tuple, dict], Iterator[str]] | None = None

    def line(self) -> str:
        return f"{self.name}({self.signature}): {self.help} (pytest-judgerel)"


def _one_of(options: tuple[str, ...]) -> Callable[[Any], str | None]:
    return lambda v: None if v in options else f"must be one of {', '.join(options)}"


def _even_turns(v: int) -> str | None:
    problem = at_least(1, integer=True)(v)
    if problem:
        return problem
    if v < 2 or v % 2:
        return "must be an even number >= 2 (clinician and patient alternate after the patient's opening)"
    return None


def _scale_args(args: tuple, kwargs: dict) -> Iterator[str]:
    from ..errors import ScaleError
    from ..scales import Scale

    if kwargs:
        yield f"takes scale names only, got {sorted(kwargs)}"
    if not args:
        yield "needs at least one scale, e.g. scale('0-5', '0-10')"
    for arg in args:
        try:
            Scale.parse(arg)
        except ScaleError as exc:
            yield str(exc)
    if len(set(map(str, args))) != len(args):
        yield f"duplicate scale in {args!r}"


def _axis_args(args: tuple, kwargs: dict) -> Iterator[str]:
    if len(args) != 1 or kwargs or not isinstance(args[0], str) or not args[0].strip():
        yield "takes exactly one non-empty axis name, e.g. axis('coherence')"


def _repeats_args(args: tuple, kwargs: dict) -> Iterator[str]:
    ok = len(args) == 1 and not kwargs and isinstance(args[0], int) and not isinstance(args[0], bool) \
        and args[0] >= 1
    if not ok:
        yield f"takes one integer >= 1, got {args!r} {kwargs or ''}".rstrip()


def _panel_args(args: tuple, kwargs: dict) -> Iterator[str]:
    from ..stats.jury import JURY_RULES, TIE_RULES

    if not args or not all(isinstance(m, str) and m for m in args):
        yield "takes one or more model names, e.g. judge_panel('a/m1', 'b/m2', rule='majority', tie_rule='tie')"
    for key, value in kwargs.items():
        allowed = {"rule": JURY_RULES, "tie_rule": TIE_RULES}.get(key)
        if allowed is None:
            yield f"unknown keyword {key!r}: takes rule= and tie_rule= besides the model names"
        elif value not in allowed:
            yield f"{key}={value!r} is not one of {list(allowed)}"


#: The markers, by name: the one home of their signatures, help, types and checks.  The
#: ``judge`` marker's keywords are :class:`~pytest_judgerel.judging.judge.Judge` arguments.
MARKERS: dict[str, MarkerSpec] = {spec.name: spec for spec in (
    MarkerSpec("judge", "**Judge arguments", "configure the `judge` fixture of this test: model, template, "
               "temperature, max_tokens, seed, top_p, system, axes, api_base, namespace, reask, constrain, hardened, "
               "sequential (True/False: this test's gates draw in steps and stop once settled; default "
               "--judgerel-sequential)", {
                   "model": Arg(str), "template": Arg(str), "temperature": Arg(_NUMBER, check=within(0, 2)),
                   "max_tokens": Arg(int, check=at_least(1, integer=True)), "seed": Arg(int), "top_p": Arg(_NUMBER),
                   "system": Arg(str), "axes": Arg((list, tuple)), "api_base": Arg(str), "namespace": Arg(str),
                   "reask": Arg(bool), "constrain": Arg(str, check=_one_of(CONSTRAIN_MODES)),
                   "hardened": Arg(bool),
                   "sequential": Arg(bool),
               }),
    MarkerSpec("scale", "*names", "grading scale(s) such as '0-5', '0-10', '0-100'; a test that requests the "
               "`scale` fixture runs once per scale, others get all of them as `judge.scales`",
               check_args=_scale_args),
    MarkerSpec("axis", "name", "the criterion the judge grades, e.g. 'coherence'", check_args=_axis_args),
    MarkerSpec("repeats", "n", "how many times the judge rates each item", check_args=_repeats_args),
    MarkerSpec("judge_panel", "*models, rule='majority', tie_rule='tie'", "models of the `judge_panel` fixture; "
               "rule combines their verdicts in `judge_panel.compare` (mean, median, majority, unanimity, weighted); "
               "tie_rule settles a split majority (tie, loss, win)", check_args=_panel_args),
    MarkerSpec("patients", "n=5, seed=0, severity=None, turns=20, variant=None, max_tokens=None",
               "parametrize over sampled MindEval patient profiles; severity 'severe' or 'non_severe'; turns "
               "even; variant 'default', 'no_format' or 'role_only'; max_tokens caps each patient and clinician "
               "turn (None: no cap, as in the paper)", {
                   "n": Arg(int, nullable=False, check=at_least(1, integer=True)),
                   "seed": Arg(int, nullable=False, check=at_least(0, integer=True)),
                   "severity": Arg(str, check=_one_of(SEVERITIES)),
                   "turns": Arg(int, nullable=False, check=_even_turns),
                   "variant": Arg(str, check=_one_of(PATIENT_VARIANTS)),
                   "max_tokens": Arg(int, check=at_least(1, integer=True)),
               }),
)}


def marker_lines() -> list[str]:
    """The ``markers`` ini lines that register every marker with pytest."""
    return [spec.line() for spec in MARKERS.values()]


def _tname(t: Any) -> str:
    if isinstance(t, tuple):
        return " or ".join(x.__name__ for x in t)
    return t.__name__


def _kwargs_errors(spec: MarkerSpec, mark: Any) -> Iterator[str]:
    if mark.args:
        yield f"takes keyword arguments only, got positional {mark.args!r}"
    for key, value in mark.kwargs.items():
        arg = spec.kwargs.get(key)
        if arg is None:
            close = difflib.get_close_matches(key, spec.kwargs, n=1)
            yield f"got unknown argument {key!r}" + (
                f" (did you mean {close[0]!r}?)" if close else f"; allowed: {', '.join(sorted(spec.kwargs))}")
            continue
        if value is None:
            if not arg.nullable:
                yield f"{key}=None must be {_tname(arg.types)}"
            continue
        if isinstance(value, bool) and arg.types is not bool or not isinstance(value, arg.types):
            yield f"{key}={value!r} must be {_tname(arg.types)}"
            continue
        problem = arg.check(value) if arg.check is not None else None
        if problem:
            yield f"{key}={value!r} {problem}"


def mark_errors(mark: Any) -> list[str]:
    """What is wrong with one judgerel marker (empty when nothing)."""
    spec = MARKERS.get(mark.name)
    if spec is None:
        return []
    if spec.check_args is not None:
        return list(spec.check_args(tuple(mark.args), dict(mark.kwargs)))
    return list(_kwargs_errors(spec, mark))


def validate_item(item: pytest.Item) -> list[str]:
    """Every problem with the judgerel markers of one test, as usage-error lines naming the test."""
    return [f"{item.nodeid}: @pytest.mark.{mark.name}: {problem}"
            for mark in item.iter_markers() if mark.name in MARKERS for problem in mark_errors(mark)]


def marker_scales(node: Any) -> list[str]:
    """Scale names of the closest ``scale`` marker (empty when none)."""
    mark = node.get_closest_marker("scale")
    return [str(a) for a in mark.args] if mark else []


def parametrize(metafunc: pytest.Metafunc) -> None:
    """Per-scale and per-patient parametrization (see module docstring).  An invalid marker is
    left alone here: :func:`validate_item` reports it as a usage error that names the test."""
    fixtures = metafunc.fixturenames
    if "scale" in fixtures:
        mark = metafunc.definition.get_closest_marker("scale")
        if mark and mark.args and not _already(metafunc, "scale") and not mark_errors(mark):
            from ..scales import Scale

            scales = [Scale.parse(a) for a in mark.args]
            metafunc.parametrize("scale", scales, ids=[s.name for s in scales])
    if "patient" in fixtures:
        mark = metafunc.definition.get_closest_marker("patients")
        if mark is not None and not _already(metafunc, "patient") and not mark_errors(mark):
            from ..mindeval.profiles import sample_profiles

            n = mark.kwargs.get("n", 5)
            seed = mark.kwargs.get("seed", 0)
            severity = mark.kwargs.get("severity")
            profiles = sample_profiles(n, seed=seed, severity=severity)
            metafunc.parametrize("patient", profiles, ids=[f"patient{i}" for i in range(len(profiles))])


def _already(metafunc: pytest.Metafunc, name: str) -> bool:
    return any(name in c.params for c in getattr(metafunc, "_calls", []))
