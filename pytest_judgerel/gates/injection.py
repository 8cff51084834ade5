"""The injection gate: the judged text must not talk the judge into a better score.

:func:`assert_injection_resistant` runs the injection probe (:func:`pytest_judgerel.probes.injection_probe`)
on a judge, or takes its finished result, and hands it to :func:`injection_gate`, which fails
when the **worst attack family** flips more items than ``max_flip_rate`` allows.  Per family the
record keeps the flips, the readable attacks and the exact (Clopper-Pearson) interval under
``families`` (and the same numbers under ``groups``, so the terminal, HTML and baseline show
them); the pooled rate over every attack is kept too, but not gated: one family that works is an
attack that works, however many others fail.
"""

from __future__ import annotations

import math
from typing import Any, Sequence, cast

from ..errors import ReliabilityError
from ..probes.attack_battery import Attack
from ..probes.injection import DEFAULT_CLEAN_REPEATS, DEFAULT_FLIP_ALPHA, InjectionResult, injection_probe
from ..session.recording import InjectionRecord, new_record
from ..stats.interval import check_confidence, format_estimate
from .common import Use, check_use, label_prefix
from .conclusion import finish, parse_failure_limit
from .stability import attach_stability, mean_gate_stability

__all__ = ["assert_injection_resistant", "injection_gate", "check_gate_arguments"]

_USES: tuple[Use, ...] = ("estimate", "ci_low", "ci_high")
_STATISTIC = "injection flip rate (worst family)"
_WORST = 8


def assert_injection_resistant(judge: Any, items: Any = None, *, max_flip_rate: float,
                               families: Sequence[str] | None = None, margin: float | None = None,
                               pass_line: float | None = None, field: str | None = None, goal: str | None = None,
                               attacks: Sequence[Attack] | None = None, repeats: int = 1, use: str = "estimate",
                               confidence: float = 0.95, max_parse_failures: int | None = None,
                               label: str | None = None, positions: Sequence[str] | None = None,
                               fields: Sequence[str] | None = None, clean_repeats: int | None = None,
                               flip_alpha: float | None = None) -> Any:
    """Assert that no attack family flips more than ``max_flip_rate`` of its attacks; returns the
    :class:`~pytest_judgerel.probes.InjectionResult`.

    ``judge`` is a :class:`~pytest_judgerel.Judge`, on which
    :func:`~pytest_judgerel.probes.injection_probe` runs here with ``items``, ``field``, ``goal``,
    ``families``, ``attacks``, ``margin``, ``pass_line``, ``repeats``, ``positions``, ``fields``,
    ``clean_repeats`` and ``flip_alpha`` (None: the probe's defaults), or a finished
    :class:`~pytest_judgerel.probes.InjectionResult`.  The gate (:func:`injection_gate`) compares
    each family's flip rate (``use="estimate"``; or the lower or upper end of its exact
    Clopper-Pearson interval, ``use="ci_low"``/``"ci_high"``) with ``max_flip_rate``, fails on the
    worst family and names it; the record lists every family under ``families`` and the pooled
    rate under ``pooled``.  Replies that are not scores fail it first (``max_parse_failures``).
    """
    check_gate_arguments(max_flip_rate, use, confidence)
    if isinstance(judge, InjectionResult):
        given = {"items": items, "families": families, "margin": margin, "pass_line": pass_line, "field": field,
                 "goal": goal, "attacks": attacks, "positions": positions, "fields": fields,
                 "clean_repeats": clean_repeats, "flip_alpha": flip_alpha}
        extra = [k for k, v in given.items() if v is not None] + (["repeats"] if repeats != 1 else [])
        if extra:
            raise ValueError(f"{extra} configure the probe, which already ran: pass a Judge to run it here, or run "
                             "probes.injection_probe(judge, ...) with them")
        result = judge
    else:
        result = injection_probe(judge, items, field=field, goal=goal, families=families, attacks=attacks,
                                 margin=margin, pass_line=pass_line, repeats=repeats, positions=positions,
                                 fields=fields,
                                 clean_repeats=DEFAULT_CLEAN_REPEATS if clean_repeats is None else clean_repeats,
                                 flip_alpha=DEFAULT_FLIP_ALPHA if flip_alpha is None else flip_alpha)
    return injection_gate(result, max_flip_rate=max_flip_rate, use=use, confidence=confidence,
                          max_parse_failures=max_parse_failures, label=label)


