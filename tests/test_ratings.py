"""Ratings: constructors, selection, normalisation, and clear errors for bad input."""

import json
import math

import numpy as np
import pytest

from pytest_judgerel import Ratings, Scale
from pytest_judgerel.errors import RatingsError


def test_from_array_defaults_and_shape():
    r = Ratings.from_array([[1, 2], [3, 4], [5, 6]], scale="0-10")
    assert r.shape == (3, 2)
    assert r.item_ids == ("item0", "item1", "item2")
    assert r.rater_ids == ("r0", "r1")
    np.testing.assert_array_equal(r.to_matrix(), [[1, 2], [3, 4], [5, 6]])
    assert "3 items x 2 raters" in repr(r)


def test_to_matrix_is_a_copy():
    r = Ratings.from_array([[1.0, 2.0], [3.0, 4.0]])
    m = r.to_matrix()
    m[0, 0] = 99
    assert r.values[0, 0] == 1.0


def test_from_wide_raters_lists_and_mappings():
    a = Ratings.from_wide({"h1": [1, 2, 3], "h2": [2, 2, 4]}, item_ids=["x", "y", "z"])
    assert a.rater_ids == ("h1", "h2") and a.item_ids == ("x", "y", "z")
    b = Ratings.from_wide({"h1": {"x": 1, "y": 2}, "h2": {"y": 2, "x": 3}})
    assert b.item_ids == ("x", "y")
    np.testing.assert_array_equal(b.values, [[1, 3], [2, 2]])


def test_from_wide_items_orientation():
    r = Ratings.from_wide({"i1": {"a": 1, "b": 2}, "i2": {"a": 3, "b": 4}}, orient="items")
    assert r.item_ids == ("i1", "i2") and r.rater_ids == ("a", "b")
    np.testing.assert_array_equal(r.values, [[1, 2], [3, 4]])


def test_ragged_wide_input_is_named():
    with pytest.raises(RatingsError, match="ragged"):
        Ratings.from_wide({"h1": [1, 2, 3], "h2": [1, 2]})
    with pytest.raises(RatingsError, match="ragged"):
        Ratings.from_array([[1, 2], [3]])


def test_from_records_missing_cells_are_nan_and_groups_kept():
    recs = [
        {"item": "a", "rater": "h1", "score": 1, "benchmark": "x", "kind": "human"},
        {"item": "a", "rater": "h2", "score": 2, "benchmark": "x", "kind": "human"},
        {"item": "b", "rater": "h1", "score": 3, "benchmark": "y", "kind": "human"},
    ]
    r = Ratings.from_records(recs, item_group_keys=["benchmark"], rater_group_keys=["kind"])
    assert math.isnan(r.values[1, 1])
    assert r.item_groups["benchmark"] == ("x", "y")
    assert r.rater_groups["kind"] == ("human", "human")


def test_duplicates_raise_unless_aggregated_explicitly():
    recs = [{"item": "a", "rater": "h", "score": 9}, {"item": "a", "rater": "h", "score": 1}]
    with pytest.raises(RatingsError, match="duplicate ratings for item 'a' by rater 'h'"):
        Ratings.from_records(recs)
    assert Ratings.from_records(recs, duplicates="mean").values[0, 0] == 5
    assert Ratings.from_records(recs, duplicates="first").values[0, 0] == 9
    assert Ratings.from_records(recs, duplicates="last").values[0, 0] == 1


def test_inconsistent_group_label_is_an_error():
    recs = [
        {"item": "a", "rater": "h1", "score": 1, "benchmark": "x"},
        {"item": "a", "rater": "h2", "score": 1, "benchmark": "y"},
    ]
    with pytest.raises(RatingsError, match="item group 'benchmark' is 'y' here but 'x' earlier"):
        Ratings.from_records(recs, item_group_keys=["benchmark"])


@pytest.mark.parametrize(
    "bad, match",
    [
        ([["a", 1], [2, 3]], "non-numeric"),
        ([[True, 1], [2, 3]], "boolean"),
        ([[float("inf"), 1], [2, 3]], "infinite"),
        ([1, 2, 3], "2-D"),
        ([], "empty|2-D"),
    ],
)
def test_bad_values_are_named(bad, match):
    with pytest.raises(RatingsError, match=match):
        Ratings.from_array(bad)


def test_out_of_scale_rating_is_rejected():
    with pytest.raises(RatingsError, match="outside scale 0-5"):
        Ratings.from_array([[1, 6], [2, 3]], scale="0-5")


def test_duplicate_ids_and_wrong_lengths():
    with pytest.raises(RatingsError, match="duplicate item id 'a'"):
        Ratings.from_array([[1, 2], [3, 4]], item_ids=["a", "a"])
    with pytest.raises(RatingsError, match="3 item ids given for 2 rows"):
        Ratings.from_array([[1, 2], [3, 4]], item_ids=["a", "b", "c"])
    with pytest.raises(RatingsError, match="rater group 'kind' has 1 labels for 2 raters"):
        Ratings.from_array([[1, 2], [3, 4]], rater_groups={"kind": ["h"]})


