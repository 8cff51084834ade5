"""Reliability probes shared by ``tests/test_robust_*.py`` and ``benchmarks/reliability_figures.py``.

Each probe runs a real code path of pytest-judgerel (parsers, Judge + LLMClient against the
fake OpenAI-compatible server, pytest-xdist runs, report writers, assertion helpers) and
returns a result dataclass with the figures the tests assert and the figures script prints.

Probes:

* :func:`malformed_corpus` / :func:`run_corpus` -- malformed judge replies through every parser
  (the vendored corpus file, replies lifted from it into the JSON and axis-line formats, and
  seeded generated replies); a *silent misparse* is a malformed reply that yields a value.
* :func:`fault_injection_run` -- a Judge run against a server failing 20% of requests.
* :func:`sigkill_resume_run` -- SIGKILL a judging subprocess midway, run again, count repeats.
* :func:`xdist_shared_cache_run` -- 8 xdist workers over one cache with overlapping keys.
* :func:`secrets_run` -- grep every file the plugin writes for the API keys in use.
* :func:`hostile_stats_run` -- NaN/inf/huge/constant/degenerate input through the assert helpers.
"""

from __future__ import annotations

import json
import math
import os
import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

ROOT = Path(__file__).resolve().parents[1]
CORPUS_FILE = ROOT / "tests" / "data" / "malformed_replies.jsonl"

SUMM = ["relevance", "coherence", "fluency", "consistency", "overall"]
MTB = ["score", "criteria_scores.helpfulness", "criteria_scores.correctness",
       "criteria_scores.depth", "criteria_scores.clarity"]
AX = ["Clinical Accuracy & Competence", "Ethical & Professional Conduct", "Assessment & Response",
      "Therapeutic Relationship & Alliance", "AI-Specific Communication Quality"]

PARSERS = ("parse_score", "parse_json_scores", "parse_axis_lines", "mindeval.parse_judge_reply")
_FMT_OF = {"parse_score": "number", "parse_json_scores": "json", "parse_axis_lines": "axes"}


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    env.setdefault("LITELLM_OFFLINE_MODE", "true")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


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
            from pytest_judgerel import parsing

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
    """The non-raising entry point (:func:`pytest_judgerel.parsing.try_parse`) on a core-parser case."""
    from pytest_judgerel.parsing import try_parse

    out = try_parse(case.reply, _FMT_OF[case.parser], _scale(case.scale, case.fractional),
                    list(case.keys) if case.keys else None)
    if out.ok:
        return CorpusOutcome(case, out.value if out.value is not None else out.values, None, "")
    return CorpusOutcome(case, None, out.failure.cause, out.failure.message)


def names_its_cause(outcome: CorpusOutcome) -> bool:
    """A failure names its cause: a documented cause code, and a message that states it
    (core parsers prefix it; MindEval messages name the axis or the missing axes)."""
    from pytest_judgerel.parsing import CAUSES

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


# =============================================================================== judge runs on the fake server
JUDGE_MODEL = "openai/robust-judge"
NUMBER_TEMPLATE = ("=== system\nYou rate sentence similarity.\n=== user\n"
                   "Rate the similarity of “{sentence1}” and “{sentence2}” on a scale from {min} to {max}. "
                   "Reply with a single number.\n")


def robust_items(n: int, offset: int = 0) -> list[dict]:
    """Distinct STS-like items (every item has its own prompt, hence its own request body)."""
    return [{"id": f"it{i}", "sentence1": f"Sentence number {i} about topic {i % 7}.",
             "sentence2": f"Another sentence {i * 3 % 11} on topic {i % 5}."} for i in range(offset, offset + n)]


def make_judge(url: str, cache_dir: str | os.PathLike, *, api_key: str = "sk-robust", max_attempts: int = 4,
               timeout: float = 10.0, max_concurrency: int = 16, cache_mode: str = "record", **judge_kw: Any):
    """A Judge (single-number template, scale 0-10 integer) on the fake server with its own client."""
    from pytest_judgerel import Judge
    from pytest_judgerel.llm import LLMClient, LLMSettings

    client = LLMClient(LLMSettings(cache_dir=str(cache_dir), cache_mode=cache_mode, max_concurrency=max_concurrency,
                                   max_attempts=max_attempts, timeout=timeout, backoff_base=0.01, backoff_max=0.2))
    judge_kw.setdefault("template", NUMBER_TEMPLATE)
    judge_kw.setdefault("scale", "0-10")
    judge_kw.setdefault("reask", False)
    return Judge(model=JUDGE_MODEL, api_base=url, api_key=api_key, client=client, **judge_kw)


