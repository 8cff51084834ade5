"""Run history (numbered files, list, compare), shard merge, and the report/history CLI."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from pytest_judgerel.report import cli
from pytest_judgerel.report.build import assemble_report
from pytest_judgerel.report.history import (
    compare_runs,
    find_run,
    list_runs,
    metric_table,
    run_fingerprint,
    write_run,
)
from pytest_judgerel.report.io import write_json_atomic
from pytest_judgerel.report.merge import MergeError, merge_reports
from pytest_judgerel.report.schema import ReportFormatError, validate_report


def rec(value, ci=(0.0, 1.0), model="m1", statistic="ICC(A,1)", direction="min"):
    return {"kind": "icc", "statistic": statistic, "value": value, "ci": list(ci) if ci else None,
            "direction": direction, "passed": True, "n": 10, "threshold": 0.5,
            "judge": {"model": model, "template_hash": "t", "temperature": 0.0}}


def rep(tests, calls=None, crashed=()):
    return assemble_report([{"nodeid": n, "records": r, "calls": dict(calls or {})} for n, r in tests],
                           settings={"model": "m1"}, crashed=crashed)


# ---------------------------------------------------------------------- history
def test_runs_are_numbered_and_named_by_judge_fingerprint(tmp_path: Path) -> None:
    a = rep([("t::x", [rec(0.8)])])
    b = rep([("t::x", [rec(0.7, model="m2")])])
    p1 = write_run(tmp_path / "h", a)
    p2 = write_run(tmp_path / "h", rep([("t::x", [rec(0.81)])]))
    p3 = write_run(tmp_path / "h", b)
    names = [Path(p).name for p in (p1, p2, p3)]
    assert names == [f"0001_{run_fingerprint(a)}.json", f"0002_{run_fingerprint(a)}.json",
                     f"0003_{run_fingerprint(b)}.json"]
    assert run_fingerprint(a) != run_fingerprint(b)
    assert a["run"]["number"] == 1 and a["run"]["file"] == names[0]
    runs = list_runs(tmp_path / "h")
    assert [r.number for r in runs] == [1, 2, 3] and runs[2].models == ("m2",)
    for p in (p1, p2, p3):
        validate_report(json.loads(Path(p).read_text()))
    assert find_run(runs, "2").number == 2 and find_run(runs, "0003").number == 3
    assert find_run(runs, "last").number == 3 and find_run(runs, "-2").number == 2
    assert find_run(runs, names[0]).number == 1
    with pytest.raises(ReportFormatError, match="no run '9'"):
        find_run(runs, "9")


def test_write_run_never_overwrites_an_existing_number(tmp_path: Path) -> None:
    d = tmp_path / "h"
    d.mkdir()
    fp = run_fingerprint(rep([("t::x", [rec(0.8)])]))
    (d / f"0001_{fp}.json").write_text("taken")
    (d / "0002_other.json").write_text("taken too")
    path = write_run(d, rep([("t::x", [rec(0.8)])]))
    assert Path(path).name == f"0003_{fp}.json"
    assert (d / f"0001_{fp}.json").read_text() == "taken"


def test_compare_runs_uses_the_baseline_rule() -> None:
    old = rep([("t::x", [rec(0.85, (0.8, 0.9))]), ("t::y", [rec(0.5)])])
    new = rep([("t::x", [rec(0.60, (0.5, 0.7), model="m2")]), ("t::y", [rec(0.52)])])
    comp = compare_runs(old, new)
    status = {e.nodeid: e.status for e in comp.entries}
    assert status == {"t::x": "regression", "t::y": "pass"}
    assert comp.entries[0].judge_changes == {"model": ["m1", "m2"]}
    table = metric_table([old, new])
    assert table[("t::x", "ICC(A,1)")] == [0.85, 0.60]


def test_history_written_by_pytest_runs(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_h='''
import numpy as np
from pytest_judgerel import assert_icc_above
def test_a():
    rng = np.random.default_rng(1)
    t = np.linspace(0, 5, 12)
    assert_icc_above(np.column_stack([t + rng.normal(0, .3, 12) for _ in range(3)]), 0.5)
''')
    for _ in range(2):
        assert pytester.runpytest_subprocess("-p", "no:cacheprovider", "--judgerel-history=runs").ret == 0
    runs = list_runs(pytester.path / "runs")
    assert [r.name for r in runs] == ["0001_data.json", "0002_data.json"]
    assert runs[0].metrics == 1


# ---------------------------------------------------------------------- merge
def test_merge_unites_tests_and_sums_totals() -> None:
    s1 = rep([("t::a", [rec(0.8)]), ("t::b", [rec(0.4)])], calls={"calls": 10, "hits": 4, "misses": 6,
                                                                  "cost": 0.5})
    s2 = rep([("t::c", [rec(0.9)])], calls={"calls": 3, "hits": 3, "retries": 1}, crashed=["t::dead"])
    merged = merge_reports([s1, s2], ["one.json", "two.json"])
    validate_report(merged)
    assert [t["nodeid"] for t in merged["tests"]] == ["t::a", "t::b", "t::c"]
    tot = merged["totals"]
    assert tot["calls"] == 10 + 10 + 3 and tot["hits"] == 4 + 4 + 3 and tot["retries"] == 1
    assert tot["cost"] == pytest.approx(1.0)
    assert tot["hit_rate"] == pytest.approx(11 / (11 + 12))
    for key in ("tests", "metrics", "calls", "hits", "misses"):
        assert tot[key] == s1["totals"][key] + s2["totals"][key], key
    assert merged["crashed"] == ["t::dead"]
    assert [s["source"] for s in merged["shards"]] == ["one.json", "two.json"]
    assert merged["duplicates"] == []


def test_merge_detects_duplicates() -> None:
    s1 = rep([("t::a", [rec(0.8)])])
    s2 = rep([("t::a", [rec(0.3)]), ("t::b", [rec(0.5)])])
    with pytest.raises(MergeError, match=r"1 test\(s\) appear in more than one shard: t::a \(in s1, s2\)"):
        merge_reports([s1, s2], ["s1", "s2"])
    first = merge_reports([s1, s2], ["s1", "s2"], on_duplicate="first")
    last = merge_reports([s1, s2], ["s1", "s2"], on_duplicate="last")
    assert first["duplicates"] == last["duplicates"] == ["t::a"]
    assert first["tests"][0]["records"][0]["value"] == 0.8 and last["tests"][0]["records"][0]["value"] == 0.3


def test_merge_rejects_invalid_shards() -> None:
    with pytest.raises(ReportFormatError, match="report 'bad'"):
        merge_reports([{"schema": "x"}], ["bad"])
    with pytest.raises(MergeError, match="no reports"):
        merge_reports([])


# ---------------------------------------------------------------------- CLI
def _write(tmp_path: Path, name: str, report: dict) -> str:
    return write_json_atomic(tmp_path / name, report)


def test_cli_merge_with_baseline_gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _write(tmp_path, "a.json", rep([("t::a", [rec(0.85, (0.8, 0.9))])]))
    b = _write(tmp_path, "b.json", rep([("t::b", [rec(0.5)])]))
    out = tmp_path / "all.json"
    assert cli.main(["report", "merge", a, b, "-o", str(out), "--html", str(tmp_path / "all.html")]) == 0
    merged = json.loads(out.read_text())
    assert merged["totals"]["tests"] == 2 and (tmp_path / "all.html").read_text().startswith("<!DOCTYPE html>")
    assert "merged 2 reports: 2 tests" in capsys.readouterr().out

    # the accepted baseline has t::a at 0.85; a shard now reports 0.6 with a disjoint CI
    from pytest_judgerel.report.baseline import updated_baseline

    write_json_atomic(tmp_path / "base.json", updated_baseline(None, merged))
    worse = _write(tmp_path, "a2.json", rep([("t::a", [rec(0.60, (0.5, 0.7))])]))
    code = cli.main(["report", "merge", worse, b, "-o", str(out), "--baseline", str(tmp_path / "base.json")])
    text = capsys.readouterr().out
    assert code == 1
    assert "judgerel gate FAILED: t::a ICC(A,1): 0.8500 -> 0.6000" in text
    assert json.loads(out.read_text())["gate"]["status"] == "failed"
    assert cli.main(["report", "compare", str(out), "--baseline", str(tmp_path / "base.json"),
                     "--max-icc-drop", "0.3"]) == 0


def test_cli_errors_exit_2_with_a_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _write(tmp_path, "a.json", rep([("t::a", [rec(0.8)])]))
    assert cli.main(["report", "merge", a, a, "-o", str(tmp_path / "x.json")]) == 2
    assert "appear in more than one shard" in capsys.readouterr().err
    assert cli.main(["report", "merge", a, a, "-o", str(tmp_path / "x.json"), "--on-duplicate", "first"]) == 0
    assert cli.main(["report", "validate", str(tmp_path / "missing.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert cli.main(["history", "list", str(tmp_path / "nope")]) == 2


def test_cli_history_list_and_compare(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = tmp_path / "runs"
    write_run(d, rep([("t::x", [rec(0.85, (0.8, 0.9))])]))
    write_run(d, rep([("t::x", [rec(0.84, (0.8, 0.9))])]))
    write_run(d, rep([("t::x", [rec(0.60, (0.5, 0.7), model="m2")])]))
    assert cli.main(["history", "list", str(d)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["run", "judge", "created", "tests", "metrics", "failed", "models"]
    assert out[1].split()[0] == "1" and out[3].split()[-1] == "m2"
    assert cli.main(["history", "compare", str(d), "1", "2"]) == 0
    assert "t::x ICC(A,1): 0.8500 -> 0.8400 (-0.0100) pass" in capsys.readouterr().out
    assert cli.main(["history", "compare", str(d)]) == 1  # last two: 2 -> 3 regressed
    text = capsys.readouterr().out
    assert "(m1 -> m2)" in text and "regression" in text and "judge changed: model 'm1'->'m2'" in text
    assert cli.main(["history", "compare", str(d), "--all"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[:3] == ["#1: m1", "#2: m1", "#3: m2"]  # legend: full model names per run
    assert table[3].split()[-3:] == ["#1", "#2", "#3"]
    assert table[4].split()[-3:] == ["0.8500", "0.8400", "0.6000"]


def test_register_adds_subcommands_to_a_parent_parser() -> None:
    parser = argparse.ArgumentParser(prog="judgerel")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("cache")  # the parent command has its own subcommands too
    cli.register(sub)
    args = parser.parse_args(["history", "compare", "runs", "1", "2", "--max-icc-drop", "0.1"])
    assert args.func.__name__ == "cmd_history_compare" and args.runs == ["1", "2"] and args.max_icc_drop == 0.1
