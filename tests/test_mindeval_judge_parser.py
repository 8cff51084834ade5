"""Corpus tests of the MindEval judge reply parser: valid replies parse exactly, malformed ones
raise ParseError with the right cause and are never defaulted to 3."""

from __future__ import annotations

import pytest

from pytest_judgerel.errors import ParseError
from pytest_judgerel.mindeval.judge import AXES, parse_judge_reply, render_conversation

NAMES = list(AXES.values())
BASE = {"CAC": 3.75, "EPC": 5.0, "AR": 3.0, "TRA": 4.0, "ASCQ": 2.5}


def lines(values=BASE, fmt="{name}: {value}", names=None):
    names = names or NAMES
    return "\n".join(fmt.format(name=n, value=_g(values[a]), abbr=a) for n, a in zip(names, AXES))


def _g(v):
    return f"{v:g}" if isinstance(v, float) else str(v)


VALID = [
    (lines(), BASE),
    (lines(fmt="**{name}**: {value}"), BASE),
    (lines(fmt="**{name}:** {value}"), BASE),
    (lines(fmt="- {name}: {value}"), BASE),
    (lines(fmt="{name} - {value}"), BASE),
    (lines(fmt="{name} = {value}"), BASE),
    (lines(fmt="{name}: {value}/6"), BASE),
    (lines(fmt="{name}: {value} out of 6"), BASE),
    (lines(fmt="### {name}: {value}"), BASE),
    (lines(fmt="{abbr}: {value}"), BASE),
    (lines(fmt="{name} ({abbr}): {value}"), BASE),
    (lines(names=NAMES[:4] + ["AI-Specific Communication Quality (LLMness)"]), BASE),
    (lines(names=NAMES[:4] + ["**AI-Specific Communication Quality (LLMness)**"]), BASE),
    (lines(names=[n.replace("&", "and") for n in NAMES]), BASE),
    (lines(names=[n.lower() for n in NAMES]), BASE),
    ("Here are my ratings.\n\n" + lines() + "\n\nOverall the therapist was adequate.", BASE),
    ("\n".join(f"{i}. {n}: {_g(BASE[a])}" for i, (n, a) in enumerate(zip(NAMES, AXES), 1)), BASE),
    (lines(fmt="{name}: {value} (solid but formulaic)"), BASE),
    # a label followed by prose, then the score on a later label line
    ("Clinical Accuracy & Competence: the therapist matched interventions well.\n" + lines(), BASE),
    (lines() + "\n" + lines(), BASE),  # exact duplicates agree
    (lines(values={"CAC": 1, "EPC": 6, "AR": 1.5, "TRA": 5.25, "ASCQ": 6.0}),
     {"CAC": 1.0, "EPC": 6.0, "AR": 1.5, "TRA": 5.25, "ASCQ": 6.0}),
    (lines(names=NAMES[:4] + ["AI Specific Communication Quality"]), BASE),
]


@pytest.mark.parametrize("reply,expected", VALID, ids=[f"valid{i}" for i in range(len(VALID))])
def test_valid_replies_parse_exactly(reply, expected):
    assert parse_judge_reply(reply) == expected


def _drop(i):
    return "\n".join(l for j, l in enumerate(lines().split("\n")) if j != i)


def _replace_value(axis, text):
    vals = dict(BASE)
    vals[axis] = text
    return lines(values=vals)


MALFORMED: list[tuple[str, str]] = []
# every axis missing in turn (5)
MALFORMED += [(_drop(i), "missing_axis") for i in range(5)]
# out of range, for each axis (5 x 5 = 25)
for axis in AXES:
    for bad in ("7", "0", "-1", "6.5", "10"):
        MALFORMED.append((_replace_value(axis, bad), "out_of_range"))
# non-numeric scores (5 x 3 = 15)
for axis in AXES:
    for bad in ("N/A", "four", "high"):
        MALFORMED.append((_replace_value(axis, bad), "no_number"))
# ambiguous: ranges, two numbers, conflicting duplicates (5 x 2 + 5 = 15)
for axis in AXES:
    MALFORMED.append((_replace_value(axis, "3-4"), "ambiguous"))
    MALFORMED.append((_replace_value(axis, "3 or 4"), "ambiguous"))
    MALFORMED.append((lines() + f"\n{AXES[axis]}: {BASE[axis] % 5 + 1:g}", "ambiguous"))
# assorted
MALFORMED += [
    ("", "empty"),
    ("   \n\n ", "empty"),
    ("I cannot rate this conversation.", "missing_axis"),
    ("3\n4\n5\n3\n2", "missing_axis"),
    ("Clinical Accuracy & Competence\n3\nEthical & Professional Conduct\n4", "missing_axis"),
    ('{"CAC": 3, "EPC": 4, "AR": 3, "TRA": 4, "ASCQ": 2}', "missing_axis"),
    (lines().replace("Therapeutic Relationship & Alliance", "Therapeutic Alliance"), "missing_axis"),
    ("Scores: 3, 4, 3, 4, 2", "missing_axis"),
]


@pytest.mark.parametrize("reply,cause", MALFORMED, ids=[f"bad{i}" for i in range(len(MALFORMED))])
def test_malformed_replies_raise_with_cause(reply, cause):
    with pytest.raises(ParseError) as info:
        parse_judge_reply(reply)
    assert info.value.cause == cause
    assert info.value.reply == reply


def test_corpus_sizes():
    assert len(VALID) >= 20 and len(MALFORMED) >= 60


def test_parse_error_message_names_axis():
    with pytest.raises(ParseError, match="Ethical & Professional Conduct.*outside 1-6"):
        parse_judge_reply(_replace_value("EPC", "7"))


def test_render_conversation_tags_and_roles():
    text = render_conversation([
        {"role": "system", "content": "hidden"},
        {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": " Hi, how are you? "},
    ])
    assert text == "<member>\nHello\n</member>\n\n<therapist>\nHi, how are you?\n</therapist>"
    with pytest.raises(ValueError, match="role"):
        render_conversation([{"role": "tool", "content": "x"}])


@pytest.mark.parametrize("reply", [
    "Clinical Accuracy & Competence" + " " * 50_000 + "x",
    "criterion 1 " * 5_000,
    "AR (" * 20_000,
    "Clinical " + " " * 50_000 + "Accuracy",
    "AI" + "-" * 50_000 + "Specific",
    "- " * 25_000,
], ids=["spaces-after-label", "criterion-prefixes", "open-parens", "spaces-in-label", "dashes", "bullets"])
def test_pathological_replies_are_rejected_in_linear_time(reply):
    import time

    start = time.thread_time()  # CPU time of this thread: other processes' load does not count
    with pytest.raises(ParseError):
        parse_judge_reply(reply)
    # the old backtracking pattern took > 10 s on the first input
    assert time.thread_time() - start < 1.0
