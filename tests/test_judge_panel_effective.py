"""Every judge panel reports how many independent judges it is worth (``judge_panel`` records),
and the report warns when a panel is worth fewer than half its members."""

import re

import numpy as np
import pytest

from pytest_judgerel import Judge
from pytest_judgerel.llm import LLMClient, LLMSettings
from pytest_judgerel.session.recording import recording
from pytest_judgerel.report.build import assemble_report
from pytest_judgerel.report.html import render_html
from pytest_judgerel.report.metrics import panel_warnings
from pytest_judgerel.report.schema import REPORT_SCHEMA, schema_errors
from pytest_judgerel.report.terminal import write_summary
from pytest_judgerel.stats import effective_judges

N = 40
_rng = np.random.default_rng(0)
TRUTH = _rng.uniform(10, 90, N)
SHARED = _rng.normal(0, 15, N)        # the error of one model family
OWN = _rng.normal(0, 15, (N, 4))      # each model's own error
SMALL = _rng.normal(0, 3, (N, 4))
ITEMS = [{"id": f"i{i}", "sentence1": f"item {i}", "sentence2": "x"} for i in range(N)]


def _model(errors):
    def reply(messages, **params):
        user = next(m["content"] for m in messages if m["role"] == "user")
        i = int(re.search(r"item (\d+)", user).group(1))
        return str(int(np.clip(round(TRUTH[i] + errors[i]), 0, 100)))
    return reply


@pytest.fixture
def client(tmp_path):
    with LLMClient(LLMSettings(cache_dir=str(tmp_path / "cache"))) as c:
        yield c


class FakeTR:
    def __init__(self):
        self.lines = []

        class _Cfg:
            option = type("O", (), {"verbose": 0})()
        self.config = _Cfg()

    def write_sep(self, sep, title="", **markup):
        self.lines.append((title, markup))

    def write_line(self, line, **markup):
        self.lines.append((line, markup))


def _panel(client, scripted, errors):
    models = [scripted(f"scripted/m{j}", _model(e)) for j, e in enumerate(errors)]
    judge = Judge(model=models[0], template="stsb", scale="0-100", client=client)
    with recording() as rec:
        ratings = judge.rate_panel(ITEMS, models)
    return ratings, [r for r in rec.records if r["kind"] == "judge_panel"]


def test_a_family_panel_is_recorded_and_warned(client, scripted):
    # three models of one family (the same error plus a little of their own) and one other
    errors = [SHARED + SMALL[:, 0], SHARED + SMALL[:, 1], SHARED + SMALL[:, 2], OWN[:, 3]]
    ratings, recs = _panel(client, scripted, errors)
    assert len(recs) == 1
    rec = recs[0]
    expected = effective_judges(ratings.values)
    assert rec["effective_judges"] == pytest.approx(expected.value)
    assert rec["mean_error_correlation"] == pytest.approx(expected.mean_error_correlation)
    assert rec["k"] == 4 and rec["n"] == N and rec["reference"] == "panel" and len(rec["models"]) == 4
    assert rec["effective_judges"] < 2
    report = assemble_report([{"nodeid": "t.py::test_panel", "records": recs}], settings={})
    assert not schema_errors(report, REPORT_SCHEMA)
    assert report["totals"]["metrics"] == 0  # a description of the panel, not a gate
    warnings = panel_warnings(report)
    assert len(warnings) == 1 and "t.py::test_panel: the panel of 4 judges" in warnings[0]
    assert f"is worth {rec['effective_judges']:.1f} independent judges" in warnings[0]
    tr = FakeTR()
    write_summary(tr, report, [], None)
    assert any(line.startswith("judge panel warning: t.py::test_panel") and markup == {"yellow": True}
               for line, markup in tr.lines)
    assert "Judge panels worth fewer than half their members" in render_html(report)


def test_an_independent_panel_is_recorded_without_a_warning(client, scripted):
    _ratings, recs = _panel(client, scripted, [OWN[:, j] for j in range(4)])
    assert recs[0]["effective_judges"] > 2
    report = assemble_report([{"nodeid": "t.py::x", "records": recs}], settings={})
    assert panel_warnings(report) == []
    assert "Judge panels worth" not in render_html(report)


def test_a_panel_of_two_records_why_it_has_no_number(client, scripted):
    _ratings, recs = _panel(client, scripted, [OWN[:, 0], OWN[:, 1]])
    assert recs[0]["effective_judges"] is None and "at least 3 judges" in recs[0]["error"]
    assert panel_warnings(assemble_report([{"nodeid": "t.py::x", "records": recs}], settings={})) == []
