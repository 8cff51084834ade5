"""Profile sampler: constraints over 100,000 samples, reproducibility, checker, jsonl I/O."""

from __future__ import annotations

import functools
import json
from dataclasses import replace

import pytest

from pytest_judgerel.errors import ConfigError
from pytest_judgerel.mindeval.profiles import (
    ATTRIBUTE_KEYS,
    PatientProfile,
    format_marginals,
    is_severe,
    load_profiles,
    marginal_frequencies,
    sample_profiles,
    save_profiles,
    violations,
)


@pytest.fixture(scope="module")
def many():
    return sample_profiles(100_000, seed=2025)


def test_no_forbidden_combination_in_100k_samples(many):
    bad = [(p.profile_id, v) for p in many if (v := violations(p))]
    assert bad == []
    assert len(many) == 100_000


def test_every_value_space_is_exercised(many):
    freqs = marginal_frequencies(many)
    # the constrained options still occur
    assert freqs["employment_status"].get("retired", 0) > 0
    assert freqs["employment_status"].get("stay-at-home parent", 0) > 0
    assert freqs["support_system"].get("mostly partner", 0) > 0
    assert set(freqs["region"]) == {"urban", "suburban", "rural"}
    assert 0.75 < freqs["sexual_orientation"]["Heterosexual"] < 0.85
    # gender identity differs from sex for some, independently of symptoms (no release coupling)
    differs = [p for p in many if (p.sex, p.gender_identity) not in {("Female", "Woman"), ("Male", "Man")}]
    assert len(differs) > 1000
    minimal_share = sum(p.depressive_level == "minimal to no" for p in differs) / len(differs)
    assert 0.15 < minimal_share < 0.35  # ~1/4 as for everyone, not 100% as in the release
    ages = [p.age for p in many]
    assert min(ages) == 21 and max(ages) == 69


def test_profiles_have_the_25_keys():
    p = sample_profiles(1, 3)[0]
    assert tuple(p.attributes()) == ATTRIBUTE_KEYS and len(ATTRIBUTE_KEYS) == 25


def test_same_seed_same_profiles_and_prefix_stability():
    a = sample_profiles(50, 7)
    assert a == sample_profiles(50, 7)
    assert a[:10] == sample_profiles(10, 7)
    assert a != sample_profiles(50, 8)


def test_known_values_for_seed_are_pinned():
    # guards against accidental changes of the draw order (which would change every profile)
    # (values recorded when the sampler was written; PCG64 doubles are platform-independent)
    p = sample_profiles(1, 0)[0]
    assert (p.name, p.age, p.race, p.education, p.program_goal) == (
        "Andre", 60, "Multiracial", "bachelor's degree", "reduce depressive symptoms")
    assert p.profile_id == "s0-0"


def test_sampler_does_not_touch_global_random_state():
    import random

    import numpy as np

    random.seed(1)
    np.random.seed(1)
    before = (random.random(), np.random.random())
    random.seed(1)
    np.random.seed(1)
    sample_profiles(20, 5)
    assert (random.random(), np.random.random()) == before


@pytest.mark.parametrize("severity", ["severe", "non_severe", "not_severe"])
def test_severity_filter(severity):
    profs = sample_profiles(500, 11, severity=severity)
    assert all(is_severe(p) == (severity == "severe") for p in profs)
    assert all(not violations(p) for p in profs)


def test_bad_arguments():
    with pytest.raises(ConfigError, match="severity"):
        sample_profiles(3, 1, severity="extreme")
    with pytest.raises(ConfigError, match="seed"):
        sample_profiles(3, -1)
    with pytest.raises(ConfigError, match="n must"):
        sample_profiles(-3, 1)


@functools.lru_cache(maxsize=1)
def _base():
    # a valid adult profile to break one rule at a time
    for p in sample_profiles(2000, 99):
        if (p.relationship_status == "married" and p.age > 40 and not is_severe(p)
                and p.employment_status == "employed full time"):
            return p
    raise AssertionError("no base profile found")


