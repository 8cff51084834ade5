"""End-to-end MindEval pipeline through the real LLMClient and scripted models (deterministic):
backstory -> interactions -> judge, resume after interruption, bounded retries."""

from __future__ import annotations

import asyncio
import threading

import pytest

from pytest_judgerel.errors import ConfigError, LLMCallError
from pytest_judgerel.llm import LLMClient, LLMSettings, register_scripted
from pytest_judgerel.testing import ScriptedHTTPError
from pytest_judgerel.mindeval.backstory import generate_backstories
from pytest_judgerel.mindeval.interaction import (
    InteractionError,
    SamplingSettings,
    load_interactions,
    run_interaction,
    run_interactions,
    save_interactions,
)
from pytest_judgerel.mindeval.judge import FewShotExample, MindEvalJudge
from pytest_judgerel.mindeval.metrics import verbosity
from pytest_judgerel.mindeval.profiles import sample_profiles

STORY = "Para one.\n\nPara two.\n\nPara three.\n\nPara four."


class Counter:
    def __init__(self):
        self.n = 0
        self.lock = threading.Lock()
        self.seen: list[list[dict]] = []

    def hit(self, messages):
        with self.lock:
            self.n += 1
            self.seen.append(messages)


@pytest.fixture()
def client(tmp_path):
    c = LLMClient(LLMSettings(cache_dir=str(tmp_path / "cache"), max_attempts=1))
    yield c
    c.close()


@pytest.fixture()
def profiles():
    return [p.with_backstory(STORY) for p in sample_profiles(3, 21)]


def patient_script(counter):
    def fn(messages, **params):
        counter.hit(messages)
        # the patient sees itself as the assistant: its opening "Hello" then clinician turns as user
        assert messages[0]["role"] == "system" and "Your backstory" in messages[0]["content"]
        assert messages[1] == {"role": "assistant", "content": "Hello"}
        assert messages[-1]["role"] == "user"
        name = messages[0]["content"].split("- Name: ")[1].split("\n")[0]
        return f"{name} answers turn {len(messages) - 1}"
    return fn


def test_interactions_roles_turns_metadata_and_cache(client, profiles):
    pc = Counter()
    register_scripted("scripted/me-patient", patient_script(pc))
    seen_clinician = []

    def clinician(messages):
        seen_clinician.append(messages)
        return f"I hear you. Tell me more about turn {len(messages)}."

    res = run_interactions(profiles, clinician, client, turns=20, patient_model="scripted/me-patient",
                           clinician_name="echo-v1",
                           patient_sampling=SamplingSettings(temperature=0.9, top_p=0.95, seed=3))
    assert len(res) == 3
    for inter, prof in zip(res, profiles):
        msgs = inter.messages
        assert len(msgs) == 21 and inter.n_generated_turns == 20
        assert msgs[0] == {"role": "user", "content": "Hello"}
        assert [m["role"] for m in msgs] == ["user", "assistant"] * 10 + ["user"]
        assert msgs[-1]["content"] == f"{prof.name} answers turn 20"
        assert inter.clinician == "scripted/clinician-echo-v1"
        assert inter.turns[1].model and inter.turns[1].latency >= 0 and inter.turns[1].cached is False
        assert inter.settings["patient_sampling"] == {"temperature": 0.9, "top_p": 0.95, "seed": 3, "max_tokens": None}
        assert inter.settings["clinician_sampling"]["temperature"] is not None
    assert pc.n == 30 and len(seen_clinician) == 30
    # the clinician never sees the backstory or the rubric, only the member context
    system = seen_clinician[0][0]["content"]
    assert "<member_context>" in system and "Para one" not in system and "Clinical Accuracy" not in system
    # re-running is served from the cache: no new model calls, turns flagged cached
    again = run_interactions(profiles, clinician, client, turns=20, patient_model="scripted/me-patient",
                             clinician_name="echo-v1",
                             patient_sampling=SamplingSettings(temperature=0.9, top_p=0.95, seed=3))
    assert pc.n == 30 and len(seen_clinician) == 30
    assert [i.messages for i in again] == [i.messages for i in res]
    assert all(t.cached for t in again[0].turns[1:])


