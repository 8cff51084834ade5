"""Malformed judge replies through every parser: never a silent misparse, every failure named.

The corpus (tests/robust/corpus.py) holds >= 500 malformed replies per parser: the vendored
file tests/data/malformed_replies.jsonl (hand-written, causes assigned by hand), its number
replies lifted into the JSON and axis-line formats (the cause carries over because those
parsers read values with the single-number rules), hand-written MindEval replies, and seeded
generated replies whose cause follows from how they were built.  Hypothesis drives the same
generators with its own randomness.  The Judge and MindEvalJudge paths are checked end to end.
"""

from __future__ import annotations

import math
import random
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robust import corpus, judging

from pytest_judgerel.errors import ParseError
from pytest_judgerel.judging.parsing import CAUSES

CORPUS = corpus.malformed_corpus()
REPORT = corpus.run_corpus(CORPUS)


def _show(outcomes, limit=8):
    return "\n".join(f"  {o.case.parser} [{o.case.origin}/{o.case.category}] {o.case.reply!r:.120} scale "
                     f"{o.case.scale}{'f' if o.case.fractional else ''}: expected {o.case.expected_cause}, "
                     f"got {o.cause or o.value!r}" for o in outcomes[:limit])


def test_corpus_has_500_malformed_replies_for_every_parser():
    assert set(REPORT.by_parser) == set(corpus.PARSERS)
    assert all(n >= 500 for n in REPORT.by_parser.values()), REPORT.by_parser
    assert REPORT.total >= 2000
    assert {"hand", "lifted", "generated"} <= set(REPORT.by_origin)
    # every documented cause occurs, and the replies are not a handful repeated
    assert {c.expected_cause for c in CORPUS} == set(CAUSES)
    distinct = {(c.parser, repr(c.reply), c.scale, c.fractional) for c in CORPUS}
    assert len(distinct) >= 0.8 * len(CORPUS)


@pytest.mark.parametrize("parser", corpus.PARSERS)
def test_no_silent_misparse_and_the_right_cause(parser):
    mine = lambda outs: [o for o in outs if o.case.parser == parser]  # noqa: E731
    assert not mine(REPORT.silent_misparses), "silent misparses:\n" + _show(mine(REPORT.silent_misparses))
    assert not mine(REPORT.wrong_cause), "wrong cause:\n" + _show(mine(REPORT.wrong_cause))
    assert not mine(REPORT.unnamed), "failure without a named cause:\n" + _show(mine(REPORT.unnamed))


def test_try_parse_gives_the_same_cause_as_the_raising_parsers():
    core = [c for c in CORPUS if c.parser != "mindeval.parse_judge_reply"]
    for case in core:
        raised, quiet = corpus.parse_case(case), corpus.try_parse_case(case)
        assert quiet.cause == raised.cause == case.expected_cause, case
        assert quiet.message == raised.message


def test_the_misparse_detector_detects_misparses():
    """Control: valid replies fed as 'malformed' cases are reported as silent misparses,
    and a wrong expected cause is reported as such (the checks above can fail)."""
    valid = [corpus.CorpusCase("parse_score", "7", "ambiguous"),
             corpus.CorpusCase("parse_json_scores", '{"a": 3}', "bad_json", "0-5", True, ("a",)),
             corpus.CorpusCase("parse_axis_lines", "Depth: 4", "missing_axis", "0-5", False, ("Depth",)),
             corpus.CorpusCase("mindeval.parse_judge_reply", "\n".join(f"{a}: 3" for a in corpus.AX), "missing_axis")]
    report = corpus.run_corpus(valid)
    assert len(report.silent_misparses) == 4 + 3  # raising parsers + try_parse on the three core cases
    wrong = corpus.run_corpus([corpus.CorpusCase("parse_score", "7 or 8", "no_number")])
    assert len(wrong.wrong_cause) == 2 and wrong.wrong_cause[0].cause == "ambiguous"


# ------------------------------------------------------------------ hypothesis over the generators
@pytest.mark.parametrize("parser", corpus.PARSERS)
@settings(max_examples=250, deadline=None)
@given(seed=st.integers(0, 2**63))
def test_generated_malformed_replies_fail_with_their_cause(parser, seed):
    case = corpus.GENERATORS[parser](random.Random(seed))
    out = corpus.parse_case(case)
    assert not out.silent, f"silent misparse of {case.reply!r} -> {out.value!r}"
    assert out.cause == case.expected_cause, (case, out.message)
    assert corpus.names_its_cause(out), out.message


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80), st.sampled_from(["number", "json", "axes"]))
def test_arbitrary_text_is_read_exactly_or_fails_with_a_documented_cause(text, fmt):
    from pytest_judgerel.judging.parsing import try_parse
    from pytest_judgerel.scales import Scale

    scale = Scale(1, 6)
    out = try_parse(text, fmt, scale, None if fmt == "number" else corpus.AX[:2])
    if out.ok:
        vals = [out.value] if fmt == "number" else list(out.values.values())
        assert all(scale.contains(v) for v in vals)
        written = [float(t) for t in re.findall(r"\d+(?:\.\d+)?", text)]
        assert all(any(w == v for w in written) for v in vals)  # the score is written in the reply
    else:
        assert out.cause in CAUSES and out.failure.message.startswith(out.cause + ":")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=120))
