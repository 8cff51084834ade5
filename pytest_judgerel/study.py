"""The grading-scale study of seed 001 (Li et al. 2026), end to end.

For any judge models and any human-rated data sets it computes (section numbers of seed 001):

* human panel reliability per benchmark, ICC(A,1) and ICC(A,k) (section 3.2, "Human
  reliability"; Tables 2-3); panels whose raters are not crossed use the one-way forms on
  every rating (:func:`pytest_judgerel.stats.icc_oneway`, the project's choice: the paper's
  panel is fully crossed);
* LLM panel reliability per benchmark and scale and pooled over benchmarks, models as
  raters, ICC(A,1) and ICC(A,L) (section 3.2, "LLM reliability"; Tables 2-3);
* human-LLM agreement, ICC(A,1) on the S x 2 matrix [human mean, judge mean] and nMAE
  (section 3.1 eqs. 4-5; section 3.2, "Human-LLM agreement"): for the LLM panel mean (the
  mean over the L judges; Tables 2 and 4a) and for each model (Table 4b), per benchmark,
  pooled over benchmarks, per scale and per human rater subgroup (Table 5);
* inter-scale consistency per model and benchmark, jointly and pairwise (section 5.1,
  Table 1);
* the reliability illusion (section 5.2, Table 3): the pooled LLM-panel reliability passes
  while a benchmark's LLM panel falls below the threshold; and, under its own name, the
  same pattern for human-LLM agreement (a weak benchmark hidden by pooled agreement);
* the error analysis (section 5.4): items whose normalised absolute error exceeds 0.1.

Every comparison is made on scores mapped linearly to [0, 1], each side by its own scale
(section 4.3 does this across scales; within one scale it changes no ICC and turns MAE into
nMAE).  ``run_study`` does the LLM calls through :class:`~pytest_judgerel.judge.Judge`
(cached, concurrent) at temperature 1 by default, as the paper does (section 4.3; the
temperature ablation of section 5.3 is ``Judge.rate_temperatures``); ``analyse`` takes
ratings you already have, so the statistics run without any model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from .errors import ConfigError, ReliabilityError
from .ratings import Ratings

ERROR_THRESHOLD = 0.1
"""Items whose |judge - human| / range exceeds this are listed (seed 001, section 5.4)."""

PANEL_MEAN = "LLM panel mean"
"""The ``model`` of an agreement row for the mean over the L judges (seed 001 section 3.2)."""

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
    ``benchmark`` means pooled over benchmarks, a None ``subgroup`` the whole human panel.
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

    ``llm_panels`` is keyed by ``(benchmark, scale)``, benchmark None = pooled.
    """

    human_panels: dict[str, PanelReliability] = field(default_factory=dict)
    llm_panels: dict[tuple[str | None, str], PanelReliability] = field(default_factory=dict)
    agreement: list[AgreementRow] = field(default_factory=list)
    consistency: dict[tuple[str, str], Any] = field(default_factory=dict)
    reliability_illusions: list[Illusion] = field(default_factory=list)
    agreement_illusions: list[Illusion] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def agreement_for(self, model: str, scale: str | None = None,
                      benchmark: str | None = None, subgroup: str | None = None) -> AgreementRow:
        """The row of ``model`` (or :data:`PANEL_MEAN`); ``benchmark=None`` is the pooled row."""
        for row in self.agreement:
            if (row.model, row.scale, row.benchmark, row.subgroup) == (model, scale, benchmark, subgroup):
                return row
        raise KeyError((model, scale, benchmark, subgroup))

    def summary(self) -> str:
        out = ["Human panel reliability"]
        for b, p in self.human_panels.items():
            out.append(f"  {b}: ICC({p.forms[0]}) {p.single.value:.3f}, ICC({p.forms[1]}) {p.average.value:.3f}"
                       + (f"  ({p.note})" if p.note else ""))
        if self.llm_panels:
            out.append("LLM panel reliability, models as raters: ICC(A,1), ICC(A,L)")
            for (b, s), p in self.llm_panels.items():
                out.append(f"  {b or 'pooled'} {s}: {p.single.value:.3f}, {p.average.value:.3f} "
                           f"[{p.average.ci_low:.3f}, {p.average.ci_high:.3f}]")
        out.append("Human-LLM agreement (ICC(A,1) of [human mean, judge mean]; nMAE)")
        for row in self.agreement:
            where = " / ".join(x for x in (row.model, row.scale, row.benchmark or "pooled", row.subgroup) if x)
            icc_txt = "n/a" if row.icc is None else f"{row.icc:.3f}"
            out.append(f"  {where}: ICC {icc_txt}, nMAE {row.nmae:.3f}, n={row.n}" + (f" ({row.note})" if row.note else ""))
        if self.consistency:
            out.append("Inter-scale consistency, ICC(A,1) on [0, 1]-normalised scores")
            for (m, b), r in self.consistency.items():
                pairs = ", ".join(f"{a}~{c} {v.value:.3f}" for (a, c), v in r.pairwise.items())
                out.append(f"  {m} / {b}: joint {r.joint.value:.3f}; {pairs}")
        out += [f"WARNING {i}" for i in self.reliability_illusions + self.agreement_illusions]
        if self.errors:
            out.append(f"{len(self.errors)} item judgement(s) with normalised error > {ERROR_THRESHOLD}")
        out += [f"skipped: {s}" for s in self.skipped]
        return "\n".join(out)


