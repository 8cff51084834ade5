"""Seed 001's study code: tests that fail on the held-out planted bugs
(docs/benchmarks.md, "Planted bugs and the held-out measurement" lists each mutant and the test that kills it).

On the synthetic release of tests/seed001_layout.py (the release's exact layout, made-up scores).
"""

from __future__ import annotations

import csv

import numpy as np
import pytest

from pytest_judgerel.study.analysis import analyse
from pytest_judgerel.study.release import load_seed001_release
from pytest_judgerel.study.reproduce import TOLERANCE, Cell

from seed001_layout import SCALES, write_release


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    root = tmp_path_factory.mktemp("llm-judge-mutants")
    written = write_release(root, temperatures=(0.1, 0.7))
    # blank Llama's 0-5 score of the first STS-B row in the T=0.1 file (a missing score of a temperature run)
    path = root / "data" / "llm" / "temperatures" / "STS-Benchmark" / "similarity_25_samples_temperature=0.1.csv"
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    column = rows[0].index("Llama3.3_0_5")
    rows[1][column] = ""
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    return written


@pytest.fixture(scope="module")
def loaded(release):
    return load_seed001_release(release.root)


@pytest.mark.parametrize("sign", [+1, -1])
def test_a_cell_reproduces_only_within_the_tolerance_on_both_sides(sign):
    """Mutant: ``reproduces`` tested one-sided (``d <= tol``): a value far below the paper's
    would count as reproduced."""
    assert Cell("2", "row", "col", paper=0.5, ours=0.5 + sign * TOLERANCE * 0.5).reproduces()
    assert not Cell("2", "row", "col", paper=0.5, ours=0.5 + sign * TOLERANCE * 3).reproduces()
    assert not Cell("2", "row", "col", paper=0.5, ours=0.5 + sign * 0.2).reproduces()


def test_temperature_runs_mark_human_rated_rows_as_the_main_run_does(loaded):
    """Mutant: the temperature files' rows all marked human-rated (MoralChoice's second actions
    were never rated by humans)."""
    for scale in SCALES:
        main = loaded.llm[("MoralChoice", scale)]
        expected = dict(zip(main.item_ids, main.item_groups["human_rated"]))
        assert "no" in expected.values() and "yes" in expected.values()
        for t in (0.1, 0.7):
            run = loaded.temperatures[(t, "MoralChoice", scale)]
            assert dict(zip(run.item_ids, run.item_groups["human_rated"])) == expected


def test_missing_scale_applies_to_the_temperature_runs(loaded):
    """Mutant: ``missing="scale"`` applied to the main run only: at T=0.1 the item Llama did not
    score must leave Gemini's 0-5 agreement row too (and be reported), and only there."""
    temps = {t: loaded.judged(t) for t in (0.1, 0.7)}
    res = analyse(loaded.human_by_scale(), loaded.judged(), temperatures=temps)
    assert res.agreement_for("Gemini", "0-5", "STS-B", temperature=0.1).n == 5
    assert res.agreement_for("Llama", "0-5", "STS-B", temperature=0.1).n == 5
    assert res.agreement_for("Gemini", "0-5", "STS-B", temperature=0.7).n == 6
    assert res.agreement_for("Gemini", "0-10", "STS-B", temperature=0.1).n == 6
    assert any(d.startswith("0-5 STS-B at T=0.1:") and "missing='scale'" in d for d in res.dropped), res.dropped
    by_row = analyse(loaded.human_by_scale(), loaded.judged(), temperatures=temps, missing="row")
    assert by_row.agreement_for("Gemini", "0-5", "STS-B", temperature=0.1).n == 6
    assert by_row.agreement_for("Llama", "0-5", "STS-B", temperature=0.1).n == 5