def test_select_items_and_raters_by_group():
    r = Ratings.from_array(
        [[1, 2, 3], [4, 5, 6], [7, 8, 9]],
        item_groups={"benchmark": ["a", "b", "a"]},
        rater_groups={"kind": ["human", "human", "llm"]},
    )
    a = r.select_items(benchmark="a")
    assert a.item_ids == ("item0", "item2")
    h = r.select_raters(kind="human")
    assert h.rater_ids == ("r0", "r1")
    assert r.select_raters(["r2"]).values[:, 0].tolist() == [3, 6, 9]
    with pytest.raises(RatingsError, match="no item group 'model'"):
        r.select_items(model="x")
    with pytest.raises(RatingsError, match="no item matches"):
        r.select_items(benchmark="zzz")
    with pytest.raises(RatingsError, match="unknown rater id"):
        r.select_raters(["nope"])


def test_item_means_and_normalisation():
    r = Ratings.from_array([[0, 100], [50, np.nan]], scale="0-100")
    np.testing.assert_allclose(r.item_means(), [50, 50])
    n = r.normalized()
    np.testing.assert_allclose(n.values[0], [0, 1])
    assert n.scale.name == "0-1"
    with pytest.raises(RatingsError, match="without a scale"):
        Ratings.from_array([[1, 2]]).normalized()
    with pytest.raises(RatingsError, match="no rating at all"):
        Ratings.from_array([[np.nan, np.nan], [1, 2]]).item_means()


def test_align_and_join():
    a = Ratings.from_array([[1], [2], [3]], item_ids=["x", "y", "z"], rater_ids=["judge"])
    b = Ratings.from_array([[3, 3], [1, 1]], item_ids=["z", "x"], rater_ids=["h1", "h2"])
    a2, b2 = a.align(b)
    assert a2.item_ids == b2.item_ids == ("x", "z")
    joined = a2.join_raters(b2)
    assert joined.rater_ids == ("judge", "h1", "h2")
    np.testing.assert_array_equal(joined.values, [[1, 1, 1], [3, 3, 3]])
    with pytest.raises(RatingsError, match="in common"):
        a.align(Ratings.from_array([[1], [2]], item_ids=["p", "q"]))


def test_csv_and_jsonl_round_trip(tmp_path):
    long_csv = tmp_path / "long.csv"
    long_csv.write_text("item,rater,score\na,h1,1\na,h2,2\nb,h1,3\nb,h2,4\n")
    r = Ratings.from_csv(long_csv, scale="0-5")
    np.testing.assert_array_equal(r.values, [[1, 2], [3, 4]])
    wide_csv = tmp_path / "wide.csv"
    wide_csv.write_text("id,h1,h2\na,1,2\nb,3,\n")
    w = Ratings.from_csv(wide_csv, layout="wide")
    assert w.rater_ids == ("h1", "h2") and math.isnan(w.values[1, 1])
    jl = tmp_path / "r.jsonl"
    jl.write_text("\n".join(json.dumps(x) for x in r.to_records()) + "\n")
    back = Ratings.from_jsonl(jl)
    np.testing.assert_array_equal(back.values, r.values)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"item": "a", "rater": "h", "score": 1}\n{oops\n')
    with pytest.raises(RatingsError, match="bad.jsonl:2: invalid JSON"):
        Ratings.from_jsonl(bad)


def test_ratings_feed_the_statistics():
    from pytest_judgerel.stats import icc

    data = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    r = Ratings.from_array(data)
    assert icc(r, form="A,1").value == pytest.approx(icc(np.array(data, float), form="A,1").value, rel=1e-14)


def test_scale_parse_and_normalize():
    s = Scale.parse("0-100")
    assert (s.low, s.high) == (0, 100) and s.normalize(25) == 0.25
    assert Scale.parse((1, 6)).name == "1-6"
    assert Scale(1, 6, fractional=True).contains(3.75)
    assert not Scale(1, 6).contains(3.5)
    from pytest_judgerel.errors import ScaleError

    with pytest.raises(ScaleError):
        Scale.parse("ten to twenty")
    with pytest.raises(ScaleError):
        Scale(5, 1)


def test_review_regressions_masks_duplicates_strings_and_settings_copy():
    import copy
    import pickle

    r = Ratings.from_array([[1, 2], [3, 4], [5, 6]])
    with pytest.raises(RatingsError, match="3 booleans"):
        r.select_items([0, 2])  # integer indices are not a mask
    with pytest.raises(RatingsError, match="3 booleans"):
        r.select_items([True, False])
    recs = [{"item": "a", "rater": "h", "score": None}, {"item": "a", "rater": "h", "score": 4}]
    assert Ratings.from_records(recs, duplicates="first").values[0, 0] == 4  # a score beats a missing one
    with pytest.raises(RatingsError, match="strings"):
        Ratings.from_array(["35", "42"])
    from pytest_judgerel.session.settings import Settings

    s = Settings(model="x")
    assert copy.deepcopy(s).model == "x" and pickle.loads(pickle.dumps(s)).model == "x"
