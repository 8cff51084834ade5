"""Ratings not drawn yet: what ``Judge.rate`` returns in sequential mode (``--judgerel-sequential``).

A :class:`PendingRatings` holds the judge, the items and the cap (the fixed design: every item
rated ``repeats`` times, raters ``r0`` ... ``r(k-1)``).  A sequential gate
(:mod:`pytest_judgerel.gates.sequential`) draws it in steps:

* :meth:`PendingRatings.repeats_prefix` -- the first ``r`` repeat columns of every item (ICC over
  repeats);
* :meth:`PendingRatings.items_prefix` -- every repeat of the first ``m`` items in the judging order
  (pass rate and human mean over items);
* :meth:`PendingRatings.block_prefix` -- the first ``r`` repeats of the first ``m`` items (an ICC
  look on a first share of the items).

Each cell is the same request as the fixed design's (repeat ``j`` is sample index ``j``), so a
sequential run and a fixed run share their cache entries, and nothing is drawn twice.  The judging
order of the items is a fixed pseudo-random permutation (by a hash of the item id): every prefix is
a random sample of the set, as the items rules' predictive model assumes, whatever order the data
set is sorted in, and the same prefix is drawn run after run.

Any other use -- a field (``values``, ``item_ids``...), a method (``to_matrix``, ``select_items``),
a non-sequential gate, a statistic -- first draws the whole cap (:meth:`PendingRatings.materialize`):
it then *is* the fixed design's :class:`~pytest_judgerel.ratings.Ratings`, so nothing silently sees
fewer repeats or items.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, fields
from typing import Any, Mapping, Sequence

from ..ratings import Ratings
from ..scales import Scale

__all__ = ["PendingRatings", "PendingDesign", "judging_order"]

_FIELDS = frozenset(f.name for f in fields(Ratings))


@dataclass(frozen=True)
class PendingDesign:
    """The cap of a pending design: ``items`` x ``repeats`` judge calls."""

    items: int
    repeats: int

    @property
    def calls(self) -> int:
        return self.items * self.repeats


def judging_order(item_ids: Sequence[str]) -> list[int]:
    """The order items are judged in when drawn by items: by SHA-256 of the id (a fixed
    pseudo-random permutation, independent of how the data set is sorted)."""
    return sorted(range(len(item_ids)), key=lambda i: (hashlib.sha256(item_ids[i].encode()).hexdigest(), i))


class PendingRatings(Ratings):
    """Ratings a sequential gate draws in steps (module docstring); anything else draws the cap first."""

    # the pending state lives beside the (not yet set) dataclass fields; set with object.__setattr__
    _judge: Any
    _rows: list[tuple[str, Mapping[str, Any]]]
    _scale: Scale
    _cap: int
    _cells: dict[tuple[int, str], Any]
    _order: list[int]
    _done: bool

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if "values" in kwargs:  # dataclasses.replace() of a materialised one (select_items...): plain Ratings
            return Ratings(**kwargs)
        return super().__new__(cls)

    def __init__(self, judge: Any, rows: list[tuple[str, Mapping[str, Any]]], scale: Scale, repeats: int) -> None:
        for name, value in (("_judge", judge), ("_rows", list(rows)), ("_scale", scale), ("_cap", int(repeats)),
                            ("_cells", {}), ("_order", judging_order([r[0] for r in rows])), ("_done", False)):
            object.__setattr__(self, name, value)

    def __getattribute__(self, name: str) -> Any:
        if name in _FIELDS and not object.__getattribute__(self, "_done"):
            object.__getattribute__(self, "materialize")()
        return object.__getattribute__(self, name)

    def __repr__(self) -> str:  # never draws (pytest may repr a test's locals)
        if object.__getattribute__(self, "_done"):
            return Ratings.__repr__(self)
        d = self.design
        return (f"PendingRatings({d.items} items x {d.repeats} repeats, {self.calls_drawn} of {d.calls} "
                "calls drawn)")

    # ------------------------------------------------------------------ the design
    @property
    def design(self) -> PendingDesign:
        return PendingDesign(len(self._rows), self._cap)

    @property
    def judge(self) -> Any:
        return self._judge

    @property
    def materialized(self) -> bool:
        """Whether the whole cap has been drawn (it is then the fixed design's Ratings)."""
        return bool(self._done)

    @property
    def calls_drawn(self) -> int:
        """Judge answers drawn so far (cells; re-asks of unparsed replies not counted)."""
        return len(self._cells)

    def _columns(self, repeats: int) -> list[str]:
        return [f"r{j}" for j in range(repeats)]

    # ------------------------------------------------------------------ drawing
    def _draw(self, rows: Sequence[int], cols: Sequence[str]) -> None:
        """Judge the missing cells of ``rows`` x ``cols`` (grouped so each call batch is rows x columns)."""
        by_rows: dict[tuple[int, ...], list[str]] = {}
        for col in cols:
            missing = tuple(i for i in rows if (i, col) not in self._cells)
            if missing:
                by_rows.setdefault(missing, []).append(col)
        for missing, group in by_rows.items():
            subset = [self._rows[i] for i in missing]
            columns = [(c, dict(scale=self._scale, sample_index=int(c[1:]))) for c in group]
            results = self._judge._run_many(subset, columns)  # same room: the judge's own call path
            for (local, col), cell in results.items():
                self._cells[(missing[local], col)] = cell

    def _assemble(self, rows: Sequence[int], cols: Sequence[str], **prov: Any) -> Ratings:
        subset = [self._rows[i] for i in rows]
        local = {(k, c): self._cells[(i, c)] for k, i in enumerate(rows) for c in cols}
        return self._judge._assemble(subset, list(cols), local, self._scale, design="repeats", repeats=self._cap,
                                     **prov)

    def repeats_prefix(self, repeats: int) -> Ratings:
        """Every item's first ``repeats`` repeats (``r0`` ...), drawing the missing ones: items x repeats,
        provenance of the fixed design (``repeats`` = the cap) plus ``drawn_repeats``."""
        if not 1 <= repeats <= self._cap:
            raise ValueError(f"repeats_prefix({repeats}): the cap is {self._cap} repeats")
        rows = list(range(len(self._rows)))
        cols = self._columns(repeats)
        self._draw(rows, cols)
        return self._assemble(rows, cols, drawn_repeats=repeats)

    def block_prefix(self, items: int, repeats: int) -> Ratings:
        """The first ``repeats`` repeats of the first ``items`` items in the judging order
        (:func:`judging_order`), drawing the missing ones (an ICC look on a first share of the items)."""
        if not 1 <= items <= len(self._rows) or not 1 <= repeats <= self._cap:
            raise ValueError(f"block_prefix({items}, {repeats}): the cap is {len(self._rows)} items x {self._cap} "
                             "repeats")
        rows = self._order[:items]
        cols = self._columns(repeats)
        self._draw(rows, cols)
        return self._assemble(rows, cols, drawn_items=items, drawn_repeats=repeats)

    def items_prefix(self, items: int) -> Ratings:
        """Every repeat of the first ``items`` items in the judging order (:func:`judging_order`),
        drawing the missing ones: those items x the cap's repeats, in judging order."""
        if not 1 <= items <= len(self._rows):
            raise ValueError(f"items_prefix({items}): the cap is {len(self._rows)} items")
        rows = self._order[:items]
        cols = self._columns(self._cap)
        self._draw(rows, cols)
        return self._assemble(rows, cols, drawn_items=items)

    def materialize(self) -> Ratings:
        """Draw the whole cap (what is missing of it) and become the fixed design's Ratings."""
        if not object.__getattribute__(self, "_done"):
            rows = list(range(len(self._rows)))
            cols = self._columns(self._cap)
            self._draw(rows, cols)
            full = self._assemble(rows, cols)
            for name in _FIELDS:
                object.__setattr__(self, name, getattr(full, name))
            object.__setattr__(self, "_done", True)
        return self
