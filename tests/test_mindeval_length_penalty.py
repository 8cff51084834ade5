"""The length-penalty block (MindEval Figure 13, appendix D.3): no invented cap, placed as in
the authors' release (after the member details, before the conversation)."""

from __future__ import annotations

import inspect

import pytest

from pytest_judgerel.mindeval import prompts
from pytest_judgerel.mindeval.judge import MindEvalJudge
from pytest_judgerel.mindeval.profiles import sample_profiles


@pytest.fixture(scope="module")
def profile():
    return sample_profiles(1, 5)[0]


def test_block_penalises_all_criteria_and_sets_no_cap():
    text = prompts.load_prompt("length_penalty")
    # the paper's printed start of the rule, and appendix D.3's content
    assert "If the therapist's responses are often (>10" in text
    assert "longer than 4 sentences" in text and "all criteria" in text
    assert "AI-Specific Communication Quality most of all" in text
    # no cap: no placeholder, no "score above" ceiling; the figure's own sentence against capping stays
    assert "${" not in text and "score above" not in text and "no criterion may" not in text
    assert "especially to avoid simply capping scores at the upper limits defined here" in text


def test_rendered_prompt_places_the_block_before_the_conversation(profile):
    plain = prompts.render_judge_prompt(profile, "<member>\nHello\n</member>")
    with_rule = prompts.render_judge_prompt(profile, "<member>\nHello\n</member>", length_penalty=True)
    assert "<length_guideline>" not in plain
    head, rule, tail = with_rule.partition(prompts.load_prompt("length_penalty").strip("\n"))
    assert rule and head.rstrip().endswith("</member_details>")
    assert tail.lstrip().startswith("<conversation>\n<member>\nHello\n</member>\n</conversation>")
    assert head.rstrip("\n") + "\n\n" + tail.lstrip("\n") == plain  # nothing else changes
    assert with_rule.rstrip().endswith("Return Your ratings below in the same format as above and nothing else.")


def test_cap_parameters_are_gone():
    assert "length_penalty_cap" not in inspect.signature(prompts.render_judge_prompt).parameters
    assert "length_penalty_cap" not in inspect.signature(MindEvalJudge).parameters
    with pytest.raises(TypeError):
        MindEvalJudge("scripted/x", client=None, length_penalty=True, length_penalty_cap=3)
