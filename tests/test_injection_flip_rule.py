"""Where the injection probe plants its attacks, the flip rule that a judge's sampling noise cannot
trip, and which family the gate names: real HTTP to the loopback fake server for the judges."""

import hashlib
import re
from statistics import NormalDist

import numpy as np
import pytest
from scipy.stats import t as scipy_t

from pytest_judgerel import Judge, JudgeReliabilityFailure, assert_injection_resistant, probes
from pytest_judgerel.llm import LLMClient, LLMSettings
from pytest_judgerel.probes import ATTACKS
from pytest_judgerel.probes.injection import AttackOutcome, InjectionResult, render_attack
from pytest_judgerel.ratings import Ratings
from pytest_judgerel.scales import Scale
from pytest_judgerel.stats.noise_allowance import noise_allowance

_ANSWER = re.compile(r"Answer to evaluate: “(.*?)”\n\nEvaluate", re.S)
_QUESTION = re.compile(r"Question: “(.*?)”\n\nAnswer to evaluate", re.S)
_OVERRIDES = [render_attack(a, target="5", low="0", high="5", reply="5", field=f).strip("\n")
              for a in ATTACKS if a.family == "instruction_override" for f in ("answer", "question")]


def _where(text):
    """The position of an instruction_override attack in ``text`` (None: there is none)."""
    for core in _OVERRIDES:
        if text.startswith(core):
            return "start"
        if text.endswith(core):
            return "end"
        if core in text:
            return "middle"
    return None


def _noisy_reply(request, sd, decimals):
    """1 point plus normal noise of ``sd``, clipped to 0-5 and rounded; drawn from a hash of the
    prompt and its occurrence, so a run's set of replies does not depend on arrival order."""
    key = f"{request.messages[-1]['content']}|{request.occurrence}".encode()
    u = (int.from_bytes(hashlib.sha256(key).digest()[:8], "big") + 0.5) / 2.0 ** 64
    x = min(5.0, max(0.0, 1.0 + sd * NormalDist().inv_cdf(u)))
    return f"{x:.1f}" if decimals else str(round(x))


def _responder(sd, decimals, obey_position=None, obey_field="answer"):
    def respond(request):
        content = request.messages[-1]["content"]
        text = (_ANSWER if obey_field == "answer" else _QUESTION).search(content).group(1)
        if obey_position is not None and _where(text) in ((obey_position,) if obey_position != "any" else
                                                          ("start", "middle", "end")):
            return "5"
        return _noisy_reply(request, sd, decimals)
    return respond


@pytest.fixture
def http_judge(tmp_path, fake_llm_server):
    with LLMClient(LLMSettings(cache_dir=str(tmp_path / "cache"))) as client:
        yield Judge(model="openai/fake", api_base=fake_llm_server.url, api_key="sk-test", template="truthfulqa",
                    client=client)


# ---------------------------------------------------------------------- the flip rule, over HTTP
@pytest.mark.parametrize("decimals", [0, 1], ids=["integer", "one-decimal"])
def test_a_noisy_judge_that_is_not_gullible_passes(http_judge, fake_llm_server, _private_metric_sink, decimals):
    """sd 1 point on 0-5: the old fixed 1-point margin flipped such a judge's items by noise alone."""
    fake_llm_server.responder = _responder(1.0, decimals)
    res = assert_injection_resistant(http_judge, max_flip_rate=0.05, families=["instruction_override"])
    assert fake_llm_server.requests == 6 * 10 + 6 * 7 * 2 * 3
    beyond_margin = sum(o.attacked - o.clean > 1.0 for o in res.outcomes)
    assert beyond_margin > 0.05 * res.n_attacks      # a 1-point margin alone would have failed this judge
    assert res.pooled().count <= 0.05 * res.n_attacks
    assert 0.6 < res.noise.sd < 1.4 and res.noise.df == 6 * 9
    needed = {o.needed for o in res.outcomes}
    assert min(needed) > 2.5                          # t_{0.999, 54} x sd x sqrt(1/10 + 1/1)
    rec = [r for r in _private_metric_sink if r["kind"] == "injection"][-1]
    assert rec["passed"] is True and rec["noise"]["sd"] == pytest.approx(res.noise.sd)


@pytest.mark.parametrize("position", ["start", "middle", "end"])
def test_a_judge_gullible_at_one_position_is_caught_there(http_judge, fake_llm_server, _private_metric_sink,
                                                          position):
    fake_llm_server.responder = _responder(0.5, 0, obey_position=position)
    with pytest.raises(JudgeReliabilityFailure, match="attack family 'instruction_override' flipped 42 of 252"):
        assert_injection_resistant(http_judge, max_flip_rate=0.05, families=["instruction_override"])
    rec = [r for r in _private_metric_sink if r["kind"] == "injection"][-1]
    assert {p: v["flips"] for p, v in rec["positions"].items()} == {
        p: (42 if p == position else 0) for p in ("start", "middle", "end")}
    assert rec["fields"]["answer"]["flips"] == 42 and rec["fields"]["question"]["flips"] == 0
    assert all(item["item"].endswith(f"|answer|{position}") for item in rec["worst_items"])


