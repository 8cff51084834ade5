"""The grading-scale study of seed 001 (Li et al. 2026), end to end.

For any judge models and any human-rated data sets it computes (section and table numbers of
seed 001):

* human panel reliability, ICC(A,1) and ICC(A,k), per benchmark, pooled, per scale and per rater
  subgroup (section 3.2; Tables 2, 3, 5, 14, 15); panels whose raters are not crossed use the
  one-way forms (:func:`pytest_judgerel.stats.icc_oneway`; the paper's panel is fully crossed);
* LLM panel reliability, models as raters, ICC(A,1) and ICC(A,L), on every item the judges
  scored (section 3.2: N is "the number of items scored by the LLMs"; Tables 2, 3, 14, 15);
* human-LLM agreement, ICC(A,1) on [human mean, judge mean] and nMAE (section 3.1 eqs. 4-5), for
  the panel mean (Tables 2, 4a) and each model (Table 4b), per benchmark, pooled, per scale, per
  rater subgroup (Table 5) and per sampling temperature (section 5.3, Table 6);
* inter-scale consistency per model and benchmark, jointly and pairwise (section 5.1, Table 1);
* the reliability illusion (section 5.2, Table 3), for the LLM panel and for agreement;
* the error analysis (section 5.4): items whose normalised absolute error exceeds 0.1.

Scores are compared on [0, 1], each side mapped by its own scale (section 4.3; within one scale
this changes no ICC and turns MAE into nMAE).  A missing judge score drops that item on that
scale only from the rows that need it (:data:`MISSING_POLICIES`; :attr:`StudyResult.dropped`
says where).  ``run_study`` makes the LLM calls through :class:`~pytest_judgerel.judging.judge.Judge`
(cached, concurrent; temperature 1 as in section 4.3); ``analyse`` takes ratings you already
have (:mod:`pytest_judgerel.study.release` loads the paper's own).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import ConfigError, RatingsError, ReliabilityError
from ..ratings import Ratings

ERROR_THRESHOLD = 0.1
"""Items whose |judge - human| / range exceeds this are listed (seed 001, section 5.4)."""

PANEL_MEAN = "LLM panel mean"
"""The ``model`` of an agreement row for the mean over the L judges (seed 001 section 3.2)."""

MISSING_POLICIES = ("scale", "row")
"""What a missing judge score removes from the agreement rows.  ``"scale"`` (default): the
item leaves every judge's agreement rows on that scale, so the judges of a scale are compared
on the same items (seed 001 does this: its Table 4b on 0-100 reproduces from the release only
without MT-Bench item 110, which one judge did not score).  ``"row"``: only the rows that use
the missing score lose it.  Either way the item stays in the human panels, in the other
scales and in the other judges' inter-scale consistency (the judge that lacks the score loses
it there), and :attr:`StudyResult.dropped` says so."""

ILLUSION_THRESHOLD = 0.75
"""Default threshold of the illusion checks: Koo & Li's "good" lower bound.  The paper
names no number; with 0.75 its own Table 3 flags exactly MT-Bench (0.632) and SummEval
(0.573) under a pooled LLM panel of 0.944.  The project's convention."""


@dataclass(frozen=True)
class PanelReliability:
    """ICC of a panel: ``single`` (one rater) and ``average`` (the panel mean).

    ``benchmark`` is None for a panel pooled over benchmarks.  ``forms`` names the two
    ICC forms; for a one-way panel the results are
    :class:`~pytest_judgerel.stats.OneWayICCResult` (with ``n0``).
    """

    benchmark: str | None
    single: Any
    average: Any
    forms: tuple[str, str]
    note: str = ""


@dataclass(frozen=True)
class AgreementRow:
    """Human-LLM agreement of one slice.

    ``model`` is a judge model or :data:`PANEL_MEAN` (the mean over the judges); a None
    ``benchmark`` means pooled over benchmarks, a None ``subgroup`` the whole human panel;
    ``temperature`` is set on the rows of a temperature ablation (seed 001 section 5.3).
    """

    model: str
    scale: str | None
    benchmark: str | None
    subgroup: str | None
    icc: float | None
    ci: tuple[float, float] | None
    nmae: float
    n: int
    note: str = ""
    temperature: float | None = None


