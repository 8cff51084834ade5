"""The study's panels (seed 001 section 3.2): unequal human panels, the LLM panel, its mean's
agreement with humans, the reliability illusion of section 5.2, and run_study's temperature.

Expectations are computed in this file from the formulas (seed 001 eqs. 2, 3, 5; the
one-way ANOVA for unequal group sizes), not with the project's statistics code.
"""

from __future__ import annotations

import numpy as np
import pytest

from pytest_judgerel import Ratings, load_dataset
from pytest_judgerel.errors import ConfigError
from pytest_judgerel.llm import LLMClient, LLMSettings, register_scripted, unregister_scripted
from pytest_judgerel.study.analysis import PANEL_MEAN, analyse, human_panel_reliability, run_study


def _two_way(x):
    n, k = x.shape
    g = x.mean()
    ms_i = k * ((x.mean(1) - g) ** 2).sum() / (n - 1)
    ms_r = n * ((x.mean(0) - g) ** 2).sum() / (k - 1)
    e = x - x.mean(1, keepdims=True) - x.mean(0, keepdims=True) + g
    ms_e = (e ** 2).sum() / ((n - 1) * (k - 1))
    a1 = (ms_i - ms_e) / (ms_i + (k - 1) * ms_e + k * (ms_r - ms_e) / n)  # eq. (2)
    ak = (ms_i - ms_e) / (ms_i + (ms_r - ms_e) / n)  # eq. (3)
    return a1, ak


def test_convabuse_panel_uses_every_rating_with_the_unequal_group_anova():
    r = load_dataset("convabuse").ratings()
    groups = [row[~np.isnan(row)] for row in r.values]
    assert {len(g) for g in groups} == {2, 3, 4, 5, 6}
    a, n_total = len(groups), sum(len(g) for g in groups)
    grand = np.concatenate(groups).mean()
    msb = sum(len(g) * (g.mean() - grand) ** 2 for g in groups) / (a - 1)
    msw = sum(((g - g.mean()) ** 2).sum() for g in groups) / (n_total - a)
    n0 = (n_total - sum(len(g) ** 2 for g in groups) / n_total) / (a - 1)
    p = human_panel_reliability(r, "convabuse")
    assert p.forms == ("1,1", "1,k") and "n0 = 2.99" in p.note and "2547 ratings" in p.note
    assert p.single.n_ratings == n_total == 2547 and p.single.n0 == pytest.approx(n0, rel=1e-12)
    assert p.single.value == pytest.approx((msb - msw) / (msb + (n0 - 1) * msw), rel=1e-10)
    assert p.average.value == pytest.approx((msb - msw) / msb, rel=1e-10)
    # the former shortcut (first two ratings of each item) gives a different number
    first_two = np.array([g[:2] for g in groups])
    b = first_two.mean()
    msb2 = 2 * ((first_two.mean(1) - b) ** 2).sum() / (a - 1)
    msw2 = ((first_two - first_two.mean(1, keepdims=True)) ** 2).sum() / a
    assert abs((msb2 - msw2) / msb2 - p.average.value) > 0.03


def _study_data(seed=0, n=30):
    """Two benchmarks: 'easy' (judges track a wide truth) and 'hard' (judges guess)."""
    rng = np.random.default_rng(seed)
    human, judged, truth = {}, {}, {}
    for bench, spread, noise in (("easy", 4.0, 0.15), ("hard", 0.6, 1.5)):
        t = 0.5 + rng.uniform(0, spread, n)
        ids = [f"{bench}{i}" for i in range(n)]
        truth[bench] = t
        human[bench] = Ratings.from_array(np.clip(t[:, None] + rng.normal(0, 0.1, (n, 4)), 0, 5), item_ids=ids,
                                          scale="0-5", rater_groups={"g": ["f", "f", "m", "m"]})
        for m, offset in (("m1", 0.0), ("m2", 0.3), ("m3", -0.2)):
            j5 = np.clip(t + offset + rng.normal(0, noise, n), 0, 5)
            judged[(m, "0-5", bench)] = Ratings.from_array(j5[:, None], item_ids=ids, rater_ids=["r0"], scale="0-5")
            j10 = np.clip(2 * (t + offset) + rng.normal(0, 2 * noise, n), 0, 10)
            judged[(m, "0-10", bench)] = Ratings.from_array(j10[:, None], item_ids=ids, rater_ids=["r0"],
                                                            scale="0-10")
    return human, judged


