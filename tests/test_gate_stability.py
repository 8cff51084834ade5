"""How far a verdict can be trusted, at the gates: p_pass in every reliability gate's record (JSON,
JUnit, HTML, terminal), unstable verdicts marked, --judgerel-require-stable, repeats planning in
failing ICC gates, and Judge.rate(aggregate="mean")."""

from __future__ import annotations

import json
import random
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from pytest_judgerel import JudgeReliabilityFailure, assert_agreement, assert_icc_above, assert_scale_consistent
from pytest_judgerel.session.recording import recording
from pytest_judgerel.stats import icc, repeats_needed


def _panel(n: int, k: int, noise: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=n)
    return np.column_stack([truth + rng.normal(0, noise, n) for _ in range(k)])


def test_a_gate_on_its_threshold_is_unstable_and_one_far_from_it_is_not():
    m = _panel(40, 5, 0.8, seed=3)
    value = icc(m, form="A,1").value
    with recording() as rec:
        assert_icc_above(m, value)                      # exactly on the threshold: passes by a hair
        assert_icc_above(m, max(-1.0, value - 0.5))     # far below the estimate
        with pytest.raises(JudgeReliabilityFailure):
            assert_icc_above(m, min(1.0, value + 0.4))  # far above it
    on, below, above = rec.records
    assert 0.3 < on["p_pass"] < 0.7 and on["stability"]["unstable"] is True
    assert below["p_pass"] > 0.99 and below["stability"]["unstable"] is False
    assert above["p_pass"] < 0.01 and above["stability"]["unstable"] is False
    assert on["stability"]["n_boot"] == 1000 and on["stability"]["seed"] == 0


def test_p_pass_is_seeded_so_a_rerun_prints_the_same_number():
    m = _panel(25, 3, 1.0, seed=5)
    with recording() as first:
        assert_icc_above(m, 0.3)
    with recording() as second:
        assert_icc_above(m, 0.3)
    assert first.records[0]["p_pass"] == second.records[0]["p_pass"]


def test_p_pass_of_a_gate_with_two_thresholds_requires_both():
    """An agreement gate with ICC and nMAE: p_pass is the share of resamples passing both; its
    nMAE part alone is computed independently here from the same resampling scheme's idea."""
    rng = np.random.default_rng(11)
    human = rng.uniform(0, 5, 30)
    judge = np.clip(human + rng.normal(0.6, 0.4, 30), 0, 5)
    from pytest_judgerel import Ratings

    h = Ratings.from_array(human[:, None], scale="0-5")
    j = Ratings.from_array(judge[:, None], scale="0-5")
    nmae = float(np.mean(np.abs(judge - human)) / 5)
    with recording() as rec:
        assert_agreement(j, h, min_icc=-1.0, max_nmae=nmae + 0.3)      # nMAE far below: passes always
        with pytest.raises(JudgeReliabilityFailure):
            assert_agreement(j, h, min_icc=-1.0, max_nmae=nmae - 0.05)  # fails nearly always
    assert rec.records[0]["p_pass"] == 1.0
    assert rec.records[1]["p_pass"] < 0.05


def test_scale_consistency_records_p_pass():
    m = _panel(30, 2, 0.3, seed=2)
    by_scale = {"0-5": np.clip(m + 2.5, 0, 5), "0-10": np.clip((m + 2.5) * 2, 0, 10)}
    with recording() as rec:
        assert_scale_consistent(by_scale, min_icc=0.2)
    assert rec.records[0]["p_pass"] > 0.95


