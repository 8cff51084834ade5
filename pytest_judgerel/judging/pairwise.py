"""Pairwise judging: the MT-Bench-style A/B verdict template, its strict parser, and the calls.

The verdict format is Zheng et al. (2023, "Judging LLM-as-a-Judge", Appendix A, Figure 5):
the reply ends with ``[[A]]`` (assistant A's answer is better), ``[[B]]`` or ``[[C]]`` (a tie).
MT-Bench's own reader takes the first of ``[[A]]``, ``[[B]]``, ``[[C]]`` found in that order, so
a reply naming both A and B counts as A; ours never guesses:

* ``<think>`` blocks are dropped (as by :mod:`pytest_judgerel.judging.parsing`);
* every ``[[A]]``, ``[[B]]``, ``[[C]]`` (letters in either case, spaces inside the brackets
  allowed) is a candidate; one distinct verdict, however often repeated, is the answer;
  two different ones are ``ambiguous``;
* without a bracketed verdict, a reply that is only ``A``, ``B``, ``C`` or ``tie`` (quotes,
  brackets, markdown and a final period allowed) is read as that verdict; anything else is
  ``no_verdict``.

An unreadable reply is a recorded failure, never a verdict.

The calls a pairwise probe makes are built here from the judge's own settings (model,
api_base, api_key, temperature, max_tokens, seed, top_p, namespace, system message, client):
no default model or endpoint is ever used.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..errors import ConfigError, ParseError
from .parsing import quote_reply

__all__ = ["PAIRWISE_TEMPLATE", "PAIRWISE_CAUSES", "parse_pairwise_verdict", "pairwise_template",
           "PAIRWISE_GRAMMAR"]

PAIRWISE_TEMPLATE = str(Path(__file__).resolve().parents[1] / "judging" / "templates" / "pairwise" / "mtbench_pairwise.txt")
"""Path of the shipped pairwise template (fields ``question``, ``answer_a``, ``answer_b``)."""

PAIRWISE_CAUSES = {
    "empty": "the reply is empty or only whitespace",
    "not_text": "the reply is not a string",
    "no_verdict": "no [[A]], [[B]] or [[C]] verdict (nor a bare A, B, C or tie reply)",
    "ambiguous": "the reply gives two different verdicts",
}
"""Every ``cause`` a pairwise parse failure can carry."""

PAIRWISE_GRAMMAR = 'root ::= "[[A]]" | "[[B]]" | "[[C]]"\n'
"""llama.cpp GBNF grammar that only admits a verdict (used for ``local/`` models and constrain="always")."""

_VERDICT = {"A": "A", "B": "B", "C": "tie"}
_BRACKETED = re.compile(r"\[\[\s*([ABCabc])\s*\]\]")
_BARE = re.compile(r"^[\s\"'`*_(\[]*(A|B|C|TIE)[\s\"'`*_)\].]*$", re.IGNORECASE)
_THINK = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)", re.IGNORECASE | re.DOTALL)


def _fail(cause: str, detail: str, reply: Any) -> ParseError:
    raw = reply if isinstance(reply, str) else repr(reply)
    return ParseError(f"{cause}: {detail}; reply was {quote_reply(reply)}", reply=raw, cause=cause)


def parse_pairwise_verdict(reply: Any) -> str:
    """``"A"``, ``"B"`` or ``"tie"`` from a pairwise judge reply; :class:`ParseError` otherwise."""
    if reply is None:
        raise _fail("empty", "the judge returned no text (None)", "")
    if not isinstance(reply, str):
        raise _fail("not_text", f"expected a string reply, got {type(reply).__name__}", reply)
    text = _THINK.sub(" ", reply)
    if "</think" in text.lower():  # reasoning whose opening tag the provider dropped
        text = re.split(r"</think(?:ing)?>", text, flags=re.IGNORECASE)[-1]
    if not text.strip():
        raise _fail("empty", "the reply is empty", reply)
    found = {_VERDICT[m.upper()] for m in _BRACKETED.findall(text)}
    if len(found) > 1:
        raise _fail("ambiguous", f"the reply gives {len(found)} different verdicts ({', '.join(sorted(found))})", reply)
    if found:
        return found.pop()
    bare = _BARE.match(text)
    if bare:
        word = bare.group(1).upper()
        return "tie" if word in ("C", "TIE") else word
    raise _fail("no_verdict", "no verdict [[A]], [[B]] or [[C]] found", reply)


def pairwise_template(spec: Any = None, fields: Sequence[str] = ("answer_a", "answer_b")) -> Any:
    """The pairwise template ``spec`` (default: the shipped MT-Bench one), checked for ``fields``."""
    from .templates import load_template

    t = load_template(Path(PAIRWISE_TEMPLATE) if spec is None else spec)
    if t.output != "pairwise":
        raise ConfigError(f"template {t.name!r} has output {t.output!r}; a pairwise probe needs a template "
                          "declaring '# output: pairwise' whose reply is [[A]], [[B]] or [[C]]")
    missing = [f for f in fields if f not in t.fields]
    if missing:
        raise ConfigError(f"pairwise template {t.name!r} lacks the answer field(s) {missing}; its fields are "
                          f"{list(t.fields)} (pass fields=(first, second) naming the two answer fields)")
    return t


def pairwise_fingerprint(judge: Any, template: Any) -> dict[str, Any]:
    """The judge's fingerprint with the pairwise template in place of its own."""
    fp = dict(judge.fingerprint())
    fp.update(template=template.name, template_hash=template.hash[:16], scale=None, axis=None, design="pairwise")
    fp.pop("grammar_hash", None)
    if _constrained(judge):
        fp["grammar_hash"] = hashlib.sha256(PAIRWISE_GRAMMAR.encode()).hexdigest()[:16]
    return fp