@pytest.mark.parametrize("change,needle", [
    (dict(depressive_symptoms="severe depressive symptoms", exercise="walks or cycles most days"), "exercise"),
    (dict(anxious_symptoms="severe anxious symptoms", sleep_quality="generally sleeps well"), "sleep"),
    (dict(age=22, education="doctoral or professional degree"), "education"),
    (dict(age=22, relationship_status="widowed", living_situation="alone"), "relationship"),
    (dict(age=23, financial_situation="financially secure, owns a home outright"), "financial"),
    (dict(relationship_status="single", living_situation="with spouse"), "living"),
    (dict(employment_status="retired", age=45), "retired"),
    (dict(employment_status="stay-at-home parent", living_situation="with spouse"), "stay-at-home"),
    (dict(employment_status="unemployed and looking for work", profession="Accountant"), "profession"),
    (dict(relationship_status="divorced", living_situation="alone", support_system="mostly partner"),
     "mostly partner"),
    (dict(depressive_symptoms="severe depressive symptoms", anxious_symptoms="severe anxious symptoms",
          exercise="rarely exercises, mostly sedentary", sleep_quality="5 hours or fewer, wakes exhausted",
          program_goal="improve sleep"), "goal"),
    (dict(depressive_symptoms="minimal to no depressive symptoms", anxious_symptoms="minimal to no anxious symptoms",
          program_goal="reduce anxiety symptoms"), "goal"),
    (dict(education="high school diploma or GED", profession="Physician"), "needs more"),
    (dict(age=80), "age"),
    (dict(gender_identity="Man", sexual_orientation="Lesbian"), "orientation"),
])
def test_violations_detects_each_rule(change, needle):
    base = _base()
    assert violations(base) == []
    broken = replace(base, **change)
    found = violations(broken)
    assert found and any(needle in v for v in found), found


def test_jsonl_round_trip_and_mindeval_format(tmp_path):
    profs = [p.with_backstory(f"story {i}", "trace") for i, p in enumerate(sample_profiles(5, 4))]
    path = save_profiles(profs, tmp_path / "profiles.jsonl")
    assert load_profiles(path) == profs
    rec = json.loads(path.read_text().splitlines()[0])
    assert set(rec) >= {"member_attributes", "member_narrative", "member_narrative_thinking_trace"}
    assert set(rec["member_attributes"]) == set(ATTRIBUTE_KEYS)


def test_load_accepts_aliases_and_reports_bad_lines(tmp_path):
    attrs = sample_profiles(1, 2)[0].attributes()
    attrs["education_level"] = attrs.pop("education")
    attrs["region_of_residence"] = attrs.pop("region")
    attrs["age"] = str(attrs["age"])
    attrs["religion"] = "none"
    good = {"member_attributes": attrs, "member_narrative": "n", "member_narrative_thinking_trace": None}
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(good) + "\n")
    (prof,) = load_profiles(path)
    assert prof.education and prof.region and isinstance(prof.age, int)
    assert prof.extra == {"religion": "none"}
    del attrs["race"]
    path.write_text(json.dumps(good) + "\n" + "{not json}\n")
    with pytest.raises(ConfigError, match=r"p.jsonl:1: .*missing \['race'\]"):
        load_profiles(path)
    path.write_text("{not json}\n")
    with pytest.raises(ConfigError, match="p.jsonl:1: not valid JSON"):
        load_profiles(path)


def test_marginal_table_format():
    freqs = marginal_frequencies(sample_profiles(200, 1), keys=["region", "age"])
    assert abs(sum(freqs["region"].values()) - 1) < 1e-12
    table = format_marginals(freqs)
    assert table.startswith("| attribute | value | share |")
    assert "| region |" in table and "0s |" in table


def test_profile_from_attributes_rejects_non_mapping():
    with pytest.raises(ConfigError):
        PatientProfile.from_attributes(["a"])
