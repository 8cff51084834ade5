"""Gates on the prediction-powered human-scale mean: verdicts, messages, records, and the report
outputs (JSON, JUnit, HTML, terminal, baseline) of a real pytest run."""

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from pytest_judgerel import (
    JudgeReliabilityFailure,
    ReliabilityError,
    assert_human_mean_above,
    assert_human_mean_difference,
)
from pytest_judgerel.judging.judge import JudgeFailure
from pytest_judgerel.ratings import Ratings
from pytest_judgerel.session.recording import recording
from pytest_judgerel.report.schema import REPORT_SCHEMA, schema_errors
from pytest_judgerel.stats import ppi_mean, ppi_mean_difference


def _data(seed=0, n=100, N=1000, shift=0.0):
    rng = np.random.default_rng(seed)
    y = rng.normal(3 + shift, 1, n + N)
    f = 1 + 0.8 * y + rng.normal(0, 0.5, n + N)  # biased judge, r ~ 0.85
    return f[:n], y[:n], f[n:]


def _last(sink, kind):
    return [r for r in sink if r["kind"] == kind][-1]


def test_passes_with_the_estimate_and_fails_on_the_lower_bound(_private_metric_sink):
    f, y, fu = _data()
    expected = ppi_mean(f, y, fu)
    threshold = (expected.value + expected.ci_low) / 2  # between the bound and the estimate
    res = assert_human_mean_above(f, y, fu, min_mean=threshold)
    assert res == expected
    rec = _last(_private_metric_sink, "human_mean")
    assert rec["passed"] is True and rec["use"] == "estimate" and rec["direction"] == "min"
    assert rec["value"] == pytest.approx(expected.value) and rec["ci"] == pytest.approx(list(expected.ci))
    assert rec["n"] == 100 and rec["n_unlabeled"] == 1000 and rec["lam"] == pytest.approx(expected.lam)
    assert rec["classical"]["value"] == pytest.approx(float(np.mean(y)))
    assert rec["effective_n"] == pytest.approx(expected.effective_n)
    assert 0.5 < rec["p_pass"] <= 1 and rec["stability"]["resample"] == "labelled+unlabelled items"
    assert not schema_errors(rec, {**REPORT_SCHEMA["$defs"]["record"], "$defs": REPORT_SCHEMA["$defs"]})
    with pytest.raises(JudgeReliabilityFailure) as exc:
        assert_human_mean_above(f, y, fu, min_mean=threshold, use="ci_low", label="prod")
    msg = str(exc.value)
    assert msg.startswith("prod: human-scale mean = ")
    assert f"the lower CI bound {expected.ci_low:.4f} is below min_mean {threshold}" in msg
    assert "human-only" in msg and "PPI removes that bias" in msg
    rec = _last(_private_metric_sink, "human_mean")
    assert rec["passed"] is False and rec["use"] == "ci_low" and rec["label"] == "prod"
    assert rec["p_pass"] < 0.5  # the lower bound sits below the threshold on most resamples


def test_report_only_records_without_failing():
    f, y, fu = _data()
    with recording(report_only=True) as rec:
        res = assert_human_mean_above(f, y, fu, min_mean=10.0)
    assert res.value < 10 and rec.records[0]["passed"] is False and rec.records[0]["report_only"] is True


def test_accepts_a_result_and_checks_its_arguments(_private_metric_sink):
    f, y, fu = _data()
    res = ppi_mean(f, y, fu)
    assert assert_human_mean_above(res, min_mean=2.0) is res
    assert _last(_private_metric_sink, "human_mean")["p_pass"] is None  # no items to resample
    with pytest.raises(ValueError, match="not both"):
        assert_human_mean_above(res, y, min_mean=2.0)
    with pytest.raises(ValueError, match="needs judge_labeled, human_labeled and judge_unlabeled"):
        assert_human_mean_above(f, y, min_mean=2.0)
    with pytest.raises(ValueError, match="finite number"):
        assert_human_mean_above(f, y, fu, min_mean=float("nan"))
    with pytest.raises(ValueError, match="use must be one of"):
        assert_human_mean_above(f, y, fu, min_mean=2.0, use="ci_high")


def test_an_undefined_estimate_is_recorded_and_raised(_private_metric_sink):
    with pytest.raises(ReliabilityError, match="same score"):
        assert_human_mean_above([2, 2, 2, 2], [1, 2, 3, 4], [2, 2, 2], min_mean=1.0)
    rec = _last(_private_metric_sink, "human_mean")
    assert rec["value"] is None and rec["passed"] is False and "same score" in rec["error"]
    with pytest.raises(ReliabilityError, match="too few human labels"):
        assert_human_mean_above([1, 2], [1, 2], [1, 2, 3], min_mean=1.0)


