"""The Ratings data model: items x raters, with ids, groups, scale and provenance.

A rater is anything that produces one score per item: a human annotator, a
judge model, or one repeated run of the same judge (``r0``, ``r1``...).  Missing
ratings are NaN.  Groups label items (e.g. ``benchmark``) or raters (e.g.
``kind = human | llm``, ``model``, a demographic subgroup) so statistics can be
broken down the way seed 001 (Li et al. 2026, sections 4-5) does.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .errors import RatingsError
from .scales import Scale, ScaleLike

_DUPLICATE_POLICIES = ("raise", "mean", "first", "last")


@dataclass(frozen=True, eq=False)
class Ratings:
    """An items x raters matrix of scores (NaN = missing) with labels.

    Build it with :meth:`from_array`, :meth:`from_wide`, :meth:`from_records`,
    :meth:`from_csv` or :meth:`from_jsonl`; every statistic in
    :mod:`pytest_judgerel.stats` accepts it directly (via :meth:`to_matrix`).
    """

    values: np.ndarray
    item_ids: tuple[str, ...]
    rater_ids: tuple[str, ...]
    item_groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    rater_groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    scale: Scale | None = None
    provenance: Mapping[str, Any] = field(default_factory=dict)
    parse_failures: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        v = self.values
        if v.ndim != 2:
            raise RatingsError(f"ratings must be 2-D (items x raters), got {v.ndim}-D")
        n, k = v.shape
        if len(self.item_ids) != n:
            raise RatingsError(f"{len(self.item_ids)} item ids for {n} rows")
        if len(self.rater_ids) != k:
            raise RatingsError(f"{len(self.rater_ids)} rater ids for {k} columns")
        _check_unique(self.item_ids, "item")
        _check_unique(self.rater_ids, "rater")
        for name, labels in self.item_groups.items():
            if len(labels) != n:
                raise RatingsError(f"item group {name!r} has {len(labels)} labels for {n} items")
        for name, labels in self.rater_groups.items():
            if len(labels) != k:
                raise RatingsError(f"rater group {name!r} has {len(labels)} labels for {k} raters")
        if np.isinf(v).any():
            i, j = np.argwhere(np.isinf(v))[0]
            raise RatingsError(f"infinite rating for item {self.item_ids[i]!r}, rater {self.rater_ids[j]!r}")
        if self.scale is not None:
            finite = v[~np.isnan(v)]
            bad = finite[(finite < self.scale.low - 1e-9) | (finite > self.scale.high + 1e-9)]
            if bad.size:
                raise RatingsError(
                    f"{bad.size} rating(s) outside scale {self.scale.name}, e.g. {bad[0]!r}"
                )

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_array(
        cls,
        values: Any,
        *,
        item_ids: Sequence[Any] | None = None,
        rater_ids: Sequence[Any] | None = None,
        item_groups: Mapping[str, Sequence[Any]] | None = None,
        rater_groups: Mapping[str, Sequence[Any]] | None = None,
        scale: ScaleLike | None = None,
        provenance: Mapping[str, Any] | None = None,
        parse_failures: Sequence[Any] = (),
    ) -> "Ratings":
        """From a 2-D array-like (rows = items, columns = raters; None/NaN = missing)."""
        arr = _as_float_matrix(values)
        n, k = arr.shape
        return cls(
            values=arr,
            item_ids=_ids(item_ids, n, "item"),
            rater_ids=_ids(rater_ids, k, "r"),
            item_groups=_groups(item_groups),
            rater_groups=_groups(rater_groups),
            scale=None if scale is None else Scale.parse(scale),
            provenance=dict(provenance or {}),
            parse_failures=tuple(parse_failures),
        )

    @classmethod
    def from_wide(
        cls,
        columns: Mapping[Any, Any],
        *,
        item_ids: Sequence[Any] | None = None,
        orient: str = "raters",
        **kwargs: Any,
    ) -> "Ratings":
        """From a dict of columns.

        ``orient="raters"`` (default): ``{rater: [score per item]}`` or
        ``{rater: {item: score}}``.  ``orient="items"``: ``{item: {rater: score}}``.
        """
        if orient not in ("raters", "items"):
            raise RatingsError(f"orient must be 'raters' or 'items', got {orient!r}")
        if not columns:
            raise RatingsError("no ratings given")
        outer = list(columns)
        inner_maps = [columns[o] for o in outer]
        if all(isinstance(m, Mapping) for m in inner_maps):
            records = [
                {"item": o if orient == "items" else i, "rater": i if orient == "items" else o, "score": s}
                for o, m in zip(outer, inner_maps)
                for i, s in m.items()
            ]
            r = cls.from_records(records, **kwargs)
            if item_ids is not None:
                r = r.reorder_items(item_ids)
            return r
        if orient == "items":
            raise RatingsError("orient='items' needs {item: {rater: score}} mappings")
        lengths = {len(m) for m in inner_maps}
        if len(lengths) != 1:
            detail = ", ".join(f"{o!r}: {len(m)}" for o, m in zip(outer, inner_maps))
            raise RatingsError(f"ragged input: raters have different numbers of ratings ({detail})")
        arr = np.column_stack([_as_float_vector(m, str(o)) for o, m in zip(outer, inner_maps)])
        return cls.from_array(arr, item_ids=item_ids, rater_ids=outer, **kwargs)

    @classmethod
    def from_records(
        cls,
        records: Iterable[Mapping[str, Any]],
        *,
        item: str = "item",
        rater: str = "rater",
        score: str = "score",
        item_group_keys: Sequence[str] = (),
        rater_group_keys: Sequence[str] = (),
        duplicates: str = "raise",
        **kwargs: Any,
    ) -> "Ratings":
        """From long records ``{item, rater, score, ...}``.

        Absent (item, rater) pairs become NaN.  A repeated (item, rater) pair is
        an error unless ``duplicates`` is ``"mean"``, ``"first"`` or ``"last"``
        (never silently averaged, unlike pingouin's pivot).
        """
        if duplicates not in _DUPLICATE_POLICIES:
            raise RatingsError(f"duplicates must be one of {_DUPLICATE_POLICIES}, got {duplicates!r}")
        items: dict[str, int] = {}
        raters: dict[str, int] = {}
        cells: dict[tuple[int, int], list[float]] = {}
        igroups: dict[str, dict[int, str]] = {g: {} for g in item_group_keys}
        rgroups: dict[str, dict[int, str]] = {g: {} for g in rater_group_keys}
        for lineno, rec in enumerate(records, 1):
            for key in (item, rater, score):
                if key not in rec:
                    raise RatingsError(f"record {lineno} has no {key!r} field: {dict(rec)!r:.200}")
            i = items.setdefault(str(rec[item]), len(items))
            j = raters.setdefault(str(rec[rater]), len(raters))
            cells.setdefault((i, j), []).append(_as_score(rec[score], f"record {lineno}"))
            for g in item_group_keys:
                _set_group(igroups[g], i, rec, g, lineno, "item")
            for g in rater_group_keys:
                _set_group(rgroups[g], j, rec, g, lineno, "rater")
        if not cells:
            raise RatingsError("no ratings given")
        arr = np.full((len(items), len(raters)), np.nan)
        item_names, rater_names = list(items), list(raters)
        for (i, j), vals in cells.items():
            if len(vals) > 1:
                if duplicates == "raise":
                    raise RatingsError(
                        f"duplicate ratings for item {item_names[i]!r} by rater {rater_names[j]!r} "
                        f"({vals}); pass duplicates='mean'|'first'|'last' to aggregate explicitly"
                    )
                present = [v for v in vals if not math.isnan(v)] or [math.nan]  # a real score beats a missing one
                vals = [float(np.mean(present))] if duplicates == "mean" else \
                    [present[0] if duplicates == "first" else present[-1]]
            arr[i, j] = vals[0]
        return cls.from_array(
            arr,
            item_ids=item_names,
            rater_ids=rater_names,
            item_groups={g: [m.get(i, "") for i in range(len(items))] for g, m in igroups.items()},
            rater_groups={g: [m.get(j, "") for j in range(len(raters))] for g, m in rgroups.items()},
            **kwargs,
        )

    @classmethod
    def from_csv(cls, path: str | Path, *, layout: str = "long", **kwargs: Any) -> "Ratings":
        """From a CSV file: ``layout="long"`` (columns item, rater, score, ...) or
        ``"wide"`` (first column item id, one column per rater); a relative path is relative
        to the working directory."""
        from ._io import input_path

        path = input_path(path, "ratings CSV")
        with path.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        if not rows:
            raise RatingsError(f"{path}: no rows")
        if layout == "long":
            return cls.from_records(rows, **kwargs)
        if layout != "wide":
            raise RatingsError(f"layout must be 'long' or 'wide', got {layout!r}")
        id_col = kwargs.pop("item", None) or next(iter(rows[0]))
        raters = [c for c in rows[0] if c != id_col]
        arr = [[_as_score(r[c], f"{path} row {n}") for c in raters] for n, r in enumerate(rows, 2)]
        return cls.from_array(arr, item_ids=[r[id_col] for r in rows], rater_ids=raters, **kwargs)

    @classmethod
    def from_jsonl(cls, path: str | Path, **kwargs: Any) -> "Ratings":
        """From a JSON-lines file of long records (see :meth:`from_records`); a relative path
        is relative to the working directory."""
        from ._io import input_path

        path = input_path(path, "ratings JSONL")
        records = []
        with path.open(encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if line.strip():
                    try:
                        records.append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        raise RatingsError(f"{path}:{n}: invalid JSON ({exc.msg})") from None
        return cls.from_records(records, **kwargs)

    # ------------------------------------------------------------------ views
    @property
    def n_items(self) -> int:
        return self.values.shape[0]

    @property
    def n_raters(self) -> int:
        return self.values.shape[1]

    @property
    def shape(self) -> tuple[int, int]:
        return self.values.shape  # type: ignore[return-value]

    def __len__(self) -> int:
        return self.n_items

    def to_matrix(self) -> np.ndarray:
        """The items x raters float matrix (a copy; NaN = missing)."""
        return self.values.copy()

    def item_means(self) -> np.ndarray:
        """Per-item mean over raters (the panel mean of seed 001 eq. 4), ignoring NaN."""
        counts = np.sum(~np.isnan(self.values), axis=1)
        if (counts == 0).any():
            missing = [self.item_ids[i] for i in np.flatnonzero(counts == 0)[:5]]
            raise RatingsError(f"items with no rating at all: {missing}")
        return np.nanmean(self.values, axis=1)

    def normalized(self) -> "Ratings":
        """Map every rating linearly to [0, 1] with the scale (seed 001 section 4.3)."""
        if self.scale is None:
            raise RatingsError("cannot normalise ratings without a scale")
        unit = Scale(0, 1, fractional=True, name="0-1")
        return replace(self, values=(self.values - self.scale.low) / self.scale.range, scale=unit)

    def select_items(self, mask: Any = None, **groups: Any) -> "Ratings":
        """Keep items whose group labels match, e.g. ``select_items(benchmark="stsb")``.

        A group value may be a single label or a collection of labels.
        """
        keep = np.ones(self.n_items, dtype=bool) if mask is None else np.asarray(mask)
        if keep.dtype != bool or keep.shape != (self.n_items,):
            raise RatingsError(f"select_items mask must be {self.n_items} booleans (one per item), "
                               f"got {keep.dtype} of shape {keep.shape}")
        for name, wanted in groups.items():
            keep &= _match(self.item_groups, name, wanted, "item")
        if not keep.any():
            raise RatingsError(f"no item matches {groups or 'the mask'}")
        idx = np.flatnonzero(keep)
        return replace(
            self,
            values=self.values[idx],
            item_ids=tuple(self.item_ids[i] for i in idx),
            item_groups={g: tuple(lab[i] for i in idx) for g, lab in self.item_groups.items()},
        )

    def select_raters(self, ids: Sequence[str] | None = None, **groups: Any) -> "Ratings":
        """Keep raters by id and/or group label, e.g. ``select_raters(kind="human")``."""
        keep = np.ones(self.n_raters, dtype=bool)
        if ids is not None:
            unknown = set(map(str, ids)) - set(self.rater_ids)
            if unknown:
                raise RatingsError(f"unknown rater id(s): {sorted(unknown)}")
            keep &= np.isin(np.array(self.rater_ids, dtype=object), list(map(str, ids)))
        for name, wanted in groups.items():
            keep &= _match(self.rater_groups, name, wanted, "rater")
        if not keep.any():
            raise RatingsError(f"no rater matches {groups or ids}")
        idx = np.flatnonzero(keep)
        return replace(
            self,
            values=self.values[:, idx],
            rater_ids=tuple(self.rater_ids[j] for j in idx),
            rater_groups={g: tuple(lab[j] for j in idx) for g, lab in self.rater_groups.items()},
        )

    def item_group_labels(self, name: str) -> list[str]:
        """Distinct labels of an item group, in first-seen order."""
        if name not in self.item_groups:
            raise RatingsError(f"no item group {name!r}; known: {sorted(self.item_groups)}")
        return list(dict.fromkeys(self.item_groups[name]))

    def rater_group_labels(self, name: str) -> list[str]:
        if name not in self.rater_groups:
            raise RatingsError(f"no rater group {name!r}; known: {sorted(self.rater_groups)}")
        return list(dict.fromkeys(self.rater_groups[name]))

    def reorder_items(self, item_ids: Sequence[Any]) -> "Ratings":
        """Rows in the order of ``item_ids`` (which must be exactly the same set)."""
        wanted = [str(i) for i in item_ids]
        pos = {iid: n for n, iid in enumerate(self.item_ids)}
        missing = [i for i in wanted if i not in pos]
        extra = set(self.item_ids) - set(wanted)
        if missing or extra or len(wanted) != len(set(wanted)):
            raise RatingsError(
                f"item ids do not match: missing {missing[:5]}, unexpected {sorted(extra)[:5]}"
            )
        idx = [pos[i] for i in wanted]
        return replace(
            self,
            values=self.values[idx],
            item_ids=tuple(wanted),
            item_groups={g: tuple(lab[i] for i in idx) for g, lab in self.item_groups.items()},
        )

    def align(self, other: "Ratings") -> tuple["Ratings", "Ratings"]:
        """Both restricted to their common items, in this object's order."""
        common = [i for i in self.item_ids if i in set(other.item_ids)]
        if len(common) < 2:
            raise RatingsError(
                f"only {len(common)} item(s) in common between the two ratings "
                f"(e.g. {self.item_ids[:3]} vs {other.item_ids[:3]})"
            )
        mine = set(common)
        a = self.select_items([i in mine for i in self.item_ids]).reorder_items(common)
        b = other.select_items([i in mine for i in other.item_ids]).reorder_items(common)
        return a, b

    def join_raters(self, other: "Ratings", *, prefix: str = "") -> "Ratings":
        """Add ``other``'s raters as new columns (items matched by id, same order required set)."""
        b = other.reorder_items(self.item_ids) if set(other.item_ids) == set(self.item_ids) else None
        if b is None:
            raise RatingsError("join_raters needs the same items in both ratings; use align() first")
        new_ids = tuple(prefix + r for r in b.rater_ids)
        groups = {}
        for g in set(self.rater_groups) | set(b.rater_groups):
            groups[g] = tuple(self.rater_groups.get(g, ("",) * self.n_raters)) + tuple(
                b.rater_groups.get(g, ("",) * b.n_raters)
            )
        return replace(
            self,
            values=np.hstack([self.values, b.values]),
            rater_ids=self.rater_ids + new_ids,
            rater_groups=groups,
            parse_failures=self.parse_failures + b.parse_failures,
        )

    def to_records(self) -> list[dict[str, Any]]:
        """Long records (NaN cells omitted), the inverse of :meth:`from_records`."""
        out = []
        for i, iid in enumerate(self.item_ids):
            for j, rid in enumerate(self.rater_ids):
                v = self.values[i, j]
                if not math.isnan(v):
                    rec = {"item": iid, "rater": rid, "score": float(v)}
                    rec.update({g: lab[i] for g, lab in self.item_groups.items()})
                    rec.update({g: lab[j] for g, lab in self.rater_groups.items()})
                    out.append(rec)
        return out

    def __repr__(self) -> str:
        scale = f", scale={self.scale.name}" if self.scale else ""
        nmiss = int(np.isnan(self.values).sum())
        miss = f", {nmiss} missing" if nmiss else ""
        fails = f", {len(self.parse_failures)} parse failures" if self.parse_failures else ""
        return f"Ratings({self.n_items} items x {self.n_raters} raters{scale}{miss}{fails})"


# ---------------------------------------------------------------------- helpers
def _check_unique(ids: Sequence[str], what: str) -> None:
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        dup = next(i for i in ids if i in seen or seen.add(i))  # type: ignore[func-returns-value]
        raise RatingsError(f"duplicate {what} id {dup!r}")


def _ids(ids: Sequence[Any] | None, n: int, prefix: str) -> tuple[str, ...]:
    if ids is None:
        return tuple(f"{prefix}{i}" for i in range(n))
    out = tuple(str(i) for i in ids)
    if len(out) != n:
        raise RatingsError(f"{len(out)} {prefix} ids given for {n} {'rows' if prefix == 'item' else 'columns'}")
    return out


def _groups(groups: Mapping[str, Sequence[Any]] | None) -> dict[str, tuple[str, ...]]:
    return {str(k): tuple(str(x) for x in v) for k, v in (groups or {}).items()}


def _as_score(value: Any, where: str) -> float:
    if value is None or (isinstance(value, str) and value.strip() in ("", "NA", "nan", "NaN")):
        return math.nan
    if isinstance(value, bool):
        raise RatingsError(f"{where}: boolean rating {value!r} is not a score")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise RatingsError(f"{where}: non-numeric rating {value!r}") from None
    if math.isinf(out):
        raise RatingsError(f"{where}: infinite rating")
    return out


def _as_float_vector(values: Any, where: str) -> np.ndarray:
    return np.array([_as_score(v, f"rater {where}") for v in values], dtype=float)


def _as_float_matrix(values: Any) -> np.ndarray:
    if isinstance(values, np.ndarray) and values.dtype.kind in "fiu":
        arr = values.astype(float, copy=True)
    else:
        if isinstance(values, np.ndarray) and values.dtype.kind == "b":
            raise RatingsError("boolean ratings are not scores")
        if isinstance(values, (str, bytes)):
            raise RatingsError("ratings must be a 2-D array-like (items x raters), got a string")
        rows = list(values)
        if any(isinstance(r, (str, bytes)) for r in rows):
            raise RatingsError("ratings must be 2-D (items x raters): rows are strings, not sequences of scores")
        if rows and all(isinstance(r, (list, tuple, np.ndarray)) for r in rows):
            lengths = {len(r) for r in rows}
            if len(lengths) > 1:
                raise RatingsError(f"ragged input: rows have lengths {sorted(lengths)}")
        try:
            arr = np.array([[_as_score(v, f"row {i}") for v in r] for i, r in enumerate(rows)], dtype=float)
        except TypeError:
            raise RatingsError("ratings must be a 2-D array-like (items x raters)") from None
    if arr.ndim != 2:
        raise RatingsError(f"ratings must be 2-D (items x raters), got shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise RatingsError(f"empty ratings matrix {arr.shape}")
    return arr


def _set_group(target: dict[int, str], idx: int, rec: Mapping[str, Any], key: str, lineno: int, what: str) -> None:
    if key not in rec:
        raise RatingsError(f"record {lineno} has no {what} group field {key!r}")
    label = str(rec[key])
    old = target.setdefault(idx, label)
    if old != label:
        raise RatingsError(f"record {lineno}: {what} group {key!r} is {label!r} here but {old!r} earlier")


def _match(groups: Mapping[str, Sequence[str]], name: str, wanted: Any, what: str) -> np.ndarray:
    if name not in groups:
        raise RatingsError(f"no {what} group {name!r}; known: {sorted(groups)}")
    if isinstance(wanted, (str, int, float)):
        wanted = [wanted]
    wanted = {str(w) for w in wanted}
    return np.array([lab in wanted for lab in groups[name]], dtype=bool)
