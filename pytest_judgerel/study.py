"""The grading-scale study of seed 001 (Li et al. 2026, sections 3-5), end to end.

For any judge models and any human-rated data sets it computes:

* human panel reliability, ICC(A,1) and ICC(A,k) per benchmark (section 4.1);
* LLM panel reliability per benchmark and scale (models as raters);
* human-LLM agreement, ICC(A,1) on the S x 2 matrix [human mean, judge mean] and
  nMAE (eqs. 4-5), pooled over benchmarks, per benchmark, per model, per scale and
  per human rater subgroup (section 4.2);
* inter-scale consistency per model and benchmark, jointly and pairwise (Table 1);
* a warning when pooled reliability hides a weak group, the "reliability
  illusion" of section 5.2;
* the error analysis: items whose normalised absolute error exceeds 0.1.

All scores are mapped linearly to [0, 1] before any comparison across scales or
with humans, as the paper does.  ``run_study`` does the LLM calls through
:class:`~pytest_judgerel.judge.Judge` (cached, concurrent); ``analyse`` takes
ratings you already have, so the statistics run without any model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from .errors import ReliabilityError
from .ratings import Ratings

ERROR_THRESHOLD = 0.1
"""Items whose |judge - human| / range exceeds this are listed (seed 001, section 5.3)."""


@dataclass(frozen=True)
class PanelReliability:
    """ICC of a panel: ``single`` (one rater) and ``average`` (the panel mean)."""

    benchmark: str
    single: Any
    average: Any
    forms: tuple[str, str]
    note: str = ""


@dataclass(frozen=True)
class AgreementRow:
    """Human-LLM agreement of one slice (``None`` fields mean 'pooled over')."""

    model: str | None
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
    """A pooled statistic that looks fine while a group falls below the threshold."""

    model: str
    scale: str
    pooled: float
    group: str
    value: float
    threshold: float

    def __str__(self) -> str:
        return (f"reliability illusion: {self.model} on {self.scale}: pooled ICC {self.pooled:.3f} >= "
                f"{self.threshold} but {self.group} has {self.value:.3f}")


@dataclass
class StudyResult:
    """Everything the study computed; ``summary()`` renders the paper's tables as text."""

    human_panels: dict[str, PanelReliability] = field(default_factory=dict)
    llm_panels: dict[tuple[str, str], Any] = field(default_factory=dict)
    agreement: list[AgreementRow] = field(default_factory=list)
    consistency: dict[tuple[str, str], Any] = field(default_factory=dict)
    illusions: list[Illusion] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def agreement_for(self, model: str | None = None, scale: str | None = None,
                      benchmark: str | None = None, subgroup: str | None = None) -> AgreementRow:
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
            out.append("LLM panel reliability, ICC(A,1) across models")
            for (b, s), r in self.llm_panels.items():
                out.append(f"  {b} {s}: {r.value:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]")
        out.append("Human-LLM agreement (ICC(A,1) of panel means; nMAE)")
        for row in self.agreement:
            where = " / ".join(x for x in (row.model, row.scale, row.benchmark, row.subgroup) if x) or "all"
            icc_txt = "n/a" if row.icc is None else f"{row.icc:.3f}"
            out.append(f"  {where}: ICC {icc_txt}, nMAE {row.nmae:.3f}, n={row.n}" + (f" ({row.note})" if row.note else ""))
        if self.consistency:
            out.append("Inter-scale consistency, ICC(A,1) on [0, 1]-normalised scores")
            for (m, b), r in self.consistency.items():
                pairs = ", ".join(f"{a}~{c} {v.value:.3f}" for (a, c), v in r.pairwise.items())
                out.append(f"  {m} / {b}: joint {r.joint.value:.3f}; {pairs}")
        out += [f"WARNING {i}" for i in self.illusions]
        if self.errors:
            out.append(f"{len(self.errors)} item judgement(s) with normalised error > {ERROR_THRESHOLD}")
        out += [f"skipped: {s}" for s in self.skipped]
        return "\n".join(out)


def human_panel_reliability(ratings: Ratings, benchmark: str = "") -> PanelReliability:
    """ICC(A,1)/ICC(A,k) of a complete human panel; when raters did not all rate
    every item (e.g. 3 of 4 reviewers), the ratings are packed per item and the
    one-way forms ICC(1,1)/ICC(1,k) are used instead, as raters are then not crossed."""
    from .stats.icc import icc

    values = ratings.values
    if not np.isnan(values).any():
        return PanelReliability(benchmark, icc(ratings, form="A,1"), icc(ratings, form="A,k"), ("A,1", "A,k"))
    counts = (~np.isnan(values)).sum(axis=1)
    width = int(counts.min())
    if width < 2:
        raise ReliabilityError(f"{benchmark or 'panel'}: some items have fewer than 2 human ratings")
    packed = np.array([row[~np.isnan(row)][:width] for row in values])
    note = f"raters not crossed: one-way forms on the first {width} ratings of each item"
    return PanelReliability(benchmark, icc(packed, form="1,1"), icc(packed, form="1,k"), ("1,1", "1,k"), note)


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