@dataclass(frozen=True)
class Illusion:
    """A pooled statistic that passes the threshold while one benchmark falls below it.

    ``kind`` is ``"reliability"`` (LLM panel ICC(A,L), seed 001 section 5.2) or
    ``"agreement"`` (human-LLM ICC(A,1) of ``model``).
    """

    kind: str
    scale: str
    pooled: float
    group: str
    value: float
    threshold: float
    model: str | None = None

    def __str__(self) -> str:
        if self.kind == "reliability":
            return (f"reliability illusion (seed 001 section 5.2): LLM panel on {self.scale}: pooled ICC(A,L) "
                    f"{self.pooled:.3f} >= {self.threshold} but {self.group} has {self.value:.3f}")
        return (f"hidden weak agreement: {self.model} on {self.scale}: pooled human-LLM ICC(A,1) "
                f"{self.pooled:.3f} >= {self.threshold} but {self.group} has {self.value:.3f}")


@dataclass
class StudyResult:
    """Everything the study computed; ``summary()`` renders the paper's tables as text.

    ``human_panels`` and ``llm_panels`` are keyed by ``(benchmark, scale)``, benchmark None =
    pooled over benchmarks; a human panel's scale is None when one panel serves every scale.
    ``subgroup_panels`` is keyed by ``(benchmark, scale, subgroup)`` (e.g. ``"gender=Male"``).
    ``dropped`` lists the items left out of some rows because a score was missing, and why;
    ``skipped`` the analyses that could not run.
    """

    human_panels: dict[tuple[str | None, str | None], PanelReliability] = field(default_factory=dict)
    subgroup_panels: dict[tuple[str | None, str | None, str], PanelReliability] = field(default_factory=dict)
    llm_panels: dict[tuple[str | None, str], PanelReliability] = field(default_factory=dict)
    agreement: list[AgreementRow] = field(default_factory=list)
    temperature_agreement: list[AgreementRow] = field(default_factory=list)
    consistency: dict[tuple[str, str], Any] = field(default_factory=dict)
    reliability_illusions: list[Illusion] = field(default_factory=list)
    agreement_illusions: list[Illusion] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def agreement_for(self, model: str, scale: str | None = None, benchmark: str | None = None,
                      subgroup: str | None = None, temperature: float | None = None) -> AgreementRow:
        """The row of ``model`` (or :data:`PANEL_MEAN`); ``benchmark=None`` is the pooled row;
        ``temperature`` picks a row of the temperature ablation (the main run's rows have
        ``temperature=None``, whatever temperature it sampled at)."""
        rows = self.agreement if temperature is None else self.temperature_agreement
        for row in rows:
            if (row.model, row.scale, row.benchmark, row.subgroup, row.temperature) == (
                    model, scale, benchmark, subgroup, temperature):
                return row
        raise KeyError((model, scale, benchmark, subgroup, temperature))

    def human_panel(self, benchmark: str | None = None, scale: str | None = None) -> PanelReliability:
        """The human panel of ``benchmark`` (None: pooled) on ``scale`` (None: the panel that
        serves every scale when humans rated once)."""
        key = (benchmark, scale)
        if key not in self.human_panels and (benchmark, None) in self.human_panels:
            key = (benchmark, None)
        return self.human_panels[key]

    def summary(self) -> str:
        out = ["Human panel reliability"]
        for (b, s), p in self.human_panels.items():
            out.append(f"  {b or 'pooled'}{' ' + s if s else ''}: ICC({p.forms[0]}) {p.single.value:.3f}, "
                       f"ICC({p.forms[1]}) {p.average.value:.3f}" + (f"  ({p.note})" if p.note else ""))
        for (b, s, g), p in self.subgroup_panels.items():
            out.append(f"  {b or 'pooled'}{' ' + s if s else ''} {g}: ICC({p.forms[0]}) {p.single.value:.3f}, "
                       f"ICC({p.forms[1]}) {p.average.value:.3f}")
        if self.llm_panels:
            out.append("LLM panel reliability, models as raters: ICC(A,1), ICC(A,L)")
            for (b, s), p in self.llm_panels.items():
                out.append(f"  {b or 'pooled'} {s}: {p.single.value:.3f}, {p.average.value:.3f} "
                           f"[{p.average.ci_low:.3f}, {p.average.ci_high:.3f}]" + (f"  ({p.note})" if p.note else ""))
        for title, rows in (("Human-LLM agreement (ICC(A,1) of [human mean, judge mean]; nMAE)", self.agreement),
                            ("Temperature ablation (seed 001 section 5.3)", self.temperature_agreement)):
            if rows:
                out.append(title)
            for row in rows:
                where = " / ".join(x for x in (row.model, row.scale, row.benchmark or "pooled", row.subgroup,
                                               None if row.temperature is None else f"T={row.temperature:g}") if x)
                icc_txt = "n/a" if row.icc is None else f"{row.icc:.3f}"
                out.append(f"  {where}: ICC {icc_txt}, nMAE {row.nmae:.3f}, n={row.n}"
                           + (f" ({row.note})" if row.note else ""))
        if self.consistency:
            out.append("Inter-scale consistency, ICC(A,1) on [0, 1]-normalised scores")
            for (m, b), r in self.consistency.items():
                pairs = ", ".join(f"{a}~{c} {v.value:.3f}" for (a, c), v in r.pairwise.items())
                out.append(f"  {m} / {b}: joint {r.joint.value:.3f}; {pairs} (n={r.n_items})")
        out += [f"WARNING {i}" for i in self.reliability_illusions + self.agreement_illusions]
        if self.errors:
            out.append(f"{len(self.errors)} item judgement(s) with normalised error > {ERROR_THRESHOLD}")
        out += [f"dropped: {s}" for s in self.dropped]
        out += [f"skipped: {s}" for s in self.skipped]
        return "\n".join(out)


