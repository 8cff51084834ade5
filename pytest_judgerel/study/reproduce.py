"""Seed 001's tables recomputed from the authors' data release, cell by cell against the paper.

:func:`reproduce` loads the release (:mod:`pytest_judgerel.study.release`), runs
:func:`pytest_judgerel.study.analysis.analyse` on it the way the paper describes (human panels per
scale, LLM panels over every judge row, agreement of the panel mean and of each judge,
per gender, the temperature ablation) and lays every printed number of Tables 1-6, 14 and
15 beside ours.  The paper's numbers live in one data file of the package,
``data/seed001_paper/tables.json``; the cells known not to reproduce carry the reason there.
``python -m pytest_judgerel study reproduce --release DIR`` is the command.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

TABLE_ORDER = ("2", "3", "14", "15", "4a", "4b", "5", "6", "1")
"""Tables in the order the command prints them (the paper's order, appendix tables beside Table 3)."""

TOLERANCE = 0.001
"""A cell reproduces when |ours - paper| <= this (the paper prints three decimals)."""


@lru_cache(maxsize=1)
def paper_tables() -> dict[str, Any]:
    """The paper's printed values: ``{"tables": {name: {"columns", "rows", ...}}, "notes": ...}``."""
    text = resources.files("pytest_judgerel").joinpath("data/seed001_paper/tables.json").read_text(encoding="utf-8")
    return json.loads(text)


@dataclass(frozen=True)
class Cell:
    """One printed number of the paper and ours (None when the release cannot give it)."""

    table: str
    row: str
    column: str
    paper: float
    ours: float | None
    note: str = ""

    @property
    def difference(self) -> float | None:
        return None if self.ours is None else self.ours - self.paper

    def reproduces(self, tolerance: float = TOLERANCE) -> bool:
        d = self.difference
        return d is not None and not math.isnan(d) and abs(d) <= tolerance + 1e-12

    def to_dict(self) -> dict[str, Any]:
        return {"table": self.table, "row": self.row, "column": self.column, "paper": self.paper,
                "ours": self.ours, "difference": self.difference, "reproduces": self.reproduces(),
                **({"note": self.note} if self.note else {})}


@dataclass(frozen=True)
class Reproduction:
    """Every cell, the release's notes and the study result behind them."""

    cells: tuple[Cell, ...]
    release_notes: tuple[str, ...]
    result: Any
    summeval_reading: str

    def table(self, name: str) -> list[Cell]:
        return [c for c in self.cells if c.table == name]

    def count(self, tables: tuple[str, ...] | None = None, tolerance: float = TOLERANCE) -> tuple[int, int]:
        """``(cells within tolerance, cells)`` over ``tables`` (all by default)."""
        sel = [c for c in self.cells if tables is None or c.table in tables]
        return sum(c.reproduces(tolerance) for c in sel), len(sel)

    def to_json(self) -> dict[str, Any]:
        return {"source": paper_tables()["source"], "tolerance": TOLERANCE, "summeval_reading": self.summeval_reading,
                "release_notes": list(self.release_notes), "cells": [c.to_dict() for c in self.cells]}

    def render(self) -> str:
        """Every table laid out as in the paper, each cell as paper / ours / difference."""
        tabs = paper_tables()["tables"]
        out: list[str] = []
        for name in TABLE_ORDER:
            cells = self.table(name)
            if not cells:
                continue
            spec = tabs[name]
            ok, n = self.count((name,))
            out.append(f"Table {name}: {spec['title']}  [{ok}/{n} within {TOLERANCE}]")
            cols = spec["columns"]
            width = max(len(r) for r in spec["rows"]) + 2
            out.append(" " * width + "".join(f"{c:>24}" for c in cols))
            by_key = {(c.row, c.column): c for c in cells}
            for row in spec["rows"]:
                line = f"{row:<{width}}"
                for col in cols:
                    c = by_key[(row, col)]
                    ours = "  n/a" if c.ours is None else _fixed(c.ours, 3)
                    diff = "" if c.difference is None else _fixed(c.difference, 3, signed=True)
                    mark = " " if c.reproduces() else "*"
                    line += f"{c.paper:>9.3f} {ours:>6} {diff:>6}{mark}"
                out.append(line)
            notes = sorted({c.note for c in cells if c.note and not c.reproduces()})
            out += [f"  * {n}" for n in notes]
            out.append("")
        out.append("columns: paper, ours, ours - paper; * = differs by more than the tolerance")
        return "\n".join(out)


def _fixed(value: float, digits: int, *, signed: bool = False) -> str:
    """``value`` with ``digits`` decimals; a value that rounds to zero is shown unsigned-zero
    (``0.000``, ``+0.000`` when ``signed``), never ``-0.000``."""
    text = f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"
    if float(text) == 0:
        text = ("+" if signed else "") + f"{0:.{digits}f}"
    return text


def reproduce(release_dir: str | Path, *, summeval_reading: str = "first") -> Reproduction:
    """Recompute Tables 1-6, 14 and 15 of seed 001 from its data release at ``release_dir``."""
    from .release import TEMPERATURES, load_seed001_release
    from .analysis import analyse

    release = load_seed001_release(release_dir, summeval_reading=summeval_reading)
    temps = {t: release.judged(t) for t in TEMPERATURES if t != 1.0 and any(k[0] == t for k in release.temperatures)}
    result = analyse(release.human_by_scale(), release.judged(), subgroup="gender", temperatures=temps)
    cells = tuple(_cells(result))
    return Reproduction(cells, tuple(str(n) for n in release.notes), result, summeval_reading)


def _ours(result: Any, table: str, row: str, column: str, spec: Mapping[str, Any]) -> float | None:
    """The number of ``result`` that the paper printed in ``table`` at ``row``/``column``
    (None when the release cannot give it)."""
    from .analysis import PANEL_MEAN

    what = "nmae" if column.startswith("nMAE") else "icc"
    try:
        if table == "2":
            if column == "ICC_Human":
                return float(result.human_panels[(None, row)].average.value)
            if column == "ICC_LLM":
                return float(result.llm_panels[(None, row)].average.value)
            return _num(getattr(result.agreement_for(PANEL_MEAN, row), what))
        if table in ("3", "14", "15"):
            scale = spec["scale"]
            human = result.human_panels[(row, scale)].average.value
            llm = result.llm_panels[(row, scale)].average.value
            # Delta is the difference of the two printed (three-decimal) values, as the paper's column is
            return float({"ICC_Human": human, "ICC_LLM": llm,
                          "Delta": round(human, 3) - round(llm, 3)}[column])
        if table in ("4a", "4b"):
            who, scale = row.split(" / ")
            bench, model = (who, PANEL_MEAN) if table == "4a" else (None, who)
            return _num(getattr(result.agreement_for(model, scale, bench), what))
        if table == "5":
            if column in ("ICC_Male", "ICC_Female"):
                group = "gender=" + column.split("_")[1]
                return float(result.subgroup_panels[(None, row, group)].average.value)
            group = "gender=" + column.split("_")[-1].split("-")[0]
            return _num(getattr(result.agreement_for(PANEL_MEAN, row, None, group), what))
        if table == "6":
            model, scale = row.split(" / ")
            t = None if column == "T=1" else float(column[2:])
            return _num(result.agreement_for(model, scale, temperature=t).icc)
        if table == "1":
            bench, comparison = row.split(" / ")
            models = [c for c in spec["columns"] if c != "Avg."] if column == "Avg." else [column]
            values = [_consistency(result.consistency[(m, bench)], comparison) for m in models]
            return float(sum(values) / len(values))
    except KeyError:
        return None
    raise KeyError(f"no rule for table {table!r}")


def _num(v: Any) -> float | None:
    return None if v is None else float(v)


def _consistency(r: Any, comparison: str) -> float:
    if comparison == "0-5, 0-10, 0-100":
        return float(r.joint.value)
    a, b = comparison.split(" vs ")
    return float(r.pairwise[(a, b)].value)


def _cells(result: Any) -> list[Cell]:
    spec = paper_tables()
    tabs, notes = spec["tables"], spec.get("notes", {})
    cells = []
    for name in TABLE_ORDER:
        t = tabs[name]
        for row, values in t["rows"].items():
            for col, paper in zip(t["columns"], values):
                note = notes.get(name, {}).get(f"{row} | {col}") or notes.get(name, {}).get("*", "")
                cells.append(Cell(name, row, col, float(paper), _ours(result, name, row, col, t), note))
    return cells


def cells_by_key(cells: Any) -> Mapping[tuple[str, str, str], Cell]:
    """``{(table, row, column): cell}``."""
    return {(c.table, c.row, c.column): c for c in cells}
