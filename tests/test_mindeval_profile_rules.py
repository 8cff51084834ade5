"""violations() against the rules of the authors' profile generator, in both directions.

The profiles here are synthetic: the constrained attributes use the labels the authors' sampler
uses (the facts its rules are written over), every free-text attribute is made up.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from pytest_judgerel.errors import ConfigError
from pytest_judgerel.mindeval.profiles import PatientProfile, rule_set_of, sample_profiles, violations


def authors_profile(**change) -> PatientProfile:
    """Severe depression and anxiety, dating multiple people, living alone with a cat,
    inconsistently active: the combination of the paper's Figure 4 patient."""
    attrs = dict(
        name="Sam", sex="Male", gender_identity="Male", sexual_orientation="Asexual", age=47, race="Asian",
        thought_process="made up", general_outlook="made up", conversation_style="made up", recent_mood="tense",
        education="trade school or community college graduate", profession="Plumber",
        employment_status="working variable hours", financial_situation="made up", support_system="mostly friends",
        siblings="made up", relationship_status="dating multiple people", living_situation="alone with a cat",
        exercise="inconsistently active, goes through phases",
        sleep_quality="5-6 hours/night, restless and tired (made up)", attitude_towards_mindfulness="made up",
        region="urban", depressive_symptoms="severe depressive symptoms", anxious_symptoms="severe anxious symptoms",
        program_goal="Reduce feelings of anxiety",
    )
    attrs.update(change)
    return PatientProfile.from_attributes(attrs)


def test_the_figure_4_combination_is_valid_under_the_authors_rules():
    p = authors_profile()
    assert rule_set_of(p) == ("authors",)
    assert violations(p) == []
    # the project's own rules would (wrongly, for this profile) object to the living situation
    assert any("living" in v for v in violations(p, rules="project"))


MINIMAL = dict(depressive_symptoms="minimal to no depressive symptoms", anxious_symptoms="minimal to no anxious symptoms",
               program_goal="Increase self-esteem")


@pytest.mark.parametrize("change,needle", [
    (dict(exercise="very active"), "exercise"),
    (dict(exercise="extremely active, fitness is a major priority"), "exercise"),
    (dict(sleep_quality="7-8 hours/night and rested (made up)"), "sleep"),
    (dict(MINIMAL, sleep_quality="sleeps 10-12+ hours and still tired (made up)"), "sleep"),
    (dict(age=25, education="bachelor's degree"), "education"),
    (dict(age=22, education="dropped out of college"), "education"),
    (dict(age=30, relationship_status="married", living_situation="with spouse and dog"), "relationship"),
    (dict(age=45, relationship_status="widowed", living_situation="alone"), "relationship"),
    (dict(age=26, relationship_status="in a long-term relationship, not married", living_situation="with partner"),
     "relationship"),
    (dict(relationship_status="single", living_situation="alone with a cat"), "living"),
    (dict(age=40, relationship_status="married", living_situation="alone"), "living"),
    (dict(age=55, employment_status="retired"), "retired"),
    (dict(employment_status="working as stay-at-home parent", profession="none"), "stay-at-home"),
    (dict(employment_status="unemployed", profession="Plumber"), "profession"),
    (dict(employment_status="employed full time", profession="none"), "profession"),
    (dict(age=55, relationship_status="divorced", living_situation="alone", support_system="mostly partner"),
     "mostly partner"),
    (dict(program_goal="Increase self-esteem"), "goal"),
    (dict(MINIMAL, program_goal="Reduce feelings of anxiety"), "goal"),
    (dict(MINIMAL, program_goal="Reduce feelings of depression"), "goal"),
])
def test_profiles_breaking_an_authors_rule_are_rejected(change, needle):
    p = authors_profile(**change)
    assert rule_set_of(p) == ("authors",)
    found = violations(p)
    assert found and any(needle in v for v in found), found


@pytest.mark.parametrize("change", [
    dict(exercise="moderately active, regular but not intense"),  # the severe ceiling of the authors' sampler
    dict(exercise="inactive", sleep_quality="sleeps 10-12+ hours and still tired (made up)"),  # severe only
    dict(depressive_symptoms="mild depressive symptoms", anxious_symptoms="minimal to no anxious symptoms",
         program_goal="Reduce feelings of anxiety"),  # neither severe nor both minimal: any goal
    dict(MINIMAL),
    # one severe level alone leaves the goal free (the rule covers both severe and both minimal only)
    dict(depressive_symptoms="mild depressive symptoms", program_goal="Increase self-esteem"),
    dict(depressive_symptoms="mild depressive symptoms", program_goal="Reduce feelings of depression"),
    dict(anxious_symptoms="moderate anxious symptoms", program_goal="Reduce feelings of anxiety"),
    dict(age=28, relationship_status="in a long-term relationship, not married", living_situation="with partner and pet",
         support_system="mostly partner"),
    dict(age=61, employment_status="retired", relationship_status="widowed", living_situation="alone in family home"),
    dict(age=50, relationship_status="divorced", living_situation="with their children",
         employment_status="working as stay-at-home parent", profession="none"),
    dict(age=27, education="bachelor's degree", relationship_status="in a relationship, not married",
         living_situation="with one roommate", support_system="mostly partner"),
])
def test_combinations_the_authors_sampler_produces_are_accepted(change):
    assert violations(authors_profile(**change)) == []


def test_project_rules_still_apply_to_project_profiles():
    base = next(p for p in sample_profiles(3000, 5) if p.depressive_level == "minimal to no"
                and p.anxious_level == "severe")
    assert rule_set_of(base) == ("project",) and violations(base) == []
    assert base.program_goal == "reduce anxiety symptoms"  # only severe anxiety: its goal, as the authors do
    assert any("goal" in v for v in violations(replace(base, program_goal="improve sleep")))
    # a severe patient may be inconsistently active (the authors' generator allows it)
    assert violations(replace(base, exercise="inconsistently active, goes through phases")) == []
    assert any("exercise" in v for v in violations(replace(base, exercise="walks or cycles most days")))


def test_undecided_profiles_count_a_rule_only_when_both_rule_sets_break_it():
    unknown = dict(gender_identity="x", education="x", employment_status="x", exercise="x", program_goal="x")
    shared_conflict = authors_profile(**unknown, relationship_status="single", living_situation="with spouse and children")
    assert rule_set_of(shared_conflict) == ("project", "authors")
    assert any("living" in v for v in violations(shared_conflict))  # both generators forbid it
    one_sided = authors_profile(**unknown, relationship_status="dating multiple people", living_situation="alone")
    assert rule_set_of(one_sided) == ("project", "authors")
    assert violations(one_sided) == []  # the project's pools allow it, the authors' do not
    assert any("living" in v for v in violations(one_sided, rules="authors"))


def test_rules_argument_is_checked():
    with pytest.raises(ConfigError, match="rules must be one of"):
        violations(authors_profile(), rules="paper")
