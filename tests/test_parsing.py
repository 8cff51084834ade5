"""Judge-reply parsers: strict, never a default, every failure names its cause.

``tests/data/malformed_replies.jsonl`` holds over 400 malformed replies (written by
hand by category, plus 245 generated from a seeded script over random scales and
values); each row names the format, the scale and the expected ``cause``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_judgerel.errors import ParseError
from pytest_judgerel.judging.parsing import (
    CAUSES,
    ParseOutcome,
    format_reminder,
    parse_axis_lines,
    parse_json_scores,
    parse_score,
    quote_reply,
    try_parse,
)
from pytest_judgerel.scales import Scale

CORPUS = Path(__file__).parent / "data" / "malformed_replies.jsonl"
SUMM = ["relevance", "coherence", "fluency", "consistency", "overall"]
MTB = ["score", "criteria_scores.helpfulness", "criteria_scores.correctness",
       "criteria_scores.depth", "criteria_scores.clarity"]
AXES = ["Clinical Accuracy & Competence", "Ethical & Professional Conduct", "Assessment & Response",
        "Therapeutic Relationship & Alliance", "AI-Specific Communication Quality"]


def _scale(name: str, fractional: bool) -> Scale:
    s = Scale.parse(name)
    return Scale(s.low, s.high, fractional=fractional)


def _corpus() -> list[dict]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_corpus_is_large_and_covers_every_cause():
    rows = _corpus()
    assert len(rows) >= 300
    assert {r["expected_cause"] for r in rows} == set(CAUSES)
    assert {r["origin"] for r in rows} == {"hand", "generated"}


@pytest.mark.parametrize("row", _corpus(), ids=lambda r: f"{r['fmt']}-{r['category']}")
def test_malformed_reply_fails_with_its_cause(row):
    scale = _scale(row["scale"], row["fractional"])
    outcome = try_parse(row["reply"], row["fmt"], scale, row["keys"])
    assert not outcome.ok, f"silent misparse: {row['reply']!r} -> {outcome.value} {outcome.values}"
    assert outcome.value is None and outcome.values is None
    assert outcome.failure.cause == row["expected_cause"]
    assert outcome.failure.cause in CAUSES
    assert outcome.failure.message.startswith(row["expected_cause"] + ":")
    assert "reply was" in outcome.failure.message


def test_corpus_failures_raise_parse_error_with_the_same_cause():
    for row in _corpus():
        scale = _scale(row["scale"], row["fractional"])
        with pytest.raises(ParseError) as info:
            if row["fmt"] == "number":
                parse_score(row["reply"], scale)
            elif row["fmt"] == "json":
                parse_json_scores(row["reply"], row["keys"], scale)
            else:
                parse_axis_lines(row["reply"], row["keys"], scale)
        assert info.value.cause == row["expected_cause"], row


VALID_NUMBER = [
    ("7", "0-10", False, 7.0),
    (" 7 ", "0-10", False, 7.0),
    ("\n7\n", "0-10", False, 7.0),
    ("7.", "0-10", False, 7.0),
    ("Score: 7", "0-10", False, 7.0),
    ("score:7", "0-10", False, 7.0),
    ("**7**", "0-10", False, 7.0),
    ("**Score:** 7", "0-10", False, 7.0),
    ("`7`", "0-10", False, 7.0),
    ("```\n7\n```", "0-10", False, 7.0),
    ("7/10", "0-10", False, 7.0),
    ("7 / 10", "0-10", False, 7.0),
    ("Score: **7/10**", "0-10", False, 7.0),
    ("I'd rate it 7 out of 10.", "0-10", False, 7.0),
    ("On a scale of 0-10, I give 7", "0-10", False, 7.0),
    ("On a scale from 0 to 10, I give 7.", "0-10", False, 7.0),
    ("Rating (0–10): 7", "0-10", False, 7.0),
    ("between 0 and 10 I would say 7", "0-10", False, 7.0),
    ("7 (out of 10)", "0-10", False, 7.0),
    ("Rating: 7 /10", "0-10", False, 7.0),
    ("7. Final score: 7", "0-10", False, 7.0),
    ("7.0", "0-10", False, 7.0),
    ("07", "0-10", False, 7.0),
    ("+7", "0-10", False, 7.0),
    ("0", "0-10", False, 0.0),
    ("10", "0-10", False, 10.0),
    ("10/10", "0-10", False, 10.0),
    ("0/10", "0-10", False, 0.0),
    ("<think>Could be 5 or 6.</think>\n6", "0-10", False, 6.0),
    ("Could be 5 or 6.</think>\n6", "0-10", False, 6.0),
    ("6\n<think>truncated trace with 9", "0-10", False, 6.0),
    ("\\boxed{8}", "0-10", False, 8.0),
    ("Score: 3", "0-5", False, 3.0),
    ("3/5", "1-5", False, 3.0),
    ("Score: 3 on a 1-5 scale.", "1-5", False, 3.0),
    ("85", "0-100", False, 85.0),
    ("85/100", "0-100", False, 85.0),
    ("85%", "0-100", False, 85.0),
    ("I give this a 100 on the 0-100 scale", "0-100", False, 100.0),
    ("3.5", "0-5", True, 3.5),
    ("3.75", "1-6", True, 3.75),
    ("Score: 4.25/5", "0-5", True, 4.25),
    (".5", "0-5", True, 0.5),
    ("62.5", "0-100", True, 62.5),
    ("2.50", "0-5", True, 2.5),
    ("**4.1**", "0-5", True, 4.1),
    ("Similarity: 4.8 (on a scale of 0 to 5)", "0-5", True, 4.8),
]


@pytest.mark.parametrize("reply,scale,fractional,expected", VALID_NUMBER)
def test_valid_number_replies_parse_exactly(reply, scale, fractional, expected):
    assert parse_score(reply, _scale(scale, fractional)) == expected
    outcome = try_parse(reply, "number", _scale(scale, fractional))
    assert outcome.ok and outcome.value == expected and outcome.failure is None


VALID_JSON = [
    ('{"relevance": 4, "coherence": 3.5, "fluency": 5, "consistency": 4, "overall": 4.2}', SUMM,
     {"relevance": 4, "coherence": 3.5, "fluency": 5, "consistency": 4, "overall": 4.2}),
    ('```json\n{"relevance": 4, "coherence": 3, "fluency": 5, "consistency": 4, "overall": 4}\n```', SUMM,
     {"relevance": 4, "coherence": 3, "fluency": 5, "consistency": 4, "overall": 4}),
    ('Here is my evaluation:\n```json\n{"Relevance": "4", "Coherence": "3.5/5", "Fluency": 5, '
     '"Consistency": 4, "Overall": 4}\n```', SUMM,
     {"relevance": 4, "coherence": 3.5, "fluency": 5, "consistency": 4, "overall": 4}),
    ('{"score": 4.5, "criteria_scores": {"helpfulness": 4.5, "correctness": 5.0, "depth": 4.0, '
     '"clarity": 5.0}}', MTB,
     {"score": 4.5, "criteria_scores.helpfulness": 4.5, "criteria_scores.correctness": 5.0,
      "criteria_scores.depth": 4.0, "criteria_scores.clarity": 5.0}),
    ('{"score": 0.0, "criteria_scores": {"helpfulness": 0, "correctness": 0, "depth": 0.5, "clarity": 1}}',
     MTB, {"score": 0.0, "criteria_scores.helpfulness": 0, "criteria_scores.correctness": 0,
           "criteria_scores.depth": 0.5, "criteria_scores.clarity": 1}),
    ('{"relevance": 4, "relevance": 4, "coherence": 3, "fluency": 5, "consistency": 4, "overall": 4, '
     '"note": "2 typos"}', SUMM,
     {"relevance": 4, "coherence": 3, "fluency": 5, "consistency": 4, "overall": 4}),
]


@pytest.mark.parametrize("reply,keys,expected", VALID_JSON)
def test_valid_json_replies_parse_exactly(reply, keys, expected):
    scale = Scale(0, 5, fractional=True)
    assert parse_json_scores(reply, keys, scale) == expected
    outcome = try_parse(reply, "json", scale, keys)
    assert outcome.ok and dict(outcome.values) == expected


VALID_AXES = [
    ("Clinical Accuracy & Competence: 4\nEthical & Professional Conduct: 5\nAssessment & Response: 3.75\n"
     "Therapeutic Relationship & Alliance: 4\nAI-Specific Communication Quality: 2", [4, 5, 3.75, 4, 2]),
    ("**Clinical Accuracy & Competence**: 4\n**Ethical & Professional Conduct**: 5\n"
     "**Assessment & Response**: 3\n**Therapeutic Relationship & Alliance**: 4\n"
     "**AI-Specific Communication Quality (LLMness)**: 2", [4, 5, 3, 4, 2]),
    ("- clinical accuracy and competence: 1\n- ethical and professional conduct: 6\n"
     "- assessment and response: 2.5\n- therapeutic relationship and alliance: 3\n"
     "- ai-specific communication quality: 1.25", [1, 6, 2.5, 3, 1.25]),
    ("Scores follow.\n1. Clinical Accuracy & Competence (CAC): 4/6\n2. Ethical & Professional Conduct (EPC): 5.\n"
     "3. Assessment & Response (AR): 3\n4. Therapeutic Relationship & Alliance (TRA): 4\n"
     "5. AI-Specific Communication Quality (ASCQ): 2\nClinical Accuracy & Competence: 4", [4, 5, 3, 4, 2]),
    ("Clinical Accuracy & Competence - 4\nEthical & Professional Conduct – 5\nAssessment & Response = 3\n"
     "Therapeutic Relationship & Alliance: **4**\nAI-Specific Communication Quality: 2.", [4, 5, 3, 4, 2]),
]


@pytest.mark.parametrize("reply,expected", VALID_AXES)
def test_valid_axis_replies_parse_exactly(reply, expected):
    values = parse_axis_lines(reply, AXES, Scale(1, 6, fractional=True))
    assert values == dict(zip(AXES, map(float, expected)))


def test_at_least_fifty_valid_examples():
    assert len(VALID_NUMBER) + len(VALID_JSON) + len(VALID_AXES) >= 50


# ------------------------------------------------------------------ properties
SCALES = [Scale(0, 5), Scale(0, 10), Scale(0, 100), Scale(1, 5), Scale(1, 6), Scale(1, 10),
          Scale(0, 5, fractional=True), Scale(0, 10, fractional=True), Scale(0, 100, fractional=True),
          Scale(1, 6, fractional=True), Scale(0, 1, step=0.25), Scale(-3, 3)]
NUMBER_FORMATS = [
    "{v}", "  {v}\n", "{v}.", "Score: {v}", "score: {v}.", "**{v}**", "Score: **{v}**", "`{v}`",
    "{v}/{hi}", "{v} / {hi}", "{v} out of {hi}", "**{v}/{hi}**", "On a scale of {lo}-{hi}, I give {v}",
    "On a scale from {lo} to {hi}: {v}", "{v}. Final score: {v}", "```\n{v}\n```",
    "<think>hmm</think>{v}", "Rating ({lo}–{hi}): {v}",
]


def _render(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


@st.composite
def scale_and_value(draw):
    scale = draw(st.sampled_from(SCALES))
    if scale.fractional:
        places = draw(st.integers(0, 3))
        v = round(draw(st.floats(scale.low, scale.high, allow_nan=False)), places)
        v = min(max(v, scale.low), scale.high)
    else:
        v = draw(st.sampled_from(scale.points))
    return scale, float(v)


@settings(max_examples=400, deadline=None)
@given(scale_and_value(), st.sampled_from(NUMBER_FORMATS))
def test_any_scale_value_in_any_accepted_format_parses_exactly(sv, fmt):
    scale, v = sv
    reply = fmt.format(v=_render(v), lo=_render(scale.low), hi=_render(scale.high))
    assert parse_score(reply, scale) == v


@settings(max_examples=150, deadline=None)
@given(st.lists(scale_and_value(), min_size=5, max_size=5), st.booleans(), st.booleans())
def test_json_and_axis_values_round_trip(svs, fenced, bold):
    scale = Scale(0, 5, fractional=True)
    vals = [min(5.0, max(0.0, round(v / max(s.high, 1) * 5, 2))) for s, v in svs]
    obj = json.dumps(dict(zip(SUMM, vals)))
    reply = f"```json\n{obj}\n```" if fenced else obj
    assert parse_json_scores(reply, SUMM, scale) == dict(zip(SUMM, vals))
    axes_scale = Scale(0, 5, fractional=True)
    star = "**" if bold else ""
    text = "\n".join(f"{star}{a}{star}: {_render(v)}" for a, v in zip(AXES, vals))
    assert parse_axis_lines(text, AXES, axes_scale) == dict(zip(AXES, vals))


@settings(max_examples=300, deadline=None)
@given(scale_and_value(), scale_and_value(), st.sampled_from(["{a} or {b}", "Score: {a}. Actually {b}",
                                                               "{a}\n{b}", "{a}, maybe {b}"]))
def test_two_different_numbers_are_always_ambiguous(sv1, sv2, fmt):
    scale, a = sv1
    _, b = sv2
    b = min(max(b, scale.low), scale.high)
    if scale.fractional is False and not scale.contains(b):
        b = scale.points[0]
    if a == b:
        return
    outcome = try_parse(fmt.format(a=_render(a), b=_render(b)), "number", scale)
    assert not outcome.ok and outcome.cause == "ambiguous"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_arbitrary_text_never_crashes_and_any_value_is_on_scale(text):
    scale = Scale(0, 10)
    outcome = try_parse(text, "number", scale)
    if outcome.ok:
        assert scale.contains(outcome.value)
    else:
        assert outcome.cause in CAUSES


# ------------------------------------------------------------------ specifics
def test_failure_message_quotes_and_truncates_long_reply():
    reply = "I think " + "very " * 200 + "good"
    with pytest.raises(ParseError) as info:
        parse_score(reply, "0-10")
    msg = str(info.value)
    assert info.value.cause == "no_number"
    assert "I think very" in msg and "(+" in msg and len(msg) < 400
    assert info.value.reply == reply


def test_ambiguous_message_lists_candidates():
    with pytest.raises(ParseError, match=r"ambiguous: 2 different candidate scores \(3, 4\)"):
        parse_score("Score: 3. Actually 4", "0-10")


def test_bad_denominator_names_denominator_and_scale_max():
    with pytest.raises(ParseError, match=r"fraction of 5, not of the scale maximum 10"):
        parse_score("7/5", "0-10")


def test_scale_phrase_only_removed_when_bounds_match():
    assert parse_score("On a scale of 0-10, I give 7", "0-10") == 7
    assert try_parse("On a scale of 1-10, I give 7", "number", "0-10").cause == "ambiguous"


def test_missing_axis_names_the_axis():
    with pytest.raises(ParseError, match="Assessment & Response") as info:
        parse_axis_lines("Clinical Accuracy & Competence: 3", AXES[:1] + ["Assessment & Response"], "1-6")
    assert info.value.cause == "missing_axis"


def test_axis_prefix_does_not_match_longer_axis_name():
    reply = "Clinical Accuracy: 2\nAccuracy: 5"
    assert parse_axis_lines(reply, ["Accuracy", "Clinical Accuracy"], "1-6") == {
        "Accuracy": 5.0, "Clinical Accuracy": 2.0}


def test_json_text_outside_object_is_ignored():
    reply = 'Overall I would say 2.\n{"relevance": 4, "coherence": 4, "fluency": 4, "consistency": 4, "overall": 4}'
    assert parse_json_scores(reply, SUMM, "0-5")["overall"] == 4.0


def test_try_parse_outcome_shapes():
    ok = try_parse("7", "number", "0-10")
    assert isinstance(ok, ParseOutcome) and ok.ok and ok.cause is None and ok.fmt == "number"
    bad = try_parse("", "axes", "1-6", AXES)
    assert not bad.ok and bad.cause == "empty" and bad.failure.to_dict()["cause"] == "empty"


def test_try_parse_rejects_unknown_format_and_missing_keys():
    with pytest.raises(ValueError, match="unknown reply format"):
        try_parse("7", "xml", "0-10")
    with pytest.raises(ValueError, match="needs the list of keys"):
        try_parse("{}", "json", "0-10")


# The reminder's example score sits 60% up the scale, on its grid: 0 + 0.6 * 5 = 3,
# 0 + 0.6 * 100 = 60, 1 + 0.6 * 5 = 4 (fractional: rounded to one decimal).
REMINDER_EXAMPLE = {"0-5": 3.0, "0-100": 60.0, "1-6": 4.0}


@pytest.mark.parametrize("fmt,axes", [("number", None), ("json", SUMM), ("json", MTB), ("axes", AXES)])
@pytest.mark.parametrize("scale", [Scale(0, 5), Scale(0, 100), Scale(1, 6, fractional=True)])
def test_reminder_states_bounds_and_its_example_parses(fmt, axes, scale):
    text = format_reminder(fmt, scale, axes)
    lo, hi = _render(scale.low), _render(scale.high)
    assert f"from {lo} to {hi}" in text
    if fmt == "number":
        example = text.split("for example: ")[1].split(". ")[0]
        assert parse_score(example, scale) == REMINDER_EXAMPLE[scale.name]
    if fmt == "json":
        filled = text.split("JSON object, each <score> being")[1].split(": ", 1)[1].rsplit(". Do not", 1)[0]
        filled = filled.replace("<score>", hi)
        assert parse_json_scores(filled, axes, scale) == {a: float(scale.high) for a in axes}
    if fmt == "axes":
        filled = "\n".join(line.replace("<score>", lo) for line in text.splitlines() if "<score>" in line
                           and ":" in line and not line.startswith("Your"))
        assert parse_axis_lines(filled, axes, scale) == {a: float(scale.low) for a in axes}


PATHOLOGICAL = [
    "Clinical Accuracy & Competence" + " " * 50000 + "x",
    "7 " + "- " * 50000,
    "{" * 20000 + "}" * 20000,
    "1-" * 30000,
    "<think>" * 10000,
    "</think>" * 10000,
    ("Clinical Accuracy & Competence (" + " " * 100) * 1000,
    "between 1 and " * 10000,
]


@pytest.mark.parametrize("reply", PATHOLOGICAL, ids=range(len(PATHOLOGICAL)))
def test_long_pathological_replies_parse_in_linear_time(reply):
    import time

    start = time.thread_time()  # CPU time of this thread: other processes' load does not count
    for fmt, keys in [("number", None), ("json", SUMM), ("axes", AXES)]:
        outcome = try_parse(reply, fmt, Scale(1, 6, fractional=True), keys)
        assert not outcome.ok or fmt == "number"
    # quadratic regex backtracking took 3-57 s on these before the line-by-line scan
    assert time.thread_time() - start < 2.0


# ------------------------------------------------------------------ every failure message in full
_FENCED_TWICE = '```json\n{"a": 1}\n```\n```json\n{"a": 2}\n```'


@pytest.mark.parametrize("kind, reply, arg, cause, message", [
    ("score", "7 or 8", "0-10", "ambiguous", "ambiguous: 2 different candidate scores (7, 8); reply was '7 or 8'"),
    ("score", "", "0-10", "empty", "empty: the reply is empty; reply was ''"),
    ("score", 7, "0-10", "not_text", "not_text: expected a string reply, got int; reply was '7'"),
    ("score", "no idea", "0-10", "no_number", "no_number: no score found; reply was 'no idea'"),
    ("score", "11", "0-10", "out_of_range", "out_of_range: score 11 is outside scale 0-10 (0..10); reply was '11'"),
    ("score", "0.5", "1-6", "out_of_range", "out_of_range: score 0.5 is outside scale 1-6 (1..6); reply was '0.5'"),
    ("score", "7.5", "0-10", "off_grid", "off_grid: score 7.5 is not a step of scale 0-10 (steps of 1; use a "
                                          "fractional scale to allow it); reply was '7.5'"),
    ("score", "7/20", "0-10", "bad_denominator", "bad_denominator: '7/20' is a fraction of 20, not of the scale "
                                                  "maximum 10; reply was '7/20'"),
    ("score", "x" * 200, "0-10", "no_number", "no_number: no score found; reply was '" + "x" * 160 + "'... (+40 chars)"),
    ("json", _FENCED_TWICE, ["a"], "ambiguous", f"ambiguous: 2 different fenced JSON blocks; reply was {_FENCED_TWICE!r}"),
    ("json", "no braces", ["a"], "bad_json", "bad_json: no JSON object ({...}) found; reply was 'no braces'"),
    ("json", "} {", ["a"], "bad_json", "bad_json: no JSON object ({...}) found; reply was '} {'"),
    ("json", '{"a": 1,}', ["a"], "bad_json", "bad_json: invalid JSON (Expecting property name enclosed in double "
                                              "quotes: line 1 column 9 (char 8)); reply was '{\"a\": 1,}'"),
    ("json", '{"a": NaN}', ["a"], "bad_json", "bad_json: invalid JSON (NaN is not allowed); reply was '{\"a\": NaN}'"),
    ("json", '{"a": 1, "a": 2}', ["a"], "ambiguous", "ambiguous: key 'a' appears twice with different values; "
                                                      "reply was '{\"a\": 1, \"a\": 2}'"),
    ("json", '{"a": 5}', ["a.b"], "missing_key", "missing_key: key 'a.b' not found (parent is not an object); "
                                                  "reply was '{\"a\": 5}'"),
    ("json", '{"a": {"c": 1}}', ["a.b"], "missing_key", "missing_key: key 'a.b' not found (keys: ['c']); "
                                                         "reply was '{\"a\": {\"c\": 1}}'"),
    ("json", '{"A b": 1, "a_b": 2}', ["a b"], "ambiguous", "ambiguous: keys ['A b', 'a_b'] all match 'a b' with "
                                                            "different values; reply was '{\"A b\": 1, \"a_b\": 2}'"),
    ("json", '{"a": null}', ["a"], "not_a_number", "not_a_number: value of 'a' is null; reply was '{\"a\": null}'"),
    ("json", '{"a": [1]}', ["a"], "not_a_number", "not_a_number: value of 'a' is [1]; reply was '{\"a\": [1]}'"),
    ("json", '{"a": {"x": 1}}', ["a"], "not_a_number", "not_a_number: value of 'a' is {\"x\": 1}; "
                                                        "reply was '{\"a\": {\"x\": 1}}'"),
    ("json", '{"a": true}', ["a"], "not_a_number", "not_a_number: value of 'a' is true; reply was '{\"a\": true}'"),
    ("json", '{"a": 11}', ["a"], "out_of_range", "out_of_range: score 11 for 'a' is outside scale 0-10 (0..10); "
                                                  "reply was '{\"a\": 11}'"),
    ("json", '{"a": 7.5}', ["a"], "off_grid", "off_grid: score 7.5 for 'a' is not a step of scale 0-10 (steps of 1; "
                                               "use a fractional scale to allow it); reply was '{\"a\": 7.5}'"),
    ("json", '{"a": "  "}', ["a"], "not_a_number", "not_a_number: value of 'a' is an empty string; "
                                                    "reply was '{\"a\": \"  \"}'"),
    ("json", '{"a": "7 or 8"}', ["a"], "ambiguous", "ambiguous: 2 different candidate scores for 'a' (7, 8); "
                                                     "reply was '{\"a\": \"7 or 8\"}'"),
    ("axes", "Empathy: 3", ["Accuracy"], "missing_axis", "missing_axis: no line 'AXIS: score' for axis 'Accuracy'; "
                                                         "reply was 'Empathy: 3'"),
    ("axes", "Accuracy:", ["Accuracy"], "no_number", "no_number: the line for axis 'Accuracy' has no score; "
                                                     "reply was 'Accuracy:'"),
    ("axes", "Accuracy: none", ["Accuracy"], "no_number", "no_number: no score found for 'Accuracy'; "
                                                          "reply was 'Accuracy: none'"),
    ("axes", "Accuracy: 3\nAccuracy: 4", ["Accuracy"], "ambiguous", "ambiguous: axis 'Accuracy' is scored more than "
                                                                    "once (3, 4); reply was 'Accuracy: 3\\nAccuracy: 4'"),
    ("axes", "Accuracy: 9", ["Accuracy"], "out_of_range", "out_of_range: score 9 for 'Accuracy' is outside scale 1-6 "
                                                          "(1..6); reply was 'Accuracy: 9'"),
])
def test_every_failure_names_its_cause_the_detail_and_quotes_the_reply(kind, reply, arg, cause, message):
    call = {"score": lambda: parse_score(reply, arg), "json": lambda: parse_json_scores(reply, arg, "0-10"),
            "axes": lambda: parse_axis_lines(reply, arg, "1-6")}[kind]
    with pytest.raises(ParseError) as info:
        call()
    assert (info.value.cause, str(info.value)) == (cause, message)
    assert info.value.reply == (reply if isinstance(reply, str) else repr(reply))
    fmt = {"score": "number", "json": "json", "axes": "axes"}[kind]
    scale = {"score": arg, "json": "0-10", "axes": "1-6"}[kind]
    outcome = try_parse(reply, fmt, scale, None if kind == "score" else arg)
    assert outcome.failure.to_dict() == {"cause": cause, "message": message, "reply": info.value.reply}


def test_no_reply_at_all_is_empty_and_parsers_need_keys_or_axes():
    with pytest.raises(ParseError) as info:
        parse_score(None, "0-10")
    assert (info.value.cause, str(info.value), info.value.reply) == (
        "empty", "empty: the judge returned no text (None); reply was ''", "")
    with pytest.raises(ValueError, match=r"^parse_json_scores needs at least one key$"):
        parse_json_scores("{}", [], "0-10")
    with pytest.raises(ValueError, match=r"^parse_axis_lines needs at least one axis$"):
        parse_axis_lines("x", [], "0-10")


_TAIL = "Do not include any explanation or additional text."


@pytest.mark.parametrize("fmt, scale, axes, text", [
    ("number", Scale(1, 5, step=0.5), None,  # 60% up: 1 + round(0.6 * 4 / 0.5) * 0.5 = 3.5
     "Your previous reply could not be read as a score. Reply with only a single number from 1 to 5 (a number in "
     f"steps of 0.5), for example: 3.5. {_TAIL}"),
    ("number", Scale(0, 0.35, fractional=True), None,  # round(0.6 * 0.35, 1) = 0.2
     "Your previous reply could not be read as a score. Reply with only a single number from 0 to 0.35 (a number, "
     f"decimals allowed), for example: 0.2. {_TAIL}"),
    ("number", "0-10", None,
     "Your previous reply could not be read as a score. Reply with only a single number from 0 to 10 (a whole "
     f"number), for example: 6. {_TAIL}"),
    ("json", "1-5", ["a.b", "a.c", "d"],
     "Your previous reply could not be read. Reply with only this JSON object, each <score> being a whole number "
     f'from 1 to 5: {{"a": {{"b": <score>, "c": <score>}}, "d": <score>}}. {_TAIL}'),
    ("axes", Scale(1, 6, fractional=True), ["X", "Y"],
     "Your previous reply could not be read. Reply with exactly these 2 lines, each <score> being a number, "
     f"decimals allowed from 1 to 6:\nX: <score>\nY: <score>\n{_TAIL}"),
])
def test_reminder_texts_in_full(fmt, scale, axes, text):
    assert format_reminder(fmt, scale, axes) == text


def test_reminder_and_try_parse_refuse_what_they_cannot_phrase():
    with pytest.raises(ValueError, match=r"^format_reminder\('json', \.\.\.\) needs the keys$"):
        format_reminder("json", "0-5")
    with pytest.raises(ValueError, match=r"^format_reminder\('axes', \.\.\.\) needs the axes$"):
        format_reminder("axes", "0-5", [])
    with pytest.raises(ValueError, match=r"^unknown reply format 'xml'; expected one of \('number', 'json', 'axes'\)$"):
        format_reminder("xml", "0-5")
    with pytest.raises(ValueError, match=r"^format 'axes' needs the list of axes$"):
        try_parse("x", "axes", "0-5")
    with pytest.raises(ValueError, match=r"^format 'json' needs the list of keys$"):
        try_parse("x", "json", "0-5", [])
    ok = try_parse('{"a": 3}', "json", "0-5", ["a"])
    assert (ok.ok, ok.fmt, ok.values, ok.value, ok.failure) == (True, "json", {"a": 3.0}, None, None)
    lines = try_parse("A: 2", "axes", "0-5", ["A"])
    assert (lines.ok, lines.fmt, lines.values) == (True, "axes", {"A": 2.0})
    bad = try_parse("A: 9", "axes", "0-5", ["A"])
    assert (bad.ok, bad.fmt, bad.cause) == (False, "axes", "out_of_range")


@pytest.mark.parametrize("reply, expected", [
    ("Accuracy:3", 3.0),                      # no space after the colon
    ("Accuracy — 4", 4.0),                    # an em dash with spaces
    ("Accuracy -\t5", 5.0),                   # a tab after the dash
    ("Accuracy (LLMness): 3 (solid)", 3.0),   # the first parenthesis closes the suffix
    ("Accuracy (open\nAccuracy: 2", 2.0),     # an unclosed suffix skips that line only
    ("AccuracyX: 3", "missing_axis"),         # a longer word is another axis
    ("Accuracy (a)X: 3", "missing_axis"),
    ("Accuracy- 3", "missing_axis"),          # a dash glued to the name is not a separator
])
def test_axis_line_separators(reply, expected):
    outcome = try_parse(reply, "axes", "1-6", ["Accuracy"])
    if isinstance(expected, str):
        assert outcome.cause == expected
    else:
        assert outcome.ok and outcome.values == {"Accuracy": expected}


def test_quotes_are_cut_after_160_characters_and_non_text_is_quoted_by_repr():
    assert quote_reply("x" * 160) == repr("x" * 160)
    assert quote_reply("x" * 161) == repr("x" * 160) + "... (+1 chars)"
    assert quote_reply(7) == "'7'" and quote_reply(None) == "'None'"
    assert quote_reply("abcdef", limit=4) == "'abcd'... (+2 chars)"


@pytest.mark.parametrize("reply, scale, expected", [
    ("7 7.000000001", "0-10", 7.0),               # within 1e-9 relative: the same number said twice
    ("0 0.0000000001", Scale(0, 1, fractional=True), 0.0),  # near zero the tolerance is absolute (1e-9)
    ("0.5 0.5000000015", Scale(0, 1, fractional=True), "ambiguous"),  # 1.5e-9 apart: two numbers
    ("−3", Scale(-5, 5), -3.0),                   # a typographic minus sign
    ("7\u00a0out of 10", "0-10", 7.0),            # a no-break space
    ("<think>4</think> 7 <think>5</think>", "0-10", 7.0),  # every closed reasoning block is dropped
    ("1 2 3 4 5 6 7", "0-10", "ambiguous: 7 different candidate scores (1, 2, 3, 4, 5, 6); reply was '1 2 3 4 5 6 7'"),
    ("Score out of 20: 7", "0-10", "bad_denominator: 'out of 20' is a fraction of 20, not of the scale maximum 10; "
                                   "reply was 'Score out of 20: 7'"),
])
def test_number_reading_details(reply, scale, expected):
    outcome = try_parse(reply, "number", scale)
    if isinstance(expected, float):
        assert outcome.ok and outcome.value == expected
    elif ":" in expected:
        assert outcome.failure.message == expected
    else:
        assert outcome.cause == expected


def test_json_values_within_rounding_of_the_bounds_are_on_the_scale():
    import json as _json

    frac = Scale(0, 10, fractional=True)
    for value in (0 - 1e-9, 10 + 1e-9):
        assert parse_json_scores(_json.dumps({"a": value}), ["a"], frac) == {"a": value}
    assert try_parse(_json.dumps({"a": 10 + 2e-9}), "json", frac, ["a"]).cause == "out_of_range"


def test_json_block_details():
    fenced = '```json\n{"a": 2}\n```\nsee above\n```json\n{"a": 2}\n```'
    assert parse_json_scores(fenced, ["a"], "0-5") == {"a": 2.0}  # the same block twice is not ambiguous
    assert parse_json_scores('{"a": 1}.', ["a"], "0-5") == {"a": 1.0}  # text after the object is ignored
    # two keys match "a b" with equal values (written in different key orders): one value, no ambiguity
    same = '{"A b": {"x": 1, "y": 2}, "a_b": {"y": 2, "x": 1}}'
    assert parse_json_scores(same, ["a b.x"], "0-5") == {"a b.x": 1.0}


_BARE = st.text(alphabet=" \t\r\n\u00a0-+.0123456789１/x", max_size=12)


@settings(max_examples=400, deadline=None)
@given(reply=st.one_of(_BARE, st.from_regex(r"[ \t\r\n]*[-+]?\d+(\.\d+)?[ \t\r\n]*", fullmatch=True)),
       scale=st.sampled_from(["0-5", "1-10", "0-100", "1-5"]), fractional=st.booleans())
def test_a_bare_number_reads_as_the_full_rules_read_it(reply, scale, fractional):
    """parse_score reads a reply that is one number and blanks without the full passes; whatever the
    reply, it gives what the full rules (think blocks, markup, ranges, fractions) give."""
    from pytest_judgerel.judging.parsing import _number_in, _text_of

    sc = _scale(scale, fractional)

    def outcome(read):
        try:
            return "value", read()
        except ParseError as exc:
            return "error", exc.cause, str(exc)

    full = outcome(lambda: _number_in(_text_of(reply), sc, reply))
    assert outcome(lambda: parse_score(reply, sc)) == full