def _constrained(judge: Any) -> bool:
    from ..llm.endpoint import is_constrained

    return is_constrained(getattr(judge, "constrain", "auto"), str(judge.model))


def build_request(judge: Any, messages: Sequence[Mapping[str, str]], sample_index: int = 0) -> Any:
    """An :class:`~pytest_judgerel.llm.LLMRequest` for ``messages`` with the judge's settings
    (mirrors ``Judge._request``: the judge's system message unless the template has one;
    seed + sample index; the judge's endpoint, key, namespace and test id)."""
    from ..llm import LLMRequest

    msgs = [dict(m) for m in messages]
    if judge.system and not any(m.get("role") == "system" for m in msgs):
        msgs.insert(0, {"role": "system", "content": judge.system})
    return LLMRequest(
        model=judge.model, messages=tuple(msgs), temperature=judge.temperature, max_tokens=judge.max_tokens,
        seed=None if judge.seed is None else judge.seed + sample_index, top_p=judge.top_p,
        api_base=judge.api_base, api_key=judge.api_key, grammar=PAIRWISE_GRAMMAR if _constrained(judge) else None,
        sample_index=sample_index, namespace=judge.namespace,
        metadata={**({"test": judge.test_id} if judge.test_id else {}), "reasks": int(bool(judge.reask)),
                  "dry_reply": _dry_verdict(msgs, sample_index)},
    )


def _dry_verdict(messages: Sequence[Mapping[str, str]], sample_index: int = 0) -> str:
    """What a dry run answers a pairwise request with: a short reason and a verdict line that parses
    (the verdict chosen by a hash of the request, so a dry run's statistics can be computed)."""
    import zlib

    verdict = "ABC"[zlib.crc32(repr((list(messages), sample_index)).encode()) % 3]
    return f"Both answers address the question; weighing them as instructed.\n[[{verdict}]]"


REMINDER = ("Your previous reply could not be read as a verdict. Reply with only one of these: "
            "[[A]] if assistant A's answer is better, [[B]] if assistant B's answer is better, [[C]] for a tie.")


def judge_pairs(judge: Any, requests: Sequence[Any]) -> list[tuple[str | None, Any, Any, bool]]:
    """Send ``requests`` through the judge's client; parse each reply (re-asking once when the
    judge re-asks).  Returns ``(verdict or None, final response, ParseError or None, reasked)``."""
    client = judge.client
    responses = client.complete_many(list(requests))
    out: list[Any] = []
    retry: list[int] = []
    for i, resp in enumerate(responses):
        try:
            out.append((parse_pairwise_verdict(resp.text), resp, None, False))
        except ParseError as exc:
            out.append((None, resp, exc, False))
            if judge.reask:
                retry.append(i)
    if retry:
        follow = [replace(requests[i], messages=requests[i].messages + (
            {"role": "assistant", "content": responses[i].text}, {"role": "user", "content": REMINDER}))
            for i in retry]
        for i, resp in zip(retry, client.complete_many(follow)):
            try:
                out[i] = (parse_pairwise_verdict(resp.text), resp, None, True)
            except ParseError as exc:
                out[i] = (None, resp, exc, True)
    return out