def test_mindeval_parser_never_invents_a_score(text):
    from pytest_judgerel.mindeval.judge import parse_judge_reply

    try:
        scores = parse_judge_reply(text)
    except ParseError as exc:
        assert exc.cause in CAUSES and str(exc)
        return
    assert set(scores) == set(corpus.MINDEVAL_ABBR) and all(1 <= v <= 6 for v in scores.values())


# ------------------------------------------------------------------ end to end: Judge and MindEvalJudge
NUMBER_0_10 = [c for c in CORPUS if c.parser == "parse_score" and c.scale == "0-10" and not c.fractional
               and isinstance(c.reply, str) and c.reply.strip()]


@pytest.mark.parametrize("reask", [False, True], ids=["no-reask", "reask"])
def test_judge_turns_every_malformed_reply_into_a_missing_cell_with_its_cause(tmp_path, scripted, reask):
    from pytest_judgerel import Judge
    from pytest_judgerel.llm import LLMClient, LLMSettings

    cases = NUMBER_0_10[:120]
    assert len(cases) >= 100
    by_item = {f"case {i}": c for i, c in enumerate(cases)}

    def model(messages, **params):
        item = re.search(r"“(case \d+)”", messages[1]["content"]).group(1)
        return by_item[item].reply  # the same malformed reply again after the reminder

    name = scripted("scripted/robust-malformed", model)
    items = [{"id": k, "sentence1": k, "sentence2": "x"} for k in by_item]
    with LLMClient(LLMSettings(cache_dir=str(tmp_path / "c"), cache_mode="off")) as client:
        judge = Judge(model=name, template=judging.NUMBER_TEMPLATE, scale="0-10", client=client, reask=reask)
        r = judge.rate(items, repeats=1)
    assert np.isnan(r.values).all(), "a malformed reply became a score"
    got = {f.item: f for f in r.parse_failures}
    assert set(got) == set(by_item)
    for item, case in by_item.items():
        f = got[item]
        assert f.cause == case.expected_cause and f.message.startswith(f.cause + ":"), (case.reply, f)
        assert f.reply == case.reply and f.reasked is reask


def test_mindeval_judge_records_every_malformed_reply(tmp_path, scripted):
    from pytest_judgerel.llm import LLMClient, LLMSettings
    from pytest_judgerel.mindeval import MindEvalJudge, sample_profiles

    # blank replies never reach the parser: the LLM layer retries them as empty content
    cases = [c for c in CORPUS if c.parser == "mindeval.parse_judge_reply" and c.reply.strip()][:60]
    profiles = sample_profiles(len(cases), 11)

    class Conversation:
        def __init__(self, i):
            self.profile = profiles[i]
            self.interaction_id = f"conv{i}"
            self.messages = [{"role": "user", "content": "Hello"},
                             {"role": "assistant", "content": f"Welcome, conversation marker {i}."}]

    def model(messages, **params):
        i = int(re.search(r"conversation marker (\d+)", messages[0]["content"]).group(1))
        return cases[i].reply

    name = scripted("scripted/robust-me-judge", model)
    with LLMClient(LLMSettings(cache_dir=str(tmp_path / "c"), cache_mode="off")) as client:
        judge = MindEvalJudge(name, client, reask=True)
        scores = judge.score([Conversation(i) for i in range(len(cases))])
    assert all(s.scores is None and s.mean is None for s in scores)
    for s, case in zip(scores, cases):
        assert s.failure.startswith(case.expected_cause + ":"), (case.reply, s.failure)
    assert judge.stats.parse_failures == len(cases) and judge.stats.reask_successes == 0
    assert sum(judge.stats.failure_causes.values()) == len(cases)
    assert not any(math.isfinite(s.mean or math.nan) for s in scores)


def test_generators_are_deterministic_for_a_seed():
    a = [corpus.gen_number_case(random.Random(5)) for _ in range(3)]
    b = [corpus.gen_number_case(random.Random(5)) for _ in range(3)]
    assert a == b
    assert corpus.malformed_corpus(seed=1)[-1] == corpus.malformed_corpus(seed=1)[-1]