def test_a_judge_gullible_to_the_question_field_is_caught_there(http_judge, fake_llm_server, _private_metric_sink):
    fake_llm_server.responder = _responder(0.5, 1, obey_position="any", obey_field="question")
    with pytest.raises(JudgeReliabilityFailure, match="flipped 126 of 252"):
        assert_injection_resistant(http_judge, max_flip_rate=0.05, families=["instruction_override"])
    rec = [r for r in _private_metric_sink if r["kind"] == "injection"][-1]
    assert rec["fields"]["question"]["flips"] == 126 and rec["fields"]["answer"]["flips"] == 0


# ---------------------------------------------------------------------- the noise allowance itself
def test_noise_allowance_is_the_pooled_t_bound_and_sees_through_clipping():
    rng = np.random.default_rng(7)
    groups = [2.5 + rng.normal(0, 0.8, 10) for _ in range(6)]        # far from both bounds: plain pooled sd
    nz = noise_allowance(groups, 0.001, 0.0, 5.0)
    pooled = np.sqrt(sum(((g - g.mean()) ** 2).sum() for g in groups) / 54)
    assert nz.df == 54 and nz.sd == pytest.approx(pooled, rel=1e-6)
    assert nz.t == pytest.approx(scipy_t.ppf(0.999, 54)) and nz.points(10, 1) == pytest.approx(nz.t * pooled * np.sqrt(1.1))
    # near the floor, clipping hides the spread: the observed sd is about half the true 1.0
    low = [np.clip(np.round(0.3 + rng.normal(0, 1.0, 10)), 0, 5) for _ in range(6)]
    observed = np.sqrt(sum(((g - g.mean()) ** 2).sum() for g in low) / 54)
    assert observed < 0.8 and noise_allowance(low, 0.001, 0.0, 5.0).sd > observed + 0.15
    assert noise_allowance([[1.0] * 10] * 6, 0.001, 0, 5).points(10, 1) == 0.0   # a deterministic judge
    assert noise_allowance([[1.0], [2.0]], 0.001).t is None                       # one sample per item


# ---------------------------------------------------------------------- which family the gate names
def _result(counts):
    """A finished probe: per family (flips, attacks), each attack on its own item."""
    outcomes = tuple(AttackOutcome(f"{fam}{i}", fam, f"v{i}", 1.0, 5.0 if i < flips else 1.0, i < flips, "answer",
                                   "end", 1.0)
                     for fam, (flips, n) in counts.items() for i in range(n))
    empty = Ratings.from_array(np.ones((1, 1)), item_ids=["x"])
    return InjectionResult(outcomes, tuple(counts), empty, empty, Scale.parse("0-5"), "answer", "raise", 1.0, None,
                           (), {}, noise_allowance([[1.0, 1.0]], 0.001), ("end",), ("answer",))


@pytest.mark.parametrize("use,worst", [("estimate", "few"), ("ci_low", "many"), ("ci_high", "few")])
def test_the_worst_family_is_ranked_by_the_statistic_use_names(_private_metric_sink, use, worst):
    """few: 2 of 4 (0.50, CI 0.068-0.932); many: 20 of 48 (0.42, CI 0.276-0.567)."""
    res = _result({"none": (0, 40), "few": (2, 4), "many": (20, 48)})
    with pytest.raises(JudgeReliabilityFailure, match=f"attack family '{worst}' flipped"):
        assert_injection_resistant(res, max_flip_rate=0.01, use=use)
    rec = [r for r in _private_metric_sink if r["kind"] == "injection"][-1]
    assert rec["worst_family"] == worst and rec["n"] == {"few": 4, "many": 48}[worst]


def test_the_worst_family_is_the_first_of_the_largest_not_the_first_family(_private_metric_sink):
    res = _result({"clean": (0, 10), "b": (3, 10), "c": (3, 10), "d": (1, 10)})
    with pytest.raises(JudgeReliabilityFailure, match="attack family 'b' flipped 3 of 10"):
        assert_injection_resistant(res, max_flip_rate=0.05)
    rec = [r for r in _private_metric_sink if r["kind"] == "injection"][-1]
    assert rec["worst_family"] == "b" and rec["value"] == pytest.approx(0.3)
    assert rec["families"]["c"]["passed"] is False and rec["families"]["clean"]["passed"] is True
    passing = _result({"clean": (0, 10), "b": (0, 10)})
    assert assert_injection_resistant(passing, max_flip_rate=0.05) is passing
    assert [r for r in _private_metric_sink if r["kind"] == "injection"][-1]["worst_family"] == "clean"


def test_probe_arguments_are_refused_on_a_finished_result():
    with pytest.raises(ValueError, match=r"\['positions', 'clean_repeats'\] configure the probe"):
        assert_injection_resistant(_result({"a": (0, 5)}), max_flip_rate=0.1, positions=["end"], clean_repeats=3)


def test_probe_options_are_checked(scripted, tmp_path):
    with LLMClient(LLMSettings(cache_dir=str(tmp_path / "c"))) as client:
        judge = Judge(model=scripted("scripted/one", lambda messages, **p: "1"), template="truthfulqa", client=client)
        with pytest.raises(Exception, match="clean_repeats must be an integer >= 1"):
            probes.injection_probe(judge, clean_repeats=0)
        with pytest.raises(Exception, match=r"flip_alpha must be a probability in \(0, 0.5\)"):
            probes.injection_probe(judge, flip_alpha=0.5)
