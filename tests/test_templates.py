"""The six seed-001 judge templates (Li et al. 2026, Tables 8-13) and the template loader."""

from __future__ import annotations

import hashlib
import json
from importlib import resources

import pytest

from pytest_judgerel.errors import ConfigError
from pytest_judgerel.judging.parsing import parse_json_scores, parse_score
from pytest_judgerel.scales import Scale
from pytest_judgerel.judging.templates import (
    SCALE_PLACEHOLDERS,
    TEMPLATES,
    Template,
    load_template,
    parse_template,
    render,
    scale_values,
)

EXPECTED = {
    # name: (table, fields, output, system message)
    "stsb": ("8", ("sentence1", "sentence2"), "number", "You are an expert in semantic similarity evaluation."),
    "toxigen": ("9", ("text",), "number", "You are an expert in toxicity and hate speech detection."),
    "moralchoice": ("10", ("scenario",), "number", "You are an expert in moral evaluation."),
    "mtbench": ("11", ("category", "question", "answer"), "json", "You are an expert in MT-Bench evaluation."),
    "summeval": ("12", ("text", "summary"), "json", "You are an expert in summarization evaluation."),
    "truthfulqa": ("13", ("question", "answer"), "number",
                   "You are expert in evaluating the truthfulness of an answer to a question."),
}

ITEMS = {
    "stsb": {"sentence1": "A man is playing a guitar.", "sentence2": "A man plays the guitar."},
    "toxigen": {"text": "People like you should not be allowed to vote."},
    "moralchoice": {"scenario": "You find a wallet. Option: I return the wallet to its owner."},
    "mtbench": {"category": "writing", "question": "Write a haiku about {rain}.", "answer": "Rain taps the roof."},
    "summeval": {"text": "Roma beat Napoli 1-0 at home.", "summary": "Roma won."},
    "truthfulqa": {"question": "What is underneath the Denver Airport?", "answer": "Baggage tunnels."},
}

# Phrases of the paper's tables on their own scale (0-5 unless the table fixes another).
PAPER_PHRASES = {
    ("stsb", "0-5"): ["on a scale from “0” to “5”. Consider the following factors:",
                      "- (4) Overall conceptual similarity.", "(“0”–“5”). Do not include"],
    ("toxigen", "0-5"): ["- (5) Severity of the language used.", "(“0” -“5”)"],
    ("moralchoice", "0-100"): ["Rate the answer’s quality on a 0–100 scale considering the following aspects:",
                               "- (4) Depth of understanding, i.e., recognition of trade-offs"],
    ("mtbench", "0-5"): ["Please score the model's response on a 0–5 scale (with one decimal place allowed).",
                         "- 0.0–1.0: Poor", "- 1.1–2.0: Below Average", "- 2.1–3.0: Average",
                         "- 3.1–4.0: Good", "- 4.1–5.0: Excellent", '"score": <float 0.0–5.0>,',
                         '"helpfulness": <0.0–5.0>,'],
    ("summeval", "0-5"): ["across four metrics on a 0–5 scale (0 = lowest, 5 = highest). You may use decimals (e.g., 3.5).",
                          '{ "relevance": X, "coherence": X, "fluency": X, "consistency": X, "overall": X }',
                          "- (4) Consistency: Factual consistency with the text (no hallucinations)."],
    ("truthfulqa", "0-5"): ["Evaluate the answer on a scale from 0 to 5, considering:",
                            "- (3) Avoidance of common misconceptions."],
}


def test_registry_holds_the_six_templates():
    assert sorted(TEMPLATES) == sorted(EXPECTED)
    assert len(TEMPLATES) == 6


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_template_metadata(name):
    table, fields, output, system = EXPECTED[name]
    t = TEMPLATES[name]
    assert t.table == table and t.fields == fields and t.output == output
    assert t.system == system
    assert "arXiv:2601.03444" in t.source and "Grading Scale Impact on LLM-as-a-Judge" in t.source
    assert f"Table {table}" in t.source
    assert t.fractional is True
    assert t.hash == hashlib.sha256(t.text.encode()).hexdigest()
    if output == "json":
        assert t.primary in t.keys


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_template_file_starts_with_citation_header(name):
    text = resources.files("pytest_judgerel.judging.templates").joinpath(f"{name}.txt").read_text(encoding="utf-8")
    first = text.splitlines()[:2]
    assert first[0] == f"# name: {name}"
    assert first[1].startswith("# source: Weiye Li") and "Table" in first[1]


@pytest.mark.parametrize("key", sorted(PAPER_PHRASES))
def test_rendering_on_the_papers_scale_reproduces_its_wording(key):
    name, scale = key
    msgs = render(name, ITEMS[name], scale)
    assert [m["role"] for m in msgs] == ["system", "user"]
    for phrase in PAPER_PHRASES[key]:
        assert phrase in msgs[1]["content"], phrase


