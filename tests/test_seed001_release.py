"""Seed 001's data release: the loader, the paper's analyses on it and `judgerel study reproduce`,
on a synthetic copy in the release's exact layout (tests/seed001_layout.py).

Expected statistics are computed here from the scores the generator wrote, with the formulas
of seed 001 (eqs. 2, 3 and 5), not with the project's statistics code.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from pytest_judgerel.errors import ConfigError, RatingsError
from pytest_judgerel.study.release import MODELS, SUMMEVAL_READINGS, load_seed001_release
from pytest_judgerel.study.analysis import PANEL_MEAN, analyse
from pytest_judgerel.study.reproduce import TABLE_ORDER, paper_tables, reproduce

from seed001_layout import BENCHES, RATERS, SCALES, write_release
from test_study_panels import _two_way as _icc  # ICC(A,1), ICC(A,k) from seed 001 eqs. 2-3


def _hi(scale: str) -> float:
    return float(scale.split("-")[1])


# one missing score per judge and per scale, each on an item humans rated, plus one on a row humans
# did not rate (MoralChoice's second action, as GPT's G_002 in the real release)
MISSING = tuple((BENCHES[(m + 2 * s) % len(BENCHES)], model, scale, (m + s) % 6)
                for m, model in enumerate(MODELS) for s, scale in enumerate(SCALES))
UNRATED_MISSING = ("MoralChoice", "GPT", "0-100", 8)


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    root = tmp_path_factory.mktemp("llm-judge")
    return write_release(root, missing=MISSING + (UNRATED_MISSING,))


@pytest.fixture(scope="module")
def loaded(release):
    return load_seed001_release(release.root)


def _human_first(release, bench, scale):
    """The human matrix under the default SummEval reading: the field filled first."""
    x = release.human[(bench, scale)].copy()
    if bench == "SummEval":
        for j, (g, i) in enumerate(RATERS):
            for r, rid in enumerate(release.human_ids[bench]):
                fields, first = release.summeval_fields[(f"{g}_Subject_{i}", scale, rid)]
                x[r, j] = fields[first]
    return x


def test_loader_reads_every_file_kind(release, loaded):
    assert loaded.benchmarks == BENCHES
    for bench in BENCHES:
        for scale in SCALES:
            h = loaded.human[(bench, scale)]
            assert h.item_ids == tuple(release.human_ids[bench])
            assert h.rater_ids == ("Female_Subject_1", "Female_Subject_2", "Male_Subject_1", "Male_Subject_2")
            assert h.rater_groups["gender"] == ("Female", "Female", "Male", "Male")
            np.testing.assert_array_equal(h.values, _human_first(release, bench, scale))
            j = loaded.llm[(bench, scale)]
            assert j.rater_ids == MODELS and j.item_ids == tuple(release.llm_ids[bench])
            np.testing.assert_array_equal(j.values, release.llm[(bench, scale)])  # NaN where left blank
            for t in (0.1, 0.4, 0.7):  # three spellings of T; MoralChoice lists its columns 0_10, 0_100, 0_5
                tr = loaded.temperatures[(t, bench, scale)]
                assert tr.rater_ids == ("Llama", "Gemini")
                np.testing.assert_array_equal(tr.values, release.temps[(t, bench, scale)])
    mc = loaded.llm[("MoralChoice", "0-5")]
    assert mc.n_items == 12 and mc.item_groups["human_rated"] == ("yes",) * 6 + ("no",) * 6
    assert loaded.llm[("ToxiGen", "0-5")].n_items == 6  # a quoted text with a newline is one row
    judged = loaded.judged()
    assert len(judged) == 6 * 3 * 6 and judged[("GPT", "0-10", "STS-B")].rater_ids == ("GPT",)
    assert set(loaded.judged(0.4)) == {(m, s, b) for m in ("Llama", "Gemini") for s in SCALES for b in BENCHES}
    with pytest.raises(RatingsError, match="no temperature 0.9"):
        loaded.judged(0.9)


def test_every_quirk_met_is_reported(loaded):
    kinds = {n.kind for n in loaded.notes}
    assert kinds == {"SummEval field order", "left-over drafts", "rows humans did not rate",
                     "human item text differs from the CSV", "item text differs between annotators' files",
                     "data.id is not an item id", "missing judge score"}
    missing = [n for n in loaded.notes if n.kind == "missing judge score"]
    assert sum(len(n.items) for n in missing) == len(MISSING) + 1
    assert {(n.benchmark, n.scale) for n in missing} == {(b, s) for b, _, s, _ in MISSING + (UNRATED_MISSING,)}
    drafts = next(n for n in loaded.notes if n.kind == "left-over drafts")
    assert drafts.items == ("Male_Subject_2 MoralChoice 0-5 item 2",)
    assert "Female_Subject_2 0-5 item 1: coherence first" in next(
        n for n in loaded.notes if n.kind == "SummEval field order").items
    assert "missing judge score" in loaded.summary()


@pytest.mark.parametrize("reading", SUMMEVAL_READINGS)
def test_summeval_readings(release, reading):
    r = load_seed001_release(release.root, summeval_reading=reading)
    for scale in SCALES:
        got = r.human[("SummEval", scale)]
        for j, (g, i) in enumerate(RATERS):
            for row, rid in enumerate(release.human_ids["SummEval"]):
                fields, first = release.summeval_fields[(f"{g}_Subject_{i}", scale, rid)]
                want = {"first": fields[first], "mean": np.mean([fields[d] for d in
                                                                 ("relevance", "coherence", "fluency", "consistency")])
                        }.get(reading, fields.get(reading))
                assert got.values[row, j] == pytest.approx(want, abs=1e-12)
    with pytest.raises(RatingsError, match="summeval_reading must be one of"):
        load_seed001_release(release.root, summeval_reading="last")


def _edit(path, old, new):
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_bad_layouts_raise_errors_that_name_the_cause(tmp_path):
    with pytest.raises(RatingsError, match="not the seed-001 release"):
        load_seed001_release(tmp_path)
    w = write_release(tmp_path / "a")
    csv_path = w.root / "data" / "llm" / "similarity_25_samples_all_models.csv"
    _edit(csv_path, "GPT-4o_0_5", "Claude_0_5")
    with pytest.raises(RatingsError, match="score column 'Claude_0_5' names an unknown judge"):
        load_seed001_release(w.root)
    w = write_release(tmp_path / "b")
    human = w.root / "data" / "human" / "Male_Subject_1_0_5" / "Male_Subject_1_STS-B_results_0_5.json"
    tasks = json.loads(human.read_text())
    tasks[0]["annotations"][0]["result"][0]["value"]["number"] = 7
    human.write_text(json.dumps(tasks))
    with pytest.raises(RatingsError, match="score 7.0 outside 0-5"):
        load_seed001_release(w.root)
    tasks[0]["annotations"][0]["was_cancelled"] = True
    human.write_text(json.dumps(tasks))
    with pytest.raises(RatingsError, match="0 submitted annotations, expected 1"):
        load_seed001_release(w.root)
    w = write_release(tmp_path / "c")
    folder = w.root / "data" / "human" / "Male_Subject_1_0_5"
    (folder / "Male_Subject_1_STS-B_results_0_5.json").rename(folder / "Male_Subject_2_STS-B_results_0_5.json")
    with pytest.raises(RatingsError, match="does not match its folder Male_Subject_1_0_5"):
        load_seed001_release(w.root)
    w = write_release(tmp_path / "e")
    (w.root / "data" / "human" / "Male_Subject_1_0_10" / "Male_Subject_1_ToxiGen_results_0_10.json").unlink()
    with pytest.raises(RatingsError, match="ToxiGen 0-10: no file from Male_Subject_1"):
        load_seed001_release(w.root)
    w = write_release(tmp_path / "f")
    _edit(w.root / "data" / "llm" / "TruthfulQA_25_samples_comparison.csv", ",Misc,", ",Misc,9")
    with pytest.raises(RatingsError, match=r"TruthfulQA_25_samples_comparison.csv row 1 column llama33_score_0_5: "
                                           r"score 9\d.* outside 0-5"):
        load_seed001_release(w.root)
    w = write_release(tmp_path / "d")
    _edit(w.root / "data" / "llm" / "TruthfulQA_25_samples_comparison.csv", ",Misc,", ",Misc,x")
    with pytest.raises(RatingsError, match="is not a number"):
        load_seed001_release(w.root)


def test_analyse_with_one_missing_score_per_judge_and_scale(release, loaded):
    res = analyse(loaded.human_by_scale(), loaded.judged(), subgroup="gender")
    for scale in SCALES:  # the human panels: per scale and pooled, from the formulas
        pooled = np.vstack([_human_first(release, b, scale) for b in BENCHES])
        assert res.human_panel(None, scale).average.value == pytest.approx(_icc(pooled)[1], rel=1e-10)
        assert res.subgroup_panels[(None, scale, "gender=Male")].average.value == pytest.approx(
            _icc(pooled[:, 2:])[1], rel=1e-10)
        for bench in BENCHES:
            assert res.human_panel(bench, scale).single.value == pytest.approx(
                _icc(_human_first(release, bench, scale))[0], rel=1e-10)
    lacking = {(b, s): {r for bb, _, ss, r in MISSING if (bb, ss) == (b, s)} for b in BENCHES for s in SCALES}
    for scale in SCALES:
        pooled_x, pooled_h, pooled_p = [], [], []
        for bench in BENCHES:
            x = release.llm[(bench, scale)] / _hi(scale)
            complete = ~np.isnan(x).any(axis=1)  # every judge row, rated or not (MoralChoice: 12, one blank)
            assert res.llm_panels[(bench, scale)].average.value == pytest.approx(_icc(x[complete])[1], rel=1e-10)
            pooled_x.append(x[complete])
            keep = [r for r in range(6) if r not in lacking[(bench, scale)]]
            h = _human_first(release, bench, scale).mean(axis=1)[keep] / _hi(scale)
            p = x[keep].mean(axis=1)
            row = res.agreement_for(PANEL_MEAN, scale, bench)
            assert row.n == len(keep) and row.nmae == pytest.approx(np.abs(h - p).mean(), rel=1e-12)
            assert row.icc == pytest.approx(_icc(np.column_stack([h, p]))[0], rel=1e-10)
            pooled_h.append(h)
            pooled_p.append(p)
            gpt = res.agreement_for("GPT", scale, bench)  # missing="scale": the same items for every judge
            assert gpt.n == len(keep)
        assert res.llm_panels[(None, scale)].average.value == pytest.approx(_icc(np.vstack(pooled_x))[1], rel=1e-10)
        h, p = np.concatenate(pooled_h), np.concatenate(pooled_p)
        assert res.agreement_for(PANEL_MEAN, scale).icc == pytest.approx(_icc(np.column_stack([h, p]))[0], rel=1e-10)
        # each judge pooled over benchmarks (Table 4b) and each gender's mean vs the panel mean (Table 5)
        for model in ("GPT", "Mistral"):
            hs, js = [], []
            for bench in BENCHES:
                keep = [r for r in range(6) if r not in lacking[(bench, scale)]]
                hs.append(_human_first(release, bench, scale).mean(axis=1)[keep] / _hi(scale))
                js.append(release.llm[(bench, scale)][keep, MODELS.index(model)] / _hi(scale))
            hm, jm = np.concatenate(hs), np.concatenate(js)
            row = res.agreement_for(model, scale)
            assert row.icc == pytest.approx(_icc(np.column_stack([hm, jm]))[0], rel=1e-10)
            assert row.nmae == pytest.approx(np.abs(hm - jm).mean(), rel=1e-12)
        males = np.concatenate([_human_first(release, b, scale)[:, 2:].mean(axis=1)[
            [r for r in range(6) if r not in lacking[(b, scale)]]] / _hi(scale) for b in BENCHES])
        male = res.agreement_for(PANEL_MEAN, scale, None, "gender=Male")
        assert male.icc == pytest.approx(_icc(np.column_stack([males, p]))[0], rel=1e-10)
        assert male.nmae == pytest.approx(np.abs(males - p).mean(), rel=1e-12)
    # every missing score is reported, and where it was left out
    for bench, model, scale, r in MISSING:
        rid = release.llm_ids[bench][r]
        assert any(d.startswith(f"{model} {scale} {bench}: 1 item(s) without a score ({rid}") for d in res.dropped)
        assert any(d.startswith(f"consistency {model} {bench}:") and rid in d for d in res.dropped)
    assert not res.skipped
    unrated = release.llm_ids["MoralChoice"][UNRATED_MISSING[3]]  # left out of the LLM panel only
    assert any(d.startswith("LLM panel MoralChoice 0-100:") and unrated in d for d in res.dropped)
    assert not any(d.startswith("0-100 MoralChoice:") and unrated in d for d in res.dropped)
    # missing="row": a judge keeps the items it scored
    by_row = analyse(loaded.human_by_scale(), loaded.judged(), missing="row")
    for bench, model, scale, _ in MISSING:
        own = sum(1 for b, m, s, _ in MISSING if (b, m, s) == (bench, model, scale))
        assert by_row.agreement_for(model, scale, bench).n == 6 - own
    with pytest.raises(ConfigError, match="missing must be one of"):
        analyse(loaded.human_by_scale(), loaded.judged(), missing="drop")


def test_consistency_drops_only_the_missing_item(release, loaded):
    res = analyse(loaded.human_by_scale(), loaded.judged())
    bench, model, scale, r = MISSING[0]
    cols = [release.llm[(bench, s)][:, MODELS.index(model)] / _hi(s) for s in SCALES]
    x = np.column_stack(cols)
    x = x[~np.isnan(x).any(axis=1)]
    got = res.consistency[(model, bench)]
    assert got.n_items == x.shape[0] == len(release.llm_ids[bench]) - 1
    assert got.joint.value == pytest.approx(_icc(x)[0], rel=1e-10)


def test_temperature_ablation_rows(release, loaded):
    temps = {t: loaded.judged(t) for t in (0.1, 0.4, 0.7)}
    res = analyse(loaded.human_by_scale(), loaded.judged(), temperatures=temps)
    for t in (0.1, 0.7):
        for scale in SCALES:
            hs, js = [], []
            for bench in BENCHES:
                hs.append(_human_first(release, bench, scale).mean(axis=1) / _hi(scale))
                js.append(release.temps[(t, bench, scale)][:6, 1] / _hi(scale))  # Gemini, rated rows
            h, j = np.concatenate(hs), np.concatenate(js)
            row = res.agreement_for("Gemini", scale, temperature=t)
            assert row.temperature == t and row.n == 36
            assert row.icc == pytest.approx(_icc(np.column_stack([h, j]))[0], rel=1e-10)
    assert "Temperature ablation" in res.summary()


def test_paper_values_file_is_complete():
    tabs = paper_tables()["tables"]
    assert set(tabs) == set(TABLE_ORDER)
    sizes = {name: sum(len(v) for v in t["rows"].values()) for name, t in tabs.items()}
    assert sizes == {"1": 168, "2": 12, "3": 18, "14": 18, "15": 18, "4a": 36, "4b": 36, "5": 18, "6": 24}
    for t in tabs.values():
        assert all(len(v) == len(t["columns"]) for v in t["rows"].values())


def test_reproduce_command_fills_every_cell(release, tmp_path, capsys):
    from pytest_judgerel.__main__ import main

    out_json, out_html = tmp_path / "cells.json", tmp_path / "tables.html"
    assert main(["study", "reproduce", "--release", str(release.root), "--json", str(out_json),
                 "--html", str(out_html), "--notes"]) == 0
    printed = capsys.readouterr().out
    assert "Table 4a:" in printed and "Tables 2, 3, 4a, 4b, 6, 14, 15:" in printed and "missing judge score" in printed
    cells = json.loads(out_json.read_text())["cells"]
    assert len(cells) == 348 and {c["table"] for c in cells} == set(TABLE_ORDER)
    for c in cells:  # every printed number of the paper has ours beside it
        assert c["ours"] is not None and math.isfinite(c["ours"]) and {"row", "column", "paper"} <= set(c)
        assert c["difference"] == pytest.approx(c["ours"] - c["paper"])
    html = out_html.read_text()
    assert html.count("<svg") == 2 and "Table 4a" in html and "data.id is not an item id" in html
    rep = reproduce(release.root)
    assert rep.count() == (sum(c["reproduces"] for c in cells), 348)
    by_key = {(c["table"], c["row"], c["column"]): c["ours"] for c in cells}
    res = rep.result  # each table's cell is the statistic it names
    assert by_key[("2", "0-10", "ICC_Human")] == res.human_panel(None, "0-10").average.value
    assert by_key[("2", "0-5", "ICC_LLM")] == res.llm_panels[(None, "0-5")].average.value
    assert by_key[("2", "0-100", "nMAE")] == res.agreement_for(PANEL_MEAN, "0-100").nmae
    assert by_key[("14", "SummEval", "ICC_LLM")] == res.llm_panels[("SummEval", "0-10")].average.value
    assert by_key[("15", "ToxiGen", "Delta")] == pytest.approx(
        round(res.human_panel("ToxiGen", "0-100").average.value, 3)
        - round(res.llm_panels[("ToxiGen", "0-100")].average.value, 3))
    assert by_key[("4a", "MT-Bench / 0-10", "nMAE")] == res.agreement_for(PANEL_MEAN, "0-10", "MT-Bench").nmae
    assert by_key[("4b", "Qwen / 0-5", "ICC")] == res.agreement_for("Qwen", "0-5").icc
    assert by_key[("5", "0-5", "ICC_Female-LLM")] == res.agreement_for(PANEL_MEAN, "0-5", None, "gender=Female").icc
    assert by_key[("5", "0-10", "ICC_Male")] == res.subgroup_panels[(None, "0-10", "gender=Male")].average.value
    assert by_key[("6", "Gemini / 0-100", "T=0.4")] == res.agreement_for("Gemini", "0-100", temperature=0.4).icc
    assert by_key[("6", "Llama / 0-5", "T=1")] == res.agreement_for("Llama", "0-5").icc
    assert by_key[("1", "SummEval / 0-5 vs 0-100", "DeepSeek")] == res.consistency[("DeepSeek", "SummEval")].pairwise[
        ("0-5", "0-100")].value
    assert by_key[("1", "STS-B / 0-5, 0-10, 0-100", "Avg.")] == pytest.approx(
        np.mean([res.consistency[(m, "STS-B")].joint.value for m in MODELS]))


def test_a_missing_release_is_an_error_of_the_command(tmp_path, capsys):
    from pytest_judgerel.__main__ import main

    assert main(["study", "reproduce", "--release", str(tmp_path)]) == 2
    assert "not the seed-001 release" in capsys.readouterr().err