# ---------------------------------------------------------------- held-out bugs (tools/mutation/held_out_mutants.py)
def test_count_applies_the_tolerance_it_is_given():
    """Y02: ``Reproduction.count(tolerance=...)`` ignored its tolerance (the real-release test's
    "every cell rounds to the printed digits" check at 0.0005 then proved nothing)."""
    from pytest_judgerel.study.reproduce import Reproduction

    cells = (Cell("2", "a", "x", paper=0.5, ours=0.5004), Cell("2", "b", "x", paper=0.5, ours=0.5008),
             Cell("3", "a", "x", paper=0.5, ours=0.503), Cell("3", "b", "x", paper=0.5, ours=None))
    rep = Reproduction(cells, (), None, "first")
    assert rep.count() == (2, 4)
    assert rep.count(tolerance=0.0005) == (1, 4)
    assert rep.count(("3",), tolerance=0.01) == (1, 2)


def test_the_main_run_is_temperature_one(loaded):
    """Y03: ``judged(1.0)`` (the paper's main run, T = 1) raised "no temperature 1.0" instead of
    returning the main run."""
    main, at_one = loaded.judged(), loaded.judged(1.0)
    assert main.keys() == at_one.keys() and len(main) > 0
    for key in main:
        assert main[key].item_ids == at_one[key].item_ids
        assert np.array_equal(main[key].to_matrix(), at_one[key].to_matrix(), equal_nan=True)
    assert set(loaded.judged(0.1)) <= set(main)  # the ablation ran two of the judges


# ---------------------------------------------------------------- batch 2's survivors
def test_missing_scale_leaves_out_an_item_a_judges_file_lacks_altogether(loaded):
    """Y06: ``missing="scale"`` saw only items a judge scored as blank, not items absent from its
    ratings: the other judges kept the item on that scale, so their rows and the lacking judge's
    were computed on different items."""
    judged = dict(loaded.judged())
    llama = judged[("Llama", "0-5", "STS-B")]
    absent = llama.item_ids[0]
    judged[("Llama", "0-5", "STS-B")] = llama.select_items([i != absent for i in llama.item_ids])
    res = analyse(loaded.human_by_scale(), judged)
    assert res.agreement_for("Llama", "0-5", "STS-B").n == 5
    assert res.agreement_for("Gemini", "0-5", "STS-B").n == 5  # left out for every judge on 0-5
    assert res.agreement_for("Gemini", "0-10", "STS-B").n == 6  # and only there
    assert any(d.startswith("0-5 STS-B:") and absent in d and "missing='scale'" in d for d in res.dropped), res.dropped
    by_row = analyse(loaded.human_by_scale(), judged, missing="row")
    assert by_row.agreement_for("Gemini", "0-5", "STS-B").n == 6


@pytest.mark.parametrize("change", ["drop the last row", "swap two rows", "rename a row"])
def test_a_temperature_file_whose_rows_differ_from_the_main_run_is_refused(tmp_path, change):
    """Y07: a temperature file whose rows are not the main run's (one missing, another order,
    another item) was read as if they were: its items would be compared with the wrong humans
    and the wrong main-run scores."""
    from pytest_judgerel.errors import RatingsError

    written = write_release(tmp_path / "release", temperatures=(0.1,))
    path = (written.root / "data" / "llm" / "temperatures" / "STS-Benchmark"
            / "similarity_25_samples_temperature=0.1.csv")
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    if change == "drop the last row":
        rows = rows[:-1]
    elif change == "swap two rows":
        rows[1], rows[2] = rows[2], rows[1]
    else:
        rows[1][0] = rows[1][0] + "9"
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    with pytest.raises(RatingsError, match="rows differ from the main"):
        load_seed001_release(written.root)


# ---------------------------------------------------------------- batch 3's survivors
def _set_cell(path, column: str, row: int, text: str) -> None:
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    rows[row][rows[0].index(column)] = text
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)


@pytest.mark.parametrize("word", ["None", "null", "NULL", "NaN", " nan ", ""])
def test_a_score_cell_reading_none_or_null_is_a_missing_score(tmp_path, word):
    """Y09: a score cell reading ``None`` / ``null`` (how pandas and JSON tools write a missing
    value) refused as "not a number" instead of read as missing, like a blank cell; every other
    score of the file is read as written."""
    from seed001_layout import MODELS

    written = write_release(tmp_path / "release", temperatures=())
    _set_cell(written.root / "data" / "llm" / "similarity_25_samples_all_models.csv", "Llama3.3_0_5", 2, word)
    loaded = load_seed001_release(written.root)
    got = loaded.llm[("STS-B", "0-5")]
    expected = written.llm[("STS-B", "0-5")].copy()
    expected[1, MODELS.index("Llama")] = np.nan
    assert list(got.item_ids) == written.llm_ids["STS-B"] and got.rater_ids == MODELS
    assert np.array_equal(got.values, expected, equal_nan=True)
    assert int(np.isnan(got.values).sum()) == 1