def test_resume_after_interruption_reuses_finished_turns(client, profiles, tmp_path):
    pc = Counter()
    state = {"fail_after": 7}

    def flaky(messages, **params):
        pc.hit(messages)
        if pc.n > state["fail_after"]:
            raise ScriptedHTTPError(400, "simulated crash")
        return f"reply {len(messages)}"

    register_scripted("scripted/me-flaky", flaky)
    cc = Counter()

    def clinician(messages):
        cc.hit(messages)
        return f"clinician {len(messages)}."

    out = tmp_path / "done.jsonl"
    with pytest.raises(InteractionError) as info:
        run_interactions(profiles, clinician, client, turns=6, patient_model="scripted/me-flaky",
                         clinician_name="resume-v1", max_turn_retries=1, output_path=out)
    err = info.value
    assert err.failures and "simulated crash" in str(err)
    finished_before = len(err.completed)
    calls_first = pc.n + cc.n
    # now the patient works again: only the missing turns are generated
    state["fail_after"] = 10**9
    pc_before, cc_before = pc.n, cc.n
    res = run_interactions(profiles, clinician, client, turns=6, patient_model="scripted/me-flaky",
                           clinician_name="resume-v1", output_path=out)
    new_patient_calls = pc.n - pc_before
    new_clinician_calls = cc.n - cc_before
    assert len(res) == 3 and all(len(i.messages) == 7 for i in res)
    # 9 patient and 9 clinician turns in total; the first run answered 7 patient turns successfully
    assert new_patient_calls == 9 - 7
    assert new_clinician_calls == 9 - (cc_before)
    assert cc_before + new_clinician_calls == 9
    assert calls_first > 0
    # finished interactions were written as they completed (first run) and again (second run)
    saved = load_interactions(out)
    assert len(saved) == finished_before + 3


def test_empty_reply_is_retried_then_raises_clearly(client, profiles):
    pc = Counter()

    def empty(messages, **params):
        pc.hit(messages)
        return "   "

    register_scripted("scripted/me-empty", empty)
    with pytest.raises(InteractionError, match=r"turn 2 \(patient.*empty.*after 2 retries"):
        run_interactions(profiles[:1], lambda m: "Hi.", client, turns=4, patient_model="scripted/me-empty",
                         clinician_name="hi", max_turn_retries=2)
    assert pc.n == 3  # bounded: first try + 2 retries, each with a new sample_index


def test_empty_reply_recovers_with_new_sample(client, profiles):
    pc = Counter()

    def sometimes(messages, **params):
        pc.hit(messages)
        return "" if pc.n == 1 else "ok then"

    register_scripted("scripted/me-sometimes", sometimes)
    (inter,) = run_interactions(profiles[:1], lambda m: "Hi.", client, turns=2,
                                patient_model="scripted/me-sometimes", clinician_name="hi2")
    assert inter.turns[2].content == "ok then"
    assert inter.turns[2].sample_index == 1 and inter.turns[2].retries == 1


def test_clinician_forms_object_method_and_model_name(client, profiles):
    register_scripted("scripted/me-pat", lambda messages, **k: "fine")

    class Bot:
        def respond(self, messages):
            return "From the object."

    class Other:
        def answer(self, messages):
            return "From answer()."

    r1 = run_interactions(profiles[:1], Bot(), client, turns=2, patient_model="scripted/me-pat", clinician_name="bot")
    assert r1[0].messages[1]["content"] == "From the object."
    r2 = run_interactions(profiles[:1], Other(), client, turns=2, patient_model="scripted/me-pat",
                          clinician_name="other", clinician_method="answer")
    assert r2[0].messages[1]["content"] == "From answer()."
    register_scripted("scripted/me-clin-model", lambda messages, **k: "From a model name.")
    r3 = run_interactions(profiles[:1], "scripted/me-clin-model", client, turns=2, patient_model="scripted/me-pat")
    assert r3[0].clinician == "scripted/me-clin-model" and r3[0].messages[1]["content"] == "From a model name."
    with pytest.raises(ConfigError, match="clinician must be"):
        run_interactions(profiles[:1], object(), client, turns=2, patient_model="scripted/me-pat")
    with pytest.raises(ConfigError, match="even"):
        run_interactions(profiles[:1], Bot(), client, turns=3, patient_model="scripted/me-pat")


