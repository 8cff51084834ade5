"""Human-rated data sets shipped with the package (``pytest_judgerel/data/<name>/``).

Four real data sets with per-item human ratings, vendored with their licenses and
provenance (``docs/datasets.md``): ``stsb`` (gold similarity, 0-5), ``squality``
(0-100, 3 of 4 reviewers), ``summeval_op`` (1-5, 3 annotators, 7 dimensions) and
``convabuse`` (abuse severity 0-4, 2-6 of 8 annotators).  They feed human-LLM
agreement tests in the manner of seed 001 (Li et al. 2026, section 4).

The loader reads only files inside the installed package.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any, Mapping, Sequence

from ..errors import ConfigError
from ..scales import Scale

LAYOUTS = ("raters", "slots")


@dataclass(frozen=True)
class HumanItem(Mapping):
    """One rated item: its id, group labels and the text fields a template needs.

    It is a read-only mapping of its ``fields``, so ``render(template, item, scale)``
    accepts it directly.
    """

    id: str
    fields: Mapping[str, str]
    groups: Mapping[str, str]

    def __getitem__(self, key: str) -> str:
        return self.fields[key]

    def __iter__(self):
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)


@dataclass(frozen=True, eq=False)
class HumanDataset:
    """Items, the items x raters rating matrix for one criterion, and what it means.

    ``matrix`` rows follow ``items``; columns follow ``rater_ids``; NaN marks a
    rating that does not exist (the annotator did not see the item).
    """

    name: str
    criterion: str
    items: tuple[HumanItem, ...]
    matrix: tuple[tuple[float, ...], ...]
    rater_ids: tuple[str, ...]
    scale: Scale
    criteria: tuple[str, ...]
    layout: str = "raters"
    template: str | None = None
    template_keys: Mapping[str, str] = field(default_factory=dict)
    meta: Mapping[str, Any] = field(default_factory=dict)

    # ---------------------------------------------------------------- views
    @property
    def item_ids(self) -> tuple[str, ...]:
        return tuple(it.id for it in self.items)

    @property
    def item_groups(self) -> dict[str, tuple[str, ...]]:
        names = self.meta.get("item_groups", [])
        return {g: tuple(it.groups[g] for it in self.items) for g in names}

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self.items), len(self.rater_ids))

    def __len__(self) -> int:
        return len(self.items)

    @property
    def n_missing(self) -> int:
        return sum(1 for row in self.matrix for v in row if math.isnan(v))

    def to_matrix(self):
        """The ratings as a float ndarray (items x raters, NaN = missing)."""
        import numpy as np

        return np.array(self.matrix, dtype=float).reshape(self.shape)

    def consensus(self) -> list[float]:
        """Per-item mean over the raters who rated it (seed 001's human consensus score)."""
        out = []
        for row in self.matrix:
            vals = [v for v in row if not math.isnan(v)]
            out.append(sum(vals) / len(vals) if vals else math.nan)
        return out

    def provenance(self) -> dict[str, Any]:
        return {
            "dataset": self.name,
            "criterion": self.criterion,
            "layout": self.layout,
            "title": self.meta.get("title", ""),
            "license": self.meta.get("license", ""),
            "citation": self.meta.get("citation", ""),
        }

    def ratings(self):
        """The matrix as a :class:`pytest_judgerel.ratings.Ratings` (kind = human)."""
        from ..ratings import Ratings

        return Ratings.from_array(
            self.to_matrix(),
            item_ids=self.item_ids,
            rater_ids=self.rater_ids,
            item_groups=self.item_groups,
            rater_groups={"kind": ["human"] * len(self.rater_ids)},
            scale=self.scale,
            provenance=self.provenance(),
        )


# -------------------------------------------------------------------- loading
def available() -> list[str]:
    """Names of the vendored data sets."""
    root = resources.files("pytest_judgerel").joinpath("data")
    return sorted(p.name for p in root.iterdir() if p.is_dir() and p.joinpath("meta.json").is_file())


@lru_cache(maxsize=None)
def _read(name: str) -> tuple[dict, tuple[dict, ...], dict[str, str]]:
    folder = resources.files("pytest_judgerel").joinpath("data").joinpath(name)
    if not folder.joinpath("meta.json").is_file():
        raise ConfigError(f"unknown data set {name!r}; available: {available()}")
    meta = json.loads(folder.joinpath("meta.json").read_text(encoding="utf-8"))
    items = tuple(json.loads(line) for line in
                  folder.joinpath("items.jsonl").read_text(encoding="utf-8").splitlines() if line.strip())
    docs: dict[str, str] = {}
    if folder.joinpath("documents.jsonl").is_file():
        for line in folder.joinpath("documents.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                d = json.loads(line)
                docs[d["id"]] = d["text"]
    return meta, items, docs


def _select(rows: Sequence[dict], subset: Any, name: str) -> list[dict]:
    if subset is None:
        return list(rows)
    if isinstance(subset, bool):
        raise ConfigError(f"subset must be a count, ids or group filter, got {subset!r}")
    if isinstance(subset, int):
        if subset <= 0:
            raise ConfigError(f"subset count must be positive, got {subset}")
        return list(rows[:subset])
    if isinstance(subset, Mapping):
        out = list(rows)
        for group, wanted in subset.items():
            allowed = {str(wanted)} if isinstance(wanted, (str, int)) else {str(w) for w in wanted}
            known = {r["groups"].get(group) for r in rows}
            if None in known:
                raise ConfigError(f"data set {name!r} has no item group {group!r}")
            if not allowed & known:
                raise ConfigError(f"no item of {name!r} has {group} in {sorted(allowed)}; values: {sorted(known)[:20]}")
            out = [r for r in out if r["groups"][group] in allowed]
        return out
    if isinstance(subset, (list, tuple)):
        by_id = {r["id"]: r for r in rows}
        missing = [i for i in subset if i not in by_id]
        if missing:
            raise ConfigError(f"unknown item id(s) in {name!r}: {missing[:5]}")
        return [by_id[i] for i in subset]
    raise ConfigError(f"subset must be a count, a list of item ids or a group filter dict, got {type(subset).__name__}")


def _stratify(rows: Sequence[dict], n: int, group: str, name: str) -> list[dict]:
    """The first ``n`` items taken round-robin over the labels of ``group`` (in stored order),
    so a small subset covers every group instead of the first one only."""
    if any(group not in r["groups"] for r in rows):
        raise ConfigError(f"data set {name!r} has no item group {group!r}")
    buckets: dict[str, list[dict]] = {}
    for r in rows:
        buckets.setdefault(r["groups"][group], []).append(r)
    out: list[dict] = []
    queues = [list(b) for b in buckets.values()]
    while len(out) < n and any(queues):
        for q in queues:
            if q and len(out) < n:
                out.append(q.pop(0))
    return out


def load_dataset(name: str, criterion: str | None = None, subset: Any = None, *,
                 layout: str = "raters", stratify: str | None = None) -> HumanDataset:
    """Load a vendored human-rated data set for one criterion.

    ``criterion`` defaults to the data set's default (``meta.json``).  ``subset``:
    a count (the first n items in stored order), a list of item ids, or a group
    filter such as ``{"system": "human"}`` or ``{"n_annotators": ["3", "4"]}``.
    ``layout="raters"`` gives one column per person (NaN where they did not rate);
    ``"slots"`` gives column k = the k-th available rating of each item, complete
    up to the smallest number of raters per item (columns are then not persons:
    use one-way ICC forms).  ``stratify="genre"`` with ``subset=n`` takes the n items
    round-robin over that item group's labels (a small subset that covers every group).
    """
    if layout not in LAYOUTS:
        raise ConfigError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    meta, rows, docs = _read(name)
    crit = criterion or meta["default_criterion"]
    if crit not in meta["criteria"]:
        raise ConfigError(f"data set {name!r} has no criterion {crit!r}; criteria: {meta['criteria']}")
    if stratify is not None:
        if not isinstance(subset, int) or isinstance(subset, bool):
            raise ConfigError("stratify= needs subset=<count>")
        chosen = _stratify(rows, subset, stratify, name)
    else:
        chosen = _select(rows, subset, name)
    if not chosen:
        raise ConfigError(f"subset {subset!r} of {name!r} selects no item")
    aliases = meta.get("aliases", {})
    doc_field = meta.get("document_field")
    items = []
    for r in chosen:
        fields = dict(r["fields"])
        if doc_field and "doc" in r:
            fields[doc_field] = docs[r["doc"]]
        for alias, target in aliases.items():
            fields.setdefault(alias, fields[target])
        items.append(HumanItem(id=r["id"], fields=fields, groups=dict(r["groups"])))
    raw = [[math.nan if v is None else float(v) for v in r["ratings"][crit]] for r in chosen]
    rater_ids = tuple(meta["raters"])
    if layout == "slots":
        width = max(sum(not math.isnan(v) for v in row) for row in raw)
        packed = []
        for row in raw:
            vals = [v for v in row if not math.isnan(v)]
            packed.append(vals + [math.nan] * (width - len(vals)))
        raw = packed
        rater_ids = tuple(f"slot{k + 1}" for k in range(width))
    scale = Scale.parse(meta["scale"])
    if meta.get("fractional"):
        scale = Scale(scale.low, scale.high, fractional=True)
    return HumanDataset(
        name=name,
        criterion=crit,
        items=tuple(items),
        matrix=tuple(tuple(row) for row in raw),
        rater_ids=rater_ids,
        scale=scale,
        criteria=tuple(meta["criteria"]),
        layout=layout,
        template=meta.get("template"),
        template_keys=dict(meta.get("template_keys", {})),
        meta=json.loads(json.dumps(meta)),  # a private copy: the parsed files are cached
    )


__all__ = ["HumanDataset", "HumanItem", "LAYOUTS", "available", "load_dataset"]