def test_a_word_in_a_score_cell_is_refused_with_its_place(tmp_path):
    from pytest_judgerel.errors import RatingsError

    written = write_release(tmp_path / "release", temperatures=())
    _set_cell(written.root / "data" / "llm" / "similarity_25_samples_all_models.csv", "Llama3.3_0_5", 2, "n/a")
    with pytest.raises(RatingsError, match=r"similarity_25_samples_all_models\.csv.*'n/a' is not a number"):
        load_seed001_release(written.root)


def test_a_judges_item_mean_leaves_out_a_missing_repeat():
    """Y10: a judge's per-item mean over repeats counted a missing repeat (an unparsed reply) as a
    score of 0 (sum / number of repeats).  The mean is over the repeats that have a score: the
    agreement row's nMAE and the error list's judge values are exact."""
    from pytest_judgerel.ratings import Ratings

    human = Ratings.from_array([[2.0, 4.0], [6.0, 6.0], [8.0, 10.0], [1.0, 3.0]], item_ids=list("abcd"), scale="0-10")
    judge = Ratings.from_array([[3.0, 3.0, 3.0], [6.0, np.nan, 8.0], [np.nan, 9.0, np.nan], [2.0, 2.0, 5.0]],
                               item_ids=list("abcd"), scale="0-10")
    res = analyse({"B": human}, {("m", "0-10", "B"): judge})
    row = res.agreement_for("m", "0-10", "B")
    judge_means = np.array([3.0, 7.0, 9.0, 3.0])
    human_means = np.array([3.0, 6.0, 9.0, 2.0])
    assert row.n == 4
    assert row.nmae == pytest.approx(float(np.mean(np.abs(judge_means - human_means))) / 10, abs=1e-12)
    assert {e["item"]: e["judge"] for e in res.errors} == {}  # every error is 0.1 or less
    assert not any("without a score" in d for d in res.dropped)


# ---------------------------------------------------------------- the loader's limits and refusals (broadened)
_STSB = ("data", "llm", "similarity_25_samples_all_models.csv")


@pytest.mark.parametrize("text, value", [("5", 5.0), ("0", 0.0), ("5.0", 5.0), ("  2.5 ", 2.5)])
def test_a_judge_score_on_the_edge_of_its_scale_is_read(tmp_path, text, value):
    written = write_release(tmp_path / "release", temperatures=())
    _set_cell(written.root.joinpath(*_STSB), "Llama3.3_0_5", 1, text)
    assert load_seed001_release(written.root).llm[("STS-B", "0-5")].values[0, 0] == value


@pytest.mark.parametrize("text, shown", [("5.01", "5.01"), ("-0.01", "-0.01"), ("11", "11")])
def test_a_judge_score_outside_its_scale_is_refused_with_its_place(tmp_path, text, shown):
    from pytest_judgerel.errors import RatingsError

    written = write_release(tmp_path / "release", temperatures=())
    _set_cell(written.root.joinpath(*_STSB), "Llama3.3_0_5", 1, text)
    with pytest.raises(RatingsError, match=rf"similarity_25_samples_all_models\.csv row 1000 column Llama3\.3_0_5: "
                                           rf"score {shown} outside 0-5$"):
        load_seed001_release(written.root)


def _edit_first_human_task(root, folder: str, bench: str, change) -> None:
    import json

    d = root / "data" / "human" / folder
    path = next(d.glob(f"*_{bench}_results_*.json"))
    tasks = json.loads(path.read_text(encoding="utf-8"))
    change(tasks[0])
    path.write_text(json.dumps(tasks), encoding="utf-8")


