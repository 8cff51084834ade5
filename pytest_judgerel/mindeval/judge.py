"""MindEval's whole-conversation 5-axis judge (Pombal et al. 2025, section 2.3, Figures 11-13).

One call per conversation; the reply must give the five axes on 1-6, one ``Axis: score`` line
each (fractional scores allowed, as in the paper's few-shot targets).  The parser is strict:
unlike the authors' release (which turns a missing or unreadable axis into 3 and keeps 7s),
a missing axis, conflicting duplicates, an out-of-range or a non-numeric score is a
:class:`~pytest_judgerel.errors.ParseError` that is counted and recorded, never defaulted.
An optional single re-ask with a format reminder is configurable and counted.
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from pytest_judgerel.errors import CacheMissError, ConfigError, ParseError

__all__ = [
    "AXES",
    "AXIS_ABBREVIATIONS",
    "SCORE_MIN",
    "SCORE_MAX",
    "parse_judge_reply",
    "render_conversation",
    "FewShotExample",
    "JudgeScore",
    "JudgeStats",
    "MindEvalJudge",
    "FORMAT_REMINDER",
]

#: abbreviation -> axis name as written in the judge prompt
AXES: dict[str, str] = {
    "CAC": "Clinical Accuracy & Competence",
    "EPC": "Ethical & Professional Conduct",
    "AR": "Assessment & Response",
    "TRA": "Therapeutic Relationship & Alliance",
    "ASCQ": "AI-Specific Communication Quality",
}
AXIS_ABBREVIATIONS = tuple(AXES)
#: a dry run's placeholder reply: every axis scored, in the format the parser reads
_DRY_SCORES = "\n".join(f"{name}: 4" for name in AXES.values())
SCORE_MIN, SCORE_MAX = 1.0, 6.0

FORMAT_REMINDER = (
    "Your reply could not be read ({reason}). Reply again with exactly five lines and nothing "
    "else, one per criterion, in the form `Criterion name: score` with a score from 1 to 6, e.g.\n"
    + "\n".join(f"{name}: 3" for name in AXES.values())
)
_OUTPUT_FORMAT_HINT = (
    "Output format: write exactly five lines, one per criterion, in the form `Criterion name: score` "
    "(a score from 1 to 6; decimals allowed), in this order:\n"
    + "\n".join(f"{name}: <score>" for name in AXES.values())
)


# ----------------------------------------------------------------------------- parser

# Lines are whitespace-normalised (runs -> one space) before matching, and prefixes are
# stripped token by token, so no pattern below has nested or adjacent unbounded quantifiers:
# matching is linear in the line length even on pathological replies.

def _label_alternatives(abbr: str, name: str) -> str:
    words = [re.escape(w) for w in name.replace("&", " & ").split()]
    body = " ?".join(w if w != "\\&" else "(?:&|and)" for w in words)
    body = body.replace(r"AI\-Specific", r"AI[ -]{0,3}Specific")
    return rf"(?:{body}|{abbr})"


_PREFIX_TOKEN = re.compile(r"(?:[-•>+]|\d{1,3}[.)]|criterion ?\d{1,3} ?[:.)\-–—]?) ?", re.IGNORECASE)
_SEPARATOR = r" ?(?:\((?P<suffix>[^)]*)\))? ?(?:[:=\-–—]|\bscore\b ?[:=]?) ?"
_AXIS_RE = {
    abbr: re.compile(r"(?P<label>" + _label_alternatives(abbr, name) + r")\b" + _SEPARATOR + r"(?P<rest>.*)$",
                     re.IGNORECASE)
    for abbr, name in AXES.items()
}
_NUMBER_RE = re.compile(r"^(?P<num>[+-]?(?:\d+(?:\.\d*)?|\.\d+))")
_SCALE_SUFFIX_RE = re.compile(r"^ ?(?:/ ?6(?:\.0+)?|out of 6(?:\.0+)?)\b", re.IGNORECASE)


def _clean_line(line: str) -> str:
    """Drop markdown emphasis/heading characters, collapse whitespace, strip list prefixes."""
    text = " ".join(re.sub(r"[*_`#]", "", line).split())
    pos = 0
    while True:
        m = _PREFIX_TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            return text[pos:]
        pos = m.end()


def parse_judge_reply(reply: str) -> dict[str, float]:
    """Read the five axis scores from a judge reply; returns ``{"CAC": 3.5, ...}``.

    Accepted: ``Axis name: score`` lines with markdown emphasis or headings around the name,
    bullets or numbering before it, a parenthesised suffix after it (``(LLMness)``, ``(CAC)``),
    the separators ``:``, ``=``, ``-``, the abbreviations as labels, decimals, and a trailing
    ``/6`` or ``out of 6``.  Other prose lines are ignored.

    Raises ParseError with ``cause``: ``"empty"``, ``"missing_axis"``, ``"ambiguous"``
    (duplicate axis with a different value, or a second number after the score),
    ``"out_of_range"`` (outside 1-6) or ``"no_number"`` (the axis label appears, but never with
    a number: ``"N/A"``, ``"four"``).  A label followed by prose is ignored when another line
    gives that axis a number.
    """
    if not isinstance(reply, str) or not reply.strip():
        raise ParseError("empty judge reply", reply=reply if isinstance(reply, str) else repr(reply), cause="empty")
    found: dict[str, float] = {}
    non_numeric: dict[str, str] = {}
    for raw_line in reply.splitlines():
        line = _clean_line(raw_line)
        if not line:
            continue
        for abbr, pattern in _AXIS_RE.items():
            m = pattern.match(line)
            if not m:
                continue
            rest = m.group("rest").strip()
            num = _NUMBER_RE.match(rest)
            if num is None:  # prose after the label, or "N/A": fails only if no numeric line follows
                non_numeric.setdefault(abbr, rest)
                break
            value = float(num.group("num"))
            tail = rest[num.end():]
            scale = _SCALE_SUFFIX_RE.match(tail)
            if scale:
                tail = tail[scale.end():]
            if re.search(r"\d", tail):
                raise ParseError(
                    f"{AXES[abbr]}: more than one number in {rest[:60]!r}", reply=reply, cause="ambiguous"
                )
            if not math.isfinite(value) or not (SCORE_MIN <= value <= SCORE_MAX):
                raise ParseError(
                    f"{AXES[abbr]}: score {num.group('num')} is outside {SCORE_MIN:g}-{SCORE_MAX:g}",
                    reply=reply, cause="out_of_range",
                )
            if abbr in found and found[abbr] != value:
                raise ParseError(
                    f"{AXES[abbr]} appears twice with different scores ({found[abbr]:g} and {value:g})",
                    reply=reply, cause="ambiguous",
                )
            found[abbr] = value
            break
    unreadable = [a for a in AXES if a not in found and a in non_numeric]
    if unreadable:
        a = unreadable[0]
        raise ParseError(f"{AXES[a]}: score {non_numeric[a][:40]!r} is not a number", reply=reply, cause="no_number")
    missing = [AXES[a] for a in AXES if a not in found]
    if missing:
        raise ParseError(f"judge reply has no score for {missing}", reply=reply, cause="missing_axis")
    return {a: found[a] for a in AXES}


# ----------------------------------------------------------------------------- rendering

def render_conversation(messages: Iterable[Mapping[str, Any]]) -> str:
    """``<member>\\n...\\n</member>`` for the patient (role ``user``), ``<therapist>`` for the
    clinician (role ``assistant``), joined by blank lines; system messages are left out."""
    parts = []
    for i, m in enumerate(messages):
        role = m.get("role")
        if role == "system":
            continue
        if role not in ("user", "assistant"):
            raise ConfigError(f"message {i} has role {role!r}; expected 'user' (patient) or 'assistant' (clinician)")
        tag = "member" if role == "user" else "therapist"
        parts.append(f"<{tag}>\n{str(m.get('content', '')).strip()}\n</{tag}>")
    return "\n\n".join(parts)


@dataclass(frozen=True)
class FewShotExample:
    """A scored example conversation for the judge prompt.

    ``messages`` use the clinician's point of view (patient = ``user``); like the benchmark's
    conversations they should start with the patient (the release's examples start with the
    therapist, a mismatch we warn about).  ``scores`` maps axis abbreviations (or names) to 1-6.
    """

    profile: Any
    messages: Sequence[Mapping[str, Any]]
    scores: Mapping[str, float]

    def __post_init__(self) -> None:
        norm = {}
        names = {v.lower(): k for k, v in AXES.items()}
        for k, v in self.scores.items():
            abbr = k if k in AXES else names.get(str(k).lower())
            if abbr is None:
                raise ConfigError(f"few-shot example score key {k!r} is not a MindEval axis")
            if not (SCORE_MIN <= float(v) <= SCORE_MAX):
                raise ConfigError(f"few-shot example score {k}={v} outside 1-6")
            norm[abbr] = float(v)
        if set(norm) != set(AXES):
            raise ConfigError(f"few-shot example needs all five axes, got {sorted(norm)}")
        object.__setattr__(self, "scores", norm)
        if self.messages and self.messages[0].get("role") != "user":
            warnings.warn(
                "MindEval few-shot example starts with the therapist; benchmark conversations start with "
                "the patient's 'Hello', so examples should too", UserWarning, stacklevel=3,
            )

    def render(self) -> str:
        from pytest_judgerel.mindeval.prompts import _attribute_values

        attrs = _attribute_values(self.profile)
        details = "\n".join(
            f"- {label}: {attrs[key]}" for label, key in _MEMBER_DETAIL_FIELDS
        )
        score_lines = "\n".join(f"{AXES[a]}: {_score_text(self.scores[a])}" for a in AXES)
        return (f"<member_details>\n{details}\n</member_details>\n\n"
                f"<conversation>\n{render_conversation(self.messages)}\n</conversation>\n\n{score_lines}")


_MEMBER_DETAIL_FIELDS = (
    ("Name", "name"), ("Sex", "sex"), ("Gender identity", "gender_identity"),
    ("Sexual orientation", "sexual_orientation"), ("Age", "age"), ("Race", "race"),
    ("Education level", "education"), ("Profession", "profession"), ("Employment status", "employment_status"),
    ("Siblings", "siblings"), ("Relationship Status", "relationship_status"),
    ("Living situation", "living_situation"), ("Exercise", "exercise"), ("Sleep", "sleep_quality"),
    ("Attitude toward mindfulness", "attitude_towards_mindfulness"), ("Region of residence", "region"),
    ("Depressive symptoms", "depressive_symptoms"), ("Anxious symptoms", "anxious_symptoms"),
)


def _score_text(v: float) -> str:
    """A few-shot target score as the judge prompt shows it (3, 3.5)."""
    return f"{v:g}"


# ----------------------------------------------------------------------------- judge

@dataclass(frozen=True)
class JudgeScore:
    """The judge's verdict on one interaction.

    ``scores`` is ``None`` when the reply could not be parsed (``failure`` then holds the cause
    and message); ``reasked`` tells whether the format reminder was used.
    """

    interaction_id: str
    scores: dict[str, float] | None
    failure: str | None
    reply: str
    reasked: bool
    model: str
    sample_index: int = 0
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.scores is not None

    @property
    def mean(self) -> float | None:
        """Mean of the five axes (MindEval's per-interaction score), None on parse failure."""
        return None if self.scores is None else sum(self.scores.values()) / len(self.scores)


@dataclass
class JudgeStats:
    """Counters of one :class:`MindEvalJudge`: replies, failed calls (after the LLM layer's own
    retries; recorded as ``JudgeScore.failure = "call_failed: ..."``), parse failures, re-asks."""

    replies: int = 0
    call_failures: int = 0
    parse_failures: int = 0
    reasks: int = 0
    reask_successes: int = 0
    failure_causes: dict[str, int] = field(default_factory=dict)


class MindEvalJudge:
    """``MindEvalJudge(model, client).score(interactions)`` -> one :class:`JudgeScore` each.

    ``model``: a litellm model name (with ``api_base``/``api_key``; served by the current
    session's server), an :class:`~pytest_judgerel.llm.Endpoint`, or None for the session's
    (:mod:`pytest_judgerel.session.context`); ``client`` None: the session's.  ``constrain``:
    grammar-constrain the five-line reply on the embedded model (``"auto"``), on any
    llama.cpp-compatible server (``"always"``) or never; None: the session's.  ``temperature``,
    ``max_tokens`` and ``reask`` left at None take the session's (``--judge-temperature``,
    ``--judge-max-tokens``, ``--judgerel-reask``; defaults 0.0, 512, True), as the
    ``mindeval_judge`` fixture does.

    ``examples``: few-shot :class:`FewShotExample` s (none by default: the paper omits its
    examples; without examples an explicit output-format line replaces them).
    ``length_penalty`` adds Figure 13 (appendix D.3; no score cap).  Sampling: explicit
    ``temperature``/``top_p``/``seed``/``max_tokens`` (recorded in ``settings``).
    ``reask``: one follow-up with a format reminder when the reply cannot be parsed.
    """

    def __init__(
        self,
        model: Any = None,
        client: Any = None,
        *,
        examples: Sequence[FewShotExample] = (),
        length_penalty: bool = False,
        temperature: float | None = None,
        top_p: float | None = None,
        seed: int | None = 0,
        max_tokens: int | None = None,
        reask: bool | None = None,
        namespace: str = "mindeval-judge",
        api_base: str | None = None,
        api_key: str | None = None,
        constrain: str | None = None,
    ):
        from pytest_judgerel.session.context import current_context, session_endpoint
        from pytest_judgerel.llm.endpoint import Endpoint

        if model is not None and not isinstance(model, Endpoint) and (not isinstance(model, str) or not model):
            raise ConfigError(f"MindEvalJudge model must be a litellm model name or an Endpoint, got {model!r}")
        ctx = current_context()
        s = ctx.settings
        self.endpoint = session_endpoint(model, api_base, api_key)
        constrain = s.constrain if constrain is None else constrain
        self.endpoint.constrained(constrain)  # validates the mode
        self.model = self.endpoint.model
        self.constrain = constrain
        self.client = client if client is not None else ctx.client
        # like every judge: the session's temperature (default 0.0), max tokens (512) and re-ask
        temperature = s.temperature if temperature is None else temperature
        max_tokens = s.max_tokens if max_tokens is None else max_tokens
        reask = s.reask if reask is None else reask
        self.examples = tuple(examples)
        for ex in self.examples:
            if not isinstance(ex, FewShotExample):
                raise ConfigError(f"examples must be FewShotExample objects, got {type(ex).__name__}")
        self.length_penalty = length_penalty
        self.settings = {"temperature": temperature, "top_p": top_p, "seed": seed, "max_tokens": max_tokens}
        self.reask = reask
        self.namespace = namespace
        self.api_base = self.endpoint.api_base
        self.stats = JudgeStats()

    # ---------------------------------------------------------------- prompt

    def prompt(self, interaction: Any) -> str:
        from pytest_judgerel.mindeval.prompts import render_judge_prompt

        examples = "\n\n".join(ex.render() for ex in self.examples)
        return render_judge_prompt(
            interaction.profile,
            render_conversation(interaction.messages),
            fewshot_examples=examples,
            length_penalty=self.length_penalty,
            output_format_hint=None if self.examples else _OUTPUT_FORMAT_HINT,
        )

    def _request(self, messages: Sequence[Mapping[str, str]], sample_index: int, interaction_id: str) -> Any:
        from pytest_judgerel.llm import LLMRequest

        grammar = None
        if self.endpoint.constrained(self.constrain):
            # the embedded model only produces the five-line format when constrained to it
            from pytest_judgerel.judging.judge import grammar_for
            from pytest_judgerel.scales import Scale

            grammar = grammar_for("axes", Scale(1, 6, fractional=True), list(AXES.values()))
        return LLMRequest(
            **self.endpoint.request_fields(), messages=tuple(messages), sample_index=sample_index,
            namespace=self.namespace, metadata={"mindeval": "judge", "interaction": interaction_id,
                                                "reasks": int(bool(self.reask)), "dry_reply": _DRY_SCORES},
            grammar=grammar, **self.settings,
        )

    # ---------------------------------------------------------------- scoring

    def score(self, interactions: Sequence[Any], sample_index: int = 0) -> list[JudgeScore]:
        """Judge every interaction (concurrently through the client); order preserved.  One
        interaction is judged as a list of one."""
        if hasattr(interactions, "messages") and hasattr(interactions, "interaction_id"):
            interactions = [interactions]
        items = list(interactions)
        for i, it in enumerate(items):
            if not (hasattr(it, "messages") and hasattr(it, "interaction_id") and hasattr(it, "profile")):
                raise ConfigError(f"MindEvalJudge.score takes Interaction objects (or a list of them); item {i} "
                                  f"is a {type(it).__name__}")
        first = [[{"role": "user", "content": self.prompt(it)}] for it in items]
        responses = self.client.complete_many(
            [self._request(m, sample_index, it.interaction_id) for m, it in zip(first, items)],
            return_exceptions=True,
        )
        results: list[JudgeScore | None] = [None] * len(items)
        retry: list[int] = []
        failures: dict[int, ParseError] = {}
        for i, resp in enumerate(responses):
            if isinstance(resp, BaseException):
                if isinstance(resp, (ConfigError, CacheMissError)):  # not a judge failure: report it
                    raise resp
                self.stats.call_failures += 1
                results[i] = JudgeScore(items[i].interaction_id, None, f"call_failed: {resp}", "", False,
                                        self.model, sample_index, False)
                continue
            self.stats.replies += 1
            try:
                scores = parse_judge_reply(resp.text)
            except ParseError as exc:
                failures[i] = exc
                retry.append(i)
                continue
            results[i] = JudgeScore(items[i].interaction_id, scores, None, resp.text, False, self.model,
                                    sample_index, resp.cached)
        if retry and self.reask:
            follow = []
            for i in retry:
                msgs = first[i] + [
                    {"role": "assistant", "content": responses[i].text or "(empty)"},
                    {"role": "user", "content": FORMAT_REMINDER.format(reason=failures[i].cause)},
                ]
                follow.append(self._request(msgs, sample_index, items[i].interaction_id))
            self.stats.reasks += len(retry)
            second = self.client.complete_many(follow, return_exceptions=True)
            for i, resp in zip(retry, second):
                if isinstance(resp, BaseException):
                    if isinstance(resp, (ConfigError, CacheMissError)):
                        raise resp
                    self.stats.call_failures += 1
                    continue  # keep the first reply's parse failure
                self.stats.replies += 1
                try:
                    scores = parse_judge_reply(resp.text)
                except ParseError as exc:
                    failures[i] = exc
                    responses[i] = resp
                    continue
                self.stats.reask_successes += 1
                failures.pop(i)
                results[i] = JudgeScore(items[i].interaction_id, scores, None, resp.text, True, self.model,
                                        sample_index, resp.cached)
        for i, failure in failures.items():
            self.stats.parse_failures += 1
            self.stats.failure_causes[failure.cause] = self.stats.failure_causes.get(failure.cause, 0) + 1
            results[i] = JudgeScore(items[i].interaction_id, None, f"{failure.cause}: {failure}", responses[i].text,
                                    bool(self.reask), self.model, sample_index, responses[i].cached)
        return [r for r in results if r is not None]

    def score_repeated(self, interactions: Sequence[Any], repeats: int) -> list[list[JudgeScore]]:
        """``repeats`` independent judge runs (``sample_index`` 0..repeats-1; the paper uses 30)."""
        if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
            raise ConfigError(f"repeats must be an int >= 1, got {repeats!r}")
        return [self.score(interactions, sample_index=r) for r in range(repeats)]

    def fingerprint(self) -> dict[str, Any]:
        """JSON-able description of the judge for metric records."""
        return {"model": self.model, "kind": "mindeval", "length_penalty": self.length_penalty,
                "n_examples": len(self.examples), "reask": self.reask, **self.settings}