def test_every_group_must_pass(_private_metric_sink):
    rng = np.random.default_rng(2)
    n, N = 200, 2000
    g_all = np.where(rng.random(n + N) < 0.5, "easy", "hard")
    y = np.where(g_all == "easy", 4.0, 2.0) + rng.normal(0, 0.5, n + N)
    f = y + 0.3 + rng.normal(0, 0.3, n + N)
    with pytest.raises(JudgeReliabilityFailure) as exc:
        assert_human_mean_above(f[:n], y[:n], f[n:], min_mean=2.5, groups=(g_all[:n], g_all[n:]))
    assert "pooled passes min_mean 2.5" in str(exc.value) and "group hard:" in str(exc.value)
    rec = _last(_private_metric_sink, "human_mean")
    assert rec["groups"]["easy"]["passed"] is True and rec["groups"]["hard"]["passed"] is False
    assert rec["groups"]["hard"]["value"] == pytest.approx(2.0, abs=0.15)


def _judge_ratings(values, failures=0):
    arr = np.asarray(values, dtype=float).reshape(-1, 1).copy()
    fails = []
    for i in range(failures):
        arr[i, 0] = np.nan
        fails.append(JudgeFailure(item=str(i), rater="r0", cause="no_number", message="no score", reply="hmm"))
    return Ratings.from_array(arr, parse_failures=fails, provenance={"model": "scripted/judge", "scale": "0-5"})


def test_judge_ratings_bring_provenance_and_parse_failures(_private_metric_sink):
    f, y, fu = _data()
    with pytest.raises(JudgeReliabilityFailure, match="2 judge replies could not be parsed"):
        assert_human_mean_above(_judge_ratings(f, failures=2), y, fu, min_mean=1.0)
    res = assert_human_mean_above(_judge_ratings(f, failures=2), y, _judge_ratings(fu), min_mean=1.0,
                                  max_parse_failures=2)
    assert res == ppi_mean(f[2:], y[2:], fu)  # the unreadable items are left out
    rec = _last(_private_metric_sink, "human_mean")
    assert rec["n_omitted"] == 2 and rec["parse_failures"] == 2 and rec["judge"]["model"] == "scripted/judge"


def test_difference_gate(_private_metric_sink):
    old = _data(3)
    # the same items, the new system 0.3 better on average
    rng = np.random.default_rng(9)
    y_old = np.concatenate([old[1], rng.normal(3, 1, 1000)])
    f_all = np.concatenate([old[0], old[2]])
    y_new = y_old + 0.3 + rng.normal(0, 0.4, y_old.size)
    f_new = f_all + 0.8 * (y_new - y_old) + rng.normal(0, 0.2, f_all.size)
    new = (f_new[:100], y_new[:100], f_new[100:])
    res = assert_human_mean_difference(new, old, min_difference=-0.1, use="ci_low")
    assert res == ppi_mean_difference(new, old)
    assert res.value == pytest.approx(0.3, abs=0.05)
    rec = _last(_private_metric_sink, "human_mean_difference")
    assert rec["passed"] is True and rec["k"] == 2 and rec["paired"] is True and rec["use"] == "ci_low"
    assert rec["new_mean"] - rec["old_mean"] == pytest.approx(rec["value"])
    with pytest.raises(JudgeReliabilityFailure) as exc:
        assert_human_mean_difference(old, new, min_difference=-0.1, use="ci_low", label="prompt v2")
    assert "prompt v2: human-scale mean difference new - old = -0.3" in str(exc.value)
    assert "lower CI bound of the difference" in str(exc.value)
    assert assert_human_mean_difference(res, min_difference=0.0) is res
    with pytest.raises(ValueError, match="needs the new and the old system"):
        assert_human_mean_difference(new, min_difference=0.0)
    with pytest.raises(ReliabilityError, match="paired=True"):
        assert_human_mean_difference(new, (old[0][:50], old[1][:50], old[2]), min_difference=0.0)
    assert _last(_private_metric_sink, "human_mean_difference")["error"].startswith("paired=True")


# ---------------------------------------------------------------------- a real run
_RUN = '''
import numpy as np
from pytest_judgerel import assert_human_mean_above, assert_human_mean_difference

def _data(shift, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.normal(3 + shift, 1, 1100)
    f = 1 + 0.8 * y + rng.normal(0, 0.5, 1100)
    return f[:100], y[:100], f[100:]

def test_mean():
    assert_human_mean_above(*_data(SHIFT), min_mean=2.8, use="ci_low", label="system")

def test_difference():
    assert_human_mean_difference(_data(SHIFT), _data(0.0, seed=1), min_difference=-0.2)
'''