def _cache_texts(cache_dir: str | os.PathLike) -> dict[str, Any]:
    from pytest_judgerel.llm.cache import open_backend

    backend = open_backend(Path(cache_dir))
    try:
        return {k: e.get("response", {}).get("text") for k, e in backend.iter_entries()}
    finally:
        backend.close()


@dataclass
class FaultRunResult:
    """A Judge run on a server that fails ``fault_rate`` of requests, against a clean run."""

    calls: int  # distinct judge calls (cache keys)
    upstream_requests: int  # requests the faulty server received
    faults_injected: int
    fault_kinds: dict[str, int]
    retries: int  # client-side retry count
    max_attempts_used: int
    max_attempts_allowed: int
    identical: bool  # same ratings (values and NaN pattern) as the clean run
    parse_failures: int
    cache_entries: int
    erroneous_cache_entries: int  # entries whose text is empty, not the clean answer, or an unknown key
    wall_time: float

    @property
    def retries_within_bounds(self) -> bool:
        return (self.retries == self.faults_injected and self.max_attempts_used <= self.max_attempts_allowed
                and self.upstream_requests == self.calls + self.faults_injected)


def fault_injection_run(n_items: int = 40, repeats: int = 2, fault_rate: float = 0.2, seed: int = 7,
                        kinds: Sequence[str] = ("429", "500", "timeout", "malformed", "empty"),
                        max_attempts: int = 8, latency: float = 0.005, workdir: str | None = None) -> FaultRunResult:
    """Rate ``n_items`` x ``repeats`` on a clean server and on one injecting faults
    (429 with Retry-After, 500, timeouts, malformed JSON, empty content); compare."""
    import numpy as np

    from pytest_judgerel.llm.fake_server import FakeLLMServer, FaultPlan

    work = Path(workdir or tempfile.mkdtemp(prefix="judgerel-faults-"))
    items = robust_items(n_items)
    with FakeLLMServer(latency=latency) as clean_srv:
        judge = make_judge(clean_srv.url, work / "clean-cache")
        clean = judge.rate(items, repeats=repeats)
        judge.client.close()
    # a "timeout" stalls 3 s; the client gives up after 1 s (far above a normal answer, even on a busy machine)
    plan = FaultPlan(rate=fault_rate, kinds=tuple(kinds), seed=seed, retry_after=0.02, timeout_sleep=3.0)
    with FakeLLMServer(latency=latency, faults=plan) as srv:
        # same api_base text as the clean run is not needed: results are compared by value
        judge = make_judge(srv.url, work / "faulty-cache", max_attempts=max_attempts, timeout=1.0)
        t0 = time.perf_counter()
        faulty = judge.rate(items, repeats=repeats)
        wall = time.perf_counter() - t0
        stats = judge.client.stats
        judge.client.close()
        log = list(srv.log)
    kinds_seen = Counter(e["fault"] for e in log if e["fault"] is not None)
    clean_texts = _cache_texts(work / "clean-cache")
    faulty_texts = _cache_texts(work / "faulty-cache")
    # keys differ only by api_base (the two servers' ports): compare entries by their request minus api_base
    from pytest_judgerel.llm.keys import key_from_fields
    from pytest_judgerel.llm.cache import open_backend

    def by_request(cache_dir):
        backend = open_backend(cache_dir)
        try:
            out = {}
            for _k, e in backend.iter_entries():
                fields_ = dict(e["request"])
                fields_["api_base"] = None
                out[key_from_fields(fields_)] = (e["response"].get("text"), int(e["response"].get("attempts", 1)))
            return out
        finally:
            backend.close()

    clean_by = by_request(work / "clean-cache")
    faulty_by = by_request(work / "faulty-cache")
    erroneous = sum(1 for k, (text, _a) in faulty_by.items()
                    if not isinstance(text, str) or not text.strip() or clean_by.get(k, (None,))[0] != text)
    max_used = max((a for _t, a in faulty_by.values()), default=0)
    identical = bool(np.array_equal(clean.values, faulty.values, equal_nan=True)) and len(clean_texts) == len(faulty_texts)
    return FaultRunResult(
        calls=n_items * repeats, upstream_requests=len(log), faults_injected=sum(kinds_seen.values()),
        fault_kinds=dict(kinds_seen), retries=stats.retries, max_attempts_used=max_used,
        max_attempts_allowed=max_attempts, identical=identical,
        parse_failures=len(faulty.parse_failures), cache_entries=len(faulty_texts),
        erroneous_cache_entries=erroneous + abs(len(faulty_by) - len(clean_by)), wall_time=wall)