@pytest.mark.parametrize("number, error", [(10, None), (0, None), (10.5, r"score 10\.5 outside 0-10"),
                                           (-1, r"score -1(\.0)? outside 0-10"), ("7", r"holds '7', not a number"),
                                           (True, "holds True, not a number"), (None, "holds None, not a number")])
def test_a_human_score_is_a_number_within_its_folders_scale(tmp_path, number, error):
    from pytest_judgerel.errors import RatingsError

    written = write_release(tmp_path / "release", temperatures=())

    def change(task):
        task["annotations"][0]["result"][0]["value"]["number"] = number

    _edit_first_human_task(written.root, "Female_Subject_1_0_10", "STS-B", change)
    if error is None:
        human = load_seed001_release(written.root).human[("STS-B", "0-10")]
        assert float(number) in human.values[:, list(human.rater_ids).index("Female_Subject_1")]
    else:
        with pytest.raises(RatingsError, match=error):
            load_seed001_release(written.root)


@pytest.mark.parametrize("change, error", [
    (lambda t: t["annotations"].append(dict(t["annotations"][0])), "2 submitted annotations, expected 1"),
    (lambda t: t["annotations"][0].update(was_cancelled=True), "0 submitted annotations, expected 1"),
    (lambda t: t["annotations"][0]["result"].append(dict(t["annotations"][0]["result"][0], from_name="other")),
     "expected one number field 'similarity_score'"),
])
def test_a_human_task_without_exactly_one_submitted_score_is_refused(tmp_path, change, error):
    from pytest_judgerel.errors import RatingsError

    written = write_release(tmp_path / "release", temperatures=())
    _edit_first_human_task(written.root, "Female_Subject_1_0_10", "STS-B", change)
    with pytest.raises(RatingsError, match=error):
        load_seed001_release(written.root)


def test_a_cancelled_second_annotation_is_ignored(tmp_path):
    written = write_release(tmp_path / "release", temperatures=())
    before = load_seed001_release(written.root).human[("STS-B", "0-10")].values

    def change(task):
        extra = json.loads(json.dumps(task["annotations"][0]))
        extra["was_cancelled"] = True
        extra["result"][0]["value"]["number"] = 0.0
        task["annotations"].append(extra)

    import json

    _edit_first_human_task(written.root, "Female_Subject_1_0_10", "STS-B", change)
    assert np.array_equal(load_seed001_release(written.root).human[("STS-B", "0-10")].values, before)


@pytest.mark.parametrize("layout_change, error", [
    ("rename a rater folder", "folder name is not <Female|Male>_Subject_<i>_0_<5|10|100>"),
    ("unknown benchmark file", "unknown benchmark 'Quiz'"),
    ("not JSON", "not JSON"),
    ("not a list", "expected a Label Studio export"),
    ("second temperature file", "a second file for T=0.1"),
    ("temperature not in the name", "no temperature in the file name"),
    ("duplicate row id", "duplicate row ids"),
    ("unknown judge column", "score column 'Claude_0_5' names an unknown judge 'Claude'"),
])
def test_a_release_that_breaks_the_layout_is_refused_naming_the_file(tmp_path, layout_change, error):
    import json

    from pytest_judgerel.errors import RatingsError

    written = write_release(tmp_path / "release", temperatures=(0.1,))
    data = written.root / "data"
    rater = data / "human" / "Female_Subject_1_0_10"
    temps = data / "llm" / "temperatures" / "STS-Benchmark"
    if layout_change == "rename a rater folder":
        rater.rename(data / "human" / "Female_Subject_1_0_7")
    elif layout_change == "unknown benchmark file":
        (rater / "Female_Subject_1_Quiz_results_0_10.json").write_text("[]", encoding="utf-8")
    elif layout_change == "not JSON":
        next(rater.glob("*_STS-B_*.json")).write_text("[{", encoding="utf-8")
    elif layout_change == "not a list":
        next(rater.glob("*_STS-B_*.json")).write_text(json.dumps({"tasks": []}), encoding="utf-8")
    elif layout_change == "second temperature file":
        source = temps / "similarity_25_samples_temperature=0.1.csv"
        (temps / "similarity_25_samples_t0.1.csv").write_bytes(source.read_bytes())
    elif layout_change == "temperature not in the name":
        (temps / "similarity_25_samples_temperature=0.1.csv").rename(temps / "similarity_25_samples_cold.csv")
    elif layout_change == "duplicate row id":
        _set_cell(data.joinpath(*_STSB[1:]), "sid", 2, "1000")
    else:
        path = data.joinpath(*_STSB[1:])
        with path.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
        rows[0][rows[0].index("Llama3.3_0_5")] = "Claude_0_5"
        with path.open("w", newline="", encoding="utf-8") as fh:
            csv.writer(fh).writerows(rows)
    with pytest.raises(RatingsError, match=error):
        load_seed001_release(written.root)