def human_panel_reliability(ratings: Ratings, benchmark: str | None = "") -> PanelReliability:
    """ICC(A,1)/ICC(A,k) of a complete human panel (seed 001 section 3.2).

    When raters did not all rate every item (SQuALITY: 3 of 4 reviewers; ConvAbuse: 2 to 6
    of 8 annotators), the design is not crossed: the one-way forms ICC(1,1)/ICC(1,k) are
    computed on every rating with the unequal-group ANOVA (:func:`~pytest_judgerel.stats.icc_oneway`,
    ``n0`` effective raters per item).
    """
    from ..stats.icc import icc
    from ..stats.oneway import icc_oneway

    values = ratings.values
    if not np.isnan(values).any():
        return PanelReliability(benchmark, icc(ratings, form="A,1"), icc(ratings, form="A,k"), ("A,1", "A,k"))
    counts = (~np.isnan(values)).sum(axis=1)
    if int(counts.max()) < 2:
        raise ReliabilityError(f"{benchmark or 'panel'}: no item has 2 human ratings")
    single, average = icc_oneway(values, "1,1"), icc_oneway(values, "1,k")
    sizes = str(single.k_min) if single.k_min == single.k_max else f"{single.k_min}-{single.k_max}"
    note = (f"raters not crossed: one-way ANOVA on all {single.n_ratings} ratings ({sizes} per item), "
            f"n0 = {single.n0:.3g}")
    return PanelReliability(benchmark, single, average, ("1,1", "1,k"), note)


def _unit(r: Ratings) -> np.ndarray:
    if r.scale is None:
        raise ReliabilityError("ratings need a scale to be compared across scales or with humans")
    return (r.item_means() - r.scale.low) / r.scale.range


def _judge_unit(r: Ratings) -> np.ndarray:
    """Per-item mean over repeats on [0, 1]; NaN where no repeat has a score."""
    if r.scale is None:
        raise ReliabilityError("ratings need a scale to be compared across scales or with humans")
    present = ~np.isnan(r.values)
    counts = present.sum(axis=1)
    sums = np.where(present, r.values, 0.0).sum(axis=1)
    means = np.divide(sums, counts, out=np.full(counts.shape, np.nan), where=counts > 0)
    return (means - r.scale.low) / r.scale.range


def _agree(model, scale, bench, subgroup, judge_unit, human_unit, ids, errors_out,
           temperature=None) -> AgreementRow:
    from ..stats.icc import icc

    diff = np.abs(judge_unit - human_unit)
    nmae = float(diff.mean())
    note = ""
    try:
        r = icc(np.column_stack([human_unit, judge_unit]), form="A,1")
        value, ci = r.value, (r.ci_low, r.ci_high)
    except ReliabilityError as exc:
        value, ci, note = None, None, f"ICC undefined: {exc}"
    if errors_out is not None:
        for iid, e, h, j in zip(ids, diff, human_unit, judge_unit):
            if e > ERROR_THRESHOLD:
                errors_out.append({"model": model, "scale": scale, "benchmark": bench, "item": iid,
                                   "human": float(h), "judge": float(j), "error": float(e)})
    return AgreementRow(model, scale, bench, subgroup, value, ci, nmae, len(diff), note, temperature)


