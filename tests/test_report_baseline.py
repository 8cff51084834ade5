"""Baselines: direction-aware tolerances, noise (CI overlap, paired test), new/missing/stale,
the accept workflow, and the CI gate in real pytest runs (exit status, never a traceback)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pytest_judgerel.report.baseline import (
    Tolerances,
    compare_report,
    load_baseline,
    updated_baseline,
)
from pytest_judgerel.report.build import assemble_report
from pytest_judgerel.judging.identity import judge_fingerprint
from pytest_judgerel.report.metrics import metric_points
from pytest_judgerel.report.paired import paired_worse, signed_rank_greater
from pytest_judgerel.report.schema import ReportFormatError

JUDGE = {"model": "m1", "template_hash": "aaaa", "temperature": 0.0, "scale": "0-5", "id": "x1",
         "api_base": "http://a"}


def rec(value, ci=None, direction="min", statistic="ICC(A,1)", judge=None, **extra):
    return {"kind": "icc" if direction == "min" else "nmae", "statistic": statistic, "value": value, "ci": ci,
            "direction": direction, "passed": True, "n": 20, "threshold": 0.5, "judge": judge, **extra}


def report(*tests):
    return assemble_report([{"nodeid": n, "records": r} for n, r in tests], settings={})


def compare(base_tests, cur_tests, **tol):
    base = updated_baseline(None, report(*base_tests))
    return compare_report(report(*cur_tests), base, tolerances=Tolerances(**tol))


def only(comp):
    assert len(comp.entries) == 1, comp.entries
    return comp.entries[0]


# ---------------------------------------------------------------------- rule
def test_drop_within_tolerance_passes() -> None:
    e = only(compare([("t::a", [rec(0.80, [0.7, 0.9])])], [("t::a", [rec(0.76, [0.66, 0.86])])]))
    assert e.status == "pass" and e.delta == pytest.approx(-0.04)


def test_drop_beyond_tolerance_with_disjoint_cis_regresses() -> None:
    comp = compare([("t::a", [rec(0.85, [0.80, 0.90])])], [("t::a", [rec(0.60, [0.50, 0.70])])])
    e = only(comp)
    assert e.status == "regression" and e.ci_overlap is False
    assert comp.reasons() == ["t::a ICC(A,1): 0.8500 -> 0.6000 (-0.2500; allowed drop 0.05); "
                              "confidence intervals do not overlap"]


def test_drop_beyond_tolerance_within_overlapping_cis_is_noise_and_passes() -> None:
    comp = compare([("t::a", [rec(0.80, [0.55, 0.95])])], [("t::a", [rec(0.70, [0.45, 0.90])])])
    assert only(comp).status == "within_noise" and only(comp).ci_overlap is True
    assert comp.reasons() == []


def test_tolerance_is_configurable() -> None:
    base, cur = [("t::a", [rec(0.80, [0.75, 0.85])])], [("t::a", [rec(0.70, [0.65, 0.72])])]
    assert only(compare(base, cur)).status == "regression"
    assert only(compare(base, cur, max_icc_drop=0.15)).status == "pass"


def test_max_statistic_fails_on_rise_not_on_drop() -> None:
    up = compare([("t::n", [rec(0.10, direction="max", statistic="nMAE")])],
                 [("t::n", [rec(0.13, direction="max", statistic="nMAE")])])
    assert only(up).status == "regression"  # no CI: the tolerance alone decides
    assert "allowed rise 0.02" in only(up).reason
    down = compare([("t::n", [rec(0.10, direction="max", statistic="nMAE")])],
                   [("t::n", [rec(0.05, direction="max", statistic="nMAE")])])
    assert only(down).status == "improved"
    assert only(compare([("t::n", [rec(0.10, direction="max", statistic="nMAE")])],
                        [("t::n", [rec(0.115, direction="max", statistic="nMAE")])])).status == "pass"


@pytest.mark.parametrize("direction, statistic, base, at, past, better_at, better_past", [
    ("min", "ICC(A,1)", 0.80, 0.75, 0.7499, 0.85, 0.8501),  # max_icc_drop 0.05
    ("max", "nMAE", 0.10, 0.12, 0.1201, 0.08, 0.0799),      # max_nmae_rise 0.02
])
def test_a_change_of_exactly_the_tolerance_passes_and_one_just_past_it_does_not(
        direction, statistic, base, at, past, better_at, better_past) -> None:
    # docs/reports.md: a metric regresses when it got worse by *more than* its tolerance.  In
    # binary floating point 0.80 - 0.75 is 0.05000000000000004: "exactly" includes rounding.
    def status(current):
        return only(compare([("t::m", [rec(base, direction=direction, statistic=statistic)])],
                            [("t::m", [rec(current, direction=direction, statistic=statistic)])])).status

    assert status(at) == "pass"
    assert status(past) == "regression"  # no CI and no item scores: the tolerance alone decides
    assert status(better_at) == "pass"  # better by exactly the tolerance is not yet "improved"
    assert status(better_past) == "improved"
    assert status(base) == "pass"


def test_rising_icc_is_an_improvement() -> None:
    assert only(compare([("t::a", [rec(0.5, [0.4, 0.6])])], [("t::a", [rec(0.8, [0.7, 0.9])])])).status == "improved"


def test_undefined_now_is_a_regression() -> None:
    e = only(compare([("t::a", [rec(0.8, [0.7, 0.9])])], [("t::a", [rec(None)])]))
    assert e.status == "regression" and "undefined" in e.reason


def test_new_missing_and_not_run() -> None:
    comp = compare([("t::a", [rec(0.8), rec(0.7, label="x")]), ("t::gone", [rec(0.9)])],
                   [("t::a", [rec(0.8), rec(0.6, statistic="ICC(C,1)")]), ("t::fresh", [rec(0.5)])])
    status = {(e.nodeid, e.metric): e.status for e in comp.entries}
    assert status == {("t::a", "ICC(A,1)"): "pass", ("t::a", "ICC(C,1)"): "new",
                      ("t::a", "ICC(A,1) [x]"): "missing", ("t::fresh", "ICC(A,1)"): "new"}
    assert comp.not_run == 1
    assert comp.reasons() == []  # new, missing and not-run entries never fail


def test_stale_judge_still_compared_and_names_the_changed_fields() -> None:
    new_judge = dict(JUDGE, model="m2", id="other", api_base="http://b")
    comp = compare([("t::a", [rec(0.85, [0.8, 0.9], judge=JUDGE)])],
                   [("t::a", [rec(0.60, [0.5, 0.7], judge=new_judge)])])
    e = only(comp)
    assert e.fingerprint_changed and e.judge_changes == {"model": ["m1", "m2"]}
    assert e.status == "regression" and "judge changed: model 'm1'->'m2'" in e.reason
    assert comp.counts()["stale"] == 1


def test_fingerprint_ignores_volatile_fields_and_none_judge() -> None:
    assert judge_fingerprint(JUDGE) == judge_fingerprint(dict(JUDGE, id="zzz", api_base="http://other",
                                                              provider_models=["x"]))
    assert judge_fingerprint(JUDGE) != judge_fingerprint(dict(JUDGE, temperature=0.7))
    assert judge_fingerprint(None) == judge_fingerprint({}) == "data"


def _scores(rng, n, shift):
    return {f"i{i}": float(abs(rng.normal(0.1, 0.05)) + shift) for i in range(n)}


def test_paired_test_decides_when_item_scores_exist() -> None:
    rng = np.random.default_rng(0)
    base_scores = _scores(rng, 30, 0.0)
    worse = {k: v + 0.05 for k, v in base_scores.items()}  # every item worse: significant
    comp = compare([("t::a", [rec(0.80, [0.5, 0.95], item_scores=base_scores)])],
                   [("t::a", [rec(0.70, [0.45, 0.9], item_scores=worse)])])
    e = only(comp)
    assert e.status == "regression" and e.p_value < 0.05 and "signed-rank" in e.reason
    shuffled = dict(zip(base_scores, rng.permutation(list(base_scores.values()))))  # same scores, no shift
    e2 = only(compare([("t::a", [rec(0.80, [0.78, 0.82], item_scores=base_scores)])],
                      [("t::a", [rec(0.70, [0.68, 0.72], item_scores=shuffled)])]))
    assert e2.status == "within_noise" and e2.p_value >= 0.05  # the paired test overrides disjoint CIs


def test_signed_rank_matches_scipy() -> None:
    from scipy import stats as scipy_stats  # a hard dependency: never skipped
    rng = np.random.default_rng(3)
    for n in (6, 15, 40):
        d = rng.normal(0.2, 1.0, n)
        w, p, method, _ = signed_rank_greater(list(d))
        ref = scipy_stats.wilcoxon(d, alternative="greater", method="exact")
        assert method == "exact" and w == pytest.approx(ref.statistic) and p == pytest.approx(ref.pvalue)
    d = np.round(rng.normal(0.1, 1.0, 150), 1)  # ties and zeros: normal approximation
    w, p, method, n_nonzero = signed_rank_greater(list(d))
    ref = scipy_stats.wilcoxon(d, alternative="greater", method="approx", correction=True)
    assert method == "normal" and p == pytest.approx(ref.pvalue, rel=1e-6)
    assert n_nonzero == int(np.sum(d != 0))


def test_paired_worse_uses_common_items_only() -> None:
    res = paired_worse({"a": 0.1, "b": 0.2, "c": None}, {"a": 0.3, "b": 0.4, "d": 0.9})
    assert res.n_common == 2 and res.mean_difference == pytest.approx(0.2)


def test_metric_points_names_groups_secondary_and_repeats() -> None:
    r = {"kind": "agreement", "statistic": "ICC(A,1)", "value": 0.8, "ci": [0.7, 0.9], "direction": "min",
         "nmae": 0.1, "passed": True, "groups": {"g1": {"value": 0.7, "ci": [0.5, 0.8], "nmae": 0.2, "n": 5,
                                                         "passed": True}}}
    names = [p.name for p in metric_points([r, dict(r, groups={})])]
    assert names == ["ICC(A,1)", "nMAE", "ICC(A,1) / g1", "nMAE / g1", "ICC(A,1) #2", "nMAE #2"]
    assert [p.direction for p in metric_points([r])] == ["min", "max", "min", "max"]


# ---------------------------------------------------------------------- update
def test_update_replaces_tests_that_ran_and_keeps_the_others() -> None:
    first = updated_baseline(None, report(("t::a", [rec(0.8)]), ("t::b", [rec(0.7)])))
    second = updated_baseline(first, report(("t::a", [rec(0.6, label="renamed")])))
    assert set(second["tests"]) == {"t::a", "t::b"}
    assert list(second["tests"]["t::a"]) == ["ICC(A,1) [renamed]"]  # pruned inside the test that ran
    assert second["tests"]["t::b"] == first["tests"]["t::b"]


def test_load_baseline_missing_and_corrupt(tmp_path) -> None:
    assert load_baseline(tmp_path / "none.json") is None
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ReportFormatError, match="not valid JSON"):
        load_baseline(tmp_path / "bad.json")
    (tmp_path / "wrong.json").write_text(json.dumps({"schema": "pytest-judgerel/baseline", "version": 1}))
    with pytest.raises(ReportFormatError, match="missing required key 'tests'"):
        load_baseline(tmp_path / "wrong.json")


def test_tolerances_validate() -> None:
    with pytest.raises(ValueError, match="max_icc_drop"):
        Tolerances(max_icc_drop=-0.1)
    with pytest.raises(ValueError, match="alpha"):
        Tolerances(alpha=1.5)


# ---------------------------------------------------------------------- in pytest runs
PROJECT = '''
import os
import numpy as np
from pytest_judgerel import assert_icc_above, Ratings

NOISE = float(os.environ.get("NOISE", "0.2"))

def _m(noise, seed, n=30):
    rng = np.random.default_rng(seed)
    truth = np.linspace(0, 5, n)
    return np.column_stack([truth + rng.normal(0, noise, n) for _ in range(3)])

def test_judge():
    r = Ratings.from_array(_m(NOISE, 1), provenance={"model": os.environ.get("MODEL", "m1"),
                                                     "template_hash": "t1", "temperature": 0.0})
    assert_icc_above(r, 0.3)

def test_stable():
    assert_icc_above(_m(0.2, 2), 0.5)
'''


@pytest.fixture
def proj(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_gate=PROJECT)
    return pytester


def _run(p: pytest.Pytester, *args: str, noise: str = "0.2", model: str = "m1", n2: bool = False):
    p._monkeypatch.setenv("NOISE", noise)
    p._monkeypatch.setenv("MODEL", model)
    extra = ["-n", "2"] if n2 else []
    return p.runpytest_subprocess("-p", "no:cacheprovider", "--judgerel-baseline=baseline.json",
                                  "--judgerel-json=report.json", *extra, *args)


def test_accept_then_regression_sets_exit_status(proj: pytest.Pytester) -> None:
    r = _run(proj, "--judgerel-update-baseline", n2=True)
    assert r.ret == 0
    r.stdout.fnmatch_lines(["*baseline CREATED: baseline.json with 2 metric(s)*"])
    base = json.loads((proj.path / "baseline.json").read_text())
    assert set(base["tests"]) == {"test_gate.py::test_judge", "test_gate.py::test_stable"}
    assert list(base["judges"].values()) == [{"model": "m1", "template_hash": "t1", "temperature": 0.0}]

    r = _run(proj)  # same data: passes
    assert r.ret == 0
    r.stdout.fnmatch_lines(["*baseline baseline.json: 2 unchanged, 0 improved*0 regressed*"])

    r = _run(proj, noise="1.5", n2=True)  # the judge got noisier: tests still pass, the gate fails
    assert r.ret == 1
    r.assert_outcomes(passed=2)
    r.stdout.fnmatch_lines([
        "*regressions (1):*",
        "*test_gate.py::test_judge ICC(A,1): 0.98* -> 0.4* (-0.5*; allowed drop 0.05); confidence intervals "
        "do not overlap*",
        "judgerel gate FAILED: 1 baseline regression(s), listed above",  # each regression printed once
        "*2 passed*",
    ])
    assert "Traceback" not in r.stdout.str() + r.stderr.str()
    rep = json.loads((proj.path / "report.json").read_text())
    assert rep["gate"]["status"] == "failed" and len(rep["gate"]["reasons"]) == 1
    assert rep["gate"]["baseline"]["counts"]["regression"] == 1


def test_report_only_reports_a_regression_without_failing(proj: pytest.Pytester) -> None:
    assert _run(proj, "--judgerel-update-baseline").ret == 0
    r = _run(proj, "--judgerel-report-only", noise="1.5")
    assert r.ret == 0
    r.stdout.fnmatch_lines([
        "*REPORT-ONLY MODE: reliability assertions and the baseline gate were evaluated*",
        "judgerel gate (report-only, not failing): 1 baseline regression(s), listed above",
    ])
    rep = json.loads((proj.path / "report.json").read_text())
    assert rep["report_only"] is True and rep["gate"]["status"] == "report_only"


def test_a_dry_run_neither_fails_on_a_regression_nor_updates_the_baseline(proj: pytest.Pytester) -> None:
    assert _run(proj, "--judgerel-update-baseline").ret == 0
    before = (proj.path / "baseline.json").read_bytes()
    r = _run(proj, "--judgerel-dry-run", "--judgerel-update-baseline", noise="1.5")
    assert r.ret == 0, r.stdout.str()
    r.stdout.fnmatch_lines(["*1 baseline regression(s), listed above*"])
    assert (proj.path / "baseline.json").read_bytes() == before  # placeholders never become the reference
    assert _run(proj, noise="1.5").ret == 1  # the same regression fails a real run


def test_stale_judge_is_listed(proj: pytest.Pytester) -> None:
    assert _run(proj, "--judgerel-update-baseline").ret == 0
    r = _run(proj, model="m2")
    assert r.ret == 0
    r.stdout.fnmatch_lines(["*1 stale (judge changed)*", "*stale (recorded with another judge) (1):*",
                            "*test_gate.py::test_judge ICC(A,1)*judge changed: model 'm1'->'m2'*"])


def test_update_with_selection_keeps_other_entries(proj: pytest.Pytester) -> None:
    assert _run(proj, "--judgerel-update-baseline").ret == 0
    before = json.loads((proj.path / "baseline.json").read_text())
    assert _run(proj, "--judgerel-update-baseline", "-k", "judge", noise="0.5").ret == 0
    after = json.loads((proj.path / "baseline.json").read_text())
    assert after["tests"]["test_gate.py::test_stable"] == before["tests"]["test_gate.py::test_stable"]
    assert after["tests"]["test_gate.py::test_judge"] != before["tests"]["test_gate.py::test_judge"]
    r = _run(proj, "-k", "stable")
    r.stdout.fnmatch_lines(["*1 baseline test(s) not run*"])


def test_missing_baseline_warns_and_corrupt_baseline_fails_cleanly(proj: pytest.Pytester) -> None:
    r = _run(proj)
    assert r.ret == 0
    r.stdout.fnmatch_lines(["*baseline baseline.json not found: 2 metric(s) are new; run with "
                            "--judgerel-update-baseline to create it*"])
    (proj.path / "baseline.json").write_text("{oops")
    r = _run(proj)
    assert r.ret == 1
    r.stdout.fnmatch_lines(["judgerel gate FAILED: baseline 'baseline.json' is not valid JSON*", "*2 passed*"])
    r = _run(proj, "--judgerel-report-only")  # not a judgement: fails even in report-only mode
    assert r.ret == 1
    assert "Traceback" not in r.stdout.str() + r.stderr.str()


# ---------------------------------------------------------------------- exact outputs (mutation testing)
def test_comparison_of_a_whole_run_in_full() -> None:
    base = updated_baseline(None, report(
        ("t::a", [rec(0.8, [0.7, 0.9]), rec(0.2, direction="max", statistic="nMAE")]),
        ("t::gone", [rec(0.9)])))
    comp = compare_report(report(("t::a", [rec(0.8, [0.7, 0.9]), rec(0.5, statistic="ICC(C,1)")]),
                                 ("t::fresh", [rec(None)])), base, path="b.json")
    assert comp.to_dict() == {
        "path": "b.json", "found": True, "error": None, "updated": False,
        "tolerances": {"max_icc_drop": 0.05, "max_nmae_rise": 0.02, "alpha": 0.05},
        "counts": {"pass": 1, "improved": 0, "within_noise": 0, "regression": 0, "new": 2, "missing": 1,
                   "undefined": 0, "stale": 0, "not_run": 1},
        "entries": [
            {"nodeid": "t::a", "metric": "ICC(A,1)", "status": "pass", "direction": "min", "baseline": 0.8,
             "current": 0.8, "delta": 0.0, "tolerance": 0.05, "ci_overlap": None, "p_value": None,
             "fingerprint_changed": False, "judge_changes": {}, "reason": "0.8000 -> 0.8000 (+0.0000)"},
            {"nodeid": "t::a", "metric": "ICC(C,1)", "status": "new", "direction": "min", "baseline": None,
             "current": 0.5, "delta": None, "tolerance": None, "ci_overlap": None, "p_value": None,
             "fingerprint_changed": False, "judge_changes": {}, "reason": "not in the baseline"},
            {"nodeid": "t::a", "metric": "nMAE", "status": "missing", "direction": "max", "baseline": 0.2,
             "current": None, "delta": None, "tolerance": None, "ci_overlap": None, "p_value": None,
             "fingerprint_changed": False, "judge_changes": {},
             "reason": "in the baseline but not recorded by this run"},
            {"nodeid": "t::fresh", "metric": "ICC(A,1)", "status": "new", "direction": "min", "baseline": None,
             "current": None, "delta": None, "tolerance": None, "ci_overlap": None, "p_value": None,
             "fingerprint_changed": False, "judge_changes": {}, "reason": "not in the baseline"},
        ],
        "not_run": 1,
    }
    assert comp.by_status("new") == [comp.entries[1], comp.entries[3]] and comp.regressions == []


def test_no_baseline_yet_makes_everything_new_and_an_empty_baseline_has_the_schema_header() -> None:
    comp = compare_report(report(("t::a", [rec(0.8)])), None)
    assert (comp.found, comp.path, comp.not_run, [e.status for e in comp.entries]) == (False, None, 0, ["new"])
    assert compare_report({}, None).entries == []
    assert compare_report({"tests": []}, {"schema": "x"}).found is True  # a baseline without tests
    from pytest_judgerel.report.baseline import empty_baseline

    assert empty_baseline() == {"schema": "pytest-judgerel/baseline", "version": 1, "judges": {}, "tests": {}}


@pytest.mark.parametrize("base_v, cur_v, status, reason", [
    (None, None, "undefined", "undefined in both runs"),
    (0.8, None, "regression", "now undefined (baseline 0.8000)"),
    (None, 0.7, "improved", "baseline undefined, now 0.7000"),
    (0.8, 0.9, "improved", "0.8000 -> 0.9000 (+0.1000)"),
    (0.8, 0.6, "regression", "0.8000 -> 0.6000 (-0.2000; allowed drop 0.05); no confidence interval to judge noise"),
])
def test_every_branch_of_the_rule_states_its_reason(base_v, cur_v, status, reason) -> None:
    e = only(compare([("t::a", [rec(base_v)])], [("t::a", [rec(cur_v)])]))
    assert (e.status, e.reason, e.baseline, e.current, e.direction, e.tolerance) == (
        status, reason, base_v, cur_v, "min", 0.05)


def test_intervals_that_touch_overlap_and_one_missing_interval_leaves_the_tolerance_to_decide() -> None:
    touching = only(compare([("t::a", [rec(0.80, [0.70, 0.90])])], [("t::a", [rec(0.60, [0.50, 0.70])])]))
    assert touching.ci_overlap is True and touching.status == "within_noise"
    assert touching.reason.endswith("; confidence intervals overlap")
    above = only(compare([("t::a", [rec(0.30, [0.20, 0.40])], )], [("t::a", [rec(0.20, [0.40, 0.45])])]))
    assert above.ci_overlap is True  # the current interval starts where the baseline's ends
    one_sided = only(compare([("t::a", [rec(0.80, [0.75, 0.85])])], [("t::a", [rec(0.60)])]))
    assert one_sided.ci_overlap is None and one_sided.status == "regression"
    assert one_sided.reason.endswith("; no confidence interval to judge noise")


def test_paired_evidence_needs_item_scores_on_both_sides_and_five_common_items() -> None:
    base = {f"i{i}": 0.1 for i in range(5)}
    worse = {f"i{i}": 0.3 + i / 100 for i in range(5)}
    five = only(compare([("t::a", [rec(0.80, [0.5, 0.95], item_scores=base)])],
                        [("t::a", [rec(0.70, [0.45, 0.9], item_scores=worse)])]))
    # 5 of 5 items worse: exact one-sided signed-rank p = 1/32, significant at 0.05
    assert five.p_value == pytest.approx(1 / 32) and five.status == "regression"
    assert five.reason.endswith("; paired signed-rank test on 5 items p=0.0312 (significant at 0.05)")
    four = only(compare([("t::a", [rec(0.80, [0.5, 0.95], item_scores=dict(list(base.items())[:4]))])],
                        [("t::a", [rec(0.70, [0.45, 0.9], item_scores=worse)])]))
    assert four.p_value is None and four.status == "within_noise"  # too few items: the CIs decide
    one_side = only(compare([("t::a", [rec(0.80, [0.5, 0.95], item_scores=base)])],
                            [("t::a", [rec(0.70, [0.45, 0.9])])]))
    assert one_side.p_value is None and one_side.reason.endswith("; confidence intervals overlap")
    noisy = only(compare([("t::a", [rec(0.80, [0.79, 0.81], item_scores=base)])],
                         [("t::a", [rec(0.70, [0.69, 0.71], item_scores={f"i{i}": 0.1 + (-1) ** i * 0.01
                                                                         for i in range(5)})])]))
    assert noisy.status == "within_noise" and "(not significant at 0.05)" in noisy.reason


def test_updated_baseline_keeps_other_tests_and_only_the_judges_still_used() -> None:
    judge_b = dict(JUDGE, model="m2")
    first = updated_baseline(None, report(("t::a", [rec(0.8, judge=JUDGE)]), ("t::b", [rec(0.7, judge=judge_b)])))
    fp_a, fp_b = judge_fingerprint(JUDGE), judge_fingerprint(judge_b)
    assert set(first["judges"]) == {fp_a, fp_b}
    assert first["judges"][fp_a]["model"] == "m1" and first["judges"][fp_b]["model"] == "m2"
    # a later run of t::b alone with a data-only metric: t::a and its judge stay; m2 is no longer used
    second = updated_baseline(first, report(("t::b", [rec(0.123456789, [0.1, 0.2], n=7)])))
    assert set(second["tests"]) == {"t::a", "t::b"} and set(second["judges"]) == {fp_a}
    assert second["tests"]["t::b"] == {"ICC(A,1)": {"statistic": "ICC(A,1)", "value": 0.123457, "ci": [0.1, 0.2],
                                                    "direction": "min", "n": 7, "fingerprint": "data"}}
    assert second["schema"] == "pytest-judgerel/baseline" and second["version"] == 1 and "updated" in second
    scored = updated_baseline(None, report(("t::c", [rec(0.5, n=2.5, item_scores={"b": 0.25, "a": "x"})])))
    assert scored["tests"]["t::c"]["ICC(A,1)"]["n"] is None  # a non-integer n is not kept
    assert scored["tests"]["t::c"]["ICC(A,1)"]["item_scores"] == {"a": None, "b": 0.25}
    assert list(updated_baseline(None, {"tests": []})["tests"]) == []


def test_load_and_compare_with_file(tmp_path) -> None:
    from pytest_judgerel.report.baseline import compare_with_file

    missing = tmp_path / "none.json"
    assert load_baseline(missing) is None
    comp = compare_with_file(report(("t::a", [rec(0.8)])), missing, tolerances=Tolerances(max_icc_drop=0.2))
    assert (comp.found, comp.path, comp.error, comp.tolerances.max_icc_drop) == (False, str(missing), None, 0.2)
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "something else"}')
    with pytest.raises(ReportFormatError, match=rf"^invalid baseline {str(bad)!r}: .*missing required key 'version'"):
        load_baseline(bad)
    broken = compare_with_file(report(("t::a", [rec(0.8)])), bad)
    assert broken.found is True and broken.path == str(bad) and broken.entries == []
    assert broken.error.startswith(f"invalid baseline {str(bad)!r}") and broken.tolerances == Tolerances()
    assert broken.reasons() == [broken.error]
    unreadable = tmp_path / "u.json"
    unreadable.write_text("{")
    with pytest.raises(ReportFormatError, match=rf"^baseline {str(unreadable)!r} is not valid JSON"):
        load_baseline(unreadable)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(updated_baseline(None, report(("t::a", [rec(0.8)])))))
    ok = compare_with_file(report(("t::a", [rec(0.5)])), good, tolerances=Tolerances(max_icc_drop=0.4))
    assert ok.found and ok.path == str(good) and only(ok).status == "pass"


def test_tolerances_are_validated() -> None:
    for bad in ({"max_icc_drop": -0.01}, {"max_nmae_rise": True}, {"max_icc_drop": "0.1"},
                {"max_nmae_rise": float("nan")}):
        with pytest.raises(ValueError, match=rf"^{next(iter(bad))} must be a number >= 0, got "):
            Tolerances(**bad)
    for alpha in (0, 1):
        with pytest.raises(ValueError, match=rf"^alpha must be in \(0, 1\), got {alpha}$"):
            Tolerances(alpha=alpha)
    assert Tolerances(max_icc_drop=0).for_direction("min") == 0 and Tolerances().for_direction("max") == 0.02


def test_stale_judge_reasons_list_every_changed_field_and_old_files_without_judges_work() -> None:
    new_judge = dict(JUDGE, model="m2", temperature=0.7)
    e = only(compare([("t::a", [rec(0.85, [0.8, 0.9], judge=JUDGE)])],
                     [("t::a", [rec(0.60, [0.5, 0.7], judge=new_judge)])]))
    assert e.reason.endswith("; judge changed: model 'm1'->'m2', temperature 0.0->0.7")
    base = updated_baseline(None, report(("t::a", [rec(0.85, [0.8, 0.9], judge=JUDGE)])))
    del base["judges"]  # a hand-edited or older file
    comp = compare_report(report(("t::a", [rec(0.85, [0.8, 0.9], judge=new_judge)])), base)
    assert only(comp).fingerprint_changed and only(comp).judge_changes["model"] == [None, "m2"]


def test_missing_entries_default_to_min_and_not_run_counts_only_tests_absent_from_the_run() -> None:
    base = updated_baseline(None, report(("t::a", [rec(0.8)]), ("t::b", [rec(0.8)]), ("t::c", [rec(0.8)])))
    del base["tests"]["t::a"]["ICC(A,1)"]["direction"]
    base["tests"]["t::a"]["old"] = {"statistic": "x", "value": 0.5, "ci": None, "n": None, "fingerprint": "data"}
    comp = compare_report(report(("t::a", [rec(0.8)]), ("t::b", [rec(0.8)])), base)
    missing = comp.by_status("missing")
    assert [(m.metric, m.direction, m.baseline, m.current) for m in missing] == [("old", "min", 0.5, None)]
    assert comp.not_run == 1  # t::c only


def test_updated_baseline_reads_partial_files_and_stamps_utc_time() -> None:
    out = updated_baseline({"schema": "pytest-judgerel/baseline"}, report(("t::a", [rec(0.8)])))
    assert list(out["tests"]) == ["t::a"] and out["judges"] == {}
    assert out["updated"].endswith("+00:00")
    assert updated_baseline(None, {})["tests"] == {}