# ---------------------------------------------------------------- analyse() on small hand-made data (broadened)
def _r(rows, scale="0-10", ids=None):
    from pytest_judgerel.ratings import Ratings

    return Ratings.from_array(rows, item_ids=ids or [f"i{n}" for n in range(len(rows))], scale=scale)


def test_the_error_list_holds_items_strictly_beyond_a_tenth_of_the_range():
    """Seed 001 section 5.4: an item is listed when |judge - human| / range *exceeds* 0.1; one
    exactly 0.1 away is not.  Each entry carries the unit-scale values."""
    human = _r([[0.0, 0.0], [5.0, 5.0], [10.0, 10.0], [4.0, 4.0]])
    judge = _r([[1.0], [5.0], [8.5], [4.0]])  # 0.1 exactly, 0, 0.15, 0
    res = analyse({"B": human}, {("m", "0-10", "B"): judge})
    assert res.errors == [{"model": "m", "scale": "0-10", "benchmark": "B", "item": "i2", "human": 1.0,
                           "judge": 0.85, "error": pytest.approx(0.15)}]


def test_an_agreement_row_is_the_icc_and_nmae_of_the_unit_means_and_pooled_rows_stack_benchmarks():
    from pytest_judgerel.stats import icc

    rng = np.random.default_rng(3)
    h1, h2 = rng.uniform(0, 10, (8, 3)), rng.uniform(0, 10, (6, 3))
    j1, j2 = np.clip(h1.mean(axis=1, keepdims=True) + rng.normal(0, 1, (8, 2)), 0, 10), rng.uniform(0, 10, (6, 2))
    res = analyse({"A": _r(h1), "B": _r(h2)}, {("m", "0-10", "A"): _r(j1), ("m", "0-10", "B"): _r(j2)})
    unit = {b: (h.mean(axis=1) / 10, j.mean(axis=1) / 10) for b, h, j in (("A", h1, j1), ("B", h2, j2))}
    for bench, (hu, ju) in unit.items():
        row = res.agreement_for("m", "0-10", bench)
        assert row.n == len(hu) and row.nmae == pytest.approx(np.abs(ju - hu).mean(), abs=1e-12)
        assert row.icc == pytest.approx(icc(np.column_stack([hu, ju]), form="A,1").value, abs=1e-12)
    pooled = res.agreement_for("m", "0-10", None)
    hu = np.concatenate([unit["A"][0], unit["B"][0]])
    ju = np.concatenate([unit["A"][1], unit["B"][1]])
    assert pooled.n == 14 and pooled.icc == pytest.approx(icc(np.column_stack([hu, ju]), form="A,1").value, abs=1e-12)


def test_a_human_panel_with_gaps_uses_the_one_way_forms_and_says_so():
    from pytest_judgerel.errors import ReliabilityError
    from pytest_judgerel.study.analysis import human_panel_reliability

    complete = human_panel_reliability(_r([[1, 2, 2], [5, 6, 5], [8, 9, 9], [3, 3, 4]]), "B")
    assert complete.forms == ("A,1", "A,k") and complete.note == ""
    gappy = human_panel_reliability(_r([[1, 2, np.nan], [5, 6, 5], [8, np.nan, 9], [3, 3, 4]]), "B")
    assert gappy.forms == ("1,1", "1,k")
    assert gappy.note.startswith("raters not crossed: one-way ANOVA on all 10 ratings (2-3 per item), n0 = ")
    with pytest.raises(ReliabilityError, match="^B: no item has 2 human ratings$"):
        human_panel_reliability(_r([[1, np.nan], [np.nan, 5], [8, np.nan]]), "B")
    with pytest.raises(ReliabilityError, match="^panel: no item has 2 human ratings$"):
        human_panel_reliability(_r([[1, np.nan], [np.nan, 5]]), None)