def _panel(bench: str | None, x: np.ndarray, note: str = "") -> PanelReliability:
    from ..stats.icc import icc

    return PanelReliability(bench, icc(x, form="A,1"), icc(x, form="A,k"), ("A,1", "A,L"), note)


def _shown(ids: Sequence[str], limit: int = 5) -> str:
    return ", ".join(map(str, ids[:limit])) + (", ..." if len(ids) > limit else "")


class _Humans:
    """The human side: ``{benchmark: Ratings}`` (one panel for every scale) or
    ``{(benchmark, scale): Ratings}`` (a panel per scale, as in seed 001 section 4.2)."""

    def __init__(self, human: Mapping[Any, Ratings], dropped: list[str]):
        self.dropped = dropped
        self.per_scale = bool(human) and all(isinstance(k, tuple) for k in human)
        if not self.per_scale and any(isinstance(k, tuple) for k in human):
            raise ConfigError("human ratings are keyed either by benchmark or by (benchmark, scale), not both")
        self.data = dict(human)
        self.benchmarks = list(dict.fromkeys(k[0] if self.per_scale else k for k in human))
        self.scales: list[str | None] = (list(dict.fromkeys(k[1] for k in human)) if self.per_scale else [None])
        self._means: dict[tuple[str, str | None, str | None], dict[str, float]] = {}

    def get(self, bench: str, scale: str | None) -> Ratings | None:
        return self.data.get((bench, scale)) if self.per_scale else self.data.get(bench)

    def means(self, bench: str, scale: str, subgroup: str | None = None) -> dict[str, float] | None:
        """``{item: human mean on [0, 1]}`` of the whole panel or one ``"group=label"`` subgroup."""
        key = (bench, scale, subgroup)
        if key not in self._means:
            h = self.get(bench, scale)
            if h is None:
                return None
            if subgroup is not None:
                name, label = subgroup.split("=", 1)
                if label not in h.rater_groups.get(name, ()):
                    return None
                h = h.select_raters(**{name: label})
            keep = ~np.isnan(h.values).all(axis=1)
            if keep.sum() < 2:
                self._means[key] = {}
                return self._means[key]
            if not keep.all() and subgroup is None:
                lost = [i for i, k in zip(h.item_ids, keep) if not k]
                self.dropped.append(f"human {bench}{' ' + scale if self.per_scale and scale else ''}: {len(lost)} "
                                    f"item(s) without any human rating ({_shown(lost)}): no agreement row uses them")
            h = h.select_items(keep) if not keep.all() else h
            self._means[key] = dict(zip(h.item_ids, _unit(h)))
        return self._means[key]

    def subgroups(self, name: str | None) -> list[str]:
        if not name:
            return []
        labels: dict[str, None] = {}
        for r in self.data.values():
            if name in r.rater_groups:
                labels.update(dict.fromkeys(r.rater_group_labels(name)))
        return [f"{name}={label}" for label in labels]


def _stack_panels(panels: Sequence[Ratings]) -> Ratings | None:
    """Benchmarks' panels stacked into one pooled panel (the same raters, every item rated)."""
    raters = panels[0].rater_ids
    if any(set(p.rater_ids) != set(raters) or np.isnan(p.values).any() or p.scale != panels[0].scale
           for p in panels):
        return None
    parts = [p.select_raters(list(raters)) for p in panels]
    return Ratings.from_array(np.vstack([p.values for p in parts]),
                              item_ids=[f"{n}:{i}" for n, p in enumerate(parts) for i in p.item_ids],
                              rater_ids=raters, rater_groups={g: list(v) for g, v in panels[0].rater_groups.items()},
                              scale=panels[0].scale)


