"""Malformed judge replies through every parser (the vendored corpus file, replies lifted from it
into the JSON and axis-line formats, and seeded generated replies); a *silent misparse* is a
malformed reply that yields a value."""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ._common import CORPUS_FILE

SUMM = ["relevance", "coherence", "fluency", "consistency", "overall"]
MTB = ["score", "criteria_scores.helpfulness", "criteria_scores.correctness",
       "criteria_scores.depth", "criteria_scores.clarity"]
AX = ["Clinical Accuracy & Competence", "Ethical & Professional Conduct", "Assessment & Response",
      "Therapeutic Relationship & Alliance", "AI-Specific Communication Quality"]

PARSERS = ("parse_score", "parse_json_scores", "parse_axis_lines", "mindeval.parse_judge_reply")
_FMT_OF = {"parse_score": "number", "parse_json_scores": "json", "parse_axis_lines": "axes"}



# =============================================================================== corpus
@dataclass(frozen=True)
class CorpusCase:
    """One malformed reply for one parser, with the cause a strict parser must give."""

    parser: str
    reply: Any
    expected_cause: str
    scale: str = "0-10"
    fractional: bool = False
    keys: tuple[str, ...] | None = None
    origin: str = "hand"  # "hand" (vendored file), "lifted" (file reply in another format), "generated"
    category: str = ""


@dataclass
class CorpusOutcome:
    case: CorpusCase
    value: Any  # what the parser returned (a silent misparse) or None
    cause: str | None
    message: str

    @property
    def silent(self) -> bool:
        return self.cause is None

    @property
    def right_cause(self) -> bool:
        return self.cause == self.case.expected_cause


@dataclass
class CorpusReport:
    """Totals of :func:`run_corpus`: silent misparses, wrong causes, failures without a named cause."""

    total: int
    by_parser: dict[str, int]
    by_origin: dict[str, int]
    silent_misparses: list[CorpusOutcome]
    wrong_cause: list[CorpusOutcome]
    unnamed: list[CorpusOutcome]  # failures whose cause/message do not name the cause

    @property
    def ok(self) -> bool:
        return not (self.silent_misparses or self.wrong_cause or self.unnamed)


def _scale(name: str, fractional: bool):
    from pytest_judgerel.scales import Scale

    s = Scale.parse(name)
    return Scale(s.low, s.high, s.step, fractional=fractional)