def test_recorded_in_every_report_output(pytester):
    pytester.makepyfile(test_hm=_RUN.replace("SHIFT", "0.0"))
    out = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--judgerel-json=r.json", "--junitxml=j.xml",
                                        "--judgerel-html=r.html", "--judgerel-baseline=base.json",
                                        "--judgerel-update-baseline")
    assert out.ret == 0
    report = json.loads((pytester.path / "r.json").read_text())
    assert not schema_errors(report, REPORT_SCHEMA)
    recs = {r["kind"]: r for t in report["tests"] for r in t["records"]}
    assert recs["human_mean"]["passed"] is True and recs["human_mean"]["use"] == "ci_low"
    assert recs["human_mean_difference"]["value"] == pytest.approx(0.0, abs=0.2)
    props = {p.get("name"): p.get("value") for p in ET.parse(pytester.path / "j.xml").iter("property")}
    assert props["judgerel.human-scale mean (PPI++) [system].verdict"] == "pass"
    assert "judgerel.human-scale mean difference (PPI++)" in props
    assert "human-scale mean (PPI++)" in (pytester.path / "r.html").read_text()
    out.stdout.re_match_lines([r".*test_hm\.py::test_mean \[system\] +human-scale mean \(PPI\+\+\) .*>= 2\.8 +PASS"])
    base = json.loads((pytester.path / "base.json").read_text())
    assert any("human-scale mean (PPI++) [system]" in t for t in base["tests"].values())
    # the system loses 0.5 on the human scale: the gate and the baseline both catch it
    pytester.makepyfile(test_hm=_RUN.replace("SHIFT", "-0.5"))
    out = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--judgerel-json=r2.json",
                                        "--judgerel-baseline=base.json")
    assert out.ret == 1
    report = json.loads((pytester.path / "r2.json").read_text())
    statuses = {e["metric"]: e["status"] for e in report["gate"]["baseline"]["entries"]}
    assert statuses["human-scale mean (PPI++) [system]"] == "regression"
    out.stdout.fnmatch_lines(["*lower CI bound*is below min_mean 2.8*"])


def test_missing_values_are_errors_unless_they_are_allowed_parse_failures():
    f, y, fu = _data()
    f = f.copy()
    f[3] = np.nan
    with pytest.raises(ReliabilityError, match="judge_labeled has 1 missing .* index 3"):
        assert_human_mean_above(f, y, fu, min_mean=1.0)
    y = y.copy()
    y[5] = np.nan
    with pytest.raises(ReliabilityError, match="human_labeled has 1 missing"):
        assert_human_mean_above(_judge_ratings(_data()[0], failures=1), y, fu, min_mean=1.0, max_parse_failures=1)


def test_items_by_columns_are_averaged():
    f, y, fu = _data()
    humans = np.column_stack([y - 0.5, y + 0.5, np.full(y.size, np.nan)])  # two raters and an empty column
    judge = np.column_stack([f, f])                                         # two repeats
    with recording():
        res = assert_human_mean_above(judge, humans, fu, min_mean=1.0)
    assert res == ppi_mean(f, y, fu)


def test_difference_gate_fails_first_on_unparsed_replies(_private_metric_sink):
    f, y, fu = _data()
    with pytest.raises(JudgeReliabilityFailure, match="1 judge reply could not be parsed"):
        assert_human_mean_difference((_judge_ratings(f, failures=1), y, fu), (f, y, fu), min_difference=-1.0)
    rec = _last(_private_metric_sink, "human_mean_difference")
    assert rec["value"] is None and rec["passed"] is False and rec["judge"]["model"] == "scripted/judge"
    with pytest.raises(ReliabilityError, match="judge_labeled has 1 missing"):
        assert_human_mean_difference((_judge_ratings(f, failures=1), y, fu), (f, y, fu), min_difference=-1.0,
                                     max_parse_failures=1)


def test_groups_from_the_items_of_judge_ratings(_private_metric_sink):
    rng = np.random.default_rng(4)
    n, N = 120, 900
    bench = np.where(rng.random(n + N) < 0.5, "stsb", "summeval")
    y = np.where(bench == "stsb", 3.5, 2.5) + rng.normal(0, 0.6, n + N)
    f = y + 0.4 + rng.normal(0, 0.3, n + N)
    judged = Ratings.from_array(f[:n, None], item_groups={"benchmark": list(bench[:n])})
    rest = Ratings.from_array(f[n:, None], item_groups={"benchmark": list(bench[n:])})
    with pytest.raises(JudgeReliabilityFailure, match="group summeval"):
        assert_human_mean_above(judged, y[:n], rest, min_mean=2.8, by="benchmark")
    rec = _last(_private_metric_sink, "human_mean")
    assert set(rec["groups"]) == {"stsb", "summeval"} and rec["groups"]["stsb"]["passed"] is True
    with pytest.raises(ValueError, match="by='model' needs judge_labeled as judge Ratings"):
        assert_human_mean_above(judged, y[:n], rest, min_mean=2.8, by="model")
    with pytest.raises(ValueError, match="not both"):
        assert_human_mean_above(judged, y[:n], rest, min_mean=2.8, by="benchmark", groups=([], []))