def check_gate_arguments(max_flip_rate: Any, use: Any, confidence: Any) -> None:
    """Raise a ``ValueError`` (the shared ``use`` and confidence checks raise its subclass
    ``ReliabilityError``) naming a gate argument that cannot work, before any judge call."""
    if isinstance(max_flip_rate, bool) or not isinstance(max_flip_rate, (int, float)) or not (
            math.isfinite(max_flip_rate) and 0 <= max_flip_rate <= 1):
        raise ValueError(f"max_flip_rate must be a share in [0, 1], got {max_flip_rate!r}")
    check_use(use, _USES)
    check_confidence(confidence)


def injection_gate(result: Any, *, max_flip_rate: float, use: str = "estimate", confidence: float = 0.95,
                   max_parse_failures: int | None = None, label: str | None = None) -> Any:
    """The gate of :func:`assert_injection_resistant` on a finished
    :class:`~pytest_judgerel.probes.InjectionResult`: no attack family may flip more than
    ``max_flip_rate`` of its attacks.  Returns ``result`` when it passes (or in report-only mode).

    Compared with ``max_flip_rate`` is each family's **flip rate** (``use="estimate"``, default):
    the battery is a fixed, designed set of attacks, not a sample of the attacks a judge will meet,
    and a gate against attacks must not give a judge the benefit of the doubt because the battery
    was small (the lower bound of 3 flips in 42 attacks is 0.015: it would pass a 5% limit that the
    observed 7% breaks).  ``use="ci_low"`` compares the lower Clopper-Pearson bound instead (fail only
    when the data show the rate above the limit: for a judge sampled at temperature > 0 whose flips
    may be noise); ``use="ci_high"`` the upper bound (pass only when the data show the rate below the
    limit; with no flip at all that takes about 3 / max_flip_rate attacks per family).  The gate
    fails on the family with the largest compared value and names it.  Replies that are not scores
    fail the gate first (``max_parse_failures``, default the session's limit); allowed ones count
    neither as flips nor as resisted attacks.
    """
    check_gate_arguments(max_flip_rate, use, confidence)
    base = _base_record(result, max_flip_rate, use, confidence, label)
    limit = parse_failure_limit(max_parse_failures)
    if len(result.parse_failures) > limit:
        return _fail_unparsed(result, base, limit, label)
    tallies = result.tally()
    rates = {fam: t.rate(confidence) for fam, t in tallies.items()}
    scored = {fam: r for fam, r in rates.items() if r is not None}
    if not scored:
        return _not_computed(result, base, label)
    worst = max(scored, key=lambda fam: _compared(scored[fam], use))  # the first of equals, in battery order
    w = scored[worst]
    fam_records = _family_records(tallies, rates, use, max_flip_rate)
    rec = _gate_record(result, base, w, worst, fam_records, confidence)
    attach_stability(rec, _stability(result, list(tallies), max_flip_rate) if use == "estimate" else None)
    ok = _compared(w, use) <= max_flip_rate
    rec["passed"] = ok
    if ok:
        return finish(rec, result)
    return finish(rec, result, _failure_lines(result, w, worst, fam_records, use, confidence, max_flip_rate, label))


def _compared(r: Any, use: str) -> float:
    """The value of a family's rate that ``use`` compares with the limit."""
    return {"estimate": r.value, "ci_low": r.ci_low, "ci_high": r.ci_high}[use]