def _human_panels(res: StudyResult, humans: _Humans, subgroup: str | None) -> None:
    for scale in humans.scales:
        panels: dict[str, Ratings] = {}
        for bench in humans.benchmarks:
            h = humans.get(bench, scale)
            if h is None:
                continue
            panels[bench] = h
            try:
                res.human_panels[(bench, scale)] = human_panel_reliability(h, bench)
            except ReliabilityError as exc:
                res.skipped.append(f"human panel {bench}{' ' + scale if scale else ''}: {exc}")
        pooled = _stack_panels(list(panels.values())) if len(panels) > 1 else None
        if len(panels) > 1 and pooled is None:
            res.skipped.append(f"pooled human panel{' ' + scale if scale else ''}: the benchmarks' panels do not "
                               "share one set of raters who rated every item on one scale")
        groups: dict[str | None, Ratings] = {None: pooled} if pooled is not None else {}
        groups.update(panels)
        for sub in humans.subgroups(subgroup):
            name, label = sub.split("=", 1)
            for bench, p in groups.items():
                if p is None or name not in p.rater_groups or label not in p.rater_groups[name]:
                    continue
                part = p.select_raters(**{name: label})
                try:
                    res.subgroup_panels[(bench, scale, sub)] = human_panel_reliability(part, bench)
                except ReliabilityError as exc:
                    res.skipped.append(f"human panel {bench or 'pooled'} {sub}: {exc}")
        if pooled is not None:
            try:
                res.human_panels[(None, scale)] = human_panel_reliability(pooled, None)
            except ReliabilityError as exc:
                res.skipped.append(f"pooled human panel{' ' + scale if scale else ''}: {exc}")


def _add_agreement(res: StudyResult, humans: _Humans, model: str, scale: str,
                   units: Mapping[str, tuple[list[str], np.ndarray]], subgroups: list[str],
                   illusion_threshold: float, temperature: float | None = None) -> None:
    """Agreement rows of one model (or the panel mean) on one scale: per benchmark, pooled,
    and per subgroup (per benchmark and pooled), on the items with both a judge and a
    human score."""
    main = temperature is None
    rows_out = res.agreement if main else res.temperature_agreement
    bench_rows: dict[str, AgreementRow] = {}
    for sub in [None, *subgroups]:
        pooled_j: list[np.ndarray] = []
        pooled_h: list[np.ndarray] = []
        pooled_ids: list[str] = []
        for bench, (ids, ju) in units.items():
            hm = humans.means(bench, scale, sub)
            if hm is None:
                if main and (sub is None or humans.get(bench, scale) is not None):
                    what = "no human panel" if sub is None else f"no rater of {sub}"
                    res.skipped.append(f"{model} {scale} {bench}: {what} for this benchmark"
                                       f"{' on ' + scale if humans.per_scale else ''}; no agreement row")
                continue
            keep = [n for n, i in enumerate(ids) if i in hm and not np.isnan(ju[n])]
            if len(keep) < 2:
                if sub is None:
                    res.skipped.append(f"{model} {scale} {bench}: only {len(keep)} item(s) have both a judge and a "
                                       "human score; not analysed")
                continue
            kid = [ids[n] for n in keep]
            j, h = ju[keep], np.array([hm[i] for i in kid])
            row = _agree(model, scale, bench, sub, j, h, kid, res.errors if main and sub is None else None,
                         temperature)
            rows_out.append(row)
            if sub is None:
                bench_rows[bench] = row
            pooled_j.append(j)
            pooled_h.append(h)
            pooled_ids += [f"{bench}:{i}" for i in kid]
        if not pooled_j:
            continue
        pooled = _agree(model, scale, None, sub, np.concatenate(pooled_j), np.concatenate(pooled_h), pooled_ids,
                        None, temperature)
        rows_out.append(pooled)
        if main and sub is None and pooled.icc is not None and pooled.icc >= illusion_threshold:
            for bench, row in bench_rows.items():
                if row.icc is not None and row.icc < illusion_threshold:
                    res.agreement_illusions.append(Illusion("agreement", scale, pooled.icc, f"benchmark {bench}",
                                                            row.icc, illusion_threshold, model))


