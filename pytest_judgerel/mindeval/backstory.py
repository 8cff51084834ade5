"""Backstory generation (MindEval section 2.1, prompt in Figures 5-6).

One LLM call per profile through :class:`pytest_judgerel.llm.LLMClient` (so answers are cached
and re-runs are free); the text is stored in the profile as ``member_narrative``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Sequence

from pytest_judgerel.errors import ConfigError, LLMCallError, MissingKeyError

__all__ = ["BACKSTORY_GRAMMAR", "BACKSTORY_MAX_TOKENS", "ContextWindowError", "backstory_request",
           "context_overflow", "generate_backstories", "paragraph_count"]

#: default reply cap of a backstory: four paragraphs of at most 251 characters (the grammar's
#: bound; Figures 5-6 ask for "4 paragraphs") are ~1,000 characters, ~250-300 tokens in English;
#: 400 leaves room without letting a model that does not stop fill its whole context.  The
#: prompt itself is ~2,700 tokens (SmolLM2's tokenizer), so prompt + cap need a context of
#: 4096 tokens; a 2048-token server cannot take the prompt at all, whatever the cap.
BACKSTORY_MAX_TOKENS = 400

_OVERFLOW = re.compile(r"ContextWindowExceeded|context[ _](?:length|window)[ _]exceeded|maximum context length"
                       r"|exceeds? (?:the )?context (?:window|length)|context window of \d+", re.IGNORECASE)


def context_overflow(error: Any) -> bool:
    """Whether a failed call (an exception or its message) says the prompt plus the reply cap do
    not fit the server's context window (OpenAI's ``context_length_exceeded``, litellm's
    ``ContextWindowExceededError``, llama.cpp's "exceed context window")."""
    return bool(_OVERFLOW.search(str(error)))


#: how :class:`~pytest_judgerel.llm.LLMClient` marks a failure its retry policy classifies as final
#: (``llm/retry.py``: HTTP 400, 401, 403, 404, 422, a missing key...)
_NOT_RETRYABLE = "not retryable"


class ContextWindowError(LLMCallError):
    """The backstory prompt (with its reply cap) does not fit the server's context window: no
    retry can help (the message names the profile, the server's words and what is needed)."""

#: GBNF that admits exactly the shape Figures 5-6 ask for: four paragraphs (each a capital
#: letter and 30-250 more characters on one line).  Sent when replies are constrained
#: (``constrain="always"``, or ``"auto"`` on the embedded model): it shapes the form, never
#: the content, so a small model meets the 4-paragraph rule.  Kept to one character class: a
#: sentence-level grammar (``[^\n.!?]{30,200} "."``) makes llama.cpp's sampling far slower.
BACKSTORY_GRAMMAR = (
    'root ::= para "\\n\\n" para "\\n\\n" para "\\n\\n" para\n'
    'para ::= [A-Z] [^\\n]{30,250}\n'
)

#: a dry run's placeholder backstory: four paragraphs, the shape the check asks for
DRY_BACKSTORY = "\n\n".join(["Placeholder paragraph of a backstory written by a dry run, never by a model."] * 4)


def paragraph_count(text: str) -> int:
    """Number of non-empty paragraphs (blocks separated by blank lines)."""
    return len([p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()])


def backstory_request(
    profile: Any,
    model: Any,
    *,
    temperature: float | None = 1.0,
    top_p: float | None = None,
    seed: int | None = 0,
    max_tokens: int | None = BACKSTORY_MAX_TOKENS,
    sample_index: int = 0,
    namespace: str = "mindeval-backstory",
    api_base: str | None = None,
    api_key: str | None = None,
    constrain: str | None = None,
) -> Any:
    """The :class:`LLMRequest` for one profile's backstory (prompt = Figures 5-6).

    ``model``: a litellm model name (with ``api_base``/``api_key``; served by the current
    session's server, :mod:`pytest_judgerel.session.context`), an :class:`~pytest_judgerel.llm.Endpoint`
    or None (the session's); ``constrain`` as for a judge (``"auto"``: the 4-paragraph grammar on
    the embedded model only, ``"always"``, ``"never"``; None: the session's); ``max_tokens``
    caps the reply (default :data:`BACKSTORY_MAX_TOKENS`; None: no cap)."""
    from pytest_judgerel.session.context import current_context, session_endpoint
    from pytest_judgerel.llm import LLMRequest
    from pytest_judgerel.mindeval.prompts import render_profile_prompt

    endpoint = session_endpoint(model, api_base, api_key)
    if constrain is None:
        constrain = current_context().settings.constrain
    return LLMRequest(
        **endpoint.request_fields(), grammar=BACKSTORY_GRAMMAR if endpoint.constrained(constrain) else None,
        messages=({"role": "user", "content": render_profile_prompt(profile)},),
        temperature=temperature, top_p=top_p, seed=seed, max_tokens=max_tokens,
        sample_index=sample_index, namespace=namespace,
        metadata={"mindeval": "backstory", "profile": getattr(profile, "profile_id", None),
                  "dry_reply": DRY_BACKSTORY},  # a dry run's placeholder: the 4 paragraphs the check wants
    )


