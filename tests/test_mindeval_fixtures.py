"""MindEval through the pytest surface: patients marker, fixtures, assertion helper."""

pytest_plugins = ["pytester"]

CONFTEST = '''
import pytest
from pytest_judgerel.llm import register_scripted

AXES = ["Clinical Accuracy & Competence", "Ethical & Professional Conduct", "Assessment & Response",
        "Therapeutic Relationship & Alliance", "AI-Specific Communication Quality"]

def actor(messages, **params):
    system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
    text = " ".join(m["content"] for m in messages)
    if "psychosocial narrative" in text:
        return "\\n\\n".join(f"You are person paragraph {i}." for i in range(4))
    if "Clinical Accuracy & Competence" in text:
        return "\\n".join(f"{a}: 4" for a in AXES)
    return "I hear you. Tell me more about how this week went."

register_scripted("scripted/actor", actor)

@pytest.fixture
def clinician():
    return lambda messages: "That sounds hard. What has helped you cope so far?"
'''

TESTS = '''
import pytest
from pytest_judgerel import assert_mindeval_score

@pytest.mark.patients(n=3, seed=7, turns=4)
def test_clinician(patient, interaction, mindeval_judge):
    assert interaction.messages[0]["content"] == "Hello"
    scores = mindeval_judge.score([interaction])
    assert_mindeval_score(scores, min_mean=3.5)
'''


def test_patients_marker_parametrizes_and_fixtures_run(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_me=TESTS)
    result = pytester.runpytest_subprocess("--judge-model=scripted/actor", "-v",
                                           f"--judgerel-cache-dir={pytester.path / 'c'}")
    result.stdout.fnmatch_lines(["*test_clinician[[]patient0[]] PASSED*", "*test_clinician[[]patient2[]] PASSED*"])
    result.assert_outcomes(passed=3)