def _judge_units(res: StudyResult | None, judged: Mapping[tuple[str, str, str], Ratings],
                 label: str = "") -> dict[tuple[str, str, str], tuple[list[str], np.ndarray]]:
    """``{(model, scale, bench): (item ids, per-item mean on [0, 1] with NaN = no score)}``;
    items without a score are reported once in ``res.dropped``."""
    out = {}
    for (model, scale, bench), r in judged.items():
        unit = _judge_unit(r)
        missing = [i for i, v in zip(r.item_ids, unit) if np.isnan(v)]
        if missing and res is not None:
            fails = f"; {len(r.parse_failures)} unparseable replies" if r.parse_failures else ""
            res.dropped.append(f"{model} {scale} {bench}{label}: {len(missing)} item(s) without a score "
                               f"({_shown(missing)}{fails}): left out of the rows that use this judge's score")
        out[(model, scale, bench)] = (list(r.item_ids), unit)
    return out


def _drop_incomplete(res: StudyResult, humans: _Humans, units, models: list[str], label: str):
    """``missing="scale"``: an item that some judge did not score on a scale leaves every
    judge's agreement rows of that scale (it stays in each judge's inter-scale consistency)."""
    out = dict(units)
    for scale in dict.fromkeys(s for _, s, _ in units):
        for bench in dict.fromkeys(b for _, s, b in units if s == scale):
            have = [m for m in models if (m, scale, bench) in units]
            rated = humans.means(bench, scale) or {}
            lacking: dict[str, None] = {}
            for m in have:
                ids, unit = units[(m, scale, bench)]
                lacking.update(dict.fromkeys(i for i, v in zip(ids, unit) if np.isnan(v) and i in rated))
                lacking.update(dict.fromkeys(i for i in rated if i not in set(ids)))
            if not lacking or len(have) < 2:
                continue
            res.dropped.append(f"{scale} {bench}{label}: {len(lacking)} item(s) lack some judge's score "
                               f"({_shown(list(lacking))}): left out of every judge's agreement rows on {scale} "
                               "(missing='scale'; missing='row' keeps them for the judges that scored them)")
            for m in have:
                ids, unit = units[(m, scale, bench)]
                out[(m, scale, bench)] = (ids, np.where([i in lacking for i in ids], np.nan, unit))
    return out


def _llm_panel(res: StudyResult, humans: _Humans, units, models: list[str], scale: str, benches: list[str],
               subgroups: list[str], illusion_threshold: float) -> None:
    """Models as raters on every item they all scored (seed 001 section 3.2) and the panel
    mean's agreement with humans on the items humans rated too."""
    panel_units: dict[str, tuple[list[str], np.ndarray]] = {}
    pooled_blocks: list[np.ndarray] = []
    in_every = [m for m in models if all((m, scale, b) in units for b in benches)]
    for bench in benches:
        have = [m for m in models if (m, scale, bench) in units]
        if len(have) < 2:
            continue
        every = [set(units[(m, scale, bench)][0]) for m in have]
        ids = [i for i in dict.fromkeys(i for m in have for i in units[(m, scale, bench)][0])
               if all(i in e for e in every)]
        absent = [i for i in dict.fromkeys(i for m in have for i in units[(m, scale, bench)][0]) if i not in set(ids)]
        if absent:
            res.dropped.append(f"LLM panel {bench} {scale}: {len(absent)} item(s) not in every judge's ratings "
                               f"({_shown(absent)}): left out of the panel's reliability and panel-mean rows")
        cols = []
        for m in have:
            pos = {i: n for n, i in enumerate(units[(m, scale, bench)][0])}
            cols.append(units[(m, scale, bench)][1][[pos[i] for i in ids]])
        x = np.column_stack(cols) if ids else np.empty((0, len(have)))
        complete = np.asarray(~np.isnan(x).any(axis=1), dtype=bool)
        note = ""
        if not complete.all():
            lost = [i for i, c in zip(ids, complete) if not c]
            note = f"{len(lost)} item(s) without every judge's score left out"
            res.dropped.append(f"LLM panel {bench} {scale}: {len(lost)} item(s) lack a score from some judge "
                               f"({_shown(lost)}): left out of the panel's reliability and panel-mean rows")
        xs, kept = x[complete], [i for i, c in zip(ids, complete) if c]
        if len(kept) < 2:
            res.skipped.append(f"LLM panel {bench} {scale}: fewer than 2 items scored by every model")
            continue
        try:
            res.llm_panels[(bench, scale)] = _panel(bench, xs, note)
        except ReliabilityError as exc:
            res.skipped.append(f"LLM panel {bench} {scale}: {exc}")
        panel_units[bench] = (kept, xs.mean(axis=1))
        if len(in_every) > 1:
            sel = [have.index(m) for m in in_every]
            pooled_blocks.append(xs[:, sel])
    if len(pooled_blocks) > 1:
        try:
            pooled = res.llm_panels[(None, scale)] = _panel(None, np.vstack(pooled_blocks))
        except ReliabilityError as exc:
            res.skipped.append(f"LLM panel pooled {scale}: {exc}")
        else:
            if pooled.average.value >= illusion_threshold:
                for bench in benches:
                    p = res.llm_panels.get((bench, scale))
                    if p is not None and p.average.value < illusion_threshold:
                        res.reliability_illusions.append(Illusion(
                            "reliability", scale, pooled.average.value, f"benchmark {bench}",
                            p.average.value, illusion_threshold))
    _add_agreement(res, humans, PANEL_MEAN, scale, panel_units, subgroups, illusion_threshold)