def test_llm_panel_mean_row_is_the_mean_over_judges_against_the_human_mean():
    human, judged = _study_data()
    res = analyse(human, judged, subgroup="g")
    for scale, top in (("0-5", 5.0), ("0-10", 10.0)):
        pooled_j, pooled_h = [], []
        for bench in ("easy", "hard"):
            ju = np.mean([judged[(m, scale, bench)].values[:, 0] / top for m in ("m1", "m2", "m3")], axis=0)
            hu = human[bench].values.mean(1) / 5
            row = res.agreement_for(PANEL_MEAN, scale, bench)
            assert row.n == 30
            assert row.nmae == pytest.approx(np.abs(ju - hu).mean(), rel=1e-12)
            assert row.icc == pytest.approx(_two_way(np.column_stack([hu, ju]))[0], rel=1e-9)
            female = res.agreement_for(PANEL_MEAN, scale, bench, "g=f")
            assert female.nmae == pytest.approx(np.abs(ju - human[bench].values[:, :2].mean(1) / 5).mean(), rel=1e-12)
            pooled_j.append(ju)
            pooled_h.append(hu)
        pooled = res.agreement_for(PANEL_MEAN, scale)
        pj, ph = np.concatenate(pooled_j), np.concatenate(pooled_h)
        assert pooled.n == 60 and pooled.nmae == pytest.approx(np.abs(pj - ph).mean(), rel=1e-12)
        assert pooled.icc == pytest.approx(_two_way(np.column_stack([ph, pj]))[0], rel=1e-9)
    # each model keeps its own row; the panel mean is not one of them
    assert res.agreement_for("m2", "0-5", "easy").nmae != res.agreement_for(PANEL_MEAN, "0-5", "easy").nmae
    assert "LLM panel mean / 0-5 / pooled" in res.summary()


def test_llm_panel_reliability_and_the_reliability_illusion():
    human, judged = _study_data()
    res = analyse(human, judged, illusion_threshold=0.75)
    for scale, top in (("0-5", 5.0), ("0-10", 10.0)):
        cols = {b: np.column_stack([judged[(m, scale, b)].values[:, 0] / top for m in ("m1", "m2", "m3")])
                for b in ("easy", "hard")}
        for b, x in cols.items():
            a1, ak = _two_way(x)
            p = res.llm_panels[(b, scale)]
            assert p.forms == ("A,1", "A,L")
            assert (p.single.value, p.average.value) == pytest.approx((a1, ak), rel=1e-9)
        pooled_a1, pooled_ak = _two_way(np.vstack([cols["easy"], cols["hard"]]))
        assert res.llm_panels[(None, scale)].average.value == pytest.approx(pooled_ak, rel=1e-9)
        assert pooled_ak >= 0.75 and _two_way(cols["hard"])[1] < 0.75  # the data set up the illusion
    assert [(i.kind, i.scale, i.group) for i in res.reliability_illusions] == [
        ("reliability", "0-5", "benchmark hard"), ("reliability", "0-10", "benchmark hard")]
    ill = res.reliability_illusions[0]
    assert ill.pooled == pytest.approx(res.llm_panels[(None, "0-5")].average.value)
    assert str(ill).startswith("reliability illusion (seed 001 section 5.2): LLM panel on 0-5")
    # the agreement analogue is reported under its own name
    assert all(i.kind == "agreement" and "hidden weak agreement" in str(i) for i in res.agreement_illusions)
    assert "WARNING reliability illusion" in res.summary()


def test_no_llm_panel_with_a_single_model():
    human, judged = _study_data()
    one = {k: v for k, v in judged.items() if k[0] == "m1"}
    res = analyse(human, one)
    assert not res.llm_panels and not res.reliability_illusions
    with pytest.raises(KeyError):
        res.agreement_for(PANEL_MEAN, "0-5")


def test_a_model_may_not_be_called_like_the_panel_mean():
    human, judged = _study_data()
    judged[(PANEL_MEAN, "0-5", "easy")] = judged[("m1", "0-5", "easy")]
    with pytest.raises(ConfigError, match="rename that model"):
        analyse(human, judged)


def test_run_study_samples_at_temperature_one_by_default(tmp_path):
    ds = load_dataset("stsb", subset=6)
    seen = []

    def answer(messages, **params):
        seen.append(params.get("temperature"))
        return "3"

    name = register_scripted("scripted/temperature-probe", answer)
    try:
        with LLMClient(LLMSettings(cache_dir=str(tmp_path / "c"))) as client:
            run_study({"stsb": ds}, [name], scales=("0-5",), client=client)
            assert seen and set(seen) == {1.0}
            seen.clear()
            run_study({"stsb": ds}, [name], scales=("0-5",), client=client, temperature=0.4)
            assert set(seen) == {0.4}
            with pytest.raises(ConfigError, match="temperature="):
                run_study({"stsb": ds}, [name], scales=("0-5",), client=client, judge_kwargs={"temperature": 0})
    finally:
        unregister_scripted(name)