# =============================================================================== SIGKILL and resume
_JUDGE_SCRIPT = r"""
import sys
sys.path.insert(0, sys.argv[4])
import _robust as R
url, cache_dir, n_items = sys.argv[1], sys.argv[2], int(sys.argv[3])
judge = R.make_judge(url, cache_dir, max_concurrency=int(sys.argv[5]))
ratings = judge.rate(R.robust_items(n_items), repeats=1)
judge.client.close()
print("RATED", int((~__import__("numpy").isnan(ratings.values)).sum()), flush=True)
"""


def _freezing_server_class():
    """A FakeLLMServer that stops answering (holds every later response) after ``freeze_after``
    successful responses, so the set of calls completed before a SIGKILL is known exactly."""
    import asyncio

    from pytest_judgerel.llm.fake_server import FakeLLMServer

    class FreezingServer(FakeLLMServer):
        def __init__(self, *args: Any, freeze_after: int | None = None, **kwargs: Any):
            super().__init__(*args, **kwargs)
            self.freeze_after = freeze_after
            self.answered: list[int] = []  # request indices whose 200 answer was fully sent
            self._thaw: asyncio.Event | None = None

        def thaw(self) -> None:
            self.freeze_after = None
            if self._loop is not None and self._thaw is not None:
                self._loop.call_soon_threadsafe(self._thaw.set)

        @property
        def frozen(self) -> bool:
            return self.freeze_after is not None and len(self.answered) >= self.freeze_after

        async def _send(self, writer, status, payload, extra_headers=None):
            if self.frozen:
                if self._thaw is None:
                    self._thaw = asyncio.Event()
                await self._thaw.wait()  # hold the answer until thawed (the client is dead by then)
            await super()._send(writer, status, payload, extra_headers)
            if status == 200 and isinstance(payload, dict) and str(payload.get("id", "")).startswith("chatcmpl-fake-"):
                self.answered.append(int(payload["id"].rsplit("-", 1)[1]))

    return FreezingServer


def _stored_entries(cache: Path) -> int:
    """Entries in the diskcache at ``cache`` (0 before the judging process created it)."""
    from pytest_judgerel.llm.cache import cache_stats

    return cache_stats(cache).entries if cache.is_dir() else 0


@dataclass
class SigkillResult:
    """Run 1 killed with SIGKILL after ``completed_run1`` answers; run 2 resumes from the cache."""

    calls: int
    completed_run1: int  # successful answers sent to run 1 before the kill
    requests_run1: int
    killed: bool
    requests_run2: int
    duplicates: int  # bodies answered successfully in run 1 and requested again in run 2
    run2_rated: int  # non-missing cells of run 2
    run2_returncode: int

    @property
    def ok(self) -> bool:
        return (self.killed and self.duplicates == 0 and self.run2_rated == self.calls
                and self.requests_run2 == self.calls - self.completed_run1 and self.run2_returncode == 0)


def sigkill_resume_run(n_items: int = 120, kill_after: int = 40, concurrency: int = 8, latency: float = 0.02,
                       workdir: str | None = None, settle: float = 60.0) -> SigkillResult:
    """Judge ``n_items`` in a subprocess; after ``kill_after`` answers the server holds the rest,
    the subprocess gets SIGKILL as soon as its cache holds every answer it received (at most
    ``settle`` s later: no fixed pause a loaded machine could outrun), then a second run against
    the same server and cache must not ask for any answered call again."""
    work = Path(workdir or tempfile.mkdtemp(prefix="judgerel-kill-"))
    cache = work / "cache"
    server = _freezing_server_class()(latency=latency, freeze_after=kill_after).start()
    try:
        cmd = [sys.executable, "-c", _JUDGE_SCRIPT, server.url, str(cache), str(n_items), str(ROOT / "benchmarks"),
               str(concurrency)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
        deadline = time.monotonic() + 120
        while not server.frozen and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        stored_by = time.monotonic() + settle
        while proc.poll() is None and time.monotonic() < stored_by and _stored_entries(cache) < len(server.answered):
            time.sleep(0.05)
        killed = proc.poll() is None
        if killed:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        with server._lock:
            log1 = list(server.log)
        answered = set(server.answered)
        completed_bodies = [json.dumps(log1[i]["body"], sort_keys=True) for i in answered]
        server.thaw()
        time.sleep(0.05)
        start = len(server.log)
        run2 = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=300)
        with server._lock:
            log2 = list(server.log)[start:]
    finally:
        server.stop()
    bodies2 = Counter(json.dumps(e["body"], sort_keys=True) for e in log2)
    duplicates = sum(bodies2[b] for b in set(completed_bodies))
    rated = 0
    for line in run2.stdout.splitlines():
        if line.startswith("RATED "):
            rated = int(line.split()[1])
    if run2.returncode != 0:
        sys.stderr.write(run2.stderr[-3000:])
    # completed_run1 may exceed kill_after by answers that were already being sent at the freeze
    return SigkillResult(calls=n_items, completed_run1=len(answered), requests_run1=len(log1), killed=killed,
                         requests_run2=len(log2), duplicates=duplicates, run2_rated=rated,
                         run2_returncode=run2.returncode)


