"""Bias probes end to end on scripted judges and the loopback fake server."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pytest_judgerel import Judge, probes
from pytest_judgerel.errors import ConfigError, ParseError
from pytest_judgerel.llm import LLMClient, LLMSettings
from pytest_judgerel.probes import parse_pairwise_verdict, pairwise_template, verbose_padding
from pytest_judgerel.probes.length import FILLER_SENTENCES

ROOT = Path(__file__).resolve().parents[1]

# 12 pairs: the better answer is the right sum; it is answer_a on even pairs, answer_b on odd ones
PAIRS = [{"id": f"p{i}", "question": f"What is {i} + {i + 2}?",
          "answer_a": str(2 * i + 2) if i % 2 == 0 else str(2 * i + 5),
          "answer_b": str(2 * i + 5) if i % 2 == 0 else str(2 * i + 2)} for i in range(12)]


def _answer(text, slot):
    return re.search(rf"\[Assistant {slot}'s answer begins\]\n(.*?)\n\[Assistant {slot}'s answer ends\]",
                     text, re.S).group(1)


def _question(text):
    return re.search(r"\[Question\]\n(.*?)\n", text).group(1)


def _right(question, answer):
    a, b = map(int, re.findall(r"\d+", question))
    return answer.strip() == str(a + b)


def blind(messages, **params):
    text = messages[-1]["content"]
    q = _question(text)
    a_ok, b_ok = _right(q, _answer(text, "A")), _right(q, _answer(text, "B"))
    return "Comparing both... [[C]]" if a_ok == b_ok else "[[A]]" if a_ok else "[[B]]"


@pytest.fixture
def client(tmp_path):
    with LLMClient(LLMSettings(cache_dir=str(tmp_path / "cache"))) as c:
        yield c


# --------------------------------------------------------------------------- the parser
@pytest.mark.parametrize("reply, verdict", [
    ("[[A]]", "A"), ("[[B]]", "B"), ("[[C]]", "tie"),
    ("Assistant A is more accurate.\n\nFinal verdict: [[A]]", "A"),
    ("[[ b ]]", "B"), ("**[[C]]**", "tie"),
    ("[[A]] ... so, again: [[A]]", "A"),          # one verdict repeated
    ("A", "A"), ("b.", "B"), ("Tie", "tie"), ("'C'", "tie"), ("[A]", "A"),
    ("<think>maybe [[B]]?</think>[[A]]", "A"),    # reasoning is dropped
])
def test_pairwise_parser_reads(reply, verdict):
    assert parse_pairwise_verdict(reply) == verdict


@pytest.mark.parametrize("reply, cause", [
    ("", "empty"), ("   \n", "empty"), (None, "empty"), (42, "not_text"),
    ("Assistant A is better.", "no_verdict"),
    ("[[A]] or perhaps [[B]]", "ambiguous"),      # MT-Bench's reader would take A here
    ("Output [[C]] for a tie. My verdict: [[A]]", "ambiguous"),
    ("A or B", "no_verdict"), ("[[D]]", "no_verdict"), ("<think>[[A]]</think>", "empty"),
])
def test_pairwise_parser_refuses(reply, cause):
    with pytest.raises(ParseError) as exc:
        parse_pairwise_verdict(reply)
    assert exc.value.cause == cause


# --------------------------------------------------------------------------- the template
def test_shipped_pairwise_template():
    t = pairwise_template()
    assert t.output == "pairwise" and t.fields == ("question", "answer_a", "answer_b")
    assert "arXiv:2306.05685" in t.source and "Figure 5" in t.source
    assert '"[[A]]"' in t.system and '"[[C]]"' in t.system


def test_pairwise_template_is_not_a_pointwise_judge_template(client):
    with pytest.raises(ConfigError, match="pairwise"):
        Judge(model="scripted/unused", template=probes.PAIRWISE_TEMPLATE, client=client)


def test_pairwise_template_checks(client):
    with pytest.raises(ConfigError, match="output: pairwise"):
        pairwise_template("stsb")
    custom = "# output: pairwise\n=== user\nQ: {q}\n1: {first}\n2: {second}\nReply [[A]], [[B]] or [[C]]."
    assert pairwise_template(custom, ("first", "second")).fields == ("q", "first", "second")
    with pytest.raises(ConfigError, match="lacks the answer field"):
        pairwise_template(custom)


# --------------------------------------------------------------------------- position
def test_first_position_judge_is_never_consistent(client, scripted):
    seen = []

    def first(messages, **params):
        seen.append(messages[-1]["content"])
        return "[[A]]"

    judge = Judge(model=scripted("scripted/first", first), client=client)
    res = probes.position_bias(judge, PAIRS)
    assert res.consistency.value == 0.0 and res.first_preference.value == 1.0
    assert res.second_preference.count == 0 and res.n_pairs == 12
    assert all(v[1:] == ("A", "A", "first") for v in res.verdicts)
    # every pair was shown in both orders: the answers swap places
    p0 = [s for s in seen if "What is 0 + 2?" in s]
    assert len(p0) == 2
    assert {(_answer(s, "A"), _answer(s, "B")) for s in p0} == {("2", "5"), ("5", "2")}
    assert len(seen) == 24


def test_order_blind_judge_is_always_consistent(client, scripted):
    res = probes.position_bias(Judge(model=scripted("scripted/blind", blind), client=client), PAIRS)
    assert res.consistency.value == 1.0 and res.consistency.count == 12
    assert res.first_preference.value == 0.0 and not res.inconsistent_pairs()
    assert [v[1] for v in res.verdicts] == ["A", "B"] * 6  # the right answer, wherever it is shown


def test_partly_biased_judge_counts_by_hand(client, scripted):
    """Blind on pairs 0-5; on pairs 6-11 it picks whatever is shown first (6-8) or second (9-11)."""
    def mixed(messages, **params):
        text = messages[-1]["content"]
        i = int(re.findall(r"\d+", _question(text))[0])
        return blind(messages) if i < 6 else "[[A]]" if i < 9 else "[[B]]"

    res = probes.position_bias(Judge(model=scripted("scripted/mixed", mixed), client=client), PAIRS)
    assert res.consistency.count == 6 and res.first_preference.count == 3 and res.second_preference.count == 3
    assert res.consistency.value == 0.5 and len(res.inconsistent_pairs()) == 6


def test_unreadable_replies_are_failures_not_verdicts(client, scripted):
    def sloppy(messages, **params):
        text = messages[-1]["content"]
        if text.startswith("Your previous reply could not be read"):
            return "Still thinking."
        return "Both fine, A probably." if "What is 3 + 5?" in text else blind(messages)

    res = probes.position_bias(Judge(model=scripted("scripted/sloppy", sloppy), client=client), PAIRS)
    assert len(res.parse_failures) == 2
    f = res.parse_failures[0]
    assert f.item == "p3" and f.cause == "no_verdict" and f.reasked and f.reply == "Still thinking."
    assert {x.rater for x in res.parse_failures} == {"given", "swapped"}
    assert res.stats.n_missing == 1 and res.stats.n_valid == 11 and res.verdicts[3][3] == "missing"


def test_reask_recovers_a_reply(client, scripted):
    def recovers(messages, **params):
        if messages[-1]["content"].startswith("Your previous reply could not be read"):
            return "[[C]]"
        return "hmm" if "What is 0 + 2?" in messages[-1]["content"] else blind(messages)

    res = probes.position_bias(Judge(model=scripted("scripted/recovers", recovers), client=client), PAIRS)
    assert not res.parse_failures and res.verdicts[0][1:3] == ("tie", "tie")
    assert res.calls == 26  # 24 + two re-asks
    no_reask = probes.position_bias(Judge(model=scripted("scripted/recovers2", recovers), client=client,
                                          reask=False), PAIRS)
    assert len(no_reask.parse_failures) == 2 and no_reask.calls == 24


def test_every_request_goes_to_the_judges_endpoint_with_its_settings(tmp_path):
    from pytest_judgerel.testing import FakeLLMServer

    with FakeLLMServer(latency=0.0, responder=lambda req: "[[B]]") as server, \
            LLMClient(LLMSettings(cache_dir=str(tmp_path / "c"))) as c:
        judge = Judge(model="openai/pairwise-fake", api_base=server.url, api_key="sk-test", temperature=0.3,
                      max_tokens=7, seed=11, client=c, system="ignored: the template has its own system")
        res = probes.position_bias(judge, PAIRS[:5])
        assert server.requests == 10
        bodies = [entry["body"] for entry in server.log]
    assert {b["model"] for b in bodies} == {"pairwise-fake"}
    assert {b["temperature"] for b in bodies} == {0.3} and {b["max_tokens"] for b in bodies} == {7}
    assert {b["seed"] for b in bodies} == {11}
    assert all(b["messages"][0]["role"] == "system" and "impartial judge" in b["messages"][0]["content"]
               for b in bodies)
    assert res.second_preference.value == 1.0
    assert res.provenance["model"] == "openai/pairwise-fake" and res.provenance["template"] == "mtbench-pairwise"


def test_position_probe_records_a_judge_run(client, scripted, _private_metric_sink):
    probes.position_bias(Judge(model=scripted("scripted/blind2", blind), client=client), PAIRS[:4])
    runs = [r for r in _private_metric_sink if r["kind"] == "judge_run"]
    assert runs and runs[-1]["calls"] == 8 and runs[-1]["judge"]["template"] == "mtbench-pairwise"


def test_custom_fields_are_swapped(client, scripted):
    seen = []

    def record(messages, **params):
        seen.append(messages[-1]["content"])
        return "[[A]]"

    tmpl = "# output: pairwise\n=== user\nQ: {q}\nFIRST={left}\nSECOND={right}\nVerdict as [[A]]/[[B]]/[[C]]."
    probes.position_bias(Judge(model=scripted("scripted/rec", record), client=client),
                         [{"q": "x", "left": "L", "right": "R"}], template=tmpl, fields=("left", "right"))
    assert sorted(re.search(r"FIRST=(\w)", s).group(1) for s in seen) == ["L", "R"]


# --------------------------------------------------------------------------- length
ANSWERS = [{"id": f"a{i}", "question": f"What is {i} + 1?", "answer": str(i + 1) if i % 3 else str(i + 7)}
           for i in range(15)]


def _pointwise(messages):
    text = messages[-1]["content"]
    q = re.search(r"Question: “(.*?)”", text, re.S).group(1)
    a = re.search(r"Answer to evaluate: “(.*?)”", text, re.S).group(1)
    return q, a


def _right_sum(q, a):
    x = int(re.findall(r"\d+", q)[0])
    nums = re.findall(r"\d+", a)
    return bool(nums) and int(nums[0]) == x + 1


def test_verbose_padding_is_deterministic_and_content_free():
    text = "The capital of France is Paris."
    padded = verbose_padding(text)
    assert padded == verbose_padding(text) and text in padded
    assert padded.startswith(FILLER_SENTENCES[0]) and len(padded) >= 2 * len(text)
    assert not re.search(r"\d", padded)  # adds no numbers, names or facts
    assert len(verbose_padding("x" * 500, factor=3)) >= 1500
    with pytest.raises(ConfigError):
        verbose_padding(text, factor=1.0)


def test_length_loving_judge_shifts_by_exactly_one_point(client, scripted):
    def lover(messages, **params):
        q, a = _pointwise(messages)
        return str((4 if _right_sum(q, a) else 1) + (len(a) > 60))

    judge = Judge(model=scripted("scripted/lover", lover), template="truthfulqa", client=client)
    res = probes.length_bias(judge, ANSWERS)
    assert res.shift.mean == pytest.approx(1 / 5)  # +1 on 0-5 for every item
    assert res.shift.p == 0.0 and res.shift.n == 15 and res.n_omitted == 0
    assert list(res.item_shifts.values()) == [pytest.approx(0.2)] * 15
    assert res.original.values[:, 0].tolist() == [1 if i % 3 == 0 else 4 for i in range(15)]
    assert res.length_ratio > 2


def test_fair_judge_shows_no_shift_and_padding_reaches_the_judge(client, scripted):
    prompts = []

    def fair(messages, **params):
        prompts.append(messages[-1]["content"])
        q, a = _pointwise(messages)
        return "5" if _right_sum(q, a) else "1"

    judge = Judge(model=scripted("scripted/fair", fair), template="truthfulqa", client=client)
    res = probes.length_bias(judge, ANSWERS, repeats=2)
    assert res.shift.mean == 0.0 and res.shift.p == 1.0
    assert sum(FILLER_SENTENCES[0] in p for p in prompts) == 30  # 15 padded items x 2 repeats
    assert res.original.shape == (15, 2)


def test_length_bias_with_a_random_judge_matches_a_hand_computed_t_interval(client, scripted):
    from scipy import stats as sps

    def noisy(messages, sample_seed=0, **params):
        q, a = _pointwise(messages)
        rng = np.random.default_rng(abs(hash((q, a))) % 2**32)
        return str(int(rng.integers(0, 6)))

    judge = Judge(model=scripted("scripted/noisy", noisy), template="truthfulqa", client=client)
    res = probes.length_bias(judge, ANSWERS)
    before = res.original.values[:, 0] / 5
    after = res.padded.values[:, 0] / 5
    ref = sps.ttest_rel(after, before)
    assert res.shift.mean == pytest.approx(float(np.mean(after - before)))
    assert res.shift.p == pytest.approx(ref.pvalue)


def test_length_bias_input_checks(client, scripted):
    judge = Judge(model=scripted("scripted/x", lambda m, **p: "3"), template="truthfulqa", client=client)
    with pytest.raises(ConfigError, match="does not use"):
        probes.length_bias(judge, ANSWERS, field="response")
    with pytest.raises(ConfigError, match="longer text"):
        probes.length_bias(judge, ANSWERS, pad=lambda s: s)
    custom = probes.length_bias(judge, ANSWERS[:4], pad=lambda s: s + " (padded)")
    assert custom.shift.mean == 0.0


# --------------------------------------------------------------------------- self-preference
MODELS = ["scripted/me", "model-b", "model-c"]


def _outputs(n_tasks=9):
    out = []
    for t in range(n_tasks):
        for j, m in enumerate(MODELS):
            good = (t + j) % 3 != 0
            text = ("Result: " if m == "scripted/me" else "It is ") + ("right" if good else "wrong")
            out.append({"task": f"t{t}", "model": m, "question": f"q{t}", "answer": text, "human": 4 if good else 1})
    return out


def _promoter(messages, **params):
    _q, a = _pointwise(messages)
    return str((4 if "right" in a else 1) + a.startswith("Result:"))


def test_self_promoting_judge_by_hand(client, scripted):
    judge = Judge(model=scripted("scripted/me", _promoter), template="truthfulqa", client=client)
    res = probes.self_preference(judge, _outputs(), reference="human")
    t = res.test
    # per task the reference ties the own model with one other model (both right) or puts it last
    # (it is wrong); the +1 makes the judge rank it first when right: rank 1.5 -> 1 (change +0.5),
    # and it stays last when wrong (1 vs 4 with the others at 4): change 0.  3 of 9 tasks have the
    # own model wrong (t = 0, 3, 6), so the mean change is 6 * 0.5 / 9.
    assert t.mean_rank_change == pytest.approx(6 * 0.5 / 9)
    assert (t.n_higher, t.n_lower, t.n_equal) == (6, 0, 3)
    assert res.own_model == "scripted/me" and res.models == tuple(MODELS)


def test_fair_judge_has_no_self_preference_against_any_reference_kind(client, scripted):
    def fair(messages, **params):
        return "5" if "right" in _pointwise(messages)[1] else "2"

    judge = Judge(model=scripted("scripted/fair-sp", fair), template="truthfulqa", client=client)
    outputs = _outputs()
    by_field = probes.self_preference(judge, outputs, reference="human", own_model="scripted/me")
    ids = [f"{o['task']}/{o['model']}" for o in outputs]
    by_map = probes.self_preference(judge, outputs, reference=dict(zip(ids, [o["human"] for o in outputs])),
                                    own_model="scripted/me")
    ref_judge = Judge(model=scripted("scripted/ref-sp", fair), template="truthfulqa", client=client)
    by_judge = probes.self_preference(judge, outputs, reference=ref_judge, own_model="scripted/me")
    for res in (by_field, by_map, by_judge):
        assert res.test.mean_rank_change == 0.0 and res.test.n_equal == 9
    assert by_judge.reference_ratings is not None


def test_self_preference_input_checks(client, scripted):
    judge = Judge(model=scripted("scripted/other", _promoter), template="truthfulqa", client=client)
    with pytest.raises(ConfigError, match="wrote none of the outputs"):
        probes.self_preference(judge, _outputs(), reference="human")
    with pytest.raises(ConfigError, match="two outputs of model"):
        probes.self_preference(judge, _outputs() + _outputs()[:1], reference="human", own_model="scripted/me")
    bad = [dict(o) for o in _outputs()]
    del bad[0]["task"]
    with pytest.raises(ConfigError, match="no 'task' tag"):
        probes.self_preference(judge, bad, reference="human", own_model="scripted/me")
    with pytest.raises(ConfigError, match="reference must be"):
        probes.self_preference(judge, _outputs(), reference=3, own_model="scripted/me")


# --------------------------------------------------------------------------- the example
def test_bias_probe_example_runs_offline():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUDGEREL_", "PYTEST_", "OPENAI_"))}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "examples/test_bias_probes.py", "-q", "-p", "no:cacheprovider",
         "--judgerel-cache-mode=off"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "7 passed" in proc.stdout