def _render(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def _file_rows() -> list[dict]:
    return [json.loads(line) for line in CORPUS_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]


def _valid_axis_value(scale) -> str:
    return _render(scale.low)


def _lift(rows: list[dict]) -> list[CorpusCase]:
    """Number-format replies of the file placed as one value of a JSON object / one axis line.

    The JSON parser reads string values and the axis parser the text after the colon with the
    single-number rules, so the expected cause carries over (blank -> not_a_number / no_number).
    Replies whose characters would change the surrounding structure (braces, fences, think tags,
    newlines for axis lines) are not lifted.
    """
    out: list[CorpusCase] = []
    for n, row in enumerate(rows):
        reply = row["reply"]
        if row["fmt"] != "number" or not isinstance(reply, str):
            continue
        if any(t in reply for t in ("{", "}", "```", "<think", "</think")):
            continue
        sc = _scale(row["scale"], row["fractional"])
        cause = row["expected_cause"]
        blank = not reply.strip()
        # JSON: one SummEval key carries the reply as a string
        values: dict[str, Any] = {k: sc.low for k in SUMM}
        bad_key = SUMM[n % len(SUMM)]
        values[bad_key] = reply
        out.append(CorpusCase("parse_json_scores", json.dumps(values), "not_a_number" if blank else cause,
                              row["scale"], row["fractional"], tuple(SUMM), "lifted", row["category"]))
        # axis lines: one axis line carries the reply after the colon
        if "\n" in reply or "\r" in reply:
            continue
        bad_axis = n % len(AX)
        lines = [f"{a}: {reply}" if i == bad_axis else f"{a}: {_valid_axis_value(sc)}" for i, a in enumerate(AX)]
        out.append(CorpusCase("parse_axis_lines", "\n".join(lines), "no_number" if blank else cause,
                              row["scale"], row["fractional"], tuple(AX), "lifted", row["category"]))
    return out


# ------------------------------------------------------------------ seeded generators
GEN_SCALES = [("0-5", False), ("0-10", False), ("0-100", False), ("1-5", False), ("1-6", False),
              ("1-10", False), ("0-5", True), ("0-10", True), ("1-6", True), ("0-100", True)]
_WORDS = ["N/A", "none", "high", "low", "excellent", "four", "seven", "?", "TBD", "n.a.", "(no score)",
          "unsure", "similar", "not applicable", "—", "good overall", "n/a", "null", "NaN", "inf"]
_AMBIGUOUS_TEMPLATES = ["{a} or {b}", "Score: {a}. Actually {b}", "{a}\n{b}", "{a}, maybe {b}",
                        "I'd say {a}; final answer {b}", "**{a}** (or {b})", "{a} and then {b}",
                        "Rating: {a}\nRevised rating: {b}"]
_SINGLE_TEMPLATES = ["{v}", "Score: {v}", "**{v}**", "Rating: {v}.", "`{v}`", "I give it {v}"]


def _on_scale_points(sc, rng: random.Random, k: int) -> list[float]:
    if sc.fractional:
        return [round(rng.uniform(sc.low, sc.high), rng.choice([0, 1, 2])) for _ in range(k)]
    return [rng.choice(sc.points) for _ in range(k)]


def _two_different(sc, rng: random.Random) -> tuple[float, float]:
    """Two distinct on-scale values (b differs from a by at least one step / 0.5)."""
    (a,) = _on_scale_points(sc, rng, 1)
    if sc.fractional:
        b = round(a + rng.uniform(0.5, sc.range / 2), 1)
        b = b if b <= sc.high else round(a - rng.uniform(0.5, sc.range / 2), 1)
        return a, b
    b = rng.choice([p for p in sc.points if not math.isclose(p, a)])
    return a, b


def gen_number_case(rng: random.Random) -> CorpusCase:
    """A malformed single-number reply whose cause follows from how it was built."""
    name, frac = rng.choice(GEN_SCALES)
    sc = _scale(name, frac)
    kinds = ["ambiguous", "out_of_range", "bad_denominator", "no_number", "empty"]
    if not sc.fractional:
        kinds.append("off_grid")
    kind = rng.choice(kinds)
    if kind == "ambiguous":
        a, b = _two_different(sc, rng)
        reply = rng.choice(_AMBIGUOUS_TEMPLATES).format(a=_render(a), b=_render(b))
    elif kind == "out_of_range":
        k = rng.randint(1, 50)
        v = sc.high + k * sc.step if (rng.random() < 0.6 or sc.low - k * sc.step < -1000) else sc.low - k * sc.step
        reply = rng.choice(_SINGLE_TEMPLATES).format(v=_render(v))
    elif kind == "off_grid":
        steps = rng.randint(0, int(round(sc.range / sc.step)) - 1)
        v = sc.low + (steps + rng.choice([0.5, 0.25, 0.1])) * sc.step
        reply = rng.choice(_SINGLE_TEMPLATES).format(v=_render(round(v, 4)))
    elif kind == "bad_denominator":
        (v,) = _on_scale_points(sc, rng, 1)
        d = rng.choice([d for d in (3, 4, 6, 7, 9, 20, 50, 1000) if d != sc.high])
        reply = rng.choice(["{v}/{d}", "{v} / {d}", "{v} out of {d}", "Score: **{v}/{d}**"]).format(
            v=_render(v), d=d)
    elif kind == "no_number":
        alphabet = "abcdefghijklmnopqrstuvwxyz ABCXYZ.,;:!?'\"()[]*`#-_"
        reply = rng.choice([rng.choice(_WORDS), "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))])
        if not reply.strip():
            reply = rng.choice(_WORDS) + reply
    else:
        reply = "".join(rng.choice(" \t\n\r\u00a0") for _ in range(rng.randint(0, 6)))
    return CorpusCase("parse_score", reply, kind, name, frac, None, "generated", kind)


def _summ_object(sc, rng: random.Random) -> dict:
    return {k: v for k, v in zip(SUMM, _on_scale_points(sc, rng, len(SUMM)))}


def _mtb_object(sc, rng: random.Random) -> dict:
    vals = _on_scale_points(sc, rng, 5)
    return {"score": vals[0], "criteria_scores": dict(zip(["helpfulness", "correctness", "depth", "clarity"], vals[1:]))}


def gen_json_case(rng: random.Random) -> CorpusCase:
    """A malformed JSON reply (SummEval or MT-Bench keys, fractional 0-5 as in seed 001 Tables 11-12)."""
    name, frac = "0-5", True
    sc = _scale(name, frac)
    mtb = rng.random() < 0.4
    keys = MTB if mtb else SUMM
    obj = _mtb_object(sc, rng) if mtb else _summ_object(sc, rng)
    leaf_paths = [k.split(".") for k in keys]
    path = rng.choice(leaf_paths)
    parent = obj
    for p in path[:-1]:
        parent = parent[p]
    kind = rng.choice(["missing_key", "not_a_number", "bad_json", "out_of_range", "ambiguous"])
    if kind == "missing_key":
        parent.pop(path[-1])
        text = json.dumps(obj)
    elif kind == "not_a_number":
        parent[path[-1]] = rng.choice([None, True, False, [], {}, [3], {"value": 3}, "", "   "])
        text = json.dumps(obj)
    elif kind == "out_of_range":
        parent[path[-1]] = rng.choice([5.5, 6, 7.25, 10, 100, -1, -0.5, 1e6])
        text = json.dumps(obj)
    elif kind == "ambiguous":  # the same key twice with different values
        old = parent[path[-1]]
        other = 5.0 - old if not math.isclose(old, 2.5) else 4.0
        full = json.dumps(obj)
        needle = json.dumps(path[-1]) + ": " + json.dumps(old)
        text = full.replace(needle, needle + ", " + json.dumps(path[-1]) + ": " + json.dumps(other), 1)
    else:
        full = json.dumps(obj)
        how = rng.choice(["truncate", "equals", "single_quotes", "trailing_comma", "nan"])
        if how == "truncate":
            text = full[: rng.randint(1, len(full) - 2)]
        elif how == "equals":
            text = full.replace(":", " =", 1)
        elif how == "single_quotes":
            text = full.replace('"', "'")
        elif how == "trailing_comma":
            text = full[:-1] + ",}"
        else:
            needle = json.dumps(path[-1]) + ": "
            i = full.index(needle) + len(needle)
            j = min(x for x in (full.find(",", i), full.find("}", i)) if x >= 0)
            text = full[:i] + rng.choice(["NaN", "Infinity", "-Infinity"]) + full[j:]
    if rng.random() < 0.3 and kind != "bad_json":
        text = f"```json\n{text}\n```"
    return CorpusCase("parse_json_scores", text, kind, name, frac, tuple(keys), "generated", kind)


def _axis_lines(values: dict[str, str], names: Sequence[str] = AX, fmt: str = "{name}: {value}") -> str:
    return "\n".join(fmt.format(name=n, value=values[n]) for n in names if n in values)


def gen_axes_case(rng: random.Random) -> CorpusCase:
    """A malformed ``Axis: score`` reply for the generic axis parser."""
    name, frac = rng.choice([("1-6", True), ("1-6", False), ("0-5", True), ("1-5", False), ("0-10", False)])
    sc = _scale(name, frac)
    values = {a: _render(v) for a, v in zip(AX, _on_scale_points(sc, rng, len(AX)))}
    axis = rng.choice(AX)
    fmt = rng.choice(["{name}: {value}", "**{name}**: {value}", "- {name}: {value}", "{name} = {value}"])
    kind = rng.choice(["missing_axis", "ambiguous", "out_of_range", "no_number", "duplicate"])
    if kind == "missing_axis":
        values.pop(axis)
    elif kind == "ambiguous":
        a, b = _two_different(sc, rng)
        values[axis] = rng.choice(["{a} or {b}", "{a}, maybe {b}", "{a} (was {b})"]).format(a=_render(a), b=_render(b))
    elif kind == "out_of_range":
        values[axis] = _render(rng.choice([sc.high + rng.randint(1, 20) * sc.step, sc.low - rng.randint(1, 5) * sc.step]))
    elif kind == "no_number":
        values[axis] = rng.choice([w for w in _WORDS if w not in ("—",)])
    text = _axis_lines(values, fmt=fmt)
    if kind == "duplicate":
        old = float(values[axis])
        new = next(p for p in _on_scale_points(sc, rng, 20) + [sc.low, sc.high] if not math.isclose(p, old))
        text += "\n" + fmt.format(name=axis, value=_render(new))
        kind = "ambiguous"
    if rng.random() < 0.3:
        text = "Here are my scores.\n\n" + text + "\n\nThe therapist was adequate."
    return CorpusCase("parse_axis_lines", text, kind, name, frac, tuple(AX), "generated", kind)


MINDEVAL_ABBR = ["CAC", "EPC", "AR", "TRA", "ASCQ"]


def gen_mindeval_case(rng: random.Random) -> CorpusCase:
    """A malformed MindEval judge reply (five axes on 1-6, seed 004 Figure 11)."""
    valid = [1, 2, 3, 4, 5, 6, 2.5, 3.75, 4.5, 5.25, 1.5]
    values = {a: _render(rng.choice(valid)) for a in AX}
    axis = rng.choice(AX)
    label = rng.choice(["full", "abbr", "bold", "bullet"])
    kind = rng.choice(["missing_axis", "ambiguous", "out_of_range", "no_number", "duplicate", "empty", "misspelled"])
    if kind == "missing_axis":
        values.pop(axis)
    elif kind == "misspelled":
        v = values.pop(axis)
        values[axis.replace("a", "", 1).replace("&", "+")] = v
        kind = "missing_axis"
    elif kind == "ambiguous":
        a, b = rng.sample([1, 2, 3, 4, 5, 6], 2)
        values[axis] = rng.choice(["{a}-{b}", "{a} or {b}", "{a}, {b}", "{a} (previously {b})", "{a}/5",
                                   "{a} out of 10", "{a} to {b}"]).format(a=a, b=b)
    elif kind == "out_of_range":
        v = rng.choice([0, 0.5, 0.99, 6.01, 6.5, 7, 10, 100, round(rng.uniform(6.01, 1000), 2),
                        round(rng.uniform(-100, 0.99), 2)])
        values[axis] = _render(v)
    elif kind == "no_number":
        values[axis] = rng.choice(_WORDS[:12])
    names = list(values)

    def line(n: str, v: str) -> str:
        shown = n
        if label == "abbr" and n in AX:
            shown = MINDEVAL_ABBR[AX.index(n)]
        elif label == "bold":
            shown = f"**{n}**"
        elif label == "bullet":
            shown = f"- {n}"
        return f"{shown}: {v}"

    text = "\n".join(line(n, values[n]) for n in names)
    if kind == "duplicate":
        old = float(values[axis])
        new = next(v for v in valid if not math.isclose(v, old))
        text += "\n" + line(axis, _render(new))
        kind = "ambiguous"
    if kind == "empty":
        text = "".join(rng.choice(" \t\n") for _ in range(rng.randint(0, 5)))
    elif rng.random() < 0.3:
        text = "My assessment of the session:\n\n" + text + "\n\nOverall adequate."
    return CorpusCase("mindeval.parse_judge_reply", text, kind, "1-6", True, tuple(MINDEVAL_ABBR), "generated", kind)


MINDEVAL_HAND: list[tuple[str, str]] = [
    ("", "empty"), ("   \n ", "empty"),
    ("I cannot rate this conversation.", "missing_axis"),
    ("3\n4\n5\n3\n2", "missing_axis"),
    ('{"CAC": 3, "EPC": 4, "AR": 3, "TRA": 4, "ASCQ": 2}', "missing_axis"),
    ("Scores: 3, 4, 3, 4, 2", "missing_axis"),
    ("Clinical Accuracy & Competence\n3\nEthical & Professional Conduct\n4", "missing_axis"),
    ("| Criterion | Score |\n|---|---|\n| CAC | 3 |", "missing_axis"),
]

GENERATORS: dict[str, Callable[[random.Random], CorpusCase]] = {
    "parse_score": gen_number_case,
    "parse_json_scores": gen_json_case,
    "parse_axis_lines": gen_axes_case,
    "mindeval.parse_judge_reply": gen_mindeval_case,
}


def malformed_corpus(seed: int = 20261126, per_parser: int = 500) -> list[CorpusCase]:
    """At least ``per_parser`` malformed replies for each parser: the vendored file
    (``tests/data/malformed_replies.jsonl``), file replies lifted into the JSON/axis formats,
    hand-written MindEval replies, then seeded generated replies up to the target."""
    rows = _file_rows()
    cases: list[CorpusCase] = []
    for row in rows:
        parser = {"number": "parse_score", "json": "parse_json_scores", "axes": "parse_axis_lines"}[row["fmt"]]
        cases.append(CorpusCase(parser, row["reply"], row["expected_cause"], row["scale"], row["fractional"],
                                tuple(row["keys"]) if row["keys"] else None, "hand", row["category"]))
    cases += _lift(rows)
    cases += [CorpusCase("mindeval.parse_judge_reply", r, c, "1-6", True, tuple(MINDEVAL_ABBR), "hand", c)
              for r, c in MINDEVAL_HAND]
    rng = random.Random(seed)
    counts = Counter(c.parser for c in cases)
    for parser in PARSERS:
        need = max(per_parser - counts[parser], per_parser // 5)  # always some generated replies
        cases += [GENERATORS[parser](rng) for _ in range(need)]
    return cases


def parse_case(case: CorpusCase) -> CorpusOutcome:
    """Run one case through its parser; a returned value is recorded as a silent misparse."""
    from pytest_judgerel.errors import ParseError

    try:
        if case.parser == "mindeval.parse_judge_reply":
            from pytest_judgerel.mindeval.judge import parse_judge_reply

            value = parse_judge_reply(case.reply)
        else:
            from pytest_judgerel.judging import parsing

            sc = _scale(case.scale, case.fractional)
            if case.parser == "parse_score":
                value = parsing.parse_score(case.reply, sc)
            elif case.parser == "parse_json_scores":
                value = parsing.parse_json_scores(case.reply, list(case.keys), sc)
            else:
                value = parsing.parse_axis_lines(case.reply, list(case.keys), sc)
    except ParseError as exc:
        return CorpusOutcome(case, None, exc.cause, str(exc))
    return CorpusOutcome(case, value, None, "")


def try_parse_case(case: CorpusCase) -> CorpusOutcome:
    """The non-raising entry point (:func:`pytest_judgerel.judging.parsing.try_parse`) on a core-parser case."""
    from pytest_judgerel.judging.parsing import try_parse

    out = try_parse(case.reply, _FMT_OF[case.parser], _scale(case.scale, case.fractional),
                    list(case.keys) if case.keys else None)
    if out.ok:
        return CorpusOutcome(case, out.value if out.value is not None else out.values, None, "")
    return CorpusOutcome(case, None, out.failure.cause, out.failure.message)


def names_its_cause(outcome: CorpusOutcome) -> bool:
    """A failure names its cause: a documented cause code, and a message that states it
    (core parsers prefix it; MindEval messages name the axis or the missing axes)."""
    from pytest_judgerel.judging.parsing import CAUSES

    if outcome.cause not in CAUSES or not outcome.message.strip():
        return False
    if outcome.case.parser == "mindeval.parse_judge_reply":
        if outcome.cause == "empty":
            return "empty" in outcome.message
        if outcome.cause == "missing_axis":
            return "no score for" in outcome.message
        return any(a in outcome.message for a in AX)
    return outcome.message.startswith(outcome.cause + ":") and "reply was" in outcome.message


def run_corpus(cases: Sequence[CorpusCase] | None = None, *, with_try_parse: bool = True) -> CorpusReport:
    """Every case through its parser (and core cases through ``try_parse`` too)."""
    cases = list(cases) if cases is not None else malformed_corpus()
    outcomes = [parse_case(c) for c in cases]
    if with_try_parse:
        outcomes += [try_parse_case(c) for c in cases if c.parser in _FMT_OF]
    return CorpusReport(
        total=len(cases),
        by_parser=dict(Counter(c.parser for c in cases)),
        by_origin=dict(Counter(c.origin for c in cases)),
        silent_misparses=[o for o in outcomes if o.silent],
        wrong_cause=[o for o in outcomes if not o.silent and not o.right_cause],
        unnamed=[o for o in outcomes if not o.silent and not names_its_cause(o)],
    )