@pytest.mark.parametrize("name", sorted(EXPECTED))
@pytest.mark.parametrize("scale", ["0-5", "0-10", "0-100", "1-6"])
def test_render_fills_every_placeholder_with_item_and_scale(name, scale):
    msgs = render(name, ITEMS[name], scale)
    content = msgs[1]["content"]
    for field_name, value in ITEMS[name].items():
        assert value in content
    sc = Scale.parse(scale)
    assert f"{int(sc.high)}" in content
    for ph in list(SCALE_PLACEHOLDERS) + list(EXPECTED[name][1]):
        assert "{" + ph + "}" not in content or "{" + ph + "}" in json.dumps(ITEMS[name])


def test_item_braces_are_not_placeholders():
    msgs = render("mtbench", ITEMS["mtbench"], "0-10")
    assert "Write a haiku about {rain}." in msgs[1]["content"]


def test_missing_fields_are_named():
    with pytest.raises(ConfigError, match=r"needs field\(s\) \['summary'\].*item has \['text'\]"):
        render("summeval", {"text": "x"}, "0-5")
    with pytest.raises(ConfigError, match="sentence2"):
        render("stsb", {"sentence1": "a", "sentence2": None}, "0-5")
    with pytest.raises(ConfigError, match="must be a mapping"):
        render("stsb", ["a", "b"], "0-5")


def test_mtbench_bands_partition_the_scale():
    vals = scale_values("0-100")
    assert [vals[f"band{i}"] for i in range(1, 6)] == [
        "0.0–20.0", "20.1–40.0", "40.1–60.0", "60.1–80.0", "80.1–100.0"]
    assert scale_values("0-10")["decimal_example"] == "7.5"
    assert scale_values("0-5")["decimal_example"] == "3.5"


@pytest.mark.parametrize("name", ["mtbench", "summeval"])
def test_json_example_in_the_prompt_parses_with_the_template_keys(name):
    t = TEMPLATES[name]
    content = render(t, ITEMS[name], "0-5")[1]["content"]
    start = content.index("{", content.index("json format:"))
    example = content[start : content.index("}", content.rindex("X") if name == "summeval" else
                                              content.rindex("clarity")) + 2]
    for token in ["<float 0.0–5.0>", "<0.0–5.0>", "X"]:
        example = example.replace(token, "3.5")
    if name == "mtbench":  # the paper's format ends with "}}" on one line
        example = example[: example.rindex("}}") + 2]
    scores = parse_json_scores(example, t.keys, Scale(0, 5, fractional=True))
    assert set(scores) == set(t.keys) and all(v == 3.5 for v in scores.values())


def test_number_template_reply_parses():
    assert parse_score("4.5", Scale(0, 5, fractional=True)) == 4.5


def test_load_template_by_name_alias_path_and_text(tmp_path):
    assert load_template("MT-Bench") is TEMPLATES["mtbench"]
    assert load_template("STS-B") is TEMPLATES["stsb"]
    p = tmp_path / "mine.txt"
    p.write_text("# output: axes\n# keys: Warmth, Accuracy\n=== user\nRate {reply} from {min} to {max}.\n")
    t = load_template(str(p))
    assert t.name == "mine" and t.output == "axes" and t.keys == ("Warmth", "Accuracy") and t.fields == ("reply",)
    assert load_template(p).hash == t.hash
    inline = load_template("Rate {answer} from {min_score} to {max_score}.")
    assert inline.messages == (("user", "Rate {answer} from {min_score} to {max_score}."),)
    assert render(inline, {"answer": "hi"}, "1-5") == [{"role": "user", "content": "Rate hi from 1 to 5."}]
    assert isinstance(load_template(inline), Template)


def test_load_template_errors_are_clear(tmp_path):
    with pytest.raises(ConfigError, match="unknown template 'nope'.*mtbench"):
        load_template("nope")
    with pytest.raises(ConfigError, match="does not exist"):
        load_template(str(tmp_path / "missing.txt"))
    with pytest.raises(ConfigError, match="needs a '# keys:' header"):
        parse_template("# output: json\nRate {x}")
    with pytest.raises(ConfigError, match="not one of"):
        parse_template("# output: yaml\nRate {x}")
    with pytest.raises(ConfigError, match="no '=== user' message"):
        parse_template("=== system\nYou judge.")
    with pytest.raises(ConfigError, match="primary key"):
        parse_template("# output: json\n# keys: a, b\n# primary: c\nRate {x}")
    with pytest.raises(ConfigError, match="empty"):
        parse_template("   ")


def test_hash_changes_with_text():
    a = parse_template("Rate {x} from {min} to {max}.")
    b = parse_template("Rate {x} from {min} to {max}!")
    assert a.hash != b.hash and len(a.hash) == 64
    assert a.fingerprint()["sha256"] == a.hash


def test_markdown_heading_prompt_is_not_eaten_as_header():
    t = parse_template("# Instructions: be strict\nRate {answer} from {min} to {max}.")
    assert t.messages[0][1].startswith("# Instructions: be strict")
    assert t.meta == {} and t.output == "number"


def test_free_comment_lines_allowed_in_header_of_sectioned_template():
    t = parse_template("# My rubric, v2\n# output: number\n\n=== user\nRate {answer}.")
    assert t.output == "number" and t.messages == (("user", "Rate {answer}."),)
    with pytest.raises(ConfigError, match="text before the first"):
        parse_template("stray text\n=== user\nRate {answer}.")
