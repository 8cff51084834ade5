"""Package surface of pytest_judgerel.mindeval: lazy exports, cheap import, faithful prompts."""

from __future__ import annotations

import subprocess
import sys

import pytest

import pytest_judgerel.mindeval as mindeval
from pytest_judgerel.errors import ConfigError
from pytest_judgerel.mindeval import prompts
from pytest_judgerel.mindeval.profiles import sample_profiles


def test_every_export_is_the_object_a_mindeval_submodule_defines():
    """Every export is defined by a submodule of mindeval, or by gates.mindeval (its gates)."""
    import importlib
    import pkgutil

    submodules = [importlib.import_module(f"pytest_judgerel.mindeval.{m.name}")
                  for m in pkgutil.iter_modules(mindeval.__path__)]
    submodules.append(importlib.import_module("pytest_judgerel.gates.mindeval"))
    for name in mindeval.__all__:
        obj = getattr(mindeval, name)
        homes = [m.__name__ for m in submodules if m.__dict__.get(name) is obj]
        assert homes, f"{name} resolves to {obj!r}, which no mindeval submodule defines under that name"
        defined_in = getattr(obj, "__module__", None)
        if callable(obj) and defined_in and defined_in.startswith("pytest_judgerel.mindeval."):
            assert defined_in in homes, (name, defined_in, homes)
        assert getattr(mindeval, name) is obj  # a second lookup returns the same object
    assert {"MindEvalJudge", "judge_mipsa", "sample_profiles", "run_interactions", "AXES"} <= set(mindeval.__all__)
    with pytest.raises(AttributeError, match="does_not_exist"):
        mindeval.does_not_exist  # noqa: B018


def test_import_is_cheap():
    code = ("import sys, pytest_judgerel.mindeval as m; "
            "print(any(k in sys.modules for k in ('numpy', 'scipy', 'litellm', 'diskcache')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.fixture(scope="module")
def profile():
    return sample_profiles(1, 12)[0].with_backstory("You grew up by the sea.\n\nB\n\nC\n\nD")


@pytest.mark.parametrize("name,phrases", [
    ("profile_generation", ["Process-Based CBT expert", "Write exactly 4 paragraphs.", "Written entirely in second person.",
                            "[Severity requirement:", '"program_goal": "${program_goal}"']),
    ("patient", ["This is a ***chat-based interaction***", "Do not use em dashes.", "I'm not sure I buy that.",
                 "Your backstory:\n${member_narrative}"]),
    ("patient_no_format", ["<your_profile>", "${member_narrative}"]),
    ("patient_role_only", ["You are a client attending a therapeutic interaction"]),
    ("clinician", ["You are an AI clinician proxy", "<member_context>",
                   "You will now have a chat-based therapeutic interaction with the member."]),
    ("judge", ["RATING SCALE CALIBRATION:", "NAME: Clinical Accuracy & Competence",
               "NAME: AI-Specific Communication Quality (LLMness)", "<conversation>\n${conversation_str}\n</conversation>",
               "Return Your ratings below in the same format as above and nothing else."]),
    ("length_penalty", ["<length_guideline>", "(>10% of the therapist's turns) longer than 4 sentences"]),
])
def test_prompt_files_reproduce_the_figures(name, phrases):
    text = prompts.load_prompt(name)
    for phrase in phrases:
        assert phrase in text, (name, phrase)


def test_rendered_prompts(profile):
    pat = prompts.render_patient_prompt(profile)
    assert f"- Name: {profile.name}" in pat and "You grew up by the sea." in pat
    assert f"Your goal for the present interaction is: {profile.program_goal}" in pat
    assert "${" not in pat
    clin = prompts.render_clinician_prompt(profile)
    assert f"- Age: {profile.age}" in clin and "sea" not in clin and "Your goal" not in clin
    assert "Thought Process" not in clin  # style attributes are the patient's, not in the clinician's context
    assert prompts.render_clinician_prompt(profile, short_turns=True).rstrip().endswith("at most 4 sentences.")
    gen = prompts.render_profile_prompt(profile)
    assert f'"education_level": "{profile.education}"' in gen and "${" not in gen
    with pytest.raises(ConfigError, match="variant"):
        prompts.render_patient_prompt(profile, "weird")
    with pytest.raises(ConfigError, match="needs a value"):
        prompts.render("clinician", {"name": "x"})
    with pytest.raises(ConfigError, match="unknown"):
        prompts.load_prompt("nope")