def _may_cost(request: Any, reasks: int) -> Any:
    """``request`` saying how many new samples an unusable reply may still cost (a dry run's bound)."""
    return replace(request, metadata={**request.metadata, "reasks": reasks})


def generate_backstories(
    profiles: Sequence[Any],
    model: Any = None,
    client: Any = None,
    *,
    overwrite: bool = False,
    require_paragraphs: int | None = 4,
    max_retries: int = 2,
    **sampling: Any,
) -> list[Any]:
    """Return copies of ``profiles`` with ``member_narrative`` filled in.

    ``model`` is a model name or an :class:`~pytest_judgerel.llm.Endpoint` (model and server);
    ``model``, ``client`` and ``constrain`` default to the current session's
    (:mod:`pytest_judgerel.session.context`).
    Profiles that already have a backstory are kept unless ``overwrite``.  A reply that is empty
    or failed after the client's own retries (5xx, timeouts, empty content), or (when
    ``require_paragraphs`` is set) does not have that many paragraphs -- the prompt asks for
    exactly 4 -- is re-requested up to ``max_retries`` times, each retry a new sample: the next
    ``sample_index`` and the next ``seed`` (``seed + retry``; the same seed would make the server
    repeat the same reply), then :class:`LLMCallError` names the profile.  A call that failed for
    good (not retryable: HTTP 400, 401, 404...) raises at once, :class:`ContextWindowError` when
    the prompt does not fit the server's context.  ``sampling``: ``temperature``, ``top_p``,
    ``seed``, ``max_tokens`` (default :data:`BACKSTORY_MAX_TOKENS`), ``constrain``, ... as for
    :func:`backstory_request`.
    """
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise ConfigError(f"max_retries must be an int >= 0, got {max_retries!r}")
    seed = sampling.pop("seed", 0)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ConfigError(f"seed must be an int or None, got {seed!r}")
    from pytest_judgerel.session.context import current_context, session_endpoint

    ctx = current_context()
    model = session_endpoint(model, sampling.pop("api_base", None), sampling.pop("api_key", None))
    client = client if client is not None else ctx.client
    if sampling.get("constrain") is None:
        sampling["constrain"] = ctx.settings.constrain
    todo = [i for i, p in enumerate(profiles) if overwrite or not getattr(p, "member_narrative", None)]
    out = list(profiles)
    attempt = {i: 0 for i in todo}
    name = getattr(model, "model", model)
    while todo:
        requests = [_may_cost(backstory_request(out[i], model, sample_index=attempt[i], **sampling, seed=None
                                                if seed is None else seed + attempt[i]), max_retries - attempt[i])
                    for i in todo]
        responses = client.complete_many(requests, return_exceptions=True)
        again = []
        for i, resp in zip(todo, responses):
            pid = getattr(out[i], "profile_id", i)
            if isinstance(resp, BaseException):
                if not isinstance(resp, LLMCallError) or isinstance(resp, MissingKeyError):
                    # a configuration or cache error, not the model's (a missing key too: the plugin
                    # stops the session on it with its one message): as it is
                    raise resp
                if context_overflow(resp):
                    cap = requests[todo.index(i)].max_tokens
                    raise ContextWindowError(
                        f"backstory for profile {pid} from {name}: the prompt (Figures 5-6, ~2,700 tokens) "
                        + (f"with a reply cap of {cap} tokens " if cap else "without a reply cap ")
                        + "does not fit the server's context window; MindEval's backstory needs a context of at "
                        f"least 4096 tokens (not retried). The server said: {resp}") from None
                if _NOT_RETRYABLE in str(resp):  # e.g. HTTP 400/401/404: the same on any sample
                    raise LLMCallError(f"backstory for profile {pid} from {name}: call failed, not retried: "
                                       f"{resp}") from None
            error = resp if isinstance(resp, BaseException) else None
            text = "" if error is not None else (resp.text or "").strip()
            good = bool(text) and (require_paragraphs is None or paragraph_count(text) == require_paragraphs)
            if good:
                out[i] = replace(out[i], member_narrative=text)
                continue
            attempt[i] += 1
            if attempt[i] > max_retries:
                what = (f"call failed ({error})" if error is not None else "empty" if not text
                        else f"{paragraph_count(text)} paragraphs instead of {require_paragraphs}")
                raise LLMCallError(f"backstory for profile {pid} from {name}: {what} after {max_retries} retries "
                                   "(each a new sample)")
            again.append(i)
        todo = again
    return out