def test_patient_prompt_variants_and_missing_backstory(client):
    seen = []

    def pat(messages, **k):
        seen.append(messages[0]["content"])
        return "ok"

    register_scripted("scripted/me-variant", pat)
    prof = sample_profiles(1, 5)[0]
    with pytest.raises(ConfigError, match="backstory"):
        run_interactions([prof], lambda m: "Hi.", client, turns=2, patient_model="scripted/me-variant")
    run_interactions([prof], lambda m: "Hi.", client, turns=2, patient_model="scripted/me-variant",
                     patient_variant="role_only", clinician_name="v")
    assert seen[-1].startswith("You are a client attending") and "<your_profile>" not in seen[-1]


def test_run_interactions_inside_running_event_loop(client, profiles):
    register_scripted("scripted/me-loop", lambda messages, **k: "sure")

    async def main():
        return run_interactions(profiles[:2], lambda m: "Hello there.", client, turns=2,
                                patient_model="scripted/me-loop", clinician_name="loop")

    res = asyncio.run(main())
    assert len(res) == 2


def test_backstory_generation_through_client(client):
    calls = Counter()

    def writer(messages, **params):
        calls.hit(messages)
        prompt = messages[0]["content"]
        assert "Write exactly 4 paragraphs." in prompt and '"age": "' in prompt
        # the first answer for the first profile has 2 paragraphs: re-requested
        return "Only.\n\nTwo." if calls.n == 1 else STORY

    register_scripted("scripted/me-writer", writer)
    profs = sample_profiles(2, 8)
    out = generate_backstories(profs, "scripted/me-writer", client)
    assert all(p.member_narrative == STORY for p in out)
    assert calls.n == 3
    generate_backstories(profs, "scripted/me-writer", client)  # cached
    assert calls.n == 3
    register_scripted("scripted/me-bad-writer", lambda messages, **k: "")
    with pytest.raises(LLMCallError, match="profile s8-0 .*empty.* after 1 retries"):
        generate_backstories(profs[:1], "scripted/me-bad-writer", client, max_retries=1)


def test_backstory_retries_are_new_samples_with_a_new_seed(client):
    """A retry is a new sample with the next seed (the same seed would get the byte-identical reply
    from a real server)."""
    seen = []

    def writer(messages, **params):
        seen.append((params.get("seed"), params.get("max_tokens")))
        return "Only one." if len(seen) < 3 else STORY

    register_scripted("scripted/me-seeded", writer)
    (out,) = generate_backstories(sample_profiles(1, 5), "scripted/me-seeded", client)
    assert out.member_narrative == STORY
    assert seen == [(0, 400), (1, 400), (2, 400)]  # seed + retry; the default reply cap
    seen.clear()
    generate_backstories(sample_profiles(1, 6), "scripted/me-seeded", client, seed=10, max_tokens=50)
    assert seen == [(10, 50), (11, 50), (12, 50)]
    seen.clear()
    generate_backstories(sample_profiles(1, 7), "scripted/me-seeded", client, seed=None)
    assert [s for s, _ in seen] == [None, None, None]  # no seed stays no seed (sample_index differs)
    with pytest.raises(ConfigError, match="seed must be an int"):
        generate_backstories(sample_profiles(1, 8), "scripted/me-seeded", client, seed="1")


def test_backstory_does_not_retry_a_call_that_cannot_succeed(client):
    """An HTTP 400 "context exceeded" is not retryable: sent once, not max_retries times."""
    from pytest_judgerel.mindeval.backstory import ContextWindowError, context_overflow

    calls = Counter()
    overflow = ("This model's maximum context length is 2048 tokens. However, you requested 2984 tokens "
                "(2684 in the messages, 300 in the completion).")

    def too_long(messages, **params):
        calls.hit(messages)
        raise ScriptedHTTPError(400, overflow)

    register_scripted("scripted/me-small-context", too_long)
    with pytest.raises(ContextWindowError, match="profile s9-0 .*does not fit the server's context window.*4096.*"
                                                 "maximum context length is 2048"):
        generate_backstories(sample_profiles(1, 9), "scripted/me-small-context", client)
    assert calls.n == 1

    def refused(messages, **params):
        calls.hit(messages)
        raise ScriptedHTTPError(404, "no such model")

    register_scripted("scripted/me-refused", refused)
    with pytest.raises(LLMCallError, match="profile s9-0 .*not retried") as info:
        generate_backstories(sample_profiles(1, 9), "scripted/me-refused", client)
    assert calls.n == 2 and not isinstance(info.value, ContextWindowError)
    assert context_overflow(overflow) and context_overflow("litellm.ContextWindowExceededError: x")
    assert not context_overflow("HTTP 404 no such model")

    flaky = Counter()

    def unavailable_once(messages, **params):  # a 503 can pass on a later sample: retried
        flaky.hit(messages)
        if flaky.n == 1:
            raise ScriptedHTTPError(503, "busy")
        return STORY

    register_scripted("scripted/me-busy", unavailable_once)
    (out,) = generate_backstories(sample_profiles(1, 9), "scripted/me-busy", client)
    assert out.member_narrative == STORY and flaky.n == 2