def analyse(
    human: Mapping[str, Ratings],
    judged: Mapping[tuple[str, str, str], Ratings],
    *,
    illusion_threshold: float = 0.5,
    subgroup: str | None = None,
) -> StudyResult:
    """Run every analysis of the study on ratings already collected.

    ``human``: ``{benchmark: human Ratings}``; ``judged``: ``{(model, scale,
    benchmark): judge Ratings (items x repeats)}``.  ``subgroup`` names a rater
    group of the human ratings (agreement with each subgroup's panel mean).
    """
    from .stats.consistency import scale_consistency
    from .stats.icc import icc

    res = StudyResult()
    for bench, h in human.items():
        try:
            res.human_panels[bench] = human_panel_reliability(h, bench)
        except ReliabilityError as exc:
            res.skipped.append(f"human panel {bench}: {exc}")
    models = list(dict.fromkeys(m for m, _, _ in judged))
    scales = list(dict.fromkeys(s for _, s, _ in judged))
    benches = [b for b in human if any(b == jb for _, _, jb in judged)]

    def aligned(model, scale, bench, h=None):
        j, hh = judged[(model, scale, bench)].align(h if h is not None else human[bench])
        rated = ~np.isnan(j.values).all(axis=1) & ~np.isnan(hh.values).all(axis=1)
        if not rated.all():  # e.g. an unparseable reply: the item has no judge score
            res.skipped.append(f"{model} {scale} {bench}: {int((~rated).sum())} item(s) without a score omitted")
            j, hh = j.select_items(rated), hh.select_items(rated)
        return j, hh

    # LLM panel: models as raters (per benchmark and scale)
    if len(models) > 1:
        for bench in benches:
            for scale in scales:
                have = [judged[(m, scale, bench)] for m in models if (m, scale, bench) in judged]
                common = [i for i in have[0].item_ids if all(i in set(r.item_ids) for r in have[1:])] if have else []
                cols = []
                if len(common) >= 2:
                    keep = set(common)
                    cols = [_unit(r.select_items([i in keep for i in r.item_ids]).reorder_items(common))
                            for r in have]
                if len(cols) > 1:
                    try:
                        res.llm_panels[(bench, scale)] = icc(np.column_stack(cols), form="A,1")
                    except ReliabilityError as exc:
                        res.skipped.append(f"LLM panel {bench} {scale}: {exc}")
    # agreement: per (model, scale, benchmark), pooled over benchmarks, per subgroup
    for model in models:
        for scale in scales:
            pooled_j, pooled_h, pooled_ids = [], [], []
            per_bench: dict[str, AgreementRow] = {}
            for bench in benches:
                if (model, scale, bench) not in judged:
                    continue
                j, h = aligned(model, scale, bench)
                ju, hu = _unit(j), _unit(h)
                row = _agree(model, scale, bench, None, ju, hu, j.item_ids, res.errors)
                res.agreement.append(row)
                per_bench[bench] = row
                pooled_j.append(ju)
                pooled_h.append(hu)
                pooled_ids += [f"{bench}:{i}" for i in j.item_ids]
                if subgroup and subgroup in h.rater_groups:
                    for label in h.rater_group_labels(subgroup):
                        sub = h.select_raters(**{subgroup: label})
                        keep = ~np.isnan(sub.values).all(axis=1)
                        if keep.sum() < 2:
                            continue
                        js, hs = j.select_items(keep), sub.select_items(keep)
                        res.agreement.append(_agree(model, scale, bench, f"{subgroup}={label}",
                                                    _unit(js), _unit(hs), js.item_ids, None))
            if not pooled_j:
                continue
            pooled = _agree(model, scale, None, None, np.concatenate(pooled_j), np.concatenate(pooled_h),
                            pooled_ids, None)
            res.agreement.append(pooled)
            if pooled.icc is not None and pooled.icc >= illusion_threshold:
                for bench, row in per_bench.items():
                    if row.icc is not None and row.icc < illusion_threshold:
                        res.illusions.append(Illusion(model, scale, pooled.icc, f"benchmark {bench}",
                                                      row.icc, illusion_threshold))
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
    client: Any = None,
    judge_kwargs: Mapping[str, Any] | None = None,
    subgroup: str | None = None,
    illusion_threshold: float = 0.5,
) -> StudyResult:
    """Judge every data set with every model on every scale, then :func:`analyse`.

    ``datasets``: ``{benchmark: HumanDataset}`` (see :func:`pytest_judgerel.load_dataset`);
    each data set's own template is used unless ``judge_kwargs`` names one.
    """
    from .judge import Judge

    human = {b: d.ratings() for b, d in datasets.items()}
    judged: dict[tuple[str, str, str], Ratings] = {}
    for bench, ds in datasets.items():
        kwargs = dict(judge_kwargs or {})
        kwargs.setdefault("template", ds.template or "stsb")
        criterion_key = (ds.template_keys or {}).get(ds.criterion)
        if criterion_key and "axis" not in kwargs:
            kwargs["axis"] = criterion_key
        for model in models:
            judge = Judge(model=model, scale=scales[0], scales=tuple(scales), client=client, **kwargs)
            if len(scales) > 1:
                for scale, r in judge.rate_scales(ds, scales, repeats=repeats).items():
                    judged[(model, scale, bench)] = r
            else:
                judged[(model, scales[0], bench)] = judge.rate(ds, repeats=repeats)
    return analyse(human, judged, illusion_threshold=illusion_threshold, subgroup=subgroup)