# =============================================================================== pytest runs in a subprocess
ROBUST_TEMPLATE_LITERAL = repr(NUMBER_TEMPLATE)


def _run_pytest(project: Path, args: Sequence[str], env_extra: dict[str, str] | None = None,
                timeout: float = 600) -> subprocess.CompletedProcess:
    (project / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n", encoding="utf-8")
    env = _env()
    env.update(env_extra or {})
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    return subprocess.run([sys.executable, "-m", "pytest", *args], cwd=project, capture_output=True, text=True,
                          env=env, timeout=timeout)


_XDIST_TESTS = '''
import json, os, pytest

TEMPLATE = {template}
N_TESTS, WIDTH, STRIDE, REPEATS = {n_tests}, {width}, {stride}, {repeats}

def items_of(k):
    return [{{"id": f"it{{i}}", "sentence1": f"Sentence number {{i}} about topic {{i % 7}}.",
              "sentence2": f"Another sentence {{i * 3 % 11}} on topic {{i % 5}}."}}
            for i in range(k * STRIDE, k * STRIDE + WIDTH)]

@pytest.mark.parametrize("k", range(N_TESTS))
@pytest.mark.judge(template=TEMPLATE)
@pytest.mark.scale("0-10")
@pytest.mark.repeats(REPEATS)
def test_overlapping(judge, k):
    r = judge.with_(api_key="sk-xdist").rate(items_of(k))
    assert not r.parse_failures
    out = {{f"{{iid}}/{{rid}}": float(r.values[i, j]) for i, iid in enumerate(r.item_ids)
            for j, rid in enumerate(r.rater_ids)}}
    with open(os.path.join(os.environ["ROBUST_OUT"], f"t{{k}}.json"), "w") as fh:
        json.dump(out, fh)
'''


@dataclass
class XdistResult:
    """``workers`` xdist workers rating overlapping items through one cache and one server."""

    workers: int
    tests: int
    passed: int
    distinct_keys: int
    upstream_requests: int
    cache_entries: int
    corrupt_entries: int  # unreadable, key != hash(request), or text not a score on the scale
    inconsistent_cells: int  # the same (item, repeat) rated differently by two tests
    returncode: int
    output_tail: str = ""

    @property
    def ok(self) -> bool:
        return (self.returncode == 0 and self.passed == self.tests and self.corrupt_entries == 0
                and self.inconsistent_cells == 0 and self.upstream_requests == self.distinct_keys
                and self.cache_entries == self.distinct_keys)


def xdist_shared_cache_run(workers: int = 8, n_tests: int = 16, width: int = 12, stride: int = 4,
                           repeats: int = 2, latency: float = 0.05, workdir: str | None = None) -> XdistResult:
    """Run a generated suite with ``-n workers``; test k rates items [k*stride, k*stride+width)."""
    from pytest_judgerel.llm.fake_server import FakeLLMServer
    from pytest_judgerel.llm.cache import open_backend
    from pytest_judgerel.llm.keys import key_from_fields
    from pytest_judgerel.parsing import parse_score

    project = Path(workdir or tempfile.mkdtemp(prefix="judgerel-xdist-"))
    project.mkdir(parents=True, exist_ok=True)
    out_dir = project / "out"
    out_dir.mkdir(exist_ok=True)
    (project / "test_overlap.py").write_text(_XDIST_TESTS.format(
        template=ROBUST_TEMPLATE_LITERAL, n_tests=n_tests, width=width, stride=stride, repeats=repeats),
        encoding="utf-8")
    distinct_items = {i for k in range(n_tests) for i in range(k * stride, k * stride + width)}
    with FakeLLMServer(latency=latency) as srv:
        proc = _run_pytest(project, ["-n", str(workers), "-q", f"--judge-model={JUDGE_MODEL}",
                                     f"--judge-api-base={srv.url}", f"--judgerel-cache-dir={project / 'cache'}",
                                     "--judgerel-progress=false"],
                           {"ROBUST_OUT": str(out_dir)})
        upstream = srv.requests
    corrupt, entries = 0, 0
    backend = open_backend(project / "cache")
    try:
        for key, entry in backend.iter_entries():
            entries += 1
            try:
                ok = key == entry["key"] == key_from_fields(entry["request"])
                parse_score(entry["response"]["text"], "0-10")
            except Exception:
                ok = False
            corrupt += not ok
    finally:
        backend.close()
    seen: dict[str, float] = {}
    inconsistent = 0
    for f in sorted(out_dir.glob("t*.json")):
        for cell, v in json.loads(f.read_text()).items():
            if cell in seen and seen[cell] != v:
                inconsistent += 1
            seen.setdefault(cell, v)
    passed = sum(1 for _ in out_dir.glob("t*.json")) if proc.returncode == 0 else 0
    return XdistResult(workers=workers, tests=n_tests, passed=passed, distinct_keys=len(distinct_items) * repeats,
                       upstream_requests=upstream, cache_entries=entries, corrupt_entries=corrupt,
                       inconsistent_cells=inconsistent, returncode=proc.returncode,
                       output_tail=(proc.stdout + proc.stderr)[-3000:])


# =============================================================================== secrets
ENV_SECRET = "sk-secret-env-7f3a9c1e5b2d4f6a8c0e"
OPTION_SECRET = "sk-secret-opt-2b4d6f8a0c1e3a5b7d9f"

_SECRETS_TESTS = '''
import logging, os, pytest
from pytest_judgerel import assert_agreement, assert_icc_above

TEMPLATE = {template}
ITEMS = [{{"id": f"s{{i}}", "sentence1": f"Secret test sentence {{i}}.", "sentence2": f"Other {{i % 3}}."}}
         for i in range(10)]

@pytest.mark.judge(template=TEMPLATE)
@pytest.mark.scale("0-10")
@pytest.mark.repeats(2)
def test_env_key_passes(judge):
    r = judge.rate(ITEMS)
    print("rated", r.shape)
    logging.getLogger("user").warning("rated %s", r.shape)
    assert_icc_above(r, -1.0)

@pytest.mark.judge(template=TEMPLATE)
@pytest.mark.scale("0-10")
@pytest.mark.repeats(2)
def test_option_key_fails_threshold(judge):
    judge = judge.with_(api_key=os.environ["ROBUST_OPTION_KEY"])
    r = judge.rate(ITEMS[:6])
    humans = 10 - r.values  # a human panel that disagrees: the assertion fails and reports
    assert_agreement(r, humans, min_icc=0.9, scale="0-10")

@pytest.mark.judge(template=TEMPLATE, api_base="{broken_url}")
@pytest.mark.scale("0-10")
@pytest.mark.repeats(1)
def test_env_key_call_error(judge):
    judge.rate(ITEMS[:2])

@pytest.mark.judge(template=TEMPLATE, api_base="{broken_url}")
@pytest.mark.scale("0-10")
@pytest.mark.repeats(1)
def test_option_key_call_error(judge):
    judge = judge.with_(api_key=os.environ["ROBUST_OPTION_KEY"])
    judge.rate(ITEMS[:2])
'''


@dataclass
class SecretsResult:
    """Every file written by a pytest run with API keys in the environment and in a Judge."""

    files_scanned: int
    bytes_scanned: int
    leaks: list[tuple[str, str]]  # (file, which secret)
    outcomes: dict[str, int]
    returncode: int
    output_tail: str = ""

    @property
    def ok(self) -> bool:
        return not self.leaks and self.files_scanned > 0


def scan_for_secrets(root: Path, secrets: Sequence[str]) -> tuple[int, int, list[tuple[str, str]]]:
    """Grep every file under ``root`` (binary too, e.g. SQLite files) for each secret,
    also in UTF-16 and base64 spellings."""
    import base64

    needles = []
    for s in secrets:
        needles += [(s, s.encode()), (s, s.encode("utf-16-le")), (s, base64.b64encode(s.encode())[:24])]
    files = nbytes = 0
    leaks = []
    for p in sorted(root.rglob("*")):
        if not p.is_file():
            continue
        data = p.read_bytes()
        files += 1
        nbytes += len(data)
        for name, needle in needles:
            if needle in data:
                leaks.append((str(p.relative_to(root)), name))
    return files, nbytes, leaks


def secrets_run(workdir: str | None = None, showlocals: bool = False, tb: str = "auto") -> SecretsResult:
    """A pytest run (passing, failing and erroring judge tests; -l, --tb=long, DEBUG logs, JUnit
    with logs, JSON and HTML reports, history, cache) with ``OPENAI_API_KEY`` set and a Judge
    ``api_key``; its stdout/stderr are saved into the project and every file is grepped."""
    from pytest_judgerel.llm.fake_server import FakeLLMServer, FaultPlan

    project = Path(workdir or tempfile.mkdtemp(prefix="judgerel-secrets-"))
    project.mkdir(parents=True, exist_ok=True)
    with FakeLLMServer(latency=0.005) as srv, \
            FakeLLMServer(latency=0.0, faults=FaultPlan(rate=1.0, kinds=("500",))) as broken:
        (project / "test_secrets.py").write_text(_SECRETS_TESTS.format(
            template=ROBUST_TEMPLATE_LITERAL, broken_url=broken.url), encoding="utf-8")
        proc = _run_pytest(project, [
            *(["-l"] if showlocals else []), f"--tb={tb}", "-rA", "-v", "--log-level=DEBUG", "-o", "junit_logging=all",
            "-o", "log_cli=true", "--log-cli-level=DEBUG",
            "--junitxml=junit.xml", "--judgerel-json=report.json", "--judgerel-html=report.html",
            "--judgerel-history=history", f"--judge-model={JUDGE_MODEL}", f"--judge-api-base={srv.url}",
            f"--judgerel-cache-dir={project / 'cache'}", "--judgerel-max-attempts=2",
        ], {"OPENAI_API_KEY": ENV_SECRET, "ROBUST_OPTION_KEY": OPTION_SECRET, "LITELLM_LOG": "DEBUG"})
    (project / "stdout.txt").write_text(proc.stdout, encoding="utf-8")
    (project / "stderr.txt").write_text(proc.stderr, encoding="utf-8")
    files, nbytes, leaks = scan_for_secrets(project, [ENV_SECRET, OPTION_SECRET])
    outcomes = {}
    for word in ("passed", "failed", "error"):
        import re

        m = re.search(rf"(\d+) {word}", proc.stdout.splitlines()[-1] if proc.stdout.strip() else "")
        outcomes[word] = int(m.group(1)) if m else 0
    return SecretsResult(files_scanned=files, bytes_scanned=nbytes, leaks=leaks, outcomes=outcomes,
                         returncode=proc.returncode, output_tail=(proc.stdout + proc.stderr)[-3000:])


# =============================================================================== hostile statistics
@dataclass
class HostileOutcome:
    helper: str
    case: str
    kind: str  # "error" (clear exception), "failed" (threshold failure, finite value), "passed", "unclear"
    detail: str
    values: list[float] = field(default_factory=list)  # the statistics the helper reported

    @property
    def passing_nan(self) -> bool:
        return self.kind == "passed" and not all(math.isfinite(v) for v in self.values)


@dataclass
class HostileReport:
    outcomes: list[HostileOutcome]

    @property
    def passing_nan(self) -> list[HostileOutcome]:
        return [o for o in self.outcomes if o.passing_nan or (o.kind == "failed" and not all(
            math.isfinite(v) for v in o.values))]

    @property
    def unclear(self) -> list[HostileOutcome]:
        return [o for o in self.outcomes if o.kind == "unclear"]


def _reported_values(result: Any) -> list[float]:
    """The point statistics a helper's result carries (ICC values, nMAE)."""
    vals: list[float] = []
    if result is None:
        return vals
    for name in ("value", "nmae"):
        v = getattr(result, name, None)
        if isinstance(v, (int, float)):
            vals.append(float(v))
    for name in ("icc", "joint"):
        sub = getattr(result, name, None)
        if sub is not None and isinstance(getattr(sub, "value", None), (int, float)):
            vals.append(float(sub.value))
    for sub in (getattr(result, "pairwise", None) or {}).values():
        vals.append(float(sub.value))
    return vals


def hostile_matrices(seed: int = 3) -> dict[str, Any]:
    """Items x raters matrices on a 0-5 scale, each broken in one hostile way."""
    import numpy as np

    rng = np.random.default_rng(seed)
    truth = rng.uniform(0.5, 4.5, size=(24, 1))
    base = np.clip(np.round(truth + rng.normal(scale=0.4, size=(24, 3)), 1), 0, 5)
    cases: dict[str, Any] = {"clean": base}
    a = base.copy(); a[5, 1] = np.nan; cases["nan"] = a
    a = base.copy(); a[5, 1] = np.inf; cases["inf"] = a
    a = base.copy(); a[7, 0] = -np.inf; cases["-inf"] = a
    cases["all_nan"] = np.full_like(base, np.nan)
    cases["huge_offset_1e9"] = base + 1e9
    cases["huge_offset_1e15"] = base + 1e15
    cases["overflow_1e300"] = base * 1e300
    cases["constant_all"] = np.full_like(base, 3.0)
    cases["one_item"] = base[:1]
    cases["one_rater"] = base[:, :1]
    cases["empty"] = base[:0]
    cases["strings"] = np.array([["3", "x", "4"]] * 4, dtype=object)
    return cases


def _classify(helper: str, case: str, fn: Callable[[], Any]) -> HostileOutcome:
    import warnings

    from pytest_judgerel.assertions import JudgeReliabilityFailure
    from pytest_judgerel.errors import JudgerelError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            result = fn()
    except JudgeReliabilityFailure as exc:
        rec = exc.record or {}
        vals = [float(rec["value"])] if isinstance(rec.get("value"), (int, float)) else []
        return HostileOutcome(helper, case, "failed", str(exc).splitlines()[0][:160], vals)
    except (JudgerelError, ValueError) as exc:
        msg = str(exc)
        clear = bool(msg.strip()) and not msg.startswith("could not convert")
        return HostileOutcome(helper, case, "error" if clear else "unclear", f"{type(exc).__name__}: {msg[:160]}")
    except Exception as exc:  # noqa: BLE001 - anything else is an unclear failure
        return HostileOutcome(helper, case, "unclear", f"{type(exc).__name__}: {str(exc)[:160]}")
    return HostileOutcome(helper, case, "passed", "", _reported_values(result))


def hostile_stats_run() -> HostileReport:
    """Every hostile matrix through assert_icc_above, assert_scale_consistent, assert_agreement and
    assert_nmae_below (as the judge side, as the human side, and as one scale of three)."""
    from pytest_judgerel import assert_agreement, assert_icc_above, assert_nmae_below, assert_scale_consistent
    from pytest_judgerel.recording import recording

    cases = hostile_matrices()
    clean = cases["clean"]
    out: list[HostileOutcome] = []
    with recording():  # records go to a throwaway recorder
        for name, m in cases.items():
            out.append(_classify("assert_icc_above", name, lambda m=m: assert_icc_above(m, 0.0)))
            out.append(_classify("assert_icc_above(ci_low)", name,
                                 lambda m=m: assert_icc_above(m, -1.0, use="ci_low")))
            out.append(_classify("assert_scale_consistent", name, lambda m=m: assert_scale_consistent(
                {"0-5": m, "0-10": clean * 2, "0-100": clean * 20}, -1.0)))
            out.append(_classify("assert_agreement(judge)", name, lambda m=m: assert_agreement(
                m, clean[: len(m)] if len(m) else clean, min_icc=-1.0, max_nmae=1.0, scale="0-5")))
            out.append(_classify("assert_agreement(human)", name, lambda m=m: assert_agreement(
                clean[: len(m)] if len(m) else clean, m, min_icc=-1.0, max_nmae=1.0, scale="0-5")))
            out.append(_classify("assert_nmae_below", name, lambda m=m: assert_nmae_below(
                m, clean[: len(m)] if len(m) else clean, 1.0, scale="0-5")))
    return HostileReport(out)


# =============================================================================== fake server for benchmarks
def scale_responder(request: Any) -> str:
    """A deterministic integer on the scale named in the prompt ("from “L” to “H”" or "from L to H"),
    derived from sha256 of the request (the fake server's default digest)."""
    import hashlib
    import re

    text = " ".join(str(m.get("content", "")) for m in request.messages)
    m = re.search(r"from\s+“?(-?\d+)”?\s+to\s+“?(-?\d+)”?", text)
    lo, hi = (int(m.group(1)), int(m.group(2))) if m else (0, 10)
    body = json.dumps({"m": request.body.get("messages"), "model": request.body.get("model")}, sort_keys=True)
    h = int.from_bytes(hashlib.sha256(body.encode()).digest()[:4], "big")
    return str(lo + h % (hi - lo + 1))


def mindeval_responder(request: Any) -> str:
    """Five MindEval axis lines for a judge prompt; a short sentence for a patient/clinician turn."""
    import hashlib

    msgs = request.messages
    text = str(msgs[-1].get("content", "")) if msgs else ""
    h = hashlib.sha256(json.dumps(msgs, sort_keys=True).encode()).digest()
    if "<conversation>" in text and "AI-Specific Communication Quality" in text:
        return "\n".join(f"{a}: {1 + h[i] % 6}" for i, a in enumerate(AX))
    role = "patient" if msgs and msgs[0].get("role") == "system" and "backstory" in str(msgs[0].get("content", "")).lower() else "speaker"
    return f"I hear you ({role} {h[0]}). Let us talk about what happened this week."


RESPONDERS = {"default": None, "scale": scale_responder, "mindeval": mindeval_responder}


def start_server_process(latency: float, responder: str = "default") -> tuple[subprocess.Popen, str]:
    """A FakeLLMServer in its own process (so a benchmark's CPU figures are the client's alone)."""
    proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "serve", str(latency), responder],
                            stdout=subprocess.PIPE, text=True, env=_env())
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        raise RuntimeError(f"fake server did not start: {url!r}")
    return proc, url


