"""Turn user input into a validated float matrix (items x raters, NaN = missing).

Shared by every statistic in :mod:`pytest_judgerel.stats`.  Accepts a 2-D
array-like or any object with ``to_matrix()`` (the :class:`~pytest_judgerel.ratings.Ratings`
contract of ``docs/architecture.md``) and rejects what would silently give a wrong
number: booleans, strings, ragged rows, infinities, 3-D input without an explicit
duplicates policy.  ``None`` counts as a missing rating.
"""

from __future__ import annotations

import numbers
from typing import Any, Sequence

import numpy as np

from ..errors import ReliabilityError

DUPLICATE_POLICIES = ("raise", "mean", "first", "last")
NAN_POLICIES = ("raise", "omit")


def check_alpha(alpha: Any) -> float:
    """``alpha``, the level of a test, as a float strictly between 0 and 0.5."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 0.5:
        raise ReliabilityError(f"alpha must lie strictly between 0 and 0.5, got {alpha!r}")
    return float(alpha)


def as_matrix(data: Any, *, name: str = "ratings", duplicates: str = "raise") -> np.ndarray:
    """Return ``data`` as a float64 2-D array (a copy), validating type and shape.

    A 3-D array is read as items x raters x repeats (repeated judgments of the
    same cell); ``duplicates`` says how to collapse the repeats: ``"raise"``
    (default), ``"mean"`` (mean of the non-missing repeats), ``"first"`` or
    ``"last"`` (first/last non-missing repeat).
    """
    if duplicates not in DUPLICATE_POLICIES:
        raise ReliabilityError(f"duplicates must be one of {DUPLICATE_POLICIES}, got {duplicates!r}")
    arr = _to_float_array(data, name)
    if arr.ndim == 3:
        if duplicates == "raise":
            raise ReliabilityError(
                f"{name} is 3-D {arr.shape}: read as items x raters x repeats; pass "
                "duplicates='mean'|'first'|'last' to collapse repeated judgments of a cell"
            )
        arr = collapse_repeats(arr, duplicates)
    if arr.ndim != 2:
        raise ReliabilityError(f"{name} must be 2-D (items x raters), got {arr.ndim}-D with shape {arr.shape}")
    return arr


def as_vector_or_matrix(data: Any, *, name: str) -> np.ndarray:
    """Like :func:`as_matrix` but a 1-D sequence (one score per item) is allowed."""
    arr = _to_float_array(data, name)
    if arr.ndim not in (1, 2):
        raise ReliabilityError(f"{name} must be 1-D (items) or 2-D (items x raters), got shape {arr.shape}")
    return arr


def item_means(arr: np.ndarray) -> np.ndarray:
    """Per-item mean of the non-missing ratings (NaN where an item has none)."""
    if arr.ndim == 1:
        return arr.copy()
    present = ~np.isnan(arr)
    counts = present.sum(axis=1)
    sums = np.where(present, arr, 0.0).sum(axis=1)
    out = np.full(arr.shape[0], np.nan)
    np.divide(sums, counts, out=out, where=counts > 0)
    return out


def collapse_repeats(arr: np.ndarray, policy: str) -> np.ndarray:
    """Collapse the last axis (repeats) of a 3-D array by ``policy``."""
    present = ~np.isnan(arr)
    if policy == "mean":
        counts = present.sum(axis=-1)
        out = np.full(arr.shape[:-1], np.nan)
        np.divide(np.where(present, arr, 0.0).sum(axis=-1), counts, out=out, where=counts > 0)
        return out
    reps = arr.shape[-1]
    idx = np.argmax(present, axis=-1) if policy == "first" else reps - 1 - np.argmax(present[..., ::-1], axis=-1)
    out = np.take_along_axis(arr, idx[..., None], axis=-1)[..., 0]
    return np.where(present.any(axis=-1), out, np.nan)


def check_min_shape(arr: np.ndarray, *, min_items: int = 2, min_raters: int = 2, name: str = "ratings") -> None:
    n, k = arr.shape
    if n < min_items:
        raise ReliabilityError(f"{name} has {n} item(s); at least {min_items} items are needed")
    if k < min_raters:
        raise ReliabilityError(f"{name} has {k} rater(s); at least {min_raters} raters are needed")


def drop_missing(
    arr: np.ndarray,
    nan_policy: str,
    *,
    name: str = "ratings",
    item_ids: Sequence[Any] | None = None,
    rater_ids: Sequence[Any] | None = None,
) -> tuple[np.ndarray, int]:
    """Apply ``nan_policy`` to a 2-D matrix; return (complete matrix, items omitted).

    ``"raise"`` names the items and raters with missing ratings; ``"omit"``
    deletes every item with any missing rating (listwise, as pingouin and irr do).
    """
    if nan_policy not in NAN_POLICIES:
        raise ReliabilityError(f"nan_policy must be one of {NAN_POLICIES}, got {nan_policy!r}")
    missing = np.isnan(arr)
    if not missing.any():
        return arr, 0
    bad_items = np.flatnonzero(missing.any(axis=1))
    if nan_policy == "raise":
        bad_raters = np.flatnonzero(missing.any(axis=0))
        raise ReliabilityError(
            f"{name} has {int(missing.sum())} missing rating(s) in item(s) "
            f"{_label(bad_items, item_ids)} from rater(s) {_label(bad_raters, rater_ids)}; "
            "fill them or pass nan_policy='omit' to drop those items"
        )
    kept = arr[~missing.any(axis=1)]
    if kept.shape[0] < 2:
        empty = np.flatnonzero(missing.all(axis=0))
        hint = f"; rater(s) {_label(empty, rater_ids)} have no ratings at all, remove them" if empty.size else ""
        raise ReliabilityError(
            f"nan_policy='omit' dropped {bad_items.size} of {arr.shape[0]} items with missing ratings; "
            f"{kept.shape[0]} complete item(s) remain, at least 2 are needed{hint}"
        )
    return kept, int(bad_items.size)


def ids_of(data: Any, attr: str) -> tuple[Any, ...] | None:
    """``data.item_ids`` / ``data.rater_ids`` when a Ratings-like object exposes them."""
    ids = getattr(data, attr, None)
    return tuple(ids) if ids is not None and not isinstance(ids, str) else None


def _label(indices: np.ndarray, ids: Sequence[Any] | None, limit: int = 10) -> str:
    names = [repr(ids[i]) if ids is not None else str(int(i)) for i in indices[:limit]]
    more = f" (+{indices.size - limit} more)" if indices.size > limit else ""
    return "[" + ", ".join(names) + "]" + more


def _to_float_array(data: Any, name: str) -> np.ndarray:
    if hasattr(data, "to_matrix") and callable(data.to_matrix):
        data = data.to_matrix()
    if data is None or isinstance(data, (str, bytes)):
        raise ReliabilityError(f"{name} must be numeric ratings, got {type(data).__name__}")
    try:
        # Nested Python sequences keep their element types (so True is not silently 1.0).
        raw = np.asarray(data, dtype=object) if isinstance(data, (list, tuple)) else np.asarray(data)
    except ValueError as exc:  # numpy 2: inhomogeneous shape
        raise ReliabilityError(f"{name} is ragged (rows of different lengths): {exc}") from None
    kind = raw.dtype.kind
    if kind == "b":
        raise ReliabilityError(f"{name} holds booleans; convert them to numbers (0/1) explicitly if intended")
    if kind in "iuf":
        arr = raw.astype(np.float64, copy=True)
    elif kind == "O":
        arr = _object_to_float(raw, name)
    else:
        raise ReliabilityError(f"{name} must be numeric, got values of dtype {raw.dtype} (e.g. {raw.flat[0]!r})"
                               if raw.size else f"{name} must be numeric, got dtype {raw.dtype}")
    if arr.size == 0:
        raise ReliabilityError(f"{name} is empty (shape {arr.shape})")
    if np.isinf(arr).any():
        where = tuple(int(i) for i in np.argwhere(np.isinf(arr))[0])
        raise ReliabilityError(f"{name} contains an infinite rating at index {where}")
    return arr


def _object_to_float(raw: np.ndarray, name: str) -> np.ndarray:
    flat = raw.ravel()
    out = np.empty(flat.size, dtype=np.float64)
    for i, v in enumerate(flat):
        if v is None:
            out[i] = np.nan
        elif isinstance(v, (bool, np.bool_)):
            raise ReliabilityError(f"{name} holds a boolean ({v!r}); ratings must be numbers")
        elif isinstance(v, numbers.Real):
            out[i] = float(v)
        elif isinstance(v, (list, tuple, np.ndarray)):
            raise ReliabilityError(f"{name} is ragged (rows of different lengths or nested sequences)")
        else:
            raise ReliabilityError(f"{name} must be numeric, got {v!r} ({type(v).__name__})")
    return out.reshape(raw.shape)