def test_a_failing_repeat_icc_gate_names_the_samples_needed(scripted):
    """A scripted judge whose repeats are true score + noise: the message and the record give the
    Spearman-Brown number of samples, equal to repeats_needed on the gate's own ICC."""
    from pytest_judgerel import Judge
    from pytest_judgerel.llm import LLMClient, LLMSettings

    truth = {f"i{i}": 1 + (i % 4) for i in range(24)}

    def noisy(messages, sample_seed=0, **params):
        item = next(k for k in truth if f"<{k}>" in messages[1]["content"])
        return str(min(5, max(0, truth[item] + random.Random(sample_seed).choice([-2, -1, 0, 1, 2]))))

    model = scripted("scripted/noisy-repeats", noisy)
    items = [{"id": k, "sentence1": f"<{k}>", "sentence2": "x"} for k in truth]
    with LLMClient(LLMSettings(cache_mode="off")) as client, recording() as rec:
        ratings = Judge(model=model, client=client, repeats=3).rate(items)
        expected = repeats_needed(icc(ratings, form="A,1"), 0.95)
        with pytest.raises(JudgeReliabilityFailure) as info:
            assert_icc_above(ratings, 0.95)
    assert expected.repeats is not None and expected.repeats > 3
    assert f"averaging {expected.repeats} samples per item reaches 0.95" in str(info.value)
    assert "aggregate='mean'" in str(info.value)
    record = [r for r in rec.records if r.get("kind") == "icc"][0]
    assert record["repeats_needed"]["repeats"] == expected.repeats
    # p_pass predicts a rerun with new judge samples on the same items; p_pass_new_items new items too
    assert record["stability"]["resample"] == "repeats" and record["stability"]["predictive"] is True
    assert record["stability"]["predicts"] == "same items, new judge samples"
    assert record["stability"]["new_items_resample"] == "items+repeats"
    assert 0 <= record["p_pass_new_items"] <= 1
    assert record["stability"]["p_pass_new_items"] == record["p_pass_new_items"]


def test_rate_aggregate_mean_is_the_mean_of_the_repeats(scripted):
    from pytest_judgerel import Judge
    from pytest_judgerel.llm import LLMClient, LLMSettings

    model = scripted("scripted/draws", lambda messages, sample_seed=0, **p: str(random.Random(sample_seed).randint(0, 5)))
    items = [{"sentence1": f"s{i}", "sentence2": "t"} for i in range(6)]
    with LLMClient(LLMSettings(cache_mode="off")) as client:
        judge = Judge(model=model, client=client)
        per_repeat = judge.rate(items, repeats=4)
        mean = judge.rate(items, repeats=4, aggregate="mean")
    assert mean.shape == (6, 1)
    np.testing.assert_allclose(mean.values[:, 0], [np.mean(row) for row in per_repeat.values.tolist()])
    with pytest.raises(Exception, match="aggregate"):
        judge.rate(items, aggregate="median")


UNSTABLE = """
import numpy as np
from pytest_judgerel import assert_icc_above
from pytest_judgerel.stats import icc

def _m():
    rng = np.random.default_rng(3)
    truth = rng.normal(size=40)
    return np.column_stack([truth + rng.normal(0, 0.8, 40) for _ in range(5)])

def test_on_the_threshold():
    m = _m()
    assert_icc_above(m, icc(m, form="A,1").value - 0.001)

def test_far_from_it():
    assert_icc_above(_m(), 0.1)
"""


def test_p_pass_reaches_every_output_and_require_stable_fails_unstable_passes(pytester, tmp_path):
    pytester.makepyfile(test_stab=UNSTABLE)
    paths = {k: tmp_path / f"r.{k}" for k in ("json", "html", "xml")}
    result = pytester.runpytest("-p", "no:xdist", f"--judgerel-json={paths['json']}",
                                f"--judgerel-html={paths['html']}", f"--junitxml={paths['xml']}")
    assert result.ret == pytest.ExitCode.OK
    out = result.stdout.str()
    assert "p_pass" in out and "unstable" in out
    rep = json.loads(paths["json"].read_text())
    by_test = {t["nodeid"].split("::")[-1]: t["records"][0] for t in rep["tests"]}
    assert by_test["test_on_the_threshold"]["stability"]["unstable"] is True
    assert by_test["test_far_from_it"]["p_pass"] == 1.0
    assert "p_pass=" in paths["html"].read_text() and "unstable" in paths["html"].read_text()
    props = {p.get("name"): p.get("value") for p in ET.parse(paths["xml"]).iter("property")}
    assert any(name.endswith(".p_pass") for name in props)

    strict = pytester.runpytest("-p", "no:xdist", "--judgerel-require-stable")
    strict.assert_outcomes(passed=1, failed=1)
    assert "verdict is unstable" in strict.stdout.str()
    pytester.makeini("[pytest]\njudgerel_require_stable = true\n")
    pytester.runpytest("-p", "no:xdist").assert_outcomes(passed=1, failed=1)