def _serve(latency: float, responder: str) -> None:
    from pytest_judgerel.llm.fake_server import FakeLLMServer

    srv = FakeLLMServer(latency=latency, responder=RESPONDERS[responder]).start()
    print(srv.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        srv.stop()


def bare_litellm_cpu_per_call(url: str, n: int, concurrency: int, model: str = "openai/bench-judge",
                              api_key: str = "sk-bench", calls: Sequence[dict] | None = None) -> tuple[float, float]:
    """(CPU seconds per call, wall seconds) of a bare ``litellm.acompletion`` + semaphore + gather loop:
    the CPU floor of any litellm-based client on these calls (measured in a fresh event loop).

    ``calls``: the real calls as dicts of ``model``, ``messages`` and sampling parameters (the first
    ``n`` are replayed, cycling if fewer; a prefix is added to each prompt so the server sees new
    requests); default: ``n`` short prompts to ``model``."""
    import asyncio
    import warnings

    warnings.simplefilter("ignore")
    import litellm

    litellm.suppress_debug_info = True
    common = {"api_base": url, "api_key": api_key, "timeout": 60, "max_retries": 0, "num_retries": 0}
    if calls:
        specs = [dict(calls[i % len(calls)]) for i in range(n)]
    else:
        specs = [{"model": model, "messages": [{"role": "user", "content": f"bare loop prompt {i}: rate from 0 to 5"}]}
                 for i in range(n)]

    async def run() -> tuple[float, float]:
        sem = asyncio.Semaphore(concurrency)

        async def one(spec: dict) -> str:
            async with sem:
                r = await litellm.acompletion(**{k: v for k, v in spec.items() if v is not None}, **common)
                return r.choices[0].message.content

        await asyncio.gather(*(one(specs[i % len(specs)]) for i in range(concurrency)))  # warm-up
        t0, c0 = time.perf_counter(), time.process_time()
        out = await asyncio.gather(*(one(s) for s in specs))
        assert len(out) == n
        return (time.process_time() - c0) / n, time.perf_counter() - t0

    return asyncio.run(run())


def calls_from_cache(cache_dir: str | os.PathLike, limit: int | None = None) -> list[dict]:
    """The calls recorded in a cache as ``litellm.acompletion`` keyword dicts (for the bare loop)."""
    from pytest_judgerel.llm.cache import open_backend

    backend = open_backend(Path(cache_dir))
    out = []
    try:
        for _k, e in backend.iter_entries():
            r = e["request"]
            out.append({"model": r["model"], "messages": r["messages"], "temperature": r.get("temperature"),
                        "top_p": r.get("top_p"), "max_tokens": r.get("max_tokens"), "seed": r.get("seed")})
            if limit is not None and len(out) >= limit:
                break
    finally:
        backend.close()
    return out


def calls_from_interactions(interactions: Sequence[Any], judge: Any) -> list[dict]:
    """The calls a MindEval run sent, rebuilt from its conversations (for the bare loop without a cache)."""
    from pytest_judgerel.mindeval.interaction import _mirror
    from pytest_judgerel.mindeval.prompts import render_clinician_prompt, render_patient_prompt

    out = []
    for inter in interactions:
        s = inter.settings
        psamp, csamp = s.get("patient_sampling", {}), s.get("clinician_sampling", {})
        patient_sys = render_patient_prompt(inter.profile, s.get("patient_variant", "default"))
        clinician_sys = render_clinician_prompt(inter.profile, s.get("short_turns", False))
        turns = list(inter.turns)
        for i in range(1, len(turns)):
            hist = turns[:i]
            if turns[i].role == "assistant":
                msgs = [{"role": "system", "content": clinician_sys}] + [{"role": t.role, "content": t.content} for t in hist]
                model, samp = inter.clinician, csamp
            else:
                msgs = [{"role": "system", "content": patient_sys}] + _mirror(hist)
                model, samp = inter.patient_model, psamp
            out.append({"model": model, "messages": msgs, **{k: samp.get(k) for k in ("temperature", "top_p", "seed", "max_tokens")}})
        out.append({"model": judge.model, "messages": [{"role": "user", "content": judge.prompt(inter)}],
                    **judge.settings})
    return out


if __name__ == "__main__" and len(sys.argv) >= 2 and sys.argv[1] == "serve":
    _serve(float(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "default")


# ---------------------------------------------------------------------- profiling
def start_thread_profilers() -> tuple[Any, Any]:
    """cProfile on the caller thread and on the LLM loop thread, both timing thread CPU (not waits)."""
    import cProfile

    from pytest_judgerel.llm.runtime import runtime as _runtime

    profilers = (cProfile.Profile(time.thread_time), cProfile.Profile(time.thread_time))
    _runtime().loop.call_soon_threadsafe(profilers[1].enable)
    profilers[0].enable()
    return profilers


def stop_thread_profilers(profilers: tuple[Any, Any]) -> None:
    from pytest_judgerel.llm.runtime import runtime as _runtime

    profilers[0].disable()
    _runtime().loop.call_soon_threadsafe(profilers[1].disable)
    time.sleep(0.2)  # let the loop thread run the disable

