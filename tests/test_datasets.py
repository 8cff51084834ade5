"""Vendored human-rated data sets: shapes, ranges, ids, missing-data pattern, loaders."""

from __future__ import annotations

import collections
import math
from importlib import resources

import numpy as np
import pytest

from pytest_judgerel.judging.datasets import HumanDataset, available, load_dataset
from pytest_judgerel.errors import ConfigError
from pytest_judgerel.judging.templates import TEMPLATES, render

NAMES = ["convabuse", "squality", "stsb", "summeval_op"]


def test_all_four_data_sets_are_package_data_with_license_and_provenance():
    assert available() == NAMES
    root = resources.files("pytest_judgerel").joinpath("data")
    total = 0
    for name in NAMES:
        files = {p.name: p for p in root.joinpath(name).iterdir()}
        assert "PROVENANCE.md" in files and "README.md" in files and "meta.json" in files
        assert any(n.startswith("LICENSE") for n in files)
        total += sum(len(p.read_bytes()) for p in files.values())
    assert total < 5_000_000


@pytest.mark.parametrize("name", NAMES)
def test_every_criterion_loads_on_its_scale_with_unique_ids(name):
    first = load_dataset(name)
    assert isinstance(first, HumanDataset)
    for crit in first.criteria:
        ds = load_dataset(name, crit)
        m = ds.to_matrix()
        assert m.shape == ds.shape == (len(ds.items), len(ds.rater_ids))
        assert len(set(ds.item_ids)) == len(ds.item_ids)
        assert len(set(ds.rater_ids)) == len(ds.rater_ids)
        finite = m[~np.isnan(m)]
        assert finite.size > 0
        assert finite.min() >= ds.scale.low and finite.max() <= ds.scale.high
        assert all(ds.scale.contains(float(v)) for v in finite)
        # every item is rated by someone; no rater column is empty
        assert not np.isnan(m).all(axis=1).any()
        assert not np.isnan(m).all(axis=0).any()


def test_stsb_subset():
    ds = load_dataset("stsb")
    assert ds.shape == (300, 1) and ds.rater_ids == ("gold",) and ds.n_missing == 0
    assert str(ds.scale) == "0-5" and ds.scale.fractional
    assert collections.Counter(ds.item_groups["genre"]) == {
        "main-captions": 136, "main-news": 109, "main-forums": 55}
    assert all(i.startswith("sts-test-") for i in ds.item_ids)
    m = ds.to_matrix()[:, 0]
    assert m.min() < 1 and m.max() > 4.5  # the subset spans the scale
    assert {"sentence1", "sentence2"} <= set(ds.items[0].fields)


def test_squality_balanced_incomplete_design():
    ds = load_dataset("squality", "correctness")
    m = ds.to_matrix()
    assert ds.shape == (300, 4) and str(ds.scale) == "0-100"
    assert (np.isnan(m).sum(axis=1) == 1).all()  # each response: 3 of 4 reviewers
    blocks = collections.Counter(ds.item_groups["reviewer_set"])
    assert len(blocks) == 4 and set(blocks.values()) == {75}
    for block in blocks:
        sub = load_dataset("squality", "correctness", subset={"reviewer_set": block})
        sm = sub.to_matrix()
        present = ~np.isnan(sm).all(axis=0)
        assert sub.shape[0] == 75 and present.sum() == 3
        assert not np.isnan(sm[:, present]).any()  # complete block, ICC-able
    slots = load_dataset("squality", "overall", layout="slots")
    assert slots.shape == (300, 3) and slots.n_missing == 0
    assert collections.Counter(ds.item_groups["system"]) == {"bart": 100, "bart-dpr": 100, "human": 100}
    item = ds.items[0]
    assert len(item["story"]) > 5000 and item["text"] == item["story"] and item["summary"] == item["response"]


def test_summeval_op_complete_panel_on_seven_dimensions():
    ds = load_dataset("summeval_op")
    assert ds.criteria == ("fluency", "coherence", "relevance", "faithfulness", "aspect_coverage",
                           "sentiment_consistency", "specificity")
    for crit in ds.criteria:
        sub = load_dataset("summeval_op", crit)
        m = sub.to_matrix()
        assert m.shape == (416, 3) and not np.isnan(m).any()
        assert set(np.unique(m)) <= {1.0, 2.0, 3.0, 4.0, 5.0}
    assert collections.Counter(collections.Counter(ds.item_groups["product"]).values()) == {13: 32}
    assert len(set(ds.item_groups["system"])) == 13
    assert "Review 8:" in ds.items[0]["reviews"]


def test_convabuse_partial_panel_nan_handling():
    ds = load_dataset("convabuse")
    m = ds.to_matrix()
    assert ds.shape == (853, 8) and str(ds.scale) == "0-4"
    per_item = (~np.isnan(m)).sum(axis=1)
    assert collections.Counter(per_item.tolist()) == {2: 219, 3: 496, 4: 76, 5: 55, 6: 7}
    assert [int(g) for g in ds.item_groups["n_annotators"]] == per_item.tolist()
    slots = load_dataset("convabuse", layout="slots")
    sm = slots.to_matrix()
    assert slots.shape == (853, 6)
    assert not np.isnan(sm[:, :2]).any()  # first two slots complete
    three = load_dataset("convabuse", subset={"n_annotators": "3"}, layout="slots").to_matrix()
    assert three.shape == (496, 3) and not np.isnan(three).any()
    assert set(np.unique(m[~np.isnan(m)])) <= {0.0, 1.0, 2.0, 3.0, 4.0}