def test_judge_end_to_end_with_reask_and_failures(client, profiles):
    register_scripted("scripted/me-p", lambda messages, **k: "Not great. I slept badly.")
    inters = run_interactions(profiles, lambda m: "That sounds hard. What helped before? Tell me.", client,
                              turns=4, patient_model="scripted/me-p", clinician_name="judge-test")
    state = {"calls": 0}
    good = ("Clinical Accuracy & Competence: 3\nEthical & Professional Conduct: 5\nAssessment & Response: 3.5\n"
            "Therapeutic Relationship & Alliance: 4\nAI-Specific Communication Quality: 2")

    def judge_fn(messages, **params):
        state["calls"] += 1
        prompt = messages[0]["content"]
        assert "<member>\nHello\n</member>" in prompt and "<therapist>" in prompt
        assert "Output format:" in prompt  # no few-shot examples -> explicit format line
        assert params.get("temperature") == 0.0
        name = prompt.split("Now, consider a new instance:")[1].split("- Name: ")[1].split("\n")[0]
        if name == profiles[1].name:
            # first reply unparsable; after the reminder, a valid one
            return good if len(messages) == 3 else "Overall decent, maybe a 4."
        if name == profiles[2].name:
            return "Clinical Accuracy & Competence: 7"  # always out of range
        return good

    register_scripted("scripted/me-judge", judge_fn)
    judge = MindEvalJudge("scripted/me-judge", client)
    scores = judge.score(inters)
    assert [s.interaction_id for s in scores] == [i.interaction_id for i in inters]
    assert scores[0].scores == {"CAC": 3.0, "EPC": 5.0, "AR": 3.5, "TRA": 4.0, "ASCQ": 2.0}
    assert scores[0].mean == pytest.approx(3.5) and not scores[0].reasked
    assert scores[1].ok and scores[1].reasked
    assert scores[2].scores is None and scores[2].mean is None and scores[2].failure.startswith("out_of_range")
    assert judge.stats.reasks == 2 and judge.stats.reask_successes == 1 and judge.stats.parse_failures == 1
    assert judge.stats.failure_causes == {"out_of_range": 1}
    assert state["calls"] == 5
    no_reask = MindEvalJudge("scripted/me-judge", client, reask=False, namespace="other")
    s2 = no_reask.score(inters)
    assert s2[1].scores is None and no_reask.stats.reasks == 0 and no_reask.stats.parse_failures == 2


