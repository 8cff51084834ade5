"""Inter-scale consistency of one judge (seed 001, Li et al. 2026, section 4.3 and Table 1).

The same judge scores the same items on several grading scales (0-5, 0-10,
0-100 ...).  Each scale is mapped linearly to [0, 1], repeats are averaged per
item, and the scales are treated as raters of an items x scales matrix: ICC
(absolute agreement by default) for all scales jointly and for every pair.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import ReliabilityError
from ..scales import Scale, ScaleLike
from ._input import as_vector_or_matrix, ids_of, item_means
from .icc import ICCResult, canonical_form, icc


@dataclass(frozen=True)
class ScaleConsistencyResult:
    """Joint and pairwise ICC across scales.

    ``matrix`` is the scales x scales array of pairwise ICCs (1.0 on the diagonal)
    in the order of ``scales``, ready for a heatmap.  ``normalized`` is the
    items x scales matrix of per-item means on [0, 1] the ICCs were computed on.
    """

    scales: tuple[str, ...]
    form: str
    joint: ICCResult
    pairwise: Mapping[tuple[str, str], ICCResult]
    n_items: int
    item_ids: tuple[Any, ...] | None
    normalized: np.ndarray = field(repr=False)

    @property
    def min_pair(self) -> tuple[tuple[str, str], ICCResult] | None:
        """The least consistent pair of scales (None when pairwise ICCs were not computed)."""
        if not self.pairwise:
            return None
        return min(self.pairwise.items(), key=lambda kv: kv[1].value)

    @property
    def matrix(self) -> np.ndarray:
        s = len(self.scales)
        out = np.full((s, s), np.nan)
        np.fill_diagonal(out, 1.0)
        pos = {name: i for i, name in enumerate(self.scales)}
        for (a, b), res in self.pairwise.items():
            out[pos[a], pos[b]] = out[pos[b], pos[a]] = res.value
        return out

    def to_dict(self) -> dict[str, Any]:
        mp = self.min_pair
        return {
            "scales": list(self.scales), "form": self.form, "n_items": self.n_items,
            "joint": self.joint.to_dict(),
            "pairwise": {f"{a} vs {b}": r.to_dict() for (a, b), r in self.pairwise.items()},
            "min_pair": None if mp is None else {"pair": list(mp[0]), "value": mp[1].value},
            "matrix": self.matrix.tolist(),
        }

    def __str__(self) -> str:
        lines = [f"inter-scale consistency, ICC({self.form}) on {self.n_items} items (scores mapped to [0, 1])",
                 f"  {', '.join(self.scales)}: {self.joint.value:.3f} "
                 f"[{self.joint.ci_low:.3f}, {self.joint.ci_high:.3f}] {self.joint.band}"]
        for (a, b), r in self.pairwise.items():
            lines.append(f"  {a} vs {b}: {r.value:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}] {r.band}")
        return "\n".join(lines)


def scale_consistency(
    ratings_by_scale: Mapping[str, Any],
    scales: Mapping[str, ScaleLike] | Sequence[ScaleLike] | None = None,
    form: str = "A,1",
    pairwise: bool = True,
    *,
    confidence: float = 0.95,
    nan_policy: str = "raise",
) -> ScaleConsistencyResult:
    """ICC across grading scales for the same items.

    ``ratings_by_scale``: ``{scale name: scores}``, scores 1-D (items) or 2-D
    items x repeats (or Ratings-like with ``to_matrix()``; ``item_ids`` are
    aligned when every entry exposes them).  ``scales``: optional mapping or
    sequence (in the order of ``ratings_by_scale``) of scale specs; by default
    an entry's own ``.scale`` (Ratings) is used, else its key is parsed with
    :meth:`Scale.parse` (``"0-5"``, ``"0-100"`` ...).
    """
    names = list(ratings_by_scale)
    if len(names) < 2:
        raise ReliabilityError(f"scale consistency needs ratings on at least 2 scales, got {names}")
    canon = canonical_form(form)
    specs = _scale_specs(names, scales, ratings_by_scale)
    columns, item_ids = _aligned_item_means(ratings_by_scale, names)
    normalized = np.column_stack([specs[name].normalize(col) for name, col in zip(names, columns)])
    for name, col in zip(names, normalized.T):
        bad = col[(col < -1e-9) | (col > 1 + 1e-9)]
        if bad.size:
            raise ReliabilityError(
                f"scores for scale {name!r} fall outside {specs[name].name}: e.g. "
                f"{specs[name].denormalize(float(bad[0]))!r}; pass the scale actually used"
            )
    joint = icc(normalized, canon, confidence=confidence, nan_policy=nan_policy)
    pairs: dict[tuple[str, str], ICCResult] = {}
    if pairwise:
        for (i, a), (j, b) in itertools.combinations(enumerate(names), 2):
            pairs[(a, b)] = icc(normalized[:, [i, j]], canon, confidence=confidence, nan_policy=nan_policy)
    return ScaleConsistencyResult(tuple(names), canon, joint, pairs, normalized.shape[0], item_ids, normalized)


def _scale_specs(names: list[str], scales: Any, ratings_by_scale: Mapping[str, Any]) -> dict[str, Scale]:
    if scales is None:  # a Ratings-like entry's own .scale wins over parsing the key
        return {n: ratings_by_scale[n].scale if isinstance(getattr(ratings_by_scale[n], "scale", None), Scale)
                else Scale.parse(n) for n in names}
    if isinstance(scales, Mapping):
        missing = [n for n in names if n not in scales]
        if missing:
            raise ReliabilityError(f"no scale given for {missing}")
        return {n: Scale.parse(scales[n]) for n in names}
    scales = list(scales)
    if len(scales) != len(names):
        raise ReliabilityError(f"{len(scales)} scales given for {len(names)} entries {names}")
    return {n: Scale.parse(s) for n, s in zip(names, scales)}


def _aligned_item_means(ratings_by_scale: Mapping[str, Any], names: list[str]) -> tuple[list[np.ndarray], Any]:
    """Per-item means per scale, checked (and reordered by item_ids) to cover the same items."""
    ids = {n: ids_of(ratings_by_scale[n], "item_ids") for n in names}
    columns = {n: item_means(as_vector_or_matrix(ratings_by_scale[n], name=f"ratings on scale {n!r}"))
               for n in names}
    first = names[0]
    known = {n: i for n, i in ids.items() if i is not None}
    ref = known.get(first)
    if ref is not None and len(known) == len(names):
        for n in names[1:]:
            other = known[n]
            if set(other) != set(ref) or len(other) != len(ref):
                only_a = sorted(map(str, set(ref) - set(other)))[:5]
                only_b = sorted(map(str, set(other) - set(ref)))[:5]
                raise ReliabilityError(
                    f"scales {first!r} and {n!r} cover different items: only in {first!r}: {only_a}, "
                    f"only in {n!r}: {only_b}"
                )
            if other != ref:
                pos = {item: i for i, item in enumerate(other)}
                columns[n] = columns[n][[pos[item] for item in ref]]
        return [columns[n] for n in names], ref
    sizes = {n: columns[n].size for n in names}
    if len(set(sizes.values())) > 1:
        raise ReliabilityError(f"scales cover different numbers of items: {sizes}")
    return [columns[n] for n in names], None