def test_a_constant_pair_has_no_icc_but_keeps_its_nmae():
    res = analyse({"B": _r([[5.0, 5.0]] * 4)}, {("m", "0-10", "B"): _r([[6.0]] * 4)})
    row = res.agreement_for("m", "0-10", "B")
    assert row.icc is None and row.ci is None and row.note.startswith("ICC undefined: ")
    assert row.nmae == pytest.approx(0.1) and row.n == 4


@pytest.mark.parametrize("call, error", [
    (lambda: analyse({"B": _r([[1, 2]] * 3)}, {("m", "0-10", "B"): _r([[1]] * 3)}, missing="all"),
     "missing must be one of ('scale', 'row'), got 'all'"),
    (lambda: analyse({"B": _r([[1, 2], [3, 4]])}, {("LLM panel mean", "0-10", "B"): _r([[1], [3]])}),
     "'LLM panel mean' names the mean over the judges"),
    (lambda: analyse({"B": _r([[1, 2], [3, 4]]), ("C", "0-10"): _r([[1, 2], [3, 4]])}, {}),
     "human ratings are keyed either by benchmark or by (benchmark, scale), not both"),
])
def test_analyse_refuses_a_configuration_it_cannot_read(call, error):
    from pytest_judgerel.errors import ConfigError

    with pytest.raises(ConfigError) as info:
        call()
    assert str(info.value).startswith(error)


def test_ratings_without_a_scale_cannot_be_compared_with_humans():
    from pytest_judgerel.errors import ReliabilityError
    from pytest_judgerel.ratings import Ratings

    with pytest.raises(ReliabilityError, match="ratings need a scale"):
        analyse({"B": _r([[1, 2], [3, 4], [5, 5]])}, {("m", "0-10", "B"): Ratings.from_array([[1.0], [3.0], [5.0]],
                                                                                            item_ids=["i0", "i1", "i2"])})


def test_too_few_shared_items_skip_a_row_and_say_why():
    res = analyse({"B": _r([[1, 2], [3, 4], [5, 5]])}, {("m", "0-10", "B"): _r([[1.0], [np.nan], [np.nan]])})
    assert "m 0-10 B: only 1 item(s) have both a judge and a human score; not analysed" in res.skipped
    with pytest.raises(KeyError):
        res.agreement_for("m", "0-10", "B")
    assert any(d.startswith("m 0-10 B: 2 item(s) without a score (i1, i2)") for d in res.dropped), res.dropped


def test_a_weak_benchmark_under_a_strong_pooled_agreement_is_flagged():
    """The agreement illusion: pooled ICC(A,1) >= the threshold while one benchmark's is below it."""
    rng = np.random.default_rng(11)
    good_h = rng.uniform(0, 10, (30, 2))
    good_j = good_h.mean(axis=1, keepdims=True) + rng.normal(0, 0.2, (30, 1))
    weak_h = np.full((6, 2), 5.0) + rng.normal(0, 0.3, (6, 2))
    weak_j = np.clip(5.0 + rng.normal(0, 1.5, (6, 1)), 0, 10)
    res = analyse({"good": _r(good_h), "weak": _r(weak_h)},
                  {("m", "0-10", "good"): _r(np.clip(good_j, 0, 10)), ("m", "0-10", "weak"): _r(weak_j)},
                  illusion_threshold=0.75)
    pooled = res.agreement_for("m", "0-10", None).icc
    weak = res.agreement_for("m", "0-10", "weak").icc
    assert pooled >= 0.75 and weak < 0.75
    assert [(i.kind, i.group, i.model) for i in res.agreement_illusions] == [("agreement", "benchmark weak", "m")]
    assert str(res.agreement_illusions[0]).startswith(f"hidden weak agreement: m on 0-10: pooled human-LLM ICC(A,1) "
                                                      f"{pooled:.3f} >= 0.75 but benchmark weak has {weak:.3f}")