def test_judge_prompt_examples_and_length_penalty(profiles):
    ex_msgs = [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi."}]
    ex = FewShotExample(profiles[0], ex_msgs, {"CAC": 3.5, "EPC": 5, "AR": 3, "TRA": 4, "ASCQ": 2.25})

    class FakeInteraction:
        profile = profiles[1]
        messages = [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hey."}]
        interaction_id = "x"

    judge = MindEvalJudge("scripted/unused", client=None, examples=[ex], length_penalty=True)
    prompt = judge.prompt(FakeInteraction())
    assert "AI-Specific Communication Quality: 2.25" in prompt
    assert "Output format:" not in prompt
    # after the member details, before the conversation; the output instruction stays last
    assert prompt.rindex("</member_details>") < prompt.index("<length_guideline>") < prompt.rindex("<conversation>")
    assert prompt.rstrip().endswith("in the same format as above and nothing else.")
    with pytest.warns(UserWarning, match="starts with the therapist"):
        FewShotExample(profiles[0], ex_msgs[::-1], ex.scores)
    with pytest.raises(ConfigError, match="five axes"):
        FewShotExample(profiles[0], ex_msgs, {"CAC": 3})


def test_save_load_interactions_round_trip(client, profiles, tmp_path):
    register_scripted("scripted/me-rt", lambda messages, **k: "ok. fine.")
    res = run_interactions(profiles[:2], lambda m: "One. Two. Three. Four. Five.", client, turns=4,
                           patient_model="scripted/me-rt", clinician_name="rt")
    path = save_interactions(res, tmp_path / "i.jsonl")
    back = load_interactions(path)
    assert [b.messages for b in back] == [r.messages for r in res]
    assert back[0].profile == res[0].profile
    v = verbosity(res)
    assert v.n_turns == 4 and v.mean_sentences == 5 and v.share_over_4 == 1.0


def test_run_interaction_generates_missing_backstory(client):
    seen = []

    def model(messages, **params):
        prompt = messages[0]["content"]
        if "Write exactly 4 paragraphs." in prompt:
            return STORY
        seen.append(prompt)
        return "okay"

    register_scripted("scripted/me-both", model)
    prof = sample_profiles(1, 30)[0]
    inter = run_interaction(prof, lambda m: "Hi.", client, patient_model="scripted/me-both", turns=2,
                            clinician_name="single")
    assert inter.profile.member_narrative == STORY
    assert "Para one." in seen[0] and len(inter.messages) == 3


def test_patients_run_concurrently_against_a_fake_server(tmp_path):
    import time

    from llm_fixtures import GatedFakeServer

    # the server holds requests until six are in flight (the six patients' first turns): the peak
    # is the runner's concurrency, not how fast a loaded machine dispatches within one latency
    with GatedFakeServer(gate=6, latency=0.3) as srv:
        client = LLMClient(LLMSettings(cache_dir=str(tmp_path / "c"), max_concurrency=8, timeout=90.0))
        try:
            profs = [p.with_backstory(STORY) for p in sample_profiles(6, 40)]
            start = time.perf_counter()
            res = run_interactions(profs, "openai/fake-clinician", client, turns=2, patient_model="openai/fake-patient",
                                   patient_api_base=srv.url, patient_api_key="sk-fake",
                                   clinician_api_base=srv.url, clinician_api_key="sk-fake")
            elapsed = time.perf_counter() - start
        finally:
            client.close()
    assert len(res) == 6 and srv.requests == 12
    assert srv.max_in_flight >= 6  # all six patients' turns were in flight together
    assert elapsed < 60.0  # hang guard only: the gate, not a stopwatch, shows the concurrency
    assert res[0].settings["patient_api_base"] == srv.url
    assert "sk-fake" not in str(res[0].to_dict())


def test_judge_call_failure_is_recorded_not_raised(client, profiles):
    register_scripted("scripted/me-p2", lambda messages, **k: "fine")
    inters = run_interactions(profiles[:2], lambda m: "Hi.", client, turns=2, patient_model="scripted/me-p2",
                              clinician_name="jf")

    def broken(messages, **k):
        raise ScriptedHTTPError(400, "judge exploded")

    register_scripted("scripted/me-broken-judge", broken)
    judge = MindEvalJudge("scripted/me-broken-judge", client)
    scores = judge.score(inters)
    assert all(s.scores is None and s.failure.startswith("call_failed") for s in scores)
    assert judge.stats.call_failures == 2 and judge.stats.parse_failures == 0


def test_replay_mode_miss_fails_fast_with_the_turn(tmp_path, profiles):
    calls = Counter()

    def pat(messages, **k):
        calls.hit(messages)
        return "x"

    register_scripted("scripted/me-replay", pat)
    replay = LLMClient(LLMSettings(cache_dir=str(tmp_path / "empty"), cache_mode="replay"))
    try:
        with pytest.raises(InteractionError, match=r"turn 1 \(clinician.*replay mode"):
            run_interactions(profiles[:1], "scripted/me-replay", replay, turns=2, patient_model="scripted/me-replay")
    finally:
        replay.close()
    assert calls.n == 0
