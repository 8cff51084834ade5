"""Strict parsers that turn judge replies into scores, or a named failure.

Three output formats occur in the seeds:

* ``"number"``: a single score (seed 001, Tables 8-10 and 13: "Please provide only a
  single number as your response");
* ``"json"``: a JSON object with several criteria (seed 001, Table 11 MT-Bench with
  nested ``criteria_scores``, Table 12 SummEval);
* ``"axes"``: one ``Axis name: score`` line per axis (seed 004, MindEval judge).

A parser never guesses and never substitutes a default (MindEval's release turns every
unreadable axis into a silent 3).  A reply is either read exactly or fails with a
:class:`~pytest_judgerel.errors.ParseError` whose ``cause`` is one of :data:`CAUSES` and whose
message quotes the (truncated) reply.

A number (full rules in ``docs/templates.md``) may carry surrounding whitespace, a trailing
period, a label (``Score: 7``), markdown emphasis, ``<think>`` blocks (removed) and a denominator
equal to the scale maximum (``7/10``, ``7 out of 10``; any other is ``bad_denominator``).
Restatements of the scale's exact bounds (``0-10``, ``between 0 and 10``, ``out of 10``) are
removed first; every other number is a candidate: none is ``no_number``, two different values
(one value repeated counts once) are ``ambiguous``.  The value must lie in the scale
(``out_of_range``) and on its grid unless the scale is fractional (``off_grid``).  Words,
scientific notation and version-like strings are not numbers.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..errors import ParseError
from ..scales import Scale, ScaleLike, number_text
from .templates import SCORE_OUTPUTS

FORMATS = SCORE_OUTPUTS  # the score-bearing template outputs (one home: templates)

CAUSES = {
    "empty": "the reply is empty or only whitespace",
    "not_text": "the reply is not a string",
    "no_number": "no number was found where a score was expected",
    "ambiguous": "several different candidate scores were found",
    "out_of_range": "the score lies outside the scale bounds",
    "off_grid": "the score is between the allowed steps of a non-fractional scale",
    "bad_denominator": "a fraction N/D whose denominator is not the scale maximum",
    "bad_json": "no parseable JSON object",
    "missing_key": "a required JSON key is absent",
    "not_a_number": "a JSON value is not a number (null, bool, list, object, NaN)",
    "missing_axis": "a required 'Axis: score' line is absent",
}
"""Every ``cause`` a parse failure can carry, with its meaning."""

_QUOTE_LIMIT = 160

# A number: optional sign (only when not glued to a preceding word/digit, so the
# "-" of "7-8" is a separator), digits with an optional decimal part; not part of
# a word ("7th", "v2", "1e3") nor of a dotted sequence ("1.2.3").
_NUM = r"[-+]?(?:\d+(?:\.\d+)?|\.\d+)"
_NUM_RE = re.compile(rf"(?<![\w.]){_NUM}(?![\w]|\.\d)")
# a reply that is one number and blanks (most replies): no think block, markup, range or fraction to drop
_PLAIN_RE = re.compile(r"[ \t\r\n]*([-+]?\d+(?:\.\d+)?)[ \t\r\n]*")
_RANGE_RE = re.compile(
    rf"(?:between\s+(?<![\w.])({_NUM})\s+and\s+({_NUM})|(?<![\w.])({_NUM})\s*(?:-|–|—|to|\.\.)\s*({_NUM}))"
    rf"(?![\w]|\.\d)",
    re.IGNORECASE,
)
_FRACTION_RE = re.compile(
    rf"(?<![\w.])({_NUM})\s*(?:/|out\s+of)\s*({_NUM})(?![\w]|\.\d)", re.IGNORECASE
)
_DENOMINATOR_RE = re.compile(
    rf"(?:out\s+of\s+|scale\s+of\s+|/\s*)(?:a\s+(?:possible|maximum\s+of)\s+)?({_NUM})(?![\w]|\.\d)",
    re.IGNORECASE,
)
_LINE_LEAD_RE = re.compile(r"[ \t>*•-]*(?:\d+[.)][ \t]+)?[*_ \t]*")
_THINK_OPEN_RE = re.compile(r"<think(?:ing)?>", re.IGNORECASE)
_THINK_CLOSE_RE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)
_MARKUP_RE = re.compile(r"[*`#]+|(?<!\w)_+|_+(?!\w)")
_FENCE_RE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\n?(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class ParseFailure:
    """Why a reply could not be read: ``cause`` (a key of :data:`CAUSES`), a message, the raw reply."""

    cause: str
    message: str
    reply: str

    def to_dict(self) -> dict[str, str]:
        return {"cause": self.cause, "message": self.message, "reply": self.reply}


@dataclass(frozen=True)
class ParseOutcome:
    """Result of :func:`try_parse`: either ``ok`` with ``value``/``values`` or a ``failure``."""

    ok: bool
    fmt: str
    value: float | None = None
    values: Mapping[str, float] | None = None
    failure: ParseFailure | None = None

    @property
    def cause(self) -> str | None:
        return None if self.failure is None else self.failure.cause


# ---------------------------------------------------------------- helpers
def quote_reply(reply: Any, limit: int = _QUOTE_LIMIT) -> str:
    """``repr`` of the reply, truncated to ``limit`` characters with the remainder counted."""
    text = reply if isinstance(reply, str) else repr(reply)
    if len(text) <= limit:
        return repr(text)
    return repr(text[:limit]) + f"... (+{len(text) - limit} chars)"


def _fail(cause: str, detail: str, reply: Any) -> ParseError:
    raw = reply if isinstance(reply, str) else repr(reply)
    return ParseError(f"{cause}: {detail}; reply was {quote_reply(reply)}", reply=raw, cause=cause)


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def _to_float(token: str) -> float:
    """A number token of :func:`_clean` ed text (the typographic minus is already a hyphen)."""
    return float(token)


def _text_of(reply: Any) -> str:
    if reply is None:
        raise _fail("empty", "the judge returned no text (None)", "")
    if not isinstance(reply, str):
        raise _fail("not_text", f"expected a string reply, got {type(reply).__name__}", reply)
    if not reply.strip():
        raise _fail("empty", "the reply is empty", reply)
    return reply


def _strip_thinking(text: str) -> str:
    """Drop reasoning: closed ``<think>`` blocks, an unclosed one (to the end: a trace cut off
    by the token limit), and anything before a stray closing tag (provider ate the opening).
    One left-to-right scan, linear in the reply length."""
    kept: list[str] = []
    pos = 0
    opened = _THINK_OPEN_RE.search(text)
    while True:
        if opened is not None and opened.start() < pos:
            opened = _THINK_OPEN_RE.search(text, pos)
        closed = _THINK_CLOSE_RE.search(text, pos)
        if closed and (not opened or closed.start() < opened.start()):
            kept = []  # everything so far was reasoning whose opening tag is missing
            pos = closed.end()
            continue
        if not opened:
            kept.append(text[pos:])
            break
        kept.append(text[pos : opened.start()])
        closed = _THINK_CLOSE_RE.search(text, opened.end())
        if not closed:
            break
        pos = closed.end()
    return " ".join(kept)


def _clean(text: str) -> str:
    text = _strip_thinking(text)
    text = text.replace("−", "-")  # (a no-break space needs nothing: \s in the patterns matches it)
    return _MARKUP_RE.sub(" ", text)


def _check_on_scale(value: float, scale: Scale, reply: Any, where: str) -> float:
    at = f" for {where}" if where else ""
    if not math.isfinite(value) or value < scale.low - 1e-9 or value > scale.high + 1e-9:
        raise _fail(
            "out_of_range",
            f"score {number_text(value)}{at} is outside scale {scale.name} "
            f"({number_text(scale.low)}..{number_text(scale.high)})",
            reply,
        )
    if not scale.contains(value):
        raise _fail(
            "off_grid",
            f"score {number_text(value)}{at} is not a step of scale {scale.name} "
            f"(steps of {number_text(scale.step)}; use a fractional scale to allow it)",
            reply,
        )
    return float(value)


def _number_in(text: str, scale: Scale, reply: Any, where: str = "") -> float:
    """The one score in ``text`` (already free of think blocks), per the module rules."""
    at = f" for {where}" if where else ""
    body = _clean(text)

    def drop_scale_range(m: re.Match) -> str:
        lo_tok, hi_tok = (m.group(1), m.group(2)) if m.group(1) is not None else (m.group(3), m.group(4))
        lo, hi = _to_float(lo_tok), _to_float(hi_tok)
        return " " if _same(lo, scale.low) and _same(hi, scale.high) else m.group(0)

    body = _RANGE_RE.sub(drop_scale_range, body)

    bad: list[tuple[str, str]] = []  # (matched text, denominator)

    def fraction(m: re.Match) -> str:
        den = _to_float(m.group(2))
        if _same(den, scale.high):
            return f" {m.group(1)} "
        bad.append((m.group(0), m.group(2)))
        return " "

    body = _FRACTION_RE.sub(fraction, body)

    def denominator(m: re.Match) -> str:
        den = _to_float(m.group(1))
        if _same(den, scale.high):
            return " "
        if not m.group(0).lower().startswith("scale"):
            bad.append((m.group(0), m.group(1)))
        return m.group(0)

    body = _DENOMINATOR_RE.sub(denominator, body)
    if bad:
        raise _fail(
            "bad_denominator",
            f"{bad[0][0]!r}{at} is a fraction of {bad[0][1]}, "
            f"not of the scale maximum {number_text(scale.high)}",
            reply,
        )
    found: list[float] = []
    for tok in _NUM_RE.findall(body):
        v = _to_float(tok)
        if not any(_same(v, f) for f in found):
            found.append(v)
    if not found:
        raise _fail("no_number", f"no score found{at}", reply)
    if len(found) > 1:
        shown = ", ".join(number_text(v) for v in found[:6])
        raise _fail("ambiguous", f"{len(found)} different candidate scores{at} ({shown})", reply)
    return _check_on_scale(found[0], scale, reply, where)


# ---------------------------------------------------------------- public parsers
def parse_score(reply: Any, scale: ScaleLike) -> float:
    """Read a single-number reply (seed 001 Tables 8-10, 13); raise :class:`ParseError` otherwise."""
    sc = Scale.parse(scale)
    if type(reply) is str:
        plain = _PLAIN_RE.fullmatch(reply)
        if plain is not None:  # a bare number: what the rules of _number_in read from it, without their passes
            return _check_on_scale(float(plain.group(1)), sc, reply, "")
    text = _text_of(reply)
    return _number_in(text, sc, reply)


def _json_object_text(text: str, reply: Any) -> str:
    text = _strip_thinking(text)
    fences = [body for _lang, body in _FENCE_RE.findall(text) if "{" in body]
    if len(fences) > 1 and len({f.strip() for f in fences}) > 1:
        raise _fail("ambiguous", f"{len(fences)} different fenced JSON blocks", reply)
    if fences:
        text = fences[0]
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise _fail("bad_json", "no JSON object ({...}) found", reply)
    return text[start : end + 1]


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not allowed")


def _load_json(text: str, reply: Any) -> dict:
    """Decode ``text``, a ``{...}`` slice from :func:`_json_object_text` (so always an object)."""
    duplicates: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict:
        out: dict = {}
        for k, v in items:
            if k in out and out[k] != v:
                duplicates.append(k)
            out[k] = v
        return out

    try:
        obj = json.loads(text, object_pairs_hook=pairs, parse_constant=_reject_constant)
    except ValueError as exc:
        raise _fail("bad_json", f"invalid JSON ({exc})", reply) from None
    if duplicates:
        raise _fail("ambiguous", f"key {duplicates[0]!r} appears twice with different values", reply)
    return obj


def _norm_key(k: str) -> str:
    return re.sub(r"[\s_-]+", "_", str(k).strip().lower())


def _lookup(obj: Mapping, path: str, reply: Any) -> Any:
    cur: Any = obj
    walked: list[str] = []
    for part in path.split("."):
        walked.append(part)
        if not isinstance(cur, Mapping):
            raise _fail("missing_key", f"key {'.'.join(walked)!r} not found (parent is not an object)", reply)
        matches = [k for k in cur if k == part or _norm_key(k) == _norm_key(part)]
        values = {json.dumps(cur[k], sort_keys=True) for k in matches}
        if not matches:
            raise _fail("missing_key", f"key {'.'.join(walked)!r} not found (keys: {sorted(cur)})", reply)
        if len(values) > 1:
            raise _fail("ambiguous", f"keys {matches} all match {part!r} with different values", reply)
        cur = cur[matches[0]]
    return cur


def parse_json_scores(reply: Any, keys: Sequence[str], scale: ScaleLike) -> dict[str, float]:
    """Read a JSON reply holding one score per key (seed 001 Tables 11-12).

    ``keys`` may be dotted paths into nested objects (``"criteria_scores.depth"``);
    keys match exactly, else case- and separator-insensitively.  A fenced
    ```` ```json ```` block is preferred over surrounding text; text outside the
    object is ignored.  String values are read with the single-number rules.
    """
    sc = Scale.parse(scale)
    if not keys:
        raise ValueError("parse_json_scores needs at least one key")
    text = _text_of(reply)
    obj = _load_json(_json_object_text(text, reply), reply)
    out: dict[str, float] = {}
    for key in keys:
        raw = _lookup(obj, key, reply)
        if isinstance(raw, bool) or raw is None or isinstance(raw, (list, dict)):
            raise _fail("not_a_number", f"value of {key!r} is {json.dumps(raw)}", reply)
        if isinstance(raw, (int, float)):
            out[key] = _check_on_scale(float(raw), sc, reply, repr(key))
        else:  # a string: JSON has no other value type left
            if not raw.strip():
                raise _fail("not_a_number", f"value of {key!r} is an empty string", reply)
            out[key] = _number_in(raw, sc, reply, repr(key))
    return out


def _axis_name_re(axis: str) -> re.Pattern:
    words = re.split(r"[\s_]+", axis.strip())
    parts = [r"(?:&|and)" if w == "&" else re.escape(w) for w in words]
    return re.compile(r"[ \t_]+".join(parts), re.IGNORECASE)


def _axis_values(text: str, axis: str) -> list[str]:
    """The text after ``AXIS:`` on every line that scores ``axis``.

    A line: optional quote/bullet/numbering and markdown, the axis name, optional
    markdown and a parenthetical suffix (``(LLMness)``), then ``:``, ``=`` or a dash
    with spaces around it.  Scanned line by line with string operations (no regex
    backtracking on long lines).
    """
    name_re = _axis_name_re(axis)
    found = []
    for line in text.splitlines():
        lead = _LINE_LEAD_RE.match(line)  # matches every line (all of it is optional)
        m = name_re.match(line, lead.end() if lead is not None else 0)
        if not m:
            continue
        rest = line[m.end() :]
        stripped = rest.lstrip("*_ \t")
        if stripped.startswith("("):
            close = stripped.find(")")
            if close < 0:
                continue
            stripped = stripped[close + 1 :].lstrip("*_ \t")
        spaced = len(stripped) < len(rest)
        if stripped[:1] in (":", "="):
            found.append(stripped[1:])
        elif stripped[:1] in ("-", "–", "—") and spaced and stripped[1:2] in (" ", "\t"):
            found.append(stripped[1:])
    return found


def parse_axis_lines(reply: Any, axes: Sequence[str], scale: ScaleLike) -> dict[str, float]:
    """Read ``Axis name: score`` lines, one per axis (seed 004, MindEval judge output).

    Axis names match case-insensitively with flexible spacing, ``&`` or ``and``, an
    optional markdown bold, bullet or parenthetical suffix (``(LLMness)``).  An axis
    without a line is ``missing_axis``; the same axis twice with different scores is
    ``ambiguous``; the value after the colon follows the single-number rules.
    """
    sc = Scale.parse(scale)
    if not axes:
        raise ValueError("parse_axis_lines needs at least one axis")
    text = _strip_thinking(_text_of(reply))
    out: dict[str, float] = {}
    for axis in axes:
        lines = _axis_values(text, axis)
        if not lines:
            raise _fail("missing_axis", f"no line 'AXIS: score' for axis {axis!r}", reply)
        values: list[float] = []
        for rest in lines:
            v = _number_in(rest, sc, reply, repr(axis)) if rest.strip() else None
            if v is None:
                raise _fail("no_number", f"the line for axis {axis!r} has no score", reply)
            if not any(_same(v, u) for u in values):
                values.append(v)
        if len(values) > 1:
            shown = ", ".join(number_text(v) for v in values)
            raise _fail("ambiguous", f"axis {axis!r} is scored more than once ({shown})", reply)
        out[axis] = values[0]
    return out


def try_parse(
    reply: Any, fmt: str, scale: ScaleLike, axes: Sequence[str] | None = None
) -> ParseOutcome:
    """Non-raising parse: ``fmt`` is ``"number"``, ``"json"`` (``axes`` = keys) or ``"axes"``."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown reply format {fmt!r}; expected one of {FORMATS}")
    if fmt != "number" and not axes:
        raise ValueError(f"format {fmt!r} needs the list of {'keys' if fmt == 'json' else 'axes'}")
    try:
        if fmt == "number":
            return ParseOutcome(ok=True, fmt=fmt, value=parse_score(reply, scale))
        keys: Sequence[str] = axes or ()  # non-empty here: checked above
        if fmt == "json":
            return ParseOutcome(ok=True, fmt=fmt, values=parse_json_scores(reply, keys, scale))
        return ParseOutcome(ok=True, fmt=fmt, values=parse_axis_lines(reply, keys, scale))
    except ParseError as exc:
        return ParseOutcome(
            ok=False, fmt=fmt, failure=ParseFailure(cause=exc.cause, message=str(exc), reply=exc.reply)
        )


def _example_score(scale: Scale) -> str:
    """A plausible score 60% up the scale, on its grid (used in reminders)."""
    if scale.fractional:
        return number_text(round(scale.low + 0.6 * scale.range, 1))
    steps = round(0.6 * scale.range / scale.step)
    return number_text(round(scale.low + steps * scale.step, 10))


def format_reminder(fmt: str, scale: ScaleLike, axes: Sequence[str] | None = None) -> str:
    """Text of the one-time re-ask sent after an unreadable reply (names the exact format)."""
    sc = Scale.parse(scale)
    lo, hi = number_text(sc.low), number_text(sc.high)
    kind = (
        "a number, decimals allowed"
        if sc.fractional
        else "a whole number"
        if sc.step == 1
        else f"a number in steps of {number_text(sc.step)}"
    )
    example = _example_score(sc)
    if fmt == "number":
        return (
            f"Your previous reply could not be read as a score. Reply with only a single "
            f"number from {lo} to {hi} ({kind}), for example: {example}. "
            f"Do not include any explanation or additional text."
        )
    if fmt == "json":
        if not axes:
            raise ValueError("format_reminder('json', ...) needs the keys")
        obj: dict = {}
        for key in axes:
            cur = obj
            *parents, leaf = key.split(".")
            for p in parents:
                cur = cur.setdefault(p, {})
            cur[leaf] = "<score>"
        shape = json.dumps(obj).replace('"<score>"', "<score>")
        return (
            f"Your previous reply could not be read. Reply with only this JSON object, "
            f"each <score> being {kind} from {lo} to {hi}: {shape}. "
            f"Do not include any explanation or additional text."
        )
    if fmt == "axes":
        if not axes:
            raise ValueError("format_reminder('axes', ...) needs the axes")
        lines = "\n".join(f"{a}: <score>" for a in axes)
        return (
            f"Your previous reply could not be read. Reply with exactly these {len(axes)} lines, "
            f"each <score> being {kind} from {lo} to {hi}:\n{lines}\n"
            f"Do not include any explanation or additional text."
        )
    raise ValueError(f"unknown reply format {fmt!r}; expected one of {FORMATS}")


__all__ = [
    "CAUSES",
    "FORMATS",
    "ParseFailure",
    "ParseOutcome",
    "format_reminder",
    "parse_axis_lines",
    "parse_json_scores",
    "parse_score",
    "quote_reply",
    "try_parse",
]