def human_panel_reliability(ratings: Ratings, benchmark: str = "") -> PanelReliability:
    """ICC(A,1)/ICC(A,k) of a complete human panel (seed 001 section 3.2).

    When raters did not all rate every item (SQuALITY: 3 of 4 reviewers; ConvAbuse: 2 to 6
    of 8 annotators), the design is not crossed: the one-way forms ICC(1,1)/ICC(1,k) are
    computed on every rating with the unequal-group ANOVA (:func:`~pytest_judgerel.stats.icc_oneway`,
    ``n0`` effective raters per item).
    """
    from .stats.icc import icc
    from .stats.oneway import icc_oneway

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


def _agree(model, scale, bench, subgroup, judge_unit, human_unit, ids, errors_out) -> AgreementRow:
    from .stats.icc import icc

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
    return AgreementRow(model, scale, bench, subgroup, value, ci, nmae, len(diff), note)


def _panel(bench: str | None, x: np.ndarray) -> PanelReliability:
    from .stats.icc import icc

    return PanelReliability(bench, icc(x, form="A,1"), icc(x, form="A,k"), ("A,1", "A,L"))


def analyse(
    human: Mapping[str, Ratings],
    judged: Mapping[tuple[str, str, str], Ratings],
    *,
    illusion_threshold: float = ILLUSION_THRESHOLD,
    subgroup: str | None = None,
) -> StudyResult:
    """Run every analysis of the study on ratings already collected.

    ``human``: ``{benchmark: human Ratings}``; ``judged``: ``{(model, scale,
    benchmark): judge Ratings (items x repeats)}``.  ``subgroup`` names a rater
    group of the human ratings (agreement with each subgroup's panel mean).
    With two or more models the LLM panel analyses (reliability, panel-mean agreement,
    reliability illusion) are added.
    """
    from .stats.consistency import scale_consistency

    res = StudyResult()
    for bench, h in human.items():
        try:
            res.human_panels[bench] = human_panel_reliability(h, bench)
        except ReliabilityError as exc:
            res.skipped.append(f"human panel {bench}: {exc}")
    models = list(dict.fromkeys(m for m, _, _ in judged))
    if PANEL_MEAN in models:
        raise ConfigError(f"{PANEL_MEAN!r} names the mean over the judges; rename that model")
    scales = list(dict.fromkeys(s for _, s, _ in judged))
    benches = [b for b in human if any(b == jb for _, _, jb in judged)]

    seen: dict[tuple[str, str, str], tuple[Ratings, Ratings] | None] = {}

    def aligned(model, scale, bench):
        """Judge and human ratings on the items both scored; None (said in ``skipped``) when
        fewer than two are left, e.g. every reply of a judge was unparseable."""
        key = (model, scale, bench)
        if key not in seen:
            j, hh = judged[key].align(human[bench])
            rated = ~np.isnan(j.values).all(axis=1) & ~np.isnan(hh.values).all(axis=1)
            if rated.sum() < 2:
                res.skipped.append(f"{model} {scale} {bench}: only {int(rated.sum())} item(s) have a judge score "
                                   f"({len(judged[key].parse_failures)} unparseable replies); not analysed")
                seen[key] = None
                return None
            if not rated.all():  # e.g. an unparseable reply: the item has no judge score
                res.skipped.append(f"{model} {scale} {bench}: {int((~rated).sum())} item(s) without a score omitted")
                j, hh = j.select_items(rated), hh.select_items(rated)
            seen[key] = (j, hh)
        return seen[key]

    def add_agreement(model, scale, per_bench_units):
        """Rows per benchmark (+ subgroups), the pooled row, and hidden weak benchmarks."""
        pooled_j, pooled_h, pooled_ids = [], [], []
        rows: dict[str, AgreementRow] = {}
        for bench, (ju, h, ids) in per_bench_units.items():
            hu = _unit(h)
            rows[bench] = row = _agree(model, scale, bench, None, ju, hu, ids, res.errors)
            res.agreement.append(row)
            pooled_j.append(ju)
            pooled_h.append(hu)
            pooled_ids += [f"{bench}:{i}" for i in ids]
            if subgroup and subgroup in h.rater_groups:
                for label in h.rater_group_labels(subgroup):
                    sub = h.select_raters(**{subgroup: label})
                    keep = ~np.isnan(sub.values).all(axis=1)
                    if keep.sum() < 2:
                        continue
                    res.agreement.append(_agree(model, scale, bench, f"{subgroup}={label}", ju[keep],
                                                _unit(sub.select_items(keep)), [i for i, k in zip(ids, keep) if k],
                                                None))
        if not pooled_j:
            return
        pooled = _agree(model, scale, None, None, np.concatenate(pooled_j), np.concatenate(pooled_h),
                        pooled_ids, None)
        res.agreement.append(pooled)
        if pooled.icc is not None and pooled.icc >= illusion_threshold:
            for bench, row in rows.items():
                if row.icc is not None and row.icc < illusion_threshold:
                    res.agreement_illusions.append(Illusion("agreement", scale, pooled.icc, f"benchmark {bench}",
                                                            row.icc, illusion_threshold, model))

    # each model against the human panel mean (Table 4b)
    for model in models:
        for scale in scales:
            units = {}
            for bench in benches:
                pair = aligned(model, scale, bench) if (model, scale, bench) in judged else None
                if pair is not None:
                    j, h = pair
                    units[bench] = (_unit(j), h, list(j.item_ids))
            add_agreement(model, scale, units)

    # the LLM panel: models as raters (reliability) and their mean (agreement, Tables 2 and 4a)
    if len(models) > 1:
        for scale in scales:
            panel_units: dict[str, tuple[np.ndarray, Ratings, list[str]]] = {}
            pooled_cols: list[np.ndarray] = []
            in_every = [m for m in models if all((m, scale, b) in judged for b in benches)]
            for bench in benches:
                have = [m for m in models if (m, scale, bench) in judged and aligned(m, scale, bench) is not None]
                if len(have) < 2:
                    continue
                rated = {m: aligned(m, scale, bench) for m in have}
                common = [i for i in rated[have[0]][0].item_ids if all(i in set(rated[m][0].item_ids) for m in have)]
                if len(common) < 2:
                    res.skipped.append(f"LLM panel {bench} {scale}: fewer than 2 items scored by every model")
                    continue
                cols = {m: _unit(rated[m][0].reorder_items(common)) for m in have}
                x = np.column_stack([cols[m] for m in have])
                try:
                    res.llm_panels[(bench, scale)] = _panel(bench, x)
                except ReliabilityError as exc:
                    res.skipped.append(f"LLM panel {bench} {scale}: {exc}")
                h = rated[have[0]][1].reorder_items(common)
                panel_units[bench] = (x.mean(axis=1), h, common)
                if len(in_every) > 1:
                    pooled_cols.append(np.column_stack([cols[m] for m in in_every]))
            if len(pooled_cols) > 1:
                try:
                    pooled = res.llm_panels[(None, scale)] = _panel(None, np.vstack(pooled_cols))
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
            add_agreement(PANEL_MEAN, scale, panel_units)

    # inter-scale consistency per model and benchmark
    if len(scales) > 1:
        for model in models:
            for bench in benches:
                by_scale = {s: judged[(model, s, bench)] for s in scales if (model, s, bench) in judged}
                if len(by_scale) > 1:
                    try:
                        res.consistency[(model, bench)] = scale_consistency(by_scale)
                    except ReliabilityError as exc:
                        res.skipped.append(f"consistency {model} {bench}: {exc}")
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
    session's, :mod:`pytest_judgerel.context`; its ``api_base`` and key serve every model of the
    panel, an in-process model excepted).  ``client``, constrain, max tokens and re-ask: the
    session's unless ``client``/``judge_kwargs`` say otherwise.
    """
    from .context import current_context
    from .judge import Judge
    from .llm.endpoint import resolve_endpoint

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