# Interval Krippendorff alpha of the upstream files, as documented in each PROVENANCE.md:
# the vendored matrices must reproduce them (rater alignment and label mapping preserved).
PROVENANCE_ALPHA = {
    ("summeval_op", "fluency"): 0.55, ("summeval_op", "coherence"): 0.43, ("summeval_op", "relevance"): 0.50,
    ("summeval_op", "faithfulness"): 0.63, ("summeval_op", "aspect_coverage"): 0.64,
    ("summeval_op", "sentiment_consistency"): 0.41, ("summeval_op", "specificity"): 0.34,
    ("squality", "correctness"): 0.46, ("squality", "selection"): 0.78, ("squality", "overall"): 0.80,
    ("convabuse", "severity"): 0.74,
}


@pytest.mark.parametrize("key", sorted(PROVENANCE_ALPHA))
def test_vendored_ratings_reproduce_documented_krippendorff_alpha(key):
    krippendorff = pytest.importorskip("krippendorff")
    name, crit = key
    m = load_dataset(name, crit).to_matrix()
    alpha = krippendorff.alpha(reliability_data=m.T, level_of_measurement="interval")
    assert round(alpha, 2) == pytest.approx(PROVENANCE_ALPHA[key], abs=0.005)


@pytest.mark.parametrize("name", NAMES)
def test_items_render_with_the_suggested_template(name):
    ds = load_dataset(name, subset=3)
    assert ds.template in TEMPLATES
    t = TEMPLATES[ds.template]
    for key_template, key_data in ds.template_keys.items():
        assert key_template in t.keys and key_data in ds.criteria
    for item in ds.items:
        msgs = render(t, item, ds.scale)
        assert msgs[-1]["role"] == "user" and "{" + t.fields[0] + "}" not in msgs[-1]["content"]


@pytest.mark.parametrize("name", NAMES)
def test_ratings_conversion_keeps_ids_groups_scale_and_nan(name):
    ds = load_dataset(name)
    r = ds.ratings()
    assert r.item_ids == ds.item_ids and r.rater_ids == ds.rater_ids
    assert r.scale == ds.scale
    np.testing.assert_array_equal(np.isnan(r.to_matrix()), np.isnan(ds.to_matrix()))
    np.testing.assert_allclose(np.nan_to_num(r.to_matrix()), np.nan_to_num(ds.to_matrix()))
    for g, labels in ds.item_groups.items():
        assert tuple(r.item_groups[g]) == labels
    assert r.provenance["dataset"] == name


def test_consensus_is_mean_of_available_ratings():
    ds = load_dataset("convabuse", subset=20)
    m = ds.to_matrix()
    np.testing.assert_allclose(ds.consensus(), np.nanmean(m, axis=1))


def test_subset_forms():
    assert load_dataset("stsb", subset=10).shape == (10, 1)
    ids = list(load_dataset("stsb", subset=5).item_ids)[::-1]
    assert load_dataset("stsb", subset=ids).item_ids == tuple(ids)
    human = load_dataset("squality", subset={"system": "human"})
    assert len(human) == 100 and set(human.item_groups["system"]) == {"human"}
    two = load_dataset("squality", subset={"system": ["human", "bart"]})
    assert len(two) == 200


def test_loader_errors_name_the_cause():
    with pytest.raises(ConfigError, match="unknown data set 'nope'.*summeval_op"):
        load_dataset("nope")
    with pytest.raises(ConfigError, match="no criterion 'beauty'.*overall"):
        load_dataset("squality", "beauty")
    with pytest.raises(ConfigError, match="no item group 'colour'"):
        load_dataset("squality", subset={"colour": "red"})
    with pytest.raises(ConfigError, match="no item of 'squality' has system"):
        load_dataset("squality", subset={"system": "gpt"})
    with pytest.raises(ConfigError, match="unknown item id"):
        load_dataset("stsb", subset=["sts-test-0"])
    with pytest.raises(ConfigError, match="layout"):
        load_dataset("stsb", layout="wide")
    with pytest.raises(ConfigError, match="positive"):
        load_dataset("stsb", subset=0)


def test_values_are_finite_or_nan_only():
    for name in NAMES:
        ds = load_dataset(name)
        assert all(math.isnan(v) or math.isfinite(v) for row in ds.matrix for v in row)


def test_stratified_subset_covers_every_group():
    from pytest_judgerel import load_dataset
    from pytest_judgerel.errors import ConfigError

    d = load_dataset("stsb", subset=20, stratify="genre")
    genres = d.item_groups["genre"]
    assert len(genres) == 20 and len(set(genres)) == len(set(load_dataset("stsb").item_groups["genre"]))
    assert len(set(load_dataset("stsb", subset=20).item_groups["genre"])) == 1  # stored order: one genre
    with pytest.raises(ConfigError, match="no item group"):
        load_dataset("stsb", subset=5, stratify="nope")
    with pytest.raises(ConfigError, match="needs subset"):
        load_dataset("stsb", stratify="genre")