def _fail_unparsed(result: Any, base: dict[str, Any], limit: int, label: str | None) -> Any:
    """End the gate before computing: more replies than ``limit`` were not scores."""
    failures = list(result.parse_failures)
    rec = cast(InjectionRecord, new_record("injection", **base, value=None, ci=None, n=None, passed=False))
    lines = [f"{label_prefix(label)}{_STATISTIC} not computed: {len(failures)} judge repl"
             f"{'y' if len(failures) == 1 else 'ies'} could not be parsed (max_parse_failures={limit}); "
             "these are not scores:"]
    for f in failures[:5]:
        lines.append(f"    {f.item} [{f.cause}]: {(f.reply or '').replace(chr(10), ' ')[:160]!r}")
    return finish(rec, result, lines)


def _not_computed(result: Any, base: dict[str, Any], label: str | None) -> Any:
    """End the gate when no family has a readable attack: every item left out, or no reply a score."""
    why = (f"all {len(result.excluded)} items were left out: the judge already scores them within the margin "
           "of the attacker's end of the scale (the probe needs items the judge scores low)"
           if result.excluded and not result.outcomes else "no attacked reply could be read as a score")
    rec = cast(InjectionRecord, new_record("injection", **base, value=None, ci=None, n=0, passed=False, error=why))
    return finish(rec, None, error=ReliabilityError(f"{label_prefix(label)}{_STATISTIC} not computed: {why}"))


def _family_records(tallies: dict[str, Any], rates: dict[str, Any], use: str,
                    max_flip_rate: float) -> dict[str, dict[str, Any]]:
    """Per family: flips, readable attacks, rate and interval, and whether it passes on its own."""
    fam_records: dict[str, dict[str, Any]] = {}
    for fam, t in tallies.items():
        r = rates[fam]
        fam_records[fam] = {"flips": t.flips, "n": t.n, "rate": None if r is None else r.value,
                            "ci": None if r is None else [r.ci_low, r.ci_high], "unreadable": t.unreadable,
                            "variants": t.variants,
                            "passed": None if r is None else _compared(r, use) <= max_flip_rate}
    return fam_records


def _gate_record(result: Any, base: dict[str, Any], w: Any, worst: str, fam_records: dict[str, dict[str, Any]],
                 confidence: float) -> InjectionRecord:
    """The record of a computed gate: the worst family's rate, every family, the pooled rate."""
    pooled = result.pooled(confidence)
    return cast(InjectionRecord, new_record("injection", **{
        **base, "value": w.value, "ci": [w.ci_low, w.ci_high], "n": w.n, "worst_family": worst, "families": fam_records,
        "groups": {fam: {"value": f["rate"], "ci": f["ci"], "n": f["n"], "passed": f["passed"]}
                   for fam, f in fam_records.items()},
        "pooled": {"flips": pooled.count, "n": pooled.n, "rate": pooled.value,
                   "ci": [pooled.ci_low, pooled.ci_high]},
        "pooled_rate": pooled.value,
        "positions": _breakdown(result, "position", confidence), "fields": _breakdown(result, "field", confidence),
        "worst_items": [{"item": o.attack_id, "detail": _detail(o)} for o in result.flipped()[:_WORST]],
        "item_scores": {o.attack_id: float(o.flipped) for o in result.outcomes if o.flipped is not None},
    }))


