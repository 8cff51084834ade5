"""Seed 001 reproduced from its authors' data, as a test that gates on the reproduction.

Fetch the release (GitHub Harvard-AI-and-Robotics-Lab/LLM-Judge), point SEED001_RELEASE_DIR at
the checkout and run ``pytest examples/test_seed001_reproduction.py``; without the variable
the tests skip and say why.  The same tables print with
``python -m pytest_judgerel study reproduce --release $SEED001_RELEASE_DIR``.
"""

import os

import pytest

from pytest_judgerel.study.analysis import PANEL_MEAN
from pytest_judgerel.study.reproduce import reproduce

RELEASE = os.environ.get("SEED001_RELEASE_DIR")
pytestmark = pytest.mark.skipif(not RELEASE, reason="SEED001_RELEASE_DIR is not set: point it at a checkout of "
                                "the seed-001 data release (GitHub Harvard-AI-and-Robotics-Lab/LLM-Judge)")


@pytest.fixture(scope="module")
def reproduction():
    return reproduce(RELEASE)


@pytest.mark.parametrize("table", ["2", "3", "14", "15", "4a", "4b", "6"])
def test_table_reproduces_to_three_decimals(reproduction, table):
    misses = [f"{c.row} / {c.column}: paper {c.paper}, ours " + ("n/a" if c.ours is None else f"{c.ours:.4f}")
              for c in reproduction.table(table) if not c.reproduces()]
    assert not misses, f"Table {table}: " + "; ".join(misses)


def test_table5_misses_are_the_documented_ones(reproduction):
    misses = [c for c in reproduction.table("5") if not c.reproduces()]
    assert len(misses) <= 3 and all(c.note for c in misses), misses


def test_the_papers_headline_holds_on_its_own_data(reproduction):
    """Seed 001's title: human-LLM alignment is highest on 0-5 (Table 2), and 0-10 is the weakest."""
    res = reproduction.result
    icc = {s: res.agreement_for(PANEL_MEAN, s).icc for s in ("0-5", "0-10", "0-100")}
    assert max(icc, key=icc.get) == "0-5" and min(icc, key=icc.get) == "0-10", icc
    # and the reliability illusion of section 5.2: pooled LLM panel passes, MT-Bench and SummEval do not
    assert {i.group for i in res.reliability_illusions if i.scale == "0-5"} == {"benchmark MT-Bench",
                                                                                "benchmark SummEval"}