def _consistency(res: StudyResult, judged: Mapping[tuple[str, str, str], Ratings], models: list[str],
                 scales: list[str], benches: list[str]) -> None:
    """Inter-scale consistency per model and benchmark on the items scored on every scale."""
    from ..stats.consistency import scale_consistency

    for model in models:
        for bench in benches:
            by_scale = {s: judged[(model, s, bench)] for s in scales if (model, s, bench) in judged}
            if len(by_scale) < 2:
                continue
            every = list(dict.fromkeys(i for r in by_scale.values() for i in r.item_ids))
            scored_on = [{i for i, row in zip(r.item_ids, r.values) if not np.isnan(row).all()}
                         for r in by_scale.values()]
            scored = [i for i in every if all(i in s for s in scored_on)]
            lost = [i for i in every if i not in set(scored)]
            try:
                if lost:
                    res.dropped.append(f"consistency {model} {bench}: {len(lost)} item(s) lack a score on some scale "
                                       f"({_shown(lost)}): left out of this model's inter-scale ICC")
                    keep = set(scored)
                    by_scale = {s: r.select_items([i in keep for i in r.item_ids]) for s, r in by_scale.items()}
                res.consistency[(model, bench)] = scale_consistency(by_scale)
            except (ReliabilityError, RatingsError) as exc:
                res.skipped.append(f"consistency {model} {bench}: {exc}")


def analyse(
    human: Mapping[Any, Ratings],
    judged: Mapping[tuple[str, str, str], Ratings],
    *,
    illusion_threshold: float = ILLUSION_THRESHOLD,
    subgroup: str | None = None,
    temperatures: Mapping[float, Mapping[tuple[str, str, str], Ratings]] | None = None,
    missing: str = "scale",
) -> StudyResult:
    """Run every analysis of the study on ratings already collected.

    ``human``: ``{benchmark: Ratings}`` (one human panel for every scale) or
    ``{(benchmark, scale): Ratings}`` (humans rated each scale, as in seed 001);
    ``judged``: ``{(model, scale, benchmark): judge Ratings (items x repeats)}``, which may
    hold items humans did not rate (they count in the LLM panel's reliability only).
    ``subgroup`` names a rater group of the human ratings (agreement with each subgroup's
    panel mean, and each subgroup's own reliability).  ``temperatures``:
    ``{temperature: judged-like mapping}`` of a temperature ablation (seed 001 section 5.3):
    each model's agreement rows at each temperature, in ``temperature_agreement``.
    With two or more models the LLM panel analyses (reliability, panel-mean agreement,
    reliability illusion) are added.  ``missing`` (see :data:`MISSING_POLICIES`) says which
    agreement rows lose an item that one judge did not score.
    """
    if missing not in MISSING_POLICIES:
        raise ConfigError(f"missing must be one of {MISSING_POLICIES}, got {missing!r}")
    res = StudyResult()
    humans = _Humans(human, res.dropped)
    _human_panels(res, humans, subgroup)
    models = list(dict.fromkeys(m for m, _, _ in judged))
    if PANEL_MEAN in models:
        raise ConfigError(f"{PANEL_MEAN!r} names the mean over the judges; rename that model")
    scales = list(dict.fromkeys(s for _, s, _ in judged))
    benches = [b for b in humans.benchmarks if any(b == jb for _, _, jb in judged)]
    subgroups = humans.subgroups(subgroup)
    if subgroup and not subgroups:
        res.skipped.append(f"subgroup {subgroup!r}: no human rater group of that name")
    units = _judge_units(res, judged)
    if missing == "scale":
        units = _drop_incomplete(res, humans, units, models, "")

    for model in models:  # each model against the human panel mean (Table 4b)
        for scale in scales:
            per_bench = {b: units[(model, scale, b)] for b in benches if (model, scale, b) in units}
            _add_agreement(res, humans, model, scale, per_bench, subgroups, illusion_threshold)
    if len(models) > 1:  # the LLM panel: models as raters, and their mean (Tables 2, 3, 4a, 5)
        for scale in scales:
            _llm_panel(res, humans, units, models, scale, benches, subgroups, illusion_threshold)
    if len(scales) > 1:
        _consistency(res, judged, models, scales, benches)
    for t, judged_t in ((float(t), j) for t, j in (temperatures or {}).items()):  # Table 6
        units_t = _judge_units(res, judged_t, f" at T={t:g}")
        if missing == "scale":
            units_t = _drop_incomplete(res, humans, units_t, list(dict.fromkeys(m for m, _, _ in judged_t)), f" at T={t:g}")
        for model in dict.fromkeys(m for m, _, _ in judged_t):
            for scale in dict.fromkeys(s for _, s, _ in judged_t):
                per_bench = {b: units_t[(model, scale, b)] for b in benches if (model, scale, b) in units_t}
                _add_agreement(res, humans, model, scale, per_bench, [], illusion_threshold, temperature=float(t))
    return res