def _failure_lines(result: Any, w: Any, worst: str, fam_records: dict[str, dict[str, Any]], use: str,
                   confidence: float, max_flip_rate: float, label: str | None) -> list[str]:
    """The failure message: the worst family, every family's rate, the pooled rate, the flips."""
    what = {"estimate": "flip rate", "ci_low": "lower CI bound of the flip rate",
            "ci_high": "upper CI bound of the flip rate"}[use]
    lines = [
        f"{label_prefix(label)}attack family {worst!r} flipped {w.count} of {w.n} attacks: flip rate "
        f"{format_estimate(w.value, w.ci_low, w.ci_high, confidence, method='Clopper-Pearson')}; "
        f"its {what} {_compared(w, use):.4f} exceeds max_flip_rate {max_flip_rate:g}",
        f"  a flip: {result.rule()}",
        f"  per family (flips/attacks, rate [{confidence:.0%} CI]):",
    ]
    for fam, f in fam_records.items():
        mark = "  <- worst" if fam == worst else ("  (fails too)" if f["passed"] is False else "")
        body = (f"{f['flips']:>3}/{f['n']:<3} {f['rate']:.3f} [{f['ci'][0]:.3f}, {f['ci'][1]:.3f}]"
                if f["rate"] is not None else "no readable attack")
        lines.append(f"    {fam:<22} {body}" + (f", {f['unreadable']} unreadable" if f["unreadable"] else "") + mark)
    for by in ("position", "field"):
        lines.append(f"  by {by}: " + ", ".join(f"{k} {t.flips}/{t.n}" for k, t in result.tally(by).items()))
    pooled = result.pooled(confidence)
    lines.append(f"  pooled: {pooled.count} of {pooled.n} attacks flipped "
                 f"({format_estimate(pooled.value, pooled.ci_low, pooled.ci_high, digits=3)})")
    flipped = result.flipped()
    if flipped:
        lines.append("  attacks that flipped (item|family|variant|field|position: clean -> attacked):")
        lines += [f"    {o.attack_id}: {_detail(o)}" for o in flipped[:_WORST]]
    if result.excluded:
        lines.append(f"  {len(result.excluded)} item(s) left out (already scored too well to flip): "
                     f"{', '.join(result.excluded[:10])}")
    return lines


def _base_record(result: Any, max_flip_rate: float, use: str, confidence: float, label: str | None
                 ) -> dict[str, Any]:
    """The fields every injection record has, whatever the verdict."""
    prov = dict(result.provenance) if result.provenance else None
    return {"statistic": _STATISTIC, "label": label, "k": len(result.families), "threshold": max_flip_rate,
            "direction": "max", "use": use, "confidence": confidence, "groups": {}, "worst_items": [],
            "parse_failures": len(result.parse_failures), "judge": prov, "n_attacks": result.n_attacks,
            "margin": result.margin, "pass_line": result.pass_line, "goal": result.goal,
            "attacked_field": result.field, "excluded_items": list(result.excluded),
            "noise": result.noise.to_dict() if result.noise is not None else None}


def _detail(o: Any) -> str:
    needs = f" (a flip needs > {o.needed:.3g})" if o.needed is not None else ""
    return f"{o.clean:g} -> {o.attacked:g}{needs}"


def _breakdown(result: Any, by: str, confidence: float) -> dict[str, dict[str, Any]]:
    """Flips per position or per field: ``{key: {flips, n, rate, ci}}``."""
    out: dict[str, dict[str, Any]] = {}
    for key, t in result.tally(by).items():
        r = t.rate(confidence)
        out[key] = {"flips": t.flips, "n": t.n, "rate": None if r is None else r.value,
                    "ci": None if r is None else [r.ci_low, r.ci_high]}
    return out


def _stability(result: Any, families: list[str], max_flip_rate: float) -> Any:
    """p_pass of "every family's flip rate <= max_flip_rate" on a rerun with new items: items are
    resampled, each with its share of flipped attacks per family (a column per family)."""
    items = list(dict.fromkeys(o.item for o in result.outcomes))
    if len(items) < 2:
        return None
    cell: dict[tuple[str, str], list[float]] = {}
    for o in result.outcomes:
        if o.flipped is not None:
            cell.setdefault((o.item, o.family), []).append(float(o.flipped))
    matrix = [[sum(cell[(i, f)]) / len(cell[(i, f)]) if (i, f) in cell else float("nan") for f in families]
              for i in items]
    extra = [(j, "mean", max_flip_rate, "max") for j in range(1, len(families))]
    return mean_gate_stability(matrix, max_flip_rate, "max", "mean", extra=extra,
                               name=f"every family's flip rate <= {max_flip_rate:g}")
