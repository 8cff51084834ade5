"""Opt-in: seed 001's tables reproduced from a real copy of the authors' data release.

Set ``SEED001_RELEASE_DIR`` to a checkout of GitHub ``Harvard-AI-and-Robotics-Lab/LLM-Judge``
(its root or its ``data`` folder); the project does not ship those files (the release has no
licence).  Skipped when the variable is unset; the synthetic copy in the release's layout
(tests/test_seed001_release.py) runs everywhere.  The thresholds are the issue's: at least
160 of the 162 cells of Tables 2, 3, 4a, 4b, 6, 14 and 15 within 0.001 of the paper, and 15
of Table 5's 18, each miss explained in docs/study.md and in the package's table file.
"""

from __future__ import annotations

import os

import pytest

from pytest_judgerel.study import PANEL_MEAN
from pytest_judgerel.study_reproduce import reproduce

_ENV = "SEED001_RELEASE_DIR"


@pytest.fixture(scope="module")
def rep():
    root = os.environ.get(_ENV)
    if not root:
        pytest.skip(f"{_ENV} is not set (point it at a checkout of the LLM-Judge release to run this test)")
    return reproduce(root)


def test_main_tables_reproduce(rep):
    ok, n = rep.count(("2", "3", "4a", "4b", "6", "14", "15"))
    assert n == 162 and ok >= 160, [c for c in rep.cells if c.table != "1" and not c.reproduces()]


def test_table5_misses_are_explained(rep):
    ok, n = rep.count(("5",))
    assert n == 18 and ok >= 15
    assert all(c.note for c in rep.table("5") if not c.reproduces())


def test_release_facts(rep):
    res = rep.result
    assert res.agreement_for(PANEL_MEAN, "0-100").n == 149  # MT-Bench item 110 lacks Qwen's 0-100 score
    assert res.llm_panels[("MoralChoice", "0-5")].average.n == 50  # both actions of every scenario
    kinds = " ".join(rep.release_notes)
    for quirk in ("SummEval field order", "missing judge score", "rows humans did not rate", "data.id is not an item id"):
        assert quirk in kinds