# ---------------------------------------------------------------- the reproduction's cells and table (broadened)
def test_a_cell_reproduces_up_to_exactly_the_tolerance_and_never_without_a_number():
    assert Cell("2", "r", "c", paper=0.5, ours=0.501).reproduces()  # 0.001 away (binary rounding allowed)
    assert Cell("2", "r", "c", paper=0.5, ours=0.499).reproduces()
    assert not Cell("2", "r", "c", paper=0.5, ours=0.5011).reproduces()
    assert Cell("2", "r", "c", paper=0.5, ours=0.51).reproduces(tolerance=0.01)
    missing, undefined = Cell("2", "r", "c", paper=0.5, ours=None), Cell("2", "r", "c", paper=0.5, ours=float("nan"))
    assert missing.difference is None and not missing.reproduces() and not undefined.reproduces()
    assert missing.to_dict() == {"table": "2", "row": "r", "column": "c", "paper": 0.5, "ours": None,
                                 "difference": None, "reproduces": False}
    assert Cell("2", "r", "c", 0.5, 0.5, note="why").to_dict()["note"] == "why"


def test_a_table_is_rendered_paper_ours_difference_with_a_star_and_its_note_where_it_differs():
    from pytest_judgerel.study.reproduce import Reproduction, paper_tables

    spec = paper_tables()["tables"]["2"]
    cells = []
    for row, values in spec["rows"].items():
        for column, paper in zip(spec["columns"], values):
            ours, note = paper, ""
            if (row, column) == ("0-5", "ICC_Human"):
                ours = paper - 0.0004  # within the tolerance: its difference prints +0.000, never -0.000
            elif (row, column) == ("0-10", "nMAE"):
                ours, note = paper + 0.25, "a known difference"
            elif (row, column) == ("0-100", "ICC_LLM"):
                ours, note = None, "not in the release"
            cells.append(Cell("2", row, column, paper, ours, note))
    rep = Reproduction(tuple(cells), (), None, "first")
    lines = rep.render().splitlines()
    n = len(cells)
    assert lines[0] == f"Table 2: {spec['title']}  [{n - 2}/{n} within 0.001]"
    row_05 = next(line for line in lines if line.startswith("0-5"))
    assert f"{spec['rows']['0-5'][0]:>9.3f} {spec['rows']['0-5'][0] - 0.0004:>6.3f} {'+0.000':>6} " in row_05
    row_10 = next(line for line in lines if line.startswith("0-10 "))
    assert row_10.endswith(f"{spec['rows']['0-10'][3]:>9.3f} {spec['rows']['0-10'][3] + 0.25:>6.3f} {'+0.250':>6}*")
    row_100 = next(line for line in lines if line.startswith("0-100"))
    assert f"{spec['rows']['0-100'][1]:>9.3f} {'  n/a':>6} {'':>6}*" in row_100
    assert lines[lines.index(row_100) + 1:lines.index(row_100) + 3] == ["  * a known difference", "  * not in the release"]
    assert lines[-1] == "columns: paper, ours, ours - paper; * = differs by more than the tolerance"
    assert rep.count() == (n - 2, n) and rep.count(("3",)) == (0, 0)


def test_human_scores_on_a_scale_that_starts_above_zero_are_put_on_the_unit_range_by_its_range():
    """(score - low) / (high - low): a 1-5 human panel and a 0-10 judge that say the same thing
    agree exactly (nMAE 0, ICC 1); dividing by the top alone would move the 1-5 means."""
    human = _r([[1.0, 1.0], [3.0, 3.0], [5.0, 5.0], [2.0, 2.0]], scale="1-5")
    judge = _r([[0.0], [5.0], [10.0], [2.5]])
    row = analyse({"B": human}, {("m", "0-10", "B"): judge}).agreement_for("m", "0-10", "B")
    assert row.nmae == pytest.approx(0.0, abs=1e-12) and row.icc == pytest.approx(1.0, abs=1e-12)
