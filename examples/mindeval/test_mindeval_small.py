"""A small MindEval benchmark (seed 004): simulated patients talk to a clinician
model for a few turns; a 5-axis judge scores each whole conversation (1-6).

Offline it runs on the embedded model with 2 patients x 4 turns and the
role-only patient prompt (seed 004 Figure 9 ablation), because a 135M model
cannot write the 4-paragraph backstory the full patient prompt needs.  A configured
model gets 5 patients with backstories and the full patient prompt (Figure 7).  The
full configuration (50 patients, 20 turns, backstories) is in
``run_full_benchmark.py`` next to this file, for real models.

Context window: the backstory prompt (Figures 5-6) is ~2,700 tokens and the judge prompt
(Figures 11-12) ~2,400 plus the conversation, so both need a server context of 4096 tokens or
more (measured with SmolLM2's tokenizer).  On a smaller
one (e.g. a llama.cpp server started with 2048) the conversations fall back to the embedded
model's configuration (with a warning saying so) and the judge tests skip with the server's
message; nothing else changes.
"""

import warnings

import pytest

from pytest_judgerel import assert_mindeval_score
from pytest_judgerel.mindeval.backstory import ContextWindowError, context_overflow, generate_backstories
from pytest_judgerel.mindeval.interaction import SamplingSettings, run_interactions
from pytest_judgerel.mindeval.metrics import verbosity
from pytest_judgerel.mindeval.profiles import sample_profiles, violations

TURNS = 4
#: a cap per generated turn (the paper sets none): a small local model that does not stop
#: would otherwise fill its context and make the next turn fail
TURN_CAP = SamplingSettings(max_tokens=256)


@pytest.fixture(scope="module")
def conversations(judgerel_client, judgerel_endpoint):
    # the session's endpoint (model + --judge-api-base) plays both the patient and the clinician
    embedded = judgerel_endpoint.embedded
    profiles = sample_profiles(2 if embedded else 5, seed=2025)
    variant = "role_only" if embedded else "default"
    if not embedded:  # the full patient prompt needs the 4-paragraph backstory (Figures 5-6)
        try:
            profiles = generate_backstories(profiles, judgerel_endpoint, judgerel_client)
        except ContextWindowError as exc:
            warnings.warn(f"{exc} -- the conversations use the embedded model's configuration instead: "
                          "2 patients, role-only patient prompt (Figure 9 ablation)", stacklevel=1)
            profiles, variant = sample_profiles(2, seed=2025), "role_only"
    return run_interactions(profiles, judgerel_endpoint, judgerel_client, turns=TURNS,
                            patient_model=judgerel_endpoint, patient_variant=variant,
                            patient_sampling=TURN_CAP, clinician_sampling=TURN_CAP)


def _scores(mindeval_judge, conversations):
    """The judge's scores; a skip naming the server's message when its context cannot hold the prompt."""
    scores = mindeval_judge.score(conversations)
    too_long = [s.failure for s in scores if s.failure and context_overflow(s.failure)]
    if too_long:
        pytest.skip("the MindEval judge prompt (Figures 11-12, ~2,400 tokens plus the conversation) does not fit "
                    f"this server's context window (4096 tokens or more are needed): {too_long[0][-300:]}")
    return scores


def test_profiles_respect_every_constraint():
    profiles = sample_profiles(200, seed=2025)
    assert all(violations(p) == [] for p in profiles)


def test_conversations_have_the_paper_shape(conversations):
    """The patient opens with "Hello"; N turns after it alternate clinician/patient (seed 004 section 3)."""
    for it in conversations:
        roles = [m["role"] for m in it.messages]
        assert it.messages[0]["content"] == "Hello"
        assert len(roles) == TURNS + 1
        assert roles == ["user", "assistant"] * (TURNS // 2) + ["user"]
        assert all(m["content"].strip() for m in it.messages)


def test_every_conversation_is_scored_on_all_five_axes(conversations, mindeval_judge):
    scores = _scores(mindeval_judge, conversations)
    assert all(s.failure is None for s in scores), [s.failure for s in scores]
    assert all(set(s.scores) == {"CAC", "EPC", "AR", "TRA", "ASCQ"} for s in scores)
    assert all(1 <= v <= 6 for s in scores for v in s.scores.values())


def test_clinician_quality_gate(conversations, mindeval_judge, real_judge):
    """A competent clinician model should average >= 4 of 6 over the 5 axes."""
    assert_mindeval_score(_scores(mindeval_judge, conversations), min_mean=4.0)


def test_clinician_is_not_verbose(conversations, real_judge):
    """Seed 004 reports verbosity: share of clinician turns over 4 sentences."""
    stats = verbosity(conversations)
    assert stats.share_over_4 <= 0.5