def run_study(
    datasets: Mapping[str, Any],
    models: Sequence[str],
    scales: Sequence[str] = ("0-5", "0-10", "0-100"),
    *,
    repeats: int = 1,
    temperature: float | None = None,
    client: Any = None,
    endpoint: Any = None,
    judge_kwargs: Mapping[str, Any] | None = None,
    subgroup: str | None = None,
    illusion_threshold: float = ILLUSION_THRESHOLD,
) -> StudyResult:
    """Judge every data set with every model on every scale, then :func:`analyse`.

    ``datasets``: ``{benchmark: HumanDataset}`` (see :func:`pytest_judgerel.load_dataset`);
    each data set's own template is used unless ``judge_kwargs`` names one.  ``temperature``:
    the session's ``--judge-temperature`` when set, else 1.0, the paper's setting (seed 001
    section 4.3).  ``endpoint``: the server that answers the models (default: the current
    session's, :mod:`pytest_judgerel.session.context`; its ``api_base`` and key serve every model of the
    panel, an in-process model excepted).  ``client``, constrain, max tokens and re-ask: the
    session's unless ``client``/``judge_kwargs`` say otherwise.
    """
    from ..session.context import current_context
    from ..judging.judge import Judge
    from ..llm.endpoint import resolve_endpoint

    if judge_kwargs and "temperature" in judge_kwargs:
        raise ConfigError("pass the sampling temperature as run_study(temperature=...), not in judge_kwargs")
    ctx = current_context()
    if temperature is None:
        chosen = ctx.chosen("temperature")
        temperature = 1.0 if chosen is None else float(chosen)
    human = {b: d.ratings() for b, d in datasets.items()}
    judged: dict[tuple[str, str, str], Ratings] = {}
    for bench, ds in datasets.items():
        kwargs = dict(judge_kwargs or {})
        kwargs.setdefault("template", ds.template or "stsb")
        criterion_key = (ds.template_keys or {}).get(ds.criterion)
        if criterion_key and "axis" not in kwargs:
            kwargs["axis"] = criterion_key
        for model in models:
            judge = Judge(endpoint=resolve_endpoint(model, default=endpoint) if endpoint is not None
                          else ctx.resolve(model), scale=scales[0], scales=tuple(scales),
                          client=client,
                          temperature=temperature, **kwargs)
            if len(scales) > 1:
                for scale, r in judge.rate_scales(ds, scales, repeats=repeats).items():
                    judged[(model, scale, bench)] = r
            else:
                judged[(model, scales[0], bench)] = judge.rate(ds, repeats=repeats)
    return analyse(human, judged, illusion_threshold=illusion_threshold, subgroup=subgroup)
